// SPDX-License-Identifier: BSD-2-Clause
/*
 * Go binaries without .symtab (go build -ldflags=-s -w): their functions come from .gopclntab, at
 * the addresses that `go tool nm` gives for the same program built with its symbol table
 * (fx_go_full.gonm, from tests/unit/fixtures.mk), as an executable and as a PIE. A truncated or
 * corrupted table gives an error and no symbols, never a crash; the older layouts (Go 1.2 and
 * 1.16, either byte order) are checked on tables built here.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symbols/dso.h"
#include "fixture_paths.h"
#include "symbols/gopclntab.h"

struct nm_sym {
	uint64_t addr, size;
	char name[128];
};

/* The code symbols ("addr size T|t name") of `go tool nm -size`; returns how many, 0 on error. */
static size_t read_gonm(const char *path, struct nm_sym **out)
{
	size_t n = 0, cap = 0;
	struct nm_sym *v = NULL;
	char line[512], type;
	FILE *f = fopen(path, "r");

	CHECK(f != NULL, "%s missing: run make unit-fixtures", path);
	while (f && fgets(line, sizeof(line), f)) {
		struct nm_sym s;

		line[strcspn(line, "\n")] = '\0';
		/* Names may hold spaces ("type..eq.struct { ... }"): the rest of the line. */
		if (sscanf(line, " %" SCNx64 " %" SCNu64 " %c %127[^\n]", &s.addr, &s.size, &type,
			   s.name) != 4 ||
		    (type != 'T' && type != 't'))
			continue;
		if (n == cap) {
			struct nm_sym *nv = reallocarray(v, cap ? cap * 2 : 1024, sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap = cap ? cap * 2 : 1024;
		}
		v[n++] = s;
	}
	if (f)
		fclose(f);
	*out = v;
	return n;
}

static const struct nm_sym *nm_find(const struct nm_sym *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/*
 * Whether the pclntab name `got` is the function that the symbol table calls `want`. The symbol
 * table adds ".abi0" to assembly functions, which Go's tracebacks (and the pclntab) do not; and
 * the pclntab abbreviates the array lengths of generated equality functions
 * ("type..eq.[...]runtime.Frame" for "type..eq.[2]runtime.Frame"); since Go 1.20 they are
 * "type:.eq.", and Go 1.26's symbol table numbers some of them ("type:.eq.runtime.untracedG.7").
 */
static bool same_func(const char *got, const char *want)
{
	size_t n = strlen(want);

	if (n > 5 && !strcmp(want + n - 5, ".abi0"))
		n -= 5;
	if (!strncmp(want, "type..eq.", 9))
		return !strncmp(got, "type..eq.", 9);
	if (!strncmp(want, "type:.eq.", 9))
		return !strncmp(got, "type:.eq.", 9);
	return strlen(got) == n && !strncmp(got, want, n);
}

static struct dso *load(struct dso_cache **c, const char *path)
{
	struct stat st;
	struct dso *d;

	*c = dso_cache__new(4);
	CHECK(*c != NULL, "dso_cache__new: %s", strerror(errno));
	if (!*c)
		return NULL;
	/* No debug file search: the binary's own tables only. */
	CHECK_U64(dso_cache__set_debug_root(*c, ""), 0);
	CHECK(stat(path, &st) == 0, "fixture %s missing: run make unit-fixtures", path);
	d = dso_cache__get(*c, st.st_dev, st.st_ino, path, path);
	CHECK(d && dso__readable(d), "%s: %s", path, d ? dso__error(d) : "NULL");
	return d && dso__readable(d) ? d : NULL;
}

/* The stripped binary names the functions of its unstripped twin, at their nm addresses. */
static void check_stripped(const char *binary, const char *gonm)
{
	static const char *const known[] = {"main.main",    "main.fxGoAlpha",	"main.fxGoBeta",
					    "runtime.main", "runtime.mallocgc", "fmt.Fprintln"};
	struct nm_sym *syms = NULL;
	size_t n = read_gonm(fx(gonm), &syms), named = 0, total = 0;
	struct dso_cache *c;
	struct dso *d = load(&c, fx(binary));

	CHECK(n > 1000, "%s: only %zu code symbols", gonm, n);
	for (size_t i = 0; d && i < sizeof(known) / sizeof(known[0]); i++) {
		const struct nm_sym *s = nm_find(syms, n, known[i]);
		struct dso_symbol sym;
		bool found;

		CHECK(s != NULL, "%s: no %s", gonm, known[i]);
		if (!s)
			continue;
		found = dso__find_symbol(d, s->addr, &sym);
		CHECK(found && !strcmp(sym.name, s->name) && sym.addr == s->addr,
		      "%s: 0x%" PRIx64 ": got %s at 0x%" PRIx64 ", want %s", binary, s->addr,
		      found ? sym.name : "nothing", found ? sym.addr : 0, s->name);
		found = dso__find_symbol(d, s->addr + s->size - 1, &sym);
		CHECK(found && !strcmp(sym.name, s->name), "%s: the end of %s: got %s", binary,
		      s->name, found ? sym.name : "nothing");
	}
	/* Every function with code: the linker's own symbols (go.buildid, runtime.etext...) are
	 * not functions, and have no pclntab entry; they are the only ones allowed to differ. */
	for (size_t i = 0; d && i < n; i++) {
		struct dso_symbol sym;

		if (!syms[i].size || !strncmp(syms[i].name, "go.", 3))
			continue;
		total++;
		if (dso__find_symbol(d, syms[i].addr, &sym) && same_func(sym.name, syms[i].name) &&
		    sym.addr == syms[i].addr)
			named++;
		else
			fprintf(stderr, "%s: %s at 0x%" PRIx64 " not named\n", binary, syms[i].name,
				syms[i].addr);
	}
	CHECK(total > 1000 && named == total, "%s: %zu of %zu functions named", binary, named,
	      total);
	dso_cache__delete(c);
	free(syms);
}

/* fx_go's .gopclntab: its bytes, their file offset, and the .text address. */
static uint8_t *real_tab;
static size_t real_len;
static uint64_t real_off, real_text;

/* The raw bytes of a binary's .gopclntab, and where they are in the file. */
static uint8_t *read_pclntab(const char *path, size_t *len, uint64_t *file_off, uint64_t *text)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	void *buf = NULL;

	*len = 0;
	*text = 0;
	elf_version(EV_CURRENT);
	if (fd >= 0)
		elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".text"))
			*text = sh.sh_addr;
		if (strcmp(name, ".gopclntab") || buf)
			continue;
		buf = malloc(sh.sh_size);
		if (buf && pread(fd, buf, sh.sh_size, sh.sh_offset) == (ssize_t)sh.sh_size) {
			*len = sh.sh_size;
			*file_off = sh.sh_offset;
		}
	}
out:
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	CHECK(*len > 0, "%s: no .gopclntab", path);
	return buf;
}

struct walk {
	size_t n;
	uint64_t last_end;
	bool ordered;
	char first[64];
};

static int count_fn(void *arg, uint64_t addr, uint64_t size, const char *name, size_t name_len)
{
	struct walk *w = arg;

	if (addr < w->last_end || strlen(name) != name_len)
		w->ordered = false;
	w->last_end = addr + size;
	if (!w->n)
		snprintf(w->first, sizeof(w->first), "%s", name);
	w->n++;
	return 0;
}

/* The parser alone on the real table, then on cut and damaged copies of it. */
static void check_corrupt_tables(void)
{
	const uint8_t *tab = real_tab;
	size_t len = real_len;
	uint8_t *copy = malloc(len);
	struct walk w = {.ordered = true}, w0;
	char err[128];
	int n, good;

	if (!copy)
		return;
	good = gopclntab__read(tab, len, real_text, count_fn, &w, err, sizeof(err));
	CHECK(good > 1000 && (size_t)good == w.n && w.ordered, "the real table: %d (%s)", good,
	      err);

	/* Cut anywhere in its first half (the function table is in the second): an error. */
	for (size_t cut = 0; cut < len / 2; cut += cut < 256 ? 1 : 997) {
		w = (struct walk){.ordered = true};
		n = gopclntab__read(tab, cut, real_text, count_fn, &w, err, sizeof(err));
		CHECK(n == -EINVAL && w.n == 0 && err[0], "cut at %zu: %d, %zu reported", cut, n,
		      w.n);
	}
	/* Cut later, or damaged anywhere: an error with nothing reported, or a walk that stays in
	 * bounds (the sanitizers check that) and in order. */
	srand(1);
	for (int i = 0; i < 3000; i++) {
		size_t at = (size_t)rand() % len;

		memcpy(copy, tab, len);
		copy[at] ^= (uint8_t)(1 + rand() % 255);
		w = (struct walk){.ordered = true};
		n = gopclntab__read(copy, i % 2 ? len : at, real_text, count_fn, &w, err,
				    sizeof(err));
		CHECK(n == -EINVAL ? w.n == 0 : (n >= 0 && (size_t)n == w.n && w.ordered),
		      "damage at %zu: %d, %zu reported", at, n, w.n);
	}
	/* An unrelocated PIE's table has 0 for textStart (and since Go 1.26 every table has: the
	 * linker no longer stores it): the .text address stands in. */
	memcpy(copy, tab, len);
	memset(copy + 8 + 2 * 8, 0, 8);
	w0 = (struct walk){.ordered = true};
	w = (struct walk){.ordered = true};
	gopclntab__read(tab, len, real_text, count_fn, &w, err, sizeof(err));
	n = gopclntab__read(copy, len, real_text, count_fn, &w0, err, sizeof(err));
	CHECK(n == good && w0.last_end == w.last_end && !strcmp(w0.first, w.first),
	      "textStart 0: %d functions, last end 0x%" PRIx64, n, w0.last_end);
	CHECK_U64(gopclntab__read(copy, len, 0, count_fn, &w0, err, sizeof(err)), -EINVAL);

	/* A huge nfunc, and an unknown magic. */
	memcpy(copy, tab, len);
	memset(copy + 8, 0x7f, 8);
	CHECK_U64(gopclntab__read(copy, len, real_text, count_fn, &w, err, sizeof(err)), -EINVAL);
	memcpy(copy, tab, len);
	copy[0] = 0xf5;
	CHECK_U64(gopclntab__read(copy, len, real_text, count_fn, &w, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "magic") != NULL, "unknown magic: %s", err);
	free(copy);
}

/* A copy of fx_go with n bytes at `at` in its .gopclntab replaced: readable, without names. */
static void check_corrupt_binary(const char *what, size_t at, const void *bytes, size_t n,
				 uint64_t main_addr)
{
	const char *path = tmp(what);
	char *file = NULL;
	size_t size = 0;
	FILE *f = fopen(fx("fx_go"), "rb");
	struct dso_cache *c;
	struct dso_symbol sym;
	struct dso *d;

	if (f && !fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET))
		file = malloc(size);
	if (!file || fread(file, 1, size, f) != size || at + n > real_len) {
		CHECK(false, "%s: cannot copy fx_go", what);
		goto out;
	}
	fclose(f);
	memcpy(file + real_off + at, bytes, n);
	f = fopen(path, "wb");
	CHECK(f && fwrite(file, 1, size, f) == size, "write %s", path);
	if (f)
		fclose(f);
	f = NULL;
	/* A Go binary without cgo has no .dynsym either: nothing is named. */
	d = load(&c, path);
	CHECK(d && !dso__find_symbol(d, main_addr, &sym), "%s: 0x%" PRIx64 " named %s", what,
	      main_addr, sym.name);
	dso_cache__delete(c);
	unlink(path);
out:
	if (f)
		fclose(f);
	free(file);
}

/* Builds a Go 1.2 or 1.16 table for three functions, little- or big-endian. */
struct synth {
	uint8_t b[1024];
	size_t len;
	bool be;
	unsigned int ptr;
	size_t funcs; /* offset of the first function record */
};

static void put(struct synth *s, size_t off, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		s->b[off + i] = (uint8_t)(v >> (8 * (s->be ? n - 1 - i : i)));
	if (off + n > s->len)
		s->len = off + n;
}

static void synth_table(struct synth *s, uint32_t magic)
{
	static const char *const names[] = {"main.one", "main.two", "pkg.(*T).three"};
	static const uint64_t entries[] = {0x1000, 0x1040, 0x10c0, 0x1100};
	unsigned int p = s->ptr;
	size_t ftab, funcs, nametab, funcbase, namebase;

	memset(s->b, 0, sizeof(s->b));
	s->len = 0;
	put(s, 0, magic, 4);
	s->b[6] = 1;
	s->b[7] = (uint8_t)p;
	put(s, 8, 3, p);
	if (magic == 0xfffffffb) {
		/* 1.2: the function table follows nfunc; offsets are from the header. */
		ftab = 8 + p;
		funcbase = namebase = 0;
		funcs = ftab + 7 * p;
		nametab = funcs + 3 * 2 * p + 8;
	} else {
		/* 1.16: funcnametab at 0x100, the pclntab (functab first) at 0x200. */
		nametab = namebase = 0x100;
		ftab = funcbase = 0x200;
		funcs = ftab + 7 * p;
		put(s, 8 + 2 * p, nametab, p);
		put(s, 8 + 6 * p, ftab, p);
	}
	for (size_t i = 0, name = nametab; i < 3; i++) {
		size_t func = funcs + i * 2 * p;

		put(s, ftab + 2 * i * p, entries[i], p);
		put(s, ftab + (2 * i + 1) * p, func - funcbase, p);
		put(s, func, entries[i], p);
		put(s, func + p, name - namebase, 4);
		memcpy(s->b + name, names[i], strlen(names[i]) + 1);
		name += strlen(names[i]) + 1;
		if (name > s->len)
			s->len = name;
	}
	put(s, ftab + 6 * p, entries[3], p);
	s->funcs = funcs;
}

static int expect_fn(void *arg, uint64_t addr, uint64_t size, const char *name, size_t name_len)
{
	static const char *const names[] = {"main.one", "main.two", "pkg.(*T).three"};
	static const uint64_t addrs[] = {0x1000, 0x1040, 0x10c0}, sizes[] = {0x40, 0x80, 0x40};
	size_t *i = arg;

	CHECK(*i < 3 && !strcmp(name, names[*i]) && name_len == strlen(names[*i]) &&
		      addr == addrs[*i] && size == sizes[*i],
	      "function %zu: %s at 0x%" PRIx64 " size 0x%" PRIx64, *i, name, addr, size);
	(*i)++;
	return 0;
}

static void check_old_layouts(void)
{
	static const uint32_t magics[] = {0xfffffffb, 0xfffffffa};

	for (size_t m = 0; m < 2; m++) {
		for (int be = 0; be < 2; be++) {
			for (unsigned int ptr = 4; ptr <= 8; ptr += 4) {
				struct synth s = {.be = be, .ptr = ptr};
				char err[128];
				size_t i = 0;
				int n;

				synth_table(&s, magics[m]);
				n = gopclntab__read(s.b, s.len, 0, expect_fn, &i, err, sizeof(err));
				CHECK(n == 3 && i == 3, "magic %08x be %d ptr %u: %d (%s)",
				      magics[m], be, ptr, n, err);
				/* The same table with its second record's entry wrong. */
				put(&s, s.funcs + 2 * ptr, 0x2000, ptr);
				i = 0;
				n = gopclntab__read(s.b, s.len, 0, expect_fn, &i, err, sizeof(err));
				CHECK(n == -EINVAL && i == 0, "bad record: %d, %zu reported", n, i);
			}
		}
	}
}

int main(void)
{
	static const uint8_t huge_nfunc[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f};
	static const uint8_t bad_magic[4] = {0};
	static const uint8_t zeros[4096] = {0};
	const struct nm_sym *main_sym;
	struct nm_sym *syms = NULL;
	uint64_t pcln;
	size_t n;

	CHECK(fixture_paths__init("test_gopclntab") == 0, "mkdtemp: %s", strerror(errno));
	n = read_gonm(fx("fx_go_full.gonm"), &syms);
	main_sym = nm_find(syms, n, "main.main");
	check_stripped("fx_go", "fx_go_full.gonm");
	check_stripped("fx_go_pie", "fx_go_pie_full.gonm");
	real_tab = read_pclntab(fx("fx_go"), &real_len, &real_off, &real_text);
	if (real_tab && real_len > 0x60 && main_sym) {
		check_corrupt_tables();
		check_corrupt_binary("nfunc", 8, huge_nfunc, sizeof(huge_nfunc), main_sym->addr);
		check_corrupt_binary("magic", 0, bad_magic, sizeof(bad_magic), main_sym->addr);
		/* Zeros over the start of the function table (at the header's pclntab offset, its
		 * eighth word in Go 1.18+): no function record matches its entry any more. */
		memcpy(&pcln, real_tab + 8 + 7 * 8, sizeof(pcln));
		check_corrupt_binary("functab", pcln, zeros, sizeof(zeros), main_sym->addr);
	}
	check_old_layouts();
	free(real_tab);
	free(syms);
	rmdir(tmpdir);
	return check_summary("test_gopclntab");
}

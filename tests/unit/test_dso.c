// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for src/symbols/dso.h (dso.c, elf_symtab.c, dso_load.c, dso_cache.c) on the ELF
 * fixtures that tests/unit/fixtures.mk builds into $OUTPUT/fixtures (OUTPUT defaults to "build").
 * Expected build-ids, symbol addresses and program headers come from binutils (readelf, nm) at
 * build time, never from the code under test. Corrupt copies are written to a mkdtemp() directory
 * under /tmp. Needs no privileges.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/safe_open.h"
#include "check.h"
#include "fixture_paths.h"
#include "symbols/dso.h"
#include "process/proc.h"

/* noclone keeps GCC from renaming the function ("x.constprop.0"); clang has no such clones. */
#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#define PAGE_MASK_4K (~(uint64_t)0xfff)

/* --- expected values, as binutils computed them --- */

struct nm_sym {
	uint64_t addr, size;
	char type;
	char name[128];
};

struct nm_table {
	struct nm_sym *v;
	size_t n;
};

/* Parses `nm -S --defined-only` output: "addr [size] type name". */
static int load_nm(const char *path, struct nm_table *t)
{
	char line[512];
	FILE *f = fopen(path, "re");

	t->v = NULL;
	t->n = 0;
	if (!f) {
		fprintf(stderr, "cannot open %s: %s (run `make unit-fixtures` first)\n", path,
			strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char a[32], b[32], c[128], d[128];
		struct nm_sym s = {0};
		struct nm_sym *nv;
		int n = sscanf(line, "%31s %31s %127s %127s", a, b, c, d);

		if (n == 4) {
			s.addr = strtoull(a, NULL, 16);
			s.size = strtoull(b, NULL, 16);
			s.type = c[0];
			snprintf(s.name, sizeof(s.name), "%s", d);
		} else if (n == 3) {
			s.addr = strtoull(a, NULL, 16);
			s.type = b[0];
			snprintf(s.name, sizeof(s.name), "%s", c);
		} else {
			continue;
		}
		nv = realloc(t->v, (t->n + 1) * sizeof(*nv));
		if (!nv)
			break;
		t->v = nv;
		t->v[t->n++] = s;
	}
	fclose(f);
	return 0;
}

static const struct nm_sym *nm_find(const struct nm_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	fprintf(stderr, "symbol %s not in nm output\n", name);
	return NULL;
}

struct phdr {
	uint64_t offset, vaddr, filesz, memsz;
	bool exec;
};

/* Parses the LOAD lines of `readelf -lW`: "LOAD off vaddr paddr filesz memsz flags align". */
static size_t load_phdrs(const char *path, struct phdr *out, size_t max)
{
	char line[256];
	size_t n = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		return 0;
	}
	while (n < max && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "LOAD");
		uint64_t paddr;
		int used = 0;

		if (!p)
			continue;
		if (sscanf(p, "LOAD %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %n",
			   &out[n].offset, &out[n].vaddr, &paddr, &out[n].filesz, &out[n].memsz,
			   &used) != 5)
			continue;
		/* The flags column is three characters wide: "R E", "RW ", "R  ", "RWE". */
		out[n].exec = p[used] && p[used + 1] && p[used + 2] == 'E';
		n++;
	}
	fclose(f);
	return n;
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int copy_file(const char *from, const char *to, size_t max_len)
{
	char buf[4096];
	size_t total = 0;
	int in, out, err = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while (total < max_len && (n = read(in, buf, sizeof(buf))) > 0) {
		if ((size_t)n > max_len - total)
			n = max_len - total;
		if (write(out, buf, n) != n) {
			err = -EIO;
			break;
		}
		total += n;
	}
	close(in);
	close(out);
	return err;
}

static void *read_all(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(buf = malloc(st.st_size + 1))) {
		close(fd);
		return NULL;
	}
	if (read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	*len = st.st_size;
	return buf;
}

static int write_all(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len)
		err = -EIO;
	close(fd);
	return err;
}

/* A deterministic PRNG, so that a failure can be reproduced. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Identities for the cache: fixtures get distinct fake (dev, inode) pairs. */
static uint64_t next_inode = 1000;

static struct dso *open_fixture(struct dso_cache *c, const char *name)
{
	const char *path = fx(name);

	return dso_cache__get(c, 1, next_inode++, path, path);
}

/* --- tests --- */

static void check_build_id(struct dso *d, const char *name)
{
	char want[128], path[PATH_MAX];
	const uint8_t *id = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s.buildid", fx(name));
	read_line(path, want, sizeof(want));
	CHECK(strlen(want) == 40, "%s: readelf found a sha1 build-id (\"%s\")", name, want);
	CHECK_STR(dso__build_id_hex(d), want);
	len = dso__build_id(d, &id);
	CHECK_U64(len, strlen(want) / 2);
	if (id && len == strlen(want) / 2) {
		bool same = true;

		for (size_t i = 0; i < len; i++) {
			unsigned int byte;

			sscanf(want + 2 * i, "%2x", &byte);
			same &= id[i] == byte;
		}
		CHECK(same, "%s: raw build-id bytes match the hex", name);
	}
}

/* The OTel file id, against python's hashlib over the same bytes (the .htlhash fixture file). */
static void check_htlhash(struct dso *d, const char *name)
{
	char want[128], path[PATH_MAX];

	snprintf(path, sizeof(path), "%s.htlhash", fx(name));
	read_line(path, want, sizeof(want));
	CHECK(strlen(want) == 32, "%s: python computed a file id (\"%s\")", name, want);
	CHECK_STR(dso__htlhash_hex(d), want);
}

static void test_build_ids(struct dso_cache *c)
{
	static const char *const names[] = {"fx_pie", "fx_nopie", "libfx.so", "libfx-stripped.so",
					    "fx_twoexec"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct dso *d = open_fixture(c, names[i]);

		CHECK(d != NULL, "get %s", names[i]);
		if (!d)
			continue;
		CHECK(dso__readable(d), "%s readable: %s", names[i], dso__error(d));
		CHECK_STR(dso__error(d), "");
		CHECK_STR(dso__path(d), fx(names[i]));
		check_build_id(d, names[i]);
		check_htlhash(d, names[i]);
	}
}

/* find_symbol(addr) must name `want` and start at want_addr. */
static void check_sym(struct dso *d, uint64_t addr, const char *want, uint64_t want_addr)
{
	struct dso_symbol sym = {0};
	bool found = dso__find_symbol(d, addr, &sym);

	CHECK(found, "%s: no symbol at 0x%" PRIx64 ", want %s", dso__path(d), addr, want);
	if (!found)
		return;
	CHECK_STR(sym.name, want);
	CHECK_U64(sym.addr, want_addr);
}

/* Every defined FUNC/IFUNC symbol that readelf lists must resolve to a symbol starting there. */
static void check_all_funcs(struct dso *d, const char *name, size_t min)
{
	char path[PATH_MAX], line[512];
	size_t total = 0, good = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s.funcs", fx(name));
	f = fopen(path, "re");
	CHECK(f != NULL, "open %s", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct dso_symbol sym;
		uint64_t addr = strtoull(line, NULL, 16);

		total++;
		if (dso__find_symbol(d, addr, &sym) && sym.addr == addr)
			good++;
		else
			fprintf(stderr, "%s: FUNC at %s not found\n", name, line);
	}
	fclose(f);
	CHECK(total >= min, "%s: readelf listed %zu functions", name, total);
	CHECK_U64(good, total);
}

static void test_exe_symbols(struct dso_cache *c, const char *name)
{
	char path[PATH_MAX];
	const struct nm_sym *alpha, *s;
	struct nm_table nm;
	struct dso_symbol sym;
	struct dso *d;

	snprintf(path, sizeof(path), "%s.syms", fx(name));
	if (load_nm(path, &nm)) {
		CHECK(0, "%s: no nm output", name);
		return;
	}
	d = open_fixture(c, name);
	CHECK(d && dso__readable(d), "%s readable", name);
	if (!d)
		goto out;

	alpha = nm_find(&nm, "fx_alpha");
	CHECK(alpha && alpha->size > 0, "fx_alpha has a size");
	if (alpha) {
		check_sym(d, alpha->addr, "fx_alpha", alpha->addr);
		check_sym(d, alpha->addr + alpha->size - 1, "fx_alpha", alpha->addr);
		/* One past a sized symbol is not that symbol. */
		CHECK(!dso__find_symbol(d, alpha->addr + alpha->size, &sym) ||
			      strcmp(sym.name, "fx_alpha"),
		      "%s: fx_alpha ends at its size", name);
		CHECK(dso__find_symbol(d, alpha->addr, &sym) && sym.size == alpha->size,
		      "fx_alpha size");
	}
	/* Aliases at fx_alpha's address: the global name wins over weak and local ones. */
	if ((s = nm_find(&nm, "fx_weak_alias")))
		check_sym(d, s->addr, "fx_alpha", s->addr);
	if ((s = nm_find(&nm, "fx_local_alias")))
		check_sym(d, s->addr, "fx_alpha", s->addr);
	if ((s = nm_find(&nm, "fx_beta"))) {
		check_sym(d, s->addr, "fx_beta", s->addr);
		check_sym(d, s->addr + s->size / 2, "fx_beta", s->addr);
	}
	if ((s = nm_find(&nm, "fx_local"))) {
		CHECK(s->type == 't', "fx_local is local");
		check_sym(d, s->addr + 1, "fx_local", s->addr);
	}
	if ((s = nm_find(&nm, "main")))
		check_sym(d, s->addr, "main", s->addr);
	/* The IFUNC symbol shares the resolver's address and, being global, names it. */
	if ((s = nm_find(&nm, "fx_ifunc"))) {
		CHECK(s->type == 'i', "fx_ifunc is an IFUNC");
		check_sym(d, s->addr, "fx_ifunc", s->addr);
	}
	if ((s = nm_find(&nm, "fx_ifunc_impl")))
		check_sym(d, s->addr, "fx_ifunc_impl", s->addr);
	/* No size: it extends to the next symbol, and no further. */
	if ((s = nm_find(&nm, "fx_nosize"))) {
		uint64_t next = UINT64_MAX;

		CHECK(s->size == 0, "fx_nosize has no size");
		for (size_t i = 0; i < nm.n; i++)
			if ((nm.v[i].type == 't' || nm.v[i].type == 'T') &&
			    nm.v[i].addr > s->addr && nm.v[i].addr < next)
				next = nm.v[i].addr;
		check_sym(d, s->addr, "fx_nosize", s->addr);
		check_sym(d, s->addr + 4, "fx_nosize", s->addr);
		CHECK(next != UINT64_MAX, "a symbol follows fx_nosize");
		if (next != UINT64_MAX) {
			check_sym(d, next - 1, "fx_nosize", s->addr);
			CHECK(dso__find_symbol(d, next, &sym) && strcmp(sym.name, "fx_nosize"),
			      "fx_nosize stops at the next symbol");
		}
	}
	CHECK(!dso__find_symbol(d, 0, &sym), "nothing at address 0");
	CHECK(!dso__find_symbol(d, UINT64_MAX, &sym), "nothing at UINT64_MAX");
	check_all_funcs(d, name, 10);
out:
	free(nm.v);
}

static void test_lib_symbols(struct dso_cache *c)
{
	static const char *const names[] = {"fx_lib_alpha", "fx_lib_beta", "fx_lib_hidden",
					    "fx_lib_local"};
	char path[PATH_MAX];
	struct nm_table nm, dyn;
	struct dso_symbol sym;
	const struct nm_sym *s;
	struct dso *d;

	snprintf(path, sizeof(path), "%s.syms", fx("libfx.so"));
	load_nm(path, &nm);
	snprintf(path, sizeof(path), "%s.dynsyms", fx("libfx-stripped.so"));
	load_nm(path, &dyn);

	d = open_fixture(c, "libfx.so");
	CHECK(d && dso__readable(d), "libfx.so readable");
	for (size_t i = 0; d && i < sizeof(names) / sizeof(names[0]); i++)
		if ((s = nm_find(&nm, names[i])))
			check_sym(d, s->addr + 1, names[i], s->addr);
	if (d)
		check_all_funcs(d, "libfx.so", 6);

	/* The stripped copy has no .symtab: the exported functions still resolve, from .dynsym. */
	d = open_fixture(c, "libfx-stripped.so");
	CHECK(d && dso__readable(d), "libfx-stripped.so readable");
	if (d) {
		CHECK(dyn.n >= 2, "nm -D found the exports");
		for (size_t i = 0; i < 2; i++)
			if ((s = nm_find(&dyn, names[i])))
				check_sym(d, s->addr + 1, names[i], s->addr);
		/* The hidden function is gone with .symtab: it must not borrow a neighbour's name.
		 */
		if ((s = nm_find(&nm, "fx_lib_hidden")))
			CHECK(!dso__find_symbol(d, s->addr + 1, &sym) ||
				      strcmp(sym.name, "fx_lib_hidden"),
			      "stripped: fx_lib_hidden is unknown");
		if ((s = nm_find(&nm, "fx_lib_local")))
			CHECK(!dso__find_symbol(d, s->addr + 1, &sym),
			      "stripped: no symbol covers fx_lib_local");
		check_all_funcs(d, "libfx-stripped.so", 2);
	}
	free(nm.v);
	free(dyn.v);
}

/*
 * Maps each executable segment as the kernel does (start rounded down to the page, pgoff the page
 * of p_offset) at load bias `bias`, and checks that each named function converts back to its ELF
 * address and name.
 */
static void check_file_addrs(struct dso_cache *c, const char *name, uint64_t bias,
			     const char *const *funcs, size_t nfuncs, size_t want_exec)
{
	char path[PATH_MAX];
	struct phdr ph[16];
	struct nm_table nm;
	size_t nph, nexec = 0, hits = 0;
	struct dso *d;
	uint64_t fa;

	snprintf(path, sizeof(path), "%s.phdrs", fx(name));
	nph = load_phdrs(path, ph, 16);
	snprintf(path, sizeof(path), "%s.syms", fx(name));
	load_nm(path, &nm);
	d = open_fixture(c, name);
	CHECK(d && dso__readable(d), "%s readable", name);
	if (!d)
		goto out;
	for (size_t i = 0; i < nph; i++)
		nexec += ph[i].exec;
	CHECK_U64(nexec, want_exec);

	for (size_t f = 0; f < nfuncs; f++) {
		const struct nm_sym *s = nm_find(&nm, funcs[f]);

		if (!s)
			continue;
		for (size_t i = 0; i < nph; i++) {
			uint64_t start = bias + (ph[i].vaddr & PAGE_MASK_4K);
			uint64_t pgoff = ph[i].offset & PAGE_MASK_4K;
			uint64_t runtime = bias + s->addr;
			struct dso_symbol sym;

			if (!ph[i].exec || s->addr < ph[i].vaddr ||
			    s->addr >= ph[i].vaddr + ph[i].filesz)
				continue;
			hits++;
			CHECK(dso__file_addr(d, start, pgoff, runtime, &fa), "%s: %s converts",
			      name, funcs[f]);
			CHECK_U64(fa, s->addr);
			CHECK(dso__find_symbol(d, fa, &sym), "%s: %s found", name, funcs[f]);
			if (dso__find_symbol(d, fa, &sym))
				CHECK_STR(sym.name, funcs[f]);
			/* Before the mapping: no conversion. */
			CHECK(!dso__file_addr(d, start, pgoff, start - 1, &fa), "below map_start");
			/* Past the segment's file bytes but inside its last page: no segment. */
			if (ph[i].offset + ph[i].filesz < (ph[i].offset | 0xfff)) {
				uint64_t off = (ph[i].offset | 0xfff);
				bool other = false;

				for (size_t j = 0; j < nph; j++)
					other |= off >= ph[j].offset &&
						 off < ph[j].offset + ph[j].filesz;
				if (!other) {
					CHECK(!dso__file_addr(d, start, pgoff,
							      start + (off - pgoff), &fa),
					      "%s: offset 0x%" PRIx64 " is in no segment", name,
					      off);
					CHECK_U64(fa, off);
				}
			}
		}
	}
	CHECK_U64(hits, nfuncs);
out:
	free(nm.v);
}

static void test_file_addr(struct dso_cache *c)
{
	static const char *const prog[] = {"fx_alpha", "fx_beta", "fx_local", "fx_nosize", "main"};
	static const char *const lib[] = {"fx_lib_alpha", "fx_lib_beta", "fx_lib_hidden"};
	static const char *const two[] = {"fx_first", "fx_second_a", "fx_second_b", "main"};
	char path[PATH_MAX];
	struct phdr ph[16];
	size_t nph;
	struct dso *d;
	uint64_t fa;

	check_file_addrs(c, "fx_pie", 0x555555554000ull, prog, 5, 1);
	/* Non-PIE: loaded at its link address, so the conversion is the identity. */
	check_file_addrs(c, "fx_nopie", 0, prog, 5, 1);
	check_file_addrs(c, "libfx.so", 0x7f3a12340000ull, lib, 3, 1);
	check_file_addrs(c, "fx_twoexec", 0x562a00000000ull, two, 4, 2);

	/* The second exec segment must map addresses differently from the first for this to count.
	 */
	snprintf(path, sizeof(path), "%s.phdrs", fx("fx_twoexec"));
	nph = load_phdrs(path, ph, 16);
	{
		uint64_t deltas[2];
		size_t n = 0;

		for (size_t i = 0; i < nph && n < 2; i++)
			if (ph[i].exec)
				deltas[n++] = ph[i].vaddr - ph[i].offset;
		CHECK(n == 2 && deltas[0] != deltas[1], "exec segments differ in vaddr - offset");
	}

	/* fx_nopie's .text identity mapping, spelled out. */
	d = open_fixture(c, "fx_nopie");
	snprintf(path, sizeof(path), "%s.phdrs", fx("fx_nopie"));
	nph = load_phdrs(path, ph, 16);
	for (size_t i = 0; d && i < nph; i++) {
		if (!ph[i].exec)
			continue;
		CHECK(dso__file_addr(d, ph[i].vaddr & PAGE_MASK_4K, ph[i].offset & PAGE_MASK_4K,
				     ph[i].vaddr + 5, &fa),
		      "non-PIE text");
		CHECK_U64(fa, ph[i].vaddr + 5);
	}
	CHECK(!dso__file_addr(NULL, 0, 0, 0, &fa), "NULL dso");
}

static void check_unreadable(struct dso *d, const char *what, const char *want_error)
{
	struct dso_symbol sym;
	uint64_t fa;

	CHECK(d != NULL, "%s: a dso even so", what);
	if (!d)
		return;
	CHECK(!dso__readable(d), "%s: not readable", what);
	CHECK(strstr(dso__error(d), want_error) != NULL, "%s: error \"%s\", want \"%s\"", what,
	      dso__error(d), want_error);
	CHECK(!dso__find_symbol(d, 0x1000, &sym), "%s: no symbols", what);
	CHECK(!dso__file_addr(d, 0x1000, 0, 0x1100, &fa), "%s: no segments", what);
	CHECK_STR(dso__build_id_hex(d), "");
	CHECK_U64(dso__build_id(d, NULL), 0);
}

/* Loads a buffer as a file; must not crash (ASan/UBSan watch), whatever it says. */
static struct dso *load_bytes(struct dso_cache *c, const void *buf, size_t len)
{
	const char *path = tmp("bytes");

	if (write_all(path, buf, len))
		return NULL;
	return dso_cache__get(c, 2, next_inode++, path, path);
}

static void test_unreadable(struct dso_cache *c)
{
	char want[PATH_MAX + 64];
	size_t len = 0;
	uint8_t *orig, *buf;
	struct dso *d;

	d = dso_cache__get(c, 3, 1, "/nonexistent/libnothing.so", "/usr/lib/libnothing.so");
	snprintf(want, sizeof(want), "open /nonexistent/libnothing.so: %s", strerror(ENOENT));
	check_unreadable(d, "nonexistent", want);
	CHECK_STR(dso__path(d), "/usr/lib/libnothing.so");

	/* Permission denied can only happen without root (run-unit.sh runs us as nobody). */
	if (geteuid() != 0) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/secret.so", tmpdir);

		copy_file(fx("libfx.so"), path, SIZE_MAX);
		chmod(path, 0);
		d = dso_cache__get(c, 3, 2, path, path);
		snprintf(want, sizeof(want), "open %s: %s", path, strerror(EACCES));
		check_unreadable(d, "permission denied", want);
		unlink(path);
	}

	d = dso_cache__get(c, 3, 3, tmpdir, tmpdir);
	check_unreadable(d, "directory", "not a regular file");
	d = load_bytes(c, "", 0);
	check_unreadable(d, "empty file", "not an ELF file");
	d = load_bytes(c, "#!/bin/sh\necho hello\n", 21);
	check_unreadable(d, "script", "not an ELF file");
	d = dso_cache__get(c, 3, 4, NULL, "/no/open/path");
	check_unreadable(d, "NULL open_path", "/no/open/path");

	orig = read_all(fx("fx_pie"), &len);
	CHECK(orig != NULL && len > 4096, "read fx_pie");
	if (!orig)
		return;
	buf = malloc(len);
	if (!buf) {
		free(orig);
		return;
	}

	/* Random bytes behind an ELF magic, with and without a plausible e_ident. */
	for (int round = 0; round < 64; round++) {
		for (size_t i = 0; i < 4096; i++)
			buf[i] = rng();
		memcpy(buf, ELFMAG, SELFMAG);
		if (round & 1) {
			buf[EI_CLASS] = ELFCLASS64;
			buf[EI_DATA] = ELFDATA2LSB;
			buf[EI_VERSION] = EV_CURRENT;
		}
		d = load_bytes(c, buf, 4096);
		CHECK(d && !dso__readable(d), "random ELF %d is not readable", round);
		if (d && round < 2)
			CHECK(strstr(dso__error(d), tmp("bytes")) != NULL,
			      "error names the file: %s", dso__error(d));
	}

	/* Truncated copies: from nothing to one byte short. */
	{
		static const size_t cuts[] = {1, 4, 16, 52, 63, 64, 65, 120, 512, 4096, 8192};
		bool all = true;

		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]) + 2; i++) {
			size_t cut = i < sizeof(cuts) / sizeof(cuts[0])	   ? cuts[i]
				     : i == sizeof(cuts) / sizeof(cuts[0]) ? len / 2
									   : len - 1;

			d = load_bytes(c, orig, cut < len ? cut : len - 1);
			if (!d || dso__readable(d)) {
				fprintf(stderr, "truncated at %zu: readable\n", cut);
				all = false;
			}
		}
		CHECK(all, "every truncated copy is unreadable");
	}

	/* Header fields pointing out of the file. */
	{
		Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
		bool ok_shape;

		memcpy(buf, orig, len);
		ok_shape = eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_shoff < len &&
			   eh->e_shentsize == sizeof(Elf64_Shdr) &&
			   eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= len &&
			   eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= len;
		CHECK(ok_shape, "fx_pie is a plain ELF64");
		if (ok_shape) {
			Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff);
			Elf64_Phdr *ph = (Elf64_Phdr *)(buf + eh->e_phoff);
			int symtab = -1, load = -1;

			for (int i = 0; i < eh->e_shnum; i++)
				if (sh[i].sh_type == SHT_SYMTAB)
					symtab = i;
			for (int i = 0; i < eh->e_phnum; i++)
				if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
					load = i;
			CHECK(symtab > 0 && load >= 0, "found .symtab and the text PT_LOAD");

			if (symtab > 0) {
				sh[symtab].sh_offset = len + 0x10000;
				d = load_bytes(c, buf, len);
				check_unreadable(d, "section beyond EOF", "beyond the end");

				sh[symtab].sh_offset = UINT64_MAX - 8;
				d = load_bytes(c, buf, len);
				check_unreadable(d, "section offset overflow", "beyond the end");

				/* A string table link to nowhere: names are unreadable, no crash.
				 */
				memcpy(buf, orig, len);
				sh[symtab].sh_link = 0xfff0;
				d = load_bytes(c, buf, len);
				CHECK(d != NULL, "bad sh_link");

				memcpy(buf, orig, len);
				sh[symtab].sh_size = len * 4;
				d = load_bytes(c, buf, len);
				check_unreadable(d, "symtab larger than the file",
						 "beyond the end");
			}
			if (load >= 0) {
				memcpy(buf, orig, len);
				ph[load].p_filesz = len;
				d = load_bytes(c, buf, len);
				check_unreadable(d, "segment beyond EOF", "beyond the end");
			}
			memcpy(buf, orig, len);
			eh->e_shoff = len - 8;
			d = load_bytes(c, buf, len);
			CHECK(d && !dso__readable(d), "section table beyond EOF: %s",
			      d ? dso__error(d) : "");
			memcpy(buf, orig, len);
			eh->e_phoff = len + 100;
			d = load_bytes(c, buf, len);
			CHECK(d && !dso__readable(d), "program headers beyond EOF: %s",
			      d ? dso__error(d) : "");
		}
	}

	/* Flip bytes in the headers and tables; whatever libelf makes of it, we must not crash. */
	{
		Elf64_Ehdr *eh = (Elf64_Ehdr *)orig;
		size_t regions[3][2] = {
			{0, sizeof(Elf64_Ehdr)},
			{eh->e_phoff, (size_t)eh->e_phnum * sizeof(Elf64_Phdr)},
			{eh->e_shoff, (size_t)eh->e_shnum * sizeof(Elf64_Shdr)},
		};
		int survived = 0, readable = 0;

		for (int round = 0; round < 600; round++) {
			size_t *r = regions[round % 3];
			int flips = 1 + rng() % 4;
			struct dso_symbol sym;
			uint64_t fa;

			memcpy(buf, orig, len);
			for (int k = 0; k < flips && r[1]; k++) {
				size_t at = r[0] + rng() % r[1];

				if (at < len)
					buf[at] = rng();
			}
			d = load_bytes(c, buf, len);
			if (!d)
				continue;
			survived++;
			if (dso__readable(d)) {
				readable++;
				for (int k = 0; k < 64; k++)
					dso__find_symbol(d, rng() % 0x4000, &sym);
				dso__file_addr(d, 0x1000, 0, 0x1000 + rng() % 0x4000, &fa);
			}
		}
		CHECK(survived == 600, "%d of 600 mutated binaries loaded without error", survived);
		if (getenv("TEST_VERBOSE"))
			fprintf(stderr, "mutations: %d still readable\n", readable);
	}
	free(buf);
	free(orig);
	unlink(tmp("bytes"));
}

static void test_cache(void)
{
	struct dso_cache *c;
	struct dso *a, *b, *d, *first;
	const char *pie = fx("fx_pie"), *lib = fx("libfx.so"), *two = fx("fx_twoexec");
	const char *p = tmp("reused");
	char want[128], path[PATH_MAX];
	size_t mem;

	errno = 0;
	CHECK(dso_cache__new(0) == NULL && errno == EINVAL, "cap 0 is refused");
	dso_cache__delete(NULL);
	CHECK_U64(dso_cache__size(NULL), 0);

	c = dso_cache__new(2);
	CHECK(c != NULL, "dso_cache__new");
	if (!c)
		return;
	/* Same identity: the same object, read once. */
	mem = dso_cache__memory(c);
	CHECK(mem > 0 && dso_cache__memory(NULL) == 0, "an empty cache has its buckets");
	a = dso_cache__get(c, 8, 1, pie, pie);
	CHECK(a && dso_cache__memory(c) > mem + 2 * strlen(pie),
	      "memory counts a binary's tables: %zu -> %zu", mem, dso_cache__memory(c));
	mem = dso_cache__memory(c);
	d = dso_cache__get(c, 8, 1, pie, pie);
	CHECK(a && a == d, "same identity, same dso");
	CHECK_U64(dso_cache__size(c), 1);
	CHECK(dso_cache__memory(c) == mem, "a hit costs no memory");
	/* Another path to the same file (as map_files of two processes) is still one dso. */
	CHECK(symlink(pie, tmp("pie-link")) == 0, "symlink: %s", strerror(errno));
	d = dso_cache__get(c, 8, 1, tmp("pie-link"), pie);
	CHECK(d == a, "same file through another path, same dso");
	CHECK_U64(dso_cache__size(c), 1);
	unlink(tmp("pie-link"));

	dso_cache__delete(c);
	c = dso_cache__new(2);
	if (!c)
		return;

	/* LRU: A, B, touch A, C evicts B. */
	a = dso_cache__get(c, 8, 1, pie, pie);
	b = dso_cache__get(c, 8, 2, lib, lib);
	CHECK(a != b, "two identities, two dsos");
	d = dso_cache__get(c, 8, 1, pie, pie);
	CHECK(d == a, "A is still cached");
	first = a;
	d = dso_cache__get(c, 8, 3, two, two);
	CHECK_U64(dso_cache__size(c), 2);
	/* A path that no longer works: a cached identity is served from the cache... */
	d = dso_cache__get(c, 8, 1, "/nonexistent/pie", "/nonexistent/pie");
	CHECK(d == first && dso__readable(d), "A survived the eviction");
	/* ...and an evicted one has to be read again, which now fails. */
	d = dso_cache__get(c, 8, 2, "/nonexistent/lib", "/nonexistent/lib");
	CHECK(d && !dso__readable(d), "B was evicted");
	CHECK_U64(dso_cache__size(c), 2);
	/* An unreadable file is remembered too: no new open for every sample. */
	b = d;
	d = dso_cache__get(c, 8, 2, "/nonexistent/lib", "/nonexistent/lib");
	CHECK(d == b, "unreadable dso is cached");
	dso_cache__delete(c);

	/* Inode reuse: one (dev, inode), two files with different build-ids, two dsos. */
	c = dso_cache__new(8);
	if (!c)
		return;
	CHECK(copy_file(lib, p, SIZE_MAX) == 0, "copy libfx.so");
	a = dso_cache__get(c, 9, 77, p, p);
	snprintf(path, sizeof(path), "%s.buildid", lib);
	read_line(path, want, sizeof(want));
	CHECK(a && !strcmp(dso__build_id_hex(a), want), "first file is libfx.so");

	CHECK(copy_file(pie, tmp("reused.new"), SIZE_MAX) == 0, "copy fx_pie");
	CHECK(rename(tmp("reused.new"), p) == 0, "replace");
	b = dso_cache__get(c, 9, 77, p, p);
	snprintf(path, sizeof(path), "%s.buildid", pie);
	read_line(path, want, sizeof(want));
	CHECK(b && b != a, "a new dso for the new file");
	CHECK(b && !strcmp(dso__build_id_hex(b), want), "second file is fx_pie: %s",
	      b ? dso__build_id_hex(b) : "");
	CHECK_U64(dso_cache__size(c), 2);
	d = dso_cache__get(c, 9, 77, p, p);
	CHECK(d == b, "the new file hits");

	/* The first binary comes back (a new inode on disk, the same build-id): the old dso. */
	CHECK(copy_file(lib, tmp("reused.new"), SIZE_MAX) == 0, "copy libfx.so again");
	CHECK(rename(tmp("reused.new"), p) == 0, "replace again");
	d = dso_cache__get(c, 9, 77, p, p);
	CHECK(d == a, "same build-id, same dso");
	CHECK_U64(dso_cache__size(c), 2);
	d = dso_cache__get(c, 9, 77, p, p);
	CHECK(d == a, "and it hits now");
	unlink(p);
	dso_cache__delete(c);
}

/* --- the real loader --- */

static NOINLINE int live_target(int x)
{
	volatile int y = x;

	return y * 13 + 7;
}

static int find_own_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	char *hex = data;

	(void)size;
	/* The first object is the main program. */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && desc + nh->n_descsz <= end) {
				for (size_t k = 0; k < nh->n_descsz && k < 64; k++)
					sprintf(hex + 2 * k, "%02x", desc[k]);
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

/* The symbol tables' byte budget evicts the least recently used binaries, never the newest. */
static void test_symbol_budget(void)
{
	const char *pie = fx("fx_pie"), *lib = fx("libfx.so"), *two = fx("fx_twoexec");
	const char *inl = fx("fx_inline");
	struct dso_cache *c = dso_cache__new(8);
	const struct nm_sym *main_sym = NULL;
	char path[PATH_MAX];
	struct nm_table nm = {0};
	struct dso_line lines[DSO_MAX_LINES];
	struct dso *a;

	snprintf(path, sizeof(path), "%s.syms", pie);
	if (!c || load_nm(path, &nm) || !(main_sym = nm_find(&nm, "main"))) {
		CHECK(0, "setup: a cache and fx_pie's main");
		goto out;
	}
	/* Within the default budget all three stay. */
	dso_cache__get(c, 8, 1, pie, pie);
	dso_cache__get(c, 8, 2, lib, lib);
	dso_cache__get(c, 8, 3, two, two);
	CHECK_U64(dso_cache__size(c), 3);
	/* Lowered below what they hold: all but the newest go at once. */
	dso_cache__set_symbol_budget(c, 1);
	CHECK_U64(dso_cache__size(c), 1);
	CHECK(dso_cache__has(c, 8, 3) && !dso_cache__has(c, 8, 1) && !dso_cache__has(c, 8, 2),
	      "the newest stays");
	/* A new binary alone over the budget is kept and answers, and evicts the one before. */
	a = dso_cache__get(c, 8, 1, pie, pie);
	check_sym(a, main_sym->addr, "main", main_sym->addr);
	CHECK_U64(dso_cache__size(c), 1);
	CHECK(!dso_cache__has(c, 8, 3), "the one before was evicted");
	/* One with its DWARF open stays: the DWARF budget is its bound. */
	free(nm.v);
	snprintf(path, sizeof(path), "%s.syms", inl);
	if (load_nm(path, &nm) || !(main_sym = nm_find(&nm, "main"))) {
		CHECK(0, "setup: fx_inline's main");
		goto out;
	}
	a = dso_cache__get(c, 8, 4, inl, inl);
	CHECK(a && dso__find_lines(a, main_sym->addr, lines, DSO_MAX_LINES) > 0,
	      "fx_inline's lines");
	dso_cache__get(c, 8, 2, lib, lib);
	CHECK(dso_cache__has(c, 8, 4) && dso_cache__size(c) == 2,
	      "a DWARF handle keeps its binary");
	/* Raised again: nothing is evicted. */
	dso_cache__set_symbol_budget(c, 1 << 20);
	dso_cache__get(c, 8, 3, two, two);
	dso_cache__get(c, 8, 1, pie, pie);
	CHECK_U64(dso_cache__size(c), 4);
out:
	free(nm.v);
	dso_cache__delete(c);
}

static void test_live(void)
{
	uint64_t fn = (uint64_t)(uintptr_t)&live_target;
	uint64_t libc_fn = (uint64_t)(uintptr_t)&getpid;
	char exe[PATH_MAX], own_id[160] = "";
	const struct mapping *m;
	struct dso_symbol sym;
	struct dso_cache *c;
	struct maps maps;
	struct dso *d;
	uint64_t fa;
	FILE *f;
	ssize_t n;

	CHECK(live_target(1) == 20, "live_target runs");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	f = fopen("/proc/self/maps", "re");
	CHECK(f != NULL, "open /proc/self/maps");
	if (!f)
		return;
	CHECK(maps__parse(&maps, f, NULL) == 0, "parse /proc/self/maps");
	fclose(f);
	c = dso_cache__new(16);
	if (!c) {
		maps__release(&maps);
		return;
	}

	m = maps__find(&maps, fn);
	CHECK(m && m->path && !strcmp(m->path, exe), "own code is mapped from %s", exe);
	if (m && m->path) {
		d = dso_cache__get(c, makedev(m->dev_major, m->dev_minor), m->inode, m->path,
				   m->path);
		CHECK(d && dso__readable(d), "own binary readable: %s", d ? dso__error(d) : "");
		dl_iterate_phdr(find_own_build_id, own_id);
		CHECK(own_id[0] != '\0', "the loaded image has a build-id note");
		CHECK_STR(dso__build_id_hex(d), own_id);
		CHECK(dso__file_addr(d, m->start, m->pgoff, fn, &fa), "runtime -> file address");
		CHECK(dso__find_symbol(d, fa, &sym), "symbol at 0x%" PRIx64, fa);
		if (dso__find_symbol(d, fa, &sym)) {
			CHECK_STR(sym.name, "live_target");
			CHECK_U64(sym.addr, fa);
		}
		CHECK(dso__file_addr(d, m->start, m->pgoff, fn + 3, &fa) &&
			      dso__find_symbol(d, fa, &sym) && !strcmp(sym.name, "live_target"),
		      "inside live_target");
	}

	/* A shared library, through the same path: libc's getpid (or its global alias). */
	m = maps__find(&maps, libc_fn);
	CHECK(m && m->path && m->executable, "getpid is in an executable file mapping");
	if (m && m->path) {
		d = dso_cache__get(c, makedev(m->dev_major, m->dev_minor), m->inode, m->path,
				   m->path);
		CHECK(d && dso__readable(d), "%s readable", m->path);
		CHECK(dso__file_addr(d, m->start, m->pgoff, libc_fn, &fa) &&
			      dso__find_symbol(d, fa, &sym),
		      "getpid resolves in %s", m->path);
		if (dso__file_addr(d, m->start, m->pgoff, libc_fn, &fa) &&
		    dso__find_symbol(d, fa, &sym))
			CHECK(strstr(sym.name, "getpid") != NULL, "libc symbol %s", sym.name);
	}
	dso_cache__delete(c);
	maps__release(&maps);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static long max_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_maxrss;
}

/*
 * A copy of fx_pie whose .symtab header claims `size` bytes at the end of a sparse file: libelf
 * checks a section against the file's size only, and read all of it. 0 or -1.
 */
static int sparse_symtab(const char *to, uint64_t size)
{
	int fd = open(to, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = 0;
	uint8_t *orig = read_all(fx("fx_pie"), &len);
	Elf64_Ehdr eh;
	int ok = -1;

	if (fd < 0 || !orig || len < sizeof(eh) || write(fd, orig, len) != (ssize_t)len)
		goto out;
	memcpy(&eh, orig, sizeof(eh));
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		off_t at = (off_t)(eh.e_shoff + (uint64_t)i * eh.e_shentsize);

		if (pread(fd, &sh, sizeof(sh), at) != sizeof(sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		sh.sh_offset = (len + 4095) & ~(uint64_t)4095;
		sh.sh_size = size;
		if (pwrite(fd, &sh, sizeof(sh), at) == sizeof(sh) &&
		    !ftruncate(fd, (off_t)(sh.sh_offset + size)))
			ok = 0;
	}
out:
	free(orig);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A .symtab of 1.5 GiB of a sparse file: skipped, counted, without reading it (the peak RSS
 * does not grow by a fraction of it); the binary keeps its .dynsym. */
static void test_sparse_section(void)
{
	uint64_t before[SAFE_OPEN_REASON__COUNT], after[SAFE_OPEN_REASON__COUNT];
	struct dso_cache *c = dso_cache__new(4);
	struct dso_symbol sym;
	long rss_before, rss_after;
	struct stat st;
	struct dso *d;

	CHECK(sparse_symtab(tmp("sparse-symtab"), 1536ULL << 20) == 0, "setup: sparse .symtab");
	if (!c || stat(tmp("sparse-symtab"), &st)) {
		dso_cache__delete(c);
		return;
	}
	safe_open__stats(before);
	rss_before = max_rss_kib();
	d = dso_cache__get(c, st.st_dev, st.st_ino, tmp("sparse-symtab"), "/app/sparse");
	rss_after = max_rss_kib();
	safe_open__stats(after);
	CHECK(d && dso__readable(d), "sparse .symtab: %s", d ? dso__error(d) : "NULL");
	CHECK(rss_after - rss_before < 64 * 1024, "peak RSS grew by %ld KiB",
	      rss_after - rss_before);
	CHECK_U64(after[SAFE_OPEN_SECTION_BIG] - before[SAFE_OPEN_SECTION_BIG], 1);
	/* main is in fx_pie's .symtab only: gone with it. */
	CHECK(d && !dso__find_symbol(d, 1, &sym), "a symbol from nowhere");
	dso_cache__delete(c);
	unlink(tmp("sparse-symtab"));
}

int main(void)
{
	struct dso_cache *c;

	if (fixture_paths__init("test_dso") != 0) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return check_summary("test_dso");
	}

	c = dso_cache__new(1024);
	CHECK(c != NULL, "dso_cache__new: %s", strerror(errno));
	if (c) {
		test_build_ids(c);
		test_exe_symbols(c, "fx_pie");
		test_exe_symbols(c, "fx_nopie");
		test_lib_symbols(c);
		test_file_addr(c);
		test_unreadable(c);
		CHECK(dso_cache__size(c) <= 1024, "the cap holds: %zu", dso_cache__size(c));
		dso_cache__delete(c);
	}
	test_cache();
	test_symbol_budget();
	test_live();
	test_sparse_section();

	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return check_summary("test_dso");
}

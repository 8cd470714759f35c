// SPDX-License-Identifier: BSD-2-Clause
/*
 * MiniDebugInfo: a stripped binary whose .gnu_debugdata holds the static functions, made as Fedora
 * makes it (tests/unit/fixtures.mk, minidebug/), names them at the addresses that nm gives for the
 * unstripped build, and its exported functions from .dynsym; a truncated, foreign, uncompressed,
 * oversized or too memory-hungry section falls back to .dynsym. The decoder alone is run on cut
 * and damaged copies of the section.
 */
#include <errno.h>
#include <stddef.h>
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
#include "symbols/minidebuginfo.h"

#define MAX_FUNCS 16

struct func {
	char name[64];
	uint64_t addr, size;
};

static struct func funcs[MAX_FUNCS];
static size_t nfuncs;

/* The fx_mdi_* functions of `nm -S --defined-only fx_mdi_full` ("addr size type name"). */
static void read_funcs(void)
{
	const char *path = fx("minidebug/fx_mdi_full.nm");
	FILE *f = fopen(path, "r");
	char line[256];

	CHECK(f != NULL, "%s missing: run make unit-fixtures", path);
	while (f && nfuncs < MAX_FUNCS && fgets(line, sizeof(line), f)) {
		struct func *fn = &funcs[nfuncs];
		char type;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %63s", &fn->addr, &fn->size, &type,
			   fn->name) == 4 &&
		    (type == 'T' || type == 't') && !strncmp(fn->name, "fx_mdi_", 7))
			nfuncs++;
	}
	if (f)
		fclose(f);
	CHECK_U64(nfuncs, 5);
}

static bool is_static(const struct func *fn)
{
	return !strncmp(fn->name, "fx_mdi_static_", 14);
}

/*
 * Loads minidebug/binary with no debug file search, and checks every function at its start and
 * its last byte: all of them named when the MiniDebugInfo is usable, the exported ones only
 * (never a wrong name for a static one) when it is not.
 */
static void check_binary(const char *binary, bool usable)
{
	char name[64];
	const char *path;
	struct dso_cache *c = dso_cache__new(4);
	struct dso *d = NULL;
	struct stat st;

	snprintf(name, sizeof(name), "minidebug/%s", binary);
	path = fx(name);
	CHECK(c && dso_cache__set_debug_root(c, "") == 0, "cache: %s", strerror(errno));
	CHECK(stat(path, &st) == 0, "fixture %s missing: run make unit-fixtures", path);
	if (c)
		d = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
	CHECK(d && dso__readable(d), "%s: %s", binary, d ? dso__error(d) : "NULL");
	for (size_t i = 0; d && dso__readable(d) && i < nfuncs; i++) {
		const struct func *fn = &funcs[i];
		uint64_t at[2] = {fn->addr, fn->addr + fn->size - 1};

		for (int k = 0; k < 2; k++) {
			struct dso_symbol sym;
			bool found = dso__find_symbol(d, at[k], &sym);

			if (usable || !is_static(fn))
				CHECK(found && !strcmp(sym.name, fn->name) && sym.addr == fn->addr,
				      "%s: 0x%" PRIx64 ": got %s, want %s", binary, at[k],
				      found ? sym.name : "nothing", fn->name);
			else
				CHECK(!found || strcmp(sym.name, fn->name),
				      "%s: %s named without usable MiniDebugInfo", binary,
				      fn->name);
		}
	}
	dso_cache__delete(c);
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long size = -1;

	*len = 0;
	if (f && !fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc(size)) && fread(buf, 1, size, f) == (size_t)size)
		*len = size;
	if (f)
		fclose(f);
	CHECK(*len > 0, "%s missing: run make unit-fixtures", path);
	return buf;
}

/* Opens xz; returns errno (0 on success), with err set, and checks the symbol table if any. */
static int open_xz(const void *xz, size_t len, int machine, char *err, size_t errlen)
{
	struct minidebuginfo *m = minidebuginfo__open(xz, len, machine, err, errlen);
	GElf_Shdr sh;

	if (!m)
		return errno;
	CHECK(minidebuginfo__symtab(m, &sh) != NULL && sh.sh_type == SHT_SYMTAB,
	      "no symbol table in the MiniDebugInfo");
	minidebuginfo__close(m);
	return 0;
}

static void check_decoder(void)
{
	size_t len, hlen, blen;
	uint8_t *xz = read_file(fx("minidebug/mini.xz"), &len);
	uint8_t *huge = read_file(fx("minidebug/huge.xz"), &hlen);
	uint8_t *bin = read_file(fx("minidebug/fx_mdi_full"), &blen);
	uint8_t *copy = malloc(len ? len : 1);
	uint16_t e_machine;
	char err[128];
	int machine, rc, ok = 0;

	if (!xz || !huge || !bin || !copy)
		goto out;
	/* The machine of the binary it came from: e_machine, built for this host's byte order. */
	if (blen < sizeof(Elf64_Ehdr))
		goto out;
	memcpy(&e_machine, bin + offsetof(Elf64_Ehdr, e_machine), sizeof(e_machine));
	machine = e_machine;
	CHECK_U64(open_xz(xz, len, machine, err, sizeof(err)), 0);
	CHECK_U64(open_xz(xz, len, machine == EM_X86_64 ? EM_AARCH64 : EM_X86_64, err, sizeof(err)),
		  EINVAL);
	CHECK(strstr(err, "machine") != NULL, "wrong machine: %s", err);
	/* Every proper prefix: a truncated stream. */
	for (size_t cut = 0; cut < len; cut++) {
		rc = open_xz(xz, cut, machine, err, sizeof(err));
		CHECK(rc == EINVAL && err[0], "cut at %zu: %d (%s)", cut, rc, err);
	}
	/* Any damaged byte: the xz checks (CRC64 here) or the ELF reader refuse it, or it still
	 * decodes to a usable file; under the sanitizers, never anything worse. */
	srand(1);
	for (int i = 0; i < 2000; i++) {
		size_t at = (size_t)rand() % len;

		memcpy(copy, xz, len);
		copy[at] ^= (uint8_t)(1 + rand() % 255);
		rc = open_xz(copy, len, machine, err, sizeof(err));
		CHECK(rc == 0 || rc == EINVAL, "damage at %zu: %d (%s)", at, rc, err);
		ok += rc == 0;
	}
	CHECK(ok < 100, "%d of 2000 damaged copies decoded", ok);
	CHECK_U64(open_xz(huge, hlen, machine, err, sizeof(err)), EFBIG);
out:
	free(xz);
	free(huge);
	free(bin);
	free(copy);
}

int main(void)
{
	CHECK(fixture_paths__init("test_minidebuginfo") == 0, "mkdtemp: %s", strerror(errno));
	read_funcs();
	check_binary("fx_mdi_full", true); /* its own .symtab: the reference */
	check_binary("fx_mdi", true);
	check_binary("stripped", false);
	check_binary("fx_mdi_trunc", false);
	check_binary("fx_mdi_garbage", false);
	check_binary("fx_mdi_notxz", false);
	check_binary("fx_mdi_huge", false);
	check_binary("fx_mdi_xz9", false);
	check_decoder();
	rmdir(tmpdir);
	return check_summary("test_minidebuginfo");
}

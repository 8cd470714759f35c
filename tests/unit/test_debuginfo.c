// SPDX-License-Identifier: BSD-2-Clause
/*
 * Separate debug files: a stripped library (only .dynsym) gets its local and hidden functions, and
 * its file:line, from a debug file found by build-id under a debug root or by .gnu_debuglink beside
 * it; a corrupt, truncated or foreign debug file is ignored. The layouts and the expected lines
 * (addr2line on the debug file, libfxdbg.so.dbglines) come from tests/unit/fixtures.mk.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dso.h"

#define MAX_EXPECTS 16

struct expect {
	char function[64];
	uint64_t addr;
	char file[PATH_MAX];
	int64_t line;
};

static struct expect expects[MAX_EXPECTS];
static size_t nr_expects;
static char fixtures[PATH_MAX];

static const char *fx(const char *name)
{
	static char paths[4][2 * PATH_MAX];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, 2 * PATH_MAX, "%s/%s", fixtures, name);
	return p;
}

/* Reads "function 0xaddr file:line" lines. */
static void read_expects(void)
{
	char line[2 * PATH_MAX];
	FILE *f = fopen(fx("libfxdbg.so.dbglines"), "r");

	CHECK(f != NULL, "%s missing: run make unit-fixtures", fx("libfxdbg.so.dbglines"));
	if (!f)
		return;
	while (nr_expects < MAX_EXPECTS && fgets(line, sizeof(line), f)) {
		struct expect *e = &expects[nr_expects];
		char *addr, *pos, *colon;

		line[strcspn(line, "\n")] = '\0';
		addr = strchr(line, ' ');
		if (!addr)
			continue;
		*addr++ = '\0';
		pos = strchr(addr, ' ');
		if (!pos)
			continue;
		*pos++ = '\0';
		colon = strrchr(pos, ':');
		if (!colon)
			continue;
		*colon = '\0';
		snprintf(e->function, sizeof(e->function), "%.63s", line);
		e->addr = strtoull(addr, NULL, 16);
		snprintf(e->file, sizeof(e->file), "%s", pos);
		e->line = strtoll(colon + 1, NULL, 10);
		nr_expects++;
	}
	fclose(f);
	CHECK(nr_expects >= 8, "only %zu expected lines", nr_expects);
}

static bool exported(const char *name)
{
	return !strcmp(name, "fx_lib_alpha") || !strcmp(name, "fx_lib_beta");
}

/* A fresh cache (so that nothing found before is reused) with this debug root, and one dso. */
static struct dso *load(struct dso_cache **c, const char *root, const char *binary)
{
	const char *path = fx(binary);
	struct stat st;
	struct dso *d;

	*c = dso_cache__new(4);
	CHECK(*c != NULL, "dso_cache__new: %s", strerror(errno));
	if (!*c)
		return NULL;
	CHECK_U64(dso_cache__set_debug_root(*c, root ? fx(root) : ""), 0);
	CHECK(stat(path, &st) == 0, "fixture %s missing: run make unit-fixtures", path);
	d = dso_cache__get(*c, st.st_dev, st.st_ino, path, path);
	CHECK(d && dso__readable(d), "%s: %s", path, d ? dso__error(d) : "NULL");
	return d && dso__readable(d) ? d : NULL;
}

/* With its debug file: every function by name, and the lines addr2line gives. */
static void check_with_debug(const char *what, const char *root, const char *binary)
{
	struct dso_cache *c;
	struct dso *d = load(&c, root, binary);

	for (size_t i = 0; d && i < nr_expects; i++) {
		const struct expect *e = &expects[i];
		struct dso_line lines[DSO_MAX_LINES];
		char file[2 * PATH_MAX + 1];
		struct dso_symbol sym;
		bool found = dso__find_symbol(d, e->addr, &sym);
		size_t n;

		CHECK(found && !strcmp(sym.name, e->function), "%s: 0x%" PRIx64 ": got %s, want %s",
		      what, e->addr, found ? sym.name : "nothing", e->function);
		n = dso__find_lines(d, e->addr, lines, DSO_MAX_LINES);
		CHECK(n >= 1, "%s: no lines for 0x%" PRIx64, what, e->addr);
		if (!n)
			continue;
		snprintf(file, sizeof(file), "%s%s%s",
			 lines[0].file && lines[0].file[0] != '/' && lines[0].comp_dir
				 ? lines[0].comp_dir
				 : "",
			 lines[0].file && lines[0].file[0] != '/' && lines[0].comp_dir ? "/" : "",
			 lines[0].file ? lines[0].file : "");
		CHECK_STR(file, e->file);
		CHECK_U64(lines[0].line, e->line);
		CHECK_STR(lines[n - 1].function, e->function);
	}
	dso_cache__delete(c);
}

/* Without a usable debug file: .dynsym names only, never a wrong one, and no lines. */
static void check_dynsym_only(const char *what, const char *root, const char *binary)
{
	struct dso_cache *c;
	struct dso *d = load(&c, root, binary);

	for (size_t i = 0; d && i < nr_expects; i++) {
		const struct expect *e = &expects[i];
		struct dso_line lines[DSO_MAX_LINES];
		struct dso_symbol sym;
		bool found = dso__find_symbol(d, e->addr, &sym);

		if (exported(e->function))
			CHECK(found && !strcmp(sym.name, e->function),
			      "%s: 0x%" PRIx64 ": got %s, want %s", what, e->addr,
			      found ? sym.name : "nothing", e->function);
		else
			CHECK(!found, "%s: 0x%" PRIx64 " (%s, not in .dynsym) named %s", what,
			      e->addr, e->function, sym.name);
		CHECK_U64(dso__find_lines(d, e->addr, lines, DSO_MAX_LINES), 0);
	}
	dso_cache__delete(c);
}

static void test_setter(void)
{
	struct dso_cache *c = dso_cache__new(1);

	CHECK_U64(dso_cache__set_debug_root(NULL, "/x"), (uint64_t)-EINVAL);
	CHECK_U64(dso_cache__set_debug_root(c, "/x"), 0);
	CHECK_U64(dso_cache__set_debug_root(c, NULL), 0);
	dso_cache__delete(c);
}

int main(void)
{
	const char *out = getenv("OUTPUT");
	char cwd[PATH_MAX];

	if (!out || !*out)
		out = "build";
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	snprintf(fixtures, sizeof(fixtures), "%s%s%s/fixtures", out[0] == '/' ? "" : cwd,
		 out[0] == '/' ? "" : "/", out);

	read_expects();
	test_setter();
	/* The unstripped library: its own tables, the reference for the rest. */
	check_with_debug("unstripped", NULL, "libfxdbg.so");
	/* No debug root, no debug file beside it: what a stripped library gives today. */
	check_dynsym_only("stripped alone", "debugroot-none", "libfxdbg-stripped.so");
	check_with_debug("build-id", "debugroot-buildid", "libfxdbg-stripped.so");
	check_with_debug("debuglink", "debugroot-none", "debuglink/libfxdbg-stripped.so");
	/* Renamed bytes in the debug file: its CRC differs, so "fx_lib_HIDDEN" never shows. */
	check_dynsym_only("corrupt debuglink", "debugroot-none",
			  "debuglink-corrupt/libfxdbg-stripped.so");
	check_dynsym_only("truncated build-id", "debugroot-truncated", "libfxdbg-stripped.so");
	check_dynsym_only("foreign build-id", "debugroot-mismatch", "libfxdbg-stripped.so");
	return check_summary("test_debuginfo");
}

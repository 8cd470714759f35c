/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fake /proc for tests: one process whose maps place the fixture ELFs the way the kernel maps
 * them (PIE at a high base, non-PIE at its link address, a shared library and its stripped copy),
 * plus anonymous memory and a binary that does not exist. Expected addresses come from readelf
 * (the .funcs and .phdrs files that tests/unit/fixtures.mk writes).
 */
#ifndef HOSTPROF_TEST_FAKE_PROC_H
#define HOSTPROF_TEST_FAKE_PROC_H

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"

#define FAKE_PID 4242
#define PIE_BASE 0x555555554000ULL
#define LIB_BASE 0x7f1234560000ULL
#define STRIPPED_BASE 0x7f2234560000ULL
#define ANON_START 0x7f3000000000ULL
#define INLINE_BASE 0x7f4234560000ULL /* fx_inline: DWARF with inlined code */

static char fixtures[2 * PATH_MAX];
static char root[PATH_MAX];

/* The ELF address of a function, from `readelf -sW` (X.funcs: "value size name"). */
static inline uint64_t func_addr(const char *binary, const char *name)
{
	char path[3 * PATH_MAX], fn[256];
	unsigned long long value;
	unsigned size;
	uint64_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.funcs", fixtures, binary);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%llx %u %255s", &value, &size, fn) == 3)
		if (!strcmp(fn, name))
			found = value;
	fclose(f);
	return found;
}

/* Append the maps lines the kernel would make for the PT_LOAD segments of binary at base. */
static void write_segments(FILE *maps, const char *binary, uint64_t base)
{
	char path[4 * PATH_MAX], line[512], abs[3 * PATH_MAX];
	struct stat st;
	FILE *ph;

	snprintf(abs, sizeof(abs), "%s/%s", fixtures, binary);
	snprintf(path, sizeof(path), "%s.phdrs", abs);
	ph = fopen(path, "r");
	CHECK(ph && stat(abs, &st) == 0, "fixture %s missing: run make unit-fixtures", abs);
	if (!ph)
		return;
	while (fgets(line, sizeof(line), ph)) {
		unsigned long long off, vaddr, paddr, filesz, memsz;
		char flags[8] = "";
		uint64_t start, end;

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx", &off, &vaddr, &paddr, &filesz,
			   &memsz) != 5)
			continue;
		flags[0] = strchr(line, 'R') ? 'r' : '-';
		flags[1] = strstr(line, "RW") ? 'w' : '-';
		flags[2] = strstr(line, " E ") || strstr(line, "RWE") ? 'x' : '-';
		flags[3] = 'p';
		start = base + (vaddr & ~0xfffULL);
		end = (base + vaddr + memsz + 0xfff) & ~0xfffULL;
		fprintf(maps, "%" PRIx64 "-%" PRIx64 " %s %08llx %02x:%02x %llu %s\n", start, end,
			flags, off & ~0xfffULL, major(st.st_dev), minor(st.st_dev),
			(unsigned long long)st.st_ino, abs);
	}
	fclose(ph);
}

static void fake_proc__populate(void)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, FAKE_PID);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/comm", root, FAKE_PID);
	f = fopen(path, "w");
	fputs("fakeproc\n", f);
	fclose(f);
	/* /proc/PID/root is "/" for a process outside any container. */
	snprintf(path, sizeof(path), "%s/%d/root", root, FAKE_PID);
	CHECK(symlink("/", path) == 0, "symlink %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%d/cmdline", root, FAKE_PID);
	f = fopen(path, "w");
	fwrite("fakeproc\0--serve\0", 1, 17, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/environ", root, FAKE_PID);
	f = fopen(path, "w");
	fwrite("HOME=/\0OTEL_SERVICE_NAME=fake-svc\0", 1, 34, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/maps", root, FAKE_PID);
	f = fopen(path, "w");
	write_segments(f, "fx_pie", PIE_BASE);
	write_segments(f, "fx_nopie", 0);
	write_segments(f, "libfx.so", LIB_BASE);
	write_segments(f, "libfx-stripped.so", STRIPPED_BASE);
	write_segments(f, "fx_inline", INLINE_BASE);
	fprintf(f, "%llx-%llx rw-p 00000000 00:00 0 \n", ANON_START, ANON_START + 0x10000);
	fprintf(f, "%llx-%llx r-xp 00000000 fe:01 999999 /nonexistent/libgone.so\n",
		ANON_START + 0x20000, ANON_START + 0x30000);
	fclose(f);
}

/* Create the fake /proc under /tmp; fixtures are found under $OUTPUT (default build). */
static void fake_proc__create(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	snprintf(fixtures, sizeof(fixtures), "%s%s%s/fixtures", out[0] == '/' ? "" : cwd,
		 out[0] == '/' ? "" : "/", out);
	snprintf(root, sizeof(root), "/tmp/hostprof-test-proc-XXXXXX");
	CHECK(mkdtemp(root) != NULL, "mkdtemp: %s", strerror(errno));
	fake_proc__populate();
}

static void fake_proc__remove(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

#endif /* HOSTPROF_TEST_FAKE_PROC_H */

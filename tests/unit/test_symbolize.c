// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbolizer over a fake /proc: a process whose maps place the fixture ELFs the way the kernel
 * maps them (PIE at a random-looking base, non-PIE at its link address, a shared library, the
 * stripped library), so that runtime address → mapping → ELF address → symbol is checked end to
 * end. Expected addresses come from readelf (the .funcs and .phdrs files the build writes).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "symbolize.h"

#define FAKE_PID 4242
#define PIE_BASE 0x555555554000ULL
#define LIB_BASE 0x7f1234560000ULL
#define STRIPPED_BASE 0x7f2234560000ULL
#define ANON_START 0x7f3000000000ULL

static char fixtures[2 * PATH_MAX];
static char root[PATH_MAX];

/* The ELF address of a function, from `readelf -sW` (X.funcs: "value size name"). */
static uint64_t func_addr(const char *binary, const char *name)
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

static void make_fake_proc(void)
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
	snprintf(path, sizeof(path), "%s/%d/maps", root, FAKE_PID);
	f = fopen(path, "w");
	write_segments(f, "fx_pie", PIE_BASE);
	write_segments(f, "fx_nopie", 0);
	write_segments(f, "libfx.so", LIB_BASE);
	write_segments(f, "libfx-stripped.so", STRIPPED_BASE);
	fprintf(f, "%llx-%llx rw-p 00000000 00:00 0 \n", ANON_START, ANON_START + 0x10000);
	fprintf(f, "%llx-%llx r-xp 00000000 fe:01 999999 /nonexistent/libgone.so\n",
		ANON_START + 0x20000, ANON_START + 0x30000);
	fclose(f);
}

static void check_user(struct symbolizer *s, uint64_t addr, bool ret, const char *want_fn,
		       uint64_t want_file_addr)
{
	struct frame f;

	symbolizer__user(s, FAKE_PID, addr, ret, &f);
	CHECK(f.kind == FRAME_NATIVE, "kind %d", f.kind);
	CHECK(f.function && !strcmp(f.function, want_fn), "0x%" PRIx64 ": got %s, want %s", addr,
	      f.function ? f.function : f.unknown, want_fn);
	CHECK_U64(f.address, want_file_addr);
	CHECK(f.has_mapping, "0x%" PRIx64 " has no mapping", addr);
}

static void test_user_frames(struct symbolizer *s)
{
	uint64_t beta = func_addr("fx_pie", "fx_beta");
	uint64_t nopie_beta = func_addr("fx_nopie", "fx_beta");
	uint64_t lib_alpha = func_addr("libfx.so", "fx_lib_alpha");
	uint64_t stripped_alpha = func_addr("libfx-stripped.so", "fx_lib_alpha");
	struct frame f;

	CHECK(beta && nopie_beta && lib_alpha && stripped_alpha, "fixture symbols not found");
	/* PIE: runtime = base + ELF address. */
	check_user(s, PIE_BASE + beta, false, "fx_beta", beta);
	check_user(s, PIE_BASE + beta + 5, false, "fx_beta", beta + 5);
	/* A return address just past a call is looked up one byte earlier. */
	check_user(s, PIE_BASE + beta + 1, true, "fx_beta", beta);
	/* Non-PIE: runtime address == ELF address. */
	check_user(s, nopie_beta + 3, false, "fx_beta", nopie_beta + 3);
	/* A shared library, and its stripped copy through .dynsym. */
	check_user(s, LIB_BASE + lib_alpha + 2, false, "fx_lib_alpha", lib_alpha + 2);
	check_user(s, STRIPPED_BASE + stripped_alpha, false, "fx_lib_alpha", stripped_alpha);

	symbolizer__user(s, FAKE_PID, PIE_BASE + beta, false, &f);
	CHECK(f.mapping.build_id_hex && strlen(f.mapping.build_id_hex) == 40,
	      "build-id '%s'", f.mapping.build_id_hex ? f.mapping.build_id_hex : "(null)");
	CHECK(f.mapping.path && strstr(f.mapping.path, "fx_pie"), "path %s", f.mapping.path);

	/* Anonymous memory (JIT code, say): kept as an unknown frame with its offset. */
	symbolizer__user(s, FAKE_PID, ANON_START + 0x123, false, &f);
	CHECK(!f.function, "anon resolved to %s", f.function);
	CHECK_STR(f.unknown, "[unknown] [anon]+0x123");

	/* A binary that cannot be read: its file offset, never a dropped frame. */
	symbolizer__user(s, FAKE_PID, ANON_START + 0x20010, false, &f);
	CHECK(!f.function, "unreadable resolved to %s", f.function);
	CHECK_STR(f.unknown, "[unknown] /nonexistent/libgone.so+0x10");

	/* An address in no mapping. */
	symbolizer__user(s, FAKE_PID, 0x10, false, &f);
	CHECK_STR(f.unknown, "[unknown] [unmapped]+0x10");

	/* A process that never existed. */
	symbolizer__user(s, 999999, PIE_BASE + beta, false, &f);
	CHECK(!f.function, "ghost pid resolved to %s", f.function);
}

/* A process that exits after its maps were read still resolves from the snapshot. */
static void test_exited(struct symbolizer *s)
{
	uint64_t beta = func_addr("fx_pie", "fx_beta");
	char cmd[2 * PATH_MAX];
	struct frame f;

	CHECK(symbolizer__track(s, FAKE_PID) == 0, "track failed");
	snprintf(cmd, sizeof(cmd), "rm -rf %s/%d", root, FAKE_PID);
	CHECK(system(cmd) == 0, "%s", cmd);
	/* Missing an address forces a refresh attempt on a process that is gone. */
	symbolizer__user(s, FAKE_PID, 0x20, false, &f);
	symbolizer__user(s, FAKE_PID, PIE_BASE + beta, false, &f);
	CHECK(f.function && !strcmp(f.function, "fx_beta"), "after exit: %s",
	      f.function ? f.function : f.unknown);
}

static void test_kernel(void)
{
	struct symbolizer_opts o = {.proc_root = root,
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 16,
				    .max_dsos = 16};
	struct symbolizer *s = symbolizer__new(&o);
	struct frame f;

	CHECK(s != NULL, "symbolizer__new: %s", strerror(errno));
	if (!s)
		return;
	symbolizer__kernel(s, 0xffffffff81001010ULL, false, &f);
	CHECK(f.kind == FRAME_KERNEL && f.function && !strcmp(f.function, "do_one_initcall"),
	      "kernel: %s", f.function ? f.function : f.unknown);
	symbolizer__kernel(s, 0x1000, false, &f);
	CHECK(!f.function, "below the first symbol resolved to %s", f.function);
	CHECK_STR(f.unknown, "[unknown] [kernel]+0x1000");
	symbolizer__delete(s);

	/* Unreadable kallsyms: the symbolizer still works, kernel frames are unknown. */
	o.kallsyms_path = "/nonexistent/kallsyms";
	s = symbolizer__new(&o);
	CHECK(s != NULL, "symbolizer without kallsyms: %s", strerror(errno));
	if (s) {
		symbolizer__kernel(s, 0xffffffff81001010ULL, false, &f);
		CHECK(!f.function && strstr(f.unknown, "[kernel]"), "got %s", f.unknown);
		symbolizer__delete(s);
	}
}

int main(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	struct symbolizer_opts o = {.kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 16,
				    .max_dsos = 16};
	char cwd[PATH_MAX], cmd[PATH_MAX + 16];
	struct symbolizer *s;

	if (!getcwd(cwd, sizeof(cwd)))
		return 1;
	snprintf(fixtures, sizeof(fixtures), "%s%s%s/fixtures", out[0] == '/' ? "" : cwd,
		 out[0] == '/' ? "" : "/", out);
	snprintf(root, sizeof(root), "/tmp/hostprof-test-symbolize-XXXXXX");
	CHECK(mkdtemp(root) != NULL, "mkdtemp: %s", strerror(errno));
	make_fake_proc();
	o.proc_root = root;
	s = symbolizer__new(&o);
	CHECK(s != NULL, "symbolizer__new: %s", strerror(errno));
	if (s) {
		test_user_frames(s);
		test_exited(s);
		symbolizer__delete(s);
	}
	test_kernel();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return check_summary("test_symbolize");
}

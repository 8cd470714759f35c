// SPDX-License-Identifier: BSD-2-Clause
/*
 * ksyms: kallsyms parsing and lookup on fixtures (tests/fixtures/kallsyms, relative to the repo
 * root where the unit runner starts us), on files generated into a private temp dir, and on the
 * real /proc/kallsyms, whose addresses read as zero when we run unprivileged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "symbols/ksyms.h"

#define FIXTURES "tests/fixtures/kallsyms/"

static char tmpdir[] = "/tmp/test_ksyms.XXXXXX";

/* Files written under tmpdir, removed at exit. */
static char *tmpfiles[16];
static int nr_tmpfiles;

static const char *tmp_write(const char *name, const char *data, size_t len)
{
	char *path = NULL;
	FILE *f;

	if (nr_tmpfiles == (int)(sizeof(tmpfiles) / sizeof(tmpfiles[0])) ||
	    asprintf(&path, "%s/%s", tmpdir, name) < 0)
		return NULL;
	f = fopen(path, "we");
	if (!f) {
		free(path);
		return NULL;
	}
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		free(path);
		return NULL;
	}
	if (fclose(f)) {
		free(path);
		return NULL;
	}
	tmpfiles[nr_tmpfiles++] = path;
	return path;
}

static void tmp_cleanup(void)
{
	int i;

	for (i = 0; i < nr_tmpfiles; i++) {
		unlink(tmpfiles[i]);
		free(tmpfiles[i]);
	}
	rmdir(tmpdir);
}

/* Look addr up and compare with the expected name, module (NULL: core kernel) and start. */
static void expect_sym(const struct ksyms *k, uint64_t addr, const char *name, const char *module,
		       uint64_t start)
{
	struct ksym s = {0};
	bool found = ksyms__find(k, addr, &s);

	CHECK(found, "0x%" PRIx64 " not found, want %s", addr, name);
	if (!found)
		return;
	CHECK_STR(s.name, name);
	if (module)
		CHECK_STR(s.module, module);
	else
		CHECK(s.module == NULL, "0x%" PRIx64 " (%s): module %s, want core kernel", addr,
		      s.name, s.module);
	CHECK_U64(s.addr, start);
}

static void expect_none(const struct ksyms *k, uint64_t addr)
{
	struct ksym s = {0};

	CHECK(!ksyms__find(k, addr, &s), "0x%" PRIx64 " found as %s, want nothing", addr,
	      s.name ? s.name : "?");
}

static void test_mixed(void)
{
	struct ksyms *k = ksyms__load(FIXTURES "mixed");

	CHECK(k != NULL, "load mixed: %s", strerror(errno));
	if (!k)
		return;
	/* 10 core and 6 module text addresses; data, absolute, zero and malformed lines dropped. */
	CHECK_U64(ksyms__size(k), 16);

	/* Before the first symbol. */
	expect_none(k, 0);
	expect_none(k, 0xffffffff80ffffffull);

	/* Aliases at one address: the best name wins, whatever the file order. */
	expect_sym(k, 0xffffffff81000000ull, "srso_alias_untrain_ret", NULL, 0xffffffff81000000ull);
	expect_sym(k, 0xffffffff81003000ull, "strong_local", NULL, 0xffffffff81003000ull);
	expect_sym(k, 0xffffffff81003100ull, "global_alias", NULL, 0xffffffff81003100ull);
	expect_sym(k, 0xffffffff81003200ull, "alpha", NULL, 0xffffffff81003200ull);
	/* A 64-bit syscall entry over its compat alias, though "__ia32" sorts first. */
	expect_sym(k, 0xffffffff81003400ull, "__x64_sys_getppid", NULL, 0xffffffff81003400ull);
	expect_sym(k, 0xffffffff81003500ull, "__x64_compat_sys_ioctl", NULL, 0xffffffff81003500ull);

	/* Exact start and inside. */
	expect_sym(k, 0xffffffff81000abcull, "srso_alias_untrain_ret", NULL, 0xffffffff81000000ull);
	expect_sym(k, 0xffffffff81001000ull, "do_one_initcall", NULL, 0xffffffff81001000ull);
	expect_sym(k, 0xffffffff81001fffull, "do_one_initcall", NULL, 0xffffffff81001000ull);
	expect_sym(k, 0xffffffff81002000ull, "schedule", NULL, 0xffffffff81002000ull);
	expect_sym(k, 0xffffffff81003344ull, "arch_weak_default", NULL, 0xffffffff81003300ull);

	/* Addresses of data symbols interleaved with text resolve to the text before them. */
	expect_sym(k, 0xffffffff81001800ull, "do_one_initcall", NULL, 0xffffffff81001000ull);
	expect_sym(k, 0xffffffff81001c00ull, "do_one_initcall", NULL, 0xffffffff81001000ull);
	expect_sym(k, 0xffffffff81002100ull, "schedule", NULL, 0xffffffff81002000ull);
	expect_sym(k, 0xffffffff81002200ull, "schedule", NULL, 0xffffffff81002000ull);
	expect_sym(k, 0xffffffff81002300ull, "schedule", NULL, 0xffffffff81002000ull);
	expect_sym(k, 0xffffffff81002400ull, "schedule", NULL, 0xffffffff81002000ull);

	/* Past the end of core text: the end marker, not a function. */
	expect_sym(k, 0xffffffff81007000ull, "_etext", NULL, 0xffffffff81004000ull);

	/* Malformed lines must not have produced a symbol at their address. */
	expect_sym(k, 0xffffffff81005000ull, "_etext", NULL, 0xffffffff81004000ull);
	expect_sym(k, 0xffffffffc0d00000ull, "bpf_prog_6deef7357e7b4530_hp_sample", "bpf",
		   0xffffffffc0c00000ull);

	/* Modules, including a module whose lines are not contiguous in the file. */
	expect_sym(k, 0xffffffffc0201000ull, "ftrace_trampoline", "__builtin__ftrace",
		   0xffffffffc0201000ull);
	expect_sym(k, 0xffffffffc0a00000ull, "ext4_fill_super", "ext4", 0xffffffffc0a00000ull);
	expect_sym(k, 0xffffffffc0a00800ull, "ext4_fill_super", "ext4", 0xffffffffc0a00000ull);
	expect_sym(k, 0xffffffffc0a01234ull, "ext4_iget", "ext4", 0xffffffffc0a01000ull);
	expect_sym(k, 0xffffffffc0a02000ull, "ext4_lazyinit_thread", "ext4", 0xffffffffc0a02000ull);
	expect_sym(k, 0xffffffffc0b00010ull, "xfs_fs_fill_super", "xfs", 0xffffffffc0b00000ull);
	expect_sym(k, UINT64_MAX, "bpf_prog_6deef7357e7b4530_hp_sample", "bpf",
		   0xffffffffc0c00000ull);

	/* out may be NULL when only presence matters. */
	CHECK(ksyms__find(k, 0xffffffff81002000ull, NULL), "find with NULL out");
	CHECK(!ksyms__find(k, 1, NULL), "find below the first symbol with NULL out");

	ksyms__delete(k);
}

static void test_all_zero(void)
{
	struct ksyms *k;

	errno = 0;
	k = ksyms__load(FIXTURES "all-zero");
	CHECK(k == NULL && errno == EPERM, "all-zero: got %p, errno %d (%s), want EPERM", (void *)k,
	      errno, strerror(errno));
	ksyms__delete(k);
}

static void test_empty_and_data_only(void)
{
	struct ksyms *k;

	/* No lines at all is not a hidden-address file: an empty table, not EPERM. */
	k = ksyms__load(FIXTURES "empty");
	CHECK(k != NULL, "load empty: %s", strerror(errno));
	CHECK_U64(ksyms__size(k), 0);
	expect_none(k, 0);
	expect_none(k, 0xffffffff81000000ull);
	ksyms__delete(k);

	k = ksyms__load(FIXTURES "data-only");
	CHECK(k != NULL, "load data-only: %s", strerror(errno));
	CHECK_U64(ksyms__size(k), 0);
	expect_none(k, 0xffffffff82400000ull);
	expect_none(k, 0xffffffff82400100ull);
	ksyms__delete(k);
}

static void test_errors(void)
{
	char *path = NULL;
	struct ksyms *k;

	CHECK(asprintf(&path, "%s/does-not-exist", tmpdir) > 0, "asprintf");
	errno = 0;
	k = ksyms__load(path);
	CHECK(k == NULL && errno == ENOENT, "missing file: got %p, errno %d (%s), want ENOENT",
	      (void *)k, errno, strerror(errno));
	ksyms__delete(k);
	free(path);

	/* A directory opens but cannot be read: the read error is reported, not an empty table. */
	errno = 0;
	k = ksyms__load(tmpdir);
	CHECK(k == NULL && errno == EISDIR, "directory: got %p, errno %d (%s), want EISDIR",
	      (void *)k, errno, strerror(errno));
	ksyms__delete(k);

	/* NULL is accepted where a table is expected. */
	ksyms__delete(NULL);
	CHECK_U64(ksyms__size(NULL), 0);
	CHECK(!ksyms__find(NULL, 0xffffffff81000000ull, NULL), "find on NULL table");
}

/* Line-ending and framing quirks, written byte for byte. */
static void test_framing(void)
{
	static const char crlf[] = "ffffffff81000000 T crlf_one\r\n"
				   "ffffffff81000100 t crlf_mod\t[kvm]\r\n";
	static const char no_newline[] = "ffffffff81000000 T first\n"
					 "ffffffff81000100 T last_without_newline";
	/* The second line hides a NUL: everything after it would be invisible to a C parser. */
	static const char nul[] = "ffffffff81000000 T before_nul\n"
				  "ffffffff81000100 T hidden\0 tail\n"
				  "ffffffff81000200 T after_nul\n";
	static const char control[] = "ffffffff81000000 t cr_module\t[ext\r4]\n"
				      "ffffffff81000100 t esc\x1b[2Jname\t[ext4]\n"
				      "ffffffff81000200 t bell_module\t[e\axt4]\n"
				      "ffffffff81000300 t clean\t[ext4]\n";
	const char *path;
	struct ksyms *k;

	path = tmp_write("crlf", crlf, sizeof(crlf) - 1);
	CHECK(path != NULL, "write crlf");
	k = path ? ksyms__load(path) : NULL;
	CHECK(k != NULL, "load crlf: %s", strerror(errno));
	CHECK_U64(ksyms__size(k), 2);
	expect_sym(k, 0xffffffff81000010ull, "crlf_one", NULL, 0xffffffff81000000ull);
	expect_sym(k, 0xffffffff81000100ull, "crlf_mod", "kvm", 0xffffffff81000100ull);
	ksyms__delete(k);

	path = tmp_write("no-newline", no_newline, sizeof(no_newline) - 1);
	CHECK(path != NULL, "write no-newline");
	k = path ? ksyms__load(path) : NULL;
	CHECK(k != NULL, "load no-newline: %s", strerror(errno));
	CHECK_U64(ksyms__size(k), 2);
	expect_sym(k, 0xffffffff81000100ull, "last_without_newline", NULL, 0xffffffff81000100ull);
	ksyms__delete(k);

	/* Control characters inside a name or a module name garble the line: found by
	 * fuzz_ksyms, a CR inside "[ext\r4]" was kept in the module's name. */
	path = tmp_write("control", control, sizeof(control) - 1);
	k = path ? ksyms__load(path) : NULL;
	CHECK(k != NULL, "load control: %s", strerror(errno));
	CHECK_U64(ksyms__size(k), 1);
	expect_sym(k, 0xffffffff81000300ull, "clean", "ext4", 0xffffffff81000300ull);
	ksyms__delete(k);

	path = tmp_write("nul", nul, sizeof(nul) - 1);
	CHECK(path != NULL, "write nul");
	k = path ? ksyms__load(path) : NULL;
	CHECK(k != NULL, "load nul: %s", strerror(errno));
	CHECK_U64(ksyms__size(k), 2);
	expect_sym(k, 0xffffffff81000100ull, "before_nul", NULL, 0xffffffff81000000ull);
	expect_sym(k, 0xffffffff81000200ull, "after_nul", NULL, 0xffffffff81000200ull);
	ksyms__delete(k);
}

#define BIG_NR 30000
#define BIG_CORE 20000
#define BIG_BASE UINT64_C(0xffffffff81000000)
#define BIG_STRIDE UINT64_C(0x40)

static const char *big_module(unsigned int i)
{
	if (i < BIG_CORE)
		return NULL;
	return (i / 1000) % 2 ? "mod_odd" : "mod_even";
}

/*
 * A generated file large enough to grow the arena and the entry array several times, written in
 * a scrambled order with a data symbol inside every function and a few very long names.
 */
static void test_big(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	unsigned int i, bad_name = 0, bad_module = 0, bad_inside = 0, bad_data = 0;
	char longname[4001];
	const char *path = NULL;
	struct ksyms *k = NULL;
	struct ksym s;

	CHECK(mem != NULL, "open_memstream");
	if (!mem)
		return;
	for (i = 0; i < BIG_NR; i++) {
		/* 7919 is prime and does not divide BIG_NR: this visits every index once. */
		unsigned int j = (unsigned int)(((uint64_t)i * 7919) % BIG_NR);
		uint64_t addr = BIG_BASE + j * BIG_STRIDE;
		const char *mod = big_module(j);

		if (mod) {
			fprintf(mem, "%016" PRIx64 " t fn_%05u\t[%s]\n", addr, j, mod);
			fprintf(mem, "%016" PRIx64 " d data_%05u\t[%s]\n", addr + 0x20, j, mod);
		} else {
			fprintf(mem, "%016" PRIx64 " T fn_%05u\n", addr, j);
			fprintf(mem, "%016" PRIx64 " b data_%05u\n", addr + 0x20, j);
		}
	}
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	fprintf(mem, "%016" PRIx64 " T %s\n", BIG_BASE + BIG_NR * BIG_STRIDE, longname);
	CHECK(fclose(mem) == 0, "close memstream");

	path = tmp_write("big", buf, len);
	CHECK(path != NULL, "write big");
	free(buf);
	if (path)
		k = ksyms__load(path);
	CHECK(k != NULL, "load big: %s", strerror(errno));
	if (!k)
		return;
	CHECK_U64(ksyms__size(k), BIG_NR + 1);
	/* Packed: under 16 bytes a symbol, what the plain entries alone took before the names. */
	CHECK(ksyms__bytes(k) < (BIG_NR + 1) * 16, "%zu bytes for %d symbols", ksyms__bytes(k),
	      BIG_NR + 1);

	for (i = 0; i < BIG_NR; i++) {
		uint64_t addr = BIG_BASE + i * BIG_STRIDE;
		const char *mod = big_module(i);
		char want[16];

		snprintf(want, sizeof(want), "fn_%05u", i);
		if (!ksyms__find(k, addr, &s) || strcmp(s.name, want) || s.addr != addr) {
			bad_name++;
			continue;
		}
		if (mod ? !s.module || strcmp(s.module, mod) : s.module != NULL)
			bad_module++;
		if (!ksyms__find(k, addr + BIG_STRIDE - 1, &s) || strcmp(s.name, want))
			bad_inside++;
		if (!ksyms__find(k, addr + 0x20, &s) || strncmp(s.name, "fn_", 3))
			bad_data++;
	}
	CHECK(bad_name == 0, "%u of %d starts resolved wrongly", bad_name, BIG_NR);
	CHECK(bad_module == 0, "%u of %d module names wrong", bad_module, BIG_NR);
	CHECK(bad_inside == 0, "%u of %d inside addresses resolved wrongly", bad_inside, BIG_NR);
	CHECK(bad_data == 0, "%u of %d data addresses resolved to data", bad_data, BIG_NR);
	expect_none(k, BIG_BASE - 1);
	/* Longer than the kernel's KSYM_NAME_LEN: kept, cut to what a name can be. */
	longname[KSYMS_NAME_MAX - 1] = '\0';
	expect_sym(k, BIG_BASE + BIG_NR * BIG_STRIDE + 5, longname, NULL,
		   BIG_BASE + BIG_NR * BIG_STRIDE);
	ksyms__delete(k);
}

/*
 * Addresses whose high 32 bits differ (an arm64 kernel's modules and BPF programs may lie more
 * than 4 GiB from its text), in file order unlike address order, and a module whose symbols are
 * split by core ones: every lookup is exact across the runs, and each gap resolves to the symbol
 * before it, whatever run that one is in.
 */
static void test_high_runs(void)
{
	static const char text[] = "ffff800081000000 T core_low\n"
				   "ffff800081000100 t core_low2\n"
				   "ffffffff81000000 T core_high\n"
				   "ffff700000001000 t bpf_prog_1\t[bpf]\n"
				   "ffff800080000000 t mod_a_first\t[mod_a]\n"
				   "ffff800082000000 t mod_a_second\t[mod_a]\n"
				   "ffff800081800000 T core_mid\n"
				   "0000000100000000 T above_4g\n"
				   "00000000ffffffff T below_4g\n";
	const char *path = tmp_write("high_runs", text, sizeof(text) - 1);
	struct ksyms *k = path ? ksyms__load(path) : NULL;

	CHECK(k != NULL, "load high_runs: %s", strerror(errno));
	if (!k)
		return;
	CHECK_U64(ksyms__size(k), 9);
	expect_none(k, 0);
	expect_none(k, 0xfffffffeull);
	expect_sym(k, 0xffffffffull, "below_4g", NULL, 0xffffffffull);
	/* The next run starts at a higher high word: the last of the run below. */
	expect_sym(k, 0x100000000ull, "above_4g", NULL, 0x100000000ull);
	expect_sym(k, 0xffff6fffffffffffull, "above_4g", NULL, 0x100000000ull);
	expect_sym(k, 0xffff700000000fffull, "above_4g", NULL, 0x100000000ull);
	expect_sym(k, 0xffff700000001000ull, "bpf_prog_1", "bpf", 0xffff700000001000ull);
	/* Within the high word 0xffff8000, below its first symbol: the run before's last. */
	expect_sym(k, 0xffff80007fffffffull, "bpf_prog_1", "bpf", 0xffff700000001000ull);
	expect_sym(k, 0xffff800080000000ull, "mod_a_first", "mod_a", 0xffff800080000000ull);
	expect_sym(k, 0xffff800080ffffffull, "mod_a_first", "mod_a", 0xffff800080000000ull);
	expect_sym(k, 0xffff800081000050ull, "core_low", NULL, 0xffff800081000000ull);
	expect_sym(k, 0xffff800081000100ull, "core_low2", NULL, 0xffff800081000100ull);
	expect_sym(k, 0xffff800081900000ull, "core_mid", NULL, 0xffff800081800000ull);
	expect_sym(k, 0xffff800082000001ull, "mod_a_second", "mod_a", 0xffff800082000000ull);
	expect_sym(k, 0xffffffff80000000ull, "mod_a_second", "mod_a", 0xffff800082000000ull);
	expect_sym(k, 0xffffffff81000000ull, "core_high", NULL, 0xffffffff81000000ull);
	expect_sym(k, UINT64_MAX, "core_high", NULL, 0xffffffff81000000ull);
	ksyms__delete(k);
}

/*
 * The real /proc/kallsyms. Unprivileged (as the unit runner makes us), the kernel prints every
 * address as zero and the load must fail with EPERM; with the privilege to see addresses (a
 * root run, or kernel.perf_event_paranoid <= 1 with kptr_restrict=0) it must load and resolve a
 * text symbol the kernel printed. The file is read independently here to know which case holds.
 */
static void test_proc(void)
{
	char line[1024], name[512] = "", type;
	unsigned long long addr, text_addr = 0;
	bool any_nonzero = false;
	struct ksyms *k;
	struct ksym s;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		printf("test_ksyms: /proc/kallsyms unreadable (%s), real-kernel checks skipped\n",
		       strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3 || !addr)
			continue;
		any_nonzero = true;
		if (type == 'T') {
			text_addr = addr;
			break;
		}
	}
	fclose(f);

	errno = 0;
	k = ksyms__load("/proc/kallsyms");
	if (!any_nonzero) {
		CHECK(k == NULL && errno == EPERM,
		      "/proc/kallsyms with hidden addresses: got %p, errno %d (%s), want EPERM",
		      (void *)k, errno, strerror(errno));
		ksyms__delete(k);
		return;
	}
	CHECK(k != NULL, "load /proc/kallsyms: %s", strerror(errno));
	if (!k)
		return;
	CHECK(ksyms__size(k) > 1000, "only %zu symbols in /proc/kallsyms", ksyms__size(k));
	CHECK(text_addr && ksyms__find(k, text_addr, &s) && s.addr == text_addr,
	      "text symbol %s at 0x%llx does not resolve to its own address", name, text_addr);
	ksyms__delete(k);
}

int main(void)
{
	int ret;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_mixed();
	test_all_zero();
	test_empty_and_data_only();
	test_errors();
	test_framing();
	test_big();
	test_high_runs();
	test_proc();
	tmp_cleanup();
	ret = check_summary("test_ksyms");
	return ret;
}

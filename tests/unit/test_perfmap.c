// SPDX-License-Identifier: BSD-2-Clause
/*
 * The perf map parser on fixture files (V8, JVM, CPython and broken lines), its bounds, and the
 * symbolizer naming JIT frames from a process's map inside its own root and PID namespace.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symbols/perfmap.h"
#include "symbols/symbolize.h"

#define FX "tests/fixtures/perfmap/"

static void check_find(const struct perfmap *m, uint64_t addr, const char *want,
		       enum frame_kind kind)
{
	struct perfmap_sym sym;
	bool found = perfmap__find(m, addr, &sym);

	CHECK(found, "0x%" PRIx64 " not found", addr);
	if (!found)
		return;
	CHECK_STR(sym.name, want);
	CHECK(sym.kind == kind, "0x%" PRIx64 ": kind %d, want %d", addr, sym.kind, kind);
	CHECK(sym.start <= addr && addr < sym.end, "0x%" PRIx64 " outside its entry", addr);
}

static void check_miss(const struct perfmap *m, uint64_t addr)
{
	struct perfmap_sym sym;

	CHECK(!perfmap__find(m, addr, &sym), "0x%" PRIx64 " found as %s", addr, sym.name);
}

static void test_v8(void)
{
	struct perfmap *m = perfmap__load(FX "v8.map", NULL);

	CHECK(m != NULL, "load: %s", strerror(errno));
	if (!m)
		return;
	/* Written twice: the later line wins. Unsorted input is sorted. */
	CHECK_U64(perfmap__nr_entries(m), 4);
	CHECK_U64(perfmap__bad_lines(m), 0);
	check_find(m, 0x7f12a0001000, "JS:~fib /tmp/x.js:3", FRAME_JIT_V8);
	check_find(m, 0x7f12a000103f, "JS:~fib /tmp/x.js:3", FRAME_JIT_V8);
	check_miss(m, 0x7f12a0001040);
	check_find(m, 0x7f12a00020ff, "Builtin:ArrayPrototypePush", FRAME_JIT_V8);
	check_find(m, 0x7f12a0003010, "JS:*hot [eval]:1", FRAME_JIT_V8);
	/* A name that tells no runtime takes the map's. */
	check_find(m, 0x7f12a0004000, "someStubWithoutPrefix", FRAME_JIT_V8);
	check_miss(m, 0x7f12a0000fff);
	check_miss(m, 0x7f12a0004020);
	check_miss(m, 0);
	check_miss(m, UINT64_MAX);
	perfmap__delete(m);
}

static void test_runtimes(void)
{
	struct perfmap *m = perfmap__load(FX "jvm.map", NULL);

	CHECK(m != NULL, "jvm: %s", strerror(errno));
	if (m) {
		/* jcmd writes 0x prefixes. */
		check_find(m, 0x7f5c1d000100, "java.lang.String::hashCode()I", FRAME_JIT_JVM);
		check_find(m, 0x7f5c1d00023f, "Ljava/lang/Object;::<init>", FRAME_JIT_JVM);
		perfmap__delete(m);
	}
	m = perfmap__load(FX "cpython.map", NULL);
	CHECK(m != NULL, "cpython: %s", strerror(errno));
	if (m) {
		check_find(m, 0x7f0000002010, "py::main:/tmp/fib.py", FRAME_JIT_CPYTHON);
		perfmap__delete(m);
	}
	CHECK(perfmap__classify("LazyCompile:*f") == FRAME_JIT_V8, "LazyCompile");
	CHECK(perfmap__classify("Function:f") == FRAME_JIT_V8, "Function");
	CHECK(perfmap__classify("InterpretedFunction:f") == FRAME_JIT_V8, "Interpreted");
	CHECK(perfmap__classify("~f") == FRAME_JIT_V8, "~");
	CHECK(perfmap__classify("*f") == FRAME_JIT_V8, "*");
	CHECK(perfmap__classify("py::f:x.py") == FRAME_JIT_CPYTHON, "py::");
	CHECK(perfmap__classify("a::b") == FRAME_JIT_JVM, "::");
	CHECK(perfmap__classify("stub") == FRAME_JIT_OTHER, "other");
	CHECK(perfmap__classify("") == FRAME_JIT_OTHER, "empty");
}

static void test_broken(void)
{
	struct perfmap *m = perfmap__load(FX "broken.map", NULL);

	CHECK(m != NULL, "broken: %s", strerror(errno));
	if (!m)
		return;
	CHECK_U64(perfmap__nr_entries(m), 3);
	CHECK_U64(perfmap__bad_lines(m), 8);
	CHECK(!perfmap__truncated(m), "truncated");
	check_find(m, 0x7f12a0001000, "good one", FRAME_JIT_OTHER);
	check_find(m, 0x7f12a0006000, "second good", FRAME_JIT_OTHER);
	check_find(m, 0x7f12a0007000, "no newline at end", FRAME_JIT_OTHER);
	check_miss(m, 0x7f12a0005000);
	perfmap__delete(m);

	errno = 0;
	CHECK(perfmap__load(FX "missing.map", NULL) == NULL && errno == ENOENT, "missing: %s",
	      strerror(errno));
	CHECK(perfmap__load(FX, NULL) == NULL, "a directory loaded");
}

static struct perfmap *parse_bytes(const char *buf, size_t len)
{
	FILE *f = tmpfile();
	struct perfmap *m = NULL;

	CHECK(f != NULL, "tmpfile: %s", strerror(errno));
	if (!f)
		return NULL;
	if (fwrite(buf, 1, len, f) == len && fseek(f, 0, SEEK_SET) == 0)
		m = perfmap__parse(f, NULL);
	fclose(f);
	return m;
}

/*
 * Maps with nothing to keep. An empty one sorted a NULL array (undefined behaviour, reported by
 * UBSan in make check; found by tests/fuzz/fuzz_perfmap).
 */
static void test_empty(void)
{
	/* A NUL inside a name, a line of NULs, control bytes: bad lines; the good one stays. */
	static const char binary[] = "7f0000001000 10 na\0me\n\0\0\0\n\x01\x02 10 x\n"
				     "7f0000002000 20 kept\n";
	struct perfmap *m = parse_bytes("", 0);

	CHECK(m && perfmap__nr_entries(m) == 0 && perfmap__bad_lines(m) == 0 &&
		      !perfmap__truncated(m),
	      "empty map");
	CHECK(!perfmap__find(m, 0x7f0000001000, &(struct perfmap_sym){0}), "found in nothing");
	perfmap__delete(m);

	m = parse_bytes("zz\n\n1 0 zero\n", 13); /* an empty line is a bad one too */
	CHECK(m && perfmap__nr_entries(m) == 0 && perfmap__bad_lines(m) == 3,
	      "only bad lines: %zu entries, %zu bad", m ? perfmap__nr_entries(m) : 0,
	      m ? perfmap__bad_lines(m) : 0);
	perfmap__delete(m);

	m = parse_bytes(binary, sizeof(binary) - 1);
	CHECK(m && perfmap__nr_entries(m) == 1 && perfmap__bad_lines(m) == 3,
	      "binary junk: %zu entries, %zu bad", m ? perfmap__nr_entries(m) : 0,
	      m ? perfmap__bad_lines(m) : 0);
	if (m)
		check_find(m, 0x7f0000002010, "kept", FRAME_JIT_OTHER);
	CHECK(!perfmap__find(m, 0x7f0000001000, &(struct perfmap_sym){0}), "the NUL line is gone");
	perfmap__delete(m);
}

static void test_bounds(void)
{
	struct perfmap_limits entries = {.max_entries = 2, .max_bytes = 1 << 20};
	struct perfmap_limits bytes = {.max_entries = 100, .max_bytes = 40};
	struct perfmap *m = perfmap__load(FX "v8.map", &entries);

	CHECK(m && perfmap__nr_entries(m) == 2 && perfmap__truncated(m), "entry cap");
	CHECK(perfmap__memory(m) > 0, "memory");
	perfmap__delete(m);
	/* 40 bytes hold the first line (32) only. */
	m = perfmap__load(FX "v8.map", &bytes);
	CHECK(m && perfmap__nr_entries(m) == 1 && perfmap__truncated(m), "byte cap");
	perfmap__delete(m);
	perfmap__delete(NULL);
	CHECK(!perfmap__find(NULL, 1, &(struct perfmap_sym){0}), "NULL map");
}

/*
 * Lines over the cap are skipped without being kept: a 20 KiB name, then a good line; with a
 * small cap, a line at it is kept and one byte more is not.
 */
static void test_long_lines(void)
{
	struct perfmap_limits small = {.max_entries = 100, .max_bytes = 1 << 20, .max_line = 24};
	size_t big = 20 << 10;
	char *buf = malloc(big + 64);
	struct perfmap *m;
	FILE *f;
	int n;

	if (!buf)
		return;
	n = snprintf(buf, 64, "7f0000001000 10 ");
	memset(buf + n, 'x', big);
	n += (int)big;
	n += snprintf(buf + n, 64, "\n7f0000002000 20 kept\n");
	m = parse_bytes(buf, (size_t)n);
	CHECK(m && perfmap__nr_entries(m) == 1 && perfmap__bad_lines(m) == 1,
	      "a 20 KiB line: %zu entries, %zu bad", m ? perfmap__nr_entries(m) : 0,
	      m ? perfmap__bad_lines(m) : 0);
	if (m)
		check_find(m, 0x7f0000002010, "kept", FRAME_JIT_OTHER);
	perfmap__delete(m);
	free(buf);

	/* "7f0000001000 10 " is 16 bytes: a name of 8 fits 24, one of 9 does not. */
	f = tmpfile();
	if (!f)
		return;
	fputs("7f0000001000 10 abcdefgh\n7f0000002000 10 abcdefghi\n7f0000003000 10 tail", f);
	rewind(f);
	m = perfmap__parse(f, &small);
	fclose(f);
	CHECK(m && perfmap__nr_entries(m) == 2 && perfmap__bad_lines(m) == 1, "cap 24: %zu, %zu",
	      m ? perfmap__nr_entries(m) : 0, m ? perfmap__bad_lines(m) : 0);
	if (m) {
		check_find(m, 0x7f0000001000, "abcdefgh", FRAME_JIT_OTHER);
		check_find(m, 0x7f0000003000, "tail", FRAME_JIT_OTHER);
		check_miss(m, 0x7f0000002000);
	}
	perfmap__delete(m);
}

static long max_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_maxrss;
}

/*
 * A perf map of 1 GiB of NULs without a newline (a sparse file: nothing on disk). getline() grew
 * one line to the whole file; now the read stops at the byte budget and keeps no more than the
 * line cap: the peak RSS does not move by the budget (64 MiB), let alone the file.
 */
static void test_sparse_nuls(void)
{
	char path[] = "/tmp/test_perfmap.XXXXXX";
	int fd = mkstemp(path);
	struct perfmap *m;
	long before, after;

	CHECK(fd >= 0 && ftruncate(fd, 1LL << 30) == 0, "sparse file: %s", strerror(errno));
	if (fd < 0)
		return;
	close(fd);
	before = max_rss_kib();
	m = perfmap__load(path, NULL);
	after = max_rss_kib();
	unlink(path);
	CHECK(m && perfmap__nr_entries(m) == 0 && perfmap__truncated(m), "1 GiB of NULs: %s",
	      m ? "not truncated" : strerror(errno));
	CHECK(after - before < 8 * 1024, "peak RSS grew by %ld KiB reading it", after - before);
	perfmap__delete(m);
}

/* A process in a container: its map is under its own root, named by its namespace PID. */
#define JIT_PID 4343
#define JIT_NSPID 7
#define JIT_START 0x7f12a0000000ULL

static char root[PATH_MAX];

static void put(const char *rel, const char *text)
{
	char path[2 * PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void test_symbolizer(void)
{
	struct symbolizer_opts o = {
		.kallsyms_path = "/nonexistent/kallsyms", .max_procs = 4, .max_dsos = 4};
	char path[2 * PATH_MAX], text[3 * PATH_MAX];
	struct symbolizer *s;
	struct frame f;

	snprintf(root, sizeof(root), "/tmp/hostprof-test-perfmap-XXXXXX");
	CHECK(mkdtemp(root) != NULL, "mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/%d/root/tmp", root, JIT_PID);
	snprintf(text, sizeof(text), "mkdir -p %s", path);
	CHECK(system(text) == 0, "%s", text);
	put("4343/comm", "node\n");
	put("4343/cmdline", "node");
	put("4343/status", "Name:\tnode\nPid:\t4343\nNSpid:\t4343\t7\n");
	snprintf(text, sizeof(text),
		 "%llx-%llx r-xp 00000000 00:00 0 \n%llx-%llx rw-p 00000000 00:00 0 \n", JIT_START,
		 JIT_START + 0x10000, JIT_START + 0x10000, JIT_START + 0x20000);
	put("4343/maps", text);
	put("4343/root/tmp/perf-7.map", "7f12a0001000 40 JS:*hot [eval]:1\n");
	/* The host-PID name must not be read. */
	put("4343/root/tmp/perf-4343.map", "7f12a0001000 40 wrong\n");

	CHECK(perfmap__path(root, JIT_PID, path, sizeof(path)) == 0 &&
		      strstr(path, "/4343/root/tmp/perf-7.map"),
	      "path %s", path);
	/* An NSpid past an int is no PID: not cast into another process's number (4294967338
	 * would wrap to 42, 2147483648 to a negative one). */
	snprintf(text, sizeof(text), "mkdir -p %s/4344", root);
	CHECK(system(text) == 0, "%s", text);
	put("4344/status", "Name:\tx\nNSpid:\t4344\t4294967338\n");
	CHECK(perfmap__path(root, 4344, path, sizeof(path)) == 0 &&
		      strstr(path, "/4344/root/tmp/perf-4344.map"),
	      "an NSpid that wraps is ignored: %s", path);
	put("4344/status", "Name:\tx\nNSpid:\t4344\t2147483648\n");
	CHECK(perfmap__path(root, 4344, path, sizeof(path)) == 0 &&
		      strstr(path, "/4344/root/tmp/perf-4344.map"),
	      "an NSpid past INT_MAX is ignored: %s", path);
	o.proc_root = root;
	s = symbolizer__new(&o);
	CHECK(s != NULL, "symbolizer__new: %s", strerror(errno));
	if (!s)
		return;
	symbolizer__user(s, JIT_PID, JIT_START + 0x1010, true, &f);
	CHECK(f.kind == FRAME_JIT_V8, "kind %d", f.kind);
	CHECK_STR(f.function, "JS:*hot [eval]:1");
	CHECK_U64(f.address, JIT_START + 0x100f);
	CHECK(f.has_mapping && f.mapping.start == JIT_START &&
		      f.mapping.limit == JIT_START + 0x10000,
	      "mapping [0x%" PRIx64 ", 0x%" PRIx64 ")", f.mapping.start, f.mapping.limit);

	/* A miss in the map: unknown, as before; the map is written later and re-read. */
	symbolizer__user(s, JIT_PID, JIT_START + 0x5000, false, &f);
	CHECK(!f.function && f.kind == FRAME_NATIVE, "miss resolved to %s", f.function);
	CHECK_STR(f.unknown, "[unknown] [anon]+0x5000");
	put("4343/root/tmp/perf-7.map",
	    "7f12a0001000 40 JS:*hot [eval]:1\n7f12a0005000 40 JS:~later [eval]:2\n");
	for (int i = 0; i < 2048; i++)
		symbolizer__user(s, JIT_PID, JIT_START + 0x1010, false, &f);
	symbolizer__user(s, JIT_PID, JIT_START + 0x5000, false, &f);
	CHECK_STR(f.function, "JS:~later [eval]:2");

	/* Writable anonymous memory is not code: never looked up. */
	symbolizer__user(s, JIT_PID, JIT_START + 0x11000, false, &f);
	CHECK(!f.function && f.kind == FRAME_NATIVE, "data resolved to %s", f.function);
	symbolizer__delete(s);

	snprintf(text, sizeof(text), "rm -rf %s", root);
	CHECK(system(text) == 0, "%s", text);
}

int main(void)
{
	test_v8();
	test_runtimes();
	test_broken();
	test_empty();
	test_bounds();
	test_long_lines();
	test_sparse_nuls();
	test_symbolizer();
	return check_summary("test_perfmap");
}

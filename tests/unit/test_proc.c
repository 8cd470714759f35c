// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for src/process/proc.c: the maps parser on fixtures (tests/fixtures/maps, read
 * relative to the repository root), the process table on a fake /proc made under /tmp, and the real
 * /proc/self. Needs no privileges.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "process/proc.h"

/* noclone keeps GCC from renaming the function ("x.constprop.0"); clang has no such clones. */
#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#define FIXTURES "tests/fixtures/maps/"

static int parse_file(const char *path, struct maps *maps, size_t *bad)
{
	FILE *f = fopen(path, "re");
	int err;

	if (!f) {
		fprintf(stderr, "cannot open %s: %s (run from the repository root)\n", path,
			strerror(errno));
		maps->v = NULL;
		maps->n = 0;
		return -errno;
	}
	err = maps__parse(maps, f, bad);
	fclose(f);
	return err;
}

static int parse_string(const char *text, struct maps *maps, size_t *bad)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	if (!f)
		return -errno;
	err = maps__parse(maps, f, bad);
	fclose(f);
	return err;
}

static void test_basic(void)
{
	struct maps maps;
	size_t bad = 99;
	const struct mapping *m;

	CHECK(parse_file(FIXTURES "basic.maps", &maps, &bad) == 0, "parse basic.maps");
	CHECK_U64(maps.n, 21);
	CHECK_U64(bad, 0);
	if (maps.n != 21)
		goto out;

	m = &maps.v[1];
	CHECK_U64(m->start, 0x55c3bd4a7000);
	CHECK_U64(m->end, 0x55c3bd4ac000);
	CHECK_U64(m->pgoff, 0x2000);
	CHECK_U64(m->dev_major, 0xfe);
	CHECK_U64(m->dev_minor, 0);
	CHECK_U64(m->inode, 247134);
	CHECK(m->readable && !m->writable && m->executable && !m->shared, "r-xp flags");
	CHECK(m->kind == MAPPING_FILE, "kind %d", m->kind);
	CHECK(!m->deleted, "not deleted");
	CHECK_STR(m->path, "/usr/bin/cat");

	CHECK(maps.v[5].kind == MAPPING_HEAP, "[heap] kind %d", maps.v[5].kind);
	CHECK_STR(maps.v[5].path, "[heap]");
	CHECK(maps.v[6].kind == MAPPING_ANON, "anon kind %d", maps.v[6].kind);
	CHECK(maps.v[6].path == NULL, "anon has no path");
	CHECK(maps.v[6].readable && maps.v[6].writable && !maps.v[6].executable, "rw-p");
	CHECK_STR(maps.v[8].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK_U64(maps.v[8].pgoff, 0x26000);
	CHECK(maps.v[13].shared, "r--s is shared");
	CHECK(maps.v[14].kind == MAPPING_SPECIAL, "[vvar] kind %d", maps.v[14].kind);
	CHECK(maps.v[15].kind == MAPPING_SPECIAL, "[vvar_vclock] kind %d", maps.v[15].kind);
	CHECK(maps.v[16].kind == MAPPING_VDSO, "[vdso] kind %d", maps.v[16].kind);
	CHECK(maps.v[19].kind == MAPPING_STACK, "[stack] kind %d", maps.v[19].kind);
	CHECK(maps.v[20].kind == MAPPING_VSYSCALL, "[vsyscall] kind %d", maps.v[20].kind);
	CHECK_U64(maps.v[20].start, 0xffffffffff600000);
	CHECK(!maps.v[20].readable && maps.v[20].executable, "--xp");

	/* maps__find: inside, at both edges (end is exclusive), in gaps, before and after all. */
	m = maps__find(&maps, 0x55c3bd4a7000);
	CHECK(m == &maps.v[1], "find at start");
	m = maps__find(&maps, 0x55c3bd4abfff);
	CHECK(m == &maps.v[1], "find at end - 1");
	m = maps__find(&maps, 0x55c3bd4ac000);
	CHECK(m == &maps.v[2], "end is exclusive: next mapping");
	m = maps__find(&maps, 0x55c3bd4b1000);
	CHECK(m == NULL, "gap after the exe");
	m = maps__find(&maps, 0x55c3c6980000);
	CHECK(m == &maps.v[5], "inside [heap]");
	CHECK(maps__find(&maps, 0) == NULL, "below everything");
	CHECK(maps__find(&maps, 0x55c3bd4a4fff) == NULL, "just below the first");
	m = maps__find(&maps, 0xffffffffff600fff);
	CHECK(m == &maps.v[20], "last byte of [vsyscall]");
	CHECK(maps__find(&maps, 0xffffffffff601000) == NULL, "after the last");
	CHECK(maps__find(&maps, UINT64_MAX) == NULL, "UINT64_MAX");
	m = maps__find(&maps, 0x7f140ba5f000);
	CHECK(m == NULL, "gap between anon and gconv");
out:
	maps__release(&maps);
	CHECK(maps.v == NULL && maps.n == 0, "release empties");
}

static void test_special(void)
{
	struct maps maps;
	size_t bad = 99;
	const struct mapping *v;

	CHECK(parse_file(FIXTURES "special.maps", &maps, &bad) == 0, "parse special.maps");
	CHECK_U64(maps.n, 13);
	CHECK_U64(bad, 0);
	if (maps.n != 13)
		goto out;
	v = maps.v;

	CHECK_STR(v[0].path, "/opt/app/bin/server");
	CHECK(v[0].deleted && v[0].kind == MAPPING_FILE, "deleted file");
	CHECK_STR(v[1].path, "/opt/my app/lib with spaces.so");
	CHECK(!v[1].deleted, "spaces are not deletion");
	CHECK_STR(v[2].path, "/opt/my app/old  build.so");
	CHECK(v[2].deleted, "spaces and deleted");
	CHECK_STR(v[3].path, "/memfd:jit-code");
	CHECK(v[3].deleted && v[3].kind == MAPPING_FILE, "memfd");
	CHECK_U64(v[3].dev_minor, 1);
	CHECK_STR(v[4].path, "[anon:scudo:primary]");
	CHECK(v[4].kind == MAPPING_SPECIAL, "named anon kind %d", v[4].kind);
	CHECK(v[5].kind == MAPPING_ANON && !v[5].path, "anon without trailing space");
	CHECK(v[6].kind == MAPPING_ANON && !v[6].path, "anon with trailing padding");
	CHECK_STR(v[7].path, "/weird/ (deleted)/not-deleted");
	CHECK(!v[7].deleted, "(deleted) in the middle is a name");
	CHECK_U64(v[7].dev_major, 0x103);
	CHECK_U64(v[7].dev_minor, 5);
	CHECK_U64(v[7].inode, 4294967297ull);
	CHECK_STR(v[8].path, "/dev/shm/trailing space ");
	CHECK(v[8].shared && v[8].executable, "r-xs");
	CHECK_U64(v[8].pgoff, 0x3000);
	CHECK_U64(v[8].dev_major, 0xfd);
	CHECK_U64(v[8].dev_minor, 2);
	CHECK_STR(v[9].path, "anon_inode:[perf_event]");
	CHECK(v[9].kind == MAPPING_FILE, "anon_inode kind %d", v[9].kind);
	CHECK_STR(v[10].path, "/(deleted)");
	CHECK(!v[10].deleted, "no space before (deleted)");
	CHECK_STR(v[11].path, "/tab/separated");
	CHECK(v[12].kind == MAPPING_STACK, "[stack]");
	CHECK(maps__find(&maps, 0x7ffd00020fff) == &v[12], "last byte of the stack");
out:
	maps__release(&maps);
}

static void test_broken(void)
{
	struct maps maps;
	size_t bad = 0;

	CHECK(parse_file(FIXTURES "broken.maps", &maps, &bad) == 0, "parse broken.maps");
	CHECK_U64(maps.n, 3);
	CHECK_U64(bad, 16);
	if (maps.n == 3) {
		CHECK_STR(maps.v[0].path, "/good/one");
		CHECK_STR(maps.v[1].path, "/good/two");
		CHECK_U64(maps.v[1].start, 0x27000);
		CHECK_STR(maps.v[2].path, "/good/three");
		CHECK_U64(maps.v[2].inode, 24);
		CHECK(maps__find(&maps, 0x13000) == NULL, "a bad line leaves no mapping");
	}
	maps__release(&maps);

	/* bad_lines may be NULL. */
	CHECK(parse_file(FIXTURES "broken.maps", &maps, NULL) == 0, "NULL bad_lines");
	CHECK_U64(maps.n, 3);
	maps__release(&maps);

	/* Empty input, and an embedded NUL (which would cut a path short). */
	CHECK(parse_string("", &maps, &bad) == 0, "empty input");
	CHECK(maps.n == 0 && bad == 0, "empty: n %zu bad %zu", maps.n, bad);
	maps__release(&maps);
	{
		static const char nul_line[] = "1000-2000 r-xp 00000000 08:01 5 /a\0b\n"
					       "3000-4000 r-xp 00000000 08:01 6 /ok\n";
		FILE *f = fmemopen((void *)nul_line, sizeof(nul_line) - 1, "r");

		CHECK(f && maps__parse(&maps, f, &bad) == 0, "parse with NUL");
		CHECK(maps.n == 1 && bad == 1, "NUL line is bad: n %zu bad %zu", maps.n, bad);
		if (maps.n == 1)
			CHECK_STR(maps.v[0].path, "/ok");
		maps__release(&maps);
		if (f)
			fclose(f);
	}
	/* A very long path is kept whole. */
	{
		char *text = malloc(8192), *path = malloc(6000);

		if (text && path) {
			memset(path, 'x', 5999);
			path[0] = '/';
			path[5999] = '\0';
			snprintf(text, 8192, "1000-2000 r-xp 00000000 08:01 5 %s\n", path);
			CHECK(parse_string(text, &maps, &bad) == 0, "long line");
			CHECK(maps.n == 1 && maps.v && strlen(maps.v[0].path) == 5999,
			      "long path kept");
			maps__release(&maps);
		}
		free(text);
		free(path);
	}
	maps__release(NULL);
}

static void test_unsorted(void)
{
	struct maps maps;

	CHECK(parse_file(FIXTURES "unsorted.maps", &maps, NULL) == 0, "parse unsorted.maps");
	CHECK_U64(maps.n, 3);
	if (maps.n == 3) {
		CHECK_STR(maps.v[0].path, "/lib/a.so");
		CHECK_STR(maps.v[1].path, "/lib/b.so");
		CHECK_STR(maps.v[2].path, "/lib/c.so");
		CHECK(maps__find(&maps, 0x7f0000002800) == &maps.v[1], "find after sort");
	}
	maps__release(&maps);
}

/* --- the process table on a fake /proc --- */

static char tmpdir[] = "/tmp/test_proc.XXXXXX";

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

static const char fake_maps_fmt[] =
	"55d000000000-55d000001000 r--p 00000000 08:01 %d /usr/bin/fake-%d\n"
	"55d000001000-55d000003000 r-xp 00001000 08:01 %d /usr/bin/fake-%d\n"
	"7fabcdef1000-7fabcdef3000 r-xp 00002000 08:01 77 /usr/lib/libfoo.so\n"
	"7fabcdef3000-7fabcdef4000 r-xp 00000000 08:01 78 /usr/lib/libbar.so (deleted)\n"
	"7fabcdef5000-7fabcdef6000 rw-p 00000000 00:00 0 \n"
	"7ffe00000000-7ffe00021000 rw-p 00000000 00:00 0 [stack]\n";

/* Creates <tmpdir>/proc/<pid>/ with maps, comm and an exe link (each optional). */
static int make_fake_pid(int pid, bool with_comm, bool with_exe)
{
	char dir[PATH_MAX], text[1024], target[64];

	snprintf(dir, sizeof(dir), "%s/proc/%d", tmpdir, pid);
	if (mkdir(dir, 0755))
		return -errno;
	snprintf(text, sizeof(text), fake_maps_fmt, 1000 + pid, pid, 1000 + pid, pid);
	if (write_file(dir, "maps", text))
		return -1;
	if (with_comm) {
		snprintf(text, sizeof(text), "proc%d\n", pid);
		if (write_file(dir, "comm", text))
			return -1;
	}
	if (with_exe) {
		char link[PATH_MAX + 8];

		snprintf(target, sizeof(target), "/usr/bin/fake-%d", pid);
		snprintf(link, sizeof(link), "%s/exe", dir);
		if (symlink(target, link))
			return -errno;
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_fake_pid(int pid)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/proc/%d", tmpdir, pid);
	rm_tree(dir);
}

static void test_table(void)
{
	char root[256], buf[PATH_MAX], want[PATH_MAX + 64], big[PATH_MAX];
	struct proc_table *t;
	struct proc *p;
	int err;

	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	CHECK(mkdir(root, 0755) == 0, "mkdir %s: %s", root, strerror(errno));
	CHECK(make_fake_pid(100, true, true) == 0, "fake pid 100");
	CHECK(make_fake_pid(101, true, true) == 0, "fake pid 101");
	CHECK(make_fake_pid(102, false, false) == 0, "fake pid 102");
	CHECK(make_fake_pid(200, true, true) == 0, "fake pid 200");

	errno = 0;
	CHECK(proc_table__new(root, 0) == NULL && errno == EINVAL, "max_procs 0 is refused");

	t = proc_table__new(root, 2);
	CHECK(t != NULL, "proc_table__new: %s", strerror(errno));
	if (!t)
		return;
	CHECK_U64(proc_table__size(t), 0);

	p = proc_table__get(t, 100);
	CHECK(p != NULL, "get 100: %s", strerror(errno));
	if (p) {
		CHECK_U64(p->pid, 100);
		CHECK_STR(p->comm, "proc100");
		CHECK_STR(p->exe_path, "/usr/bin/fake-100");
		CHECK_U64(p->maps.n, 6);
		CHECK(!p->exited, "alive");
		if (p->maps.n == 6) {
			CHECK_U64(p->maps.v[1].inode, 1100);
			CHECK(p->maps.v[3].deleted, "deleted flag through the table");
		}
	}
	CHECK_U64(proc_table__size(t), 1);

	/* Never seen and not there: ESRCH, and nothing is added. */
	errno = 0;
	CHECK(proc_table__get(t, 999) == NULL, "missing pid");
	CHECK(errno == ESRCH, "errno %d (%s), want ESRCH", errno, strerror(errno));
	CHECK_U64(proc_table__size(t), 1);
	errno = 0;
	CHECK(proc_table__get(t, 0) == NULL && errno == EINVAL, "pid 0 is invalid");
	CHECK(proc_table__get(t, -5) == NULL, "negative pid");
	CHECK(proc_table__refresh(t, 999) == -ESRCH, "refresh of a missing pid");

	/* A process without comm and exe still has its maps. */
	p = proc_table__get(t, 102);
	CHECK(p != NULL, "get 102");
	if (p) {
		CHECK_STR(p->comm, "");
		CHECK(p->exe_path == NULL, "no exe link");
		CHECK_U64(p->maps.n, 6);
	}
	CHECK_U64(proc_table__size(t), 2);

	/* LRU: touch 100, then 101 evicts 102 (the least recently used), not 100. */
	CHECK(proc_table__get(t, 100) != NULL, "get 100 again");
	CHECK(proc_table__get(t, 101) != NULL, "get 101");
	CHECK_U64(proc_table__size(t), 2);
	remove_fake_pid(102);
	errno = 0;
	CHECK(proc_table__get(t, 102) == NULL && errno == ESRCH, "102 was evicted, now gone");
	remove_fake_pid(100);
	p = proc_table__get(t, 100);
	CHECK(p != NULL, "100 stayed cached after its directory went");
	CHECK(p && !p->exited, "not known to have exited before a refresh");

	/* A refresh of a gone process keeps the snapshot and marks it exited. */
	err = proc_table__refresh(t, 100);
	CHECK(err == -ESRCH, "refresh of gone pid: %d", err);
	p = proc_table__get(t, 100);
	CHECK(p != NULL, "exited process still there");
	if (p) {
		CHECK(p->exited, "exited");
		CHECK_U64(p->maps.n, 6);
		CHECK_STR(p->comm, "proc100");
		CHECK_STR(p->exe_path, "/usr/bin/fake-100");
		CHECK(maps__find(&p->maps, 0x55d000001800) != NULL, "old maps still searchable");
	}

	/* A refresh of a live process re-reads its maps. */
	snprintf(buf, sizeof(buf), "%s/101", root);
	CHECK(write_file(buf, "maps",
			 "1000-2000 r-xp 00000000 08:01 5 /new/binary\n"
			 "3000-4000 r-xp 00000000 08:01 6 /new/lib.so\n") == 0,
	      "rewrite maps");
	CHECK(write_file(buf, "comm", "renamed\n") == 0, "rewrite comm");
	CHECK(proc_table__refresh(t, 101) == 0, "refresh 101");
	p = proc_table__get(t, 101);
	CHECK(p && p->maps.n == 2, "refreshed maps");
	if (p && p->maps.n == 2)
		CHECK_STR(p->maps.v[0].path, "/new/binary");
	if (p)
		CHECK_STR(p->comm, "renamed");
	CHECK_U64(proc_table__size(t), 2);
	proc_table__delete(t);
	proc_table__delete(NULL);

	/* mapping_path: map_files when the entry exists, else the root path. */
	snprintf(buf, sizeof(buf), "%s/200/map_files", root);
	CHECK(mkdir(buf, 0755) == 0, "mkdir map_files");
	CHECK(write_file(buf, "7fabcdef1000-7fabcdef3000", "") == 0, "map_files entry");
	/* A trailing slash on the root changes nothing. */
	snprintf(buf, sizeof(buf), "%s/", root);
	t = proc_table__new(buf, 8);
	CHECK(t != NULL, "table with trailing slash");
	if (!t)
		return;
	p = proc_table__get(t, 200);
	CHECK(p && p->maps.n == 6, "get 200");
	if (p && p->maps.n == 6) {
		const struct mapping *lib = &p->maps.v[2], *gone = &p->maps.v[3];

		err = proc_table__mapping_path(t, 200, lib, buf, sizeof(buf));
		snprintf(want, sizeof(want), "%s/200/map_files/7fabcdef1000-7fabcdef3000", root);
		CHECK(err == 0, "mapping_path: %d", err);
		CHECK_STR(buf, want);

		err = proc_table__mapping_path(t, 200, gone, buf, sizeof(buf));
		snprintf(want, sizeof(want), "%s/200/root/usr/lib/libbar.so", root);
		CHECK(err == 0, "mapping_path without map_files: %d", err);
		CHECK_STR(buf, want);

		err = proc_table__mapping_path(t, 200, &p->maps.v[1], buf, sizeof(buf));
		snprintf(want, sizeof(want), "%s/200/root/usr/bin/fake-200", root);
		CHECK(err == 0, "exe root path");
		CHECK_STR(buf, want);

		CHECK(proc_table__mapping_path(t, 200, &p->maps.v[4], buf, sizeof(buf)) == -ENOENT,
		      "anonymous mapping has no path");
		CHECK(proc_table__mapping_path(t, 200, &p->maps.v[5], buf, sizeof(buf)) == -ENOENT,
		      "[stack] has no path");
		CHECK(proc_table__mapping_path(t, 200, lib, buf, 10) == -ENAMETOOLONG,
		      "small buffer");
		/* want still holds the exe's root path. */
		CHECK(proc_table__mapping_path(t, 200, &p->maps.v[1], big, strlen(want)) ==
			      -ENAMETOOLONG,
		      "one byte short");
		CHECK(proc_table__mapping_path(t, 200, &p->maps.v[1], big, strlen(want) + 1) == 0,
		      "exactly enough");
		CHECK_STR(big, want);
	}
	proc_table__delete(t);
}

/* --- the real /proc --- */

static NOINLINE int live_marker(int x)
{
	return x * 7 + 3;
}

static void test_live(void)
{
	char exe[PATH_MAX], buf[PATH_MAX];
	uint64_t fn = (uint64_t)(uintptr_t)&live_marker;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	int local = live_marker(1);
	const struct mapping *m;
	struct proc_table *t;
	struct maps maps;
	struct proc *p;
	size_t bad = 99;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0, "readlink /proc/self/exe");
	if (n <= 0)
		return;
	exe[n] = '\0';

	CHECK(parse_file("/proc/self/maps", &maps, &bad) == 0, "parse /proc/self/maps");
	CHECK_U64(bad, 0);
	CHECK(maps.n > 5, "n %zu", maps.n);
	for (size_t i = 1; i < maps.n; i++)
		if (maps.v[i].start < maps.v[i - 1].end) {
			CHECK(0, "mapping %zu overlaps the previous one", i);
			break;
		}
	m = maps__find(&maps, fn);
	CHECK(m != NULL, "the test's own code is mapped");
	if (m) {
		CHECK(m->kind == MAPPING_FILE && m->executable, "an executable file mapping");
		CHECK_STR(m->path, exe);
	}
	m = maps__find(&maps, (uint64_t)(uintptr_t)&local);
	/* ASan may move locals to a fake stack; without it they are on [stack]. */
	if (m && m->kind != MAPPING_ANON)
		CHECK(m->kind == MAPPING_STACK, "a local lives on [stack]: kind %d", m->kind);
	if (vdso) {
		m = maps__find(&maps, vdso);
		CHECK(m && m->kind == MAPPING_VDSO, "AT_SYSINFO_EHDR is in [vdso]");
	}
	maps__release(&maps);

	t = proc_table__new("/proc", 4);
	CHECK(t != NULL, "table on /proc");
	if (!t)
		return;
	p = proc_table__get(t, getpid());
	CHECK(p != NULL, "get self: %s", strerror(errno));
	if (p) {
		char comm[32] = "";
		FILE *f = fopen("/proc/self/comm", "re");

		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		CHECK_STR(p->exe_path, exe);
		CHECK(comm[0] != '\0', "read /proc/self/comm");
		CHECK_STR(p->comm, comm);
		CHECK(!p->exited, "alive");
		m = maps__find(&p->maps, fn);
		CHECK(m != NULL, "own code in the table's snapshot");
		/* Whatever path is chosen must be openable by this (unprivileged) process. */
		if (m) {
			int err = proc_table__mapping_path(t, getpid(), m, buf, sizeof(buf));
			int fd = err ? -1 : open(buf, O_RDONLY | O_CLOEXEC);

			CHECK(err == 0, "mapping_path: %d", err);
			CHECK(fd >= 0, "open %s: %s", buf, strerror(errno));
			if (getenv("TEST_VERBOSE"))
				fprintf(stderr, "mapping_path(self exe) = %s\n", buf);
			if (fd >= 0)
				close(fd);
		}
	}
	CHECK(proc_table__refresh(t, getpid()) == 0, "refresh self");
	proc_table__delete(t);
}

#define FX_CONTAINER "3f1a0f9c2b7e4d8a9c0b1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d"

static void test_container_ids(void)
{
	static const struct {
		const char *file;
		const char *want; /* NULL: no container */
	} cases[] = {
		{"docker-v2-systemd", FX_CONTAINER},
		{"docker-v1", FX_CONTAINER},
		{"containerd-k8s-systemd", FX_CONTAINER},
		{"k8s-cgroupfs", FX_CONTAINER},
		{"crio-nested", FX_CONTAINER},
		{"tricky", FX_CONTAINER},
		{"crio-conmon", NULL},
		{"host", NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[PATH_MAX], text[4096] = "", id[PROC_CONTAINER_ID_LEN + 1] = "junk";
		FILE *f;
		size_t n = 0;
		int err;

		snprintf(path, sizeof(path), "tests/fixtures/cgroup/%s", cases[i].file);
		f = fopen(path, "re");
		CHECK(f != NULL, "fixture %s: %s", path, strerror(errno));
		if (f) {
			n = fread(text, 1, sizeof(text) - 1, f);
			fclose(f);
		}
		text[n] = '\0';
		err = proc__container_id(text, id);
		if (cases[i].want) {
			CHECK(err == 0, "%s: no container id found", cases[i].file);
			CHECK_STR(id, cases[i].want);
		} else {
			CHECK(err == -ENOENT, "%s: err %d, id %s", cases[i].file, err, id);
			CHECK_STR(id, "");
		}
	}
	char id[PROC_CONTAINER_ID_LEN + 1];
	CHECK(proc__container_id("", id) == -ENOENT, "empty text");
	CHECK(proc__container_id("0::", id) == -ENOENT, "empty path");
}

static void test_service_from_environ(void)
{
	char out[64];
	/* environ is NUL-separated; sizeof() - 1 drops the literal's own terminator. */
	static const char both[] = "PATH=/bin\0OTEL_RESOURCE_ATTRIBUTES=service.name=fromattrs\0"
				   "OTEL_SERVICE_NAME=checkout\0";
	static const char attrs[] = "HOME=/\0OTEL_RESOURCE_ATTRIBUTES=deployment.environment=prod, "
				    "service.name = pay%20ments ,team=x\0";
	static const char none[] = "PATH=/bin\0OTEL_SERVICE_NAME=\0OTEL_RESOURCE_ATTRIBUTES=a=b\0";
	static const char unterminated[] = "A=b\0OTEL_SERVICE_NAME=cut";

	CHECK(proc__service_from_environ(both, sizeof(both) - 1, out, sizeof(out)) == 0, "both");
	CHECK_STR(out, "checkout");
	CHECK(proc__service_from_environ(attrs, sizeof(attrs) - 1, out, sizeof(out)) == 0, "attrs");
	CHECK_STR(out, "pay ments");
	CHECK(proc__service_from_environ(none, sizeof(none) - 1, out, sizeof(out)) == -ENOENT,
	      "none: %s", out);
	CHECK(proc__service_from_environ(unterminated, sizeof(unterminated) - 1, out,
					 sizeof(out)) == 0,
	      "an environ cut short still reads");
	CHECK_STR(out, "cut");
	CHECK(proc__service_from_environ(both, sizeof(both) - 1, out, 4) == 0, "small buffer");
	CHECK_STR(out, "che");
}

/* The table reads cmdline, environ and cgroup of a (fake) process. */
static void test_identity_in_table(void)
{
	char dir[2 * PATH_MAX], root[PATH_MAX];
	static const char cmdline[] = "/usr/bin/fake-300\0--flag\0value with space\0";
	static const char environ_[] = "OTEL_SERVICE_NAME=inventory\0";
	struct proc_table *t;
	struct proc *p;
	FILE *f;

	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	CHECK(make_fake_pid(300, true, true) == 0, "fake pid 300");
	snprintf(dir, sizeof(dir), "%s/300/cmdline", root);
	f = fopen(dir, "we");
	if (f) {
		fwrite(cmdline, 1, sizeof(cmdline) - 1, f);
		fclose(f);
	}
	snprintf(dir, sizeof(dir), "%s/300/environ", root);
	f = fopen(dir, "we");
	if (f) {
		fwrite(environ_, 1, sizeof(environ_) - 1, f);
		fclose(f);
	}
	snprintf(dir, sizeof(dir), "%s/300", root);
	CHECK(write_file(dir, "cgroup", "0::/system.slice/docker-" FX_CONTAINER ".scope\n") == 0,
	      "cgroup");
	t = proc_table__new(root, 8);
	p = t ? proc_table__get(t, 300) : NULL;
	CHECK(p != NULL, "get 300: %s", strerror(errno));
	if (p) {
		/* argv's boundaries kept (NUL-separated), for redaction to see them. */
		CHECK(p->cmdline && p->cmdline_len == sizeof(cmdline) - 1 &&
			      !memcmp(p->cmdline, cmdline, sizeof(cmdline) - 1),
		      "cmdline of %zu bytes", p->cmdline_len);
		CHECK_STR(p->service_name, "inventory");
		CHECK_STR(p->container_id, FX_CONTAINER);
	}
	/* Without those files (another user's process, say) identity is simply unknown. */
	p = t ? proc_table__get(t, 101) : NULL;
	CHECK(p && !p->cmdline && !p->service_name && !p->container_id[0], "pid 101 identity");
	proc_table__delete(t);
}

/* Processes gone for a whole window are forgotten; the live ones and the just-gone stay. */
static void test_retire_exited(void)
{
	char root[PATH_MAX], cmd[2 * PATH_MAX];
	struct proc_table *t;

	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	CHECK(make_fake_pid(310, true, true) == 0 && make_fake_pid(311, true, true) == 0,
	      "fake pids 310, 311");
	t = proc_table__new(root, 8);
	if (!t)
		return;
	CHECK(proc_table__get(t, 310) && proc_table__get(t, 311), "both read");
	CHECK(proc_table__retire_exited(t) == 0, "both alive: none retired");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/311'", root);
	CHECK(system(cmd) == 0, "311 exits");
	CHECK(proc_table__retire_exited(t) == 0, "gone once: kept for its last samples");
	CHECK(proc_table__size(t) == 2, "both still there");
	CHECK(proc_table__retire_exited(t) == 1, "gone for a whole window: retired");
	CHECK(proc_table__size(t) == 1, "310 stays");
	CHECK(proc_table__get(t, 311) == NULL && errno == ESRCH, "311 is unknown now");
	proc_table__delete(t);
}

/*
 * The process watcher's path: a snapshot read aside (as from another thread) and adopted later,
 * after the process is gone; an exec forgets it; peek never reads.
 */
static void test_read_and_adopt(void)
{
	char root[PATH_MAX], cmd[2 * PATH_MAX];
	struct proc_table *t, *reader;
	struct proc p, *q;
	size_t before = 0;

	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	CHECK(make_fake_pid(320, true, true) == 0 && make_fake_pid(321, true, true) == 0,
	      "fake pids 320, 321");
	t = proc_table__new(root, 2);
	reader = proc_table__new(root, 1);
	if (!t || !reader)
		goto out;
	CHECK(proc_table__peek(t, 320) == NULL, "peek reads nothing");
	CHECK(proc_table__size(t) == 0, "and adds nothing");
	CHECK(proc_table__memory(t) > 0, "an empty table has its buckets");
	before = proc_table__memory(t);
	CHECK(proc_table__read(reader, 320, &p) == 0, "read 320 aside");
	CHECK(proc_table__size(reader) == 0, "the reader stays empty");
	CHECK(p.pid == 320 && p.maps.n == 6 && !strcmp(p.comm, "proc320") && p.exe_path &&
		      !strcmp(p.exe_path, "/usr/bin/fake-320"),
	      "the snapshot has maps, comm and exe");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/320'", root);
	CHECK(system(cmd) == 0, "320 exits");
	CHECK(proc_table__adopt(t, &p) == 0, "adopted after it exited");
	/* 6 mappings, 4 paths, comm and exe at least. */
	CHECK(proc_table__memory(t) >= before + 6 * sizeof(struct mapping) + 40,
	      "memory counts the snapshot: %zu -> %zu", before, proc_table__memory(t));
	CHECK(p.maps.n == 0 && !p.exe_path, "the table owns the contents now");
	q = proc_table__peek(t, 320);
	CHECK(q && q->maps.n == 6 && maps__find(&q->maps, 0x55d000001010ULL) != NULL,
	      "its samples resolve from the adopted maps");
	CHECK(proc_table__get(t, 320) == q, "get finds it without reading");

	/* Adopting over a known pid replaces its snapshot (an exec'd process read again). */
	CHECK(proc_table__read(reader, 321, &p) == 0, "read 321");
	p.pid = 320;
	CHECK(proc_table__adopt(t, &p) == 0 && proc_table__size(t) == 1, "replaces, no new entry");
	q = proc_table__peek(t, 320);
	CHECK(q && !strcmp(q->comm, "proc321"), "the newer snapshot won");

	proc_table__forget(t, 320);
	CHECK(proc_table__peek(t, 320) == NULL && proc_table__size(t) == 0, "forgotten on exec");
	CHECK(proc_table__memory(t) == before, "and its memory is back to the empty table's");
	CHECK(proc_table__get(t, 320) == NULL && errno == ESRCH, "and gone for good");
	proc_table__forget(t, 999); /* unknown: a no-op */

	errno = 0;
	CHECK(proc_table__read(reader, 320, &p) == -ESRCH, "a gone process cannot be read");
	proc__release(&p);
	CHECK(proc_table__read(reader, 0, &p) == -EINVAL, "pid 0 is refused");
out:
	proc_table__delete(reader);
	proc_table__delete(t);
}

int main(void)
{
	test_basic();
	test_special();
	test_broken();
	test_unsorted();
	test_container_ids();
	test_service_from_environ();

	if (!mkdtemp(tmpdir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
	} else {
		test_table();
		test_identity_in_table();
		test_retire_exited();
		test_read_and_adopt();
		rm_tree(tmpdir);
	}
	test_live();
	return check_summary("test_proc");
}

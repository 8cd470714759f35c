// SPDX-License-Identifier: BSD-2-Clause
/*
 * The process watcher without its thread: events handed in one by one, over a fake /proc whose
 * processes map real files (under <root>/PID/root, where the watcher opens them when map_files
 * cannot be followed). It must read a process at most twice per exec, queue an exec's news in
 * order, open each binary once across processes, count the processes already gone, and drop (and
 * count) what does not fit in its queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "process/proc_watch.h"

static char tmpdir[] = "/tmp/hostprof-test-proc-watch-XXXXXX";
static char root[PATH_MAX];

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* <root>/PID/{maps,comm} and, under <root>/PID/root, the two files its maps name (inodes from
 * stat, so that the identity the watcher hands over is the files'). */
static int make_pid(int pid, const char *exe_name)
{
	char dir[PATH_MAX + 32], path[2 * PATH_MAX], maps[4096], cmd[3 * PATH_MAX];
	struct stat exe, lib;

	snprintf(dir, sizeof(dir), "%s/%d", root, pid);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/root/usr/bin' '%s/root/usr/lib'", dir, dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/root/usr/bin/%s", dir, exe_name);
	if (write_text(path, "an executable") || stat(path, &exe))
		return -1;
	snprintf(path, sizeof(path), "%s/root/usr/lib/libc.so.6", dir);
	if (write_text(path, "a library") || stat(path, &lib))
		return -1;
	/* The library's identity is the same for every process: the test's dedupe key. */
	snprintf(maps, sizeof(maps),
		 "55d000000000-55d000001000 r--p 00000000 08:01 %lu /usr/bin/%s\n"
		 "55d000001000-55d000003000 r-xp 00001000 08:01 %lu /usr/bin/%s\n"
		 "7fabcdef1000-7fabcdef3000 r-xp 00002000 08:01 777 /usr/lib/libc.so.6\n"
		 "7fabcdef5000-7fabcdef6000 rw-p 00000000 00:00 0 \n",
		 (unsigned long)exe.st_ino, exe_name, (unsigned long)exe.st_ino, exe_name);
	snprintf(path, sizeof(path), "%s/maps", dir);
	if (write_text(path, maps))
		return -1;
	snprintf(path, sizeof(path), "%s/comm", dir);
	return write_text(path, exe_name);
}

static void event(struct proc_watch *w, int pid, unsigned int kind)
{
	struct hp_proc_event ev = {.tgid = (__u32)pid, .kind = kind};

	proc_watch__handle(w, &ev);
}

/* Take everything waiting; returns how many, the items in out (released by the caller). */
static size_t take_all(struct proc_watch *w, struct proc_watch_item *out, size_t max)
{
	return proc_watch__take(w, out, max);
}

static void release_all(struct proc_watch_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		proc_watch_item__release(&items[i]);
}

static bool fd_names(int fd, const char *suffix)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strlen(target) >= strlen(suffix) &&
	       !strcmp(target + strlen(target) - strlen(suffix), suffix);
}

static void test_reads_and_execs(void)
{
	struct proc_watch_item items[8];
	struct proc_watch_stats st;
	struct proc_watch *w = proc_watch__new(-1, root, 16);
	size_t n;

	CHECK(w != NULL, "proc_watch__new without a ring buffer: %s", strerror(errno));
	if (!w)
		return;
	event(w, 500, HP_UNWIND_REQ_LOAD);
	n = take_all(w, items, 8);
	CHECK_U64(n, 1);
	if (n == 1) {
		CHECK(items[0].pid == 500 && !items[0].forget, "pid 500 read");
		CHECK_U64(items[0].proc.maps.n, 4);
		CHECK_STR(items[0].proc.comm, "app");
		/* Its executable and libc: two binaries, both open on the right files. */
		CHECK_U64(items[0].nr_binaries, 2);
		if (items[0].nr_binaries == 2) {
			CHECK(fd_names(items[0].binaries[0].fd, "/500/root/usr/bin/app"),
			      "the executable's fd");
			CHECK(fd_names(items[0].binaries[1].fd, "/500/root/usr/lib/libc.so.6"),
			      "libc's fd");
			CHECK_U64(items[0].binaries[1].inode, 777);
			CHECK_STR(items[0].binaries[1].path, "/usr/lib/libc.so.6");
		}
	}
	release_all(items, n);

	/* Read again once (a first sample inside ld.so misses the libraries), then no more. */
	event(w, 500, HP_UNWIND_REQ_LOAD);
	event(w, 500, HP_UNWIND_REQ_LOAD);
	n = take_all(w, items, 8);
	CHECK(n == 1 && items[0].pid == 500, "one more read of 500, not two: %zu", n);
	/* Binaries already handed over are not opened again. */
	CHECK(n == 1 && items[0].nr_binaries == 0, "no binary opened twice");
	release_all(items, n);

	/* An exec: the news first, then the new program is read afresh. */
	event(w, 500, HP_UNWIND_REQ_EXEC);
	event(w, 500, HP_UNWIND_REQ_LOAD);
	n = take_all(w, items, 8);
	CHECK(n == 2 && items[0].forget && items[0].pid == 500 && !items[1].forget &&
		      items[1].pid == 500 && items[1].proc.maps.n == 4,
	      "exec then read, in that order (%zu items)", n);
	release_all(items, n);

	/* Another process mapping the same libc opens only its own executable. */
	event(w, 501, HP_UNWIND_REQ_LOAD);
	n = take_all(w, items, 8);
	CHECK(n == 1 && items[0].nr_binaries == 1 &&
		      fd_names(items[0].binaries[0].fd, "/501/root/usr/bin/tool"),
	      "pid 501: its executable only (%zu binaries)", n ? items[0].nr_binaries : 0);
	release_all(items, n);

	/* Gone before it could be read: counted, nothing queued. Other kinds are ignored. */
	event(w, 999, HP_UNWIND_REQ_LOAD);
	event(w, 500, HP_UNWIND_REQ_EXIT);
	event(w, 0, HP_UNWIND_REQ_LOAD);
	CHECK_U64(take_all(w, items, 8), 0);
	proc_watch__stats(w, &st);
	CHECK_U64(st.missed, 1);
	CHECK_U64(st.read, 4);
	CHECK_U64(st.events, 9);
	CHECK_U64(st.dropped, 0);
	proc_watch__delete(w);
}

/* A queue of two: the third item is dropped and counted, and its binaries are not taken as
 * handed over (the next reader of them opens them). Items left in the queue are released. */
static void test_full_queue(void)
{
	struct proc_watch_item items[4];
	struct proc_watch_stats st;
	struct proc_watch *w = proc_watch__new(-1, root, 2);
	size_t n;

	if (!w) {
		CHECK(0, "proc_watch__new: %s", strerror(errno));
		return;
	}
	event(w, 500, HP_UNWIND_REQ_EXEC);
	event(w, 500, HP_UNWIND_REQ_LOAD);
	event(w, 501, HP_UNWIND_REQ_LOAD); /* no room */
	proc_watch__stats(w, &st);
	CHECK_U64(st.dropped, 1);
	CHECK_U64(st.queued, 2);
	n = take_all(w, items, 4);
	CHECK_U64(n, 2);
	release_all(items, n);
	event(w, 501, HP_UNWIND_REQ_LOAD); /* its second chance: room now */
	n = take_all(w, items, 4);
	CHECK(n == 1 && items[0].pid == 501 && items[0].nr_binaries == 1,
	      "the dropped process's own binary is opened when it is read again");
	release_all(items, n);
	event(w, 501, HP_UNWIND_REQ_EXEC); /* left in the queue: freed by delete */
	proc_watch__delete(w);
	proc_watch__delete(NULL);
	errno = 0;
	CHECK(proc_watch__new(-1, root, 0) == NULL && errno == EINVAL, "a queue of 0 is refused");
}

int main(void)
{
	char cmd[PATH_MAX + 32];

	if (!mkdtemp(tmpdir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return check_summary("test_proc_watch");
	}
	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	CHECK(make_pid(500, "app") == 0 && make_pid(501, "tool") == 0, "fake /proc");
	test_reads_and_execs();
	test_full_queue();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_summary("test_proc_watch");
}

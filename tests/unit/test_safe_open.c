// SPDX-License-Identifier: BSD-2-Clause
/*
 * base/safe_open.h: what a hostile process can put where the agent opens its files. A FIFO, a
 * device, a directory and a file over its cap are refused (a FIFO without blocking: the alarm
 * turns a hang into a failure), and a path inside a process's root stays inside it whatever its
 * symlinks and ".." say, with openat2() and with the walk of kernels without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safe_open.h"
#include "check.h"
#include "fixture_paths.h"

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL test_safe_open: blocked (a FIFO was opened or read)\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* What the fd reads, into buf; "" when it is not a file. */
static const char *contents(int fd, char *buf, size_t len)
{
	ssize_t n = fd >= 0 ? pread(fd, buf, len - 1, 0) : -1;

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_plain_files(void)
{
	uint64_t before[SAFE_OPEN_REASON__COUNT], after[SAFE_OPEN_REASON__COUNT];
	struct stat st;
	char buf[64];
	int fd, flags;

	safe_open__stats(before);
	write_file(tmp("plain"), "hello");
	fd = safe_open(tmp("plain"), 5, &st);
	CHECK(fd >= 0, "a regular file opens: %d", fd);
	CHECK_STR(contents(fd, buf, sizeof(buf)), "hello");
	CHECK_U64(st.st_size, 5);
	flags = fd >= 0 ? fcntl(fd, F_GETFL) : 0;
	CHECK((flags & O_NONBLOCK) && (flags & O_ACCMODE) == O_RDONLY, "read-only, non-blocking");
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "close-on-exec");
	if (fd >= 0)
		close(fd);

	/* A FIFO nobody writes: open(O_RDONLY) would block for ever. */
	CHECK(mkfifo(tmp("fifo"), 0600) == 0, "mkfifo: %s", strerror(errno));
	CHECK_U64(safe_open(tmp("fifo"), 1 << 20, NULL), -EINVAL);
	CHECK_U64(safe_open("/dev/null", 1 << 20, NULL), -EINVAL);
	CHECK_U64(safe_open(tmpdir, 1 << 20, NULL), -EINVAL);

	/* A sparse file one byte over the cap: refused before anything is read. */
	fd = open(tmp("sparse"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, (1 << 20) + 1) == 0, "sparse file");
	if (fd >= 0)
		close(fd);
	CHECK_U64(safe_open(tmp("sparse"), 1 << 20, NULL), -EFBIG);
	fd = safe_open(tmp("sparse"), (1 << 20) + 1, NULL);
	CHECK(fd >= 0, "at the cap it opens: %d", fd);
	if (fd >= 0)
		close(fd);
	CHECK_U64(safe_open(tmp("missing"), 1, NULL), -ENOENT);

	safe_open__stats(after);
	CHECK_U64(after[SAFE_OPEN_NOT_REGULAR] - before[SAFE_OPEN_NOT_REGULAR], 3);
	CHECK_U64(after[SAFE_OPEN_TOO_BIG] - before[SAFE_OPEN_TOO_BIG], 1);
	CHECK_STR(safe_open__reason_name(SAFE_OPEN_TOO_BIG), "too_big");
	CHECK_STR(safe_open__strerror(-EINVAL), "not a regular file");
}

/*
 * The layout, under the scratch directory T:
 *   T/host/secret            "HOST": what only the host should read
 *   T/proc/42/root/          the process's root, R
 *   R/T/host/secret          "INSIDE": the same path seen inside the root
 *   T/host/only              "HOST": with no copy inside the root
 *   R/lib -> T/host          a directory swapped for an absolute symlink to the host's
 *   R/only -> T/host/only    a file swapped for one
 *   R/esc -> ../../../host/secret   a relative one climbing out
 *   R/loop -> loop
 *   R/fifo                   a FIFO behind a good name
 */
static char root[PATH_MAX], inside_host[2 * PATH_MAX], host[PATH_MAX];

static void make_root(void)
{
	char cmd[4 * PATH_MAX];

	snprintf(host, sizeof(host), "%s/host", tmpdir);
	snprintf(root, sizeof(root), "%s/proc/42/root", tmpdir);
	snprintf(inside_host, sizeof(inside_host), "%s%s", root, host);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s %s", host, inside_host);
	CHECK(system(cmd) == 0, "%s", cmd);
	write_file(tmp("host/secret"), "HOST");
	write_file(tmp("host/only"), "HOST");
	snprintf(cmd, sizeof(cmd), "%s/secret", inside_host);
	write_file(cmd, "INSIDE");
	snprintf(cmd, sizeof(cmd), "%s/lib", root);
	CHECK(symlink(host, cmd) == 0, "symlink lib");
	snprintf(cmd, sizeof(cmd), "%s/only", root);
	CHECK(symlink(tmp("host/only"), cmd) == 0, "symlink only");
	snprintf(cmd, sizeof(cmd), "%s/esc", root);
	CHECK(symlink("../../../host/secret", cmd) == 0, "symlink esc");
	snprintf(cmd, sizeof(cmd), "%s/loop", root);
	CHECK(symlink("loop", cmd) == 0, "symlink loop");
	snprintf(cmd, sizeof(cmd), "%s/fifo", root);
	CHECK(mkfifo(cmd, 0600) == 0, "mkfifo in root");
}

/* What safe_open__at(R, path) reads: "HOST" would be an escape. */
static const char *read_in_root(const char *path, int *err)
{
	static char buf[64];
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = safe_open__at(rfd, path, 1 << 20, NULL);

	*err = fd < 0 ? fd : 0;
	contents(fd, buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	close(rfd);
	return buf;
}

static void test_in_root(const char *mode)
{
	char path[3 * PATH_MAX];
	int err;

	/* An absolute symlink is followed from the root: R/T/host, not the host's T/host. */
	CHECK_STR(read_in_root("lib/secret", &err), "INSIDE");
	CHECK_STR(read_in_root("lib/only", &err), "");
	CHECK(err == -ENOENT, "%s: lib/only: %d", mode, err);
	CHECK_STR(read_in_root("only", &err), "");
	CHECK(err == -ENOENT, "%s: only: %d", mode, err);
	snprintf(path, sizeof(path), "%s/secret", host);
	CHECK_STR(read_in_root(path, &err), "INSIDE");
	/* ".." stops at the root. */
	snprintf(path, sizeof(path), "../../../../..%s/secret", host);
	CHECK_STR(read_in_root(path, &err), "INSIDE");
	CHECK_STR(read_in_root("../../../host/secret", &err), "");
	CHECK(err == -ENOENT, "%s: ../../../host/secret: %d", mode, err);
	CHECK_STR(read_in_root("esc", &err), "");
	CHECK(err == -ENOENT, "%s: esc: %d", mode, err);
	read_in_root("loop", &err);
	CHECK(err == -ELOOP, "%s: loop: %d", mode, err);
	read_in_root("fifo", &err);
	CHECK(err == -EINVAL, "%s: fifo: %d", mode, err);
	read_in_root("lib", &err);
	CHECK(err == -EINVAL, "%s: lib (a directory): %d", mode, err);
	/* Without following the last link: a symlink is not a regular file. */
	snprintf(path, sizeof(path), "%s/proc/42/root/lib/secret", tmpdir);
	err = safe_open__nofollow(path, 1 << 20, NULL);
	CHECK(err >= 0, "%s: nofollow follows links before the last: %d", mode, err);
	if (err >= 0)
		close(err);
	snprintf(path, sizeof(path), "%s/proc/42/root/esc", tmpdir);
	CHECK_U64(safe_open__nofollow(path, 1 << 20, NULL), -EINVAL);

	/* The same through a path string, as the symbolizer builds them. */
	snprintf(path, sizeof(path), "%s/proc/42/root/lib/only", tmpdir);
	CHECK_U64(safe_open(path, 1 << 20, NULL), -ENOENT);
	snprintf(path, sizeof(path), "%s/proc/42/root/esc", tmpdir);
	CHECK_U64(safe_open(path, 1 << 20, NULL), -ENOENT);
	snprintf(path, sizeof(path), "%s/proc/42/root%s/secret", tmpdir, host);
	err = safe_open(path, 1 << 20, NULL);
	CHECK(err >= 0, "%s: a file inside the root opens: %d", mode, err);
	if (err >= 0)
		close(err);
}

/* The walk by hand: what it hands back, whatever the kernel. */
static void test_walk(void)
{
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char path[3 * PATH_MAX];
	struct stat st, want;
	int fd;

	fd = safe_open__walk(rfd, "", false);
	CHECK(fd >= 0 && !fstat(fd, &st) && !stat(root, &want) && st.st_ino == want.st_ino,
	      "the empty path is the root");
	if (fd >= 0)
		close(fd);
	fd = safe_open__walk(rfd, "lib/./secret", false);
	CHECK(fd >= 0, "lib/./secret: %d", fd);
	if (fd >= 0)
		close(fd);
	/* As the kernel does: ".." after a symlink is the parent of its target (R/T). */
	CHECK_U64(safe_open__walk(rfd, "lib/../lib/secret", false), -ENOENT);
	CHECK_U64(safe_open__walk(rfd, "lib/only", false), -ENOENT);
	snprintf(path, sizeof(path), "%s/secret/..", host);
	CHECK_U64(safe_open__walk(rfd, path, false), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/secret", host);
	fd = safe_open__walk(rfd, path, false);
	snprintf(path, sizeof(path), "%s/secret", inside_host);
	CHECK(fd >= 0 && !fstat(fd, &st) && !stat(path, &want) && st.st_ino == want.st_ino,
	      "the walk finds the file inside the root");
	if (fd >= 0)
		close(fd);
	close(rfd);
}

/* A magic link (/proc/self/fd/N) is refused by openat2(): it would lead anywhere. */
static void test_magic_link(void)
{
	int rfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int hfd = open(tmp("host/secret"), O_RDONLY | O_CLOEXEC);
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "proc/self/fd/%d", hfd);
	fd = safe_open__at(rfd, path, 1 << 20, NULL);
	CHECK(fd == -ELOOP, "a magic link: %d", fd);
	if (fd >= 0)
		close(fd);
	close(hfd);
	close(rfd);
}

int main(void)
{
	uint64_t before[SAFE_OPEN_REASON__COUNT], after[SAFE_OPEN_REASON__COUNT];

	signal(SIGALRM, on_alarm);
	alarm(20);
	if (fixture_paths__init("test_safe_open")) {
		perror("mkdtemp");
		return 1;
	}
	test_plain_files();
	make_root();
	safe_open__stats(before);
	test_in_root("openat2");
	test_magic_link();
	safe_open__set_openat2(false);
	test_in_root("walk");
	test_walk();
	safe_open__set_openat2(true);
	safe_open__stats(after);
	CHECK_U64(after[SAFE_OPEN_UNSAFE_PATH] - before[SAFE_OPEN_UNSAFE_PATH], 3);
	safe_open__refused(SAFE_OPEN_LINE_LONG, "/tmp/perf-1.map\n\033[31mforged", "a test");
	return check_summary("test_safe_open");
}

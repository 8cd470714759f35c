// SPDX-License-Identifier: BSD-2-Clause
#include "base/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/log_text.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture (Linux 5.6) */
#endif

/* As the kernel's own limit on nested symlinks (MAXSYMLINKS). */
#define WALK_MAX_LINKS 40
/* Directories held open while walking, so that ".." goes back the way it came. */
#define WALK_MAX_DEPTH 128
/* openat2() says EAGAIN when a rename or mount raced with RESOLVE_IN_ROOT: try again. */
#define OPENAT2_TRIES 4
#define WARN_INTERVAL_NS (10 * 1000000000ULL)

static const char *const reason_names[SAFE_OPEN_REASON__COUNT] = {
	[SAFE_OPEN_NOT_REGULAR] = "not_regular", [SAFE_OPEN_TOO_BIG] = "too_big",
	[SAFE_OPEN_UNSAFE_PATH] = "unsafe_path", [SAFE_OPEN_SECTION_BIG] = "section_too_big",
	[SAFE_OPEN_LINE_LONG] = "line_too_long", [SAFE_OPEN_CRC_SKIPPED] = "crc_skipped",
};

/*
 * Process-wide, as the log level is: the capture thread, the process watcher and the unwind
 * loader all open processes' files, and /metrics wants one figure, not one per reader threaded
 * through every module that opens a file.
 */
static struct {
	pthread_mutex_t lock;
	uint64_t count[SAFE_OPEN_REASON__COUNT];
	uint64_t last_warn_ns[SAFE_OPEN_REASON__COUNT];
	uint64_t unsaid[SAFE_OPEN_REASON__COUNT];
} refusals = {.lock = PTHREAD_MUTEX_INITIALIZER};

static atomic_bool no_openat2;

const char *safe_open__reason_name(enum safe_open_reason why)
{
	return (unsigned)why < SAFE_OPEN_REASON__COUNT ? reason_names[why] : "unknown";
}

const char *safe_open__strerror(int err)
{
	if (err == -EINVAL)
		return "not a regular file";
	if (err == -EFBIG)
		return "over its size cap";
	if (err == -ELOOP)
		return "a symlink loop or a link out of its root";
	return strerror(err < 0 ? -err : err);
}

void safe_open__refused(enum safe_open_reason why, const char *path, const char *detail)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC), unsaid = 0;
	bool say = false;

	if ((unsigned)why >= SAFE_OPEN_REASON__COUNT)
		return;
	pthread_mutex_lock(&refusals.lock);
	refusals.count[why]++;
	if (!refusals.last_warn_ns[why] || now - refusals.last_warn_ns[why] >= WARN_INTERVAL_NS) {
		say = true;
		unsaid = refusals.unsaid[why];
		refusals.unsaid[why] = 0;
		refusals.last_warn_ns[why] = now ? now : 1;
	} else {
		refusals.unsaid[why]++;
	}
	pthread_mutex_unlock(&refusals.lock);
	if (!say)
		return;
	/* The path is the process's choice: log.c writes its control characters as \xNN. */
	if (unsaid)
		log_warn("%s: not read: %s (%s; %" PRIu64 " more since the last such warning)",
			 path ? path : "", detail, safe_open__reason_name(why), unsaid);
	else
		log_warn("%s: not read: %s (%s)", path ? path : "", detail,
			 safe_open__reason_name(why));
}

void safe_open__stats(uint64_t out[SAFE_OPEN_REASON__COUNT])
{
	pthread_mutex_lock(&refusals.lock);
	memcpy(out, refusals.count, sizeof(refusals.count));
	pthread_mutex_unlock(&refusals.lock);
}

void safe_open__set_openat2(bool use)
{
	atomic_store(&no_openat2, !use);
}

/* Count and log what safe_open() refuses itself; other errors (ENOENT...) are the caller's. */
static int refuse(int err, const char *path)
{
	if (err == -EINVAL)
		safe_open__refused(SAFE_OPEN_NOT_REGULAR, path, "not a regular file");
	else if (err == -EFBIG)
		safe_open__refused(SAFE_OPEN_TOO_BIG, path, "over its size cap");
	else if (err == -ELOOP)
		safe_open__refused(SAFE_OPEN_UNSAFE_PATH, path,
				   "a symlink loop, a magic link or too deep");
	return err;
}

/*
 * From an O_PATH fd (consumed) to a readable one: a regular file of at most max_size bytes,
 * opened again through /proc/self/fd, which opens the very inode the O_PATH fd holds whatever
 * happened to the path since.
 */
static int open_checked(int pfd, uint64_t max_size, struct stat *out)
{
	char self[64];
	struct stat st, st2;
	int fd, err;

	if (fstat(pfd, &st)) {
		err = -errno;
		close(pfd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max_size) {
		close(pfd);
		return -EFBIG;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (err)
		return err;
	/* The same inode by construction; checked, as it costs nothing. */
	if (fstat(fd, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino ||
	    !S_ISREG(st2.st_mode) || (uint64_t)st2.st_size > max_size) {
		close(fd);
		return -EINVAL;
	}
	if (out)
		*out = st2;
	return fd;
}

/* Whether name is "." or "..", of length len. */
static bool is_dot(const char *name, size_t len, size_t dots)
{
	return len == dots && !strncmp(name, "..", dots);
}

/* rest = target "/" rest, in place; -ENAMETOOLONG when it does not fit. */
static int splice_link(char *rest, size_t cap, const char *after, const char *target)
{
	char tmp[2 * PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s/%s", target, after);

	if (n < 0 || (size_t)n >= sizeof(tmp) || (size_t)n >= cap)
		return -ENAMETOOLONG;
	memcpy(rest, tmp, (size_t)n + 1);
	return 0;
}

int safe_open__walk(int root_fd, const char *path, bool nofollow)
{
	char rest[2 * PATH_MAX], target[PATH_MAX];
	int dirs[WALK_MAX_DEPTH + 1];
	bool is_dir[WALK_MAX_DEPTH + 1];
	size_t depth = 0, pos = 0;
	int links = 0, err = 0, fd;

	if (!path || strlen(path) >= sizeof(rest))
		return -ENAMETOOLONG;
	strcpy(rest, path);
	dirs[0] = root_fd; /* borrowed: never closed here */
	is_dir[0] = true;
	for (;;) {
		char name[NAME_MAX + 1];
		struct stat st;
		size_t len;
		ssize_t n;

		while (rest[pos] == '/')
			pos++;
		if (!rest[pos])
			break;
		len = strcspn(rest + pos, "/");
		if (len > NAME_MAX) {
			err = -ENAMETOOLONG;
			goto out;
		}
		memcpy(name, rest + pos, len);
		name[len] = '\0';
		pos += len;
		if (!is_dir[depth]) {
			err = -ENOTDIR;
			goto out;
		}
		if (is_dot(name, len, 1))
			continue;
		if (is_dot(name, len, 2)) {
			/* Back to where it came from; at the root, "/.." is "/". */
			if (depth)
				close(dirs[depth--]);
			continue;
		}
		fd = openat(dirs[depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			err = -errno;
			if (fd >= 0)
				close(fd);
			goto out;
		}
		if (S_ISLNK(st.st_mode) && !(nofollow && !rest[pos + strspn(rest + pos, "/")])) {
			/* An empty name reads the link the O_PATH fd holds (Linux 2.6.39). */
			n = readlinkat(fd, "", target, sizeof(target) - 1);
			err = n < 0 ? -errno : 0;
			close(fd);
			if (!err && (++links > WALK_MAX_LINKS || !n))
				err = n ? -ELOOP : -ENOENT;
			if (err)
				goto out;
			target[n] = '\0';
			/* An absolute target starts again from the root, never from the host's "/".
			 */
			if (target[0] == '/')
				while (depth)
					close(dirs[depth--]);
			err = splice_link(rest, sizeof(rest), rest + pos, target);
			if (err)
				goto out;
			pos = 0;
			continue;
		}
		if (depth == WALK_MAX_DEPTH) {
			close(fd);
			err = -ELOOP;
			goto out;
		}
		dirs[++depth] = fd;
		is_dir[depth] = S_ISDIR(st.st_mode);
	}
	/* What path names: the last directory pushed (handed over), or the root itself. */
	if (depth) {
		fd = dirs[depth--];
	} else {
		fd = openat(root_fd, ".", O_PATH | O_CLOEXEC);
		if (fd < 0)
			err = -errno;
	}
out:
	while (depth)
		close(dirs[depth--]);
	return err ? err : fd;
}

/* An O_PATH fd on path inside root_fd, or -errno. */
static int resolve_in_root(int root_fd, const char *path, bool nofollow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = -1;

	if (!atomic_load(&no_openat2)) {
		for (int i = 0; i < OPENAT2_TRIES; i++) {
			fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
			if (fd >= 0 || errno != EAGAIN)
				break;
		}
		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS)
			return -errno;
		/* Before Linux 5.6 (or a seccomp profile without it): walk by hand from now on. */
		atomic_store(&no_openat2, true);
	}
	return safe_open__walk(root_fd, path, nofollow);
}

static int open_at(int root_fd, const char *path, uint64_t max_size, bool nofollow, struct stat *st)
{
	int pfd = resolve_in_root(root_fd, path, nofollow);

	if (pfd < 0)
		return pfd == -ELOOP ? refuse(pfd, path) : pfd;
	pfd = open_checked(pfd, max_size, st);
	return pfd < 0 ? refuse(pfd, path) : pfd;
}

int safe_open__at(int root_fd, const char *path, uint64_t max_size, struct stat *st)
{
	return open_at(root_fd, path, max_size, false, st);
}

int safe_open__at_nofollow(int root_fd, const char *path, uint64_t max_size, struct stat *st)
{
	return open_at(root_fd, path, max_size, true, st);
}

/*
 * Where a process's root ends in path: just past the first "/<digits>/root" followed by '/' or
 * the end (the caller's proc root comes before it; what the process chose only after). 0 when
 * the path does not go through one.
 */
static size_t root_prefix(const char *path)
{
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
		size_t digits = strspn(p + 1, "0123456789");
		const char *r = p + 1 + digits;

		if (digits && !strncmp(r, "/root", 5) && (r[5] == '/' || !r[5]))
			return (size_t)(r + 5 - path);
	}
	return 0;
}

/* An O_PATH fd on what path names, through a process's root inside it; or -errno. */
static int find(const char *path, bool nofollow)
{
	char root[PATH_MAX];
	size_t n = root_prefix(path);
	int fd, root_fd;

	if (!n) {
		fd = open(path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
		return fd < 0 ? -errno : fd;
	}
	if (n >= sizeof(root))
		return -ENAMETOOLONG;
	memcpy(root, path, n);
	root[n] = '\0';
	/* The kernel's link to the process's root: followed, it is ours to trust. */
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	fd = resolve_in_root(root_fd, path + n, nofollow);
	close(root_fd);
	return fd;
}

static int open_path(const char *path, uint64_t max_size, bool nofollow, struct stat *st)
{
	int fd;

	if (!path)
		return -EINVAL;
	fd = find(path, nofollow);
	if (fd >= 0)
		fd = open_checked(fd, max_size, st);
	return fd < 0 ? refuse(fd, path) : fd;
}

int safe_open__stat(const char *path, struct stat *st)
{
	int fd = path ? find(path, false) : -EINVAL;
	int err = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		err = -errno;
	close(fd);
	return err;
}

int safe_open(const char *path, uint64_t max_size, struct stat *st)
{
	return open_path(path, max_size, false, st);
}

int safe_open__nofollow(const char *path, uint64_t max_size, struct stat *st)
{
	return open_path(path, max_size, true, st);
}

// SPDX-License-Identifier: BSD-2-Clause
#include "process/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/file_read.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* A cgroup's text has a line per hierarchy; a few KiB even on a hybrid host. */
#define CGROUP_TEXT_MAX 8192

/* Does the path have a ".." component? */
static bool has_dotdot(const char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && p[j] != '/')
			j++;
		if (j - i == 2 && p[i] == '.' && p[i + 1] == '.')
			return true;
		i = j + 1;
	}
	return false;
}

int cgroup__v2_path(const char *text, char *out, size_t len)
{
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);

		if (n >= 3 && !memcmp(line, "0::", 3)) {
			const char *p = line + 3;

			n -= 3;
			/* "/.." leads out of the root this process sees: not a path to open. */
			if (!n || p[0] != '/' || has_dotdot(p, n))
				return -EINVAL;
			if (n + 1 > len)
				return -ENAMETOOLONG;
			memcpy(out, p, n);
			out[n] = '\0';
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

const char *cgroup__v2_root(void)
{
	static const char *const roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	struct statfs sf;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (statfs(roots[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
			return roots[i];
	return NULL;
}

/* The v2 path of pid's cgroup. */
static int read_path(const char *proc_root, pid_t pid, char *out, size_t len)
{
	char file[PATH_MAX], text[CGROUP_TEXT_MAX + 1];
	ssize_t n;
	int fd;

	if (snprintf(file, sizeof(file), "%s/%d/cgroup", proc_root, (int)pid) >= (int)sizeof(file))
		return -ENAMETOOLONG;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = file__read_upto(fd, text, CGROUP_TEXT_MAX);
	close(fd);
	if (n < 0)
		return (int)n;
	text[n] = '\0';
	return cgroup__v2_path(text, out, len);
}

int cgroup__id(const char *proc_root, const char *v2_root, pid_t pid, uint64_t *id, char *path,
	       size_t len)
{
	char first[PATH_MAX], again[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int err = read_path(proc_root, pid, first, sizeof(first));

	if (err)
		return err;
	if (snprintf(dir, sizeof(dir), "%s%s", v2_root, first) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	err = read_path(proc_root, pid, again, sizeof(again));
	if (err)
		return err;
	if (strcmp(first, again))
		return -EXDEV;
	if (path && snprintf(path, len, "%s", first) >= (int)len)
		return -ENAMETOOLONG;
	*id = st.st_ino;
	return 0;
}

bool cgroup__alive(const char *v2_root, const char *path, uint64_t id)
{
	char dir[PATH_MAX];
	struct stat st;

	if (snprintf(dir, sizeof(dir), "%s%s", v2_root, path) >= (int)sizeof(dir))
		return false;
	return stat(dir, &st) == 0 && st.st_ino == id;
}

// SPDX-License-Identifier: BSD-2-Clause
/* A process's cgroup v2 path and id (process/cgroup.h): the /proc/PID/cgroup text, and the id as
 * the inode of the cgroup's directory, on a fake /proc and a fake cgroup2fs root. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "process/cgroup.h"

static void test_v2_path(void)
{
	char out[64];

	CHECK(cgroup__v2_path("0::/system.slice/nginx.service\n", out, sizeof(out)) == 0,
	      "unified");
	CHECK_STR(out, "/system.slice/nginx.service");
	/* A hybrid host: v1 lines first, the unified one last, no newline at the end. */
	CHECK(cgroup__v2_path("12:cpu,cpuacct:/docker/abc\n1:name=systemd:/x.scope\n0::/x.scope",
			      out, sizeof(out)) == 0,
	      "hybrid");
	CHECK_STR(out, "/x.scope");
	CHECK(cgroup__v2_path("0::/\n", out, sizeof(out)) == 0, "root");
	CHECK_STR(out, "/");
	CHECK(cgroup__v2_path("12:cpu:/a\n1:name=systemd:/b\n", out, sizeof(out)) == -ENOENT,
	      "v1 only: no unified path");
	/* Seen from another cgroup namespace, the path climbs out of its root. */
	CHECK(cgroup__v2_path("0::/../../kubepods/pod1\n", out, sizeof(out)) == -EINVAL,
	      "'..' component refused");
	CHECK(cgroup__v2_path("0::/a/..\n", out, sizeof(out)) == -EINVAL, "trailing '..' refused");
	CHECK(cgroup__v2_path("0::/a/..b/c\n", out, sizeof(out)) == 0, "'..b' is a name");
	CHECK(cgroup__v2_path("0::\n", out, sizeof(out)) == -EINVAL, "empty path refused");
	CHECK(cgroup__v2_path("0::relative\n", out, sizeof(out)) == -EINVAL, "relative refused");
	CHECK(cgroup__v2_path("0::/a-rather-long-cgroup-name\n", out, 8) == -ENAMETOOLONG,
	      "not cut to fit");
	CHECK(cgroup__v2_path("", out, sizeof(out)) == -ENOENT, "empty text");
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void test_id(void)
{
	char dir[] = "/tmp/hostprof-cgroup-XXXXXX", proc[PATH_MAX], root[PATH_MAX], path[PATH_MAX],
	     file[PATH_MAX];
	uint64_t id = 0;
	struct stat st;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(root, sizeof(root), "%s/cg", dir);
	snprintf(file, sizeof(file), "%s/proc/42", dir);
	mkdir(proc, 0700);
	mkdir(file, 0700);
	mkdir(root, 0700);
	snprintf(path, sizeof(path), "%s/cg/system.slice", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/cg/system.slice/batch.service", dir);
	mkdir(path, 0700);
	CHECK(stat(path, &st) == 0, "stat");
	snprintf(file, sizeof(file), "%s/proc/42/cgroup", dir);
	CHECK(write_file(file, "0::/system.slice/batch.service\n") == 0, "write");

	CHECK(cgroup__id(proc, root, 42, &id, path, sizeof(path)) == 0, "id of PID 42");
	CHECK_U64(id, st.st_ino);
	CHECK_STR(path, "/system.slice/batch.service");
	CHECK(cgroup__alive(root, path, id), "its directory is there");
	CHECK(!cgroup__alive(root, path, id + 1), "another id is another cgroup");
	CHECK(cgroup__id(proc, root, 43, &id, NULL, 0) == -ESRCH, "a PID that is gone");
	/* A cgroup that no longer exists, and a path that is a file. */
	CHECK(write_file(file, "0::/system.slice/gone.service\n") == 0, "write");
	CHECK(cgroup__id(proc, root, 42, &id, NULL, 0) == -ENOENT, "no such cgroup");
	CHECK(write_file(file, "0::/../escape\n") == 0, "write");
	CHECK(cgroup__id(proc, root, 42, &id, NULL, 0) == -EINVAL, "'..' refused");

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK(system(path) == 0, "cleanup");
}

int main(void)
{
	test_v2_path();
	test_id();
	return check_summary("test_cgroup");
}

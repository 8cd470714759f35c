/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A process's cgroup on the unified hierarchy (cgroup v2) and its id: the number the kernel's
 * bpf_get_current_cgroup_id() gives for the process's tasks, which is the inode number of the
 * cgroup's directory in cgroup2fs. The drop filter skips whole cgroups by it.
 */
#ifndef HOSTPROF_CGROUP_H
#define HOSTPROF_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The path of the "0::" line in the text of /proc/PID/cgroup, into out. 0, -ENOENT when there is
 * none (a host with cgroup v1 only), -EINVAL for a path that is not absolute or has a ".."
 * component (a cgroup outside the reader's cgroup namespace), -ENAMETOOLONG.
 */
int cgroup__v2_path(const char *text, char *out, size_t len);

/*
 * Where cgroup2fs is mounted: /sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a
 * hybrid one; NULL when neither is cgroup2fs. Looked up at each call.
 */
const char *cgroup__v2_root(void);

/*
 * The id of pid's cgroup: its path from <proc_root>/PID/cgroup, the inode number of
 * <v2_root>/<path>, and the path read again to be sure the process did not move between the
 * two. The path goes into path (may be NULL). 0 or -errno; -EXDEV when it moved, -ENOENT as in
 * cgroup__v2_path(), -ESRCH when the process is gone.
 */
int cgroup__id(const char *proc_root, const char *v2_root, pid_t pid, uint64_t *id, char *path,
	       size_t len);

/* Is the directory <v2_root>/<path> still the cgroup with this id? (It was removed, else.) */
bool cgroup__alive(const char *v2_root, const char *path, uint64_t id);

#endif /* HOSTPROF_CGROUP_H */

// SPDX-License-Identifier: BSD-2-Clause
#include "agent/privileges.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Raw capget/capset: libcap is not a dependency, and these two calls are all it would do. */
static int caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capget, &hdr, data) ? -errno : 0;
}

static int caps_set(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

static bool has(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].permitted & (1U << (cap % 32));
}

/* Whether this kernel knows the capability (PR_CAPBSET_READ fails with EINVAL otherwise). */
static bool kernel_knows(int cap)
{
	return prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0;
}

static const struct {
	int cap;
	const char *name;
} wanted[] = {
	{CAP_BPF, "CAP_BPF"},
	{CAP_PERFMON, "CAP_PERFMON"},
	{CAP_SYS_PTRACE, "CAP_SYS_PTRACE"},
	{CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH"},
	{CAP_SYSLOG, "CAP_SYSLOG"},
	{CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE"},
	{CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
	{CAP_NET_BIND_SERVICE, "CAP_NET_BIND_SERVICE"},
};

/*
 * Debian's and Ubuntu's kernels add perf_event_paranoid level 3 (their default), at which opening
 * any perf event needs CAP_SYS_ADMIN on the releases before their patch learned CAP_PERFMON
 * (Debian 11's 5.10 among them): the agent reopens its events when a reload changes the capture,
 * so it keeps CAP_SYS_ADMIN there.
 */
static bool perf_needs_sys_admin(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level > 2;
}

int privileges__raise_memlock(void)
{
	struct rlimit r = {RLIM_INFINITY, RLIM_INFINITY};

	return setrlimit(RLIMIT_MEMLOCK, &r) ? -errno : 0;
}

int privileges__drop(bool bind_low_port, char *kept, size_t len)
{
	struct __user_cap_data_struct cur[2], next[2] = {{0}};
	bool old_kernel = !kernel_knows(CAP_BPF) || !kernel_knows(CAP_CHECKPOINT_RESTORE) ||
			  perf_needs_sys_admin();
	size_t o = 0;
	int err;

	kept[0] = '\0';
	err = caps_get(cur);
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		int cap = wanted[i].cap;

		if ((cap == CAP_SYS_ADMIN && !old_kernel) ||
		    (cap == CAP_NET_BIND_SERVICE && !bind_low_port))
			continue;
		if (!kernel_knows(cap) || !has(cur, cap))
			continue;
		next[cap / 32].permitted |= 1U << (cap % 32);
		next[cap / 32].effective |= 1U << (cap % 32);
		o += snprintf(kept + o, o < len ? len - o : 0, "%s%s", o ? " " : "",
			      wanted[i].name);
	}
	/* No exec can give anything back, not even a setuid binary (the agent runs none). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/* The bounding set too, while CAP_SETPCAP is still effective; under systemd or in a pod it
	 * is already the unit's or the container's, and EPERM here changes nothing. */
	for (int cap = 0; kernel_knows(cap); cap++)
		if (!(next[cap / 32].permitted & (1U << (cap % 32))))
			prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return caps_set(next);
}

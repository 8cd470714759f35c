/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's capabilities. Capabilities belong to threads, and a thread starts with its
 * creator's: so the agent drops before it starts any thread, keeping only what the loop, a
 * reload and its setup need, and every thread it starts (HTTP server, exporters, kubelet client,
 * process watcher, debuginfod) has no more. PR_SET_NO_NEW_PRIVS is set and the bounding set cut
 * (where CAP_SETPCAP allows), so no exec could give anything back. Run as plain root, the agent
 * then holds a handful of capabilities instead of all of them.
 *
 * Kept, each only if the process has it:
 *   CAP_BPF, CAP_PERFMON      load the programs and open the perf events, at start and when a
 *                             SIGHUP changes the capture settings (map reads on open fds need
 *                             neither)
 *   CAP_SYS_PTRACE            /proc/PID/maps, environ, root and mem, process_vm_readv()
 *   CAP_DAC_READ_SEARCH       binaries, debug files and /proc files of other users
 *   CAP_SYSLOG                /proc/kallsyms, read again when a reload rebuilds the capture
 *   CAP_CHECKPOINT_RESTORE    /proc/PID/map_files (container and deleted binaries)
 *   CAP_SYS_ADMIN             only on kernels that predate CAP_BPF or CAP_CHECKPOINT_RESTORE
 *                             (before 5.8 / 5.9), where it stands in for them, and where
 *                             perf_event_paranoid is above 2 (Debian's and Ubuntu's level 3:
 *                             their older kernels open perf events for CAP_SYS_ADMIN alone)
 *   CAP_NET_BIND_SERVICE      only when http_listen's port is below 1024, until it is bound
 *                             (the main thread drops it then; the HTTP thread keeps it)
 * Dropped, among others: CAP_SYS_RESOURCE (RLIMIT_MEMLOCK, which kernels before 5.11 charge BPF
 * maps to, is raised first and stays), CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_NET_ADMIN,
 * CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_KILL, CAP_SYS_MODULE.
 */
#ifndef HOSTPROF_PRIVILEGES_H
#define HOSTPROF_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>

/* RLIMIT_MEMLOCK to unlimited, while CAP_SYS_RESOURCE is still there. 0 or -errno. */
int privileges__raise_memlock(void);

/*
 * Drop the calling thread (and the threads it starts from now on) to the set above, with
 * CAP_NET_BIND_SERVICE when bind_low_port. kept gets the names of what stayed ("CAP_BPF
 * CAP_PERFMON ..."). 0, or -errno when the kernel refused (nothing is lost then).
 */
int privileges__drop(bool bind_low_port, char *kept, size_t len);

#endif /* HOSTPROF_PRIVILEGES_H */

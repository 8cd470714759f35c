/* SPDX-License-Identifier: BSD-2-Clause */
/* Waiting for BPF programs in flight, before userspace reuses what they may still be reading. */
#ifndef HOSTPROF_BPF_SYNC_H
#define HOSTPROF_BPF_SYNC_H

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Wait until no BPF program that started before this call can still be running. Our programs
 * run from perf interrupts and tracepoints, inside RCU read-side sections, so one RCU grace
 * period is enough, and membarrier(MEMBARRIER_CMD_GLOBAL) is exactly synchronize_rcu(). It
 * returns -EINVAL on nohz_full kernels; there a sleep far longer than any program run
 * (microseconds) does the job.
 */
static inline void bpf_sync__wait_for_programs(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0) {
		struct timespec ts = {.tv_nsec = 20 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
}

#endif /* HOSTPROF_BPF_SYNC_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Clock readings in nanoseconds, as BPF's bpf_ktime_get_ns() gives CLOCK_MONOTONIC, and the
 * monotonic milliseconds of deadlines and timeouts.
 */
#ifndef HOSTPROF_CLOCK_H
#define HOSTPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock__ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline int64_t clock__mono_ms(void)
{
	return (int64_t)(clock__ns(CLOCK_MONOTONIC) / 1000000);
}

#endif /* HOSTPROF_CLOCK_H */

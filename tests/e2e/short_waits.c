// SPDX-License-Identifier: BSD-2-Clause
/*
 * Many short waits, each far below the default wait-sampling period (10.1 ms at 99 Hz): one
 * thread alternates 20 us of work (in work) with a 100 us nanosleep (in nap), for SECONDS; every
 * TAIL_EVERY-th nap is one of 8 ms instead (in tail_nap), the few long waits among short ones
 * that a loaded host's run-queue delays make. It writes what it measured itself into OUTFILE:
 * "naps N nap_ns NS tail_naps N tail_ns NS", the number of naps of each kind and the time off
 * the CPU in them. A profiler that samples short waits in proportion to their length must find
 * about the same totals (and counts) in nap's and tail_nap's off-CPU stacks.
 *
 * With --long, long waits that follow short ones instead: 30 naps of 20 us (in short_nap), then
 * one of 50 ms (in long_nap), and "long_naps N long_ns NS" for the long ones. A profiler that
 * walks a thread's stacks at switch-out by chance when its recent waits were short (see struct
 * hp_offcpu_start) leaves most long naps unwalked when they begin; their user stacks must still
 * be found (Linux 6.18: when the thread returns to user mode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

/* One nap in this many is a tail_nap. */
#define TAIL_EVERY 129

volatile unsigned long sink;

static long long clock_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* How long a nanosleep of ns kept the thread off the CPU: the time it took less the CPU time it
 * used (entering and leaving the system call, setting the timer: ~7% of a 160 us nap on a VM).
 * Its callers' frames are what the tests look for. */
NOINLINE long long sleep_ns(long ns)
{
	struct timespec t = {0, ns};
	long long t0 = now_ns(), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	KEEP_FRAME();
	nanosleep(&t, NULL);
	return now_ns() - t0 - (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
}

NOINLINE void work(void)
{
	long long end = now_ns() + 20000;
	unsigned long acc = 1;

	KEEP_FRAME();
	while (now_ns() < end)
		SPIN(200, acc);
	sink = acc;
}

/* The store after each call keeps it from being a tail call, which would hide these frames. */
NOINLINE long long nap(void)
{
	long long took = sleep_ns(100000);

	sink++;
	return took;
}

NOINLINE long long tail_nap(void)
{
	long long took = sleep_ns(8000000);

	sink++;
	return took;
}

NOINLINE long long short_nap(void)
{
	long long took = sleep_ns(20000);

	sink++;
	return took;
}

NOINLINE long long long_nap(void)
{
	long long took = sleep_ns(50000000);

	sink++;
	return took;
}

int main(int argc, char **argv)
{
	int after_short = argc == 4 && !strcmp(argv[1], "--long");
	long long end, total = 0, n = 0, tail_total = 0, tails = 0;
	FILE *f;

	if (argc != 3 + after_short) {
		fprintf(stderr, "usage: short_waits [--long] SECONDS OUTFILE\n");
		return 2;
	}
	end = now_ns() + (long long)(atof(argv[1 + after_short]) * 1e9);
	while (now_ns() < end) {
		if (after_short) {
			for (int i = 0; i < 30; i++)
				short_nap();
			total += long_nap();
		} else if ((n + tails + 1) % TAIL_EVERY == 0) {
			work();
			tail_total += tail_nap();
			tails++;
			continue;
		} else {
			work();
			total += nap();
		}
		n++;
	}
	f = fopen(argv[2 + after_short], "w");
	if (!f)
		return 1;
	if (after_short)
		fprintf(f, "long_naps %lld long_ns %lld\n", n, total);
	else
		fprintf(f, "naps %lld nap_ns %lld tail_naps %lld tail_ns %lld\n", n, total, tails,
			tail_total);
	return fclose(f) ? 1 : 0;
}

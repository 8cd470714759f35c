// SPDX-License-Identifier: BSD-2-Clause
/*
 * Many short waits, each far below the default wait-sampling period (10.1 ms at 99 Hz): one
 * thread alternates 20 us of work (in work) with a 100 us nanosleep (in nap), for SECONDS, and
 * writes what it measured itself into OUTFILE: "naps N nap_ns NS", the number of naps and the
 * time spent in them. A profiler that samples short waits in proportion to their length must find
 * about the same total (and count) in nap's off-CPU stacks.
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

volatile unsigned long sink;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* How long a nanosleep of ns took. Its callers' frames are what the tests look for. */
NOINLINE long long sleep_ns(long ns)
{
	struct timespec t = {0, ns};
	long long t0 = now_ns();

	KEEP_FRAME();
	nanosleep(&t, NULL);
	return now_ns() - t0;
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
	long long end, total = 0, n = 0;
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
		} else {
			work();
			total += nap();
		}
		n++;
	}
	f = fopen(argv[2 + after_short], "w");
	if (!f)
		return 1;
	fprintf(f, "%s %lld %s %lld\n", after_short ? "long_naps" : "naps", n,
		after_short ? "long_ns" : "nap_ns", total);
	return fclose(f) ? 1 : 0;
}

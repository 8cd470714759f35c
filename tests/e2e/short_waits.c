// SPDX-License-Identifier: BSD-2-Clause
/*
 * Many short waits, each far below the default wait-sampling period (10.1 ms at 99 Hz): one
 * thread alternates 20 us of work (in work) with a 100 us nanosleep (in nap), for argv[1] seconds,
 * and writes what it measured itself into argv[2]: "naps N nap_ns NS", the number of naps and the
 * time spent in them. A profiler that samples short waits in proportion to their length must find
 * about the same total (and count) in nap's off-CPU stacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

volatile unsigned long sink;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
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

NOINLINE long long nap(void)
{
	struct timespec t = {0, 100000};
	long long t0 = now_ns();

	KEEP_FRAME();
	nanosleep(&t, NULL);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	long long end, total = 0, n = 0;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: short_waits SECONDS OUTFILE\n");
		return 2;
	}
	end = now_ns() + (long long)(atof(argv[1]) * 1e9);
	while (now_ns() < end) {
		work();
		total += nap();
		n++;
	}
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "naps %lld nap_ns %lld\n", n, total);
	return fclose(f) ? 1 : 0;
}

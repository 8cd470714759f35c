// SPDX-License-Identifier: BSD-2-Clause
/*
 * One thread that computes about 30% of the time (in compute) and sleeps about 70% (in rest,
 * through nanosleep), for argv[1] seconds. The cycle is 100 ms, far from the sampling period
 * (10.1 ms at 99 Hz), so the cpu samples do not alias with the workload's rhythm.
 */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

NOINLINE void compute(double seconds)
{
	double end = now() + seconds;
	unsigned long acc = 1;

	KEEP_FRAME();
	while (now() < end)
		SPIN(2000, acc);
	sink = acc;
}

NOINLINE void rest(double seconds)
{
	struct timespec t = {0, (long)(seconds * 1e9)};

	KEEP_FRAME();
	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);

	while (now() < end) {
		compute(0.030);
		rest(0.070);
	}
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp: the -fomit-frame-pointer workload of the unwinding tests. main calls down through three
 * levels of its own functions into libnofp.so (also built without frame pointers), whose leaves
 * split the CPU time 1:2:3 in calls of 50-150 ms (see cpu_ratio.c for why calls are that long).
 * Every level does work after its call, so that no call becomes a jump and every frame is real.
 *
 * Usage: nofp [SECONDS]   (0 or no argument: run until killed)
 */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

unsigned long nofp_leaf_a(unsigned long unit);
unsigned long nofp_leaf_b(unsigned long unit);
unsigned long nofp_leaf_c(unsigned long unit);

volatile unsigned long total;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Three levels, each with callee-saved registers and locals of its own. */
NOINLINE unsigned long level_three(unsigned long unit, int which)
{
	unsigned long r;

	if (which == 0)
		r = nofp_leaf_a(unit);
	else if (which == 1)
		r = nofp_leaf_b(unit);
	else
		r = nofp_leaf_c(unit);
	total += r;
	return r ^ unit;
}

NOINLINE unsigned long level_two(unsigned long unit, int which)
{
	unsigned long r = level_three(unit, which);

	total += r >> 1;
	return r + which;
}

NOINLINE unsigned long level_one(unsigned long unit)
{
	unsigned long r = 0;

	for (int which = 0; which < 3; which++)
		r += level_two(unit, which);
	total += r;
	return r;
}

/* Iterations that take @seconds of CPU time in nofp_leaf_a (the best of three probes). */
static unsigned long calibrate(double seconds)
{
	const unsigned long probe = 1000000;
	double best = 0, t0, dt;

	for (int i = 0; i < 3; i++) {
		t0 = now();
		total += nofp_leaf_a(probe);
		dt = now() - t0;
		if (dt > 0 && (best == 0 || dt < best))
			best = dt;
	}
	return best > 0 ? (unsigned long)(probe * seconds / best) + 1 : probe;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	unsigned long unit = calibrate(0.050);
	double deadline = now() + seconds;

	for (;;) {
		total += level_one(unit);
		if (seconds > 0 && now() >= deadline)
			break;
	}
	return (int)(total & 1) * 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * libhpwork.so: the burn functions of lib_ratio, in a shared library so that the profiler has to
 * resolve frames in a DSO mapped at a random address. CPU time splits 1:1:2 between lib_burn_x,
 * lib_burn_y and lib_burn_z (same loop body, iteration counts in that ratio). The caller picks
 * the unit; lib_ratio uses about 75 ms, for the reason given at the top of cpu_ratio.c.
 */
#include <time.h>

#include "workload.h"

volatile unsigned long hpwork_sink;

NOINLINE void lib_burn_x(unsigned long unit)
{
	unsigned long acc = hpwork_sink;

	KEEP_FRAME();
	SPIN(unit * 1, acc);
	hpwork_sink = acc;
}

NOINLINE void lib_burn_y(unsigned long unit)
{
	unsigned long acc = hpwork_sink ^ 1;

	KEEP_FRAME();
	SPIN(unit * 1, acc);
	hpwork_sink = acc;
}

NOINLINE void lib_burn_z(unsigned long unit)
{
	unsigned long acc = hpwork_sink;

	KEEP_FRAME();
	SPIN(unit * 2, acc);
	hpwork_sink = acc;
}

/* Iterations of SPIN that take @seconds of CPU time on this machine (the best of three probes). */
NOINLINE unsigned long hpwork_calibrate(double seconds)
{
	const unsigned long probe = 1000000;
	unsigned long acc = hpwork_sink;
	struct timespec t0, t1;
	double best = 0, dt;
	int i;

	for (i = 0; i < 3; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		SPIN(probe, acc);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (dt > 0 && (best == 0 || dt < best))
			best = dt;
	}
	hpwork_sink = acc;
	return best > 0 ? (unsigned long)(probe * seconds / best) + 1 : probe;
}

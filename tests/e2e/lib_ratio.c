// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib_ratio: calls the burn functions of libhpwork.so (found through an $ORIGIN rpath) so that
 * CPU time splits 1:1:2 between lib_burn_x, lib_burn_y and lib_burn_z, in calls of 75-150 ms.
 *
 * Usage: lib_ratio [SECONDS]   (0 or no argument: run until killed)
 */
#include <stdlib.h>
#include <time.h>

/* From libhpwork.so (tests/e2e/hpwork.c). */
void lib_burn_x(unsigned long unit);
void lib_burn_y(unsigned long unit);
void lib_burn_z(unsigned long unit);
unsigned long hpwork_calibrate(double seconds);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	/* 75 ms units: long calls keep the sampled shares steady (see cpu_ratio.c). */
	unsigned long unit = hpwork_calibrate(0.075);
	double deadline = now() + seconds;

	for (;;) {
		lib_burn_x(unit);
		lib_burn_y(unit);
		lib_burn_z(unit);
		if (seconds > 0 && now() >= deadline)
			break;
	}
	return 0;
}

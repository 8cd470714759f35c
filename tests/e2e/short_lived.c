// SPDX-License-Identifier: BSD-2-Clause
/*
 * short_lived: burns CPU in burn_until_exit for SECONDS, then exits. Used to check a capture whose
 * target exits in the middle, and the command mode. Built as a non-PIE executable (ET_EXEC), so
 * the suite also covers binaries loaded at their link address.
 *
 * Usage: short_lived SECONDS
 */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spins in chunks of about 0.2 ms between clock reads, so nearly all samples land here. */
NOINLINE void burn_until_exit(double seconds)
{
	double deadline = now() + seconds;
	unsigned long acc = sink, i;

	KEEP_FRAME();
	do {
		for (i = 0; i < 100000; i++) {
			acc = acc * 6364136223846793005UL + 1442695040888963407UL;
			__asm__ volatile("" : "+r"(acc)::"memory");
		}
	} while (now() < deadline);
	sink = acc;
}

int main(int argc, char **argv)
{
	burn_until_exit(argc > 1 ? atof(argv[1]) : 2);
	return 0;
}

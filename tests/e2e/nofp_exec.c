// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_exec: an exec into other code at the same addresses. Built twice as non-PIE programs
 * without frame pointers (both start their code at the same address): nofp_exec_a burns in its
 * functions for DELAY seconds, then execs nofp_exec_b (built with -DSECOND, whose code is laid out
 * differently), which burns for the rest of the time. The second image's PCs lie inside the first
 * one's mappings, so only the kernel's exec event tells the profiler that its tables are stale.
 *
 * Usage: nofp_exec_a DELAY SECONDS
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

volatile unsigned long total;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#ifdef SECOND
/* Shifts the functions below, and gives the addresses where the first image's leaf was other
 * rules (a big frame). */
NOINLINE unsigned long b_padding(unsigned long n)
{
	volatile unsigned long buf[512];

	for (unsigned long i = 0; i < 512; i++)
		buf[i] = n + i;
	return buf[n % 512] + buf[(n * 7) % 512] + buf[(n * 13) % 512];
}

NOINLINE unsigned long b_leaf(void)
{
	unsigned long acc = total;

	SPIN(2000000, acc);
	return acc;
}

NOINLINE unsigned long b_middle(void)
{
	unsigned long r = b_leaf();

	total += r >> 3;
	return r + 1;
}

int main(int argc, char **argv)
{
	double end = argc > 1 ? atof(argv[1]) : 1;

	total += b_padding(argc);
	while (now() < end)
		total += b_middle();
	return (int)(total & 1) * 0;
}
#else
NOINLINE unsigned long a_leaf(void)
{
	unsigned long acc = total;

	SPIN(2000000, acc);
	return acc;
}

NOINLINE unsigned long a_middle(void)
{
	unsigned long r = a_leaf();

	total += r >> 2;
	return r + 2;
}

int main(int argc, char **argv)
{
	double start = now(), delay = argc > 1 ? atof(argv[1]) : 1;
	double seconds = argc > 2 ? atof(argv[2]) : 5;
	char path[PATH_MAX], end[32], *slash;

	while (now() - start < delay)
		total += a_middle();
	if (!realpath("/proc/self/exe", path) || !(slash = strrchr(path, '/')))
		return 1;
	snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path), "nofp_exec_b");
	/* The deadline on the shared clock, so that the second image knows when to stop. */
	snprintf(end, sizeof(end), "%.3f", start + seconds);
	execl(path, path, end, (char *)NULL);
	perror("nofp_exec: execl");
	return 1;
}
#endif

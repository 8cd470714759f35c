// SPDX-License-Identifier: BSD-2-Clause
/*
 * deep: burns CPU at the bottom of a recursion of a given depth, for the unwinding benchmark.
 * Built twice, with and without frame pointers (bench/bench.mk).
 * Usage: deep DEPTH SECONDS
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long descend(int depth)
{
	unsigned long acc = sink;

	if (depth <= 1) {
		for (int i = 0; i < 1000000; i++) {
			acc = acc * 6364136223846793005UL + 1442695040888963407UL;
			__asm__ volatile("" : "+r"(acc)::"memory");
		}
		return acc;
	}
	acc += descend(depth - 1); /* work after the call: no tail call */
	sink = acc;
	return acc;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 10;
	double end = now() + (argc > 2 ? atof(argv[2]) : 5);

	/* main and __libc_start_call_main are frames too. */
	while (now() < end)
		sink += descend(depth > 3 ? depth - 3 : 1);
	return 0;
}

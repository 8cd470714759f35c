// SPDX-License-Identifier: BSD-2-Clause
/*
 * Waits that are preemptions, not sleeps: two threads pinned to one CPU spin in crowded() for
 * argv[1] seconds, so each runs a time slice (a few ms, below the default wait-sampling period)
 * and waits while the other runs. A preempted thread is in no system call, so its off-CPU stacks
 * cannot wait for one to end: they are taken at switch-out, by chance when its last wait was
 * short. Each thread measures its own time off the CPU (its wall time less its CPU time); argv[2]
 * gets "waits_ns NS", the two threads' sum, which the off-CPU time in crowded() must match.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

static double seconds;
static long long waited_ns[2];

static long long clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

NOINLINE unsigned long crowded(long long end)
{
	unsigned long acc = 1;

	KEEP_FRAME();
	while (clock_ns(CLOCK_MONOTONIC) < end)
		SPIN(2000, acc);
	return acc;
}

static volatile unsigned long sink;

static void *run(void *arg)
{
	long long *waited = arg;
	long long start = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	sink += crowded(start + (long long)(seconds * 1e9));
	*waited = (clock_ns(CLOCK_MONOTONIC) - start) - (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[2];
	cpu_set_t one;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: crowded SECONDS OUTFILE\n");
		return 2;
	}
	seconds = atof(argv[1]);
	/* Pinned before the threads start, which inherit it. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		perror("crowded: sched_setaffinity");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&threads[i], NULL, run, &waited_ns[i])) {
			fprintf(stderr, "crowded: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "waits_ns %lld\n", waited_ns[0] + waited_ns[1]);
	return fclose(f) ? 1 : 0;
}

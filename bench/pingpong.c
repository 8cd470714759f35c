// SPDX-License-Identifier: BSD-2-Clause
/*
 * A context-switch-heavy load: pairs of threads pass one byte back and forth through two pipes
 * for argv[1] seconds. Both threads of a pair are pinned to one CPU, pair i to CPU i (argv[2]
 * pairs, default one per CPU), so that every handover is a switch from one to the other on that
 * CPU: no idle in between, no wake-up across CPUs, whose latencies would vary more than the cost
 * being measured. Prints the round trips per second, all pairs together; each round trip is two
 * context switches.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 256

struct pair {
	int ping[2], pong[2];
	int cpu;
	unsigned long trips;
	pthread_t pinger, echoer;
};

static volatile int stop;
static double seconds;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* Unpinned (a CPU taken away meanwhile) still switches, just less evenly. */
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *echo(void *arg)
{
	struct pair *p = arg;
	char c;

	pin(p->cpu);
	while (read(p->ping[0], &c, 1) == 1 && !stop)
		if (write(p->pong[1], &c, 1) != 1)
			break;
	return NULL;
}

static void *ping(void *arg)
{
	struct pair *p = arg;
	double end;
	char c = 'x';

	pin(p->cpu);
	end = now() + seconds;
	while (now() < end) {
		for (int i = 0; i < 1000; i++)
			if (write(p->ping[1], &c, 1) != 1 || read(p->pong[0], &c, 1) != 1)
				return NULL;
		p->trips += 1000;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct pair pairs[MAX_PAIRS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = argc > 2 ? atoi(argv[2]) : (int)(cpus > 0 ? cpus : 1);
	unsigned long trips = 0;
	double start;
	char c = 'x';

	seconds = argc > 1 ? atof(argv[1]) : 3;
	if (n < 1 || n > MAX_PAIRS || seconds <= 0) {
		fprintf(stderr, "usage: pingpong [SECONDS] [PAIRS, 1-%d]\n", MAX_PAIRS);
		return 2;
	}
	start = now();
	for (int i = 0; i < n; i++) {
		struct pair *p = &pairs[i];

		p->cpu = (int)(i % (cpus > 0 ? cpus : 1));
		if (pipe(p->ping) || pipe(p->pong) || pthread_create(&p->echoer, NULL, echo, p) ||
		    pthread_create(&p->pinger, NULL, ping, p))
			return 1;
	}
	for (int i = 0; i < n; i++)
		pthread_join(pairs[i].pinger, NULL);
	stop = 1;
	for (int i = 0; i < n; i++) {
		if (write(pairs[i].ping[1], &c, 1) != 1)
			return 1;
		pthread_join(pairs[i].echoer, NULL);
		trips += pairs[i].trips;
	}
	printf("%.0f\n", trips / (now() - start));
	return 0;
}

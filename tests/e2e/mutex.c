// SPDX-License-Identifier: BSD-2-Clause
/*
 * Lock contention with a known answer. `mutex SECONDS OUT`: 4 threads take one pthread mutex in
 * contend_lock() and hold it in hold_lock() for 2 ms of CPU. Each thread times its own waits in
 * pthread_mutex_lock with clock_gettime; the total, in nanoseconds, is written to OUT at exit.
 * `mutex SECONDS OUT condvar`: one thread waits on a condition variable in wait_cond(), another
 * signals it every 5 ms: futex waits that are not mutex contention.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

#define THREADS 4

volatile unsigned long sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ticks;
static double deadline;
static long long waited_ns[THREADS];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

NOINLINE void hold_lock(void)
{
	double end = now() + 0.002;
	unsigned long acc = 1;

	KEEP_FRAME();
	while (now() < end)
		SPIN(1000, acc);
	sink = acc;
}

NOINLINE long long contend_lock(void)
{
	double t0 = now(), t1;

	KEEP_FRAME();
	pthread_mutex_lock(&lock);
	t1 = now();
	hold_lock();
	pthread_mutex_unlock(&lock);
	return (long long)((t1 - t0) * 1e9);
}

static void *worker(void *arg)
{
	long i = (long)arg;

	while (now() < deadline)
		waited_ns[i] += contend_lock();
	return NULL;
}

NOINLINE void wait_cond(void)
{
	KEEP_FRAME();
	pthread_mutex_lock(&lock);
	int seen = ticks;
	while (ticks == seen && now() < deadline)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void *waiter(void *arg)
{
	(void)arg;
	while (now() < deadline)
		wait_cond();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	long long total = 0;
	FILE *out;

	if (argc < 3)
		return 2;
	deadline = now() + atof(argv[1]);
	if (argc > 3 && !strcmp(argv[3], "condvar")) {
		pthread_create(&th[0], NULL, waiter, NULL);
		while (now() < deadline) {
			struct timespec t = {0, 5000000};

			nanosleep(&t, NULL);
			pthread_mutex_lock(&lock);
			ticks++;
			pthread_cond_signal(&cond);
			pthread_mutex_unlock(&lock);
		}
		pthread_join(th[0], NULL);
		return 0;
	}
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		total += waited_ns[i];
	}
	out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "%lld\n", total);
	return fclose(out) ? 1 : 0;
}

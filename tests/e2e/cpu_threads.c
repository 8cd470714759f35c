// SPDX-License-Identifier: BSD-2-Clause
/*
 * cpu_threads: two busy threads with different names. The main thread keeps the process name and
 * burns in main_burn; a second thread named "hp-worker" burns in worker_burn. A profiler that
 * labels samples per thread must give worker_burn's samples thread_name hp-worker and a tid other
 * than the pid.
 *
 * Usage: cpu_threads [SECONDS]   (0 or no argument: run until killed)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

volatile unsigned long sink;
static double deadline;
static int forever;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void worker_burn(void)
{
	unsigned long acc = sink;

	KEEP_FRAME();
	SPIN(100000, acc);
	sink = acc;
}

NOINLINE void main_burn(void)
{
	unsigned long acc = sink ^ 1;

	KEEP_FRAME();
	SPIN(100000, acc);
	sink = acc;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "hp-worker");
	do {
		worker_burn();
	} while (forever || now() < deadline);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	pthread_t tid;
	int err;

	forever = seconds <= 0;
	deadline = now() + seconds;
	err = pthread_create(&tid, NULL, worker, NULL);
	if (err) {
		fprintf(stderr, "cpu_threads: pthread_create: %s\n", strerror(err));
		return 1;
	}
	do {
		main_burn();
	} while (forever || now() < deadline);
	pthread_join(tid, NULL);
	return 0;
}

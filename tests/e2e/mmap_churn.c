// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel lock contention: 8 threads map, touch and unmap memory as fast as they can for argv[1]
 * seconds. mmap and munmap take the process's mmap_lock (an rwsem) for writing, page faults take
 * it for reading, so the threads queue on it in the kernel.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "workload.h"

#define THREADS 8
#define SIZE (256 * 1024)

volatile unsigned long sink;
static double deadline;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

NOINLINE void churn(void)
{
	char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	KEEP_FRAME();
	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < SIZE; i += 4096)
		p[i] = (char)i;
	sink += (unsigned long)p[SIZE / 2];
	munmap(p, SIZE);
}

static void *worker(void *arg)
{
	(void)arg;
	while (now() < deadline)
		churn();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];

	deadline = now() + (argc > 1 ? atof(argv[1]) : 5);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}

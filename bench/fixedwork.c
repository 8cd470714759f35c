// SPDX-License-Identifier: BSD-2-Clause
/*
 * fixedwork: a fixed amount of CPU-bound work on every core, for measuring what a profiler costs
 * the code it watches. Each of THREADS threads compresses the same 256 KiB buffer (text-like,
 * built from a fixed seed) ITERATIONS times with zlib, then the program prints the wall time in
 * seconds. The same arguments always do the same work, so two runs compare by their time.
 *
 * Usage: fixedwork THREADS ITERATIONS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

#define BUF_SIZE (256 * 1024)

static unsigned char input[BUF_SIZE];
static long iterations;

/* Words from a small vocabulary in a fixed pseudo-random order: compressible like real text. */
static void fill_input(void)
{
	static const char *const words[] = {
		"profile", "stack", "kernel", "sample", "frame", "symbol", "unwind", "export",
		"window",  "agent", "cpu",    "wall",	"lock",	 "the",	   "of",     "and"};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t o = 0;

	while (o < BUF_SIZE) {
		const char *w;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w = words[x % (sizeof(words) / sizeof(words[0]))];
		while (*w && o < BUF_SIZE)
			input[o++] = (unsigned char)*w++;
		if (o < BUF_SIZE)
			input[o++] = (x >> 8) % 11 ? ' ' : '\n';
	}
}

static void *worker(void *arg)
{
	uLongf cap = compressBound(BUF_SIZE);
	unsigned char *out = malloc(cap);
	unsigned long total = 0;

	(void)arg;
	if (!out)
		return NULL;
	for (long i = 0; i < iterations; i++) {
		uLongf len = cap;

		if (compress2(out, &len, input, BUF_SIZE, 6) != Z_OK)
			break;
		total += len;
	}
	free(out);
	return (void *)(uintptr_t)total;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t *tids;
	long threads;

	if (argc != 3 || (threads = atol(argv[1])) < 1 || (iterations = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: fixedwork THREADS ITERATIONS\n");
		return 2;
	}
	fill_input();
	tids = calloc((size_t)threads, sizeof(*tids));
	if (!tids)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL))
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.4f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	free(tids);
	return 0;
}

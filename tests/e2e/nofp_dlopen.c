// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_dlopen: code that arrives after the profiler has loaded a process's unwind tables. It
 * burns in its own no-frame-pointer functions for DELAY seconds, then dlopen()s libnofp.so (from
 * its own directory) and spends the rest of its time in nofp_leaf_c, called through two levels
 * of its own. Only a re-read of its mappings gives the walker the library's table; without it the
 * walk stops in the library's first frame. Built like nofp (no frame pointers, no sibling calls).
 *
 * Usage: nofp_dlopen DELAY SECONDS
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

typedef unsigned long (*leaf_fn)(unsigned long unit);

volatile unsigned long total;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE unsigned long before_dlopen(void)
{
	unsigned long acc = total;

	SPIN(1000000, acc);
	return acc;
}

NOINLINE unsigned long call_loaded(leaf_fn leaf)
{
	unsigned long r = leaf(2000000);

	total += r;
	return r ^ 1;
}

NOINLINE unsigned long after_dlopen(leaf_fn leaf)
{
	unsigned long r = call_loaded(leaf);

	total += r >> 1;
	return r + 1;
}

int main(int argc, char **argv)
{
	double delay = argc > 1 ? atof(argv[1]) : 1, seconds = argc > 2 ? atof(argv[2]) : 5;
	double start = now();
	char path[PATH_MAX], *slash;
	void *lib;
	leaf_fn leaf;

	while (now() - start < delay)
		total += before_dlopen();
	if (!realpath("/proc/self/exe", path) || !(slash = strrchr(path, '/')))
		return 1;
	snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path), "libnofp.so");
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "nofp_dlopen: %s\n", dlerror());
		return 1;
	}
	leaf = (leaf_fn)dlsym(lib, "nofp_leaf_c");
	if (!leaf)
		return 1;
	while (now() - start < seconds)
		total += after_dlopen(leaf);
	return (int)(total & 1) * 0;
}

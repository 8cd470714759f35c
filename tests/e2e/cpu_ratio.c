// SPDX-License-Identifier: BSD-2-Clause
/*
 * cpu_ratio: a single-threaded PIE whose CPU time splits 1:2:3 between three leaf functions,
 * burn_a, burn_b and burn_c. Each runs the same loop body for a multiple of one calibrated unit of
 * about 50 ms, so the time ratio is the iteration ratio.
 *
 * Why such long calls: a timer-driven sampler with period T puts floor(L/T) or ceil(L/T) samples
 * into any stretch of L ns of CPU time, whatever its phase. With 50-150 ms calls (5-15 samples at
 * 99 Hz) each call's count is off by at most one, and a 5 s capture holds only ~17 rounds, so the
 * shares stay within a couple of points. Short calls (sub-millisecond) make each sample an
 * independent draw instead: at ~500 samples that is a binomial spread of +-2.3 points for the 1/2
 * share, and the +-5 point test would fail a few runs in a hundred.
 *
 * Usage: cpu_ratio [SECONDS [OUT]]   (SECONDS 0 or none: run until killed)
 * With OUT, the thread's own CPU time in each burn function is measured (CLOCK_THREAD_CPUTIME_ID
 * around each call) and written there at the end, or on SIGTERM, as `burn_a NS` lines: the truth
 * where the same loop does not cost the same in every function (under an emulator such as qemu's
 * TCG, the translated code of one loop can be slower than another's).
 */
#include <signal.h>
#include <stdio.h>
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

NOINLINE void burn_a(unsigned long unit)
{
	unsigned long acc = sink;

	KEEP_FRAME();
	SPIN(unit * 1, acc);
	sink = acc;
}

NOINLINE void burn_b(unsigned long unit)
{
	unsigned long acc = sink;

	KEEP_FRAME();
	SPIN(unit * 2, acc);
	sink = acc;
}

NOINLINE void burn_c(unsigned long unit)
{
	unsigned long acc = sink;

	KEEP_FRAME();
	SPIN(unit * 3, acc);
	sink = acc;
}

/* Iterations of SPIN that take @seconds of CPU time on this machine (the best of three probes). */
NOINLINE static unsigned long calibrate(double seconds)
{
	const unsigned long probe = 1000000;
	unsigned long acc = sink;
	double best = 0, t0, dt;
	int i;

	for (i = 0; i < 3; i++) {
		t0 = now();
		SPIN(probe, acc);
		dt = now() - t0;
		if (dt > 0 && (best == 0 || dt < best))
			best = dt;
	}
	sink = acc;
	return best > 0 ? (unsigned long)(probe * seconds / best) + 1 : probe;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static long long thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Run burn(unit), adding the CPU time it took to *spent when measuring. */
/* Run burn(unit), adding the CPU time it took to *spent when measuring. A macro, not a function,
 * so that main stays the caller of each burn function, even in DWARF's inline frames. */
#define TIMED(burn, unit, spent, measure)                                                          \
	do {                                                                                       \
		long long t0_ = (measure) ? thread_ns() : 0;                                       \
                                                                                                   \
		burn(unit);                                                                        \
		if (measure)                                                                       \
			*(spent) += thread_ns() - t0_;                                             \
	} while (0)

static int write_spent(const char *path, const long long spent[3])
{
	FILE *f = fopen(path, "w");

	if (!f)
		return 1;
	fprintf(f, "burn_a %lld\nburn_b %lld\nburn_c %lld\n", spent[0], spent[1], spent[2]);
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	const char *out = argc > 2 ? argv[2] : NULL;
	unsigned long unit = calibrate(0.050);
	double deadline = now() + seconds;
	long long spent[3] = {0, 0, 0};

	if (out)
		signal(SIGTERM, on_term);
	while (!stop) {
		TIMED(burn_a, unit, &spent[0], out);
		TIMED(burn_b, unit, &spent[1], out);
		TIMED(burn_c, unit, &spent[2], out);
		if (seconds > 0 && now() >= deadline)
			break;
	}
	return out ? write_spent(out, spent) : 0;
}

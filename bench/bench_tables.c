// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench_tables: what building unwind tables costs. For each binary given: the rows, the time to
 * build its table from .eh_frame (best of three builds), the table's size, and how much the
 * builder's peak memory grew. With --sum, one closing line over every binary given: the rows
 * map that loading all of them at once takes (16 bytes a row), against the default capacity.
 * Numbers only; nothing is asserted.
 *
 * Usage: bench_tables [--sum] BINARY...
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "unwind/unwind_table.h"

#define DEFAULT_ROWS_CAPACITY (1u << 20) /* config.c's default --unwind-table-rows */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	unsigned long long total_rows = 0;
	int first = 1, sum = 0, built = 0, failed = 0;

	if (argc > 1 && !strcmp(argv[1], "--sum")) {
		sum = 1;
		first = 2;
	}
	if (!sum)
		printf("| binary | rows | build ms (best of 3) | table KiB | peak RSS growth KiB "
		       "|\n"
		       "|---|---|---|---|---|\n");
	for (int i = first; i < argc; i++) {
		double best = -1;
		long rss_before = peak_rss_kb();
		size_t nr = 0;
		char err[256] = "";

		for (int rep = 0; rep < (sum ? 1 : 3); rep++) {
			double t0 = now_ms();
			struct unwind_table *t =
				unwind_table__build(argv[i], NULL, err, sizeof(err));
			double dt = now_ms() - t0;

			if (!t)
				break;
			unwind_table__rows(t, &nr);
			unwind_table__delete(t);
			if (best < 0 || dt < best)
				best = dt;
		}
		if (best < 0) {
			failed++;
			if (!sum)
				printf("| %s | failed: %s | | | |\n", argv[i], err);
			continue;
		}
		built++;
		total_rows += nr;
		if (!sum)
			printf("| %s | %zu | %.1f | %.0f | %ld |\n", argv[i], nr, best,
			       nr * 16 / 1024.0, peak_rss_kb() - rss_before);
	}
	if (sum)
		printf("%d binaries (%d without a table): %llu rows = %.1f MiB of rows map; the "
		       "default map holds %u rows (%.0f MiB)\n",
		       built, failed, total_rows, total_rows * 16 / 1048576.0,
		       DEFAULT_ROWS_CAPACITY, DEFAULT_ROWS_CAPACITY * 16 / 1048576.0);
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The index after a binary's rows (src/unwind/row_index.c): through it, the search the BPF walker
 * makes finds, at every address, the row unwind_table__find() finds by a search over all the
 * rows. On real binaries (libc, this test, python3 when installed: tens of thousands of rows) and
 * on made-up tables at the edges (one row, rows far apart, many rows at one address range).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "hostprof_abi.h"
#include "unwind/row_index.h"
#include "unwind/unwind_table.h"

/* The row in force at addr by a plain search over every row: what the index must agree with. */
static const struct hp_unwind_row *linear_find(const struct hp_unwind_row *rows, size_t nr,
					       uint32_t addr)
{
	const struct hp_unwind_row *found = NULL;

	for (size_t i = 0; i < nr && rows[i].pc <= addr; i++)
		found = &rows[i];
	return found;
}

static struct hp_unwind_row *build(const struct hp_unwind_row *rows, size_t nr)
{
	struct hp_unwind_row *index = calloc(row_index__slots(rows, nr), sizeof(*index));

	if (index)
		row_index__build(rows, nr, index);
	return index;
}

/* Every row's address, the bytes around it, and the bucket edges: a mismatch is counted once per
 * table, with the first address that shows it. */
static void check_table(const char *what, const struct hp_unwind_row *rows, size_t nr,
			const struct unwind_table *t)
{
	struct hp_unwind_row *index = build(rows, nr);
	struct hp_unwind_index head;
	uint64_t bad_addr = 0, tried = 0;
	bool bad = false;

	CHECK(index != NULL, "%s: index built", what);
	if (!index)
		return;
	memcpy(&head, index, sizeof(head));
	CHECK(head.first_pc == rows[0].pc && head.buckets >= 1, "%s: header", what);
	CHECK((row_index__slots(rows, nr) - 1) * sizeof(*rows) <= nr * sizeof(*rows) / 16 + 16,
	      "%s: %zu index slots for %zu rows: within a sixteenth of the rows", what,
	      row_index__slots(rows, nr), nr);
	for (size_t i = 0; i < nr && !bad; i++) {
		for (int64_t d = -2; d <= 2 && !bad; d++) {
			uint64_t a = (uint64_t)rows[i].pc + (uint64_t)d;
			const struct hp_unwind_row *want;

			if (a > UINT32_MAX)
				continue;
			want = t ? unwind_table__find(t, a) : linear_find(rows, nr, (uint32_t)a);
			tried++;
			if (row_index__find(rows, nr, index, (uint32_t)a) != want) {
				bad = true;
				bad_addr = a;
			}
		}
	}
	for (uint64_t k = 0; k <= head.buckets && !bad; k++) {
		uint64_t start = (uint64_t)head.first_pc + (k << head.shift);

		for (int64_t d = -1; d <= 1 && !bad; d++) {
			uint64_t a = start + (uint64_t)d;

			if (a > UINT32_MAX)
				continue;
			tried++;
			if (row_index__find(rows, nr, index, (uint32_t)a) !=
			    linear_find(rows, nr, (uint32_t)a)) {
				bad = true;
				bad_addr = a;
			}
		}
	}
	CHECK(!bad, "%s: the index finds another row than the full search at 0x%" PRIx64, what,
	      bad_addr);
	CHECK(bad || tried >= nr, "%s: %" PRIu64 " addresses tried", what, tried);
	free(index);
}

static void check_binary(const char *path, bool required)
{
	char err[256];
	struct unwind_table *t = unwind_table__build(path, NULL, err, sizeof(err));
	const struct hp_unwind_row *rows;
	size_t nr = 0;

	if (!t) {
		CHECK(!required, "%s: %s", path, err);
		return;
	}
	rows = unwind_table__rows(t, &nr);
	CHECK(nr > 0, "%s has rows", path);
	if (nr)
		check_table(path, rows, nr, t);
	unwind_table__delete(t);
}

static void check_made_up(void)
{
	struct hp_unwind_row one[1] = {{.pc = 0x1000}};
	struct hp_unwind_row far[3] = {{.pc = 0x10}, {.pc = 0x7fff0000}, {.pc = 0xfffffff0}};
	size_t dense_n = 4096;
	struct hp_unwind_row *dense = calloc(dense_n, sizeof(*dense));
	struct hp_unwind_row *index = build(one, 1);

	check_table("one row", one, 1, NULL);
	CHECK(index && row_index__find(one, 1, index, 0xfff) == NULL, "below the first row: none");
	CHECK(index && row_index__find(one, 1, index, UINT32_MAX) == &one[0],
	      "past the last row: the last");
	free(index);
	check_table("rows far apart", far, 3, NULL);
	if (!dense)
		return;
	/* Most rows in the first 64 KiB and a few far beyond: buckets of very uneven fill. */
	for (size_t i = 0; i < dense_n; i++)
		dense[i].pc = i < dense_n - 8 ? (uint32_t)(0x400000 + i * 16)
					      : (uint32_t)(0x4000000 + (i - dense_n) * 4096);
	check_table("uneven rows", dense, dense_n, NULL);
	free(dense);
}

int main(void)
{
	check_made_up();
	check_binary("/proc/self/exe", true);
	check_binary("/lib/x86_64-linux-gnu/libc.so.6", false);
	check_binary("/lib/aarch64-linux-gnu/libc.so.6", false);
	check_binary("/usr/bin/python3", false);
	return check_summary("test_row_index");
}

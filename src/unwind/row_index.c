// SPDX-License-Identifier: BSD-2-Clause
#include "unwind/row_index.h"

#include <string.h>

/* The index may take a sixteenth of the rows' bytes: a bucket per four rows on average. */
#define ROWS_PER_BUCKET 4
/* Buckets narrower than this would cost more memory than any search step they save. */
#define MIN_SHIFT 4

/* The narrowest buckets within the budget, for rows spanning first..last. */
static unsigned int index_shift(uint32_t first, uint32_t last, size_t nr)
{
	uint64_t budget = nr / ROWS_PER_BUCKET ? nr / ROWS_PER_BUCKET : 1;
	unsigned int shift = MIN_SHIFT;

	while (shift < 31 && ((uint64_t)(last - first) >> shift) + 1 > budget)
		shift++;
	return shift;
}

static uint32_t bucket_count(const struct hp_unwind_row *rows, size_t nr, unsigned int shift)
{
	return ((rows[nr - 1].pc - rows[0].pc) >> shift) + 1;
}

size_t row_index__slots(const struct hp_unwind_row *rows, size_t nr)
{
	uint32_t buckets;

	if (!nr)
		return 0;
	buckets = bucket_count(rows, nr, index_shift(rows[0].pc, rows[nr - 1].pc, nr));
	return 1 + (buckets + HP_UNWIND_INDEX_PER_SLOT - 1) / HP_UNWIND_INDEX_PER_SLOT;
}

void row_index__build(const struct hp_unwind_row *rows, size_t nr, struct hp_unwind_row *out)
{
	unsigned int shift = index_shift(rows[0].pc, rows[nr - 1].pc, nr);
	uint32_t buckets = bucket_count(rows, nr, shift);
	struct hp_unwind_index head = {.first_pc = rows[0].pc, .buckets = buckets, .shift = shift};
	uint32_t *bucket = (uint32_t *)(out + 1);
	size_t row = 0;

	memcpy(out, &head, sizeof(head));
	memset(out + 1, 0,
	       (buckets + HP_UNWIND_INDEX_PER_SLOT - 1) / HP_UNWIND_INDEX_PER_SLOT * sizeof(*out));
	/* One pass: the row in force at each bucket's start is the last one at or below it. */
	for (uint32_t k = 0; k < buckets; k++) {
		uint64_t start = (uint64_t)rows[0].pc + ((uint64_t)k << shift);

		while (row + 1 < nr && rows[row + 1].pc <= start)
			row++;
		bucket[k] = (uint32_t)row;
	}
}

const struct hp_unwind_row *row_index__find(const struct hp_unwind_row *rows, size_t nr,
					    const struct hp_unwind_row *index, uint32_t addr)
{
	struct hp_unwind_index head;
	const uint32_t *bucket = (const uint32_t *)(index + 1);
	uint32_t k, lo, hi;

	memcpy(&head, index, sizeof(head));
	if (!nr || addr < head.first_pc)
		return NULL;
	k = (addr - head.first_pc) >> head.shift;
	if (k >= head.buckets - 1) {
		lo = bucket[head.buckets - 1];
		hi = (uint32_t)nr;
	} else {
		lo = bucket[k];
		hi = bucket[k + 1] + 1;
	}
	/* The first row above addr in [lo, hi); the one before it is in force. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &rows[lo - 1] : NULL;
}

/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOSTPROF_ROW_INDEX_H
#define HOSTPROF_ROW_INDEX_H

/*
 * The index that follows a binary's rows in the rows map (struct hp_unwind_index in
 * hostprof_abi.h): built here when the loader places a table, read by the BPF walker
 * (hp_find_row() in bpf/unwind.bpf.h), whose search row_index__find() repeats for the tests.
 */

#include <stddef.h>
#include <stdint.h>

#include "hostprof_abi.h"

/* Slots of the rows map the index of nr rows takes (its header and its buckets); 0 for no rows. */
size_t row_index__slots(const struct hp_unwind_row *rows, size_t nr);

/* Write the index of rows (sorted by pc, nr > 0) into out, row_index__slots() slots. */
void row_index__build(const struct hp_unwind_row *rows, size_t nr, struct hp_unwind_row *out);

/*
 * The row in force at file address addr found through the index, as the walker does: the last row
 * whose pc <= addr, or NULL below the first. index is what row_index__build() wrote.
 */
const struct hp_unwind_row *row_index__find(const struct hp_unwind_row *rows, size_t nr,
					    const struct hp_unwind_row *index, uint32_t addr);

#endif /* HOSTPROF_ROW_INDEX_H */

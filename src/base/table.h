/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Interning tables, as the profile model and the OTLP encoder's dictionary keep them: a growable
 * array of entries plus the hash index (base/hash_index.h) from an entry's hash to its position.
 *
 * TABLE(type) declares one with entries of that type; since every such table has the same fields,
 * the macros below add to, set up and free any of them, and the interners need not pass an array,
 * its count, its capacity and its index one by one.
 */
#ifndef HOSTPROF_BASE_TABLE_H
#define HOSTPROF_BASE_TABLE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash_index.h"
#include "base/vec.h"

#define TABLE(type)                                                                                \
	struct {                                                                                   \
		type *arr;                                                                         \
		size_t nr, cap;                                                                    \
		struct hash_index idx;                                                             \
	}

/*
 * The position in a table of the entry of elem_size bytes at entry: that of the equal one eq()
 * finds (given ctx; when eq is not NULL), else entry's own, appended and indexed under hash.
 * -E2BIG when the table already holds max entries, -ENOMEM.
 */
int64_t table__add(void **arr, size_t *nr, size_t *cap, struct hash_index *idx, size_t max,
		   const void *entry, size_t elem_size, uint32_t hash, hash_index_eq_fn eq,
		   const void *ctx);

/* table__add() for a TABLE() t; entry points at an element of its type. */
#define TABLE_ADD(t, max, entry, hash, eq, ctx)                                                    \
	({                                                                                         \
		void *table_arr_ = (t)->arr;                                                       \
		int64_t table_ret_;                                                                \
                                                                                                   \
		(void)sizeof(*(t)->arr = *(entry));                                                \
		table_ret_ = table__add(&table_arr_, &(t)->nr, &(t)->cap, &(t)->idx, (max),        \
					(entry), sizeof(*(t)->arr), (hash), (eq), (ctx));          \
		(t)->arr = table_arr_;                                                             \
		table_ret_;                                                                        \
	})

/* A TABLE() t that holds only its zero entry (all bytes 0), which is never indexed: 0, -ENOMEM. */
#define TABLE_INIT(t)                                                                              \
	({                                                                                         \
		int table_err_ = VEC_RESERVE((t)->arr, (t)->cap, 1);                               \
                                                                                                   \
		if (!table_err_) {                                                                 \
			memset((t)->arr, 0, sizeof(*(t)->arr));                                    \
			(t)->nr = 1;                                                               \
		}                                                                                  \
		table_err_;                                                                        \
	})

#define TABLE_FREE(t)                                                                              \
	do {                                                                                       \
		hash_index__free(&(t)->idx);                                                       \
		free((t)->arr);                                                                    \
	} while (0)

#endif /* HOSTPROF_BASE_TABLE_H */

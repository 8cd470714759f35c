// SPDX-License-Identifier: BSD-2-Clause
/* Adding to the interning tables of model/table.h. */
#include "base/table.h"

int64_t table__add(void **arr, size_t *nr, size_t *cap, struct hash_index *idx, size_t max,
		   const void *entry, size_t elem_size, uint32_t hash, hash_index_eq_fn eq,
		   const void *ctx)
{
	uint32_t found = eq ? hash_index__find(idx, hash, eq, ctx, entry) : 0;
	int err;

	if (found)
		return found;
	if (*nr >= max)
		return -E2BIG;
	err = vec__reserve(arr, cap, *nr + 1, elem_size);
	if (!err)
		err = hash_index__reserve(idx);
	if (err)
		return err;
	memcpy((char *)*arr + *nr * elem_size, entry, elem_size);
	hash_index__insert(idx, (uint32_t)*nr, hash);
	return (int64_t)(*nr)++;
}

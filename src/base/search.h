/* SPDX-License-Identifier: BSD-2-Clause */
/* Binary search of arrays sorted by a field: the symbol, mapping or row an address falls in. */
#ifndef HOSTPROF_SEARCH_H
#define HOSTPROF_SEARCH_H

#include <stddef.h>

/*
 * In arr[0..n), sorted by arr[i].field ascending, the number of elements whose field is <= key:
 * the last of them, the one whose range an address may fall in, is arr[result - 1]; none when 0.
 * (C++'s upper_bound, as an index.)
 */
#define SEARCH_UPPER_BOUND(arr, n, field, key)                                                     \
	({                                                                                         \
		size_t lo_ = 0, hi_ = (n);                                                         \
                                                                                                   \
		while (lo_ < hi_) {                                                                \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                                       \
                                                                                                   \
			if ((arr)[mid_].field <= (key))                                            \
				lo_ = mid_ + 1;                                                    \
			else                                                                       \
				hi_ = mid_;                                                        \
		}                                                                                  \
		lo_;                                                                               \
	})

/* The same over an array of plain values sorted ascending: how many are <= key. */
#define SEARCH_UPPER_BOUND_VALUE(arr, n, key)                                                      \
	({                                                                                         \
		size_t lo_ = 0, hi_ = (n);                                                         \
                                                                                                   \
		while (lo_ < hi_) {                                                                \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                                       \
                                                                                                   \
			if ((arr)[mid_] <= (key))                                                  \
				lo_ = mid_ + 1;                                                    \
			else                                                                       \
				hi_ = mid_;                                                        \
		}                                                                                  \
		lo_;                                                                               \
	})

#endif /* HOSTPROF_SEARCH_H */

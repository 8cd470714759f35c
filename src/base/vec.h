/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Growable arrays. The caller keeps the pointer, the number of elements in use and the capacity;
 * vec__reserve() makes the capacity large enough, doubling it, with every size computed checked
 * for overflow.
 *
 *	if (VEC_RESERVE(t->items, t->cap, t->nr + 1))
 *		return -ENOMEM;
 *	t->items[t->nr++] = item;
 */
#ifndef HOSTPROF_VEC_H
#define HOSTPROF_VEC_H

#include <stddef.h>

/* The capacity of an array's first allocation, in elements. */
#define VEC_MIN_CAP 16

/*
 * The capacity that holds need elements of elem_size bytes when cap is too small: cap (at least
 * VEC_MIN_CAP) doubled until it does, or need itself where doubling would overflow. 0 when
 * need * elem_size itself overflows (or elem_size is 0).
 */
size_t vec__next_cap(size_t cap, size_t need, size_t elem_size);

/*
 * Make *data (of *cap elements of elem_size bytes) hold at least need elements. Returns 0, or
 * -ENOMEM when out of memory or when the size would overflow: *data and *cap stay as they were.
 */
int vec__reserve(void **data, size_t *cap, size_t need, size_t elem_size);

/* Room for more elements behind the first nr; -ENOMEM also when nr + more overflows. */
int vec__reserve_more(void **data, size_t *cap, size_t nr, size_t more, size_t elem_size);

/*
 * vec__reserve() for a typed pointer arr and its size_t capacity cap, evaluating to its result.
 * Through a real void * rather than a cast of &arr, which would break strict aliasing.
 */
#define VEC_RESERVE(arr, cap, need)                                                                \
	({                                                                                         \
		void *vec_data_ = (arr);                                                           \
		int vec_err_ = vec__reserve(&vec_data_, &(cap), (need), sizeof(*(arr)));           \
		(arr) = vec_data_;                                                                 \
		vec_err_;                                                                          \
	})

/* vec__reserve_more() for a typed pointer. */
#define VEC_RESERVE_MORE(arr, cap, nr, more)                                                       \
	({                                                                                         \
		void *vec_data_ = (arr);                                                           \
		int vec_err_ =                                                                     \
			vec__reserve_more(&vec_data_, &(cap), (nr), (more), sizeof(*(arr)));       \
		(arr) = vec_data_;                                                                 \
		vec_err_;                                                                          \
	})

#endif /* HOSTPROF_VEC_H */

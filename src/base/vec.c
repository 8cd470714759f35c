// SPDX-License-Identifier: BSD-2-Clause
#include "base/vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

size_t vec__next_cap(size_t cap, size_t need, size_t elem_size)
{
	size_t max, ncap;

	if (!elem_size)
		return 0;
	max = SIZE_MAX / elem_size;
	if (need > max)
		return 0;
	ncap = cap >= VEC_MIN_CAP ? cap : VEC_MIN_CAP;
	while (ncap < need)
		ncap = ncap > max / 2 ? need : ncap * 2;
	return ncap <= max ? ncap : need;
}

int vec__reserve(void **data, size_t *cap, size_t need, size_t elem_size)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = vec__next_cap(*cap, need, elem_size);
	if (!ncap)
		return -ENOMEM;
	p = realloc(*data, ncap * elem_size);
	if (!p)
		return -ENOMEM;
	*data = p;
	*cap = ncap;
	return 0;
}

int vec__reserve_more(void **data, size_t *cap, size_t nr, size_t more, size_t elem_size)
{
	if (more > SIZE_MAX - nr)
		return -ENOMEM;
	return vec__reserve(data, cap, nr + more, elem_size);
}

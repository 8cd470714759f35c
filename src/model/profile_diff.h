/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two profiles of one type compared function by function: each function's share of its side's
 * total, self (it was the leaf) and total (it was anywhere in the stack, once per sample), for
 * `hostprof render --base OLD NEW`'s table of the biggest changes.
 */
#ifndef HOSTPROF_PROFILE_DIFF_H
#define HOSTPROF_PROFILE_DIFF_H

#include <stddef.h>

#include "model/profile.h"

/* One function (by name; inlined functions count as themselves). Shares are in [0, 1]. */
struct profile_diff_row {
	const char *name; /* valid while both profiles live */
	double old_self, new_self, old_total, new_total;
};

/*
 * Every function of either profile into *rows (malloc'd, *n of them; free() them), largest
 * change first: by the larger of |new_self - old_self| and |new_total - old_total|, then by
 * name. A function only in one profile has shares 0 in the other. 0 or -ENOMEM.
 */
int profile_diff__compute(const struct profile *old, const struct profile *new,
			  struct profile_diff_row **rows, size_t *n);

#endif /* HOSTPROF_PROFILE_DIFF_H */

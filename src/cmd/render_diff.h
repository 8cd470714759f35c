/* SPDX-License-Identifier: BSD-2-Clause */
/* `hostprof render --base OLD NEW`: the comparison's table and differential pages. */
#ifndef HOSTPROF_RENDER_DIFF_H
#define HOSTPROF_RENDER_DIFF_H

#include <stddef.h>

#include "model/config.h"
#include "model/profile.h"

/*
 * Compare each of news[n] with the profile of the same type among bases[nb]: print the top
 * biggest changes of function share to stdout, and write each output (all *.html) as a
 * differential flame graph. Returns the exit status: 0; 2 when a new profile's type is not in
 * the base (a usage error); 1 when an output cannot be written.
 */
int render_diff(struct profile *const *news, size_t n, struct profile *const *bases, size_t nb,
		const struct output *outputs, size_t nr_outputs, unsigned int top);

#endif /* HOSTPROF_RENDER_DIFF_H */

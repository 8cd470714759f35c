/* SPDX-License-Identifier: BSD-2-Clause */
/* The end-of-run report: top functions by self and total share, read off the profile model. */
#ifndef HOSTPROF_SUMMARY_H
#define HOSTPROF_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct function_share {
	const char *name; /* owned by the profile */
	int64_t self;	  /* raw samples whose leaf is this function */
	int64_t total;	  /* raw samples with this function anywhere on the stack */
	int kernel;
};

struct summary {
	struct function_share *v; /* sorted by self, then total, descending */
	size_t n;
	int64_t samples; /* raw samples in the profile */
};

/* Compute the shares. 0 or -ENOMEM. */
int summary__compute(const struct profile *p, struct summary *out);
void summary__release(struct summary *s);
/* Print the top n functions by self share and the top n by total share. */
void summary__print_top(const struct summary *s, size_t n, FILE *out);

#endif /* HOSTPROF_SUMMARY_H */

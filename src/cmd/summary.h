/* SPDX-License-Identifier: BSD-2-Clause */
/* The end-of-run report: top functions by self and total share, read off the profile model. */
#ifndef HOSTPROF_SUMMARY_H
#define HOSTPROF_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

struct function_share {
	const char *name; /* owned by the profile */
	int64_t self;	  /* value (time) of the samples whose leaf is it */
	int64_t total;	  /* value of the samples with it anywhere on the stack */
	int kernel;
	const char *file; /* first seen there (DWARF); owned by the profile; NULL: unknown */
	int64_t line;	  /* 0 when unknown */
};

struct summary {
	struct function_share *v; /* sorted by self, then total, descending */
	size_t n;
	int64_t samples; /* the profile's total value */
};

/* Compute the shares. 0 or -ENOMEM. */
int summary__compute(const struct profile *p, struct summary *out);
void summary__release(struct summary *s);
/* Print the top n functions by self share and the top n by total share. */
void summary__print_top(const struct summary *s, size_t n, FILE *out);

#endif /* HOSTPROF_SUMMARY_H */

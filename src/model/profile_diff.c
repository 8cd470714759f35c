// SPDX-License-Identifier: BSD-2-Clause
/*
 * Function shares of two profiles, side by side. Functions are matched by name, as a reader
 * matches them: the two profiles have their own string tables (often from two runs or two
 * files), so names are compared as text, through one hash index over both.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/hash_index.h"
#include "base/vec.h"
#include "model/profile_diff.h"

struct fn_sum {
	const char *name;
	int64_t self[2], total[2]; /* [0] old, [1] new */
	size_t seen; /* the last sample (numbered across both sides) that counted it */
};

struct diff_build {
	struct fn_sum *fns;
	size_t nr, cap;
	struct hash_index idx;
	size_t sample; /* numbers samples from 1 across both profiles */
};

static bool fn_eq(const void *ctx, uint32_t id, const void *key)
{
	return strcmp(((const struct diff_build *)ctx)->fns[id - 1].name, key) == 0;
}

/* The entry of name, created when new: its index, or -ENOMEM. */
static int64_t diff_build__fn(struct diff_build *b, const char *name)
{
	uint32_t h = hash_fold(hash_bytes(name, strlen(name)));
	uint32_t id = hash_index__find(&b->idx, h, fn_eq, b, name);

	if (id)
		return id - 1;
	if (VEC_RESERVE(b->fns, b->cap, b->nr + 1) || hash_index__reserve(&b->idx))
		return -ENOMEM;
	memset(&b->fns[b->nr], 0, sizeof(b->fns[0]));
	b->fns[b->nr].name = name;
	hash_index__insert(&b->idx, (uint32_t)b->nr + 1, h);
	return (int64_t)b->nr++;
}

/* Count one frame of a sample: self when it is the leaf, total once per sample. */
static int count_frame(struct diff_build *b, const char *name, int side, bool leaf, int64_t v)
{
	int64_t i = diff_build__fn(b, name && *name ? name : "[unknown]");

	if (i < 0)
		return (int)i;
	if (leaf)
		b->fns[i].self[side] += v;
	if (b->fns[i].seen != b->sample) {
		b->fns[i].seen = b->sample;
		b->fns[i].total[side] += v;
	}
	return 0;
}

/* Sums p's samples into side; the profile's total into *total. */
static int add_profile(struct diff_build *b, const struct profile *p, int side, int64_t *total)
{
	size_t nr = profile__nr_samples(p);

	*total = 0;
	for (size_t i = 1; i < nr; i++) {
		const struct profile_sample *s = profile__sample_at(p, i);
		const uint32_t *stack;
		size_t depth;
		int err = 0;

		if (!s->value)
			continue;
		*total += s->value;
		b->sample++;
		stack = profile__stack_at(p, s->stack, &depth);
		for (size_t j = 0; j < depth && !err; j++) {
			const struct profile_line *lines;
			size_t nl = 0;

			lines = profile__location_lines(p, stack[j], &nl);
			if (!nl)
				err = count_frame(b, profile__location_name(p, stack[j]), side,
						  j == 0, s->value);
			/* lines[0] is the innermost: the leaf of a leaf location. */
			for (size_t k = 0; k < nl && !err; k++) {
				const struct profile_function *f =
					profile__function_at(p, lines[k].function);

				err = count_frame(b, f ? profile__string_at(p, f->name) : NULL,
						  side, j == 0 && k == 0, s->value);
			}
		}
		if (err)
			return err;
	}
	return 0;
}

static double change(const struct profile_diff_row *r)
{
	double s = fabs(r->new_self - r->old_self), t = fabs(r->new_total - r->old_total);

	return s > t ? s : t;
}

static int cmp_row(const void *a, const void *b)
{
	const struct profile_diff_row *x = a, *y = b;
	double cx = change(x), cy = change(y);

	/* Equal changes (20% - 10% against 30% - 20%) differ in the last bits of a double: a
	 * tolerance far below any share a person reads keeps them tied, so their order is by name.
	 */
	if (fabs(cx - cy) > 1e-12)
		return cx > cy ? -1 : 1;
	return strcmp(x->name, y->name);
}

int profile_diff__compute(const struct profile *old, const struct profile *new,
			  struct profile_diff_row **rows, size_t *n)
{
	struct diff_build b = {0};
	int64_t tot[2];
	int err;

	*rows = NULL;
	*n = 0;
	err = add_profile(&b, old, 0, &tot[0]);
	if (!err)
		err = add_profile(&b, new, 1, &tot[1]);
	if (!err && b.nr && !(*rows = calloc(b.nr, sizeof(**rows))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < b.nr; i++) {
		const struct fn_sum *f = &b.fns[i];

		(*rows)[i] = (struct profile_diff_row){
			.name = f->name,
			.old_self = tot[0] ? (double)f->self[0] / (double)tot[0] : 0,
			.new_self = tot[1] ? (double)f->self[1] / (double)tot[1] : 0,
			.old_total = tot[0] ? (double)f->total[0] / (double)tot[0] : 0,
			.new_total = tot[1] ? (double)f->total[1] / (double)tot[1] : 0,
		};
	}
	if (!err) {
		if (b.nr)
			qsort(*rows, b.nr, sizeof(**rows), cmp_row);
		*n = b.nr;
	}
	free(b.fns);
	hash_index__free(&b.idx);
	return err;
}

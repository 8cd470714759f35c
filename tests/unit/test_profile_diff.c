// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile_diff__compute(): self and total shares of each function on both sides, by name across
 * two string tables; a function of one side only; recursion counted once in total; inlined
 * functions as themselves; the order by the biggest change.
 */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "model/profile_diff.h"

static const struct profile_desc desc = {.sample_type = "cpu", .sample_unit = "nanoseconds"};

static uint32_t fn_loc(struct profile *p, const char *name)
{
	struct profile_function f = {0};
	struct profile_location l = {.address = 0x10};

	f.name = f.system_name = (uint32_t)profile__string(p, name);
	l.function = (uint32_t)profile__function(p, &f);
	return (uint32_t)profile__location(p, &l);
}

/* A sample of value v on the stack of names, root first (the model keeps them leaf first). */
static void add(struct profile *p, const char *const *names, size_t n, int64_t v)
{
	uint32_t locs[16];
	struct profile_labels lb = {.pid = 1, .tid = 1};
	int64_t st;

	for (size_t i = 0; i < n; i++)
		locs[n - 1 - i] = fn_loc(p, names[i]);
	st = profile__stack(p, locs, n);
	CHECK(st > 0 && profile__add_sample(p, (uint32_t)st, &lb, v, 1) == 0, "sample");
}

static const struct profile_diff_row *row(const struct profile_diff_row *r, size_t n,
					  const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	return NULL;
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

int main(void)
{
	struct profile *o = profile__new(&desc), *n = profile__new(&desc);
	struct profile_diff_row *r = NULL;
	const struct profile_diff_row *x;
	size_t nr = 0;

	if (!o || !n)
		return 1;
	/* Base: total 100; a 60% self, b 20%, gone 20% (only here). b's change, 40% - 20%, and
	 * gone's, 20% - 0%, differ in a double's last bits: ties all the same, by name. */
	add(o, (const char *[]){"main", "a"}, 2, 60);
	add(o, (const char *[]){"main", "b"}, 2, 20);
	add(o, (const char *[]){"main", "gone"}, 2, 20);
	/* New: total 200; a 10%, b 40%, rec (recursive: once in total) 50%, fresh only here. The
	 * names are interned in another order, so string indices differ from the base's. */
	add(n, (const char *[]){"main", "rec", "rec", "fresh"}, 4, 100);
	add(n, (const char *[]){"main", "b"}, 2, 80);
	add(n, (const char *[]){"main", "a"}, 2, 20);
	CHECK(profile_diff__compute(o, n, &r, &nr) == 0, "compute");
	CHECK(nr == 6, "main, a, b, gone, rec, fresh: %zu rows", nr);
	x = row(r, nr, "a");
	CHECK(x && NEAR(x->old_self, 0.6) && NEAR(x->new_self, 0.1) && NEAR(x->old_total, 0.6) &&
		      NEAR(x->new_total, 0.1),
	      "a: 60%% -> 10%%");
	x = row(r, nr, "gone");
	CHECK(x && NEAR(x->old_self, 0.2) && NEAR(x->new_self, 0) && NEAR(x->new_total, 0),
	      "gone: only in the base");
	x = row(r, nr, "rec");
	CHECK(x && NEAR(x->new_total, 0.5) && NEAR(x->new_self, 0) && NEAR(x->old_total, 0),
	      "rec: 50%% total, counted once though twice in the stack");
	x = row(r, nr, "fresh");
	CHECK(x && NEAR(x->new_self, 0.5) && NEAR(x->old_self, 0), "fresh: only in the new");
	x = row(r, nr, "main");
	CHECK(x && NEAR(x->old_total, 1) && NEAR(x->new_total, 1) && NEAR(x->new_self, 0),
	      "main: 100%% total on both sides");
	/* Changes: a -50, fresh +50 and rec +50 (total), b +20, gone -20, main 0; ties by name. */
	CHECK(nr == 6 && !strcmp(r[0].name, "a") && !strcmp(r[1].name, "fresh") &&
		      !strcmp(r[2].name, "rec") && !strcmp(r[3].name, "b") &&
		      !strcmp(r[4].name, "gone") && !strcmp(r[5].name, "main"),
	      "biggest change first: %s %s %s %s %s %s", nr > 0 ? r[0].name : "",
	      nr > 1 ? r[1].name : "", nr > 2 ? r[2].name : "", nr > 3 ? r[3].name : "",
	      nr > 4 ? r[4].name : "", nr > 5 ? r[5].name : "");
	free(r);
	r = NULL;
	/* An empty side: shares 0, no division by zero. */
	profile__delete(o);
	o = profile__new(&desc);
	CHECK(o && profile_diff__compute(o, n, &r, &nr) == 0 && nr == 5, "empty base: %zu", nr);
	x = r ? row(r, nr, "b") : NULL;
	CHECK(x && NEAR(x->old_self, 0) && NEAR(x->new_self, 0.4), "b against an empty base");
	free(r);
	profile__delete(o);
	profile__delete(n);
	return check_summary("test_profile_diff");
}

// SPDX-License-Identifier: BSD-2-Clause
/* Self and total shares from a hand-built profile, recursion counted once in total. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "cmd/summary.h"

static uint32_t loc(struct profile *p, const char *fn, enum frame_kind kind)
{
	struct profile_function f = {0};
	struct profile_location l = {.kind = kind, .address = (uint64_t)profile__string(p, fn)};

	f.name = f.system_name = profile__string(p, fn);
	l.function = profile__function(p, &f);
	return (uint32_t)profile__location(p, &l);
}

static const struct function_share *find(const struct summary *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

int main(void)
{
	struct profile_desc d = {.sample_type = "cpu",
				 .sample_unit = "nanoseconds",
				 .period_type = "cpu",
				 .period_unit = "nanoseconds",
				 .period = 10};
	struct profile *p = profile__new(&d);
	struct profile_labels lab = {.pid = 1, .tid = 1};
	struct summary s;
	const struct function_share *f;

	CHECK(p != NULL, "profile__new: %s", strerror(errno));
	if (!p)
		return check_summary("test_summary");
	uint32_t main_ = loc(p, "main", FRAME_NATIVE), work = loc(p, "work", FRAME_NATIVE),
		 rec = loc(p, "rec", FRAME_NATIVE), sys = loc(p, "sys_write", FRAME_KERNEL);
	uint32_t s1[] = {work, main_};		/* 6 samples: work self */
	uint32_t s2[] = {rec, rec, rec, main_}; /* 3 samples: recursion */
	uint32_t s3[] = {sys, work, main_};	/* 1 sample: in the kernel */

	profile__add_sample(p, profile__stack(p, s1, 2), &lab, 60, 6);
	profile__add_sample(p, profile__stack(p, s2, 4), &lab, 30, 3);
	profile__add_sample(p, profile__stack(p, s3, 3), &lab, 10, 1);

	CHECK(summary__compute(p, &s) == 0, "compute failed");
	CHECK_U64(s.samples, 100); /* the total value, not the sample count */
	f = find(&s, "main");
	CHECK(f && f->self == 0 && f->total == 100, "main self %ld total %ld",
	      f ? (long)f->self : -1, f ? (long)f->total : -1);
	f = find(&s, "work");
	CHECK(f && f->self == 60 && f->total == 70, "work self %ld total %ld",
	      f ? (long)f->self : -1, f ? (long)f->total : -1);
	f = find(&s, "rec");
	CHECK(f && f->self == 30 && f->total == 30,
	      "rec counted once per sample: self %ld total %ld", f ? (long)f->self : -1,
	      f ? (long)f->total : -1);
	f = find(&s, "sys_write");
	CHECK(f && f->self == 10 && f->kernel, "kernel frame: self %ld kernel %d",
	      f ? (long)f->self : -1, f ? f->kernel : -1);

	/* The printed table: sorted by self, percentages of all samples. */
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	summary__print_top(&s, 2, out);
	fclose(out);
	CHECK(text && strstr(text, "Top 2 functions by self"), "%s", text);
	CHECK(text && strstr(text, "60.00%  70.00%  work\n"), "work row missing:\n%s", text);
	CHECK(text && strstr(text, "30.00%  30.00%  rec\n"), "rec row missing:\n%s", text);
	CHECK(text && strstr(text, "0.00% 100.00%  main\n"), "main by total missing:\n%s", text);
	CHECK(text && !strstr(text, "sys_write"), "top 2 printed a third row:\n%s", text);
	free(text);
	summary__release(&s);
	profile__delete(p);
	return check_summary("test_summary");
}

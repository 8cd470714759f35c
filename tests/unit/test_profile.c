// SPDX-License-Identifier: BSD-2-Clause
/* The profile model: interning, zero entries, sample merging, growth. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "model/profile.h"

static const struct profile_desc desc = {
	.sample_type = "cpu",
	.sample_unit = "nanoseconds",
	.period_type = "cpu",
	.period_unit = "nanoseconds",
	.period = 10000000,
	.time_nanos = 1700000000000000000ULL,
	.duration_nanos = 5000000000ULL,
};

static void test_new(void)
{
	char type[] = "cpu";
	struct profile_desc d = desc;
	struct profile *p;
	size_t n = 99;

	d.sample_type = type;
	p = profile__new(&d);
	CHECK(p != NULL, "profile__new: %s", strerror(errno));
	if (!p)
		return;
	/* The model owns its copy of the description's strings. */
	type[0] = 'X';
	CHECK_STR(profile__desc(p)->sample_type, "cpu");
	CHECK_STR(profile__desc(p)->period_unit, "nanoseconds");
	CHECK_U64(profile__desc(p)->period, 10000000);
	CHECK_U64(profile__desc(p)->duration_nanos, 5000000000ULL);

	/* Every table starts with its zero entry. */
	CHECK_U64(profile__nr_strings(p), 1);
	CHECK_STR(profile__string_at(p, 0), "");
	CHECK_U64(profile__nr_mappings(p), 1);
	CHECK(profile__mapping_at(p, 0) && profile__mapping_at(p, 0)->start == 0 &&
		      profile__mapping_at(p, 0)->filename == 0,
	      "mapping 0 is not zero");
	CHECK_U64(profile__nr_functions(p), 1);
	CHECK(profile__function_at(p, 0) && profile__function_at(p, 0)->name == 0,
	      "function 0 is not zero");
	CHECK_U64(profile__nr_locations(p), 1);
	CHECK(profile__location_at(p, 0) && profile__location_at(p, 0)->address == 0,
	      "location 0 is not zero");
	CHECK_U64(profile__nr_stacks(p), 1);
	CHECK(profile__stack_at(p, 0, &n) == NULL && n == 0, "stack 0 has depth %zu", n);
	CHECK_U64(profile__nr_samples(p), 1);
	CHECK(profile__sample_at(p, 0) && profile__sample_at(p, 0)->count == 0 &&
		      profile__sample_at(p, 0)->stack == 0,
	      "sample 0 is not zero");

	/* Out of range reads are NULL, not a crash. */
	CHECK(profile__string_at(p, 1) == NULL, "string 1 exists");
	CHECK(profile__mapping_at(p, 7) == NULL, "mapping 7 exists");
	CHECK(profile__location_name(p, 3) == NULL, "location 3 has a name");
	profile__delete(p);

	errno = 0;
	CHECK(profile__new(NULL) == NULL && errno == EINVAL, "profile__new(NULL): errno %d", errno);
	profile__delete(NULL);
}

static void test_strings(void)
{
	struct profile *p = profile__new(&desc);
	char buf[32];
	int64_t a, b, c;

	CHECK(p != NULL, "profile__new");
	if (!p)
		return;
	CHECK_U64(profile__string(p, ""), 0);
	a = profile__string(p, "main");
	strcpy(buf, "main");
	b = profile__string(p, buf); /* equal content, other pointer */
	c = profile__string(p, "mai");
	CHECK(a > 0, "index %lld", (long long)a);
	CHECK_U64(b, a);
	CHECK(c > 0 && c != a, "prefix got %lld, main %lld", (long long)c, (long long)a);
	CHECK_U64(profile__nr_strings(p), 3);
	/* The model copies: changing the caller's buffer changes nothing. */
	buf[0] = 'X';
	CHECK_STR(profile__string_at(p, (uint32_t)a), "main");
	CHECK_U64(profile__find_string(p, "main"), a);
	CHECK_U64(profile__find_string(p, ""), 0);
	CHECK(profile__find_string(p, "absent") == -ENOENT, "find absent");
	CHECK(profile__string(p, NULL) == -EINVAL, "NULL string accepted");
	profile__delete(p);
}

static void test_tables(void)
{
	struct profile *p = profile__new(&desc);
	struct profile_mapping m = {0};
	struct profile_function f = {0};
	struct profile_location l = {0};
	int64_t mi, mi2, fi, fi2, li, li2, lu, si, si2, si3;
	uint32_t stack[3], other[3];
	const uint32_t *got;
	size_t n;

	CHECK(p != NULL, "profile__new");
	if (!p)
		return;

	/* An input equal to the zero entry is the zero entry. */
	CHECK_U64(profile__mapping(p, &m), 0);
	CHECK_U64(profile__function(p, &f), 0);
	CHECK_U64(profile__location(p, &l), 0);
	CHECK_U64(profile__stack(p, stack, 0), 0);

	m.start = 0x555555554000;
	m.limit = 0x555555580000;
	m.filename = (uint32_t)profile__string(p, "/usr/bin/app");
	m.build_id = (uint32_t)profile__string(p, "0123abcd");
	mi = profile__mapping(p, &m);
	CHECK(mi == 1, "first mapping got %lld", (long long)mi);
	/* has_functions is not part of the identity; once set it stays set. */
	m.has_functions = true;
	CHECK_U64(profile__mapping(p, &m), mi);
	m.has_functions = false;
	CHECK_U64(profile__mapping(p, &m), mi);
	CHECK(profile__mapping_at(p, (uint32_t)mi)->has_functions, "has_functions was lost");
	m.offset = 0x1000;
	mi2 = profile__mapping(p, &m);
	CHECK(mi2 == 2, "other offset got %lld", (long long)mi2);
	CHECK_U64(profile__nr_mappings(p), 3);
	m.filename = 1000; /* no such string */
	CHECK(profile__mapping(p, &m) == -EINVAL, "dangling filename accepted");

	f.name = (uint32_t)profile__string(p, "main");
	f.system_name = f.name;
	f.filename = (uint32_t)profile__string(p, "app.c");
	fi = profile__function(p, &f);
	CHECK_U64(fi, 1);
	CHECK_U64(profile__function(p, &f), fi);
	f.filename = 0;
	fi2 = profile__function(p, &f);
	CHECK_U64(fi2, 2);
	CHECK_U64(profile__nr_functions(p), 3);

	l.mapping = (uint32_t)mi;
	l.address = 0x1100;
	l.function = (uint32_t)fi;
	li = profile__location(p, &l);
	CHECK_U64(li, 1);
	CHECK_U64(profile__location(p, &l), li);
	l.kind = FRAME_KERNEL;
	l.mapping = 0;
	l.address = 0xffffffff81000000;
	li2 = profile__location(p, &l);
	CHECK_U64(li2, 2);
	l.kind = FRAME_NATIVE;
	l.mapping = (uint32_t)mi2;
	l.address = 0x2234;
	l.function = 0;
	l.label = (uint32_t)profile__string(p, "[unknown] app+0x2234");
	lu = profile__location(p, &l);
	CHECK_U64(lu, 3);
	CHECK_U64(profile__nr_locations(p), 4);
	l.function = 99;
	CHECK(profile__location(p, &l) == -EINVAL, "dangling function accepted");

	/* The display name is the function's, else the label, else a placeholder. */
	CHECK_STR(profile__location_name(p, (uint32_t)li), "main");
	CHECK_STR(profile__location_name(p, (uint32_t)lu), "[unknown] app+0x2234");
	l.label = 0;
	l.function = 0;
	l.address = 0x9999;
	CHECK_STR(profile__location_name(p, (uint32_t)profile__location(p, &l)), "[unknown]");

	stack[0] = (uint32_t)lu;
	stack[1] = (uint32_t)li2;
	stack[2] = (uint32_t)li;
	memcpy(other, stack, sizeof(other));
	si = profile__stack(p, stack, 3);
	CHECK_U64(si, 1);
	CHECK_U64(profile__stack(p, other, 3), si);
	si2 = profile__stack(p, stack, 2); /* a prefix is another stack */
	CHECK_U64(si2, 2);
	other[0] = (uint32_t)li;
	other[2] = (uint32_t)lu;
	si3 = profile__stack(p, other, 3); /* same set, other order */
	CHECK_U64(si3, 3);
	CHECK_U64(profile__nr_stacks(p), 4);
	got = profile__stack_at(p, (uint32_t)si, &n);
	CHECK(got && n == 3 && got[0] == lu && got[1] == li2 && got[2] == li,
	      "stack 1 read back wrong (depth %zu)", n);
	other[1] = 500;
	CHECK(profile__stack(p, other, 3) == -EINVAL, "dangling location accepted");
	other[1] = 0;
	CHECK(profile__stack(p, other, 3) == -EINVAL, "location 0 in a stack accepted");
	profile__delete(p);
}

static void test_samples(void)
{
	struct profile *p = profile__new(&desc);
	struct profile_location l = {.address = 0x10, .kind = FRAME_KERNEL};
	struct profile_labels a, b;
	const struct profile_sample *s;
	uint32_t loc;
	int64_t stack, stack2;

	CHECK(p != NULL, "profile__new");
	if (!p)
		return;
	l.label = (uint32_t)profile__string(p, "k");
	loc = (uint32_t)profile__location(p, &l);
	stack = profile__stack(p, &loc, 1);
	l.address = 0x20;
	loc = (uint32_t)profile__location(p, &l);
	stack2 = profile__stack(p, &loc, 1);
	a = (struct profile_labels){.pid = 10, .tid = 11};
	a.comm = (uint32_t)profile__string(p, "app");
	a.thread_name = (uint32_t)profile__string(p, "worker");
	b = a;

	CHECK(profile__add_sample(p, (uint32_t)stack, &a, 100, 1) == 0, "add");
	CHECK(profile__add_sample(p, (uint32_t)stack, &b, 200, 2) == 0, "add");
	CHECK_U64(profile__nr_samples(p), 2);
	s = profile__sample_at(p, 1);
	CHECK(s && s->value == 300 && s->count == 3, "merged sample wrong");
	CHECK(s && s->labels.pid == 10 && s->labels.tid == 11 && s->stack == stack,
	      "sample key wrong");

	/* Each label separates samples, and so does the stack. */
	b.tid = 12;
	CHECK(profile__add_sample(p, (uint32_t)stack, &b, 5, 1) == 0, "add");
	b = a;
	b.pid = 99;
	CHECK(profile__add_sample(p, (uint32_t)stack, &b, 5, 1) == 0, "add");
	b = a;
	b.thread_name = a.comm;
	CHECK(profile__add_sample(p, (uint32_t)stack, &b, 5, 1) == 0, "add");
	b = a;
	b.comm = 0;
	CHECK(profile__add_sample(p, (uint32_t)stack, &b, 5, 1) == 0, "add");
	CHECK(profile__add_sample(p, (uint32_t)stack2, &a, 5, 1) == 0, "add");
	CHECK_U64(profile__nr_samples(p), 7);
	/* The first sample was not touched by the others. */
	s = profile__sample_at(p, 1);
	CHECK(s && s->value == 300 && s->count == 3, "first sample changed");
	CHECK(profile__add_sample(p, (uint32_t)stack, &a, 1, 1) == 0, "add");
	CHECK_U64(profile__nr_samples(p), 7);
	CHECK_U64(profile__sample_at(p, 1)->count, 4);

	/* An empty stack is a valid key (a sample with no frames), the zero sample stays zero. */
	CHECK(profile__add_sample(p, 0, &a, 1, 1) == 0, "add empty stack");
	CHECK_U64(profile__nr_samples(p), 8);
	CHECK_U64(profile__sample_at(p, 0)->count, 0);

	CHECK(profile__add_sample(p, 1000, &a, 1, 1) == -EINVAL, "dangling stack accepted");
	b = a;
	b.comm = 5000;
	CHECK(profile__add_sample(p, (uint32_t)stack, &b, 1, 1) == -EINVAL,
	      "dangling comm accepted");
	CHECK(profile__add_sample(p, (uint32_t)stack, NULL, 1, 1) == -EINVAL,
	      "NULL labels accepted");
	profile__delete(p);
}

/* Enough entries to grow every hash index many times over; checks nothing was lost on the way. */
static void test_growth(void)
{
	enum { NR = 200000 };
	struct profile *p = profile__new(&desc);
	char name[64];
	int64_t idx;
	int bad = 0, err = 0;
	uint32_t *locs;
	struct profile_labels lb = {.pid = 1};

	CHECK(p != NULL, "profile__new");
	if (!p)
		return;
	for (int i = 0; i < NR; i++) {
		snprintf(name, sizeof(name), "function_%d", i);
		idx = profile__string(p, name);
		if (idx != i + 1)
			bad++;
	}
	CHECK(bad == 0, "%d strings got an unexpected index", bad);
	CHECK_U64(profile__nr_strings(p), NR + 1);
	for (int i = 0; i < NR; i += 997) {
		snprintf(name, sizeof(name), "function_%d", i);
		if (profile__string(p, name) != i + 1 || strcmp(profile__string_at(p, i + 1), name))
			bad++;
	}
	CHECK(bad == 0, "%d strings not found again after growth", bad);
	CHECK_U64(profile__nr_strings(p), NR + 1);

	/* A string longer than an arena block. */
	{
		size_t len = 200000;
		char *big = malloc(len + 1);

		CHECK(big != NULL, "malloc");
		if (big) {
			memset(big, 'x', len);
			big[len] = '\0';
			idx = profile__string(p, big);
			CHECK(idx > 0, "big string: %lld", (long long)idx);
			CHECK(idx > 0 && strlen(profile__string_at(p, (uint32_t)idx)) == len,
			      "big string truncated");
			CHECK_U64(profile__string(p, big), idx);
			/* Short strings after it still intern correctly. */
			CHECK_U64(profile__string(p, "function_7"), 8);
			free(big);
		}
	}

	/* Locations, stacks and samples grow too. */
	locs = calloc(NR / 4, sizeof(*locs));
	CHECK(locs != NULL, "calloc");
	if (locs) {
		for (int i = 0; i < NR / 4 && !err; i++) {
			struct profile_location l = {.address = 0x1000 + i, .label = i + 1};

			idx = profile__location(p, &l);
			if (idx < 0)
				err = (int)idx;
			locs[i] = (uint32_t)idx;
		}
		CHECK(err == 0, "location: %d", err);
		/* Stacks of depth 1..64 at every offset: many distinct stacks sharing frames. */
		for (int i = 0; i + 64 <= NR / 4 && !err; i += 8) {
			idx = profile__stack(p, locs + i, 1 + i % 64);
			if (idx < 0)
				err = (int)idx;
			else
				err = profile__add_sample(p, (uint32_t)idx, &lb, 1, 1);
		}
		CHECK(err == 0, "stack/sample: %d", err);
		CHECK_U64(profile__nr_locations(p), NR / 4 + 1);
		CHECK(profile__nr_stacks(p) > 6000, "only %zu stacks", profile__nr_stacks(p));
		CHECK_U64(profile__nr_samples(p), profile__nr_stacks(p));
		free(locs);
	}
	profile__delete(p);
}

int main(void)
{
	test_new();
	test_strings();
	test_tables();
	test_samples();
	test_growth();
	return check_summary("test_profile");
}

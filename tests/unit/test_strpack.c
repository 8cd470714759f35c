// SPDX-License-Identifier: BSD-2-Clause
/*
 * strpack: every string comes back from its id, equal strings share an id, ids follow the sorted
 * order, prefixes longer than a byte can say and block boundaries are crossed, buffers too small
 * are refused, and the set takes fewer bytes than the strings when they share prefixes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/strpack.h"

static void test_small(void)
{
	const char *strs[] = {"zeta", "alpha", "", "alphabet", "alpha", "beta", "alp"};
	size_t n = sizeof(strs) / sizeof(strs[0]);
	uint32_t ids[sizeof(strs) / sizeof(strs[0])];
	char buf[64];
	struct strpack *p = strpack__new(strs, n, ids);

	CHECK(p != NULL, "new: %s", strerror(errno));
	if (!p)
		return;
	CHECK_U64(strpack__count(p), 6);
	for (size_t i = 0; i < n; i++)
		CHECK_STR(strpack__get(p, ids[i], buf, sizeof(buf)), strs[i]);
	CHECK_U64(ids[1], ids[4]);
	/* Sorted: "" < "alp" < "alpha" < "alphabet" < "beta" < "zeta". */
	CHECK_U64(ids[2], 0);
	CHECK_U64(ids[6], 1);
	CHECK_U64(ids[1], 2);
	CHECK_U64(ids[3], 3);
	CHECK_U64(ids[5], 4);
	CHECK_U64(ids[0], 5);

	errno = 0;
	CHECK(!strpack__get(p, 6, buf, sizeof(buf)) && errno == EINVAL, "id past the end");
	errno = 0;
	/* "alphabet" needs 9 bytes; "alpha" before it in the block fits in 8. */
	CHECK(!strpack__get(p, ids[3], buf, 8) && errno == ERANGE, "alphabet in 8 bytes");
	CHECK_STR(strpack__get(p, ids[3], buf, 9), "alphabet");
	CHECK_STR(strpack__get(p, ids[1], buf, 6), "alpha");
	errno = 0;
	CHECK(!strpack__get(p, ids[1], buf, 0) && errno == EINVAL, "a buffer of 0 bytes");
	strpack__delete(p);
	strpack__delete(NULL);
	CHECK_U64(strpack__count(NULL), 0);
}

static void test_empty(void)
{
	uint32_t id;
	char buf[4];
	struct strpack *p = strpack__new(NULL, 0, &id);

	CHECK(p != NULL, "empty set: %s", strerror(errno));
	CHECK_U64(strpack__count(p), 0);
	CHECK(!strpack__get(p, 0, buf, sizeof(buf)), "id 0 of an empty set");
	strpack__delete(p);
}

/* More than a block of names sharing over 255 bytes of prefix, and many blocks of symbols. */
static void test_many(void)
{
	enum { N = 5000, LONG = 40 };
	char **strs = calloc(N, sizeof(*strs));
	uint32_t *ids = calloc(N, sizeof(*ids));
	size_t raw = 0, bad = 0;
	char buf[1024];
	struct strpack *p = NULL;

	CHECK(strs && ids, "calloc");
	if (!strs || !ids)
		goto out;
	for (size_t i = 0; i < N; i++) {
		char *s = malloc(600);

		if (!s)
			goto out;
		if (i < LONG) {
			/* 300 shared bytes, then the index. */
			memset(s, 'p', 300);
			snprintf(s + 300, 300, "_%zu", i);
		} else {
			snprintf(s, 600, "%s_%s_%zu", i % 3 ? "tcp_v4" : "ext4_mb",
				 i % 2 ? "rcv" : "init", (i * 7919) % N);
		}
		strs[i] = s;
		raw += strlen(s) + 1;
	}
	p = strpack__new((const char *const *)strs, N, ids);
	CHECK(p != NULL, "new: %s", strerror(errno));
	if (!p)
		goto out;
	for (size_t i = 0; i < N; i++) {
		const char *got = strpack__get(p, ids[i], buf, sizeof(buf));

		if (!got || strcmp(got, strs[i]))
			bad++;
	}
	CHECK(bad == 0, "%zu of %d strings came back wrong", bad, N);
	/* Ids follow the sorted order. */
	for (size_t i = 1; i < N; i++)
		if ((strcmp(strs[i - 1], strs[i]) < 0) != (ids[i - 1] < ids[i]))
			bad++;
	CHECK(bad == 0, "%zu ids out of order", bad);
	CHECK(strpack__bytes(p) < raw * 2 / 3, "%zu bytes packed for %zu of strings",
	      strpack__bytes(p), raw);
out:
	strpack__delete(p);
	for (size_t i = 0; strs && i < N; i++)
		free(strs[i]);
	free(strs);
	free(ids);
}

int main(void)
{
	test_small();
	test_empty();
	test_many();
	return check_summary("test_strpack");
}

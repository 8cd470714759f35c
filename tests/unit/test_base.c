// SPDX-License-Identifier: BSD-2-Clause
/*
 * The base layer's small utilities: growable arrays, the LRU list, the hash index, UTF-8, hex and
 * percent-decoding, LEB128, path normalisation, the monotonic millisecond clock, threads that
 * take no signals, and libcurl's global init.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/clock.h"
#include "base/curl_client.h"
#include "base/hash.h"
#include "base/hash_index.h"
#include "base/hex.h"
#include "base/leb128.h"
#include "base/log.h"
#include "base/log_text.h"
#include "base/lru.h"
#include "base/path.h"
#include "base/search.h"
#include "base/thread.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "check.h"

/* --- vec --- */

static void test_vec_growth(void)
{
	uint64_t *v = NULL;
	size_t cap = 0, nr = 0;
	int err = 0;

	CHECK(VEC_RESERVE(v, cap, 1) == 0, "first reserve");
	CHECK_U64(cap, VEC_MIN_CAP);
	/* Appending one at a time doubles: the capacities seen are powers of two times MIN. */
	for (uint64_t i = 0; i < 1000 && !err; i++) {
		size_t before = cap;

		err = VEC_RESERVE(v, cap, nr + 1);
		if (!err && cap != before)
			CHECK_U64(cap, before * 2);
		if (!err)
			v[nr++] = i;
	}
	CHECK(err == 0, "append: %d", err);
	CHECK_U64(cap, 1024);
	for (size_t i = 0; i < nr; i++)
		if (v[i] != i)
			CHECK(0, "v[%zu] = %" PRIu64, i, v[i]);
	/* Enough room already: nothing moves. */
	{
		uint64_t *before = v;

		CHECK(VEC_RESERVE(v, cap, 17) == 0 && v == before && cap == 1024, "no-op reserve");
	}
	/* A jump past double lands on a doubling that holds it. */
	CHECK(VEC_RESERVE(v, cap, 5000) == 0, "jump");
	CHECK_U64(cap, 8192);
	CHECK(VEC_RESERVE_MORE(v, cap, 8000, 192) == 0 && cap == 8192, "more fits");
	CHECK(VEC_RESERVE_MORE(v, cap, 8000, 193) == 0 && cap == 16384, "more grows");
	free(v);

	/* A byte pool grows like any other array. */
	{
		char *pool = NULL;
		size_t pcap = 0;

		CHECK(VEC_RESERVE(pool, pcap, 100) == 0 && pcap == 128, "pool: %zu", pcap);
		free(pool);
	}
}

static void test_vec_overflow(void)
{
	const size_t max8 = SIZE_MAX / 8;
	void *data = NULL;
	size_t cap = 0;

	/* need * elem_size past SIZE_MAX: refused before any allocation, nothing changed. */
	CHECK_U64(vec__next_cap(0, max8 + 1, 8), 0);
	CHECK(vec__reserve(&data, &cap, max8 + 1, 8) == -ENOMEM && !data && !cap, "need overflow");
	CHECK(vec__reserve(&data, &cap, SIZE_MAX, 2) == -ENOMEM && !data && !cap, "SIZE_MAX");
	/* nr + more wrapping around. */
	CHECK(vec__reserve_more(&data, &cap, SIZE_MAX - 3, 4, 1) == -ENOMEM && !data && !cap,
	      "nr + more overflow");
	/* Doubling that would overflow stops at what is needed, and never wraps to a small size. */
	CHECK_U64(vec__next_cap(max8 / 2 + 1, max8 / 2 + 2, 8), max8 / 2 + 2);
	CHECK_U64(vec__next_cap(max8 / 2, max8 / 2 + 1, 8), max8 / 2 * 2);
	CHECK_U64(vec__next_cap(max8 - 1, max8, 8), max8);
	CHECK_U64(vec__next_cap(SIZE_MAX / 2 + 1, SIZE_MAX, 1), SIZE_MAX);
	/* Elements larger than the first capacity allows. */
	CHECK_U64(vec__next_cap(0, 1, SIZE_MAX / 4), 1);
	CHECK_U64(vec__next_cap(0, 1, SIZE_MAX), 1);
	CHECK_U64(vec__next_cap(0, 2, SIZE_MAX), 0);
	CHECK_U64(vec__next_cap(0, 1, 0), 0);
	CHECK(vec__reserve(&data, &cap, 1, 0) == -ENOMEM && !data, "element size 0");
}

/* --- lru --- */

struct lnode {
	int v;
	struct lru_link link;
};

/* The values from newest to oldest, as a string; checks the links both ways agree. */
static void lru_order(const struct lru *l, char *out)
{
	size_t n = 0, back = 0;

	for (const struct lru_link *k = lru__newest(l); k; k = k->older)
		out[n++] = (char)('0' + LRU_ENTRY(k, struct lnode, link)->v);
	out[n] = '\0';
	for (const struct lru_link *k = lru__oldest(l); k; k = k->newer)
		back++;
	CHECK(back == n && n == lru__count(l), "%zu forward, %zu back, count %zu", n, back,
	      lru__count(l));
}

static void test_lru(void)
{
	struct lnode nodes[4] = {{.v = 0}, {.v = 1}, {.v = 2}, {.v = 3}};
	struct lru l = {0};
	char order[8];

	CHECK(lru__oldest(&l) == NULL && lru__newest(&l) == NULL && lru__count(&l) == 0, "empty");
	CHECK(LRU_ENTRY(lru__oldest(&l), struct lnode, link) == NULL, "entry of NULL");
	for (int i = 0; i < 4; i++)
		lru__push_front(&l, &nodes[i].link);
	lru_order(&l, order);
	CHECK_STR(order, "3210");
	CHECK(LRU_ENTRY(lru__oldest(&l), struct lnode, link) == &nodes[0], "oldest");

	lru__touch(&l, &nodes[0].link); /* the oldest becomes the newest */
	lru_order(&l, order);
	CHECK_STR(order, "0321");
	lru__touch(&l, &nodes[0].link); /* already newest */
	lru__touch(&l, &nodes[2].link); /* from the middle */
	lru_order(&l, order);
	CHECK_STR(order, "2031");

	lru__unlink(&l, &nodes[0].link); /* middle */
	lru_order(&l, order);
	CHECK_STR(order, "231");
	CHECK(!lru__linked(&l, &nodes[0].link), "unlinked");
	lru__unlink(&l, &nodes[0].link); /* twice: nothing */
	lru_order(&l, order);
	CHECK_STR(order, "231");
	lru__unlink(&l, &nodes[1].link); /* oldest */
	lru__unlink(&l, &nodes[2].link); /* newest */
	lru_order(&l, order);
	CHECK_STR(order, "3");
	CHECK(lru__linked(&l, &nodes[3].link), "the only one is linked");
	lru__touch(&l, &nodes[1].link); /* touch of an unlinked node links it */
	lru_order(&l, order);
	CHECK_STR(order, "13");
	lru__unlink(&l, &nodes[3].link);
	lru__unlink(&l, &nodes[1].link);
	CHECK(lru__oldest(&l) == NULL && lru__newest(&l) == NULL && lru__count(&l) == 0,
	      "empty again");
	/* Eviction from the oldest end, as the caches do it. */
	for (int i = 0; i < 4; i++)
		lru__push_front(&l, &nodes[i].link);
	for (int i = 0; i < 4; i++) {
		struct lnode *victim = LRU_ENTRY(lru__oldest(&l), struct lnode, link);

		CHECK(victim == &nodes[i], "evict %d", i);
		lru__unlink(&l, &victim->link);
	}
	CHECK_U64(lru__count(&l), 0);
}

/* --- hash_index --- */

struct htable {
	uint64_t *keys; /* keys[0] unused: ids start at 1 */
	size_t nr, cap;
	struct hash_index idx;
	bool same_hash; /* every key hashes alike: only eq() tells them apart */
	size_t eq_calls;
};

static bool key_eq(const void *ctx, uint32_t id, const void *key)
{
	struct htable *t = (struct htable *)ctx;

	t->eq_calls++;
	return t->keys[id] == *(const uint64_t *)key;
}

static uint32_t key_hash(const struct htable *t, uint64_t k)
{
	return t->same_hash ? 7 : hash_fold(hash_mix64(k));
}

static int64_t intern(struct htable *t, uint64_t k)
{
	uint32_t h = key_hash(t, k), id = hash_index__find(&t->idx, h, key_eq, t, &k);

	if (id)
		return id;
	if (hash_index__reserve(&t->idx) || VEC_RESERVE(t->keys, t->cap, t->nr + 1))
		return -ENOMEM;
	id = (uint32_t)t->nr++;
	t->keys[id] = k;
	hash_index__insert(&t->idx, id, h);
	return id;
}

static void test_hash_index(void)
{
	struct htable t = {.nr = 1};
	uint64_t k = 42;
	bool ok = true;

	CHECK(hash_index__find(&t.idx, 1, key_eq, &t, &k) == 0, "empty index finds nothing");
	CHECK_U64(hash_index__bytes(&t.idx), 0);
	for (uint64_t i = 0; i < 20000 && ok; i++)
		ok = intern(&t, i * 3) == (int64_t)i + 1;
	CHECK(ok, "fresh ids in order");
	for (uint64_t i = 0; i < 20000 && ok; i++)
		ok = intern(&t, i * 3) == (int64_t)i + 1;
	CHECK(ok, "the same ids found again");
	CHECK_U64(t.nr, 20001);
	CHECK_U64(t.idx.nr, 20000);
	/* Load at most 1/2: 20000 ids in 65536 slots. */
	CHECK_U64(t.idx.mask + 1, 65536);
	CHECK_U64(hash_index__bytes(&t.idx), 65536 * sizeof(struct hash_index_slot));
	k = 1;
	CHECK(hash_index__find(&t.idx, key_hash(&t, k), key_eq, &t, &k) == 0, "absent key");
	/* A probe compares only entries of the same hash. */
	t.eq_calls = 0;
	k = 300;
	CHECK_U64(hash_index__find(&t.idx, key_hash(&t, k), key_eq, &t, &k), 101);
	CHECK(t.eq_calls <= 2, "%zu comparisons", t.eq_calls);
	hash_index__free(&t.idx);
	CHECK(t.idx.slots == NULL && t.idx.nr == 0, "freed");
	free(t.keys);

	/* Every hash the same: equality alone tells entries apart, across growth. */
	t = (struct htable){.nr = 1, .same_hash = true};
	for (uint64_t i = 0; i < 300; i++)
		ok = ok && intern(&t, i) == (int64_t)i + 1;
	for (uint64_t i = 0; i < 300; i++)
		ok = ok && intern(&t, i) == (int64_t)i + 1;
	CHECK(ok, "colliding hashes");
	CHECK_U64(t.idx.nr, 300);
	hash_index__free(&t.idx);
	free(t.keys);
}

/* --- UTF-8 --- */

static size_t seq(const char *s)
{
	return utf8__seq(s, strlen(s));
}

static void test_utf8_seq(void)
{
	CHECK_U64(seq("a"), 1);
	CHECK_U64(utf8__seq("", 1), 1);	   /* NUL is a character */
	CHECK_U64(seq("\xc3\xa9"), 2);	   /* é */
	CHECK_U64(seq("\xe2\x82\xac"), 3); /* € */
	CHECK_U64(seq("\xf0\x9f\x98\x80"), 4);
	/* The edges of each length. */
	CHECK_U64(seq("\xc2\x80"), 2);	       /* U+0080 */
	CHECK_U64(seq("\xdf\xbf"), 2);	       /* U+07FF */
	CHECK_U64(seq("\xe0\xa0\x80"), 3);     /* U+0800 */
	CHECK_U64(seq("\xef\xbf\xbf"), 3);     /* U+FFFF */
	CHECK_U64(seq("\xf0\x90\x80\x80"), 4); /* U+10000 */
	CHECK_U64(seq("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF */
	/* Overlong forms. */
	CHECK_U64(seq("\xc0\x80"), 0);
	CHECK_U64(seq("\xc1\xbf"), 0);
	CHECK_U64(seq("\xe0\x80\x80"), 0);
	CHECK_U64(seq("\xe0\x9f\xbf"), 0);
	CHECK_U64(seq("\xf0\x80\x80\x80"), 0);
	CHECK_U64(seq("\xf0\x8f\xbf\xbf"), 0);
	/* UTF-16 surrogates, and the characters around them. */
	CHECK_U64(seq("\xed\xa0\x80"), 0); /* U+D800 */
	CHECK_U64(seq("\xed\xbf\xbf"), 0); /* U+DFFF */
	CHECK_U64(seq("\xed\x9f\xbf"), 3); /* U+D7FF */
	CHECK_U64(seq("\xee\x80\x80"), 3); /* U+E000 */
	/* Past U+10FFFF, and lead bytes no character has. */
	CHECK_U64(seq("\xf4\x90\x80\x80"), 0);
	CHECK_U64(seq("\xf5\x80\x80\x80"), 0);
	CHECK_U64(seq("\xf8\x88\x80\x80\x80"), 0);
	CHECK_U64(seq("\xff"), 0);
	CHECK_U64(seq("\xfe"), 0);
	/* A stray continuation byte; a lead byte followed by no continuation. */
	CHECK_U64(seq("\x80"), 0);
	CHECK_U64(seq("\xbf"), 0);
	CHECK_U64(seq("\xc3"
		      "a"),
		  0);
	CHECK_U64(seq("\xe2\x82"
		      "a"),
		  0);
	CHECK_U64(seq("\xf0\x9f\x98"
		      "a"),
		  0);
	/* Truncated: the bytes are there in memory, but past `left`. */
	CHECK_U64(utf8__seq("\xc3\xa9", 1), 0);
	CHECK_U64(utf8__seq("\xe2\x82\xac", 2), 0);
	CHECK_U64(utf8__seq("\xf0\x9f\x98\x80", 3), 0);
	CHECK_U64(utf8__seq("\xf0\x9f\x98\x80", 5), 4);
}

static void test_utf8_valid(void)
{
	const char ok[] = "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80";

	CHECK(utf8__valid(ok, strlen(ok)), "valid");
	CHECK(utf8__valid("", 0), "empty");
	CHECK(utf8__valid("a\0b", 3), "a NUL is valid");
	CHECK(!utf8__valid(ok, strlen(ok) - 1), "cut in the last character");
	CHECK(!utf8__valid("ab\xff", 3), "0xff");
	CHECK(!utf8__valid("\xed\xa0\x80", 3), "surrogate");
	CHECK(!utf8__valid("\xc0\xaf", 2), "overlong '/'");
	CHECK(!utf8__valid("a\x80"
			   "b",
			   3),
	      "stray continuation");
}

static void test_utf8_fit(void)
{
	const char *s = "ab\xc3\xa9"
			"cd";			 /* a b é c d: 6 bytes */
	const char *emoji = "x\xf0\x9f\x98\x80"; /* 5 bytes */

	CHECK_U64(utf8__fit(s, 6, 7), 6); /* fits with its NUL */
	CHECK_U64(utf8__fit(s, 6, 6), 5); /* 5 bytes: "ab\xc3\xa9c" */
	CHECK_U64(utf8__fit(s, 6, 5), 4); /* "ab\xc3\xa9" */
	CHECK_U64(utf8__fit(s, 6, 4), 2); /* "ab": 3 bytes would cut é */
	CHECK_U64(utf8__fit(s, 6, 3), 2); /* "ab" */
	CHECK_U64(utf8__fit(s, 6, 2), 1); /* "a" */
	CHECK_U64(utf8__fit(s, 6, 1), 0); /* the NUL alone */
	CHECK_U64(utf8__fit(s, 6, 0), 0); /* no room at all */
	for (size_t max = 2; max <= 5; max++)
		CHECK_U64(utf8__fit(emoji, 5, max), 1);
	CHECK_U64(utf8__fit(emoji, 5, 6), 5);
	CHECK_U64(utf8__fit("abc", 3, 3), 2); /* ASCII: just the room */
}

static void test_utf8_replace(void)
{
	char out[64];
	size_t n;

	n = utf8__replace_invalid(out, "plain \xc3\xa9", 8, UTF8_REPLACEMENT);
	CHECK_STR(out, "plain \xc3\xa9");
	CHECK_U64(n, 8);
	n = utf8__replace_invalid(out,
				  "a\xff"
				  "b",
				  3, UTF8_REPLACEMENT);
	CHECK_STR(out, "a\xef\xbf\xbd"
		       "b");
	CHECK_U64(n, 5);
	n = utf8__replace_invalid(out,
				  "a\xff"
				  "b",
				  3, "_");
	CHECK_STR(out, "a_b");
	CHECK_U64(n, 3);
	/* Each byte that starts nothing is replaced: a truncated sequence is two replacements, and
	 * what follows it is read afresh. */
	n = utf8__replace_invalid(out,
				  "\xe2\x82"
				  "c",
				  3, "_");
	CHECK_STR(out, "__c");
	utf8__replace_invalid(out, "\xe2\x82", 2, "?");
	CHECK_STR(out, "??");
	/* Overlong and surrogate forms. */
	utf8__replace_invalid(out, "\xc0\xaf\xed\xa0\x80!", 6, "_");
	CHECK_STR(out, "_____!");
	/* A cut at the end of the input, although the string goes on in memory. */
	utf8__replace_invalid(out, "x\xc3\xa9", 2, "_");
	CHECK_STR(out, "x_");
	n = utf8__replace_invalid(out, "", 0, UTF8_REPLACEMENT);
	CHECK(n == 0 && out[0] == '\0', "empty");
}

/* --- hex --- */

static void test_hex_digit_encode(void)
{
	const uint8_t id[] = {0x00, 0x01, 0xab, 0xcd, 0xef, 0x7f, 0x80, 0xff};
	char out[2 * sizeof(id) + 1];
	int bad = 0;

	for (int c = 0; c < 256; c++) {
		int want = c >= '0' && c <= '9'	  ? c - '0'
			   : c >= 'a' && c <= 'f' ? c - 'a' + 10
			   : c >= 'A' && c <= 'F' ? c - 'A' + 10
						  : -1;

		bad += hex__digit(c) != want;
	}
	CHECK(bad == 0, "%d digits wrong", bad);
	CHECK(hex__digit(-1) == -1, "EOF");
	hex__encode(out, id, sizeof(id));
	CHECK_STR(out, "0001abcdef7f80ff");
	hex__encode(out, id, 0);
	CHECK_STR(out, "");
}

static void test_percent_decode(void)
{
	char out[64], s[64];
	size_t n;

	n = hex__percent_decode(out, sizeof(out), "a%20b%2Fc%2fd", 13);
	CHECK_STR(out, "a b/c/d");
	CHECK_U64(n, 7);
	/* Bad escapes stay as they are. */
	hex__percent_decode(out, sizeof(out), "%zz%g1%1g%", 10);
	CHECK_STR(out, "%zz%g1%1g%");
	hex__percent_decode(out, sizeof(out), "50%", 3);
	CHECK_STR(out, "50%");
	hex__percent_decode(out, sizeof(out), "%4", 2);
	CHECK_STR(out, "%4");
	hex__percent_decode(out, sizeof(out), "%%41", 4);
	CHECK_STR(out, "%A");
	/* An escape cut by the end of the input, though the bytes go on in memory. */
	hex__percent_decode(out, sizeof(out), "x%41", 3);
	CHECK_STR(out, "x%4");
	/* Only one level of decoding. */
	hex__percent_decode(out, sizeof(out), "%2541", 5);
	CHECK_STR(out, "%41");
	/* Non-ASCII bytes, as UTF-8 comes percent-encoded. */
	hex__percent_decode(out, sizeof(out), "caf%C3%A9", 9);
	CHECK_STR(out, "caf\xc3\xa9");
	/* Cut to the buffer. */
	n = hex__percent_decode(out, 4, "%41%42%43%44", 12);
	CHECK_STR(out, "ABC");
	CHECK_U64(n, 3);
	n = hex__percent_decode(out, 1, "abc", 3);
	CHECK(n == 0 && out[0] == '\0', "room for the NUL only");
	out[0] = 'x';
	CHECK(hex__percent_decode(out, 0, "abc", 3) == 0 && out[0] == 'x', "no room at all");
	/* A NUL decodes like any byte; the length tells. */
	n = hex__percent_decode(out, sizeof(out), "a%00b", 5);
	CHECK(n == 3 && strlen(out) == 1 && out[2] == 'b', "NUL: n %zu", n);

	/* In place. */
	strcpy(s, "a%2Fb%zz%");
	CHECK(hex__percent_decode_in_place(s) == 0, "in place");
	CHECK_STR(s, "a/b%zz%");
	strcpy(s, "%4a%4A%41%");
	CHECK(hex__percent_decode_in_place(s) == 0, "in place, both cases");
	CHECK_STR(s, "JJA%");
	strcpy(s, "key=a%00b");
	CHECK(hex__percent_decode_in_place(s) == -EINVAL, "%%00 refused");
	CHECK_STR(s, "key=a%00b");
	strcpy(s, "%2500");
	CHECK(hex__percent_decode_in_place(s) == 0, "%%25 then 00");
	CHECK_STR(s, "%00");
	strcpy(s, "");
	CHECK(hex__percent_decode_in_place(s) == 0 && !s[0], "empty");
}

static void test_hex_parse(void)
{
	uint64_t v = 7;
	const char *end;

	end = hex__parse_u64("7fff0a-rest", &v);
	CHECK(end && *end == '-' && v == 0x7fff0a, "lowercase");
	end = hex__parse_u64("DEADbeef ", &v);
	CHECK(end && *end == ' ' && v == 0xdeadbeef, "mixed case");
	end = hex__parse_u64("ffffffffffffffff", &v);
	CHECK(end && !*end && v == UINT64_MAX, "16 digits");
	end = hex__parse_u64("000000000000000000001", &v);
	CHECK(end && !*end && v == 1, "leading zeros do not overflow");
	v = 7;
	CHECK(hex__parse_u64("10000000000000000", &v) == NULL && v == 7, "17 digits overflow");
	CHECK(hex__parse_u64("", &v) == NULL && v == 7, "empty");
	CHECK(hex__parse_u64("x12", &v) == NULL && v == 7, "no digit");
	CHECK(hex__parse_u64("0x12", &v) != NULL && v == 0, "no 0x prefix: 0, then 'x'");
}

/* --- search --- */

struct range {
	uint64_t start;
	uint32_t small;
};

static void test_search(void)
{
	const struct range r[] = {{10, 1}, {20, 2}, {20, 3}, {30, 4}};

	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, start, 0), 0);
	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, start, 9), 0);
	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, start, 10), 1);
	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, start, 19), 1);
	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, start, 20), 3); /* past equal keys: the last of them */
	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, start, 29), 3);
	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, start, UINT64_MAX), 4);
	CHECK_U64(SEARCH_UPPER_BOUND(r, 0, start, 50), 0);
	CHECK_U64(SEARCH_UPPER_BOUND(r, 4, small, 2), 2); /* any field, any integer type */
}

/* --- clock --- */

static void test_clock(void)
{
	int64_t a = clock__mono_ms();
	uint64_t ns = clock__ns(CLOCK_MONOTONIC);
	int64_t b = clock__mono_ms();
	struct timespec ts = {.tv_nsec = 20 * 1000000};

	CHECK(a > 0 && a <= b, "%lld then %lld", (long long)a, (long long)b);
	CHECK((int64_t)(ns / 1000000) >= a && (int64_t)(ns / 1000000) <= b, "ns %" PRIu64, ns);
	nanosleep(&ts, NULL);
	b = clock__mono_ms();
	CHECK(b - a >= 20 && b - a < 5000, "slept 20 ms: %lld", (long long)(b - a));
}

/* --- threads --- */

static volatile sig_atomic_t usr1_handled;
static atomic_int usr1_sent;

static void on_usr1(int sig)
{
	usr1_handled = 1;
}

struct thread_seen {
	int mask_rc;
	bool blocked[5];
	bool usr1_pending;
};

static const int watched[5] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE};

static void *sig_thread(void *arg)
{
	struct thread_seen *seen = arg;
	sigset_t cur, pending;

	seen->mask_rc = pthread_sigmask(SIG_BLOCK, NULL, &cur);
	for (int i = 0; i < 5; i++)
		seen->blocked[i] = sigismember(&cur, watched[i]) == 1;
	/* A signal sent to this very thread waits, pending, instead of running the handler. */
	while (!atomic_load(&usr1_sent))
		sched_yield();
	sigpending(&pending);
	seen->usr1_pending = sigismember(&pending, SIGUSR1) == 1;
	return NULL;
}

static void test_thread(void)
{
	struct sigaction sa = {.sa_handler = on_usr1}, old_sa;
	struct thread_seen seen = {.mask_rc = -1};
	sigset_t before, after;
	pthread_t t;
	int rc;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old_sa);
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	rc = thread__start(&t, sig_thread, &seen);
	CHECK(rc == 0, "thread__start: %s", strerror(-rc));
	if (rc)
		return;
	pthread_kill(t, SIGUSR1);
	atomic_store(&usr1_sent, 1);
	pthread_join(t, NULL);
	CHECK(seen.mask_rc == 0, "pthread_sigmask in the thread: %d", seen.mask_rc);
	for (int i = 0; i < 5; i++)
		CHECK(seen.blocked[i], "signal %d not blocked in the thread", watched[i]);
	CHECK(seen.usr1_pending, "SIGUSR1 not pending in the thread");
	CHECK(!usr1_handled, "the handler ran for the thread's signal");
	/* The caller's mask is as it was: SIGINT still reaches it. */
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	CHECK(!sigismember(&after, SIGINT) && !sigismember(&after, SIGTERM), "caller blocked");
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&before, s) != sigismember(&after, s))
			CHECK(0, "caller's mask changed for signal %d", s);
	sigaction(SIGUSR1, &old_sa, NULL);
}

static void test_cond_monotonic(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	uint64_t end = clock__ns(CLOCK_MONOTONIC) + 30 * 1000000ULL;
	struct timespec ts = {.tv_sec = end / 1000000000ULL, .tv_nsec = end % 1000000000ULL};
	int64_t start = clock__mono_ms(), waited;
	int rc = thread__cond_init_monotonic(&c);

	CHECK(rc == 0, "cond init: %d", rc);
	if (rc)
		return;
	/* A monotonic deadline 30 ms ahead: read as a wall-clock time it would be decades ago and
	 * the wait would end at once. */
	pthread_mutex_lock(&m);
	do
		rc = pthread_cond_timedwait(&c, &m, &ts);
	while (rc == 0);
	pthread_mutex_unlock(&m);
	waited = clock__mono_ms() - start;
	CHECK(rc == ETIMEDOUT, "timedwait: %d", rc);
	CHECK(waited >= 29 && waited < 5000, "waited %lld ms", (long long)waited);
	pthread_cond_destroy(&c);
}

/* --- path --- */

static void test_path_normalize(void)
{
	static const char *const cases[][2] = {
		{"./misc/../sysdeps/unix/read.c", "sysdeps/unix/read.c"},
		{"../sysdeps/x86_64/memcpy.S", "../sysdeps/x86_64/memcpy.S"},
		{"a/b/../../../c.c", "../c.c"},
		{"../../a/../b.c", "../../b.c"},
		{"/usr//src/./linux/../glibc/x.c", "/usr/src/glibc/x.c"},
		{"/../x.c", "/x.c"},
		{"/a/..", "/"},
		{"a/..", "."},
		{"./", "."},
		{"dir/", "dir"},
		{"x.c", "x.c"},
		{"..", ".."},
		{"a/./b/.//c", "a/b/c"},
		{"", ""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];
		size_t n;

		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		n = path__normalize(buf);
		CHECK_STR(buf, cases[i][1]);
		CHECK(n == strlen(cases[i][1]), "%s: length %zu", cases[i][0], n);
	}
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

/* Every output file (profiles, folded, HTML, OTLP, the agent's windows, the unwind cache) goes
 * through atomic_file__write(): owner-only whatever the umask, and over an older 0644 file. */
static void test_atomic_file_mode(void)
{
	char dir[] = "/tmp/hostprof-test-atomic-XXXXXX", path[64];
	mode_t old_umask = umask(0);

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/out", dir);
	CHECK(atomic_file__write(path, "x", 1) == 0, "write with umask 0");
	CHECK(mode_of(path) == 0600, "mode %o with umask 0", (unsigned)mode_of(path));
	CHECK(chmod(path, 0644) == 0, "chmod");
	CHECK(atomic_file__write(path, "yz", 2) == 0, "rewrite");
	CHECK(mode_of(path) == 0600, "mode %o after replacing a 0644 file",
	      (unsigned)mode_of(path));
	umask(old_umask);
	unlink(path);
	rmdir(dir);
}

static void test_log_escape(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"plain /usr/bin/app", "plain /usr/bin/app"},
		{"a\nhostprof: error: forged", "a\\x0ahostprof: error: forged"},
		{"\x1b[31mred\r\t\x7f", "\\x1b[31mred\\x0d\\x09\\x7f"},
		/* UTF-8 stays; C1 controls (U+009B is CSI) and invalid bytes do not. */
		{"caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93"},
		{"x\xc2\x9by", "x\\xc2\\x9by"},
		{"x\x9b\xff", "x\\x9b\\xff"},
	};
	char out[64], tiny[6];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		log_text__escape(out, sizeof(out), cases[i].in);
		CHECK_STR(out, cases[i].want);
	}
	/* Cut before an escape that does not fit, never inside it. */
	CHECK(log_text__escape(tiny, sizeof(tiny), "ab\x01c") == 2, "cut at the escape");
	CHECK_STR(tiny, "ab");
}

/* Through the logging path: a process-chosen name cannot start a line of its own. */
static void test_log_line_escaped(void)
{
	char path[] = "/tmp/hostprof-test-log-XXXXXX", buf[512] = "";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n = -1;

	CHECK(fd >= 0 && saved >= 0, "mkstemp, dup");
	if (fd < 0 || saved < 0)
		return;
	fflush(stderr);
	dup2(fd, 2);
	log_warn("process '%s' exited", "evil\nhostprof: error: forged\x1b]0;title\x07");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (lseek(fd, 0, SEEK_SET) == 0)
		n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	CHECK_STR(buf, "hostprof: warning: process 'evil\\x0ahostprof: error: forged"
		       "\\x1b]0;title\\x07' exited\n");
}

/* --- LEB128 --- */

/* The examples of the DWARF 5 standard (7.6, figures 22 and 23), and the 64-bit extremes. */
static void test_leb128(void)
{
	static const struct {
		uint8_t b[11];
		size_t n;
		uint64_t u;
		int64_t s;
	} ok[] = {
		{{0x02}, 1, 2, 2},
		/* The sign is bit 6 of the last byte, and only that bit. */
		{{0x40}, 1, 64, -64},
		{{0x3f}, 1, 63, 63},
		{{0xc0, 0x00}, 2, 64, 64},
		{{0x7f}, 1, 127, -1},
		{{0x80, 0x01}, 2, 128, 128},
		{{0x81, 0x01}, 2, 129, 129},
		{{0x82, 0x01}, 2, 130, 130},
		{{0xb9, 0x64}, 2, 12857, -3527},
		{{0x7e}, 1, 126, -2},
		{{0x81, 0x7f}, 2, 16257, -127},
		{{0x80, 0x7f}, 2, 16256, -128},
		{{0xff, 0x00}, 2, 127, 127},
		{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10, UINT64_MAX, -1},
		{{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f},
		 10,
		 1ull << 63,
		 INT64_MIN},
		/* Bits past 64 are dropped, not an error: the 10th byte carries only one. */
		{{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7e}, 10, 0, 0},
	};
	/* Never terminated within 10 bytes. */
	static const uint8_t too_long[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					     0x80, 0x80, 0x80, 0x80, 0x01};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const uint8_t *p = ok[i].b;
		uint64_t u = 0;
		int64_t v = 0;

		CHECK(leb128__read_u(&p, ok[i].b + ok[i].n, &u) && p == ok[i].b + ok[i].n,
		      "example %zu: unsigned not read", i);
		CHECK_U64(u, ok[i].u);
		p = ok[i].b;
		CHECK(leb128__read_s(&p, ok[i].b + ok[i].n, &v) && p == ok[i].b + ok[i].n,
		      "example %zu: signed not read", i);
		CHECK(v == ok[i].s, "example %zu: signed %" PRId64 ", want %" PRId64, i, v,
		      ok[i].s);
		/* One byte short: refused, the cursor where it was. */
		p = ok[i].b;
		CHECK(!leb128__read_u(&p, ok[i].b + ok[i].n - 1, &u) && p == ok[i].b,
		      "example %zu: read past its end", i);
	}
	{
		const uint8_t *p = too_long;
		uint64_t u = 7;

		CHECK(!leb128__read_u(&p, too_long + sizeof(too_long), &u) && p == too_long &&
			      u == 7,
		      "an 11-byte number was read");
	}
	{
		/* Two numbers back to back: the second starts where the first ended. */
		static const uint8_t two[] = {0xe5, 0x8e, 0x26, 0x05};
		const uint8_t *p = two;
		uint64_t a = 0, b = 0;

		CHECK(leb128__read_u(&p, two + sizeof(two), &a) &&
			      leb128__read_u(&p, two + sizeof(two), &b) && p == two + sizeof(two),
		      "two numbers");
		CHECK_U64(a, 624485);
		CHECK_U64(b, 5);
	}
}

/* --- libcurl's global init --- */

/*
 * libcurl's global init must not set up OpenSSL (1.7 MiB resident for the agent's life): its TLS
 * is GnuTLS's, and its SSH backend's libssh2 is initialised without crypto first. OpenSSL's
 * builtin engines are what both paths load (libssh2's crypto init, and libcurl's OpenSSL backend
 * were it linked), so none may be loaded after the init. libcrypto is in the process (libssh2
 * links it), so its ENGINE_get_first() is found without linking it here.
 */
static void test_curl_init_leaves_openssl(void)
{
	void *(*engine_first)(void);

	CHECK(curl_client__global_init() == 0, "libcurl's global init failed");
	CHECK(curl_client__global_init() == 0, "a second init must return the first's result");
	*(void **)&engine_first = dlsym(RTLD_DEFAULT, "ENGINE_get_first");
	if (!engine_first) {
		printf("test_base: libcrypto not loaded: nothing of OpenSSL to initialise\n");
		return;
	}
	CHECK(engine_first() == NULL, "OpenSSL's engines were loaded by libcurl's global init");
}

int main(void)
{
	test_atomic_file_mode();
	test_log_escape();
	test_log_line_escaped();
	test_vec_growth();
	test_vec_overflow();
	test_lru();
	test_hash_index();
	test_utf8_seq();
	test_utf8_valid();
	test_utf8_fit();
	test_utf8_replace();
	test_hex_digit_encode();
	test_percent_decode();
	test_hex_parse();
	test_leb128();
	test_search();
	test_path_normalize();
	test_clock();
	test_thread();
	test_cond_monotonic();
	test_curl_init_leaves_openssl();
	return check_summary("test_base");
}

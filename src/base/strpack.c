// SPDX-License-Identifier: BSD-2-Clause
/*
 * Front-coded string sets. Each string is one byte (the length of the prefix it shares with the
 * string before it in its block, at most 255), then the rest of it and a NUL. The first string of
 * a block shares nothing, so any string is found by decoding the strings before it in its block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/strpack.h"

#define STRPACK_MAX_SHARED 255

struct strpack {
	size_t count;
	size_t bytes;
	uint32_t *blocks; /* offset in data of each block's first string */
	unsigned char *data;
};

static int by_string(const void *pa, const void *pb, void *arg)
{
	const char *const *strs = arg;

	return strcmp(strs[*(const uint32_t *)pa], strs[*(const uint32_t *)pb]);
}

static size_t shared_prefix(const char *a, const char *b)
{
	size_t n = 0;

	while (n < STRPACK_MAX_SHARED && a[n] && a[n] == b[n])
		n++;
	return n;
}

struct strpack *strpack__new(const char *const *strs, size_t n, uint32_t *ids)
{
	struct strpack *p = NULL;
	uint32_t *order = NULL;
	const char *prev = NULL;
	size_t i, count = 0, bytes = 0, pos = 0;
	int err = -ENOMEM;

	if (n > UINT32_MAX) {
		err = -E2BIG;
		goto fail;
	}
	p = calloc(1, sizeof(*p));
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!p || !order)
		goto fail;
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), by_string, (void *)strs);

	/* First the size, so that the set takes exactly what it needs. */
	for (i = 0; i < n; i++) {
		const char *s = strs[order[i]];
		size_t shared;

		if (prev && !strcmp(prev, s))
			continue;
		shared = count % STRPACK_BLOCK && prev ? shared_prefix(prev, s) : 0;
		bytes += 1 + strlen(s + shared) + 1;
		count++;
		prev = s;
	}
	if (bytes > UINT32_MAX) {
		err = -E2BIG;
		goto fail;
	}
	p->blocks = malloc(((count + STRPACK_BLOCK - 1) / STRPACK_BLOCK + 1) * sizeof(*p->blocks));
	p->data = malloc(bytes ? bytes : 1);
	if (!p->blocks || !p->data)
		goto fail;

	prev = NULL;
	p->count = 0;
	for (i = 0; i < n; i++) {
		const char *s = strs[order[i]];
		size_t shared, rest;

		if (prev && !strcmp(prev, s)) {
			ids[order[i]] = (uint32_t)(p->count - 1);
			continue;
		}
		if (p->count % STRPACK_BLOCK == 0) {
			p->blocks[p->count / STRPACK_BLOCK] = (uint32_t)pos;
			shared = 0;
		} else {
			shared = shared_prefix(prev, s);
		}
		rest = strlen(s + shared) + 1;
		p->data[pos++] = (unsigned char)shared;
		memcpy(p->data + pos, s + shared, rest);
		pos += rest;
		ids[order[i]] = (uint32_t)p->count++;
		prev = s;
	}
	p->bytes = bytes;
	free(order);
	return p;

fail:
	free(order);
	strpack__delete(p);
	errno = -err;
	return NULL;
}

void strpack__delete(struct strpack *p)
{
	if (!p)
		return;
	free(p->blocks);
	free(p->data);
	free(p);
}

const char *strpack__get(const struct strpack *p, uint32_t id, char *buf, size_t len)
{
	const unsigned char *q;
	size_t cap, j, want;

	if (!p || id >= p->count || !buf || !len) {
		errno = EINVAL;
		return NULL;
	}
	cap = len - 1;
	q = p->data + p->blocks[id / STRPACK_BLOCK];
	want = id % STRPACK_BLOCK;
	/*
	 * The strings before id in its block are decoded only as far as buf holds them: the bytes
	 * id shares with them lie within its own length.
	 */
	for (j = 0;; j++) {
		size_t shared = *q++;
		size_t rest = strlen((const char *)q);

		if (shared < cap)
			memcpy(buf + shared, q, rest < cap - shared ? rest : cap - shared);
		q += rest + 1;
		if (j == want) {
			if (shared + rest > cap) {
				errno = ERANGE;
				return NULL;
			}
			buf[shared + rest] = '\0';
			return buf;
		}
	}
}

size_t strpack__count(const struct strpack *p)
{
	return p ? p->count : 0;
}

size_t strpack__bytes(const struct strpack *p)
{
	if (!p)
		return 0;
	return sizeof(*p) + p->bytes +
	       ((p->count + STRPACK_BLOCK - 1) / STRPACK_BLOCK + 1) * sizeof(*p->blocks);
}

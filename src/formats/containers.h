/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The small containers of the OTLP encoder and of the OTLP/JSON writer: an arena, growable arrays,
 * an open-addressing index from hash to table position, and UTF-8 checks.
 *
 * They are kept together, and static inline, so that one later change can swap them for the base
 * layer's own (base/vec.h, base/hash_index.h, base/utf8.h) without touching the code that uses
 * them. Include it only from formats/enc_otlp.c, formats/otlp_*.c and formats/pb_json.c.
 */
#ifndef HOSTPROF_FORMATS_CONTAINERS_H
#define HOSTPROF_FORMATS_CONTAINERS_H

#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Dictionary indices are int32 on the wire. */
#define DICT_MAX_ENTRIES ((size_t)INT32_MAX)
#define ARENA_BLOCK_SIZE (64 * 1024)
#define HIDX_MIN_SLOTS 64

/* --- arena: the protobuf-c structs of one request, released in one go --- */

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

struct arena {
	struct arena_block *head;
};

/* Zeroed memory that lives until arena__free(); NULL on overflow or ENOMEM. */
static inline void *arena__alloc(struct arena *a, size_t size)
{
	const size_t align = alignof(max_align_t);
	struct arena_block *blk = a->head;
	void *ret;

	if (size > SIZE_MAX / 2)
		return NULL;
	size = (size + align - 1) & ~(align - 1);
	if (!size)
		size = align;
	if (!blk || blk->size - blk->used < size) {
		size_t bytes = size > ARENA_BLOCK_SIZE ? size : ARENA_BLOCK_SIZE;

		blk = calloc(1, sizeof(*blk) + bytes);
		if (!blk)
			return NULL;
		blk->size = bytes;
		blk->next = a->head;
		a->head = blk;
	}
	ret = (char *)blk->data + blk->used;
	blk->used += size;
	return ret;
}

static inline void *arena__array(struct arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / 2 / size)
		return NULL;
	return arena__alloc(a, n * size);
}

static inline void arena__free(struct arena *a)
{
	while (a->head) {
		struct arena_block *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

/* --- growable arrays --- */

/* Makes room for element nr of *arr; -E2BIG past what an int32 index can name. */
static inline int array_grow(void **arr, size_t *cap, size_t nr, size_t elem_size)
{
	size_t new_cap;
	void *tmp;

	if (nr < *cap)
		return 0;
	if (nr >= DICT_MAX_ENTRIES)
		return -E2BIG;
	new_cap = *cap ? *cap * 2 : 16;
	while (new_cap <= nr)
		new_cap *= 2;
	if (new_cap > SIZE_MAX / elem_size)
		return -ENOMEM;
	tmp = realloc(*arr, new_cap * elem_size);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = new_cap;
	return 0;
}

/* Through a real void * rather than a cast of &arr, which would break strict aliasing. */
#define ARRAY_GROW(arr, cap, nr)                                                                   \
	({                                                                                         \
		void *tmp_ = (arr);                                                                \
		int err_ = array_grow(&tmp_, &(cap), (nr), sizeof(*(arr)));                        \
		(arr) = tmp_;                                                                      \
		err_;                                                                              \
	})

/*
 * An open-addressing index from hash to table position. Position 0 marks an empty slot: the zero
 * entries are never inserted, callers map them to 0 before looking up.
 */
struct hslot {
	uint32_t idx;
	uint32_t hash;
};

struct hidx {
	struct hslot *slots;
	size_t mask;
	size_t nr;
};

/* Room for one more entry at a load of at most 3/4, so that a probe always ends. */
static inline int hidx__reserve(struct hidx *h)
{
	size_t nslots = h->slots ? h->mask + 1 : 0, new_nslots;
	struct hslot *slots;

	if ((h->nr + 1) * 4 <= nslots * 3)
		return 0;
	new_nslots = nslots ? nslots * 2 : HIDX_MIN_SLOTS;
	slots = calloc(new_nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < nslots; i++) {
		size_t j;

		if (!h->slots[i].idx)
			continue;
		for (j = h->slots[i].hash & (new_nslots - 1); slots[j].idx;
		     j = (j + 1) & (new_nslots - 1))
			;
		slots[j] = h->slots[i];
	}
	free(h->slots);
	h->slots = slots;
	h->mask = new_nslots - 1;
	return 0;
}

/* Whether the entry at table position idx equals key; ctx is the caller's, passed through. */
typedef bool (*hidx_eq_fn)(const void *ctx, uint32_t idx, const void *key);

/* The slot of the entry equal to key, else the empty slot where it belongs. After reserve(). */
static inline struct hslot *hidx__find(const struct hidx *h, uint32_t hash, hidx_eq_fn eq,
				       const void *ctx, const void *key)
{
	for (size_t i = hash & h->mask;; i = (i + 1) & h->mask) {
		struct hslot *s = &h->slots[i];

		if (!s->idx || (s->hash == hash && eq(ctx, s->idx, key)))
			return s;
	}
}

static inline void hidx__set(struct hidx *h, struct hslot *s, uint32_t idx, uint32_t hash)
{
	s->idx = idx;
	s->hash = hash;
	h->nr++;
}

/* Room for one more entry in a table (a growable array) and in its index. 0 or -errno. */
#define TABLE_ROOM(h, arr, cap, nr)                                                                \
	({                                                                                         \
		int room_err_ = hidx__reserve(h);                                                  \
		room_err_ ? room_err_ : ARRAY_GROW(arr, cap, nr);                                  \
	})

/* --- UTF-8 --- */

/* The length of the well-formed UTF-8 sequence (RFC 3629) at s, or 0 if there is none. */
static inline size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (left < n)
		return 0;
	/* The second byte's range excludes overlong forms, surrogates and code points > 10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return n;
}

#define REPLACEMENT_CHAR "\xef\xbf\xbd" /* U+FFFD */

static inline bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = p[i] < 0x80 ? 1 : utf8_seq(p + i, len - i);

		if (!n)
			return false;
		i += n;
	}
	return true;
}

/*
 * s as valid UTF-8: s itself when it is, else a copy in the arena where every byte that starts no
 * well-formed sequence became U+FFFD. NULL on ENOMEM.
 */
static inline const char *utf8_clean(struct arena *a, const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t in = *len, out = 0;
	char *copy;

	if (utf8_valid(s, in))
		return s;
	if (in > (SIZE_MAX - 1) / 3)
		return NULL;
	copy = arena__alloc(a, in * 3 + 1);
	if (!copy)
		return NULL;
	for (size_t i = 0; i < in;) {
		size_t n = utf8_seq(p + i, in - i);

		if (n) {
			memcpy(copy + out, p + i, n);
			out += n;
			i += n;
		} else {
			memcpy(copy + out, REPLACEMENT_CHAR, 3);
			out += 3;
			i++;
		}
	}
	copy[out] = '\0';
	*len = out;
	return copy;
}

#endif /* HOSTPROF_FORMATS_CONTAINERS_H */

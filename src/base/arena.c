// SPDX-License-Identifier: BSD-2-Clause
#include "base/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

/* size bytes at a multiple of align (a power of two) from the start of a block's data. */
static void *arena_take(struct arena *a, size_t size, size_t align)
{
	struct arena_block *b = a->head;
	size_t off = b ? (b->used + align - 1) & ~(align - 1) : 0;
	void *ret;

	if (!b || off > b->size || b->size - off < size) {
		size_t bytes = size > ARENA_BLOCK_SIZE ? size : ARENA_BLOCK_SIZE;

		if (bytes > SIZE_MAX - sizeof(*b))
			return NULL;
		/* calloc(): every piece starts zeroed, as nothing in a block is ever reused. */
		b = calloc(1, sizeof(*b) + bytes);
		if (!b)
			return NULL;
		b->size = bytes;
		/*
		 * A block made for one large piece goes behind the current one, so that the free
		 * space of the current block stays in use for the small pieces that follow.
		 */
		if (a->head && bytes > ARENA_BLOCK_SIZE) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
		off = 0;
	}
	ret = (char *)b->data + off;
	b->used = off + size;
	return ret;
}

void *arena__alloc(struct arena *a, size_t size)
{
	const size_t align = alignof(max_align_t);

	if (size > SIZE_MAX / 2)
		return NULL;
	/* A piece of 0 bytes still gets an address of its own. */
	return arena_take(a, size ? size : 1, align);
}

void *arena__array(struct arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / 2 / size)
		return NULL;
	return arena__alloc(a, n * size);
}

char *arena__strndup(struct arena *a, const char *s, size_t len)
{
	char *dst;

	if (len > SIZE_MAX / 2)
		return NULL;
	dst = arena_take(a, len + 1, 1);
	if (!dst)
		return NULL;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return dst;
}

void arena__free(struct arena *a)
{
	while (a->head) {
		struct arena_block *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

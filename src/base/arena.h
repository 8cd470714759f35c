/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An arena: memory handed out in pieces from large blocks and released all in one go, for what
 * lives exactly as long as its owner (a profile's strings, the protobuf-c structs of one
 * request), where a malloc() and a free() per piece would cost more than the pieces.
 *
 * A zeroed struct arena is empty and ready.
 */
#ifndef HOSTPROF_ARENA_H
#define HOSTPROF_ARENA_H

#include <stddef.h>

/* Pieces are cut from blocks of this size; a larger piece gets a block of its own. */
#define ARENA_BLOCK_SIZE (64 * 1024)

struct arena_block;

struct arena {
	struct arena_block *head; /* the block being filled */
};

/* size zeroed bytes aligned for any type, until arena__free(); NULL on overflow or ENOMEM. */
void *arena__alloc(struct arena *a, size_t size);

/* arena__alloc() of n elements of size bytes, NULL also when n * size overflows. */
void *arena__array(struct arena *a, size_t n, size_t size);

/* A NUL-terminated copy of s[0..len), packed without alignment; NULL on overflow or ENOMEM. */
char *arena__strndup(struct arena *a, const char *s, size_t len);

/* Frees every block; the arena is empty and usable again. */
void arena__free(struct arena *a);

#endif /* HOSTPROF_ARENA_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An open-addressing index from an entry's hash to its 32-bit id in a table the caller keeps
 * (the interning tables of the profile model and of the encoders).
 *
 * Each slot holds the id and 32 bits of the entry's hash, so growing never has to hash the
 * entries again, and a probe calls the caller's equality only for entries of the same hash. Id 0
 * marks an empty slot: tables whose slot 0 holds a zero entry never index it (they match it
 * themselves), others store position + 1. Linear probing, with the load kept at or below 1/2.
 *
 *	id = hash_index__find(&t->idx, hash, item_eq, t, &key);
 *	if (!id) {
 *		if (hash_index__reserve(&t->idx) || VEC_RESERVE(t->items, t->cap, t->nr + 1))
 *			return -ENOMEM;
 *		id = t->nr++;
 *		t->items[id] = key;
 *		hash_index__insert(&t->idx, id, hash);
 *	}
 *
 * A zeroed struct hash_index is empty and ready.
 */
#ifndef HOSTPROF_HASH_INDEX_H
#define HOSTPROF_HASH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASH_INDEX_MIN_SLOTS 64

struct hash_index_slot {
	uint32_t id; /* 0: empty */
	uint32_t hash;
};

struct hash_index {
	struct hash_index_slot *slots;
	size_t mask; /* slots - 1: their number is a power of two */
	size_t nr;   /* ids inserted */
};

/* Whether the entry with this id is the one key describes; ctx is the caller's table. */
typedef bool (*hash_index_eq_fn)(const void *ctx, uint32_t id, const void *key);

/* The id of the entry of this hash that eq() accepts, or 0 when there is none. */
uint32_t hash_index__find(const struct hash_index *h, uint32_t hash, hash_index_eq_fn eq,
			  const void *ctx, const void *key);

/* Room for one more id without going over the load: 0, or -ENOMEM (the index stays as it was). */
int hash_index__reserve(struct hash_index *h);

/* Record id (not 0) under hash; hash_index__reserve() must have succeeded since the last one. */
void hash_index__insert(struct hash_index *h, uint32_t id, uint32_t hash);

/* The bytes its slots take. */
size_t hash_index__bytes(const struct hash_index *h);

/* Empties the index, keeping its slots for the ids to come. */
void hash_index__clear(struct hash_index *h);

/* Frees the slots; the index is empty and usable again. */
void hash_index__free(struct hash_index *h);

#endif /* HOSTPROF_HASH_INDEX_H */

// SPDX-License-Identifier: BSD-2-Clause
#include "base/hash_index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t nr_slots(const struct hash_index *h)
{
	return h->slots ? h->mask + 1 : 0;
}

static void place(struct hash_index_slot *slots, size_t mask, uint32_t id, uint32_t hash)
{
	size_t i = hash & mask;

	while (slots[i].id)
		i = (i + 1) & mask;
	slots[i].id = id;
	slots[i].hash = hash;
}

uint32_t hash_index__find(const struct hash_index *h, uint32_t hash, hash_index_eq_fn eq,
			  const void *ctx, const void *key)
{
	if (!h->slots)
		return 0;
	for (size_t i = hash & h->mask; h->slots[i].id; i = (i + 1) & h->mask) {
		if (h->slots[i].hash == hash && eq(ctx, h->slots[i].id, key))
			return h->slots[i].id;
	}
	return 0;
}

int hash_index__reserve(struct hash_index *h)
{
	size_t n = nr_slots(h), new_n;
	struct hash_index_slot *slots;

	if (h->nr + 1 <= n / 2)
		return 0;
	if (n > SIZE_MAX / 2 / sizeof(*slots))
		return -ENOMEM;
	new_n = n ? n * 2 : HASH_INDEX_MIN_SLOTS;
	slots = calloc(new_n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (h->slots[i].id)
			place(slots, new_n - 1, h->slots[i].id, h->slots[i].hash);
	}
	free(h->slots);
	h->slots = slots;
	h->mask = new_n - 1;
	return 0;
}

void hash_index__insert(struct hash_index *h, uint32_t id, uint32_t hash)
{
	place(h->slots, h->mask, id, hash);
	h->nr++;
}

size_t hash_index__bytes(const struct hash_index *h)
{
	return nr_slots(h) * sizeof(*h->slots);
}

void hash_index__clear(struct hash_index *h)
{
	if (h->slots)
		memset(h->slots, 0, hash_index__bytes(h));
	h->nr = 0;
}

void hash_index__free(struct hash_index *h)
{
	free(h->slots);
	h->slots = NULL;
	h->mask = 0;
	h->nr = 0;
}

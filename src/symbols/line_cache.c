// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/line_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

struct line_slot {
	uint64_t owner; /* 0: empty (owners start at 1) */
	uint64_t addr;
	uint32_t max;
	uint32_t n;
	struct dso_line *lines; /* n entries followed by their strings, one allocation */
	size_t bytes;
};

struct line_cache {
	struct line_slot *slots;
	size_t mask;
	size_t entries, bytes;
	uint64_t hits, misses;
};

struct line_cache *line_cache__new(size_t slots)
{
	struct line_cache *lc;
	size_t n = 1;

	while (n < slots && n < ((size_t)1 << 30))
		n <<= 1;
	lc = calloc(1, sizeof(*lc));
	if (!lc)
		return NULL;
	lc->slots = calloc(n, sizeof(*lc->slots));
	if (!lc->slots) {
		free(lc);
		errno = ENOMEM;
		return NULL;
	}
	lc->mask = n - 1;
	return lc;
}

static void slot_clear(struct line_cache *lc, struct line_slot *s)
{
	if (s->owner) {
		lc->entries--;
		lc->bytes -= s->bytes;
	}
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

void line_cache__delete(struct line_cache *lc)
{
	if (!lc)
		return;
	for (size_t i = 0; i <= lc->mask; i++)
		free(lc->slots[i].lines);
	free(lc->slots);
	free(lc);
}

static struct line_slot *slot_of(const struct line_cache *lc, uint64_t owner, uint64_t addr)
{
	return &lc->slots[hash_add(hash_mix64(owner), addr) & lc->mask];
}

bool line_cache__get(struct line_cache *lc, uint64_t owner, uint64_t addr, size_t max,
		     struct dso_line *out, size_t *n)
{
	const struct line_slot *s;

	if (!lc || !owner)
		return false;
	s = slot_of(lc, owner, addr);
	if (s->owner != owner || s->addr != addr || s->max != max) {
		lc->misses++;
		return false;
	}
	lc->hits++;
	if (s->n)
		memcpy(out, s->lines, s->n * sizeof(*out));
	*n = s->n;
	return true;
}

static size_t str_bytes(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* Copy src into the blob at *at; NULL stays NULL. */
static const char *copy_str(char **at, const char *src)
{
	char *dst = *at;
	size_t len;

	if (!src)
		return NULL;
	len = strlen(src) + 1;
	memcpy(dst, src, len);
	*at += len;
	return dst;
}

void line_cache__put(struct line_cache *lc, uint64_t owner, uint64_t addr, size_t max,
		     const struct dso_line *lines, size_t n)
{
	struct line_slot *s;
	size_t bytes = n * sizeof(*lines);
	struct dso_line *copy = NULL;
	char *at;

	if (!lc || !owner || n > max || max > UINT32_MAX)
		return;
	s = slot_of(lc, owner, addr);
	slot_clear(lc, s);
	for (size_t i = 0; i < n; i++)
		bytes += str_bytes(lines[i].function) + str_bytes(lines[i].file) +
			 str_bytes(lines[i].comp_dir);
	if (n) {
		copy = malloc(bytes);
		if (!copy)
			return;
		at = (char *)(copy + n);
		for (size_t i = 0; i < n; i++)
			copy[i] = (struct dso_line){.function = copy_str(&at, lines[i].function),
						    .file = copy_str(&at, lines[i].file),
						    .comp_dir = copy_str(&at, lines[i].comp_dir),
						    .line = lines[i].line};
	}
	*s = (struct line_slot){.owner = owner,
				.addr = addr,
				.max = (uint32_t)max,
				.n = (uint32_t)n,
				.lines = copy,
				.bytes = bytes};
	lc->entries++;
	lc->bytes += bytes;
}

void line_cache__stats(const struct line_cache *lc, struct line_cache_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!lc)
		return;
	out->hits = lc->hits;
	out->misses = lc->misses;
	out->entries = lc->entries;
	out->slots = lc->mask + 1;
	out->bytes = (lc->mask + 1) * sizeof(*lc->slots) + lc->bytes;
}

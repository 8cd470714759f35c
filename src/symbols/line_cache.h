/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Answers of line lookups (an address's inline chain from DWARF), kept across profile windows and
 * across processes: a short-lived process of a common binary asks about the same addresses as
 * the ones before it, and every window asks again about the hot code of long-lived ones. Each
 * answer would otherwise be looked up in the DWARF again, which, when the DWARF budget closed the
 * binary's handle meanwhile, means reading and decompressing its debug sections again (that was
 * most of the agent's CPU on a host that starts many processes).
 *
 * Direct-mapped and bounded: a collision replaces the older answer. An answer's strings are
 * copied, so that it outlives the DWARF handle it came from. Keys are (owner, address, max): the
 * owner says whose lines they are and changes whenever what the lines are read from may change
 * (see dso_cache.c), so that a stale answer is never found again.
 */
#ifndef HOSTPROF_LINE_CACHE_H
#define HOSTPROF_LINE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/dso.h"

/* Slots by default: about 100 bytes each plus their answers' strings. */
#define LINE_CACHE_DEFAULT_SLOTS 8192

struct line_cache;

/* slots is rounded up to a power of two. NULL + errno. */
struct line_cache *line_cache__new(size_t slots);
void line_cache__delete(struct line_cache *lc);

/*
 * The answer stored for (owner, addr, max): true and its entries in out (*n of them, at most
 * max; 0 is an answer too: no lines there). The strings stay valid until the next
 * line_cache__put().
 */
bool line_cache__get(struct line_cache *lc, uint64_t owner, uint64_t addr, size_t max,
		     struct dso_line *out, size_t *n);
/* Remember the n entries found for (owner, addr, max); a failed allocation just forgets. */
void line_cache__put(struct line_cache *lc, uint64_t owner, uint64_t addr, size_t max,
		     const struct dso_line *lines, size_t n);

struct line_cache_stats {
	uint64_t hits, misses;
	size_t entries, slots, bytes;
};
void line_cache__stats(const struct line_cache *lc, struct line_cache_stats *out);

#endif /* HOSTPROF_LINE_CACHE_H */

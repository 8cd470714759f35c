/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An intrusive least-recently-used list: the owner embeds a struct lru_link in its node and the
 * list links those, so that pushing, touching and unlinking are O(1) and allocate nothing.
 * LRU_ENTRY() turns a link back into its node.
 *
 *	struct node { ...; struct lru_link lru; };
 *	lru__touch(&cache->lru, &node->lru);           // used now
 *	victim = LRU_ENTRY(lru__oldest(&cache->lru), struct node, lru);
 *
 * A zeroed struct lru is an empty list; a zeroed link is on no list.
 */
#ifndef HOSTPROF_LRU_H
#define HOSTPROF_LRU_H

#include <stdbool.h>
#include <stddef.h>

struct lru_link {
	struct lru_link *newer; /* towards the most recently used; NULL at the newest */
	struct lru_link *older; /* towards the least recently used; NULL at the oldest */
};

struct lru {
	struct lru_link *newest, *oldest;
	size_t count;
};

/* The node that embeds link as its member `member`, or NULL for a NULL link. */
#define LRU_ENTRY(link, type, member)                                                              \
	({                                                                                         \
		const struct lru_link *lru_link_ = (link);                                         \
		lru_link_ ? (type *)((const char *)lru_link_ - offsetof(type, member))             \
			  : (type *)NULL;                                                          \
	})

/* Whether n is on the list l. */
static inline bool lru__linked(const struct lru *l, const struct lru_link *n)
{
	return n->newer || n->older || l->newest == n;
}

/* Put n, which is on no list, in front: the most recently used. */
static inline void lru__push_front(struct lru *l, struct lru_link *n)
{
	n->newer = NULL;
	n->older = l->newest;
	if (l->newest)
		l->newest->newer = n;
	l->newest = n;
	if (!l->oldest)
		l->oldest = n;
	l->count++;
}

/* Take n off the list; nothing when it is not on it. */
static inline void lru__unlink(struct lru *l, struct lru_link *n)
{
	if (!lru__linked(l, n))
		return;
	if (n->newer)
		n->newer->older = n->older;
	else
		l->newest = n->older;
	if (n->older)
		n->older->newer = n->newer;
	else
		l->oldest = n->newer;
	n->newer = n->older = NULL;
	l->count--;
}

/* n was used now: to the front, whether it was on the list or not. */
static inline void lru__touch(struct lru *l, struct lru_link *n)
{
	if (l->newest == n)
		return;
	lru__unlink(l, n);
	lru__push_front(l, n);
}

/* The least recently used link (evicted first), or NULL when the list is empty. */
static inline struct lru_link *lru__oldest(const struct lru *l)
{
	return l->oldest;
}

/* The most recently used link, or NULL when the list is empty. */
static inline struct lru_link *lru__newest(const struct lru *l)
{
	return l->newest;
}

static inline size_t lru__count(const struct lru *l)
{
	return l->count;
}

#endif /* HOSTPROF_LRU_H */

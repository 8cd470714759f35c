/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Intrusive singly linked chains: the buckets of the small chained hash tables (processes,
 * binaries, build-ids) whose nodes also sit on an LRU list and must leave both when evicted.
 * A node links to the next one of its bucket through one of its own pointer members.
 *
 *	struct node { ...; struct node *hnext; struct lru_link lru; };
 *	CHAIN_PUSH(&t->buckets[b], node, hnext);
 *	CHAIN_UNLINK(&t->buckets[b], node, hnext);
 *
 * Macros rather than functions so that the chains keep their node types: no casts at the callers.
 */
#ifndef HOSTPROF_CHAIN_H
#define HOSTPROF_CHAIN_H

/* Put node at the head of the chain *head. */
#define CHAIN_PUSH(head, node, member)                                                             \
	do {                                                                                       \
		typeof(node) chain_node_ = (node);                                                 \
		typeof(node) *chain_head_ = (head);                                                \
                                                                                                   \
		chain_node_->member = *chain_head_;                                                \
		*chain_head_ = chain_node_;                                                        \
	} while (0)

/* Take node off the chain *head; nothing when it is not on it. */
#define CHAIN_UNLINK(head, node, member)                                                           \
	do {                                                                                       \
		typeof(node) chain_node_ = (node);                                                 \
		typeof(node) *chain_pp_ = (head);                                                  \
                                                                                                   \
		while (*chain_pp_ && *chain_pp_ != chain_node_)                                    \
			chain_pp_ = &(*chain_pp_)->member;                                         \
		if (*chain_pp_)                                                                    \
			*chain_pp_ = chain_node_->member;                                          \
	} while (0)

#endif /* HOSTPROF_CHAIN_H */

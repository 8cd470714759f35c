// SPDX-License-Identifier: BSD-2-Clause
#include "agent/liveness.h"

#include <stdio.h>

void liveness__init(struct liveness *l, uint64_t timeout_ns, uint64_t now_ns)
{
	liveness__set_timeout(l, timeout_ns);
	liveness__reset_gap(l, now_ns);
}

void liveness__reset_gap(struct liveness *l, uint64_t now_ns)
{
	__atomic_store_n(&l->max_gap_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&l->last_tick_ns, now_ns, __ATOMIC_RELEASE);
}

uint64_t liveness__max_gap(const struct liveness *l)
{
	return __atomic_load_n(&l->max_gap_ns, __ATOMIC_RELAXED);
}

void liveness__set_timeout(struct liveness *l, uint64_t timeout_ns)
{
	__atomic_store_n(&l->timeout_ns, timeout_ns, __ATOMIC_RELAXED);
}

void liveness__tick(struct liveness *l, uint64_t now_ns)
{
	/* Only the loop ticks: the read, the compare and the store need not be one atomic step. */
	uint64_t last = __atomic_load_n(&l->last_tick_ns, __ATOMIC_RELAXED);

	if (now_ns > last && now_ns - last > __atomic_load_n(&l->max_gap_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&l->max_gap_ns, now_ns - last, __ATOMIC_RELAXED);
	__atomic_store_n(&l->last_tick_ns, now_ns, __ATOMIC_RELEASE);
}

bool liveness__check(const struct liveness *l, uint64_t now_ns, char *why, size_t len)
{
	uint64_t last = __atomic_load_n(&l->last_tick_ns, __ATOMIC_ACQUIRE);
	uint64_t timeout = __atomic_load_n(&l->timeout_ns, __ATOMIC_RELAXED);
	uint64_t idle;

	/* A tick stamped after the request's clock was read (another thread, another core) is
	 * as fresh as it gets. */
	if (last >= now_ns)
		return true;
	idle = now_ns - last;
	if (idle <= timeout)
		return true;
	snprintf(why, len, "the capture loop has not ticked for %.1f s (limit %g s)", idle / 1e9,
		 timeout / 1e9);
	return false;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whether the agent's capture loop is still turning: the loop records a monotonic tick on every
 * iteration, and /healthz (on libmicrohttpd's thread) compares it with the time of the request.
 *
 * A loop stuck in a read that a process made block (a FIFO posing as a debug file), in a slow
 * table build or in a deadlock would otherwise look healthy forever while windows stop and
 * /metrics freezes: the HTTP thread answers regardless of the loop. Judging by the tick instead
 * lets the kubelet (livenessProbe) or an operator see the stall and restart the agent.
 *
 * The tick is one atomic word written by the loop and read by any thread: no lock, so a stuck
 * loop can never hold one that the HTTP thread needs.
 */
#ifndef HOSTPROF_LIVENESS_H
#define HOSTPROF_LIVENESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIVENESS_DEFAULT_TIMEOUT_S 10

struct liveness {
	uint64_t last_tick_ns; /* CLOCK_MONOTONIC of the last tick; atomic */
	uint64_t timeout_ns;   /* longer than this without a tick: not alive; atomic */
	uint64_t max_gap_ns;   /* the longest time between two ticks since the last reset; atomic */
};

/* Armed as if the loop had just ticked at now_ns; the longest gap is 0. */
void liveness__init(struct liveness *l, uint64_t timeout_ns, uint64_t now_ns);
/* A reload's new liveness_timeout. */
void liveness__set_timeout(struct liveness *l, uint64_t timeout_ns);
/* Called by the loop on every iteration. */
void liveness__tick(struct liveness *l, uint64_t now_ns);
/*
 * The longest gap between two ticks (and from the reset to the first) since the last reset: how
 * long the capture loop was blocked at most, its nap included. A gap still going on is not in it
 * yet; liveness__check() judges that one. /metrics shows it, so that a stall too short for
 * /healthz to fail (a slow open, a big table built on the loop) is still seen.
 */
uint64_t liveness__max_gap(const struct liveness *l);
/* Start counting the longest gap again from now_ns: the agent's start-up (loading the BPF
 * programs) is not the loop. */
void liveness__reset_gap(struct liveness *l, uint64_t now_ns);
/*
 * true while the last tick is at most timeout_ns before now_ns. Otherwise false, with a one-line
 * reason in why ("the capture loop has not ticked for 12.3 s (limit 10 s)").
 */
bool liveness__check(const struct liveness *l, uint64_t now_ns, char *why, size_t len);

#endif /* HOSTPROF_LIVENESS_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's /metrics: the counters of every stage (the collector's samples and losses, the
 * unwinder, the symbolizer's caches, the identity rules, the kubelet client, the exporters) and
 * the agent's own CPU and memory, rendered as Prometheus text in one pass by the main loop.
 */
#ifndef HOSTPROF_AGENT_METRICS_H
#define HOSTPROF_AGENT_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"
#include "export/deliver.h"
#include "process/identity.h"
#include "process/kubelet.h"
#include "agent/metrics.h"

/* What the agent loop itself counts. */
struct agent_counters {
	uint64_t windows;	   /* windows sealed and handed to delivery */
	uint64_t reloads_ok;	   /* SIGHUP reloads applied */
	uint64_t reloads_failed;   /* SIGHUP reloads refused (bad config): the old one runs on */
	uint64_t window_failures;  /* windows that could not be encoded or written */
	double upload_interval_s;  /* as configured now */
	double loop_max_gap_s;	   /* the longest time between two turns of the loop */
	unsigned int frequency_hz; /* as configured now */
	bool attached;		   /* the BPF programs are attached */
};

/* Every input but ctr may be NULL (that part is left out). 0, or -ENOSPC when truncated. */
int agent_metrics__render(struct metrics_text *m, const struct agent_counters *ctr,
			  struct capture *cap, struct deliverer *d, const struct identity *id,
			  struct kubelet *k);

#endif /* HOSTPROF_AGENT_METRICS_H */

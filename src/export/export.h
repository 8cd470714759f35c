/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The export thread: a bounded queue of encoded payloads in front of one transport, with retries.
 * Submitting never blocks the caller (the sampling thread): when the queue's byte budget is
 * exceeded, the oldest payloads are dropped and counted. The thread sends in order, retries what
 * the transport calls retryable (honouring Retry-After, else exponential backoff with jitter), and
 * drops what the receiver refuses for good, logging the receiver's message once per kind.
 */
#ifndef HOSTPROF_EXPORT_H
#define HOSTPROF_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "export/transport.h"

struct exporter_opts {
	size_t queue_max_bytes;	    /* default 64 MiB */
	int64_t initial_backoff_ms; /* default 1000 */
	int64_t max_backoff_ms;	    /* default 30000 */
	int64_t max_retry_after_ms; /* cap on a receiver's Retry-After; default 60000 */
};

struct exporter_stats {
	uint64_t submitted;
	uint64_t delivered;
	uint64_t retries;	   /* send attempts that will be repeated */
	uint64_t dropped_full;	   /* oldest payloads dropped because the queue was over budget */
	uint64_t dropped_refused;  /* refused for good by the receiver */
	uint64_t undelivered;	   /* still queued when shutdown's deadline passed */
	uint64_t partial_rejected; /* profiles a receiver rejected in a partial success */
	size_t queued;
	size_t queued_bytes;
};

struct exporter;

/* Start the export thread. On success the transport is owned by the exporter. NULL + errno. */
struct exporter *exporter__new(struct transport *t, const struct exporter_opts *opts);
/* Queue a payload; ownership of its buffers moves to the exporter whatever the result.
 * Never blocks on the network. 0, or -ENOMEM. */
int exporter__submit(struct exporter *e, struct export_payload *p);
void exporter__stats(struct exporter *e, struct exporter_stats *out);
/*
 * Deliver what is queued, waiting at most deadline_ms (retrying within it), then stop the thread
 * and free everything, the transport included. Fills *out (may be NULL) with the final counts:
 * out->undelivered says what could not be sent in time.
 */
void exporter__shutdown(struct exporter *e, int64_t deadline_ms, struct exporter_stats *out);

#endif /* HOSTPROF_EXPORT_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kubernetes pod metadata from the node's own kubelet (GET https://NODE:10250/pods), without the
 * API server: one request per node instead of a watch per node on the control plane.
 *
 * A background thread owns all network I/O. The sampling thread only ever calls
 * kubelet__lookup(), which copies from an in-memory table under a mutex and never waits on the
 * network; a miss asks the thread for a refresh, at most one fetch per refresh interval.
 *
 * The /pods parser and its table are kubelet_pods.h's, included here for struct pod_meta.
 */
#ifndef HOSTPROF_KUBELET_H
#define HOSTPROF_KUBELET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "process/kubelet_pods.h"

struct kubelet_opts {
	const char *url;	     /* https://NODE:10250/pods (http:// too); required */
	const char *token_file;	     /* read at each fetch (tokens rotate); NULL or "": no token */
	const char *ca_file;	     /* NULL or "": the system's CA bundle */
	bool insecure;		     /* do not verify TLS (logged once) */
	int64_t timeout_ms;	     /* per fetch; <= 0: 10 s */
	int64_t refresh_interval_ms; /* at most one fetch per interval; <= 0: 30 s */
	size_t max_pods;	     /* 0: KUBELET_DEFAULT_MAX_PODS */
};

struct kubelet_stats {
	uint64_t fetches;	 /* attempts, successful or not */
	uint64_t fetch_failures; /* no answer, HTTP error, or a body that did not parse */
	uint64_t lookups;
	uint64_t misses;       /* lookups that found no container */
	uint64_t pods;	       /* in the current table */
	uint64_t containers;   /* container IDs in the current table */
	uint64_t pods_dropped; /* by the last successful fetch: beyond max_pods */
	uint64_t memory_bytes; /* the table and the client, an estimate */
	bool last_fetch_ok;    /* false until a fetch succeeds */
	char last_error[128];  /* the last failure's short reason ("" if none yet) */
};

struct kubelet;

/*
 * Start the client and its thread; the first fetch starts at once. The options' strings are
 * copied. NULL + errno: EINVAL (no URL, or not http(s)://), ENOMEM, or pthread's error.
 */
struct kubelet *kubelet__new(const struct kubelet_opts *o);
/* Stop the thread (a fetch in progress is aborted within about a second) and free. NULL ok. */
void kubelet__delete(struct kubelet *k);

/*
 * Never blocks on the network. Copies the metadata of the container with this ID (as
 * proc__container_id() gives it) into out and returns 0; -ENOENT when it is not known yet (and
 * asks for a refresh, which happens at most once per refresh interval), -EINVAL for NULL
 * arguments. An empty ID is -ENOENT without a refresh: a process outside any container.
 */
int kubelet__lookup(struct kubelet *k, const char *container_id, struct pod_meta *out);
void kubelet__stats(struct kubelet *k, struct kubelet_stats *out);

#endif /* HOSTPROF_KUBELET_H */

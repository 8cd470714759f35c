/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The parser of the kubelet's /pods (GET https://NODE:10250/pods, a v1 PodList) and the table it
 * builds: what each container's process gets to know about its pod, indexed by container ID.
 * On its own, apart from the client in kubelet.h, so that it is tested on fixtures and fuzzed
 * without a server.
 */
#ifndef HOSTPROF_KUBELET_PODS_H
#define HOSTPROF_KUBELET_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Field sizes, NUL included. They hold what Kubernetes allows (a namespace or container name is
 * a 63-character DNS label, a pod, node or owner name a 253-character DNS subdomain, a label
 * value 63 characters), so only input that breaks those rules is ever cut, and then never inside
 * a UTF-8 sequence. Label keys may carry a 253-character prefix; real ones are far shorter, and
 * a key that does not fit is dropped rather than cut, since a cut key would name another label.
 */
#define POD_NAMESPACE_LEN 64
#define POD_NAME_LEN 254
#define POD_UID_LEN 64
#define POD_CONTAINER_NAME_LEN 64
#define POD_NODE_NAME_LEN 254
#define POD_WORKLOAD_KIND_LEN 32
#define POD_WORKLOAD_NAME_LEN 254
#define POD_LABEL_KEY_LEN 128
#define POD_LABEL_VALUE_LEN 64
#define POD_MAX_LABELS 32

struct pod_label {
	char key[POD_LABEL_KEY_LEN];
	char value[POD_LABEL_VALUE_LEN];
};

/*
 * What one container's process gets to know about its pod. Strings are always NUL-terminated;
 * "" means absent. Caller-owned, a few KiB: no pointers into the table, so it stays valid after
 * the table is replaced.
 */
struct pod_meta {
	char pod_namespace[POD_NAMESPACE_LEN];
	char pod_name[POD_NAME_LEN];
	char pod_uid[POD_UID_LEN];
	char container_name[POD_CONTAINER_NAME_LEN];
	char node_name[POD_NODE_NAME_LEN]; /* spec.nodeName */
	/*
	 * The workload, from the controlling ownerReference: "Deployment" (a ReplicaSet named
	 * DEPLOY-<pod-template-hash>), "ReplicaSet", "DaemonSet", "StatefulSet", "Job" (a CronJob's
	 * Job stays a Job: the pod cannot see the CronJob), or whatever other kind owns the pod.
	 * Both "" for a bare pod.
	 */
	char workload_kind[POD_WORKLOAD_KIND_LEN];
	char workload_name[POD_WORKLOAD_NAME_LEN];
	char app_name[POD_LABEL_VALUE_LEN]; /* label app.kubernetes.io/name */
	char app[POD_LABEL_VALUE_LEN];	    /* label app */
	/* All labels in the order the kubelet gave them, up to POD_MAX_LABELS. */
	struct pod_label labels[POD_MAX_LABELS];
	unsigned int nlabels;
	unsigned int labels_dropped; /* beyond POD_MAX_LABELS, or key/value too long */
};

/*
 * The largest /pods body taken. A node runs at most a few hundred pods (110 by default), each
 * a few KiB to some tens of KiB of JSON with its managedFields: a few MiB in all. json-c's tree
 * costs several times the text, so this also bounds the parse's transient memory.
 */
#define KUBELET_MAX_BODY (32u << 20)
/* Pods kept of one /pods when the caller gives no bound. */
#define KUBELET_DEFAULT_MAX_PODS 1024

/* One parsed /pods response: pods and a container-ID index over them. Immutable once built. */
struct kubelet_table;

/* What a parse met that is not fatal, for stats and debug logs. */
struct kubelet_parse_report {
	size_t pods;		   /* pods kept */
	size_t containers;	   /* container IDs indexed */
	size_t pods_dropped;	   /* beyond max_pods */
	size_t pods_bad;	   /* items without metadata.namespace/name, or not objects */
	size_t containers_no_id;   /* not started yet: no containerID (normal while pending) */
	size_t containers_bad_id;  /* a containerID that is not [scheme://]hex, or a duplicate */
	size_t containers_dropped; /* beyond the per-pod bound */
	char warning[160];	   /* the first problem met, "" when none */
};

/*
 * Parse the body of a kubelet /pods response (a v1 PodList) of len bytes (no NUL needed). Keeps
 * at most max_pods pods (0: KUBELET_DEFAULT_MAX_PODS); the rest are counted in
 * report->pods_dropped. Every container of status.containerStatuses, initContainerStatuses and
 * ephemeralContainerStatuses is indexed by its containerID with the scheme ("containerd://",
 * "cri-o://", "docker://", ...) stripped; a bare hex ID is taken as is.
 *
 * Returns 0 with *out set (an empty table is fine), or -EINVAL when the body is not JSON or not
 * a PodList (no "items" array), -E2BIG beyond KUBELET_MAX_BODY, -ENOMEM. err (may be NULL) gets a
 * one-line reason on failure. report may be NULL.
 */
int kubelet__parse_pods(const char *json, size_t len, size_t max_pods, struct kubelet_table **out,
			struct kubelet_parse_report *report, char *err, size_t errlen);
/*
 * Copy the metadata of the container with this ID (hex, any case, no scheme) into out.
 * 0, or -ENOENT.
 */
int kubelet_table__lookup(const struct kubelet_table *t, const char *container_id,
			  struct pod_meta *out);
/* Could this be a container ID as runtimes give them (hex, any case, no scheme, bounded)? */
bool kubelet__container_id_ok(const char *container_id);
size_t kubelet_table__pods(const struct kubelet_table *t);
size_t kubelet_table__containers(const struct kubelet_table *t);
size_t kubelet_table__bytes(const struct kubelet_table *t); /* heap bytes, an estimate */
void kubelet_table__delete(struct kubelet_table *t);	    /* NULL ok */

#endif /* HOSTPROF_KUBELET_PODS_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who a process is, as its resource attributes: the service name by the agent's rules, the
 * Kubernetes pod it runs in (from the kubelet), the systemd unit and the container, and then the
 * user's relabel rules, which may also drop the process.
 *
 * Service name, first found wins: OTEL_SERVICE_NAME (or service.name in
 * OTEL_RESOURCE_ATTRIBUTES) from the process's environment; the pod's app.kubernetes.io/name
 * label, else its app label, else namespace/workload; the systemd unit; the container's name;
 * the executable's name. Above them all: the resource the process's own OpenTelemetry SDK
 * published in its process context (process_context.h), every attribute of it.
 */
#ifndef HOSTPROF_IDENTITY_H
#define HOSTPROF_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/config.h"

#define IDENTITY_MAX_ATTRS 64

/* What the process table knows of a process (strings may be NULL). */
struct identity_input {
	pid_t pid;
	const char *comm;
	const char *exe_path;
	const char *cmdline;
	const char *env_service; /* declared in its environment */
	const char *container_id;
	const char *systemd_unit; /* "nginx.service"; NULL outside a service */
	/* What its OpenTelemetry SDK published (OTEP 4719): its resource attributes win over
	 * every other source, service.name included. NULL when none. */
	const struct process_context *otel_ctx;
};

struct identity_attr {
	const char *key, *value;
	bool exported; /* false for the ones only rules read (k8s.pod.label.*) */
};

/*
 * What the kernel may skip of a process the rules left out (the drop filter, bpf/common.bpf.h):
 * nothing while the answer may still change (its pod not known yet); the process until it execs;
 * or its whole cgroup, when every rule that decided read only attributes its cgroup gives
 * (container.id, container.name, systemd.unit, k8s.*), so that every process of the cgroup would
 * be left out too. An attribute the process's own SDK published, or one a replace rule derived
 * from any other attribute, is the process's own.
 */
enum identity_drop {
	IDENTITY_DROP_NONE = 0,
	IDENTITY_DROP_PROCESS,
	IDENTITY_DROP_CGROUP,
};

/* The attributes of one process; the strings live in buf. */
struct process_identity {
	struct identity_attr attrs[IDENTITY_MAX_ATTRS];
	size_t nr;
	enum identity_drop drop; /* when identity__resolve() returned false */
	char buf[16384];
	size_t used;
};

struct kubelet;
struct process_context;

struct identity_opts {
	const struct relabel_rule *rules;
	size_t nr_rules;
	struct kubelet *kubelet; /* NULL: not on Kubernetes */
	const char *docker_root; /* NULL: no container names */
	const char *config_file; /* for error messages: where the rules are */
};

struct identity;

/* Compiles the rules. NULL with the rule's line and the regex's problem in err. */
struct identity *identity__new(const struct identity_opts *o, char *err, size_t len);
void identity__delete(struct identity *id);

/* Fill *out. Returns false when a keep or drop rule leaves the process out. */
bool identity__resolve(struct identity *id, const struct identity_input *in,
		       struct process_identity *out);

/* The value of an attribute, or NULL. */
const char *process_identity__get(const struct process_identity *pi, const char *key);

struct identity_stats {
	unsigned long resolved, dropped, from_kubernetes, kube_pending;
};
void identity__stats(const struct identity *id, struct identity_stats *out);

#endif /* HOSTPROF_IDENTITY_H */

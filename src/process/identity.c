// SPDX-License-Identifier: BSD-2-Clause
#include "process/identity.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/docker.h"
#include "process/kubelet.h"
#include "process/process_context.h"
#include "base/log.h"

struct compiled_rule {
	const struct relabel_rule *rule;
	regex_t re;
};

struct identity {
	struct compiled_rule *rules;
	size_t nr_rules;
	struct kubelet *kubelet;
	const char *docker_root;
	struct identity_stats stats;
};

struct identity *identity__new(const struct identity_opts *o, char *err, size_t len)
{
	struct identity *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->kubelet = o->kubelet;
	id->docker_root = o->docker_root;
	id->rules = calloc(o->nr_rules ? o->nr_rules : 1, sizeof(*id->rules));
	if (!id->rules) {
		free(id);
		return NULL;
	}
	for (size_t i = 0; i < o->nr_rules; i++) {
		const struct relabel_rule *r = &o->rules[i];
		char *anchored;
		int rc;

		/* Anchored at both ends, as Prometheus's relabeling is: the user's groups start at
		 * \2, which the replacement's $1 maps to. */
		if (asprintf(&anchored, "^(%s)$", r->regex ? r->regex : ".*") < 0) {
			identity__delete(id);
			return NULL;
		}
		rc = regcomp(&id->rules[i].re, anchored, REG_EXTENDED);
		free(anchored);
		if (rc) {
			char why[128];

			regerror(rc, &id->rules[i].re, why, sizeof(why));
			snprintf(err, len, "%s%srelabel rule %zu%s%.0d: regex '%s': %s",
				 o->config_file ? o->config_file : "", o->config_file ? ": " : "",
				 i + 1, r->line ? " at line " : "", r->line, r->regex, why);
			identity__delete(id);
			errno = EINVAL;
			return NULL;
		}
		id->rules[i].rule = r;
		id->nr_rules++;
	}
	return id;
}

void identity__delete(struct identity *id)
{
	if (!id)
		return;
	for (size_t i = 0; i < id->nr_rules; i++)
		regfree(&id->rules[i].re);
	free(id->rules);
	free(id);
}

const char *process_identity__get(const struct process_identity *pi, const char *key)
{
	for (size_t i = 0; i < pi->nr; i++)
		if (!strcmp(pi->attrs[i].key, key))
			return pi->attrs[i].value;
	return NULL;
}

static const char *keep_string(struct process_identity *pi, const char *s, size_t n)
{
	char *out;

	if (pi->used + n + 1 > sizeof(pi->buf))
		return NULL;
	out = pi->buf + pi->used;
	memcpy(out, s, n);
	out[n] = '\0';
	pi->used += n + 1;
	return out;
}

/* Set (or, with an empty value, remove) an attribute. Keys are static strings or kept in buf. */
static void set_attr(struct process_identity *pi, const char *key, const char *value, bool exported)
{
	size_t i;

	for (i = 0; i < pi->nr; i++)
		if (!strcmp(pi->attrs[i].key, key))
			break;
	if (!value || !value[0]) {
		if (i < pi->nr)
			pi->attrs[i] = pi->attrs[--pi->nr];
		return;
	}
	value = keep_string(pi, value, strlen(value));
	if (!value)
		return; /* out of room: identity is best effort, the sample is kept */
	if (i == pi->nr) {
		if (pi->nr == IDENTITY_MAX_ATTRS)
			return;
		pi->nr++;
	}
	pi->attrs[i] = (struct identity_attr){.key = key, .value = value, .exported = exported};
}

/* The resource the process's SDK published: each attribute set over what the rules found. The
 * keys are the process's, so they are kept in buf like the values. */
static void set_context_attrs(struct process_identity *pi, const struct process_context *c)
{
	for (size_t i = 0; c && i < c->nr_attrs; i++) {
		const char *key = keep_string(pi, c->attrs[i].key, strlen(c->attrs[i].key));

		if (key)
			set_attr(pi, key, c->attrs[i].value, true);
	}
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The k8s.<kind>.name attribute of a workload kind, or NULL for kinds without one. */
static const char *workload_attr(const char *kind)
{
	static const struct {
		const char *kind, *attr;
	} known[] = {
		{"Deployment", "k8s.deployment.name"},
		{"ReplicaSet", "k8s.replicaset.name"},
		{"DaemonSet", "k8s.daemonset.name"},
		{"StatefulSet", "k8s.statefulset.name"},
		{"Job", "k8s.job.name"},
		{"CronJob", "k8s.cronjob.name"},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(kind, known[i].kind))
			return known[i].attr;
	return NULL;
}

/* The pod's attributes, and the service name Kubernetes gives it (NULL when none). */
static const char *add_pod(struct identity *id, struct process_identity *pi,
			   const struct pod_meta *pod)
{
	const char *attr = workload_attr(pod->workload_kind);
	char service[POD_NAMESPACE_LEN + POD_WORKLOAD_NAME_LEN + 2];

	set_attr(pi, "k8s.namespace.name", pod->pod_namespace, true);
	set_attr(pi, "k8s.pod.name", pod->pod_name, true);
	set_attr(pi, "k8s.pod.uid", pod->pod_uid, true);
	set_attr(pi, "k8s.container.name", pod->container_name, true);
	set_attr(pi, "k8s.node.name", pod->node_name, true);
	if (attr)
		set_attr(pi, attr, pod->workload_name, true);
	for (unsigned int i = 0; i < pod->nlabels; i++) {
		char key[sizeof("k8s.pod.label.") + POD_LABEL_KEY_LEN];
		const char *kept;

		snprintf(key, sizeof(key), "k8s.pod.label.%s", pod->labels[i].key);
		kept = keep_string(pi, key, strlen(key));
		if (kept)
			set_attr(pi, kept, pod->labels[i].value, false);
	}
	id->stats.from_kubernetes++;
	if (pod->app_name[0])
		return keep_string(pi, pod->app_name, strlen(pod->app_name));
	if (pod->app[0])
		return keep_string(pi, pod->app, strlen(pod->app));
	snprintf(service, sizeof(service), "%s/%s", pod->pod_namespace,
		 pod->workload_name[0] ? pod->workload_name : pod->pod_name);
	return keep_string(pi, service, strlen(service));
}

/* "$1" in a replacement is the user's first group, which is \2 of the anchored regex. */
static void expand(const char *tmpl, const char *src, const regmatch_t *m, char *out, size_t len)
{
	size_t o = 0;

	for (const char *t = tmpl; *t && o + 1 < len; t++) {
		if (t[0] == '$' && t[1] >= '0' && t[1] <= '9') {
			const regmatch_t *g = &m[t[1] - '0' + 1];

			if (g->rm_so >= 0) {
				size_t n = g->rm_eo - g->rm_so;

				if (n > len - 1 - o)
					n = len - 1 - o;
				memcpy(out + o, src + g->rm_so, n);
				o += n;
			}
			t++;
		} else {
			out[o++] = *t;
		}
	}
	out[o] = '\0';
}

/* The attributes that every process of a cgroup shares, as the cgroup's path gives them. */
static bool cgroup_key(const char *key)
{
	return !strcmp(key, "container.id") || !strcmp(key, "container.name") ||
	       !strcmp(key, "systemd.unit") || !strncmp(key, "k8s.", 4);
}

/* Which attributes the rules so far made the process's own or the cgroup's (see enum
 * identity_drop): a replace rule's target is the cgroup's only when its source is. */
struct scoped_key {
	const char *key;
	bool wide;
};

struct cgroup_scope {
	const struct process_context *ctx;
	struct scoped_key set[CONFIG_MAX_RELABEL];
	size_t nr;
};

static bool cgroup_wide(const struct cgroup_scope *cs, const char *key)
{
	if (!key) /* no source reads as "" for every process */
		return true;
	for (size_t i = cs->nr; i-- > 0;)
		if (!strcmp(cs->set[i].key, key))
			return cs->set[i].wide;
	return cgroup_key(key) && !process_context__get(cs->ctx, key);
}

static void scope_set(struct cgroup_scope *cs, const char *key, bool wide)
{
	if (key && cs->nr < CONFIG_MAX_RELABEL)
		cs->set[cs->nr++] = (struct scoped_key){key, wide};
}

/* Apply the rules in order; false when one leaves the process out, with pi->drop set. */
static bool relabel(struct identity *id, struct process_identity *pi,
		    const struct process_context *ctx)
{
	struct cgroup_scope cs = {.ctx = ctx};

	for (size_t i = 0; i < id->nr_rules; i++) {
		const struct relabel_rule *r = id->rules[i].rule;
		const char *src = r->source ? process_identity__get(pi, r->source) : NULL;
		bool wide = cgroup_wide(&cs, r->source);
		regmatch_t m[11];
		const char *target;
		bool match;
		char value[1024];

		src = src ? src : "";
		match = regexec(&id->rules[i].re, src, 11, m, 0) == 0;
		if ((r->action == RELABEL_KEEP && !match) || (r->action == RELABEL_DROP && match)) {
			pi->drop = wide ? IDENTITY_DROP_CGROUP : IDENTITY_DROP_PROCESS;
			return false;
		}
		if (r->action != RELABEL_REPLACE)
			continue;
		/* Another process may match where this one did not: then its target differs. */
		if (!wide || match)
			scope_set(&cs, r->target, wide);
		if (!match)
			continue;
		expand(r->replacement ? r->replacement : "$1", src, m, value, sizeof(value));
		/* The target name must outlive the rule set's reload: keep a copy. */
		target = keep_string(pi, r->target, strlen(r->target));
		if (target)
			set_attr(pi, target, value, true);
	}
	return true;
}

bool identity__resolve(struct identity *id, const struct identity_input *in,
		       struct process_identity *pi)
{
	const char *exe = base_name(in->exe_path);
	const char *service = NULL;
	char pid[16], container_name[256];
	struct pod_meta pod;
	bool pending = false;

	pi->nr = 0;
	pi->used = 0;
	pi->drop = IDENTITY_DROP_NONE;
	snprintf(pid, sizeof(pid), "%d", in->pid);
	set_attr(pi, "process.pid", pid, false);
	set_attr(pi, "process.executable.name", exe, true);
	set_attr(pi, "process.executable.path", in->exe_path, true);
	set_attr(pi, "process.command_line", in->cmdline, true);
	set_attr(pi, "container.id", in->container_id, true);
	if (in->systemd_unit) {
		char unit[256];

		snprintf(unit, sizeof(unit), "%s.service", in->systemd_unit);
		set_attr(pi, "systemd.unit", unit, true);
	}

	if (in->env_service && in->env_service[0])
		service = in->env_service;
	if (id->kubelet && in->container_id && in->container_id[0]) {
		int rc = kubelet__lookup(id->kubelet, in->container_id, &pod);
		const char *from_pod = rc == 0 ? add_pod(id, pi, &pod) : NULL;

		if (rc == -ENOENT)
			id->stats.kube_pending++;
		pending = rc == -ENOENT;
		if (!service)
			service = from_pod;
	}
	if (!service && in->systemd_unit && in->systemd_unit[0])
		service = in->systemd_unit;
	if (id->docker_root && in->container_id && in->container_id[0] &&
	    !process_identity__get(pi, "k8s.pod.name") &&
	    docker__container_name(id->docker_root, in->container_id, container_name,
				   sizeof(container_name)) == 0) {
		set_attr(pi, "container.name", container_name, true);
		if (!service)
			service = process_identity__get(pi, "container.name");
	}
	if (!service)
		service = exe && exe[0] ? exe : in->comm;
	set_attr(pi, "service.name", service, true);
	set_context_attrs(pi, in->otel_ctx);

	id->stats.resolved++;
	if (!relabel(id, pi, in->otel_ctx)) {
		id->stats.dropped++;
		/* Its pod may be known at the next look: left out for now, not for good. */
		if (pending)
			pi->drop = IDENTITY_DROP_NONE;
		return false;
	}
	return true;
}

void identity__stats(const struct identity *id, struct identity_stats *out)
{
	*out = id->stats;
}

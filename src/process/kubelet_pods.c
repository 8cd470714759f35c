// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kubelet's /pods (a v1 PodList) into an immutable table indexed by container ID. Pure: no
 * I/O, no locks, so it is tested on fixtures and fuzzed without a server; kubelet.c fetches the
 * bodies and swaps the tables.
 */
#include "process/kubelet_pods.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log_text.h"
#include "base/utf8.h"
#include "base/vec.h"

/* Init containers, sidecars and the ephemeral containers of debug sessions, which accumulate. */
#define MAX_CONTAINERS_PER_POD 64
/* A container ID without its scheme: 64 hex digits for every runtime we know. */
#define MAX_ID_LEN 128
/* json-c's default of 32 is too shallow for managedFields, which mirror the whole pod spec. */
#define JSON_MAX_DEPTH 64

/* ---------------------------------------------------------------------------------------------
 * The table
 */

/* Strings are offsets into one pool, so the pool may grow (realloc) while the table is built;
 * offset 0 is the empty string. */
struct kpod {
	uint32_t ns, name, uid, node, kind, workload, app_name, app;
	uint32_t label0; /* index of the first label in t->labels */
	uint16_t nlabels, labels_dropped;
};

struct klabel {
	uint32_t key, value;
};

struct kcontainer {
	uint32_t id; /* lowercase hex */
	uint32_t name;
	uint32_t pod;
};

struct kubelet_table {
	struct kpod *pods;
	size_t npods, cap_pods;
	struct klabel *labels;
	size_t nlabels, cap_labels;
	struct kcontainer *ctrs; /* sorted by id once built */
	size_t nctrs, cap_ctrs;
	char *pool;
	size_t pool_len, pool_cap;
};

/*
 * Append s[0..n) (cut to fit max with its NUL) to the pool; control characters become '?', since
 * these strings end up in logs and exported attributes. Returns the offset, 0 for "", or
 * UINT32_MAX when out of memory.
 */
static uint32_t pool_add(struct kubelet_table *t, const char *s, size_t n, size_t max)
{
	size_t off;

	if (!s || !n)
		return 0;
	n = utf8__fit(s, n, max);
	if (!n)
		return 0;
	if (t->pool_len + n + 1 > UINT32_MAX)
		return UINT32_MAX;
	if (VEC_RESERVE(t->pool, t->pool_cap, t->pool_len + n + 1))
		return UINT32_MAX;
	off = t->pool_len;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		t->pool[off + i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	t->pool[off + n] = '\0';
	t->pool_len += n + 1;
	return (uint32_t)off;
}

static const char *pool_str(const struct kubelet_table *t, uint32_t off)
{
	return t->pool + off;
}

/* ---- json-c accessors that treat a wrong type as absent ---- */

static struct json_object *get_typed(struct json_object *o, const char *key, json_type type)
{
	struct json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

static const char *get_str(struct json_object *o, const char *key, size_t *len)
{
	struct json_object *v = get_typed(o, key, json_type_string);

	*len = 0;
	if (!v)
		return NULL;
	*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

/* ---- the parse ---- */

struct parse {
	struct kubelet_table *t;
	struct kubelet_parse_report *r;
	size_t max_pods;
};

static void note(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->r->warning[0])
		return;
	va_start(ap, fmt);
	vsnprintf(p->r->warning, sizeof(p->r->warning), fmt, ap);
	va_end(ap);
}

/*
 * "containerd://HEX", "cri-o://HEX", "docker://HEX" or a bare "HEX" into id (lowercase).
 * 0, or -EINVAL.
 */
static int parse_container_id(const char *s, size_t n, char id[MAX_ID_LEN + 1])
{
	const char *sep = n >= 3 ? memmem(s, n, "://", 3) : NULL;

	if (sep) {
		if (sep == s)
			return -EINVAL;
		for (const char *c = s; c < sep; c++)
			if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' && *c != '+')
				return -EINVAL;
		n -= (size_t)(sep + 3 - s);
		s = sep + 3;
	}
	if (!n || n > MAX_ID_LEN)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -EINVAL;
		id[i] = (char)tolower((unsigned char)s[i]);
	}
	id[n] = '\0';
	return 0;
}

/* Sanitised for a log line: at most 40 printable bytes of s. */
static const char *shown(const char *s, size_t n, char *buf, size_t len)
{
	log_text__sanitize(buf, len, s ? s : "", s ? (n < 40 ? n : 40) : 0);
	return buf;
}

static int add_containers(struct parse *p, struct json_object *status, const char *field,
			  uint32_t pod, const char *ns, const char *name, size_t *in_pod)
{
	struct json_object *arr = get_typed(status, field, json_type_array);
	size_t n = arr ? json_object_array_length(arr) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(arr, i), *v;
		char id[MAX_ID_LEN + 1], b[48];
		const char *cname, *cid;
		size_t cname_len, cid_len;
		struct kcontainer *kc;

		if (!c || !json_object_is_type(c, json_type_object)) {
			p->r->containers_bad_id++;
			note(p, "pod %s/%s: %s[%zu] is not an object", ns, name, field, i);
			continue;
		}
		cname = get_str(c, "name", &cname_len);
		cid = get_str(c, "containerID", &cid_len);
		if (!cid && json_object_object_get_ex(c, "containerID", &v) && v) {
			p->r->containers_bad_id++;
			note(p, "pod %s/%s: %s[%zu].containerID is not a string", ns, name, field,
			     i);
			continue;
		}
		if (!cid || !cid_len) {
			/* Waiting to start (pulling its image, crash-looping): no ID yet. */
			p->r->containers_no_id++;
			continue;
		}
		if (parse_container_id(cid, cid_len, id)) {
			p->r->containers_bad_id++;
			note(p, "pod %s/%s: containerID '%s' is not [scheme://]hex", ns, name,
			     shown(cid, cid_len, b, sizeof(b)));
			continue;
		}
		if (*in_pod >= MAX_CONTAINERS_PER_POD) {
			p->r->containers_dropped++;
			note(p, "pod %s/%s: more than %d containers", ns, name,
			     MAX_CONTAINERS_PER_POD);
			continue;
		}
		if (VEC_RESERVE(p->t->ctrs, p->t->cap_ctrs, p->t->nctrs + 1))
			return -ENOMEM;
		kc = &p->t->ctrs[p->t->nctrs];
		kc->id = pool_add(p->t, id, strlen(id), MAX_ID_LEN + 1);
		kc->name = pool_add(p->t, cname, cname_len, POD_CONTAINER_NAME_LEN);
		kc->pod = pod;
		if (kc->id == UINT32_MAX || kc->name == UINT32_MAX)
			return -ENOMEM;
		p->t->nctrs++;
		(*in_pod)++;
	}
	return 0;
}

/* The controller among the ownerReferences, else the first owner; NULL for a bare pod. */
static struct json_object *controller_of(struct json_object *meta)
{
	struct json_object *refs = get_typed(meta, "ownerReferences", json_type_array);
	struct json_object *first = NULL;
	size_t n = refs ? json_object_array_length(refs) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(refs, i);
		struct json_object *ctl = get_typed(r, "controller", json_type_boolean);

		if (!r || !json_object_is_type(r, json_type_object))
			continue;
		if (ctl && json_object_get_boolean(ctl))
			return r;
		if (!first)
			first = r;
	}
	return first;
}

static int add_workload(struct parse *p, struct kpod *kp, struct json_object *meta,
			struct json_object *labels)
{
	struct json_object *owner = controller_of(meta);
	const char *kind, *name, *hash;
	size_t kind_len, name_len, hash_len;

	if (!owner)
		return 0;
	kind = get_str(owner, "kind", &kind_len);
	name = get_str(owner, "name", &name_len);
	if (!kind || !name || !kind_len || !name_len)
		return 0;
	/*
	 * A Deployment's ReplicaSet is named DEPLOY-HASH, where HASH is also the pod's
	 * pod-template-hash label: the one reliable way from a pod to its Deployment without
	 * asking the API server. A ReplicaSet without that suffix was made by hand.
	 */
	hash = get_str(labels, "pod-template-hash", &hash_len);
	if (kind_len == 10 && !memcmp(kind, "ReplicaSet", 10) && hash && hash_len &&
	    name_len > hash_len + 1 && name[name_len - hash_len - 1] == '-' &&
	    !memcmp(name + name_len - hash_len, hash, hash_len)) {
		kind = "Deployment";
		kind_len = 10;
		name_len -= hash_len + 1;
	}
	kp->kind = pool_add(p->t, kind, kind_len, POD_WORKLOAD_KIND_LEN);
	kp->workload = pool_add(p->t, name, name_len, POD_WORKLOAD_NAME_LEN);
	return kp->kind == UINT32_MAX || kp->workload == UINT32_MAX ? -ENOMEM : 0;
}

static int add_labels(struct parse *p, struct kpod *kp, struct json_object *labels)
{
	const char *v;
	size_t vlen;

	kp->label0 = (uint32_t)p->t->nlabels;
	if (!labels)
		return 0;
	v = get_str(labels, "app.kubernetes.io/name", &vlen);
	kp->app_name = pool_add(p->t, v, vlen, POD_LABEL_VALUE_LEN);
	v = get_str(labels, "app", &vlen);
	kp->app = pool_add(p->t, v, vlen, POD_LABEL_VALUE_LEN);
	if (kp->app_name == UINT32_MAX || kp->app == UINT32_MAX)
		return -ENOMEM;

	json_object_object_foreach(labels, key, val)
	{
		size_t klen = strlen(key);
		struct klabel *kl;

		/* A cut key or value would be another label: drop what does not fit whole. */
		if (kp->nlabels >= POD_MAX_LABELS || !klen || klen >= POD_LABEL_KEY_LEN || !val ||
		    !json_object_is_type(val, json_type_string) ||
		    (size_t)json_object_get_string_len(val) >= POD_LABEL_VALUE_LEN) {
			if (kp->labels_dropped < UINT16_MAX)
				kp->labels_dropped++;
			continue;
		}
		if (VEC_RESERVE(p->t->labels, p->t->cap_labels, p->t->nlabels + 1))
			return -ENOMEM;
		kl = &p->t->labels[p->t->nlabels];
		kl->key = pool_add(p->t, key, klen, POD_LABEL_KEY_LEN);
		kl->value = pool_add(p->t, json_object_get_string(val),
				     (size_t)json_object_get_string_len(val), POD_LABEL_VALUE_LEN);
		if (kl->key == UINT32_MAX || kl->value == UINT32_MAX)
			return -ENOMEM;
		p->t->nlabels++;
		kp->nlabels++;
	}
	return 0;
}

static int add_pod(struct parse *p, struct json_object *item, size_t index)
{
	static const char *const statuses[] = {"containerStatuses", "initContainerStatuses",
					       "ephemeralContainerStatuses"};
	struct json_object *meta = get_typed(item, "metadata", json_type_object);
	struct json_object *labels = get_typed(meta, "labels", json_type_object);
	struct json_object *spec = get_typed(item, "spec", json_type_object);
	struct json_object *status = get_typed(item, "status", json_type_object);
	const char *ns, *name, *s;
	char nsb[POD_NAMESPACE_LEN], nameb[POD_NAME_LEN];
	size_t ns_len, name_len, len, in_pod = 0;
	struct kpod *kp;
	uint32_t pod;
	int err;

	ns = get_str(meta, "namespace", &ns_len);
	name = get_str(meta, "name", &name_len);
	if (!ns || !name || !ns_len || !name_len) {
		p->r->pods_bad++;
		note(p, "items[%zu]: no metadata.namespace and metadata.name", index);
		return 0;
	}
	if (p->t->npods >= p->max_pods) {
		p->r->pods_dropped++;
		note(p, "more than %zu pods (the rest are not known)", p->max_pods);
		return 0;
	}
	if (VEC_RESERVE(p->t->pods, p->t->cap_pods, p->t->npods + 1))
		return -ENOMEM;
	pod = (uint32_t)p->t->npods;
	kp = &p->t->pods[pod];
	memset(kp, 0, sizeof(*kp));
	kp->ns = pool_add(p->t, ns, ns_len, POD_NAMESPACE_LEN);
	kp->name = pool_add(p->t, name, name_len, POD_NAME_LEN);
	s = get_str(meta, "uid", &len);
	kp->uid = pool_add(p->t, s, len, POD_UID_LEN);
	s = get_str(spec, "nodeName", &len);
	kp->node = pool_add(p->t, s, len, POD_NODE_NAME_LEN);
	if (kp->ns == UINT32_MAX || kp->name == UINT32_MAX || kp->uid == UINT32_MAX ||
	    kp->node == UINT32_MAX)
		return -ENOMEM;
	err = add_workload(p, kp, meta, labels);
	if (!err)
		err = add_labels(p, kp, labels);
	if (err)
		return err;
	p->t->npods++;

	/* For messages: the names as stored (sanitised, bounded). */
	snprintf(nsb, sizeof(nsb), "%s", pool_str(p->t, kp->ns));
	snprintf(nameb, sizeof(nameb), "%s", pool_str(p->t, kp->name));
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		err = add_containers(p, status, statuses[i], pod, nsb, nameb, &in_pod);
		if (err)
			return err;
	}
	return 0;
}

static int ctr_cmp(const void *a, const void *b, void *arg)
{
	const struct kubelet_table *t = arg;
	const struct kcontainer *x = a, *y = b;
	int c = strcmp(pool_str(t, x->id), pool_str(t, y->id));

	/* Ties in the order the IDs were met (pool offsets grow), so the first one stays. */
	if (!c)
		c = x->id < y->id ? -1 : x->id > y->id;
	return c;
}

/* Sort the index and drop duplicate IDs (the first one stays). */
static void index_containers(struct parse *p)
{
	struct kubelet_table *t = p->t;
	size_t o = 0;

	if (!t->nctrs)
		return;
	qsort_r(t->ctrs, t->nctrs, sizeof(*t->ctrs), ctr_cmp, t);
	for (size_t i = 0; i < t->nctrs; i++) {
		if (o && !strcmp(pool_str(t, t->ctrs[o - 1].id), pool_str(t, t->ctrs[i].id))) {
			p->r->containers_bad_id++;
			note(p, "container ID %.16s... appears twice", pool_str(t, t->ctrs[i].id));
			continue;
		}
		t->ctrs[o++] = t->ctrs[i];
	}
	t->nctrs = o;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static struct json_object *parse_json(const char *json, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	struct json_object *root;
	enum json_tokener_error jerr;
	size_t end;

	if (!tok) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	root = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!root) {
		if (jerr == json_tokener_continue || jerr == json_tokener_success)
			set_err(err, errlen, "truncated JSON (ends after %zu bytes)", len);
		else
			set_err(err, errlen, "bad JSON at byte %zu: %s", end,
				json_tokener_error_desc(jerr));
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_free(tok);
	while (end < len && isspace((unsigned char)json[end]))
		end++;
	if (end < len) {
		set_err(err, errlen, "bad JSON: data after the end, at byte %zu", end);
		json_object_put(root);
		return NULL;
	}
	return root;
}

int kubelet__parse_pods(const char *json, size_t len, size_t max_pods, struct kubelet_table **out,
			struct kubelet_parse_report *report, char *err, size_t errlen)
{
	struct kubelet_parse_report scratch = {0};
	struct parse p = {.max_pods = max_pods ? max_pods : KUBELET_DEFAULT_MAX_PODS};
	struct json_object *root = NULL, *items;
	size_t n;
	int rc = 0;

	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	p.r = report ? report : &scratch;
	memset(p.r, 0, sizeof(*p.r));
	if (!out || (!json && len)) {
		set_err(err, errlen, "invalid arguments");
		return -EINVAL;
	}
	if (len > KUBELET_MAX_BODY) {
		set_err(err, errlen, "response of %zu bytes is over the %u-byte limit", len,
			KUBELET_MAX_BODY);
		return -E2BIG;
	}
	if (!len) {
		set_err(err, errlen, "empty response");
		return -EINVAL;
	}
	root = parse_json(json, len, err, errlen);
	if (!root)
		return -EINVAL;
	items = get_typed(root, "items", json_type_array);
	if (!items) {
		set_err(err, errlen, "not a PodList: no \"items\" array");
		rc = -EINVAL;
		goto out;
	}
	p.t = calloc(1, sizeof(*p.t));
	if (!p.t || VEC_RESERVE(p.t->pool, p.t->pool_cap, 1)) {
		rc = -ENOMEM;
		goto nomem;
	}
	p.t->pool[0] = '\0';
	p.t->pool_len = 1;
	n = json_object_array_length(items);
	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_array_get_idx(items, i);

		if (!item || !json_object_is_type(item, json_type_object)) {
			p.r->pods_bad++;
			note(&p, "items[%zu] is not an object", i);
			continue;
		}
		rc = add_pod(&p, item, i);
		if (rc)
			goto nomem;
	}
	index_containers(&p);
	p.r->pods = p.t->npods;
	p.r->containers = p.t->nctrs;
	*out = p.t;
	p.t = NULL;
	goto out;
nomem:
	set_err(err, errlen, "out of memory");
out:
	kubelet_table__delete(p.t);
	json_object_put(root);
	return rc;
}

static void copy_out(char *dst, size_t max, const char *src)
{
	size_t n = strlen(src);

	n = utf8__fit(src, n, max);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* "ABC..." lowercased into buf; false when it cannot be an ID we index. */
static bool normalize_id(const char *id, char buf[MAX_ID_LEN + 1])
{
	size_t i;

	for (i = 0; id[i]; i++) {
		if (i >= MAX_ID_LEN || !isxdigit((unsigned char)id[i]))
			return false;
		buf[i] = (char)tolower((unsigned char)id[i]);
	}
	buf[i] = '\0';
	return i > 0;
}

static int find_normalized(const struct kubelet_table *t, const char *id, struct pod_meta *out)
{
	const struct kpod *kp;
	const struct kcontainer *kc = NULL;
	size_t lo = 0, hi = t ? t->nctrs : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(id, pool_str(t, t->ctrs[mid].id));

		if (!c) {
			kc = &t->ctrs[mid];
			break;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!kc)
		return -ENOENT;
	kp = &t->pods[kc->pod];
	memset(out, 0, sizeof(*out));
	copy_out(out->pod_namespace, sizeof(out->pod_namespace), pool_str(t, kp->ns));
	copy_out(out->pod_name, sizeof(out->pod_name), pool_str(t, kp->name));
	copy_out(out->pod_uid, sizeof(out->pod_uid), pool_str(t, kp->uid));
	copy_out(out->container_name, sizeof(out->container_name), pool_str(t, kc->name));
	copy_out(out->node_name, sizeof(out->node_name), pool_str(t, kp->node));
	copy_out(out->workload_kind, sizeof(out->workload_kind), pool_str(t, kp->kind));
	copy_out(out->workload_name, sizeof(out->workload_name), pool_str(t, kp->workload));
	copy_out(out->app_name, sizeof(out->app_name), pool_str(t, kp->app_name));
	copy_out(out->app, sizeof(out->app), pool_str(t, kp->app));
	for (unsigned int i = 0; i < kp->nlabels && i < POD_MAX_LABELS; i++) {
		const struct klabel *kl = &t->labels[kp->label0 + i];

		copy_out(out->labels[i].key, sizeof(out->labels[i].key), pool_str(t, kl->key));
		copy_out(out->labels[i].value, sizeof(out->labels[i].value),
			 pool_str(t, kl->value));
	}
	out->nlabels = kp->nlabels;
	out->labels_dropped = kp->labels_dropped;
	return 0;
}

int kubelet_table__lookup(const struct kubelet_table *t, const char *container_id,
			  struct pod_meta *out)
{
	char id[MAX_ID_LEN + 1];

	if (!t || !container_id || !out || !normalize_id(container_id, id))
		return -ENOENT;
	return find_normalized(t, id, out);
}

bool kubelet__container_id_ok(const char *container_id)
{
	char id[MAX_ID_LEN + 1];

	return container_id && normalize_id(container_id, id);
}

size_t kubelet_table__pods(const struct kubelet_table *t)
{
	return t ? t->npods : 0;
}

size_t kubelet_table__containers(const struct kubelet_table *t)
{
	return t ? t->nctrs : 0;
}

size_t kubelet_table__bytes(const struct kubelet_table *t)
{
	if (!t)
		return 0;
	return sizeof(*t) + t->cap_pods * sizeof(*t->pods) + t->cap_labels * sizeof(*t->labels) +
	       t->cap_ctrs * sizeof(*t->ctrs) + t->pool_cap;
}

void kubelet_table__delete(struct kubelet_table *t)
{
	if (!t)
		return;
	free(t->pods);
	free(t->labels);
	free(t->ctrs);
	free(t->pool);
	free(t);
}

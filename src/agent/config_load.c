// SPDX-License-Identifier: BSD-2-Clause
#include "agent/config_load.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "symbols/debuginfod_fetch.h"
#include "hostprof_abi.h"
#include "base/log.h"

/* How a key's text becomes a value. */
enum key_kind {
	KIND_COUNT,	/* a whole number within [min, max] */
	KIND_FREQUENCY, /* Hz */
	KIND_INTERVAL,	/* "15s", within [min, max] seconds */
	KIND_STRING,	/* "" reads as unset */
	KIND_BOOL,
	KIND_TYPES,   /* a list (or comma-separated text) of profile types */
	KIND_CHOICE,  /* one of `choices` */
	KIND_HEADERS, /* a map of name: value (secret values) */
	KIND_PATHS,   /* a map of name: path */
	KIND_RELABEL, /* a list of rules */
};

enum key_id {
	K_FREQUENCY,
	K_TYPES,
	K_UPLOAD_INTERVAL,
	K_UNWIND,
	K_UNWIND_DEPTH,
	K_CACHE_DIR,
	K_INCLUDE_IDLE,
	K_HTTP_LISTEN,
	K_LOG_LEVEL,
	K_STACK_ENTRIES,
	K_COUNTS_ENTRIES,
	K_MAX_PROCS,
	K_MAX_BINARIES,
	K_MAX_LOCATIONS,
	K_MAX_DWARF,
	K_UNWIND_ROWS,
	K_QUEUE_BYTES,
	K_DEADLINE,
	K_DIRECTORY,
	K_KEEP_FILES,
	K_OTLP_ENDPOINT,
	K_OTLP_PROTOCOL,
	K_OTLP_COMPRESSION,
	K_OTLP_TIMEOUT,
	K_OTLP_CA,
	K_OTLP_INSECURE,
	K_OTLP_SAMPLE_TYPE,
	K_OTLP_HEADERS,
	K_OTLP_HEADER_FILES,
	K_PYRO_URL,
	K_PYRO_API,
	K_PYRO_HEADERS,
	K_PYRO_HEADER_FILES,
	K_KUBE_ENABLED,
	K_KUBE_NODE,
	K_KUBE_URL,
	K_KUBE_TOKEN,
	K_KUBE_CA,
	K_KUBE_INSECURE,
	K_KUBE_REFRESH,
	K_DOCKER_ROOT,
	K_DEBUGINFOD_TIMEOUT,
	K_RELABEL,
	NR_KEYS,
};

_Static_assert(NR_KEYS <= CONFIG_LOAD_MAX_KEYS, "struct config_origin holds every key");

static const char *const unwind_choices[] = {"dwarf", "fp", NULL};
static const char *const log_choices[] = {"error", "warn", "info", "debug", NULL};
static const char *const protocol_choices[] = {"http/protobuf", "http/json", "grpc", NULL};
static const char *const compression_choices[] = {"gzip", "none", NULL};
static const char *const sample_type_choices[] = {"cpu", "samples", NULL};
static const char *const api_choices[] = {"push", "ingest", NULL};
static const char *const kube_choices[] = {"auto", "true", "false", NULL};

static const struct key_def {
	const char *path;
	enum key_kind kind;
	double min, max;
	const char *const *choices;
} keys[NR_KEYS] = {
	[K_FREQUENCY] = {"frequency", KIND_FREQUENCY},
	[K_TYPES] = {"types", KIND_TYPES},
	[K_UPLOAD_INTERVAL] = {"upload_interval", KIND_INTERVAL, 1, 3600},
	[K_UNWIND] = {"unwind", KIND_CHOICE, .choices = unwind_choices},
	[K_UNWIND_DEPTH] = {"unwind_depth", KIND_COUNT, 1, HP_UNWIND_MAX_DEPTH},
	[K_CACHE_DIR] = {"cache_dir", KIND_STRING},
	[K_INCLUDE_IDLE] = {"include_idle", KIND_BOOL},
	[K_HTTP_LISTEN] = {"http_listen", KIND_STRING},
	[K_LOG_LEVEL] = {"log_level", KIND_CHOICE, .choices = log_choices},
	[K_STACK_ENTRIES] = {"limits.stack_map_entries", KIND_COUNT, 1, 1 << 22},
	[K_COUNTS_ENTRIES] = {"limits.counts_map_entries", KIND_COUNT, 1, 1 << 22},
	[K_MAX_PROCS] = {"limits.max_processes", KIND_COUNT, 16, 1 << 20},
	[K_MAX_BINARIES] = {"limits.max_binaries", KIND_COUNT, 16, 1 << 20},
	[K_MAX_LOCATIONS] = {"limits.max_cached_locations", KIND_COUNT, 1024, 1 << 26},
	[K_MAX_DWARF] = {"limits.max_dwarf_bytes", KIND_COUNT, 1 << 20, 1ULL << 34},
	[K_UNWIND_ROWS] = {"limits.unwind_table_rows", KIND_COUNT, 1024, 1U << 26},
	[K_QUEUE_BYTES] = {"limits.export_queue_bytes", KIND_COUNT, 1 << 16, 1ULL << 32},
	[K_DEADLINE] = {"export.deadline", KIND_INTERVAL, 0.1, 600},
	[K_DIRECTORY] = {"export.directory", KIND_STRING},
	[K_KEEP_FILES] = {"export.keep_files", KIND_COUNT, 1, 100000},
	[K_OTLP_ENDPOINT] = {"export.otlp.endpoint", KIND_STRING},
	[K_OTLP_PROTOCOL] = {"export.otlp.protocol", KIND_CHOICE, .choices = protocol_choices},
	[K_OTLP_COMPRESSION] = {"export.otlp.compression", KIND_CHOICE,
				.choices = compression_choices},
	[K_OTLP_TIMEOUT] = {"export.otlp.timeout", KIND_INTERVAL, 0.001, 600},
	[K_OTLP_CA] = {"export.otlp.ca_file", KIND_STRING},
	[K_OTLP_INSECURE] = {"export.otlp.insecure", KIND_BOOL},
	[K_OTLP_SAMPLE_TYPE] = {"export.otlp.sample_type", KIND_CHOICE,
				.choices = sample_type_choices},
	[K_OTLP_HEADERS] = {"export.otlp.headers", KIND_HEADERS},
	[K_OTLP_HEADER_FILES] = {"export.otlp.header_files", KIND_PATHS},
	[K_PYRO_URL] = {"export.pyroscope.url", KIND_STRING},
	[K_PYRO_API] = {"export.pyroscope.api", KIND_CHOICE, .choices = api_choices},
	[K_PYRO_HEADERS] = {"export.pyroscope.headers", KIND_HEADERS},
	[K_PYRO_HEADER_FILES] = {"export.pyroscope.header_files", KIND_PATHS},
	[K_KUBE_ENABLED] = {"kubernetes.enabled", KIND_CHOICE, .choices = kube_choices},
	[K_KUBE_NODE] = {"kubernetes.node_name", KIND_STRING},
	[K_KUBE_URL] = {"kubernetes.kubelet_url", KIND_STRING},
	[K_KUBE_TOKEN] = {"kubernetes.token_file", KIND_STRING},
	[K_KUBE_CA] = {"kubernetes.ca_file", KIND_STRING},
	[K_KUBE_INSECURE] = {"kubernetes.insecure", KIND_BOOL},
	[K_KUBE_REFRESH] = {"kubernetes.refresh_interval", KIND_INTERVAL, 1, 3600},
	[K_DOCKER_ROOT] = {"docker.root", KIND_STRING},
	[K_DEBUGINFOD_TIMEOUT] = {"debuginfod.timeout", KIND_INTERVAL, 0.1, 600},
	[K_RELABEL] = {"relabel", KIND_RELABEL},
};

static int find_key(const char *path)
{
	for (int i = 0; i < NR_KEYS; i++)
		if (!strcmp(keys[i].path, path))
			return i;
	return -1;
}

/* "export" is a section when some key lies under "export.". */
static bool is_section(const char *path)
{
	size_t n = strlen(path);

	for (int i = 0; i < NR_KEYS; i++)
		if (!strncmp(keys[i].path, path, n) && keys[i].path[n] == '.')
			return true;
	return false;
}

/* "deadline, directory, keep_files, otlp, pyroscope": what may follow "export.". */
static void list_children(const char *section, char *out, size_t len)
{
	size_t n = strlen(section), used = 0;

	out[0] = '\0';
	for (int i = 0; i < NR_KEYS && used < len; i++) {
		const char *rest = keys[i].path;
		size_t m;
		bool seen = false;

		if (n) {
			if (strncmp(rest, section, n) || rest[n] != '.')
				continue;
			rest += n + 1;
		}
		m = strcspn(rest, ".");
		for (int j = 0; j < i && !seen; j++) {
			const char *other = keys[j].path;

			if (n) {
				if (strncmp(other, section, n) || other[n] != '.')
					continue;
				other += n + 1;
			}
			seen = strcspn(other, ".") == m && !strncmp(other, rest, m);
		}
		if (!seen)
			used += snprintf(out + used, len - used, "%s%.*s", used ? ", " : "", (int)m,
					 rest);
	}
}

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_bool(const char *text, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
										    "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(text, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(text, no[i]))
			return *out = false, 0;
	}
	return -EINVAL;
}

static int choice_index(const struct key_def *k, const char *text)
{
	for (int i = 0; k->choices[i]; i++)
		if (!strcmp(k->choices[i], text))
			return i;
	return -1;
}

/* A string field: "" means unset, others are copied into the config. */
static int set_string(struct config *c, const char **field, const char *text)
{
	if (!text[0]) {
		*field = NULL;
		return 0;
	}
	*field = config__own(c, text);
	return *field ? 0 : -ENOMEM;
}

/* Append "name=value" to a header list, replacing an entry of the same name. */
static int add_pair(struct config *c, const char **list, size_t *nr, const char *name,
		    const char *value, char *err, size_t len)
{
	size_t n = strlen(name);
	char *pair;
	const char *owned;
	size_t i;

	if (!n || strchr(name, '=') || strpbrk(name, " \t\r\n:"))
		return fail(err, len, "'%s' is not a header name", name);
	for (i = 0; i < *nr; i++)
		if (!strncmp(list[i], name, n) && list[i][n] == '=')
			break;
	if (i == *nr && *nr == CONFIG_MAX_HEADERS)
		return fail(err, len, "at most %d headers", CONFIG_MAX_HEADERS);
	if (asprintf(&pair, "%s=%s", name, value) < 0)
		return -ENOMEM;
	owned = config__own(c, pair);
	explicit_bzero(pair, strlen(pair));
	free(pair);
	if (!owned)
		return -ENOMEM;
	list[i] = owned;
	if (i == *nr)
		(*nr)++;
	return 0;
}

/* The scalar keys, from text. */
static int set_scalar(struct config *c, int id, const char *text, char *err, size_t len)
{
	const struct key_def *k = &keys[id];
	size_t n = 0;
	double d = 0;
	bool b = false;
	int choice = 0, rc = 0;

	switch (k->kind) {
	case KIND_COUNT:
		rc = config__parse_count(text, (size_t)k->min, (size_t)k->max, &n, err, len);
		break;
	case KIND_INTERVAL:
		rc = config__parse_interval(text, k->min, k->max, &d, err, len);
		break;
	case KIND_BOOL:
		if (parse_bool(text, &b))
			rc = fail(err, len, "'%s' is not true or false", text);
		break;
	case KIND_CHOICE:
		choice = choice_index(k, text);
		if (choice < 0) {
			char list[128];
			size_t used = 0;

			list[0] = '\0';
			for (int i = 0; k->choices[i]; i++)
				used += snprintf(list + used, sizeof(list) - used, "%s%s",
						 i ? ", " : "", k->choices[i]);
			rc = fail(err, len, "'%s' is not one of: %s", text, list);
		}
		break;
	case KIND_FREQUENCY:
	case KIND_STRING:
	case KIND_TYPES:
		break;
	case KIND_HEADERS:
	case KIND_PATHS:
		return fail(err, len, "give it as a map of header name: %s",
			    k->kind == KIND_HEADERS ? "value" : "file path");
	case KIND_RELABEL:
		return fail(err, len, "give it as a list of rules (see the example config)");
	}
	if (rc)
		return rc;

	switch (id) {
	case K_FREQUENCY:
		return config__parse_frequency(text, &c->frequency_hz, err, len);
	case K_TYPES:
		return config__parse_types(c, text, err, len);
	case K_UPLOAD_INTERVAL:
		c->upload_interval_s = d;
		return 0;
	case K_UNWIND:
		c->unwind_tables = choice == 0;
		return 0;
	case K_UNWIND_DEPTH:
		c->unwind_depth = n;
		return 0;
	case K_CACHE_DIR:
		return set_string(c, &c->cache_dir, text);
	case K_INCLUDE_IDLE:
		c->include_idle = b;
		return 0;
	case K_HTTP_LISTEN:
		return set_string(c, &c->http_listen, text);
	case K_LOG_LEVEL:
		c->log_level = choice; /* the choices are in enum log_level's order */
		return 0;
	case K_STACK_ENTRIES:
		c->stack_map_entries = n;
		return 0;
	case K_COUNTS_ENTRIES:
		c->counts_map_entries = n;
		return 0;
	case K_MAX_PROCS:
		c->max_procs = n;
		c->unwind_procs = n;
		return 0;
	case K_MAX_BINARIES:
		c->max_dsos = n;
		c->unwind_binaries = n;
		return 0;
	case K_MAX_LOCATIONS:
		c->max_cached_locations = n;
		return 0;
	case K_MAX_DWARF:
		c->max_dwarf_bytes = n;
		return 0;
	case K_UNWIND_ROWS:
		c->unwind_rows = n;
		return 0;
	case K_QUEUE_BYTES:
		c->export_queue_bytes = n;
		return 0;
	case K_DEADLINE:
		c->export_deadline_s = d;
		return 0;
	case K_DIRECTORY:
		return set_string(c, &c->output_dir, text);
	case K_KEEP_FILES:
		c->keep_files = n;
		return 0;
	case K_OTLP_ENDPOINT:
		return set_string(c, &c->otlp_endpoint, text);
	case K_OTLP_PROTOCOL:
		return set_string(c, &c->otlp_protocol, text);
	case K_OTLP_COMPRESSION:
		return set_string(c, &c->otlp_compression, text);
	case K_OTLP_TIMEOUT: {
		char ms[32];

		snprintf(ms, sizeof(ms), "%.0f", d * 1000);
		return set_string(c, &c->otlp_timeout_ms, ms);
	}
	case K_OTLP_CA:
		return set_string(c, &c->otlp_ca_file, text);
	case K_OTLP_INSECURE:
		c->otlp_insecure = b;
		return 0;
	case K_OTLP_SAMPLE_TYPE:
		c->otlp_samples_count = choice == 1;
		return 0;
	case K_PYRO_URL:
		return set_string(c, &c->pyroscope_url, text);
	case K_PYRO_API:
		return set_string(c, &c->pyroscope_api, text);
	case K_KUBE_ENABLED:
		c->kube_mode = choice == 0 ? KUBE_AUTO : choice == 1 ? KUBE_ON : KUBE_OFF;
		return 0;
	case K_KUBE_NODE:
		return set_string(c, &c->kube_node_name, text);
	case K_KUBE_URL:
		return set_string(c, &c->kube_kubelet_url, text);
	case K_KUBE_TOKEN:
		return set_string(c, &c->kube_token_file, text);
	case K_KUBE_CA:
		return set_string(c, &c->kube_ca_file, text);
	case K_KUBE_INSECURE:
		c->kube_insecure = b;
		return 0;
	case K_KUBE_REFRESH:
		c->kube_refresh_s = d;
		return 0;
	case K_DOCKER_ROOT:
		return set_string(c, &c->docker_root, text);
	case K_DEBUGINFOD_TIMEOUT:
		c->debuginfod_timeout_s = d;
		return 0;
	default:
		return fail(err, len, "cannot be set from text");
	}
}

void config_load__agent_defaults(struct config *c, struct config_origin *o)
{
	config__defaults(c);
	memset(o, 0, sizeof(*o));
	/* The rate the other whole-host agents sample at: a prime, so that sampling does not
	 * lock step with periodic work. */
	c->frequency_hz = 19;
	c->all = true;
	c->quiet = true; /* no live status line and no summary: the agent logs */
}

int config_load__set(struct config *c, struct config_origin *o, const char *key, const char *value,
		     enum config_source source, char *err, size_t len)
{
	int id = find_key(key);
	char why[384];
	int rc;

	if (id < 0) {
		char known[512];

		list_children("", known, sizeof(known));
		snprintf(err, len, "unknown key '%s' (keys are dotted paths under: %s)", key,
			 known);
		return -ENOENT;
	}
	rc = set_scalar(c, id, value, why, sizeof(why));
	if (rc) {
		snprintf(err, len, "%s: %s", key, why);
		return rc;
	}
	o->source[id] = source;
	o->line[id] = 0;
	return 0;
}

enum config_source config_load__source(const struct config_origin *o, const char *key)
{
	int id = find_key(key);

	return id < 0 ? CONFIG_SRC_DEFAULT : (enum config_source)o->source[id];
}

/* ---- the YAML file ---- */

struct yaml_walk {
	struct config *c;
	struct config_origin *o;
	yaml_document_t *doc;
	const char *file;
	char *err;
	size_t len;
};

static int walk_fail(struct yaml_walk *w, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int walk_fail(struct yaml_walk *w, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(w->err, w->len, "%s:%zu: %s", w->file, n->start_mark.line + 1, msg);
	return -EINVAL;
}

static const char *scalar_of(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *node_type_name(const yaml_node_t *n)
{
	return n->type == YAML_MAPPING_NODE    ? "a map"
	       : n->type == YAML_SEQUENCE_NODE ? "a list"
					       : "a value";
}

/* A null scalar ("key:" or "key: ~") reads as the empty string, which unsets a string. */
static const char *scalar_text(const yaml_node_t *n)
{
	const char *s = scalar_of(n);

	if (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (!strcmp(s, "~") || !strcmp(s, "null")))
		return "";
	return s;
}

static int walk_types(struct yaml_walk *w, const yaml_node_t *v, int id)
{
	char list[256], why[256];
	size_t used = 0;

	if (v->type == YAML_SCALAR_NODE) {
		snprintf(list, sizeof(list), "%s", scalar_text(v));
	} else if (v->type == YAML_SEQUENCE_NODE) {
		list[0] = '\0';
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			const yaml_node_t *item = yaml_document_get_node(w->doc, *it);
			const char *s = scalar_of(item);

			if (!s)
				return walk_fail(w, item, "types: each item is a profile type");
			used += snprintf(list + used, sizeof(list) - used, "%s%s", used ? "," : "",
					 s);
		}
	} else {
		return walk_fail(w, v, "types: give a list, e.g. [cpu, wall]");
	}
	if (config__parse_types(w->c, list, why, sizeof(why)))
		return walk_fail(w, v, "types: %s", why);
	w->o->source[id] = CONFIG_SRC_FILE;
	w->o->line[id] = v->start_mark.line + 1;
	return 0;
}

static int walk_pairs(struct yaml_walk *w, const yaml_node_t *v, int id)
{
	const char **list;
	size_t *nr;
	char why[256];

	if (v->type != YAML_MAPPING_NODE)
		return walk_fail(w, v, "%s: give a map of header name: %s", keys[id].path,
				 keys[id].kind == KIND_HEADERS ? "value" : "file path");
	switch (id) {
	case K_OTLP_HEADERS:
		list = w->c->otlp_headers, nr = &w->c->nr_otlp_headers;
		break;
	case K_OTLP_HEADER_FILES:
		list = w->c->otlp_header_files, nr = &w->c->nr_otlp_header_files;
		break;
	case K_PYRO_HEADERS:
		list = w->c->pyroscope_headers, nr = &w->c->nr_pyroscope_headers;
		break;
	default:
		list = w->c->pyroscope_header_files, nr = &w->c->nr_pyroscope_header_files;
		break;
	}
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar_of(kn), *value = scalar_text(vn);
		int rc;

		if (!name || !value)
			/* The value may be a token: say where, never what. */
			return walk_fail(w, kn, "%s: each entry is name: %s", keys[id].path,
					 keys[id].kind == KIND_HEADERS ? "value" : "path");
		rc = add_pair(w->c, list, nr, name, value, why, sizeof(why));
		if (rc)
			return rc == -ENOMEM ? rc : walk_fail(w, kn, "%s: %s", keys[id].path, why);
	}
	w->o->source[id] = CONFIG_SRC_FILE;
	w->o->line[id] = v->start_mark.line + 1;
	return 0;
}

static int walk_rule(struct yaml_walk *w, const yaml_node_t *v, struct relabel_rule *r)
{
	static const char *const fields[] = {"action", "source", "regex", "target", "replacement"};
	bool has_action = false;

	if (v->type != YAML_MAPPING_NODE)
		return walk_fail(w, v,
				 "relabel: each rule is a map with action, source, regex, "
				 "target, replacement");
	memset(r, 0, sizeof(*r));
	r->line = v->start_mark.line + 1;
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar_of(kn), *value = scalar_text(vn);
		const char **field = NULL;
		size_t f;

		for (f = 0; name && f < sizeof(fields) / sizeof(fields[0]); f++)
			if (!strcmp(name, fields[f]))
				break;
		if (!name || f == sizeof(fields) / sizeof(fields[0]))
			return walk_fail(w, kn,
					 "relabel: unknown key '%s' in a rule (known: action, "
					 "source, regex, target, replacement)",
					 name ? name : "?");
		if (!value)
			return walk_fail(w, vn, "relabel.%s: give a value, not %s", name,
					 node_type_name(vn));
		if (f == 0) {
			if (!strcmp(value, "replace"))
				r->action = RELABEL_REPLACE;
			else if (!strcmp(value, "keep"))
				r->action = RELABEL_KEEP;
			else if (!strcmp(value, "drop"))
				r->action = RELABEL_DROP;
			else
				return walk_fail(w, vn,
						 "relabel.action: '%s' is not one of: keep, drop, "
						 "replace",
						 value);
			has_action = true;
			continue;
		}
		field = f == 1	 ? &r->source
			: f == 2 ? &r->regex
			: f == 3 ? &r->target
				 : &r->replacement;
		if (set_string(w->c, field, value))
			return -ENOMEM;
	}
	if (!has_action)
		return walk_fail(w, v, "relabel: a rule needs an action (keep, drop or replace)");
	if (r->regex) {
		/* Checked here, so that a bad rule stops the agent before anything starts (and a
		 * reload with one is refused); identity.c compiles it again, anchored. */
		regex_t re;
		int rc = regcomp(&re, r->regex, REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char why[128];

			regerror(rc, &re, why, sizeof(why));
			return walk_fail(w, v, "relabel: regex '%s': %s", r->regex, why);
		}
		regfree(&re);
	}
	if (r->action == RELABEL_REPLACE && !r->target)
		return walk_fail(w, v, "relabel: a replace rule needs a target attribute");
	return 0;
}

static int walk_relabel(struct yaml_walk *w, const yaml_node_t *v, int id)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return walk_fail(w, v, "relabel: give a list of rules");
	w->c->nr_relabel = 0;
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		const yaml_node_t *item = yaml_document_get_node(w->doc, *it);
		int rc;

		if (w->c->nr_relabel == CONFIG_MAX_RELABEL)
			return walk_fail(w, item, "relabel: at most %d rules", CONFIG_MAX_RELABEL);
		rc = walk_rule(w, item, &w->c->relabel[w->c->nr_relabel]);
		if (rc)
			return rc;
		w->c->nr_relabel++;
	}
	w->o->source[id] = CONFIG_SRC_FILE;
	w->o->line[id] = v->start_mark.line + 1;
	return 0;
}

static int walk_mapping(struct yaml_walk *w, const yaml_node_t *m, const char *section)
{
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar_of(kn);
		char path[128], why[384];
		int id, rc;

		if (!name)
			return walk_fail(w, kn, "a key must be a plain name");
		snprintf(path, sizeof(path), "%s%s%s", section, section[0] ? "." : "", name);
		id = find_key(path);
		if (id < 0 && is_section(path)) {
			if (vn->type != YAML_MAPPING_NODE)
				return walk_fail(w, vn, "%s: is a section: give a map, not %s",
						 path, node_type_name(vn));
			rc = walk_mapping(w, vn, path);
		} else if (id < 0) {
			char known[512];

			list_children(section, known, sizeof(known));
			return walk_fail(w, kn, "unknown key '%s'%s%s (known: %s)", path,
					 section[0] ? " in " : "", section, known);
		} else if (keys[id].kind == KIND_TYPES) {
			rc = walk_types(w, vn, id);
		} else if (keys[id].kind == KIND_HEADERS || keys[id].kind == KIND_PATHS) {
			rc = walk_pairs(w, vn, id);
		} else if (keys[id].kind == KIND_RELABEL) {
			rc = walk_relabel(w, vn, id);
		} else if (vn->type != YAML_SCALAR_NODE) {
			return walk_fail(w, vn, "%s: give a value, not %s", path,
					 node_type_name(vn));
		} else {
			rc = set_scalar(w->c, id, scalar_text(vn), why, sizeof(why));
			if (rc == -EINVAL)
				return walk_fail(w, vn, "%s: %s", path, why);
			if (!rc) {
				w->o->source[id] = CONFIG_SRC_FILE;
				w->o->line[id] = vn->start_mark.line + 1;
			}
		}
		if (rc)
			return rc;
	}
	return 0;
}

int config_load__file(struct config *c, struct config_origin *o, const char *path, char *err,
		      size_t len)
{
	struct yaml_walk w = {.c = c, .o = o, .file = path, .err = err, .len = len};
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	FILE *f = fopen(path, "r");
	int rc = 0;

	if (!f) {
		rc = -errno;
		snprintf(err, len, "config file '%s': %s%s", path, strerror(-rc),
			 rc == -ENOENT ? " (give --config FILE, or write one: see "
					 "systemd/config.yaml)"
				       : "");
		return rc;
	}
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, len, "%s:%zu: not valid YAML: %s", path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "parse error");
		yaml_parser_delete(&parser);
		fclose(f);
		return -EINVAL;
	}
	w.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	snprintf(o->file, sizeof(o->file), "%s", path);
	if (root && root->type == YAML_MAPPING_NODE)
		rc = walk_mapping(&w, root, "");
	else if (root && !(root->type == YAML_SCALAR_NODE && !scalar_text(root)[0]))
		rc = walk_fail(&w, root,
			       "the file must be a map of keys (see systemd/config.yaml)");
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

/* ---- environment ---- */

/* "export.otlp.endpoint" -> "HOSTPROF_EXPORT_OTLP_ENDPOINT" */
static void env_name(const char *path, char *out, size_t len)
{
	size_t o = snprintf(out, len, "HOSTPROF_");

	for (; *path && o + 1 < len; path++)
		out[o++] = (*path == '.' || *path == '-') ? '_' : toupper((unsigned char)*path);
	out[o] = '\0';
}

int config_load__env(struct config *c, struct config_origin *o,
		     const char *(*get_env)(const char *name), char *err, size_t len)
{
	const char *node = get_env("NODE_NAME");

	for (int i = 0; i < NR_KEYS; i++) {
		char name[96], why[384];
		const char *v;
		int rc;

		if (keys[i].kind == KIND_HEADERS || keys[i].kind == KIND_PATHS ||
		    keys[i].kind == KIND_RELABEL)
			continue;
		env_name(keys[i].path, name, sizeof(name));
		v = get_env(name);
		if (!v || !v[0])
			continue;
		rc = set_scalar(c, i, v, why, sizeof(why));
		if (rc) {
			snprintf(err, len, "%s: %s", name, why);
			return rc;
		}
		o->source[i] = CONFIG_SRC_ENV;
		o->line[i] = 0;
	}
	/* The Downward API's node name, unless a file or HOSTPROF_ variable named one. */
	if (node && node[0] && o->source[K_KUBE_NODE] == CONFIG_SRC_DEFAULT) {
		if (set_string(c, &c->kube_node_name, node))
			return -ENOMEM;
		o->source[K_KUBE_NODE] = CONFIG_SRC_ENV;
	}
	return 0;
}

/* ---- header files ---- */

static int read_secret(const char *path, char *out, size_t len)
{
	struct stat st;
	ssize_t n;
	size_t start = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	if ((size_t)n == len - 1)
		return -E2BIG;
	while (n > 0 && isspace((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
	while (isspace((unsigned char)out[start]))
		start++;
	memmove(out, out + start, (size_t)n - start + 1);
	return out[0] ? 0 : -ENODATA;
}

static int read_pairs(struct config *c, const char **files, size_t nr_files, const char **list,
		      size_t *nr, const char *what, char *err, size_t len)
{
	for (size_t i = 0; i < nr_files; i++) {
		const char *eq = strchr(files[i], '=');
		char name[128], value[8192], why[256];
		int rc;

		snprintf(name, sizeof(name), "%.*s", (int)(eq - files[i]), files[i]);
		rc = read_secret(eq + 1, value, sizeof(value));
		if (rc) {
			snprintf(err, len, "%s.header_files: header '%s': cannot read '%s': %s",
				 what, name, eq + 1,
				 rc == -ENODATA	 ? "the file is empty"
				 : rc == -E2BIG	 ? "the file is larger than 8 KiB"
				 : rc == -EINVAL ? "not a regular file"
						 : strerror(-rc));
			return rc;
		}
		rc = add_pair(c, list, nr, name, value, why, sizeof(why));
		explicit_bzero(value, sizeof(value));
		if (rc) {
			snprintf(err, len, "%s.header_files: %s", what, why);
			return rc;
		}
	}
	return 0;
}

int config_load__read_header_files(struct config *c, char *err, size_t len)
{
	int rc = read_pairs(c, c->otlp_header_files, c->nr_otlp_header_files, c->otlp_headers,
			    &c->nr_otlp_headers, "export.otlp", err, len);

	if (!rc)
		rc = read_pairs(c, c->pyroscope_header_files, c->nr_pyroscope_header_files,
				c->pyroscope_headers, &c->nr_pyroscope_headers, "export.pyroscope",
				err, len);
	return rc;
}

/* ---- printing ---- */

static void print_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

/* A URL's password is masked: "https://user:***@host/". */
static void print_url(FILE *out, const char *url)
{
	const char *scheme = url ? strstr(url, "://") : NULL;
	const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
	const char *slash = scheme ? strchr(scheme + 3, '/') : NULL;
	const char *colon = scheme ? strchr(scheme + 3, ':') : NULL;
	char buf[1024];

	if (at && (!slash || at < slash) && colon && colon < at) {
		snprintf(buf, sizeof(buf), "%.*s:***%s", (int)(colon - url), url, at);
		print_string(out, buf);
	} else {
		print_string(out, url);
	}
}

static void print_types(FILE *out, unsigned int types)
{
	static const char *const names[] = {"cpu", "wall", "offcpu", "contention"};
	int n = 0;

	fputc('[', out);
	for (int i = 0; i < 4; i++)
		if (types & (1U << i))
			fprintf(out, "%s%s", n++ ? ", " : "", names[i]);
	fputc(']', out);
}

static void print_pairs(FILE *out, const char *const *list, size_t nr, bool secret, int indent)
{
	if (!nr) {
		fputs(" {}", out);
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		const char *eq = strchr(list[i], '=');

		fprintf(out, "\n%*s%.*s: ", indent, "", (int)(eq - list[i]), list[i]);
		print_string(out, secret ? "***" : eq + 1);
	}
}

static void print_value(FILE *out, const struct config *c, int id, int indent)
{
	switch (id) {
	case K_FREQUENCY:
		fprintf(out, "%u", c->frequency_hz);
		break;
	case K_TYPES:
		print_types(out, c->types);
		break;
	case K_UPLOAD_INTERVAL:
		fprintf(out, "%gs", c->upload_interval_s);
		break;
	case K_UNWIND:
		fputs(c->unwind_tables ? "dwarf" : "fp", out);
		break;
	case K_UNWIND_DEPTH:
		fprintf(out, "%u", c->unwind_depth);
		break;
	case K_CACHE_DIR:
		print_string(out, c->cache_dir);
		break;
	case K_INCLUDE_IDLE:
		fputs(c->include_idle ? "true" : "false", out);
		break;
	case K_HTTP_LISTEN:
		print_string(out, c->http_listen);
		break;
	case K_LOG_LEVEL:
		fputs(log_choices[c->log_level], out);
		break;
	case K_STACK_ENTRIES:
		fprintf(out, "%u", c->stack_map_entries);
		break;
	case K_COUNTS_ENTRIES:
		fprintf(out, "%u", c->counts_map_entries);
		break;
	case K_MAX_PROCS:
		fprintf(out, "%zu", c->max_procs);
		break;
	case K_MAX_BINARIES:
		fprintf(out, "%zu", c->max_dsos);
		break;
	case K_MAX_LOCATIONS:
		fprintf(out, "%zu", c->max_cached_locations);
		break;
	case K_MAX_DWARF:
		fprintf(out, "%zu", c->max_dwarf_bytes);
		break;
	case K_UNWIND_ROWS:
		fprintf(out, "%u", c->unwind_rows);
		break;
	case K_QUEUE_BYTES:
		fprintf(out, "%zu", c->export_queue_bytes);
		break;
	case K_DEADLINE:
		fprintf(out, "%gs", c->export_deadline_s);
		break;
	case K_DIRECTORY:
		print_string(out, c->output_dir);
		break;
	case K_KEEP_FILES:
		fprintf(out, "%zu", c->keep_files);
		break;
	case K_OTLP_ENDPOINT:
		print_url(out, c->otlp_endpoint);
		break;
	case K_OTLP_PROTOCOL:
		fputs(c->otlp_protocol ? c->otlp_protocol : "http/protobuf", out);
		break;
	case K_OTLP_COMPRESSION:
		fputs(c->otlp_compression ? c->otlp_compression : "gzip", out);
		break;
	case K_OTLP_TIMEOUT:
		fprintf(out, "%gs", c->otlp_timeout_ms ? atof(c->otlp_timeout_ms) / 1000 : 10.0);
		break;
	case K_OTLP_CA:
		print_string(out, c->otlp_ca_file);
		break;
	case K_OTLP_INSECURE:
		fputs(c->otlp_insecure ? "true" : "false", out);
		break;
	case K_OTLP_SAMPLE_TYPE:
		fputs(c->otlp_samples_count ? "samples" : "cpu", out);
		break;
	case K_OTLP_HEADERS:
		print_pairs(out, c->otlp_headers, c->nr_otlp_headers, true, indent + 2);
		break;
	case K_OTLP_HEADER_FILES:
		print_pairs(out, c->otlp_header_files, c->nr_otlp_header_files, false, indent + 2);
		break;
	case K_PYRO_URL:
		print_url(out, c->pyroscope_url);
		break;
	case K_PYRO_API:
		fputs(c->pyroscope_api ? c->pyroscope_api : "push", out);
		break;
	case K_PYRO_HEADERS:
		print_pairs(out, c->pyroscope_headers, c->nr_pyroscope_headers, true, indent + 2);
		break;
	case K_PYRO_HEADER_FILES:
		print_pairs(out, c->pyroscope_header_files, c->nr_pyroscope_header_files, false,
			    indent + 2);
		break;
	case K_KUBE_ENABLED:
		fputs(kube_choices[c->kube_mode], out);
		break;
	case K_KUBE_NODE:
		print_string(out, c->kube_node_name);
		break;
	case K_KUBE_URL:
		print_url(out, c->kube_kubelet_url);
		break;
	case K_KUBE_TOKEN:
		print_string(out, c->kube_token_file);
		break;
	case K_KUBE_CA:
		print_string(out, c->kube_ca_file);
		break;
	case K_KUBE_INSECURE:
		fputs(c->kube_insecure ? "true" : "false", out);
		break;
	case K_KUBE_REFRESH:
		fprintf(out, "%gs", c->kube_refresh_s);
		break;
	case K_DOCKER_ROOT:
		print_string(out, c->docker_root);
		break;
	case K_DEBUGINFOD_TIMEOUT:
		/* What applies: unset, DEBUGINFOD_TIMEOUT or the built-in default decides. */
		fprintf(out, "%gs", debuginfod_fetch__timeout_s(c->debuginfod_timeout_s));
		break;
	default:
		break;
	}
}

static void print_relabel(FILE *out, const struct config *c)
{
	static const char *const actions[] = {"replace", "keep", "drop"};

	if (!c->nr_relabel) {
		fputs(" []", out);
		return;
	}
	for (size_t i = 0; i < c->nr_relabel; i++) {
		const struct relabel_rule *r = &c->relabel[i];

		fprintf(out, "\n  - action: %s", actions[r->action]);
		if (r->source)
			fputs("\n    source: ", out), print_string(out, r->source);
		if (r->regex)
			fputs("\n    regex: ", out), print_string(out, r->regex);
		if (r->target)
			fputs("\n    target: ", out), print_string(out, r->target);
		if (r->replacement)
			fputs("\n    replacement: ", out), print_string(out, r->replacement);
	}
}

static void print_origin(FILE *out, const struct config_origin *o, int id)
{
	char name[96];

	switch (o->source[id]) {
	case CONFIG_SRC_FILE:
		fprintf(out, "  # %s:%d", o->file, o->line[id]);
		break;
	case CONFIG_SRC_ENV:
		if (id == K_KUBE_NODE)
			snprintf(name, sizeof(name), "NODE_NAME or HOSTPROF_KUBERNETES_NODE_NAME");
		else
			env_name(keys[id].path, name, sizeof(name));
		fprintf(out, "  # environment: %s", name);
		break;
	case CONFIG_SRC_FLAG:
		fputs("  # flag", out);
		break;
	default:
		break;
	}
}

void config_load__print(const struct config *c, const struct config_origin *o, FILE *out)
{
	char open_sections[4][32] = {{0}};

	fputs("# hostprof agent: the merged configuration (defaults < file < environment < "
	      "flags).\n# Header values are masked.\n",
	      out);
	for (int id = 0; id < NR_KEYS; id++) {
		const char *path = keys[id].path, *leaf = path;
		int depth = 0;

		/* Open the sections on the way to this key that are not open yet. */
		for (const char *dot = strchr(path, '.'); dot; dot = strchr(dot + 1, '.')) {
			char part[32];

			snprintf(part, sizeof(part), "%.*s", (int)(dot - leaf), leaf);
			if (strcmp(open_sections[depth], part)) {
				snprintf(open_sections[depth], sizeof(open_sections[depth]), "%s",
					 part);
				for (int d = depth + 1; d < 4; d++)
					open_sections[d][0] = '\0';
				fprintf(out, "%*s%s:\n", depth * 2, "", part);
			}
			depth++;
			leaf = dot + 1;
		}
		if (depth == 0)
			for (int d = 0; d < 4; d++)
				open_sections[d][0] = '\0';
		fprintf(out, "%*s%s:", depth * 2, "", leaf);
		if (id == K_RELABEL) {
			print_relabel(out, c);
		} else {
			bool block = (keys[id].kind == KIND_HEADERS &&
				      (id == K_OTLP_HEADERS ? c->nr_otlp_headers
							    : c->nr_pyroscope_headers)) ||
				     (keys[id].kind == KIND_PATHS &&
				      (id == K_OTLP_HEADER_FILES ? c->nr_otlp_header_files
								 : c->nr_pyroscope_header_files));

			if (!block && keys[id].kind != KIND_HEADERS && keys[id].kind != KIND_PATHS)
				fputc(' ', out);
			print_value(out, c, id, depth * 2);
		}
		print_origin(out, o, id);
		fputc('\n', out);
	}
}

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

#include "base/options.h"

static const struct opt_def *key_def(int id)
{
	return &agent_command.defs[id];
}

static int find_key(const char *path)
{
	const struct opt_def *d = agent_options__key(path);

	return d ? (int)(d - agent_command.defs) : -1;
}

/* "export" is a section when some key lies under "export.". */
static bool is_section(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < agent_command.nr_defs; i++) {
		const char *key = key_def(i)->key;

		if (key && !strncmp(key, path, n) && key[n] == '.')
			return true;
	}
	return false;
}

/* The part of key after "section.", or NULL when the key is not under it. */
static const char *under(const char *key, const char *section, size_t n)
{
	if (!key)
		return NULL;
	if (!n)
		return key;
	return strncmp(key, section, n) || key[n] != '.' ? NULL : key + n + 1;
}

/* "deadline, directory, keep_files, otlp, pyroscope": what may follow "export.". */
static void list_children(const char *section, char *out, size_t len)
{
	size_t n = strlen(section), used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < agent_command.nr_defs && used < len; i++) {
		const char *rest = under(key_def(i)->key, section, n);
		size_t m;
		bool seen = false;

		if (!rest)
			continue;
		m = strcspn(rest, ".");
		for (size_t j = 0; j < i && !seen; j++) {
			const char *other = under(key_def(j)->key, section, n);

			seen = other && strcspn(other, ".") == m && !strncmp(other, rest, m);
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

static const char *own(void *c, const char *text)
{
	return config__own(c, text);
}

/* Where the table's values go: strings from files and the environment are the config's own. */
static struct opt_ctx config_ctx(struct config *c)
{
	return (struct opt_ctx){.targets = {[AGENT_TARGET_CONFIG] = c}, .own = own, .own_arg = c};
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

/* One key's value from text: validated and stored by the option table. */
static int set_key(struct config *c, int id, const char *text, char *err, size_t len)
{
	struct opt_ctx ctx = config_ctx(c);

	return options__set(key_def(id), &ctx, text, err, len);
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

/* Where key id's value came from, for --print-config: source, and the line when from the file. */
static void note_origin(struct config_origin *o, int id, enum config_source source, int line)
{
	o->source[id] = source;
	o->line[id] = line;
}

/* set_key() for a value from outside the file; err says "what: why" (what: the key or variable). */
static int set_key_from(struct config *c, struct config_origin *o, int id, const char *value,
			enum config_source source, const char *what, char *err, size_t len)
{
	char why[384];
	int rc = set_key(c, id, value, why, sizeof(why));

	if (rc) {
		snprintf(err, len, "%s: %s", what, why);
		return rc;
	}
	note_origin(o, id, source, 0);
	return 0;
}

int config_load__set(struct config *c, struct config_origin *o, const char *key, const char *value,
		     enum config_source source, char *err, size_t len)
{
	int id = find_key(key);

	if (id < 0) {
		char known[512];

		list_children("", known, sizeof(known));
		snprintf(err, len, "unknown key '%s' (keys are dotted paths under: %s)", key,
			 known);
		return -ENOENT;
	}
	return set_key_from(c, o, id, value, source, key, err, len);
}

enum config_source config_load__source(const struct config_origin *o, const char *key)
{
	int id = find_key(key);

	return id < 0 ? CONFIG_SRC_DEFAULT : (enum config_source)o->source[id];
}

int config_load__all(const struct agent_flags *f, struct config *c, struct config_origin *o,
		     const char *(*get_env)(const char *name), char *err, size_t len)
{
	const char *file = f->config_file;
	int rc = 0;

	config_load__agent_defaults(c, o);
	if (!file && access(CONFIG_DEFAULT_FILE, F_OK) == 0)
		file = CONFIG_DEFAULT_FILE;
	if (file)
		rc = config_load__file(c, o, file, err, len);
	if (!rc)
		rc = config_load__env(c, o, get_env, err, len);
	for (size_t i = 0; !rc && i < f->nr_sets; i++)
		rc = config_load__set(c, o, f->sets[i].key, f->sets[i].value, CONFIG_SRC_FLAG, err,
				      len);
	/* --print-config shows the files' paths, and needs not read them. */
	if (!rc && !f->print_config)
		rc = config_load__read_header_files(c, err, len);
	if (!rc && f->log_level >= 0)
		c->log_level = f->log_level;
	if (rc)
		config__release(c);
	return rc;
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
	note_origin(w->o, id, CONFIG_SRC_FILE, v->start_mark.line + 1);
	return 0;
}

static int walk_pairs(struct yaml_walk *w, const yaml_node_t *v, int id)
{
	const struct opt_def *d = key_def(id);
	struct opt_ctx ctx = config_ctx(w->c);
	const char **list = options__field(d, &ctx);
	size_t *nr = (size_t *)((char *)w->c + d->count_offset);
	const char *what = d->tag == KEY_HEADERS ? "value" : "file path";
	char why[256];

	if (v->type != YAML_MAPPING_NODE)
		return walk_fail(w, v, "%s: give a map of header name: %s", d->key, what);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar_of(kn), *value = scalar_text(vn);
		int rc;

		if (!name || !value)
			/* The value may be a token: say where, never what. */
			return walk_fail(w, kn, "%s: each entry is name: %s", d->key,
					 d->tag == KEY_HEADERS ? "value" : "path");
		rc = add_pair(w->c, list, nr, name, value, why, sizeof(why));
		if (rc)
			return rc == -ENOMEM ? rc : walk_fail(w, kn, "%s: %s", d->key, why);
	}
	note_origin(w->o, id, CONFIG_SRC_FILE, v->start_mark.line + 1);
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
	note_origin(w->o, id, CONFIG_SRC_FILE, v->start_mark.line + 1);
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
		} else if (key_def(id)->tag == KEY_TYPES) {
			rc = walk_types(w, vn, id);
		} else if (key_def(id)->tag == KEY_HEADERS || key_def(id)->tag == KEY_PATHS) {
			rc = walk_pairs(w, vn, id);
		} else if (key_def(id)->tag == KEY_RELABEL) {
			rc = walk_relabel(w, vn, id);
		} else if (vn->type != YAML_SCALAR_NODE) {
			return walk_fail(w, vn, "%s: give a value, not %s", path,
					 node_type_name(vn));
		} else {
			rc = set_key(w->c, id, scalar_text(vn), why, sizeof(why));
			if (rc == -EINVAL)
				return walk_fail(w, vn, "%s: %s", path, why);
			if (!rc)
				note_origin(w->o, id, CONFIG_SRC_FILE, vn->start_mark.line + 1);
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
		/* An unclosed bracket or quote is found where the file ends or the next key
		 * starts: the line to fix is where it opened (the context). */
		if (parser.context && parser.context_mark.line < parser.problem_mark.line)
			snprintf(err, len, "%s:%zu: not valid YAML: %s, %s (found at line %zu)",
				 path, parser.context_mark.line + 1, parser.context,
				 parser.problem ? parser.problem : "parse error",
				 parser.problem_mark.line + 1);
		else
			snprintf(err, len, "%s:%zu: not valid YAML: %s", path,
				 parser.problem_mark.line + 1,
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

	int node_id = find_key("kubernetes.node_name");

	for (size_t i = 0; i < agent_command.nr_defs; i++) {
		const struct opt_def *d = key_def(i);
		char name[96];
		const char *v;
		int rc;

		if (!d->key || (d->tag != KEY_SCALAR && d->tag != KEY_TYPES))
			continue;
		env_name(d->key, name, sizeof(name));
		v = get_env(name);
		if (!v || !v[0])
			continue;
		rc = set_key_from(c, o, (int)i, v, CONFIG_SRC_ENV, name, err, len);
		if (rc)
			return rc;
	}
	/* The Downward API's node name, unless a file or HOSTPROF_ variable named one. */
	if (node && node[0] && o->source[node_id] == CONFIG_SRC_DEFAULT) {
		if (set_string(c, &c->kube_node_name, node))
			return -ENOMEM;
		o->source[node_id] = CONFIG_SRC_ENV;
	}
	return 0;
}

/* ---- header files ---- */

static int read_secret(const char *path, char *out, size_t len)
{
	struct stat st;
	ssize_t n;
	size_t start = 0;
	/* Non-blocking: a FIFO at the path must not hang the start; it is refused below. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

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

int config_load__read_headers(struct config *c, const char *const *files, size_t nr_files,
			      const char **list, size_t *nr, const char *what, char *err,
			      size_t len)
{
	for (size_t i = 0; i < nr_files; i++) {
		const char *eq = strchr(files[i], '=');
		char name[128], value[8192], why[256];
		int rc;

		snprintf(name, sizeof(name), "%.*s", (int)(eq - files[i]), files[i]);
		rc = read_secret(eq + 1, value, sizeof(value));
		if (rc) {
			snprintf(err, len, "%s: header '%s': cannot read '%s': %s", what, name,
				 eq + 1,
				 rc == -ENODATA	 ? "the file is empty"
				 : rc == -E2BIG	 ? "the file is larger than 8 KiB"
				 : rc == -EINVAL ? "not a regular file"
						 : strerror(-rc));
			return rc;
		}
		rc = add_pair(c, list, nr, name, value, why, sizeof(why));
		explicit_bzero(value, sizeof(value));
		if (rc) {
			snprintf(err, len, "%s: %s", what, why);
			return rc;
		}
	}
	return 0;
}

int config_load__read_header_files(struct config *c, char *err, size_t len)
{
	int rc = config_load__read_headers(c, c->otlp_header_files, c->nr_otlp_header_files,
					   c->otlp_headers, &c->nr_otlp_headers,
					   "export.otlp.header_files", err, len);

	if (!rc)
		rc = config_load__read_headers(c, c->pyroscope_header_files,
					       c->nr_pyroscope_header_files, c->pyroscope_headers,
					       &c->nr_pyroscope_headers,
					       "export.pyroscope.header_files", err, len);
	return rc;
}

/* ---- printing ---- */

static void print_origin(FILE *out, const struct config_origin *o, int id)
{
	char name[96];

	switch (o->source[id]) {
	case CONFIG_SRC_FILE:
		fprintf(out, "  # %s:%d", o->file, o->line[id]);
		break;
	case CONFIG_SRC_ENV:
		if (!strcmp(key_def(id)->key, "kubernetes.node_name"))
			snprintf(name, sizeof(name), "NODE_NAME or HOSTPROF_KUBERNETES_NODE_NAME");
		else
			env_name(key_def(id)->key, name, sizeof(name));
		fprintf(out, "  # environment: %s", name);
		break;
	case CONFIG_SRC_FLAG:
		fputs("  # flag", out);
		break;
	default:
		break;
	}
}

/* Open the sections on the way to key that are not open yet; returns the key's depth and leaf. */
static int open_sections(FILE *out, char sections[][32], int max, const char *key,
			 const char **leaf)
{
	int depth = 0;

	*leaf = key;
	for (const char *dot = strchr(key, '.'); dot && depth < max; dot = strchr(dot + 1, '.')) {
		char part[32];

		snprintf(part, sizeof(part), "%.*s", (int)(dot - *leaf), *leaf);
		if (strcmp(sections[depth], part)) {
			snprintf(sections[depth], sizeof(sections[depth]), "%s", part);
			for (int d = depth + 1; d < max; d++)
				sections[d][0] = '\0';
			fprintf(out, "%*s%s:\n", depth * 2, "", part);
		}
		depth++;
		*leaf = dot + 1;
	}
	if (depth == 0)
		for (int d = 0; d < max; d++)
			sections[d][0] = '\0';
	return depth;
}

void config_load__print(const struct config *c, const struct config_origin *o, FILE *out)
{
	struct opt_ctx ctx = config_ctx((struct config *)c);
	char sections[4][32] = {{0}};

	fputs("# hostprof agent: the merged configuration (defaults < file < environment < "
	      "flags).\n# Header values are masked.\n",
	      out);
	for (size_t id = 0; id < agent_command.nr_defs; id++) {
		const struct opt_def *d = key_def(id);
		const char *leaf;
		int depth;

		if (!d->key)
			continue;
		depth = open_sections(out, sections, 4, d->key, &leaf);
		fprintf(out, "%*s%s:", depth * 2, "", leaf);
		/* Maps and lists start their own lines, or print " {}" and " []". */
		if (d->tag == KEY_SCALAR || d->tag == KEY_TYPES)
			fputc(' ', out);
		options__print_value(out, d, &ctx);
		print_origin(out, o, id);
		fputc('\n', out);
	}
}

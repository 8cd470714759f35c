// SPDX-License-Identifier: BSD-2-Clause
#include "process/process_context.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "opentelemetry/proto/processcontext/v1development/process_context.pb-c.h"
#include "process/proc.h"
#include "process/proc_mem.h"

#define SIGNATURE "OTEL_CTX"
#define VERSION 2
/* A header read while the SDK rewrote it is read again, this many times in all. */
#define READ_ATTEMPTS 3

struct header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_ns;
	uint64_t payload;
};
_Static_assert(sizeof(struct header) == 32, "the OTEP 4719 header");

bool process_context__is_mapping(const struct mapping *m)
{
	static const char *const names[] = {"[anon_shmem:OTEL_CTX]", "[anon:OTEL_CTX]",
					    "/memfd:OTEL_CTX"};

	if (!m->path)
		return false;
	/* "starting with": the kernel may add " (deleted)" to a memfd's name. */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(m->path, names[i], strlen(names[i])))
			return true;
	return false;
}

static int read_header(pid_t pid, uint64_t addr, struct header *h)
{
	int err = proc_mem__read(pid, addr, h, sizeof(*h));

	if (err)
		return err;
	if (memcmp(h->signature, SIGNATURE, sizeof(h->signature)) || h->version != VERSION)
		return -ENOENT;
	return 0;
}

int process_context__published(pid_t pid, uint64_t header_addr, uint64_t *published_ns)
{
	struct header h;
	int err = read_header(pid, header_addr, &h);

	if (!err)
		*published_ns = h.published_ns;
	return err;
}

/* A bounded, well-formed UTF-8 copy of n bytes: what the process wrote is not trusted to be
 * either. */
static char *copy_text(const char *s, size_t n)
{
	char *out;

	if (n >= PROCESS_CONTEXT_MAX_VALUE)
		n = utf8__fit(s, n, PROCESS_CONTEXT_MAX_VALUE);
	out = malloc(n * 3 + 1);
	if (out)
		utf8__replace_invalid(out, s, n, "\xef\xbf\xbd");
	return out;
}

/* A scalar AnyValue as text; NULL for arrays, maps and bytes, which a resource does not need. */
static char *value_text(const Opentelemetry__Proto__Common__V1__AnyValue *v)
{
	char num[64];

	if (!v)
		return NULL;
	switch (v->value_case) {
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE:
		return v->string_value ? copy_text(v->string_value, strlen(v->string_value)) : NULL;
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE:
		snprintf(num, sizeof(num), "%" PRId64, v->int_value);
		return strdup(num);
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE:
		return strdup(v->bool_value ? "true" : "false");
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE:
		snprintf(num, sizeof(num), "%.17g", v->double_value);
		return strdup(num);
	default:
		return NULL;
	}
}

/* threadlocal.attribute_key_map: an array of strings, the key name of each index. */
static int take_key_map(struct process_context *c,
			const Opentelemetry__Proto__Common__V1__AnyValue *v)
{
	const Opentelemetry__Proto__Common__V1__ArrayValue *a;

	if (!v || v->value_case != OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_ARRAY_VALUE ||
	    !v->array_value)
		return 0;
	a = v->array_value;
	for (size_t i = 0; i < a->n_values && c->nr_keys < PROCESS_CONTEXT_MAX_KEYS; i++) {
		/* An index that names no string still takes its place: later ones keep theirs. */
		c->key_map[c->nr_keys] = value_text(a->values[i]);
		if (!c->key_map[c->nr_keys] && a->values[i] &&
		    a->values[i]->value_case ==
			    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
			return -ENOMEM;
		c->nr_keys++;
	}
	return 0;
}

int process_context__decode(const uint8_t *payload, size_t len, struct process_context *out)
{
	Opentelemetry__Proto__Processcontext__V1development__ProcessContext *pc;
	const Opentelemetry__Proto__Resource__V1__Resource *r;
	int err = 0;

	if (len > PROCESS_CONTEXT_MAX_PAYLOAD)
		return -EBADMSG;
	pc = opentelemetry__proto__processcontext__v1development__process_context__unpack(NULL, len,
											  payload);
	if (!pc)
		return -EBADMSG;
	r = pc->resource;
	for (size_t i = 0; r && i < r->n_attributes && out->nr_attrs < PROCESS_CONTEXT_MAX_ATTRS;
	     i++) {
		const Opentelemetry__Proto__Common__V1__KeyValue *kv = r->attributes[i];
		struct process_context_attr *a = &out->attrs[out->nr_attrs];

		if (!kv || !kv->key || !kv->key[0])
			continue;
		a->value = value_text(kv->value);
		if (!a->value)
			continue;
		a->key = copy_text(kv->key, strlen(kv->key));
		if (!a->key) {
			free(a->value);
			err = -ENOMEM;
			break;
		}
		out->nr_attrs++;
	}
	for (size_t i = 0; !err && i < pc->n_attributes; i++) {
		const Opentelemetry__Proto__Common__V1__KeyValue *kv = pc->attributes[i];

		if (!kv || !kv->key)
			continue;
		if (!strcmp(kv->key, "threadlocal.schema_version") && !out->thread_schema)
			out->thread_schema = value_text(kv->value);
		else if (!strcmp(kv->key, "threadlocal.attribute_key_map") && !out->nr_keys)
			err = take_key_map(out, kv->value);
	}
	opentelemetry__proto__processcontext__v1development__process_context__free_unpacked(pc,
											    NULL);
	return err;
}

int process_context__read(pid_t pid, uint64_t header_addr, struct process_context **out)
{
	struct header h, again;
	uint8_t *payload = NULL;
	int err = -EAGAIN;

	*out = NULL;
	for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		err = read_header(pid, header_addr, &h);
		if (err)
			break;
		err = -EAGAIN;
		if (!h.published_ns)
			continue; /* being written */
		if (h.payload_size > PROCESS_CONTEXT_MAX_PAYLOAD) {
			err = -EBADMSG;
			break;
		}
		free(payload);
		payload = malloc(h.payload_size ? h.payload_size : 1);
		if (!payload) {
			err = -ENOMEM;
			break;
		}
		err = 0;
		for (uint32_t off = 0; off < h.payload_size && !err; off += PROC_MEM_MAX_READ) {
			uint32_t n = h.payload_size - off;

			err = proc_mem__read(pid, h.payload + off, payload + off,
					     n < PROC_MEM_MAX_READ ? n : PROC_MEM_MAX_READ);
		}
		if (err == -EFAULT)
			err = -EAGAIN; /* the payload moved while we read: read again */
		if (err && err != -EAGAIN)
			break;
		/* The payload is the one the header named only if the timestamp did not move. */
		if (!err && read_header(pid, header_addr, &again) == 0 &&
		    again.published_ns == h.published_ns) {
			struct process_context *c = calloc(1, sizeof(*c));

			if (!c) {
				err = -ENOMEM;
				break;
			}
			c->header_addr = header_addr;
			c->published_ns = h.published_ns;
			err = process_context__decode(payload, h.payload_size, c);
			if (err)
				process_context__free(c);
			else
				*out = c;
			break;
		}
		err = -EAGAIN;
	}
	free(payload);
	return err;
}

const char *process_context__get(const struct process_context *c, const char *key)
{
	for (size_t i = 0; c && i < c->nr_attrs; i++)
		if (!strcmp(c->attrs[i].key, key))
			return c->attrs[i].value;
	return NULL;
}

void process_context__free(struct process_context *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_attrs; i++) {
		free(c->attrs[i].key);
		free(c->attrs[i].value);
	}
	for (size_t i = 0; i < c->nr_keys; i++)
		free(c->key_map[i]);
	free(c->thread_schema);
	free(c);
}

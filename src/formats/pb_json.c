// SPDX-License-Identifier: BSD-2-Clause
/*
 * OTLP/JSON from protobuf-c messages, by walking the generated descriptors: the binary and the
 * JSON forms of a message are produced from the same structs, so the two can never disagree on a
 * field. It knows protobuf-c and the OTLP/JSON rules (proto3 JSON, with trace, span and profile
 * ids as hex), nothing of profiles.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/utf8.h"
#include "formats/pb_json.h"

/* Deeper than any message of ours; a guard against a cycle, not a limit anyone meets. */
#define JSON_MAX_DEPTH 32

struct json_buf {
	char *buf;
	size_t len;
	size_t cap;
	int err;
};

static bool json_reserve(struct json_buf *j, size_t n)
{
	size_t cap;
	char *tmp;

	if (j->err)
		return false;
	if (n <= j->cap - j->len)
		return true;
	if (n > SIZE_MAX / 2 - j->len) {
		j->err = -ENOMEM;
		return false;
	}
	cap = j->cap ? j->cap : 4096;
	while (cap - j->len < n)
		cap *= 2;
	tmp = realloc(j->buf, cap);
	if (!tmp) {
		j->err = -ENOMEM;
		return false;
	}
	j->buf = tmp;
	j->cap = cap;
	return true;
}

static void json_put(struct json_buf *j, const void *s, size_t n)
{
	if (!json_reserve(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void json_putc(struct json_buf *j, char c)
{
	json_put(j, &c, 1);
}

/*
 * A JSON string (RFC 8259): quote, backslash and control characters escaped, bytes that are not
 * UTF-8 replaced by U+FFFD, since a JSON text must be Unicode. The message holds only cleaned
 * strings, so the replacement is a second line of defence, not the path normally taken.
 */
static void json_string(struct json_buf *j, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run;

	json_putc(j, '"');
	while (i < len) {
		/* Copy plain ASCII in one go: almost every string is nothing else. */
		for (run = i; run < len && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' &&
			      s[run] != '\\';
		     run++)
			;
		json_put(j, s + i, run - i);
		i = run;
		if (i == len)
			break;
		if (s[i] == '"' || s[i] == '\\') {
			char esc[2] = {'\\', (char)s[i]};

			json_put(j, esc, 2);
			i++;
		} else if (s[i] < 0x20) {
			char esc[7] = "\\u00";

			hex__encode(esc + 4, &s[i], 1);

			switch (s[i]) {
			case '\b':
				json_put(j, "\\b", 2);
				break;
			case '\f':
				json_put(j, "\\f", 2);
				break;
			case '\n':
				json_put(j, "\\n", 2);
				break;
			case '\r':
				json_put(j, "\\r", 2);
				break;
			case '\t':
				json_put(j, "\\t", 2);
				break;
			default:
				json_put(j, esc, 6);
			}
			i++;
		} else {
			size_t n = utf8__seq(s + i, len - i);

			if (n) {
				json_put(j, s + i, n);
				i += n;
			} else {
				json_put(j, UTF8_REPLACEMENT, 3);
				i++;
			}
		}
	}
	json_putc(j, '"');
}

/* proto3 JSON names: the field name in lowerCamelCase ("time_unix_nano" -> "timeUnixNano"). */
static void json_key(struct json_buf *j, const char *name, bool *first)
{
	char buf[128];
	size_t n = 0;
	bool upper = false;

	for (; *name && n < sizeof(buf); name++) {
		if (*name == '_') {
			upper = true;
			continue;
		}
		buf[n++] = upper && *name >= 'a' && *name <= 'z' ? *name - 'a' + 'A' : *name;
		upper = false;
	}
	if (*name) {
		j->err = j->err ? j->err : -ENAMETOOLONG;
		return;
	}
	if (!*first)
		json_putc(j, ',');
	*first = false;
	json_string(j, buf, n);
	json_putc(j, ':');
}

static void json_printf(struct json_buf *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void json_printf(struct json_buf *j, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		j->err = j->err ? j->err : -EINVAL;
		return;
	}
	json_put(j, buf, n);
}

/* OTLP/JSON writes trace, span and profile ids as hex, not base64 as proto3 JSON would. */
static bool is_hex_id(const ProtobufCFieldDescriptor *f)
{
	return strcmp(f->name, "trace_id") == 0 || strcmp(f->name, "span_id") == 0 ||
	       strcmp(f->name, "profile_id") == 0;
}

static void json_bytes(struct json_buf *j, const ProtobufCFieldDescriptor *f,
		       const ProtobufCBinaryData *d)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	json_putc(j, '"');
	if (is_hex_id(f)) {
		for (size_t i = 0; i < d->len; i++) {
			char c[3];

			hex__encode(c, &d->data[i], 1);
			json_put(j, c, 2);
		}
	} else {
		for (size_t i = 0; i < d->len; i += 3) {
			uint32_t v = (uint32_t)d->data[i] << 16;
			size_t left = d->len - i;
			char c[4];

			if (left > 1)
				v |= (uint32_t)d->data[i + 1] << 8;
			if (left > 2)
				v |= d->data[i + 2];
			c[0] = b64[v >> 18];
			c[1] = b64[(v >> 12) & 63];
			c[2] = left > 1 ? b64[(v >> 6) & 63] : '=';
			c[3] = left > 2 ? b64[v & 63] : '=';
			json_put(j, c, 4);
		}
	}
	json_putc(j, '"');
}

static void json_double(struct json_buf *j, double v)
{
	/* JSON has no NaN or infinity; proto3 JSON spells them as strings. */
	if (isnan(v))
		json_put(j, "\"NaN\"", 5);
	else if (isinf(v))
		json_printf(j, "\"%sInfinity\"", v < 0 ? "-" : "");
	else
		json_printf(j, "%.17g", v);
}

/* Integers by hand: they are most of a profile's JSON, and printf would dominate the time. */
static void json_uint(struct json_buf *j, uint64_t v, bool negative, bool quoted)
{
	char buf[24];
	size_t i = sizeof(buf);

	if (quoted)
		buf[--i] = '"';
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (negative)
		buf[--i] = '-';
	if (quoted)
		buf[--i] = '"';
	json_put(j, buf + i, sizeof(buf) - i);
}

static void json_int(struct json_buf *j, int64_t v, bool quoted)
{
	/* The magnitude of INT64_MIN does not fit int64_t; it does fit uint64_t. */
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	json_uint(j, mag, v < 0, quoted);
}

static void json_message(struct json_buf *j, const ProtobufCMessage *m, int depth);

/* One value of field f at v; 64-bit integers are strings, as proto3 JSON and OTLP ask. */
static void json_value(struct json_buf *j, const ProtobufCFieldDescriptor *f, const void *v,
		       int depth)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		json_int(j, *(const int32_t *)v, false);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		json_uint(j, *(const uint32_t *)v, false, false);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		json_int(j, *(const int64_t *)v, true);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		json_uint(j, *(const uint64_t *)v, false, true);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		json_double(j, *(const float *)v);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		json_double(j, *(const double *)v);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		if (*(const protobuf_c_boolean *)v)
			json_put(j, "true", 4);
		else
			json_put(j, "false", 5);
		break;
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)v;

		json_string(j, s ? s : "", s ? strlen(s) : 0);
		break;
	}
	case PROTOBUF_C_TYPE_BYTES:
		json_bytes(j, f, v);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		json_message(j, *(ProtobufCMessage *const *)v, depth + 1);
		break;
	default:
		j->err = j->err ? j->err : -EINVAL;
	}
}

static size_t field_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return 4;
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	}
	return 0;
}

/* Whether a field that has no presence bit holds its default, which proto3 JSON leaves out (and
 * protobuf-c does not pack either). */
static bool field_is_default(const ProtobufCFieldDescriptor *f, const void *v)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)v;

		return !s || !*s;
	}
	case PROTOBUF_C_TYPE_BYTES:
		return ((const ProtobufCBinaryData *)v)->len == 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(ProtobufCMessage *const *)v == NULL;
	case PROTOBUF_C_TYPE_FLOAT:
		return *(const float *)v == 0 && !signbit(*(const float *)v);
	case PROTOBUF_C_TYPE_DOUBLE:
		return *(const double *)v == 0 && !signbit(*(const double *)v);
	default: {
		static const char zero[8];
		size_t n = field_size(f);

		return n <= sizeof(zero) && memcmp(v, zero, n) == 0;
	}
	}
}

/* Whether f is present in the message at base, the rules protobuf-c packs by. */
static bool field_present(const ProtobufCFieldDescriptor *f, const char *base)
{
	const void *v = base + f->offset;

	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return *(const uint32_t *)(base + f->quantifier_offset) == f->id;
	switch (f->label) {
	case PROTOBUF_C_LABEL_REQUIRED:
		return true;
	case PROTOBUF_C_LABEL_OPTIONAL:
		if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING)
			return *(const void *const *)v != NULL;
		return *(const protobuf_c_boolean *)(base + f->quantifier_offset);
	case PROTOBUF_C_LABEL_NONE:
		return !field_is_default(f, v);
	case PROTOBUF_C_LABEL_REPEATED:
		return *(const size_t *)(base + f->quantifier_offset) > 0;
	}
	return false;
}

static void json_message(struct json_buf *j, const ProtobufCMessage *m, int depth)
{
	const ProtobufCMessageDescriptor *desc = m->descriptor;
	const char *base = (const char *)m;
	bool first = true;

	if (depth > JSON_MAX_DEPTH) {
		j->err = j->err ? j->err : -ELOOP;
		return;
	}
	json_putc(j, '{');
	for (unsigned i = 0; i < desc->n_fields && !j->err; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];

		if (!field_present(f, base))
			continue;
		json_key(j, f->name, &first);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			const char *arr = *(const char *const *)(base + f->offset);
			size_t size = field_size(f);

			json_putc(j, '[');
			for (size_t k = 0; k < n; k++) {
				if (k)
					json_putc(j, ',');
				json_value(j, f, arr + k * size, depth);
			}
			json_putc(j, ']');
		} else {
			json_value(j, f, base + f->offset, depth);
		}
	}
	json_putc(j, '}');
}

int pb_json__encode(const ProtobufCMessage *m, char **out, size_t *len)
{
	struct json_buf j = {0};

	if (!m || !out || !len)
		return -EINVAL;
	json_message(&j, m, 0);
	json_putc(&j, '\n');
	json_putc(&j, '\0');
	if (j.err) {
		free(j.buf);
		return j.err;
	}
	*out = j.buf;
	*len = j.len - 1;
	return 0;
}

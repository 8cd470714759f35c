// SPDX-License-Identifier: BSD-2-Clause
#include "export/rpc_status.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log_text.h"

/* Protobuf wire format, just enough to read a Status and a RetryInfo. */
struct pb {
	const uint8_t *p, *end;
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	uint64_t r = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (b->p >= b->end)
			return -1;
		c = *b->p++;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* The next field: its number, wire type and, for length-delimited ones, its bytes. */
static int pb_field(struct pb *b, uint32_t *field, uint32_t *wt, uint64_t *varint, struct pb *sub)
{
	uint64_t key, len;

	if (pb_varint(b, &key))
		return -1;
	*field = (uint32_t)(key >> 3);
	*wt = key & 7;
	if (*field == 0)
		return -1;
	switch (*wt) {
	case 0:
		return pb_varint(b, varint);
	case 1:
		if (b->end - b->p < 8)
			return -1;
		b->p += 8;
		return 0;
	case 2:
		if (pb_varint(b, &len) || len > (uint64_t)(b->end - b->p))
			return -1;
		sub->p = b->p;
		sub->end = b->p + len;
		b->p += len;
		return 0;
	case 5:
		if (b->end - b->p < 4)
			return -1;
		b->p += 4;
		return 0;
	default:
		/* groups (3, 4) are not in any message we read */
		return -1;
	}
}

/* google.rpc.RetryInfo {1: retry_delay google.protobuf.Duration {1: seconds, 2: nanos}} */
static int pb_retry_info(struct pb b, int64_t *delay_ms)
{
	int64_t secs = 0, nanos = 0;

	while (b.p < b.end) {
		uint32_t f, wt;
		uint64_t v = 0;
		struct pb sub = {0};

		if (pb_field(&b, &f, &wt, &v, &sub))
			return -1;
		if (f != 1 || wt != 2)
			continue;
		while (sub.p < sub.end) {
			struct pb unused = {0};

			if (pb_field(&sub, &f, &wt, &v, &unused))
				return -1;
			if (f == 1 && wt == 0)
				secs = (int64_t)v;
			else if (f == 2 && wt == 0)
				nanos = (int32_t)v;
		}
	}
	if (secs < 0 || nanos < 0)
		return -1;
	if (secs > 86400)
		secs = 86400;
	*delay_ms = secs * 1000 + nanos / 1000000;
	return 0;
}

/* One detail, a google.protobuf.Any {1: type_url, 2: value}: a RetryInfo sets *delay_ms. */
static int pb_detail(struct pb any, int64_t *delay_ms)
{
	static const char retry_info[] = "google.rpc.RetryInfo";
	const size_t rlen = sizeof(retry_info) - 1;
	struct pb type = {0}, value = {0};

	while (any.p < any.end) {
		uint32_t f, wt;
		uint64_t v = 0;
		struct pb sub = {0};

		if (pb_field(&any, &f, &wt, &v, &sub))
			return -1;
		if (f == 1 && wt == 2)
			type = sub;
		else if (f == 2 && wt == 2)
			value = sub;
	}
	if (!type.p || (size_t)(type.end - type.p) < rlen ||
	    memcmp(type.end - rlen, retry_info, rlen))
		return 0;
	if (!value.p) {
		*delay_ms = 0;
		return 0;
	}
	return pb_retry_info(value, delay_ms);
}

int rpc_status__parse(const void *body, size_t len, int32_t *code, char *msg, size_t msglen,
		      int64_t *retry_delay_ms)
{
	struct pb b = {body, (const uint8_t *)body + len};

	*code = 0;
	if (msglen)
		msg[0] = '\0';
	if (retry_delay_ms)
		*retry_delay_ms = -1;
	while (b.p < b.end) {
		uint32_t f, wt;
		uint64_t v = 0;
		struct pb sub = {0};

		if (pb_field(&b, &f, &wt, &v, &sub))
			return -EBADMSG;
		if (f == 1 && wt == 0)
			*code = (int32_t)v;
		else if (f == 2 && wt == 2)
			log_text__sanitize(msg, msglen, sub.p, (size_t)(sub.end - sub.p));
		else if (f == 3 && wt == 2 && retry_delay_ms && pb_detail(sub, retry_delay_ms))
			return -EBADMSG;
	}
	return 0;
}

static int base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* -bin metadata is base64, padded or not (gRPC lets senders drop the padding). */
static int base64_decode(const char *s, uint8_t **out, size_t *out_len)
{
	size_t len = strlen(s), n = 0, i;
	uint32_t acc = 0;
	int bits = 0;
	uint8_t *buf;

	while (len && s[len - 1] == '=')
		len--;
	buf = malloc(len * 3 / 4 + 1);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < len; i++) {
		int v = base64_value(s[i]);

		if (v < 0) {
			free(buf);
			return -EBADMSG;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[n++] = (uint8_t)(acc >> bits);
		}
	}
	*out = buf;
	*out_len = n;
	return 0;
}

int rpc_status__retry_delay_base64(const char *b64, int64_t *delay)
{
	uint8_t *bin = NULL;
	size_t len = 0;
	int32_t code;
	char msg[8];
	int err;

	*delay = -1;
	err = base64_decode(b64, &bin, &len);
	if (!err)
		err = rpc_status__parse(bin, len, &code, msg, sizeof(msg), delay);
	free(bin);
	if (err)
		*delay = -1;
	return err;
}

// SPDX-License-Identifier: BSD-2-Clause
#include "export/rpc_status.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/leb128.h"
#include "base/log_text.h"

/* Protobuf wire format, just enough to read a Status and a RetryInfo. */
enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* Bytes still to read; bad once they turned out malformed, which ends the reading. */
struct pb {
	const uint8_t *p, *end;
	bool bad;
};

/* One field as read: its number and wire type, and its value (varint) or its bytes (LEN). */
struct pb_field {
	uint32_t num, wt;
	uint64_t v;
	struct pb sub;
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	return leb128__read_u(&b->p, b->end, v) ? 0 : -1;
}

static int pb_skip(struct pb *b, uint64_t n)
{
	if (n > (uint64_t)(b->end - b->p))
		return -1;
	b->p += n;
	return 0;
}

static int pb_read(struct pb *b, struct pb_field *f)
{
	uint64_t key, len;

	if (pb_varint(b, &key))
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = key & 7;
	if (f->num == 0)
		return -1;
	switch (f->wt) {
	case PB_VARINT:
		return pb_varint(b, &f->v);
	case PB_I64:
		return pb_skip(b, 8);
	case PB_LEN:
		if (pb_varint(b, &len) || len > (uint64_t)(b->end - b->p))
			return -1;
		f->sub = (struct pb){b->p, b->p + len, false};
		return pb_skip(b, len);
	case PB_I32:
		return pb_skip(b, 4);
	default:
		/* groups (3, 4) are not in any message we read */
		return -1;
	}
}

/* The next field of b into *f: false at the end of b, or once b is bad. */
static bool pb_next(struct pb *b, struct pb_field *f)
{
	*f = (struct pb_field){0};
	if (b->bad || b->p >= b->end)
		return false;
	b->bad = pb_read(b, f) != 0;
	return !b->bad;
}

/* google.rpc.RetryInfo {1: retry_delay google.protobuf.Duration {1: seconds, 2: nanos}} */
static int pb_retry_info(struct pb b, int64_t *delay_ms)
{
	int64_t secs = 0, nanos = 0;
	struct pb_field f, d;

	while (pb_next(&b, &f)) {
		if (f.num != 1 || f.wt != PB_LEN)
			continue;
		while (pb_next(&f.sub, &d)) {
			if (d.num == 1 && d.wt == PB_VARINT)
				secs = (int64_t)d.v;
			else if (d.num == 2 && d.wt == PB_VARINT)
				nanos = (int32_t)d.v;
		}
		if (f.sub.bad)
			return -1;
	}
	if (b.bad || secs < 0 || nanos < 0)
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
	struct pb_field f;

	while (pb_next(&any, &f)) {
		if (f.num == 1 && f.wt == PB_LEN)
			type = f.sub;
		else if (f.num == 2 && f.wt == PB_LEN)
			value = f.sub;
	}
	if (any.bad)
		return -1;
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
	struct pb b = {body, (const uint8_t *)body + len, false};
	struct pb_field f;

	*code = 0;
	if (msglen)
		msg[0] = '\0';
	if (retry_delay_ms)
		*retry_delay_ms = -1;
	while (pb_next(&b, &f)) {
		if (f.num == 1 && f.wt == PB_VARINT)
			*code = (int32_t)f.v;
		else if (f.num == 2 && f.wt == PB_LEN)
			log_text__sanitize(msg, msglen, f.sub.p, (size_t)(f.sub.end - f.sub.p));
		else if (f.num == 3 && f.wt == PB_LEN && retry_delay_ms &&
			 pb_detail(f.sub, retry_delay_ms))
			return -EBADMSG;
	}
	return b.bad ? -EBADMSG : 0;
}

/* A base64 digit's value, standard or URL-safe ('-' and '_' for '+' and '/'), or -1. */
static int base64_value(char c)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p;

	if (c == '-')
		c = '+';
	else if (c == '_')
		c = '/';
	p = c ? strchr(digits, c) : NULL;
	return p ? (int)(p - digits) : -1;
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

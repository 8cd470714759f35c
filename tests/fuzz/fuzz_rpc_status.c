// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a receiver sends when it refuses an export: a google.rpc.Status (an HTTP error body, or
 * base64 in gRPC's grpc-status-details-bin trailer) and a Retry-After header. The input is the
 * Status; it is also read as base64 text of its own, and as a Retry-After value. A RetryInfo delay
 * is -1 or within a day (and the nanoseconds a Duration may add); the base64 of the same bytes
 * gives the same delay; a Retry-After of digits is at most a day.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "export/rpc_status.h"
#include "export/transport_curl.h"

#define MAX_DELAY_MS (86400 * 1000LL + 2147) /* a day, and an int32 of nanoseconds */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const char *msg, size_t len)
{
	const char *end = memchr(msg, '\0', len);

	FUZZ_ASSERT(end);
	for (const char *c = msg; c < end; c++)
		FUZZ_ASSERT(*c >= 0x20 && *c < 0x7f);
}

static char *base64(const uint8_t *data, size_t size)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(size / 3 * 4 + 5), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < size; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];

		*o++ = digits[v >> 18];
		*o++ = digits[(v >> 12) & 63];
		*o++ = digits[(v >> 6) & 63];
		*o++ = digits[v & 63];
	}
	if (i < size) {
		uint32_t v =
			(uint32_t)data[i] << 16 | (i + 1 < size ? (uint32_t)data[i + 1] << 8 : 0);

		*o++ = digits[v >> 18];
		*o++ = digits[(v >> 12) & 63];
		*o++ = i + 1 < size ? digits[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static void check_status(const uint8_t *data, size_t size)
{
	int64_t delay = -7, delay64 = -7;
	char msg[310], *b64;
	int32_t code;
	int err, err64;

	memset(msg, 'x', sizeof(msg));
	err = rpc_status__parse(data, size, &code, msg, sizeof(msg), &delay);
	FUZZ_ASSERT(err == 0 || err == -EBADMSG);
	check_line(msg, sizeof(msg));
	FUZZ_ASSERT(delay >= -1 && delay <= MAX_DELAY_MS);

	b64 = base64(data, size);
	if (!b64)
		return;
	err64 = rpc_status__retry_delay_base64(b64, &delay64);
	free(b64);
	FUZZ_ASSERT(err64 == err || err64 == -ENOMEM);
	if (!err64)
		FUZZ_ASSERT(delay64 == (err ? -1 : delay));
	else
		FUZZ_ASSERT(delay64 == -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	int64_t delay;
	int err;

	check_status(data, size);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err = rpc_status__retry_delay_base64(text, &delay);
	FUZZ_ASSERT(err == 0 || err == -EBADMSG || err == -ENOMEM);
	FUZZ_ASSERT(err ? delay == -1 : delay >= -1 && delay <= MAX_DELAY_MS);
	/* A Retry-After: delay-seconds (clamped to a day) or an HTTP-date, now at 2024-01-01. */
	delay = transport__parse_retry_after(text, 1704067200000LL);
	FUZZ_ASSERT(delay >= -1);
	if (text[strspn(text, " \t")] >= '0' && text[strspn(text, " \t")] <= '9')
		FUZZ_ASSERT(delay <= 86400 * 1000LL);
	free(text);
	return 0;
}

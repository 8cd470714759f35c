// SPDX-License-Identifier: BSD-2-Clause
/*
 * A gRPC receiver's answer as the transport gets it from libcurl: header and trailer lines
 * (grpc-status, grpc-message, grpc-status-details-bin, grpc-encoding, content-type), a framed
 * body (perhaps gzipped), the HTTP status and version. The input: byte 0 picks the HTTP status,
 * byte 1 says HTTP/2 (low bit) and the size of the body's pieces; then the lines, one per '\n',
 * up to an empty line; the body is the rest. The result must be a whole send_result: a known
 * outcome, "delivered" only for grpc-status 0 over HTTP 200, a retry delay of -1 or within a day,
 * no negative rejected count, and a message that is one printable line.
 */
#include <string.h>

#include "fuzz.h"
#include "export/grpc_answer.h"
#include "export/transport_curl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const long http_codes[] = {200, 200, 200, 200, 400, 401, 403, 404,
				  429, 500, 502, 503, 504, 301, 0,   204};

static void check_result(const struct grpc_answer *a, long http, const struct send_result *r)
{
	const char *end = memchr(r->message, '\0', sizeof(r->message));

	FUZZ_ASSERT(end);
	for (const char *c = r->message; c < end; c++)
		FUZZ_ASSERT(*c >= 0x20 && *c < 0x7f);
	FUZZ_ASSERT(r->outcome == SEND_OK || r->outcome == SEND_RETRY || r->outcome == SEND_DROP);
	if (r->outcome == SEND_OK)
		FUZZ_ASSERT(a->has_status && a->status == GRPC_OK && http == 200);
	FUZZ_ASSERT(r->retry_after_ms >= -1 && r->retry_after_ms <= 86400 * 1000LL + 2147);
	FUZZ_ASSERT(r->rejected >= 0);
	FUZZ_ASSERT(r->code >= 0 && r->code <= 9999); /* grpc-status is read up to 4 digits */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct grpc_answer a = {0};
	struct send_result res = {.retry_after_ms = -1};
	const uint8_t *p, *end = data + size;
	size_t piece;
	long http;

	if (size < 2)
		return 0;
	http = http_codes[data[0] % (sizeof(http_codes) / sizeof(http_codes[0]))];
	piece = 1 + (data[1] >> 1);
	/* The lines, each with its "\n" as curl hands it over, up to an empty one. */
	for (p = data + 2; p < end;) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		grpc_answer__header(&a, (const char *)p, len);
		p += len;
		if (len == 1 || (len == 2 && p[-2] == '\r'))
			break;
	}
	/* The body, in the pieces curl would hand over. */
	for (; p < end; p += piece) {
		size_t n = (size_t)(end - p) < piece ? (size_t)(end - p) : piece;

		if (grpc_answer__body(&a, p, n))
			goto out;
	}
	grpc_answer__read(&a, http, data[1] & 1, &res);
	check_result(&a, http, &res);
out:
	grpc_answer__release(&a);
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * A gRPC answer read without a server: header and trailer lines and framed bodies written here
 * byte by byte, as a receiver or a proxy in front of it would send them. test_transport_grpc
 * checks the same reading against a real gRPC server; this one reaches what a well-behaved server
 * never sends (junk statuses, cut frames, control characters, oversized bodies).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "export/grpc_answer.h"
#include "export/transport_curl.h"

/* ExportProfilesServiceResponse {partial_success {rejected_profiles: 2, error_message: "two
 * bad"}}, in a gRPC frame (not compressed, 13-byte message). */
static const unsigned char partial_frame[] = {0,    0,	  0,   0,   13,	 0x0a, 0x0b, 0x08, 0x02,
					      0x12, 0x07, 't', 'w', 'o', ' ',  'b',  'a',  'd'};
/* google.rpc.Status {code 8, "slow down", details [RetryInfo {retry_delay {seconds: 3}}]} */
#define RETRY_3S                                                                                   \
	"CAgSCXNsb3cgZG93bhowCih0eXBlLmdvb2dsZWFwaXMuY29tL2dvb2dsZS5ycGMuUmV0cnlJbmZvEgQKAggD"

/* Feed the lines (NULL-terminated list), then the body; read it as http over HTTP/2 or not. */
static void answer(const char *const *lines, const void *body, size_t len, long http, bool http2,
		   struct send_result *res)
{
	struct grpc_answer a = {0};

	memset(res, 0, sizeof(*res));
	res->retry_after_ms = -1;
	for (; *lines; lines++)
		grpc_answer__header(&a, *lines, strlen(*lines));
	CHECK(grpc_answer__body(&a, body, len) == 0, "body of %zu bytes kept", len);
	grpc_answer__read(&a, http, http2, res);
	grpc_answer__release(&a);
}

static void test_trailers_only(void)
{
	const char *lines[] = {"HTTP/2 200\r\n", "content-type: application/grpc\r\n",
			       "Grpc-Status: 16\r\n", "grpc-message: bad%20token\r\n", NULL};
	struct send_result r;

	answer(lines, NULL, 0, 200, true, &r);
	CHECK(r.outcome == SEND_DROP, "UNAUTHENTICATED is not retried: %d", r.outcome);
	CHECK_U64(r.code, GRPC_UNAUTHENTICATED);
	CHECK_STR(r.message, "UNAUTHENTICATED: bad token");
}

static void test_partial_success(void)
{
	const char *lines[] = {"content-type: application/grpc\r\n", "grpc-status: 0\r\n", NULL};
	struct send_result r;

	answer(lines, partial_frame, sizeof(partial_frame), 200, true, &r);
	CHECK(r.outcome == SEND_OK, "delivered: %d", r.outcome);
	CHECK_U64(r.rejected, 2);
	CHECK_STR(r.message, "two bad");

	/* The same frame cut short: delivered all the same, and said why it was not read. */
	answer(lines, partial_frame, sizeof(partial_frame) - 1, 200, true, &r);
	CHECK(r.outcome == SEND_OK && r.rejected == 0, "cut answer: %d", r.outcome);
	CHECK(strstr(r.message, "cut message") != NULL, "%s", r.message);

	/* grpc-status 0 from an HTTP error is no delivery. */
	answer(lines, NULL, 0, 500, true, &r);
	CHECK(r.outcome != SEND_OK, "HTTP 500 with grpc-status 0 is not delivered");
}

static void test_retry_info(void)
{
	const char *with[] = {"grpc-status: 8\r\n", "grpc-status-details-bin: " RETRY_3S "\r\n",
			      NULL};
	const char *without[] = {"grpc-status: 8\r\n", NULL};
	const char *broken[] = {"grpc-status: 8\r\n", "grpc-status-details-bin: !!!\r\n", NULL};
	struct send_result r;

	answer(with, NULL, 0, 200, true, &r);
	CHECK(r.outcome == SEND_RETRY, "RESOURCE_EXHAUSTED with RetryInfo is retried");
	CHECK_U64(r.retry_after_ms, 3000);
	answer(without, NULL, 0, 200, true, &r);
	CHECK(r.outcome == SEND_DROP && r.retry_after_ms == -1, "without RetryInfo: dropped");
	CHECK(strstr(r.message, "no RetryInfo") != NULL, "%s", r.message);
	answer(broken, NULL, 0, 200, true, &r);
	CHECK(r.outcome == SEND_DROP, "unreadable details: dropped");
	CHECK(strstr(r.message, "unreadable status details") != NULL, "%s", r.message);
}

static void test_proxy(void)
{
	const char *lines[] = {"HTTP/1.1 503 Service Unavailable\r\n",
			       "Content-Type: text/html\r\n", NULL};
	static const char body[] = "<html>\n\x1b[31mbusy</html>";
	struct send_result r;

	answer(lines, body, sizeof(body) - 1, 503, false, &r);
	CHECK(r.outcome == SEND_RETRY, "a proxy's 503 is retried");
	CHECK_U64(r.code, GRPC_UNAVAILABLE);
	CHECK(strstr(r.message, "HTTP 503 without grpc-status") != NULL, "%s", r.message);
	CHECK(strstr(r.message, "not over HTTP/2") != NULL, "%s", r.message);
	CHECK(!strchr(r.message, '\x1b') && !strchr(r.message, '\n'), "one clean line: %s",
	      r.message);
}

static void test_hostile_values(void)
{
	const char *junk[] = {"grpc-status: 1a\r\n", NULL};
	const char *huge[] = {"grpc-status: 99999999999999999999\r\n", NULL};
	const char *escapes[] = {"grpc-status: 3\r\n", "grpc-message: a%0Ab%1B[2Jc%\r\n", NULL};
	struct send_result r;

	answer(junk, NULL, 0, 200, true, &r);
	CHECK_U64(r.code, GRPC_UNKNOWN);
	answer(huge, NULL, 0, 200, true, &r);
	CHECK_U64(r.code, GRPC_UNKNOWN);
	answer(escapes, NULL, 0, 200, true, &r);
	CHECK_STR(r.message, "INVALID_ARGUMENT: a b?[2Jc%");
}

static void test_oversized_body(void)
{
	const char *lines[] = {"grpc-status: 0\r\n", NULL};
	struct grpc_answer a = {0};
	struct send_result r = {.retry_after_ms = -1};
	size_t chunk = 1 << 20;
	char *buf = calloc(1, chunk);

	CHECK(buf != NULL, "1 MiB");
	if (!buf)
		return;
	grpc_answer__header(&a, lines[0], strlen(lines[0]));
	for (int i = 0; i < 6; i++)
		CHECK(grpc_answer__body(&a, buf, chunk) == 0, "piece %d taken", i);
	CHECK(a.body_cut && a.len <= GRPC_MAX_ANSWER + GRPC_FRAME_HDR, "kept %zu bytes", a.len);
	grpc_answer__read(&a, 200, true, &r);
	CHECK(r.outcome == SEND_OK, "delivered: the status says so");
	CHECK(strstr(r.message, "larger than 4 MiB") != NULL, "%s", r.message);
	grpc_answer__release(&a);
	free(buf);
}

int main(void)
{
	test_trailers_only();
	test_partial_success();
	test_retry_info();
	test_proxy();
	test_hostile_values();
	test_oversized_body();
	return check_summary("test_grpc_answer");
}

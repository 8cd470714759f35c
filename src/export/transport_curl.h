/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the two libcurl transports (transport_http.c, transport_grpc.c) share: the setup of an
 * easy handle, what a failed transfer means, status classification, Retry-After, request
 * headers and gzip. For those two and their tests; nothing here calls back into them.
 */
#ifndef HOSTPROF_TRANSPORT_CURL_H
#define HOSTPROF_TRANSPORT_CURL_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/transport.h"

/* --- classification --- */

/* 2xx -> SEND_OK; 429, 502, 503, 504 -> SEND_RETRY; everything else -> SEND_DROP. */
enum send_outcome transport__classify_http(long status);

enum grpc_code {
	GRPC_OK = 0,
	GRPC_CANCELLED = 1,
	GRPC_UNKNOWN = 2,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_ALREADY_EXISTS = 6,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_FAILED_PRECONDITION = 9,
	GRPC_ABORTED = 10,
	GRPC_OUT_OF_RANGE = 11,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAVAILABLE = 14,
	GRPC_DATA_LOSS = 15,
	GRPC_UNAUTHENTICATED = 16,
};

/*
 * The OTLP rule: CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS
 * are retryable; RESOURCE_EXHAUSTED only when the status carried a RetryInfo.
 */
enum send_outcome transport__classify_grpc(int code, bool has_retry_info);
const char *transport__grpc_code_name(int code); /* "UNAVAILABLE"; "UNKNOWN_CODE" if out of range */

/*
 * A Retry-After value: delay-seconds ("120") or an HTTP-date (IMF-fixdate, RFC 850 or asctime),
 * relative to now_unix_ms (wall clock, as the date is). Returns the delay in ms (0 for a date in
 * the past), or -1 when the value is not one of those forms.
 */
int64_t transport__parse_retry_after(const char *value, int64_t now_unix_ms);

/* --- headers --- */

/*
 * Append "name: value" for each header (checked with transport__check_header()) to *list. 0,
 * -EINVAL (err names the header, never its value) or -ENOMEM; on failure *list keeps what was
 * appended before.
 */
int transport__append_headers(struct curl_slist **list, const struct export_header *h, size_t n,
			      char *err, size_t errlen);

/* Free a header list, first scrubbing its lines: they hold tokens. NULL is fine. */
void transport__free_headers(struct curl_slist *list);

/* A debug line "<who>: request headers: a, b, c": names only, values are secrets. */
void transport__log_header_names(const char *who, const struct export_header *h, size_t n);

/* --- libcurl --- */

/*
 * The options every request of an endpoint shares: TLS verification on unless cfg->insecure,
 * cfg->ca_file, cfg->user_agent, cfg->timeout_ms, http/https only, no signals, TCP keep-alive,
 * errbuf (CURL_ERROR_SIZE bytes) for libcurl's messages, and a progress callback that aborts
 * the transfer once t's deadline passes. 0 or -EINVAL.
 */
int transport__curl_setup(CURL *h, const struct endpoint_config *cfg, struct transport *t,
			  char *errbuf);

/*
 * Fill res for a transfer that got no HTTP answer: SEND_RETRY for connection failures, timeouts
 * and the like; SEND_DROP for what cannot get better by retrying (a malformed URL, an
 * unsupported protocol). code stays 0.
 */
void transport__curl_failure(struct send_result *res, const struct transport *t, CURLcode rc,
			     const char *errbuf);

/* --- bodies --- */

/* A request body gzipped (RFC 1952) into a malloc'ed *out: gzip__deflate(). 0, -ENOMEM or -EIO. */
int transport__gzip(const void *in, size_t len, uint8_t **out, size_t *out_len);

#endif /* HOSTPROF_TRANSPORT_CURL_H */

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

#include "export/transport_impl.h"

/*
 * What both transports hold, embedded first in each so that &c.base is the transport: one easy
 * handle for the transport's life (its connection cache keeps the connection between sends),
 * the request headers, the description and libcurl's message of the last failure.
 */
struct curl_transport {
	struct transport base;
	CURL *curl;
	struct curl_slist *headers; /* holds secrets: scrubbed before it is freed */
	char *desc;		    /* transport__describe(): no credentials */
	bool gzip;		    /* compress request bodies */
	char errbuf[CURL_ERROR_SIZE];
};

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

/* Append one "name: value" line the transport sets itself to *list. 0 or -ENOMEM (*list kept). */
int transport__append_line(struct curl_slist **list, const char *line);
/* Append the n lines, skipping the NULL ones (those that do not apply). 0 or -ENOMEM. */
int transport__append_lines(struct curl_slist **list, const char *const *lines, size_t n);

/* Whether name is one of the n names, in either case: headers a transport keeps to itself. */
bool transport__header_in(const char *name, const char *const *names, size_t n);

/* A debug line "<who>: request headers: a, b, c": names only, values are secrets. */
void transport__log_header_names(const char *who, const struct export_header *h, size_t n);

/* --- response headers --- */

/* A response header line as libcurl hands it over, split: not NUL-terminated, not copied. */
struct header_line {
	const char *name;
	size_t name_len;
	const char *value; /* without the blanks around it and the line end */
	size_t value_len;
};

/* Split line (len bytes); false for a line without a name: a status line, a block's end. */
bool transport__split_header(const char *line, size_t len, struct header_line *h);
/* Whether h is the header want (lowercase), in either case. */
bool transport__header_is(const struct header_line *h, const char *want);
/* h's value into dst (dstlen > 0), cut to fit and NUL-terminated. */
void transport__header_value(const struct header_line *h, char *dst, size_t dstlen);

/* --- libcurl --- */

/*
 * Open c's easy handle with the options every request of an endpoint shares: TLS verification
 * on unless cfg->insecure, cfg->ca_file, cfg->user_agent, cfg->timeout_ms, http/https only, no
 * signals, TCP keep-alive, c->errbuf for libcurl's messages, and a progress callback that aborts
 * the transfer once c's deadline passes. 0, -ENOMEM or -EINVAL.
 */
int transport__curl_open(struct curl_transport *c, const struct endpoint_config *cfg);

/* Free what c holds (the headers scrubbed), not c itself: each transport's delete frees it. */
void transport__curl_release(struct curl_transport *c);

/* The describe op of both transports: c->desc. */
const char *transport__curl_describe(const struct transport *t);

/*
 * Fill res for a transfer that got no HTTP answer: SEND_RETRY for connection failures, timeouts
 * and the like; SEND_DROP for what cannot get better by retrying (a malformed URL, an
 * unsupported protocol). code stays 0.
 */
void transport__curl_failure(struct send_result *res, const struct curl_transport *c, CURLcode rc);

/* --- bodies --- */

#endif /* HOSTPROF_TRANSPORT_CURL_H */

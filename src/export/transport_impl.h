/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * For transport implementations only (transport_http.c, transport_grpc.c) and their tests: the
 * base struct that each implementation embeds, its ops vtable, and the pieces both libcurl
 * transports share (status classification, Retry-After, URL check, headers, gzip, response
 * decoding, secret masking). Users of a transport include transport.h, never this.
 */
#ifndef HOSTPROF_TRANSPORT_IMPL_H
#define HOSTPROF_TRANSPORT_IMPL_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/transport.h"

struct transport_ops {
	/*
	 * Send once; res arrives zeroed with retry_after_ms = -1. Same contract as
	 * transport__send(). Should give up (SEND_RETRY) once transport__past_deadline() says so.
	 */
	int (*send)(struct transport *t, const struct export_payload *p, struct send_result *res);
	/* Free the implementation, the struct transport included. */
	void (*delete)(struct transport *t);
	/* One line without credentials; the string lives as long as the transport. */
	const char *(*describe)(const struct transport *t);
};

/*
 * Embedded as the first member of each implementation's struct (container_of style). Also how a
 * test builds a fake transport: embed it and call transport__init().
 */
struct transport {
	const struct transport_ops *ops;
	/*
	 * CLOCK_MONOTONIC ms after which a send in progress should give up, 0 = none. Set by the
	 * exporter's thread-safe shutdown while the export thread may be inside send(), hence
	 * atomic: this is how shutdown interrupts a request that has no timeout of its own.
	 */
	_Atomic int64_t deadline_ms;
};

void transport__init(struct transport *t, const struct transport_ops *ops);

/* The OTLP/gRPC transport (transport_grpc.c). NULL + errno, as transport__new(). */
struct transport *transport_grpc__new(const struct endpoint_config *cfg);
/* The HTTP transport (transport_http.c): OTLP/HTTP protobuf or JSON, Pyroscope push or ingest. */
struct transport *transport_http__new(const struct endpoint_config *cfg);

/* --- time and deadlines --- */

int64_t transport__now_ms(void); /* CLOCK_MONOTONIC */
/* deadline_mono_ms 0 clears it. May be called from any thread, also during a send. */
void transport__set_deadline(struct transport *t, int64_t deadline_mono_ms);
bool transport__past_deadline(const struct transport *t);

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

/* --- configuration checks --- */

/*
 * http:// or https:// (any case), a non-empty host, an optional numeric port (1-65535), and no
 * whitespace, control or non-ASCII characters anywhere. 0, or -EINVAL with the reason in err
 * (which never repeats a userinfo part).
 */
int transport__check_url(const char *url, char *err, size_t errlen);

/* url with any "user:password@" replaced by "***@", for logs. Always NUL-terminates buf. */
void transport__mask_url(const char *url, char *buf, size_t len);

/* A header name must be an RFC 9110 token and a value free of CR, LF and NUL. 0 or -EINVAL. */
int transport__check_header(const char *name, const char *value);

/*
 * Append "name: value" for each header (validated as above) to *list. 0, -EINVAL (err names the
 * header, never its value) or -ENOMEM; on failure *list keeps what was appended before.
 */
int transport__append_headers(struct curl_slist **list, const struct export_header *h, size_t n,
			      char *err, size_t errlen);

/* A debug line "<who>: request headers: a, b, c": names only, values are secrets. */
void transport__log_header_names(const char *who, const struct export_header *h, size_t n);

/* --- shared libcurl setup --- */

/* curl_global_init() once per process, thread-safely. 0 or -EIO. */
int transport__curl_global(void);

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

/* gzip (RFC 1952) in into a malloc'ed *out. 0, -ENOMEM or -EIO. */
int transport__gzip(const void *in, size_t len, uint8_t **out, size_t *out_len);

/*
 * Copy at most srclen bytes of a receiver's message into dst as one printable ASCII line:
 * newlines and tabs become spaces, other bytes outside 0x20..0x7e become '?', runs of spaces
 * collapse, and "..." marks a cut. Always NUL-terminates dst (dstlen > 0).
 */
void transport__sanitize(char *dst, size_t dstlen, const void *src, size_t srclen);

/*
 * An ExportProfilesServiceResponse, protobuf (json = false) or OTLP/JSON (json = true):
 * partial_success {1: rejected_profiles, 2: error_message}. An empty body, "{}" or an empty
 * partial_success mean full success: *rejected = 0 and msg = "". Returns 0, or -EBADMSG when the
 * body cannot be decoded (the caller still counts a 2xx as delivered).
 */
int transport__parse_export_response(const void *body, size_t len, bool json, int64_t *rejected,
				     char *msg, size_t msglen);

/*
 * A google.rpc.Status {1: code, 2: message, 3: details (Any)}. *retry_delay_ms (may be NULL)
 * gets the delay of a google.rpc.RetryInfo among the details, or -1 when there is none. Returns
 * 0 or -EBADMSG.
 */
int transport__parse_rpc_status(const void *body, size_t len, int32_t *code, char *msg,
				size_t msglen, int64_t *retry_delay_ms);

#endif /* HOSTPROF_TRANSPORT_IMPL_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Transports: one endpoint each, sending one encoded payload per call, and saying whether the
 * receiver took it, wants it again later, or refused it for good. No queueing or retrying here:
 * that is export.c's. Implementations: transport_http.c (OTLP/HTTP, Pyroscope push and ingest)
 * and transport_grpc.c (OTLP/gRPC over HTTP/2), both on libcurl (transport_curl.c). This is the
 * whole interface for their users; transport_impl.h is for the implementations alone.
 */
#ifndef HOSTPROF_TRANSPORT_H
#define HOSTPROF_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/export_protocol.h"
#include "formats/payload.h"

struct export_header {
	char *name;
	char *value; /* a secret as far as logs are concerned: never printed */
};

/* Where and how to send. Strings are owned by whoever filled the struct. */
struct endpoint_config {
	enum export_protocol protocol;
	char *url;
	struct export_header *headers;
	size_t nr_headers;
	bool gzip;		/* compress request bodies (Content-Encoding / grpc-encoding) */
	long timeout_ms;	/* per request; 0 = no limit */
	bool insecure;		/* https without certificate verification (never the default) */
	const char *ca_file;	/* PEM bundle to verify the receiver with; NULL = system store */
	const char *user_agent; /* "hostprof/VERSION" */
};

enum send_outcome {
	SEND_OK = 0, /* delivered (a partial success is delivered too: never resent) */
	SEND_RETRY,  /* not delivered, may succeed later: 429/502/503/504, connection failure,
		      * timeout, the retryable gRPC codes */
	SEND_DROP,   /* refused for good (other 4xx/5xx, non-retryable gRPC codes) */
};

struct send_result {
	enum send_outcome outcome;
	long code;		/* HTTP status, or gRPC status code; 0 when no answer came */
	int64_t retry_after_ms; /* the receiver's Retry-After / RetryInfo, or -1 */
	int64_t rejected;	/* partial success: profiles the receiver rejected, else 0 */
	char message[512];	/* what the receiver or libcurl said, for one log line */
};

struct transport;

/* Returns NULL and sets errno (EINVAL for a bad URL or protocol, with the reason logged). */
struct transport *transport__new(const struct endpoint_config *cfg);
void transport__delete(struct transport *t);
/* Send once. Returns 0 with *res filled in (whatever the outcome), or -errno on a local
 * failure (out of memory). Blocks for at most the configured timeout. */
int transport__send(struct transport *t, const struct export_payload *p, struct send_result *res);
/* "OTLP/HTTP https://host:4318/v1development/profiles": no credentials, no headers. */
const char *transport__describe(const struct transport *t);
/*
 * From now on, a send in progress gives up once CLOCK_MONOTONIC passes deadline_mono_ms (ms), and
 * a new one does not start; 0 clears it. May be called from any thread, also during a send: this
 * is how shutdown interrupts a request that has no timeout of its own.
 */
void transport__set_deadline(struct transport *t, int64_t deadline_mono_ms);

/*
 * A header name must be an RFC 9110 token and a value free of CR, LF and NUL. 0 or -EINVAL.
 * The transports check every configured header; configuration checks them first to say so early.
 */
int transport__check_header(const char *name, const char *value);

#endif /* HOSTPROF_TRANSPORT_H */

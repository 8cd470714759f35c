/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where to export, from flags and the OpenTelemetry environment: builds the endpoint_config that
 * transport__new() takes. Precedence, per setting: flag > OTEL_EXPORTER_OTLP_PROFILES_* >
 * OTEL_EXPORTER_OTLP_*. Headers merge per name in that same order. An empty variable counts as
 * unset, as the OpenTelemetry configuration spec says.
 */
#ifndef HOSTPROF_OTLP_CONFIG_H
#define HOSTPROF_OTLP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "export/transport.h"

#define OTLP_DEFAULT_TIMEOUT_MS 10000
#define OTLP_PROFILES_PATH "/v1development/profiles"

/* The --otlp-* flags; NULL/0 for "not given". Strings are only read during the call. */
struct otlp_flags {
	const char *endpoint;	 /* as is; an HTTP URL without a path gets OTLP_PROFILES_PATH */
	const char *protocol;	 /* http/protobuf, http/json, grpc */
	const char *compression; /* gzip, none */
	const char *timeout_ms;	 /* integer ms; 0 = no limit */
	const char *ca_file;
	const char *const *headers; /* "name=value" each, taken literally (no percent-decoding) */
	size_t nr_headers;
	/* Headers below the environment (the agent's config file): a variable's header of the
	 * same name replaces one of these. Same form as headers. */
	const char *const *base_headers;
	size_t nr_base_headers;
	bool insecure; /* true forces it; false leaves it to the environment */
};

/*
 * Fill *out (zeroed first; free it with otlp_config__release()). get_env looks variables up
 * (getenv when NULL; injectable for tests). Returns 0; -ENOENT when no endpoint is configured
 * at all (OTLP export off, *out left empty); -EINVAL or -ENOMEM with the reason in err, which
 * names the flag or variable at fault and never quotes a header value.
 */
int otlp_config__resolve(const struct otlp_flags *f, const char *(*get_env)(const char *name),
			 struct endpoint_config *out, char *err, size_t errlen);

/*
 * Pyroscope: url is the base (e.g. https://host/pyroscope), api "push" (default when NULL) or
 * "ingest", headers "name=value" each. No request compression: the pprof inside is gzipped
 * already. Same returns as above; -ENOENT when url is NULL or empty.
 */
int otlp_config__resolve_pyroscope(const char *url, const char *api, const char *const *headers,
				   size_t nr_headers, struct endpoint_config *out, char *err,
				   size_t errlen);

/*
 * The first header that looks like a credential (its name holds auth, token, key, secret,
 * password or cookie: Authorization, X-Api-Key, x-oneuptime-token, ...) when the endpoint is
 * plain http://, where anyone on the path reads it; NULL otherwise. Names only: values are
 * never looked at.
 */
const char *otlp_config__cleartext_credential(const struct endpoint_config *c);

/* Free what a resolver allocated (header values scrubbed first) and zero *c. NULL is fine. */
void otlp_config__release(struct endpoint_config *c);

/*
 * One line for logs and --dry-run style output: protocol, URL (userinfo masked), compression,
 * timeout, TLS, headers with their values as "***". Returns 0, or -ENOSPC when it was cut
 * (buf is NUL-terminated either way).
 */
int otlp_config__describe(const struct endpoint_config *c, char *buf, size_t len);

#endif /* HOSTPROF_OTLP_CONFIG_H */

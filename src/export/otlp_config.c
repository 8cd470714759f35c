// SPDX-License-Identifier: BSD-2-Clause
/*
 * Endpoint configuration from flags and the OTEL_EXPORTER_OTLP_* environment. Pure apart from
 * the injected get_env and a few log lines, so it is tested on tables of variables.
 *
 * Header values are secrets (tokens): no message here quotes one, and release() scrubs them.
 */
#include "export/otlp_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hex.h"
#include "base/log.h"
#include "base/url.h"
#include "base/vec.h"
#include "export/transport.h"

#ifdef HOSTPROF_VERSION
#define USER_AGENT "hostprof/" HOSTPROF_VERSION
#else
#define USER_AGENT "hostprof"
#endif

#define ENV_PREFIX "OTEL_EXPORTER_OTLP_"
#define ENV_PROFILES_PREFIX "OTEL_EXPORTER_OTLP_PROFILES_"

struct resolver {
	const char *(*get_env)(const char *name);
	char *err;
	size_t errlen;
};

/* A setting's value and where it came from, for messages. */
struct setting {
	const char *value;
	char source[64];
};

static const char *process_env(const char *name)
{
	return getenv(name);
}

static const char *env(const struct resolver *r, const char *name)
{
	const char *v = r->get_env(name);

	return v && *v ? v : NULL;
}

/* flag > OTEL_EXPORTER_OTLP_PROFILES_<what> > OTEL_EXPORTER_OTLP_<what> */
static struct setting pick(const struct resolver *r, const char *flag_value, const char *flag_name,
			   const char *what)
{
	struct setting s = {0};
	char name[64];

	if (flag_value && *flag_value) {
		s.value = flag_value;
		snprintf(s.source, sizeof(s.source), "%s", flag_name);
		return s;
	}
	snprintf(name, sizeof(name), ENV_PROFILES_PREFIX "%s", what);
	s.value = env(r, name);
	if (!s.value) {
		snprintf(name, sizeof(name), ENV_PREFIX "%s", what);
		s.value = env(r, name);
	}
	if (s.value)
		snprintf(s.source, sizeof(s.source), "%s", name);
	return s;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

struct header_set {
	struct export_header *h;
	size_t n, cap;
};

static void scrub_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* n headers and their array; the values scrubbed. */
static void headers_free(struct export_header *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		scrub_free(h[i].value);
	}
	free(h);
}

static void header_set_free(struct header_set *hs)
{
	headers_free(hs->h, hs->n);
	memset(hs, 0, sizeof(*hs));
}

/* Add or replace (names compare without case, as HTTP's do). */
static int header_set_put(struct header_set *hs, const char *name, const char *value)
{
	char *n = NULL, *v = NULL;

	for (size_t i = 0; i < hs->n; i++) {
		if (strcasecmp(hs->h[i].name, name) == 0) {
			v = strdup(value);
			if (!v)
				return -ENOMEM;
			scrub_free(hs->h[i].value);
			hs->h[i].value = v;
			return 0;
		}
	}
	if (VEC_RESERVE(hs->h, hs->cap, hs->n + 1))
		return -ENOMEM;
	n = strdup(name);
	v = strdup(value);
	if (!n || !v) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	hs->h[hs->n].name = n;
	hs->h[hs->n].value = v;
	hs->n++;
	return 0;
}

/*
 * One "name=value" entry. Messages name the source and the entry's position, and the header
 * name only once it is known to be a clean token: a mangled entry may be a token itself.
 */
static int header_entry(struct resolver *r, struct header_set *hs, char *entry, bool decode,
			const char *source, size_t index)
{
	char *eq = strchr(entry, '='), *name, *value;
	int rc;

	if (!eq) {
		snprintf(r->err, r->errlen, "%s: entry #%zu is not name=value", source, index);
		return -EINVAL;
	}
	*eq = '\0';
	name = trim(entry);
	value = trim(eq + 1);
	if (!*name || transport__check_header(name, "")) {
		snprintf(r->err, r->errlen,
			 "%s: entry #%zu: the header name is empty or not a valid token (want "
			 "name=value)",
			 source, index);
		return -EINVAL;
	}
	if ((decode && hex__percent_decode_in_place(value)) ||
	    transport__check_header(name, value)) {
		snprintf(r->err, r->errlen, "%s: header '%s': its value has a line break or NUL",
			 source, name);
		return -EINVAL;
	}
	rc = header_set_put(hs, name, value);
	if (rc)
		snprintf(r->err, r->errlen, "out of memory");
	return rc;
}

/* W3C-baggage-like "k1=v1,k2=v2" with percent-encoded values; empty members are skipped. */
static int headers_from_env(struct resolver *r, struct header_set *hs, const char *var)
{
	const char *v = env(r, var);
	char *copy, *save = NULL, *entry;
	size_t index = 0;
	int rc = 0;

	if (!v)
		return 0;
	copy = strdup(v);
	if (!copy) {
		snprintf(r->err, r->errlen, "out of memory");
		return -ENOMEM;
	}
	for (entry = strtok_r(copy, ",", &save); entry; entry = strtok_r(NULL, ",", &save)) {
		index++;
		if (!*trim(entry))
			continue;
		rc = header_entry(r, hs, entry, true, var, index);
		if (rc)
			break;
	}
	scrub_free(copy);
	return rc;
}

static int headers_from_flags(struct resolver *r, struct header_set *hs, const char *const *flags,
			      size_t n, const char *flag_name)
{
	for (size_t i = 0; i < n; i++) {
		char *copy;
		int rc;

		if (!flags[i])
			continue;
		copy = strdup(flags[i]);
		if (!copy) {
			snprintf(r->err, r->errlen, "out of memory");
			return -ENOMEM;
		}
		rc = header_entry(r, hs, copy, false, flag_name, i + 1);
		scrub_free(copy);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_protocol(struct resolver *r, const struct setting *s, enum export_protocol *out)
{
	if (!s->value || !strcasecmp(s->value, "http/protobuf"))
		*out = EXPORT_OTLP_HTTP_PROTOBUF;
	else if (!strcasecmp(s->value, "http/json"))
		*out = EXPORT_OTLP_HTTP_JSON;
	else if (!strcasecmp(s->value, "grpc"))
		*out = EXPORT_OTLP_GRPC;
	else {
		snprintf(r->err, r->errlen,
			 "%s: unknown protocol '%.40s' (accepted: http/protobuf, http/json, grpc)",
			 s->source, s->value);
		return -EINVAL;
	}
	return 0;
}

static int parse_compression(struct resolver *r, const struct setting *s, bool *gzip)
{
	if (!s->value || !strcasecmp(s->value, "gzip"))
		*gzip = true;
	else if (!strcasecmp(s->value, "none"))
		*gzip = false;
	else {
		snprintf(r->err, r->errlen,
			 "%s: unknown compression '%.40s' (accepted: gzip, none)", s->source,
			 s->value);
		return -EINVAL;
	}
	return 0;
}

static int parse_timeout(struct resolver *r, const struct setting *s, long *ms)
{
	const char *p = s->value;
	bool neg = false;
	long v = 0;

	*ms = OTLP_DEFAULT_TIMEOUT_MS;
	if (!p)
		return 0;
	while (*p == ' ')
		p++;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > 1000L * 1000 * 1000) /* beyond ~11 days: no limit in practice */
			goto bad;
		v = v * 10 + (*p - '0');
	}
	while (*p == ' ')
		p++;
	if (*p)
		goto bad;
	if (neg && v) {
		log_warn("%s: a negative timeout (%s) means nothing: using the default %d ms",
			 s->source, s->value, OTLP_DEFAULT_TIMEOUT_MS);
		return 0;
	}
	*ms = v;
	return 0;
bad:
	snprintf(r->err, r->errlen,
		 "%s: '%.40s' is not a timeout in milliseconds (an integer; 0 = no limit)",
		 s->source, s->value);
	return -EINVAL;
}

/* "true"/"false", any case; anything else is false with a warning, as OTel SDKs do. */
static bool parse_bool(const struct setting *s)
{
	if (!s->value)
		return false;
	if (!strcasecmp(s->value, "true"))
		return true;
	if (strcasecmp(s->value, "false"))
		log_warn("%s: '%.40s' is neither true nor false: taken as false", s->source,
			 s->value);
	return false;
}

static bool has_scheme(const char *url)
{
	return strstr(url, "://") != NULL;
}

/* The path of an http(s) URL: "" when there is none. */
static const char *url_path(const char *url)
{
	const char *p = strstr(url, "://");

	p = p ? p + 3 : url;
	return p + strcspn(p, "/?#");
}

static int resolve_url(struct resolver *r, const struct setting *ep, bool from_base, bool from_flag,
		       enum export_protocol proto, bool insecure, char **out)
{
	char masked[256], why[128];
	const char *path;

	*out = NULL;
	url__mask(ep->value, masked, sizeof(masked));
	/* Check what was given before adding to it, so that the message shows the user's URL. */
	if (proto != EXPORT_OTLP_GRPC && url__check_http(ep->value, why, sizeof(why))) {
		snprintf(r->err, r->errlen, "%s: '%s': %s", ep->source, masked, why);
		return -EINVAL;
	}
	if (proto == EXPORT_OTLP_GRPC) {
		/* gRPC endpoints are host:port; OTel reads a missing scheme through INSECURE. */
		if (!has_scheme(ep->value)) {
			if (asprintf(out, "%s://%s", insecure ? "http" : "https", ep->value) < 0)
				goto nomem;
		} else {
			size_t len = strlen(ep->value);

			/* a lone trailing slash: the method path is appended after it */
			if (len && ep->value[len - 1] == '/' && !strcmp(url_path(ep->value), "/"))
				len--;
			*out = strndup(ep->value, len);
			if (!*out)
				goto nomem;
		}
	} else {
		path = url_path(ep->value);
		if (from_base) {
			*out = url__join(ep->value, OTLP_PROFILES_PATH);
		} else if (from_flag && (!*path || !strcmp(path, "/"))) {
			*out = url__join(ep->value, OTLP_PROFILES_PATH);
			if (*out) {
				char final[sizeof(masked)];

				url__mask(*out, final, sizeof(final));
				log_info("%s has no path: sending to %s (the OTLP default path)",
					 ep->source, final);
			}
		} else {
			*out = strdup(ep->value);
		}
		if (!*out)
			goto nomem;
	}
	if (url__check_http(*out, why, sizeof(why))) {
		snprintf(r->err, r->errlen, "%s: '%s': %s", ep->source, masked, why);
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
nomem:
	snprintf(r->err, r->errlen, "out of memory");
	return -ENOMEM;
}

int otlp_config__resolve(const struct otlp_flags *f, const char *(*get_env)(const char *name),
			 struct endpoint_config *out, char *err, size_t errlen)
{
	static const struct otlp_flags no_flags;
	struct resolver r = {get_env ? get_env : process_env, err, errlen};
	struct header_set hs = {0};
	struct setting ep, s;
	bool from_base = false, plaintext;
	int rc;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	if (!f)
		f = &no_flags;

	ep = pick(&r, f->endpoint, "--otlp-endpoint", "ENDPOINT");
	/* Only the generic variable is a base URL that the signal's path is appended to. */
	from_base = ep.value && !strcmp(ep.source, ENV_PREFIX "ENDPOINT");
	if (!ep.value) {
		snprintf(err, errlen, "no OTLP endpoint configured");
		return -ENOENT;
	}

	s = pick(&r, f->protocol, "--otlp-protocol", "PROTOCOL");
	rc = parse_protocol(&r, &s, &out->protocol);
	if (rc)
		goto fail;
	s = pick(&r, f->compression, "--otlp-compression", "COMPRESSION");
	rc = parse_compression(&r, &s, &out->gzip);
	if (rc)
		goto fail;
	s = pick(&r, f->timeout_ms, "--otlp-timeout", "TIMEOUT");
	rc = parse_timeout(&r, &s, &out->timeout_ms);
	if (rc)
		goto fail;
	/*
	 * OTEL_EXPORTER_OTLP_INSECURE only says which scheme a scheme-less gRPC endpoint gets (the
	 * OTel spec's meaning). Turning certificate verification off takes the explicit
	 * --otlp-insecure flag: a variable inherited from an environment must not do it silently.
	 */
	s = pick(&r, NULL, NULL, "INSECURE");
	plaintext = parse_bool(&s);
	out->insecure = f && f->insecure;
	s = pick(&r, f->ca_file, "--otlp-ca-file", "CERTIFICATE");
	if (s.value) {
		out->ca_file = strdup(s.value);
		if (!out->ca_file) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	rc = resolve_url(&r, &ep, from_base, !strcmp(ep.source, "--otlp-endpoint"), out->protocol,
			 out->insecure || plaintext, &out->url);
	if (rc)
		goto fail;

	/* Per name: a config file's, then generic, then PROFILES_, then flags, each overriding the
	 * one before. */
	rc = headers_from_flags(&r, &hs, f->base_headers, f->nr_base_headers, "config file header");
	if (!rc)
		rc = headers_from_env(&r, &hs, ENV_PREFIX "HEADERS");
	if (!rc)
		rc = headers_from_env(&r, &hs, ENV_PROFILES_PREFIX "HEADERS");
	if (!rc)
		rc = headers_from_flags(&r, &hs, f->headers, f->nr_headers, "--otlp-header");
	if (rc) {
		header_set_free(&hs);
		goto fail;
	}
	out->headers = hs.h;
	out->nr_headers = hs.n;
	out->user_agent = USER_AGENT;
	return 0;
fail:
	otlp_config__release(out);
	return rc;
}

int otlp_config__resolve_pyroscope(const char *url, const char *api, const char *const *headers,
				   size_t nr_headers, struct endpoint_config *out, char *err,
				   size_t errlen)
{
	struct resolver r = {NULL, err, errlen};
	struct header_set hs = {0};
	char masked[256], why[128];
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	if (!url || !*url) {
		snprintf(err, errlen, "no Pyroscope URL configured");
		return -ENOENT;
	}
	if (!api || !*api || !strcasecmp(api, "push")) {
		out->protocol = EXPORT_PYROSCOPE_PUSH;
	} else if (!strcasecmp(api, "ingest")) {
		out->protocol = EXPORT_PYROSCOPE_INGEST;
	} else {
		snprintf(err, errlen,
			 "--pyroscope-api: unknown API '%.40s' (accepted: push, ingest)", api);
		return -EINVAL;
	}
	url__mask(url, masked, sizeof(masked));
	if (url__check_http(url, why, sizeof(why))) {
		snprintf(err, errlen, "--pyroscope-url: '%s': %s", masked, why);
		return -EINVAL;
	}
	if (strpbrk(url, "?#")) {
		snprintf(
			err, errlen,
			"--pyroscope-url: '%s': give the base URL without a query (the API path is "
			"appended)",
			masked);
		return -EINVAL;
	}
	len = strlen(url);
	while (len && url[len - 1] == '/')
		len--;
	out->url = strndup(url, len);
	if (!out->url) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = headers_from_flags(&r, &hs, headers, nr_headers, "--pyroscope-header");
	if (rc) {
		header_set_free(&hs);
		otlp_config__release(out);
		return rc;
	}
	out->headers = hs.h;
	out->nr_headers = hs.n;
	out->gzip = false;
	out->timeout_ms = OTLP_DEFAULT_TIMEOUT_MS;
	out->user_agent = USER_AGENT;
	return 0;
}

static bool credential_name(const char *name)
{
	static const char *const words[] = {"auth", "token", "key", "secret", "password", "cookie"};
	size_t n = strlen(name);

	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
		for (size_t i = 0; i + strlen(words[w]) <= n; i++)
			if (!strncasecmp(name + i, words[w], strlen(words[w])))
				return true;
	return false;
}

const char *otlp_config__cleartext_credential(const struct endpoint_config *c)
{
	if (!c || !c->url || strncasecmp(c->url, "http://", 7))
		return NULL;
	for (size_t i = 0; i < c->nr_headers; i++)
		if (credential_name(c->headers[i].name))
			return c->headers[i].name;
	return NULL;
}

void otlp_config__release(struct endpoint_config *c)
{
	if (!c)
		return;
	headers_free(c->headers, c->nr_headers);
	free(c->url);
	free((char *)c->ca_file);
	memset(c, 0, sizeof(*c));
}

int otlp_config__describe(const struct endpoint_config *c, char *buf, size_t len)
{
	char masked[512];
	size_t off = 0;
	int w;

	if (!len)
		return -ENOSPC;
	url__mask(c->url, masked, sizeof(masked));
#define PUT(...)                                                                                   \
	do {                                                                                       \
		w = snprintf(buf + off, len - off, __VA_ARGS__);                                   \
		if (w < 0 || (size_t)w >= len - off)                                               \
			return -ENOSPC;                                                            \
		off += (size_t)w;                                                                  \
	} while (0)
	buf[0] = '\0';
	PUT("%s %s, compression %s, timeout ", export_protocol__setting(c->protocol), masked,
	    c->gzip ? "gzip" : "none");
	if (c->timeout_ms)
		PUT("%ld ms", c->timeout_ms);
	else
		PUT("none");
	PUT(", TLS verification %s", c->insecure ? "OFF" : "on");
	if (c->ca_file)
		PUT(", CA file %s", c->ca_file);
	PUT(", headers:");
	if (!c->nr_headers)
		PUT(" none");
	for (size_t i = 0; i < c->nr_headers; i++)
		PUT("%s %s=***", i ? "," : "", c->headers[i].name);
#undef PUT
	return 0;
}

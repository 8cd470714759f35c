// SPDX-License-Identifier: BSD-2-Clause
/*
 * OTLP/gRPC over libcurl's HTTP/2: one unary ProfilesService/Export call per send. gRPC needs
 * nothing curl lacks: a POST with a 5-byte frame in front of the message, and a status that
 * arrives in the trailers (or, for a "trailers-only" answer, in the headers), both of which curl
 * hands to the header callback; what the answer means is read by grpc_answer.h. h2c with prior
 * knowledge for http://, ALPN for https://.
 *
 * One curl handle per transport, reused, so that the HTTP/2 connection stays open between
 * exports (but see grpc_curl() for h2c on libcurl 7.88); sends on one transport are serialized
 * by the export thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base/gzip.h"
#include "base/log.h"
#include "base/url.h"
#include "export/grpc_answer.h"
#include "export/transport_curl.h"
#include "export/transport_impl.h"

#define GRPC_METHOD_PATH                                                                           \
	"/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

struct grpc_transport {
	struct curl_transport c; /* first: the ops get &c.base */
};

/* The request body: the frame header, then the message, handed to curl without a copy. */
struct grpc_upload {
	uint8_t hdr[GRPC_FRAME_HDR];
	const uint8_t *msg;
	size_t total; /* GRPC_FRAME_HDR + message length */
	size_t pos;
};

/* What one call brought back, and whether keeping it ran out of memory. */
struct grpc_call {
	struct grpc_answer answer;
	bool oom;
};

static struct grpc_transport *to_grpc(struct transport *t)
{
	return (struct grpc_transport *)t;
}

/* --- the request --- */

static size_t upload_read(char *buf, size_t size, size_t nitems, void *arg)
{
	struct grpc_upload *u = arg;
	size_t room = size * nitems, n = 0;

	while (n < room && u->pos < u->total) {
		size_t chunk;

		if (u->pos < GRPC_FRAME_HDR) {
			chunk = GRPC_FRAME_HDR - u->pos;
			if (chunk > room - n)
				chunk = room - n;
			memcpy(buf + n, u->hdr + u->pos, chunk);
		} else {
			chunk = u->total - u->pos;
			if (chunk > room - n)
				chunk = room - n;
			memcpy(buf + n, u->msg + (u->pos - GRPC_FRAME_HDR), chunk);
		}
		n += chunk;
		u->pos += chunk;
	}
	return n;
}

/* curl rewinds when it resends on a fresh connection after a reused one turned out dead. */
static int upload_seek(void *arg, curl_off_t offset, int origin)
{
	struct grpc_upload *u = arg;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > u->total)
		return CURL_SEEKFUNC_FAIL;
	u->pos = (size_t)offset;
	return CURL_SEEKFUNC_OK;
}

/* --- the answer: libcurl's callbacks hand it to grpc_answer.h --- */

/* A line of the headers or of the trailers. */
static size_t on_header(char *buf, size_t size, size_t nitems, void *arg)
{
	struct grpc_call *call = arg;
	size_t len = size * nitems;

	grpc_answer__header(&call->answer, buf, len);
	return len;
}

static size_t on_body(char *buf, size_t size, size_t nitems, void *arg)
{
	struct grpc_call *call = arg;
	size_t len = size * nitems;

	if (grpc_answer__body(&call->answer, buf, len)) {
		call->oom = true;
		return CURL_WRITEFUNC_ERROR;
	}
	return len;
}

/* What curl knows of the answer besides its lines and body, then grpc_answer__read(). */
static void read_answer(struct grpc_transport *t, const struct grpc_answer *a,
			struct send_result *res)
{
	long http = 0, version = 0;

	curl_easy_getinfo(t->c.curl, CURLINFO_RESPONSE_CODE, &http);
	curl_easy_getinfo(t->c.curl, CURLINFO_HTTP_VERSION, &version);
	grpc_answer__read(a, http, version == CURL_HTTP_VERSION_2_0, res);
}

/* --- the transport --- */

static int grpc_send(struct transport *base, const struct export_payload *p,
		     struct send_result *res)
{
	struct grpc_transport *t = to_grpc(base);
	struct grpc_upload up = {0};
	struct grpc_call call = {0};
	uint8_t *packed = NULL;
	size_t len = p->len;
	CURLcode rc;
	int err = 0;

	up.msg = p->body;
	if (t->c.gzip) {
		err = gzip__deflate(p->body, p->len, &packed, &len);
		if (err)
			return err;
		up.msg = packed;
	}
	if (len > UINT32_MAX) {
		res->outcome = SEND_DROP;
		snprintf(res->message, sizeof(res->message),
			 "not sent: a %zu byte message is over gRPC's 4 GiB frame limit", len);
		goto out;
	}
	up.hdr[0] = t->c.gzip ? 1 : 0; /* the frame's compressed flag */
	up.hdr[1] = (uint8_t)(len >> 24);
	up.hdr[2] = (uint8_t)(len >> 16);
	up.hdr[3] = (uint8_t)(len >> 8);
	up.hdr[4] = (uint8_t)len;
	up.total = GRPC_FRAME_HDR + len;

	t->c.errbuf[0] = '\0';
	curl_easy_setopt(t->c.curl, CURLOPT_READDATA, &up);
	curl_easy_setopt(t->c.curl, CURLOPT_SEEKDATA, &up);
	curl_easy_setopt(t->c.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)up.total);
	curl_easy_setopt(t->c.curl, CURLOPT_HEADERDATA, &call);
	curl_easy_setopt(t->c.curl, CURLOPT_WRITEDATA, &call);
	rc = curl_easy_perform(t->c.curl);
	/* The handle outlives this frame: leave it no pointers into it. */
	curl_easy_setopt(t->c.curl, CURLOPT_READDATA, NULL);
	curl_easy_setopt(t->c.curl, CURLOPT_SEEKDATA, NULL);
	curl_easy_setopt(t->c.curl, CURLOPT_HEADERDATA, NULL);
	curl_easy_setopt(t->c.curl, CURLOPT_WRITEDATA, NULL);

	if (rc == CURLE_OUT_OF_MEMORY || call.oom) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * A receiver may answer (say UNAUTHENTICATED) and reset the stream before it has read the
	 * whole request, which curl reports as an error: the status it sent still counts.
	 */
	if (rc == CURLE_OK || call.answer.has_status)
		read_answer(t, &call.answer, res);
	else
		transport__curl_failure(res, &t->c, rc);
	log_debug("%s: %zu byte message, %zu sent: %s", t->c.desc, p->len, len,
		  res->outcome == SEND_OK      ? "delivered"
		  : res->outcome == SEND_RETRY ? "to retry"
					       : "refused");
out:
	free(packed);
	grpc_answer__release(&call.answer);
	return err;
}

static void grpc_delete(struct transport *base)
{
	struct grpc_transport *t = to_grpc(base);

	if (!t)
		return;
	/* It holds the configured headers' values: scrubbed, not just freed. */
	transport__curl_release(&t->c);
	free(t);
}

static const struct transport_ops grpc_ops = {
	.send = grpc_send,
	.delete = grpc_delete,
	.describe = transport__curl_describe,
};

/*
 * The method URL: cfg->url is scheme://host:port, at most with a trailing '/'. A longer path is
 * refused rather than kept, since gRPC routes on the method path alone: "…:4317/v1development/
 * profiles" is an OTLP/HTTP URL given to the wrong protocol.
 */
static int grpc_url(struct grpc_transport *t, const struct endpoint_config *cfg, char **method)
{
	char err[256], masked[512];
	char *path = NULL, *query = NULL, *fragment = NULL, *url = NULL;
	CURLU *u = NULL;
	size_t n;
	int ret = -EINVAL;

	if (url__check_http(cfg->url, err, sizeof(err)) < 0) {
		log_error("OTLP/gRPC endpoint: %s", err);
		return -EINVAL;
	}
	url__mask(cfg->url, masked, sizeof(masked));
	u = curl_url();
	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, cfg->url, 0) != CURLUE_OK) {
		log_error("OTLP/gRPC endpoint '%s': not a URL", masked);
		goto out;
	}
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &fragment, 0);
	if ((path && strcmp(path, "/") != 0 && path[0]) || query || fragment) {
		log_error("OTLP/gRPC endpoint '%s': give scheme://host:port only; the method path "
			  "is fixed (is this an OTLP/HTTP URL?)",
			  masked);
		goto out;
	}
	if (curl_url_set(u, CURLUPART_PATH, GRPC_METHOD_PATH, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
		ret = -ENOMEM;
		goto out;
	}
	*method = strdup(url);
	n = strlen(masked);
	while (n && masked[n - 1] == '/')
		masked[--n] = '\0';
	if (asprintf(&t->c.desc, "OTLP/gRPC %s", masked) < 0)
		t->c.desc = NULL;
	ret = *method && t->c.desc ? 0 : -ENOMEM;
out:
	curl_free(url);
	curl_free(fragment);
	curl_free(query);
	curl_free(path);
	curl_url_cleanup(u);
	return ret;
}

/* Names gRPC or HTTP/2 itself sets or forbids: a user header of that name would break the call. */
static bool header_reserved(const char *name)
{
	static const char *const reserved[] = {
		"content-type",	  "te",	     "user-agent",	  "host",   "connection",
		"keep-alive",	  "upgrade", "transfer-encoding", "expect", "proxy-connection",
		"content-length",
	};

	return name[0] == ':' || strncmp(name, "grpc-", 5) == 0 ||
	       transport__header_in(name, reserved, sizeof(reserved) / sizeof(reserved[0]));
}

/* The receiver's side of our timeout, so it stops working on a call we gave up on. */
static void grpc_timeout(long timeout_ms, char *line, size_t len)
{
	if (timeout_ms <= 99999999)
		snprintf(line, len, "grpc-timeout: %ldm", timeout_ms);
	else
		snprintf(line, len, "grpc-timeout: %ldS",
			 timeout_ms / 1000 > 99999999 ? 99999999L : (timeout_ms + 999) / 1000);
}

static int grpc_headers(struct grpc_transport *t, const struct endpoint_config *cfg)
{
	struct export_header *lower = NULL;
	char timeout[64], err[256];
	size_t i;
	int ret;

	grpc_timeout(cfg->timeout_ms, timeout, sizeof(timeout));
	/* "Accept:" and "Expect:" remove what curl would add on its own. */
	const char *fixed[] = {
		"content-type: application/grpc",
		"te: trailers",
		"grpc-accept-encoding: gzip",
		"Accept:",
		"Expect:",
		cfg->gzip ? "grpc-encoding: gzip" : NULL,
		cfg->timeout_ms > 0 ? timeout : NULL,
	};
	ret = transport__append_lines(&t->c.headers, fixed, sizeof(fixed) / sizeof(fixed[0]));
	if (ret)
		return ret;
	if (!cfg->nr_headers)
		return 0;

	/* HTTP/2 wants lowercase names; gRPC metadata keys are case-insensitive anyway. */
	lower = calloc(cfg->nr_headers, sizeof(*lower));
	if (!lower)
		return -ENOMEM;
	for (i = 0; i < cfg->nr_headers; i++) {
		lower[i].name = strdup(cfg->headers[i].name ? cfg->headers[i].name : "");
		lower[i].value = cfg->headers[i].value;
		if (!lower[i].name) {
			ret = -ENOMEM;
			goto out;
		}
		for (char *c = lower[i].name; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c += 'a' - 'A';
		if (header_reserved(lower[i].name)) {
			log_error("OTLP/gRPC header '%s': set by gRPC itself, cannot be given",
				  lower[i].name);
			ret = -EINVAL;
			goto out;
		}
	}
	ret = transport__append_headers(&t->c.headers, lower, cfg->nr_headers, err, sizeof(err));
	if (ret == -EINVAL)
		log_error("OTLP/gRPC: %s", err);
	if (!ret)
		transport__log_header_names(t->c.desc, lower, cfg->nr_headers);
out:
	for (i = 0; i < cfg->nr_headers; i++)
		free(lower[i].name);
	free(lower);
	return ret;
}

static int grpc_curl(struct grpc_transport *t, const struct endpoint_config *cfg,
		     const char *method)
{
	const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
	bool tls = strncasecmp(cfg->url, "https:", 6) == 0;
	CURLcode rc;
	int err;

	if (!(info->features & CURL_VERSION_HTTP2)) {
		log_error("OTLP/gRPC: libcurl %s was built without HTTP/2", info->version);
		return -EINVAL;
	}
	err = transport__curl_open(&t->c, cfg);
	if (err)
		return err;
	/* h2c needs prior knowledge: gRPC servers do not do the HTTP/1.1 Upgrade dance. */
	rc = curl_easy_setopt(t->c.curl, CURLOPT_HTTP_VERSION,
			      tls ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	/*
	 * libcurl 7.88 fails every request on a reused h2c (prior knowledge) connection with
	 * "Error in the HTTP2 framing layer" (curl issue #10634, fixed in 7.89.0 by PR #10643):
	 * there, pay for a new connection per export rather than fail every other one.
	 */
	if (rc == CURLE_OK && !tls && info->version_num < 0x075900)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_FORBID_REUSE, 1L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_URL, method);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_POST, 1L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_HTTPHEADER, t->c.headers);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_READFUNCTION, upload_read);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_SEEKFUNCTION, upload_seek);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_HEADERFUNCTION, on_header);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->c.curl, CURLOPT_WRITEFUNCTION, on_body);
	if (rc != CURLE_OK) {
		log_error("OTLP/gRPC: libcurl refused an option: %s", curl_easy_strerror(rc));
		return rc == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
	}
	return 0;
}

struct transport *transport_grpc__new(const struct endpoint_config *cfg)
{
	struct grpc_transport *t;
	char *method = NULL;
	int err;

	/* transport__new() has checked cfg and its URL; calloc() sets errno. */
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	transport__init(&t->c.base, &grpc_ops);
	t->c.gzip = cfg->gzip;

	err = grpc_url(t, cfg, &method);
	if (!err)
		err = grpc_headers(t, cfg);
	if (!err)
		err = grpc_curl(t, cfg, method);
	/* curl copied the URL. */
	free(method);
	if (err) {
		grpc_delete(&t->c.base);
		errno = -err;
		return NULL;
	}
	return &t->c.base;
}

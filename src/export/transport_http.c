// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTTP transport: OTLP/HTTP (protobuf or JSON), Pyroscope push (Connect unary) and Pyroscope
 * ingest, all one POST per payload on a libcurl easy handle that lives as long as the transport,
 * so that its connection cache keeps the connection (and its TLS session) alive between sends.
 * Only the export thread calls send(), so the handle needs no lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "base/gzip.h"
#include "base/log.h"
#include "base/log_text.h"
#include "base/url.h"
#include "export/otlp_response.h"
#include "export/rpc_status.h"
#include "export/transport_curl.h"
#include "export/transport_impl.h"

/* What we keep of a response body: enough for any partial_success or error message. */
#define RESPONSE_KEEP (64 * 1024)
/* How much of a refusal's body goes into the log line. */
#define MESSAGE_KEEP 300

struct http_transport {
	struct curl_transport c; /* first: the ops, the deadline and the handle */
	enum export_protocol protocol;
	char *url; /* the POST target; for ingest without the "?query" */

	/* the current response, reset for each send */
	uint8_t *body;
	size_t body_len;
	bool body_cut;
	char retry_after[128];
	char content_type[128];
	char location[256];
};

static struct http_transport *to_http(struct transport *t)
{
	return (struct http_transport *)t; /* c, and so c.base, is the first member */
}

static const char *request_content_type(enum export_protocol p)
{
	switch (p) {
	case EXPORT_OTLP_HTTP_JSON:
		return "application/json";
	case EXPORT_PYROSCOPE_PUSH:
		return "application/proto";
	case EXPORT_PYROSCOPE_INGEST:
		return "application/octet-stream";
	default:
		return "application/x-protobuf";
	}
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct http_transport *t = userdata;
	size_t n = size * nmemb, room;

	if (!t->body) {
		t->body = malloc(RESPONSE_KEEP);
		if (!t->body)
			return 0; /* fails the transfer with CURLE_WRITE_ERROR: retried */
	}
	room = RESPONSE_KEEP - t->body_len;
	if (n > room)
		t->body_cut = true;
	memcpy(t->body + t->body_len, data, n < room ? n : room);
	t->body_len += n < room ? n : room;
	/* Take the rest without keeping it: failing here would turn a delivered payload into
	 * a retried one. */
	return n;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *userdata)
{
	struct http_transport *t = userdata;
	size_t n = size * nitems;
	struct header_line h;

	/* A status line starts a new header block (after a 100 Continue, say): forget the old. */
	if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		t->retry_after[0] = t->content_type[0] = t->location[0] = '\0';
		return n;
	}
	if (!transport__split_header(line, n, &h))
		return n;
	if (transport__header_is(&h, "retry-after"))
		transport__header_value(&h, t->retry_after, sizeof(t->retry_after));
	else if (transport__header_is(&h, "content-type"))
		transport__header_value(&h, t->content_type, sizeof(t->content_type));
	else if (transport__header_is(&h, "location"))
		transport__header_value(&h, t->location, sizeof(t->location));
	return n;
}

static int64_t wall_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static bool body_is_json(const struct http_transport *t)
{
	size_t i = 0;

	if (strcasestr(t->content_type, "json"))
		return true;
	if (strcasestr(t->content_type, "proto"))
		return false;
	/* No usable Content-Type: look at the body. */
	while (i < t->body_len && (t->body[i] == ' ' || t->body[i] == '\n' || t->body[i] == '\r'))
		i++;
	if (i < t->body_len)
		return t->body[i] == '{';
	return t->protocol == EXPORT_OTLP_HTTP_JSON;
}

/* A 2xx of OTLP: read partial_success. Anything else that is 2xx needs no reading. */
static void read_success(struct http_transport *t, struct send_result *res)
{
	int64_t rejected = 0;

	if (t->protocol != EXPORT_OTLP_HTTP_PROTOBUF && t->protocol != EXPORT_OTLP_HTTP_JSON)
		return;
	if (t->body_cut || otlp_response__parse(t->body, t->body_len, body_is_json(t), &rejected,
						res->message, sizeof(res->message))) {
		/* Delivered all the same: the receiver said 2xx. */
		log_debug("%s: could not decode the %zu-byte success response (%s); taken as "
			  "full success",
			  t->c.desc, t->body_len, t->content_type[0] ? t->content_type : "no type");
		res->message[0] = '\0';
		return;
	}
	res->rejected = rejected;
}

/* What the receiver said when it did not take the payload, for one log line. */
static void read_refusal(struct http_transport *t, struct send_result *res)
{
	char said[MESSAGE_KEEP + 4];
	int64_t retry_info = -1;

	said[0] = '\0';
	if (res->code >= 300 && res->code < 400) {
		char masked[sizeof(t->location)], clean[sizeof(t->location)];

		url__mask(t->location, masked, sizeof(masked));
		log_text__sanitize(clean, sizeof(clean), masked, strlen(masked));
		snprintf(res->message, sizeof(res->message),
			 "HTTP %ld: redirect to '%s' not followed; configure the final URL",
			 res->code, clean);
		return;
	}
	if (t->body_len && strcasestr(t->content_type, "proto") &&
	    !strcasestr(t->content_type, "json")) {
		/* OTLP says failures carry a google.rpc.Status. */
		int32_t code;

		if (rpc_status__parse(t->body, t->body_len, &code, said, sizeof(said), &retry_info))
			said[0] = '\0';
	}
	if (!said[0])
		log_text__sanitize(said, sizeof(said), t->body, t->body_len);
	if (t->body_cut && strlen(said) + 4 < sizeof(said) && !strstr(said, "..."))
		strcat(said, "...");
	snprintf(res->message, sizeof(res->message), "HTTP %ld: %s", res->code,
		 said[0] ? said : "(no message)");
	if (res->outcome == SEND_RETRY) {
		res->retry_after_ms = transport__parse_retry_after(t->retry_after, wall_ms());
		if (res->retry_after_ms < 0 && retry_info >= 0)
			res->retry_after_ms = retry_info;
	}
}

static int http_send(struct transport *base, const struct export_payload *p,
		     struct send_result *res)
{
	struct http_transport *t = to_http(base);
	const void *body = p->body;
	size_t len = p->len;
	uint8_t *gz = NULL;
	char *url = NULL;
	CURLcode rc;
	long status = 0;
	int err = 0;

	if (t->c.gzip) {
		err = gzip__deflate(p->body, p->len, &gz, &len);
		if (err)
			return err;
		body = gz;
	}
	if (t->protocol == EXPORT_PYROSCOPE_INGEST && p->query && *p->query) {
		if (asprintf(&url, "%s?%s", t->url, p->query) < 0) {
			url = NULL;
			err = -ENOMEM;
			goto out;
		}
	}
	t->body_len = 0;
	t->body_cut = false;
	t->retry_after[0] = t->content_type[0] = t->location[0] = '\0';
	t->c.errbuf[0] = '\0';
	curl_easy_setopt(t->c.curl, CURLOPT_URL, url ? url : t->url);
	curl_easy_setopt(t->c.curl, CURLOPT_POSTFIELDS, body ? body : "");
	curl_easy_setopt(t->c.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);

	rc = curl_easy_perform(t->c.curl);
	if (rc != CURLE_OK) {
		transport__curl_failure(res, &t->c, rc);
		goto out;
	}
	curl_easy_getinfo(t->c.curl, CURLINFO_RESPONSE_CODE, &status);
	res->code = status;
	res->outcome = transport__classify_http(status);
	if (res->outcome == SEND_OK)
		read_success(t, res);
	else
		read_refusal(t, res);
out:
	free(gz);
	free(url);
	return err;
}

static void http_delete(struct transport *base)
{
	struct http_transport *t = to_http(base);

	transport__curl_release(&t->c);
	free(t->body);
	free(t->url);
	free(t);
}

static const struct transport_ops http_ops = {
	.send = http_send,
	.delete = http_delete,
	.describe = transport__curl_describe,
};

/* Headers this transport owns: a user's copy would contradict the body it sends. */
static bool reserved_header(const char *name)
{
	static const char *const reserved[] = {"content-type", "content-encoding", "content-length",
					       "transfer-encoding", "connect-protocol-version"};

	return transport__header_in(name, reserved, sizeof(reserved) / sizeof(reserved[0]));
}

static int build_headers(struct http_transport *t, const struct endpoint_config *cfg)
{
	struct export_header *user = NULL;
	char line[128], err[256];
	size_t n = 0;
	int rc = 0;

	snprintf(line, sizeof(line), "Content-Type: %s", request_content_type(t->protocol));
	/* No "Expect: 100-continue" round trip before large bodies. */
	const char *fixed[] = {
		line,
		t->c.gzip ? "Content-Encoding: gzip" : NULL,
		t->protocol == EXPORT_PYROSCOPE_PUSH ? "Connect-Protocol-Version: 1" : NULL,
		"Expect:",
	};
	rc = transport__append_lines(&t->c.headers, fixed, sizeof(fixed) / sizeof(fixed[0]));
	if (rc || !cfg->nr_headers)
		return rc;
	user = calloc(cfg->nr_headers, sizeof(*user));
	if (!user)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->nr_headers; i++) {
		if (cfg->headers[i].name && reserved_header(cfg->headers[i].name)) {
			log_warn("%s: ignoring the configured '%s' header: the transport sets it",
				 t->c.desc, cfg->headers[i].name);
			continue;
		}
		user[n++] = cfg->headers[i];
	}
	rc = transport__append_headers(&t->c.headers, user, n, err, sizeof(err));
	if (rc == -EINVAL)
		log_error("%s: %s", t->c.desc, err);
	else
		transport__log_header_names(t->c.desc, user, n);
	free(user);
	return rc;
}

struct transport *transport_http__new(const struct endpoint_config *cfg)
{
	struct http_transport *t = NULL;
	char err[256], masked[512];
	int rc = -EINVAL;

	url__mask(cfg->url, masked, sizeof(masked));
	if (url__check_http(cfg->url, err, sizeof(err))) {
		log_error("%s endpoint '%s': %s", export_protocol__name(cfg->protocol), masked,
			  err);
		goto fail;
	}
	if ((cfg->protocol == EXPORT_PYROSCOPE_PUSH || cfg->protocol == EXPORT_PYROSCOPE_INGEST) &&
	    strpbrk(cfg->url, "?#")) {
		log_error("%s endpoint '%s': give the base URL, without a query: the API path is "
			  "appended to it",
			  export_protocol__name(cfg->protocol), masked);
		goto fail;
	}
	rc = -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	transport__init(&t->c.base, &http_ops);
	t->protocol = cfg->protocol;
	t->c.gzip = cfg->gzip;
	switch (cfg->protocol) {
	case EXPORT_PYROSCOPE_PUSH:
		t->url = url__join(cfg->url, "/push.v1.PusherService/Push");
		break;
	case EXPORT_PYROSCOPE_INGEST:
		t->url = url__join(cfg->url, "/ingest");
		break;
	default:
		t->url = strdup(cfg->url); /* as configured: OneUptime's path is not OTLP's */
		break;
	}
	if (!t->url)
		goto fail;
	url__mask(t->url, masked, sizeof(masked));
	if (asprintf(&t->c.desc, "%s %s", export_protocol__name(cfg->protocol), masked) < 0) {
		t->c.desc = NULL;
		goto fail;
	}
	rc = transport__curl_open(&t->c, cfg);
	if (rc)
		goto fail;
	rc = build_headers(t, cfg);
	if (rc)
		goto fail;
	if (curl_easy_setopt(t->c.curl, CURLOPT_HTTPHEADER, t->c.headers) != CURLE_OK ||
	    curl_easy_setopt(t->c.curl, CURLOPT_POST, 1L) != CURLE_OK ||
	    curl_easy_setopt(t->c.curl, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
	    curl_easy_setopt(t->c.curl, CURLOPT_WRITEDATA, t) != CURLE_OK ||
	    curl_easy_setopt(t->c.curl, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
	    curl_easy_setopt(t->c.curl, CURLOPT_HEADERDATA, t) != CURLE_OK ||
	    /* Responses may come gzipped; libcurl inflates them. */
	    curl_easy_setopt(t->c.curl, CURLOPT_ACCEPT_ENCODING, "gzip") != CURLE_OK) {
		rc = -EINVAL;
		goto fail;
	}
	return &t->c.base;
fail:
	if (t)
		http_delete(&t->c.base);
	errno = -rc;
	return NULL;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * OTLP/gRPC over libcurl's HTTP/2: one unary ProfilesService/Export call per send. gRPC needs
 * nothing curl lacks: a POST with a 5-byte frame in front of the message, and a status that
 * arrives in the trailers (or, for a "trailers-only" answer, in the headers), both of which curl
 * hands to the header callback. h2c with prior knowledge for http://, ALPN for https://.
 *
 * One curl handle per transport, reused, so that the HTTP/2 connection stays open between
 * exports (but see grpc_curl() for h2c on libcurl 7.88); sends on one transport are serialized
 * by the export thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base/gzip.h"
#include "base/hex.h"
#include "base/log.h"
#include "base/log_text.h"
#include "base/url.h"
#include "base/vec.h"
#include "export/otlp_response.h"
#include "export/rpc_status.h"
#include "export/transport_curl.h"
#include "export/transport_impl.h"

#define GRPC_METHOD_PATH                                                                           \
	"/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define GRPC_FRAME_HDR 5
/* OTLP's response size limit; larger answers are read and discarded, not stored. */
#define GRPC_MAX_ANSWER (4u << 20)
/* Raw (encoded) trailer values kept; a longer grpc-message is cut, longer details ignored. */
#define GRPC_MAX_MESSAGE 2048
#define GRPC_MAX_DETAILS 16384

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

/* What one call brought back: headers and trailers arrive through the same callback. */
struct grpc_answer {
	bool has_status;
	long status;
	char message[GRPC_MAX_MESSAGE]; /* grpc-message, still percent-encoded */
	char *details;			/* grpc-status-details-bin, base64; malloc'ed */
	bool details_cut;
	char encoding[16]; /* grpc-encoding of the answer's message */
	char content_type[64];
	uint8_t *body;
	size_t len, cap;
	bool body_cut; /* over GRPC_MAX_ANSWER */
	bool oom;
};

static struct grpc_transport *to_grpc(struct transport *t)
{
	return (struct grpc_transport *)t;
}

static void set_message(struct send_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_message(struct send_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
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

/* --- the answer --- */

static size_t on_header(char *buf, size_t size, size_t nitems, void *arg)
{
	struct grpc_answer *a = arg;
	size_t len = size * nitems;
	struct header_line h;

	/* The status line and the blank line closing a header block have no name. */
	if (!transport__split_header(buf, len, &h))
		return len;
	if (transport__header_is(&h, "grpc-status")) {
		const char *p = h.value, *end = h.value + h.value_len;
		long code = 0;

		/* A status that is not a small number is one we do not know: UNKNOWN. */
		for (; p < end && *p >= '0' && *p <= '9' && code < 1000; p++)
			code = code * 10 + (*p - '0');
		a->has_status = true;
		a->status = (p == end && h.value_len) ? code : GRPC_UNKNOWN;
	} else if (transport__header_is(&h, "grpc-message")) {
		transport__header_value(&h, a->message, sizeof(a->message));
	} else if (transport__header_is(&h, "grpc-status-details-bin")) {
		free(a->details);
		a->details = NULL;
		a->details_cut = h.value_len > GRPC_MAX_DETAILS;
		if (!a->details_cut)
			a->details = strndup(h.value, h.value_len);
	} else if (transport__header_is(&h, "grpc-encoding")) {
		transport__header_value(&h, a->encoding, sizeof(a->encoding));
	} else if (transport__header_is(&h, "content-type")) {
		transport__header_value(&h, a->content_type, sizeof(a->content_type));
	}
	return len;
}

static size_t on_body(char *buf, size_t size, size_t nitems, void *arg)
{
	struct grpc_answer *a = arg;
	size_t len = size * nitems;

	/* Keep reading past the limit: the status is in the trailers that follow the body. */
	if (a->body_cut || a->len + len > GRPC_MAX_ANSWER + GRPC_FRAME_HDR) {
		a->body_cut = true;
		return len;
	}
	if (VEC_RESERVE(a->body, a->cap, a->len + len)) {
		a->oom = true;
		return CURL_WRITEFUNC_ERROR;
	}
	memcpy(a->body + a->len, buf, len);
	a->len += len;
	return len;
}

/*
 * The answer's one message, unframed (and inflated into *inflated when it was compressed).
 * An empty body is no message at all. 0, or -errno with *why saying what was wrong.
 */
static int answer_message(const struct grpc_answer *a, uint8_t **inflated, const uint8_t **msg,
			  size_t *len, const char **why)
{
	char detail[128]; /* gzip's own words: *why is more use in a send's one line */
	uint32_t n;
	int err;

	*msg = NULL;
	*len = 0;
	if (a->body_cut) {
		*why = "answer larger than 4 MiB";
		return -EMSGSIZE;
	}
	if (a->len == 0)
		return 0;
	if (a->len < GRPC_FRAME_HDR) {
		*why = "cut frame header";
		return -EBADMSG;
	}
	n = (uint32_t)a->body[1] << 24 | (uint32_t)a->body[2] << 16 | (uint32_t)a->body[3] << 8 |
	    a->body[4];
	if (n != a->len - GRPC_FRAME_HDR) {
		*why = n > a->len - GRPC_FRAME_HDR ? "cut message" : "more than one message";
		return -EBADMSG;
	}
	if (a->body[0] == 0) {
		*msg = a->body + GRPC_FRAME_HDR;
		*len = n;
		return 0;
	}
	if (a->body[0] != 1) {
		*why = "unknown frame flags";
		return -EBADMSG;
	}
	/* We only ever offer gzip (grpc-accept-encoding), so anything else is the peer's error. */
	if (strcasecmp(a->encoding, "gzip") != 0) {
		*why = "compressed message without grpc-encoding gzip";
		return -EBADMSG;
	}
	err = gzip__inflate(a->body + GRPC_FRAME_HDR, n, GRPC_MAX_ANSWER, inflated, len, detail,
			    sizeof(detail));
	if (err) {
		*why = err == -EFBIG ? "message inflates past 4 MiB" : "bad gzip message";
		return err;
	}
	*msg = *inflated;
	return 0;
}

/* grpc-status 0: delivered. Read the partial success, if any; a bad answer does not undo it. */
static void read_success(const struct grpc_answer *a, struct send_result *res)
{
	uint8_t *inflated = NULL;
	const uint8_t *msg;
	const char *why = "";
	size_t len;
	int64_t rejected = 0;

	res->outcome = SEND_OK;
	res->code = GRPC_OK;
	if (answer_message(a, &inflated, &msg, &len, &why) < 0) {
		set_message(res, "delivered, but the answer was not understood: %s", why);
	} else if (otlp_response__parse(msg, len, false, &rejected, res->message,
					sizeof(res->message)) < 0) {
		set_message(res, "delivered, but the answer was not understood: bad "
				 "ExportProfilesServiceResponse");
	} else {
		res->rejected = rejected > 0 ? rejected : 0;
	}
	free(inflated);
}

/*
 * The RetryInfo delay in grpc-status-details-bin: *delay >= 0, or -1 when there is none.
 * -EBADMSG when the details are there but cannot be read (cut, not base64, not a Status).
 */
static int answer_retry_delay(const struct grpc_answer *a, int64_t *delay)
{
	*delay = -1;
	if (a->details_cut)
		return -EBADMSG;
	if (!a->details)
		return 0;
	return rpc_status__retry_delay_base64(a->details, delay);
}

/*
 * The gRPC spec's table for answers without grpc-status (typically from a proxy in front of
 * the receiver): only these say anything; every other HTTP status, 200 included, is UNKNOWN.
 */
static int grpc_code_from_http(long http)
{
	switch (http) {
	case 400:
		return GRPC_INTERNAL;
	case 401:
		return GRPC_UNAUTHENTICATED;
	case 403:
		return GRPC_PERMISSION_DENIED;
	case 404:
		return GRPC_UNIMPLEMENTED;
	case 429:
	case 502:
	case 503:
	case 504:
		return GRPC_UNAVAILABLE;
	default:
		return GRPC_UNKNOWN;
	}
}

static void read_answer(struct grpc_transport *t, struct grpc_answer *a, struct send_result *res)
{
	char decoded[GRPC_MAX_MESSAGE], text[sizeof(res->message)];
	long http = 0, version = 0;
	bool bad_details;
	int64_t delay;
	int code;

	curl_easy_getinfo(t->c.curl, CURLINFO_RESPONSE_CODE, &http);
	curl_easy_getinfo(t->c.curl, CURLINFO_HTTP_VERSION, &version);

	/* grpc-status must be used when present; 0 from an HTTP error would claim a delivery. */
	if (!a->has_status || (a->status == GRPC_OK && http != 200)) {
		code = grpc_code_from_http(http);
		res->code = code;
		res->outcome = transport__classify_grpc(code, false);
		/* What a proxy says in its body is the best clue there is; a gRPC body is not. */
		if (strncasecmp(a->content_type, "application/grpc", 16) != 0 && a->len)
			log_text__sanitize(text, 160, a->body, a->len);
		else
			text[0] = '\0';
		set_message(res, "%s: HTTP %ld without grpc-status (%s%s%s)%s",
			    transport__grpc_code_name(code), http,
			    a->content_type[0] ? a->content_type : "no content-type",
			    text[0] ? ": " : "", text,
			    version == CURL_HTTP_VERSION_2_0 ? ""
							     : ", not over HTTP/2: is this a gRPC "
							       "endpoint?");
		log_text__sanitize(text, sizeof(text), res->message, strlen(res->message));
		memcpy(res->message, text, sizeof(res->message));
		return;
	}

	code = a->status;
	if (code == GRPC_OK) {
		read_success(a, res);
		return;
	}

	res->code = code;
	bad_details = answer_retry_delay(a, &delay) < 0;
	res->outcome = transport__classify_grpc(code, delay >= 0);
	if (res->outcome == SEND_RETRY && delay >= 0)
		res->retry_after_ms = delay;
	/* grpc-message is percent-encoded UTF-8; the gRPC spec asks receivers to take a '%' not
	 * followed by two hex digits literally, as hex__percent_decode() does. */
	log_text__sanitize(
		text, sizeof(text), decoded,
		hex__percent_decode(decoded, sizeof(decoded), a->message, strlen(a->message)));
	set_message(res, "%s%s%s%s", transport__grpc_code_name(code), text[0] ? ": " : "", text,
		    code != GRPC_RESOURCE_EXHAUSTED || delay >= 0 ? ""
		    : bad_details ? " (unreadable status details: not retried)"
				  : " (no RetryInfo: not retried)");
}

/* --- the transport --- */

static int grpc_send(struct transport *base, const struct export_payload *p,
		     struct send_result *res)
{
	struct grpc_transport *t = to_grpc(base);
	struct grpc_upload up = {0};
	struct grpc_answer a = {0};
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
		set_message(res, "not sent: a %zu byte message is over gRPC's 4 GiB frame limit",
			    len);
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
	curl_easy_setopt(t->c.curl, CURLOPT_HEADERDATA, &a);
	curl_easy_setopt(t->c.curl, CURLOPT_WRITEDATA, &a);
	rc = curl_easy_perform(t->c.curl);
	/* The handle outlives this frame: leave it no pointers into it. */
	curl_easy_setopt(t->c.curl, CURLOPT_READDATA, NULL);
	curl_easy_setopt(t->c.curl, CURLOPT_SEEKDATA, NULL);
	curl_easy_setopt(t->c.curl, CURLOPT_HEADERDATA, NULL);
	curl_easy_setopt(t->c.curl, CURLOPT_WRITEDATA, NULL);

	if (rc == CURLE_OUT_OF_MEMORY || a.oom) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * A receiver may answer (say UNAUTHENTICATED) and reset the stream before it has read the
	 * whole request, which curl reports as an error: the status it sent still counts.
	 */
	if (rc == CURLE_OK || a.has_status)
		read_answer(t, &a, res);
	else
		transport__curl_failure(res, &t->c, rc);
	log_debug("%s: %zu byte message, %zu sent: %s", t->c.desc, p->len, len,
		  res->outcome == SEND_OK      ? "delivered"
		  : res->outcome == SEND_RETRY ? "to retry"
					       : "refused");
out:
	free(packed);
	free(a.details);
	free(a.body);
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

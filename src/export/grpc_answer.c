// SPDX-License-Identifier: BSD-2-Clause
/*
 * A gRPC answer read into a send_result. Everything here comes from the receiver (or a proxy in
 * front of it): values are bounded as they are kept, and every text that reaches the result's
 * message is sanitized for one log line.
 */
#include "export/grpc_answer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/gzip.h"
#include "base/hex.h"
#include "base/log_text.h"
#include "base/vec.h"
#include "export/otlp_response.h"
#include "export/rpc_status.h"
#include "export/transport_curl.h"

static void set_message(struct send_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_message(struct send_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
}

void grpc_answer__header(struct grpc_answer *a, const char *line, size_t len)
{
	struct header_line h;

	/* The status line and the blank line closing a header block have no name. */
	if (!transport__split_header(line, len, &h))
		return;
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
}

int grpc_answer__body(struct grpc_answer *a, const void *buf, size_t len)
{
	if (a->body_cut || a->len + len > GRPC_MAX_ANSWER + GRPC_FRAME_HDR) {
		a->body_cut = true;
		return 0;
	}
	if (VEC_RESERVE(a->body, a->cap, a->len + len))
		return -ENOMEM;
	if (len)
		memcpy(a->body + a->len, buf, len);
	a->len += len;
	return 0;
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

void grpc_answer__read(const struct grpc_answer *a, long http, bool http2, struct send_result *res)
{
	char decoded[GRPC_MAX_MESSAGE], text[sizeof(res->message)];
	bool bad_details;
	int64_t delay;
	int code;

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
			    http2 ? "" : ", not over HTTP/2: is this a gRPC endpoint?");
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

void grpc_answer__release(struct grpc_answer *a)
{
	free(a->details);
	free(a->body);
	a->details = NULL;
	a->body = NULL;
	a->len = a->cap = 0;
}

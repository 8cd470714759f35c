// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pieces both libcurl transports share: status classification, Retry-After, request
 * headers, the setup of an easy handle and what a failed transfer means.
 */
#include "export/transport_curl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/curl_client.h"
#include "base/log.h"
#include "base/log_text.h"
#include "base/url.h"
#include "export/transport_impl.h"

/* --- classification --- */

enum send_outcome transport__classify_http(long status)
{
	if (status >= 200 && status <= 299)
		return SEND_OK;
	switch (status) {
	case 429:
	case 502:
	case 503:
	case 504:
		return SEND_RETRY;
	default:
		return SEND_DROP;
	}
}

enum send_outcome transport__classify_grpc(int code, bool has_retry_info)
{
	switch (code) {
	case GRPC_OK:
		return SEND_OK;
	case GRPC_CANCELLED:
	case GRPC_DEADLINE_EXCEEDED:
	case GRPC_ABORTED:
	case GRPC_OUT_OF_RANGE:
	case GRPC_UNAVAILABLE:
	case GRPC_DATA_LOSS:
		return SEND_RETRY;
	case GRPC_RESOURCE_EXHAUSTED:
		return has_retry_info ? SEND_RETRY : SEND_DROP;
	default:
		return SEND_DROP;
	}
}

const char *transport__grpc_code_name(int code)
{
	static const char *const names[] = {
		"OK",
		"CANCELLED",
		"UNKNOWN",
		"INVALID_ARGUMENT",
		"DEADLINE_EXCEEDED",
		"NOT_FOUND",
		"ALREADY_EXISTS",
		"PERMISSION_DENIED",
		"RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION",
		"ABORTED",
		"OUT_OF_RANGE",
		"UNIMPLEMENTED",
		"INTERNAL",
		"UNAVAILABLE",
		"DATA_LOSS",
		"UNAUTHENTICATED",
	};

	if (code < 0 || (size_t)code >= sizeof(names) / sizeof(names[0]))
		return "UNKNOWN_CODE";
	return names[code];
}

/* --- Retry-After --- */

static bool only_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0';
}

/*
 * The three date forms of RFC 9110 section 5.6.7 end in "GMT" (IMF-fixdate, RFC 850) or in a
 * four-digit year (asctime). curl_getdate() reads all three, but it also passes over words it
 * does not know, so a value with anything after the date would be taken without this check.
 */
static bool http_date_shape(const char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n >= 3 && memcmp(s + n - 3, "GMT", 3) == 0)
		return true;
	if (n < 5 || s[n - 5] != ' ')
		return false;
	for (size_t i = n - 4; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

int64_t transport__parse_retry_after(const char *value, int64_t now_unix_ms)
{
	const char *s = value;
	time_t when;

	if (!s)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (isdigit((unsigned char)*s)) {
		int64_t secs = 0;

		while (isdigit((unsigned char)*s)) {
			/* Clamp absurd values instead of overflowing: a day is plenty, and the
			 * exporter caps it far lower anyway. */
			if (secs < 86400)
				secs = secs * 10 + (*s - '0');
			s++;
		}
		if (!only_space(s))
			return -1;
		if (secs > 86400)
			secs = 86400;
		return secs * 1000;
	}
	if (!http_date_shape(s))
		return -1;
	/* Month and day names in English whatever the locale, two-digit years as RFC 850 says. */
	when = curl_getdate(s, NULL);
	if (when < 0)
		return -1;
	if ((int64_t)when * 1000 <= now_unix_ms)
		return 0;
	return (int64_t)when * 1000 - now_unix_ms;
}

/* --- headers --- */

static bool is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

int transport__check_header(const char *name, const char *value)
{
	if (!name || !*name || !value)
		return -EINVAL;
	for (const char *p = name; *p; p++)
		if (!is_tchar((unsigned char)*p))
			return -EINVAL;
	if (strpbrk(value, "\r\n"))
		return -EINVAL;
	return 0;
}

int transport__append_headers(struct curl_slist **list, const struct export_header *h, size_t n,
			      char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		char *line;
		int len, rc;

		if (transport__check_header(h[i].name, h[i].value)) {
			/* Name the header only when its name is a clean token: a malformed name
			 * may well be a whole "Authorization: Bearer ..." line. */
			if (h[i].name && h[i].value && transport__check_header(h[i].name, "") == 0)
				snprintf(err, errlen, "header '%s': its value has a line break",
					 h[i].name);
			else
				snprintf(err, errlen, "header #%zu: the name is not a valid token",
					 i + 1);
			return -EINVAL;
		}
		/* curl drops "Name:" with nothing after it; "Name;" sends an empty value. */
		if (*h[i].value)
			len = asprintf(&line, "%s: %s", h[i].name, h[i].value);
		else
			len = asprintf(&line, "%s;", h[i].name);
		if (len < 0) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		rc = transport__append_line(list, line);
		/* The line held a secret: do not leave it in freed heap memory. */
		explicit_bzero(line, (size_t)len);
		free(line);
		if (rc) {
			snprintf(err, errlen, "out of memory");
			return rc;
		}
	}
	return 0;
}

int transport__append_line(struct curl_slist **list, const char *line)
{
	struct curl_slist *l = curl_slist_append(*list, line);

	if (!l)
		return -ENOMEM;
	*list = l;
	return 0;
}

int transport__append_lines(struct curl_slist **list, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lines[i] && transport__append_line(list, lines[i]))
			return -ENOMEM;
	return 0;
}

bool transport__header_in(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(name, names[i]) == 0)
			return true;
	return false;
}

void transport__free_headers(struct curl_slist *list)
{
	for (struct curl_slist *l = list; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(list);
}

void transport__log_header_names(const char *who, const struct export_header *h, size_t n)
{
	char names[512];
	size_t off = 0;

	if (log_get_level() < LOG_DEBUG || !n)
		return;
	names[0] = '\0';
	for (size_t i = 0; i < n && off < sizeof(names); i++) {
		int w = snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "",
				 h[i].name ? h[i].name : "?");
		if (w < 0)
			break;
		off += (size_t)w;
	}
	log_debug("%s: request headers (values not shown): %s", who, names);
}

/* --- response headers --- */

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool transport__split_header(const char *line, size_t len, struct header_line *h)
{
	const char *colon = memchr(line, ':', len), *v, *end = line + len;

	if (!colon || colon == line)
		return false;
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && blank(end[-1]))
		end--;
	*h = (struct header_line){line, (size_t)(colon - line), v, (size_t)(end - v)};
	return true;
}

bool transport__header_is(const struct header_line *h, const char *want)
{
	return strlen(want) == h->name_len && strncasecmp(h->name, want, h->name_len) == 0;
}

void transport__header_value(const struct header_line *h, char *dst, size_t dstlen)
{
	size_t len = h->value_len < dstlen - 1 ? h->value_len : dstlen - 1;

	memcpy(dst, h->value, len);
	dst[len] = '\0';
}

/* --- libcurl --- */

static int deadline_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
			     curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	/* Non-zero aborts the transfer with CURLE_ABORTED_BY_CALLBACK. libcurl calls this at
	 * least about once a second even when nothing moves, so shutdown is never late by more. */
	return transport__past_deadline(clientp) ? 1 : 0;
}

int transport__curl_open(struct curl_transport *c, const struct endpoint_config *cfg)
{
	/* The transport's message buffer and deadline, then the endpoint's settings. */
	struct curl_client_opts o = {
		.errbuf = c->errbuf,
		.progress = deadline_progress,
		.progress_arg = &c->base,
		.insecure = cfg->insecure,
		.ca_file = cfg->ca_file,
		.user_agent = cfg->user_agent,
		.timeout_ms = cfg->timeout_ms,
	};
	CURLcode rc;
	int err;

	err = curl_client__global_init();
	if (err)
		return err;
	c->curl = curl_easy_init();
	if (!c->curl)
		return -ENOMEM;
	rc = curl_client__setup(c->curl, &o);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	if (rc != CURLE_OK) {
		log_error("libcurl: setting up the endpoint failed: %s", curl_easy_strerror(rc));
		return -EINVAL;
	}
	if (cfg->insecure && cfg->url && strncasecmp(cfg->url, "https:", 6) == 0) {
		char masked[256];

		url__mask(cfg->url, masked, sizeof(masked));
		log_warn("%s: TLS certificate verification is OFF (insecure was asked for)",
			 masked);
	}
	return 0;
}

void transport__curl_release(struct curl_transport *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	transport__free_headers(c->headers);
	free(c->desc);
}

const char *transport__curl_describe(const struct transport *t)
{
	return ((const struct curl_transport *)t)->desc; /* base is its first member */
}

void transport__curl_failure(struct send_result *res, const struct curl_transport *c, CURLcode rc)
{
	const char *what = curl_easy_strerror(rc);
	const char *detail = c->errbuf[0] ? c->errbuf : NULL;

	res->code = 0;
	switch (rc) {
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_NOT_BUILT_IN:
	case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_SSL_CACERT_BADFILE:
		/* Local configuration: the next attempt would fail the same way. */
		res->outcome = SEND_DROP;
		break;
	default:
		res->outcome = SEND_RETRY;
		break;
	}
	if (rc == CURLE_ABORTED_BY_CALLBACK && transport__past_deadline(&c->base)) {
		snprintf(res->message, sizeof(res->message),
			 "gave up: the shutdown deadline passed during the request");
		return;
	}
	if (detail) {
		char clean[CURL_ERROR_SIZE];

		log_text__sanitize(clean, sizeof(clean), detail, strlen(detail));
		snprintf(res->message, sizeof(res->message), "%s (%s)", what, clean);
	} else {
		snprintf(res->message, sizeof(res->message), "%s", what);
	}
}

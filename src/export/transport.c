// SPDX-License-Identifier: BSD-2-Clause
/*
 * The transport front door (dispatch on the protocol) and what the HTTP and gRPC transports
 * share: status classification, Retry-After, URL and header checks, libcurl setup, gzip and the
 * hand decoding of the few response messages we read. Decoding by hand keeps the transports
 * independent of the generated OTLP code, and every decoder here treats its input as hostile.
 */
#include "export/transport_impl.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#include "base/log.h"

void export_payload__release(struct export_payload *p)
{
	if (!p)
		return;
	free(p->body);
	free(p->query);
	free(p->what);
	p->body = NULL;
	p->len = 0;
	p->query = NULL;
	p->what = NULL;
}

void transport__init(struct transport *t, const struct transport_ops *ops)
{
	t->ops = ops;
	atomic_store(&t->deadline_ms, 0);
}

struct transport *transport__new(const struct endpoint_config *cfg)
{
	if (!cfg || !cfg->url) {
		log_error("transport: no endpoint URL");
		errno = EINVAL;
		return NULL;
	}
	switch (cfg->protocol) {
	case EXPORT_OTLP_GRPC:
		return transport_grpc__new(cfg);
	case EXPORT_OTLP_HTTP_PROTOBUF:
	case EXPORT_OTLP_HTTP_JSON:
	case EXPORT_PYROSCOPE_PUSH:
	case EXPORT_PYROSCOPE_INGEST:
		return transport_http__new(cfg);
	}
	log_error("transport: unknown protocol %d", (int)cfg->protocol);
	errno = EINVAL;
	return NULL;
}

void transport__delete(struct transport *t)
{
	if (t)
		t->ops->delete (t);
}

int transport__send(struct transport *t, const struct export_payload *p, struct send_result *res)
{
	memset(res, 0, sizeof(*res));
	res->retry_after_ms = -1;
	/* Do not even start a request that shutdown has no time left for. */
	if (transport__past_deadline(t)) {
		res->outcome = SEND_RETRY;
		snprintf(res->message, sizeof(res->message),
			 "not sent: the shutdown deadline has passed");
		return 0;
	}
	return t->ops->send(t, p, res);
}

const char *transport__describe(const struct transport *t)
{
	return t ? t->ops->describe(t) : "(no transport)";
}

/* --- time and deadlines --- */

int64_t transport__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void transport__set_deadline(struct transport *t, int64_t deadline_mono_ms)
{
	atomic_store(&t->deadline_ms, deadline_mono_ms);
}

bool transport__past_deadline(const struct transport *t)
{
	int64_t d = atomic_load(&((struct transport *)t)->deadline_ms);

	return d && transport__now_ms() >= d;
}

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

static int month_index(const char *m)
{
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

	for (int i = 0; i < 12; i++)
		if (strcasecmp(m, months[i]) == 0)
			return i;
	return -1;
}

static bool only_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0';
}

static bool scanned_all(int matched, int want, int n, const char *v)
{
	return matched == want && n > 0 && only_space(v + n);
}

/* The three date forms of RFC 9110 section 5.6.7. Month names are matched by hand: strptime's
 * %b follows the locale. */
static int parse_http_date(const char *v, time_t *out)
{
	char wd[16], mon[4];
	int day, year, hh, mm, ss, n = -1, m;
	struct tm tm;

	/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
	m = sscanf(v, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", wd, &day, mon, &year, &hh,
		   &mm, &ss, &n);
	if (!scanned_all(m, 7, n, v)) {
		/* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT", the century nearest 1970-2069 */
		n = -1;
		m = sscanf(v, "%15[A-Za-z], %2d-%3[A-Za-z]-%2d %2d:%2d:%2d GMT%n", wd, &day, mon,
			   &year, &hh, &mm, &ss, &n);
		if (scanned_all(m, 7, n, v))
			year += year < 70 ? 2000 : 1900;
	}
	if (!scanned_all(m, 7, n, v)) {
		/* asctime: "Sun Nov  6 08:49:37 1994" */
		n = -1;
		m = sscanf(v, "%3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n", wd, mon, &day, &hh,
			   &mm, &ss, &year, &n);
	}
	if (!scanned_all(m, 7, n, v))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_mon = month_index(mon);
	if (tm.tm_mon < 0 || day < 1 || day > 31 || hh < 0 || hh > 23 || mm < 0 || mm > 59 ||
	    ss < 0 || ss > 60 || year < 1970)
		return -1;
	tm.tm_mday = day;
	tm.tm_year = year - 1900;
	tm.tm_hour = hh;
	tm.tm_min = mm;
	tm.tm_sec = ss;
	*out = timegm(&tm);
	return *out == (time_t)-1 ? -1 : 0;
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
	if (parse_http_date(s, &when))
		return -1;
	if ((int64_t)when * 1000 <= now_unix_ms)
		return 0;
	return (int64_t)when * 1000 - now_unix_ms;
}

/* --- URLs and headers --- */

int transport__check_url(const char *url, char *err, size_t errlen)
{
	const char *p, *auth, *auth_end, *host, *host_end, *at;

	if (!url || !*url) {
		snprintf(err, errlen, "no URL given");
		return -EINVAL;
	}
	for (p = url; *p; p++) {
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
			snprintf(err, errlen,
				 "URL has a space, control or non-ASCII character at offset %zu "
				 "(percent-encode it)",
				 (size_t)(p - url));
			return -EINVAL;
		}
	}
	if (strncasecmp(url, "http://", 7) == 0)
		auth = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		auth = url + 8;
	else {
		snprintf(err, errlen, "URL must start with http:// or https://");
		return -EINVAL;
	}
	auth_end = auth + strcspn(auth, "/?#");
	host = auth;
	for (at = auth; at < auth_end; at++)
		if (*at == '@')
			host = at + 1;
	if (*host == '[') {
		host_end = memchr(host, ']', auth_end - host);
		if (!host_end || host_end == host + 1) {
			snprintf(err, errlen, "URL has a malformed IPv6 address");
			return -EINVAL;
		}
		host_end++;
		if (host_end < auth_end && *host_end != ':') {
			snprintf(err, errlen, "URL has junk after the IPv6 address");
			return -EINVAL;
		}
	} else {
		host_end = memchr(host, ':', auth_end - host);
		if (!host_end)
			host_end = auth_end;
	}
	if (host_end == host) {
		snprintf(err, errlen, "URL has no host");
		return -EINVAL;
	}
	if (host_end < auth_end) {
		/* ":port" */
		long port = 0;

		p = host_end + 1;
		if (p == auth_end) {
			snprintf(err, errlen, "URL has an empty port");
			return -EINVAL;
		}
		for (; p < auth_end; p++) {
			if (!isdigit((unsigned char)*p) || port > 65535) {
				snprintf(err, errlen, "URL has a bad port");
				return -EINVAL;
			}
			port = port * 10 + (*p - '0');
		}
		if (port < 1 || port > 65535) {
			snprintf(err, errlen, "URL port must be 1-65535");
			return -EINVAL;
		}
	}
	return 0;
}

void transport__mask_url(const char *url, char *buf, size_t len)
{
	const char *auth, *auth_end, *at = NULL;

	if (!len)
		return;
	if (!url) {
		snprintf(buf, len, "(none)");
		return;
	}
	auth = strstr(url, "://");
	if (!auth) {
		snprintf(buf, len, "%s", url);
		return;
	}
	auth += 3;
	auth_end = auth + strcspn(auth, "/?#");
	for (const char *p = auth; p < auth_end; p++)
		if (*p == '@')
			at = p;
	if (!at)
		snprintf(buf, len, "%s", url);
	else
		snprintf(buf, len, "%.*s***%s", (int)(auth - url), url, at);
}

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
		struct curl_slist *nl;
		char *line;
		int len;

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
		nl = curl_slist_append(*list, line);
		/* The line held a secret: do not leave it in freed heap memory. */
		explicit_bzero(line, (size_t)len);
		free(line);
		if (!nl) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		*list = nl;
	}
	return 0;
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

/* --- libcurl --- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int transport__curl_global(void)
{
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc != CURLE_OK) {
		log_error("libcurl: global init failed: %s", curl_easy_strerror(curl_init_rc));
		return -EIO;
	}
	return 0;
}

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

int transport__curl_setup(CURL *h, const struct endpoint_config *cfg, struct transport *t,
			  char *errbuf)
{
	CURLcode rc = CURLE_OK;

#define SETOPT(opt, val)                                                                           \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(h, opt, val);                                        \
	} while (0)

	errbuf[0] = '\0';
	SETOPT(CURLOPT_ERRORBUFFER, errbuf);
	/* libcurl's signal-based DNS timeouts are not safe with threads. */
	SETOPT(CURLOPT_NOSIGNAL, 1L);
	SETOPT(CURLOPT_SSL_VERIFYPEER, cfg->insecure ? 0L : 1L);
	SETOPT(CURLOPT_SSL_VERIFYHOST, cfg->insecure ? 0L : 2L);
	if (cfg->ca_file)
		SETOPT(CURLOPT_CAINFO, cfg->ca_file);
	if (cfg->user_agent)
		SETOPT(CURLOPT_USERAGENT, cfg->user_agent);
	if (cfg->timeout_ms > 0) {
		SETOPT(CURLOPT_TIMEOUT_MS, cfg->timeout_ms);
		SETOPT(CURLOPT_CONNECTTIMEOUT_MS, cfg->timeout_ms);
	}
#if LIBCURL_VERSION_NUM >= 0x075500
	SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
#else
	SETOPT(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* A redirect would replay our credentials to wherever it points: never follow. */
	SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
	SETOPT(CURLOPT_TCP_KEEPALIVE, 1L);
	SETOPT(CURLOPT_NOPROGRESS, 0L);
	SETOPT(CURLOPT_XFERINFOFUNCTION, deadline_progress);
	SETOPT(CURLOPT_XFERINFODATA, t);
#undef SETOPT
	if (rc != CURLE_OK) {
		log_error("libcurl: setting up the endpoint failed: %s", curl_easy_strerror(rc));
		return -EINVAL;
	}
	if (cfg->insecure && cfg->url && strncasecmp(cfg->url, "https:", 6) == 0) {
		char masked[256];

		transport__mask_url(cfg->url, masked, sizeof(masked));
		log_warn("%s: TLS certificate verification is OFF (insecure was asked for)",
			 masked);
	}
	return 0;
}

void transport__curl_failure(struct send_result *res, const struct transport *t, CURLcode rc,
			     const char *errbuf)
{
	const char *what = curl_easy_strerror(rc);
	const char *detail = errbuf && *errbuf ? errbuf : NULL;

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
	if (rc == CURLE_ABORTED_BY_CALLBACK && t && transport__past_deadline(t)) {
		snprintf(res->message, sizeof(res->message),
			 "gave up: the shutdown deadline passed during the request");
		return;
	}
	if (detail) {
		char clean[CURL_ERROR_SIZE];

		transport__sanitize(clean, sizeof(clean), detail, strlen(detail));
		snprintf(res->message, sizeof(res->message), "%s (%s)", what, clean);
	} else {
		snprintf(res->message, sizeof(res->message), "%s", what);
	}
}

/* --- bodies --- */

int transport__gzip(const void *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs;
	uLong bound;
	uint8_t *buf;
	int zrc;

	*out = NULL;
	*out_len = 0;
	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a gzip header and trailer around the deflate stream, as Content-Encoding:
	 * gzip and grpc-encoding: gzip both want. */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len);
	buf = malloc(bound ? bound : 1);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = buf;
	zs.avail_out = (uInt)bound;
	/* One call is enough: deflateBound() covers the worst case. Bodies beyond 4 GiB would
	 * need a loop, but the OTLP limit is 64 MiB and the exporter's budget bounds them. */
	if (len > UINT32_MAX / 2) {
		deflateEnd(&zs);
		free(buf);
		return -EIO;
	}
	zrc = deflate(&zs, Z_FINISH);
	if (zrc != Z_STREAM_END) {
		deflateEnd(&zs);
		free(buf);
		return -EIO;
	}
	*out_len = zs.total_out;
	deflateEnd(&zs);
	*out = buf;
	return 0;
}

void transport__sanitize(char *dst, size_t dstlen, const void *src, size_t srclen)
{
	const unsigned char *s = src;
	size_t o = 0, i = 0;
	bool space = true; /* drops leading blanks */

	if (!dstlen)
		return;
	for (; i < srclen && o + 1 < dstlen; i++) {
		unsigned char c = s[i];

		if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
			if (!space)
				dst[o++] = ' ';
			space = true;
			continue;
		}
		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		space = false;
	}
	/* Is anything but blanks left over? Then say the message was cut. */
	while (i < srclen && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
		i++;
	if (i < srclen && dstlen > 4) {
		if (o > dstlen - 4)
			o = dstlen - 4;
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	while (o && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

/* Protobuf wire format, just enough to read two small messages. */
struct pb {
	const uint8_t *p, *end;
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	uint64_t r = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (b->p >= b->end)
			return -1;
		c = *b->p++;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* The next field: its number, wire type and, for length-delimited ones, its bytes. */
static int pb_field(struct pb *b, uint32_t *field, uint32_t *wt, uint64_t *varint, struct pb *sub)
{
	uint64_t key, len;

	if (pb_varint(b, &key))
		return -1;
	*field = (uint32_t)(key >> 3);
	*wt = key & 7;
	if (*field == 0)
		return -1;
	switch (*wt) {
	case 0:
		return pb_varint(b, varint);
	case 1:
		if (b->end - b->p < 8)
			return -1;
		b->p += 8;
		return 0;
	case 2:
		if (pb_varint(b, &len) || len > (uint64_t)(b->end - b->p))
			return -1;
		sub->p = b->p;
		sub->end = b->p + len;
		b->p += len;
		return 0;
	case 5:
		if (b->end - b->p < 4)
			return -1;
		b->p += 4;
		return 0;
	default:
		/* groups (3, 4) are not in any message we read */
		return -1;
	}
}

static int pb_partial_success(struct pb b, int64_t *rejected, char *msg, size_t msglen)
{
	while (b.p < b.end) {
		uint32_t f, wt;
		uint64_t v = 0;
		struct pb sub = {0};

		if (pb_field(&b, &f, &wt, &v, &sub))
			return -EBADMSG;
		if (f == 1 && wt == 0)
			*rejected = (int64_t)v;
		else if (f == 2 && wt == 2)
			transport__sanitize(msg, msglen, sub.p, (size_t)(sub.end - sub.p));
	}
	return 0;
}

/* A tiny, tolerant JSON reader: enough to find two members of one nested object and to skip
 * everything else, with a depth limit so hostile nesting cannot exhaust the stack. */
struct js {
	const char *p, *end;
};

static void js_ws(struct js *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool js_eat(struct js *s, char c)
{
	js_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at s->p; its ASCII content (other characters as '?') into out if out != NULL. */
static int js_string(struct js *s, char *out, size_t outlen)
{
	size_t o = 0;

	js_ws(s);
	if (s->p >= s->end || *s->p != '"')
		return -1;
	s->p++;
	while (s->p < s->end && *s->p != '"') {
		unsigned char c = (unsigned char)*s->p++;

		if (c == '\\') {
			if (s->p >= s->end)
				return -1;
			c = (unsigned char)*s->p++;
			switch (c) {
			case 'n':
			case 'r':
			case 't':
			case 'b':
			case 'f':
				c = ' ';
				break;
			case 'u': {
				int cp = 0;

				if (s->end - s->p < 4)
					return -1;
				for (int k = 0; k < 4; k++) {
					int h = hexval(s->p[k]);

					if (h < 0)
						return -1;
					cp = cp * 16 + h;
				}
				s->p += 4;
				c = cp >= 0x20 && cp < 0x7f ? (unsigned char)cp : '?';
				/* the low half of a surrogate pair adds no second '?' */
				if (cp >= 0xdc00 && cp <= 0xdfff)
					continue;
				break;
			}
			default:
				break; /* \" \\ \/ stand for themselves */
			}
		} else if (c < 0x20 || c >= 0x7f) {
			/* UTF-8 continuation bytes add nothing; a lead byte becomes one '?' */
			if (c >= 0x80 && c < 0xc0)
				continue;
			c = '?';
		}
		if (out && o + 1 < outlen)
			out[o++] = (char)c;
	}
	if (s->p >= s->end)
		return -1;
	s->p++;
	if (out && outlen)
		out[o] = '\0';
	return 0;
}

static int js_skip(struct js *s, int depth)
{
	if (depth > 32)
		return -1;
	js_ws(s);
	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '"':
		return js_string(s, NULL, 0);
	case '{':
		s->p++;
		if (js_eat(s, '}'))
			return 0;
		do {
			if (js_string(s, NULL, 0) || !js_eat(s, ':') || js_skip(s, depth + 1))
				return -1;
		} while (js_eat(s, ','));
		return js_eat(s, '}') ? 0 : -1;
	case '[':
		s->p++;
		if (js_eat(s, ']'))
			return 0;
		do {
			if (js_skip(s, depth + 1))
				return -1;
		} while (js_eat(s, ','));
		return js_eat(s, ']') ? 0 : -1;
	default: {
		/* number, true, false, null */
		const char *start = s->p;

		while (s->p < s->end && (isalnum((unsigned char)*s->p) || *s->p == '-' ||
					 *s->p == '+' || *s->p == '.'))
			s->p++;
		return s->p > start ? 0 : -1;
	}
	}
}

/* int64 as proto3 JSON writes it: a string of digits, or a bare number. */
static int js_int64(struct js *s, int64_t *v)
{
	char buf[32];
	const char *p;
	bool neg = false;
	int64_t r = 0;

	js_ws(s);
	if (s->p < s->end && *s->p == '"') {
		if (js_string(s, buf, sizeof(buf)))
			return -1;
	} else {
		const char *start = s->p;

		if (js_skip(s, 0) || s->p - start >= (long)sizeof(buf))
			return -1;
		memcpy(buf, start, (size_t)(s->p - start));
		buf[s->p - start] = '\0';
	}
	p = buf;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++)
		if (r < INT64_MAX / 10 - 10)
			r = r * 10 + (*p - '0');
	*v = neg ? -r : r;
	return 0;
}

static int js_partial_success(struct js *s, int64_t *rejected, char *msg, size_t msglen)
{
	char key[32];

	if (js_eat(s, '}'))
		return 0;
	do {
		if (js_string(s, key, sizeof(key)) || !js_eat(s, ':'))
			return -1;
		if (!strcmp(key, "rejectedProfiles") || !strcmp(key, "rejected_profiles")) {
			if (js_int64(s, rejected))
				return -1;
		} else if (!strcmp(key, "errorMessage") || !strcmp(key, "error_message")) {
			char raw[512];

			js_ws(s);
			if (s->p < s->end && *s->p == 'n') {
				if (js_skip(s, 1)) /* null */
					return -1;
				continue;
			}
			if (js_string(s, raw, sizeof(raw)))
				return -1;
			transport__sanitize(msg, msglen, raw, strlen(raw));
		} else if (js_skip(s, 1)) {
			return -1;
		}
	} while (js_eat(s, ','));
	return js_eat(s, '}') ? 0 : -1;
}

static int js_export_response(struct js *s, int64_t *rejected, char *msg, size_t msglen)
{
	char key[32];

	if (!js_eat(s, '{'))
		return -1;
	if (js_eat(s, '}'))
		return 0;
	do {
		if (js_string(s, key, sizeof(key)) || !js_eat(s, ':'))
			return -1;
		if (!strcmp(key, "partialSuccess") || !strcmp(key, "partial_success")) {
			if (js_eat(s, '{')) {
				if (js_partial_success(s, rejected, msg, msglen))
					return -1;
			} else if (js_skip(s, 1)) { /* null */
				return -1;
			}
		} else if (js_skip(s, 1)) {
			return -1;
		}
	} while (js_eat(s, ','));
	return js_eat(s, '}') ? 0 : -1;
}

int transport__parse_export_response(const void *body, size_t len, bool json, int64_t *rejected,
				     char *msg, size_t msglen)
{
	*rejected = 0;
	if (msglen)
		msg[0] = '\0';
	if (json) {
		struct js s = {body, (const char *)body + len};

		js_ws(&s);
		if (s.p == s.end)
			return 0; /* an empty body is full success too */
		if (js_export_response(&s, rejected, msg, msglen))
			goto bad;
		js_ws(&s);
		if (s.p != s.end)
			goto bad;
		return 0;
	} else {
		struct pb b = {body, (const uint8_t *)body + len};

		while (b.p < b.end) {
			uint32_t f, wt;
			uint64_t v;
			struct pb sub = {0};

			if (pb_field(&b, &f, &wt, &v, &sub))
				goto bad;
			if (f == 1 && wt == 2 && pb_partial_success(sub, rejected, msg, msglen))
				goto bad;
		}
		return 0;
	}
bad:
	*rejected = 0;
	if (msglen)
		msg[0] = '\0';
	return -EBADMSG;
}

/* google.rpc.RetryInfo {1: retry_delay google.protobuf.Duration {1: seconds, 2: nanos}} */
static int pb_retry_info(struct pb b, int64_t *delay_ms)
{
	int64_t secs = 0, nanos = 0;

	while (b.p < b.end) {
		uint32_t f, wt;
		uint64_t v = 0;
		struct pb sub = {0};

		if (pb_field(&b, &f, &wt, &v, &sub))
			return -1;
		if (f != 1 || wt != 2)
			continue;
		while (sub.p < sub.end) {
			struct pb unused = {0};

			if (pb_field(&sub, &f, &wt, &v, &unused))
				return -1;
			if (f == 1 && wt == 0)
				secs = (int64_t)v;
			else if (f == 2 && wt == 0)
				nanos = (int32_t)v;
		}
	}
	if (secs < 0 || nanos < 0)
		return -1;
	if (secs > 86400)
		secs = 86400;
	*delay_ms = secs * 1000 + nanos / 1000000;
	return 0;
}

int transport__parse_rpc_status(const void *body, size_t len, int32_t *code, char *msg,
				size_t msglen, int64_t *retry_delay_ms)
{
	static const char retry_info[] = "google.rpc.RetryInfo";
	struct pb b = {body, (const uint8_t *)body + len};

	*code = 0;
	if (msglen)
		msg[0] = '\0';
	if (retry_delay_ms)
		*retry_delay_ms = -1;
	while (b.p < b.end) {
		uint32_t f, wt;
		uint64_t v = 0;
		struct pb sub = {0};

		if (pb_field(&b, &f, &wt, &v, &sub))
			return -EBADMSG;
		if (f == 1 && wt == 0) {
			*code = (int32_t)v;
		} else if (f == 2 && wt == 2) {
			transport__sanitize(msg, msglen, sub.p, (size_t)(sub.end - sub.p));
		} else if (f == 3 && wt == 2 && retry_delay_ms) {
			/* google.protobuf.Any {1: type_url, 2: value} */
			struct pb any = sub, type = {0}, value = {0};
			bool is_retry = false;

			while (any.p < any.end) {
				struct pb s2 = {0};

				if (pb_field(&any, &f, &wt, &v, &s2))
					return -EBADMSG;
				if (f == 1 && wt == 2)
					type = s2;
				else if (f == 2 && wt == 2)
					value = s2;
			}
			if (type.p && (size_t)(type.end - type.p) >= sizeof(retry_info) - 1 &&
			    !memcmp(type.end - (sizeof(retry_info) - 1), retry_info,
				    sizeof(retry_info) - 1))
				is_retry = true;
			if (is_retry && value.p && pb_retry_info(value, retry_delay_ms))
				return -EBADMSG;
			if (is_retry && !value.p)
				*retry_delay_ms = 0;
		}
	}
	return 0;
}

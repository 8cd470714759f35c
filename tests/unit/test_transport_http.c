// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTTP transport and the exporter over it, against tests/receiver/http_receiver.py on
 * 127.0.0.1 (a scriptable receiver that records every request), plus the shared helpers of
 * transport.c on broken and hostile input. Every receiver is started with bounded lifetime and
 * killed (by its pid) when its test ends.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "port_server.h"
#include "export/export.h"
#include "base/clock.h"
#include "base/gzip.h"
#include "base/log.h"
#include "base/log_text.h"
#include "base/url.h"
#include "export/otlp_response.h"
#include "export/rpc_status.h"
#include "export/transport_curl.h"
#include "export/transport_impl.h"

#define RECEIVER "tests/receiver/http_receiver.py"
#define TOKEN "tok-3f9a1c-SECRET"
#define OTLP_PATH "/v1development/profiles"

struct receiver {
	pid_t pid;
	int port;
	char dir[64];
};

static int64_t now_ms(void)
{
	return clock__mono_ms();
}

static const char *receiver_script_path(void)
{
	const char *env = getenv("HOSTPROF_TEST_RECEIVER");

	if (env && access(env, R_OK) == 0)
		return env;
	if (access(RECEIVER, R_OK) == 0)
		return RECEIVER;
	return NULL;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[512];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * Start the receiver with a JSON script (or NULL) and `down` seconds of refusing connections.
 * Returns 0 with r->port set, or -1 (and r is safe to stop).
 */
static int receiver_start(struct receiver *r, const char *script, double down)
{
	const char *py = receiver_script_path();
	char script_path[128], down_s[32];

	memset(r, 0, sizeof(*r));
	r->pid = -1;
	if (!py)
		return -1;
	snprintf(r->dir, sizeof(r->dir), "/tmp/hostprof-receiver.XXXXXX");
	if (!mkdtemp(r->dir)) {
		r->dir[0] = '\0';
		return -1;
	}
	snprintf(script_path, sizeof(script_path), "%s/script.json", r->dir);
	if (script) {
		FILE *f = fopen(script_path, "w");

		if (!f)
			return -1;
		fputs(script, f);
		fclose(f);
	}
	snprintf(down_s, sizeof(down_s), "%.1f", down);
	{
		char *with_script[] = {"python3",    (char *)py,  "--dir",  r->dir,
				       "--script",   script_path, "--down", down_s,
				       "--lifetime", "90",	  NULL};
		char *without[] = {"python3", (char *)py,   "--dir", r->dir, "--down",
				   down_s,    "--lifetime", "90",    NULL};

		r->port = port_server__start(script ? with_script : without, &r->pid);
	}
	return r->port > 0 ? 0 : -1;
}

static void receiver_stop(struct receiver *r)
{
	port_server__stop(&r->pid);
	if (r->dir[0])
		remove_dir(r->dir);
	r->dir[0] = '\0';
}

static size_t receiver_count(const struct receiver *r)
{
	char path[128];
	size_t n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "%s/%04zu.meta", r->dir, n);
		if (access(path, F_OK))
			return n;
	}
}

static bool receiver_wait(const struct receiver *r, size_t n, int64_t timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;

	while (receiver_count(r) < n) {
		if (now_ms() > end)
			return false;
		usleep(10000);
	}
	return true;
}

/* File contents, NUL-terminated (malloc'ed), or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static char *record(const struct receiver *r, size_t i, const char *ext, size_t *len)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%04zu.%s", r->dir, i, ext);
	return slurp(path, len);
}

/* Does request i's meta have this exact line? */
static bool meta_has(const struct receiver *r, size_t i, const char *line)
{
	char *m = record(r, i, "meta", NULL), *p;
	bool found = false;
	size_t n = strlen(line);

	for (p = m; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0')) {
			found = true;
			break;
		}
	free(m);
	return found;
}

static bool meta_has_prefix(const struct receiver *r, size_t i, const char *prefix)
{
	char *m = record(r, i, "meta", NULL);
	char want[256];
	bool found;

	snprintf(want, sizeof(want), "\n%s", prefix);
	found = m && strstr(m, want);
	free(m);
	return found;
}

static char *meta_value(const struct receiver *r, size_t i, const char *prefix)
{
	char *m = record(r, i, "meta", NULL), *p, *v = NULL;
	char want[256];

	snprintf(want, sizeof(want), "\n%s", prefix);
	if (m && (p = strstr(m, want))) {
		p += strlen(want);
		v = strndup(p, strcspn(p, "\n"));
	}
	free(m);
	return v;
}

static bool body_equals(const struct receiver *r, size_t i, const void *want, size_t len)
{
	size_t got_len = 0;
	char *got = record(r, i, "body", &got_len);
	bool same = got && got_len == len && memcmp(got, want, len) == 0;

	free(got);
	return same;
}

static void url_for(char *buf, size_t len, const struct receiver *r, const char *path)
{
	snprintf(buf, len, "http://127.0.0.1:%d%s", r->port, path);
}

static struct export_payload payload(const char *text, size_t repeat)
{
	struct export_payload p = {0};
	size_t n = strlen(text);

	p.len = n * repeat;
	p.body = malloc(p.len ? p.len : 1);
	for (size_t i = 0; i < repeat; i++)
		memcpy(p.body + i * n, text, n);
	p.what = strdup(text);
	return p;
}

static bool need_receiver(struct receiver *r, const char *script, double down)
{
	if (receiver_start(r, script, down) == 0)
		return true;
	CHECK(0,
	      "cannot start the receiver (%s; cwd must hold " RECEIVER
	      " or HOSTPROF_TEST_RECEIVER name it)",
	      receiver_script_path() ? "python3 failed" : "script not found");
	receiver_stop(r);
	return false;
}

/* --- the shared helpers, no network --- */

static void test_classify(void)
{
	CHECK(transport__classify_http(200) == SEND_OK, "200");
	CHECK(transport__classify_http(204) == SEND_OK, "204");
	const long retry[] = {429, 502, 503, 504};
	for (size_t i = 0; i < 4; i++)
		CHECK(transport__classify_http(retry[i]) == SEND_RETRY, "%ld", retry[i]);
	const long drop[] = {400, 401, 403, 404, 408, 413, 415, 500, 501, 505, 301, 100, 0};
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		CHECK(transport__classify_http(drop[i]) == SEND_DROP, "%ld", drop[i]);

	const int gretry[] = {GRPC_CANCELLED,	 GRPC_DEADLINE_EXCEEDED, GRPC_ABORTED,
			      GRPC_OUT_OF_RANGE, GRPC_UNAVAILABLE,	 GRPC_DATA_LOSS};
	for (size_t i = 0; i < 6; i++)
		CHECK(transport__classify_grpc(gretry[i], false) == SEND_RETRY, "grpc %d",
		      gretry[i]);
	CHECK(transport__classify_grpc(GRPC_OK, false) == SEND_OK, "grpc OK");
	CHECK(transport__classify_grpc(GRPC_RESOURCE_EXHAUSTED, false) == SEND_DROP, "8 w/o info");
	CHECK(transport__classify_grpc(GRPC_RESOURCE_EXHAUSTED, true) == SEND_RETRY, "8 w/ info");
	CHECK(transport__classify_grpc(GRPC_INVALID_ARGUMENT, true) == SEND_DROP, "3");
	CHECK(transport__classify_grpc(GRPC_UNAUTHENTICATED, false) == SEND_DROP, "16");
	CHECK_STR(transport__grpc_code_name(14), "UNAVAILABLE");
	CHECK_STR(transport__grpc_code_name(99), "UNKNOWN_CODE");
}

static void test_retry_after(void)
{
	/* 1994-11-06 08:49:37 UTC */
	const int64_t then = 784111777LL * 1000;

	CHECK_U64(transport__parse_retry_after("120", 0), 120000);
	CHECK_U64(transport__parse_retry_after(" 0 ", 0), 0);
	CHECK_U64(transport__parse_retry_after("99999999999999999999", 0), 86400 * 1000LL);
	CHECK_U64(transport__parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", then - 5000), 5000);
	CHECK_U64(transport__parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", then - 2000),
		  2000);
	CHECK_U64(transport__parse_retry_after("Sun Nov  6 08:49:37 1994", then - 1000), 1000);
	CHECK_U64(transport__parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", then + 9000), 0);
	CHECK_U64(transport__parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT  ", then), 0);
	const char *bad[] = {NULL,
			     "",
			     "-1",
			     "1.5",
			     "12abc",
			     "soon",
			     "Sun, 06 Foo 1994 08:49:37 GMT",
			     "Sun, 32 Nov 1994 08:49:37 GMT",
			     "Sun, 06 Nov 1994 25:49:37 GMT",
			     "Sun, 06 Nov 1994 08:49:37 GMT junk"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(transport__parse_retry_after(bad[i], then) == -1, "'%s' parsed",
		      bad[i] ? bad[i] : "(null)");
}

static void test_urls_and_headers(void)
{
	char err[256], buf[128];
	const char *good[] = {"http://h", "https://h:4318/v1development/profiles",
			      "HTTP://127.0.0.1:1/x?y=1", "https://[::1]:443/p",
			      "https://user:pw@h/otlp"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(url__check_http(good[i], err, sizeof(err)) == 0, "%s: %s", good[i], err);
	const char *bad[] = {NULL,
			     "",
			     "h:4318",
			     "ftp://h",
			     "http://",
			     "http://:80/",
			     "http://h:/",
			     "http://h:0",
			     "http://h:65536",
			     "http://h:12a",
			     "http://h /x",
			     "http://h/\x01",
			     "http://[::1/x",
			     "http://[]:1",
			     "https://h\xc3\xa9/"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(url__check_http(bad[i], err, sizeof(err)) == -EINVAL && err[0],
		      "bad URL #%zu accepted", i);
	}
	url__mask("https://user:s3cr3t@h:1/p?q=a@b", buf, sizeof(buf));
	CHECK_STR(buf, "https://***@h:1/p?q=a@b");
	url__mask("https://h/p@x", buf, sizeof(buf));
	CHECK_STR(buf, "https://h/p@x");
	char *joined = url__join("https://h:1/base//", "/ingest");
	CHECK(joined && !strcmp(joined, "https://h:1/base/ingest"), "join: %s",
	      joined ? joined : "(null)");
	free(joined);

	CHECK(transport__check_header("x-oneuptime-token", "abc def") == 0, "good header");
	CHECK(transport__check_header("x-token", "") == 0, "empty value");
	CHECK(transport__check_header("bad name", "v") == -EINVAL, "space in name");
	CHECK(transport__check_header("", "v") == -EINVAL, "empty name");
	CHECK(transport__check_header("x", "a\r\nInjected: 1") == -EINVAL, "CRLF in value");

	struct curl_slist *l = NULL;
	struct export_header h[] = {{"x-oneuptime-token", TOKEN}, {"x-empty", ""}};
	CHECK(transport__append_headers(&l, h, 2, err, sizeof(err)) == 0, "%s", err);
	CHECK(l && strcmp(l->data, "x-oneuptime-token: " TOKEN) == 0, "%s", l ? l->data : "-");
	CHECK(l && l->next && strcmp(l->next->data, "x-empty;") == 0, "empty value form");
	struct export_header bad_h[] = {{"Authorization: Bearer " TOKEN, "x"}};
	CHECK(transport__append_headers(&l, bad_h, 1, err, sizeof(err)) == -EINVAL, "bad header");
	CHECK(strstr(err, TOKEN) == NULL, "secret in message: %s", err);
	curl_slist_free_all(l);
}

static void test_sanitize_and_gzip(void)
{
	char out[16];
	uint8_t *gz = NULL;
	size_t gz_len = 0;

	static const char messy[] = "  bad\r\n\tinput\x01\xff ";

	log_text__sanitize(out, sizeof(out), messy, sizeof(messy) - 1);
	CHECK_STR(out, "bad input??");
	log_text__sanitize(out, sizeof(out), "0123456789abcdefghij", 20);
	CHECK_STR(out, "0123456789ab...");
	log_text__sanitize(out, sizeof(out), "", 0);
	CHECK_STR(out, "");

	CHECK(gzip__deflate("hello hello hello", 17, &gz, &gz_len) == 0, "gzip");
	CHECK(gz_len > 18 && gz[0] == 0x1f && gz[1] == 0x8b, "not gzip");
	free(gz);
	CHECK(gzip__deflate("", 0, &gz, &gz_len) == 0 && gz_len >= 20, "empty gzip");
	free(gz);
}

static void test_parse_responses(void)
{
	char msg[64];
	int64_t rej = -1, delay = 0;
	int32_t code = 0;

	/* partial_success {rejected_profiles: 3, error_message: "bad"} */
	const uint8_t pb[] = {0x0a, 0x07, 0x08, 0x03, 0x12, 0x03, 'b', 'a', 'd'};
	CHECK(otlp_response__parse(pb, sizeof(pb), false, &rej, msg, sizeof(msg)) == 0, "pb");
	CHECK(rej == 3, "rejected %lld", (long long)rej);
	CHECK_STR(msg, "bad");
	CHECK(otlp_response__parse("", 0, false, &rej, msg, sizeof(msg)) == 0 && rej == 0 &&
		      !msg[0],
	      "empty pb");
	const uint8_t empty_ps[] = {0x0a, 0x00, 0x78, 0x01}; /* + an unknown field 15 */
	CHECK(otlp_response__parse(empty_ps, sizeof(empty_ps), false, &rej, msg, sizeof(msg)) ==
			      0 &&
		      rej == 0,
	      "empty partial_success");
	const uint8_t broken[][4] = {{0x0a, 0x09, 0x08, 0x03},
				     {0x0a, 0x02, 0x08, 0xff},
				     {0x0b, 0x00, 0x00, 0x00},
				     {0x00, 0x00, 0x00, 0x00}};
	for (size_t i = 0; i < 4; i++)
		CHECK(otlp_response__parse(broken[i], 4, false, &rej, msg, sizeof(msg)) == -EBADMSG,
		      "broken pb #%zu", i);

	const char *json_ok[] = {"{}", " { } ", "", "{\"partialSuccess\":{}}",
				 "{\"partialSuccess\":null,\"x\":[1,{\"y\":\"}\"}]}"};
	for (size_t i = 0; i < sizeof(json_ok) / sizeof(json_ok[0]); i++) {
		rej = -1;
		CHECK(otlp_response__parse(json_ok[i], strlen(json_ok[i]), true, &rej, msg,
					   sizeof(msg)) == 0 &&
			      rej == 0 && !msg[0],
		      "json '%s'", json_ok[i]);
	}
	const char *j1 = "{\"partialSuccess\":{\"rejectedProfiles\":\"2\",\"errorMessage\":"
			 "\"two \\\"bad\\\"\\n\\u00e9\"}}";
	CHECK(otlp_response__parse(j1, strlen(j1), true, &rej, msg, sizeof(msg)) == 0 && rej == 2,
	      "json partial %lld", (long long)rej);
	CHECK_STR(msg, "two \"bad\" ?");
	const char *j2 =
		"{\"partial_success\":{\"error_message\":\"warn\",\"rejected_profiles\":7}}";
	CHECK(otlp_response__parse(j2, strlen(j2), true, &rej, msg, sizeof(msg)) == 0 && rej == 7 &&
		      !strcmp(msg, "warn"),
	      "snake_case json");
	const char *json_bad[] = {"{", "{\"partialSuccess\":{\"rejectedProfiles\":\"x\"}}", "[]",
				  "{\"a\":1,}", "{} {}", "{\"a\":\"\\u12\"}",
				  /* past int64: the cast would be undefined */
				  "{\"partialSuccess\":{\"rejectedProfiles\":1e300}}"};
	for (size_t i = 0; i < sizeof(json_bad) / sizeof(json_bad[0]); i++)
		CHECK(otlp_response__parse(json_bad[i], strlen(json_bad[i]), true, &rej, msg,
					   sizeof(msg)) == -EBADMSG,
		      "bad json '%s'", json_bad[i]);
	char deep[200];
	memset(deep, '[', sizeof(deep));
	memcpy(deep, "{\"a\":", 5);
	CHECK(otlp_response__parse(deep, sizeof(deep), true, &rej, msg, sizeof(msg)) == -EBADMSG,
	      "hostile nesting");

	/* google.rpc.Status {code: 14, message: "later", details: Any{RetryInfo{2.5 s}}} */
	const char type[] = "type.googleapis.com/google.rpc.RetryInfo";
	uint8_t st[128];
	size_t n = 0;
	st[n++] = 0x08;
	st[n++] = 14;
	st[n++] = 0x12;
	st[n++] = 5;
	memcpy(st + n, "later", 5);
	n += 5;
	st[n++] = 0x1a;
	st[n++] = (uint8_t)(2 + sizeof(type) - 1 + 2 + 6);
	st[n++] = 0x0a;
	st[n++] = sizeof(type) - 1;
	memcpy(st + n, type, sizeof(type) - 1);
	n += sizeof(type) - 1;
	st[n++] = 0x12; /* value: RetryInfo */
	st[n++] = 6;
	st[n++] = 0x0a; /* retry_delay: Duration */
	st[n++] = 4;
	st[n++] = 0x08; /* seconds 2 */
	st[n++] = 2;
	st[n++] = 0x10; /* nanos 0, written out */
	st[n++] = 0x00;
	CHECK(rpc_status__parse(st, n, &code, msg, sizeof(msg), &delay) == 0, "status");
	CHECK(code == 14 && !strcmp(msg, "later"), "code %d msg %s", code, msg);
	CHECK_U64(delay, 2000);
	CHECK(rpc_status__parse(st, 3, &code, msg, sizeof(msg), &delay) == -EBADMSG, "cut status");
	CHECK(rpc_status__parse("", 0, &code, msg, sizeof(msg), &delay) == 0 && delay == -1 &&
		      code == 0,
	      "empty status");
}

static void test_bad_configs(void)
{
	struct endpoint_config c = {.protocol = EXPORT_OTLP_HTTP_PROTOBUF, .url = "ftp://x/"};
	/* errors are logged: keep them out of the output */
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	errno = 0;
	CHECK(transport__new(&c) == NULL && errno == EINVAL, "ftp URL");
	c.url = "http://h x/";
	CHECK(transport__new(&c) == NULL && errno == EINVAL, "space in URL");
	c.url = NULL;
	CHECK(transport__new(&c) == NULL && errno == EINVAL, "no URL");
	CHECK(transport__new(NULL) == NULL && errno == EINVAL, "no config");
	c.url = "http://py/base?x=1";
	c.protocol = EXPORT_PYROSCOPE_PUSH;
	CHECK(transport__new(&c) == NULL && errno == EINVAL, "pyroscope base with a query");
	struct export_header h[] = {{"bad name", "v"}};
	c.url = "http://h/";
	c.headers = h;
	c.nr_headers = 1;
	CHECK(transport__new(&c) == NULL && errno == EINVAL, "bad header name");
	c.headers = NULL;
	c.nr_headers = 0;
	c.protocol = (enum export_protocol)42;
	CHECK(transport__new(&c) == NULL && errno == EINVAL, "unknown protocol");
	dup2(saved, 2);
	close(saved);
	close(null);
	transport__delete(NULL);
}

/* --- against the receiver --- */

static struct transport *http_transport(const struct receiver *r, enum export_protocol proto,
					const char *path, bool gzip, const struct export_header *h,
					size_t nh, long timeout_ms)
{
	char url[128];
	struct endpoint_config c = {
		.protocol = proto,
		.url = url,
		.headers = (struct export_header *)h,
		.nr_headers = nh,
		.gzip = gzip,
		.timeout_ms = timeout_ms,
		.user_agent = "hostprof/test",
	};

	url_for(url, sizeof(url), r, path);
	return transport__new(&c);
}

static void test_gzip_on_off(void)
{
	struct receiver r;
	struct send_result res;
	struct export_payload p = payload("0123456789abcdef", 1000);

	if (!need_receiver(&r, NULL, 0))
		goto out;
	for (int gz = 1; gz >= 0; gz--) {
		struct transport *t =
			http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, gz, NULL, 0, 5000);
		size_t i = (size_t)(1 - gz);

		CHECK(t != NULL, "transport__new: %s", strerror(errno));
		if (!t)
			continue;
		CHECK(transport__send(t, &p, &res) == 0, "send");
		CHECK(res.outcome == SEND_OK && res.code == 200, "outcome %d code %ld: %s",
		      res.outcome, res.code, res.message);
		CHECK(receiver_wait(&r, i + 1, 3000), "not recorded");
		CHECK(meta_has(&r, i, "method POST"), "method");
		CHECK(meta_has(&r, i, "path " OTLP_PATH), "path");
		CHECK(meta_has(&r, i, "header content-type: application/x-protobuf"), "type");
		CHECK(meta_has(&r, i, "header user-agent: hostprof/test"), "user agent");
		CHECK(meta_has(&r, i, gz ? "gzip 1" : "gzip 0"), "gzip flag");
		CHECK(meta_has_prefix(&r, i, "header content-encoding: gzip") == (gz == 1),
		      "content-encoding with gzip=%d", gz);
		CHECK(body_equals(&r, i, p.body, p.len), "body differs (gzip=%d)", gz);
		if (gz) {
			char *raw = meta_value(&r, i, "raw_length ");
			CHECK(raw && (size_t)atol(raw) < p.len / 4, "not compressed: %s",
			      raw ? raw : "?");
			free(raw);
		}
		CHECK(strstr(transport__describe(t), "OTLP/HTTP http://127.0.0.1:") != NULL,
		      "describe %s", transport__describe(t));
		transport__delete(t);
	}
out:
	export_payload__release(&p);
	receiver_stop(&r);
}

static void test_headers_and_secrets(void)
{
	struct receiver r;
	struct send_result res;
	struct export_payload p = payload("profile", 10);
	struct export_header h[] = {{"x-oneuptime-token", TOKEN}, {"Content-Type", "text/evil"}};
	char logpath[] = "/tmp/hostprof-stderr.XXXXXX";
	int fd = -1, saved = -1;
	enum log_level lv = log_get_level();
	bool describe_ok = false;

	if (!need_receiver(&r, "{\"responses\":[{}, {\"status\":401,\"body\":\"unauthorized\"}]}",
			   0))
		goto out;
	/* Everything the transport logs at debug level goes to a file we then search. */
	fd = mkstemp(logpath);
	saved = dup(2);
	fflush(stderr);
	dup2(fd, 2);
	log_set_level(LOG_DEBUG);

	struct transport *t =
		http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, true, h, 2, 5000);
	if (t) {
		transport__send(t, &p, &res);
		transport__send(t, &p, &res); /* a refusal */
		describe_ok = strstr(transport__describe(t), TOKEN) == NULL &&
			      strstr(transport__describe(t), "oneuptime") == NULL;
		transport__delete(t);
	}

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	log_set_level(lv);
	CHECK(t != NULL, "transport__new");
	CHECK(describe_ok, "describe() shows headers");
	CHECK(res.outcome == SEND_DROP && res.code == 401, "401: %d %ld", res.outcome, res.code);
	CHECK(receiver_wait(&r, 2, 3000), "not recorded");
	CHECK(meta_has(&r, 0, "header x-oneuptime-token: " TOKEN), "token did not arrive");
	CHECK(meta_has(&r, 0, "header content-type: application/x-protobuf") &&
		      !meta_has_prefix(&r, 0, "header content-type: text/evil"),
	      "a configured Content-Type overrode the transport's");
	char *log = slurp(logpath, NULL);
	CHECK(log && strstr(log, "x-oneuptime-token") != NULL, "header names not logged: %s",
	      log ? log : "");
	CHECK(log && strstr(log, TOKEN) == NULL, "the token was logged: %s", log ? log : "");
	free(log);
	unlink(logpath);
	close(fd);
out:
	export_payload__release(&p);
	receiver_stop(&r);
}

static void test_json_and_partial_success(void)
{
	struct receiver r;
	struct send_result res;
	struct export_payload p = payload("{\"resourceProfiles\":[]}", 1);
	struct transport *t;

	/* OneUptime's {}, a protobuf partial success, a JSON partial success, an empty 200 */
	if (!need_receiver(&r,
			   "{\"responses\":["
			   "{\"content_type\":\"application/json\",\"body\":\"{}\"},"
			   "{\"content_type\":\"application/x-protobuf\","
			   "\"body_hex\":\"0a0708031203626164\"},"
			   "{\"content_type\":\"application/json\",\"body\":"
			   "\"{\\\"partialSuccess\\\":{\\\"rejectedProfiles\\\":\\\"2\\\","
			   "\\\"errorMessage\\\":\\\"too old\\\"}}\"},"
			   "{\"content_type\":\"application/x-protobuf\"},"
			   "{\"content_type\":\"text/html\",\"body\":\"<html>ok</html>\"}"
			   "]}",
			   0))
		goto out;
	t = http_transport(&r, EXPORT_OTLP_HTTP_JSON, "/otlp/v1/profiles", false, NULL, 0, 5000);
	CHECK(t != NULL, "transport__new");
	if (!t)
		goto out;
	CHECK(transport__send(t, &p, &res) == 0 && res.outcome == SEND_OK, "{}: %s", res.message);
	CHECK(res.rejected == 0 && !res.message[0], "{} is full success: %lld %s",
	      (long long)res.rejected, res.message);
	CHECK(transport__send(t, &p, &res) == 0 && res.outcome == SEND_OK, "pb partial");
	CHECK(res.rejected == 3 && !strcmp(res.message, "bad"), "pb partial: %lld '%s'",
	      (long long)res.rejected, res.message);
	CHECK(transport__send(t, &p, &res) == 0 && res.outcome == SEND_OK, "json partial");
	CHECK(res.rejected == 2 && !strcmp(res.message, "too old"), "json partial: %lld '%s'",
	      (long long)res.rejected, res.message);
	CHECK(transport__send(t, &p, &res) == 0 && res.outcome == SEND_OK && res.rejected == 0,
	      "empty 200");
	CHECK(transport__send(t, &p, &res) == 0 && res.outcome == SEND_OK && res.rejected == 0,
	      "undecodable 200 is still delivered");
	CHECK(receiver_wait(&r, 5, 3000), "not recorded");
	CHECK(meta_has(&r, 0, "path /otlp/v1/profiles"), "URL not used as is");
	CHECK(meta_has(&r, 0, "header content-type: application/json"), "JSON content type");
	CHECK(body_equals(&r, 0, p.body, p.len), "body");
	/* five requests, one connection */
	char *peer0 = meta_value(&r, 0, "peer "), *peer4 = meta_value(&r, 4, "peer ");
	CHECK(peer0 && peer4 && !strcmp(peer0, peer4), "no keep-alive: %s vs %s",
	      peer0 ? peer0 : "-", peer4 ? peer4 : "-");
	free(peer0);
	free(peer4);
	transport__delete(t);
out:
	export_payload__release(&p);
	receiver_stop(&r);
}

static void test_refusals(void)
{
	struct receiver r;
	struct send_result res;
	struct export_payload p = payload("x", 10);
	struct transport *t;
	char long_body[700];

	memset(long_body, 'L', sizeof(long_body) - 1);
	long_body[sizeof(long_body) - 1] = '\0';
	char script[2048];
	snprintf(script, sizeof(script),
		 "{\"responses\":["
		 "{\"status\":400,\"content_type\":\"text/plain\",\"body\":\"bad profile:\\n "
		 "no dictionary\\u0001\"},"
		 "{\"status\":503,\"headers\":{\"Retry-After\":\"7\"},\"body\":\"busy\"},"
		 "{\"status\":429,\"retry_after_date_in\":3},"
		 "{\"status\":502},"
		 "{\"status\":413,\"body\":\"%s\"},"
		 "{\"status\":302,\"headers\":{\"Location\":\"https://u:pw@elsewhere/x\"}},"
		 "{\"status\":400,\"content_type\":\"application/x-protobuf\","
		 "\"body_hex\":\"0803120d6e6f2064696374696f6e617279\"}"
		 "]}",
		 long_body);
	if (!need_receiver(&r, script, 0))
		goto out;
	t = http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, false, NULL, 0, 5000);
	CHECK(t != NULL, "transport__new");
	if (!t)
		goto out;
	transport__send(t, &p, &res);
	CHECK(res.outcome == SEND_DROP && res.code == 400, "400: %d %ld", res.outcome, res.code);
	CHECK_STR(res.message, "HTTP 400: bad profile: no dictionary?");
	transport__send(t, &p, &res);
	CHECK(res.outcome == SEND_RETRY && res.code == 503, "503");
	CHECK_U64(res.retry_after_ms, 7000);
	transport__send(t, &p, &res);
	CHECK(res.outcome == SEND_RETRY && res.code == 429, "429");
	CHECK(res.retry_after_ms >= 1000 && res.retry_after_ms <= 4000,
	      "HTTP-date Retry-After gave %lld ms", (long long)res.retry_after_ms);
	transport__send(t, &p, &res);
	CHECK(res.outcome == SEND_RETRY && res.code == 502 && res.retry_after_ms == -1, "502");
	transport__send(t, &p, &res);
	CHECK(res.outcome == SEND_DROP && res.code == 413, "413");
	CHECK(strlen(res.message) < 330 && strstr(res.message, "LLL...") != NULL,
	      "long body not cut: %zu bytes", strlen(res.message));
	transport__send(t, &p, &res);
	CHECK(res.outcome == SEND_DROP && res.code == 302, "302 not followed");
	CHECK(strstr(res.message, "elsewhere") && !strstr(res.message, "pw@"), "302: %s",
	      res.message);
	transport__send(t, &p, &res);
	CHECK(res.outcome == SEND_DROP && strcmp(res.message, "HTTP 400: no dictionary") == 0,
	      "google.rpc.Status body: %s", res.message);
	CHECK(receiver_wait(&r, 7, 3000) && receiver_count(&r) == 7, "requests %zu",
	      receiver_count(&r));
	transport__delete(t);
out:
	export_payload__release(&p);
	receiver_stop(&r);
}

static void test_pyroscope(void)
{
	struct receiver r;
	struct send_result res;
	struct export_payload p = payload("pprof-bytes", 3);
	struct export_header h[] = {{"x-oneuptime-token", TOKEN}};
	struct transport *t;

	if (!need_receiver(&r, NULL, 0))
		goto out;
	t = http_transport(&r, EXPORT_PYROSCOPE_PUSH, "/pyroscope/", false, h, 1, 5000);
	CHECK(t != NULL, "push transport");
	if (t) {
		CHECK(transport__send(t, &p, &res) == 0 && res.outcome == SEND_OK, "push: %s",
		      res.message);
		CHECK(strstr(transport__describe(t), "Pyroscope push") != NULL, "describe %s",
		      transport__describe(t));
		transport__delete(t);
	}
	CHECK(receiver_wait(&r, 1, 3000), "push not recorded");
	CHECK(meta_has(&r, 0, "path /pyroscope/push.v1.PusherService/Push"), "push path");
	CHECK(meta_has(&r, 0, "header content-type: application/proto"), "push type");
	CHECK(meta_has(&r, 0, "header connect-protocol-version: 1"), "connect header");
	CHECK(meta_has(&r, 0, "header x-oneuptime-token: " TOKEN), "push token");
	CHECK(body_equals(&r, 0, p.body, p.len), "push body");

	t = http_transport(&r, EXPORT_PYROSCOPE_INGEST, "/pyroscope", false, h, 1, 5000);
	CHECK(t != NULL, "ingest transport");
	if (t) {
		p.query = strdup("name=app.cpu%7Bhost%3Da%7D&from=1700000000&until=1700000010"
				 "&format=pprof&sampleRate=99&spyName=hostprof");
		CHECK(transport__send(t, &p, &res) == 0 && res.outcome == SEND_OK, "ingest: %s",
		      res.message);
		transport__delete(t);
	}
	CHECK(receiver_wait(&r, 2, 3000), "ingest not recorded");
	CHECK(meta_has(&r, 1,
		       "path /pyroscope/ingest?name=app.cpu%7Bhost%3Da%7D&from=1700000000"
		       "&until=1700000010&format=pprof&sampleRate=99&spyName=hostprof"),
	      "ingest path and query");
	CHECK(meta_has(&r, 1, "header content-type: application/octet-stream"), "ingest type");
	CHECK(!meta_has_prefix(&r, 1, "header connect-protocol-version"), "connect on ingest");
	CHECK(body_equals(&r, 1, p.body, p.len), "ingest body");
out:
	export_payload__release(&p);
	receiver_stop(&r);
}

static void test_unreachable_and_timeout(void)
{
	struct receiver r = {.pid = -1};
	struct send_result res;
	struct export_payload p = payload("x", 1);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct transport *t;
	int64_t t0;

	/* A port that nobody listens on: bound and closed again. */
	bind(s, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(s, (struct sockaddr *)&sa, &sl);
	close(s);
	r.port = ntohs(sa.sin_port);
	t = http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, true, NULL, 0, 2000);
	CHECK(t != NULL, "transport__new");
	if (t) {
		CHECK(transport__send(t, &p, &res) == 0, "send");
		CHECK(res.outcome == SEND_RETRY && res.code == 0, "refused: %d %ld", res.outcome,
		      res.code);
		CHECK(strstr(res.message, "connect") || strstr(res.message, "Connect"),
		      "message: %s", res.message);
		transport__delete(t);
	}

	if (!need_receiver(&r, "{\"default\":{\"delay\":3}}", 0))
		goto out;
	t = http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, true, NULL, 0, 500);
	CHECK(t != NULL, "transport__new");
	if (t) {
		t0 = now_ms();
		CHECK(transport__send(t, &p, &res) == 0, "send");
		CHECK(now_ms() - t0 < 2500, "timeout of 500 ms took %lld ms",
		      (long long)(now_ms() - t0));
		CHECK(res.outcome == SEND_RETRY && res.code == 0, "timeout: %d %ld %s", res.outcome,
		      res.code, res.message);
		CHECK(strstr(res.message, "imeout") != NULL, "message: %s", res.message);

		/* No timeout at all, but a shutdown deadline: it cuts the request short. */
		transport__delete(t);
		t = http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, true, NULL, 0, 0);
		transport__set_deadline(t, now_ms() + 300);
		t0 = now_ms();
		transport__send(t, &p, &res);
		CHECK(now_ms() - t0 < 2500, "the deadline did not cut the request: %lld ms",
		      (long long)(now_ms() - t0));
		CHECK(res.outcome == SEND_RETRY && strstr(res.message, "deadline"), "%s",
		      res.message);
		transport__send(t, &p, &res);
		CHECK(res.outcome == SEND_RETRY && strstr(res.message, "not sent"),
		      "sent after the deadline: %s", res.message);
		transport__delete(t);
	}
out:
	export_payload__release(&p);
	receiver_stop(&r);
}

/* --- the exporter over HTTP --- */

static void submit_named(struct exporter *e, const char *name, size_t len)
{
	struct export_payload p = payload(name, 1);

	p.body = realloc(p.body, len);
	memset(p.body + strlen(name), '.', len - strlen(name));
	p.len = len;
	exporter__submit(e, &p);
}

static bool body_starts(const struct receiver *r, size_t i, const char *name)
{
	char *b = record(r, i, "body", NULL);
	bool ok = b && strncmp(b, name, strlen(name)) == 0 && b[strlen(name)] == '.';

	free(b);
	return ok;
}

static void test_exporter_retry_after(void)
{
	struct receiver r;
	struct exporter_stats st;
	struct exporter *e;
	struct transport *t;

	if (!need_receiver(&r,
			   "{\"responses\":[{\"status\":503,\"headers\":{\"Retry-After\":\"1\"},"
			   "\"body\":\"busy\"}]}",
			   0))
		goto out;
	t = http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, true, NULL, 0, 5000);
	e = exporter__new(t, &(struct exporter_opts){.initial_backoff_ms = 5000});
	CHECK(e != NULL, "exporter__new");
	if (!e)
		goto out;
	submit_named(e, "only", 64);
	CHECK(receiver_wait(&r, 2, 5000), "no retry");
	exporter__shutdown(e, 10000, &st);
	CHECK_U64(receiver_count(&r), 2); /* exactly once delivered, after one 503 */
	CHECK(body_starts(&r, 0, "only") && body_starts(&r, 1, "only"), "bodies");
	CHECK_U64(st.delivered, 1);
	CHECK_U64(st.retries, 1);
	CHECK_U64(st.undelivered, 0);
out:
	receiver_stop(&r);
}

static void test_exporter_400_once(void)
{
	struct receiver r;
	struct exporter_stats st;
	struct exporter *e;

	if (!need_receiver(&r, "{\"default\":{\"status\":400,\"body\":\"invalid\"}}", 0))
		goto out;
	e = exporter__new(
		http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, true, NULL, 0, 5000),
		&(struct exporter_opts){.initial_backoff_ms = 10, .max_backoff_ms = 50});
	CHECK(e != NULL, "exporter__new");
	if (!e)
		goto out;
	submit_named(e, "refused", 64);
	exporter__shutdown(e, 3000, &st);
	usleep(200 * 1000); /* a retry, if one came, would have arrived */
	CHECK_U64(receiver_count(&r), 1);
	CHECK_U64(st.dropped_refused, 1);
	CHECK_U64(st.delivered, 0);
	CHECK_U64(st.retries, 0);
out:
	receiver_stop(&r);
}

static void test_exporter_receiver_down(void)
{
	struct receiver r;
	struct exporter_stats st;
	struct exporter *e;
	char name[8];
	int64_t t0 = now_ms();

	/* down for 10 s, then up */
	if (!need_receiver(&r, NULL, 10))
		goto out;
	e = exporter__new(
		http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, true, NULL, 0, 2000),
		&(struct exporter_opts){.initial_backoff_ms = 200, .max_backoff_ms = 2000});
	CHECK(e != NULL, "exporter__new");
	if (!e)
		goto out;
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		submit_named(e, name, 256);
	}
	exporter__shutdown(e, 30000, &st);
	CHECK(now_ms() - t0 >= 9000, "delivered while the receiver was down?");
	CHECK_U64(st.delivered, 5);
	CHECK_U64(st.undelivered, 0);
	CHECK(st.retries >= 1, "no retries while down");
	CHECK_U64(receiver_count(&r), 5);
	bool in_order = true;
	for (size_t i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "d%zu", i);
		in_order = in_order && body_starts(&r, i, name);
	}
	CHECK(in_order, "not all five arrived in order");
out:
	receiver_stop(&r);
}

static void test_exporter_slow_receiver_full_queue(void)
{
	struct receiver r;
	struct exporter_stats st;
	struct exporter *e;
	int64_t t0, worst = 0;

	if (!need_receiver(&r, "{\"responses\":[{\"delay\":2}]}", 0))
		goto out;
	e = exporter__new(
		http_transport(&r, EXPORT_OTLP_HTTP_PROTOBUF, OTLP_PATH, false, NULL, 0, 10000),
		&(struct exporter_opts){.queue_max_bytes = 350});
	CHECK(e != NULL, "exporter__new");
	if (!e)
		goto out;
	submit_named(e, "q0", 100);
	CHECK(receiver_wait(&r, 1, 3000), "q0 not in flight");
	/* The receiver sits on q0 for 2 s: submitting must not notice. */
	for (int i = 1; i <= 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "q%d", i);
		t0 = now_ms();
		submit_named(e, name, 100);
		if (now_ms() - t0 > worst)
			worst = now_ms() - t0;
	}
	CHECK(worst < 1000, "submit blocked for %lld ms", (long long)worst);
	exporter__stats(e, &st);
	CHECK_U64(st.dropped_full, 3); /* q1..q3: the oldest not on the wire */
	CHECK_U64(receiver_count(&r), 1);
	exporter__shutdown(e, 10000, &st);
	CHECK_U64(st.delivered, 3);
	CHECK_U64(st.dropped_full, 3);
	CHECK_U64(receiver_count(&r), 3);
	CHECK(body_starts(&r, 0, "q0") && body_starts(&r, 1, "q4") && body_starts(&r, 2, "q5"),
	      "kept the wrong ones");
out:
	receiver_stop(&r);
}

int main(void)
{
	/* Tests provoke warnings on purpose; show only failures (and what a test captures). */
	log_set_level(LOG_ERROR);
	signal(SIGPIPE, SIG_IGN);
	/* libcurl honours *_proxy variables: the receiver is on loopback, never behind one. */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);

	test_classify();
	test_retry_after();
	test_urls_and_headers();
	test_sanitize_and_gzip();
	test_parse_responses();
	test_bad_configs();

	test_gzip_on_off();
	test_headers_and_secrets();
	test_json_and_partial_success();
	test_refusals();
	test_pyroscope();
	test_unreachable_and_timeout();
	test_exporter_retry_after();
	test_exporter_400_once();
	test_exporter_slow_receiver_full_queue();
	test_exporter_receiver_down();
	return check_summary("test_transport_http");
}

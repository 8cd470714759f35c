// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTLP/gRPC transport against a real gRPC server: tests/grpc/server.js, on @grpc/grpc-js
 * with our own .proto files, so that framing, compression, metadata, trailers and status
 * details are checked against an independent implementation. The server records each decoded
 * request and its metadata as JSON, and answers as scripted: UNAVAILABLE, RESOURCE_EXHAUSTED
 * with and without RetryInfo, INVALID_ARGUMENT, partial success, a bare HTTP 503 from a
 * "proxy", a slow answer.
 *
 * Needs node and tests/grpc/node_modules (`make test` installs them): their absence is a
 * failure, not a skip. HOSTPROF_GRPC_SERVER_DIR (default tests/grpc) and HOSTPROF_PROTO_DIR
 * (default proto) say where they are, relative to the working directory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "check.h"
#include "base/log.h"
#include "export/transport.h"

#define SECRET "secret-token-6f1c"

struct server {
	pid_t pid;
	int out_fd; /* its stdout: the "listening" line */
	int in_fd;  /* its stdin: closing it makes the server exit (--exit-with-stdin) */
	int port;
	char dir[64]; /* where it records call-N.json */
};

static const char *server_dir(void)
{
	const char *d = getenv("HOSTPROF_GRPC_SERVER_DIR");

	return d && *d ? d : "tests/grpc";
}

static const char *proto_dir(void)
{
	const char *d = getenv("HOSTPROF_PROTO_DIR");

	return d && *d ? d : "proto";
}

/* --- a hand-made ExportProfilesServiceRequest --- */

struct pbuf {
	uint8_t *p;
	size_t len, cap;
};

static void pb_raw(struct pbuf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t c;

	do {
		c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		pb_raw(b, &c, 1);
	} while (v);
}

static void pb_uint(struct pbuf *b, unsigned field, uint64_t v)
{
	pb_varint(b, field << 3);
	pb_varint(b, v);
}

static void pb_fixed64(struct pbuf *b, unsigned field, uint64_t v)
{
	uint8_t le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb_varint(b, field << 3 | 1);
	pb_raw(b, le, 8);
}

static void pb_str(struct pbuf *b, unsigned field, const char *s)
{
	pb_varint(b, field << 3 | 2);
	pb_varint(b, strlen(s));
	pb_raw(b, s, strlen(s));
}

/* Appends sub as a length-delimited field and frees it. */
static void pb_msg(struct pbuf *b, unsigned field, struct pbuf *sub)
{
	pb_varint(b, field << 3 | 2);
	pb_varint(b, sub->len);
	pb_raw(b, sub->p, sub->len);
	free(sub->p);
	memset(sub, 0, sizeof(*sub));
}

/*
 * One resource with service.name, one scope, one profile; a dictionary with its seven zero
 * entries and a string table "", "cpu", "nanoseconds", then extra_strings "frame_N" (to make a
 * payload big enough that gzip shows and curl reads it in several pieces).
 */
static void build_request(struct export_payload *p, int extra_strings)
{
	struct pbuf req = {0}, rp = {0}, res = {0}, kv = {0}, any = {0}, sp = {0}, scope = {0};
	struct pbuf prof = {0}, vt = {0}, dict = {0}, empty = {0};
	char s[32];

	pb_str(&any, 1, "grpc-test");
	pb_str(&kv, 1, "service.name");
	pb_msg(&kv, 2, &any);
	pb_msg(&res, 1, &kv);
	pb_msg(&rp, 1, &res);

	pb_str(&scope, 1, "hostprof");
	pb_msg(&sp, 1, &scope);
	pb_uint(&vt, 1, 1);
	pb_uint(&vt, 2, 2);
	pb_msg(&prof, 1, &vt);
	pb_fixed64(&prof, 3, 1700000000123456789ull);
	pb_uint(&prof, 4, 10000000000ull);
	pb_uint(&prof, 6, 10101010);
	pb_msg(&sp, 2, &prof);
	pb_msg(&rp, 2, &sp);
	pb_msg(&req, 1, &rp);

	for (unsigned f = 1; f <= 7; f++) {
		if (f == 5) {
			pb_str(&dict, 5, "");
			pb_str(&dict, 5, "cpu");
			pb_str(&dict, 5, "nanoseconds");
			for (int i = 0; i < extra_strings; i++) {
				snprintf(s, sizeof(s), "frame_%d", i);
				pb_str(&dict, 5, s);
			}
		} else {
			pb_msg(&dict, f, &empty);
		}
	}
	pb_msg(&req, 2, &dict);

	memset(p, 0, sizeof(*p));
	p->body = req.p;
	p->len = req.len;
}

/* --- the server --- */

static bool read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return false;
		r = read(fd, buf + n, 1);
		if (r <= 0)
			return false;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return true;
		}
		n++;
	}
	return false;
}

static void server_stop(struct server *s)
{
	int status;

	if (s->pid > 0) {
		close(s->in_fd);
		close(s->out_fd);
	}
	/* It exits on stdin EOF; give it two seconds before insisting. */
	for (int i = 0; i < 200 && s->pid > 0; i++) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			break;
		}
		usleep(10000);
	}
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &status, 0);
		s->pid = 0;
	}
	for (int i = 1; i < 100 && s->dir[0]; i++) {
		char f[128];

		snprintf(f, sizeof(f), "%s/call-%d.json", s->dir, i);
		unlink(f);
	}
	if (s->dir[0])
		rmdir(s->dir);
	s->dir[0] = '\0';
}

static const char *tls_dir(char *buf, size_t len)
{
	const char *out = getenv("OUTPUT");

	snprintf(buf, len, "%s/fixtures/grpc-tls", out && *out ? out : "build");
	return buf;
}

/*
 * Start server.js with an answer script, serving TLS with the certificate in tls (a directory)
 * unless that is NULL. 0, or -1 after a failed check saying why.
 */
static int server_start_tls(struct server *s, const char *answers, int max_calls, const char *tls)
{
	char script[PATH_MAX], calls[16], line[128];
	const char *argv[24];
	int out[2], in[2], n = 0;

	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "/tmp/hostprof-grpc-test.XXXXXX");
	if (!mkdtemp(s->dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return -1;
	}
	snprintf(script, sizeof(script), "%s/server.js", server_dir());
	snprintf(calls, sizeof(calls), "%d", max_calls);
	if (pipe2(out, O_CLOEXEC)) {
		CHECK(0, "pipe: %s", strerror(errno));
		server_stop(s);
		return -1;
	}
	if (pipe2(in, O_CLOEXEC)) {
		CHECK(0, "pipe: %s", strerror(errno));
		close(out[0]);
		close(out[1]);
		server_stop(s);
		return -1;
	}
	fflush(NULL);
	s->pid = fork();
	if (s->pid == 0) {
		const char *fixed[] = {"node",	    script,  "--port",		 "0",
				       "--out",	    s->dir,  "--proto",		 proto_dir(),
				       "--answers", answers, "--max-calls",	 calls,
				       "--timeout", "60",    "--exit-with-stdin"};

		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			argv[n++] = fixed[i];
		if (tls) {
			argv[n++] = "--tls";
			argv[n++] = tls;
		}
		argv[n] = NULL;
		dup2(in[0], 0);
		dup2(out[1], 1);
		execvp("node", (char *const *)argv);
		fprintf(stderr, "exec node: %s\n", strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->in_fd = in[1];
	s->out_fd = out[0];
	if (s->pid < 0) {
		CHECK(0, "fork: %s", strerror(errno));
		close(s->in_fd);
		close(s->out_fd);
		server_stop(s);
		return -1;
	}
	if (!read_line(s->out_fd, line, sizeof(line), 20000) ||
	    sscanf(line, "listening 127.0.0.1:%d", &s->port) != 1) {
		CHECK(0,
		      "the gRPC test server (node %s) did not start: is node installed? run "
		      "`make test`, which installs tests/grpc/node_modules",
		      script);
		server_stop(s);
		return -1;
	}
	return 0;
}

static int server_start(struct server *s, const char *answers, int max_calls)
{
	return server_start_tls(s, answers, max_calls, NULL);
}

/* DIR/call-N.json as a string (malloc'ed), or NULL. */
static char *server_record(const struct server *s, int call)
{
	char path[128], *buf = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/call-%d.json", s->dir, call);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

#define CHECK_HAS(hay, needle)                                                                     \
	CHECK((hay) && strstr((hay), (needle)), "'%s' not in %.600s", (needle),                    \
	      (hay) ? (hay) : "(no record)")
#define CHECK_LACKS(hay, needle)                                                                   \
	CHECK((hay) && !strstr((hay), (needle)), "'%s' found in %.600s", (needle),                 \
	      (hay) ? (hay) : "(no record)")

/* --- the tests --- */

static void config_for(struct endpoint_config *cfg, const struct server *s, char *url,
		       size_t urllen)
{
	static struct export_header headers[] = {
		{.name = "x-oneuptime-token", .value = SECRET},
		{.name = "X-Tenant", .value = "team-a"},
	};

	snprintf(url, urllen, "http://127.0.0.1:%d/", s->port);
	memset(cfg, 0, sizeof(*cfg));
	cfg->protocol = EXPORT_OTLP_GRPC;
	cfg->url = url;
	cfg->headers = headers;
	cfg->nr_headers = 2;
	cfg->timeout_ms = 10000;
	cfg->user_agent = "hostprof-test/1.0";
}

static void test_config_errors(void)
{
	struct export_header reserved = {.name = "grpc-timeout", .value = "1S"};
	struct export_header crlf = {.name = "x-token", .value = "a\r\nx-evil: 1"};
	struct endpoint_config cfg = {.protocol = EXPORT_OTLP_GRPC, .timeout_ms = 1000};
	const char *bad_urls[] = {
		"http://127.0.0.1:4317/v1development/profiles", /* an OTLP/HTTP URL */
		"ftp://127.0.0.1:4317",
		"127.0.0.1:4317",
		"http://127.0.0.1:4317/?a=b",
		"http://:4317",
	};
	struct transport *t;

	for (size_t i = 0; i < sizeof(bad_urls) / sizeof(bad_urls[0]); i++) {
		cfg.url = (char *)bad_urls[i];
		errno = 0;
		t = transport__new(&cfg);
		CHECK(!t && errno == EINVAL, "'%s' accepted (errno %d)", bad_urls[i], errno);
		transport__delete(t);
	}
	cfg.url = "http://127.0.0.1:4317";
	cfg.headers = &reserved;
	cfg.nr_headers = 1;
	t = transport__new(&cfg);
	CHECK(!t && errno == EINVAL, "reserved header grpc-timeout accepted");
	transport__delete(t);
	cfg.headers = &crlf;
	t = transport__new(&cfg);
	CHECK(!t && errno == EINVAL, "header value with CR LF accepted");
	transport__delete(t);

	cfg.headers = NULL;
	cfg.nr_headers = 0;
	cfg.url = "http://user:pw@127.0.0.1:4317/";
	t = transport__new(&cfg);
	CHECK(t != NULL, "URL with userinfo refused: %s", strerror(errno));
	if (t) {
		CHECK_LACKS(transport__describe(t), "pw");
		CHECK_HAS(transport__describe(t), "OTLP/gRPC http://");
		CHECK_HAS(transport__describe(t), "127.0.0.1:4317");
	}
	transport__delete(t);
}

/* Sends one payload through a fresh transport; logs go to a file checked for the secret. */
static int send_once(const struct endpoint_config *cfg, const struct export_payload *p,
		     struct send_result *res)
{
	struct transport *t = transport__new(cfg);
	int err;

	CHECK(t != NULL, "transport__new: %s", strerror(errno));
	if (!t)
		return -1;
	err = transport__send(t, p, res);
	CHECK(err == 0, "send: %s", strerror(-err));
	transport__delete(t);
	return err;
}

/* ok (plain), ok (gzip, big), partial success, a garbled answer: all delivered. */
static void test_delivery(void)
{
	struct endpoint_config cfg;
	struct export_payload small, big;
	struct send_result res;
	struct transport *t;
	struct server s;
	char url[64], want[64], *rec;

	if (server_start(&s, "ok,ok,ok,partial:3:three profiles rejected,garbage", 5))
		return;
	config_for(&cfg, &s, url, sizeof(url));
	build_request(&small, 0);
	build_request(&big, 3000);

	t = transport__new(&cfg);
	CHECK(t != NULL, "transport__new: %s", strerror(errno));
	if (!t)
		goto out;
	snprintf(want, sizeof(want), "OTLP/gRPC http://127.0.0.1:%d", s.port);
	CHECK_STR(transport__describe(t), want);

	CHECK(transport__send(t, &small, &res) == 0, "send");
	CHECK(res.outcome == SEND_OK, "outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.code, 0);
	CHECK_U64(res.rejected, 0);
	CHECK_STR(res.message, "");
	rec = server_record(&s, 1);
	/* The decoded request, 64-bit fields as strings. */
	CHECK_HAS(rec, "\"string_table\":[\"\",\"cpu\",\"nanoseconds\"]");
	CHECK_HAS(rec, "\"mapping_table\":[{}]");
	CHECK_HAS(rec, "\"stack_table\":[{}]");
	CHECK_HAS(rec, "\"key\":\"service.name\"");
	CHECK_HAS(rec, "\"string_value\":\"grpc-test\"");
	CHECK_HAS(rec, "\"scope\":{\"name\":\"hostprof\"}");
	CHECK_HAS(rec, "\"time_unix_nano\":\"1700000000123456789\"");
	CHECK_HAS(rec, "\"duration_nano\":\"10000000000\"");
	CHECK_HAS(rec, "\"period\":\"10101010\"");
	CHECK_HAS(rec, "\"sample_type\":{\"type_strindex\":1,\"unit_strindex\":2}");
	/* Metadata, names lowercased; what curl and gRPC need on the wire. */
	CHECK_HAS(rec, "\"x-oneuptime-token\":\"" SECRET "\"");
	CHECK_HAS(rec, "\"x-tenant\":\"team-a\"");
	CHECK_HAS(rec, "\"path\":\"/opentelemetry.proto.collector.profiles.v1development."
		       "ProfilesService/Export\"");
	CHECK_HAS(rec, "\"method\":\"POST\"");
	CHECK_HAS(rec, "\"content-type\":\"application/grpc\"");
	CHECK_HAS(rec, "\"te\":\"trailers\"");
	CHECK_HAS(rec, "\"grpc-accept-encoding\":\"gzip\"");
	CHECK_HAS(rec, "\"grpc-timeout\":\"10000m\"");
	CHECK_HAS(rec, "\"user-agent\":\"hostprof-test/1.0\"");
	CHECK_LACKS(rec, "grpc-encoding");
	CHECK_LACKS(rec, "\"accept\":");
	CHECK_HAS(rec, "\"compressed_flag\":0");
	snprintf(want, sizeof(want), "\"frame_length\":%zu}", small.len);
	CHECK_HAS(rec, want);
	free(rec);

	/* The same connection, a second time: the handle is reused. */
	CHECK(transport__send(t, &small, &res) == 0, "send");
	CHECK(res.outcome == SEND_OK, "second send: %d: %s", res.outcome, res.message);
	transport__delete(t);

	cfg.gzip = true;
	cfg.nr_headers = 0;
	if (send_once(&cfg, &big, &res) == 0) {
		CHECK(res.outcome == SEND_OK, "gzip: outcome %d: %s", res.outcome, res.message);
		rec = server_record(&s, 3);
		CHECK_HAS(rec, "\"grpc-encoding\":\"gzip\"");
		CHECK_HAS(rec, "\"compressed_flag\":1");
		CHECK_HAS(rec, "\"frame_2999\"");
		CHECK_HAS(rec, "\"time_unix_nano\":\"1700000000123456789\"");
		CHECK_LACKS(rec, "x-oneuptime-token");
		/* Compressed for real: the frame is far smaller than the message. */
		{
			const char *fl = rec ? strstr(rec, "\"frame_length\":") : NULL;
			unsigned long n = fl ? strtoul(fl + 15, NULL, 10) : 0;

			CHECK(n > 0 && n < big.len / 2, "gzip frame %lu of a %zu byte message", n,
			      big.len);
		}
		free(rec);
	}
	cfg.gzip = false;

	/* Partial success: delivered, never resent; the receiver's count and words kept. */
	if (send_once(&cfg, &small, &res) == 0) {
		CHECK(res.outcome == SEND_OK, "partial: outcome %d", res.outcome);
		CHECK_U64(res.rejected, 3);
		CHECK_STR(res.message, "three profiles rejected");
	}
	/* An answer that is not an ExportProfilesServiceResponse: still delivered. */
	if (send_once(&cfg, &small, &res) == 0) {
		CHECK(res.outcome == SEND_OK, "garbage: outcome %d", res.outcome);
		CHECK_U64(res.rejected, 0);
		CHECK_HAS(res.message, "not understood");
	}
out:
	export_payload__release(&small);
	export_payload__release(&big);
	server_stop(&s);
}

/* The error answers, each through the status path it travels in. */
static void test_errors(void)
{
	struct endpoint_config cfg;
	struct export_payload p;
	struct send_result res;
	struct transport *t;
	struct server s;
	char url[64], *rec;

	if (server_start(&s,
			 "unavailable,ok,invalid,exhausted-retry:1500,exhausted,http:503,http:400,"
			 "code:16:who are you",
			 8))
		return;
	config_for(&cfg, &s, url, sizeof(url));
	build_request(&p, 0);
	t = transport__new(&cfg);
	CHECK(t != NULL, "transport__new: %s", strerror(errno));
	if (!t)
		goto out;

	/* UNAVAILABLE, a trailers-only answer: retry; the next attempt gets through. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_RETRY, "unavailable: outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.code, 14);
	CHECK(res.retry_after_ms == -1, "retry_after_ms %" PRId64, res.retry_after_ms);
	CHECK_HAS(res.message, "UNAVAILABLE");
	CHECK_HAS(res.message, "receiver overloaded, try later");
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_OK, "after unavailable: outcome %d: %s", res.outcome,
	      res.message);
	rec = server_record(&s, 2);
	CHECK_HAS(rec, "\"string_table\":[\"\",\"cpu\",\"nanoseconds\"]");
	free(rec);

	/* INVALID_ARGUMENT: dropped, with the percent-decoded message. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "invalid: outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.code, 3);
	CHECK_HAS(res.message, "INVALID_ARGUMENT");
	CHECK_HAS(res.message, "bad request: string_table[0] must be \"\" (100% sure)");
	CHECK_LACKS(res.message, "%20");

	/* RESOURCE_EXHAUSTED: retried only with a RetryInfo, whose delay is passed on. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_RETRY, "exhausted+RetryInfo: outcome %d: %s", res.outcome,
	      res.message);
	CHECK_U64(res.code, 8);
	CHECK(res.retry_after_ms == 1500, "retry_after_ms %" PRId64, res.retry_after_ms);
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "exhausted: outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.code, 8);
	CHECK(res.retry_after_ms == -1, "retry_after_ms %" PRId64, res.retry_after_ms);
	CHECK_HAS(res.message, "RetryInfo");

	/* No grpc-status at all: the gRPC HTTP mapping (503 -> UNAVAILABLE, 400 -> INTERNAL). */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_RETRY, "http 503: outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.code, 14);
	CHECK_STR(res.message, "UNAVAILABLE: HTTP 503 without grpc-status (text/plain: scripted "
			       "HTTP 503)");
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "http 400: outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.code, 13);
	CHECK_HAS(res.message, "HTTP 400");

	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "unauthenticated: outcome %d", res.outcome);
	CHECK_U64(res.code, 16);
	CHECK_HAS(res.message, "UNAUTHENTICATED: who are you");
	transport__delete(t);
out:
	export_payload__release(&p);
	server_stop(&s);
}

/*
 * What grpc-js servers never send, hand-made by server.js: a compressed answer, and broken
 * ones, for the frame, gzip, percent-decoding, base64 and status parsers.
 */
static void test_raw_answers(void)
{
	static const char script[] =
		"raw:gzip-partial,raw:cut-frame,raw:bad-gzip,raw:gzip-no-encoding,raw:two-messages,"
		"raw:bad-message,raw:no-trailers,raw:details-not-base64,raw:details-unpadded,"
		"raw:details-no-retryinfo,raw:percent,raw:status-junk,raw:unavailable-retryinfo";
	static const char *const not_understood[] = {
		"cut message", "bad gzip", "without grpc-encoding", "more than one", "bad Export",
	};
	struct endpoint_config cfg;
	struct export_payload p;
	struct send_result res;
	struct transport *t;
	struct server s;
	char url[64];

	if (server_start(&s, script, 13))
		return;
	config_for(&cfg, &s, url, sizeof(url));
	cfg.nr_headers = 0;
	build_request(&p, 0);
	t = transport__new(&cfg);
	CHECK(t != NULL, "transport__new: %s", strerror(errno));
	if (!t)
		goto out;

	/* A gzip'ed answer, inflated: the partial success inside is read. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_OK, "gzip-partial: outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.rejected, 7);
	CHECK_STR(res.message, "seven rejected");

	/* grpc-status 0 with an answer we cannot read: delivered all the same, and said so. */
	for (size_t i = 0; i < sizeof(not_understood) / sizeof(not_understood[0]); i++) {
		CHECK(transport__send(t, &p, &res) == 0, "send");
		CHECK(res.outcome == SEND_OK, "%s: outcome %d", not_understood[i], res.outcome);
		CHECK_U64(res.rejected, 0);
		CHECK_HAS(res.message, "not understood");
		CHECK_HAS(res.message, not_understood[i]);
	}

	/* A gRPC answer without grpc-status: HTTP 200 maps to UNKNOWN, which is not retried. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "no-trailers: outcome %d: %s", res.outcome, res.message);
	CHECK_U64(res.code, 2);
	CHECK_HAS(res.message, "without grpc-status");

	/* RESOURCE_EXHAUSTED whose details are not base64, or lack RetryInfo: dropped. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "details-not-base64: outcome %d", res.outcome);
	CHECK_U64(res.code, 8);
	CHECK_HAS(res.message, "unreadable status details");
	CHECK(res.retry_after_ms == -1, "retry_after_ms %" PRId64, res.retry_after_ms);
	/* Unpadded base64, as gRPC allows: the RetryInfo is read. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_RETRY, "details-unpadded: outcome %d: %s", res.outcome,
	      res.message);
	CHECK(res.retry_after_ms == 2500, "retry_after_ms %" PRId64, res.retry_after_ms);
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "details-no-retryinfo: outcome %d", res.outcome);
	CHECK_HAS(res.message, "no RetryInfo");

	/* Broken percent-encoding is kept literally; non-ASCII becomes '?' in the log line. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "percent: outcome %d", res.outcome);
	CHECK_STR(res.message, "INVALID_ARGUMENT: a b%zz%2???%");

	/* A grpc-status that is not a number is UNKNOWN. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_DROP, "status-junk: outcome %d", res.outcome);
	CHECK_U64(res.code, 2);

	/* The throttling form of the spec: UNAVAILABLE with a RetryInfo delay. */
	CHECK(transport__send(t, &p, &res) == 0, "send");
	CHECK(res.outcome == SEND_RETRY, "unavailable-retryinfo: outcome %d", res.outcome);
	CHECK_U64(res.code, 14);
	CHECK(res.retry_after_ms == 42000, "retry_after_ms %" PRId64, res.retry_after_ms);
	transport__delete(t);
out:
	export_payload__release(&p);
	server_stop(&s);
}

/* https: ALPN h2, verification on by default, ca_file to trust a private CA, or insecure. */
static void test_tls(void)
{
	struct endpoint_config cfg;
	struct export_payload p;
	struct send_result res;
	struct server s;
	char dir[PATH_MAX], ca[PATH_MAX + 16], url[64], *rec;

	tls_dir(dir, sizeof(dir));
	snprintf(ca, sizeof(ca), "%s/cert.pem", dir);
	CHECK(access(ca, R_OK) == 0, "%s: %s: run `make test` (it makes the grpc-fixtures)", ca,
	      strerror(errno));
	if (access(ca, R_OK) != 0 || server_start_tls(&s, "ok,ok", 2, dir))
		return;
	config_for(&cfg, &s, url, sizeof(url));
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", s.port);
	cfg.nr_headers = 0;
	build_request(&p, 0);

	/* Not in the system store: refused, as a connection failure (the certificate may yet
	 * be fixed on the receiver's side). */
	if (send_once(&cfg, &p, &res) == 0) {
		CHECK(res.outcome == SEND_RETRY, "untrusted: outcome %d: %s", res.outcome,
		      res.message);
		CHECK_U64(res.code, 0);
	}
	CHECK(server_record(&s, 1) == NULL, "a call got through an untrusted certificate");

	cfg.ca_file = ca;
	cfg.gzip = true;
	if (send_once(&cfg, &p, &res) == 0)
		CHECK(res.outcome == SEND_OK, "ca_file: outcome %d: %s", res.outcome, res.message);
	rec = server_record(&s, 1);
	CHECK_HAS(rec, "\"string_table\":[\"\",\"cpu\",\"nanoseconds\"]");
	CHECK_HAS(rec, "\"compressed_flag\":1");
	free(rec);

	cfg.ca_file = NULL;
	cfg.insecure = true;
	if (send_once(&cfg, &p, &res) == 0)
		CHECK(res.outcome == SEND_OK, "insecure: outcome %d: %s", res.outcome, res.message);
	export_payload__release(&p);
	server_stop(&s);
}

/* A receiver slower than our timeout: a retry, whoever gives up first (us or grpc-timeout). */
static void test_timeout(void)
{
	struct endpoint_config cfg;
	struct export_payload p;
	struct send_result res;
	struct server s;
	struct timespec a, b;
	char url[64];
	long ms;

	if (server_start(&s, "slow:4000", 1))
		return;
	config_for(&cfg, &s, url, sizeof(url));
	cfg.timeout_ms = 500;
	build_request(&p, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (send_once(&cfg, &p, &res) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
		CHECK(res.outcome == SEND_RETRY, "slow: outcome %d: %s", res.outcome, res.message);
		CHECK(res.code == 0 || res.code == 4, "slow: code %ld", res.code);
		CHECK(ms < 3000, "a 500 ms timeout took %ld ms", ms);
	}
	export_payload__release(&p);
	server_stop(&s);
}

/* Nobody listening: a connection failure, to be retried. */
static void test_refused(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	struct endpoint_config cfg = {.protocol = EXPORT_OTLP_GRPC, .timeout_ms = 5000};
	struct export_payload p;
	struct send_result res;
	char url[64];
	int fd;

	/* A port that was free a moment ago and that nothing listens on. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		      getsockname(fd, (struct sockaddr *)&sa, &len) == 0,
	      "socket: %s", strerror(errno));
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	cfg.url = url;
	build_request(&p, 0);
	if (send_once(&cfg, &p, &res) == 0) {
		CHECK(res.outcome == SEND_RETRY, "refused: outcome %d: %s", res.outcome,
		      res.message);
		CHECK_U64(res.code, 0);
		CHECK(res.message[0] != '\0', "no message");
	}
	export_payload__release(&p);
}

/* Preconditions: their absence fails the test with the fix in the message. */
static bool grpc_ready(void)
{
	char path[PATH_MAX];
	bool ok = true;

	snprintf(path, sizeof(path), "%s/server.js", server_dir());
	CHECK(access(path, R_OK) == 0, "%s: %s (set HOSTPROF_GRPC_SERVER_DIR?)", path,
	      strerror(errno));
	ok = ok && access(path, R_OK) == 0;
	snprintf(path, sizeof(path), "%s/node_modules/@grpc/grpc-js/package.json", server_dir());
	CHECK(access(path, R_OK) == 0,
	      "%s: %s: run `make test` (it runs npm ci in tests/grpc) or `make grpc-deps`", path,
	      strerror(errno));
	ok = ok && access(path, R_OK) == 0;
	snprintf(path, sizeof(path),
		 "%s/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto",
		 proto_dir());
	CHECK(access(path, R_OK) == 0, "%s: %s (set HOSTPROF_PROTO_DIR?)", path, strerror(errno));
	ok = ok && access(path, R_OK) == 0;
	return ok;
}

/*
 * The server tests ran with debug logs going to a file: header values (the token) must not be
 * in it, header names are (which shows the debug lines were written at all). Everything but
 * the debug lines, failed checks included, is passed on to the real stderr.
 */
static void check_log(const char *path)
{
	char *line = NULL;
	size_t len = 0;
	bool secret = false, names = false;
	FILE *f = fopen(path, "r");

	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	if (!f)
		return;
	while (getline(&line, &len, f) > 0) {
		/* Only our own lines: a failed check may print a server record, token and all. */
		if (strncmp(line, "hostprof: ", 10) == 0 && strstr(line, SECRET))
			secret = true;
		names = names || strstr(line, "x-oneuptime-token");
		if (strncmp(line, "hostprof: debug: ", 17) != 0)
			fputs(line, stderr);
	}
	free(line);
	fclose(f);
	CHECK(!secret, "a header value (the token) was logged");
	CHECK(names, "no debug line names the headers");
}

int main(void)
{
	char log_path[] = "/tmp/hostprof-grpc-log.XXXXXX";
	int log_fd, saved;

	/* A server that went away must not kill us on a write. */
	signal(SIGPIPE, SIG_IGN);
	test_config_errors();
	if (grpc_ready()) {
		log_fd = mkstemp(log_path);
		saved = dup(2);
		CHECK(log_fd >= 0 && saved >= 0, "log file: %s", strerror(errno));
		if (log_fd >= 0 && saved >= 0) {
			fflush(stderr);
			dup2(log_fd, 2);
			log_set_level(LOG_DEBUG);
			test_delivery();
			test_errors();
			test_raw_answers();
			test_tls();
			test_timeout();
			fflush(stderr);
			dup2(saved, 2);
			close(saved);
			log_set_level(LOG_INFO);
			close(log_fd);
			check_log(log_path);
			unlink(log_path);
		}
	}
	test_refused();
	curl_global_cleanup();
	return check_summary("test_transport_grpc");
}

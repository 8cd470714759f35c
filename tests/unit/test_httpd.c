// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTTP server on 127.0.0.1 (port 0: the kernel picks a free one), fetched with libcurl:
 * status codes, bodies and content types of every endpoint, health and readiness transitions,
 * publishing, 404 and 405, the listen address forms and their errors, slow and idle clients,
 * scrapes racing publications, and shutdown with connections open.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "agent/httpd.h"
#include "agent/liveness.h"
#include "agent/metrics.h"
#include "base/clock.h"

struct resp {
	long status;
	char *body;
	size_t len;
	char content_type[128];
	char allow[64];
	long long content_length; /* -1 when absent */
};

static size_t on_body(char *data, size_t size, size_t n, void *cls)
{
	struct resp *r = cls;
	char *body = realloc(r->body, r->len + size * n + 1);

	if (!body)
		return 0;
	memcpy(body + r->len, data, size * n);
	r->body = body;
	r->len += size * n;
	r->body[r->len] = '\0';
	return size * n;
}

static void header_value(const char *line, size_t n, const char *name, char *out, size_t size)
{
	size_t nl = strlen(name), v;

	if (n <= nl || strncasecmp(line, name, nl) != 0)
		return;
	for (v = nl; v < n && line[v] == ' '; v++)
		;
	while (n > v && (line[n - 1] == '\r' || line[n - 1] == '\n'))
		n--;
	snprintf(out, size, "%.*s", (int)(n - v), line + v);
}

static size_t on_header(char *data, size_t size, size_t n, void *cls)
{
	struct resp *r = cls;
	char len[32] = "";

	header_value(data, size * n, "Content-Type:", r->content_type, sizeof(r->content_type));
	header_value(data, size * n, "Allow:", r->allow, sizeof(r->allow));
	header_value(data, size * n, "Content-Length:", len, sizeof(len));
	if (len[0])
		r->content_length = atoll(len);
	return size * n;
}

static void resp_free(struct resp *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* 0 when an HTTP answer came back (r->status says which), else the curl error. */
static int fetch_url(const char *url, const char *method, struct resp *r)
{
	CURL *c = curl_easy_init();
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	r->content_length = -1;
	if (!c)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "a=1&b=2");
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(c);
	if (!r->body) {
		r->body = calloc(1, 1);
		r->len = 0;
	}
	return rc == CURLE_OK ? 0 : (int)rc;
}

static int fetch(int port, const char *method, const char *path, struct resp *r)
{
	char url[256];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	return fetch_url(url, method, r);
}

#define TEXT_PLAIN "text/plain; charset=utf-8"

static void test_endpoints(void)
{
	char err[256] = "";
	struct httpd *h = httpd__new("127.0.0.1:0", err, sizeof(err));
	struct httpd_stats st;
	struct resp r;
	int port;

	CHECK(h != NULL, "httpd__new: %s", err);
	if (!h)
		return;
	port = httpd__port(h);
	CHECK(port > 0 && port < 65536, "port %d", port);

	/* /healthz: alive from the start. */
	CHECK(fetch(port, "GET", "/healthz", &r) == 0, "fetch");
	CHECK(r.status == 200, "status %ld", r.status);
	CHECK_STR(r.body, "ok\n");
	CHECK_STR(r.content_type, TEXT_PLAIN);
	resp_free(&r);

	/* /readyz: not ready until told, with the reason. */
	fetch(port, "GET", "/readyz", &r);
	CHECK(r.status == 503, "status %ld", r.status);
	CHECK_STR(r.body, "starting\n");
	resp_free(&r);
	httpd__set_ready(h, true, NULL);
	fetch(port, "GET", "/readyz", &r);
	CHECK(r.status == 200, "status %ld", r.status);
	CHECK_STR(r.body, "ready\n");
	resp_free(&r);
	httpd__set_ready(h, false, "last export failed:\nHTTP 503 from the collector");
	fetch(port, "GET", "/readyz", &r);
	CHECK(r.status == 503, "status %ld", r.status);
	CHECK_STR(r.body, "last export failed: HTTP 503 from the collector\n");
	resp_free(&r);
	httpd__set_ready(h, false, NULL);
	fetch(port, "GET", "/readyz", &r);
	CHECK_STR(r.body, "not ready\n");
	resp_free(&r);

	httpd__set_health(h, false);
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 503, "status %ld", r.status);
	resp_free(&r);
	httpd__set_health(h, true);
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 200, "status %ld", r.status);
	resp_free(&r);

	/* /metrics: empty until the first publication, then the latest text. */
	fetch(port, "GET", "/metrics", &r);
	CHECK(r.status == 200, "status %ld", r.status);
	CHECK_U64(r.len, 0);
	CHECK_STR(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
	resp_free(&r);
	{
		struct metrics_text m;

		metrics_text__init(&m, 0);
		metrics_text__single(&m, "hostprof_samples_total", METRICS_COUNTER, "Samples.", 7);
		CHECK(httpd__publish_metrics(h, m.buf, m.len) == 0, "publish");
		fetch(port, "GET", "/metrics", &r);
		CHECK(r.status == 200, "status %ld", r.status);
		CHECK_STR(r.body, m.buf);
		CHECK_STR(r.content_type, METRICS_CONTENT_TYPE);
		resp_free(&r);
		metrics_text__release(&m);
	}
	httpd__publish_metrics(h, "b 2\n", 4);
	fetch(port, "GET", "/metrics?name=x", &r);
	CHECK(r.status == 200, "query string: status %ld", r.status);
	CHECK_STR(r.body, "b 2\n");
	resp_free(&r);

	/* HEAD: the headers of GET, no body. */
	fetch(port, "HEAD", "/metrics", &r);
	CHECK(r.status == 200, "status %ld", r.status);
	CHECK_U64(r.len, 0);
	CHECK(r.content_length == 4, "content-length %lld", r.content_length);
	CHECK_STR(r.content_type, METRICS_CONTENT_TYPE);
	resp_free(&r);
	fetch(port, "HEAD", "/healthz", &r);
	CHECK(r.status == 200, "HEAD /healthz: %ld", r.status);
	resp_free(&r);

	/* A large text (the cap's order of magnitude) comes back whole. */
	{
		size_t n = 3u << 20;
		char *big = malloc(n);
		bool same;

		for (size_t i = 0; i < n; i++)
			big[i] = i % 61 == 60 ? '\n' : 'a' + i % 26;
		httpd__publish_metrics(h, big, n);
		fetch(port, "GET", "/metrics", &r);
		same = r.len == n && memcmp(r.body, big, n) == 0;
		CHECK(r.status == 200 && same, "big: status %ld, %zu bytes", r.status, r.len);
		resp_free(&r);
		free(big);
	}

	/* Anything else: 404 naming the endpoints; other methods: 405 with Allow. */
	{
		static const char *const paths[] = {"/", "/metricsx", "/metrics/", "/health",
						    "/METRICS"};

		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
			fetch(port, "GET", paths[i], &r);
			CHECK(r.status == 404, "%s: status %ld", paths[i], r.status);
			CHECK(r.body && strstr(r.body, "/healthz /readyz /metrics"), "%s: \"%s\"",
			      paths[i], r.body);
			resp_free(&r);
		}
	}
	{
		static const char *const methods[] = {"POST", "PUT", "DELETE", "OPTIONS"};

		for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
			fetch(port, methods[i], "/metrics", &r);
			CHECK(r.status == 405, "%s: status %ld", methods[i], r.status);
			CHECK_STR(r.allow, "GET, HEAD");
			resp_free(&r);
		}
	}
	fetch(port, "POST", "/nothing", &r);
	CHECK(r.status == 404, "POST to an unknown path: %ld", r.status);
	resp_free(&r);

	/* The server still answers after all that. */
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 200, "status %ld", r.status);
	resp_free(&r);

	httpd__stats(h, &st);
	CHECK_U64(st.healthz, 5);
	CHECK_U64(st.readyz, 4);
	CHECK_U64(st.metrics, 5);
	CHECK(st.metrics_bytes == strlen("# HELP hostprof_samples_total Samples.\n"
					 "# TYPE hostprof_samples_total counter\n"
					 "hostprof_samples_total 7\n") +
					  4 + (3u << 20),
	      "metrics bytes %" PRIu64, st.metrics_bytes);
	CHECK_U64(st.not_found, 6);
	CHECK_U64(st.bad_method, 4);

	httpd__delete(h);
}

/* --- listen addresses --- */

static void expect_error(const char *addr, const char *want)
{
	char err[256] = "";
	struct httpd *h = httpd__new(addr, err, sizeof(err));

	CHECK(h == NULL, "'%s' was accepted", addr);
	httpd__delete(h);
	CHECK(strstr(err, want) != NULL, "'%s': \"%s\" lacks \"%s\"", addr, err, want);
	/* The message names the address (but for the empty one, which has no name). */
	if (*addr)
		CHECK(strstr(err, addr) != NULL, "'%s': \"%s\" does not name it", addr, err);
}

static void test_bad_addresses(void)
{
	expect_error("nonsense", "expected HOST:PORT");
	expect_error("7470", "expected HOST:PORT");
	expect_error("", "empty");
	expect_error("1.2.3.4.5:80", "not a numeric IPv4 address");
	expect_error("collector.example:7470", "not a numeric IPv4 address");
	expect_error(":99999", "out of range");
	expect_error(":123456789", "not a number");
	expect_error("127.0.0.1:", "no port");
	expect_error("127.0.0.1:80a", "not a number");
	expect_error("127.0.0.1:-1", "not a number");
	expect_error("::1:7470", "needs brackets");
	expect_error("[::1:7470", "[IPV6]:PORT");
	expect_error("[::1]7470", "[IPV6]:PORT");
	expect_error("[1.2.3.4]:7470", "not a numeric IPv6 address");
	expect_error("[]:7470", "not a numeric IPv6 address");
	/* TEST-NET-3: no interface here has it. */
	expect_error("203.0.113.7:0", "no interface");

	/* A port below 1024 as an unprivileged user (when the kernel still reserves them). */
	{
		FILE *f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "r");
		int start = 1024;

		if (f) {
			if (fscanf(f, "%d", &start) != 1)
				start = 1024;
			fclose(f);
		}
		if (geteuid() != 0 && start > 80)
			expect_error("127.0.0.1:80", "CAP_NET_BIND_SERVICE");
		else
			printf("test_httpd: skipping the privileged port check (euid %d, "
			       "unprivileged ports from %d)\n",
			       (int)geteuid(), start);
	}
}

static void test_port_in_use(void)
{
	char err[256] = "", addr[64];
	struct httpd *a = httpd__new("127.0.0.1:0", err, sizeof(err)), *b;
	struct resp r;
	int port;

	CHECK(a != NULL, "first: %s", err);
	if (!a)
		return;
	port = httpd__port(a);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	expect_error(addr, "in use");
	snprintf(addr, sizeof(addr), ":%d", port);
	expect_error(addr, "in use");

	/* The first one is unharmed by the attempts. */
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 200, "status %ld", r.status);
	resp_free(&r);

	/* Once deleted, its port can be taken again at once (no TIME_WAIT trouble). */
	httpd__delete(a);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	b = httpd__new(addr, err, sizeof(err));
	CHECK(b != NULL, "rebind %s: %s", addr, err);
	if (b) {
		CHECK(httpd__port(b) == port, "port %d", httpd__port(b));
		fetch(port, "GET", "/healthz", &r);
		CHECK(r.status == 200, "status %ld", r.status);
		resp_free(&r);
	}
	httpd__delete(b);
}

static void test_address_forms(void)
{
	static const char *const forms[] = {":0", "*:0", "localhost:0", "[::1]:0"};
	char err[256], url[128];
	struct resp r;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct httpd *h;

		err[0] = '\0';
		h = httpd__new(forms[i], err, sizeof(err));
		if (!h && i == 3 && strstr(err, "IPv6")) {
			printf("test_httpd: no IPv6 here: %s\n", err);
			continue;
		}
		CHECK(h != NULL, "%s: %s", forms[i], err);
		if (!h)
			continue;
		if (i == 3)
			snprintf(url, sizeof(url), "http://[::1]:%d/healthz", httpd__port(h));
		else
			snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", httpd__port(h));
		CHECK(fetch_url(url, "GET", &r) == 0 && r.status == 200, "%s: %s -> %ld", forms[i],
		      url, r.status);
		resp_free(&r);
		httpd__delete(h);
	}
}

/* --- clients that misbehave --- */

static int connect_to(int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_slow_clients(void)
{
	char err[256] = "";
	struct httpd *h = httpd__new("127.0.0.1:0", err, sizeof(err));
	int idle[HTTPD_MAX_CONNECTIONS + 8];
	size_t nr_idle = 0;
	struct resp r;
	double t0;
	int port, slow;

	CHECK(h != NULL, "httpd__new: %s", err);
	if (!h)
		return;
	port = httpd__port(h);

	/* Half a request, never finished: others are still served at once. */
	slow = connect_to(port);
	CHECK(slow >= 0, "connect");
	if (slow >= 0) {
		const char *half = "GET /metrics HTTP/1.1\r\nHost: x\r\n";

		CHECK(write(slow, half, strlen(half)) == (ssize_t)strlen(half), "write");
	}
	t0 = now_s();
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 200, "status %ld with a slow client", r.status);
	CHECK(now_s() - t0 < 2, "took %.1f s", now_s() - t0);
	resp_free(&r);

	/*
	 * More idle connections than the limit: MHD stops accepting, the rest wait in the backlog,
	 * and once the idle ones go the server serves again.
	 */
	for (nr_idle = 0; nr_idle < sizeof(idle) / sizeof(idle[0]); nr_idle++) {
		idle[nr_idle] = connect_to(port);
		if (idle[nr_idle] < 0)
			break;
	}
	CHECK(nr_idle > HTTPD_MAX_CONNECTIONS, "%zu connections", nr_idle);
	for (size_t i = 0; i < nr_idle; i++)
		close(idle[i]);
	{
		int tries = 0;

		do {
			if (tries)
				usleep(50 * 1000);
			resp_free(&r);
			fetch(port, "GET", "/healthz", &r);
		} while (r.status != 200 && ++tries < 40);
		CHECK(r.status == 200, "served again after the flood: %ld", r.status);
		resp_free(&r);
	}

	/* Shutdown with a connection still open does not wait for it. */
	t0 = now_s();
	httpd__delete(h);
	CHECK(now_s() - t0 < 2, "delete took %.1f s", now_s() - t0);
	if (slow >= 0)
		close(slow);
}

/*
 * /healthz follows the capture loop's ticks: a tick older than the timeout is a 503 with the
 * reason, a fresh one a 200. The clock is not waited on: the tick is planted in the past.
 */
static void test_liveness(void)
{
	char err[256] = "";
	struct httpd *h = httpd__new("127.0.0.1:0", err, sizeof(err));
	struct liveness live;
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct resp r;
	int port;

	CHECK(h != NULL, "httpd__new: %s", err);
	if (!h)
		return;
	port = httpd__port(h);
	/* Last ticked 5 s ago, 1 s allowed: stuck. */
	liveness__init(&live, 1000000000ULL, now - 5000000000ULL);
	httpd__set_liveness(h, &live);
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 503, "a stale tick: status %ld", r.status);
	CHECK(r.body && strncmp(r.body, "the capture loop has not ticked for 5.", 38) == 0 &&
		      strstr(r.body, "(limit 1 s)\n") && !strchr(r.body, '\n')[1],
	      "body '%s'", r.body ? r.body : "");
	resp_free(&r);

	liveness__tick(&live, clock__ns(CLOCK_MONOTONIC));
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 200, "after a tick: status %ld", r.status);
	CHECK_STR(r.body, "ok\n");
	resp_free(&r);

	/* A longer timeout (a reload) makes the same old tick acceptable. */
	liveness__init(&live, 1000000000ULL, clock__ns(CLOCK_MONOTONIC) - 5000000000ULL);
	liveness__set_timeout(&live, 3600 * 1000000000ULL);
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 200, "a 1 h timeout: status %ld", r.status);
	resp_free(&r);

	/* "not alive" wins over a fresh tick. */
	httpd__set_health(h, false);
	fetch(port, "GET", "/healthz", &r);
	CHECK(r.status == 503, "not alive: status %ld", r.status);
	CHECK_STR(r.body, "not alive\n");
	resp_free(&r);
	httpd__set_liveness(h, NULL);
	httpd__delete(h);
}

/*
 * One address holds at most HTTPD_PER_IP_CONNECTIONS connections: with that many idle ones open
 * from 127.0.0.1, a request from 127.0.0.1 is turned away, while another address (127.0.0.2,
 * also loopback) is still served; once the idle ones go, 127.0.0.1 is served again.
 */
static int connect_from(int port, const char *from)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)},
			   src = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	inet_pton(AF_INET, from, &src.sin_addr);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A whole GET on fd; the status code, or 0 when the server closed without answering. */
static int raw_get(int fd)
{
	const char *req = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	char buf[256];
	ssize_t n, got = 0;
	int status = 0;

	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return 0;
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	sscanf(buf, "HTTP/1.1 %d", &status);
	return status;
}

static void test_per_ip_limit(void)
{
	char err[256] = "";
	struct httpd *h = httpd__new("127.0.0.1:0", err, sizeof(err));
	int idle[HTTPD_PER_IP_CONNECTIONS], extra, other, port, tries = 0, status;
	struct resp r = {0};

	CHECK(h != NULL, "httpd__new: %s", err);
	if (!h)
		return;
	port = httpd__port(h);
	for (int i = 0; i < HTTPD_PER_IP_CONNECTIONS; i++) {
		idle[i] = connect_from(port, "127.0.0.1");
		CHECK(idle[i] >= 0, "idle connection %d", i);
	}
	/* The server accepts the ninth and closes it without an answer. MHD counts a connection
	 * once it has accepted it: wait (bounded) until the idle ones are all in. */
	do {
		if (tries)
			usleep(20 * 1000);
		extra = connect_from(port, "127.0.0.1");
		status = extra >= 0 ? raw_get(extra) : -1;
		if (extra >= 0)
			close(extra);
	} while (status == 200 && ++tries < 50);
	CHECK(status == 0, "a ninth connection from one address: status %d", status);
	other = connect_from(port, "127.0.0.2");
	CHECK(other >= 0 && raw_get(other) == 200, "another address is still served");
	if (other >= 0)
		close(other);
	for (int i = 0; i < HTTPD_PER_IP_CONNECTIONS; i++)
		if (idle[i] >= 0)
			close(idle[i]);
	tries = 0;
	do {
		if (tries)
			usleep(50 * 1000);
		resp_free(&r);
		fetch(port, "GET", "/healthz", &r);
	} while (r.status != 200 && ++tries < 40);
	CHECK(r.status == 200, "served again once the idle ones closed: %ld", r.status);
	resp_free(&r);
	httpd__delete(h);
}

/* --- scrapes racing publications --- */

struct racer {
	struct httpd *h;
	bool stop; /* atomic */
	int published;
};

/* Version i is "v<i>\n" repeated: a scrape must see one version whole, never a mix. */
static size_t make_version(char *buf, size_t size, int i)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "v%d\n", i);
	size_t reps = 1000 + (i % 7) * 3000, len = 0;

	for (size_t k = 0; k < reps && len + n < size; k++, len += n)
		memcpy(buf + len, line, n);
	return len;
}

static void *publisher(void *arg)
{
	struct racer *rc = arg;
	static char buf[1 << 20];

	while (!__atomic_load_n(&rc->stop, __ATOMIC_RELAXED)) {
		size_t len = make_version(buf, sizeof(buf), rc->published);

		httpd__publish_metrics(rc->h, buf, len);
		rc->published++;
	}
	return NULL;
}

static bool one_version(const char *body, size_t len)
{
	const char *nl = memchr(body, '\n', len);
	size_t n;

	if (!nl)
		return len == 0;
	n = nl - body + 1;
	if (len % n)
		return false;
	for (size_t off = n; off < len; off += n)
		if (memcmp(body, body + off, n) != 0)
			return false;
	return true;
}

static void test_race(void)
{
	char err[256] = "";
	struct racer rc = {.h = httpd__new("127.0.0.1:0", err, sizeof(err))};
	pthread_t t;
	struct resp r;
	int ok = 1, served = 0;

	CHECK(rc.h != NULL, "httpd__new: %s", err);
	if (!rc.h)
		return;
	pthread_create(&t, NULL, publisher, &rc);
	for (int i = 0; i < 50; i++) {
		if (fetch(httpd__port(rc.h), "GET", "/metrics", &r) == 0 && r.status == 200) {
			served++;
			ok &= one_version(r.body, r.len);
		}
		resp_free(&r);
	}
	__atomic_store_n(&rc.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	CHECK(served == 50, "%d of 50 served", served);
	CHECK(ok, "every scrape saw one version whole");
	CHECK(rc.published > 1, "%d published", rc.published);
	httpd__delete(rc.h);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	httpd__delete(NULL);
	test_endpoints();
	test_liveness();
	test_bad_addresses();
	test_port_in_use();
	test_address_forms();
	test_slow_clients();
	test_per_ip_limit();
	test_race();
	curl_global_cleanup();
	return check_summary("test_httpd");
}

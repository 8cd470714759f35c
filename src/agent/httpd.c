// SPDX-License-Identifier: BSD-2-Clause
#include "agent/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "agent/liveness.h"
#include "agent/metrics.h"

#define HTTPD_BACKLOG 64
#define HTTPD_REASON_MAX 256
#define HTTPD_ENDPOINTS "/healthz /readyz /metrics"
#define HTTPD_FORMS "'127.0.0.1:7470', ':7470' (all interfaces) or '[::1]:7470'"

/*
 * One published exposition. Scrapes hold a reference while MHD sends it, so publishing never
 * waits for a slow client and a 4 MiB text is copied once per tick, not once per scrape.
 */
struct snapshot {
	unsigned int refs; /* atomic */
	size_t len;
	char data[];
};

struct httpd {
	struct MHD_Daemon *daemon;
	int port;

	pthread_mutex_t lock; /* everything below */
	struct snapshot *metrics;
	bool alive;
	const struct liveness *liveness; /* NULL: alive alone decides */
	bool ready;
	char reason[HTTPD_REASON_MAX];
	struct httpd_stats stats;
};

static struct snapshot *snapshot_get(struct snapshot *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

static void snapshot_put(struct snapshot *s)
{
	if (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(s);
}

static struct snapshot *snapshot_new(const char *text, size_t len)
{
	struct snapshot *s = malloc(sizeof(*s) + len);

	if (!s)
		return NULL;
	s->refs = 1;
	s->len = len;
	if (len)
		memcpy(s->data, text, len);
	return s;
}

/* --- the listen address --- */

struct listen_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	bool any; /* ":PORT": IPv6 any with IPv4 mapped, falling back to IPv4 any */
};

static int parse_port(const char *s, const char *addr, int *port, char *err, size_t errlen)
{
	long v = 0;

	if (!*s) {
		snprintf(err, errlen, "listen address '%s': no port after ':'; use %s", addr,
			 HTTPD_FORMS);
		return -EINVAL;
	}
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || p - s >= 6) {
			snprintf(err, errlen,
				 "listen address '%s': port '%s' is not a number from 0 to 65535",
				 addr, s);
			return -EINVAL;
		}
		v = v * 10 + (*p - '0');
	}
	if (v > 65535) {
		snprintf(err, errlen, "listen address '%s': port %ld is out of range (0..65535)",
			 addr, v);
		return -EINVAL;
	}
	*port = (int)v;
	return 0;
}

static int parse_listen(const char *addr, struct listen_addr *out, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *port_text;
	size_t host_len;
	int port;

	memset(out, 0, sizeof(*out));
	if (!addr || !*addr) {
		snprintf(err, errlen, "listen address is empty; use %s", HTTPD_FORMS);
		return -EINVAL;
	}
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':') {
			snprintf(
				err, errlen,
				"listen address '%s': expected '[IPV6]:PORT', such as '[::1]:7470'",
				addr);
			return -EINVAL;
		}
		host_len = close - addr - 1;
		port_text = close + 2;
	} else {
		colon = strrchr(addr, ':');
		if (!colon) {
			snprintf(err, errlen, "listen address '%s': expected HOST:PORT, such as %s",
				 addr, HTTPD_FORMS);
			return -EINVAL;
		}
		if (memchr(addr, ':', colon - addr)) {
			snprintf(err, errlen,
				 "listen address '%s': an IPv6 address needs brackets, such as "
				 "'[::1]:7470'",
				 addr);
			return -EINVAL;
		}
		host_len = colon - addr;
		port_text = colon + 1;
	}
	if (parse_port(port_text, addr, &port, err, errlen))
		return -EINVAL;
	if (host_len >= sizeof(host)) {
		snprintf(err, errlen, "listen address '%s': the host is too long", addr);
		return -EINVAL;
	}
	memcpy(host, addr + (addr[0] == '['), host_len);
	host[host_len] = '\0';

	if (addr[0] == '[') {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->ss;

		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1) {
			snprintf(err, errlen,
				 "listen address '%s': '%s' is not a numeric IPv6 address", addr,
				 host);
			return -EINVAL;
		}
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		out->len = sizeof(*sin6);
		return 0;
	}
	if (!*host || strcmp(host, "*") == 0) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons(port);
		out->len = sizeof(*sin6);
		out->any = true;
		return 0;
	}
	{
		struct sockaddr_in *sin = (struct sockaddr_in *)&out->ss;

		/* Numeric only: a name lookup could block the agent's start on DNS. */
		if (strcmp(host, "localhost") == 0)
			snprintf(host, sizeof(host), "127.0.0.1");
		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
			snprintf(err, errlen,
				 "listen address '%s': '%s' is not a numeric IPv4 address; use %s",
				 addr, host, HTTPD_FORMS);
			return -EINVAL;
		}
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		out->len = sizeof(*sin);
	}
	return 0;
}

static void bind_error(const char *addr, int errnum, char *err, size_t errlen)
{
	const char *fix;

	switch (errnum) {
	case EADDRINUSE:
		fix = "another process (another hostprof?) is listening there; stop it or choose "
		      "another port";
		break;
	case EACCES:
	case EPERM:
		fix = "ports below 1024 need CAP_NET_BIND_SERVICE; choose a port from 1024 up";
		break;
	case EADDRNOTAVAIL:
		fix = "no interface of this host has that address; use 127.0.0.1, an address of "
		      "this host, or ':PORT' for all interfaces";
		break;
	case EAFNOSUPPORT:
		fix = "this host has no IPv6; use an IPv4 address";
		break;
	default:
		fix = "check the address";
		break;
	}
	snprintf(err, errlen, "listen address '%s': cannot listen: %s; %s", addr, strerror(errnum),
		 fix);
}

/* A listening socket, or -errno. */
static int listen_on(const struct sockaddr *sa, socklen_t len, bool v6only)
{
	int fd, one = 1, err;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A restart must not wait for the old connections' TIME_WAIT. On Linux this never lets
	 * two sockets listen on one port: that takes SO_REUSEPORT. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	if (sa->sa_family == AF_INET6) {
		int v = v6only;

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)) < 0)
			goto fail;
	}
	if (bind(fd, sa, len) < 0 || listen(fd, HTTPD_BACKLOG) < 0)
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

static int open_listener(const char *addr, const struct listen_addr *la, int *port, char *err,
			 size_t errlen)
{
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	int fd;

	fd = listen_on((const struct sockaddr *)&la->ss, la->len, !la->any);
	if (fd < 0 && la->any && (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)) {
		/* IPv6 is compiled out or switched off (ipv6.disable=1): all IPv4 interfaces. */
		struct sockaddr_in sin = {
			.sin_family = AF_INET,
			.sin_port = ((const struct sockaddr_in6 *)&la->ss)->sin6_port,
			.sin_addr.s_addr = htonl(INADDR_ANY),
		};

		fd = listen_on((const struct sockaddr *)&sin, sizeof(sin), false);
	}
	if (fd < 0) {
		bind_error(addr, -fd, err, errlen);
		return fd;
	}
	if (getsockname(fd, (struct sockaddr *)&bound, &bound_len) < 0) {
		int e = -errno;

		snprintf(err, errlen, "listen address '%s': getsockname: %s", addr, strerror(-e));
		close(fd);
		return e;
	}
	*port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
					    : ntohs(((struct sockaddr_in *)&bound)->sin_port);
	return fd;
}

/* --- requests --- */

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	/* Mostly clients that went away: not worth more than debug. */
	log_debug("http: %s", line);
}

static ssize_t snapshot_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	const struct snapshot *s = cls;
	size_t n;

	if (pos >= s->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = s->len - pos;
	if (n > max)
		n = max;
	memcpy(buf, s->data + pos, n);
	return n;
}

static void snapshot_free(void *cls)
{
	snapshot_put(cls);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status,
			     struct MHD_Response *resp, const char *content_type)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO; /* out of memory: MHD closes the connection */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	/* Probes and scrapes want the state now, never a cached one. */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);

	return reply(conn, status, resp, "text/plain; charset=utf-8");
}

/* Under h->lock. The liveness is read without a lock of its own: a stuck loop holds none. */
static void healthz_body(const struct httpd *h, char *body, size_t len, unsigned int *status)
{
	char why[HTTPD_REASON_MAX];

	*status = MHD_HTTP_SERVICE_UNAVAILABLE;
	if (!h->alive) {
		snprintf(body, len, "not alive\n");
		return;
	}
	if (h->liveness &&
	    !liveness__check(h->liveness, clock__ns(CLOCK_MONOTONIC), why, sizeof(why))) {
		snprintf(body, len, "%s\n", why);
		return;
	}
	*status = MHD_HTTP_OK;
	snprintf(body, len, "ok\n");
}

enum endpoint {
	EP_HEALTHZ,
	EP_READYZ,
	EP_METRICS,
	EP_NONE,
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct httpd *h = cls;
	enum endpoint ep = EP_NONE;
	struct MHD_Response *resp;
	struct snapshot *snap;
	char body[HTTPD_REASON_MAX + 2];
	unsigned int status;

	if (strcmp(url, "/healthz") == 0)
		ep = EP_HEALTHZ;
	else if (strcmp(url, "/readyz") == 0)
		ep = EP_READYZ;
	else if (strcmp(url, "/metrics") == 0)
		ep = EP_METRICS;

	if (ep == EP_NONE) {
		pthread_mutex_lock(&h->lock);
		h->stats.not_found++;
		pthread_mutex_unlock(&h->lock);
		return reply_text(conn, MHD_HTTP_NOT_FOUND,
				  "not found; endpoints: " HTTPD_ENDPOINTS "\n");
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		resp = MHD_create_response_from_buffer(strlen("method not allowed\n"),
						       (void *)"method not allowed\n",
						       MHD_RESPMEM_PERSISTENT);
		if (resp)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		pthread_mutex_lock(&h->lock);
		h->stats.bad_method++;
		pthread_mutex_unlock(&h->lock);
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp, "text/plain; charset=utf-8");
	}

	pthread_mutex_lock(&h->lock);
	switch (ep) {
	case EP_HEALTHZ:
		h->stats.healthz++;
		healthz_body(h, body, sizeof(body), &status);
		break;
	case EP_READYZ:
		h->stats.readyz++;
		status = h->ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(body, sizeof(body), "%s\n", h->ready ? "ready" : h->reason);
		break;
	default:
		h->stats.metrics++;
		if (strcmp(method, MHD_HTTP_METHOD_GET) == 0)
			h->stats.metrics_bytes += h->metrics->len;
		snap = snapshot_get(h->metrics);
		pthread_mutex_unlock(&h->lock);
		resp = MHD_create_response_from_callback(snap->len, 64 * 1024, snapshot_read, snap,
							 snapshot_free);
		if (!resp) {
			snapshot_put(snap);
			return MHD_NO;
		}
		return reply(conn, MHD_HTTP_OK, resp, METRICS_CONTENT_TYPE);
	}
	pthread_mutex_unlock(&h->lock);
	return reply_text(conn, status, body);
}

/* --- the server --- */

struct httpd *httpd__new(const char *listen_addr, char *err, size_t errlen)
{
	struct listen_addr la;
	struct httpd *h = NULL;
	struct stat st;
	int fd = -1;

	if (parse_listen(listen_addr, &la, err, errlen))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "listen address '%s': out of memory", listen_addr);
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->alive = true;
	snprintf(h->reason, sizeof(h->reason), "starting");
	h->metrics = snapshot_new("", 0);
	if (!h->metrics) {
		snprintf(err, errlen, "listen address '%s': out of memory", listen_addr);
		goto fail;
	}

	fd = open_listener(listen_addr, &la, &h->port, err, errlen);
	if (fd < 0)
		goto fail;
	if (fstat(fd, &st) < 0)
		memset(&st, 0, sizeof(st));

	/* On success MHD owns the socket and closes it in MHD_stop_daemon. */
	h->daemon = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC, 0, NULL, NULL,
		on_request, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_LISTEN_SOCKET,
		(MHD_socket)fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTPD_MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTPD_TIMEOUT_S,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTPD_PER_IP_CONNECTIONS,
		MHD_OPTION_END);
	if (!h->daemon) {
		struct stat now;

		snprintf(err, errlen, "listen address '%s': cannot start the HTTP server thread",
			 listen_addr);
		/*
		 * Whether MHD closed the socket on its failure path depends on where it failed:
		 * close it only if the descriptor is still this very socket.
		 */
		if (fstat(fd, &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev)
			close(fd);
		goto fail;
	}
	log_info("http: serving " HTTPD_ENDPOINTS " on %s (port %d)", listen_addr, h->port);
	return h;
fail:
	snapshot_put(h->metrics);
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

int httpd__port(const struct httpd *h)
{
	return h->port;
}

int httpd__publish_metrics(struct httpd *h, const char *text, size_t len)
{
	struct snapshot *s = snapshot_new(text, len), *old;

	if (!s)
		return -ENOMEM;
	pthread_mutex_lock(&h->lock);
	old = h->metrics;
	h->metrics = s;
	pthread_mutex_unlock(&h->lock);
	snapshot_put(old);
	return 0;
}

void httpd__set_health(struct httpd *h, bool alive)
{
	pthread_mutex_lock(&h->lock);
	h->alive = alive;
	pthread_mutex_unlock(&h->lock);
}

void httpd__set_liveness(struct httpd *h, const struct liveness *l)
{
	pthread_mutex_lock(&h->lock);
	h->liveness = l;
	pthread_mutex_unlock(&h->lock);
}

void httpd__set_ready(struct httpd *h, bool ready, const char *reason)
{
	pthread_mutex_lock(&h->lock);
	h->ready = ready;
	snprintf(h->reason, sizeof(h->reason), "%s", reason && *reason ? reason : "not ready");
	/* One line of plain text, whatever the reason held. */
	for (char *p = h->reason; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	pthread_mutex_unlock(&h->lock);
}

void httpd__stats(struct httpd *h, struct httpd_stats *out)
{
	pthread_mutex_lock(&h->lock);
	*out = h->stats;
	pthread_mutex_unlock(&h->lock);
}

void httpd__delete(struct httpd *h)
{
	if (!h)
		return;
	/* Joins the thread; responses still held are destroyed, dropping their snapshots. */
	MHD_stop_daemon(h->daemon);
	snapshot_put(h->metrics);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

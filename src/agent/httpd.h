/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's small HTTP server (http_listen): GET /healthz, /readyz and /metrics, over
 * libmicrohttpd's internal polling thread.
 *
 * The server owns no metrics of its own making: the main loop renders the exposition (metrics.h)
 * once per tick and publishes it here; scrapes serve the latest published text, which is shared
 * by reference between concurrent scrapes and freed when the last one is done with it. Health and
 * readiness are set the same way, so the HTTP thread never reads any other module's state.
 *
 * One polling thread serves every connection without blocking on any of them, the number of
 * connections is bounded and an idle connection is closed after a timeout, so a slow or stuck
 * client cannot pin the server or exhaust the agent's descriptors.
 */
#ifndef HOSTPROF_HTTPD_H
#define HOSTPROF_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTPD_MAX_CONNECTIONS 32
/* From one address at once: one client (a scanner, a stuck scraper) cannot take all 32 and lock
 * the kubelet's probes and Prometheus out. */
#define HTTPD_PER_IP_CONNECTIONS 8
#define HTTPD_TIMEOUT_S 10 /* an idle connection is closed after this */

struct httpd;
struct liveness;

/* Responses served, per endpoint (HEAD counts as GET). */
struct httpd_stats {
	uint64_t healthz;
	uint64_t readyz;
	uint64_t metrics;
	uint64_t metrics_bytes; /* body bytes of the /metrics responses (HEAD: none) */
	uint64_t not_found;	/* 404 */
	uint64_t bad_method;	/* 405 */
};

/*
 * Listen on listen_addr and start serving. Accepted forms: "HOST:PORT" with a numeric IPv4 HOST
 * or "localhost", "[IPV6]:PORT", and ":PORT" or "*:PORT" for all interfaces (IPv6 and IPv4 when
 * the host has IPv6, else IPv4). PORT is 0..65535; 0 picks a free port (see httpd__port()).
 * Starts alive, and not ready with the reason "starting".
 * Returns NULL with a message in err (naming the address and what to do) when the address is
 * malformed or cannot be bound (in use, privileged port, not a local address).
 */
struct httpd *httpd__new(const char *listen_addr, char *err, size_t errlen);

/* The bound port (the chosen one when the address asked for port 0). */
int httpd__port(const struct httpd *h);

/* Replace the text served on /metrics (copied). 0 or -ENOMEM (the old text stays). */
int httpd__publish_metrics(struct httpd *h, const char *text, size_t len);

/*
 * /healthz: 200 "ok" while alive and, once a liveness is set, while its loop ticks in time;
 * else 503 with a one-line reason ("not alive", or how long the loop has not ticked).
 */
void httpd__set_health(struct httpd *h, bool alive);
/* Judge /healthz by l too (read at each request; l must outlive the server). NULL: stop. */
void httpd__set_liveness(struct httpd *h, const struct liveness *l);
/* /readyz: 200 "ready", or 503 with the reason (NULL: "not ready"); the reason is copied. */
void httpd__set_ready(struct httpd *h, bool ready, const char *reason);

void httpd__stats(struct httpd *h, struct httpd_stats *out);

/* Stop the server thread, close the socket and free everything. Accepts NULL. */
void httpd__delete(struct httpd *h);

#endif /* HOSTPROF_HTTPD_H */

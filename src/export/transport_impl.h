/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * For transport implementations only (transport_http.c, transport_grpc.c), the factory in
 * transport.c, and tests that build a fake transport: the base struct each implementation
 * embeds and its ops vtable. Users of a transport include transport.h, never this. What the two
 * libcurl transports share is in transport_curl.h.
 *
 * The deadline helpers are inline on purpose: implementations need them and transport.c needs
 * them, and a module of their own would have both call into it for three lines.
 */
#ifndef HOSTPROF_TRANSPORT_IMPL_H
#define HOSTPROF_TRANSPORT_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/clock.h"
#include "export/transport.h"

struct transport_ops {
	/*
	 * Send once; res arrives zeroed with retry_after_ms = -1. Same contract as
	 * transport__send(). Should give up (SEND_RETRY) once transport__past_deadline() says so.
	 */
	int (*send)(struct transport *t, const struct export_payload *p, struct send_result *res);
	/* Free the implementation, the struct transport included. */
	void (*delete)(struct transport *t);
	/* One line without credentials; the string lives as long as the transport. */
	const char *(*describe)(const struct transport *t);
};

/*
 * Embedded as the first member of each implementation's struct (container_of style). Also how a
 * test builds a fake transport: embed it and call transport__init().
 */
struct transport {
	const struct transport_ops *ops;
	/*
	 * CLOCK_MONOTONIC ms after which a send in progress should give up, 0 = none. Set by the
	 * exporter's thread-safe shutdown while the export thread may be inside send(), hence
	 * atomic: this is how shutdown interrupts a request that has no timeout of its own.
	 */
	_Atomic int64_t deadline_ms;
};

static inline void transport__init(struct transport *t, const struct transport_ops *ops)
{
	t->ops = ops;
	atomic_store(&t->deadline_ms, 0);
}

static inline bool transport__past_deadline(const struct transport *t)
{
	int64_t d = atomic_load(&((struct transport *)t)->deadline_ms);

	return d && clock__mono_ms() >= d;
}

/* The OTLP/gRPC transport (transport_grpc.c). NULL + errno, as transport__new(). */
struct transport *transport_grpc__new(const struct endpoint_config *cfg);
/* The HTTP transport (transport_http.c): OTLP/HTTP protobuf or JSON, Pyroscope push or ingest. */
struct transport *transport_http__new(const struct endpoint_config *cfg);

#endif /* HOSTPROF_TRANSPORT_IMPL_H */

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The transport front door: dispatch on the protocol to an implementation, and the calls every
 * transport answers through its ops. Nothing here calls back from an implementation: what the
 * libcurl transports share is in transport_curl.c, below both of them.
 */
#include "export/transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "export/transport_impl.h"

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

void transport__set_deadline(struct transport *t, int64_t deadline_mono_ms)
{
	atomic_store(&t->deadline_ms, deadline_mono_ms);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The protocols hostprof exports with, and what they are called: a module of its own because
 * the transport factory, the transports and the configuration all name them.
 */
#ifndef HOSTPROF_EXPORT_PROTOCOL_H
#define HOSTPROF_EXPORT_PROTOCOL_H

enum export_protocol {
	EXPORT_OTLP_HTTP_PROTOBUF = 0, /* POST url, application/x-protobuf */
	EXPORT_OTLP_HTTP_JSON,	       /* POST url, application/json */
	EXPORT_OTLP_GRPC,	       /* url = scheme://host:port; the method path is appended */
	EXPORT_PYROSCOPE_PUSH,	       /* url = base; /push.v1.PusherService/Push is appended */
	EXPORT_PYROSCOPE_INGEST,       /* url = base; /ingest?<payload query> is appended */
};

/* "OTLP/HTTP", "OTLP/gRPC", "Pyroscope push": what log lines and descriptions call p. */
const char *export_protocol__name(enum export_protocol p);
/* "OTLP http/protobuf", "OTLP grpc": p as a configuration spells it, for its description. */
const char *export_protocol__setting(enum export_protocol p);

#endif /* HOSTPROF_EXPORT_PROTOCOL_H */

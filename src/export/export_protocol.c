// SPDX-License-Identifier: BSD-2-Clause
#include "export/export_protocol.h"

#include <stdbool.h>

/* Each protocol's names in one table, so that a new protocol cannot miss one of them. */
static const struct {
	const char *name;
	const char *setting;
} protocol_names[] = {
	[EXPORT_OTLP_HTTP_PROTOBUF] = {"OTLP/HTTP", "OTLP http/protobuf"},
	[EXPORT_OTLP_HTTP_JSON] = {"OTLP/HTTP+JSON", "OTLP http/json"},
	[EXPORT_OTLP_GRPC] = {"OTLP/gRPC", "OTLP grpc"},
	[EXPORT_PYROSCOPE_PUSH] = {"Pyroscope push", "Pyroscope push"},
	[EXPORT_PYROSCOPE_INGEST] = {"Pyroscope ingest", "Pyroscope ingest"},
};

static bool known_protocol(enum export_protocol p)
{
	return (unsigned)p < sizeof(protocol_names) / sizeof(protocol_names[0]);
}

const char *export_protocol__name(enum export_protocol p)
{
	return known_protocol(p) ? protocol_names[p].name : "?";
}

const char *export_protocol__setting(enum export_protocol p)
{
	return known_protocol(p) ? protocol_names[p].setting : "?";
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A protobuf-c message as OTLP/JSON (the OTLP specification's JSON encoding: proto3 JSON with
 * lowerCamelCase keys, 64-bit integers as strings, fields at their default left out, and
 * trace_id, span_id and profile_id as hex rather than base64).
 */
#ifndef HOSTPROF_FORMATS_PB_JSON_H
#define HOSTPROF_FORMATS_PB_JSON_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

/*
 * The JSON text of m and a newline, NUL-terminated, in *out (the caller frees it); *len leaves
 * the NUL out. 0, or -errno: -ENOMEM, -ELOOP for messages nested past any real one, -EINVAL for a
 * field type protobuf-c does not have.
 */
int pb_json__encode(const ProtobufCMessage *m, char **out, size_t *len);

#endif /* HOSTPROF_FORMATS_PB_JSON_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receiver's answer to an OTLP export: an ExportProfilesServiceResponse, whose only content
 * is partial_success {rejected_profiles, error_message}. Read by the HTTP transport (protobuf or
 * OTLP/JSON) and the gRPC transport (protobuf). The body is the receiver's: hostile until read.
 */
#ifndef HOSTPROF_OTLP_RESPONSE_H
#define HOSTPROF_OTLP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Decode body (protobuf when json is false, else OTLP/JSON, camelCase or snake_case names). An
 * empty body, "{}" or an empty partial_success mean full success: *rejected = 0 and msg = "".
 * The message is made fit for one log line (base/log_text.h). Returns 0, or -EBADMSG when the
 * body cannot be decoded (the caller still counts a 2xx as delivered), -ENOMEM.
 */
int otlp_response__parse(const void *body, size_t len, bool json, int64_t *rejected, char *msg,
			 size_t msglen);

#endif /* HOSTPROF_OTLP_RESPONSE_H */

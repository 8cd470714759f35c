/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * google.rpc.Status, the error an OTLP receiver may send: in an HTTP error body, or base64 in
 * gRPC's grpc-status-details-bin trailer. We want its code, its message and the delay of a
 * google.rpc.RetryInfo among its details. proto/ has no google/rpc/status.proto for protoc-c, and
 * three fields do not justify vendoring one: a small reader of the wire format does it, treating
 * its input as hostile.
 */
#ifndef HOSTPROF_RPC_STATUS_H
#define HOSTPROF_RPC_STATUS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A google.rpc.Status {1: code, 2: message, 3: details (Any)}. msg gets the message made fit for
 * one log line. *retry_delay_ms (may be NULL) gets the delay of a google.rpc.RetryInfo among the
 * details, or -1 when there is none. Returns 0 or -EBADMSG.
 */
int rpc_status__parse(const void *body, size_t len, int32_t *code, char *msg, size_t msglen,
		      int64_t *retry_delay_ms);

/*
 * The RetryInfo delay of a Status in gRPC -bin metadata (base64, padded or not). Returns 0 with
 * *delay the delay in ms, or -1 when the Status has no RetryInfo; -EBADMSG when it is not base64
 * or not a Status, -ENOMEM (both with *delay = -1).
 */
int rpc_status__retry_delay_base64(const char *b64, int64_t *delay);

#endif /* HOSTPROF_RPC_STATUS_H */

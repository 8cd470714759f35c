/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a gRPC receiver answered to one unary call, and what it means: the header and trailer
 * lines (grpc-status, grpc-message, grpc-status-details-bin, grpc-encoding, content-type) and the
 * framed body, read into a send_result. Apart from the transport (transport_grpc.c), which only
 * feeds it what libcurl hands over, so that this reading of the receiver's hostile bytes is unit
 * tested and fuzzed without a server.
 */
#ifndef HOSTPROF_GRPC_ANSWER_H
#define HOSTPROF_GRPC_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/transport.h"

/* The framed message kept; larger answers are read and discarded, not stored. */
#define GRPC_MAX_ANSWER (4u << 20)
#define GRPC_FRAME_HDR 5
/* Raw (encoded) trailer values kept; a longer grpc-message is cut, longer details ignored. */
#define GRPC_MAX_MESSAGE 2048
#define GRPC_MAX_DETAILS 16384

/* Headers and trailers arrive the same way: one call of grpc_answer__header() per line. Start
 * zeroed; release with grpc_answer__release(). */
struct grpc_answer {
	bool has_status;
	long status;
	char message[GRPC_MAX_MESSAGE]; /* grpc-message, still percent-encoded */
	char *details;			/* grpc-status-details-bin, base64; malloc'ed */
	bool details_cut;
	char encoding[16]; /* grpc-encoding of the answer's message */
	char content_type[64];
	uint8_t *body;
	size_t len, cap;
	bool body_cut; /* over GRPC_MAX_ANSWER */
};

/* One header or trailer line as libcurl hands it over (len bytes, with its line end or not). */
void grpc_answer__header(struct grpc_answer *a, const char *line, size_t len);
/* More of the body. 0, or -ENOMEM (what came before is kept). Past GRPC_MAX_ANSWER it is only
 * counted as cut: the status is in the trailers that follow. */
int grpc_answer__body(struct grpc_answer *a, const void *buf, size_t len);
/*
 * Fill res (zeroed, retry_after_ms -1, as a transport's send gets it) from the answer: http is the
 * HTTP status, http2 whether the answer came over HTTP/2 (only for the message of a non-gRPC
 * answer). res->message is one sanitized log line.
 */
void grpc_answer__read(const struct grpc_answer *a, long http, bool http2, struct send_result *res);
void grpc_answer__release(struct grpc_answer *a);

#endif /* HOSTPROF_GRPC_ANSWER_H */

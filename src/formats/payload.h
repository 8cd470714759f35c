/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One encoded request body and what its sender needs besides the bytes. Encoders that produce
 * more than one request per profile (Pyroscope ingest: one per service) hand these out; the
 * exporter queues and the transports send them.
 */
#ifndef HOSTPROF_PAYLOAD_H
#define HOSTPROF_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

struct export_payload {
	uint8_t *body; /* malloc'ed; owned by the payload */
	size_t len;
	char *query; /* malloc'ed or NULL; for EXPORT_PYROSCOPE_INGEST: "name=...&from=...&..." */
	char *what;  /* malloc'ed or NULL; for logs, e.g. "cpu profile of 12 processes, 10 s" */
};

/* Frees what the payload owns and zeroes it; the struct itself is the caller's. NULL is fine. */
void export_payload__release(struct export_payload *p);

#endif /* HOSTPROF_PAYLOAD_H */

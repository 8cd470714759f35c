/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The OpenTelemetry process context (OTEP 4719): what an SDK publishes about its process for
 * outside readers, in a mapping named "OTEL_CTX". A 32-byte header by byte offset:
 *     0  "OTEL_CTX" (8 bytes, no NUL)     16  monotonic_published_at_ns (u64, CLOCK_BOOTTIME;
 *     8  version (u32, 2)                      0 while the SDK is writing)
 *    12  payload_size (u32)               24  payload pointer (u64, in the process)
 * and a protobuf ProcessContext payload (proto/.../processcontext/v1development): the SDK's
 * resource (service.name, service.version, service.instance.id, ...), which wins over every
 * other source of the process's identity, and the attributes readers of its thread context need
 * (OTEP 4947: threadlocal.schema_version, threadlocal.attribute_key_map).
 *
 * Read by the OTEP's reader protocol: header, payload, header again, retried while the
 * timestamp moves. The process is hostile: the payload is read only up to
 * PROCESS_CONTEXT_MAX_PAYLOAD bytes, decoded by protobuf-c, and kept only as bounded strings.
 */
#ifndef HOSTPROF_PROCESS_CONTEXT_H
#define HOSTPROF_PROCESS_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mapping;

#define PROCESS_CONTEXT_MAX_PAYLOAD (64u * 1024u)
#define PROCESS_CONTEXT_MAX_ATTRS 32  /* resource attributes kept */
#define PROCESS_CONTEXT_MAX_KEYS 256  /* the thread context's key indexes are a u8 */
#define PROCESS_CONTEXT_MAX_VALUE 256 /* bytes of one attribute value or key name */

struct process_context_attr {
	char *key, *value; /* a non-string value in its text form: 42, true, 1.5 */
};

struct process_context {
	uint64_t header_addr;  /* where the header lies in the process */
	uint64_t published_ns; /* the header's timestamp when it was read */
	struct process_context_attr attrs[PROCESS_CONTEXT_MAX_ATTRS]; /* the resource's */
	size_t nr_attrs;
	char *thread_schema; /* threadlocal.schema_version ("tls_v1"...); NULL when absent */
	char *key_map[PROCESS_CONTEXT_MAX_KEYS]; /* threadlocal.attribute_key_map, by index */
	size_t nr_keys;
};

/* Does this maps line name a process context mapping ([anon_shmem:OTEL_CTX], [anon:OTEL_CTX],
 * /memfd:OTEL_CTX, perhaps " (deleted)")? */
bool process_context__is_mapping(const struct mapping *m);

/*
 * Read the context whose header is at header_addr in process pid. 0 with *out a new context (the
 * caller frees it), or -errno: -ENOENT (no valid header there: another signature or version),
 * -EAGAIN (the SDK kept writing while we read), -EBADMSG (a payload that does not decode or is
 * larger than PROCESS_CONTEXT_MAX_PAYLOAD), -ENOMEM, or what reading the process gave (-EPERM,
 * -ESRCH, -EFAULT).
 */
int process_context__read(pid_t pid, uint64_t header_addr, struct process_context **out);

/* The header's timestamp now (0 while the SDK writes), to tell whether a context changed.
 * 0 or -errno. */
int process_context__published(pid_t pid, uint64_t header_addr, uint64_t *published_ns);

/* The value of a resource attribute, or NULL. */
const char *process_context__get(const struct process_context *c, const char *key);

/* Decode a payload (exposed for the tests and the fuzz target). 0, -EBADMSG or -ENOMEM. */
int process_context__decode(const uint8_t *payload, size_t len, struct process_context *out);

void process_context__free(struct process_context *c);

#endif /* HOSTPROF_PROCESS_CONTEXT_H */

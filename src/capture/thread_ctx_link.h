/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Samples linked to the span they served (OTEP 4947, thread context). Two halves:
 *
 * - thread_ctx_link__scan(): for the processes in a drained batch whose SDK declares a thread
 *   context in its process context (threadlocal.schema_version tls_v1 or tlsdesc_v1_dev), find
 *   where otel_thread_ctx_v1 lives (symbolizer__thread_ctx_ref()) and tell the BPF sampler
 *   (bpf_session__set_thread_ctx()); from then on each of their samples carries the record of
 *   its thread's span. A process is looked at again every few seconds until that works (a
 *   library dlopened later, an SDK that publishes late), and every minute after (a PID reused).
 * - thread_ctx__decode(): a record as BPF read it into what the model keeps: the trace and span
 *   ids in hex and the attributes, named by the process's attribute_key_map. The process wrote
 *   the record: entries are parsed to the OTEP's rules (the last occurrence of a key wins, a
 *   truncated entry ends the list, unknown key indexes are skipped) and values made valid UTF-8.
 *   A Go program's record holds its goroutine's pprof labels instead (HP_THREAD_CTX_GO_LABELS):
 *   their keys name the attributes, sorted, a key or value cut by the sampler ending in "...".
 */
#ifndef HOSTPROF_THREAD_CTX_LINK_H
#define HOSTPROF_THREAD_CTX_LINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostprof_abi.h"
#include "model/profile.h"

struct bpf_session;
struct symbolizer;
struct sample_batch;
struct process_context;

#define THREAD_CTX_MAX_VALUE 256

/* A decoded record: ids in hex ("" when all zero), attributes in the key map's names. */
struct thread_ctx_fields {
	char trace_id[33];
	char span_id[17];
	size_t nr_attrs;
	struct {
		const char *key; /* the key map's string, or go_keys[i] */
		char value[THREAD_CTX_MAX_VALUE * 3 + 1];
	} attrs[PROFILE_MAX_CTX_ATTRS];
	char go_keys[PROFILE_MAX_CTX_ATTRS][HP_GO_LABEL_KEY * 3 + 4];
	size_t dropped; /* attributes past PROFILE_MAX_CTX_ATTRS, or of unknown key indexes */
};

/* 0 with *out filled; -EINVAL for a record that is not valid (valid neither 1 nor Go labels). */
int thread_ctx__decode(const struct hp_thread_ctx *rec, const struct process_context *pc,
		       struct thread_ctx_fields *out);

struct thread_ctx_link;

struct thread_ctx_link_stats {
	uint64_t processes;    /* processes whose context BPF reads now */
	uint64_t go_processes; /* of which Go programs (goroutine labels) */
	uint64_t failed;       /* tries that found no way to it (the reason is logged at debug) */
	/* samples kept without their span: their window had BUILDER_MAX_LINKS spans already
	 * (over all profile types; filled by capture__thread_ctx_stats()) */
	uint64_t samples_unlinked;
};

/* NULL with errno set. */
struct thread_ctx_link *thread_ctx_link__new(struct bpf_session *session, struct symbolizer *sym);
void thread_ctx_link__delete(struct thread_ctx_link *l);
void thread_ctx_link__scan(struct thread_ctx_link *l, const struct sample_batch *batch);
/* One process, as soon as it is known (a target, or one the sampler met for the first time):
 * its samples carry their spans from then on rather than from the next drain. */
void thread_ctx_link__add(struct thread_ctx_link *l, pid_t pid);
void thread_ctx_link__stats(const struct thread_ctx_link *l, struct thread_ctx_link_stats *out);

#endif /* HOSTPROF_THREAD_CTX_LINK_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Adds sample batches to a profile: symbolizes each address (through a bounded cache of
 * (pid, address) → location, since the same stacks come back drain after drain) and interns the
 * mappings, functions, locations and stacks.
 */
#ifndef HOSTPROF_BUILDER_H
#define HOSTPROF_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/collector.h"
#include "model/config.h"
#include "model/profile.h"
#include "process/identity.h"
#include "symbols/symbolize.h"

struct builder;

/* max_cached_locations bounds the address cache; it is emptied when it fills up. */
struct builder *builder__new(struct profile *p, struct symbolizer *sym,
			     size_t max_cached_locations);
void builder__delete(struct builder *b);

struct interp;
/* Name the interpreter frames BPF walked (interp/interp.h) with ip (borrowed); without it they
 * stay "[unknown]". */
void builder__set_interp(struct builder *b, struct interp *ip);

enum batch_kind {
	BATCH_CPU,	   /* cpu samples: value = count * period */
	BATCH_CPU_IN_WALL, /* the same, labelled thread.state "running" */
	BATCH_OFFCPU,	   /* off-CPU waits: value = nanoseconds away, labelled with the state */
	BATCH_LOCK,	   /* lock waits: value = nanoseconds, count = waits, labelled with the
			    * wait's kind and the lock's address */
};

struct identity;
/*
 * Name processes by the agent's identity rules (Kubernetes, systemd, relabeling), which may
 * also leave processes out; without it the service is the declared one or the executable's
 * name. The identity is borrowed; it must outlive the builder.
 */
void builder__set_identity(struct builder *b, struct identity *id);
/*
 * Called once per window for each process the identity rules leave out, with what the kernel
 * may skip of it: the capture's drop filter (capture/drop_filter.h).
 */
typedef void (*builder_drop_fn)(void *ctx, pid_t pid, enum identity_drop drop);
void builder__set_drop_hook(struct builder *b, builder_drop_fn fn, void *ctx);
/* process.command_line of each new process entry: off (the default), redacted or full
 * (process/cmdline.h). Identity rules see it as it will be exported. */
void builder__set_cmdline_mode(struct builder *b, enum cmdline_mode mode);
/* Samples (raw counts) that identity rules left out. */
uint64_t builder__samples_dropped(const struct builder *b);
/* Spans linked per window at most; samples of more spans are kept without their link. */
#define BUILDER_MAX_LINKS 16384
/* Samples kept without their span because the window had BUILDER_MAX_LINKS already. */
uint64_t builder__links_dropped(const struct builder *b);
/* Lookups of the (pid, address) → location cache that found the location, and that had to
 * symbolize the address. */
void builder__cache_stats(const struct builder *b, uint64_t *hits, uint64_t *misses);
/* The location cache's bytes; its entries and the slots it may grow to. */
size_t builder__cache_memory(const struct builder *b, size_t *entries, size_t *capacity);

/* Add every sample of the batch. 0 or -ENOMEM. */
int builder__add_batch(struct builder *b, const struct sample_batch *batch, enum batch_kind kind,
		       int64_t period);

#endif /* HOSTPROF_BUILDER_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's relabel drops, applied in the kernel: a process the identity rules leave out goes
 * into the BPF drop filter (bpf_session__drop_pid()), and with it its cgroup when the rules that
 * decided read only what the cgroup gives (enum identity_drop), so that its samples, waits and
 * stacks cost the programs a lookup instead of a walk. The kernel forgets a PID when its process
 * execs or exits; cgroups are forgotten when their directory is gone (drop_filter__sweep()) and
 * everything when the rules change (drop_filter__clear()).
 */
#ifndef HOSTPROF_DROP_FILTER_H
#define HOSTPROF_DROP_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/bpf_session.h"
#include "process/identity.h"

struct drop_filter;

struct drop_filter_stats {
	uint64_t pids, cgroups; /* put into the kernel's filter */
	uint64_t full;		/* not put in: its map was full (HP_DROP_*_ENTRIES) */
	uint64_t failed;	/* not put in for another reason (a cgroup not found, ...) */
	size_t cgroups_held;	/* cgroups in the filter now */
};

/* The session is borrowed. NULL + errno (ENOMEM). */
struct drop_filter *drop_filter__new(struct bpf_session *s, const char *proc_root);
void drop_filter__delete(struct drop_filter *f);

/* A process the rules left out (builder_drop_fn's shape, ctx the filter). */
void drop_filter__add(void *f, pid_t pid, enum identity_drop drop);
/* The rules changed: empty the kernel's filter; processes are judged again at their next sample. */
void drop_filter__clear(struct drop_filter *f);
/* Forget the cgroups whose directory is gone (call it once per window). */
void drop_filter__sweep(struct drop_filter *f);
void drop_filter__stats(const struct drop_filter *f, struct drop_filter_stats *out);

#endif /* HOSTPROF_DROP_FILTER_H */

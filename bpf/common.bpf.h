/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every hostprof BPF object has, each its own copy: the PID filters, the double-buffer index
 * that userspace flips before it drains (see cpu.bpf.c), the loss and event counters that
 * userspace adds up across objects, and the stack map shape.
 */
#ifndef HOSTPROF_COMMON_BPF_H
#define HOSTPROF_COMMON_BPF_H

#include "hostprof_abi.h"

/* errno values, which vmlinux.h does not carry. */
#define E2BIG 7
#define EAGAIN 11
#define ENOMEM 12
#define EFAULT 14
#define EEXIST 17

/* Set by userspace between open and load. */
const volatile bool filter_pids = false;

/* Written by userspace while running: which buffer set BPF fills. */
volatile __u32 active_buffer = 0;
/* Written by userspace while running: which drop maps hold entries (enum hp_drop_filter). */
volatile __u32 drop_active = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} target_pids SEC(".maps");

/* Processes the agent's relabel rules leave out: by tgid, and whole cgroups (v2 ids). The cpu
 * object's, shared with the others like target_pids. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HP_DROP_PIDS_ENTRIES);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} drop_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HP_DROP_CGROUPS_ENTRIES);
	__type(key, __u64); /* cgroup id: the inode number of its directory in cgroup2fs */
	__type(value, __u8);
} drop_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HP_LOSS__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HP_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Per CPU, the state of hp_random(); 0 until its first use. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} random_state SEC(".maps");

/* A stack-trace map of one buffer set; max_entries is set by userspace before load. */
#define HP_STACK_MAP(name)                                                                         \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                                            \
		__uint(max_entries, 16384);                                                        \
		__uint(key_size, sizeof(__u32));                                                   \
		__uint(value_size, HP_MAX_STACK_DEPTH * sizeof(__u64));                            \
	} name SEC(".maps")

/* Per-CPU counters: no other writer, no atomics needed. */
static __always_inline void bump(void *map, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(map, &idx);

	if (v)
		*v += 1;
}

/*
 * Wait aggregates (struct hp_offcpu_value, struct hp_lock_value) start with {ns, count}. The
 * caller looks its key up first and fills the names of a new entry only when it has to: reading
 * comms costs, and most waits land on an existing entry.
 */
static __always_inline void hp_wait_add(__u64 *ns_count, __u64 delta, __u64 count)
{
	__sync_fetch_and_add(&ns_count[0], delta);
	__sync_fetch_and_add(&ns_count[1], count);
}

/*
 * bpf_map_update_elem() for callers that look at the error. Before Linux 6.4 the verifier turns the
 * helper into a direct call of the map's update op, which returned an int: an error reaches the
 * program zero-extended (-EEXIST as 4294967279), so a 64-bit compare with -EEXIST never matches.
 * Compared as an int, the error is the same on every kernel.
 */
static __always_inline int hp_map_update(void *map, const void *key, const void *value, __u64 flags)
{
	return (int)bpf_map_update_elem(map, key, value, flags);
}

/* Count a failed map update: loss_full when the map was full (-E2BIG), else what really
 * happened, so that a summary never blames the map size for another error. */
static __always_inline void hp_count_update_error(int err, __u32 loss_full)
{
	if (err == -E2BIG)
		bump(&losses, loss_full);
	else if (err == -ENOMEM)
		bump(&losses, HP_LOSS_MAP_NO_MEMORY);
	else
		bump(&losses, HP_LOSS_MAP_UPDATE_FAILED);
}

/* Insert a new wait aggregate (init holds {delta, count} and the names). Another CPU may have
 * inserted the same key since our lookup: then add to its entry. A full map counts `loss`. */
static __always_inline void hp_wait_insert(void *counts, const void *key, const void *init,
					   __u64 delta, __u64 count, __u32 loss)
{
	int err = hp_map_update(counts, key, init, BPF_NOEXIST);
	__u64 *val;

	if (err == -EEXIST) {
		val = bpf_map_lookup_elem(counts, key);
		if (val) {
			hp_wait_add(val, delta, count);
			err = 0;
		}
	}
	if (err)
		hp_count_update_error(err, loss);
}

/*
 * 32 pseudo-random bits: xorshift64* (Vigna, 2016) over a per-CPU state seeded from
 * bpf_get_prandom_u32() at its first use, the high half of the product. Enough to choose the waits
 * to sample, and a few instructions where the helper call costs ~26 ns (on the benchmark VM), at
 * most of the host's context switches.
 */
static __always_inline __u32 hp_random(void)
{
	__u32 zero = 0;
	__u64 *state = bpf_map_lookup_elem(&random_state, &zero), x;

	if (!state)
		return bpf_get_prandom_u32();
	x = *state;
	if (!x)
		x = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32() | 1;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (x * 0x2545f4914f6cdd1dULL) >> 32;
}

/* How many waits of delta ns (above 0) a period stands for: period / delta, rounded up or down at
 * random so that the count is right on average. */
static __always_inline __u64 hp_waits_per_period(__u64 period, __u64 delta)
{
	return period / delta + ((__u64)hp_random() % delta < period % delta);
}

/*
 * Sampling of waits shorter than period_ns, in proportion to their length: one is kept with
 * probability delta / period and then stands for period ns and period / delta waits (rounded at
 * random, so that the count too is right on average); a longer wait, or any with period 0, is kept
 * as it is. Totals stay unbiased while the waits walked are at most one per period of waiting.
 * period must be below 2^31 (userspace caps it at one second). False: not kept.
 */
static __always_inline bool hp_sample_wait(__u64 delta, __u64 period, __u64 *ns, __u64 *n)
{
	__u64 r;

	*ns = delta;
	*n = 1;
	if (!period || delta >= period)
		return true;
	if (!delta)
		delta = 1;
	r = hp_random();
	if (((r * period) >> 32) >= delta)
		return false;
	*ns = period;
	*n = hp_waits_per_period(period, delta);
	return true;
}

/* Is this process one of the targets (all of them without --pid)? */
static __always_inline bool hp_targeted(__u32 tgid)
{
	return !filter_pids || bpf_map_lookup_elem(&target_pids, &tgid);
}

/*
 * Is the task's process in the drop filter? One load while the filter is empty; then a lookup by
 * tgid, and one by the task's cgroup on the default hierarchy (task->cgroups->dfl_cgrp->kn->id,
 * what bpf_get_current_cgroup_id() gives for current, read here for any task: sched_switch's next
 * is not current).
 */
static __always_inline bool hp_dropped(struct task_struct *task, __u32 tgid)
{
	__u32 on = drop_active;
	__u64 cgroup;

	if (!on)
		return false;
	if ((on & HP_DROP_PIDS) && bpf_map_lookup_elem(&drop_pids, &tgid))
		return true;
	if (!(on & HP_DROP_CGROUPS))
		return false;
	cgroup = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	return bpf_map_lookup_elem(&drop_cgroups, &cgroup) != NULL;
}

/*
 * Filtering comes first in every program: a dropped process costs a lookup or two and a counter,
 * no stack, no map entry. task is the process's thread the event is about (tgid its process).
 */
static __always_inline bool hp_wanted(struct task_struct *task, __u32 tgid)
{
	if (hp_dropped(task, tgid)) {
		bump(&stats, HP_STAT_FILTER_DROPPED);
		return false;
	}
	return hp_targeted(tgid);
}

/* The TLS pointer of the current task, as the thread's user code sees it. */
static __always_inline __u64 hp_thread_pointer(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(task, thread.fsbase);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(task, thread.uw.tp_value);
#else
	return 0;
#endif
}

#endif /* HOSTPROF_COMMON_BPF_H */

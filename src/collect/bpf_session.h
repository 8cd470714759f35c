/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The only user of the BPF skeletons: preflight checks, open → configure → load → attach, and the
 * drain primitives that the collector uses.
 */
#ifndef HOSTPROF_BPF_SESSION_H
#define HOSTPROF_BPF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostprof_abi.h"

struct bpf_session;

struct bpf_session_opts {
	bool filter_pids;	     /* only the PIDs given with bpf_session__add_pid() */
	bool follow_children;	     /* with filter_pids: and the processes they start */
	bool include_idle;	     /* count the idle task (pid 0) */
	uint32_t stack_map_entries;  /* per buffer */
	uint32_t counts_map_entries; /* per buffer */
	bool offcpu;		     /* also load the sched_switch program (off-CPU, wall) */
	uint64_t offcpu_min_ns;	     /* shorter waits are not recorded */
	uint64_t wait_sample_ns;     /* shorter waits are sampled (hp_sample_wait()); 0: none */
	uint32_t offcpu_threads;     /* threads that may be off the CPU at once */
	uint32_t offcpu_map_entries; /* distinct off-CPU stacks; (thread, stack, state) keys */
	bool lock;		     /* also load the lock contention programs */
	uint64_t lock_min_ns;	     /* shorter waits are not recorded */
	bool unwind;		     /* walk user stacks with unwind tables (needs bpf_loop) */
	uint32_t unwind_rows;	     /* rows of every loaded table together (the rows map) */
	uint32_t unwind_procs;	     /* processes with tables at once */
	uint32_t unwind_depth;	     /* user frames at most (<= HP_UNWIND_MAX_DEPTH) */
	bool drop_filter; /* processes may be dropped in the kernel (bpf_session__drop_*) */
};

#define BPF_SESSION_KERNEL_BTF "/sys/kernel/btf/vmlinux"

/*
 * Check what loading needs before trying: kernel BTF at btf_path (BPF_SESSION_KERNEL_BTF) and the
 * capabilities (root, or CAP_BPF with CAP_PERFMON). On failure returns -errno and writes a message
 * naming the problem and its fix.
 */
int bpf_session__preflight(const char *btf_path, char *msg, size_t len);

/* Open, configure and load. Returns NULL and sets errno; the reason has been logged. */
struct bpf_session *bpf_session__new(const struct bpf_session_opts *opts);
void bpf_session__delete(struct bpf_session *s);

/*
 * Tell the sampler where a process keeps its thread context variable (struct hp_tls_ref), or
 * forget it (ref NULL). 0 or -errno (-E2BIG: the map is full; -ENOTSUP: a Go program's g in a
 * register, on a kernel without bpf_task_pt_regs, Linux 5.15).
 */
int bpf_session__set_thread_ctx(struct bpf_session *s, pid_t pid, const struct hp_tls_ref *ref);

/*
 * Tell the walker where a process's CPython keeps its threads and frames (bpf/python.bpf.h), or
 * forget it (py NULL). 0 or -errno (-E2BIG: the map is full; -ENOTSUP: no bpf_loop walker here,
 * Linux 5.17, or --unwind fp).
 */
int bpf_session__set_python(struct bpf_session *s, pid_t pid, const struct hp_py_proc *py);

/* Add a process (all its threads) to the kernel filter. 0 or -errno. */
int bpf_session__add_pid(struct bpf_session *s, pid_t pid);

/*
 * The drop filter (bpf/common.bpf.h, with opts.drop_filter): every program skips a process whose
 * tgid, or whose cgroup (its cgroup v2 id, the inode number of its cgroup2fs directory), was
 * given, before any other work. A PID leaves the filter when its process execs or exits; a
 * cgroup only by bpf_session__undrop_cgroup() or bpf_session__clear_drops(). 0 or -errno:
 * -E2BIG when the map is full (HP_DROP_*_ENTRIES), -ENOTSUP without opts.drop_filter.
 */
int bpf_session__drop_pid(struct bpf_session *s, pid_t pid);
int bpf_session__drop_cgroup(struct bpf_session *s, uint64_t cgroup_id);
int bpf_session__undrop_cgroup(struct bpf_session *s, uint64_t cgroup_id);
/* Empty the filter (the rules changed). */
void bpf_session__clear_drops(struct bpf_session *s);

/* Open a cpu-clock perf event on every online CPU and attach the sampler. 0 or -errno. */
int bpf_session__attach(struct bpf_session *s, uint32_t frequency_hz);
/* Stop sampling (close the perf events), so that a last drain collects everything. */
void bpf_session__detach(struct bpf_session *s);
/* Number of CPUs the sampler is attached to. */
int bpf_session__nr_cpus(const struct bpf_session *s);

/* One drained aggregation entry. The stacks point into session-owned buffers, valid for the call.
 */
struct drained_entry {
	const struct hp_sample_key *key;
	const struct hp_sample_value *value;
	const uint64_t *user_ips; /* leaf first */
	uint32_t nr_user;
	const uint64_t *kern_ips; /* leaf first */
	uint32_t nr_kern;
	bool user_stack_gone; /* the key named a user stack that the map no longer held */
	bool kern_stack_gone;
	/* The thread's OpenTelemetry context record when the sample had one (OTEP 4947), else
	 * NULL; as raw as the process wrote it */
	const struct hp_thread_ctx *thread_ctx;
};

typedef int (*drain_fn)(const struct drained_entry *e, void *ctx);

/* One drained off-CPU aggregate; stack is NULL when its stack could not be kept. */
struct drained_offcpu {
	const struct hp_offcpu_key *key;
	const struct hp_offcpu_value *value;
	const struct hp_raw_stack *stack;
	const struct hp_thread_ctx *thread_ctx; /* the span it served when it blocked, or NULL */
};

typedef int (*drain_offcpu_fn)(const struct drained_offcpu *e, void *ctx);

/* One drained lock-wait aggregate; stacks as in struct drained_entry. */
struct drained_lock {
	const struct hp_lock_key *key;
	const struct hp_lock_value *value;
	const uint64_t *user_ips;
	uint32_t nr_user;
	const uint64_t *kern_ips;
	uint32_t nr_kern;
	const struct hp_thread_ctx *thread_ctx; /* the span the waiter served, or NULL */
};

typedef int (*drain_lock_fn)(const struct drained_lock *e, void *ctx);

/* The callbacks of one drain; NULL ones are cleared without being read. */
struct drain_fns {
	drain_fn cpu;
	drain_offcpu_fn offcpu;
	drain_lock_fn lock;
};

/*
 * Switch BPF to the other buffer set, wait until no program can still write the old one, then call
 * fn for each entry of the old set and clear it (counts and stacks). A non-zero return from fn
 * stops the walk and is returned; the old set is cleared regardless, so entries are never counted
 * twice. Returns the number of entries drained, or -errno.
 */
int bpf_session__drain(struct bpf_session *s, const struct drain_fns *fns, void *ctx);

/*
 * After bpf_session__detach(): each thread that is still off the CPU, as an off-CPU entry whose
 * time runs up to now (so that a wall profile covers the whole window). Returns how many, or
 * -errno. A no-op without the off-CPU program.
 */
int bpf_session__drain_pending_offcpu(struct bpf_session *s, drain_offcpu_fn fn, void *ctx);

/*
 * Whether the user-stack walker is on: opts.unwind was asked and the kernel has bpf_loop. When it
 * is, *rows_fd and *procs_fd are the maps the unwind loader fills (shared by every object).
 */
bool bpf_session__unwinding(const struct bpf_session *s, int *rows_fd, int *procs_fd);
/*
 * Take up to max requests about processes' unwind tables (see unwind_refresh in
 * bpf/unwind.bpf.h): a walk asked for a (re)load, or the process exec'd or exited. Returns how
 * many were put in out.
 */
struct unwind_request {
	pid_t pid;
	uint8_t kind; /* enum hp_unwind_request */
};
size_t bpf_session__take_unwind_requests(struct bpf_session *s, struct unwind_request *out,
					 size_t max);
/*
 * The ring buffer of struct hp_proc_event (processes sampled for the first time, execs), or -1
 * without the walker. Its reader owns the polling (see src/process/proc_watch.h).
 */
int bpf_session__proc_events_fd(const struct bpf_session *s);
/* Why user-stack walks ended, totals over all CPUs and objects since load. */
int bpf_session__read_unwind_stops(struct bpf_session *s, uint64_t stops[HP_UNWIND_STOP__COUNT]);

/* Totals over all CPUs since load. */
int bpf_session__read_counters(struct bpf_session *s, uint64_t losses[HP_LOSS__COUNT],
			       uint64_t stats[HP_STAT__COUNT]);

#endif /* HOSTPROF_BPF_SESSION_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session's state, shared by the files of the collect module that hold it: bpf_session.c
 * (loading, attaching, counters) and bpf_drain.c (reading the maps out). Nothing else includes it.
 */
#ifndef HOSTPROF_BPF_SESSION_IMPL_H
#define HOSTPROF_BPF_SESSION_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/cpu.skel.h"
#include "bpf/lock.skel.h"
#include "bpf/offcpu.skel.h"
#include "collect/bpf_session.h"

/* Links of the off-CPU or lock object: one per hook, whichever variant of its program loaded. */
#define HP_MAX_OBJECT_LINKS 4
/* futex, futex_waitv (Linux 5.16+) and futex_wait (6.7+). */
#define HP_FUTEX_CALLS 3

struct bpf_session {
	struct cpu_bpf *skel;
	struct offcpu_bpf *offcpu; /* NULL unless opts.offcpu */
	struct lock_bpf *lock;	   /* NULL unless opts.lock */
	struct bpf_link *lock_links[HP_MAX_OBJECT_LINKS];
	/* The futex calls' own tracepoints, entry and exit of each call the kernel has. */
	struct bpf_link *lock_futex_links[2 * HP_FUTEX_CALLS];
	bool lock_futex_tracepoints;   /* else raw_syscalls sys_enter and sys_exit */
	struct hp_lock_key *lock_keys; /* drain scratch: counts_map_entries keys */
	struct bpf_link *offcpu_links[HP_MAX_OBJECT_LINKS];
	struct bpf_link *unwind_links[2];  /* exec and exit, with the walker */
	struct bpf_link *follow_links[2];  /* fork and exit, when following children */
	struct bpf_link *drop_links[2];	   /* exec and exit, with the drop filter */
	uint32_t drop_active;		   /* enum hp_drop_filter, as every object's .bss has it */
	struct hp_offcpu_key *offcpu_keys; /* drain scratch: offcpu_map_entries keys */
	uint64_t *offcpu_hashes;	   /* drain scratch: offcpu_map_entries stack hashes */
	uint32_t max_offcpu;
	uint32_t max_offcpu_threads;
	bool offcpu_task_storage; /* start records in task storage, listed by hp_offcpu_pending */
	bool futex_from_switch;	  /* futex waits are the sched_switch program's (futex_waits) */
	struct bpf_link **links;
	int nr_links;
	int nr_cpus_sampled; /* nr_links before detaching */
	int nr_cpus_possible;
	uint32_t active;     /* the buffer set BPF writes now */
	uint64_t *stack_buf; /* USER_IPS user entries, then HP_MAX_STACK_DEPTH kernel entries */
	struct hp_sample_key *keys; /* drain scratch: counts_map_entries keys */
	uint32_t max_keys;
	uint32_t *stack_ids; /* drain scratch: stack_map_entries ids */
	uint32_t max_stack_ids;
	bool unwinding;			 /* the user-stack walker is on */
	bool tail_calls;		 /* ... across tail calls, in the cpu sampler only */
	bool no_batch_take;		 /* unwind_refresh has no working batch operations */
	bool task_pt_regs_at_load;	 /* bpf_task_pt_regs exists (Linux 5.15) */
	uint64_t *ustack_keys;		 /* drain scratch: stack_map_entries walked-stack hashes */
	struct hp_user_stack ustack_buf; /* drain scratch: one walked stack */
	uint64_t *tctx_keys;		 /* drain scratch: HP_TCTX_ENTRIES context keys */
	struct hp_thread_ctx tctx_buf;	 /* drain scratch: one thread context record */
};

/* Distinct thread contexts per buffer set: more than 99 Hz samples a second on 40 CPUs. */
#define HP_TCTX_ENTRIES 4096

/* A drained user stack is either a frame-pointer one (HP_MAX_STACK_DEPTH) or a walked one. */
#define USER_IPS HP_UNWIND_MAX_DEPTH
_Static_assert(HP_UNWIND_MAX_DEPTH >= HP_MAX_STACK_DEPTH, "user stack buffer");

/*
 * Start an iterator program (the off-CPU object's task iterators): the fd of its output, whose
 * reading runs the program, and in *link the link to destroy once it is read; or -errno.
 */
static inline int iter_open(struct bpf_program *prog, struct bpf_link **link)
{
	int fd;

	*link = bpf_program__attach_iter(prog, NULL);
	if (!*link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(*link));
	if (fd < 0) {
		fd = -errno;
		bpf_link__destroy(*link);
		*link = NULL;
	}
	return fd;
}

#endif /* HOSTPROF_BPF_SESSION_IMPL_H */

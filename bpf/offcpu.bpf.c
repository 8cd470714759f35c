// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Off-CPU time: on sched_switch, a thread of interest leaving the CPU records when, why (its task
 * state) and where (its kernel and user stacks); when it runs again, the time it was away is added
 * to that stack in the kernel, per {process, thread, stack, state}.
 *
 * The stack is taken at switch-out (the thread is current then) but the time is only known at
 * switch-in, which may come after userspace has drained and cleared the maps. So the stack travels
 * as raw addresses in the thread's start record, and is aggregated under a hash of those
 * addresses. Counts and stacks are double-buffered like the CPU sampler's (see cpu.bpf.c).
 *
 * Two entry points with one body: tp_btf (typed arguments) and raw_tp for kernels without it;
 * userspace loads one, chosen by probing.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "futex.bpf.h"
#include "unwind.bpf.h"
#include "thread_ctx.bpf.h"

#define TASK_RUNNING 0x0
#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2

const volatile __u64 min_block_ns = 0;
/* Waits shorter than this are sampled (hp_sample_wait()); 0: every wait is kept. */
const volatile __u64 sample_ns = 0;
/*
 * The contention profile's futex waits are taken here (userspace sets it with the contention
 * programs loaded and the bpf_loop walker's programs here): a kept sleep in a futex wait carries
 * the wait's kind and futex in its key, and the lock object runs nothing at the futex calls, whose
 * tracepoints put every system call of the host on the slow path (~5% of a ping-pong's
 * throughput on the benchmark VM).
 */
const volatile bool futex_waits = false;

/*
 * The thread-context records of waits: written at switch-out, read by userspace when it drains the
 * wait, which may be a window later; an LRU rather than a buffer set, since the wait ends in a
 * set that switch-out could not know.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct hp_thread_ctx);
} offcpu_tctx SEC(".maps");

/* Per thread, its start record (the programs without the bpf_loop walker); max_entries set by
 * userspace, 1 where offcpu_task holds them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct hp_offcpu_start);
} offcpu_start SEC(".maps");

/*
 * The same records in task-local storage, for the programs with the bpf_loop walker (Linux 5.17+;
 * the map type is 5.11): found from the task itself, two lookups a switch cost ~50 ns against
 * ~135 in offcpu_start's hash on the benchmark VM; freed with the task, and only as large as the
 * threads that have waited. Userspace finds the waits still going on at the end through
 * hp_offcpu_pending, the map having no keys to list. Not created where offcpu_start is used.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct hp_offcpu_start);
} offcpu_task SEC(".maps");

/* The least guess of a wait's length that a walk by chance takes, as a part of the period: the
 * walk's probability, and so the weight of a short wait it keeps, stay within 256 to 1. */
#define GUESS_MIN_PART 256

/* A zeroed record to create start entries from: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hp_offcpu_start);
} zero_start SEC(".maps");

/*
 * Linux 6.18's task work: a callback that a given task runs when it next returns to user mode,
 * current then and in its own address space. A wait that was not walked at switch-out (by chance,
 * see struct hp_offcpu_start) and proves long is walked there: its user registers and stack are
 * the ones it waited with until it returns to user code. The kernel knows the field by its type's
 * name; vmlinux/arm64/vmlinux.h comes from Linux 6.1, which has no such type.
 */
#if defined(__TARGET_ARCH_arm64)
struct bpf_task_work {
	__u64 __opaque;
};
#endif

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map,
					      int (*callback)(struct bpf_map *map, void *key,
							      void *value),
					      void *aux__prog) __ksym __weak;

struct offcpu_return_work {
	struct bpf_task_work work;
};

/* Per thread, its task work (scheduled at most once at a time); max_entries set by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct offcpu_return_work);
} offcpu_return_work SEC(".maps");

#define OFFCPU_STACKS(name)                                                                        \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 16384);                                                        \
		__type(key, __u64);                                                                \
		__type(value, struct hp_raw_stack);                                                \
	} name SEC(".maps")

#define OFFCPU_COUNTS(name)                                                                        \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 16384);                                                        \
		__type(key, struct hp_offcpu_key);                                                 \
		__type(value, struct hp_offcpu_value);                                             \
	} name SEC(".maps")

OFFCPU_STACKS(offcpu_stacks_0);
OFFCPU_STACKS(offcpu_stacks_1);
OFFCPU_COUNTS(offcpu_counts_0);
OFFCPU_COUNTS(offcpu_counts_1);

/*
 * A field of a task the tracepoint passed: a plain load where its arguments are typed (tp_btf), a
 * probe-read helper call in the raw tracepoint. These programs run at every context switch of the
 * host, where ~40 ns per helper call was most of their cost. typed is a constant in each entry
 * point, so the other branch is compiled out.
 */
#define TASK_READ(typed, task, field) ((typed) ? (task)->field : BPF_CORE_READ(task, field))

/* Kernels before 5.14 (commit 2f064a59a11f) call the state field `state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline bool interesting(struct task_struct *task, __u32 tgid, __u32 tid)
{
	if (tid == 0) /* the idle task is never off the CPU in any useful sense */
		return false;
	return hp_wanted(task, tgid);
}

/* A thread's start record: in task storage (storage, a constant in each entry point) or the hash.
 */
static __always_inline struct hp_offcpu_start *start_record(struct task_struct *task, __u32 tid,
							    bool storage)
{
	if (storage)
		return bpf_task_storage_get(&offcpu_task, task, 0, 0);
	return bpf_map_lookup_elem(&offcpu_start, &tid);
}

/* A thread's first switch-out: a zeroed start record for it, or NULL (counted) without room. */
static __always_inline struct hp_offcpu_start *new_start_record(struct task_struct *task, __u32 tid,
								bool storage)
{
	struct hp_offcpu_start *tmpl;
	__u32 zero = 0;
	long n;

	if (storage) {
		tmpl = bpf_task_storage_get(&offcpu_task, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!tmpl)
			bump(&losses, HP_LOSS_MAP_NO_MEMORY);
		return tmpl;
	}
	tmpl = bpf_map_lookup_elem(&zero_start, &zero);
	if (!tmpl)
		return NULL;
	/* -EEXIST is a race with ourselves on another CPU and harmless; anything else means the
	 * map is full. */
	n = hp_map_update(&offcpu_start, &tid, tmpl, BPF_NOEXIST);
	if (n && n != -EEXIST) {
		hp_count_update_error((int)n, HP_LOSS_OFFCPU_START_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&offcpu_start, &tid);
}

/*
 * Why prev (current) leaves the CPU. A sleep in a user-space lock is told from others by the
 * system call its saved registers are in: with regs (NULL before Linux 5.15, or not read yet),
 * or later, by settle_lock_wait(), if *lock_check is set.
 */
static __always_inline __u32 classify(struct task_struct *prev, bool preempt, bool has_mm,
				      struct pt_regs *regs, bool typed, __u8 *lock_check)
{
	bool iowait;
	long state;

	*lock_check = 0;
	if (bpf_core_field_exists(prev->__state))
		state = TASK_READ(typed, prev, __state);
	else
		state = TASK_READ(typed, (struct task_struct___pre514 *)prev, state);
	if (preempt || state == TASK_RUNNING)
		return HP_STATE_PREEMPTED;
	if (state & TASK_INTERRUPTIBLE) {
		*lock_check = has_mm && !regs;
		return has_mm && hp_in_lock_wait(regs) ? HP_STATE_LOCK : HP_STATE_SLEEPING;
	}
	if (!(state & TASK_UNINTERRUPTIBLE))
		return HP_STATE_OTHER;
	if (typed)
		iowait = BPF_CORE_READ_BITFIELD(prev, in_iowait);
	else
		iowait = BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait);
	return iowait ? HP_STATE_IO : HP_STATE_BLOCKED;
}

static __always_inline void take_user_stack(void *ctx, __u32 tgid, struct hp_raw_stack *stack,
					    const struct hp_uregs *r, bool loop_walker)
{
	long n = 0;

	if (loop_walker && unwind_tables) {
		__u64 hash;

		n = hp_unwind_user(tgid, r, stack->user, &hash) * sizeof(__u64);
	} else {
		n = bpf_get_stack(ctx, stack->user, sizeof(stack->user), BPF_F_USER_STACK);
	}
	stack->nr_user = n > 0 ? n / sizeof(__u64) : 0;
}

/* The time of one context switch, read at most once for the thread leaving and the one arriving. */
struct switch_clock {
	__u64 now; /* 0: not read yet */
	struct task_struct *prev;
};

/*
 * The clock of a task's run queue, current's or prev's at sched_switch (sched_clock, ns: what
 * the scheduler times tasks with, the same on every CPU where the TSC is stable), or 0 where the
 * kernel has no task groups to reach it through (CONFIG_FAIR_GROUP_SCHED). __schedule() brought it
 * up to date just before sched_switch fires: reading it is three loads (typed programs only), where
 * bpf_ktime_get_ns() cost ~115 ns at every switch on the benchmark VM. (Through the task, not the
 * run queues' per-CPU symbol: that needs kallsyms of variables, CONFIG_KALLSYMS_ALL.)
 */
static __always_inline __u64 run_queue_clock(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->se.cfs_rq))
		return 0;
	/* task is a typed pointer (tp_btf, the iterator): plain loads, which the verifier guards.
	 */
	return task->se.cfs_rq->rq->clock;
}

/*
 * The time of this context switch: the run queue's clock in the programs with task storage
 * (storage; userspace compares it with what hp_offcpu_pending reads of it), else, or where that
 * clock cannot be reached, bpf_ktime_get_ns() (CLOCK_MONOTONIC). A kernel has one or the other for
 * all its switches.
 */
static __always_inline __u64 switch_time(struct switch_clock *clk, bool storage)
{
	if (!clk->now && storage)
		clk->now = run_queue_clock(clk->prev);
	if (!clk->now)
		clk->now = bpf_ktime_get_ns();
	return clk->now;
}

/*
 * The registers the current task entered the kernel with (bpf_task_pt_regs(), Linux 5.15+), or
 * NULL before: taken once per event, since every helper call costs on this path.
 */
static __always_inline struct pt_regs *current_saved_regs(void)
{
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return NULL;
	/* Unlike prev in the raw_tp variant, current is a pointer the verifier trusts. */
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

/*
 * A sleep whose registers were not read at switch-out (lock_check), kept: a sleep in a
 * user-space lock or not, from the registers task (a trusted pointer) still has saved, since it
 * has not left the system call it slept in. Deferred to here because two helper calls at every
 * switch-out cost ~65 ns, and most waits are not kept.
 */
static __always_inline void settle_lock_wait(struct hp_offcpu_start *start, struct pt_regs *regs)
{
	__u64 addr;
	__u32 kind = hp_futex_wait_in(regs, &addr);

	start->lock_check = 0;
	if (hp_is_lock_kind(kind))
		start->state = HP_STATE_LOCK;
	if (futex_waits) {
		start->futex_kind = kind;
		start->futex_addr = addr;
	}
}

static __always_inline __u64 hash_stack(const struct hp_raw_stack *s)
{
	__u64 h = 0xcbf29ce484222325ULL ^ ((__u64)s->nr_user << 32 | s->nr_kern);

	for (int i = 0; i < HP_OFFCPU_USER_DEPTH; i++) {
		if (i >= s->nr_user)
			break;
		h = (h ^ s->user[i]) * 0x100000001b3ULL;
	}
	for (int i = 0; i < HP_OFFCPU_KERN_DEPTH; i++) {
		if (i >= s->nr_kern)
			break;
		h = (h ^ s->kern[i]) * 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

static __always_inline void account(__u32 tgid, __u32 tid, struct task_struct *task,
				    struct hp_offcpu_start *start, __u64 ns, __u64 count,
				    void *stacks, void *counts)
{
	struct hp_offcpu_key key = {
		.pid = tgid,
		.tid = tid,
		.state = start->state,
		.futex_kind = start->futex_kind,
		.thread_ctx = start->thread_ctx,
		.futex_addr = start->futex_addr,
	};
	struct hp_offcpu_value *val, init = {.ns = ns, .count = count};
	long err;

	key.stack_hash = hash_stack(&start->stack);
	err = hp_map_update(stacks, &key.stack_hash, &start->stack, BPF_NOEXIST);
	if (err && err != -EEXIST)
		hp_count_update_error((int)err, HP_LOSS_OFFCPU_STACKS_FULL);
	val = bpf_map_lookup_elem(counts, &key);
	if (val) {
		hp_wait_add(&val->ns, ns, count);
		return;
	}
	BPF_CORE_READ_STR_INTO(&init.thread_name, task, comm);
	BPF_CORE_READ_STR_INTO(&init.process_name, task, group_leader, comm);
	hp_wait_insert(counts, &key, &init, ns, count, HP_LOSS_OFFCPU_COUNTS_FULL);
}

static __always_inline void account_active(__u32 tgid, __u32 tid, struct task_struct *task,
					   struct hp_offcpu_start *start, __u64 ns, __u64 count)
{
	if (active_buffer == 0)
		account(tgid, tid, task, start, ns, count, &offcpu_stacks_0, &offcpu_counts_0);
	else
		account(tgid, tid, task, start, ns, count, &offcpu_stacks_1, &offcpu_counts_1);
}

/*
 * The thread leaving the CPU is current: its thread context and stacks can be read now, and are
 * if its recent waits were long, or by chance if they were short (see struct hp_offcpu_start).
 */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       bool loop_walker, bool typed, bool at_return, bool storage,
				       struct switch_clock *clk)
{
	__u32 tid = TASK_READ(typed, prev, pid), tgid = TASK_READ(typed, prev, tgid);
	struct hp_offcpu_start *start;
	struct pt_regs *regs = NULL;
	struct hp_uregs r = {};
	bool has_mm;
	long n;

	if (!interesting(prev, tgid, tid))
		return;
	has_mm = TASK_READ(typed, prev, mm) != NULL;
	start = start_record(prev, tid, storage);
	if (!start) {
		start = new_start_record(prev, tid, storage);
		if (!start)
			return;
		/* No history: walked, as a thread whose waits are long. */
		start->recent_ns = (__u64)-1;
	}
	/* A kept wait still waiting for its walk at the return to user mode, and the thread waits
	 * again first (in the same system call): accounted now, with its kernel stack only. */
	if (at_return && start->await_return) {
		start->await_return = 0;
		bump(&stats, HP_STAT_OFFCPU_UNWALKED_LONG);
		account_active(tgid, tid, prev, start, start->return_ns, start->return_n);
	}
	/* With task storage (the newer kernels' programs), a wait's registers are read only if it
	 * is walked or kept; otherwise here, as before. */
	if (!storage)
		regs = current_saved_regs();
	start->ts = switch_time(clk, storage);
	start->state = classify(prev, preempt, has_mm, regs, typed, &start->lock_check);
	start->futex_kind = HP_WAIT__COUNT;
	start->futex_addr = 0;
	start->thread_ctx = 0;
	start->unwalked = 0;
	start->guess_ns = 0;
	/* A wait still going on when the capture ends is drained with what its record holds:
	 * nothing rather than the stacks of an earlier wait. */
	start->stack.nr_kern = 0;
	start->stack.nr_user = 0;
	/* Its recent waits were short: walked by chance. A pinned ping-pong cost a walk per
	 * switch without this. */
	if (sample_ns && start->recent_ns < sample_ns) {
		__u64 guess = start->recent_ns, least = sample_ns / GUESS_MIN_PART;

		if (guess < least)
			guess = least ? least : 1;
		start->guess_ns = guess;
		if ((((__u64)hp_random() * sample_ns) >> 32) >= guess) {
			start->unwalked = 1;
			return;
		}
	}
	if (storage) {
		regs = current_saved_regs();
		if (start->lock_check)
			settle_lock_wait(start, regs);
	}
	/* prev is current here: its TLS pointer and memory are the ones read. Only for a wait whose
	 * stacks are taken: a lookup on every switch-out cost ~30 ns of ~300. */
	if (has_mm)
		start->thread_ctx =
			hp_thread_ctx_store(&offcpu_tctx, hp_thread_ctx_read_apart(tgid));
	n = bpf_get_stack(ctx, start->stack.kern, sizeof(start->stack.kern), 0);
	start->stack.nr_kern = n > 0 ? n / sizeof(__u64) : 0;
	if (has_mm && (!loop_walker || !unwind_tables || regs)) {
		if (regs)
			hp_uregs_from_saved(regs, &r);
		take_user_stack(ctx, tgid, &start->stack, &r, loop_walker);
	}
	bump(&stats, HP_STAT_OFFCPU_WALKED);
}

/*
 * Is the wait that just ended kept, and what does it stand for (*ns, *count)? A wait shorter than
 * the period is sampled (hp_sample_wait()); one walked by chance at switch-out is sampled against
 * its guess instead and weighted by period / guess, one not walked is kept only if it proved
 * long. See struct hp_offcpu_start. With late_walk (its user stack can be read when it returns to
 * user mode, Linux 6.18), a wait longer than its guess is kept as one that was never guessed.
 */
static __always_inline bool keep_wait(const struct hp_offcpu_start *start, __u64 delta,
				      bool late_walk, __u64 *ns, __u64 *count)
{
	__u64 guess = start->guess_ns;

	/* Not walked, and no guess: asleep when the capture began (hp_offcpu_seed), kept only if
	 * it proves long. */
	if (start->unwalked && !guess)
		return delta >= sample_ns && hp_sample_wait(delta, sample_ns, ns, count);
	if (!guess || delta >= sample_ns)
		return hp_sample_wait(delta, sample_ns, ns, count);
	if (delta > guess && late_walk) {
		/* Kept with probability delta / period in all, and then standing for one period:
		 * surely if walked (guess / period), else for the rest ((delta - guess) / (period -
		 * guess) of those not walked), its user stack read on the way back to user code.
		 * Weighted period / guess instead, the run-queue delays of a loaded host (a few ms
		 * after waits of 160 us) rested on one walk in 60, and so did the totals: 24% short
		 * in one run. */
		if (start->unwalked &&
		    (((__u64)hp_random() * (sample_ns - guess)) >> 32) >= delta - guess)
			return false;
		*ns = sample_ns;
		*count = hp_waits_per_period(sample_ns, delta);
		return true;
	}
	if (start->unwalked || !hp_sample_wait(delta, guess, ns, count))
		return false;
	*ns = *ns * sample_ns / guess;
	*count = (*count * sample_ns + guess / 2) / guess;
	return true;
}

/*
 * The task work of a kept wait that was not walked at switch-out: the thread is current, about to
 * return to user mode from the system call it waited in (its user registers are checked to be
 * the ones it waited with). Its thread context and user stack are read, and the wait accounted.
 */
static int walk_at_return(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid(), hash;
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct hp_offcpu_start *start;
	struct hp_uregs r;

	if (tid != *(__u32 *)key)
		return 0;
	start = bpf_task_storage_get(&offcpu_task, task, 0, 0);
	if (!start || !start->await_return)
		return 0;
	start->await_return = 0;
	start->thread_ctx = hp_thread_ctx_store(&offcpu_tctx, hp_thread_ctx_read_apart(tgid));
	hp_uregs_from_saved((struct pt_regs *)bpf_task_pt_regs(task), &r);
	start->stack.nr_user = 0;
	if (r.pc == start->return_pc && r.sp == start->return_sp) {
		start->stack.nr_user = hp_unwind_user(tgid, &r, start->stack.user, &hash);
		bump(&stats, HP_STAT_OFFCPU_WALKED);
		bump(&stats, HP_STAT_OFFCPU_WALKED_AT_RETURN);
	} else {
		bump(&stats, HP_STAT_OFFCPU_UNWALKED_LONG);
	}
	account_active(tgid, tid, task, start, start->return_ns, start->return_n);
	return 0;
}

/* Ask for walk_at_return() when next, a thread with a user address space, returns to user mode. */
static __always_inline bool ask_walk_at_return(struct task_struct *next, __u32 tid,
					       struct hp_offcpu_start *start, __u64 ns, __u64 count)
{
	struct offcpu_return_work *w = bpf_map_lookup_elem(&offcpu_return_work, &tid), fresh = {};
	struct hp_uregs r;

	if (!w) {
		bpf_map_update_elem(&offcpu_return_work, &tid, &fresh, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&offcpu_return_work, &tid);
		if (!w)
			return false;
	}
	hp_uregs_from_saved((struct pt_regs *)bpf_task_pt_regs(next), &r);
	start->return_pc = r.pc;
	start->return_sp = r.sp;
	start->return_ns = ns;
	start->return_n = count;
	start->await_return = 1;
	if (bpf_task_work_schedule_resume_impl(next, &w->work, &offcpu_return_work, walk_at_return,
					       NULL)) {
		start->await_return = 0;
		return false;
	}
	return true;
}

/* The thread about to run was off the CPU since its start record: account the time if the wait
 * is kept. */
static __always_inline void switch_in(struct task_struct *next, bool typed, bool at_return,
				      bool storage, struct switch_clock *clk)
{
	__u32 tid = TASK_READ(typed, next, pid), tgid = TASK_READ(typed, next, tgid);
	struct hp_offcpu_start *start;
	__u64 delta, ns, count;
	bool late_walk;
	long n;

	if (!interesting(next, tgid, tid))
		return;
	start = start_record(next, tid, storage);
	if (!start || !start->ts)
		return;
	/* The run queues' clocks can differ by a little where the TSC is not stable: a wait that
	 * began on another CPU is at least 0. */
	delta = switch_time(clk, storage);
	delta = delta > start->ts ? delta - start->ts : 0;
	start->ts = 0;
	/* Halved at each wait, so that one short wait among long ones does not make the next walk
	 * unlikely and its weight large. */
	start->recent_ns /= 2;
	if (start->recent_ns < delta)
		start->recent_ns = delta;
	if (delta < min_block_ns)
		return;
	bump(&stats, HP_STAT_OFFCPU_EVENTS);
	/* at_return is a constant of the entry point: the raw tracepoint's never reads mm here. */
	late_walk = at_return && TASK_READ(typed, next, mm);
	if (!keep_wait(start, delta, late_walk, &ns, &count)) {
		bump(&stats, HP_STAT_OFFCPU_SKIPPED);
		return;
	}
	if (ns != delta)
		bump(&stats, HP_STAT_OFFCPU_SAMPLED);
	if (storage && start->lock_check)
		settle_lock_wait(start,
				 bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)
					 ? (struct pt_regs *)bpf_task_pt_regs(next)
					 : NULL);
	if (start->unwalked) {
		/* Its walk was left out by chance, and it proved long (kept exactly) or longer
		 * than its guess (kept by chance, keep_wait()): with the kernel stack it has now,
		 * and its user stack read when it returns to user mode (Linux 6.18) or none. */
		n = bpf_get_task_stack(next, start->stack.kern, sizeof(start->stack.kern), 0);
		start->stack.nr_kern = n > 0 ? n / sizeof(__u64) : 0;
		if (late_walk && ask_walk_at_return(next, tid, start, ns, count))
			return;
		bump(&stats, HP_STAT_OFFCPU_UNWALKED_LONG);
	}
	account_active(tgid, tid, next, start, ns, count);
}

/*
 * Three entry points for sched_switch, one loaded: tp_btf (Linux 5.5+) with frame-pointer user
 * stacks, the same with the bpf_loop walker and task storage (5.17+), or the raw tracepoint where
 * the kernel has no BTF for the tracepoint. The walker has its own program because a kernel before
 * 5.13 cannot load a program that names a bpf_loop callback, even on a path it never takes.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(hp_offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct switch_clock clk = {.prev = prev};

	switch_out(ctx, prev, preempt, false, true, false, false, &clk);
	switch_in(next, true, false, false, &clk);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(hp_offcpu_switch_loop, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct switch_clock clk = {.prev = prev};

	switch_out(ctx, prev, preempt, true, true, false, true, &clk);
	switch_in(next, true, false, true, &clk);
	return 0;
}

/* The bpf_loop walker with walks at the return to user mode (Linux 6.18): its own program, since
 * older kernels know neither the task work nor the type in its map. */
SEC("tp_btf/sched_switch")
int BPF_PROG(hp_offcpu_switch_return, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct switch_clock clk = {.prev = prev};

	switch_out(ctx, prev, preempt, true, true, true, true, &clk);
	switch_in(next, true, true, true, &clk);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(hp_offcpu_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct switch_clock clk = {.prev = prev};

	switch_out(ctx, prev, preempt, false, false, false, false, &clk);
	switch_in(next, false, false, false, &clk);
	return 0;
}

/* A thread that exits while off the CPU leaves a start record behind: drop it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(hp_offcpu_exit, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);

	bpf_map_delete_elem(&offcpu_start, &tid);
	return 0;
}

/* With task work, the thread's (cancelled if still pending); its start record, in task storage,
 * goes with the task. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(hp_offcpu_exit_return, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);

	bpf_map_delete_elem(&offcpu_return_work, &tid);
	return 0;
}

/*
 * The waits still going on, for userspace at the end of a capture: task storage has no keys to
 * list, so a task iterator visits every thread and writes, for each one off the CPU in a record,
 * a struct hp_offcpu_pending and then the record. Its lock check is settled here, the thread
 * still being in its system call.
 */
SEC("iter/task")
int hp_offcpu_pending(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct hp_offcpu_start *start;
	struct hp_offcpu_pending p = {};

	if (!task)
		return 0;
	start = bpf_task_storage_get(&offcpu_task, task, 0, 0);
	if (!start || !start->ts)
		return 0;
	if (start->lock_check)
		settle_lock_wait(start, (struct pt_regs *)bpf_task_pt_regs(task));
	/* Its stacks were not taken when it left the CPU (by chance, or asleep since before the
	 * capture): the kernel stack it sleeps in, at least. */
	if (start->unwalked && !start->stack.nr_kern) {
		long n = bpf_get_task_stack(task, start->stack.kern, sizeof(start->stack.kern), 0);

		start->stack.nr_kern = n > 0 ? n / sizeof(__u64) : 0;
	}
	p.now = run_queue_clock(bpf_get_current_task_btf());
	if (!p.now)
		p.now = bpf_ktime_get_ns();
	p.tid = task->pid;
	p.pid = task->tgid;
	BPF_CORE_READ_STR_INTO(&p.thread_name, task, comm);
	BPF_CORE_READ_STR_INTO(&p.process_name, task, group_leader, comm);
	bpf_seq_write(ctx->meta->seq, &p, sizeof(p));
	bpf_seq_write(ctx->meta->seq, start, sizeof(*start));
	return 0;
}

/*
 * The threads already asleep when the capture starts, run once by userspace after the
 * sched_switch program is attached: without a start record, such a thread's wait would not be
 * counted until it woke, and a thread asleep for the whole capture not at all. Each wanted thread
 * off the CPU (not TASK_RUNNING) and without a record yet gets one from now, marked unwalked:
 * its stacks could not be taken when it left the CPU, so it is kept only if it proves long, with
 * the kernel stack taken when it wakes (and its user stack at its return to user mode, Linux
 * 6.18), or, still asleep at the end, by hp_offcpu_pending. Writes nothing.
 */
SEC("iter/task")
int hp_offcpu_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct hp_offcpu_start *start;
	__u8 lock_check;
	__u32 state;
	__u64 now;

	if (!task || !interesting(task, task->tgid, task->pid))
		return 0;
	state = classify(task, false, task->mm != NULL, NULL, true, &lock_check);
	if (state == HP_STATE_PREEMPTED) /* running, or runnable: its switch-out is to come */
		return 0;
	start = bpf_task_storage_get(&offcpu_task, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!start) {
		bump(&losses, HP_LOSS_MAP_NO_MEMORY);
		return 0;
	}
	/* A record of its own since the program was attached: it has switched already. */
	if (start->ts || start->recent_ns)
		return 0;
	now = run_queue_clock(bpf_get_current_task_btf());
	if (!now)
		now = bpf_ktime_get_ns();
	start->state = state;
	start->lock_check = lock_check;
	start->futex_kind = HP_WAIT__COUNT;
	start->unwalked = 1;
	start->recent_ns = (__u64)-1;
	start->ts = now;
	/* Woken meanwhile, its switch-in before the line above found no wait to end: none. */
	if (classify(task, false, false, NULL, true, &lock_check) == HP_STATE_PREEMPTED)
		start->ts = 0;
	else
		bump(&stats, HP_STAT_OFFCPU_SEEDED);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(hp_offcpu_exit_raw, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);

	bpf_map_delete_elem(&offcpu_start, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

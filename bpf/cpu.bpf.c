// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPU sampling: a perf_event program on every CPU's cpu-clock. Each sample records the kernel and
 * user stacks (frame pointers, through bpf_get_stackid) and is counted in the kernel per
 * {process, thread, user stack, kernel stack}, so userspace reads one entry per distinct stack
 * instead of one event per sample.
 *
 * The counts and stacks maps come in two sets. `active_buffer` says which set BPF writes; userspace
 * flips it, waits for in-flight programs to finish, then drains and clears the other set. Samples
 * taken while userspace drains land in the new set, and the stack map is emptied at every drain,
 * so it cannot fill up over a long run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "unwind.bpf.h"
#include "thread_ctx.bpf.h"

/* Set by userspace between open and load. */
const volatile bool include_idle = false;

/* max_entries of the stacks and counts maps are set by userspace before load. */
#define COUNTS_MAP(name)                                                                           \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 65536);                                                        \
		__type(key, struct hp_sample_key);                                                 \
		__type(value, struct hp_sample_value);                                             \
	} name SEC(".maps")

HP_STACK_MAP(stacks_0);
HP_STACK_MAP(stacks_1);
HP_USTACKS_MAP(ustacks_0);
HP_USTACKS_MAP(ustacks_1);
COUNTS_MAP(counts_0);
COUNTS_MAP(counts_1);
HP_TCTX_MAP(tctx_0);
HP_TCTX_MAP(tctx_1);

/*
 * Map a bpf_get_stackid() error to a loss counter. -EFAULT means "no stack of this kind": that is
 * expected for the kernel stack of a sample taken in user mode, and for the user stack of a kernel
 * thread, and is only a loss when the caller says a stack should have been there.
 */
static __always_inline void count_stack_error(long err, bool user, bool expected)
{
	if (err == -ENOMEM)
		bump(&losses, user ? HP_LOSS_USER_STACK_MAP_FULL : HP_LOSS_KERN_STACK_MAP_FULL);
	else if (err == -EEXIST)
		bump(&losses, user ? HP_LOSS_USER_STACK_COLLISION : HP_LOSS_KERN_STACK_COLLISION);
	else if (expected)
		bump(&losses, user ? HP_LOSS_USER_STACK_MISSING : HP_LOSS_KERN_STACK_MISSING);
}

/*
 * The user registers a walk starts from: the interrupted ones when the sample hit user code, else
 * those the task saved when it entered the kernel. False when they cannot be had: a sample taken
 * in the kernel before Linux 5.15 (no bpf_task_pt_regs), whose user stack then comes from frame
 * pointers.
 */
static __always_inline bool sampled_uregs(struct bpf_perf_event_data *ctx, bool in_kernel,
					  struct hp_uregs *r)
{
	if (!in_kernel) {
		hp_uregs_from_saved((struct pt_regs *)&ctx->regs, r);
		return true;
	}
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return false;
	hp_uregs_from_saved((struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()), r);
	/* Else the compiler merges these loads with the ones from the perf event's registers
	 * above into loads from either pointer, which the verifier refuses. */
	asm volatile("" ::: "memory");
	return true;
}

/* What a sample knows before it picks a buffer set: who, where, and the walked user stack. */
struct cpu_sample {
	__u32 tgid;
	__u32 tid;
	bool has_mm;
	bool in_kernel;
	__u64 user_hash; /* != 0: walked into `walked` */
	struct hp_user_stack *walked;
	bool walk_failed; /* the tail-call walk could not start: frame pointers instead */
	__u64 thread_ctx; /* hp_thread_ctx_read()'s key, the record in tctx_scratch; 0: none */
};

/* The tail-call walk of the sample being taken on this CPU (kernels without bpf_loop). */
struct cpu_tail {
	struct hp_walk_saved walk;
	__u32 tid;
	bool has_mm;
	bool in_kernel;
	__u64 thread_ctx;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_tail);
} cpu_tail_state SEC(".maps");

/* Entry 0: hp_cpu_walk, set by userspace when it walks with tail calls. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cpu_walk_progs SEC(".maps");

static __always_inline int record(struct bpf_perf_event_data *ctx, const struct cpu_sample *smp,
				  void *stacks, void *ustacks, void *counts, void *tctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct hp_sample_key key = {.pid = smp->tgid, .tid = smp->tid};
	struct hp_sample_value *val, init = {.count = 1};
	long err;

	/* A kernel thread has no user stack; a user task always has one to read. */
	key.user_stack_id = -1;
	if (smp->walked) {
		if (hp_store_user_stack(ustacks, smp->user_hash, smp->walked,
					HP_LOSS_USER_STACK_MAP_FULL))
			key.user_stack_hash = smp->user_hash;
	} else if (smp->has_mm && (!unwind_tables || smp->walk_failed)) {
		err = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
		if (err >= 0)
			key.user_stack_id = err;
		else
			count_stack_error(err, true, true);
	}

	/* A sample taken in user mode has no kernel stack, and asking costs ~0.2 us. */
	key.kern_stack_id = -1;
	if (smp->in_kernel) {
		err = bpf_get_stackid(ctx, stacks, 0);
		if (err >= 0)
			key.kern_stack_id = err;
		else
			count_stack_error(err, false, true);
	}
	key.thread_ctx = hp_thread_ctx_store(tctx, smp->thread_ctx);

	val = bpf_map_lookup_elem(counts, &key);
	if (val) {
		__sync_fetch_and_add(&val->count, 1);
		bump(&stats, HP_STAT_SAMPLES_RECORDED);
		return 0;
	}

	bpf_get_current_comm(init.thread_name, sizeof(init.thread_name));
	BPF_CORE_READ_STR_INTO(&init.process_name, task, group_leader, comm);
	err = hp_map_update(counts, &key, &init, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* Another CPU created the entry between our lookup and update. */
		val = bpf_map_lookup_elem(counts, &key);
		if (val) {
			__sync_fetch_and_add(&val->count, 1);
			err = 0;
		}
	}
	if (err) {
		hp_count_update_error((int)err, HP_LOSS_COUNTS_MAP_FULL);
		return 0;
	}
	bump(&stats, HP_STAT_SAMPLES_RECORDED);
	return 0;
}

/*
 * The walk goes on in hp_cpu_walk, which records the sample when it is over; this returns only
 * when the tail call failed (then nothing was walked).
 */
static __always_inline void start_tail_walk(struct bpf_perf_event_data *ctx,
					    const struct cpu_sample *smp, const struct hp_uregs *r)
{
	struct hp_user_stack *stack;
	struct cpu_tail *t;
	struct hp_walk w;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&cpu_tail_state, &zero);
	stack = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!t || !stack || !r->pc)
		return;
	hp_walk_begin(&w, smp->tgid, r, stack->pcs);
	hp_walk_save(&w, &t->walk);
	t->tid = smp->tid;
	t->has_mm = smp->has_mm;
	t->in_kernel = smp->in_kernel;
	t->thread_ctx = smp->thread_ctx;
	bpf_tail_call(ctx, &cpu_walk_progs, 0);
}

/* One CPU sample. loop_walker is a constant: see hp_cpu_sample_loop. */
static __always_inline int sample(struct bpf_perf_event_data *ctx, bool loop_walker)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	struct cpu_sample smp = {.tgid = id >> 32, .tid = (__u32)id};
	__u32 buffer;

	if (smp.tid == 0 && !include_idle)
		return 0;
	if (!hp_wanted(task, smp.tgid))
		return 0;

	bump(&stats, HP_STAT_SAMPLES_SEEN);
	buffer = active_buffer;
	smp.has_mm = BPF_CORE_READ(task, mm) != NULL;
	/* Kernel text lives in the upper half of the address space on x86_64 and arm64, so the
	 * sign of the interrupted IP tells whether the sample hit kernel code. */
	smp.in_kernel = !smp.has_mm || (__s64)PT_REGS_IP(&ctx->regs) < 0;
	if (smp.has_mm)
		smp.thread_ctx = hp_thread_ctx_read(smp.tgid);
	if (smp.has_mm && unwind_tables) {
		struct hp_uregs r;

		if (!sampled_uregs(ctx, smp.in_kernel, &r)) {
			smp.walk_failed = true;
		} else if (unwind_tail_calls) {
			start_tail_walk(ctx, &smp, &r);
			/* Here only when the walk could not start. */
			smp.walk_failed = true;
		} else if (loop_walker) {
			smp.walked = hp_walk_user(smp.tgid, &r, &smp.user_hash);
		}
	}
	if (buffer == 0)
		return record(ctx, &smp, &stacks_0, &ustacks_0, &counts_0, &tctx_0);
	return record(ctx, &smp, &stacks_1, &ustacks_1, &counts_1, &tctx_1);
}

/* Frame-pointer stacks, or the first program of the tail-call walk (kernels before 5.17). */
SEC("perf_event")
int hp_cpu_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, false);
}

/*
 * The walk under bpf_loop (Linux 5.17+). It has its own program because a kernel before 5.13 cannot
 * load a program that names a bpf_loop callback at all, even on a path it never takes ("number of
 * funcs in func_info doesn't match number of subprogs"): hp_cpu_sample has none.
 */
SEC("perf_event")
int hp_cpu_sample_loop(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

/* A few frames of the walk of the sample being taken, then itself again, or the record. */
SEC("perf_event")
int hp_cpu_walk(struct bpf_perf_event_data *ctx)
{
	struct cpu_sample smp = {};
	struct hp_user_stack *stack;
	struct cpu_tail *t;
	struct hp_walk w;
	__u32 zero = 0;
	bool over;

	t = bpf_map_lookup_elem(&cpu_tail_state, &zero);
	if (!t || !hp_walk_resume(&w, &t->walk, &stack))
		return 0;
	over = hp_walk_steps(&w);
	hp_walk_save(&w, &t->walk);
	/* On, while there is depth left; a failed tail call (the chain's limit) ends it there. */
	if (!over && w.nr < unwind_depth)
		bpf_tail_call(ctx, &cpu_walk_progs, 0);
	smp.tgid = w.tgid;
	smp.tid = t->tid;
	smp.has_mm = t->has_mm;
	smp.in_kernel = t->in_kernel;
	smp.thread_ctx = t->thread_ctx;
	smp.user_hash = hp_walk_end(&w);
	stack->nr = w.nr;
	if (w.nr)
		smp.walked = stack;
	else
		bump(&losses, HP_LOSS_USER_STACK_MISSING);
	if (active_buffer == 0)
		return record(ctx, &smp, &stacks_0, &ustacks_0, &counts_0, &tctx_0);
	return record(ctx, &smp, &stacks_1, &ustacks_1, &counts_1, &tctx_1);
}

/* Exec and exit: see hp_unwind_forget(). Loaded only with the walker. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(hp_unwind_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	hp_unwind_forget(BPF_CORE_READ(p, tgid), HP_UNWIND_REQ_EXEC);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(hp_unwind_exit, struct task_struct *p)
{
	/* Once per thread: the leader's exit is the process's (exit_group). Should its other
	 * threads live on after a pthread_exit() in main, their next walk asks for a reload. */
	if (BPF_CORE_READ(p, pid) == BPF_CORE_READ(p, tgid))
		hp_unwind_forget(BPF_CORE_READ(p, tgid), HP_UNWIND_REQ_EXIT);
	return 0;
}

/*
 * A dropped process that execs is another program, which the rules judge again at its next
 * sample; one that exits leaves its PID free for another. Either way its drop_pids entry goes, so
 * that the filter holds only live processes as the rules saw them. Loaded with the drop filter.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(hp_drop_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (drop_active & HP_DROP_PIDS)
		bpf_map_delete_elem(&drop_pids, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(hp_drop_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if ((drop_active & HP_DROP_PIDS) && BPF_CORE_READ(p, pid) == tgid)
		bpf_map_delete_elem(&drop_pids, &tgid);
	return 0;
}

/* Set by userspace: `profile -- COMMAND` follows the processes the command starts. */
const volatile bool follow_children = false;

/*
 * A process that a target starts is a target too (a shell, make, a test runner). The offcpu and
 * lock objects share this object's target_pids, so one hook serves them all. Threads share
 * their process's tgid and need nothing. Loaded only when following.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(hp_follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (ctgid != ptgid && bpf_map_lookup_elem(&target_pids, &ptgid) &&
	    hp_map_update(&target_pids, &ctgid, &one, BPF_ANY))
		bump(&losses, HP_LOSS_FOLLOW_FULL);
	return 0;
}

/* A followed process that exits leaves room in target_pids for the ones alive. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(hp_follow_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (BPF_CORE_READ(p, pid) == tgid)
		bpf_map_delete_elem(&target_pids, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Lock contention: how long threads of interest wait for locks, per stack, lock kind and lock.
 *
 * Kernel locks: lock:contention_begin/contention_end, whose flags say the lock's kind.
 * User-space locks: a futex wait is where pthread_mutex_lock, std::mutex, a condition variable
 * or a semaphore blocks. The futex calls' own tracepoints (syscalls:sys_enter_futex and its
 * siblings) are used where tracefs is mounted: then no program runs for the host's other system
 * calls. Else raw_syscalls sys_enter/sys_exit (they need BTF, not tracefs), which test the call's
 * number first.
 *
 * Begin and end run in the waiter's own context: the wait is timed between them and its stacks
 * are taken at the end, into double-buffered maps like the CPU sampler's (see cpu.bpf.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "futex.bpf.h"
#include "unwind.bpf.h"
#include "thread_ctx.bpf.h"

/* include/trace/events/lock.h */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)
#define LCB_F_WRITE (1U << 2)
#define LCB_F_RT (1U << 3)
#define LCB_F_PERCPU (1U << 4)
#define LCB_F_MUTEX (1U << 5)

/* Waits shorter than this are sampled (hp_sample_wait()); 0: every wait is kept. */
const volatile __u64 sample_ns = 0;
const volatile __u64 min_wait_ns = 0;

struct wait_begin {
	__u64 ts;
	__u64 addr;
	__u32 kind;
	__u32 pad;
};

/* Per thread: the wait in progress (a thread waits for one thing at a time). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct wait_begin);
} lock_begin SEC(".maps");

#define COUNTS_MAP(name)                                                                           \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 16384);                                                        \
		__type(key, struct hp_lock_key);                                                   \
		__type(value, struct hp_lock_value);                                               \
	} name SEC(".maps")

HP_STACK_MAP(lock_stacks_0);
HP_STACK_MAP(lock_stacks_1);
HP_USTACKS_MAP(lock_ustacks_0);
HP_USTACKS_MAP(lock_ustacks_1);
COUNTS_MAP(lock_counts_0);
COUNTS_MAP(lock_counts_1);

/* The spans waiters served, read by userspace when it drains their waits (see offcpu_tctx). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct hp_thread_ctx);
} lock_tctx SEC(".maps");

static __always_inline bool interesting(__u32 *tgid, __u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();

	*tgid = id >> 32;
	*tid = (__u32)id;
	if (*tid == 0)
		return false;
	return hp_wanted((struct task_struct *)bpf_get_current_task(), *tgid);
}

static __always_inline void begin(__u32 tid, __u32 kind, __u64 addr)
{
	struct wait_begin b = {.ts = bpf_ktime_get_ns(), .addr = addr, .kind = kind};
	int err;

	/* A nested begin (a spinlock taken while waiting for a mutex) keeps the outer wait:
	 * -EEXIST. */
	err = hp_map_update(&lock_begin, &tid, &b, BPF_NOEXIST);
	if (err && err != -EEXIST)
		hp_count_update_error(err, HP_LOSS_LOCK_START_FULL);
}

static __always_inline void record(void *ctx, void *stacks, void *ustacks, void *counts, __u32 tgid,
				   __u32 tid, const struct wait_begin *b, __u64 delta, __u64 count,
				   const struct hp_user_stack *walked, __u64 hash, __u64 tctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct hp_lock_key key = {.pid = tgid, .tid = tid, .kind = b->kind, .addr = b->addr};
	struct hp_lock_value *val, init = {.ns = delta, .count = count};
	long err;

	key.thread_ctx = hp_thread_ctx_store(&lock_tctx, tctx);
	key.user_stack_id = -1;
	if (walked) {
		if (hp_store_user_stack(ustacks, hash, walked, HP_LOSS_USER_STACK_MAP_FULL))
			key.user_stack_hash = hash;
	} else if (!unwind_tables) {
		err = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
		key.user_stack_id = err >= 0 ? err : -1;
	}
	/* A futex wait's kernel stack, taken at syscall exit, is only the exit path: the user
	 * stack says who waited. A kernel lock's stack says where in the kernel. */
	key.kern_stack_id = -1;
	if (b->kind >= HP_WAIT_KERNEL_SPINLOCK) {
		err = bpf_get_stackid(ctx, stacks, 0);
		key.kern_stack_id = err >= 0 ? err : -1;
	}
	val = bpf_map_lookup_elem(counts, &key);
	if (val) {
		hp_wait_add(&val->ns, delta, count);
		return;
	}
	bpf_get_current_comm(init.thread_name, sizeof(init.thread_name));
	BPF_CORE_READ_STR_INTO(&init.process_name, task, group_leader, comm);
	hp_wait_insert(counts, &key, &init, delta, count, HP_LOSS_LOCK_COUNTS_FULL);
}

/*
 * A wait ends where it began: a syscall exit ends a futex wait, a contention_end ends the kernel
 * wait on the same lock. A kernel lock met inside a futex syscall (the hash bucket's spinlock,
 * say) neither ends nor replaces the futex wait around it.
 */
static __always_inline void end(void *ctx, bool waited, bool kernel, __u64 lock, bool loop_walker)
{
	/* Not bpf_get_current_task_btf(): that is Linux 5.11, and the programs without the walker
	 * load on 5.10. */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct hp_user_stack *walked = NULL;
	struct wait_begin *b, copy;
	__u32 tgid, tid, buffer;
	__u64 delta, hash = 0, tctx = 0, ns, count;

	if (!interesting(&tgid, &tid))
		return;
	b = bpf_map_lookup_elem(&lock_begin, &tid);
	if (!b)
		return;
	if (kernel != (b->kind >= HP_WAIT_KERNEL_SPINLOCK) || (kernel && b->addr != lock))
		return;
	copy = *b;
	bpf_map_delete_elem(&lock_begin, &tid);
	delta = bpf_ktime_get_ns() - copy.ts;
	if (!waited || delta < min_wait_ns)
		return;
	bump(&stats, HP_STAT_LOCK_EVENTS);
	/* The wait's length is known before its stack is taken: a short one is sampled. */
	if (!hp_sample_wait(delta, sample_ns, &ns, &count)) {
		bump(&stats, HP_STAT_LOCK_SKIPPED);
		return;
	}
	bump(&stats, HP_STAT_LOCK_WALKED);
	if (ns != delta)
		bump(&stats, HP_STAT_LOCK_SAMPLED);
	buffer = active_buffer;
	/* The waiter is current: the span it served while it waited. Read before the walk, which
	 * leaves the verifier too many states to explore it in. */
	if (BPF_CORE_READ(task, mm))
		tctx = hp_thread_ctx_read_apart(tgid);
	if (loop_walker && unwind_tables && BPF_CORE_READ(task, mm)) {
		struct hp_uregs r;

		/* The registers the task entered the kernel with: the futex syscall's caller. The
		 * walk comes before the choice of buffer, so that it is verified once. */
		hp_uregs_from_saved((struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()),
				    &r);
		walked = hp_walk_user(tgid, &r, &hash);
	}
	if (buffer == 0)
		record(ctx, &lock_stacks_0, &lock_ustacks_0, &lock_counts_0, tgid, tid, &copy, ns,
		       count, walked, hash, tctx);
	else
		record(ctx, &lock_stacks_1, &lock_ustacks_1, &lock_counts_1, tgid, tid, &copy, ns,
		       count, walked, hash, tctx);
}

/* A futex call begins: a wait, if its operation is one that waits. */
static __always_inline void futex_enter(long id, __u64 arg1, __u64 arg2)
{
	__u32 tgid, tid, kind;
	__u64 addr;

	if (!interesting(&tgid, &tid))
		return;
	kind = hp_futex_wait_of(id, arg1, arg2, &addr);
	if (kind < HP_WAIT__COUNT)
		begin(tid, kind, addr);
}

/*
 * The records of the syscalls:sys_enter_* and sys_exit_* events, as their format files in tracefs
 * give them. The call's number is an int, unlike raw_syscalls' long: the 4 bytes after it are
 * padding, and not zeroed.
 */
struct syscall_enter_event {
	__u64 common;
	int nr;
	__u32 pad;
	__u64 args[6];
};

struct syscall_exit_event {
	__u64 common;
	int nr;
	__u32 pad;
	long ret;
};

/*
 * The futex calls' entries and exits: attached by userspace to syscalls:sys_{enter,exit}_futex,
 * _futex_waitv and _futex_wait, those the kernel has.
 */
SEC("tracepoint")
int hp_lock_futex_enter(struct syscall_enter_event *ctx)
{
	futex_enter(ctx->nr, ctx->args[0], ctx->args[1]);
	return 0;
}

/* -EAGAIN: the futex word had changed, nothing was waited for. */
SEC("tracepoint")
int hp_lock_futex_exit(struct syscall_exit_event *ctx)
{
	end(ctx, ctx->ret != -EAGAIN, false, 0, false);
	return 0;
}

SEC("tracepoint")
int hp_lock_futex_exit_loop(struct syscall_exit_event *ctx)
{
	end(ctx, ctx->ret != -EAGAIN, false, 0, true);
	return 0;
}

/* Without tracefs: every system call of the host passes here, the cheap test first. */
SEC("tp_btf/sys_enter")
int BPF_PROG(hp_lock_sys_enter, struct pt_regs *regs, long id)
{
	if (hp_is_futex_call(id))
		futex_enter(id, hp_syscall_arg1(regs), hp_syscall_arg2(regs));
	return 0;
}

/*
 * The ends of a wait come in pairs, one of each loaded: frame-pointer user stacks, or the bpf_loop
 * walker (Linux 5.17+). The walker has its own programs because a kernel before 5.13 cannot load a
 * program that names a bpf_loop callback, even on a path it never takes.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(hp_lock_sys_exit, struct pt_regs *regs, long ret)
{
	/* Every system call's exit passes here: only a futex call's can end a wait. */
	if (hp_is_futex_call(hp_syscall_nr(regs)))
		end(ctx, ret != -EAGAIN, false, 0, false);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(hp_lock_sys_exit_loop, struct pt_regs *regs, long ret)
{
	if (hp_is_futex_call(hp_syscall_nr(regs)))
		end(ctx, ret != -EAGAIN, false, 0, true);
	return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(hp_lock_contention_begin, void *lock, unsigned int flags)
{
	__u32 tgid, tid, kind;

	if (!interesting(&tgid, &tid))
		return 0;
	if (flags & LCB_F_MUTEX)
		kind = HP_WAIT_KERNEL_MUTEX;
	else if (flags & LCB_F_RT)
		kind = HP_WAIT_KERNEL_RTMUTEX;
	else if (flags & LCB_F_PERCPU)
		kind = HP_WAIT_KERNEL_PERCPU_RWSEM;
	else if (flags & LCB_F_SPIN)
		kind = flags & LCB_F_READ    ? HP_WAIT_KERNEL_RWLOCK_READ
		       : flags & LCB_F_WRITE ? HP_WAIT_KERNEL_RWLOCK_WRITE
					     : HP_WAIT_KERNEL_SPINLOCK;
	else if (flags & LCB_F_READ)
		kind = HP_WAIT_KERNEL_RWSEM_READ;
	else if (flags & LCB_F_WRITE)
		kind = HP_WAIT_KERNEL_RWSEM_WRITE;
	else
		kind = HP_WAIT_KERNEL_OTHER;
	begin(tid, kind, (__u64)lock);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(hp_lock_contention_end, void *lock, int ret)
{
	end(ctx, true, true, (__u64)lock, false);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(hp_lock_contention_end_loop, void *lock, int ret)
{
	end(ctx, true, true, (__u64)lock, true);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

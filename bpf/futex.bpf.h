/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Futex waits as the lock programs and the off-CPU programs see them: the syscall numbers and the
 * operations that wait, classified into enum hp_wait_kind (the README explains the heuristic).
 */
#ifndef HOSTPROF_FUTEX_BPF_H
#define HOSTPROF_FUTEX_BPF_H

/* Syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h). */
#if defined(__TARGET_ARCH_x86)
#define NR_FUTEX 202
#elif defined(__TARGET_ARCH_arm64)
#define NR_FUTEX 98
#else
#error "unknown architecture"
#endif
#define NR_FUTEX_WAITV 449 /* the same number on every architecture since 5.16 */
#define NR_FUTEX_WAIT 455  /* futex2 futex_wait, 6.7+ */

/* include/uapi/linux/futex.h */
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define FUTEX_CMD_MASK 0x7f /* without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME */

/* The kind of wait a futex(2) op is; HP_WAIT__COUNT for ops that do not wait (wake, requeue). */
static __always_inline __u32 hp_futex_kind(int op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
		return HP_WAIT_FUTEX;
	case FUTEX_WAIT_BITSET:
		return HP_WAIT_FUTEX_BITSET;
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
		return HP_WAIT_FUTEX_LOCK_PI;
	case FUTEX_WAIT_REQUEUE_PI:
		return HP_WAIT_FUTEX_REQUEUE_PI;
	}
	return HP_WAIT__COUNT;
}

/*
 * The number and the first two arguments of the system call whose entry saved regs (x86_64
 * orig_ax, di, si; arm64 syscallno, orig_x0, x1). regs is a pointer the verifier knows the type
 * of (a typed tracepoint's argument, bpf_task_pt_regs()): plain loads, not probe-read calls, since
 * every system call of the host passes here.
 */
static __always_inline long hp_syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#else
	return regs->syscallno;
#endif
}

static __always_inline __u64 hp_syscall_arg1(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->di;
#else
	return regs->orig_x0;
#endif
}

static __always_inline __u64 hp_syscall_arg2(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->si;
#else
	return regs->regs[1];
#endif
}

/*
 * The wait a futex call makes (enum hp_wait_kind, HP_WAIT__COUNT for a call or op that does not
 * wait) and the futex it waits on (*addr; 0 for futex_waitv, whose futexes are in an array).
 */
static __always_inline __u32 hp_futex_wait_of(long nr, __u64 arg1, __u64 arg2, __u64 *addr)
{
	*addr = arg1;
	if (nr == NR_FUTEX)
		return hp_futex_kind((int)arg2);
	if (nr == NR_FUTEX_WAIT)
		return HP_WAIT_FUTEX2;
	*addr = 0;
	return nr == NR_FUTEX_WAITV ? HP_WAIT_FUTEX_WAITV : HP_WAIT__COUNT;
}

/* One of the calls a futex wait is made with. */
static __always_inline bool hp_is_futex_call(long nr)
{
	return nr == NR_FUTEX || nr == NR_FUTEX_WAITV || nr == NR_FUTEX_WAIT;
}

/* A futex wait of the kinds glibc's mutexes wait with (see hp_in_lock_wait()). */
static __always_inline bool hp_is_lock_kind(__u32 kind)
{
	return kind == HP_WAIT_FUTEX || kind == HP_WAIT_FUTEX_LOCK_PI;
}

/*
 * The futex wait a sleeping task is in, from the user registers its system call saved (regs, a
 * trusted pointer from bpf_task_pt_regs(); NULL: not known): as hp_futex_wait_of().
 */
static __always_inline __u32 hp_futex_wait_in(struct pt_regs *regs, __u64 *addr)
{
	*addr = 0;
	if (!regs)
		return HP_WAIT__COUNT;
	return hp_futex_wait_of(hp_syscall_nr(regs), hp_syscall_arg1(regs), hp_syscall_arg2(regs),
				addr);
}

/*
 * Is the current task, about to sleep, waiting for a user-space lock? Its saved user registers
 * (regs, from bpf_task_pt_regs(); NULL before Linux 5.15, where a mutex wait stays "sleeping") say
 * which syscall it is in (x86_64 orig_ax, arm64 syscallno; -1 outside a syscall) and with which
 * op. Only the ops glibc's mutexes wait with count (FUTEX_WAIT, FUTEX_LOCK_PI): a condition
 * variable (FUTEX_WAIT_BITSET) is waiting for work, not for a lock.
 */
static __always_inline bool hp_in_lock_wait(struct pt_regs *regs)
{
	__u64 addr;

	return hp_is_lock_kind(hp_futex_wait_in(regs, &addr));
}

#endif /* HOSTPROF_FUTEX_BPF_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by bpf/ and src/: map keys and values, limits and loss-counter indices.
 * Every struct has explicit padding and a size assertion, so the two sides can never disagree.
 */
#ifndef HOSTPROF_ABI_H
#define HOSTPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HP_COMM_LEN 16
/* The kernel's own cap for bpf_get_stackid() is sysctl kernel.perf_event_max_stack (127). */
#define HP_MAX_STACK_DEPTH 127

/* The counts and stacks maps are double-buffered: BPF writes into set `active`, userspace drains
 * the other one and clears it. Flipping the index lets a drain run without losing a sample. */
#define HP_NR_BUFFERS 2

/* Key of the in-kernel aggregation: one entry per {process, thread, user stack, kernel stack}. */
struct hp_sample_key {
	__u32 pid;	     /* tgid: the process */
	__u32 tid;	     /* the thread */
	__s32 user_stack_id; /* < 0: no user stack (kernel thread, or lost: see hp_loss) */
	__s32 kern_stack_id; /* < 0: sample taken in user mode, or lost */
};

struct hp_sample_value {
	__u64 count;
	char thread_name[HP_COMM_LEN];	/* task->comm of the thread */
	char process_name[HP_COMM_LEN]; /* task->group_leader->comm */
};

/* Why a sample was not recorded, or was recorded with less than it should have. Indices into the
 * per-CPU `losses` array. */
enum hp_loss {
	HP_LOSS_USER_STACK_MAP_FULL = 0, /* bpf_get_stackid(user) returned -ENOMEM */
	HP_LOSS_USER_STACK_COLLISION,	 /* -EEXIST: hash bucket holds another stack */
	HP_LOSS_USER_STACK_MISSING, /* -EFAULT or other: a user task whose stack could not be read
				     */
	HP_LOSS_KERN_STACK_MAP_FULL,
	HP_LOSS_KERN_STACK_COLLISION,
	HP_LOSS_KERN_STACK_MISSING,
	HP_LOSS_COUNTS_MAP_FULL, /* the aggregation map had no room: the whole sample is lost */
	HP_LOSS__COUNT,
};

/* Indices into the per-CPU `stats` array. */
enum hp_stat {
	HP_STAT_SAMPLES_SEEN = 0, /* every perf event that passed the filter */
	HP_STAT_SAMPLES_RECORDED, /* of those, added to a counts map */
	HP_STAT__COUNT,
};

_Static_assert(sizeof(struct hp_sample_key) == 16, "hp_sample_key layout");
_Static_assert(sizeof(struct hp_sample_value) == 40, "hp_sample_value layout");

#endif /* HOSTPROF_ABI_H */

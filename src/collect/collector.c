// SPDX-License-Identifier: BSD-2-Clause
#include "collect/collector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

static const char *const loss_names[HP_LOSS__COUNT] = {
	[HP_LOSS_USER_STACK_MAP_FULL] = "user stack lost: stack map full",
	[HP_LOSS_USER_STACK_COLLISION] = "user stack lost: stack map hash collision",
	[HP_LOSS_USER_STACK_MISSING] = "user stack lost: could not be read",
	[HP_LOSS_KERN_STACK_MAP_FULL] = "kernel stack lost: stack map full",
	[HP_LOSS_KERN_STACK_COLLISION] = "kernel stack lost: stack map hash collision",
	[HP_LOSS_KERN_STACK_MISSING] = "kernel stack lost: could not be read",
	[HP_LOSS_COUNTS_MAP_FULL] = "sample lost: counts map full",
	[HP_LOSS_OFFCPU_START_FULL] = "off-CPU wait lost: too many threads off CPU",
	[HP_LOSS_OFFCPU_COUNTS_FULL] = "off-CPU wait lost: counts map full",
	[HP_LOSS_OFFCPU_STACKS_FULL] = "off-CPU stack lost: stack map full",
	[HP_LOSS_LOCK_START_FULL] = "lock wait lost: too many threads waiting",
	[HP_LOSS_LOCK_COUNTS_FULL] = "lock wait lost: counts map full",
	[HP_LOSS_MAP_NO_MEMORY] = "lost: no kernel memory for a map entry",
	[HP_LOSS_MAP_UPDATE_FAILED] = "lost: a map update failed (busy or other)",
	[HP_LOSS_FOLLOW_FULL] = "child process not followed: 1024 targets",
	[HP_LOSS_THREAD_CTX_FULL] = "trace context lost: 4096 distinct ones in a second",
};

static const char *const state_names[HP_STATE__COUNT] = {
	[HP_STATE_PREEMPTED] = "preempted",
	[HP_STATE_SLEEPING] = "sleeping",
	[HP_STATE_IO] = "io",
	[HP_STATE_BLOCKED] = "blocked",
	[HP_STATE_OTHER] = "other",
	[HP_STATE_LOCK] = "lock",
};

static const char *const wait_kind_names[HP_WAIT__COUNT] = {
	[HP_WAIT_FUTEX] = "futex_wait",
	[HP_WAIT_FUTEX_BITSET] = "futex_wait_bitset",
	[HP_WAIT_FUTEX_LOCK_PI] = "futex_lock_pi",
	[HP_WAIT_FUTEX_REQUEUE_PI] = "futex_wait_requeue_pi",
	[HP_WAIT_FUTEX_WAITV] = "futex_waitv",
	[HP_WAIT_FUTEX2] = "futex2_wait",
	[HP_WAIT_KERNEL_SPINLOCK] = "spinlock",
	[HP_WAIT_KERNEL_MUTEX] = "mutex",
	[HP_WAIT_KERNEL_RWSEM_READ] = "rwsem_read",
	[HP_WAIT_KERNEL_RWSEM_WRITE] = "rwsem_write",
	[HP_WAIT_KERNEL_RWLOCK_READ] = "rwlock_read",
	[HP_WAIT_KERNEL_RWLOCK_WRITE] = "rwlock_write",
	[HP_WAIT_KERNEL_RTMUTEX] = "rtmutex",
	[HP_WAIT_KERNEL_PERCPU_RWSEM] = "percpu_rwsem",
	[HP_WAIT_KERNEL_OTHER] = "kernel_lock",
};

const char *collector__wait_kind_name(uint32_t kind)
{
	return kind < HP_WAIT__COUNT ? wait_kind_names[kind] : "unknown";
}

const char *collector__state_name(uint32_t state)
{
	return state < HP_STATE__COUNT ? state_names[state] : "other";
}

const char *collector__loss_name(enum hp_loss loss)
{
	return loss < HP_LOSS__COUNT ? loss_names[loss] : "unknown";
}

static const struct {
	const char *label, *text;
} unwind_stops[HP_UNWIND_STOP__COUNT] = {
	[HP_UNWIND_STOP_END] = {"end_of_stack", "reached the end"},
	[HP_UNWIND_STOP_NO_TABLE] = {"no_table", "no table, no frame pointer"},
	[HP_UNWIND_STOP_DEPTH] = {"depth_limit", "depth limit"},
	[HP_UNWIND_STOP_BAD_READ] = {"bad_read", "bad read"},
	[HP_UNWIND_STOP_UNSUPPORTED] = {"unsupported_rule", "unsupported rule"},
	[HP_UNWIND_STOP_NO_PROCESS] = {"process_not_loaded", "process not loaded yet"},
};

const char *collector__unwind_stop_text(enum hp_unwind_stop stop)
{
	return stop < HP_UNWIND_STOP__COUNT ? unwind_stops[stop].text : "unknown";
}

const char *collector__unwind_stop_label(enum hp_unwind_stop stop)
{
	return stop < HP_UNWIND_STOP__COUNT ? unwind_stops[stop].label : "unknown";
}

void sample_batch__reset(struct sample_batch *b)
{
	b->n = 0;
	b->nr_ips = 0;
	b->nr_tctx = 0;
}

pid_t sample_batch__next_pid(const struct sample_batch *b, size_t *at)
{
	while (b && *at < b->n) {
		pid_t pid = (pid_t)b->v[*at].pid;

		/* Past this process's run of samples. */
		while (*at < b->n && (pid_t)b->v[*at].pid == pid)
			(*at)++;
		if (pid > 0)
			return pid;
	}
	return 0;
}

void sample_batch__release(struct sample_batch *b)
{
	free(b->v);
	free(b->ips);
	free(b->tctx);
	memset(b, 0, sizeof(*b));
}

int sample_batch__add(struct sample_batch *b, const struct raw_sample *s, const uint64_t *user,
		      const uint64_t *kern)
{
	struct raw_sample *dst;

	if (VEC_RESERVE(b->v, b->cap, b->n + 1) ||
	    VEC_RESERVE_MORE(b->ips, b->cap_ips, b->nr_ips, (size_t)s->nr_user + s->nr_kern))
		return -ENOMEM;
	dst = &b->v[b->n++];
	*dst = *s;
	dst->user_off = b->nr_ips;
	/* An empty stack may come as NULL, which memcpy must not be handed even for 0 bytes. */
	if (s->nr_user)
		memcpy(b->ips + b->nr_ips, user, s->nr_user * sizeof(*user));
	b->nr_ips += s->nr_user;
	dst->kern_off = b->nr_ips;
	if (s->nr_kern)
		memcpy(b->ips + b->nr_ips, kern, s->nr_kern * sizeof(*kern));
	b->nr_ips += s->nr_kern;
	return 0;
}

struct drain_ctx {
	struct sample_batch *batch;
	struct sample_batch *offcpu;
	struct sample_batch *lock;
	struct collector_stats *stats;
};

/* The kernel's comm fields, NUL-terminated whatever the map held. */
static void copy_names(struct raw_sample *s, const char thread[HP_COMM_LEN],
		       const char process[HP_COMM_LEN])
{
	memcpy(s->thread_name, thread, sizeof(s->thread_name));
	memcpy(s->process_name, process, sizeof(s->process_name));
	s->thread_name[HP_COMM_LEN - 1] = '\0';
	s->process_name[HP_COMM_LEN - 1] = '\0';
}

/* A sample's thread context record, kept in its batch; 0 or -ENOMEM. */
static int keep_thread_ctx(struct sample_batch *b, const struct hp_thread_ctx *rec,
			   struct raw_sample *s)
{
	if (!rec)
		return 0;
	if (VEC_RESERVE(b->tctx, b->cap_tctx, b->nr_tctx + 1))
		return -ENOMEM;
	b->tctx[b->nr_tctx++] = *rec;
	s->thread_ctx = (uint32_t)b->nr_tctx;
	return 0;
}

/* The stack of a sample that has none: not NULL, which memcpy must not be handed. */
static const uint64_t no_ips[1];

/*
 * A futex wait the sched_switch program timed (struct hp_offcpu_key futex_kind), for the
 * contention profile: the off-CPU sample (its time, weight and user stack) with its span, and no
 * kernel stack, as the futex calls' programs record it (the kernel part is only the wait's own
 * path).
 */
static int futex_wait_from_switch(struct drain_ctx *dc, const struct drained_offcpu *e,
				  const struct raw_sample *offcpu, const uint64_t *user)
{
	struct raw_sample s = *offcpu;

	s.state = 0;
	s.wait_kind = e->key->futex_kind;
	s.wait_addr = e->key->futex_addr;
	s.nr_kern = 0;
	s.thread_ctx = 0;
	if (keep_thread_ctx(dc->lock, e->thread_ctx, &s))
		return -ENOMEM;
	dc->stats->lock_switch_waits += s.count;
	return sample_batch__add(dc->lock, &s, user, no_ips);
}

static int on_offcpu(const struct drained_offcpu *e, void *ctx)
{
	struct drain_ctx *dc = ctx;
	/* __u64 and uint64_t are both 64-bit unsigned, spelled differently by the headers. */
	const uint64_t *user = e->stack ? (const uint64_t *)e->stack->user : no_ips;
	const uint64_t *kern = e->stack ? (const uint64_t *)e->stack->kern : no_ips;
	struct raw_sample s = {
		.pid = e->key->pid,
		.tid = e->key->tid,
		.count = e->value->count,
		.ns = e->value->ns,
		.state = e->key->state,
	};

	copy_names(&s, e->value->thread_name, e->value->process_name);
	if (e->stack) {
		s.nr_user = e->stack->nr_user < HP_OFFCPU_USER_DEPTH ? e->stack->nr_user
								     : HP_OFFCPU_USER_DEPTH;
		s.nr_kern = e->stack->nr_kern < HP_OFFCPU_KERN_DEPTH ? e->stack->nr_kern
								     : HP_OFFCPU_KERN_DEPTH;
	}
	if (dc->lock && e->key->futex_kind < HP_WAIT__COUNT) {
		int err = futex_wait_from_switch(dc, e, &s, user);

		if (err)
			return err;
	}
	if (keep_thread_ctx(dc->offcpu, e->thread_ctx, &s))
		return -ENOMEM;
	return sample_batch__add(dc->offcpu, &s, user, kern);
}

static int on_lock(const struct drained_lock *e, void *ctx)
{
	struct drain_ctx *dc = ctx;
	struct raw_sample s = {
		.pid = e->key->pid,
		.tid = e->key->tid,
		.count = e->value->count,
		.ns = e->value->ns,
		.wait_kind = e->key->kind,
		.wait_addr = e->key->addr,
		.nr_user = e->nr_user,
		.nr_kern = e->nr_kern,
	};

	copy_names(&s, e->value->thread_name, e->value->process_name);
	if (keep_thread_ctx(dc->lock, e->thread_ctx, &s))
		return -ENOMEM;
	return sample_batch__add(dc->lock, &s, e->user_ips, e->kern_ips);
}

int collector__drain_pending_offcpu(struct bpf_session *session, struct sample_batch *offcpu,
				    struct collector_stats *stats)
{
	struct drain_ctx dc = {.offcpu = offcpu, .stats = stats};

	sample_batch__reset(offcpu);
	return bpf_session__drain_pending_offcpu(session, on_offcpu, &dc);
}

static int on_entry(const struct drained_entry *e, void *ctx)
{
	struct drain_ctx *dc = ctx;
	struct raw_sample s = {
		.pid = e->key->pid,
		.tid = e->key->tid,
		.count = e->value->count,
		.nr_user = e->nr_user,
		.nr_kern = e->nr_kern,
	};

	copy_names(&s, e->value->thread_name, e->value->process_name);
	/* A stack id whose trace is gone was overwritten or cleared under us: the sample is kept
	 * with what remains, and counted like a stack that could not be read. */
	if (e->user_stack_gone)
		dc->stats->losses[HP_LOSS_USER_STACK_MISSING] += s.count;
	if (e->kern_stack_gone)
		dc->stats->losses[HP_LOSS_KERN_STACK_MISSING] += s.count;
	dc->stats->samples_drained += s.count;
	if (keep_thread_ctx(dc->batch, e->thread_ctx, &s))
		return -ENOMEM;
	return sample_batch__add(dc->batch, &s, e->user_ips, e->kern_ips);
}

int collector__drain(struct bpf_session *session, struct sample_batch *b,
		     struct sample_batch *offcpu, struct sample_batch *lock,
		     struct collector_stats *stats)
{
	uint64_t kernel_losses[HP_LOSS__COUNT], kernel_stats[HP_STAT__COUNT];
	struct drain_ctx dc = {.batch = b, .offcpu = offcpu, .lock = lock, .stats = stats};
	struct drain_fns fns = {
		.cpu = on_entry,
		.offcpu = offcpu ? on_offcpu : NULL,
		.lock = lock ? on_lock : NULL,
	};
	uint64_t userspace_losses[HP_LOSS__COUNT];
	int n, err;

	/* stats->losses holds the kernel's totals plus what userspace found itself; keep the
	 * userspace part aside while the kernel totals are refreshed. */
	sample_batch__reset(b);
	if (offcpu)
		sample_batch__reset(offcpu);
	if (lock)
		sample_batch__reset(lock);
	n = bpf_session__drain(session, &fns, &dc);
	if (n < 0)
		return n;
	stats->drains++;
	err = bpf_session__read_counters(session, kernel_losses, kernel_stats);
	if (err)
		return err;
	for (int i = 0; i < HP_LOSS__COUNT; i++) {
		userspace_losses[i] = stats->losses[i] - stats->kernel_losses[i];
		stats->kernel_losses[i] = kernel_losses[i];
		stats->losses[i] = kernel_losses[i] + userspace_losses[i];
	}
	stats->offcpu_events = kernel_stats[HP_STAT_OFFCPU_EVENTS];
	stats->lock_events = kernel_stats[HP_STAT_LOCK_EVENTS] + stats->lock_switch_waits;
	stats->waits_walked[0] = kernel_stats[HP_STAT_OFFCPU_WALKED];
	stats->waits_sampled[0] = kernel_stats[HP_STAT_OFFCPU_SAMPLED];
	stats->waits_skipped[0] = kernel_stats[HP_STAT_OFFCPU_SKIPPED];
	stats->offcpu_unwalked_long = kernel_stats[HP_STAT_OFFCPU_UNWALKED_LONG];
	stats->offcpu_walked_at_return = kernel_stats[HP_STAT_OFFCPU_WALKED_AT_RETURN];
	stats->waits_walked[1] = kernel_stats[HP_STAT_LOCK_WALKED];
	stats->waits_sampled[1] = kernel_stats[HP_STAT_LOCK_SAMPLED];
	stats->waits_skipped[1] = kernel_stats[HP_STAT_LOCK_SKIPPED];
	stats->samples_seen = kernel_stats[HP_STAT_SAMPLES_SEEN];
	stats->filter_dropped = kernel_stats[HP_STAT_FILTER_DROPPED];
	stats->offcpu_seeded = kernel_stats[HP_STAT_OFFCPU_SEEDED];
	stats->samples_recorded = kernel_stats[HP_STAT_SAMPLES_RECORDED];
	return n;
}

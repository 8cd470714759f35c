/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Turns the drained BPF maps into a sample batch (pid, tid, names, user and kernel addresses,
 * count), and keeps the counts of what could not be recorded.
 */
#ifndef HOSTPROF_COLLECTOR_H
#define HOSTPROF_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "collect/bpf_session.h"
#include "hostprof_abi.h"

struct raw_sample {
	uint32_t pid;
	uint32_t tid;
	char thread_name[HP_COMM_LEN];
	char process_name[HP_COMM_LEN];
	uint64_t count;	    /* cpu: samples; off-CPU: switch-outs */
	uint64_t ns;	    /* off-CPU: the time away; 0 for cpu samples */
	uint32_t state;	    /* off-CPU: enum hp_thread_state */
	uint32_t wait_kind; /* lock waits: enum hp_wait_kind */
	uint64_t wait_addr; /* lock waits: the futex's or the kernel lock's address */
	uint32_t nr_user;   /* user addresses, leaf first, at batch->ips[user_off] */
	uint32_t nr_kern;   /* kernel addresses, leaf first, at batch->ips[kern_off] */
	size_t user_off;
	size_t kern_off;
	uint32_t thread_ctx; /* its OpenTelemetry thread context: batch->tctx[thread_ctx - 1]; 0:
				none */
};

/* Samples of one drain. Reused from drain to drain: memory grows to the largest drain only. */
struct sample_batch {
	struct raw_sample *v;
	size_t n, cap;
	uint64_t *ips;
	size_t nr_ips, cap_ips;
	struct hp_thread_ctx *tctx; /* thread context records, as BPF read them */
	size_t nr_tctx, cap_tctx;
};

struct collector_stats {
	uint64_t samples_seen;			/* perf events that passed the kernel filter */
	uint64_t samples_recorded;		/* of those, aggregated in a counts map */
	uint64_t samples_drained;		/* sum of the counts read from the maps */
	uint64_t losses[HP_LOSS__COUNT];	/* kernel counters + what userspace found */
	uint64_t kernel_losses[HP_LOSS__COUNT]; /* the kernel's part, last read */
	uint64_t offcpu_events;			/* off-CPU waits that ended while the program ran */
	uint64_t lock_events;			/* lock waits that ended while the programs ran */
	/* Of those, futex waits timed by the sched_switch program (weighted, as kept). */
	uint64_t lock_switch_waits;
	/* Of those: stacks taken, of which for sampled short waits, and short waits not kept
	 * (enum hp_stat); [0] off-CPU, [1] lock. */
	uint64_t waits_walked[2], waits_sampled[2], waits_skipped[2];
	/* Off-CPU waits that proved long after their switch-out's walk was left out by chance: kept
	 * with their kernel stack only (HP_STAT_OFFCPU_UNWALKED_LONG). */
	uint64_t offcpu_unwalked_long;
	/* The same waits walked when their thread returned to user mode instead, with their user
	 * stack (HP_STAT_OFFCPU_WALKED_AT_RETURN; Linux 6.18); counted in waits_walked[0] too. */
	uint64_t offcpu_walked_at_return;
	uint64_t filter_dropped; /* events of processes in the drop filter, skipped at once */
	/* Threads already off the CPU at the start, their waits counted from then
	 * (HP_STAT_OFFCPU_SEEDED). */
	uint64_t offcpu_seeded;
	uint64_t drains;
};

void sample_batch__reset(struct sample_batch *b);
void sample_batch__release(struct sample_batch *b);
/* The processes of a batch, one at a time: the PID of the next run of samples from *at on (a
 * process's samples come together), or 0 at the end. Start with *at = 0. */
pid_t sample_batch__next_pid(const struct sample_batch *b, size_t *at);
/* Append one sample, copying its stacks. 0 or -ENOMEM. */
int sample_batch__add(struct sample_batch *b, const struct raw_sample *s, const uint64_t *user,
		      const uint64_t *kern);

/* Drain the session into b (which is reset first) and update stats. Returns entries or -errno. */
int collector__drain(struct bpf_session *session, struct sample_batch *b,
		     struct sample_batch *offcpu, struct sample_batch *lock,
		     struct collector_stats *stats);
/* After the sampler is detached: threads still off the CPU, their time counted up to now. */
int collector__drain_pending_offcpu(struct bpf_session *session, struct sample_batch *offcpu,
				    struct collector_stats *stats);
/* "sleeping", "io", ... for the thread.state label. */
const char *collector__state_name(uint32_t state);
/* "futex_wait", "mutex", ... for the lock-wait label. */
const char *collector__wait_kind_name(uint32_t kind);

/* A short name for a loss counter, for summaries ("user stack map full", ...). */
const char *collector__loss_name(enum hp_loss loss);

/* Why a user stack walk ended (enum hp_unwind_stop): words for a person ("reached the end") and
 * a metric label ("end_of_stack"). One table, so the summary and /metrics name the same thing. */
const char *collector__unwind_stop_text(enum hp_unwind_stop stop);
const char *collector__unwind_stop_label(enum hp_unwind_stop stop);

#endif /* HOSTPROF_COLLECTOR_H */

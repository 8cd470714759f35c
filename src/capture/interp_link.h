/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Processes that run an interpreter BPF walks (interp/interp.h), told to the walker: each process
 * is looked at when it is first known (a target, one the sampler met, an exec), and again after a
 * drain while it is not settled (an interpreter not initialised yet, a library loaded later).
 * Releases that are not walked are said once per process, and listed for the summary.
 */
#ifndef HOSTPROF_INTERP_LINK_H
#define HOSTPROF_INTERP_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_session;
struct interp;
struct sample_batch;
struct interp_link;

/* What the summary lists: processes whose interpreter is not walked, and why. */
#define INTERP_LINK_NOTES 8

struct interp_link_stats {
	uint64_t walked; /* processes whose interpreter frames BPF walks now */
	uint64_t
		not_walked; /* processes with an interpreter that is not walked (release, kernel) */
	size_t nr_notes;
	char notes[INTERP_LINK_NOTES][256]; /* "Python 3.9 in PID 1234: frames not walked (...)" */
};

/* NULL with errno set; session and ip are borrowed. */
struct interp_link *interp_link__new(struct bpf_session *session, struct interp *ip);
void interp_link__delete(struct interp_link *l);
/* A process is known (first sample, target, exec: force set then). */
void interp_link__add(struct interp_link *l, pid_t pid, bool force);
/* After a drain: the processes of these samples not settled yet are looked at again. */
void interp_link__scan(struct interp_link *l, const struct sample_batch *batch);
/* pid exec'd or exited (BPF dropped its record already): forget it until it is known again. */
void interp_link__forget(struct interp_link *l, pid_t pid);
void interp_link__stats(const struct interp_link *l, struct interp_link_stats *out);

#endif /* HOSTPROF_INTERP_LINK_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Snapshots of processes taken the moment the kernel first samples them, on a thread of their
 * own. A process that lives 50 ms is gone long before the next drain, and the capture loop may be
 * busy for longer than that (a drain, a big binary's unwind tables); its samples can only be
 * symbolized from what was read while it lived. So this thread reads its maps, name and identity
 * (proc_table__read()) and opens its binaries (an open fd keeps a file readable after the process
 * and its /proc entries are gone), and queues all of it for the capture loop, which hands it to
 * the symbolizer (symbolizer__adopt()).
 *
 * The events come from the walker's ring buffer (struct hp_proc_event): one per process sampled
 * for the first time since its exec, and one per exec. Without the walker there are none, and
 * processes are read when their samples are drained, as before.
 */
#ifndef HOSTPROF_PROC_WATCH_H
#define HOSTPROF_PROC_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostprof_abi.h"
#include "process/proc.h"

/* At most this many binaries are opened per process: the executable mappings of most programs
 * are a handful; the rest are read through /proc while the process lives, as without a watch. */
#define PROC_WATCH_MAX_BINARIES 32

struct proc_watch_binary {
	int fd; /* open on the mapped file; the taker closes it */
	uint64_t dev, inode;
	char *path; /* the path in the process's maps */
};

/* One process as read by the thread, or (forget) the news that its old snapshot is stale. */
struct proc_watch_item {
	pid_t pid;
	bool forget; /* it exec'd: drop what was known of it; nothing else is set */
	struct proc proc;
	size_t nr_binaries;
	struct proc_watch_binary binaries[PROC_WATCH_MAX_BINARIES];
};

struct proc_watch_stats {
	uint64_t events;  /* records read from the ring buffer */
	uint64_t read;	  /* processes snapshotted */
	uint64_t missed;  /* gone before they could be read */
	uint64_t dropped; /* read, but the queue was full (the capture loop was behind) */
	size_t queued;	  /* waiting now */
};

struct proc_watch;

/*
 * Start the thread on the ring buffer events_fd (bpf_session__proc_events_fd()); with events_fd
 * < 0, no thread: events come through proc_watch__handle() (the unit tests). proc_root is /proc
 * (or a fixture). max_queue bounds the items waiting for proc_watch__take(). Returns NULL and
 * sets errno.
 */
struct proc_watch *proc_watch__new(int events_fd, const char *proc_root, size_t max_queue);
/* What the thread does with one event: read the process (at most twice per exec), or queue the
 * news of an exec. Only from the thread, or without one. */
void proc_watch__handle(struct proc_watch *w, const struct hp_proc_event *ev);
/* Stop the thread and release what was not taken (closing its fds). NULL is a no-op. */
void proc_watch__delete(struct proc_watch *w);

/*
 * Move up to max waiting items, oldest first, to out. The caller owns them: it releases each
 * with proc_watch_item__release() (after taking what it wants from it). Returns how many.
 */
size_t proc_watch__take(struct proc_watch *w, struct proc_watch_item *out, size_t max);
void proc_watch_item__release(struct proc_watch_item *it);

void proc_watch__stats(struct proc_watch *w, struct proc_watch_stats *out);
/*
 * How many processes the walker announced (first samples since their exec) so far: each comes
 * with a table request, which the capture loop takes at once when this moved, and otherwise
 * only now and then. Lock-free; 0 for NULL.
 */
uint64_t proc_watch__announced(const struct proc_watch *w);

#endif /* HOSTPROF_PROC_WATCH_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The capture pipeline, for any run mode: the BPF session, the collector, the symbolizer and one
 * builder and profile per profile type (cpu, wall, off-CPU, contention). The caller decides when
 * to drain and when to stop; the profiles it gets back are ready for the encoders.
 */
#ifndef HOSTPROF_CAPTURE_H
#define HOSTPROF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/collector.h"
#include "model/config.h"
#include "symbols/debuginfod_fetch.h"
#include "model/profile.h"
#include "symbols/symbolize.h"
#include "unwind/unwind_loader.h"

#define CAPTURE_MAX_TYPES 4

struct capture;
struct thread_ctx_link_stats;

/* Open and load the BPF programs the config's types need, and make the profiles. The window
 * starts now. NULL + errno; the reason has been logged. */
struct capture *capture__new(const struct config *c);
void capture__delete(struct capture *cap);

/* Add a process (all its threads) to the kernel filter. 0 or -errno. */
int capture__add_pid(struct capture *cap, pid_t pid);
/*
 * Snapshot a process's maps now, so that its frames resolve even after it exits, and load the
 * unwind tables of its binaries, so that its first samples unwind fully. Call it once the process
 * runs the program to be profiled (after its exec).
 */
int capture__track(struct capture *cap, pid_t pid);
/* Attach: sampling starts. 0 or -errno. */
int capture__start(struct capture *cap);
/*
 * Between drains, as often as the caller's loop turns (every 50 ms or so): hand the processes
 * that the watcher read to the symbolizer, and load the unwind tables that the kernel's walks
 * asked for, so that a new process, an exec or a dlopen costs at most one tick of truncated
 * stacks.
 */
void capture__tick(struct capture *cap);
/* Move what the kernel aggregated since the last drain into the profiles. 0 or -errno. */
int capture__drain(struct capture *cap);
/*
 * Stop sampling, drain what is left, and count the threads still off the CPU up to now. Then
 * the summary's "samples = recorded + lost" adds up exactly. With wait_debug_info, the debug
 * files still being fetched from debuginfod are waited for first (at most the fetch timeout), so
 * that a short capture gets their lines; an agent never waits. 0 or -errno.
 */
int capture__finish(struct capture *cap, uint64_t duration_ns, bool wait_debug_info);

struct identity;
/* Name processes with the agent's identity rules from now on (borrowed; see builder.h). */
void capture__set_identity(struct capture *cap, struct identity *id);
/*
 * End the window (the agent's upload interval): drain, stamp the profiles with the window's
 * start and length, hand them to the caller (*n of them, in type order; the caller frees them
 * with profile__delete()), and start empty profiles for the next window. 0 or -errno; the
 * profiles handed out hold what was collected either way.
 */
int capture__rotate(struct capture *cap, struct profile **out, size_t *n);
/* The location caches' hits and misses (a miss symbolizes the address), since the start. */
void capture__location_cache(const struct capture *cap, uint64_t *hits, uint64_t *misses);
/* What of a process's command line its entry keeps from now on (the config's at the start). */
void capture__set_cmdline_mode(struct capture *cap, enum cmdline_mode mode);
/* Samples that identity rules left out, since the start. */
uint64_t capture__samples_left_out(const struct capture *cap);
/* What the kernel's drop filter was given (capture/drop_filter.h; all zero without it); the
 * events it skipped are capture__stats()'s filter_dropped. */
struct drop_filter_stats;
void capture__drop_stats(const struct capture *cap, struct drop_filter_stats *out);

/* The profiles made, in type order (cpu, wall, off_cpu, contention); returns how many. */
size_t capture__profiles(const struct capture *cap, const struct profile **out);
/* The profile of one type (PROFILE_TYPE_* bit), or NULL when it is not being made. */
const struct profile *capture__profile(const struct capture *cap, unsigned int type);
const struct collector_stats *capture__stats(const struct capture *cap);
/* The caches' sizes, bounds and memory (hostprof profile --stats, the agent's /metrics). */
struct capture_memory {
	struct symbolizer_stats sym;			 /* processes, binaries, DWARF, JIT maps */
	size_t locations, locations_max, location_bytes; /* the builders' location caches */
	size_t unwind_binaries;				 /* with tables loaded */
	uint64_t unwind_rows, unwind_rows_max;		 /* 16 bytes each, in BPF memory */
	size_t watch_queued, watch_bytes;		 /* processes read, waiting for the loop */
};
void capture__memory(const struct capture *cap, struct capture_memory *out);
/* What the process watcher did (all zero without it). */
void capture__watch_stats(const struct capture *cap, struct proc_watch_stats *out);
void capture__symbolizer_stats(const struct capture *cap, struct symbolizer_stats *out);
/* How user stacks were walked: why walks ended, and the unwind tables loaded. */
struct unwind_report {
	uint64_t stops[HP_UNWIND_STOP__COUNT]; /* enum hp_unwind_stop */
	struct unwind_loader_stats tables;
};
/* false when user stacks come from frame pointers only (--unwind fp, or no bpf_loop). */
bool capture__unwind_report(struct capture *cap, struct unwind_report *out);
/* The debug files fetched from debuginfod; false when it is off (DEBUGINFOD_URLS unset). */
bool capture__debuginfod_stats(const struct capture *cap, struct debuginfod_fetch_stats *out);
struct interp_link_stats;
struct interp_stats;
/* Which processes' interpreter frames BPF walks (interp_link.h), and what naming them cost
 * (interp/interp.h). */
void capture__interp_stats(const struct capture *cap, struct interp_link_stats *link,
			   struct interp_stats *names);

/* How many processes' OpenTelemetry thread contexts the sampler reads (thread_ctx_link.h). */
void capture__thread_ctx_stats(const struct capture *cap, struct thread_ctx_link_stats *out);
/* CPUs the sampler is (or was) attached to. */
int capture__nr_cpus(const struct capture *cap);
/* Processes recorded so far (in the first profile). */
size_t capture__nr_processes(const struct capture *cap);

#endif /* HOSTPROF_CAPTURE_H */

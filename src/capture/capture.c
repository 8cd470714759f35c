// SPDX-License-Identifier: BSD-2-Clause
#include "capture/capture.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/bpf_session.h"
#include "capture/builder.h"
#include "capture/drop_filter.h"
#include "capture/thread_ctx_link.h"
#include "capture/interp_link.h"
#include "interp/interp.h"
#include "base/clock.h"
#include "process/identity.h"
#include "base/log.h"
#include "unwind/unwind_loader.h"

#define NSEC_PER_SEC 1000000000ULL
/* A tick spends about this long at most loading the unwind tables that walks asked for. */
#define UNWIND_LOAD_BUDGET_NS (100 * 1000 * 1000ULL)
/* Processes that have exited are let go of this often. */
#define UNWIND_SWEEP_NS (5 * NSEC_PER_SEC)
/* Processes read by the watcher, waiting for the capture loop (see proc_watch.h). */
#define WATCH_QUEUE 256
/*
 * Without news from the watcher, requests are taken this often instead of at every tick: execs
 * and exits of processes never sampled are most of them, and there is no hurry to forget those.
 * A new process announced by the watcher (its first sample) has its request taken at the next
 * tick, and so do those of every process while loads are queued.
 */
#define TAKE_IDLE_NS (250 * 1000 * 1000ULL)
/* Table loads waiting for a tick with time left. */
#define CAPTURE_LOAD_QUEUE 256

enum slot { SLOT_CPU, SLOT_WALL, SLOT_OFFCPU, SLOT_CONTENTION, NR_SLOTS };

_Static_assert(NR_SLOTS == CAPTURE_MAX_TYPES, "capture__profiles() fills CAPTURE_MAX_TYPES");

static const unsigned int slot_type[NR_SLOTS] = {PROFILE_TYPE_CPU, PROFILE_TYPE_WALL,
						 PROFILE_TYPE_OFFCPU, PROFILE_TYPE_CONTENTION};

struct capture {
	const struct config *cfg;
	struct bpf_session *session;
	struct symbolizer *sym;
	/* One profile and builder per type (indexed by enum slot), NULL when not asked for. */
	struct profile *profiles[NR_SLOTS];
	struct builder *builders[NR_SLOTS];
	struct sample_batch batch;
	struct sample_batch offcpu_batch;
	struct sample_batch lock_batch;
	struct collector_stats stats;
	int64_t period_ns;
	struct unwind_loader *unwinder;	 /* NULL: frame-pointer stacks only */
	struct thread_ctx_link *tctx;	 /* which processes' thread contexts BPF reads */
	struct interp *interp;		 /* interpreters whose frames BPF walks, and their names */
	struct interp_link *interps;	 /* which processes BPF walks them in */
	struct debuginfod_fetch *fetch;	 /* NULL: no DEBUGINFOD_URLS */
	uint64_t swept_ns;		 /* when exited processes were last let go */
	uint64_t taken_ns;		 /* when requests were last taken */
	uint64_t announced;		 /* proc_watch__announced() then */
	struct proc_watch *watch;	 /* NULL without the walker's process events */
	pid_t loads[CAPTURE_LOAD_QUEUE]; /* processes whose tables are to be loaded, in order */
	size_t nr_loads;
	struct identity *identity;	/* borrowed; NULL: the plain service name rules */
	struct drop_filter *drops;	/* the processes rules drop, in the kernel; NULL: none */
	enum cmdline_mode cmdline_mode; /* process.command_line; a reload may change it */
	uint64_t window_start_mono;	/* CLOCK_MONOTONIC at the start of the window */
	uint64_t samples_left_out;	/* by identity rules, in windows already handed out */
	uint64_t samples_unlinked;	/* past the link cap, in windows already handed out */
	uint64_t loc_hits, loc_misses;	/* location caches of the windows already handed out */
};

static bool wants_offcpu(const struct capture *cap)
{
	return cap->profiles[SLOT_WALL] || cap->profiles[SLOT_OFFCPU];
}

/* Each batch goes to every profile made of it: cpu samples to cpu and wall, waits to off-CPU
 * and wall. */
static int add_batches(struct capture *cap, const struct sample_batch *cpu,
		       const struct sample_batch *offcpu)
{
	int err = 0;

	if (cpu && cap->builders[SLOT_CPU])
		err = builder__add_batch(cap->builders[SLOT_CPU], cpu, BATCH_CPU, cap->period_ns);
	if (!err && cpu && cap->builders[SLOT_WALL])
		err = builder__add_batch(cap->builders[SLOT_WALL], cpu, BATCH_CPU_IN_WALL,
					 cap->period_ns);
	if (!err && offcpu && cap->builders[SLOT_OFFCPU])
		err = builder__add_batch(cap->builders[SLOT_OFFCPU], offcpu, BATCH_OFFCPU, 0);
	if (!err && offcpu && cap->builders[SLOT_WALL])
		err = builder__add_batch(cap->builders[SLOT_WALL], offcpu, BATCH_OFFCPU, 0);
	if (err)
		log_error("adding samples to the profile failed: %s", strerror(-err));
	return err;
}

static int make_profiles(struct capture *cap)
{
	const struct config *c = cap->cfg;
	/* Off-CPU values are times; its period is one context switch, as OTLP's example has it. */
	const struct profile_desc descs[NR_SLOTS] = {
		[SLOT_CPU] = {"cpu", "nanoseconds", "cpu", "nanoseconds", cap->period_ns},
		[SLOT_WALL] = {"wall", "nanoseconds", "wall", "nanoseconds", cap->period_ns},
		[SLOT_OFFCPU] = {"off_cpu", "nanoseconds", "context_switch", "count", 1},
		[SLOT_CONTENTION] = {"contention", "nanoseconds", "contentions", "count", 1},
	};
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	cap->window_start_mono = clock__ns(CLOCK_MONOTONIC);
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		struct profile_desc desc = descs[slot];

		if (!(c->types & slot_type[slot]))
			continue;
		desc.time_nanos = (uint64_t)now.tv_sec * NSEC_PER_SEC + now.tv_nsec;
		cap->profiles[slot] = profile__new(&desc);
		if (!cap->profiles[slot])
			return -ENOMEM;
		cap->builders[slot] =
			builder__new(cap->profiles[slot], cap->sym, c->max_cached_locations);
		if (!cap->builders[slot])
			return -ENOMEM;
		builder__set_identity(cap->builders[slot], cap->identity);
		if (cap->drops)
			builder__set_drop_hook(cap->builders[slot], drop_filter__add, cap->drops);
		builder__set_cmdline_mode(cap->builders[slot], cap->cmdline_mode);
		builder__set_interp(cap->builders[slot], cap->interp);
	}
	return 0;
}

void capture__set_identity(struct capture *cap, struct identity *id)
{
	if (!cap)
		return;
	cap->identity = id;
	/* New rules judge every process again, at its next sample. */
	drop_filter__clear(cap->drops);
	for (int slot = 0; slot < NR_SLOTS; slot++)
		if (cap->builders[slot])
			builder__set_identity(cap->builders[slot], id);
}

void capture__set_cmdline_mode(struct capture *cap, enum cmdline_mode mode)
{
	if (!cap)
		return;
	cap->cmdline_mode = mode;
	for (int slot = 0; slot < NR_SLOTS; slot++)
		if (cap->builders[slot])
			builder__set_cmdline_mode(cap->builders[slot], mode);
}

uint64_t capture__samples_left_out(const struct capture *cap)
{
	uint64_t n = cap->samples_left_out;

	/* cpu samples reach both the cpu and the wall builders: count one of them. */
	if (cap->builders[SLOT_CPU])
		n += builder__samples_dropped(cap->builders[SLOT_CPU]);
	else if (cap->builders[SLOT_WALL])
		n += builder__samples_dropped(cap->builders[SLOT_WALL]);
	return n;
}

void capture__memory(const struct capture *cap, struct capture_memory *out)
{
	struct unwind_loader_stats us;
	struct proc_watch_stats ws;

	memset(out, 0, sizeof(*out));
	symbolizer__stats(cap->sym, &out->sym);
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		size_t entries, capacity;

		if (!cap->builders[slot])
			continue;
		out->location_bytes +=
			builder__cache_memory(cap->builders[slot], &entries, &capacity);
		out->locations += entries;
		out->locations_max += capacity;
	}
	if (cap->unwinder) {
		unwind_loader__stats(cap->unwinder, &us);
		out->unwind_binaries = us.binaries;
		out->unwind_rows = us.rows_used;
		out->unwind_rows_max = us.rows_capacity;
	}
	proc_watch__stats(cap->watch, &ws);
	out->watch_queued = ws.queued;
	out->watch_bytes = ws.queued * sizeof(struct proc_watch_item);
}

void capture__location_cache(const struct capture *cap, uint64_t *hits, uint64_t *misses)
{
	*hits = cap->loc_hits;
	*misses = cap->loc_misses;
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		uint64_t h, m;

		if (!cap->builders[slot])
			continue;
		builder__cache_stats(cap->builders[slot], &h, &m);
		*hits += h;
		*misses += m;
	}
}

int capture__rotate(struct capture *cap, struct profile **out, size_t *n)
{
	uint64_t duration = clock__ns(CLOCK_MONOTONIC) - cap->window_start_mono, hits, misses;
	int err = capture__drain(cap);

	*n = 0;
	cap->samples_left_out = capture__samples_left_out(cap);
	/* Threads still off the CPU are not counted here: their whole wait lands in the window
	 * in which it ends, so that no wait is counted twice. */
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		if (!cap->profiles[slot])
			continue;
		profile__set_window(cap->profiles[slot],
				    profile__desc(cap->profiles[slot])->time_nanos, duration);
		out[(*n)++] = cap->profiles[slot];
		builder__cache_stats(cap->builders[slot], &hits, &misses);
		cap->samples_unlinked += builder__links_dropped(cap->builders[slot]);
		cap->loc_hits += hits;
		cap->loc_misses += misses;
		builder__delete(cap->builders[slot]);
		cap->profiles[slot] = NULL;
		cap->builders[slot] = NULL;
	}
	/* After the drain: what the retired processes left is in the profiles handed out. */
	symbolizer__retire_exited(cap->sym);
	interp__expire(cap->interp);
	drop_filter__sweep(cap->drops);
	if (err)
		return err;
	return make_profiles(cap);
}

static int make_unwinder(struct capture *cap)
{
	const struct config *c = cap->cfg;
	struct unwind_loader_opts opts = {
		.max_rows = c->unwind_rows,
		.max_procs = c->unwind_procs,
		.max_binaries = c->unwind_binaries,
		.proc_root = c->proc_root,
		.cache_dir = c->cache_dir,
	};

	if (!bpf_session__unwinding(cap->session, &opts.rows_fd, &opts.procs_fd))
		return 0;
	cap->unwinder = unwind_loader__new(&opts);
	return cap->unwinder ? 0 : -errno;
}

/* Without it, short-lived processes are read at the drain, when most of them are gone. */
static void make_watch(struct capture *cap)
{
	int fd = bpf_session__proc_events_fd(cap->session);

	if (fd < 0)
		return;
	cap->watch = proc_watch__new(fd, cap->cfg->proc_root, WATCH_QUEUE);
	if (!cap->watch)
		log_warn("cannot watch for new processes (%s): the samples of short-lived ones may "
			 "stay unsymbolized",
			 strerror(errno));
}

/* Load or refresh the unwind tables of one process; a failure leaves it to frame pointers. */
static void load_tables(struct capture *cap, pid_t pid)
{
	int err = unwind_loader__add_process(cap->unwinder, pid);

	if (err && err != -ESRCH)
		log_debug("unwind tables of PID %d: %s; its stacks use frame pointers", pid,
			  strerror(-err));
	thread_ctx_link__add(cap->tctx, pid);
	interp_link__add(cap->interps, pid, false);
}

/*
 * Hand what the process watcher read to the symbolizer: before a drain, so that the samples of a
 * process that has exited since find its snapshot, and at each tick, so that the queue stays short.
 */
static void adopt_watched(struct capture *cap)
{
	struct proc_watch_item items[16];
	size_t n;

	do {
		n = proc_watch__take(cap->watch, items, sizeof(items) / sizeof(items[0]));
		for (size_t i = 0; i < n; i++) {
			symbolizer__adopt(cap->sym, &items[i]);
			proc_watch_item__release(&items[i]);
		}
	} while (n == sizeof(items) / sizeof(items[0]));
}

static bool load_queued(const struct capture *cap, pid_t pid)
{
	for (size_t i = 0; i < cap->nr_loads; i++)
		if (cap->loads[i] == pid)
			return true;
	return false;
}

/*
 * Take the walks' requests: forget the tables of processes that exec'd or exited at once, and
 * queue the table loads, which may take tens of milliseconds for a big binary. Requests beyond the
 * queue's room stay in the kernel's map until the next call. (New processes are snapshotted for
 * the symbolizer by the process watcher, not here.)
 */
static void take_requests(struct capture *cap, uint64_t now)
{
	struct unwind_request req[64];
	size_t room, n;

	do {
		room = CAPTURE_LOAD_QUEUE - cap->nr_loads;
		if (room > sizeof(req) / sizeof(req[0]))
			room = sizeof(req) / sizeof(req[0]);
		n = room ? bpf_session__take_unwind_requests(cap->session, req, room) : 0;
		for (size_t i = 0; i < n; i++) {
			/*
			 * After an exec the process is new: no backoff from its old image. Its
			 * tables are loaded again at once only when it was being walked before;
			 * a process that has not been sampled yet (most execs on a busy host are
			 * short commands that never are) waits for its first walk to ask.
			 */
			bool walked = req[i].kind == HP_UNWIND_REQ_EXEC &&
				      unwind_loader__has_process(cap->unwinder, req[i].pid);
			bool reload = (req[i].kind == HP_UNWIND_REQ_LOAD || walked) &&
				      unwind_loader__due(cap->unwinder, req[i].pid, now);

			if (req[i].kind != HP_UNWIND_REQ_LOAD) {
				unwind_loader__remove_process(cap->unwinder, req[i].pid);
				interp_link__forget(cap->interps, req[i].pid);
			}
			if (reload && !load_queued(cap, req[i].pid))
				cap->loads[cap->nr_loads++] = req[i].pid;
		}
	} while (n && n == room);
}

/*
 * Load the tables of the processes whose walks asked for them (new processes, exec, dlopen), within
 * a time budget, so that a host full of new processes does not stall the loop; what is left over
 * stays queued for the next tick.
 */
void capture__tick(struct capture *cap)
{
	uint64_t start = clock__ns(CLOCK_MONOTONIC), now = start, announced;
	size_t done = 0;

	adopt_watched(cap);
	if (!cap->unwinder)
		return;
	if (start - cap->swept_ns >= UNWIND_SWEEP_NS) {
		unwind_loader__sweep(cap->unwinder);
		cap->swept_ns = start;
	}
	announced = proc_watch__announced(cap->watch);
	if (!cap->watch || announced != cap->announced || cap->nr_loads ||
	    start - cap->taken_ns >= TAKE_IDLE_NS) {
		cap->announced = announced;
		cap->taken_ns = start;
		take_requests(cap, now);
	}
	while (done < cap->nr_loads && now - start < UNWIND_LOAD_BUDGET_NS) {
		load_tables(cap, cap->loads[done++]);
		now = clock__ns(CLOCK_MONOTONIC);
	}
	memmove(cap->loads, cap->loads + done, (cap->nr_loads - done) * sizeof(*cap->loads));
	cap->nr_loads -= done;
}

struct capture *capture__new(const struct config *c)
{
	struct bpf_session_opts bopts = {
		.filter_pids = !c->all,
		.follow_children = c->command && !c->no_inherit,
		.include_idle = c->include_idle,
		.stack_map_entries = c->stack_map_entries,
		.counts_map_entries = c->counts_map_entries,
		.offcpu = c->types & (PROFILE_TYPE_WALL | PROFILE_TYPE_OFFCPU),
		.offcpu_min_ns = c->offcpu_min_ns,
		.wait_sample_ns = config__wait_sample_ns(c),
		.offcpu_threads = c->offcpu_threads,
		.offcpu_map_entries = c->offcpu_map_entries,
		.lock = c->types & PROFILE_TYPE_CONTENTION,
		.unwind = c->unwind_tables,
		.unwind_rows = c->unwind_rows,
		.unwind_procs = c->unwind_procs,
		.unwind_depth = c->unwind_depth,
		/* The whole host is where rules drop processes (the agent's identity). */
		.drop_filter = c->all,
	};
	struct symbolizer_opts sopts = {
		.proc_root = c->proc_root,
		.kallsyms_path = c->kallsyms_path,
		.max_procs = c->max_procs,
		.max_dsos = c->max_dsos,
		.max_dwarf_bytes = c->max_dwarf_bytes,
		.max_dwarf_name = c->max_dwarf_name,
		.max_symbol_bytes = c->max_symbol_bytes,
	};
	struct debuginfod_fetch_opts fopts = {
		.cache_dir = c->cache_dir,
		.timeout_s = debuginfod_fetch__timeout_s(c->debuginfod_timeout_s),
		.max_entries = c->max_dsos,
	};
	struct capture *cap = calloc(1, sizeof(*cap));
	int err = -ENOMEM;

	if (!cap)
		return NULL;
	cap->cfg = c;
	cap->cmdline_mode = c->cmdline_mode;
	cap->period_ns = (int64_t)(NSEC_PER_SEC / c->frequency_hz);
	cap->session = bpf_session__new(&bopts);
	if (!cap->session) {
		err = -errno;
		goto fail;
	}
	/* Before the symbolizer, which borrows it; a fetcher that cannot start only costs lines. */
	if (debuginfod_fetch__configured()) {
		cap->fetch = debuginfod_fetch__new(&fopts);
		if (!cap->fetch)
			log_warn("debuginfod: cannot start fetching debug files: %s; stripped "
				 "binaries get no lines",
				 strerror(errno));
		else
			log_info("debuginfod: fetching the missing debug files of stripped "
				 "binaries from %s",
				 getenv("DEBUGINFOD_URLS"));
	}
	sopts.fetch = cap->fetch;
	cap->sym = symbolizer__new(&sopts);
	if (!cap->sym)
		goto fail;
	err = make_unwinder(cap);
	if (err)
		goto fail;
	if (c->all) {
		cap->drops = drop_filter__new(cap->session, c->proc_root);
		if (!cap->drops) {
			err = -ENOMEM;
			goto fail;
		}
	}
	cap->tctx = thread_ctx_link__new(cap->session, cap->sym);
	cap->interp = interp__new(cap->sym, 0);
	cap->interps = cap->interp ? interp_link__new(cap->session, cap->interp) : NULL;
	if (!cap->tctx || !cap->interps) {
		err = -ENOMEM;
		goto fail;
	}
	make_watch(cap);
	err = make_profiles(cap);
	if (err)
		goto fail;
	return cap;
fail:
	capture__delete(cap);
	errno = -err;
	return NULL;
}

void capture__delete(struct capture *cap)
{
	if (!cap)
		return;
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		builder__delete(cap->builders[slot]);
		profile__delete(cap->profiles[slot]);
	}
	sample_batch__release(&cap->batch);
	sample_batch__release(&cap->offcpu_batch);
	sample_batch__release(&cap->lock_batch);
	/* The watcher first: its thread reads the session's ring buffer. */
	proc_watch__delete(cap->watch);
	unwind_loader__delete(cap->unwinder);
	thread_ctx_link__delete(cap->tctx);
	interp_link__delete(cap->interps);
	interp__delete(cap->interp);
	symbolizer__delete(cap->sym);
	debuginfod_fetch__delete(cap->fetch);
	drop_filter__delete(cap->drops);
	bpf_session__delete(cap->session);
	free(cap);
}

int capture__add_pid(struct capture *cap, pid_t pid)
{
	int err = bpf_session__add_pid(cap->session, pid);

	if (err)
		log_error("map 'target_pids': adding PID %d failed: %s", pid, strerror(-err));
	return err;
}

int capture__track(struct capture *cap, pid_t pid)
{
	int err = symbolizer__track(cap->sym, pid);

	if (cap->unwinder)
		load_tables(cap, pid);
	else
		thread_ctx_link__add(cap->tctx, pid);
	interp_link__add(cap->interps, pid, true);
	return err;
}

int capture__start(struct capture *cap)
{
	return bpf_session__attach(cap->session, cap->cfg->frequency_hz);
}

int capture__drain(struct capture *cap)
{
	struct sample_batch *offcpu = wants_offcpu(cap) ? &cap->offcpu_batch : NULL;
	struct sample_batch *lock = cap->builders[SLOT_CONTENTION] ? &cap->lock_batch : NULL;
	int n = collector__drain(cap->session, &cap->batch, offcpu, lock, &cap->stats);

	if (n < 0) {
		log_error("draining the BPF maps failed: %s", strerror(-n));
		return n;
	}
	/* After the maps were read: every process in these samples that was watched is in. */
	adopt_watched(cap);
	n = add_batches(cap, &cap->batch, offcpu);
	/* After the builders asked for each process's identity (and so its process context). */
	thread_ctx_link__scan(cap->tctx, &cap->batch);
	interp_link__scan(cap->interps, &cap->batch);
	if (!n && lock)
		n = builder__add_batch(cap->builders[SLOT_CONTENTION], lock, BATCH_LOCK, 0);
	/* The drain's frames are symbolized: a DWARF handle that built nothing for them goes. */
	symbolizer__release_idle_dwarf(cap->sym);
	/* Here, where the caller's status line is cleared: the fetch thread never logs warnings. */
	debuginfod_fetch__warn_new_failures(cap->fetch);
	return n;
}

/* The threads still off the CPU when the capture ends: their time up to the end counts. */
static int drain_pending(struct capture *cap)
{
	int n;

	if (!wants_offcpu(cap))
		return 0;
	n = collector__drain_pending_offcpu(cap->session, &cap->offcpu_batch, &cap->stats);
	if (n < 0) {
		log_error("reading the threads still off the CPU failed: %s", strerror(-n));
		return n;
	}
	return add_batches(cap, NULL, &cap->offcpu_batch);
}

/* Wait (bounded by one fetch's timeout) for the debug files still on their way. */
static void wait_for_debug_files(struct capture *cap)
{
	struct debuginfod_fetch_stats st;
	double timeout_s = debuginfod_fetch__timeout_s(cap->cfg->debuginfod_timeout_s);
	uint64_t left;

	debuginfod_fetch__stats(cap->fetch, &st);
	if (!st.pending)
		return;
	log_info("debuginfod: waiting up to %g s for %" PRIu64 " debug file%s", timeout_s,
		 st.pending, st.pending == 1 ? "" : "s");
	left = debuginfod_fetch__wait(cap->fetch, (uint64_t)(timeout_s * NSEC_PER_SEC));
	if (left)
		log_info("debuginfod: %" PRIu64 " debug file%s still on the way; their binaries "
			 "have no lines in this profile",
			 left, left == 1 ? "" : "s");
}

int capture__finish(struct capture *cap, uint64_t duration_ns, bool wait_debug_info)
{
	int err;

	bpf_session__detach(cap->session);
	if (wait_debug_info && cap->fetch)
		wait_for_debug_files(cap);
	err = capture__drain(cap);
	if (!err)
		err = drain_pending(cap);
	/* Whatever went wrong, the profiles hold what was collected, with their window. */
	for (int slot = 0; slot < NR_SLOTS; slot++)
		if (cap->profiles[slot])
			profile__set_window(cap->profiles[slot],
					    profile__desc(cap->profiles[slot])->time_nanos,
					    duration_ns);
	return err;
}

size_t capture__profiles(const struct capture *cap, const struct profile **out)
{
	size_t n = 0;

	for (int slot = 0; slot < NR_SLOTS; slot++)
		if (cap->profiles[slot])
			out[n++] = cap->profiles[slot];
	return n;
}

const struct profile *capture__profile(const struct capture *cap, unsigned int type)
{
	for (int slot = 0; slot < NR_SLOTS; slot++)
		if (slot_type[slot] == type)
			return cap->profiles[slot];
	return NULL;
}

const struct collector_stats *capture__stats(const struct capture *cap)
{
	return &cap->stats;
}

void capture__watch_stats(const struct capture *cap, struct proc_watch_stats *out)
{
	proc_watch__stats(cap->watch, out);
}

void capture__symbolizer_stats(const struct capture *cap, struct symbolizer_stats *out)
{
	symbolizer__stats(cap->sym, out);
}

bool capture__debuginfod_stats(const struct capture *cap, struct debuginfod_fetch_stats *out)
{
	debuginfod_fetch__stats(cap->fetch, out);
	return cap->fetch != NULL;
}

int capture__nr_cpus(const struct capture *cap)
{
	return bpf_session__nr_cpus(cap->session);
}

size_t capture__nr_processes(const struct capture *cap)
{
	const struct profile *first[NR_SLOTS];

	return capture__profiles(cap, first) ? profile__nr_processes(first[0]) : 0;
}

bool capture__unwind_report(struct capture *cap, struct unwind_report *out)
{
	memset(out, 0, sizeof(*out));
	if (!cap->unwinder)
		return false;
	unwind_loader__stats(cap->unwinder, &out->tables);
	bpf_session__read_unwind_stops(cap->session, out->stops);
	return true;
}

void capture__interp_stats(const struct capture *cap, struct interp_link_stats *link,
			   struct interp_stats *names)
{
	interp_link__stats(cap ? cap->interps : NULL, link);
	interp__stats(cap ? cap->interp : NULL, names);
}

void capture__thread_ctx_stats(const struct capture *cap, struct thread_ctx_link_stats *out)
{
	thread_ctx_link__stats(cap ? cap->tctx : NULL, out);
	if (!cap)
		return;
	out->samples_unlinked = cap->samples_unlinked;
	for (int slot = 0; slot < NR_SLOTS; slot++)
		if (cap->builders[slot])
			out->samples_unlinked += builder__links_dropped(cap->builders[slot]);
}

void capture__drop_stats(const struct capture *cap, struct drop_filter_stats *out)
{
	drop_filter__stats(cap ? cap->drops : NULL, out);
}

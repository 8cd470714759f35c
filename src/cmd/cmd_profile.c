// SPDX-License-Identifier: BSD-2-Clause
/*
 * `hostprof profile`: a one-shot capture. Wires the BPF session, the collector, the symbolizer and
 * the profile model together, drains once per interval until the capture ends, then writes the
 * outputs and prints the summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/config_load.h"
#include "collect/bpf_session.h"
#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/thread_ctx_link.h"
#include "capture/interp_link.h"
#include "interp/interp.h"
#include "base/clock.h"
#include "base/safe_open.h"
#include "cmd/cmd_options.h"
#include "cmd/cmds.h"
#include "collect/collector.h"
#include "model/config.h"
#include "export/deliver.h"
#include "formats/encode.h"
#include "base/log.h"
#include "agent/metrics.h"
#include "export/otlp_config.h"
#include "model/profile.h"
#include "cmd/status.h"
#include "cmd/summary.h"
#include "symbols/symbolize.h"

#define NSEC_PER_SEC 1000000000ULL

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * Fail before the capture, not after it, when an output cannot be written: by creating (and
 * removing) a file where it will go, which root's access(W_OK) would not tell of /proc or of a
 * read-only filesystem.
 */
static int check_output(const char *path)
{
	char copy[PATH_MAX], probe[PATH_MAX + 32];
	const char *dir;
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		log_error("cannot write '%s': it is a directory; name a file in it", path);
		return -EISDIR;
	}
	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		log_error("cannot write '%s': the directory '%s' does not exist", path, dir);
		return -ENOENT;
	}
	snprintf(probe, sizeof(probe), "%s/.hostprof-probe-XXXXXX", dir);
	fd = mkstemp(probe);
	if (fd < 0) {
		int err = -errno;

		log_error("cannot write '%s': no file can be created in '%s': %s", path, dir,
			  strerror(-err));
		return err;
	}
	close(fd);
	unlink(probe);
	return 0;
}

static int check_outputs(const struct config *c)
{
	for (size_t i = 0; i < c->nr_outputs; i++) {
		int err = check_output(c->outputs[i].path);

		if (err)
			return err;
	}
	return 0;
}

static bool process_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/*
 * Fork the command, held at a pipe until the sampler is attached, so that its very first
 * instructions are profiled. *exec_fd reads end-of-file once the child has exec'd (or exited):
 * the child holds the only write end, close-on-exec. Returns the child's PID, or -errno.
 */
static pid_t spawn_held(char **command, int *release_fd, int *exec_fd)
{
	int pipefd[2], execfd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	if (pipe2(execfd, O_CLOEXEC)) {
		int err = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		close(execfd[0]);
		close(execfd[1]);
		return err;
	}
	if (pid == 0) {
		char go;

		close(pipefd[1]);
		close(execfd[0]);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(126); /* hostprof gave up before starting the command */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(command[0], command);
		fprintf(stderr, "hostprof: cannot run '%s': %s\n", command[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[0]);
	close(execfd[1]);
	*release_fd = pipefd[1];
	*exec_fd = execfd[0];
	return pid;
}

/* Wait (a bounded time) until the released command has exec'd: then its maps are its own. */
static void wait_for_exec(int exec_fd)
{
	struct pollfd p = {.fd = exec_fd, .events = POLLIN};
	char byte;

	if (poll(&p, 1, 2000) == 1)
		(void)!read(exec_fd, &byte, 1);
}

/* One run of `hostprof profile`: the capture, the command it may run, and where results go. */
struct run {
	const struct config *cfg;
	struct capture *cap;
	struct deliverer *deliver;
	struct export_targets targets;
	pid_t child;
	int exec_fd; /* the command's exec notice (see spawn_held()); -1 when none */
	int child_status;
	bool child_exited;
};

/* Why the capture should end now, or NULL to go on. */
static const char *should_stop(struct run *r)
{
	const struct config *c = r->cfg;

	if (stop_signal)
		return "interrupted";
	if (r->child > 0 && !r->child_exited &&
	    waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
		r->child_exited = true;
		return "the command exited";
	}
	if (c->nr_pids) {
		for (size_t i = 0; i < c->nr_pids; i++)
			if (process_exists(c->pids[i]))
				return NULL;
		return c->nr_pids == 1 ? "the process exited" : "every target process exited";
	}
	return NULL;
}

/* What the live status line shows: the counters as of the last drain. */
static void show_status(struct run *r, struct status *st, uint64_t start, uint64_t now)
{
	const struct collector_stats *cs = capture__stats(r->cap);
	struct status_numbers n = {
		.elapsed_s = (now - start) / 1e9,
		.total_s = r->cfg->duration_s,
		.samples = cs->samples_seen,
		.lost = cs->losses[HP_LOSS_COUNTS_MAP_FULL],
		.processes = capture__nr_processes(r->cap),
	};

	status__update(st, &n, now);
}

static int run_loop(struct run *r)
{
	const struct config *c = r->cfg;
	uint64_t start = clock__ns(CLOCK_MONOTONIC);
	uint64_t deadline =
		c->duration_s > 0 ? start + (uint64_t)(c->duration_s * NSEC_PER_SEC) : 0;
	uint64_t interval = (uint64_t)(c->drain_interval_s * NSEC_PER_SEC);
	uint64_t next_drain = start + interval;
	/* NULL when it cannot be made: the capture goes on without it. */
	struct status *st = status__new(!c->quiet && isatty(STDERR_FILENO));
	const char *why = NULL;
	int err;

	for (;;) {
		uint64_t now = clock__ns(CLOCK_MONOTONIC);
		struct timespec nap = {.tv_nsec = 50 * 1000 * 1000};

		if (deadline && now >= deadline) {
			why = "the duration elapsed";
			break;
		}
		why = should_stop(r);
		if (why)
			break;
		if (now >= next_drain) {
			/* A drain may log (symbolizer, builder): erase first, so that its lines
			 * start at column 0 and the status is redrawn below them. */
			status__clear(st);
			err = capture__drain(r->cap);
			if (err < 0) {
				status__delete(st);
				return err;
			}
			next_drain = now + interval;
		}
		capture__tick(r->cap);
		show_status(r, st, start, now);
		nanosleep(&nap, NULL);
	}
	status__delete(st); /* erases it: what follows starts on a clean line */
	if (!c->quiet)
		log_info("capture ended: %s", why);
	return capture__finish(r->cap, clock__ns(CLOCK_MONOTONIC) - start, true);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static size_t count_processes(const struct profile *p)
{
	size_t n = profile__nr_samples(p), distinct = 0;
	uint32_t *pids = calloc(n ? n : 1, sizeof(*pids));

	if (!pids)
		return 0;
	for (size_t i = 1; i < n; i++) /* sample 0 is the model's zero entry */
		pids[i - 1] = profile__sample_at(p, i)->labels.pid;
	n = n ? n - 1 : 0;
	qsort(pids, n, sizeof(*pids), cmp_u32);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || pids[i] != pids[i - 1];
	free(pids);
	return distinct;
}

/* Which processes' samples say the span they served (OTEP 4947): said only when some do. */
static void print_thread_ctx(struct capture *cap)
{
	struct thread_ctx_link_stats t;

	capture__thread_ctx_stats(cap, &t);
	if (t.processes)
		printf("Trace context: the spans of %" PRIu64 " process%s (%s) are in the samples' "
		       "trace_id and span_id\n",
		       t.processes, t.processes == 1 ? "" : "es",
		       !t.go_processes ? "OpenTelemetry thread context"
		       : t.go_processes == t.processes
			       ? "Go pprof labels"
			       : "OpenTelemetry thread context, Go pprof labels");
	else if (t.failed)
		printf("Trace context: the spans of a process that publishes them could not be "
		       "read (-v says why)\n");
	if (t.samples_unlinked)
		printf("  %" PRIu64 " samples kept without their span: more than %d spans in a "
		       "window\n",
		       t.samples_unlinked, BUILDER_MAX_LINKS);
}

/* Interpreters whose frames were walked, and those that were not, each named. */
static void print_interp(struct capture *cap)
{
	struct interp_link_stats l;
	struct interp_stats s;

	capture__interp_stats(cap, &l, &s);
	if (l.walked || s.frames)
		printf("Python frames: %" PRIu64 " process%s walked; %" PRIu64
		       " frames named, %" PRIu64 " not (their code objects could not be read)\n",
		       l.walked, l.walked == 1 ? "" : "es", s.frames - s.frames_unresolved,
		       s.frames_unresolved);
	for (size_t i = 0; i < l.nr_notes; i++)
		printf("%s\n", l.notes[i]);
	if (l.not_walked > l.nr_notes)
		printf("  and %" PRIu64
		       " more processes whose interpreter frames were not walked\n",
		       l.not_walked - l.nr_notes);
}

/* How many waits ended, and for how many a stack was taken: short ones are sampled. */
static void print_waits(const char *what, const char *noun, uint64_t events,
			const struct collector_stats *st, int i, const struct config *cfg)
{
	uint64_t period = config__wait_sample_ns(cfg);

	printf("%s: %" PRIu64 " %s recorded", what, events, noun);
	if (period && st->waits_skipped[i] + st->waits_sampled[i])
		/* With futex waits from the off-CPU program, these are kernel locks' only. */
		printf(" (%sstacks of %" PRIu64 ": %" PRIu64 " shorter than %.3g ms were sampled, "
		       "%" PRIu64 " not kept; totals are weighted)",
		       i == 1 && st->lock_switch_waits ? "kernel locks: " : "", st->waits_walked[i],
		       st->waits_sampled[i], period / 1e6, st->waits_skipped[i]);
	putchar('\n');
	if (i == 1 && st->lock_switch_waits)
		printf("  %" PRIu64 " of them futex waits, timed by the off-CPU program at the "
		       "scheduler's switches and sampled as off-CPU waits are: "
		       "no program ran at the futex calls\n",
		       st->lock_switch_waits);
	if (i == 0 && st->offcpu_seeded)
		printf("  %" PRIu64 " thread%s already off the CPU when the capture began: "
		       "%s time counted from then, with the kernel stack %s slept in "
		       "(and the user stack on waking, where the kernel has BPF task work)\n",
		       st->offcpu_seeded, st->offcpu_seeded == 1 ? " was" : "s were",
		       st->offcpu_seeded == 1 ? "its" : "their",
		       st->offcpu_seeded == 1 ? "it" : "they");
	if (i == 0 && st->offcpu_walked_at_return)
		printf("  %" PRIu64
		       " of them were long waits that followed a short one, not walked "
		       "by chance when the thread left the CPU: walked when it returned to user "
		       "mode\n",
		       st->offcpu_walked_at_return);
	if (i == 0 && st->offcpu_unwalked_long)
		printf("  %" PRIu64
		       " of them were long waits that followed a short one and were not "
		       "walked by chance: kept with their kernel stack only\n",
		       st->offcpu_unwalked_long);
}

/* How user stacks were walked, and why walks ended: the first thing to read when stacks look
 * short. */
static void print_unwinding(struct capture *cap)
{
	struct unwind_report u;
	uint64_t walks = 0;

	if (!capture__unwind_report(cap, &u))
		return;
	for (int i = 0; i < HP_UNWIND_STOP__COUNT; i++)
		walks += u.stops[i];
	printf("User stacks: %" PRIu64 " walked with unwind tables (%zu binaries: %" PRIu64
	       " built, %" PRIu64 " from the disk cache; %" PRIu64 " of %" PRIu64
	       " rows; %.0f ms to load)",
	       walks, u.tables.binaries, u.tables.tables_built, u.tables.tables_cached,
	       u.tables.rows_used, u.tables.rows_capacity, u.tables.build_ns / 1e6);
	/* Why the walks ended, when there were any: no dangling colon after none. */
	for (int i = 0, n = 0; i < HP_UNWIND_STOP__COUNT; i++)
		if (u.stops[i])
			printf("%s %s %" PRIu64, n++ ? "," : ":", collector__unwind_stop_text(i),
			       u.stops[i]);
	printf("\n");
	if (u.tables.no_room)
		printf("  %" PRIu64 " binaries did not fit the rows map and use frame pointers: "
		       "raise --unwind-table-rows\n",
		       u.tables.no_room);
}

/* Debug files from debuginfod, and one line per kind of failure. */
static void print_debuginfod(const struct capture *cap)
{
	struct debuginfod_fetch_stats st;

	if (!capture__debuginfod_stats(cap, &st))
		return;
	printf("Debug files from debuginfod: %" PRIu64 " fetched, %" PRIu64 " failed, %" PRIu64
	       " pending\n",
	       st.ok, st.failed, st.pending);
	for (int i = 0; i < DEBUGINFOD_FAILURE__COUNT; i++)
		if (st.failures[i])
			printf("  %" PRIu64 " %s\n", st.failures[i],
			       debuginfod_fetch__failure_text(i));
}

/* "1.5 MiB", "312 KiB", "87 B": memory as a person reads it. */
static const char *human_bytes(uint64_t n, char *buf, size_t len)
{
	if (n >= (1ULL << 20))
		snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
	else if (n >= 1024)
		snprintf(buf, len, "%.0f KiB", (double)n / 1024);
	else
		snprintf(buf, len, "%" PRIu64 " B", n);
	return buf;
}

/* entries UINT64_MAX: not counted (shown as "-"). */
static void print_cache_row(const char *name, uint64_t entries, const char *bound, uint64_t bytes,
			    const char *note)
{
	char b[32], e[32] = "-";

	if (entries != UINT64_MAX)
		snprintf(e, sizeof(e), "%" PRIu64, entries);
	printf("  %-24s %10s %12s %10s%s%s\n", name, e, bound, human_bytes(bytes, b, sizeof(b)),
	       note[0] ? "  " : "", note);
}

/* --stats: what each cache holds against its bound, so that a person can size the limits. */
static void print_stats(struct run *r)
{
	struct capture_memory m;
	struct metrics_self self;
	struct interp_link_stats il;
	struct interp_stats is;
	char bound[32], b[32];

	capture__memory(r->cap, &m);
	printf("\nCaches                      entries        bound     memory\n");
	snprintf(bound, sizeof(bound), "%zu", m.sym.procs_max);
	print_cache_row("processes (maps)", m.sym.procs_cached, bound, m.sym.procs_bytes,
			"--max-processes");
	snprintf(bound, sizeof(bound), "%zu", m.sym.dsos_max);
	print_cache_row("binaries (symbols)", m.sym.dsos_cached, bound, m.sym.dsos_bytes,
			"--max-binaries");
	print_cache_row("binaries held open", m.sym.binaries_held, "256", 0,
			"of new processes, read when sampled");
	print_cache_row("DWARF (handles, tables)", UINT64_MAX,
			human_bytes(m.sym.dwarf_max, b, sizeof(b)), m.sym.dwarf.bytes,
			"--max-dwarf-mb");
	snprintf(bound, sizeof(bound), "%zu", m.locations_max);
	print_cache_row("locations", m.locations, bound, m.location_bytes,
			"--max-cached-locations, per profile type");
	print_cache_row("JIT perf maps", m.sym.perfmaps, "16", m.sym.perfmap_bytes, "");
	capture__interp_stats(r->cap, &il, &is);
	print_cache_row("Python code objects", is.code.entries,
			human_bytes(is.code.max_bytes, b, sizeof(b)), is.code.bytes,
			"names and line tables, per process");
	print_cache_row("kernel symbols", m.sym.ksyms, "-", m.sym.ksyms_bytes,
			"/proc/kallsyms, read once");
	snprintf(bound, sizeof(bound), "%" PRIu64, m.unwind_rows_max);
	print_cache_row("unwind rows (BPF)", m.unwind_rows, bound, m.unwind_rows * 16,
			"--unwind-table-rows; kernel memory");
	print_cache_row("new processes queued", m.watch_queued, "256", m.watch_bytes, "");
	if (metrics__self(&self) == 0)
		printf("  %-24s %34s  %s\n", "hostprof resident (RSS)",
		       human_bytes(self.resident_bytes, b, sizeof(b)),
		       "all of the above, and more");
}

/*
 * A CPU sample is a CPU found running something, so an idle host gives a handful of samples in a
 * few seconds: say so, lest a person take it for a broken profiler. Under 1% of what the CPUs
 * could have given counts as idle.
 */
static void print_idle_hint(const struct run *r, uint64_t samples, double elapsed_s, int nr_cpus)
{
	const struct config *c = r->cfg;
	double possible = elapsed_s * c->frequency_hz * (nr_cpus > 0 ? nr_cpus : 1);

	/* No samples at all gets its own line from the summary ("No samples: ..."). */
	if (!(c->types & PROFILE_TYPE_CPU) || c->include_idle || possible < 100 || !samples ||
	    samples >= possible / 100)
		return;
	if (c->all)
		printf("The host was nearly idle: %" PRIu64 " samples of a possible %.0f (%u Hz x "
		       "%d CPUs x %.1f s). Samples are taken only while a CPU runs something, so "
		       "this is an idle host, not a fault: run a workload, or add --include-idle "
		       "to count idle time too.\n",
		       samples, possible, c->frequency_hz, nr_cpus, elapsed_s);
	else
		printf("The targets were nearly idle: %" PRIu64 " samples of a possible %.0f. "
		       "They spent their time off the CPU: --types wall shows where they "
		       "waited.\n",
		       samples, possible);
}

/* What processes put in the way (FIFOs, sparse giants): counted, and named in the warnings. */
static void print_refused(const struct symbolizer_stats *ss)
{
	uint64_t total = 0;

	for (int i = 0; i < SAFE_OPEN_REASON__COUNT; i++)
		total += ss->files_refused[i];
	if (!total)
		return;
	printf("Files of processes not read: %" PRIu64 " (", total);
	for (int i = 0, first = 1; i < SAFE_OPEN_REASON__COUNT; i++) {
		if (!ss->files_refused[i])
			continue;
		printf("%s%s %" PRIu64, first ? "" : ", ", safe_open__reason_name(i),
		       ss->files_refused[i]);
		first = 0;
	}
	printf("; the warnings name them)\n");
}

static void print_summary(struct run *r, double elapsed_s)
{
	const struct collector_stats *st = capture__stats(r->cap);
	const struct profile *profiles[CAPTURE_MAX_TYPES];
	size_t n = capture__profiles(r->cap, profiles);
	struct symbolizer_stats ss;
	struct proc_watch_stats ws;
	struct summary sum;
	uint64_t lost_whole = st->losses[HP_LOSS_COUNTS_MAP_FULL];
	size_t procs = n ? count_processes(profiles[0]) : 0;
	bool map_losses = false;

	capture__symbolizer_stats(r->cap, &ss);

	printf("Captured %.1f s at %u Hz on %d CPUs: %" PRIu64 " samples, %" PRIu64
	       " recorded, %" PRIu64 " lost; %zu process%s\n",
	       elapsed_s, r->cfg->frequency_hz, capture__nr_cpus(r->cap), st->samples_seen,
	       st->samples_drained, lost_whole, procs, procs == 1 ? "" : "es");
	print_idle_hint(r, st->samples_seen, elapsed_s, capture__nr_cpus(r->cap));
	for (int i = 0; i < HP_LOSS__COUNT; i++) {
		if (!st->losses[i])
			continue;
		printf("  %-44s %" PRIu64 "\n", collector__loss_name(i), st->losses[i]);
		map_losses |= i != HP_LOSS_USER_STACK_MISSING && i != HP_LOSS_KERN_STACK_MISSING &&
			      i != HP_LOSS_MAP_NO_MEMORY && i != HP_LOSS_MAP_UPDATE_FAILED &&
			      i != HP_LOSS_FOLLOW_FULL && i != HP_LOSS_THREAD_CTX_FULL;
	}
	if (map_losses)
		printf("  (the BPF maps were too small for this load: raise --stack-map-entries "
		       "and "
		       "--counts-map-entries)\n");
	if (ss.frames_user_unresolved || ss.frames_kernel_unresolved)
		printf("Unresolved frames: %" PRIu64 " of %" PRIu64 " user (%" PRIu64
		       " from processes that had exited), %" PRIu64 " of %" PRIu64 " kernel\n",
		       ss.frames_user_unresolved, ss.frames_user, ss.frames_proc_gone,
		       ss.frames_kernel_unresolved, ss.frames_kernel);
	if (ss.binaries_denied)
		printf("Binaries not readable: %" PRIu64 " (permission denied; their frames are "
		       "[unknown]): run as root, or give hostprof CAP_DAC_READ_SEARCH\n",
		       ss.binaries_denied);
	print_refused(&ss);
	capture__watch_stats(r->cap, &ws);
	if (ws.missed || ws.dropped)
		printf("Processes read at their first sample: %" PRIu64 "; %" PRIu64
		       " had exited already, %" PRIu64 " were dropped (the capture loop was "
		       "behind)\n",
		       ws.read, ws.missed, ws.dropped);
	print_unwinding(r->cap);
	print_thread_ctx(r->cap);
	print_interp(r->cap);
	print_debuginfod(r->cap);
	if (r->cfg->types & (PROFILE_TYPE_WALL | PROFILE_TYPE_OFFCPU))
		print_waits("Off-CPU", "waits", st->offcpu_events, st, 0, r->cfg);
	if (r->cfg->types & PROFILE_TYPE_CONTENTION)
		print_waits("Contention", "lock waits", st->lock_events, st, 1, r->cfg);
	if (st->filter_dropped)
		printf("Kernel filter: %" PRIu64 " events of excluded processes skipped before any "
		       "stack was taken\n",
		       st->filter_dropped);
	for (size_t i = 0; i < n; i++) {
		if (summary__compute(profiles[i], &sum) != 0)
			continue;
		printf("\n[%s]", profile__desc(profiles[i])->sample_type);
		summary__print_top(&sum, r->cfg->top_n, stdout);
		summary__release(&sum);
	}
	if (r->cfg->print_stats)
		print_stats(r);
}

/* A uid or gid as sudo writes it: decimal digits only. */
static bool parse_id(const char *text, unsigned long *out)
{
	char *end;

	if (!text || *text < '0' || *text > '9')
		return false;
	errno = 0;
	*out = strtoul(text, &end, 10);
	return !errno && !*end && *out < (unsigned long)(uid_t)-1;
}

/*
 * Output files are written 0600 (base/atomic_file.h). Under sudo they would then be root's
 * alone, unreadable by the user who asked for them: they go to SUDO_UID and SUDO_GID.
 */
static void sudo_owner(struct deliver_opts *o)
{
	unsigned long uid, gid;

	if (geteuid() != 0 || !parse_id(getenv("SUDO_UID"), &uid) ||
	    !parse_id(getenv("SUDO_GID"), &gid))
		return;
	o->give_files = true;
	o->owner_uid = (uid_t)uid;
	o->owner_gid = (gid_t)gid;
}

static int start_delivery(struct run *r)
{
	const struct config *c = r->cfg;
	struct deliver_opts o;
	struct otlp_flags f = {
		.endpoint = c->otlp_endpoint,
		.protocol = c->otlp_protocol,
		.compression = c->otlp_compression,
		.timeout_ms = c->otlp_timeout_ms,
		.ca_file = c->otlp_ca_file,
		.headers = c->otlp_headers,
		.nr_headers = c->nr_otlp_headers,
		.insecure = c->otlp_insecure,
	};
	int err = export_targets__resolve(&r->targets, &f, c);

	if (err)
		return err;
	export_targets__opts(&r->targets, c, &o);
	o.outputs = c->outputs;
	o.nr_outputs = c->nr_outputs;
	sudo_owner(&o);
	r->deliver = deliverer__new(&o);
	return r->deliver ? 0 : -errno;
}

static void print_export_line(const char *what, const struct exporter_stats *st)
{
	if (st->undelivered || st->dropped_full || st->dropped_refused)
		printf("%s: %" PRIu64 " delivered, %" PRIu64 " not delivered (%" PRIu64
		       " refused by the receiver, %" PRIu64 " dropped from a full queue, %" PRIu64
		       " still queued at the deadline)\n",
		       what, st->delivered,
		       st->dropped_refused + st->dropped_full + st->undelivered,
		       st->dropped_refused, st->dropped_full, st->undelivered);
	else
		printf("%s: %" PRIu64 " delivered%s\n", what, st->delivered,
		       st->retries ? " (after retries)" : "");
}

/* Hand the profile to every destination, then wait (bounded) for the receivers. */
static int finish_delivery(struct run *r)
{
	const struct profile *profiles[CAPTURE_MAX_TYPES];
	size_t n = capture__profiles(r->cap, profiles);
	struct delivery_report rep;
	int err;

	err = deliverer__deliver(r->deliver, profiles, n);
	deliverer__shutdown(r->deliver, (int64_t)(r->cfg->export_deadline_s * 1000), &rep);
	r->deliver = NULL;
	if (rep.otlp_on)
		print_export_line("OTLP export", &rep.otlp);
	if (rep.pyroscope_on)
		print_export_line("Pyroscope export", &rep.pyroscope);
	if (!err && (rep.otlp.undelivered || rep.otlp.dropped_refused ||
		     rep.pyroscope.undelivered || rep.pyroscope.dropped_refused))
		err = -EIO;
	return err;
}

static int setup(struct run *r, int *release_fd)
{
	const struct config *c = r->cfg;
	int err = start_delivery(r);

	if (err)
		return err;
	r->cap = capture__new(c);
	if (!r->cap)
		return -errno;
	if (c->command) {
		/* Made a target only when released (release_command()). */
		r->child = spawn_held(c->command, release_fd, &r->exec_fd);
		if (r->child < 0) {
			log_error("cannot start '%s': %s", c->command[0], strerror(-r->child));
			return r->child;
		}
	}
	for (size_t i = 0; i < c->nr_pids; i++) {
		err = capture__add_pid(r->cap, c->pids[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < c->nr_pids; i++)
		if (capture__track(r->cap, c->pids[i]))
			log_warn("cannot read the maps of PID %d yet; its frames may be [unknown]",
				 c->pids[i]);
	return capture__start(r->cap);
}

/*
 * Make the held command a target, then let it run (closing release_fd). It becomes a target only
 * now, with the programs attached: its wait at the pipe was hostprof's, not the command's, and
 * would otherwise show in the off-CPU profile under hostprof's name (as a thread already asleep
 * when the capture began). Its first instructions are still profiled.
 */
static int release_command(struct run *r, int release_fd)
{
	int err = capture__add_pid(r->cap, r->child);

	if (!err && write(release_fd, "g", 1) != 1) {
		err = -errno;
		log_error("cannot release the command: %s", strerror(errno));
	}
	close(release_fd); /* without the byte, the held child sees EOF and exits unrun */
	if (err)
		return err;
	wait_for_exec(r->exec_fd);
	capture__track(r->cap, r->child);
	return 0;
}

static void describe_target(const struct config *c)
{
	char what[128];

	if (c->all)
		snprintf(what, sizeof(what), "the whole host");
	else if (c->command)
		snprintf(what, sizeof(what), "'%s'", c->command[0]);
	else if (c->nr_pids == 1)
		snprintf(what, sizeof(what), "PID %d", c->pids[0]);
	else
		snprintf(what, sizeof(what), "%zu processes", c->nr_pids);
	if (c->duration_s > 0)
		log_info("profiling %s at %u Hz for %.1f s", what, c->frequency_hz, c->duration_s);
	else
		log_info("profiling %s at %u Hz; press Ctrl-C to stop", what, c->frequency_hz);
}

/*
 * What `hostprof profile -- COMMAND` exits with once the profile is written: the command's own
 * status, as a shell reports it (127: it could not be run; 128 + N: killed by signal N), so that
 * hostprof can stand in front of a command in a script.
 */
static int command_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int do_profile(int argc, char **argv)
{
	struct config cfg;
	struct run r = {.cfg = &cfg, .child = -1, .exec_fd = -1};
	struct sigaction sa = {.sa_handler = on_signal};
	char why[512];
	int err, release_fd = -1, rc;
	uint64_t started;

	config__defaults(&cfg);
	cfg.max_dwarf_name = "--max-dwarf-mb";
	rc = profile_options__parse(argc, argv, &cfg, why, sizeof(why));
	rc = options__exit_status(&profile_command, rc, why);
	if (rc >= 0)
		return rc;
	log_set_level(cfg.verbose ? LOG_DEBUG : cfg.quiet ? LOG_ERROR : LOG_INFO);
	log_bridge_libbpf();
	/* The agent's own reader of header_files: one place that reads token files. */
	if (config_load__read_headers(&cfg, cfg.otlp_header_files, cfg.nr_otlp_header_files,
				      cfg.otlp_headers, &cfg.nr_otlp_headers, "--otlp-header-file",
				      why, sizeof(why))) {
		log_error("%s", why);
		return OPTIONS_EXIT_USAGE;
	}
	for (size_t i = 0; i < cfg.nr_pids; i++) {
		if (!process_exists(cfg.pids[i])) {
			log_error("PID %d: no such process (check the PID with 'ps -p %d')",
				  cfg.pids[i], cfg.pids[i]);
			return 1;
		}
	}
	err = bpf_session__preflight(BPF_SESSION_KERNEL_BTF, why, sizeof(why));
	if (err) {
		log_error("%s", why);
		return 1;
	}
	if (check_outputs(&cfg))
		return 1;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = setup(&r, &release_fd);
	if (err)
		goto out;
	if (!cfg.quiet)
		describe_target(&cfg);
	started = clock__ns(CLOCK_MONOTONIC);
	if (release_fd >= 0) {
		err = release_command(&r, release_fd);
		release_fd = -1;
		if (err)
			goto out;
	}
	err = run_loop(&r);
	/* Whatever went wrong during the capture, what was collected is still written. */
	{
		const double elapsed = (clock__ns(CLOCK_MONOTONIC) - started) / 1e9;
		int werr;

		if (!cfg.quiet)
			print_summary(&r, elapsed);
		werr = finish_delivery(&r);
		if (!err)
			err = werr;
	}
out:
	if (release_fd >= 0)
		close(release_fd); /* the held child sees EOF and exits without running */
	if (r.exec_fd >= 0)
		close(r.exec_fd);
	if (r.child > 0) {
		if (!r.child_exited) {
			if (err)
				kill(r.child, SIGTERM);
			waitpid(r.child, &r.child_status, 0);
		}
		if (!cfg.quiet && WIFEXITED(r.child_status) && WEXITSTATUS(r.child_status))
			log_info("the command exited with status %d", WEXITSTATUS(r.child_status));
	}
	deliverer__shutdown(r.deliver, 0, NULL);
	export_targets__release(&r.targets);
	capture__delete(r.cap);
	config__release(&cfg); /* header values read from files are scrubbed */
	if (err)
		return 1;
	return r.child > 0 ? command_status(r.child_status) : 0;
}

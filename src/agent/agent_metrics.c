// SPDX-License-Identifier: BSD-2-Clause
#include "agent/agent_metrics.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/safe_open.h"
#include "capture/drop_filter.h"
#include "capture/thread_ctx_link.h"
#include "capture/interp_link.h"
#include "interp/interp.h"
#include "collect/collector.h"
#include "hostprof_abi.h"

#define NR(a) (sizeof(a) / sizeof((a)[0]))

/* One family with one sample per label value: name{label="value"} n. */
struct labelled {
	const char *value;
	uint64_t n;
};

/*
 * A family to write: one unlabelled sample n (label NULL), or one sample per value of label. Each
 * stage's families are a table of these, written in order, so that /metrics keeps its order.
 */
struct family_row {
	const char *name;
	enum metrics_type type;
	const char *help;
	const char *label;
	const struct labelled *v;
	size_t nr;
	uint64_t n;
};

#define ONE(name, type, help, n)                                                                   \
	{                                                                                          \
		name, type, help, NULL, NULL, 0, n                                                 \
	}
#define FAMILY(name, type, help, label, v)                                                         \
	{                                                                                          \
		name, type, help, label, v, NR(v), 0                                               \
	}

static int family(struct metrics_text *m, const char *name, enum metrics_type type,
		  const char *help, const char *label, const struct labelled *v, size_t nr)
{
	int err = metrics_text__family(m, name, type, help);

	for (size_t i = 0; !err && i < nr; i++) {
		struct metrics_label l = {label, v[i].value};

		err = metrics_text__sample_u64(m, name, &l, label ? 1 : 0, v[i].n);
	}
	return err;
}

static int families(struct metrics_text *m, const struct family_row *rows, size_t nr)
{
	int err = 0;

	for (size_t i = 0; !err && i < nr; i++) {
		const struct family_row *r = &rows[i];
		struct labelled one = {NULL, r->n};

		if (r->label)
			err = family(m, r->name, r->type, r->help, r->label, r->v, r->nr);
		else
			err = family(m, r->name, r->type, r->help, NULL, &one, 1);
	}
	return err;
}

/* "user stack lost: stack map full" -> "user_stack_lost_stack_map_full" */
static void reason_label(const char *name, char *out, size_t len)
{
	size_t o = 0;

	for (; *name && o + 1 < len; name++) {
		if (isalnum((unsigned char)*name))
			out[o++] = (char)tolower((unsigned char)*name);
		else if (o && out[o - 1] != '_')
			out[o++] = '_';
	}
	while (o && out[o - 1] == '_')
		o--;
	out[o] = '\0';
}

/* Debug files from debuginfod: only when DEBUGINFOD_URLS is set. */
static int render_debuginfod(struct metrics_text *m, const struct capture *cap)
{
	struct debuginfod_fetch_stats st;
	struct labelled why[DEBUGINFOD_FAILURE__COUNT];

	if (!capture__debuginfod_stats(cap, &st))
		return 0;
	for (int i = 0; i < DEBUGINFOD_FAILURE__COUNT; i++)
		why[i] = (struct labelled){debuginfod_fetch__failure_name(i), st.failures[i]};

	struct labelled results[] = {{"ok", st.ok}, {"failed", st.failed}};
	const struct family_row rows[] = {
		FAMILY("hostprof_debuginfod_fetches_total", METRICS_COUNTER,
		       "Debug files asked of the DEBUGINFOD_URLS servers, by result.", "result",
		       results),
		FAMILY("hostprof_debuginfod_failures_total", METRICS_COUNTER,
		       "Failed debuginfod fetches, by reason (a failed build-id is retried after "
		       "10 "
		       "minutes).",
		       "reason", why),
		ONE("hostprof_debuginfod_pending", METRICS_GAUGE,
		    "Debug files queued or being fetched from debuginfod.", st.pending),
	};

	return families(m, rows, NR(rows));
}

/* What the kernel programs saw and lost. */
static int render_samples(struct metrics_text *m, struct capture *cap)
{
	const struct collector_stats *cs = capture__stats(cap);
	struct thread_ctx_link_stats ts;
	struct drop_filter_stats ds;
	char reasons[HP_LOSS__COUNT][48];
	struct labelled lost[HP_LOSS__COUNT];
	struct labelled kinds[] = {
		{"cpu", cs->samples_seen},
		{"offcpu", cs->offcpu_events},
		{"lock", cs->lock_events},
	};
	struct labelled walks[] = {
		{"offcpu_walked", cs->waits_walked[0]},
		{"offcpu_sampled", cs->waits_sampled[0]},
		{"offcpu_skipped", cs->waits_skipped[0]},
		{"lock_walked", cs->waits_walked[1]},
		{"lock_sampled", cs->waits_sampled[1]},
		{"lock_skipped", cs->waits_skipped[1]},
		{"offcpu_unwalked_long", cs->offcpu_unwalked_long},
		{"offcpu_walked_at_return", cs->offcpu_walked_at_return},
		{"lock_from_offcpu", cs->lock_switch_waits},
	};

	for (int i = 0; i < HP_LOSS__COUNT; i++) {
		reason_label(collector__loss_name(i), reasons[i], sizeof(reasons[i]));
		lost[i] = (struct labelled){reasons[i], cs->losses[i]};
	}

	capture__thread_ctx_stats(cap, &ts);
	capture__drop_stats(cap, &ds);
	struct labelled added[] = {{"pid", ds.pids}, {"cgroup", ds.cgroups}};
	struct labelled refused[] = {{"full", ds.full}, {"other", ds.failed}};
	const struct family_row rows[] = {
		FAMILY("hostprof_samples_total", METRICS_COUNTER,
		       "Events the kernel programs saw: cpu samples, off-CPU waits, lock waits.",
		       "type", kinds),
		FAMILY("hostprof_wait_stacks_total", METRICS_COUNTER,
		       "Off-CPU and lock waits by what was done: stack taken (walked), of which "
		       "kept by sampling a short wait (sampled), a short wait not kept (skipped), "
		       "or a long off-CPU wait kept with its kernel stack only after its walk was "
		       "left out by chance (offcpu_unwalked_long), or such a wait walked when its "
		       "thread returned to user mode instead (offcpu_walked_at_return, Linux 6.18; "
		       "counted in offcpu_walked too), or futex waits kept among the off-CPU "
		       "ones, for the contention profile, where wall or off-CPU is on "
		       "(lock_from_offcpu, weighted; counted in lock samples too).",
		       "outcome", walks),
		FAMILY("hostprof_samples_lost_total", METRICS_COUNTER,
		       "Samples (or their stacks) lost, by reason: raise the map sizes in limits "
		       "when "
		       "these grow.",
		       "reason", lost),
		ONE("hostprof_samples_left_out_total", METRICS_COUNTER,
		    "Samples of processes that relabel keep/drop rules left out.",
		    capture__samples_left_out(cap)),
		ONE("hostprof_kernel_filter_dropped_total", METRICS_COUNTER,
		    "Events (cpu samples, context switches, lock waits) of processes in the "
		    "kernel's "
		    "drop filter, skipped before any stack was taken.",
		    cs->filter_dropped),
		FAMILY("hostprof_kernel_filter_added_total", METRICS_COUNTER,
		       "Processes (by PID) and cgroups that relabel rules drop, put into the "
		       "kernel's drop filter.",
		       "kind", added),
		FAMILY("hostprof_kernel_filter_refused_total", METRICS_COUNTER,
		       "Drops the kernel's filter could not take (its map was full, or the cgroup "
		       "could not be read): their processes are left out after sampling.",
		       "reason", refused),
		ONE("hostprof_kernel_filter_cgroups", METRICS_GAUGE,
		    "Cgroups in the kernel's drop filter.", ds.cgroups_held),
		ONE("hostprof_drains_total", METRICS_COUNTER, "Times the BPF maps were drained.",
		    cs->drains),
		ONE("hostprof_trace_context_processes", METRICS_GAUGE,
		    "Processes whose OpenTelemetry thread context or Go pprof labels (the span of "
		    "each sample) the sampler reads.",
		    ts.processes),
		ONE("hostprof_samples_unlinked_total", METRICS_COUNTER,
		    "Samples kept without their span: their window had linked the most spans it "
		    "may (16384).",
		    ts.samples_unlinked),
	};

	return families(m, rows, NR(rows));
}

/* The processes read, and the memory and entries of the caches. */
static int render_caches(struct metrics_text *m, struct capture *cap,
			 const struct symbolizer_stats *ss)
{
	struct proc_watch_stats ws;
	struct capture_memory mem;
	struct labelled lookups[2] = {{"hit", 0}, {"miss", 0}};
	struct interp_link_stats il;
	struct interp_stats is;

	capture__watch_stats(cap, &ws);
	capture__memory(cap, &mem);
	capture__interp_stats(cap, &il, &is);
	capture__location_cache(cap, &lookups[0].n, &lookups[1].n);

	struct labelled watched[] = {
		{"read", ws.read}, {"exited", ws.missed}, {"dropped", ws.dropped}};
	struct labelled bytes[] = {
		{"processes", mem.sym.procs_bytes},	 {"binaries", mem.sym.dsos_bytes},
		{"dwarf", mem.sym.dwarf.bytes},		 {"locations", mem.location_bytes},
		{"perf_maps", mem.sym.perfmap_bytes},	 {"new_processes", mem.watch_bytes},
		{"kernel_symbols", mem.sym.ksyms_bytes}, {"python_code", is.code.bytes},
	};
	struct labelled interp_procs[] = {{"walked", il.walked}, {"not_walked", il.not_walked}};
	struct labelled code_lookups[] = {
		{"hit", is.code.hits},
		{"checked", is.code.checks},
		{"read", is.code.misses},
		{"replaced", is.code.replaced},
		{"read_failed", is.code.read_failures},
		{"not_code", is.code.type_mismatches},
		{"invalid", is.code.invalid},
	};
	struct labelled caches[] = {{"processes", ss->procs_cached}, {"binaries", ss->dsos_cached}};
	const struct family_row rows[] = {
		ONE("hostprof_processes_tracked", METRICS_GAUGE,
		    "Processes in the process table (maps snapshots).", ss->procs_cached),
		FAMILY("hostprof_processes_watched_total", METRICS_COUNTER,
		       "Processes read at their first sample, so that short-lived ones stay "
		       "symbolized: read, already exited, or dropped (the loop was behind).",
		       "result", watched),
		FAMILY("hostprof_cache_bytes", METRICS_GAUGE,
		       "Memory of each cache (what hostprof profile --stats prints).", "cache",
		       bytes),
		FAMILY("hostprof_interpreter_processes", METRICS_GAUGE,
		       "Processes running Python whose frames BPF walks (walked), and those it "
		       "does not (a release whose layout is not known, or no bpf_loop).",
		       "state", interp_procs),
		ONE("hostprof_python_code_objects", METRICS_GAUGE,
		    "Python code objects cached with their names and line tables.",
		    is.code.entries),
		FAMILY("hostprof_python_code_lookups_total", METRICS_COUNTER,
		       "Python frames named: from the cache (hit), after its header was read again "
		       "(checked), read whole (read; replaced: another code object at a known "
		       "address), or not named.",
		       "result", code_lookups),
		FAMILY("hostprof_symbol_cache_entries", METRICS_GAUGE,
		       "Entries of the symbolizer's caches (bounded by limits.max_processes and "
		       "limits.max_binaries).",
		       "cache", caches),
		FAMILY("hostprof_symbol_cache_requests_total", METRICS_COUNTER,
		       "Lookups of the address-to-location cache; a miss symbolizes the address.",
		       "result", lookups),
	};

	return families(m, rows, NR(rows));
}

/* DWARF handles, and how many frames got a name. */
static int render_symbols(struct metrics_text *m, const struct symbolizer_stats *ss)
{
	struct labelled refused[SAFE_OPEN_REASON__COUNT];
	struct labelled frames[] = {
		{"user", ss->frames_user - ss->frames_user_unresolved},
		{"user_unresolved", ss->frames_user_unresolved},
		{"user_process_gone", ss->frames_proc_gone},
		{"kernel", ss->frames_kernel - ss->frames_kernel_unresolved},
		{"kernel_unresolved", ss->frames_kernel_unresolved},
	};

	for (int i = 0; i < SAFE_OPEN_REASON__COUNT; i++)
		refused[i] = (struct labelled){safe_open__reason_name(i), ss->files_refused[i]};
	const struct family_row rows[] = {
		ONE("hostprof_dwarf_bytes", METRICS_GAUGE,
		    "Memory of DWARF: open handles and the line and inline tables built from them "
		    "(bounded by limits.max_dwarf_bytes).",
		    ss->dwarf.bytes),
		ONE("hostprof_dwarf_table_bytes", METRICS_GAUGE,
		    "Of hostprof_dwarf_bytes, the line and inline tables, which outlive the "
		    "handles.",
		    ss->dwarf.indexed_bytes),
		ONE("hostprof_dwarf_handles", METRICS_GAUGE,
		    "DWARF handles open (each holds its binary's debug sections, decompressed).",
		    ss->dwarf.handles),
		ONE("hostprof_dwarf_binaries_complete", METRICS_GAUGE,
		    "Binaries with every compilation unit's tables built, their DWARF never opened "
		    "again (those opened again and again for units not met before).",
		    ss->dwarf.complete),
		ONE("hostprof_dwarf_closed_total", METRICS_COUNTER,
		    "Binaries' DWARF tables dropped or closed to keep within "
		    "limits.max_dwarf_bytes.",
		    ss->dwarf.closed),
		ONE("hostprof_dwarf_released_total", METRICS_COUNTER,
		    "DWARF handles let go (after a drain that built nothing with them, or for the "
		    "budget), their tables kept.",
		    ss->dwarf.released),
		ONE("hostprof_dwarf_reopened_total", METRICS_COUNTER,
		    "DWARF handles opened again, for code in a compilation unit not met before.",
		    ss->dwarf.reopened),
		FAMILY("hostprof_frames_symbolized_total", METRICS_COUNTER,
		       "Frames symbolized, and those that stayed [unknown], by kind.", "result",
		       frames),
		FAMILY("hostprof_files_refused_total", METRICS_COUNTER,
		       "Files a process controls (binaries, debug files, perf maps), or parts of "
		       "them, not read: not a regular file, over a size cap, an unsafe path, a "
		       "section or line over its cap, a debug file too big to check.",
		       "reason", refused),
	};

	return families(m, rows, NR(rows));
}

/* The stack walker's unwind tables: only when it runs. */
static int render_unwind(struct metrics_text *m, struct capture *cap)
{
	struct labelled sv[HP_UNWIND_STOP__COUNT];
	struct unwind_report u;

	if (!capture__unwind_report(cap, &u))
		return 0;
	for (int i = 0; i < HP_UNWIND_STOP__COUNT; i++)
		sv[i] = (struct labelled){collector__unwind_stop_label(i), u.stops[i]};

	struct labelled rows_used[] = {{"used", u.tables.rows_used},
				       {"capacity", u.tables.rows_capacity}};
	struct labelled tables[] = {{"built", u.tables.tables_built},
				    {"disk_cache", u.tables.tables_cached},
				    {"failed", u.tables.tables_failed},
				    {"no_room", u.tables.no_room},
				    {"evicted", u.tables.evictions}};
	const struct family_row rows[] = {
		FAMILY("hostprof_unwind_stops_total", METRICS_COUNTER,
		       "User stack walks with unwind tables, by why the walk ended.", "reason", sv),
		FAMILY("hostprof_unwind_table_rows", METRICS_GAUGE,
		       "Rows of the BPF unwind table map (limits.unwind_table_rows).", "state",
		       rows_used),
		FAMILY("hostprof_unwind_tables_total", METRICS_COUNTER,
		       "Unwind tables of binaries, by what happened to them.", "event", tables),
		ONE("hostprof_unwind_binaries_loaded", METRICS_GAUGE,
		    "Binaries whose unwind tables are in the kernel now.", u.tables.binaries),
	};

	return families(m, rows, NR(rows));
}

static int render_capture(struct metrics_text *m, struct capture *cap)
{
	struct symbolizer_stats ss;
	int err;

	/* Once: it walks the process table to count its memory. */
	capture__symbolizer_stats(cap, &ss);
	err = render_samples(m, cap);
	if (!err)
		err = render_caches(m, cap, &ss);
	if (!err)
		err = render_symbols(m, &ss);
	if (!err)
		err = render_debuginfod(m, cap);
	if (!err)
		err = render_unwind(m, cap);
	return err;
}

/* Each exporter's counters, one family each with a sample for every exporter that is on. */
static int render_delivery(struct metrics_text *m, struct deliverer *d)
{
	enum { REQUESTS, SUCCESS, FAILURES, RETRIES, DROPS, QUEUE_BYTES, QUEUED, NR_COUNTERS };
	struct labelled v[NR_COUNTERS][2];
	struct delivery_report r;
	size_t n = 0;

	deliverer__stats(d, &r);
	const struct {
		bool on;
		const char *name;
		const struct exporter_stats *s;
	} exporters[] = {{r.otlp_on, "otlp", &r.otlp}, {r.pyroscope_on, "pyroscope", &r.pyroscope}};

	for (size_t i = 0; i < NR(exporters); i++) {
		const struct exporter_stats *s = exporters[i].s;

		if (!exporters[i].on)
			continue;

		const uint64_t counters[NR_COUNTERS] = {
			[REQUESTS] = s->submitted,
			[SUCCESS] = s->delivered,
			[FAILURES] = s->dropped_refused + s->dropped_full,
			[RETRIES] = s->retries,
			[DROPS] = s->dropped_full,
			[QUEUE_BYTES] = s->queued_bytes,
			[QUEUED] = s->queued,
		};

		for (int c = 0; c < NR_COUNTERS; c++)
			v[c][n] = (struct labelled){exporters[i].name, counters[c]};
		n++;
	}

	struct labelled files[] = {{"written", r.files_written}, {"failed", r.files_failed}};
	const struct family_row rows[] = {
		{"hostprof_export_requests_total", METRICS_COUNTER,
		 "Export requests queued for each exporter.", "exporter", v[REQUESTS], n, 0},
		{"hostprof_export_success_total", METRICS_COUNTER,
		 "Export requests the receiver accepted.", "exporter", v[SUCCESS], n, 0},
		{"hostprof_export_failures_total", METRICS_COUNTER,
		 "Export requests given up: refused by the receiver or dropped from a full queue.",
		 "exporter", v[FAILURES], n, 0},
		{"hostprof_export_retries_total", METRICS_COUNTER,
		 "Send attempts that failed and were retried.", "exporter", v[RETRIES], n, 0},
		{"hostprof_export_queue_drops_total", METRICS_COUNTER,
		 "Oldest requests dropped because the queue was over limits.export_queue_bytes.",
		 "exporter", v[DROPS], n, 0},
		{"hostprof_export_queue_bytes", METRICS_GAUGE, "Bytes waiting in the export queue.",
		 "exporter", v[QUEUE_BYTES], n, 0},
		{"hostprof_export_queue_requests", METRICS_GAUGE,
		 "Requests waiting in the export queue.", "exporter", v[QUEUED], n, 0},
		FAMILY("hostprof_files_total", METRICS_COUNTER,
		       "Window files written to export.directory.", "result", files),
	};

	return families(m, rows, NR(rows));
}

static int render_kubelet(struct metrics_text *m, struct kubelet *k)
{
	struct kubelet_stats ks;

	kubelet__stats(k, &ks);

	const struct family_row rows[] = {
		ONE("hostprof_kubelet_fetches_total", METRICS_COUNTER,
		    "Requests to the kubelet's /pods endpoint.", ks.fetches),
		ONE("hostprof_kubelet_fetch_failures_total", METRICS_COUNTER,
		    "Requests to /pods that failed (see the agent's log).", ks.fetch_failures),
		ONE("hostprof_kubelet_pods", METRICS_GAUGE,
		    "Pods known from the last /pods answer.", ks.pods),
		ONE("hostprof_kubelet_memory_bytes", METRICS_GAUGE,
		    "Memory of the pod table (an estimate).", ks.memory_bytes),
	};

	return families(m, rows, NR(rows));
}

static int render_identity(struct metrics_text *m, const struct identity *id)
{
	struct identity_stats is;

	identity__stats(id, &is);

	const struct family_row rows[] = {
		ONE("hostprof_identity_resolved_total", METRICS_COUNTER,
		    "Process identities resolved (once per process and window).", is.resolved),
		ONE("hostprof_identity_dropped_total", METRICS_COUNTER,
		    "Process identities that keep/drop rules left out.", is.dropped),
	};

	return families(m, rows, NR(rows));
}

/* The agent loop's own counters. */
static int render_agent(struct metrics_text *m, const struct agent_counters *ctr)
{
	struct labelled reloads[] = {{"ok", ctr->reloads_ok}, {"failed", ctr->reloads_failed}};
	const struct family_row rows[] = {
		ONE("hostprof_up", METRICS_GAUGE, "1 while the BPF programs are attached.",
		    ctr->attached),
		ONE("hostprof_windows_total", METRICS_COUNTER,
		    "Profile windows sealed and handed to the exporters.", ctr->windows),
		ONE("hostprof_window_failures_total", METRICS_COUNTER,
		    "Windows that could not be encoded, queued or written.", ctr->window_failures),
		FAMILY("hostprof_config_reloads_total", METRICS_COUNTER,
		       "SIGHUP reloads, applied or refused.", "result", reloads),
	};
	int err = families(m, rows, NR(rows));

	/* A double, between the counters: not a row. */
	if (!err)
		err = metrics_text__single(m, "hostprof_upload_interval_seconds", METRICS_GAUGE,
					   "The configured upload interval.",
					   ctr->upload_interval_s);
	if (!err)
		err = metrics_text__single(
			m, "hostprof_capture_loop_max_stall_seconds", METRICS_GAUGE,
			"The longest time between two turns of the capture loop since start (50 ms "
			"when nothing holds it up): how long it was blocked at most.",
			ctr->loop_max_gap_s);
	if (!err) {
		const struct family_row freq =
			ONE("hostprof_sampling_frequency_hertz", METRICS_GAUGE,
			    "The configured cpu sampling frequency, per CPU.", ctr->frequency_hz);

		err = families(m, &freq, 1);
	}
	return err;
}

int agent_metrics__render(struct metrics_text *m, const struct agent_counters *ctr,
			  struct capture *cap, struct deliverer *d, const struct identity *id,
			  struct kubelet *k)
{
	struct metrics_self self;
	int err;

	metrics_text__reset(m);
	err = render_agent(m, ctr);
	if (!err && cap)
		err = render_capture(m, cap);
	if (!err && id)
		err = render_identity(m, id);
	if (!err && d)
		err = render_delivery(m, d);
	if (!err && k)
		err = render_kubelet(m, k);
	if (!err && metrics__self(&self) == 0)
		err = metrics__write_self(m, &self);
	return err ? err : m->truncated ? -ENOSPC : 0;
}

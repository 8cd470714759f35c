// SPDX-License-Identifier: BSD-2-Clause
#include "agent/agent_metrics.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collect/collector.h"
#include "hostprof_abi.h"

/* One family with one sample per label value: name{label="value"} n. */
struct labelled {
	const char *value;
	uint64_t n;
};

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

static int one(struct metrics_text *m, const char *name, enum metrics_type type, const char *help,
	       uint64_t n)
{
	struct labelled v = {NULL, n};

	return family(m, name, type, help, NULL, &v, 1);
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
	struct labelled results[2], why[DEBUGINFOD_FAILURE__COUNT];
	int err;

	if (!capture__debuginfod_stats(cap, &st))
		return 0;
	results[0] = (struct labelled){"ok", st.ok};
	results[1] = (struct labelled){"failed", st.failed};
	for (int i = 0; i < DEBUGINFOD_FAILURE__COUNT; i++)
		why[i] = (struct labelled){debuginfod_fetch__failure_name(i), st.failures[i]};
	err = family(m, "hostprof_debuginfod_fetches_total", METRICS_COUNTER,
		     "Debug files asked of the DEBUGINFOD_URLS servers, by result.", "result",
		     results, 2);
	if (!err)
		err = family(m, "hostprof_debuginfod_failures_total", METRICS_COUNTER,
			     "Failed debuginfod fetches, by reason (a failed build-id is retried "
			     "after 10 minutes).",
			     "reason", why, DEBUGINFOD_FAILURE__COUNT);
	if (!err)
		err = one(m, "hostprof_debuginfod_pending", METRICS_GAUGE,
			  "Debug files queued or being fetched from debuginfod.", st.pending);
	return err;
}

/* What the kernel programs saw and lost. */
static int render_samples(struct metrics_text *m, struct capture *cap)
{
	const struct collector_stats *cs = capture__stats(cap);
	char reasons[HP_LOSS__COUNT][48];
	struct labelled v[HP_LOSS__COUNT];
	struct labelled kinds[] = {
		{"cpu", cs->samples_seen},
		{"offcpu", cs->offcpu_events},
		{"lock", cs->lock_events},
	};
	int err;

	err = family(m, "hostprof_samples_total", METRICS_COUNTER,
		     "Events the kernel programs saw: cpu samples, off-CPU waits, lock waits.",
		     "type", kinds, 3);
	for (int i = 0; i < HP_LOSS__COUNT; i++) {
		reason_label(collector__loss_name(i), reasons[i], sizeof(reasons[i]));
		v[i] = (struct labelled){reasons[i], cs->losses[i]};
	}
	if (!err)
		err = family(m, "hostprof_samples_lost_total", METRICS_COUNTER,
			     "Samples (or their stacks) lost, by reason: raise the map sizes in "
			     "limits when these grow.",
			     "reason", v, HP_LOSS__COUNT);
	if (!err)
		err = one(m, "hostprof_samples_left_out_total", METRICS_COUNTER,
			  "Samples of processes that relabel keep/drop rules left out.",
			  capture__samples_left_out(cap));
	if (!err)
		err = one(m, "hostprof_drains_total", METRICS_COUNTER,
			  "Times the BPF maps were drained.", cs->drains);
	return err;
}

/* The processes read, and the memory and entries of the caches. */
static int render_caches(struct metrics_text *m, struct capture *cap,
			 const struct symbolizer_stats *ss)
{
	struct proc_watch_stats ws;
	struct capture_memory mem;
	struct labelled lookups[2] = {{"hit", 0}, {"miss", 0}};
	int err;

	capture__watch_stats(cap, &ws);
	capture__memory(cap, &mem);
	capture__location_cache(cap, &lookups[0].n, &lookups[1].n);

	struct labelled watched[] = {
		{"read", ws.read}, {"exited", ws.missed}, {"dropped", ws.dropped}};
	struct labelled bytes[] = {
		{"processes", mem.sym.procs_bytes},   {"binaries", mem.sym.dsos_bytes},
		{"dwarf", mem.sym.dwarf_bytes},	      {"locations", mem.location_bytes},
		{"perf_maps", mem.sym.perfmap_bytes}, {"new_processes", mem.watch_bytes},
	};
	struct labelled caches[] = {{"processes", ss->procs_cached}, {"binaries", ss->dsos_cached}};

	err = one(m, "hostprof_processes_tracked", METRICS_GAUGE,
		  "Processes in the process table (maps snapshots).", ss->procs_cached);
	if (!err)
		err = family(m, "hostprof_processes_watched_total", METRICS_COUNTER,
			     "Processes read at their first sample, so that short-lived ones stay "
			     "symbolized: read, already exited, or dropped (the loop was behind).",
			     "result", watched, 3);
	if (!err)
		err = family(m, "hostprof_cache_bytes", METRICS_GAUGE,
			     "Memory of each cache (what hostprof profile --stats prints).",
			     "cache", bytes, sizeof(bytes) / sizeof(bytes[0]));
	if (!err)
		err = family(m, "hostprof_symbol_cache_entries", METRICS_GAUGE,
			     "Entries of the symbolizer's caches (bounded by limits.max_processes "
			     "and limits.max_binaries).",
			     "cache", caches, 2);
	if (!err)
		err = family(
			m, "hostprof_symbol_cache_requests_total", METRICS_COUNTER,
			"Lookups of the address-to-location cache; a miss symbolizes the address.",
			"result", lookups, 2);
	return err;
}

/* DWARF handles, and how many frames got a name. */
static int render_symbols(struct metrics_text *m, const struct symbolizer_stats *ss)
{
	struct labelled frames[] = {
		{"user", ss->frames_user - ss->frames_user_unresolved},
		{"user_unresolved", ss->frames_user_unresolved},
		{"user_process_gone", ss->frames_proc_gone},
		{"kernel", ss->frames_kernel - ss->frames_kernel_unresolved},
		{"kernel_unresolved", ss->frames_kernel_unresolved},
	};
	int err;

	err = one(m, "hostprof_dwarf_bytes", METRICS_GAUGE,
		  "Memory of the open DWARF handles (bounded by limits.max_dwarf_bytes).",
		  ss->dwarf_bytes);
	if (!err)
		err = one(m, "hostprof_dwarf_closed_total", METRICS_COUNTER,
			  "DWARF handles closed to keep within limits.max_dwarf_bytes.",
			  ss->dwarf_closed);
	if (!err)
		err = family(m, "hostprof_frames_symbolized_total", METRICS_COUNTER,
			     "Frames symbolized, and those that stayed [unknown], by kind.",
			     "result", frames, 5);
	return err;
}

/* The stack walker's unwind tables: only when it runs. */
static int render_unwind(struct metrics_text *m, struct capture *cap)
{
	static const char *const stops[HP_UNWIND_STOP__COUNT] = {
		[HP_UNWIND_STOP_END] = "end_of_stack",
		[HP_UNWIND_STOP_NO_TABLE] = "no_table",
		[HP_UNWIND_STOP_DEPTH] = "depth_limit",
		[HP_UNWIND_STOP_BAD_READ] = "bad_read",
		[HP_UNWIND_STOP_UNSUPPORTED] = "unsupported_rule",
		[HP_UNWIND_STOP_NO_PROCESS] = "process_not_loaded",
	};
	struct labelled sv[HP_UNWIND_STOP__COUNT];
	struct unwind_report u;
	int err;

	if (!capture__unwind_report(cap, &u))
		return 0;

	struct labelled rows[] = {{"used", u.tables.rows_used},
				  {"capacity", u.tables.rows_capacity}};
	struct labelled tables[] = {{"built", u.tables.tables_built},
				    {"disk_cache", u.tables.tables_cached},
				    {"failed", u.tables.tables_failed},
				    {"no_room", u.tables.no_room},
				    {"evicted", u.tables.evictions}};

	for (int i = 0; i < HP_UNWIND_STOP__COUNT; i++)
		sv[i] = (struct labelled){stops[i], u.stops[i]};
	err = family(m, "hostprof_unwind_stops_total", METRICS_COUNTER,
		     "User stack walks with unwind tables, by why the walk ended.", "reason", sv,
		     HP_UNWIND_STOP__COUNT);
	if (!err)
		err = family(m, "hostprof_unwind_table_rows", METRICS_GAUGE,
			     "Rows of the BPF unwind table map (limits.unwind_table_rows).",
			     "state", rows, 2);
	if (!err)
		err = family(m, "hostprof_unwind_tables_total", METRICS_COUNTER,
			     "Unwind tables of binaries, by what happened to them.", "event",
			     tables, 5);
	if (!err)
		err = one(m, "hostprof_unwind_binaries_loaded", METRICS_GAUGE,
			  "Binaries whose unwind tables are in the kernel now.", u.tables.binaries);
	return err;
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

static int exporter_family(struct metrics_text *m, const char *name, enum metrics_type type,
			   const char *help, const struct delivery_report *r,
			   uint64_t (*pick)(const struct exporter_stats *s))
{
	int err = metrics_text__family(m, name, type, help);

	if (!err && r->otlp_on) {
		struct metrics_label l = {"exporter", "otlp"};

		err = metrics_text__sample_u64(m, name, &l, 1, pick(&r->otlp));
	}
	if (!err && r->pyroscope_on) {
		struct metrics_label l = {"exporter", "pyroscope"};

		err = metrics_text__sample_u64(m, name, &l, 1, pick(&r->pyroscope));
	}
	return err;
}

static uint64_t pick_submitted(const struct exporter_stats *s)
{
	return s->submitted;
}

static uint64_t pick_delivered(const struct exporter_stats *s)
{
	return s->delivered;
}

static uint64_t pick_failed(const struct exporter_stats *s)
{
	return s->dropped_refused + s->dropped_full;
}

static uint64_t pick_retries(const struct exporter_stats *s)
{
	return s->retries;
}

static uint64_t pick_dropped_full(const struct exporter_stats *s)
{
	return s->dropped_full;
}

static uint64_t pick_queued_bytes(const struct exporter_stats *s)
{
	return s->queued_bytes;
}

static uint64_t pick_queued(const struct exporter_stats *s)
{
	return s->queued;
}

static int render_delivery(struct metrics_text *m, struct deliverer *d)
{
	struct delivery_report r;
	int err;

	deliverer__stats(d, &r);
	err = exporter_family(m, "hostprof_export_requests_total", METRICS_COUNTER,
			      "Export requests queued for each exporter.", &r, pick_submitted);
	if (!err)
		err = exporter_family(m, "hostprof_export_success_total", METRICS_COUNTER,
				      "Export requests the receiver accepted.", &r, pick_delivered);
	if (!err)
		err = exporter_family(
			m, "hostprof_export_failures_total", METRICS_COUNTER,
			"Export requests given up: refused by the receiver or dropped "
			"from a full queue.",
			&r, pick_failed);
	if (!err)
		err = exporter_family(m, "hostprof_export_retries_total", METRICS_COUNTER,
				      "Send attempts that failed and were retried.", &r,
				      pick_retries);
	if (!err)
		err = exporter_family(m, "hostprof_export_queue_drops_total", METRICS_COUNTER,
				      "Oldest requests dropped because the queue was over "
				      "limits.export_queue_bytes.",
				      &r, pick_dropped_full);
	if (!err)
		err = exporter_family(m, "hostprof_export_queue_bytes", METRICS_GAUGE,
				      "Bytes waiting in the export queue.", &r, pick_queued_bytes);
	if (!err)
		err = exporter_family(m, "hostprof_export_queue_requests", METRICS_GAUGE,
				      "Requests waiting in the export queue.", &r, pick_queued);
	if (!err) {
		struct labelled files[] = {{"written", r.files_written},
					   {"failed", r.files_failed}};

		err = family(m, "hostprof_files_total", METRICS_COUNTER,
			     "Window files written to export.directory.", "result", files, 2);
	}
	return err;
}

static int render_kubelet(struct metrics_text *m, struct kubelet *k)
{
	struct kubelet_stats ks;
	int err;

	kubelet__stats(k, &ks);
	err = one(m, "hostprof_kubelet_fetches_total", METRICS_COUNTER,
		  "Requests to the kubelet's /pods endpoint.", ks.fetches);
	if (!err)
		err = one(m, "hostprof_kubelet_fetch_failures_total", METRICS_COUNTER,
			  "Requests to /pods that failed (see the agent's log).",
			  ks.fetch_failures);
	if (!err)
		err = one(m, "hostprof_kubelet_pods", METRICS_GAUGE,
			  "Pods known from the last /pods answer.", ks.pods);
	if (!err)
		err = one(m, "hostprof_kubelet_memory_bytes", METRICS_GAUGE,
			  "Memory of the pod table (an estimate).", ks.memory_bytes);
	return err;
}

int agent_metrics__render(struct metrics_text *m, const struct agent_counters *ctr,
			  struct capture *cap, struct deliverer *d, const struct identity *id,
			  struct kubelet *k)
{
	struct metrics_self self;
	int err;

	metrics_text__reset(m);
	err = one(m, "hostprof_up", METRICS_GAUGE, "1 while the BPF programs are attached.",
		  ctr->attached);
	if (!err)
		err = one(m, "hostprof_windows_total", METRICS_COUNTER,
			  "Profile windows sealed and handed to the exporters.", ctr->windows);
	if (!err)
		err = one(m, "hostprof_window_failures_total", METRICS_COUNTER,
			  "Windows that could not be encoded, queued or written.",
			  ctr->window_failures);
	if (!err) {
		struct labelled reloads[] = {{"ok", ctr->reloads_ok},
					     {"failed", ctr->reloads_failed}};

		err = family(m, "hostprof_config_reloads_total", METRICS_COUNTER,
			     "SIGHUP reloads, applied or refused.", "result", reloads, 2);
	}
	if (!err)
		err = metrics_text__single(m, "hostprof_upload_interval_seconds", METRICS_GAUGE,
					   "The configured upload interval.",
					   ctr->upload_interval_s);
	if (!err)
		err = one(m, "hostprof_sampling_frequency_hertz", METRICS_GAUGE,
			  "The configured cpu sampling frequency, per CPU.", ctr->frequency_hz);
	if (!err && cap)
		err = render_capture(m, cap);
	if (!err && id) {
		struct identity_stats is;

		identity__stats(id, &is);
		err = one(m, "hostprof_identity_resolved_total", METRICS_COUNTER,
			  "Process identities resolved (once per process and window).",
			  is.resolved);
		if (!err)
			err = one(m, "hostprof_identity_dropped_total", METRICS_COUNTER,
				  "Process identities that keep/drop rules left out.", is.dropped);
	}
	if (!err && d)
		err = render_delivery(m, d);
	if (!err && k)
		err = render_kubelet(m, k);
	if (!err && metrics__self(&self) == 0)
		err = metrics__write_self(m, &self);
	return err ? err : m->truncated ? -ENOSPC : 0;
}

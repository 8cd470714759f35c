// SPDX-License-Identifier: BSD-2-Clause
/*
 * `hostprof agent`: continuous whole-host profiling. One window of profiles per upload interval,
 * handed to the exporters (OTLP, Pyroscope, files) without ever waiting on the network; processes
 * named by the identity rules; /healthz, /readyz and /metrics; SIGTERM flushes the last window
 * within the export deadline, SIGHUP reloads the configuration between two windows.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_metrics.h"
#include "collect/bpf_session.h"
#include "capture/capture.h"
#include "base/clock.h"
#include "cmd/cmds.h"
#include "model/config.h"
#include "agent/config_load.h"
#include "export/deliver.h"
#include "agent/httpd.h"
#include "agent/liveness.h"
#include "agent/privileges.h"
#include "agent/watchdog.h"
#include "process/identity.h"
#include "process/kubelet.h"
#include "base/log.h"
#include "agent/metrics.h"
#include "export/otlp_config.h"

#define NSEC_PER_SEC 1000000000ULL
#define TICK_NS (50 * 1000 * 1000ULL)
#define DRAIN_NS NSEC_PER_SEC

static volatile sig_atomic_t stop_signal, reload_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void on_reload(int sig)
{
	reload_signal = sig;
}

static const char *env_lookup(const char *name)
{
	return getenv(name);
}

static int load_config(const struct agent_flags *f, struct config *c, struct config_origin *o,
		       char *err, size_t len)
{
	return config_load__all(f, c, o, env_lookup, err, len);
}

/* One running agent. The capture and the deliverer keep pointers into the configuration they
 * were made with, so a reload keeps an old configuration alive while either still uses it. */
struct agent {
	const struct agent_flags *flags;
	struct config *cfg; /* the current configuration */
	struct config_origin origin;
	struct config *cap_cfg;	    /* the one the capture was made with */
	struct config *deliver_cfg; /* the one the deliverer was made with */
	struct config *replaced;    /* during a reload, the one being replaced: freed at its end */
	struct capture *cap;
	struct deliverer *deliver;
	struct export_targets targets; /* what the deliverer sends to; it points into them */
	struct kubelet *kubelet;
	struct identity *identity;
	struct httpd *httpd;
	struct liveness live; /* the loop's ticks, judged by /healthz */
	struct watchdog wd;   /* systemd's WatchdogSec=, pet by the loop */
	bool low_port;	      /* CAP_NET_BIND_SERVICE kept until the port is bound */
	struct metrics_text metrics;
	struct agent_counters ctr;
	uint64_t window_start; /* CLOCK_MONOTONIC */
	/* Export counts at the last window, to tell whether the last export got through. */
	uint64_t seen_delivered, seen_refused, seen_dropped;
	bool export_trouble;
};

static void config_free(struct config *c)
{
	if (!c)
		return;
	config__release(c);
	free(c);
}

/* Free a configuration that nothing uses any more. The one a reload replaces is still read until
 * the reload ends (its export deadline, the summary line), which frees it then. */
static void retire_config(struct agent *a, struct config *c)
{
	if (c && c != a->cfg && c != a->cap_cfg && c != a->deliver_cfg && c != a->replaced)
		config_free(c);
}

/* ---- export ---- */

/* OTEL_EXPORTER_OTLP_* beat the file: a key set only by the file yields to its variable. */
static const char *file_yields(const struct agent *a, const char *key, const char *value,
			       const char *var)
{
	static const char *const prefixes[] = {"OTEL_EXPORTER_OTLP_PROFILES_",
					       "OTEL_EXPORTER_OTLP_"};
	char name[96];

	if (config_load__source(&a->origin, key) != CONFIG_SRC_FILE)
		return value;
	for (size_t i = 0; i < 2; i++) {
		const char *v;

		snprintf(name, sizeof(name), "%s%s", prefixes[i], var);
		v = getenv(name);
		if (v && v[0])
			return NULL;
	}
	return value;
}

static int start_delivery(struct agent *a)
{
	const struct config *c = a->cfg;
	struct deliver_opts o;
	struct otlp_flags f = {
		.endpoint = file_yields(a, "export.otlp.endpoint", c->otlp_endpoint, "ENDPOINT"),
		.protocol = file_yields(a, "export.otlp.protocol", c->otlp_protocol, "PROTOCOL"),
		.compression = file_yields(a, "export.otlp.compression", c->otlp_compression,
					   "COMPRESSION"),
		.timeout_ms = file_yields(a, "export.otlp.timeout", c->otlp_timeout_ms, "TIMEOUT"),
		.ca_file = file_yields(a, "export.otlp.ca_file", c->otlp_ca_file, "CERTIFICATE"),
		/* Headers come only from the file (headers, header_files): the environment's
		 * OTEL_EXPORTER_OTLP_HEADERS beat them per name. */
		.base_headers = c->otlp_headers,
		.nr_base_headers = c->nr_otlp_headers,
		.insecure =
			file_yields(a, "export.otlp.insecure", "", "INSECURE") && c->otlp_insecure,
	};
	int err = export_targets__resolve(&a->targets, &f, c);

	if (err)
		return err;
	if (!a->targets.otlp_on && !a->targets.pyroscope_on && !c->output_dir) {
		log_error("nowhere to send profiles: set export.otlp.endpoint (or "
			  "OTEL_EXPORTER_OTLP_ENDPOINT, --otlp-endpoint), export.pyroscope.url, or "
			  "export.directory (--output-dir)");
		export_targets__release(&a->targets);
		return -EINVAL;
	}
	if (c->output_dir && access(c->output_dir, W_OK) != 0) {
		err = -errno;
		log_error("export.directory '%s': %s (create it, or fix its permissions)",
			  c->output_dir, strerror(-err));
		export_targets__release(&a->targets);
		return err;
	}
	export_targets__opts(&a->targets, c, &o);
	o.window_dir = c->output_dir;
	o.keep_files = c->keep_files;
	a->deliver = deliverer__new(&o);
	if (!a->deliver) {
		err = -errno;
		export_targets__release(&a->targets);
		return err;
	}
	a->deliver_cfg = a->cfg;
	if (c->output_dir)
		log_info("writing each window into %s (the newest %zu per type are kept)",
			 c->output_dir, c->keep_files);
	return 0;
}

static void stop_delivery(struct agent *a, double deadline_s)
{
	struct delivery_report rep;
	struct config *old = a->deliver_cfg;

	if (!a->deliver)
		return;
	deliverer__shutdown(a->deliver, (int64_t)(deadline_s * 1000), &rep);
	a->deliver = NULL;
	a->deliver_cfg = NULL;
	export_targets__release(&a->targets);
	if (rep.otlp.undelivered || rep.pyroscope.undelivered)
		log_warn("%" PRIu64 " export requests were not delivered within the deadline",
			 rep.otlp.undelivered + rep.pyroscope.undelivered);
	retire_config(a, old);
}

/* ---- identity ---- */

static bool kube_wanted(const struct config *c)
{
	if (c->kube_mode == KUBE_OFF)
		return false;
	return c->kube_mode == KUBE_ON || getenv("KUBERNETES_SERVICE_HOST");
}

static int start_kubelet(struct agent *a)
{
	const struct config *c = a->cfg;
	char url[512];
	struct kubelet_opts o = {
		.token_file = c->kube_token_file,
		.ca_file = c->kube_ca_file,
		.insecure = c->kube_insecure,
		.refresh_interval_ms = (int64_t)(c->kube_refresh_s * 1000),
		.max_pods = 1024,
	};

	if (!kube_wanted(c))
		return 0;
	if (c->kube_kubelet_url) {
		snprintf(url, sizeof(url), "%s", c->kube_kubelet_url);
	} else if (c->kube_node_name) {
		snprintf(url, sizeof(url), "https://%s:10250/pods", c->kube_node_name);
	} else {
		log_error("kubernetes: no node name: set NODE_NAME from the Downward API "
			  "(spec.nodeName), or kubernetes.kubelet_url, or kubernetes.enabled: "
			  "false");
		return -EINVAL;
	}
	o.url = url;
	a->kubelet = kubelet__new(&o);
	if (!a->kubelet) {
		log_error("kubernetes: cannot start the kubelet client for %s: %s", url,
			  strerror(errno));
		return -errno;
	}
	log_info("kubernetes: pod metadata from %s", url);
	return 0;
}

static struct identity *make_identity(struct agent *a, const struct config *c)
{
	struct identity_opts o = {
		.rules = c->relabel,
		.nr_rules = c->nr_relabel,
		.kubelet = a->kubelet,
		.docker_root = c->docker_root,
		.config_file = a->origin.file[0] ? a->origin.file : NULL,
	};
	char err[512];
	struct identity *id = identity__new(&o, err, sizeof(err));

	if (!id)
		log_error("%s", errno == EINVAL ? err : strerror(errno));
	return id;
}

static int start_identity(struct agent *a)
{
	a->identity = make_identity(a, a->cfg);
	return a->identity ? 0 : -EINVAL;
}

/* ---- capture ---- */

static int start_capture(struct agent *a)
{
	a->cap = capture__new(a->cfg);
	if (!a->cap)
		return -errno;
	a->cap_cfg = a->cfg;
	capture__set_identity(a->cap, a->identity);
	a->window_start = clock__ns(CLOCK_MONOTONIC);
	return capture__start(a->cap);
}

static void stop_capture(struct agent *a)
{
	struct config *old = a->cap_cfg;

	capture__delete(a->cap);
	a->cap = NULL;
	a->cap_cfg = NULL;
	a->ctr.attached = false;
	retire_config(a, old);
}

/* Hand a window's profiles to every destination and free them. */
static void deliver_window(struct agent *a, struct profile **profiles, size_t n)
{
	const struct profile *view[CAPTURE_MAX_TYPES];
	size_t samples = 0;

	for (size_t i = 0; i < n; i++) {
		view[i] = profiles[i];
		samples += profile__nr_samples(profiles[i]) > 1
				   ? profile__nr_samples(profiles[i]) - 1
				   : 0;
	}
	/* Without a deliverer (export settings that a reload could not start), the window is
	 * counted as failed: nothing can take it. */
	if (n && (!a->deliver || deliverer__deliver(a->deliver, view, n)))
		a->ctr.window_failures++;
	a->ctr.windows++;
	log_debug("window %" PRIu64 ": %zu profiles, %zu distinct samples, %zu processes",
		  a->ctr.windows, n, samples, n ? profile__nr_processes(profiles[0]) : 0);
	for (size_t i = 0; i < n; i++)
		profile__delete(profiles[i]);
	/* A window's model is freed as a whole: give the pages back rather than let the heap keep
	 * its high-water mark, so that the agent's RSS follows what it holds. */
	malloc_trim(0);
}

static void seal_window(struct agent *a)
{
	struct profile *profiles[CAPTURE_MAX_TYPES];
	size_t n = 0;
	int err;

	if (!a->cap)
		return;
	err = capture__rotate(a->cap, profiles, &n);

	if (err)
		log_error("sealing the window: %s; the next window starts anyway", strerror(-err));
	deliver_window(a, profiles, n);
	a->window_start = clock__ns(CLOCK_MONOTONIC);
}

/* ---- health ---- */

static void update_health(struct agent *a)
{
	struct delivery_report r;
	const char *why = NULL;
	uint64_t delivered, refused, dropped;

	if (!a->httpd)
		return;
	if (!a->ctr.attached)
		why = "the BPF programs are not attached";
	if (!why && a->deliver) {
		deliverer__stats(a->deliver, &r);
		delivered = r.otlp.delivered + r.pyroscope.delivered;
		refused = r.otlp.dropped_refused + r.pyroscope.dropped_refused;
		dropped = r.otlp.dropped_full + r.pyroscope.dropped_full;
		/* The last export went wrong when something was refused or dropped since the
		 * last look and nothing got through; one that is queued or retrying is fine. */
		if (refused > a->seen_refused || dropped > a->seen_dropped)
			a->export_trouble = delivered == a->seen_delivered;
		else if (delivered > a->seen_delivered)
			a->export_trouble = false;
		a->seen_delivered = delivered;
		a->seen_refused = refused;
		a->seen_dropped = dropped;
		if (a->export_trouble)
			why = "the last export failed: the receiver refused it or the queue "
			      "overflowed (see the log)";
	}
	httpd__set_health(a->httpd, true);
	httpd__set_ready(a->httpd, why == NULL, why);
}

static void publish_metrics(struct agent *a)
{
	if (!a->httpd)
		return;
	a->ctr.upload_interval_s = a->cfg->upload_interval_s;
	a->ctr.frequency_hz = a->cfg->frequency_hz;
	a->ctr.loop_max_gap_s = liveness__max_gap(&a->live) / 1e9;
	if (agent_metrics__render(&a->metrics, &a->ctr, a->cap, a->deliver, a->identity,
				  a->kubelet) == -ENOSPC)
		log_debug("/metrics: the text was cut at its size cap");
	httpd__publish_metrics(a->httpd, a->metrics.buf ? a->metrics.buf : "", a->metrics.len);
}

static int start_httpd(struct agent *a)
{
	char err[256];

	if (!a->cfg->http_listen)
		return 0;
	a->httpd = httpd__new(a->cfg->http_listen, err, sizeof(err));
	if (!a->httpd) {
		log_error("http_listen: %s", err);
		return -EINVAL;
	}
	httpd__set_health(a->httpd, true);
	httpd__set_liveness(a->httpd, &a->live);
	httpd__set_ready(a->httpd, false, "starting");
	return 0;
}

/* ---- reload ---- */

static bool same_str(const char *x, const char *y)
{
	return (!x && !y) || (x && y && !strcmp(x, y));
}

/* The settings that the BPF programs and their maps were made with. */
static bool capture_changed(const struct config *x, const struct config *y)
{
	return x->frequency_hz != y->frequency_hz || x->types != y->types ||
	       x->include_idle != y->include_idle || x->unwind_tables != y->unwind_tables ||
	       x->unwind_depth != y->unwind_depth || x->unwind_rows != y->unwind_rows ||
	       x->stack_map_entries != y->stack_map_entries ||
	       x->counts_map_entries != y->counts_map_entries || x->max_procs != y->max_procs ||
	       x->max_dsos != y->max_dsos || x->max_cached_locations != y->max_cached_locations ||
	       x->max_symbol_bytes != y->max_symbol_bytes ||
	       !same_str(x->cache_dir, y->cache_dir) ||
	       x->debuginfod_timeout_s != y->debuginfod_timeout_s;
}

static bool lists_differ(const char *const *x, size_t nx, const char *const *y, size_t ny)
{
	if (nx != ny)
		return true;
	for (size_t i = 0; i < nx; i++)
		if (strcmp(x[i], y[i]))
			return true;
	return false;
}

static bool delivery_changed(const struct config *x, const struct config *y)
{
	return !same_str(x->otlp_endpoint, y->otlp_endpoint) ||
	       !same_str(x->otlp_protocol, y->otlp_protocol) ||
	       !same_str(x->otlp_compression, y->otlp_compression) ||
	       !same_str(x->otlp_timeout_ms, y->otlp_timeout_ms) ||
	       !same_str(x->otlp_ca_file, y->otlp_ca_file) ||
	       x->otlp_insecure != y->otlp_insecure ||
	       x->otlp_samples_count != y->otlp_samples_count ||
	       lists_differ(x->otlp_headers, x->nr_otlp_headers, y->otlp_headers,
			    y->nr_otlp_headers) ||
	       !same_str(x->pyroscope_url, y->pyroscope_url) ||
	       !same_str(x->pyroscope_api, y->pyroscope_api) ||
	       lists_differ(x->pyroscope_headers, x->nr_pyroscope_headers, y->pyroscope_headers,
			    y->nr_pyroscope_headers) ||
	       !same_str(x->output_dir, y->output_dir) || x->keep_files != y->keep_files ||
	       x->export_queue_bytes != y->export_queue_bytes;
}

static bool kube_changed(const struct config *x, const struct config *y)
{
	return kube_wanted(x) != kube_wanted(y) ||
	       !same_str(x->kube_node_name, y->kube_node_name) ||
	       !same_str(x->kube_kubelet_url, y->kube_kubelet_url) ||
	       !same_str(x->kube_token_file, y->kube_token_file) ||
	       !same_str(x->kube_ca_file, y->kube_ca_file) ||
	       x->kube_insecure != y->kube_insecure || x->kube_refresh_s != y->kube_refresh_s;
}

/*
 * SIGHUP: read the configuration again. A bad one is refused and the running one goes on. The
 * samples collected so far are delivered as a window of their own before anything that they
 * depend on is replaced.
 */
static void reload(struct agent *a)
{
	struct config *next = calloc(1, sizeof(*next)), *prev = a->cfg;
	struct config_origin origin;
	struct identity *id;
	char err[1024];
	bool cap_change, deliver_change, kube_change, http_change;

	sd_notify(0, "RELOADING=1");
	if (!next || load_config(a->flags, next, &origin, err, sizeof(err))) {
		log_error("reload refused, the running configuration stays: %s",
			  next ? err : strerror(ENOMEM));
		free(next);
		a->ctr.reloads_failed++;
		sd_notify(0, "READY=1");
		return;
	}
	cap_change = capture_changed(prev, next);
	deliver_change = delivery_changed(prev, next);
	kube_change = kube_changed(prev, next);
	http_change = !same_str(prev->http_listen, next->http_listen);

	/* What was collected under the old settings and rules leaves under them. */
	seal_window(a);
	a->replaced = prev;
	a->cfg = next;
	a->origin = origin;
	log_set_level(next->log_level);
	liveness__set_timeout(&a->live, (uint64_t)(next->liveness_timeout_s * NSEC_PER_SEC));
	if (kube_change) {
		/* The identity borrows the client: it is replaced right below. */
		capture__set_identity(a->cap, NULL);
		identity__delete(a->identity);
		a->identity = NULL;
		kubelet__delete(a->kubelet);
		a->kubelet = NULL;
		if (start_kubelet(a))
			log_error("reload: no Kubernetes metadata until the next reload");
	}
	/* The rules were checked when the file was read: only memory can fail here, and then
	 * processes are named by the plain rules until the next reload. */
	id = make_identity(a, next);
	capture__set_identity(a->cap, id);
	capture__set_cmdline_mode(a->cap, next->cmdline_mode);
	identity__delete(a->identity);
	a->identity = id;
	if (deliver_change) {
		stop_delivery(a, prev->export_deadline_s);
		if (start_delivery(a))
			log_error("reload: the new export settings do not work; profiles are "
				  "collected but not exported until the next reload");
	}
	if (cap_change) {
		stop_capture(a);
		if (start_capture(a))
			log_error("reload: the BPF programs could not be loaded with the new "
				  "settings; fix the configuration and reload again");
		else
			a->ctr.attached = true;
	}
	if (http_change) {
		httpd__delete(a->httpd);
		a->httpd = NULL;
		if (start_httpd(a))
			log_error("reload: the HTTP endpoints are off until the next reload");
	}
	a->replaced = NULL;
	retire_config(a, prev);
	a->ctr.reloads_ok++;
	log_info("configuration reloaded: %u Hz, upload every %g s%s%s%s", next->frequency_hz,
		 next->upload_interval_s, cap_change ? "; BPF programs reloaded" : "",
		 deliver_change ? "; exporters restarted" : "",
		 kube_change ? "; kubelet client restarted" : "");
	sd_notify(0, "READY=1");
}

/* ---- the loop ---- */

/*
 * The loop is alive: only here, once per iteration, so that /healthz and systemd's watchdog
 * both see a loop stuck anywhere (a blocking read, a slow build, a reload that hangs).
 */
static void loop_tick(struct agent *a)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC);

	liveness__tick(&a->live, now);
	watchdog__tick(&a->wd, now);
}

static int run(struct agent *a)
{
	uint64_t next_drain = clock__ns(CLOCK_MONOTONIC) + DRAIN_NS;
	uint64_t next_publish = 0;

	liveness__reset_gap(&a->live, clock__ns(CLOCK_MONOTONIC));
	while (!stop_signal) {
		uint64_t now = clock__ns(CLOCK_MONOTONIC);
		struct timespec nap = {.tv_nsec = TICK_NS};

		loop_tick(a);
		if (reload_signal) {
			reload_signal = 0;
			reload(a);
			continue;
		}
		if (!a->cap) {
			nanosleep(&nap, NULL);
			continue;
		}
		if (now - a->window_start >= (uint64_t)(a->cfg->upload_interval_s * NSEC_PER_SEC)) {
			seal_window(a);
			next_drain = now + DRAIN_NS;
		} else if (now >= next_drain) {
			if (capture__drain(a->cap))
				log_warn("draining the BPF maps failed; retrying next second");
			next_drain = now + DRAIN_NS;
		}
		capture__tick(a->cap);
		if (now >= next_publish) {
			update_health(a);
			publish_metrics(a);
			next_publish = now + NSEC_PER_SEC;
		}
		nanosleep(&nap, NULL);
	}
	return 0;
}

/* The last window: detach, drain everything (the waits still going on count up to now), and
 * deliver within the export deadline. */
static void finish(struct agent *a)
{
	const struct profile *profiles[CAPTURE_MAX_TYPES];
	struct delivery_report rep;
	size_t n;

	sd_notify(0, "STOPPING=1");
	if (a->httpd)
		httpd__set_ready(a->httpd, false, "shutting down");
	if (a->cap) {
		capture__finish(a->cap, clock__ns(CLOCK_MONOTONIC) - a->window_start, false);
		n = capture__profiles(a->cap, profiles);
		if (n && a->deliver && deliverer__deliver(a->deliver, profiles, n))
			a->ctr.window_failures++;
		a->ctr.windows++;
	}
	if (!a->deliver)
		return;
	log_info("delivering the last window (at most %g s)", a->cfg->export_deadline_s);
	deliverer__shutdown(a->deliver, (int64_t)(a->cfg->export_deadline_s * 1000), &rep);
	a->deliver = NULL;
	if (rep.otlp_on)
		log_info("OTLP export: %" PRIu64 " delivered, %" PRIu64 " not delivered (%" PRIu64
			 " refused, %" PRIu64 " dropped, %" PRIu64 " still queued at the deadline)",
			 rep.otlp.delivered,
			 rep.otlp.dropped_refused + rep.otlp.dropped_full + rep.otlp.undelivered,
			 rep.otlp.dropped_refused, rep.otlp.dropped_full, rep.otlp.undelivered);
	if (rep.pyroscope_on)
		log_info("Pyroscope export: %" PRIu64 " delivered, %" PRIu64 " not delivered",
			 rep.pyroscope.delivered,
			 rep.pyroscope.dropped_refused + rep.pyroscope.dropped_full +
				 rep.pyroscope.undelivered);
}

static void teardown(struct agent *a)
{
	deliverer__shutdown(a->deliver, 0, NULL);
	a->deliver = NULL;
	export_targets__release(&a->targets);
	capture__delete(a->cap);
	identity__delete(a->identity);
	kubelet__delete(a->kubelet);
	httpd__delete(a->httpd);
	metrics_text__release(&a->metrics);
	if (a->cap_cfg != a->cfg)
		config_free(a->cap_cfg);
	if (a->deliver_cfg != a->cfg && a->deliver_cfg != a->cap_cfg)
		config_free(a->deliver_cfg);
	config_free(a->cfg);
}

/* Whether http_listen's port (after the last ':') is below 1024. */
static bool low_port(const char *listen)
{
	const char *colon = listen ? strrchr(listen, ':') : NULL;

	return colon && colon[1] && atoi(colon + 1) < 1024;
}

/*
 * Before any thread starts (capabilities are per thread, and inherited): what neither setup,
 * the loop nor a reload needs goes for good (agent/privileges.h). A refusal costs a warning.
 */
static void drop_privileges(struct agent *a, bool bind_low_port)
{
	char kept[256];
	int err;

	a->low_port = bind_low_port;
	err = privileges__drop(bind_low_port, kept, sizeof(kept));

	if (err)
		log_warn("could not drop the capabilities not needed after start: %s; running "
			 "with those it was given",
			 strerror(-err));
	else
		log_debug("capabilities after start: %s kept, all others dropped (and no new "
			  "privileges)",
			  kept[0] ? kept : "none");
}

static int start(struct agent *a)
{
	/* In this order: the identity asks the kubelet, and the capture feeds all the others. */
	static int (*const steps[])(struct agent * a) = {
		start_delivery, start_kubelet, start_identity, start_httpd, start_capture,
	};
	char why[512];
	int err;

	err = bpf_session__preflight(BPF_SESSION_KERNEL_BTF, why, sizeof(why));
	if (err) {
		log_error("%s", why);
		return err;
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		err = steps[i](a);
		if (err)
			return err;
		/* A start slower than liveness_timeout shows on /healthz (the startupProbe allows
		 * a minute); systemd's watchdog only counts from READY=1. */
		liveness__tick(&a->live, clock__ns(CLOCK_MONOTONIC));
	}
	a->ctr.attached = true;
	if (a->low_port)
		drop_privileges(a, false); /* bound: CAP_NET_BIND_SERVICE goes too */
	log_info("profiling the whole host at %u Hz; a window every %g s", a->cfg->frequency_hz,
		 a->cfg->upload_interval_s);
	update_health(a);
	publish_metrics(a);
	sd_notify(0, "READY=1\nSTATUS=profiling");
	return 0;
}

int do_agent(int argc, char **argv)
{
	struct agent_flags flags = {0};
	struct agent a = {.flags = &flags};
	struct sigaction stop = {.sa_handler = on_stop}, hup = {.sa_handler = on_reload};
	char err[1024];
	int rc = agent_options__parse(argc, argv, &flags, err, sizeof(err));

	rc = options__exit_status(&agent_command, rc, err);
	if (rc >= 0)
		return rc;
	a.cfg = calloc(1, sizeof(*a.cfg));
	if (!a.cfg)
		return 1;
	rc = load_config(&flags, a.cfg, &a.origin, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "hostprof agent: %s\n", err);
		free(a.cfg);
		return rc == -ENOENT || rc == -EINVAL ? OPTIONS_EXIT_USAGE : 1;
	}
	if (flags.print_config) {
		config_load__print(a.cfg, &a.origin, stdout);
		config_free(a.cfg);
		return 0;
	}
	log_set_level(a.cfg->log_level);
	log_bridge_libbpf();
	/*
	 * Large blocks (a window's tables, the location cache) come and go once per window. A fixed
	 * mmap threshold keeps them out of the heap, so that freeing one returns its memory:
	 * glibc's default raises the threshold after the first such free, and the heap then keeps
	 * its high-water mark for good. Two arenas are enough for the agent's few threads.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_ARENA_MAX, 2);
	metrics_text__init(&a.metrics, 0);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &hup, NULL);
	liveness__init(&a.live, (uint64_t)(a.cfg->liveness_timeout_s * NSEC_PER_SEC),
		       clock__ns(CLOCK_MONOTONIC));
	watchdog__init(&a.wd);
	/* Kernels before 5.11 charge BPF maps to it; raised now, CAP_SYS_RESOURCE goes next. */
	privileges__raise_memlock();
	drop_privileges(&a, low_port(a.cfg->http_listen));
	rc = start(&a);
	if (!rc) {
		rc = run(&a);
		/* Whatever stopped us, what was collected is delivered. */
		finish(&a);
	}
	if (stop_signal)
		log_info("stopped by %s", strsignal(stop_signal));
	teardown(&a);
	return rc ? 1 : 0;
}

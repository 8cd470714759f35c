/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Delivery of finished profiles to every configured destination: local files (written at once)
 * and exporters (OTLP, Pyroscope), each with its own export thread and bounded queue. The caller
 * (a capture loop) hands over profiles and never waits on the network.
 */
#ifndef HOSTPROF_DELIVER_H
#define HOSTPROF_DELIVER_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "model/config.h"
#include "formats/encode.h"
#include "export/export.h"
#include "model/profile.h"
#include "export/transport.h"

struct deliver_opts {
	const struct output *outputs; /* local files */
	size_t nr_outputs;
	/* The agent's windows as pprof files, TYPE-YYYYMMDDTHHMMSSZ.pb.gz, the newest keep_files
	 * of each type kept; NULL: none. */
	const char *window_dir;
	size_t keep_files;
	/* Files are written 0600; with give_files they are then given to owner_uid and owner_gid
	 * (`hostprof profile` under sudo: the user who asked for them). */
	bool give_files;
	uid_t owner_uid;
	gid_t owner_gid;
	const struct endpoint_config *otlp;	 /* NULL: no OTLP export */
	const struct endpoint_config *pyroscope; /* NULL: no Pyroscope export */
	struct otlp_opts otlp_opts;
	const char *pyroscope_profile_name; /* "process_cpu" */
	const char *pyroscope_app_name; /* the ingest API's application name; NULL: per service */
	struct exporter_opts exporter;
};

struct delivery_report {
	size_t files_written;
	size_t files_failed;
	struct exporter_stats otlp;
	struct exporter_stats pyroscope;
	bool otlp_on, pyroscope_on;
};

struct deliverer;

/* Start the exporters. NULL + errno (the reason logged) when a transport cannot be set up. */
struct deliverer *deliverer__new(const struct deliver_opts *opts);
/*
 * Write the files and queue the profile for every exporter. The profiles (one per profile type)
 * are only read during the call. Returns 0, or the first -errno of a file that could not be
 * written or a payload that could not be encoded; the other destinations are served regardless.
 */
int deliverer__deliver(struct deliverer *d, const struct profile *const *profiles, size_t n);
/* The counts so far, while the exporters run (the agent's /metrics and readiness). */
void deliverer__stats(struct deliverer *d, struct delivery_report *out);
/* Flush the exporters within deadline_ms, stop them and free everything; fills *report. */
void deliverer__shutdown(struct deliverer *d, int64_t deadline_ms, struct delivery_report *report);

/*
 * The receivers a run exports to, resolved once from its settings: OTLP from the --otlp-* flags
 * (or the agent's keys, passed the same way) and the OpenTelemetry environment, Pyroscope from
 * its URL. Each part is off when nothing names it.
 */
struct export_targets {
	struct endpoint_config otlp, pyroscope;
	bool otlp_on, pyroscope_on;
	char host_name[256];
};

struct otlp_flags;
/* Resolve; the problem is logged ("OTLP export: ...") and -EINVAL/-ENOMEM returned. */
int export_targets__resolve(struct export_targets *t, const struct otlp_flags *otlp,
			    const struct config *c);
void export_targets__release(struct export_targets *t);
/* The deliverer's options for these targets and the config's limits (no files, no window dir:
 * the caller adds them). t must outlive the deliverer. */
void export_targets__opts(struct export_targets *t, const struct config *c, struct deliver_opts *o);

/* host.name and host.arch (OTel's spelling) of this machine, for struct otlp_opts. */
void deliver__host_facts(char *name, size_t name_len, const char **arch);

#endif /* HOSTPROF_DELIVER_H */

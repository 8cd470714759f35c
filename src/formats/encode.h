/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Encoders over the profile model, one file each (enc_<format>.c). Each writes a whole file and
 * returns 0 or -errno; on error nothing is left at `path` (writes go to a temporary file that is
 * renamed into place).
 */
#ifndef HOSTPROF_ENCODE_H
#define HOSTPROF_ENCODE_H

#include "formats/payload.h"
#include "model/profile.h"

/* gzipped pprof (profile.proto). Labels: pid, tid (numeric), comm, thread_name (strings). */
int enc_pprof__write(const struct profile *p, const char *path);

/*
 * Collapsed stacks, one line per distinct (process name, stack): "comm;root;...;leaf count",
 * where count is the number of raw samples. Kernel frames get the suffix "_[k]".
 */
int enc_folded__write(const struct profile *p, const char *path);

/* Host-wide facts and choices of the OTLP encoding. */
struct otlp_opts {
	const char *host_name;	   /* host.name */
	const char *host_arch;	   /* host.arch, in OTel's spelling: amd64, arm64 */
	const char *scope_version; /* InstrumentationScope.version (scope name is "hostprof") */
	/*
	 * false (default): cpu profiles are sample_type (cpu, nanoseconds) with values = samples x
	 * period, which OneUptime's profile-type filter expects. true: the OpenTelemetry eBPF
	 * profiler's convention, sample_type (samples, count) with values = samples, which
	 * Pyroscope maps to process_cpu. period_type is (cpu, nanoseconds) and period 1e9/Hz either
	 * way.
	 */
	bool samples_count;
};

/*
 * One ExportProfilesServiceRequest (opentelemetry-proto v1.10/v1.11 shape) for the given profiles,
 * one per profile type, sharing one ProfilesDictionary: one ResourceProfiles per process (the
 * profile's process table), one ScopeProfiles, one Profile per type. Serialized, uncompressed,
 * into *out (malloc'ed, the caller frees). 0 or -errno.
 */
int enc_otlp__encode(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		     uint8_t **out, size_t *len);
/* The same request in OTLP/JSON (lowerCamelCase keys, 64-bit integers as strings, hex ids). */
int enc_otlp__encode_json(const struct profile *const *profiles, size_t n,
			  const struct otlp_opts *o, char **out, size_t *len);
/* File outputs: ".otlp.pb" (binary request) and ".otlp.json". */
int enc_otlp__write(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		    const char *path);
int enc_otlp__write_json(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
			 const char *path);

/*
 * In-memory pprof of the samples keep() accepts (every sample when keep is NULL), gzipped into
 * *out (malloc'ed, the caller frees). With a filter, only the strings, mappings, functions and
 * locations the kept samples reach are emitted, renumbered 1..n in model order; without one the
 * whole model is, with the model's indices as ids (what enc_pprof__write writes). 0 or -errno.
 */
int enc_pprof__encode(const struct profile *p,
		      bool (*keep)(const struct profile_sample *s, void *ctx), void *ctx,
		      uint8_t **out, size_t *len);

/* An extra Pyroscope series label, e.g. from configuration. */
struct pyroscope_label {
	const char *name; /* sanitized to [a-zA-Z_][a-zA-Z0-9_]* */
	const char *value;
};

/*
 * One push.v1.PushRequest (Pyroscope's push API), serialized into *out (malloc'ed, the caller
 * frees). One RawProfileSeries per service of the process table (service_name; samples of pids
 * without an entry go to "unknown_service"), labelled __name__ = profile_name (e.g.
 * "process_cpu"; sanitized as a Prometheus metric name), service_name and pyroscope_spy =
 * "hostprof", and holding one RawSample: that service's samples as gzipped pprof
 * (enc_pprof__encode) with a random UUID v4 as ID. Services without samples get no series.
 * 0 or -errno.
 */
int enc_pyroscope__push(const struct profile *p, const char *profile_name, uint8_t **out,
			size_t *len);
/*
 * The same with extra labels on every series. A label whose sanitized name is one the encoder
 * sets, repeats another, or starts with "__" (reserved) is -EINVAL.
 */
int enc_pyroscope__push_labels(const struct profile *p, const char *profile_name,
			       const struct pyroscope_label *labels, size_t nr_labels,
			       uint8_t **out, size_t *len);

/*
 * The legacy /ingest API: one payload per service (as for push), body = that service's gzipped
 * pprof, query = "name=APP.TYPE{service_name=SERVICE}&from=S&until=S&format=pprof&sampleRate=HZ
 * &spyName=hostprof" with the name percent-encoded, where APP is app_name or, when NULL, the
 * service, and TYPE the profile's sample type ("cpu"). from/until are left out when the profile
 * has no time window. *payloads is a malloc'ed array of *n (NULL and 0 without samples); release
 * it with enc_pyroscope__free_payloads(). 0 or -errno.
 */
int enc_pyroscope__ingest(const struct profile *p, const char *app_name,
			  struct export_payload **payloads, size_t *n);
/* Frees the payloads' buffers and the array; NULL is fine. */
void enc_pyroscope__free_payloads(struct export_payload *payloads, size_t n);

/*
 * One self-contained HTML page (inline CSS and JS, no network) with an interactive flame graph of
 * the given profiles, one per profile type (a selector switches between them). The page groups
 * the stacks by executable (or process, service, none), filters by thread and thread state, and
 * shows a function list and the callers and callees of a function. Frames under 0.01% of a
 * profile's total are merged into one "other" frame per parent, and the page says so. 0 or
 * -errno.
 */
int enc_html__write(const struct profile *const *profiles, size_t n, const char *path);
/*
 * The same page, differential: bases[i] (NULL for none) is the earlier profile profiles[i] is
 * compared with, and each frame is coloured by the change of its share of the total (red grew,
 * blue shrank). bases may be NULL.
 */
int enc_html__write_diff(const struct profile *const *profiles, const struct profile *const *bases,
			 size_t n, const char *path);

#endif /* HOSTPROF_ENCODE_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The options of a run, with their defaults and the parsers that validate them. Flag parsing
 * fills a struct config once; every other module only reads it.
 */
#ifndef HOSTPROF_CONFIG_H
#define HOSTPROF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/options.h"

#define CONFIG_MAX_PIDS 1024 /* the kernel filter map's size */
#define CONFIG_MAX_OUTPUTS 8
#define CONFIG_MAX_HEADERS 16

/* The profile types a capture can make (--types). */
enum profile_type_bit {
	PROFILE_TYPE_CPU = 1 << 0,
	PROFILE_TYPE_WALL = 1 << 1,	  /* on-CPU and off-CPU time together */
	PROFILE_TYPE_OFFCPU = 1 << 2,	  /* off-CPU time alone */
	PROFILE_TYPE_CONTENTION = 1 << 3, /* lock waits: futexes and kernel locks */
};

enum output_format {
	OUTPUT_PPROF = 0, /* .pb.gz */
	OUTPUT_FOLDED,	  /* .folded */
	OUTPUT_OTLP_PB,	  /* .otlp.pb: an OTLP ExportProfilesServiceRequest, as sent on the wire */
	OUTPUT_OTLP_JSON, /* .otlp.json: the same request in OTLP/JSON */
	OUTPUT_HTML,	  /* .html: a self-contained interactive flame graph page */
};

struct output {
	const char *path;
	enum output_format format;
};

#define CONFIG_MAX_RELABEL 64

/* One relabeling rule of the agent (the `relabel:` list), applied to a process's attributes. */
enum relabel_action {
	RELABEL_REPLACE = 0, /* set target to the replacement when source matches */
	RELABEL_KEEP,	     /* drop the process unless source matches */
	RELABEL_DROP,	     /* drop the process when source matches */
};

struct relabel_rule {
	enum relabel_action action;
	const char *source;	 /* attribute name; NULL reads as the empty string */
	const char *regex;	 /* POSIX extended, anchored at both ends; NULL: "(.*)" */
	const char *target;	 /* replace: the attribute to set */
	const char *replacement; /* replace: $1..$9 are the groups; NULL: "$1" */
	int line;		 /* where the rule is in the config file; 0 when not from one */
};

/* process.command_line: what of a process's argv is exported (process/cmdline.h) */
enum cmdline_mode { CMDLINE_OFF = 0, CMDLINE_REDACTED, CMDLINE_FULL };

/* kubernetes.enabled */
enum kube_mode { KUBE_AUTO = 0, KUBE_ON, KUBE_OFF };

struct config {
	/* what to profile */
	pid_t pids[CONFIG_MAX_PIDS];
	size_t nr_pids;
	bool all;	 /* the whole host */
	char **command;	 /* argv after "--", or NULL */
	bool no_inherit; /* --no-inherit: the command alone, not the processes it starts */
	bool include_idle;
	unsigned int types;	/* PROFILE_TYPE_* bits; default cpu */
	uint64_t offcpu_min_ns; /* --offcpu-min-us */
	/* Off-CPU and lock waits shorter than this are sampled in proportion to their length
	 * (bpf/common.bpf.h hp_sample_wait()); CONFIG_WAIT_SAMPLE_AUTO: the CPU sampling period;
	 * 0: every wait's stack is taken. */
	uint64_t wait_sample_ns;
	uint32_t offcpu_threads;     /* threads that may be off the CPU at once */
	uint32_t offcpu_map_entries; /* distinct off-CPU stacks and keys per drain */

	/* how */
	double duration_s; /* 0: until Ctrl-C (or the command/targets exit) */
	uint32_t frequency_hz;
	double drain_interval_s;

	/* outputs */
	struct output outputs[CONFIG_MAX_OUTPUTS];
	size_t nr_outputs;
	size_t top_n;
	bool print_stats; /* the caches' sizes and memory after the summary (--stats) */
	bool quiet;
	bool verbose;

	/* bounds of the tables */
	uint32_t stack_map_entries;
	uint32_t counts_map_entries;
	size_t max_procs;
	size_t max_dsos;
	size_t max_dwarf_bytes; /* open DWARF handles of the symbolizer */
	/* How the running command spells the setting that raises max_dwarf_bytes, for warnings:
	 * limits.max_dwarf_bytes (the agent's key) by default, --max-dwarf-mb for profile. */
	const char *max_dwarf_name;
	size_t max_cached_locations;
	size_t max_symbol_bytes; /* the cached binaries' symbol tables */

	/* user-stack unwinding with .eh_frame tables (--unwind) */
	bool unwind_tables;	/* false: frame pointers only */
	uint32_t unwind_depth;	/* user frames at most */
	uint32_t unwind_rows;	/* capacity of the BPF rows map (16 bytes each) */
	uint32_t unwind_procs;	/* processes with tables at once */
	size_t unwind_binaries; /* binaries with tables at once */
	const char *cache_dir;	/* unwind tables cached on disk; NULL: none */
	/* per debuginfod fetch (when DEBUGINFOD_URLS is set); 0: DEBUGINFOD_TIMEOUT, else 10 s */
	double debuginfod_timeout_s;

	const char *proc_root;
	const char *kallsyms_path;

	/* process.command_line: off by default, as argv often holds tokens */
	enum cmdline_mode cmdline_mode;

	/* export (NULL: from the OTEL_EXPORTER_OTLP_* environment, or off) */
	const char *otlp_endpoint;
	const char *otlp_protocol;
	const char *otlp_compression;
	const char *otlp_timeout_ms;
	const char *otlp_ca_file;
	bool otlp_insecure;
	const char *otlp_headers[CONFIG_MAX_HEADERS];
	size_t nr_otlp_headers;
	bool otlp_samples_count; /* --otlp-sample-type samples */
	const char *pyroscope_url;
	const char *pyroscope_api; /* "push" (default) or "ingest" */
	const char *pyroscope_headers[CONFIG_MAX_HEADERS];
	size_t nr_pyroscope_headers;
	double export_deadline_s; /* how long the end of a run waits for receivers */
	size_t export_queue_bytes;

	/* agent mode (`hostprof agent`); see config_load.h for the file, environment and flags */
	double upload_interval_s;
	const char *http_listen;   /* NULL: no HTTP endpoints */
	double liveness_timeout_s; /* /healthz fails after this long without a loop tick */
	const char *output_dir;	   /* NULL: no local files per window */
	size_t keep_files;	   /* per profile type in output_dir */
	int log_level;		   /* enum log_level */
	/* "name=path": header values read from files (tokens), never from the command line */
	const char *otlp_header_files[CONFIG_MAX_HEADERS];
	size_t nr_otlp_header_files;
	const char *pyroscope_header_files[CONFIG_MAX_HEADERS];
	size_t nr_pyroscope_header_files;
	enum kube_mode kube_mode;
	const char *kube_node_name;
	const char *kube_kubelet_url;
	const char *kube_token_file;
	const char *kube_ca_file;
	bool kube_insecure;
	double kube_refresh_s;
	const char *docker_root;
	struct relabel_rule relabel[CONFIG_MAX_RELABEL];
	size_t nr_relabel;

	/* Strings that the config owns (read from a file, the environment or --set); the fields
	 * above may point into them. Freed by config__release(). */
	char **owned;
	size_t nr_owned, cap_owned;
};

/* Defaults for one-shot `hostprof profile`. */
void config__defaults(struct config *c);
/* Free the strings the config owns; the config is left with its defaults' pointers cleared. */
void config__release(struct config *c);
/* A copy of s that the config owns (NULL for NULL), or NULL with errno = ENOMEM. */
const char *config__own(struct config *c, const char *s);

/*
 * Value parsers. Each returns 0, or -EINVAL and writes into err (len bytes) what is wrong with
 * the value and what is accepted. (Numbers, durations and booleans: base/options.h.)
 */
int config__parse_frequency(const char *text, uint32_t *out, char *err, size_t len);
/* "123" or "1,2,3": appends to c->pids. */
int config__parse_pids(struct config *c, const char *text, char *err, size_t len);
/* Pick the format from the file name's extension and append to c->outputs. */
int config__add_output(struct config *c, const char *path, char *err, size_t len);
/* "cpu,wall,offcpu": sets c->types. */
int config__parse_types(struct config *c, const char *text, char *err, size_t len);

/* In an option table's row: the value goes to this field of a struct config. */
#define CONFIG_FIELD(f)                                                                            \
	.offset = offsetof(struct config, f), .size = sizeof(((struct config *)0)->f)

/*
 * The same parsers as custom options of the commands' option tables (base/options.h), whose
 * target is a struct config: --frequency, --types, --pid, --output. The printers write the value
 * as a config file does ("19", "[cpu, wall]").
 */
int config__opt_frequency(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
			  size_t len);
void config__print_frequency(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx);
int config__opt_types(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		      size_t len);
#define CONFIG_WAIT_SAMPLE_AUTO UINT64_MAX
#define CONFIG_WAIT_SAMPLE_MAX_NS 1000000000ULL
/* "auto", or microseconds (0 to 1 s) into wait_sample_ns; the period in effect for a run. */
int config__opt_wait_sample(const struct opt_def *d, struct opt_ctx *ctx, const char *text,
			    char *err, size_t len);
void config__print_wait_sample(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx);
uint64_t config__wait_sample_ns(const struct config *c);
/* The fields of the --wait-sample-us option, the same in every command's table. */
#define CONFIG_OPT_WAIT_SAMPLE                                                                     \
	.name = "wait-sample-us", .type = OPT_CUSTOM, CONFIG_FIELD(wait_sample_ns),                \
	.parse = config__opt_wait_sample, .print = config__print_wait_sample, .dflt = "auto",      \
	.value_name = "N"
void config__print_types(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx);
int config__opt_pids(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		     size_t len);
int config__opt_output(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		       size_t len);

#endif /* HOSTPROF_CONFIG_H */

// SPDX-License-Identifier: BSD-2-Clause
#include "agent/agent_options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "hostprof_abi.h"
#include "model/config.h"
#include "symbols/debuginfod_fetch.h"

#define FLAGS_FIELD(f)                                                                             \
	.target = AGENT_TARGET_FLAGS, .offset = offsetof(struct agent_flags, f),                   \
	.size = sizeof(((struct agent_flags *)0)->f)
#define CFG(f) .target = AGENT_TARGET_CONFIG, CONFIG_FIELD(f)
#define COUNT(f) .count_offset = offsetof(struct config, f)

static const struct config *cfg_of(const struct opt_def *d, const struct opt_ctx *ctx)
{
	return ctx->targets[d->target];
}

/* ---- command-line only ---- */

static int add_set(struct agent_flags *f, const char *key, const char *value, char *err, size_t len)
{
	if (f->nr_sets == AGENT_MAX_SETS) {
		snprintf(err, len, "too many settings: at most %d", AGENT_MAX_SETS);
		return -E2BIG;
	}
	f->sets[f->nr_sets].key = key;
	f->sets[f->nr_sets++].value = value;
	return 0;
}

static int parse_set(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		     size_t len)
{
	char *eq = strchr(text, '=');

	if (!eq || eq == text) {
		snprintf(err, len, "give KEY=VALUE, e.g. --set upload_interval=30s");
		return -EINVAL;
	}
	*eq = '\0'; /* argv's own text: the key ends here */
	return add_set(ctx->targets[d->target], text, eq + 1, err, len);
}

static int parse_verbosity(const struct opt_def *d, struct opt_ctx *ctx, const char *text,
			   char *err, size_t len)
{
	struct agent_flags *f = ctx->targets[d->target];

	(void)text, (void)err, (void)len;
	f->log_level = d->short_name == 'v' ? LOG_DEBUG : LOG_ERROR;
	return 0;
}

/* ---- keys with custom values ---- */

/* A duration in the file, milliseconds in the config (as OTEL_EXPORTER_OTLP_TIMEOUT has it). */
static int parse_otlp_timeout(const struct opt_def *d, struct opt_ctx *ctx, const char *text,
			      char *err, size_t len)
{
	const char **field = options__field(d, ctx);
	char ms[32];
	double s = 0;
	int rc = options__parse_interval(text, 0.001, 600, &s, err, len);

	if (rc)
		return rc;
	snprintf(ms, sizeof(ms), "%.0f", s * 1000);
	*field = ctx->own ? ctx->own(ctx->own_arg, ms) : NULL;
	return *field ? 0 : -ENOMEM;
}

static void print_otlp_timeout(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	const char *ms = cfg_of(d, ctx)->otlp_timeout_ms;

	fprintf(out, "%gs", ms ? atof(ms) / 1000 : 10.0);
}

/* What applies: unset, DEBUGINFOD_TIMEOUT or the built-in default decides. */
static void print_debuginfod_timeout(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	fprintf(out, "%gs", debuginfod_fetch__timeout_s(cfg_of(d, ctx)->debuginfod_timeout_s));
}

/* Maps and lists are read from the file only (config_load.c walks them). */
static int parse_structured(const struct opt_def *d, struct opt_ctx *ctx, const char *text,
			    char *err, size_t len)
{
	(void)ctx, (void)text;
	if (d->tag == KEY_RELABEL)
		snprintf(err, len, "give it as a list of rules (see the example config)");
	else
		snprintf(err, len, "give it as a map of header name: %s",
			 d->tag == KEY_HEADERS ? "value" : "file path");
	return -EINVAL;
}

/* name: "value" lines under the key, indented one step more; header values are masked. */
static void print_pairs(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	const char *const *list = options__field(d, ctx);
	size_t nr = *(const size_t *)((const char *)ctx->targets[d->target] + d->count_offset);
	int indent = 2;

	for (const char *p = strchr(d->key, '.'); p; p = strchr(p + 1, '.'))
		indent += 2;
	if (!nr) {
		fputs(" {}", out);
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		const char *eq = strchr(list[i], '=');

		fprintf(out, "\n%*s%.*s: ", indent, "", (int)(eq - list[i]), list[i]);
		options__print_string(out, d->tag == KEY_HEADERS ? "***" : eq + 1);
	}
}

static void print_relabel(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	static const char *const actions[] = {"replace", "keep", "drop"};
	const struct config *c = cfg_of(d, ctx);
	const struct {
		const char *name;
		size_t offset;
	} fields[] = {
		{"source", offsetof(struct relabel_rule, source)},
		{"regex", offsetof(struct relabel_rule, regex)},
		{"target", offsetof(struct relabel_rule, target)},
		{"replacement", offsetof(struct relabel_rule, replacement)},
	};

	if (!c->nr_relabel) {
		fputs(" []", out);
		return;
	}
	for (size_t i = 0; i < c->nr_relabel; i++) {
		const struct relabel_rule *r = &c->relabel[i];

		fprintf(out, "\n  - action: %s", actions[r->action]);
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			const char *v = *(const char *const *)((const char *)r + fields[f].offset);

			if (v) {
				fprintf(out, "\n    %s: ", fields[f].name);
				options__print_string(out, v);
			}
		}
	}
}

static const char *const unwind_choices[] = {"dwarf", "fp", NULL};
static const int unwind_values[] = {1, 0}; /* config.unwind_tables */
/* In enum log_level's order. */
static const char *const log_choices[] = {"error", "warn", "info", "debug", NULL};
static const char *const protocol_choices[] = {"http/protobuf", "http/json", "grpc", NULL};
static const char *const compression_choices[] = {"gzip", "none", NULL};
static const char *const sample_type_choices[] = {"cpu", "samples", NULL};
static const char *const api_choices[] = {"push", "ingest", NULL};
/* In enum cmdline_mode's order. */
static const char *const cmdline_choices[] = {"off", "redacted", "full", NULL};
/* In enum kube_mode's order. */
static const char *const kube_choices[] = {"auto", "true", "false", NULL};

#define UINT_KEY(k, f, lo, hi) .key = k, .type = OPT_UINT, CFG(f), .min = lo, .max = hi
#define INTERVAL_KEY(k, f, lo, hi) .key = k, .type = OPT_INTERVAL, CFG(f), .min = lo, .max = hi
#define STRING_KEY(k, f) .key = k, .type = OPT_STRING, CFG(f)
#define BOOL_KEY(k, f) .key = k, .type = OPT_BOOL, CFG(f)
#define MAP_KEY(k, f, shape)                                                                       \
	.key = k, .type = OPT_CUSTOM, CFG(f), COUNT(nr_##f), .tag = shape,                         \
	.parse = parse_structured, .print = print_pairs

/*
 * Every key in the order --print-config writes them (a section's keys together). --help lists
 * the rows that have help, in this order too.
 */
static const struct opt_def defs[] = {
	{.name = "config",
	 .short_name = 'c',
	 .type = OPT_STRING,
	 FLAGS_FIELD(config_file),
	 .value_name = "FILE",
	 .section = "Options:",
	 .help = "the YAML config (default " CONFIG_DEFAULT_FILE " when it exists)"},
	{.name = "print-config",
	 .type = OPT_FLAG,
	 FLAGS_FIELD(print_config),
	 .help = "print the merged configuration (secrets masked) and exit"},
	{.name = "set",
	 .type = OPT_CUSTOM,
	 .flags = OPT_F_REPEAT,
	 .target = AGENT_TARGET_FLAGS,
	 .parse = parse_set,
	 .value_name = "KEY=VALUE",
	 .help = "set any scalar key, e.g. --set limits.max_processes=8192 (repeatable)"},
	{.key = "frequency",
	 .name = "frequency",
	 .short_name = 'F',
	 .type = OPT_CUSTOM,
	 CFG(frequency_hz),
	 .parse = config__opt_frequency,
	 .print = config__print_frequency,
	 .dflt = "19",
	 .value_name = "HZ",
	 .help = "cpu samples per second per CPU"},
	{.key = "types",
	 .name = "types",
	 .short_name = 't',
	 .type = OPT_CUSTOM,
	 CFG(types),
	 .tag = KEY_TYPES,
	 .parse = config__opt_types,
	 .print = config__print_types,
	 .dflt = "cpu",
	 .value_name = "LIST",
	 .help = "cpu, wall, offcpu, contention, e.g. cpu,wall"},
	{CONFIG_OPT_WAIT_SAMPLE, .key = "wait_sample_us", .target = AGENT_TARGET_CONFIG,
	 .help = "off-CPU and lock waits shorter than N us are sampled in proportion to their "
		 "length; auto: the CPU sampling period; 0: every wait's stack"},
	{INTERVAL_KEY("upload_interval", upload_interval_s, 1, 3600), .name = "upload-interval",
	 .dflt = "15s", .value_name = "D", .help = "one window per D, 1s to 1h"},
	{.key = "unwind",
	 .type = OPT_ENUM,
	 CFG(unwind_tables),
	 .choices = unwind_choices,
	 .values = unwind_values,
	 .dflt = "dwarf"},
	{UINT_KEY("unwind_depth", unwind_depth, 1, HP_UNWIND_MAX_DEPTH), .dflt = "128"},
	{STRING_KEY("cache_dir", cache_dir), .name = "cache-dir", .value_name = "DIR",
	 .help = "unwind tables cached on disk (default /var/cache/hostprof) and debuginfod's "
		 "files (in DIR/debuginfod)"},
	{BOOL_KEY("include_idle", include_idle), .dflt = "false"},
	{STRING_KEY("http_listen", http_listen), .name = "http-listen", .value_name = "ADDR",
	 .help = "serve /healthz, /readyz and /metrics, e.g. :7470 or 127.0.0.1:7470 (default: "
		 "off)"},
	{INTERVAL_KEY("liveness_timeout", liveness_timeout_s, 1, 3600), .dflt = "10s"},
	{.key = "process.command_line",
	 .type = OPT_ENUM,
	 CFG(cmdline_mode),
	 .choices = cmdline_choices,
	 .dflt = "off",
	 .name = "command-line",
	 .value_name = "MODE",
	 .bad_choice = "give off (the default), redacted (secret-looking values hidden) or full",
	 .help = "export process.command_line: off, redacted (argv with the values of "
		 "secret-looking arguments hidden) or full"},
	{.key = "log_level",
	 .type = OPT_ENUM,
	 CFG(log_level),
	 .choices = log_choices,
	 .dflt = "info"},
	{UINT_KEY("limits.stack_map_entries", stack_map_entries, 1, 1 << 22), .dflt = "16384"},
	{UINT_KEY("limits.counts_map_entries", counts_map_entries, 1, 1 << 22), .dflt = "16384"},
	/* The unwinder keeps tables for as many processes and binaries as the symbolizer. */
	{UINT_KEY("limits.max_processes", max_procs, 16, 1 << 20), .dflt = "4096",
	 .also_offset = offsetof(struct config, unwind_procs),
	 .also_size = sizeof(((struct config *)0)->unwind_procs)},
	{UINT_KEY("limits.max_binaries", max_dsos, 16, 1 << 20), .dflt = "1024",
	 .also_offset = offsetof(struct config, unwind_binaries),
	 .also_size = sizeof(((struct config *)0)->unwind_binaries)},
	{UINT_KEY("limits.max_cached_locations", max_cached_locations, 1024, 1 << 26),
	 .dflt = "262144"},
	{UINT_KEY("limits.max_dwarf_bytes", max_dwarf_bytes, 1 << 20, 1ULL << 34),
	 .dflt = "14680064"},
	{UINT_KEY("limits.max_symbol_bytes", max_symbol_bytes, 1 << 20, 1ULL << 34),
	 .dflt = "6291456"},
	{UINT_KEY("limits.unwind_table_rows", unwind_rows, 1024, 1U << 26), .dflt = "1048576"},
	{UINT_KEY("limits.export_queue_bytes", export_queue_bytes, 1 << 16, 1ULL << 32),
	 .dflt = "67108864"},
	{INTERVAL_KEY("export.deadline", export_deadline_s, 0.1, 600), .dflt = "10s"},
	{STRING_KEY("export.directory", output_dir), .name = "output-dir", .value_name = "DIR",
	 .help = "also write each window as pprof files into DIR"},
	{UINT_KEY("export.keep_files", keep_files, 1, 100000), .dflt = "20"},
	{STRING_KEY("export.otlp.endpoint", otlp_endpoint), .flags = OPT_F_URL,
	 .name = "otlp-endpoint", .value_name = "URL",
	 .help = "an OTLP profiles receiver, e.g. http://collector:4318/v1development/profiles"},
	{.key = "export.otlp.protocol",
	 .type = OPT_ENUM_STR,
	 CFG(otlp_protocol),
	 .choices = protocol_choices,
	 .dflt = "http/protobuf",
	 .name = "otlp-protocol",
	 .value_name = "P",
	 .help = "http/protobuf, http/json or grpc"},
	{.key = "export.otlp.compression",
	 .type = OPT_ENUM_STR,
	 CFG(otlp_compression),
	 .choices = compression_choices,
	 .dflt = "gzip"},
	{.key = "export.otlp.timeout",
	 .type = OPT_CUSTOM,
	 CFG(otlp_timeout_ms),
	 .parse = parse_otlp_timeout,
	 .print = print_otlp_timeout,
	 .dflt = "10s"},
	{STRING_KEY("export.otlp.ca_file", otlp_ca_file)},
	{BOOL_KEY("export.otlp.insecure", otlp_insecure), .dflt = "false"},
	{.key = "export.otlp.sample_type",
	 .type = OPT_ENUM,
	 CFG(otlp_samples_count),
	 .choices = sample_type_choices,
	 .dflt = "cpu"},
	{MAP_KEY("export.otlp.headers", otlp_headers, KEY_HEADERS), .flags = OPT_F_SECRET},
	{MAP_KEY("export.otlp.header_files", otlp_header_files, KEY_PATHS)},
	{STRING_KEY("export.pyroscope.url", pyroscope_url), .flags = OPT_F_URL,
	 .name = "pyroscope-url", .value_name = "URL", .help = "a Pyroscope server"},
	{.key = "export.pyroscope.api",
	 .type = OPT_ENUM_STR,
	 CFG(pyroscope_api),
	 .choices = api_choices,
	 .dflt = "push"},
	{MAP_KEY("export.pyroscope.headers", pyroscope_headers, KEY_HEADERS),
	 .flags = OPT_F_SECRET},
	{MAP_KEY("export.pyroscope.header_files", pyroscope_header_files, KEY_PATHS)},
	{.key = "kubernetes.enabled",
	 .type = OPT_ENUM,
	 CFG(kube_mode),
	 .choices = kube_choices,
	 .dflt = "auto"},
	{STRING_KEY("kubernetes.node_name", kube_node_name)},
	{STRING_KEY("kubernetes.kubelet_url", kube_kubelet_url), .flags = OPT_F_URL},
	{STRING_KEY("kubernetes.token_file", kube_token_file)},
	{STRING_KEY("kubernetes.ca_file", kube_ca_file)},
	{BOOL_KEY("kubernetes.insecure", kube_insecure), .dflt = "false"},
	{INTERVAL_KEY("kubernetes.refresh_interval", kube_refresh_s, 1, 3600), .dflt = "30s"},
	{STRING_KEY("docker.root", docker_root)},
	{INTERVAL_KEY("debuginfod.timeout", debuginfod_timeout_s, 0.1, 600),
	 .print = print_debuginfod_timeout},
	{.key = "relabel",
	 .type = OPT_CUSTOM,
	 CFG(relabel),
	 COUNT(nr_relabel),
	 .tag = KEY_RELABEL,
	 .parse = parse_structured,
	 .print = print_relabel},
	{.name = "verbose",
	 .short_name = 'v',
	 .type = OPT_FLAG,
	 .target = AGENT_TARGET_FLAGS,
	 .parse = parse_verbosity,
	 .help = "debug messages"},
	{.name = "quiet",
	 .short_name = 'q',
	 .type = OPT_FLAG,
	 .target = AGENT_TARGET_FLAGS,
	 .parse = parse_verbosity,
	 .help = "errors only"},
	OPT_DEF_HELP,
};

_Static_assert(sizeof(defs) / sizeof(defs[0]) <= AGENT_MAX_OPTIONS,
	       "struct config_origin has room for every option");

const struct opt_command agent_command = {
	.prog = "hostprof agent",
	.defs = defs,
	.nr_defs = sizeof(defs) / sizeof(defs[0]),
	.usage =
		"Usage: hostprof agent [--config FILE] [options]\n"
		"\n"
		"Profile the whole host continuously and export a profile window every upload\n"
		"interval: every process, no code changes, each named by its service (from its\n"
		"OTEL_SERVICE_NAME, its Kubernetes pod, its systemd unit, its container, or its\n"
		"executable). Runs until SIGTERM or SIGINT, which deliver the last window; SIGHUP\n"
		"reloads the configuration.\n"
		"\n"
		"Configuration, each layer overriding the one before: built-in defaults, the YAML\n"
		"file, the environment (HOSTPROF_<KEY>, e.g. HOSTPROF_EXPORT_OTLP_ENDPOINT, and "
		"the\n"
		"OTEL_EXPORTER_OTLP_* variables), then flags. See systemd/config.yaml for every "
		"key.\n",
	.epilogue =
		"\n"
		"Debug info: with DEBUGINFOD_URLS in the agent's environment, the debug files of\n"
		"stripped binaries that are missing here are fetched from those debuginfod "
		"servers\n"
		"in the background (never delaying a window); --set debuginfod.timeout=10s bounds\n"
		"each fetch (default DEBUGINFOD_TIMEOUT when set, else 10s). /metrics counts "
		"them.\n"
		"\n"
		"Tokens never go on the command line: put them in a file and name it in the\n"
		"config, under export.otlp.header_files (systemd LoadCredential=, a k8s Secret).\n"
		"\n"
		"Examples:\n"
		"  sudo hostprof agent --config /etc/hostprof/config.yaml\n"
		"  sudo hostprof agent --otlp-endpoint http://localhost:4318 --http-listen :7470\n"
		"  sudo hostprof agent --output-dir /var/lib/hostprof --upload-interval 60s\n"
		"  hostprof agent --config /etc/hostprof/config.yaml --print-config\n"
		"\n"
		"Needs root, or CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,\n"
		"CAP_SYS_RESOURCE, CAP_SYSLOG and CAP_CHECKPOINT_RESTORE "
		"(systemd/hostprof.service\n"
		"says what each is for).\n",
};

const struct opt_def *agent_options__key(const char *key)
{
	for (size_t i = 0; i < agent_command.nr_defs; i++)
		if (defs[i].key && !strcmp(defs[i].key, key))
			return &defs[i];
	return NULL;
}

/* A flag that names a key is applied after the file and the environment: keep it for then. */
static int on_flag(struct opt_ctx *ctx, const struct opt_def *d, const char *text, char *err,
		   size_t len)
{
	if (d->key)
		return add_set(ctx->targets[AGENT_TARGET_FLAGS], d->key, text, err, len);
	return options__set(d, ctx, text, err, len);
}

int agent_options__parse(int argc, char **argv, struct agent_flags *f, char *err, size_t len)
{
	struct opt_ctx ctx = {.targets = {[AGENT_TARGET_FLAGS] = f}, .on_option = on_flag};
	int operand = argc;
	int rc;

	memset(f, 0, sizeof(*f));
	f->log_level = -1;
	rc = options__parse(&agent_command, &ctx, argc, argv, &operand, err, len);
	if (!rc && operand < argc) {
		snprintf(err, len, "unexpected argument '%s'", argv[operand]);
		return -EINVAL;
	}
	return rc;
}

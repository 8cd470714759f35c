// SPDX-License-Identifier: BSD-2-Clause
/* The options of `hostprof profile`, in one table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd_options.h"
#include "hostprof_abi.h"

#define CFG(f) CONFIG_FIELD(f)
#define LIST(f) CONFIG_FIELD(f), .count_offset = offsetof(struct config, nr_##f)

/* "name=value" for --otlp-header and --pyroscope-header. */
static int parse_header(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
			size_t len)
{
	const char **headers = options__field(d, ctx);
	size_t *nr = (size_t *)((char *)ctx->targets[d->target] + d->count_offset);
	const char *eq = strchr(text, '=');

	if (!eq || eq == text) {
		/* The value may be a token: never echo it. */
		snprintf(err, len, "give the header as name=value, e.g. x-oneuptime-token=...");
		return -EINVAL;
	}
	if (*nr == CONFIG_MAX_HEADERS) {
		snprintf(err, len, "at most %d headers", CONFIG_MAX_HEADERS);
		return -E2BIG;
	}
	headers[(*nr)++] = text;
	return 0;
}

/* "name=path" for --otlp-header-file: the value is read from the file after parsing. */
static int parse_header_file(const struct opt_def *d, struct opt_ctx *ctx, const char *text,
			     char *err, size_t len)
{
	const char **files = options__field(d, ctx);
	size_t *nr = (size_t *)((char *)ctx->targets[d->target] + d->count_offset);
	const char *eq = strchr(text, '=');

	if (!eq || eq == text || !eq[1]) {
		snprintf(err, len,
			 "give the header as name=file, e.g. x-oneuptime-token=/run/secrets/token");
		return -EINVAL;
	}
	if (*nr == CONFIG_MAX_HEADERS) {
		snprintf(err, len, "at most %d header files", CONFIG_MAX_HEADERS);
		return -E2BIG;
	}
	files[(*nr)++] = text;
	return 0;
}

static const char *const unwind_choices[] = {"dwarf", "fp", NULL};
static const int unwind_values[] = {1, 0}; /* config.unwind_tables */
static const char *const sample_type_choices[] = {"cpu", "samples", NULL};
static const char *const api_choices[] = {"push", "ingest", NULL};
/* In enum cmdline_mode's order. */
static const char *const cmdline_choices[] = {"off", "redacted", "full", NULL};

static const struct opt_def defs[] = {
	{.name = "pid",
	 .short_name = 'p',
	 .type = OPT_CUSTOM,
	 .flags = OPT_F_REPEAT,
	 .parse = config__opt_pids,
	 .value_name = "PID[,PID...]",
	 .section = "What to profile (one of):",
	 .help = "these processes, all their threads (repeatable)"},
	{.name = "all",
	 .short_name = 'a',
	 .type = OPT_FLAG,
	 CFG(all),
	 .help = "every process on the host"},
	{.type = OPT_DOC,
	 .value_name = "-- COMMAND [ARGS...]",
	 .help = "run COMMAND and profile it until it exits; hostprof then exits with "
		 "COMMAND's status (127: it could not be run)"},
	{.name = "duration",
	 .short_name = 'd',
	 .type = OPT_SECONDS,
	 CFG(duration_s),
	 .value_name = "SECONDS",
	 .section = "Options:",
	 .help = "stop after this long (default: until Ctrl-C, the command exits, or every --pid "
		 "target has exited)"},
	{.name = "frequency",
	 .short_name = 'F',
	 .type = OPT_CUSTOM,
	 CFG(frequency_hz),
	 .parse = config__opt_frequency,
	 .print = config__print_frequency,
	 .dflt = "99",
	 .value_name = "HZ",
	 .help = "samples per second per CPU, 1 to 10000"},
	{.name = "types",
	 .short_name = 't',
	 .type = OPT_CUSTOM,
	 CFG(types),
	 .parse = config__opt_types,
	 .print = config__print_types,
	 .dflt = "cpu",
	 .value_name = "LIST",
	 .help = "cpu, wall (on- plus off-CPU time), offcpu (time off the CPU, with "
		 "thread.state) and contention (futex and kernel lock waits), e.g. cpu,wall; "
		 "pprof and folded files get one file per type"},
	{.name = "offcpu-min-us",
	 .type = OPT_UINT,
	 CFG(offcpu_min_ns),
	 .max = 3600e6,
	 .scale = 1000,
	 .dflt = "0",
	 .value_name = "N",
	 .help = "ignore off-CPU waits shorter than N microseconds"},
	{CONFIG_OPT_WAIT_SAMPLE,
	 .help = "off-CPU and lock waits shorter than N microseconds are sampled in proportion to "
		 "their length (a kept one counts N; totals stay right) so that a switch-heavy "
		 "server pays for few stacks; auto: the CPU sampling period (1/--frequency); 0: "
		 "take every wait's stack"},
	{CMD_OPT_OUTPUT, .help = "write the profile to FILE; the extension picks the format:\n"
				 "  .pb.gz      pprof (go tool pprof -http=: FILE)\n"
				 "  .folded     collapsed stacks, 'comm;root;...;leaf N'\n"
				 "  .otlp.pb    OTLP (binary); .otlp.json: OTLP/JSON\n"
				 "  .html       an interactive flame graph, one page\n"
				 "repeatable (default: profile.pb.gz)"},
	{.name = "no-inherit",
	 .type = OPT_FLAG,
	 CFG(no_inherit),
	 .help = "with -- COMMAND: profile the command alone, not the processes it starts "
		 "(followed by default, as perf record does)"},
	{.name = "include-idle",
	 .type = OPT_FLAG,
	 CFG(include_idle),
	 .help = "also count samples of the idle task (pid 0)"},
	{.name = "top",
	 .type = OPT_UINT,
	 CFG(top_n),
	 .min = 1,
	 .max = 1000,
	 .dflt = "10",
	 .value_name = "N",
	 .help = "functions in the summary"},
	{.name = "stats",
	 .type = OPT_FLAG,
	 CFG(print_stats),
	 .help = "end the summary with each cache's entries, bound and memory, and hostprof's own "
		 "RSS"},
	{.name = "stack-map-entries",
	 .type = OPT_UINT,
	 CFG(stack_map_entries),
	 .min = 1,
	 .max = 1 << 22,
	 .dflt = "16384",
	 .value_name = "N",
	 .help = "distinct stacks kept per drain"},
	{.name = "counts-map-entries",
	 .type = OPT_UINT,
	 CFG(counts_map_entries),
	 .min = 1,
	 .max = 1 << 22,
	 .dflt = "16384",
	 .value_name = "N",
	 .help = "distinct (thread, stack) pairs per drain; raise both when the summary reports "
		 "losses"},
	{.name = "unwind",
	 .type = OPT_ENUM,
	 CFG(unwind_tables),
	 .choices = unwind_choices,
	 .values = unwind_values,
	 .dflt = "dwarf",
	 .value_name = "dwarf|fp",
	 .bad_choice = "use dwarf (tables from .eh_frame, the default) or fp (frame pointers only)",
	 .section = "User stacks (most distribution binaries have no frame pointers):",
	 .help = "dwarf: walk user stacks in the kernel with tables built from each binary's "
		 ".eh_frame, so stacks through libc, python3 or -fomit-frame-pointer code reach "
		 "main; fp: frame pointers only (cheaper, and truncated in code built without "
		 "them)"},
	{.name = "unwind-depth",
	 .type = OPT_UINT,
	 CFG(unwind_depth),
	 .min = 1,
	 .max = HP_UNWIND_MAX_DEPTH,
	 .dflt = "128",
	 .value_name = "N",
	 .help = "user frames at most, 1 to 128"},
	{.name = "unwind-table-rows",
	 .type = OPT_UINT,
	 CFG(unwind_rows),
	 .min = 1024,
	 .max = 1U << 26,
	 .dflt = "1048576 = 16 MiB",
	 .value_name = "N",
	 .help = "unwind rows in kernel memory, 16 bytes each; binaries that do not fit fall back "
		 "to frame pointers, and the summary says so"},
	{.name = "cache-dir",
	 .type = OPT_STRING,
	 CFG(cache_dir),
	 .value_name = "DIR",
	 .help = "keep unwind tables on disk here between runs (default /var/cache/hostprof as "
		 "root; --cache-dir '' for none)"},
	{.name = "max-processes",
	 .type = OPT_UINT,
	 CFG(max_procs),
	 .min = 16,
	 .max = 1 << 20,
	 .dflt = "4096",
	 .value_name = "N",
	 .section = "Symbolizer caches (least recently used entries go first; see --stats):",
	 .help = "process snapshots (maps, identity) kept"},
	{.name = "max-binaries",
	 .type = OPT_UINT,
	 CFG(max_dsos),
	 .min = 16,
	 .max = 1 << 20,
	 .dflt = "1024",
	 .value_name = "N",
	 .help = "binaries' symbol tables kept"},
	{.name = "max-dwarf-mb",
	 .type = OPT_UINT,
	 CFG(max_dwarf_bytes),
	 .min = 1,
	 .max = 16384,
	 .scale = 1 << 20,
	 .dflt = "14",
	 .value_name = "N",
	 .help = "memory of open DWARF handles, MiB"},
	{.name = "max-symbols-mb",
	 .type = OPT_UINT,
	 CFG(max_symbol_bytes),
	 .min = 1,
	 .max = 16384,
	 .scale = 1 << 20,
	 .dflt = "6",
	 .value_name = "N",
	 .help = "memory of cached binaries' symbol tables, MiB"},
	{.name = "max-cached-locations",
	 .type = OPT_UINT,
	 CFG(max_cached_locations),
	 .min = 1024,
	 .max = 1 << 26,
	 .dflt = "262144",
	 .value_name = "N",
	 .help = "(pid, address) -> location entries per profile type"},
	{.name = "debuginfod-timeout",
	 .type = OPT_SECONDS,
	 CFG(debuginfod_timeout_s),
	 .value_name = "SECONDS",
	 .section = "Symbols: stripped binaries get their functions and file:line from separate "
		    "debug files, by build-id under /usr/lib/debug and by .gnu_debuglink. With "
		    "DEBUGINFOD_URLS set (space-separated debuginfod servers), the debug files "
		    "missing here are fetched in the background into CACHE-DIR/debuginfod "
		    "(DEBUGINFOD_CACHE_PATH wins), and the end of the capture waits for the ones "
		    "still on the way:",
	 .help = "per debug file (default DEBUGINFOD_TIMEOUT when set, else 10); a server that "
		 "fails is asked again after 10 minutes, and the summary counts the failures"},
	{.name = "otlp-endpoint",
	 .type = OPT_STRING,
	 CFG(otlp_endpoint),
	 .value_name = "URL",
	 .section = "Export (files are written either way; receivers are sent the profile at the "
		    "end):",
	 .help = "an OTLP profiles receiver, e.g. http://localhost:4318/v1development/profiles "
		 "(HTTP) or http://localhost:4317 with --otlp-protocol grpc. Default: "
		 "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + "
		 "/v1development/profiles"},
	{.name = "otlp-protocol",
	 .type = OPT_STRING,
	 CFG(otlp_protocol),
	 .value_name = "P",
	 .help = "http/protobuf (default), http/json or grpc (OTEL_EXPORTER_OTLP_PROTOCOL)"},
	{.name = "otlp-header",
	 .type = OPT_CUSTOM,
	 .flags = OPT_F_REPEAT | OPT_F_SECRET,
	 LIST(otlp_headers),
	 .parse = parse_header,
	 .value_name = "K=V",
	 .help = "a request header, e.g. x-oneuptime-token=TOKEN; repeatable "
		 "(OTEL_EXPORTER_OTLP_HEADERS); values are never printed"},
	{.name = "otlp-header-file",
	 .type = OPT_CUSTOM,
	 .flags = OPT_F_REPEAT,
	 LIST(otlp_header_files),
	 .parse = parse_header_file,
	 .value_name = "K=FILE",
	 .help = "a request header whose value is FILE's content, e.g. "
		 "x-oneuptime-token=/run/secrets/token: the token stays off the command line; "
		 "repeatable"},
	{.name = "otlp-compression",
	 .type = OPT_STRING,
	 CFG(otlp_compression),
	 .value_name = "gzip|none",
	 .help = "(default gzip; OTEL_EXPORTER_OTLP_COMPRESSION)"},
	{.name = "otlp-timeout",
	 .type = OPT_STRING,
	 CFG(otlp_timeout_ms),
	 .value_name = "MS",
	 .help = "per request (default 10000)"},
	{.name = "otlp-ca",
	 .type = OPT_STRING,
	 CFG(otlp_ca_file),
	 .value_name = "FILE",
	 .help = "verify the receiver with this PEM bundle"},
	{.name = "otlp-insecure",
	 .type = OPT_FLAG,
	 CFG(otlp_insecure),
	 .help = "do not verify the receiver's TLS certificate"},
	{.name = "otlp-sample-type",
	 .type = OPT_ENUM,
	 CFG(otlp_samples_count),
	 .choices = sample_type_choices,
	 .dflt = "cpu",
	 .value_name = "cpu|samples",
	 .bad_choice = "give cpu (cpu/nanoseconds, as OneUptime expects) or samples "
		       "(samples/count, the OpenTelemetry eBPF profiler's)",
	 .help = "cpu/nanoseconds (OneUptime) or samples/count (OpenTelemetry eBPF profiler; "
		 "Pyroscope)"},
	{.name = "command-line",
	 .type = OPT_ENUM,
	 CFG(cmdline_mode),
	 .choices = cmdline_choices,
	 .dflt = "off",
	 .value_name = "off|redacted|full",
	 .bad_choice = "give off (the default), redacted (secret-looking values hidden) or full",
	 .help = "process.command_line in OTLP: off, redacted (argv with the values of "
		 "secret-looking arguments hidden) or full"},
	{.name = "pyroscope-url",
	 .type = OPT_STRING,
	 CFG(pyroscope_url),
	 .value_name = "URL",
	 .help = "a Pyroscope server (or https://host/pyroscope)"},
	{.name = "pyroscope-api",
	 .type = OPT_ENUM_STR,
	 CFG(pyroscope_api),
	 .choices = api_choices,
	 .dflt = "push",
	 .value_name = "push|ingest",
	 .bad_choice = "give push (the Push API, as Alloy sends) or ingest (the legacy /ingest "
		       "API)",
	 .help = "the Push API (as Alloy) or /ingest"},
	{.name = "pyroscope-header",
	 .type = OPT_CUSTOM,
	 .flags = OPT_F_REPEAT | OPT_F_SECRET,
	 LIST(pyroscope_headers),
	 .parse = parse_header,
	 .value_name = "K=V",
	 .help = "e.g. x-oneuptime-token=TOKEN; repeatable"},
	{.name = "export-deadline",
	 .type = OPT_SECONDS,
	 CFG(export_deadline_s),
	 .dflt = "10",
	 .value_name = "SECONDS",
	 .help = "how long to wait for receivers at the end; what is not delivered by then is "
		 "reported"},
	{.name = "quiet",
	 .short_name = 'q',
	 .type = OPT_FLAG,
	 CFG(quiet),
	 .section = "",
	 .help = "print only errors and the output paths"},
	{.name = "verbose",
	 .short_name = 'v',
	 .type = OPT_FLAG,
	 CFG(verbose),
	 .help = "print debug messages (libbpf's too)"},
	OPT_DEF_HELP,
};

const struct opt_command profile_command = {
	.prog = "hostprof profile",
	.defs = defs,
	.nr_defs = sizeof(defs) / sizeof(defs[0]),
	/* Everything after "--" (or the first operand) is the command to run. */
	.stop_at_operand = true,
	.usage =
		"Usage: hostprof profile (--pid PID[,PID...] | --all) [options]\n"
		"       hostprof profile [options] -- COMMAND [ARGS...]\n"
		"\n"
		"Capture a CPU profile with eBPF: every CPU is sampled on its cpu-clock, and each\n"
		"sample's kernel and user stacks are counted in the kernel, then symbolized "
		"here.\n"
		"Python 3.10 to 3.13 functions are named from CPython's own frames (Linux 5.17+),\n"
		"with nothing to change in the process.\n",
	.epilogue =
		"\n"
		"Examples:\n"
		"  sudo hostprof profile --pid 1234 --duration 10 -o cpu.pb.gz -o cpu.folded\n"
		"  sudo hostprof profile --all --duration 5\n"
		"  sudo hostprof profile -F 999 -o run.pb.gz -- ./my-benchmark --iterations 100\n"
		"  sudo hostprof profile --all -d 10 --otlp-endpoint "
		"https://oneuptime.com/otlp/v1/profiles \\\n"
		"       --otlp-header x-oneuptime-token=$TOKEN\n"
		"\n"
		"Needs root, or CAP_BPF and CAP_PERFMON, with CAP_SYS_PTRACE, "
		"CAP_DAC_READ_SEARCH,\n"
		"CAP_SYS_RESOURCE, CAP_SYSLOG and CAP_CHECKPOINT_RESTORE to read other users'\n"
		"processes and binaries and the kernel's symbols (README: what each is for); and "
		"a\n"
		"kernel with BTF (Linux 5.10 or later).\n",
};

int profile_options__parse(int argc, char **argv, struct config *c, char *err, size_t len)
{
	struct opt_ctx ctx = {.targets = {c}};
	int operand = argc;
	int rc = options__parse(&profile_command, &ctx, argc, argv, &operand, err, len);

	if (rc)
		return rc;
	if (operand < argc) {
		if (strcmp(argv[operand - 1], "--") != 0) {
			snprintf(
				err, len,
				"unexpected argument '%s': to profile a command, put it after '--'",
				argv[operand]);
			return -EINVAL;
		}
		c->command = &argv[operand];
	}
	if ((c->nr_pids > 0) + c->all + (c->command != NULL) != 1) {
		snprintf(err, len,
			 "say what to profile: exactly one of --pid PID, --all, or -- "
			 "COMMAND");
		return -EINVAL;
	}
	if (c->nr_outputs == 0)
		config__add_output(c, "profile.pb.gz", err, len);
	return 0;
}

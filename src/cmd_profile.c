// SPDX-License-Identifier: BSD-2-Clause
/*
 * `hostprof profile`: a one-shot capture. Wires the BPF session, the collector, the symbolizer and
 * the profile model together, drains once per interval until the capture ends, then writes the
 * outputs and prints the summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf_session.h"
#include "builder.h"
#include "cmds.h"
#include "collector.h"
#include "config.h"
#include "deliver.h"
#include "encode.h"
#include "log.h"
#include "otlp_config.h"
#include "profile.h"
#include "status.h"
#include "summary.h"
#include "symbolize.h"

#define EXIT_USAGE 2
#define NSEC_PER_SEC 1000000000ULL

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void print_help(FILE *out)
{
	fprintf(out,
		"Usage: hostprof profile (--pid PID[,PID...] | --all) [options]\n"
		"       hostprof profile [options] -- COMMAND [ARGS...]\n"
		"\n"
		"Capture a CPU profile with eBPF: every CPU is sampled on its cpu-clock, and each\n"
		"sample's kernel and user stacks are counted in the kernel, then symbolized here.\n"
		"\n"
		"What to profile (one of):\n"
		"  -p, --pid PID[,PID...]  these processes, all their threads (repeatable)\n"
		"  -a, --all               every process on the host\n"
		"  -- COMMAND [ARGS...]    run COMMAND and profile it until it exits\n"
		"\n"
		"Options:\n"
		"  -d, --duration SECONDS  stop after this long (default: until Ctrl-C, the "
		"command\n"
		"                          exits, or every --pid target has exited)\n"
		"  -F, --frequency HZ      samples per second per CPU (default 99; 1 to 10000)\n"
		"  -t, --types LIST        cpu (default), wall (on- plus off-CPU time), offcpu\n"
		"                          (time off the CPU, with thread.state) and contention\n"
		"                          (futex and kernel lock waits), e.g. cpu,wall;\n"
		"                          pprof and folded files get one file per type\n"
		"      --offcpu-min-us N   ignore off-CPU waits shorter than N microseconds\n"
		"  -o, --output FILE       write the profile to FILE; the extension picks the "
		"format:\n"
		"                            .pb.gz   pprof (open with: go tool pprof -http=: "
		"FILE)\n"
		"                            .folded  collapsed stacks, 'comm;root;...;leaf "
		"count'\n"
		"                          repeatable (default: profile.pb.gz)\n"
		"      --include-idle      also count samples of the idle task (pid 0)\n"
		"      --top N             functions in the summary (default 10)\n"
		"      --stack-map-entries N   distinct stacks kept per drain (default 16384)\n"
		"      --counts-map-entries N  distinct (thread, stack) pairs per drain (default\n"
		"                          16384); raise both when the summary reports losses\n"
		"\n"
		"Export (files are written either way; receivers are sent the profile at the "
		"end):\n"
		"      --otlp-endpoint URL     an OTLP profiles receiver, e.g.\n"
		"                          http://localhost:4318/v1development/profiles (HTTP) or\n"
		"                          http://localhost:4317 with --otlp-protocol grpc. "
		"Default:\n"
		"                          OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT, else\n"
		"                          OTEL_EXPORTER_OTLP_ENDPOINT + /v1development/profiles\n"
		"      --otlp-protocol P   http/protobuf (default), http/json or grpc\n"
		"                          (OTEL_EXPORTER_OTLP_PROTOCOL)\n"
		"      --otlp-header K=V   a request header, e.g. x-oneuptime-token=TOKEN; "
		"repeatable\n"
		"                          (OTEL_EXPORTER_OTLP_HEADERS); values are never printed\n"
		"      --otlp-compression gzip|none   (default gzip)\n"
		"      --otlp-timeout MS   per request (default 10000)\n"
		"      --otlp-ca FILE      verify the receiver with this PEM bundle\n"
		"      --otlp-insecure     do not verify the receiver's TLS certificate\n"
		"      --otlp-sample-type cpu|samples  cpu/nanoseconds (default; OneUptime) or\n"
		"                          samples/count (OpenTelemetry eBPF profiler; Pyroscope)\n"
		"      --pyroscope-url URL     a Pyroscope server (or https://host/pyroscope)\n"
		"      --pyroscope-api push|ingest  the Push API (default, as Alloy) or /ingest\n"
		"      --pyroscope-header K=V  e.g. x-oneuptime-token=TOKEN; repeatable\n"
		"      --export-deadline SECONDS  how long to wait for receivers at the end\n"
		"                          (default 10); what is not delivered by then is "
		"reported\n"
		"\n"
		"  -q, --quiet             print only errors and the output paths\n"
		"  -v, --verbose           print debug messages (libbpf's too)\n"
		"  -h, --help              show this help\n"
		"\n"
		"Examples:\n"
		"  sudo hostprof profile --pid 1234 --duration 10 -o cpu.pb.gz -o cpu.folded\n"
		"  sudo hostprof profile --all --duration 5\n"
		"  sudo hostprof profile -F 999 -o run.pb.gz -- ./my-benchmark --iterations 100\n"
		"  sudo hostprof profile --all -d 10 --otlp-endpoint "
		"https://oneuptime.com/otlp/v1/profiles \\\n"
		"       --otlp-header x-oneuptime-token=$TOKEN\n"
		"\n"
		"Needs root, or CAP_BPF and CAP_PERFMON (with CAP_SYS_PTRACE, CAP_SYSLOG and\n"
		"CAP_CHECKPOINT_RESTORE to read other users' processes and kernel symbols), and a\n"
		"kernel with BTF (Linux 5.8 or later).\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hostprof profile: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nSee 'hostprof profile --help'.\n");
	return -EINVAL;
}

enum {
	OPT_INCLUDE_IDLE = 256,
	OPT_TOP,
	OPT_STACK_ENTRIES,
	OPT_COUNTS_ENTRIES,
	OPT_OTLP_ENDPOINT,
	OPT_OTLP_PROTOCOL,
	OPT_OTLP_HEADER,
	OPT_OTLP_COMPRESSION,
	OPT_OTLP_TIMEOUT,
	OPT_OTLP_INSECURE,
	OPT_OTLP_CA,
	OPT_OTLP_SAMPLE_TYPE,
	OPT_PYROSCOPE_URL,
	OPT_PYROSCOPE_API,
	OPT_PYROSCOPE_HEADER,
	OPT_EXPORT_DEADLINE,
	OPT_OFFCPU_MIN_US,
};

/* "--duration" for 'd': error messages name the flag as the user knows it. */
static const char *flag_name(const struct option *options, int opt)
{
	static char name[64];

	for (; options->name; options++) {
		if (options->val == opt) {
			snprintf(name, sizeof(name), "--%s", options->name);
			return name;
		}
	}
	return "option";
}

/* "name=value" for --otlp-header and --pyroscope-header. */
static int add_header(const char **headers, size_t *nr, const char *arg, char *err, size_t len)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg) {
		/* The value may be a token: never echo it. */
		snprintf(err, len, "give the header as name=value, e.g. x-oneuptime-token=...");
		return -EINVAL;
	}
	if (*nr == CONFIG_MAX_HEADERS) {
		snprintf(err, len, "at most %d headers", CONFIG_MAX_HEADERS);
		return -E2BIG;
	}
	headers[(*nr)++] = arg;
	return 0;
}

/* Returns 0 to run, 1 when help was printed, or -EINVAL after printing the problem. */
static int parse_args(int argc, char **argv, struct config *c)
{
	static const struct option options[] = {
		{"pid", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, 'a'},
		{"duration", required_argument, NULL, 'd'},
		{"frequency", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},
		{"include-idle", no_argument, NULL, OPT_INCLUDE_IDLE},
		{"top", required_argument, NULL, OPT_TOP},
		{"stack-map-entries", required_argument, NULL, OPT_STACK_ENTRIES},
		{"counts-map-entries", required_argument, NULL, OPT_COUNTS_ENTRIES},
		{"otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT},
		{"otlp-protocol", required_argument, NULL, OPT_OTLP_PROTOCOL},
		{"otlp-header", required_argument, NULL, OPT_OTLP_HEADER},
		{"otlp-compression", required_argument, NULL, OPT_OTLP_COMPRESSION},
		{"otlp-timeout", required_argument, NULL, OPT_OTLP_TIMEOUT},
		{"otlp-insecure", no_argument, NULL, OPT_OTLP_INSECURE},
		{"otlp-ca", required_argument, NULL, OPT_OTLP_CA},
		{"otlp-sample-type", required_argument, NULL, OPT_OTLP_SAMPLE_TYPE},
		{"pyroscope-url", required_argument, NULL, OPT_PYROSCOPE_URL},
		{"pyroscope-api", required_argument, NULL, OPT_PYROSCOPE_API},
		{"pyroscope-header", required_argument, NULL, OPT_PYROSCOPE_HEADER},
		{"export-deadline", required_argument, NULL, OPT_EXPORT_DEADLINE},
		{"types", required_argument, NULL, 't'},
		{"offcpu-min-us", required_argument, NULL, OPT_OFFCPU_MIN_US},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	char err[256];
	int opt;

	opterr = 0;
	optind = 1;
	/* '+': stop at the first non-option, so that everything after "--" is the command. */
	while ((opt = getopt_long(argc, argv, "+:p:ad:F:o:t:qvh", options, NULL)) != -1) {
		int rc = 0;

		switch (opt) {
		case 'p':
			rc = config__parse_pids(c, optarg, err, sizeof(err));
			break;
		case 'a':
			c->all = true;
			break;
		case 'd':
			rc = config__parse_duration(optarg, &c->duration_s, err, sizeof(err));
			break;
		case 'F':
			rc = config__parse_frequency(optarg, &c->frequency_hz, err, sizeof(err));
			break;
		case 'o':
			rc = config__add_output(c, optarg, err, sizeof(err));
			break;
		case OPT_INCLUDE_IDLE:
			c->include_idle = true;
			break;
		case OPT_TOP:
			rc = config__parse_count(optarg, 1, 1000, &c->top_n, err, sizeof(err));
			break;
		case OPT_STACK_ENTRIES:
		case OPT_COUNTS_ENTRIES: {
			size_t n = 0;

			rc = config__parse_count(optarg, 1, 1 << 22, &n, err, sizeof(err));
			if (opt == OPT_STACK_ENTRIES)
				c->stack_map_entries = n;
			else
				c->counts_map_entries = n;
			break;
		}
		case OPT_OTLP_ENDPOINT:
			c->otlp_endpoint = optarg;
			break;
		case OPT_OTLP_PROTOCOL:
			c->otlp_protocol = optarg;
			break;
		case OPT_OTLP_HEADER:
		case OPT_PYROSCOPE_HEADER:
			rc = add_header(opt == OPT_OTLP_HEADER ? c->otlp_headers
							       : c->pyroscope_headers,
					opt == OPT_OTLP_HEADER ? &c->nr_otlp_headers
							       : &c->nr_pyroscope_headers,
					optarg, err, sizeof(err));
			break;
		case OPT_OTLP_COMPRESSION:
			c->otlp_compression = optarg;
			break;
		case OPT_OTLP_TIMEOUT:
			c->otlp_timeout_ms = optarg;
			break;
		case OPT_OTLP_INSECURE:
			c->otlp_insecure = true;
			break;
		case OPT_OTLP_CA:
			c->otlp_ca_file = optarg;
			break;
		case OPT_OTLP_SAMPLE_TYPE:
			if (!strcmp(optarg, "cpu") || !strcmp(optarg, "samples")) {
				c->otlp_samples_count = !strcmp(optarg, "samples");
			} else {
				snprintf(
					err, sizeof(err),
					"'%s': give cpu (cpu/nanoseconds, as OneUptime expects) or "
					"samples (samples/count, the OpenTelemetry eBPF "
					"profiler's)",
					optarg);
				rc = -EINVAL;
			}
			break;
		case OPT_PYROSCOPE_URL:
			c->pyroscope_url = optarg;
			break;
		case OPT_PYROSCOPE_API:
			if (!strcmp(optarg, "push") || !strcmp(optarg, "ingest")) {
				c->pyroscope_api = optarg;
			} else {
				snprintf(err, sizeof(err),
					 "'%s': give push (the Push API, as Alloy sends) or ingest "
					 "(the legacy /ingest API)",
					 optarg);
				rc = -EINVAL;
			}
			break;
		case 't':
			rc = config__parse_types(c, optarg, err, sizeof(err));
			break;
		case OPT_OFFCPU_MIN_US: {
			size_t us = 0;

			rc = config__parse_count(optarg, 0, 3600ULL * 1000000, &us, err,
						 sizeof(err));
			c->offcpu_min_ns = (uint64_t)us * 1000;
			break;
		}
		case OPT_EXPORT_DEADLINE:
			rc = config__parse_duration(optarg, &c->export_deadline_s, err,
						    sizeof(err));
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'v':
			c->verbose = true;
			break;
		case 'h':
			print_help(stdout);
			return 1;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (rc)
			return usage_error("%s: %s", flag_name(options, opt), err);
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0)
			return usage_error("unexpected argument '%s': to profile a command, put it "
					   "after '--'",
					   argv[optind]);
		c->command = &argv[optind];
	}
	if ((c->nr_pids > 0) + c->all + (c->command != NULL) != 1)
		return usage_error("say what to profile: exactly one of --pid PID, --all, or "
				   "-- COMMAND");
	if (c->nr_outputs == 0)
		config__add_output(c, "profile.pb.gz", err, sizeof(err));
	return 0;
}

/* Fail before the capture, not after it, when an output cannot be written. */
static int check_outputs(const struct config *c)
{
	for (size_t i = 0; i < c->nr_outputs; i++) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", c->outputs[i].path);
		if (access(dirname(dir), W_OK) != 0) {
			log_error("cannot write '%s': directory is not writable: %s",
				  c->outputs[i].path, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static bool process_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * Fork the command, held at a pipe until the sampler is attached, so that its very first
 * instructions are profiled. Returns the child's PID, or -errno.
 */
static pid_t spawn_held(char **command, int *release_fd)
{
	int pipefd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		char go;

		close(pipefd[1]);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(126); /* hostprof gave up before starting the command */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(command[0], command);
		fprintf(stderr, "hostprof: cannot run '%s': %s\n", command[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[0]);
	*release_fd = pipefd[1];
	return pid;
}

enum slot { SLOT_CPU, SLOT_WALL, SLOT_OFFCPU, SLOT_CONTENTION, NR_SLOTS };

struct capture {
	const struct config *cfg;
	struct bpf_session *session;
	struct symbolizer *sym;
	/* One profile and builder per type (indexed by enum slot), NULL when not asked for;
	 * profile is the first one made, which the headline and process count come from. */
	struct profile *profiles[NR_SLOTS];
	struct builder *builders[NR_SLOTS];
	struct profile *profile;
	struct sample_batch batch;
	struct sample_batch offcpu_batch;
	struct sample_batch lock_batch;
	struct collector_stats stats;
	struct deliverer *deliver;
	struct endpoint_config otlp_cfg, pyroscope_cfg;
	bool otlp_on, pyroscope_on;
	char host_name[256];
	pid_t child;
	int child_status;
	bool child_exited;
	int64_t period_ns;
};

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

static bool wants_offcpu(const struct capture *cap)
{
	return cap->profiles[SLOT_WALL] || cap->profiles[SLOT_OFFCPU];
}

static int drain_once(struct capture *cap)
{
	struct sample_batch *offcpu = wants_offcpu(cap) ? &cap->offcpu_batch : NULL;
	struct sample_batch *lock = cap->builders[SLOT_CONTENTION] ? &cap->lock_batch : NULL;
	int n = collector__drain(cap->session, &cap->batch, offcpu, lock, &cap->stats);

	if (n < 0) {
		log_error("draining the BPF maps failed: %s", strerror(-n));
		return n;
	}
	n = add_batches(cap, &cap->batch, offcpu);
	if (!n && lock)
		n = builder__add_batch(cap->builders[SLOT_CONTENTION], lock, BATCH_LOCK, 0);
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

/* Why the capture should end now, or NULL to go on. */
static const char *should_stop(struct capture *cap)
{
	const struct config *c = cap->cfg;

	if (stop_signal)
		return "interrupted";
	if (cap->child > 0 && !cap->child_exited &&
	    waitpid(cap->child, &cap->child_status, WNOHANG) == cap->child) {
		cap->child_exited = true;
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
static void show_status(struct capture *cap, struct status *st, uint64_t start, uint64_t now)
{
	struct status_numbers n = {
		.elapsed_s = (now - start) / 1e9,
		.total_s = cap->cfg->duration_s,
		.samples = cap->stats.samples_seen,
		.lost = cap->stats.losses[HP_LOSS_COUNTS_MAP_FULL],
		.processes = cap->profile ? profile__nr_processes(cap->profile) : 0,
	};

	status__update(st, &n, now);
}

static int run_loop(struct capture *cap)
{
	const struct config *c = cap->cfg;
	uint64_t start = now_ns(CLOCK_MONOTONIC);
	uint64_t deadline =
		c->duration_s > 0 ? start + (uint64_t)(c->duration_s * NSEC_PER_SEC) : 0;
	uint64_t interval = (uint64_t)(c->drain_interval_s * NSEC_PER_SEC);
	uint64_t next_drain = start + interval;
	/* NULL when it cannot be made: the capture goes on without it. */
	struct status *st = status__new(!c->quiet && isatty(STDERR_FILENO));
	const char *why = NULL;
	int err;

	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		struct timespec nap = {.tv_nsec = 50 * 1000 * 1000};

		if (deadline && now >= deadline) {
			why = "the duration elapsed";
			break;
		}
		why = should_stop(cap);
		if (why)
			break;
		if (now >= next_drain) {
			/* A drain may log (symbolizer, builder): erase first, so that its lines
			 * start at column 0 and the status is redrawn below them. */
			status__clear(st);
			err = drain_once(cap);
			if (err < 0) {
				status__delete(st);
				return err;
			}
			next_drain = now + interval;
		}
		show_status(cap, st, start, now);
		nanosleep(&nap, NULL);
	}
	status__delete(st); /* erases it: what follows starts on a clean line */
	if (!c->quiet)
		log_info("capture ended: %s", why);
	/* Stop sampling first: the last drain then holds every sample, and the summary's
	 * "samples = recorded + lost" adds up exactly. */
	bpf_session__detach(cap->session);
	err = drain_once(cap);
	return err ? err : drain_pending(cap);
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

static void print_summary(const struct capture *cap, double elapsed_s)
{
	const struct collector_stats *st = &cap->stats;
	struct symbolizer_stats ss;
	struct summary sum;
	uint64_t lost_whole = st->losses[HP_LOSS_COUNTS_MAP_FULL];

	symbolizer__stats(cap->sym, &ss);
	size_t procs = count_processes(cap->profile);
	bool map_losses = false;

	printf("Captured %.1f s at %u Hz on %d CPUs: %" PRIu64 " samples, %" PRIu64
	       " recorded, %" PRIu64 " lost; %zu process%s\n",
	       elapsed_s, cap->cfg->frequency_hz, bpf_session__nr_cpus(cap->session),
	       st->samples_seen, st->samples_drained, lost_whole, procs, procs == 1 ? "" : "es");
	for (int i = 0; i < HP_LOSS__COUNT; i++) {
		if (!st->losses[i])
			continue;
		printf("  %-44s %" PRIu64 "\n", collector__loss_name(i), st->losses[i]);
		map_losses |= i != HP_LOSS_USER_STACK_MISSING && i != HP_LOSS_KERN_STACK_MISSING;
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
	if (cap->stats.offcpu_events || wants_offcpu(cap))
		printf("Off-CPU: %" PRIu64 " waits recorded\n", cap->stats.offcpu_events);
	if (cap->profiles[SLOT_CONTENTION])
		printf("Contention: %" PRIu64 " lock waits recorded\n", cap->stats.lock_events);
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		if (!cap->profiles[slot] || summary__compute(cap->profiles[slot], &sum) != 0)
			continue;
		printf("\n[%s]", profile__desc(cap->profiles[slot])->sample_type);
		summary__print_top(&sum, cap->cfg->top_n, stdout);
		summary__release(&sum);
	}
}

static const char *env_lookup(const char *name)
{
	return getenv(name);
}

/* The OTLP and Pyroscope endpoints from flags and environment; off when neither names one. */
static int resolve_exports(struct capture *cap)
{
	const struct config *c = cap->cfg;
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
	char err[512];
	int rc;

	rc = otlp_config__resolve(&f, env_lookup, &cap->otlp_cfg, err, sizeof(err));
	if (rc == 0) {
		cap->otlp_on = true;
	} else if (rc != -ENOENT) {
		log_error("OTLP export: %s", err);
		return rc;
	}
	if (c->pyroscope_url) {
		rc = otlp_config__resolve_pyroscope(c->pyroscope_url, c->pyroscope_api,
						    c->pyroscope_headers, c->nr_pyroscope_headers,
						    &cap->pyroscope_cfg, err, sizeof(err));
		if (rc) {
			log_error("Pyroscope export: %s", err);
			return rc;
		}
		cap->pyroscope_on = true;
	}
	return 0;
}

static int start_delivery(struct capture *cap)
{
	const struct config *c = cap->cfg;
	struct deliver_opts o = {0};
	int err = resolve_exports(cap);

	if (err)
		return err;
	o.outputs = c->outputs;
	o.nr_outputs = c->nr_outputs;
	o.otlp = cap->otlp_on ? &cap->otlp_cfg : NULL;
	o.pyroscope = cap->pyroscope_on ? &cap->pyroscope_cfg : NULL;
	o.pyroscope_profile_name = "process_cpu";
	o.pyroscope_app_name = NULL;
	o.exporter.queue_max_bytes = c->export_queue_bytes;
	deliver__host_facts(cap->host_name, sizeof(cap->host_name), &o.otlp_opts.host_arch);
	o.otlp_opts.host_name = cap->host_name;
	o.otlp_opts.scope_version = HOSTPROF_VERSION;
	o.otlp_opts.samples_count = c->otlp_samples_count;
	cap->deliver = deliverer__new(&o);
	return cap->deliver ? 0 : -errno;
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
static int finish_delivery(struct capture *cap)
{
	const struct profile *profiles[NR_SLOTS];
	struct delivery_report r;
	size_t n = 0;
	int err;

	for (int slot = 0; slot < NR_SLOTS; slot++)
		if (cap->profiles[slot])
			profiles[n++] = cap->profiles[slot];
	err = deliverer__deliver(cap->deliver, profiles, n);
	deliverer__shutdown(cap->deliver, (int64_t)(cap->cfg->export_deadline_s * 1000), &r);
	cap->deliver = NULL;
	if (r.otlp_on)
		print_export_line("OTLP export", &r.otlp);
	if (r.pyroscope_on)
		print_export_line("Pyroscope export", &r.pyroscope);
	if (!err && (r.otlp.undelivered || r.otlp.dropped_refused || r.pyroscope.undelivered ||
		     r.pyroscope.dropped_refused))
		err = -EIO;
	return err;
}

static int setup(struct capture *cap, int *release_fd)
{
	const struct config *c = cap->cfg;
	struct bpf_session_opts bopts = {
		.filter_pids = !c->all,
		.include_idle = c->include_idle,
		.stack_map_entries = c->stack_map_entries,
		.counts_map_entries = c->counts_map_entries,
	};
	struct symbolizer_opts sopts = {
		.proc_root = c->proc_root,
		.kallsyms_path = c->kallsyms_path,
		.max_procs = c->max_procs,
		.max_dsos = c->max_dsos,
	};
	/* Off-CPU values are times; its period is one context switch, as OTLP's example has it. */
	const struct profile_desc descs[NR_SLOTS] = {
		[SLOT_CPU] = {"cpu", "nanoseconds", "cpu", "nanoseconds", cap->period_ns},
		[SLOT_WALL] = {"wall", "nanoseconds", "wall", "nanoseconds", cap->period_ns},
		[SLOT_OFFCPU] = {"off_cpu", "nanoseconds", "context_switch", "count", 1},
		[SLOT_CONTENTION] = {"contention", "nanoseconds", "contentions", "count", 1},
	};
	const unsigned int bits[NR_SLOTS] = {PROFILE_TYPE_CPU, PROFILE_TYPE_WALL,
					     PROFILE_TYPE_OFFCPU, PROFILE_TYPE_CONTENTION};
	uint64_t start = now_ns(CLOCK_REALTIME);
	int err;

	bopts.offcpu = c->types & (PROFILE_TYPE_WALL | PROFILE_TYPE_OFFCPU);
	bopts.offcpu_min_ns = c->offcpu_min_ns;
	bopts.offcpu_threads = c->offcpu_threads;
	bopts.offcpu_map_entries = c->offcpu_map_entries;
	bopts.lock = c->types & PROFILE_TYPE_CONTENTION;

	err = start_delivery(cap);
	if (err)
		return err;
	cap->session = bpf_session__new(&bopts);
	if (!cap->session)
		return -errno;
	if (c->command) {
		cap->child = spawn_held(c->command, release_fd);
		if (cap->child < 0) {
			log_error("cannot start '%s': %s", c->command[0], strerror(-cap->child));
			return cap->child;
		}
		err = bpf_session__add_pid(cap->session, cap->child);
		if (err)
			return err;
	}
	for (size_t i = 0; i < c->nr_pids; i++) {
		err = bpf_session__add_pid(cap->session, c->pids[i]);
		if (err) {
			log_error("map 'target_pids': adding PID %d failed: %s", c->pids[i],
				  strerror(-err));
			return err;
		}
	}
	cap->sym = symbolizer__new(&sopts);
	if (!cap->sym)
		return -ENOMEM;
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		struct profile_desc desc = descs[slot];

		if (!(c->types & bits[slot]))
			continue;
		desc.time_nanos = start;
		cap->profiles[slot] = profile__new(&desc);
		if (!cap->profiles[slot])
			return -ENOMEM;
		cap->builders[slot] =
			builder__new(cap->profiles[slot], cap->sym, c->max_cached_locations);
		if (!cap->builders[slot])
			return -ENOMEM;
		if (!cap->profile)
			cap->profile = cap->profiles[slot];
	}
	for (size_t i = 0; i < c->nr_pids; i++)
		if (symbolizer__track(cap->sym, c->pids[i]))
			log_warn("cannot read the maps of PID %d yet; its frames may be [unknown]",
				 c->pids[i]);
	return bpf_session__attach(cap->session, c->frequency_hz);
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

int do_profile(int argc, char **argv)
{
	struct config cfg;
	struct capture cap = {.cfg = &cfg, .child = -1};
	struct sigaction sa = {.sa_handler = on_signal};
	char why[512];
	int err, release_fd = -1, rc;
	uint64_t started;

	config__defaults(&cfg);
	rc = parse_args(argc, argv, &cfg);
	if (rc)
		return rc > 0 ? 0 : EXIT_USAGE;
	log_set_level(cfg.verbose ? LOG_DEBUG : cfg.quiet ? LOG_ERROR : LOG_INFO);
	log_bridge_libbpf();
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

	cap.period_ns = (int64_t)(NSEC_PER_SEC / cfg.frequency_hz);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = setup(&cap, &release_fd);
	if (err)
		goto out;
	if (!cfg.quiet)
		describe_target(&cfg);
	started = now_ns(CLOCK_MONOTONIC);
	if (release_fd >= 0) {
		if (write(release_fd, "g", 1) != 1)
			log_warn("cannot release the command: %s", strerror(errno));
		close(release_fd);
		release_fd = -1;
	}
	err = run_loop(&cap);
	/* Whatever went wrong during the capture, what was collected is still written. */
	{
		const double elapsed = (now_ns(CLOCK_MONOTONIC) - started) / 1e9;
		int werr;

		for (int slot = 0; slot < NR_SLOTS; slot++)
			if (cap.profiles[slot])
				profile__set_window(cap.profiles[slot],
						    profile__desc(cap.profiles[slot])->time_nanos,
						    (uint64_t)(elapsed * NSEC_PER_SEC));
		if (!cfg.quiet)
			print_summary(&cap, elapsed);
		werr = finish_delivery(&cap);
		if (!err)
			err = werr;
	}
out:
	if (release_fd >= 0)
		close(release_fd); /* the held child sees EOF and exits without running */
	if (cap.child > 0) {
		if (!cap.child_exited) {
			if (err)
				kill(cap.child, SIGTERM);
			waitpid(cap.child, &cap.child_status, 0);
		}
		if (!cfg.quiet && WIFEXITED(cap.child_status) && WEXITSTATUS(cap.child_status))
			log_info("the command exited with status %d",
				 WEXITSTATUS(cap.child_status));
	}
	deliverer__shutdown(cap.deliver, 0, NULL);
	if (cap.otlp_on)
		otlp_config__release(&cap.otlp_cfg);
	if (cap.pyroscope_on)
		otlp_config__release(&cap.pyroscope_cfg);
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		builder__delete(cap.builders[slot]);
		profile__delete(cap.profiles[slot]);
	}
	sample_batch__release(&cap.offcpu_batch);
	sample_batch__release(&cap.lock_batch);
	symbolizer__delete(cap.sym);
	sample_batch__release(&cap.batch);
	bpf_session__delete(cap.session);
	return err ? 1 : 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The option tables and their engine: every option of every command is in its --help and in
 * README.md; each type parses good values and refuses a bad one with a message naming the flag;
 * the tables' defaults are the defaults the commands start from; the agent's layers stack as
 * file < environment < flags.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture_paths.h"
#include "agent/config_load.h"
#include "base/options.h"
#include "cmd/cmd_options.h"

/* A file of the repository root (README.md, systemd/): tests run from there (run-unit.sh copies
 * them). */
static char *read_file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

static char *help_text(const struct opt_command *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	options__help(cmd, f);
	fclose(f);
	return buf;
}

/* "--name" as a whole word of text: not a prefix of "--name-more". */
static bool has_flag(const char *text, const char *flag)
{
	size_t n = strlen(flag);

	for (const char *p = strstr(text, flag); p; p = strstr(p + 1, flag)) {
		char next = p[n];

		if (!(next == '-' || (next >= 'a' && next <= 'z')))
			return true;
	}
	return false;
}

static void check_documented(const struct opt_command *cmd, const char *readme)
{
	char *help = help_text(cmd);

	CHECK(help && strstr(help, "Usage: hostprof"), "%s: no usage", cmd->prog);
	for (size_t i = 0; help && i < cmd->nr_defs; i++) {
		const struct opt_def *d = &cmd->defs[i];
		char flag[64];

		if (d->name) {
			snprintf(flag, sizeof(flag), "--%s", d->name);
			CHECK(has_flag(help, flag), "%s --help lacks %s", cmd->prog, flag);
			CHECK(readme && has_flag(readme, flag), "README.md lacks %s %s", cmd->prog,
			      flag);
		}
		if (d->short_name) {
			snprintf(flag, sizeof(flag), "-%c, --", d->short_name);
			CHECK(strstr(help, flag), "%s --help lacks -%c", cmd->prog, d->short_name);
		}
		if (d->key)
			CHECK(readme && strstr(readme, d->key), "README.md lacks the agent key %s",
			      d->key);
		CHECK(!d->name || d->help, "%s --%s has no help", cmd->prog, d->name);
	}
	free(help);
}

/* Where the block of the key on the line at p (indented by indent) ends: at the next line indented
 * as little, blank lines and comments aside. */
static const char *yaml_block_end(const char *p, int indent)
{
	for (p = strchr(p, '\n'); p; p = strchr(p + 1, '\n')) {
		int n = (int)strspn(p + 1, " ");

		if (p[1 + n] && p[1 + n] != '\n' && p[1 + n] != '#' && n <= indent)
			return p;
	}
	return NULL;
}

/* Is the dotted key set in the YAML text, each part inside the block of the one before? */
static bool yaml_has_key(const char *yaml, const char *key)
{
	const char *from = yaml, *end = NULL;

	for (int depth = 0; *key; depth++) {
		size_t n = strcspn(key, ".");
		char pat[96];
		const char *hit;

		snprintf(pat, sizeof(pat), "\n%*s%.*s:", 2 * depth, "", (int)n, key);
		hit = strstr(from, pat);
		if (!hit || (end && hit >= end))
			return false;
		from = hit + 1;
		end = yaml_block_end(from, 2 * depth);
		key += n + (key[n] == '.');
	}
	return true;
}

/* systemd/config.yaml says it documents every key: each is set in it, where it belongs. */
static void check_example_config(const struct opt_command *cmd, const char *yaml)
{
	for (size_t i = 0; yaml && i < cmd->nr_defs; i++) {
		const char *key = cmd->defs[i].key;

		if (key)
			CHECK(yaml_has_key(yaml, key), "systemd/config.yaml lacks the key %s", key);
	}
}

/*
 * One list of capabilities everywhere a user meets it: the README's list and setcap line, both
 * --help texts, the systemd unit and the Helm chart.
 */
static void test_capabilities_listed(void)
{
	static const char *const caps[] = {
		"BPF",		"PERFMON", "SYS_PTRACE",	"DAC_READ_SEARCH",
		"SYS_RESOURCE", "SYSLOG",  "CHECKPOINT_RESTORE"};
	char *readme = read_file_text("README.md"),
	     *unit = read_file_text("systemd/hostprof.service");
	char *chart = read_file_text("helm/hostprof/values.yaml");
	char *helps[] = {help_text(&profile_command), help_text(&agent_command)};
	const char *setcap = readme ? strstr(readme, "sudo setcap ") : NULL;
	const char *bounding = unit ? strstr(unit, "CapabilityBoundingSet=") : NULL;

	CHECK(setcap && bounding && chart,
	      "README's setcap line, the unit's bounding set, the chart");
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		char upper[64], lower[64], item[64];
		size_t n = 0;

		snprintf(upper, sizeof(upper), "CAP_%s", caps[i]);
		for (const char *c = upper; *c && n + 1 < sizeof(lower); c++)
			lower[n++] = (char)tolower((unsigned char)*c);
		lower[n] = '\0';
		snprintf(item, sizeof(item), "  - %s\n", caps[i]);
		CHECK(readme && strstr(readme, upper), "README.md does not explain %s", upper);
		CHECK(setcap && strstr(setcap, lower) &&
			      strchr(setcap, '\n') > strstr(setcap, lower),
		      "README.md's setcap line lacks %s", lower);
		for (size_t h = 0; h < 2; h++)
			CHECK(helps[h] && strstr(helps[h], upper), "--help %zu lacks %s", h, upper);
		CHECK(bounding && strstr(bounding, upper), "the unit lacks %s", upper);
		CHECK(chart && strstr(chart, item), "the chart's capabilities lack %s", caps[i]);
	}
	free(readme);
	free(unit);
	free(chart);
	free(helps[0]);
	free(helps[1]);
}

static void test_documented(void)
{
	char *readme = read_file_text("README.md");
	char *yaml = read_file_text("systemd/config.yaml");

	CHECK(readme != NULL, "cannot read README.md from the current directory");
	CHECK(yaml != NULL, "cannot read systemd/config.yaml from the current directory");
	check_documented(&profile_command, readme);
	check_documented(&agent_command, readme);
	check_documented(&render_command, readme);
	check_example_config(&agent_command, yaml);
	free(readme);
	free(yaml);
}

/* ---- the engine, on a table of every type ---- */

struct sample {
	bool flag, on;
	uint32_t count;
	uint64_t scaled;
	double seconds, interval;
	const char *name;
	int level;
	bool fast;
	const char *mode;
	int custom_calls;
};

static int parse_even(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		      size_t len)
{
	struct sample *s = ctx->targets[d->target];

	if (atoi(text) % 2) {
		snprintf(err, len, "'%s' is odd", text);
		return -EINVAL;
	}
	s->custom_calls++;
	return 0;
}

#define S(f) .offset = offsetof(struct sample, f), .size = sizeof(((struct sample *)0)->f)

static const char *const levels[] = {"low", "high", NULL};
static const int level_values[] = {10, 20};
static const char *const speeds[] = {"fast", "slow", NULL};
static const int speed_values[] = {1, 0};
static const char *const modes[] = {"push", "pull", NULL};

static const struct opt_def sample_defs[] = {
	{.name = "flag", .short_name = 'f', .type = OPT_FLAG, S(flag), .help = "a flag"},
	{.name = "on", .type = OPT_BOOL, S(on), .help = "a bool"},
	{.name = "count",
	 .short_name = 'c',
	 .type = OPT_UINT,
	 S(count),
	 .min = 2,
	 .max = 9,
	 .help = "a count"},
	{.name = "mb",
	 .type = OPT_UINT,
	 S(scaled),
	 .min = 1,
	 .max = 4,
	 .scale = 1 << 20,
	 .help = "MiB"},
	{.name = "seconds", .type = OPT_SECONDS, S(seconds), .help = "seconds"},
	{.name = "interval",
	 .type = OPT_INTERVAL,
	 S(interval),
	 .min = 1,
	 .max = 3600,
	 .help = "an interval"},
	{.name = "name", .type = OPT_STRING, S(name), .help = "a string"},
	{.name = "level",
	 .type = OPT_ENUM,
	 S(level),
	 .choices = levels,
	 .values = level_values,
	 .help = "an enum"},
	{.name = "speed",
	 .type = OPT_ENUM,
	 S(fast),
	 .choices = speeds,
	 .values = speed_values,
	 .bad_choice = "say fast or slow",
	 .help = "an enum into a bool"},
	{.name = "mode", .type = OPT_ENUM_STR, S(mode), .choices = modes, .help = "a string enum"},
	{.name = "even", .type = OPT_CUSTOM, .parse = parse_even, .help = "custom"},
	{.name = "help", .short_name = 'h', .type = OPT_HELP, .help = "help"},
};

static const struct opt_command sample_cmd = {
	.prog = "sample",
	.defs = sample_defs,
	.nr_defs = sizeof(sample_defs) / sizeof(sample_defs[0]),
	.usage = "Usage: sample\n",
};

/* Parse a NULL-terminated argv (after argv[0]) into s. */
static int parse_sample(struct sample *s, char *err, size_t len, const char **args)
{
	char *argv[32] = {"sample"};
	struct opt_ctx ctx = {.targets = {s}};
	int argc = 1, operand = 0;

	for (; args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	memset(s, 0, sizeof(*s));
	err[0] = '\0';
	return options__parse(&sample_cmd, &ctx, argc, argv, &operand, err, len);
}

#define PARSE(s, ...) parse_sample(s, err, sizeof(err), (const char *[]){__VA_ARGS__, NULL})

static void test_types(void)
{
	struct sample s;
	char err[512];
	int rc;

	rc = PARSE(&s, "-f", "--on", "yes", "-c", "7", "--mb", "3", "--seconds", "0.5",
		   "--interval", "2m", "--name", "x", "--level", "high", "--speed", "slow",
		   "--mode", "pull", "--even", "4");
	CHECK(rc == 0, "all types: %d %s", rc, err);
	CHECK(s.flag && s.on && s.count == 7 && s.scaled == 3ULL << 20, "flag %d on %d count %u",
	      s.flag, s.on, s.count);
	CHECK(s.seconds == 0.5 && s.interval == 120, "seconds %g interval %g", s.seconds,
	      s.interval);
	CHECK(s.name && !strcmp(s.name, "x") && s.level == 20 && !s.fast && s.mode == modes[1] &&
		      s.custom_calls == 1,
	      "name, level %d, fast %d, mode, custom %d", s.level, s.fast, s.custom_calls);
	CHECK(PARSE(&s, "--name", "") == 0 && s.name == NULL, "'' unsets a string");
	CHECK(PARSE(&s, "--help", "--count", "x") == OPTIONS_HELP, "--help first wins");

	/* One bad value per type, each message naming the flag. */
	static const struct {
		const char *flag, *value, *want;
	} bad[] = {
		{"--on", "maybe", "--on: 'maybe' is not true or false"},
		{"--count", "10", "--count: '10' is not a whole number from 2 to 9"},
		{"-c", "-1", "--count: '-1' is not a whole number"},
		{"--mb", "5", "--mb: '5' is not a whole number from 1 to 4"},
		{"--seconds", "1e3", "--seconds: '1e3' is not a duration: give seconds"},
		{"--seconds", "0", "e.g. --seconds 10"},
		{"--interval", "2h", "--interval: '2h' is not a duration from 1 s to 3600 s"},
		{"--level", "mid", "--level: 'mid' is not one of: low, high"},
		{"--speed", "warp", "--speed: 'warp': say fast or slow"},
		{"--mode", "poll", "--mode: 'poll' is not one of: push, pull"},
		{"--even", "3", "--even: '3' is odd"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = PARSE(&s, bad[i].flag, bad[i].value);
		CHECK(rc == -EINVAL && strstr(err, bad[i].want), "%s %s: %d '%s'", bad[i].flag,
		      bad[i].value, rc, err);
	}
	CHECK(PARSE(&s, "--bogus") == -EINVAL && strstr(err, "unknown option '--bogus'"), "%s",
	      err);
	CHECK(PARSE(&s, "--count") == -EINVAL && strstr(err, "option '--count' needs a value"),
	      "%s", err);
}

static void test_print(void)
{
	struct sample s = {.on = true,
			   .count = 5,
			   .scaled = 2 << 20,
			   .interval = 15,
			   .level = 10,
			   .fast = true,
			   .name = "https://user:pw@host/x"};
	struct opt_ctx ctx = {.targets = {&s}};
	static const char *const want[] = {
		"false", "true", "5",	"2", "0", "15s", "\"https://user:pw@host/x\"",
		"low",	 "fast", "push"};
	char buf[128];

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		FILE *f = fmemopen(buf, sizeof(buf), "w");

		options__print_value(f, &sample_defs[i], &ctx);
		fclose(f);
		CHECK_STR(buf, want[i]);
	}
}

/* ---- the commands' tables ---- */

/* Leaked: a test's few strings. */
/* Copies of the strings a value owns, freed together once the test is done with them. */
struct owned {
	char *v[8];
	size_t n;
};

static const char *own_copy(void *arg, const char *text)
{
	struct owned *o = arg;

	if (o->n == sizeof(o->v) / sizeof(o->v[0]))
		return NULL;
	return o->v[o->n++] = strdup(text);
}

static void owned__free(struct owned *o)
{
	while (o->n)
		free(o->v[--o->n]);
}

/* The value the table's default names (up to a blank: "1048576 = 16 MiB") is the value the
 * command starts with. */
static void check_defaults(const struct opt_command *cmd, void *defaults, size_t size)
{
	void *copy = malloc(size);
	char before[256], after[256], err[512];

	for (size_t i = 0; copy && i < cmd->nr_defs; i++) {
		const struct opt_def *d = &cmd->defs[i];
		struct opt_ctx ctx = {.targets = {defaults}};
		struct owned owned = {.n = 0};
		struct opt_ctx set = {.targets = {copy}, .own = own_copy, .own_arg = &owned};
		char value[64];
		FILE *f;

		if (!d->dflt || (d->flags & OPT_F_REPEAT) || d->target != 0)
			continue;
		snprintf(value, sizeof(value), "%.*s", (int)strcspn(d->dflt, " "), d->dflt);
		memcpy(copy, defaults, size);
		CHECK(options__set(d, &set, value, err, sizeof(err)) == 0, "%s --%s default %s: %s",
		      cmd->prog, d->name ? d->name : d->key, value, err);
		f = fmemopen(before, sizeof(before), "w");
		options__print_value(f, d, &ctx);
		fclose(f);
		f = fmemopen(after, sizeof(after), "w");
		options__print_value(f, d, &set);
		fclose(f);
		CHECK(!strcmp(before, after),
		      "%s %s: the table says %s, the command starts with %s", cmd->prog,
		      d->name ? d->name : d->key, after, before);
		owned__free(&owned);
	}
	free(copy);
}

static void test_defaults(void)
{
	struct config c;
	struct config_origin o;

	config__defaults(&c);
	check_defaults(&profile_command, &c, sizeof(c));
	config_load__agent_defaults(&c, &o);
	check_defaults(&agent_command, &c, sizeof(c));
}

static int profile_args(struct config *c, char *err, size_t len, const char **args)
{
	char *argv[32] = {"profile"};
	int argc = 1;

	for (; args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	argv[argc] = NULL;
	config__defaults(c);
	err[0] = '\0';
	return profile_options__parse(argc, argv, c, err, len);
}

#define PROFILE(c, ...) profile_args(c, err, sizeof(err), (const char *[]){__VA_ARGS__, NULL})

static void test_profile(void)
{
	struct config c;
	char err[512];
	int rc;

	rc = PROFILE(&c, "-p", "1,2", "--pid", "3", "-d", "2.5", "-F", "49", "-t", "cpu,wall",
		     "--max-dwarf-mb", "2", "--offcpu-min-us", "7", "--unwind", "fp",
		     "--otlp-header", "a=b", "--otlp-sample-type", "samples", "-o", "x.folded");
	CHECK(rc == 0, "%d %s", rc, err);
	CHECK(c.nr_pids == 3 && c.duration_s == 2.5 && c.frequency_hz == 49 &&
		      c.types == (PROFILE_TYPE_CPU | PROFILE_TYPE_WALL),
	      "pids %zu duration %g hz %u types %u", c.nr_pids, c.duration_s, c.frequency_hz,
	      c.types);
	CHECK(c.max_dwarf_bytes == 2 << 20 && c.offcpu_min_ns == 7000 && !c.unwind_tables,
	      "dwarf %zu offcpu %lu", c.max_dwarf_bytes, (unsigned long)c.offcpu_min_ns);
	CHECK(c.nr_otlp_headers == 1 && c.otlp_samples_count && c.nr_outputs == 1 &&
		      c.outputs[0].format == OUTPUT_FOLDED,
	      "headers %zu outputs %zu", c.nr_otlp_headers, c.nr_outputs);

	/* --wait-sample-us: auto follows the CPU period; 0 takes every wait; out of range named. */
	CHECK(PROFILE(&c, "--all", "-F", "99") == 0 &&
		      c.wait_sample_ns == CONFIG_WAIT_SAMPLE_AUTO &&
		      config__wait_sample_ns(&c) == 1000000000ULL / 99,
	      "auto: %llu", (unsigned long long)config__wait_sample_ns(&c));
	CHECK(PROFILE(&c, "--all", "--wait-sample-us", "0") == 0 && config__wait_sample_ns(&c) == 0,
	      "0: every wait: %s", err);
	CHECK(PROFILE(&c, "--all", "--wait-sample-us", "250") == 0 &&
		      config__wait_sample_ns(&c) == 250000,
	      "250 us: %s", err);
	CHECK(PROFILE(&c, "--all", "--wait-sample-us", "2000000") == -EINVAL &&
		      strstr(err, "from 0 (every wait) to 1000000"),
	      "over a second: %s", err);
	CHECK(PROFILE(&c, "--all", "--wait-sample-us", "-5") == -EINVAL, "negative: %s", err);

	rc = PROFILE(&c, "-q", "--", "make", "-j2");
	CHECK(rc == 0 && c.quiet && c.command && !strcmp(c.command[1], "-j2") &&
		      c.nr_outputs == 1 && !strcmp(c.outputs[0].path, "profile.pb.gz"),
	      "-- COMMAND, default output: %d %s", rc, err);
	CHECK(PROFILE(&c, "--all", "make") == -EINVAL && strstr(err, "after '--'"), "%s", err);
	CHECK(PROFILE(&c, "--all", "-p", "1") == -EINVAL && strstr(err, "exactly one of"), "%s",
	      err);
	CHECK(PROFILE(&c, "--all", "--duration", "abc") == -EINVAL &&
		      strstr(err, "--duration: 'abc' is not a duration"),
	      "%s", err);
	CHECK(PROFILE(&c, "--all", "--frequency", "0") == -EINVAL &&
		      strstr(err, "--frequency: '0' is not a sampling frequency"),
	      "%s", err);
	CHECK(PROFILE(&c, "--all", "--otlp-header", "tok3n") == -EINVAL &&
		      strstr(err, "--otlp-header: give the header as name=value") &&
		      !strstr(err, "tok3n"),
	      "header: %s", err);
	CHECK(PROFILE(&c, "--all", "--pyroscope-api", "pull") == -EINVAL &&
		      strstr(err, "--pyroscope-api: 'pull': give push"),
	      "%s", err);
	CHECK(PROFILE(&c, "--all", "-o", "x.txt") == -EINVAL &&
		      strstr(err, "--output: 'x.txt': unknown output format"),
	      "%s", err);
}

static const char *fake_env(const char *name)
{
	if (!strcmp(name, "HOSTPROF_UPLOAD_INTERVAL"))
		return "20s";
	if (!strcmp(name, "HOSTPROF_FREQUENCY"))
		return "39";
	return NULL;
}

/* file < environment < flags, and each value's source. */
static void test_agent_layers(void)
{
	char file[] = "frequency: 49\nupload_interval: 30s\ntypes: [wall]\nhttp_listen: ':1'\n";
	char set[] = "--set", kv[] = "limits.max_binaries=64", f_flag[] = "-F", hz[] = "29";
	char c_flag[] = "--config", path[PATH_MAX], verbose[] = "-v";
	char *argv[] = {"agent", c_flag, path, f_flag, hz, set, kv, verbose, NULL};
	struct agent_flags flags;
	struct config c;
	struct config_origin o;
	char err[512];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s", tmp("agent.yaml"));
	f = fopen(path, "w");
	if (f) {
		fputs(file, f);
		fclose(f);
	}
	rc = agent_options__parse(8, argv, &flags, err, sizeof(err));
	CHECK(rc == 0 && flags.nr_sets == 2 && flags.log_level == 3, "parse: %d %s", rc, err);
	rc = config_load__all(&flags, &c, &o, fake_env, err, sizeof(err));
	CHECK(rc == 0, "load: %s", err);
	CHECK(c.frequency_hz == 29 && config_load__source(&o, "frequency") == CONFIG_SRC_FLAG,
	      "flag beats env and file: %u", c.frequency_hz);
	CHECK(c.upload_interval_s == 20 &&
		      config_load__source(&o, "upload_interval") == CONFIG_SRC_ENV,
	      "env beats file: %g", c.upload_interval_s);
	CHECK(c.types == PROFILE_TYPE_WALL && config_load__source(&o, "types") == CONFIG_SRC_FILE,
	      "file beats default");
	CHECK(c.max_dsos == 64 && c.unwind_binaries == 64,
	      "--set max_binaries, and the unwinder's");
	CHECK(c.log_level == 3, "-v: %d", c.log_level);
	CHECK(c.keep_files == 20 && config_load__source(&o, "export.keep_files") == 0, "default");
	config__release(&c);

	char bad_set[] = "nokey";
	char *bad[] = {"agent", set, bad_set, NULL};

	rc = agent_options__parse(3, bad, &flags, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "--set: give KEY=VALUE"), "%s", err);
	char op[] = "stray";
	char *stray[] = {"agent", op, NULL};

	rc = agent_options__parse(2, stray, &flags, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "unexpected argument 'stray'"), "%s", err);
}

int main(void)
{
	test_capabilities_listed();
	if (fixture_paths__init("hostprof-options")) {
		perror("mkdtemp");
		return 1;
	}
	test_documented();
	test_types();
	test_print();
	test_defaults();
	test_profile();
	test_agent_layers();
	return check_summary("test_options");
}

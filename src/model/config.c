// SPDX-License-Identifier: BSD-2-Clause
#include "model/config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/vec.h"
#include "hostprof_abi.h"

/* The kernel caps perf sampling (kernel.perf_event_max_sample_rate, 100000 by default); beyond a
 * few kHz a profiler perturbs what it measures more than it learns. */
#define MAX_FREQUENCY_HZ 10000

void config__defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->duration_s = 0;
	c->frequency_hz = 99;
	c->wait_sample_ns = CONFIG_WAIT_SAMPLE_AUTO;
	c->types = PROFILE_TYPE_CPU;
	c->offcpu_threads = 16384;
	c->offcpu_map_entries = 16384;
	c->drain_interval_s = 1.0;
	c->top_n = 10;
	/* At 99 Hz on 128 CPUs a one-second drain sees at most ~12,700 samples: these bounds
	 * leave room for that many distinct stacks per drain. */
	c->stack_map_entries = 16384;
	c->counts_map_entries = 16384;
	c->max_procs = 4096;
	c->max_dsos = 1024;
	c->max_dwarf_bytes = 14 << 20; /* DSO_DEFAULT_DWARF_BYTES */
	c->max_dwarf_name = "limits.max_dwarf_bytes";
	c->max_symbol_bytes = 6 << 20; /* DSO_DEFAULT_SYMBOL_BYTES */
	c->unwind_tables = true;
	c->unwind_depth = HP_UNWIND_MAX_DEPTH;
	c->unwind_rows = 1U << 20; /* 16 MiB: libc takes ~20k rows, python3 ~100k */
	c->unwind_procs = 4096;
	c->unwind_binaries = 1024;
	/* Tables are cached where only root writes: a table read back is trusted by the kernel
	 * walker's bounds checks, not by its content, but nobody else should plant them. */
	c->cache_dir = geteuid() == 0 ? "/var/cache/hostprof" : NULL;
	c->max_cached_locations = 262144;
	c->export_deadline_s = 10;
	c->export_queue_bytes = 64 << 20;
	c->proc_root = "/proc";
	c->kallsyms_path = "/proc/kallsyms";
	c->upload_interval_s = 15;
	c->liveness_timeout_s = 10; /* LIVENESS_DEFAULT_TIMEOUT_S */
	c->keep_files = 20;
	c->log_level = 2; /* LOG_INFO */
	c->kube_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
	c->kube_ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
	c->kube_refresh_s = 30;
	c->docker_root = "/var/lib/docker";
}

void config__release(struct config *c)
{
	for (size_t i = 0; i < c->nr_owned; i++) {
		/* Header values are tokens: scrub them before the memory is reused. */
		explicit_bzero(c->owned[i], strlen(c->owned[i]));
		free(c->owned[i]);
	}
	free(c->owned);
	c->owned = NULL;
	c->nr_owned = c->cap_owned = 0;
}

const char *config__own(struct config *c, const char *s)
{
	char *copy;

	if (!s)
		return NULL;
	if (VEC_RESERVE(c->owned, c->cap_owned, c->nr_owned + 1))
		return NULL;
	copy = strdup(s);
	if (!copy)
		return NULL;
	c->owned[c->nr_owned++] = copy;
	return copy;
}

int config__parse_frequency(const char *text, uint32_t *out, char *err, size_t len)
{
	size_t v;

	if (options__parse_count(text, 1, MAX_FREQUENCY_HZ, &v, NULL, 0)) {
		snprintf(err, len,
			 "'%s' is not a sampling frequency: give a whole number of Hz "
			 "from 1 to %d, e.g. --frequency 99",
			 text, MAX_FREQUENCY_HZ);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

int config__parse_pids(struct config *c, const char *text, char *err, size_t len)
{
	const char *p = text;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char item[32];
		size_t pid;

		if (n == 0 || n >= sizeof(item) ||
		    (memcpy(item, p, n), item[n] = '\0',
		     options__parse_count(item, 1, INT_MAX, &pid, NULL, 0))) {
		bad:
			snprintf(err, len,
				 "'%s' is not a PID list: give process IDs separated by "
				 "commas, e.g. --pid 1234 or --pid 1234,5678",
				 text);
			return -EINVAL;
		}
		if (c->nr_pids == CONFIG_MAX_PIDS) {
			snprintf(err, len, "too many PIDs: at most %d", CONFIG_MAX_PIDS);
			return -E2BIG;
		}
		c->pids[c->nr_pids++] = (pid_t)pid;
		p += n;
		if (*p == ',' && *++p == '\0')
			goto bad; /* a trailing comma: something was left out */
	}
	if (p == text) {
		snprintf(err, len, "--pid needs a process ID, e.g. --pid 1234");
		return -EINVAL;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

int config__add_output(struct config *c, const char *path, char *err, size_t len)
{
	static const struct {
		const char *suffix;
		enum output_format format;
	} formats[] = {
		{".pb.gz", OUTPUT_PPROF},     {".folded", OUTPUT_FOLDED},
		{".otlp.pb", OUTPUT_OTLP_PB}, {".otlp.json", OUTPUT_OTLP_JSON},
		{".html", OUTPUT_HTML},
	};
	const size_t nr = sizeof(formats) / sizeof(formats[0]);
	size_t i = 0;

	/* The file's name picks the format. */
	while (i < nr && !ends_with(path, formats[i].suffix))
		i++;
	if (i == nr) {
		snprintf(
			err, len,
			"'%s': unknown output format: name the file *.pb.gz (pprof), *.folded "
			"(collapsed stacks), *.otlp.pb or *.otlp.json (OTLP), *.html (flame graph)",
			path);
		return -EINVAL;
	}
	if (c->nr_outputs == CONFIG_MAX_OUTPUTS) {
		snprintf(err, len, "too many outputs: at most %d", CONFIG_MAX_OUTPUTS);
		return -E2BIG;
	}
	c->outputs[c->nr_outputs++] = (struct output){.path = path, .format = formats[i].format};
	return 0;
}

int config__parse_types(struct config *c, const char *text, char *err, size_t len)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} known[] = {
		{"cpu", PROFILE_TYPE_CPU},
		{"wall", PROFILE_TYPE_WALL},
		{"offcpu", PROFILE_TYPE_OFFCPU},
		{"contention", PROFILE_TYPE_CONTENTION},
	};
	unsigned int types = 0;
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i].name) == n && !strncmp(p, known[i].name, n))
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			snprintf(err, len,
				 "'%.*s' is not a profile type: give a list of cpu, wall, "
				 "offcpu and contention, e.g. --types cpu,wall",
				 (int)n, p);
			return -EINVAL;
		}
		types |= known[i].bit;
		p += n;
		if (*p == ',' && *++p == '\0')
			break;
	}
	if (!types) {
		snprintf(err, len, "give at least one profile type: cpu, wall or offcpu");
		return -EINVAL;
	}
	c->types = types;
	return 0;
}

/* The custom options of the option tables: their target is a struct config. */
static struct config *cfg_of(const struct opt_def *d, struct opt_ctx *ctx)
{
	return ctx->targets[d->target];
}

int config__opt_frequency(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
			  size_t len)
{
	return config__parse_frequency(text, &cfg_of(d, ctx)->frequency_hz, err, len);
}

void config__print_frequency(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	fprintf(out, "%u", ((const struct config *)ctx->targets[d->target])->frequency_hz);
}

int config__opt_wait_sample(const struct opt_def *d, struct opt_ctx *ctx, const char *text,
			    char *err, size_t len)
{
	char *end;
	unsigned long long us;

	if (!strcmp(text, "auto")) {
		cfg_of(d, ctx)->wait_sample_ns = CONFIG_WAIT_SAMPLE_AUTO;
		return 0;
	}
	errno = 0;
	us = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' ||
	    us > CONFIG_WAIT_SAMPLE_MAX_NS / 1000) {
		snprintf(err, len,
			 "'%s' is not a sampling period: give microseconds from 0 (every wait) to "
			 "1000000, or auto (the CPU sampling period)",
			 text);
		return -EINVAL;
	}
	cfg_of(d, ctx)->wait_sample_ns = us * 1000;
	return 0;
}

void config__print_wait_sample(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	uint64_t ns = ((const struct config *)ctx->targets[d->target])->wait_sample_ns;

	if (ns == CONFIG_WAIT_SAMPLE_AUTO)
		fputs("auto", out);
	else
		fprintf(out, "%llu", (unsigned long long)(ns / 1000));
}

uint64_t config__wait_sample_ns(const struct config *c)
{
	if (c->wait_sample_ns != CONFIG_WAIT_SAMPLE_AUTO)
		return c->wait_sample_ns;
	return c->frequency_hz ? 1000000000ULL / c->frequency_hz : 0;
}

int config__opt_types(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		      size_t len)
{
	return config__parse_types(cfg_of(d, ctx), text, err, len);
}

void config__print_types(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	static const char *const names[] = {"cpu", "wall", "offcpu", "contention"};
	unsigned int types = ((const struct config *)ctx->targets[d->target])->types;
	int n = 0;

	fputc('[', out);
	for (int i = 0; i < 4; i++)
		if (types & (1U << i))
			fprintf(out, "%s%s", n++ ? ", " : "", names[i]);
	fputc(']', out);
}

int config__opt_pids(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		     size_t len)
{
	return config__parse_pids(cfg_of(d, ctx), text, err, len);
}

int config__opt_output(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		       size_t len)
{
	return config__add_output(cfg_of(d, ctx), text, err, len);
}

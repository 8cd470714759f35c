// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostprof render: convert profile files between local formats. Every input is decoded into the
 * profile model and every output encoded from it (the same encoders as `profile`, through the
 * deliverer's file outputs), so no format is ever translated into another directly.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd/cmd_options.h"
#include "cmd/cmds.h"
#include "cmd/render_diff.h"
#include "model/config.h"
#include "formats/decode.h"
#include "formats/encode.h"
#include "export/deliver.h"

#define RENDER_MAX_INPUTS 8

/* render's own settings, beside the struct config that -o fills (the table's target 1). */
struct render_opts {
	const char *base;
	unsigned int top;
	const char *trace_id; /* keep only the samples of this trace (hex), or NULL */
	const char *span_id;  /* ... of this span */
};

#define RENDER_FIELD(f)                                                                            \
	.target = 1, .offset = offsetof(struct render_opts, f),                                    \
	.size = sizeof(((struct render_opts *)0)->f)

static const struct opt_def defs[] = {
	{CMD_OPT_OUTPUT, .section = "Options:", .help = "write FILE (repeatable)"},
	{.name = "base",
	 .type = OPT_STRING,
	 RENDER_FIELD(base),
	 .value_name = "OLD",
	 .help = "compare the inputs with the profile OLD (any input format): print the functions "
		 "whose share changed most, and with -o x.html write a differential flame graph"},
	{.name = "trace-id",
	 .type = OPT_STRING,
	 RENDER_FIELD(trace_id),
	 .value_name = "HEX",
	 .help = "keep only the samples that served this trace (32 hex digits; profiles of "
		 "processes that publish an OpenTelemetry thread context, and Go programs with "
		 "pprof labels trace_id, carry it)"},
	{.name = "span-id",
	 .type = OPT_STRING,
	 RENDER_FIELD(span_id),
	 .value_name = "HEX",
	 .help = "keep only the samples that served this span (16 hex digits)"},
	{.name = "top",
	 .type = OPT_UINT,
	 RENDER_FIELD(top),
	 .min = 1,
	 .max = 100000,
	 .dflt = "20",
	 .value_name = "N",
	 .help = "with --base: the N biggest changes in the table"},
	OPT_DEF_HELP,
};

const struct opt_command render_command = {
	.prog = "hostprof render",
	.defs = defs,
	.nr_defs = sizeof(defs) / sizeof(defs[0]),
	.usage =
		"Usage: hostprof render INPUT [INPUT...] -o OUTPUT [-o OUTPUT...]\n"
		"       hostprof render --base OLD NEW [-o DIFF.html] [--top N]\n"
		"\n"
		"Convert profiles between formats, offline and without root. Formats go by the\n"
		"file name (an input of another name by its content: gzip is pprof, text folded):\n"
		"  inputs:   *.pb.gz, *.pb   pprof (hostprof's, or Go's runtime/pprof files)\n"
		"            *.otlp.pb       OTLP (binary; one profile per type it holds)\n"
		"            *.folded        collapsed stacks ('comm;root;...;leaf COUNT')\n"
		"  outputs:  *.html          interactive flame graph, one self-contained page\n"
		"            *.pb.gz         pprof          *.folded     collapsed stacks\n"
		"            *.otlp.pb       OTLP (binary)  *.otlp.json  OTLP/JSON\n"
		"\n"
		"Several inputs are several profile types (say cpu and off-CPU of one run): the\n"
		"HTML page and the OTLP outputs hold them all; pprof and folded write one file\n"
		"per type (x.pb.gz becomes x.cpu.pb.gz, x.wall.pb.gz).\n"
		"\n"
		"With --base OLD, NEW is compared with OLD, type by type: the table on stdout\n"
		"lists the functions whose share of the total changed most (self: the function\n"
		"itself was running; total: it was anywhere in the stack), and -o x.html writes a\n"
		"differential flame graph: NEW's graph, each frame red where its share grew and\n"
		"blue where it shrank, the deeper the colour the bigger the change.\n",
	.epilogue = "\n"
		    "Examples:\n"
		    "  hostprof render cpu.pb.gz -o cpu.html\n"
		    "  hostprof render host.folded -o host.pb.gz -o host.html\n"
		    "  go test -cpuprofile cpu.out ./... && hostprof render cpu.out -o go.html\n"
		    "  hostprof render --base before.pb.gz after.pb.gz -o diff.html --top 10\n"
		    "  hostprof render cpu.pb.gz --span-id a1a1a1a1a1a1a1a1 -o span.html\n",
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

enum input_format { INPUT_UNKNOWN, INPUT_OTLP, INPUT_PPROF, INPUT_FOLDED };

/*
 * A name that says nothing (Go's cpu.out, a download) is read by its first bytes: gzip is pprof
 * (OTLP is never written gzipped), and a first line of text that ends in a count is folded.
 */
static enum input_format sniff_format(const char *path)
{
	unsigned char head[512];
	size_t n, eol;
	FILE *f = fopen(path, "rb");

	if (!f)
		return INPUT_UNKNOWN;
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return INPUT_PPROF;
	for (eol = 0; eol < n && head[eol] != '\n'; eol++)
		if (head[eol] < 0x20 && head[eol] != '\t')
			return INPUT_UNKNOWN;
	if (eol < 2 || eol == n || !isdigit(head[eol - 1]))
		return INPUT_UNKNOWN;
	while (eol > 0 && isdigit(head[eol - 1]))
		eol--;
	return eol > 1 && head[eol - 1] == ' ' ? INPUT_FOLDED : INPUT_UNKNOWN;
}

static enum input_format input_format(const char *path)
{
	if (ends_with(path, ".otlp.pb") || ends_with(path, ".otlp.pb.gz"))
		return INPUT_OTLP;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pb") || ends_with(path, ".pprof"))
		return INPUT_PPROF;
	if (ends_with(path, ".folded"))
		return INPUT_FOLDED;
	return sniff_format(path);
}

/*
 * Decodes path into profiles[*nr...] (an OTLP request may hold several profile types). Returns 0,
 * -EPROTONOSUPPORT for an input of no known format, or another -errno.
 */
static int render_decode(const char *path, struct profile **profiles, size_t *nr)
{
	enum input_format format = input_format(path);
	char err[512] = "";
	int e;

	if (format == INPUT_OTLP) {
		struct profile **ps = NULL;
		size_t n = 0;

		e = dec_otlp__read(path, &ps, &n, err, sizeof(err));
		if (!e && *nr + n > RENDER_MAX_INPUTS) {
			snprintf(err, sizeof(err), "'%s': more than %d profiles in all", path,
				 RENDER_MAX_INPUTS);
			e = -E2BIG;
		}
		for (size_t i = 0; i < n; i++) {
			if (!e)
				profiles[(*nr)++] = ps[i];
			else
				profile__delete(ps[i]);
		}
		free(ps);
	} else if (format == INPUT_PPROF) {
		e = dec_pprof__read(path, &profiles[*nr], err, sizeof(err));
		if (!e)
			(*nr)++;
	} else if (format == INPUT_FOLDED) {
		e = dec_folded__read(path, &profiles[*nr], err, sizeof(err));
		if (!e)
			(*nr)++;
	} else {
		fprintf(stderr,
			"hostprof render: '%s': unknown input format (%s): name it *.pb.gz or *.pb "
			"(pprof), *.otlp.pb (OTLP) or *.folded (collapsed stacks)\n",
			path,
			access(path, R_OK) ? strerror(errno)
					   : "its content is neither gzip'd pprof nor folded text");
		return -EPROTONOSUPPORT;
	}
	if (e)
		fprintf(stderr, "hostprof render: %s\n", err[0] ? err : strerror(-e));
	return e;
}

/* The inputs are argv[first..]; -1 to go on, or the exit status. Inputs may come after the
 * outputs too: "render -o x.html in.pb.gz". */
static int parse_render_args(int argc, char **argv, struct config *cfg, struct render_opts *ro,
			     int *first)
{
	struct opt_ctx ctx = {.targets = {cfg, ro}};
	char err[512];
	int rc = options__parse(&render_command, &ctx, argc, argv, first, err, sizeof(err));

	if (!rc && (*first >= argc || (!cfg->nr_outputs && !ro->base))) {
		snprintf(err, sizeof(err), "%s",
			 *first >= argc ? "no input file"
					: "no output: add -o FILE.html (or .pb.gz, ...)");
		rc = -EINVAL;
	}
	if (!rc && argc - *first > RENDER_MAX_INPUTS) {
		snprintf(err, sizeof(err), "at most %d inputs", RENDER_MAX_INPUTS);
		rc = -EINVAL;
	}
	for (size_t i = 0; !rc && ro->base && i < cfg->nr_outputs; i++) {
		if (cfg->outputs[i].format != OUTPUT_HTML) {
			snprintf(err, sizeof(err),
				 "'%s': with --base the output is a differential flame graph: "
				 "name it *.html",
				 cfg->outputs[i].path);
			rc = -EINVAL;
		}
	}
	return options__exit_status(&render_command, rc, err);
}

/* Is the sample's span (or trace) the one asked for? Hex compared without case. */
static bool served(const struct profile *p, const struct profile_sample *s, void *ctx)
{
	const struct render_opts *ro = ctx;
	const char *trace = profile__string_at(p, s->labels.trace_id);
	const char *span = profile__string_at(p, s->labels.span_id);

	return (!ro->trace_id || (s->labels.trace_id && !strcasecmp(trace, ro->trace_id))) &&
	       (!ro->span_id || (s->labels.span_id && !strcasecmp(span, ro->span_id)));
}

/* --trace-id and --span-id: keep what served them; 0, or 1 when no sample of any input did. */
static int keep_served(struct profile **profiles, size_t nr, struct render_opts *ro)
{
	size_t kept = 0;

	if (!ro->trace_id && !ro->span_id)
		return 0;
	for (size_t i = 0; i < nr; i++)
		kept += profile__keep_samples(profiles[i], served, ro);
	if (kept)
		return 0;
	fprintf(stderr,
		"hostprof render: no sample served %s%s%s%s%s: spans are in the profiles of "
		"processes that publish an OpenTelemetry thread context and of Go programs "
		"whose goroutines carry pprof labels span_id and trace_id (README: Profiles "
		"linked to traces)\n",
		ro->trace_id ? "trace " : "", ro->trace_id ? ro->trace_id : "",
		ro->trace_id && ro->span_id ? " and " : "", ro->span_id ? "span " : "",
		ro->span_id ? ro->span_id : "");
	return 1;
}

/* Decodes argv[first..] into profiles; 0 or the exit status. */
static int decode_inputs(char **paths, int nr_paths, struct profile **profiles, size_t *nr)
{
	for (int i = 0; i < nr_paths; i++) {
		int e;

		if (*nr == RENDER_MAX_INPUTS) {
			fprintf(stderr, "hostprof render: at most %d profiles\n",
				RENDER_MAX_INPUTS);
			return 1;
		}
		e = render_decode(paths[i], profiles, nr);
		if (e)
			/* An input of no known format is a usage error, as an output's is. */
			return e == -EPROTONOSUPPORT ? 2 : 1;
	}
	return 0;
}

static int deliver(const struct config *cfg, struct profile **profiles, size_t nr)
{
	struct deliver_opts dopts = {0};
	struct deliverer *d;
	char host[256];
	int status;

	dopts.outputs = cfg->outputs;
	dopts.nr_outputs = cfg->nr_outputs;
	deliver__host_facts(host, sizeof(host), &dopts.otlp_opts.host_arch);
	dopts.otlp_opts.host_name = host;
	dopts.otlp_opts.scope_version = HOSTPROF_VERSION;
	d = deliverer__new(&dopts);
	if (!d) {
		fprintf(stderr, "hostprof render: %s\n", strerror(errno));
		return 1;
	}
	/* The deliverer logs each file that fails and prints "Wrote X" for the others. */
	status = deliverer__deliver(d, (const struct profile *const *)profiles, nr) ? 1 : 0;
	deliverer__shutdown(d, 0, NULL);
	return status;
}

int do_render(int argc, char **argv)
{
	struct profile *profiles[RENDER_MAX_INPUTS] = {0}, *bases[RENDER_MAX_INPUTS] = {0};
	struct render_opts ro = {.top = 20};
	struct config *cfg = NULL;
	size_t nr = 0, nr_bases = 0;
	int first = 0, status = 1;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		fprintf(stderr, "hostprof render: out of memory\n");
		return 1;
	}
	config__defaults(cfg);
	status = parse_render_args(argc, argv, cfg, &ro, &first);
	if (status >= 0)
		goto out;
	status = decode_inputs(argv + first, argc - first, profiles, &nr);
	if (!status && ro.base)
		status = decode_inputs((char *[]){(char *)ro.base}, 1, bases, &nr_bases);
	if (!status)
		status = keep_served(profiles, nr, &ro);
	if (status)
		goto out;
	if (ro.base)
		status = render_diff(profiles, nr, bases, nr_bases, cfg->outputs, cfg->nr_outputs,
				     ro.top);
	else
		status = deliver(cfg, profiles, nr);
out:
	for (size_t i = 0; i < nr; i++)
		profile__delete(profiles[i]);
	for (size_t i = 0; i < nr_bases; i++)
		profile__delete(bases[i]);
	free(cfg);
	return status;
}

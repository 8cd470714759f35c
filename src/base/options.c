// SPDX-License-Identifier: BSD-2-Clause
#include "base/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/url.h"

#define HELP_COL 26   /* where descriptions start in --help */
#define HELP_WIDTH 80 /* where they wrap */
#define MAX_DEFS 128
#define ONE_WEEK_S (7 * 24 * 3600.0)

void *options__field(const struct opt_def *d, const struct opt_ctx *ctx)
{
	return (char *)ctx->targets[d->target] + d->offset;
}

static void store_uint(void *field, size_t size, unsigned long long v)
{
	if (size == sizeof(uint32_t))
		*(uint32_t *)field = (uint32_t)v;
	else if (size == sizeof(uint64_t))
		*(uint64_t *)field = v;
	else if (size == sizeof(uint16_t))
		*(uint16_t *)field = (uint16_t)v;
	else
		*(uint8_t *)field = (uint8_t)v;
}

static unsigned long long load_uint(const void *field, size_t size)
{
	if (size == sizeof(uint32_t))
		return *(const uint32_t *)field;
	if (size == sizeof(uint64_t))
		return *(const uint64_t *)field;
	if (size == sizeof(uint16_t))
		return *(const uint16_t *)field;
	return *(const uint8_t *)field;
}

/* An int-like value into a bool, an int or an enum, and a second field when the table says. */
static void store_both(const struct opt_def *d, struct opt_ctx *ctx, unsigned long long v)
{
	char *base = ctx->targets[d->target];

	store_uint(base + d->offset, d->size, v);
	if (d->also_size)
		store_uint(base + d->also_offset, d->also_size, v);
}

int options__parse_count(const char *text, size_t min, size_t max, size_t *out, char *err,
			 size_t len)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (text[0] == '-' || text[0] == '+' || text[0] == '\0')
		goto bad;
	v = strtoull(text, &end, 10);
	if (*end != '\0' || errno || v < min || v > max)
		goto bad;
	*out = (size_t)v;
	return 0;
bad:
	if (err)
		snprintf(err, len, "'%s' is not a whole number from %zu to %zu", text, min, max);
	return -EINVAL;
}

int options__parse_interval(const char *text, double min_s, double max_s, double *out, char *err,
			    size_t len)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"", 1}};
	char *end;
	double v;

	if (!isdigit((unsigned char)text[0]) && text[0] != '.')
		goto bad;
	errno = 0;
	v = strtod(text, &end);
	if (end == text || errno || !isfinite(v))
		goto bad;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			v *= units[i].scale;
			if (v < min_s || v > max_s)
				goto bad;
			*out = v;
			return 0;
		}
	}
bad:
	snprintf(err, len,
		 "'%s' is not a duration from %g s to %g s: write it as 15s, 500ms, 2m, 1h, or a "
		 "number of seconds",
		 text, min_s, max_s);
	return -EINVAL;
}

int options__parse_bool(const char *text, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(text, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(text, no[i]))
			return *out = false, 0;
	}
	return -EINVAL;
}

/* Plain decimal seconds: strtod would also skip blanks and take signs, hex and exponents. */
static int parse_seconds(const struct opt_def *d, const char *text, double *out, char *err,
			 size_t len)
{
	double max = d->max ? d->max : ONE_WEEK_S;
	const char *p = text;
	char *end;
	double v;

	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	if (p == text || *p) {
		v = -1;
	} else {
		errno = 0;
		v = strtod(text, &end);
		if (end != p || errno || !isfinite(v))
			v = -1;
	}
	if (v <= 0 || v > max) {
		snprintf(err, len,
			 "'%s' is not a duration: give seconds, a number above 0 and at most "
			 "%.0f%s, "
			 "e.g. --%s 10",
			 text, max, max == ONE_WEEK_S ? " (one week)" : "",
			 d->name ? d->name : "duration");
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_choice(const struct opt_def *d, const char *text, char *err, size_t len)
{
	char list[256];
	size_t used = 0;

	for (int i = 0; d->choices[i]; i++)
		if (!strcmp(d->choices[i], text))
			return i;
	if (d->bad_choice) {
		snprintf(err, len, "'%s': %s", text, d->bad_choice);
		return -EINVAL;
	}
	list[0] = '\0';
	for (int i = 0; d->choices[i] && used < sizeof(list); i++)
		used += snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
				 d->choices[i]);
	snprintf(err, len, "'%s' is not one of: %s", text, list);
	return -EINVAL;
}

static int set_string(const struct opt_def *d, struct opt_ctx *ctx, const char *text)
{
	const char **field = options__field(d, ctx);

	if (!text[0]) {
		*field = NULL;
		return 0;
	}
	*field = ctx->own ? ctx->own(ctx->own_arg, text) : text;
	return *field ? 0 : -ENOMEM;
}

static int set_number(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		      size_t len)
{
	double *field = options__field(d, ctx);
	size_t n = 0;
	double v = 0;
	int rc;

	switch (d->type) {
	case OPT_UINT:
		rc = options__parse_count(text, (size_t)d->min, (size_t)d->max, &n, err, len);
		if (!rc)
			store_both(d, ctx, (unsigned long long)n * (d->scale ? d->scale : 1));
		return rc;
	case OPT_SECONDS:
		rc = parse_seconds(d, text, &v, err, len);
		break;
	default: /* OPT_INTERVAL */
		rc = options__parse_interval(text, d->min, d->max, &v, err, len);
		break;
	}
	if (!rc)
		*field = v;
	return rc;
}

int options__set(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		 size_t len)
{
	bool b = true;
	int i;

	switch (d->type) {
	case OPT_FLAG:
		if (d->parse)
			return d->parse(d, ctx, NULL, err, len);
		store_both(d, ctx, 1);
		return 0;
	case OPT_BOOL:
		if (options__parse_bool(text, &b)) {
			snprintf(err, len, "'%s' is not true or false", text);
			return -EINVAL;
		}
		store_both(d, ctx, b);
		return 0;
	case OPT_UINT:
	case OPT_SECONDS:
	case OPT_INTERVAL:
		return set_number(d, ctx, text, err, len);
	case OPT_STRING:
		return set_string(d, ctx, text);
	case OPT_ENUM:
	case OPT_ENUM_STR:
		i = parse_choice(d, text, err, len);
		if (i < 0)
			return i;
		if (d->type == OPT_ENUM_STR)
			*(const char **)options__field(d, ctx) = d->choices[i];
		else
			store_both(d, ctx, d->values ? d->values[i] : i);
		return 0;
	case OPT_CUSTOM:
		return d->parse(d, ctx, text, err, len);
	default:
		snprintf(err, len, "takes no value");
		return -EINVAL;
	}
}

static bool takes_value(const struct opt_def *d)
{
	return d->type != OPT_FLAG && d->type != OPT_HELP && d->type != OPT_DOC;
}

/* The getopt_long tables: long options return 256 + their index, unless they have a short one. */
static void build_getopt(const struct opt_command *cmd, struct option *longs, char *shorts,
			 size_t shorts_len)
{
	size_t n = 0, s = 0;

	shorts[s++] = cmd->stop_at_operand ? '+' : ':';
	if (cmd->stop_at_operand)
		shorts[s++] = ':';
	for (size_t i = 0; i < cmd->nr_defs && i < MAX_DEFS; i++) {
		const struct opt_def *d = &cmd->defs[i];

		if (!d->name && !d->short_name)
			continue;
		if (d->short_name && s + 3 < shorts_len) {
			shorts[s++] = d->short_name;
			if (takes_value(d))
				shorts[s++] = ':';
		}
		if (d->name)
			longs[n++] = (struct option){
				.name = d->name,
				.has_arg = takes_value(d) ? required_argument : no_argument,
				.val = d->short_name ? d->short_name : 256 + (int)i,
			};
	}
	shorts[s] = '\0';
	longs[n] = (struct option){0};
}

static const struct opt_def *def_of(const struct opt_command *cmd, int val)
{
	if (val >= 256)
		return (size_t)(val - 256) < cmd->nr_defs ? &cmd->defs[val - 256] : NULL;
	for (size_t i = 0; i < cmd->nr_defs; i++)
		if (cmd->defs[i].short_name == val)
			return &cmd->defs[i];
	return NULL;
}

int options__parse(const struct opt_command *cmd, struct opt_ctx *ctx, int argc, char **argv,
		   int *operand, char *err, size_t len)
{
	struct option longs[MAX_DEFS + 1];
	char shorts[2 * MAX_DEFS + 3], why[512];
	int val;

	build_getopt(cmd, longs, shorts, sizeof(shorts));
	opterr = 0;
	optind = 1;
	while ((val = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt_def *d = def_of(cmd, val);
		int rc;

		if (val == ':') {
			snprintf(err, len, "option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		}
		if (!d) {
			snprintf(err, len, "unknown option '%s'", argv[optind - 1]);
			return -EINVAL;
		}
		if (d->type == OPT_HELP)
			return OPTIONS_HELP;
		why[0] = '\0';
		rc = ctx->on_option ? ctx->on_option(ctx, d, optarg, why, sizeof(why))
				    : options__set(d, ctx, optarg, why, sizeof(why));
		if (rc) {
			if (d->name)
				snprintf(err, len, "--%s: %s", d->name,
					 why[0] ? why : strerror(-rc));
			else
				snprintf(err, len, "-%c: %s", d->short_name,
					 why[0] ? why : strerror(-rc));
			return rc;
		}
	}
	*operand = optind;
	return 0;
}

void options__usage_error(const struct opt_command *cmd, const char *err)
{
	fprintf(stderr, "%s: %s\nSee '%s --help'.\n", cmd->prog, err, cmd->prog);
}

int options__exit_status(const struct opt_command *cmd, int rc, const char *err)
{
	if (!rc)
		return -1;
	if (rc == OPTIONS_HELP) {
		options__help(cmd, stdout);
		return 0;
	}
	options__usage_error(cmd, err);
	return OPTIONS_EXIT_USAGE;
}

/*
 * Words of text from column col, wrapped at HELP_WIDTH and continued at indent. "\n" breaks the
 * line; a line that starts with blanks is laid out by hand and printed as it is.
 */
static void wrap(FILE *out, int col, int indent, const char *text)
{
	const char *p = text;
	bool line_start = true;

	while (*p) {
		size_t n;

		if (*p == '\n') {
			p++;
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			line_start = true;
			if (*p == ' ') {
				n = strcspn(p, "\n");
				fprintf(out, "%.*s", (int)n, p);
				p += n;
				line_start = false;
				col += n;
			}
			continue;
		}
		if (*p == ' ') {
			p++;
			continue;
		}
		n = strcspn(p, " \n");
		if (!line_start && col + 1 + (int)n > HELP_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)n, p);
		col += n;
		p += n;
		line_start = false;
	}
	fputc('\n', out);
}

static void help_option(FILE *out, const struct opt_def *d)
{
	char flag[128], text[2048];
	int n;

	if (d->type == OPT_DOC)
		n = snprintf(flag, sizeof(flag), "  %s", d->value_name ? d->value_name : "");
	else if (d->short_name && d->name)
		n = snprintf(flag, sizeof(flag), "  -%c, --%s", d->short_name, d->name);
	else if (d->name)
		n = snprintf(flag, sizeof(flag), "      --%s", d->name);
	else
		n = snprintf(flag, sizeof(flag), "  -%c", d->short_name);
	if (d->type != OPT_DOC && takes_value(d) && n < (int)sizeof(flag))
		n += snprintf(flag + n, sizeof(flag) - n, " %s",
			      d->value_name ? d->value_name : "VALUE");
	if (d->dflt)
		snprintf(text, sizeof(text), "%s (default %s)", d->help, d->dflt);
	else
		snprintf(text, sizeof(text), "%s", d->help);
	if (n <= HELP_COL - 2) {
		fprintf(out, "%-*s", HELP_COL, flag);
		wrap(out, HELP_COL, HELP_COL, text);
	} else {
		fprintf(out, "%s  ", flag);
		wrap(out, n + 2, HELP_COL, text);
	}
}

void options__help(const struct opt_command *cmd, FILE *out)
{
	fputs(cmd->usage, out);
	for (size_t i = 0; i < cmd->nr_defs; i++) {
		const struct opt_def *d = &cmd->defs[i];

		if (d->section) {
			fputc('\n', out);
			if (d->section[0])
				wrap(out, 0, 0, d->section);
		}
		if (d->help)
			help_option(out, d);
	}
	if (cmd->epilogue)
		fputs(cmd->epilogue, out);
}

void options__print_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

/* A URL's credentials are masked as in the logs (all before the host's '@' becomes "***"): a bare
 * token there is as secret as a password, and a password may itself hold an '@'. */
static void print_url(FILE *out, const char *url)
{
	char buf[1024];

	if (!url) {
		options__print_string(out, NULL);
		return;
	}
	url__mask(url, buf, sizeof(buf));
	options__print_string(out, buf);
}

static void print_choice(FILE *out, const struct opt_def *d, unsigned long long v)
{
	for (int i = 0; d->choices[i]; i++) {
		if ((unsigned long long)(d->values ? d->values[i] : i) == v) {
			fputs(d->choices[i], out);
			return;
		}
	}
	fprintf(out, "%llu", v);
}

void options__print_value(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx)
{
	const void *field = options__field(d, ctx);
	const char *s;

	if (d->print) {
		d->print(out, d, ctx);
		return;
	}
	switch (d->type) {
	case OPT_FLAG:
	case OPT_BOOL:
		fputs(*(const bool *)field ? "true" : "false", out);
		break;
	case OPT_UINT:
		fprintf(out, "%llu", load_uint(field, d->size) / (d->scale ? d->scale : 1));
		break;
	case OPT_SECONDS:
		fprintf(out, "%g", *(const double *)field);
		break;
	case OPT_INTERVAL:
		fprintf(out, "%gs", *(const double *)field);
		break;
	case OPT_STRING:
		s = *(const char *const *)field;
		if (s && (d->flags & OPT_F_SECRET))
			options__print_string(out, "***");
		else if (d->flags & OPT_F_URL)
			print_url(out, s);
		else
			options__print_string(out, s);
		break;
	case OPT_ENUM:
		print_choice(out, d, load_uint(field, d->size));
		break;
	case OPT_ENUM_STR:
		s = *(const char *const *)field;
		fputs(s ? s : d->choices[0], out);
		break;
	default:
		break;
	}
}

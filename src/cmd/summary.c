// SPDX-License-Identifier: BSD-2-Clause
#include "cmd/summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/status.h"

/* Characters of a function name in a terminal table. */
#define SUMMARY_NAME_MAX 100

/*
 * Shares are keyed by function name (a location's display name), so that one function reached
 * through many addresses, mappings or processes is one row. Names are interned by the profile,
 * so the string index identifies the name and the tables below are indexed by it.
 */
static uint32_t location_name_index(const struct profile *p, uint32_t loc)
{
	const struct profile_location *l = profile__location_at(p, loc);

	if (l->function)
		return profile__function_at(p, l->function)->name;
	return l->label;
}

/*
 * The functions of one location, innermost first: its inline chain when DWARF gave one (each
 * level is a function of its own, as in the folded output), else its display name alone.
 * Returns how many were written (at most max).
 */
struct name_at {
	uint32_t name;
	uint32_t file;
	int64_t line;
};

static size_t location_names(const struct profile *p, uint32_t loc, struct name_at *v, size_t max)
{
	size_t n;
	const struct profile_line *lines = profile__location_lines(p, loc, &n);

	if (!n) {
		v[0] = (struct name_at){.name = location_name_index(p, loc)};
		return 1;
	}
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		const struct profile_function *f = profile__function_at(p, lines[i].function);

		v[i] = (struct name_at){
			.name = f->name, .file = f->filename, .line = lines[i].line};
	}
	return n;
}

#define SUMMARY_MAX_LINES 32

int summary__compute(const struct profile *p, struct summary *out)
{
	size_t nr_strings = profile__nr_strings(p);
	int64_t *self = calloc(nr_strings, sizeof(*self));
	int64_t *total = calloc(nr_strings, sizeof(*total));
	/* For each name, the last sample that counted it in `total`: recursion counts once. */
	size_t *seen_in = calloc(nr_strings, sizeof(*seen_in));
	signed char *kernel = calloc(nr_strings, 1);
	/* The first source position seen for each name: a string index and a line. */
	uint32_t *file = calloc(nr_strings, sizeof(*file));
	int64_t *line = calloc(nr_strings, sizeof(*line));
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!self || !total || !seen_in || !kernel || !file || !line)
		goto out;
	for (size_t i = 1; i < profile__nr_samples(p); i++) { /* 0: the zero entry */
		const struct profile_sample *s = profile__sample_at(p, i);
		size_t depth;
		const uint32_t *locs = profile__stack_at(p, s->stack, &depth);

		out->samples += s->value;
		for (size_t d = 0; d < depth; d++) {
			struct name_at names[SUMMARY_MAX_LINES];
			size_t nr = location_names(p, locs[d], names, SUMMARY_MAX_LINES);
			int is_kernel = profile__location_at(p, locs[d])->kind == FRAME_KERNEL;

			for (size_t j = 0; j < nr; j++) {
				uint32_t name = names[j].name;

				/* Self time is the innermost (possibly inlined) function's. */
				if (d == 0 && j == 0)
					self[name] += s->value;
				if (seen_in[name] != i + 1) {
					seen_in[name] = i + 1;
					total[name] += s->value;
				}
				kernel[name] = is_kernel;
				if (!file[name] && names[j].file) {
					file[name] = names[j].file;
					line[name] = names[j].line;
				}
			}
		}
	}
	out->v = calloc(nr_strings, sizeof(*out->v));
	if (!out->v)
		goto out;
	for (size_t i = 1; i < nr_strings; i++) {
		if (!total[i])
			continue;
		out->v[out->n++] = (struct function_share){
			.name = profile__string_at(p, i),
			.self = self[i],
			.total = total[i],
			.kernel = kernel[i],
			.file = file[i] ? profile__string_at(p, file[i]) : NULL,
			.line = line[i],
		};
	}
	err = 0;
out:
	free(self);
	free(total);
	free(seen_in);
	free(kernel);
	free(file);
	free(line);
	return err;
}

void summary__release(struct summary *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int by_self(const void *a, const void *b)
{
	const struct function_share *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct function_share *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return by_self(a, b);
}

static void print_table(const struct summary *s, size_t n, FILE *out, int sort_by_total)
{
	double all = s->samples ? (double)s->samples : 1.0;
	/* On a terminal a C++ or Rust name can take several lines: cut it there, keep it whole
	 * when the table goes to a file or a pipe, where it may be read by a program. */
	int cut = fileno(out) >= 0 && isatty(fileno(out));
	char shown[SUMMARY_NAME_MAX * 4 + 1];

	qsort(s->v, s->n, sizeof(*s->v), sort_by_total ? by_total : by_self);
	fprintf(out, "\nTop %zu functions by %s:\n", n, sort_by_total ? "total" : "self");
	fprintf(out, "  %7s %7s  %s\n", "self%", "total%", "function");
	for (size_t i = 0; i < n && i < s->n; i++) {
		const struct function_share *f = &s->v[i];

		if (!sort_by_total && !f->self)
			break;
		fprintf(out, "  %6.2f%% %6.2f%%  %s%s", 100.0 * f->self / all,
			100.0 * f->total / all,
			cut ? term__shorten(shown, sizeof(shown), f->name, SUMMARY_NAME_MAX)
			    : f->name,
			f->kernel ? " [k]" : "");
		/* The file's base name: the full path is in the profile, the table stays narrow. */
		if (f->file) {
			const char *base = strrchr(f->file, '/');

			fprintf(out, "  %s", base ? base + 1 : f->file);
			if (f->line > 0)
				fprintf(out, ":%lld", (long long)f->line);
		}
		fputc('\n', out);
	}
}

void summary__print_top(const struct summary *s, size_t n, FILE *out)
{
	if (!s->samples) {
		fprintf(out,
			"\nNo samples: nothing that was profiled ran on a CPU during the capture "
			"(an idle host or a sleeping process; --include-idle also counts the idle "
			"task).\n");
		return;
	}
	print_table(s, n, out, 0);
	print_table(s, n, out, 1);
}

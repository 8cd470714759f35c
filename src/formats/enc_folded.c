// SPDX-License-Identifier: BSD-2-Clause
/*
 * The folded (collapsed stacks) encoder, the input of flamegraph.pl and most flame graph tools:
 * "comm;root;...;leaf count" per line.
 *
 * Lines are merged by their text, not by the model's indices: two stacks that differ only in
 * addresses inside the same function print the same, and the tools would add them up anyway.
 * Sorting the text makes the output deterministic and merging adjacent duplicates trivial.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "formats/encode.h"

struct folded_line {
	char *text; /* without the count */
	int64_t count;
};

/*
 * ';' separates frames and '\n' lines, so both are replaced in every name. The count is what
 * follows the last space, so spaces may stay in function names (C++ and Rust signatures have
 * them); in the process name they become '_', as stackcollapse-perf.pl does.
 */
static void put_escaped(FILE *f, const char *s, bool is_comm)
{
	for (; *s; s++) {
		char c = *s;

		if (c == ';')
			c = ':';
		else if (c == '\n' || c == '\r')
			c = ' ';
		else if (is_comm && (c == ' ' || c == '\t'))
			c = '_';
		fputc(c, f);
	}
}

static int render_line(const struct profile *p, const struct profile_sample *s, char **text)
{
	const char *comm = profile__string_at(p, s->labels.comm);
	const uint32_t *stack;
	size_t depth, size;
	int err;
	FILE *f;

	f = open_memstream(text, &size);
	if (!f)
		return -errno;
	put_escaped(f, comm && *comm ? comm : "[unknown]", true);
	stack = profile__stack_at(p, s->stack, &depth);
	/* The model keeps stacks leaf first; folded lines go from the root. */
	for (size_t i = depth; i-- > 0;) {
		const struct profile_location *l = profile__location_at(p, stack[i]);
		size_t nr_lines;
		const struct profile_line *lines = profile__location_lines(p, stack[i], &nr_lines);

		/* Inlined calls are frames of their own, outermost first as the stack reads. */
		for (size_t j = nr_lines; j-- > 1;) {
			const struct profile_function *fn =
				profile__function_at(p, lines[j].function);

			fputc(';', f);
			put_escaped(f, profile__string_at(p, fn->name), false);
			if (l->kind == FRAME_KERNEL)
				fputs("_[k]", f);
		}
		/* The innermost level is the location's own function. */
		fputc(';', f);
		put_escaped(f, profile__location_name(p, stack[i]), false);
		if (l->kind == FRAME_KERNEL)
			fputs("_[k]", f);
	}
	err = ferror(f) ? -ENOMEM : 0;
	if (fclose(f) != 0 && !err)
		err = -ENOMEM;
	if (err) {
		free(*text);
		*text = NULL;
	}
	return err;
}

static int cmp_line(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	return strcmp(x->text, y->text);
}

int enc_folded__write(const struct profile *p, const char *path)
{
	struct folded_line *lines = NULL;
	size_t nr_lines = 0, nr, out_size = 0;
	char *out = NULL;
	FILE *f = NULL;
	int err = 0;

	bool per_sample;

	if (!p || !path)
		return -EINVAL;
	/* A cpu profile counts samples, as every flame graph tool expects; time profiles (wall,
	 * off-CPU) count nanoseconds, since their waits differ in length. */
	per_sample = !strcmp(profile__desc(p)->sample_type, "cpu");
	/* Sample 0 is the model's zero entry. */
	nr = profile__nr_samples(p);
	lines = calloc(nr, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (size_t i = 1; i < nr; i++) {
		const struct profile_sample *s = profile__sample_at(p, i);

		if (!(per_sample ? s->count : s->value))
			continue;
		err = render_line(p, s, &lines[nr_lines].text);
		if (err)
			goto out;
		lines[nr_lines++].count = per_sample ? s->count : s->value;
	}
	qsort(lines, nr_lines, sizeof(*lines), cmp_line);

	f = open_memstream(&out, &out_size);
	if (!f) {
		err = -errno;
		goto out;
	}
	for (size_t i = 0; i < nr_lines;) {
		int64_t count = 0;
		size_t j = i;

		while (j < nr_lines && strcmp(lines[j].text, lines[i].text) == 0)
			count += lines[j++].count;
		fprintf(f, "%s %" PRId64 "\n", lines[i].text, count);
		i = j;
	}
	err = ferror(f) ? -ENOMEM : 0;
	/* open_memstream() only hands out the buffer at fclose(), which may fail too. */
	if (fclose(f) != 0 && !err)
		err = -ENOMEM;
	f = NULL;
	if (err)
		goto out;
	err = atomic_file__write(path, out, out_size);
out:
	if (f)
		fclose(f);
	free(out);
	for (size_t i = 0; i < nr_lines; i++)
		free(lines[i].text);
	free(lines);
	return err;
}

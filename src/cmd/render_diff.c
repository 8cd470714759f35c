// SPDX-License-Identifier: BSD-2-Clause
/*
 * render --base: what changed between two profiles, as a table a terminal or a script reads
 * (shares in percent, changes in percentage points, biggest first) and as a differential flame
 * graph (enc_html__write_diff()). The shares come from profile_diff__compute().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/render_diff.h"
#include "formats/encode.h"
#include "model/profile_diff.h"

#define NAME_MAX_WIDTH 60
/* More than the profiles render reads (RENDER_MAX_INPUTS). */
#define RENDER_DIFF_MAX 16

static int64_t profile_total(const struct profile *p)
{
	int64_t t = 0;

	for (size_t i = 1; i < profile__nr_samples(p); i++)
		t += profile__sample_at(p, i)->value;
	return t;
}

static void print_table(const struct profile *old, const struct profile *new, unsigned int top)
{
	const struct profile_desc *d = profile__desc(new);
	struct profile_diff_row *rows;
	size_t n, shown;
	int width = 8;

	if (profile_diff__compute(old, new, &rows, &n)) {
		fprintf(stderr, "hostprof render: out of memory comparing the profiles\n");
		return;
	}
	shown = n < top ? n : top;
	for (size_t i = 0; i < shown; i++) {
		int len = (int)strlen(rows[i].name);

		if (len > width)
			width = len < NAME_MAX_WIDTH ? len : NAME_MAX_WIDTH;
	}
	printf("%s: base total %" PRId64 ", new total %" PRId64 " %s; the %zu biggest changes of "
	       "share (of %zu functions), in %% of each total and percentage points:\n",
	       d->sample_type ? d->sample_type : "profile", profile_total(old), profile_total(new),
	       d->sample_unit ? d->sample_unit : "", shown, n);
	printf("%-*s %10s %10s %10s %10s %10s %10s\n", width, "FUNCTION", "SELF_BASE", "SELF_NEW",
	       "SELF_DIFF", "TOTAL_BASE", "TOTAL_NEW", "TOTAL_DIFF");
	for (size_t i = 0; i < shown; i++) {
		const struct profile_diff_row *r = &rows[i];
		int len = (int)strlen(r->name);

		/* A long C++ name is cut, marked with "..", so that the columns stay aligned. */
		if (len > width)
			printf("%.*s.. ", width - 2, r->name);
		else
			printf("%-*s ", width, r->name);
		printf("%9.2f%% %9.2f%% %+10.2f %9.2f%% %9.2f%% %+10.2f\n", 100 * r->old_self,
		       100 * r->new_self, 100 * (r->new_self - r->old_self), 100 * r->old_total,
		       100 * r->new_total, 100 * (r->new_total - r->old_total));
	}
	free(rows);
}

int render_diff(struct profile *const *news, size_t n, struct profile *const *bases, size_t nb,
		const struct output *outputs, size_t nr_outputs, unsigned int top)
{
	const struct profile *paired[RENDER_DIFF_MAX];
	int status = 0;

	if (n > RENDER_DIFF_MAX)
		return 2;

	for (size_t i = 0; i < n; i++) {
		const char *type = profile__desc(news[i])->sample_type;

		paired[i] = NULL;
		for (size_t j = 0; j < nb && !paired[i]; j++) {
			const char *bt = profile__desc(bases[j])->sample_type;

			if (!strcmp(bt ? bt : "", type ? type : ""))
				paired[i] = bases[j];
		}
		if (!paired[i]) {
			fprintf(stderr,
				"hostprof render: the base holds no '%s' profile to compare with "
				"(it holds %s%s): give a base of the same type\n",
				type ? type : "", nb ? "" : "none",
				nb ? profile__desc(bases[0])->sample_type : "");
			return 2;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (i)
			putchar('\n');
		print_table(paired[i], news[i], top);
	}
	fflush(stdout);
	for (size_t i = 0; i < nr_outputs; i++) {
		int e = enc_html__write_diff((const struct profile *const *)news, paired, n,
					     outputs[i].path);

		if (e) {
			fprintf(stderr, "hostprof render: '%s': %s\n", outputs[i].path,
				strerror(-e));
			status = 1;
		} else {
			printf("Wrote %s\n", outputs[i].path);
		}
	}
	return status;
}

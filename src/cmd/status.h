/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live status line of a capture on a terminal: redrawn in place on stderr, and erased before
 * anything else is printed so that logs and the summary start on a clean line. The formatting is
 * a pure function (status__format) so that it is tested without a terminal.
 */
#ifndef HOSTPROF_STATUS_H
#define HOSTPROF_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct status_numbers {
	double elapsed_s;
	double total_s; /* the --duration; 0 when the capture runs until stopped */
	uint64_t samples;
	uint64_t lost;
	size_t processes;
};

/*
 * Render the line (no control characters) into buf, at most width - 1 columns so that the
 * cursor never wraps on the last column. Returns the length written (always < size).
 */
size_t status__format(char *buf, size_t size, const struct status_numbers *n, unsigned int width);

/*
 * Copy s into buf cut to at most max_cols characters (UTF-8 aware), ending in "..." when it was
 * cut: for names in terminal tables only, files keep them whole. Returns buf.
 */
char *term__shorten(char *buf, size_t size, const char *s, size_t max_cols);

struct status;

/* enabled: draw at all (stderr is a TTY and not --quiet). NULL and errno on failure. */
struct status *status__new(bool enabled);
/* Redraw at most every 250 ms, or at once when the line was erased since the last draw. */
void status__update(struct status *st, const struct status_numbers *n, uint64_t now_ns);
/* Erase the line, if drawn, so that the next output starts at column 0. */
void status__clear(struct status *st);
/* Erases the line; accepts NULL. */
void status__delete(struct status *st);

#endif /* HOSTPROF_STATUS_H */

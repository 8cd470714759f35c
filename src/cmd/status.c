// SPDX-License-Identifier: BSD-2-Clause
#include "cmd/status.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define STATUS_MIN_REDRAW_NS (250ULL * 1000 * 1000) /* at most ~4 redraws a second */
#define STATUS_BAR_MAX 30
#define STATUS_BAR_MIN 5
#define STATUS_DEFAULT_COLS 80
#define STATUS_SEP "  "

struct status {
	bool enabled;
	bool drawn;	  /* the line is on the screen now */
	bool ever_drawn;  /* last_ns is meaningful */
	uint64_t last_ns; /* when it was last drawn */
};

/* Short and stable in width: "4.2s", "3m05s", "1h02m". */
static void format_time(char *buf, size_t size, double s)
{
	unsigned long secs;

	if (s < 0)
		s = 0;
	if (s < 60) {
		snprintf(buf, size, "%.1fs", s);
		return;
	}
	secs = (unsigned long)s;
	if (secs < 3600)
		snprintf(buf, size, "%lum%02lus", secs / 60, secs % 60);
	else
		snprintf(buf, size, "%luh%02lum", secs / 3600, secs / 60 % 60);
}

/*
 * Append sep + text when the whole of it fits in avail columns; a part that does not fit is
 * dropped rather than cut, so a narrow terminal shows fewer fields, never half a number.
 */
static void append(char *buf, size_t *len, size_t avail, const char *text)
{
	size_t sep = *len ? strlen(STATUS_SEP) : 0;
	size_t n = strlen(text);

	if (*len + sep + n > avail)
		return;
	if (sep)
		memcpy(buf + *len, STATUS_SEP, sep);
	memcpy(buf + *len + sep, text, n);
	*len += sep + n;
	buf[*len] = '\0';
}

size_t status__format(char *buf, size_t size, const struct status_numbers *n, unsigned int width)
{
	char now[32], total[32], head[80], bar[STATUS_BAR_MAX + 16], samples[40], lost[40],
		procs[48];
	size_t avail = width > 1 ? width - 1 : 0;
	size_t len = 0, rest;

	if (!size)
		return 0;
	buf[0] = '\0';
	if (avail > size - 1)
		avail = size - 1;
	format_time(now, sizeof(now), n->elapsed_s);
	snprintf(samples, sizeof(samples), "%" PRIu64 " samples", n->samples);
	snprintf(lost, sizeof(lost), "%" PRIu64 " lost", n->lost);
	snprintf(procs, sizeof(procs), "%zu process%s", n->processes,
		 n->processes == 1 ? "" : "es");
	rest = strlen(samples) + strlen(lost) + strlen(procs) + 3 * strlen(STATUS_SEP);

	if (n->total_s > 0) {
		double frac = n->elapsed_s / n->total_s;
		int pct, bar_w;

		frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
		pct = (int)(frac * 100);
		format_time(total, sizeof(total), n->total_s);
		snprintf(head, sizeof(head), "%s / %s", now, total);
		/* The bar takes what the other fields leave, within [MIN, MAX]. */
		bar_w = (int)avail -
			(int)(strlen(head) + rest + strlen(STATUS_SEP) + strlen("[] 100%"));
		if (bar_w > STATUS_BAR_MAX)
			bar_w = STATUS_BAR_MAX;
		if (bar_w >= STATUS_BAR_MIN) {
			int fill = (int)(frac * bar_w + 0.5);

			bar[0] = '[';
			memset(bar + 1, '#', fill);
			memset(bar + 1 + fill, '.', bar_w - fill);
			snprintf(bar + 1 + bar_w, sizeof(bar) - 1 - bar_w, "] %3d%%", pct);
		} else {
			snprintf(bar, sizeof(bar), "%d%%", pct);
		}
		append(buf, &len, avail, head);
		append(buf, &len, avail, bar);
	} else {
		append(buf, &len, avail, now);
	}
	append(buf, &len, avail, samples);
	append(buf, &len, avail, lost);
	append(buf, &len, avail, procs);
	if (n->total_s <= 0)
		append(buf, &len, avail, "Ctrl-C to stop");
	if (!len && avail) {
		/* Not even the time fits whole: show what fits of it. */
		len = strlen(now) < avail ? strlen(now) : avail;
		memcpy(buf, now, len);
		buf[len] = '\0';
	}
	return len;
}

/* A UTF-8 sequence starts at every byte that is not a continuation byte. */
static bool is_char_start(unsigned char c)
{
	return (c & 0xc0) != 0x80;
}

char *term__shorten(char *buf, size_t size, const char *s, size_t max_cols)
{
	size_t chars = 0, keep, i, cut = 0;
	const char *dots = "...";

	if (!size)
		return buf;
	for (i = 0; s[i]; i++)
		chars += is_char_start((unsigned char)s[i]);
	if (chars <= max_cols) {
		snprintf(buf, size, "%s", s);
		return buf;
	}
	if (max_cols <= strlen(dots))
		dots = "";
	keep = max_cols - strlen(dots);
	/* The byte offset where character number `keep` starts. */
	for (i = 0, chars = 0; s[i]; i++) {
		if (is_char_start((unsigned char)s[i])) {
			if (chars == keep)
				break;
			chars++;
		}
	}
	cut = i;
	if (cut + strlen(dots) >= size) {
		cut = size - 1 > strlen(dots) ? size - 1 - strlen(dots) : 0;
		while (cut && !is_char_start((unsigned char)s[cut]))
			cut--;
	}
	snprintf(buf, size, "%.*s%s", (int)cut, s, dots);
	return buf;
}

struct status *status__new(bool enabled)
{
	struct status *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->enabled = enabled;
	return st;
}

static unsigned int terminal_columns(void)
{
	struct winsize ws;

	/* Read on every draw: the terminal may be resized during a capture. */
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return STATUS_DEFAULT_COLS;
}

void status__update(struct status *st, const struct status_numbers *n, uint64_t now_ns)
{
	char line[512];

	if (!st || !st->enabled)
		return;
	if (st->drawn && st->ever_drawn && now_ns - st->last_ns < STATUS_MIN_REDRAW_NS)
		return;
	status__format(line, sizeof(line), n, terminal_columns());
	/* Carriage return, the line, clear what a longer previous line left to its right. */
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	st->drawn = true;
	st->ever_drawn = true;
	st->last_ns = now_ns;
}

void status__clear(struct status *st)
{
	if (!st || !st->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	st->drawn = false;
}

void status__delete(struct status *st)
{
	status__clear(st);
	free(st);
}

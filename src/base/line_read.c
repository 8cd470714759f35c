// SPDX-License-Identifier: BSD-2-Clause
#include "base/line_read.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (64 * 1024)

struct line_reader {
	FILE *f;
	size_t max_line;
	uint64_t budget; /* bytes still allowed from f */
	char *line;	 /* max_line + 1 */
	char chunk[CHUNK];
	size_t pos, len; /* what chunk holds: chunk[pos..len) not handed out yet */
	int state;	 /* 0 while reading; else what every later call returns */
};

struct line_reader *line_reader__new(FILE *f, size_t max_line, uint64_t max_bytes)
{
	struct line_reader *r;

	if (!f || !max_line || max_line == SIZE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->line = malloc(max_line + 1);
	if (!r->line) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->f = f;
	r->max_line = max_line;
	r->budget = max_bytes;
	return r;
}

void line_reader__delete(struct line_reader *r)
{
	if (!r)
		return;
	free(r->line);
	free(r);
}

/* More bytes into chunk: 0, or what ends the reading (-ENODATA, -EFBIG, -EIO). */
static int refill(struct line_reader *r)
{
	size_t want = r->budget < CHUNK ? (size_t)r->budget : CHUNK;

	r->pos = r->len = 0;
	if (!want) {
		/* The budget is spent: was that the end of the file anyway? */
		int c = getc(r->f);

		if (c != EOF)
			return -EFBIG;
		return ferror(r->f) ? -EIO : -ENODATA;
	}
	r->len = fread(r->chunk, 1, want, r->f);
	r->budget -= r->len;
	if (r->len)
		return 0;
	return ferror(r->f) ? -EIO : -ENODATA;
}

ssize_t line_reader__next(struct line_reader *r, char **line)
{
	size_t n = 0;
	bool too_long = false;
	int err;

	if (r->state)
		return r->state;
	for (;;) {
		const char *nl;
		size_t take;

		if (r->pos == r->len) {
			err = refill(r);
			if (err == -ENODATA && (n || too_long))
				break; /* the last line, without a newline */
			if (err) {
				r->state = err;
				return err;
			}
		}
		nl = memchr(r->chunk + r->pos, '\n', r->len - r->pos);
		take = (nl ? (size_t)(nl - r->chunk) : r->len) - r->pos;
		if (!too_long && take > r->max_line - n)
			too_long = true;
		if (!too_long)
			memcpy(r->line + n, r->chunk + r->pos, take);
		n = too_long ? 0 : n + take;
		r->pos += take;
		if (nl) {
			r->pos++;
			break;
		}
	}
	if (too_long)
		return -E2BIG;
	r->line[n] = '\0';
	*line = r->line;
	return (ssize_t)n;
}

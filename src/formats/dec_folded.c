// SPDX-License-Identifier: BSD-2-Clause
/*
 * The folded (collapsed stacks) decoder: "comm;root;...;leaf count" lines into the model, the
 * inverse of enc_folded.c. Folded text has no addresses or binaries, so each distinct (name,
 * kind) becomes one function and one location with address 0 and no mapping; the encoders then
 * print the same names back.
 *
 * Also home of decode__read_file(), which every file decoder uses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/decode.h"
#include "base/vec.h"

int decode__fail(char *err, size_t err_len, const char *name, int code, const char *fmt, ...)
{
	size_t n = 0;
	va_list ap;

	if (!err || !err_len)
		return code;
	if (name)
		n = (size_t)snprintf(err, err_len, "%s: ", name);
	if (n < err_len) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_len - n, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Messages here name the input themselves, with the line where it went wrong. */
#define fail(err, err_len, code, ...) decode__fail(err, err_len, NULL, code, __VA_ARGS__)

int decode__read_file(const char *path, size_t max, char **buf, size_t *len, char *err,
		      size_t err_len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t n = 0, cap = 0;
	int e;

	if (!f)
		return fail(err, err_len, -errno, "%s: cannot open: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (n + 1 >= cap) {
			size_t c = cap ? cap * 2 : 65536;
			char *nb;

			if (cap > max) {
				e = fail(err, err_len, -EFBIG, "%s: larger than %zu bytes", path,
					 max);
				goto out;
			}
			nb = realloc(b, c + 1);
			if (!nb) {
				e = fail(err, err_len, -ENOMEM, "%s: out of memory", path);
				goto out;
			}
			b = nb;
			cap = c;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		e = fail(err, err_len, -EIO, "%s: read error", path);
		goto out;
	}
	if (n > max) {
		e = fail(err, err_len, -EFBIG, "%s: larger than %zu bytes", path, max);
		goto out;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
	e = 0;
out:
	free(b);
	fclose(f);
	return e;
}

/* The location of a frame name; kernel frames are distinct from user ones of the same name. */
static int64_t folded_location(struct profile *p, const char *name, size_t n, bool kernel)
{
	struct profile_function fn = {0};
	struct profile_location l = {0};
	char *s = strndup(name, n);
	int64_t idx;

	if (!s)
		return -ENOMEM;
	idx = profile__string(p, s);
	free(s);
	if (idx < 0)
		return idx;
	fn.name = fn.system_name = (uint32_t)idx;
	idx = profile__function(p, &fn);
	if (idx < 0)
		return idx;
	l.function = (uint32_t)idx;
	l.kind = kernel ? FRAME_KERNEL : FRAME_NATIVE;
	if (kernel)
		l.address = DECODE_KERNEL_ADDR_MIN;
	return profile__location(p, &l);
}

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* One line (without its '\n'); lineno for messages. */
static int parse_line(struct profile *p, char *line, size_t len, const char *name, size_t lineno,
		      uint32_t **locs, size_t *cap, char *err, size_t err_len)
{
	struct profile_labels lb = {0};
	char *sp, *end, *frame;
	size_t nr = 0;
	int64_t count, idx;

	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (!len || line[0] == '#')
		return 0;
	if (strlen(line) != len)
		return fail(err, err_len, -EINVAL,
			    "%s:%zu: NUL byte in the line (not a folded file?)", name, lineno);
	sp = strrchr(line, ' ');
	if (!sp || sp == line)
		return fail(err, err_len, -EINVAL,
			    "%s:%zu: expected 'frame;frame;... COUNT', got no count", name, lineno);
	errno = 0;
	count = strtoll(sp + 1, &end, 10);
	if (errno || end == sp + 1 || *end || count < 0 || sp[1] == '-' || sp[1] == '+')
		return fail(err, err_len, -EINVAL,
			    "%s:%zu: the count '%s' is not a non-negative integer", name, lineno,
			    sp + 1);
	*sp = '\0';

	/* First the process name, then the frames from the root: the model wants leaf first,
	 * so they are collected and reversed. */
	frame = line;
	for (size_t i = 0;; i++) {
		char *semi = strchr(frame, ';');
		size_t n = semi ? (size_t)(semi - frame) : strlen(frame);

		if (!n)
			return fail(err, err_len, -EINVAL, "%s:%zu: empty frame name (frame %zu)",
				    name, lineno, i + 1);
		if (i == 0) {
			frame[n] = '\0';
			idx = profile__string(p, frame);
			if (idx < 0)
				return (int)idx;
			lb.comm = (uint32_t)idx;
		} else {
			bool kernel = has_suffix(frame, n, "_[k]");

			if (kernel || has_suffix(frame, n, "_[j]") || has_suffix(frame, n, "_[i]"))
				n -= 4;
			if (!n)
				return fail(err, err_len, -EINVAL,
					    "%s:%zu: empty frame name (frame %zu)", name, lineno,
					    i + 1);
			if (VEC_RESERVE(*locs, *cap, nr + 1))
				return -ENOMEM;
			idx = folded_location(p, frame, n, kernel);
			if (idx < 0)
				return (int)idx;
			(*locs)[nr++] = (uint32_t)idx;
		}
		if (!semi)
			break;
		frame = semi + 1;
	}
	for (size_t i = 0; i < nr / 2; i++) {
		uint32_t t = (*locs)[i];

		(*locs)[i] = (*locs)[nr - 1 - i];
		(*locs)[nr - 1 - i] = t;
	}
	idx = profile__stack(p, *locs, nr);
	if (idx < 0)
		return (int)idx;
	return profile__add_sample(p, (uint32_t)idx, &lb, count, count);
}

int dec_folded__parse(const char *buf, size_t len, const char *name, struct profile **out,
		      char *err, size_t err_len)
{
	static const struct profile_desc desc = {
		.sample_type = "samples",
		.sample_unit = "count",
		.period_type = "samples",
		.period_unit = "count",
		.period = 1,
	};
	struct profile *p = NULL;
	uint32_t *locs = NULL;
	size_t cap = 0, lineno = 0;
	char *copy = NULL;
	int e = 0;

	*out = NULL;
	if (!buf || !name)
		return -EINVAL;
	/* A private copy: lines are cut in place. */
	copy = malloc(len + 1);
	p = profile__new(&desc);
	if (!copy || !p) {
		e = fail(err, err_len, -ENOMEM, "%s: out of memory", name);
		goto out;
	}
	memcpy(copy, buf, len);
	copy[len] = '\0';
	for (size_t off = 0; off < len;) {
		char *nl = memchr(copy + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (copy + off)) : len - off;

		copy[off + n] = '\0';
		lineno++;
		e = parse_line(p, copy + off, n, name, lineno, &locs, &cap, err, err_len);
		if (e) {
			if (e == -ENOMEM)
				fail(err, err_len, e, "%s:%zu: out of memory", name, lineno);
			goto out;
		}
		off += n + 1;
	}
	*out = p;
	p = NULL;
out:
	profile__delete(p);
	free(locs);
	free(copy);
	return e;
}

int dec_folded__read(const char *path, struct profile **out, char *err, size_t err_len)
{
	char *buf = NULL;
	size_t len = 0;
	int e;

	*out = NULL;
	/* Folded text of a large host-wide capture is tens of MB; 1 GiB says "wrong file". */
	e = decode__read_file(path, (size_t)1 << 30, &buf, &len, err, err_len);
	if (!e)
		e = dec_folded__parse(buf, len, path, out, err, err_len);
	free(buf);
	return e;
}

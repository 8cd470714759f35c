// SPDX-License-Identifier: BSD-2-Clause
#include "base/hex.h"

#include <errno.h>
#include <string.h>

int hex__digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

const char *hex__parse_u64(const char *s, uint64_t *out)
{
	const char *start = s;
	uint64_t v = 0;
	int d;

	for (; (d = hex__digit(*s)) >= 0; s++) {
		if (v >> 60)
			return NULL;
		v = v << 4 | (uint64_t)d;
	}
	if (s == start)
		return NULL;
	*out = v;
	return s;
}

void hex__encode(char *out, const void *in, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = in;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The byte the escape at s[0..left) stands for, or -1 when s starts no escape. */
static int escape_at(const char *s, size_t left)
{
	int hi, lo;

	if (left < 3 || s[0] != '%' || (hi = hex__digit(s[1])) < 0 || (lo = hex__digit(s[2])) < 0)
		return -1;
	return hi << 4 | lo;
}

size_t hex__percent_decode(char *dst, size_t dstlen, const char *src, size_t n)
{
	size_t o = 0;

	if (!dstlen)
		return 0;
	for (size_t i = 0; i < n && o + 1 < dstlen; i++) {
		int c = escape_at(src + i, n - i);

		if (c >= 0) {
			dst[o++] = (char)c;
			i += 2;
		} else {
			dst[o++] = src[i];
		}
	}
	dst[o] = '\0';
	return o;
}

int hex__percent_decode_in_place(char *s)
{
	size_t len = strlen(s);

	/* A '%' is never part of an escape begun before it, so every "%00" is an escape. */
	if (strstr(s, "%00"))
		return -EINVAL;
	/* The output never overtakes the input: decoding in place is safe. */
	hex__percent_decode(s, len + 1, s, len);
	return 0;
}

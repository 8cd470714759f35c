// SPDX-License-Identifier: BSD-2-Clause
#include "base/utf8.h"

#include <string.h>

size_t utf8__seq(const void *str, size_t left)
{
	const unsigned char *s = str;
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (left < n)
		return 0;
	/* The second byte's range excludes overlong forms, surrogates and code points > 10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return n;
}

bool utf8__valid(const void *str, size_t len)
{
	const unsigned char *s = str;

	for (size_t i = 0; i < len;) {
		size_t n = s[i] < 0x80 ? 1 : utf8__seq(s + i, len - i);

		if (!n)
			return false;
		i += n;
	}
	return true;
}

size_t utf8__fit(const char *s, size_t n, size_t max)
{
	if (n < max)
		return n;
	if (!max)
		return 0;
	n = max - 1;
	/* s[n] is the first byte left out: while it continues a sequence, that sequence is cut,
	 * so back off to its lead byte, which is left out too. */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

size_t utf8__replace_invalid(char *dst, const char *s, size_t len, const char *repl)
{
	size_t rlen = strlen(repl), out = 0;

	for (size_t i = 0; i < len;) {
		size_t n = utf8__seq(s + i, len - i);

		if (n) {
			memcpy(dst + out, s + i, n);
			out += n;
			i += n;
		} else {
			memcpy(dst + out, repl, rlen);
			out += rlen;
			i++;
		}
	}
	dst[out] = '\0';
	return out;
}

// SPDX-License-Identifier: BSD-2-Clause
#include "base/log_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

static bool blank(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

void log_text__sanitize(char *dst, size_t dstlen, const void *src, size_t srclen)
{
	const unsigned char *s = src;
	size_t o = 0, i = 0;
	bool space = true; /* drops leading blanks */

	if (!dstlen)
		return;
	for (; i < srclen && o + 1 < dstlen; i++) {
		unsigned char c = s[i];

		if (blank(c)) {
			if (!space)
				dst[o++] = ' ';
			space = true;
			continue;
		}
		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		space = false;
	}
	/* Is anything but blanks left over? Then say the message was cut. */
	while (i < srclen && blank(s[i]))
		i++;
	if (i < srclen && dstlen > 4) {
		if (o > dstlen - 4)
			o = dstlen - 4;
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	while (o && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

size_t log_text__escape(char *dst, size_t dstlen, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, left = strlen(src);

	while (left) {
		size_t n = utf8__seq(s, left);
		/* U+0080..U+009F are C2 80..C2 9F: terminals act on them as on ESC sequences. */
		bool c1 = n == 2 && s[0] == 0xc2 && s[1] < 0xa0;
		bool plain = n > 1 ? !c1 : n == 1 && s[0] >= 0x20 && s[0] != 0x7f;

		if (plain) {
			if (o + n >= dstlen)
				break;
			memcpy(dst + o, s, n);
			o += n;
		} else {
			/* One byte at a time: an invalid or control byte, or each of a C1 pair. */
			n = n ? n : 1;
			if (o + 4 * n >= dstlen)
				break;
			for (size_t i = 0; i < n; i++, o += 4)
				snprintf(dst + o, 5, "\\x%02x", s[i]);
		}
		s += n;
		left -= n;
	}
	dst[o] = '\0';
	return o;
}

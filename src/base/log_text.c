// SPDX-License-Identifier: BSD-2-Clause
#include "base/log_text.h"

#include <stdbool.h>
#include <string.h>

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

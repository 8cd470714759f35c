// SPDX-License-Identifier: BSD-2-Clause
/*
 * Paths as text. Compilers write the source path of a line as they were given it, so one file
 * reaches the profile as "./misc/../sysdeps/x.c" from one unit and "sysdeps/x.c" from another;
 * normalising makes them one name to the reader and to anything that groups by file.
 */
#include <stdbool.h>
#include <string.h>

#include "base/path.h"

size_t path__normalize(char *s)
{
	size_t r = 0, w = 0, len = strlen(s), floor;
	bool abs = s[0] == '/';

	if (!len)
		return 0;
	if (abs)
		w = r = 1;
	/* floor: the end of the leading "../.." that a relative path cannot resolve. */
	floor = w;
	while (r < len) {
		size_t seg = r, n;

		while (r < len && s[r] != '/')
			r++;
		n = r - seg;
		while (r < len && s[r] == '/')
			r++;
		if (n == 0 || (n == 1 && s[seg] == '.'))
			continue;
		if (n == 2 && s[seg] == '.' && s[seg + 1] == '.') {
			if (w > floor) {
				/* Drop the last written segment and its slash. */
				w--;
				while (w > floor && s[w - 1] != '/')
					w--;
				continue;
			}
			if (abs)
				continue;
			memmove(s + w, "../", 3);
			w += 3;
			floor = w;
			continue;
		}
		memmove(s + w, s + seg, n);
		w += n;
		s[w++] = '/';
	}
	/* The trailing slash the loop leaves after the last segment. */
	if (w > (abs ? 1u : 0u) && s[w - 1] == '/')
		w--;
	if (!w)
		s[w++] = '.';
	s[w] = '\0';
	return w;
}

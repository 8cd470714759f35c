// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a Python process holds and the host decodes without reading more: a code object's line
 * table (interp/python_lines.h) and a str's header and characters (interp/python_unicode.h).
 * Input: byte 0 chooses the table's format (bit 0), the str's kind (bits 1-2) and ASCII flag
 * (bit 3); bytes 1-4 the code unit's index, 5-8 the first line; the rest is the table, and also
 * the str's header and characters. A line is never negative, and no index past what the table
 * can cover has one (an entry covers at most 8 code units, a 3.10 pair 255 bytes); a str comes
 * out valid UTF-8 within its buffer.
 */
#include <string.h>

#include "fuzz.h"
#include "base/utf8.h"
#include "interp/python_lines.h"
#include "interp/python_unicode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned kinds[] = {1, 2, 4, 3};
	enum python_line_format fmt;
	const uint8_t *t = data + 9;
	size_t len = size - 9;
	char out[PYTHON_STR_MAX];
	uint32_t index;
	int32_t first;
	unsigned kind;
	int64_t line;
	uint8_t *copy;
	size_t n;

	if (size < 9)
		return 0;
	fmt = (data[0] & 1) ? PYTHON_LINES_311 : PYTHON_LINES_310;
	memcpy(&index, data + 1, 4);
	memcpy(&first, data + 5, 4);
	/* A copy of exactly len bytes: ASan reports any read past the table. */
	copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	memcpy(copy, t, len);
	line = python_lines__line(fmt, copy, len, first, index);
	FUZZ_ASSERT(line >= 0);
	FUZZ_ASSERT(line <= (1LL << 40));
	/* Past every unit the table could cover: no line. */
	line = python_lines__line(fmt, copy, len, first, (uint32_t)(len * 128 + 8));
	FUZZ_ASSERT(len > (1U << 24) || line == 0);

	kind = kinds[(data[0] >> 1) & 3];
	for (int minor = 10; minor <= 13; minor++) {
		struct python_str_head h;
		size_t hs = python_unicode__head_size(minor);

		if (len >= hs && python_unicode__head(minor, copy, len, &h) == 0)
			FUZZ_ASSERT((h.kind == 1 || h.kind == 2 || h.kind == 4) &&
				    (!h.ascii || h.kind == 1) && h.data_offset >= hs);
	}
	/* Kind 3 is none: nothing comes out. */
	n = python_unicode__to_utf8(copy, len / (kind == 3 ? 1 : kind), kind, (data[0] >> 3) & 1,
				    out, sizeof(out));
	FUZZ_ASSERT(n < sizeof(out) && strlen(out) == n);
	FUZZ_ASSERT(utf8__valid(out, strlen(out)));
	free(copy);
	return 0;
}

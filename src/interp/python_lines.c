// SPDX-License-Identifier: BSD-2-Clause
#include "interp/python_lines.h"

#include <stdbool.h>

/* A running line kept within this bound cannot overflow, whatever a table of any length adds to
 * it (each step adds less than 2^31); real lines are below 2^31. */
#define LINE_BOUND (1LL << 40)

/* The 3.10 table's line delta that says "this range has no line". */
#define NO_LINE_310 (-128)

/* Kinds of 3.11 location entries (bits 3-6 of the first byte). */
#define LOC_ONE_LINE0 10  /* 10-12: the line moves by kind - 10, columns in two bytes */
#define LOC_NO_COLUMNS 13 /* the line moves by a signed varint */
#define LOC_LONG 14	  /* the same, then end line and columns */
#define LOC_NONE 15	  /* no location: the range has no line */

/* Varints are 6-bit chunks; five of them hold 30 bits, more than any line or column has. */
#define VARINT_MAX_CHUNKS 5

static int64_t bounded(int64_t line)
{
	if (line > LINE_BOUND)
		return LINE_BOUND;
	if (line < -LINE_BOUND)
		return -LINE_BOUND;
	return line;
}

/* What a lookup answers for a line: lines below 1 are no lines. */
static int64_t answer(int64_t line)
{
	return line > 0 ? line : 0;
}

static int64_t lines_310(const uint8_t *t, size_t len, int64_t line, uint32_t index)
{
	/* 3.10's ranges count bytes of bytecode; f_lasti counts code units of two bytes. */
	uint64_t target = (uint64_t)index * 2, end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int delta = (int8_t)t[i + 1];

		/* Ranges are contiguous from 0: the first that ends past the target holds it. */
		end += t[i];
		if (delta != NO_LINE_310)
			line = bounded(line + delta);
		if (target < end)
			return delta == NO_LINE_310 ? 0 : answer(line);
	}
	return 0;
}

/* The varint in p[0..n): true and its value, false when it is cut short or too long. */
static bool read_varint(const uint8_t *p, size_t n, uint32_t *out)
{
	uint32_t v = 0;

	for (size_t i = 0; i < n && i < VARINT_MAX_CHUNKS; i++) {
		v |= (uint32_t)(p[i] & 63) << (6 * i);
		if (!(p[i] & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static int64_t lines_311(const uint8_t *t, size_t len, int64_t line, uint32_t index)
{
	uint64_t end = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t first = t[i];
		int kind = (first >> 3) & 15;
		size_t next = i + 1;
		int64_t delta = 0;
		uint32_t u;

		/* An entry is its first byte and the bytes after it that have bit 7 clear, as
		 * CPython's own walk of the table delimits them. */
		while (next < len && !(t[next] & 0x80))
			next++;
		if (kind == LOC_NO_COLUMNS || kind == LOC_LONG) {
			if (!read_varint(t + i + 1, next - i - 1, &u))
				return 0; /* the line is lost from here on */
			delta = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
		} else if (kind >= LOC_ONE_LINE0 && kind < LOC_NO_COLUMNS) {
			delta = kind - LOC_ONE_LINE0;
		}
		if (kind != LOC_NONE)
			line = bounded(line + delta);
		end += (uint64_t)(first & 7) + 1;
		if (index < end)
			return kind == LOC_NONE ? 0 : answer(line);
		i = next;
	}
	return 0;
}

int64_t python_lines__line(enum python_line_format fmt, const uint8_t *table, size_t len,
			   int64_t first_line, uint32_t index)
{
	if (!table)
		return 0;
	first_line = bounded(first_line);
	switch (fmt) {
	case PYTHON_LINES_310:
		return lines_310(table, len, first_line, index);
	case PYTHON_LINES_311:
		return lines_311(table, len, first_line, index);
	}
	return 0;
}

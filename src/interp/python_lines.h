/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The source line of one code unit of a CPython code object, from its line table (co_linetable)
 * as the process holds it: pure decoders, no I/O.
 *
 * 3.10 (PYTHON_LINES_310, Objects/lnotab_notes.txt of 3.10): pairs of an unsigned byte (how many
 * bytes of bytecode the range covers) and a signed byte (how far the line moves; -128: the range
 * has no line). A frame's f_lasti counts code units of two bytes.
 *
 * 3.11 on (PYTHON_LINES_311, Objects/locations.md): entries of a first byte with bit 7 set (the
 * kind of entry in bits 3-6, the code units it covers less one in bits 0-2) and the bytes after it
 * with bit 7 clear, among them the line's change as a 6-bit varint where the kind carries one.
 *
 * In both, lines are deltas from co_firstlineno, and a range without a line leaves the running
 * line as it was. The table comes from a process that may lie: nothing past table[len) is read,
 * every step consumes input (time linear in len), and numbers are bounded, never overflowed.
 */
#ifndef HOSTPROF_PYTHON_LINES_H
#define HOSTPROF_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "interp/python_layout.h"

/*
 * The line of code unit `index` (f_lasti in 3.10; the instruction pointer's offset from
 * co_code_adaptive, in code units, from 3.11) of a code object whose co_firstlineno is first_line
 * and whose co_linetable is table[0..len), encoded as fmt says. 0 when the table gives no line
 * there: a range without one, an index past the ranges, an entry cut short, or a line below 1.
 */
int64_t python_lines__line(enum python_line_format fmt, const uint8_t *table, size_t len,
			   int64_t first_line, uint32_t index);

#endif /* HOSTPROF_PYTHON_LINES_H */

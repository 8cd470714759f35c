/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * LEB128 numbers, read within bounds: DWARF's ULEB128 and SLEB128 (.eh_frame, .debug_frame, the
 * DWARF tables of our own), protobuf's varints and Go's build info lengths are all this encoding:
 * 7 bits a byte, low first, the top bit set on every byte but the last.
 */
#ifndef HOSTPROF_LEB128_H
#define HOSTPROF_LEB128_H

#include <stdbool.h>
#include <stdint.h>

/* 64 bits take at most 10 bytes: a longer number is corrupt, not a bigger one. */
#define LEB128_MAX_BYTES 10

/*
 * Reads one number from *p, never at or past end: true with its bits in *v (those past 64
 * dropped) and *p past it, or false (cut short, or longer than LEB128_MAX_BYTES) with *p
 * unchanged. *bits, when not NULL, gets how many bits it carried (7 a byte), and *last its last
 * byte, which holds the sign of a signed number.
 */
static inline bool leb128__read_bits(const uint8_t **p, const uint8_t *end, uint64_t *v,
				     unsigned int *bits, uint8_t *last)
{
	const uint8_t *q = *p;
	uint64_t r = 0;

	for (unsigned int shift = 0; shift < 7 * LEB128_MAX_BYTES; shift += 7) {
		uint8_t byte;

		if (q >= end)
			return false;
		byte = *q++;
		if (shift < 64)
			r |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = r;
			*p = q;
			if (bits)
				*bits = shift + 7;
			if (last)
				*last = byte;
			return true;
		}
	}
	return false;
}

/* An unsigned number (ULEB128, a protobuf varint): as leb128__read_bits(). */
static inline bool leb128__read_u(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	return leb128__read_bits(p, end, v, NULL, NULL);
}

/* A signed number (SLEB128): sign-extended from its last byte's bit 6. */
static inline bool leb128__read_s(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	unsigned int bits;
	uint8_t last;
	uint64_t u;

	if (!leb128__read_bits(p, end, &u, &bits, &last))
		return false;
	if (bits < 64 && (last & 0x40))
		u |= ~(uint64_t)0 << bits;
	*v = (int64_t)u;
	return true;
}

#endif /* HOSTPROF_LEB128_H */

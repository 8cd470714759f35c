// SPDX-License-Identifier: BSD-2-Clause
#include "interp/python_unicode.h"

#include <errno.h>
#include <string.h>

#include "base/utf8.h"
#include "interp/python_layout.h"

/* Offsets in PyASCIIObject, the same in every release read here (LP64). */
#define STR_LENGTH 16
#define STR_STATE 32

/* The state's bitfields, allocated from bit 0 by GCC and Clang on little-endian LP64 targets. */
#define STATE_KIND(s) (((s) >> 2) & 7)
#define STATE_COMPACT(s) (((s) >> 5) & 1)
#define STATE_ASCII(s) (((s) >> 6) & 1)
#define STATE_READY(s) (((s) >> 7) & 1) /* 3.10 and 3.11 only */

/* sizeof(PyASCIIObject) and sizeof(PyCompactUnicodeObject): 3.12 dropped wstr and wstr_length. */
static void sizes(int minor, size_t *ascii, size_t *compact)
{
	if (minor >= 12) {
		*ascii = 40;
		*compact = 56;
	} else {
		*ascii = 48;
		*compact = 72;
	}
}

size_t python_unicode__head_size(int minor)
{
	size_t ascii, compact;

	if (minor < PYTHON_LAYOUT_MIN_MINOR || minor > PYTHON_LAYOUT_MAX_MINOR)
		return 0;
	sizes(minor, &ascii, &compact);
	return ascii;
}

int python_unicode__head(int minor, const uint8_t *head, size_t len, struct python_str_head *out)
{
	size_t ascii_size, compact_size;
	uint32_t state;
	int64_t length;

	if (!python_unicode__head_size(minor) || len < python_unicode__head_size(minor))
		return -EINVAL;
	sizes(minor, &ascii_size, &compact_size);
	memcpy(&length, head + STR_LENGTH, sizeof(length));
	memcpy(&state, head + STR_STATE, sizeof(state));
	if (length < 0)
		return -EINVAL;
	out->length = (uint64_t)length;
	out->kind = STATE_KIND(state);
	out->compact = STATE_COMPACT(state);
	out->ascii = STATE_ASCII(state);
	if (out->kind != 1 && out->kind != 2 && out->kind != 4)
		return -EINVAL;
	if (out->ascii && out->kind != 1)
		return -EINVAL;
	/* Before 3.12 a str could still be waiting for its canonical form (only its wchar_t one).
	 */
	if (minor < 12 && !STATE_READY(state))
		return -EINVAL;
	if (out->compact)
		out->data_offset = (uint32_t)(out->ascii ? ascii_size : compact_size);
	else
		out->data_offset = (uint32_t)compact_size; /* PyUnicodeObject.data.any */
	return 0;
}

/* The code point i of data. */
static uint32_t code_point(const uint8_t *data, size_t i, unsigned kind)
{
	uint16_t u16;
	uint32_t u32;

	switch (kind) {
	case 2:
		memcpy(&u16, data + 2 * i, sizeof(u16));
		return u16;
	case 4:
		memcpy(&u32, data + 4 * i, sizeof(u32));
		return u32;
	default:
		return data[i];
	}
}

/* c as UTF-8 into b (4 bytes); its length. c is a scalar value (no surrogate, at most U+10FFFF). */
static size_t encode(uint32_t c, uint8_t *b)
{
	if (c < 0x80) {
		b[0] = (uint8_t)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (uint8_t)(0xc0 | c >> 6);
		b[1] = (uint8_t)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		b[0] = (uint8_t)(0xe0 | c >> 12);
		b[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (uint8_t)(0x80 | (c & 0x3f));
		return 3;
	}
	b[0] = (uint8_t)(0xf0 | c >> 18);
	b[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
	b[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
	b[3] = (uint8_t)(0x80 | (c & 0x3f));
	return 4;
}

size_t python_unicode__to_utf8(const uint8_t *data, size_t n, unsigned kind, bool ascii, char *out,
			       size_t out_size)
{
	size_t w = 0;

	if (!out_size)
		return 0;
	if (kind != 1 && kind != 2 && kind != 4)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = code_point(data, i, kind);
		uint8_t b[4];
		size_t len;

		if (c == 0 || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff ||
		    (ascii && c >= 0x80)) {
			memcpy(b, UTF8_REPLACEMENT, 3);
			len = 3;
		} else {
			len = encode(c, b);
		}
		if (w + len >= out_size)
			break;
		memcpy(out + w, b, len);
		w += len;
	}
	out[w] = '\0';
	return w;
}

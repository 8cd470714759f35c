// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/python_unicode.h: a CPython str's header and characters into UTF-8. The characters'
 * expected UTF-8 is written out by hand from the Unicode code charts; the headers' offsets and
 * bits from Include/cpython/unicodeobject.h of 3.10 to 3.13.
 */
#include <errno.h>
#include <string.h>

#include "base/utf8.h"
#include "check.h"
#include "interp/python_unicode.h"

static void test_head(void)
{
	uint8_t h[64] = {0};
	struct python_str_head s;
	int64_t len = 7;
	uint32_t state;

	CHECK_U64(python_unicode__head_size(10), 48);
	CHECK_U64(python_unicode__head_size(11), 48);
	CHECK_U64(python_unicode__head_size(12), 40);
	CHECK_U64(python_unicode__head_size(13), 40);
	CHECK_U64(python_unicode__head_size(9), 0);
	CHECK_U64(python_unicode__head_size(14), 0);

	memcpy(h + 16, &len, 8);
	/* Compact ASCII, ready: kind 1 (bits 2-4), compact (5), ascii (6), ready (7). */
	state = 1 << 2 | 1 << 5 | 1 << 6 | 1 << 7;
	memcpy(h + 32, &state, 4);
	CHECK(python_unicode__head(11, h, 48, &s) == 0, "3.11 compact ASCII");
	CHECK(s.length == 7 && s.kind == 1 && s.ascii && s.compact && s.data_offset == 48,
	      "3.11: kind %u offset %u", s.kind, s.data_offset);
	CHECK(python_unicode__head(12, h, 40, &s) == 0 && s.data_offset == 40, "3.12 ASCII");
	CHECK(python_unicode__head(11, h, 40, &s) == -EINVAL, "a header cut short");
	/* Compact, 2 bytes a character: after PyCompactUnicodeObject. */
	state = 2 << 2 | 1 << 5 | 1 << 7;
	memcpy(h + 32, &state, 4);
	CHECK(python_unicode__head(10, h, 48, &s) == 0 && s.kind == 2 && s.data_offset == 72,
	      "3.10 UCS2");
	CHECK(python_unicode__head(13, h, 40, &s) == 0 && s.data_offset == 56, "3.13 UCS2");
	/* Not ready: refused before 3.12, where the bit means statically allocated. */
	state = 4 << 2 | 1 << 5;
	memcpy(h + 32, &state, 4);
	CHECK(python_unicode__head(11, h, 48, &s) == -EINVAL, "3.11 not ready");
	CHECK(python_unicode__head(12, h, 40, &s) == 0 && s.kind == 4, "3.12 UCS4");
	/* Legacy: the pointer to the characters after PyCompactUnicodeObject. */
	state = 2 << 2 | 1 << 7;
	memcpy(h + 32, &state, 4);
	CHECK(python_unicode__head(11, h, 48, &s) == 0 && !s.compact && s.data_offset == 72,
	      "legacy");
	/* Kinds that are none; ASCII of 2 bytes; a negative length. */
	for (uint32_t k = 0; k < 8; k++) {
		state = k << 2 | 1 << 5 | 1 << 7;
		memcpy(h + 32, &state, 4);
		CHECK((python_unicode__head(11, h, 48, &s) == 0) == (k == 1 || k == 2 || k == 4),
		      "kind %u", k);
	}
	state = 2 << 2 | 1 << 5 | 1 << 6 | 1 << 7;
	memcpy(h + 32, &state, 4);
	CHECK(python_unicode__head(11, h, 48, &s) == -EINVAL, "ASCII of kind 2");
	state = 1 << 2 | 1 << 5 | 1 << 7;
	memcpy(h + 32, &state, 4);
	len = -1;
	memcpy(h + 16, &len, 8);
	CHECK(python_unicode__head(11, h, 48, &s) == -EINVAL, "a negative length");
}

static void test_utf8(void)
{
	static const uint8_t latin1[] = {'a', 0xe9, 0xff};
	static const uint16_t ucs2[] = {0x20ac, 0xd800, 'z', 0xdfff};
	static const uint32_t ucs4[] = {0x10ffff, 0x110000, 0x1f40d, 0, 0x7f};
	char out[64];
	size_t n;

	n = python_unicode__to_utf8(latin1, 3, 1, false, out, sizeof(out));
	CHECK_STR(out, "a\xc3\xa9\xc3\xbf");
	CHECK_U64(n, 5);
	python_unicode__to_utf8(latin1, 3, 1, true, out, sizeof(out));
	CHECK_STR(out, "a" UTF8_REPLACEMENT UTF8_REPLACEMENT);
	python_unicode__to_utf8((const uint8_t *)ucs2, 4, 2, false, out, sizeof(out));
	CHECK_STR(out, "\xe2\x82\xac" UTF8_REPLACEMENT "z" UTF8_REPLACEMENT);
	python_unicode__to_utf8((const uint8_t *)ucs4, 5, 4, false, out, sizeof(out));
	CHECK_STR(out,
		  "\xf4\x8f\xbf\xbf" UTF8_REPLACEMENT "\xf0\x9f\x90\x8d" UTF8_REPLACEMENT "\x7f");
	/* Cut at a character: 4 + 3 bytes do not fit in 7 with the NUL. */
	n = python_unicode__to_utf8((const uint8_t *)ucs4, 5, 4, false, out, 8);
	CHECK_U64(n, 7);
	n = python_unicode__to_utf8((const uint8_t *)ucs4, 5, 4, false, out, 7);
	CHECK_U64(n, 4);
	CHECK(utf8__valid(out, n), "valid");
	n = python_unicode__to_utf8((const uint8_t *)ucs4, 5, 4, false, out, 1);
	CHECK(n == 0 && out[0] == '\0', "room for the NUL only");
	CHECK_U64(python_unicode__to_utf8(latin1, 3, 3, false, out, sizeof(out)), 0);
	CHECK_U64(python_unicode__to_utf8(latin1, 3, 1, false, out, 0), 0);
}

int main(void)
{
	test_head();
	test_utf8();
	return check_summary("test_python_unicode");
}

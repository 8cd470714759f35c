/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPython's str objects as another process holds them (Include/cpython/unicodeobject.h of each
 * release): pure decoders, no I/O. A str starts with a PyASCIIObject (object header, length in
 * code points, hash, a 32-bit state of bitfields); a compact str keeps its characters right after
 * it: after the PyASCIIObject when every one is ASCII, else after the PyCompactUnicodeObject
 * (which adds the cached UTF-8's length and pointer), 1, 2 or 4 bytes each ("kind"). A legacy
 * str (not compact) points at its characters instead. 3.10 and 3.11 add a wchar_t pointer (and
 * its length) to both structures, which 3.12 removed; the state's bits are the same in all:
 * interned (2), kind (3), compact, ascii, then ready (3.10, 3.11) or statically_allocated (3.12+).
 *
 * The bytes come from a process that may lie: every size is checked, and what comes out is valid
 * UTF-8 of a bounded length, whatever went in.
 */
#ifndef HOSTPROF_PYTHON_UNICODE_H
#define HOSTPROF_PYTHON_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes of UTF-8 kept of a name or a path, with its NUL; longer ones are cut at a character. */
#define PYTHON_STR_MAX 1024
/* The code points read at most: none of them takes less than a byte of UTF-8. */
#define PYTHON_STR_MAX_CHARS (PYTHON_STR_MAX - 1)

/* What a str's header says. */
struct python_str_head {
	uint64_t length; /* code points */
	unsigned kind;	 /* bytes a code point: 1, 2 or 4 */
	bool ascii;	 /* every code point is below 128 (kind 1) */
	bool compact;	 /* the characters follow the header */
	/* From the object's start: compact, where the characters are; else where the pointer to
	 * them is. */
	uint32_t data_offset;
};

/* The bytes of a str's header to read (a PyASCIIObject) in CPython 3.minor; 0 when unknown. */
size_t python_unicode__head_size(int minor);

/*
 * Decode the header of a str of CPython 3.minor from the head_size bytes at head: 0, or -EINVAL
 * when the state is not one a str ready for use has (no kind of 1, 2 or 4; ASCII of another kind;
 * not ready in 3.10 and 3.11; a negative length) or the release is unknown.
 */
int python_unicode__head(int minor, const uint8_t *head, size_t len, struct python_str_head *out);

/*
 * The n code points at data (n * kind bytes) as UTF-8 in out[0..out_size), NUL-terminated (out_size
 * at least 1), cut at the last character that fits. What a str may hold but UTF-8 may not (lone
 * surrogates, as in a path decoded with surrogateescape), U+0000, bytes above 127 in a str said
 * to be ASCII and code points past U+10FFFF become U+FFFD. Returns the bytes written before the
 * NUL.
 */
size_t python_unicode__to_utf8(const uint8_t *data, size_t n, unsigned kind, bool ascii, char *out,
			       size_t out_size);

#endif /* HOSTPROF_PYTHON_UNICODE_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UTF-8 as RFC 3629 has it: what the exporters' receivers (protobuf string fields, Prometheus
 * text) insist on, and what process names, paths and environments are not bound to be.
 */
#ifndef HOSTPROF_UTF8_H
#define HOSTPROF_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* U+FFFD, the replacement character. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * The length (1 to 4) of the well-formed sequence at s, of which left bytes (at least 1) may be
 * read; 0 when there is none there: a stray continuation byte, a lead byte that no character
 * has (C0, C1, F5-FF), an overlong form, a UTF-16 surrogate, a code point past U+10FFFF, or a
 * sequence cut short by the end.
 */
size_t utf8__seq(const void *s, size_t left);

/* Whether all of s[0..len) is well-formed. */
bool utf8__valid(const void *s, size_t len);

/*
 * How many of the n bytes of s fit in a buffer of max bytes with a NUL after them, without
 * cutting a sequence: n when n < max, else max - 1 backed off to the start of a character.
 */
size_t utf8__fit(const char *s, size_t n, size_t max);

/*
 * Copy s[0..len) into dst, every byte that starts no well-formed sequence replaced by repl (a
 * string of 1 to 3 bytes: UTF8_REPLACEMENT, or "_" to keep the length), and a NUL. dst holds
 * len * strlen(repl) + 1 bytes. Returns the bytes written before the NUL.
 */
size_t utf8__replace_invalid(char *dst, const char *s, size_t len, const char *repl);

#endif /* HOSTPROF_UTF8_H */

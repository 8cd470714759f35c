/* SPDX-License-Identifier: BSD-2-Clause */
/* Hex digits: build-ids written as hex, and percent-encoded values (%XX) decoded. */
#ifndef HOSTPROF_HEX_H
#define HOSTPROF_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The value of the hex digit c (either case), or -1 when c is not one. */
int hex__digit(int c);

/*
 * The number written in hex digits (either case, no "0x") at s into *out: the first character
 * after them, or NULL when there is no digit or the value does not fit in 64 bits.
 */
const char *hex__parse_u64(const char *s, uint64_t *out);

/* The n bytes at in as 2n lowercase hex digits and a NUL into out (2n + 1 bytes). */
void hex__encode(char *out, const void *in, size_t n);

/*
 * Decode the %XX escapes of the NUL-terminated s in place; a '%' not followed by two hex digits
 * stays as it is (as RFC 3986 receivers and gRPC take it). Returns 0, or -EINVAL when an escape
 * would decode to a NUL ("%00"), which would cut the value short: s is then left as it was.
 */
int hex__percent_decode_in_place(char *s);

/*
 * Decode the n bytes at src (%XX escapes as above) into dst, cut to dstlen - 1 bytes and
 * NUL-terminated (when dstlen > 0). Returns the decoded length; "%00" decodes to a NUL byte like
 * any other, so a return above strlen(dst) says the value held one.
 */
size_t hex__percent_decode(char *dst, size_t dstlen, const char *src, size_t n);

#endif /* HOSTPROF_HEX_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inflating compressed input files (gzip or zlib framing), with a bound on the output, and
 * gzip-compressing request bodies.
 */
#ifndef HOSTPROF_GZIP_H
#define HOSTPROF_GZIP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Inflate len bytes of gzip or zlib data into *out (malloc'ed; the caller frees), refusing to
 * produce more than max_out bytes. Returns 0; -ENOMEM; or -EFBIG / -EINVAL with what is wrong
 * (too large, corrupt or truncated at which compressed byte) written into why.
 */
int gzip__inflate(const uint8_t *in, size_t len, size_t max_out, uint8_t **out, size_t *out_len,
		  char *why, size_t why_len);

/*
 * Compress len bytes at in into *out (malloc'ed; the caller frees) with gzip framing (RFC 1952),
 * as Content-Encoding: gzip, grpc-encoding: gzip and .pb.gz files want. *out is NULL and
 * *out_len 0 unless it succeeds. Returns 0, -ENOMEM, or -EIO when zlib fails or len is over
 * 2 GiB (one deflate() call must do it all; nothing hostprof compresses comes near).
 */
int gzip__deflate(const void *in, size_t len, uint8_t **out, size_t *out_len);

#endif /* HOSTPROF_GZIP_H */

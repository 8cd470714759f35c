/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the file encoders (formats/enc_*.c) share: packing a protobuf-c message, and writing what
 * they made to its file. Include it from those files only.
 */
#ifndef HOSTPROF_FORMATS_ENCODE_COMMON_H
#define HOSTPROF_FORMATS_ENCODE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* m packed into *out (malloc'ed, the caller frees) and its length in *len: 0, -ENOMEM or -EIO. */
int encode__pack(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/*
 * What an encoder made (its result err, and buf of len bytes) written to path in one go, unless
 * err says it failed; buf is freed either way. Returns err, or the write's own error.
 */
int encode__write_file(int err, void *buf, size_t len, const char *path);

#endif /* HOSTPROF_FORMATS_ENCODE_COMMON_H */

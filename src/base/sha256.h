/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SHA-256 (FIPS 180-4), for the OpenTelemetry file id. Our own rather than libcrypto's: the first
 * EVP digest makes OpenSSL 3 load its provider and algorithm tables, 2.2 MiB of resident memory
 * (2 MiB of it libcrypto's pages) for two 4 KiB reads per binary.
 */
#ifndef HOSTPROF_SHA256_H
#define HOSTPROF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_BYTES 32

struct sha256 {
	uint32_t h[8];
	uint64_t bytes; /* fed so far */
	uint8_t block[64];
	size_t used; /* bytes of block filled */
};

void sha256__init(struct sha256 *s);
void sha256__update(struct sha256 *s, const void *data, size_t len);
/* Writes the digest; s must be initialised again before another use. */
void sha256__final(struct sha256 *s, uint8_t out[SHA256_DIGEST_BYTES]);

#endif

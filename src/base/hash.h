/* SPDX-License-Identifier: BSD-2-Clause */
/* The hash functions of hostprof's in-memory tables (the profile model, the OTLP dictionary, the
 * builder's address cache): fast, not cryptographic. */
#ifndef HOSTPROF_HASH_H
#define HOSTPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The fmix64 finalizer of MurmurHash3: every input bit reaches every output bit. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Fold one more value into a running hash. */
static inline uint64_t hash_add(uint64_t h, uint64_t v)
{
	return hash_mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* FNV-1a, finalized with mix64 because FNV's low bits (the ones that pick a slot) are weak. */
static inline uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *b = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return hash_mix64(h ^ len);
}

static inline uint32_t hash_fold(uint64_t h)
{
	return (uint32_t)(h ^ (h >> 32));
}

#endif /* HOSTPROF_HASH_H */

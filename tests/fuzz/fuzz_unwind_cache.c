// SPDX-License-Identifier: BSD-2-Clause
/*
 * A file of the unwind-table disk cache: its rows steer the kernel's stack walker, and the
 * directory may be shared or left behind by another version, so the decoder trusts nothing in it.
 * The input is a whole file. When its first byte is odd the header is made consistent first
 * (magic, version, row size, row count from the size, build-id length, checksum), so that the
 * fuzzer reaches the rows instead of stopping at the checksum; the build-id and arch asked for are
 * the ones the header holds. A table decoded must hold exactly the file's rows, sorted by PC,
 * with rules the walker knows.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "hostprof_abi.h"
#include "unwind/unwind_cache.h"

/* The header as unwind_cache.h documents it, by byte offset. */
#define HDR_SIZE 104
#define OFF_VERSION 8
#define OFF_ARCH 12
#define OFF_ROW_SIZE 16
#define OFF_ID_LEN 20
#define OFF_NR_ROWS 24
#define OFF_ID 32
#define OFF_CRC 96
#define OFF_PAD 100

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put32(uint8_t *buf, size_t off, uint32_t v)
{
	memcpy(buf + off, &v, sizeof(v));
}

static uint32_t get32(const uint8_t *buf, size_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* What a writer of the right version would have put around these bytes. */
static void make_consistent(uint8_t *buf, size_t len, bool arm64)
{
	uint64_t nr = (len - HDR_SIZE) / sizeof(struct hp_unwind_row);
	uint32_t id_len = get32(buf, OFF_ID_LEN) % (UNWIND_CACHE_BUILD_ID_MAX + 1);
	uLong crc;

	memcpy(buf, "HPUNWTAB", 8);
	put32(buf, OFF_VERSION, HP_UNWIND_TABLE_VERSION);
	put32(buf, OFF_ARCH, arm64 ? UNWIND_ARCH_ARM64 : UNWIND_ARCH_X86_64);
	put32(buf, OFF_ROW_SIZE, sizeof(struct hp_unwind_row));
	put32(buf, OFF_ID_LEN, id_len);
	memcpy(buf + OFF_NR_ROWS, &nr, sizeof(nr));
	put32(buf, OFF_PAD, 0);
	put32(buf, OFF_CRC, 0);
	crc = crc32(crc32(0L, Z_NULL, 0), buf,
		    (uInt)(HDR_SIZE + nr * sizeof(struct hp_unwind_row)));
	put32(buf, OFF_CRC, (uint32_t)crc);
}

static void check_table(const struct unwind_table *t, const uint8_t *buf, size_t len,
			enum unwind_arch arch)
{
	const struct hp_unwind_row *rows;
	size_t nr = 0;

	rows = unwind_table__rows(t, &nr);
	FUZZ_ASSERT(unwind_table__arch(t) == arch);
	FUZZ_ASSERT(HDR_SIZE + nr * sizeof(*rows) == len);
	FUZZ_ASSERT(!nr || !memcmp(rows, buf + HDR_SIZE, nr * sizeof(*rows)));
	for (size_t i = 0; i < nr; i++) {
		FUZZ_ASSERT(rows[i].cfa_rule <= HP_CFA_UNSUPPORTED);
		FUZZ_ASSERT(rows[i].fp_rule <= HP_REG_UNDEFINED);
		FUZZ_ASSERT(rows[i].ra_rule <= HP_REG_UNDEFINED);
		FUZZ_ASSERT(!i || rows[i - 1].pc < rows[i].pc);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table *t = NULL;
	enum unwind_arch arch;
	uint32_t id_len;
	uint8_t *buf;
	int err;

	if (size < 1)
		return 0;
	/* An exact-size copy of the file, aligned as malloc() aligns: the decoder's contract. */
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	size--;
	if ((data[0] & 1) && size >= HDR_SIZE)
		make_consistent(buf, size, data[0] & 2);
	arch = size >= HDR_SIZE && get32(buf, OFF_ARCH) == UNWIND_ARCH_ARM64 ? UNWIND_ARCH_ARM64
									     : UNWIND_ARCH_X86_64;
	id_len = size >= HDR_SIZE ? get32(buf, OFF_ID_LEN) : 20;
	if (id_len > UNWIND_CACHE_BUILD_ID_MAX)
		id_len = UNWIND_CACHE_BUILD_ID_MAX;
	/* The key asked for: the header's own, so that only its contents can fail the decode. */
	err = unwind_cache__decode(buf, size, size >= HDR_SIZE ? buf + OFF_ID : (const uint8_t *)"",
				   size >= HDR_SIZE ? id_len : 0, arch, &t);
	FUZZ_ASSERT(err == 0 || err == -EBADMSG || err == -ENOMEM);
	FUZZ_ASSERT(!err == !!t);
	if (t) {
		check_table(t, buf, size, arch);
		unwind_table__delete(t);
	}
	free(buf);
	return 0;
}

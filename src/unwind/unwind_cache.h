/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A disk cache of compact unwind tables (unwind_table.h), keyed by GNU build-id, so that a binary's
 * .eh_frame is parsed once per host rather than once per agent start.
 *
 * One file per binary: <dir>/unwind/<first 2 hex digits>/<rest of the hex>.v<format>.<arch>, for
 * example unwind/3f/a1...9c.v1.x86_64. It holds a 104-byte header, then the rows exactly as the
 * BPF walker reads them (struct hp_unwind_row, 16 bytes each). Host byte order throughout: the
 * cache never leaves its host. The header, by byte offset:
 *     0  magic "HPUNWTAB"            24  row count (u64)
 *     8  HP_UNWIND_TABLE_VERSION     32  the build-id again (64 bytes, zero-padded)
 *    12  enum unwind_arch            96  CRC-32 (zlib) of the header with this field 0, then of
 *    16  row size (16)                   the rows
 *    20  build-id length            100  0
 * Files are replaced atomically, so a reader sees a whole old table or a whole new one.
 *
 * Tables read back steer the kernel walker, so the directories are created 0700 and a file is
 * only used when it is a regular file owned by this user and writable by no one else. Everything
 * a load cannot vouch for (wrong magic, version, arch or build-id, a size that disagrees with the
 * row count, a bad checksum, unsorted rows, unknown rules) is a miss: the caller builds the table
 * again and stores it over the bad file.
 *
 * The cache assumes what perf and debuginfod assume: one build-id, one binary. Build-ids shorter
 * than UNWIND_CACHE_BUILD_ID_MIN bytes are too weak for that and are not cached.
 */
#ifndef HOSTPROF_UNWIND_CACHE_H
#define HOSTPROF_UNWIND_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "unwind/unwind_table.h"

#define UNWIND_CACHE_BUILD_ID_MIN 8  /* --build-id=xxhash; md5 and uuid give 16, sha1 20 */
#define UNWIND_CACHE_BUILD_ID_MAX 64 /* 128 hex digits: the file name stays under NAME_MAX */

/*
 * The GNU build-id (NT_GNU_BUILD_ID) of an ELF file, from its PT_NOTE segments, else its SHT_NOTE
 * sections. Returns its length in bytes, 0 when the file has none or one longer than cap (a
 * truncated id would name another binary).
 */
size_t unwind_cache__build_id(Elf *elf, uint8_t *out, size_t cap);

/* What a table is cached under. */
struct unwind_cache_key {
	uint8_t build_id[UNWIND_CACHE_BUILD_ID_MAX];
	size_t build_id_len;
	enum unwind_arch arch; /* as unwind_table__build_elf() decides it: from e_machine */
};

/*
 * The key of an ELF file, 0 when it can be cached. -ENOENT when it cannot: no build-id (or one
 * shorter than UNWIND_CACHE_BUILD_ID_MIN or longer than UNWIND_CACHE_BUILD_ID_MAX), an
 * architecture the builder does not know, or a .debug_frame with contents. strip removes
 * .debug_frame but keeps the build-id, so a stripped copy and the original would share a key but
 * not a table; .eh_frame, which is loaded memory, no strip touches.
 */
int unwind_cache__key(Elf *elf, struct unwind_cache_key *key);

/*
 * The cached table of the binary with this build-id, for this architecture. On success *out is a
 * new table (the caller deletes it) and 0 is returned. Otherwise *out is NULL and the result is
 * -ENOENT (not cached), -EBADMSG (a file that is not a valid table for this key), -EPERM (a file
 * this user did not write alone), -EINVAL (a build-id that is not cached), or another -errno from
 * reading it. Every error is a miss.
 */
int unwind_cache__load(const char *dir, const uint8_t *build_id, size_t id_len,
		       enum unwind_arch arch, struct unwind_table **out);

/*
 * The decoder behind unwind_cache__load(): buf holds a whole cache file of len bytes, aligned as
 * malloc() aligns (its rows are read in place), checked against the build-id and arch it must be
 * for. 0 with *out a new table; else *out is NULL and the result -EBADMSG (not a valid table for
 * this key), -ENOMEM, or -EINVAL (a build-id longer than UNWIND_CACHE_BUILD_ID_MAX, an arch that
 * is never cached).
 */
int unwind_cache__decode(const void *buf, size_t len, const uint8_t *build_id, size_t id_len,
			 enum unwind_arch arch, struct unwind_table **out);

/*
 * Write table t (its rows and arch) as the cached table of this build-id, replacing any file there,
 * creating the directories below dir (and dir itself) with mode 0700. 0 or -errno.
 */
int unwind_cache__store(const char *dir, const uint8_t *build_id, size_t id_len,
			const struct unwind_table *t);

#endif /* HOSTPROF_UNWIND_CACHE_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A read-only set of strings kept small: sorted, each one stored as the length of the prefix it
 * shares with the one before and the rest (front coding), in blocks of STRPACK_BLOCK that start
 * with a whole string. Symbol names share long prefixes once sorted, so they take about half
 * their bytes; reading one back decodes at most a block.
 */
#ifndef HOSTPROF_STRPACK_H
#define HOSTPROF_STRPACK_H

#include <stddef.h>
#include <stdint.h>

#define STRPACK_BLOCK 16

struct strpack;

/*
 * Pack the n NUL-terminated strings of strs (any order, duplicates allowed); ids[i] gets the id
 * of strs[i], equal strings getting one id. The strings are copied. Returns NULL and sets errno
 * (ENOMEM, or E2BIG past 2^32 bytes or ids).
 */
struct strpack *strpack__new(const char *const *strs, size_t n, uint32_t *ids);
void strpack__delete(struct strpack *p);

/*
 * String id, written NUL-terminated into buf of len bytes: returns buf, or NULL when there is no
 * such id (EINVAL) or it is longer than len - 1 bytes (ERANGE).
 */
const char *strpack__get(const struct strpack *p, uint32_t id, char *buf, size_t len);

/* How many distinct strings, and the bytes the set holds. */
size_t strpack__count(const struct strpack *p);
size_t strpack__bytes(const struct strpack *p);

#endif /* HOSTPROF_STRPACK_H */

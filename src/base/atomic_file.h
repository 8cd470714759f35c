/* SPDX-License-Identifier: BSD-2-Clause */
/* Whole-file writes that never leave a partial file behind. */
#ifndef HOSTPROF_ATOMIC_FILE_H
#define HOSTPROF_ATOMIC_FILE_H

#include <stddef.h>

#define ATOMIC_FILE_MODE 0600

/*
 * Write buf to path through a temporary file in the same directory, fsync it, and rename it into
 * place, mode ATOMIC_FILE_MODE (0600: owner only). On error the temporary file is removed, any old
 * file at path is untouched, and -errno is returned.
 */
int atomic_file__write(const char *path, const void *buf, size_t len);

#endif /* HOSTPROF_ATOMIC_FILE_H */

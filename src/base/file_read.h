/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading all of what was asked from a file descriptor: read() and pread() may return less than
 * asked (a signal, a pipe, a /proc file served in pieces), so a single call is not enough.
 * EINTR is retried.
 */
#ifndef HOSTPROF_FILE_READ_H
#define HOSTPROF_FILE_READ_H

#include <stddef.h>
#include <sys/types.h>

/*
 * All len bytes at the file offset off into buf (the fd's own offset is left alone). Returns 0,
 * -errno, or -ENODATA when the file ends before them (it is shorter than it said).
 */
int file__pread_full(int fd, void *buf, size_t len, off_t off);

/* All len bytes from the fd's offset on into buf: 0, -errno, or -ENODATA as above. */
int file__read_full(int fd, void *buf, size_t len);

/*
 * Up to max bytes from the fd's offset on into buf, stopping early only at the end of the file.
 * Returns how many were read (max when there may be more), or -errno.
 */
ssize_t file__read_upto(int fd, void *buf, size_t max);

#endif /* HOSTPROF_FILE_READ_H */

// SPDX-License-Identifier: BSD-2-Clause
#include "base/file_read.h"

#include <errno.h>
#include <unistd.h>

/* Up to max bytes into buf, from off on, or from the fd's offset when off is negative. */
static ssize_t read_loop(int fd, void *buf, size_t max, off_t off)
{
	size_t done = 0;

	while (done < max) {
		char *p = (char *)buf + done;
		ssize_t n = off < 0 ? read(fd, p, max - done)
				    : pread(fd, p, max - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int full_or_fail(ssize_t n, size_t len)
{
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -ENODATA;
}

int file__pread_full(int fd, void *buf, size_t len, off_t off)
{
	if (off < 0)
		return -EINVAL;
	return full_or_fail(read_loop(fd, buf, len, off), len);
}

int file__read_full(int fd, void *buf, size_t len)
{
	return full_or_fail(read_loop(fd, buf, len, -1), len);
}

ssize_t file__read_upto(int fd, void *buf, size_t max)
{
	return read_loop(fd, buf, max, -1);
}

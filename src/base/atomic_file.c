// SPDX-License-Identifier: BSD-2-Clause
#include "base/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int atomic_file__write(const char *path, const void *buf, size_t len)
{
	const char *p = buf;
	char *tmp = NULL;
	int fd = -1, err = 0;

	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	/*
	 * 0600 whatever the umask: a profile names every process of the host, its functions and
	 * (when asked for) its command line, and an unwind table is trusted on read. Who should
	 * read it gets it from its owner (`hostprof profile` under sudo hands its outputs to the
	 * invoking user).
	 */
	if (fchmod(fd, ATOMIC_FILE_MODE) < 0) {
		err = -errno;
		goto err_out;
	}
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto err_out;
		}
		p += n;
		len -= n;
	}
	/* The rename must not become visible before the data: a crash would leave an empty file. */
	if (fsync(fd) < 0) {
		err = -errno;
		goto err_out;
	}
	if (close(fd) < 0) {
		fd = -1;
		err = -errno;
		goto err_out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		err = -errno;
		goto err_out;
	}
	free(tmp);
	return 0;

err_out:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return err;
}

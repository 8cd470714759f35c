// SPDX-License-Identifier: BSD-2-Clause
#include "process/proc_mem.h"

#include <errno.h>
#include <sys/uio.h>

int proc_mem__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n;

	if (!len || len > PROC_MEM_MAX_READ || pid <= 0)
		return -EINVAL;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	/* A partial read stopped at an unmapped page: the rest does not exist. */
	return (size_t)n == len ? 0 : -EFAULT;
}

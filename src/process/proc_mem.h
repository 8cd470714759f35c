/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a few bytes of another process's memory, for the readers that need what a process keeps
 * only in memory: the code a JIT copied at run time (unwind/code_template.h).
 *
 * Every process is hostile: a read is of a bounded size the caller chooses, never follows a
 * pointer on its own, and cannot block (process_vm_readv(2) fails on an unmapped page instead of
 * waiting for it). It needs the right to ptrace the process (CAP_SYS_PTRACE, or the same user),
 * as /proc/PID/mem would.
 */
#ifndef HOSTPROF_PROC_MEM_H
#define HOSTPROF_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The largest read proc_mem__read() takes: headers and small payloads, never a whole mapping. */
#define PROC_MEM_MAX_READ 65536

/*
 * Read exactly len bytes (at most PROC_MEM_MAX_READ) at addr in process pid into buf. 0, or
 * -errno: -ESRCH (gone), -EPERM (not allowed), -EFAULT (not all of it is mapped and readable),
 * -EINVAL (len out of bounds).
 */
int proc_mem__read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* HOSTPROF_PROC_MEM_H */

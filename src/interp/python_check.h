/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A layout of CPython's structures (interp/python_layout.h) checked against a running interpreter,
 * where its own memory allows: the type objects describe their instances (PyCode_Type's
 * tp_basicsize and tp_members give the size of a code object and where its names and line number
 * are; 3.10's PyFrame_Type where a frame's f_back and f_code are), 3.13 publishes its offsets at
 * the start of _PyRuntime (_Py_DebugOffsets), and the runtime's list of interpreters and thread
 * states must lead from one to the other and back. A layout that passes is what BPF walks.
 *
 * The memory is the process's: every read is bounded, every pointer in it is checked by where
 * it leads before it is followed.
 */
#ifndef HOSTPROF_PYTHON_CHECK_H
#define HOSTPROF_PYTHON_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "interp/python_layout.h"

/* How the checks read memory: exactly len bytes at addr (at most PROC_MEM_MAX_READ), 0 or -errno
 * as proc_mem__read() says (-ESRCH, -EPERM, -EFAULT). Injectable for tests and fuzzing. */
struct python_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* Where the checks look: runtime addresses, 0 when unknown. */
struct python_addrs {
	uint64_t runtime;    /* _PyRuntime */
	uint64_t code_type;  /* PyCode_Type */
	uint64_t frame_type; /* PyFrame_Type: its members are read for 3.10 */
	uint32_t hexversion; /* Py_Version (3.11 on): 3.13's debug offsets must say the same */
};

/*
 * Check layout l against the interpreter whose memory mem reads. 0, or -EINVAL (a check failed),
 * -EAGAIN (the runtime has no interpreter or thread state yet: too early in its start),
 * -ENOTSUP (a free-threaded build), or a read's -ESRCH or -EPERM; why says what was checked or
 * which check failed.
 */
int python_check__layout(const struct python_mem *mem, const struct python_layout *l,
			 const struct python_addrs *a, char *why, size_t len);

#endif /* HOSTPROF_PYTHON_CHECK_H */

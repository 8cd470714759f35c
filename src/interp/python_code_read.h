/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One CPython code object read from a process's memory: its header (PyCodeObject, as the layout
 * of its release places the fields), then what the header points at: the qualified name (co_name
 * in 3.10, which has no co_qualname), the file name and the line table. python_code.h caches what
 * comes out; this file only reads.
 *
 * Every pointer is the process's word: reads are bounded (strings to PYTHON_STR_MAX_CHARS code
 * points, line tables to PYTHON_CODE_MAX_TABLE bytes, in reads of at most PROC_MEM_MAX_READ), and
 * a field out of bounds makes the object not a code object rather than a guess.
 */
#ifndef HOSTPROF_PYTHON_CODE_READ_H
#define HOSTPROF_PYTHON_CODE_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "interp/python_layout.h"
#include "interp/python_unicode.h"

/* The largest line table read: a function of ~300,000 lines. */
#define PYTHON_CODE_MAX_TABLE (1U << 20)

/* Returned when ob_type is not the code type the caller gave: a distinct -errno, so that callers
 * can count it apart from other insane objects (both are -EINVAL to theirs). */
#define PYTHON_CODE_NOT_CODE (-EMEDIUMTYPE)

/* How memory is read: 0 or -errno as proc_mem__read() (process/proc_mem.h), which is the default;
 * tests give a fake. */
typedef int (*python_mem_read_fn)(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len);

struct python_mem {
	python_mem_read_fn read;
	void *ctx;
};

/* What a code object's header says, and a checksum of exactly those fields: an object read again
 * with the same checksum names the same function, file and lines. */
struct python_code_head {
	uint64_t checksum;
	uint64_t name;	   /* co_qualname, or co_name in 3.10 */
	uint64_t filename; /* co_filename */
	uint64_t table;	   /* co_linetable, a bytes object */
	int32_t first_line;
};

/*
 * Read the header of the code object at addr in pid: 0, PYTHON_CODE_NOT_CODE (its ob_type is not
 * code_type), -EINVAL (a field out of bounds: a null or misaligned pointer, a negative first line,
 * or a layout that does not hold the fields), or the reader's -errno (-ESRCH, -EFAULT, -EPERM).
 */
int python_code__read_head(const struct python_mem *m, pid_t pid, const struct python_layout *l,
			   uint64_t code_type, uint64_t addr, struct python_code_head *out);

/*
 * The str at addr as UTF-8 into out[PYTHON_STR_MAX]: 0, -EINVAL (not a str ready for use), or the
 * reader's -errno.
 */
int python_code__read_str(const struct python_mem *m, pid_t pid, int minor, uint64_t addr,
			  char out[PYTHON_STR_MAX]);

/*
 * The bytes of the bytes object at addr: 0 and *data (malloc'd, the caller frees it; NULL when
 * empty) and *len, -E2BIG (over PYTHON_CODE_MAX_TABLE), -EINVAL (a negative size), -ENOMEM, or
 * the reader's -errno.
 */
int python_code__read_bytes(const struct python_mem *m, pid_t pid, uint64_t addr, uint8_t **data,
			    size_t *len);

#endif /* HOSTPROF_PYTHON_CODE_READ_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The name of a Python frame: BPF gives a code object's address and the index of the code unit
 * the frame ran (HP_PY_CODE(), HP_PY_INDEX() in hostprof_abi.h); this reads the code object from
 * the process (interp/python_code_read.h) and answers its qualified name, file, first line and
 * the line at that index (interp/python_lines.h).
 *
 * A cache, keyed by (pid, code address), keeps each code object's names, first line and line
 * table, so that a new index of a known code object costs one read of its header (~150 bytes),
 * and the last lines asked of it (16 per object, direct-mapped by index) cost none. The header is
 * read again whenever a lookup is not answered from those lines, and its checksum (the type, the
 * pointers to the names and table, the first line) compared: a code object freed and another put
 * at the same address is read whole again. An answered line is trusted without a read until
 * python_code_cache__expire(), after which each object's header is checked once more before its
 * lines are (call it once per profile window so that a replaced object is never named for longer).
 *
 * Bounded in bytes (entries with their strings and tables, and the index of them): the least
 * recently used code objects go first; the newest stays even alone over the bound. One thread.
 */
#ifndef HOSTPROF_PYTHON_CODE_H
#define HOSTPROF_PYTHON_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "interp/python_code_read.h"
#include "interp/python_layout.h"

#define PYTHON_CODE_CACHE_DEFAULT_BYTES (4U << 20)

struct python_code_cache;

/* max_bytes 0: PYTHON_CODE_CACHE_DEFAULT_BYTES. NULL + errno. */
struct python_code_cache *python_code_cache__new(size_t max_bytes);
void python_code_cache__delete(struct python_code_cache *c);

/* Read memory through m instead of proc_mem__read() (tests). */
void python_code_cache__set_reader(struct python_code_cache *c, const struct python_mem *m);

struct python_frame_info {
	const char *qualname; /* co_qualname (3.11 on), co_name (3.10): "Class.method" */
	const char *filename; /* co_filename */
	int64_t line;	      /* at the index; 0 when the line table gives none there */
	int64_t first_line;   /* co_firstlineno */
};

/*
 * Name the frame of code object code_addr at code unit index in process pid, whose CPython has
 * layout l and whose PyCode_Type is at code_type. 0 and *out, whose strings stay valid until the
 * next call on c; or -ESRCH (the process is gone; its entries are forgotten), -EFAULT (the object
 * or what it points at is not mapped), -EPERM (not allowed to read the process), -EINVAL (not a
 * code object: another type, or a field, string or table out of bounds), -ENOMEM.
 */
int python_code__lookup(struct python_code_cache *c, pid_t pid, const struct python_layout *l,
			uint64_t code_type, uint64_t code_addr, uint32_t index,
			struct python_frame_info *out);

/* The process exited (or exec'd): forget its code objects. */
void python_code_cache__forget_pid(struct python_code_cache *c, pid_t pid);

/* From now on, check each code object's header once more before trusting the lines it answered. */
void python_code_cache__expire(struct python_code_cache *c);

struct python_code_stats {
	uint64_t hits;		/* answered from a line kept for (pid, code, index): nothing read */
	uint64_t checks;	/* the header read again and unchanged: names and table reused */
	uint64_t misses;	/* the code object read whole: new, evicted before, or changed */
	uint64_t replaced;	/* of the misses: a changed checksum at a known address */
	uint64_t read_failures; /* reads refused: process gone, memory unmapped, not allowed */
	uint64_t type_mismatches; /* ob_type was not PyCode_Type */
	uint64_t invalid;	  /* a field, string or table out of bounds */
	uint64_t evictions;	  /* code objects dropped for the byte bound */
	size_t entries, bytes, max_bytes;
};
void python_code_cache__stats(const struct python_code_cache *c, struct python_code_stats *out);

#endif /* HOSTPROF_PYTHON_CODE_H */

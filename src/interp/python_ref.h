/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where CPython lives in a process: which of its binaries holds the interpreter (the executable,
 * or libpython3.X.so for a shared build), its version, and the runtime addresses BPF and the
 * symbolizer need (_PyRuntime, _PyEval_EvalFrameDefault, PyCode_Type), with the structure layout
 * of its release (interp/python_layout.h) checked against the running interpreter itself.
 *
 * Found by name in the binary's .dynsym (Debian's python3.11 keeps only that) or .symtab, through
 * the symbolizer (symbolizer__find_exports()), which opens it through the process (its root in a
 * container). Only the executable and libraries named libpython* are looked at, so that a process
 * without Python costs one look at its executable; what a binary holds is remembered by identity,
 * so that a hundred Python processes open the interpreter's ELF once.
 *
 * Every process is hostile: what is read of its memory is read with proc_mem__read(), bounded,
 * and every pointer it holds is checked by where it leads before it is believed.
 */
#ifndef HOSTPROF_PYTHON_REF_H
#define HOSTPROF_PYTHON_REF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "interp/python_layout.h"

struct symbolizer;

struct python_proc {
	const struct python_layout *layout; /* NULL unless python_ref__resolve() returned 0 */
	int minor, micro; /* from Py_Version (3.11 on), else the file name (micro -1: unknown) */
	char version[16]; /* "3.11.2", "3.13.0rc1"; "3.10" when the micro release is unknown */
	uint64_t runtime; /* runtime address of _PyRuntime */
	uint64_t eval_start, eval_end; /* runtime [start, end) of _PyEval_EvalFrameDefault */
	uint64_t code_type;	       /* runtime address of PyCode_Type: a code object's ob_type */
	char binary[256]; /* the path, as the process sees it, of the binary holding them */
};

struct python_ref_cache;

/* NULL with errno set. */
struct python_ref_cache *python_ref_cache__new(void);
void python_ref_cache__delete(struct python_ref_cache *c);

/*
 * Where CPython is in process pid, into *out; why says what was found, or what failed, in words.
 * 0, or -ENOENT (no CPython in it), -ENOTSUP (a release whose layout is not known, or a
 * free-threaded build: minor, micro, version and binary are filled), -EAGAIN (the interpreter
 * has no thread yet: try again later), -ESRCH (gone), -EPERM (its memory may not be read), or
 * -EINVAL (the layout disagrees with the running interpreter, or what it holds makes no sense).
 */
int python_ref__resolve(struct python_ref_cache *c, struct symbolizer *sym, pid_t pid,
			struct python_proc *out, char *why, size_t len);

#endif /* HOSTPROF_PYTHON_REF_H */

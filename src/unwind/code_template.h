/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unwind rows for machine code that a program copies at run time from a template of its own, and
 * that no .eh_frame describes.
 *
 * The one known today is CPython's perf trampoline (3.12+, `python -X perf` or
 * PYTHONPERFSUPPORT=1): every Python function call runs through its own copy of a tiny assembly
 * stub (Python/asm_trampoline.S, _Py_trampoline_func_start to _end), so that perf maps can name
 * each copy after the Python function. The copies sit back to back in anonymous executable
 * arenas of 16 pages (Python/perf_trampoline.c: 3.12 packs them every 11 bytes on x86_64, 3.13
 * every 16), and an interpreter built without frame pointers (pyenv's, most distributions')
 * leaves the walker nothing to step through them with: its walks ended at the innermost Python
 * function. The stub carries no CFI, so the rows here are written from its instructions, and an
 * arena is recognised by its bytes: the template itself at the arena's start, and again one
 * stride later.
 *
 * A recognised mapping is loaded as code repeated every `stride` bytes, restarting every `period`
 * bytes (arenas that the kernel merged into one mapping): the walker looks up
 * ((pc - start) % period) % stride in the template's rows (bpf/unwind.bpf.h).
 */
#ifndef HOSTPROF_CODE_TEMPLATE_H
#define HOSTPROF_CODE_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostprof_abi.h"
#include "unwind/unwind_table.h"

/* Bytes to read at the start of an executable anonymous mapping to recognise a template. */
#define CODE_TEMPLATE_PROBE 96
#define CODE_TEMPLATE_MAX_ROWS 8

struct code_template {
	const char *name; /* "cpython perf trampoline" */
	enum unwind_arch arch;
	const uint8_t *code; /* the template's bytes */
	uint32_t len;
	uint32_t period; /* the copies restart at every multiple of this from the mapping's start */
	/* Rows at template offsets, sorted, the last one HP_CFA_NONE at len (padding between
	 * copies has no code) */
	const struct hp_unwind_row *rows;
	uint32_t nr_rows;
};

/* What a probe of a mapping found: the template and how far apart its copies are. */
struct code_template_match {
	const struct code_template *tmpl;
	uint32_t stride;
};

/*
 * Does code (the first len bytes of an executable anonymous mapping of size map_size) hold copies
 * of a known template of arch? Then *out says which and their stride, and true is returned.
 */
bool code_template__match(enum unwind_arch arch, const uint8_t *code, size_t len, uint64_t map_size,
			  struct code_template_match *out);

/* The templates known, and their number (for the loader's pinned rows and the tests). */
const struct code_template *code_template__all(size_t *nr);

#endif /* HOSTPROF_CODE_TEMPLATE_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The structures of CPython that hostprof reads, per minor release: where the interpreter keeps
 * its threads and their frame chains (what BPF walks, struct hp_py_proc) and where a code object
 * keeps its names and line table (what the host reads to name a frame).
 *
 * The offsets come from CPython's headers (Include/cpython/pystate.h, code.h, frameobject.h and
 * the internal pycore_runtime.h, pycore_interp.h, pycore_frame.h), compiled with offsetof() for a
 * release build on an LP64 target (x86_64 and arm64 agree): scripts/python_offsets.sh prints them
 * again from an installed interpreter's headers. Within a minor release they do not change in
 * the fields read here. Each running interpreter is also checked against them
 * (interp/python_ref.h).
 */
#ifndef HOSTPROF_PYTHON_LAYOUT_H
#define HOSTPROF_PYTHON_LAYOUT_H

#include <stdint.h>

#include "hostprof_abi.h"

/* CPython releases whose layout is known: 3.10 to 3.13. */
#define PYTHON_LAYOUT_MIN_MINOR 10
#define PYTHON_LAYOUT_MAX_MINOR 13

/* How a code object's line table is encoded (Objects/lnotab_notes.txt of each release). */
enum python_line_format {
	PYTHON_LINES_310 = 0, /* co_linetable: (byte delta, line delta) pairs, 3.10 */
	PYTHON_LINES_311,     /* co_linetable: the location table of 3.11 on */
};

struct python_layout {
	int minor; /* 3.minor */
	/* What BPF walks: thread states and frames (see struct hp_py_proc) */
	enum hp_py_thread_match thread_match;
	enum hp_py_frames frames;
	uint8_t owner_cstack;
	uint16_t runtime_interp_head, interp_tstate_head, tstate_next, tstate_interp, tstate_thread;
	uint16_t tstate_frame, cframe_frame, frame_previous, frame_code, frame_instr, frame_entry;
	/* What the host reads of a code object */
	uint16_t code_size;  /* sizeof(PyCodeObject); tp_basicsize in 3.10, code_units after */
	uint16_t code_units; /* co_code_adaptive (3.11 on); HP_PY_NO_OFFSET for 3.10 */
	uint16_t code_bytes; /* co_code, a bytes object (3.10); HP_PY_NO_OFFSET after */
	uint16_t code_filename, code_name, code_qualname /* HP_PY_NO_OFFSET for 3.10 */;
	uint16_t code_firstlineno, code_linetable;
	enum python_line_format lines;
};

/* The layout of CPython 3.minor, or NULL when it is not known. */
const struct python_layout *python_layout__get(int minor);

/* What BPF needs of a layout for one process, given where its runtime and eval loop are. */
void python_layout__to_bpf(const struct python_layout *l, uint64_t runtime, uint64_t eval_start,
			   uint64_t eval_end, struct hp_py_proc *out);

#endif /* HOSTPROF_PYTHON_LAYOUT_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The interpreters whose frames the BPF walker reads from their own frame chains (CPython today),
 * as one module for the layers above: which processes run one, what BPF needs to walk them, and
 * how a frame BPF put in a stack is named.
 *
 * An interpreter plugs in with three parts (docs/ARCHITECTURE.md, "Interpreters"):
 * - detection: from the process's binaries and memory (interp/python_ref.h), the record BPF
 *   keeps per process (struct hp_py_proc, bpf/python.bpf.h);
 * - the walk, in BPF: its frames ride in the walked stack with a tag bit (HP_PY_FRAME);
 * - naming: a tagged frame's object read from the process's memory, cached, bounded
 *   (interp/python_code.h).
 */
#ifndef HOSTPROF_INTERP_H
#define HOSTPROF_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostprof_abi.h"
#include "interp/python_code.h"
#include "symbols/symbolize.h"

struct interp;

/* code_cache_bytes 0: the default. NULL with errno set. sym is borrowed. */
struct interp *interp__new(struct symbolizer *sym, size_t code_cache_bytes);
void interp__delete(struct interp *ip);

/*
 * Look at process pid. 0: it runs a CPython whose frames BPF can walk, *out is what BPF needs
 * and the process is remembered for naming its frames. Else -ENOENT (no interpreter: most
 * processes), -ENOTSUP (a release whose layout is not known), -EAGAIN (not initialised yet: try
 * later), -ESRCH, -EPERM, -EINVAL (its memory disagrees with the layout); why says it in words,
 * naming the process and the release ("Python 3.9 in PID 1234: frames not walked ...").
 */
int interp__detect(struct interp *ip, pid_t pid, struct hp_py_proc *out, char *why, size_t len);

/* The release interp__detect() found last for pid ("3.11.2"), or NULL. */
const char *interp__version(const struct interp *ip, pid_t pid);

/* Is this walked "PC" an interpreter's frame rather than a native address? */
static inline bool interp__is_frame(uint64_t pc)
{
	return (pc & HP_PY_FRAME) != 0;
}

/*
 * Name an interpreter frame of process pid (interp__is_frame(pc)): kind FRAME_CPYTHON, the
 * qualified name, file and line, no mapping. Never fails: what cannot be read becomes an
 * "[unknown]" frame that says why. Strings in *out are valid until the next call.
 */
void interp__symbolize(struct interp *ip, pid_t pid, uint64_t pc, struct frame *out);

/* A new window: every cached code object's header is checked once more before its lines are
 * trusted again (another object may have taken a freed one's address). */
void interp__expire(struct interp *ip);

/* pid exited or exec'd: forget what was known of it. */
void interp__forget(struct interp *ip, pid_t pid);

struct interp_stats {
	uint64_t processes; /* remembered now */
	uint64_t frames, frames_unresolved;
	struct python_code_stats code;
};
void interp__stats(const struct interp *ip, struct interp_stats *out);

#endif /* HOSTPROF_INTERP_H */

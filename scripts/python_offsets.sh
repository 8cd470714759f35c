#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Print the structure offsets of src/interp/python_layout.c again, from an installed CPython's own
# headers: a small program that prints offsetof() of every field hostprof reads is compiled
# against PREFIX/include/python3.X (with the internal headers, as CPython's core is built) and
# run. From 3.13 it also prints where each offset hostprof compares sits in _Py_DebugOffsets
# (src/interp/python_check.c). Run it when a CPython release comes out, and compare (make unit
# does, tests/interp/test_python_layout.sh, for each pyenv release present).
#
# Usage: scripts/python_offsets.sh PREFIX   (e.g. ~/.pyenv/versions/3.11.7, or /usr)
# Prints "name value" lines, the first "version 3.X". Needs gcc and the release's headers.
set -euo pipefail

prefix=${1:?usage: $0 PREFIX (an install prefix, e.g. ~/.pyenv/versions/3.11.7)}
inc=$(ls -d "$prefix"/include/python3.[0-9]* 2>/dev/null | grep -E '/python3\.[0-9]+$' | head -n 1 || true)
if [ -z "$inc" ] || [ ! -f "$inc/Python.h" ] || [ ! -d "$inc/internal" ]; then
	echo "$0: no CPython headers (include/python3.X/Python.h and internal/) under $prefix" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/off.c" <<'C'
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_MINOR_VERSION == 10
#include <frameobject.h>
#endif
#include <stddef.h>
#include <stdio.h>
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#endif
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#define P(name, expr) printf("%-28s %zu\n", name, (size_t)(expr))
#define D(group, field) P("debug." #group "." #field, offsetof(_Py_DebugOffsets, group.field))
int main(void)
{
	printf("version %d.%d\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	P("runtime.interpreters.head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_MINOR_VERSION >= 11
	P("interp.threads.head", offsetof(PyInterpreterState, threads.head));
#else
	P("interp.threads.head", offsetof(PyInterpreterState, tstate_head));
#endif
	P("tstate.next", offsetof(PyThreadState, next));
	P("tstate.interp", offsetof(PyThreadState, interp));
	P("tstate.thread_id", offsetof(PyThreadState, thread_id));
#if PY_MINOR_VERSION >= 11
	P("tstate.native_thread_id", offsetof(PyThreadState, native_thread_id));
#endif
#if PY_MINOR_VERSION == 10
	P("tstate.frame", offsetof(PyThreadState, frame));
	P("frame.f_back", offsetof(PyFrameObject, f_back));
	P("frame.f_code", offsetof(PyFrameObject, f_code));
	P("frame.f_lasti", offsetof(PyFrameObject, f_lasti));
#elif PY_MINOR_VERSION <= 12
	P("tstate.cframe", offsetof(PyThreadState, cframe));
	P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
	P("iframe.f_code", offsetof(_PyInterpreterFrame, f_code));
	P("iframe.previous", offsetof(_PyInterpreterFrame, previous));
	P("iframe.prev_instr", offsetof(_PyInterpreterFrame, prev_instr));
	P("iframe.owner", offsetof(_PyInterpreterFrame, owner));
#if PY_MINOR_VERSION == 11
	P("iframe.is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
#else
	P("tstate.current_frame", offsetof(PyThreadState, current_frame));
	P("iframe.f_executable", offsetof(_PyInterpreterFrame, f_executable));
	P("iframe.previous", offsetof(_PyInterpreterFrame, previous));
	P("iframe.instr_ptr", offsetof(_PyInterpreterFrame, instr_ptr));
	P("iframe.owner", offsetof(_PyInterpreterFrame, owner));
#endif
#if PY_MINOR_VERSION >= 11
	P("code.co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("code.co_qualname", offsetof(PyCodeObject, co_qualname));
#else
	P("code.co_code", offsetof(PyCodeObject, co_code));
#endif
	P("code.co_linetable", offsetof(PyCodeObject, co_linetable));
	P("code.co_name", offsetof(PyCodeObject, co_name));
	P("code.co_filename", offsetof(PyCodeObject, co_filename));
	P("code.co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("sizeof.code", sizeof(PyCodeObject));
#if PY_MINOR_VERSION >= 13
	D(runtime_state, interpreters_head);
	D(interpreter_state, threads_head);
	D(thread_state, next);
	D(thread_state, interp);
	D(thread_state, current_frame);
	D(thread_state, native_thread_id);
	D(interpreter_frame, previous);
	D(interpreter_frame, executable);
	D(interpreter_frame, instr_ptr);
	D(interpreter_frame, owner);
	D(code_object, size);
	D(code_object, filename);
	D(code_object, name);
	D(code_object, qualname);
	D(code_object, linetable);
	D(code_object, firstlineno);
	D(code_object, co_code_adaptive);
	P("debug.sizeof", sizeof(_Py_DebugOffsets));
#endif
	return 0;
}
C
${CC:-gcc} -w -I"$inc" -I"$inc/internal" "$work/off.c" -o "$work/off"
"$work/off"

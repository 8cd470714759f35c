#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Compare the layout of one CPython minor release in src/interp/python_layout.c (and, from 3.13,
the positions in _Py_DebugOffsets that src/interp/python_check.c reads) with what
scripts/python_offsets.sh printed from that release's headers (on stdin).

Usage: compare_layout.py PYTHON_LAYOUT_C PYTHON_CHECK_C < offsets
Prints one line per disagreement and exits 1 when there is any, 2 when the input is unusable."""
import re
import sys

NONE = 0xFFFF


def header_offsets(text):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = parts[1]
    return out


def layouts(src):
    """{minor: {field: value}} from the table of python_layout.c."""
    out = {}
    for block in re.findall(r"\{([^{}]*\.minor\s*=\s*\d+[^{}]*)\}", src):
        fields = {}
        for name, value in re.findall(r"\.(\w+)\s*=\s*(\w+)", block):
            if value == "NONE":
                fields[name] = NONE
            elif value.isdigit():
                fields[name] = int(value)
        out[fields["minor"]] = fields
    return out


def wanted(minor, h):
    """The header's value of each layout field, by the name python_offsets.sh prints it under."""
    def get(name):
        return int(h[name]) if name in h else None

    frame10 = minor == 10
    w = {
        "runtime_interp_head": get("runtime.interpreters.head"),
        "interp_tstate_head": get("interp.threads.head"),
        "tstate_next": get("tstate.next"),
        "tstate_interp": get("tstate.interp"),
        "tstate_thread": get("tstate.thread_id" if frame10 else "tstate.native_thread_id"),
        "tstate_frame": get("tstate.frame" if frame10 else
                            "tstate.cframe" if minor <= 12 else "tstate.current_frame"),
        "cframe_frame": get("cframe.current_frame") if minor in (11, 12) else NONE,
        "frame_previous": get("frame.f_back" if frame10 else "iframe.previous"),
        "frame_code": get("frame.f_code" if frame10 else
                          "iframe.f_code" if minor <= 12 else "iframe.f_executable"),
        "frame_instr": get("frame.f_lasti" if frame10 else
                           "iframe.prev_instr" if minor <= 12 else "iframe.instr_ptr"),
        "frame_entry": NONE if frame10 else get("iframe.is_entry" if minor == 11 else "iframe.owner"),
        "code_size": get("sizeof.code"),
        "code_units": NONE if frame10 else get("code.co_code_adaptive"),
        "code_bytes": get("code.co_code") if frame10 else NONE,
        "code_filename": get("code.co_filename"),
        "code_name": get("code.co_name"),
        "code_qualname": NONE if frame10 else get("code.co_qualname"),
        "code_firstlineno": get("code.co_firstlineno"),
        "code_linetable": get("code.co_linetable"),
    }
    return w


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    h = header_offsets(sys.stdin.read())
    m = re.match(r"3\.(\d+)$", h.get("version", ""))
    if not m:
        print("no 'version 3.X' line in the offsets", file=sys.stderr)
        return 2
    minor = int(m.group(1))
    table = layouts(open(sys.argv[1]).read())
    if minor not in table:
        print(f"3.{minor}: python_layout.c has no layout for it")
        return 1
    bad = 0
    for field, want in wanted(minor, h).items():
        got = table[minor].get(field)
        if want is None:
            print(f"3.{minor}: {field}: the headers' offsets lack it")
            bad += 1
        elif got != want:
            print(f"3.{minor}: {field} is {got} in python_layout.c, the headers say {want}")
            bad += 1
    if minor >= 13:
        check = open(sys.argv[2]).read()
        debug = re.findall(r'F\((\d+),\s*\w+,\s*"([\w.]+)"\)', check)
        if not debug:
            print("python_check.c: no debug offsets table")
            bad += 1
        for at, name in debug:
            want = h.get("debug." + name)
            if want is None or int(want) != int(at):
                print(f"3.{minor}: _Py_DebugOffsets.{name} read at {at}, the headers say {want}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

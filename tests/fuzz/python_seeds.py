#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Seed corpora of the CPython fuzz targets (tests/fuzz/python.mk), into OUT/<target>/:
    python_seeds.py OUT

python_lines: line tables of real code objects (this python3's, 3.11+ format) and hand-made 3.10
ones, behind the target's 9 bytes of header. python_code: a process image per release: a code
object at FUZZ_BASE + 64 whose fields (offsets from CPython's headers, as src/interp/
python_layout.c lists them) point at an ASCII name, a 2-byte file name and a line table.
"""
import os
import struct
import sys

BASE = 0x100000000000
CODE_TYPE = 0x55550000A000
# minor: (code_size, filename, name, qualname or None, firstlineno, linetable)
LAYOUTS = {
    10: (176, 104, 112, None, 40, 120),
    11: (192, 112, 120, 128, 72, 136),
    12: (200, 112, 120, 128, 68, 136),
    13: (208, 112, 120, 128, 68, 136),
}


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def str_object(minor, text):
    """A compact str (Include/cpython/unicodeobject.h): ASCII after PyASCIIObject, else after
    PyCompactUnicodeObject, 1, 2 or 4 bytes a character."""
    ascii_size, compact_size = (40, 56) if minor >= 12 else (48, 72)
    top = max((ord(c) for c in text), default=0)
    kind = 1 if top < 256 else 2 if top < 65536 else 4
    is_ascii = top < 128
    state = kind << 2 | 1 << 5 | (1 << 6 if is_ascii else 0) | (1 << 7 if minor < 12 else 0)
    head = bytearray(ascii_size if is_ascii else compact_size)
    struct.pack_into("<q", head, 16, len(text))
    struct.pack_into("<I", head, 32, state)
    enc = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind]
    return bytes(head) + text.encode(enc) + b"\0" * kind


def bytes_object(payload):
    head = bytearray(32)
    struct.pack_into("<q", head, 16, len(payload))
    return bytes(head) + payload + b"\0"


def image(minor, table):
    size, f_file, f_name, f_qual, f_first, f_table = LAYOUTS[minor]
    mem = bytearray(64 + size)
    mem[0] = minor - 10
    struct.pack_into("<I", mem, 1, 2)

    def place(obj):
        while len(mem) % 16:
            mem.append(0)
        at = len(mem)
        mem.extend(obj)
        return BASE + at

    name = place(str_object(minor, "Klass.method"))
    filename = place(str_object(minor, "/srv/\u6587\u4ef6.py"))
    lines = place(bytes_object(table))
    code = 64
    struct.pack_into("<Q", mem, code + 8, CODE_TYPE)
    struct.pack_into("<Q", mem, code + f_file, filename)
    struct.pack_into("<Q", mem, code + f_name, name)
    if f_qual is not None:
        struct.pack_into("<Q", mem, code + f_qual, name)
    struct.pack_into("<i", mem, code + f_first, 10)
    struct.pack_into("<Q", mem, code + f_table, lines)
    return bytes(mem)


def main(out):
    t310 = bytes([6, 1, 0, 127, 4, 0x80, 254, 2, 10, 0])

    def f(a):
        b = a + 1
        try:
            return b / a
        except ZeroDivisionError:
            return None

    t311 = f.__code__.co_linetable if sys.version_info >= (3, 11) else bytes([0x88, 0, 0xF8])
    hdr = struct.pack("<BIi", 0, 3, 10)
    write(out, "python_lines", "t310", hdr + t310)
    write(out, "python_lines", "t311", bytes([1]) + hdr[1:] + t311)
    write(out, "python_lines", "str-ucs2", bytes([3]) + hdr[1:] + "\u6587\u4ef6".encode("utf-16-le"))
    for minor in LAYOUTS:
        write(out, "python_code", "code-3.%d" % minor, image(minor, t310 if minor == 10 else t311))


main(sys.argv[1])

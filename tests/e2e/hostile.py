#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Helpers of the hostile-process suite (tests/e2e/hostile.sh): hostile files to plant, and the
agent's pprof windows read back.

Usage: hostile.py COMMAND ARGS
  giant-section ELF NAME BYTES  make section NAME of the ELF file claim BYTES, placed past the end
                                of the file, and extend the file (sparse) to cover it: libelf's
                                check against the file size passes, and only a cap stops a read
  build-id ELF HEX              replace the ELF file's build-id (every copy of its bytes) by HEX,
                                of the same length: a copy that is a binary of its own
  container ROOT EXE ARGS...    in a new mount namespace of its own (run it under
                                `unshare -m --propagation private`), make ROOT the root as
                                container runtimes do (a bind mount, pivot_root, the old root
                                detached), then exec EXE: /proc/PID/maps then shows the paths
                                inside ROOT, and /proc/PID/root is ROOT
  windows DIR PID FUNC          for each window (DIR/cpu-*.pb.gz, in name order): its name, its
                                samples, those of process PID, those of PID whose stack holds
                                FUNC, and its duration in seconds
  funcs FILE... --pid PID       function names in the samples of PID, over the files
  strings FILE...               every string of the files' string tables, repr()'d, one a line

The pprof files are read with the protobuf wire format alone (no generated code): the fields of
profile.proto that these checks need.
"""
import gzip
import struct
import sys


# ---- ELF -------------------------------------------------------------------------------------


def elf64_sections(data):
    """(e_shoff, e_shentsize, [(index, name, header offset, sh_offset, sh_size)])."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit("hostile.py: not a little-endian ELF64 file")
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def hdr(i):
        off = e_shoff + i * e_shentsize
        name, _typ, _flags, _addr, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", data, off)
        return off, name, sh_offset, sh_size

    _, _, str_off, str_size = hdr(e_shstrndx)
    names = data[str_off:str_off + str_size]
    out = []
    for i in range(e_shnum):
        off, name, sh_offset, sh_size = hdr(i)
        end = names.index(b"\0", name)
        out.append((i, names[name:end].decode(), off, sh_offset, sh_size))
    return out


def giant_section(path, name, size):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    for _i, n, off, _o, _s in elf64_sections(data):
        if n == name:
            # Page-aligned past the end: the bytes a reader would read are a hole of the file.
            start = (len(data) + 4095) & ~4095
            struct.pack_into("<QQ", data, off + 0x18, start, size)
            with open(path, "wb") as f:
                f.write(data)
                f.truncate(start + size)
            return
    raise SystemExit(f"hostile.py: {path} has no section {name}")


def build_id(path, new_hex):
    with open(path, "rb") as f:
        data = f.read()
    old = None
    for _i, n, _off, sh_offset, sh_size in elf64_sections(data):
        if n == ".note.gnu.build-id":
            namesz, descsz, _typ = struct.unpack_from("<III", data, sh_offset)
            desc = sh_offset + 12 + ((namesz + 3) & ~3)
            old = data[desc:desc + descsz]
    new = bytes.fromhex(new_hex)
    if not old or len(new) != len(old):
        raise SystemExit(f"hostile.py: {path}: no build-id of {len(new)} bytes")
    with open(path, "wb") as f:
        f.write(data.replace(old, new))


# ---- a container -----------------------------------------------------------------------------


def container(root, argv):
    import ctypes
    import os

    libc = ctypes.CDLL(None, use_errno=True)
    ms_bind, mnt_detach, sys_pivot_root = 0x1000, 2, 155  # x86_64

    def check(rc, what):
        if rc != 0:
            raise SystemExit(f"hostile.py container: {what}: {os.strerror(ctypes.get_errno())}")

    check(libc.mount(root.encode(), root.encode(), None, ms_bind, None), "bind mount")
    os.chdir(root)
    # pivot_root(".", "."): the old root is stacked on the new one, then detached from it.
    check(libc.syscall(sys_pivot_root, b".", b"."), "pivot_root")
    check(libc.umount2(b".", mnt_detach), "umount the old root")
    os.chdir("/")
    os.execv(argv[0], argv)


# ---- pprof (protobuf wire format) ----------------------------------------------------------


def varint(buf, i):
    shift = n = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, i
        shift += 7


def fields(buf):
    """(field number, wire type, value) of a message; value is an int or bytes."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, wt, v


def ints(wt, v):
    """A repeated integer field: packed (bytes) or one value."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        n, i = varint(v, i)
        out.append(n)
    return out


class Profile:
    def __init__(self, path):
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        self.strings, self.samples, locs, funcs = [], [], {}, {}
        self.duration_ns = 0
        for num, wt, v in fields(raw):
            if num == 10:
                self.duration_ns = v
            elif num == 6:
                self.strings.append(v)
            elif num == 2:
                s = {"locs": [], "values": [], "labels": []}
                for n2, w2, v2 in fields(v):
                    if n2 == 1:
                        s["locs"] += ints(w2, v2)
                    elif n2 == 2:
                        s["values"] += ints(w2, v2)
                    elif n2 == 3:
                        s["labels"].append({n3: v3 for n3, _w3, v3 in fields(v2)})
                self.samples.append(s)
            elif num == 4:
                lid, fids = 0, []
                for n2, _w2, v2 in fields(v):
                    if n2 == 1:
                        lid = v2
                    elif n2 == 4:
                        fids += [v3 for n3, _w3, v3 in fields(v2) if n3 == 1]
                locs[lid] = fids
            elif num == 5:
                d = {n2: v2 for n2, _w2, v2 in fields(v)}
                funcs[d.get(1, 0)] = d.get(2, 0)
        self.loc_funcs = {
            lid: [self.strings[funcs.get(f, 0)].decode(errors="replace") for f in fids]
            for lid, fids in locs.items()
        }

    def pid(self, s):
        for lab in s["labels"]:
            if self.strings[lab.get(1, 0)] == b"pid":
                return lab.get(3)
        return None

    def funcs(self, s):
        return [f for loc in s["locs"] for f in self.loc_funcs.get(loc, [])]


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "giant-section":
        giant_section(args[0], args[1], int(args[2]))
    elif cmd == "build-id":
        build_id(args[0], args[1])
    elif cmd == "container":
        container(args[0], args[1:])
    elif cmd == "windows":
        import glob

        d, pid, func = args[0], int(args[1]), args[2]
        for path in sorted(glob.glob(f"{d}/cpu-*.pb.gz")):
            p = Profile(path)
            mine = [s for s in p.samples if p.pid(s) == pid]
            hot = [s for s in mine if func in p.funcs(s)]
            print(path.rsplit("/", 1)[1], len(p.samples), len(mine), len(hot),
                  f"{p.duration_ns / 1e9:.3f}")
    elif cmd == "funcs":
        pid = int(args[args.index("--pid") + 1])
        names = set()
        for path in args[:args.index("--pid")]:
            p = Profile(path)
            for s in p.samples:
                if p.pid(s) == pid:
                    names.update(p.funcs(s))
        print("\n".join(sorted(names)))
    elif cmd == "strings":
        seen = set()
        for path in args:
            seen.update(Profile(path).strings)
        for s in sorted(seen):
            print(repr(s))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)

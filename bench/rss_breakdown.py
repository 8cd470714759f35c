#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Where a process's resident memory is, by category, from /proc/PID/smaps.

Usage: bench/rss_breakdown.py PID [--json]

Categories (resident KiB, and of it anonymous, file and shared-memory pages):
  main heap          [heap]: glibc's main arena (the main thread's malloc)
  malloc arenas      the other threads' arenas: read-write anonymous mappings at the start of a
                     64 MiB-aligned reservation whose rest is reserved (---p), glibc's HEAP_MAX
  thread stacks      read-write anonymous mappings just above a one-page guard (---p)
  main stack         [stack]
  mmapped blocks     other anonymous mappings: malloc's blocks over its mmap threshold, and
                     whatever a library maps itself
  BPF maps           anon_inode:bpf-map mappings (a BPF_F_MMAPABLE array, a ring buffer); a BPF
                     map not mapped into the process is kernel memory and is not in its RSS
  file: NAME         file-backed pages of each file (the binary, each library, any ELF or
                     debug file mapped while reading it), the small ones summed as "file: other"
  other              [vdso], [vvar] and the like
Numbers only; nothing is judged.
"""
import json
import re
import sys

HEAP_MAX = 64 << 20
SMALL_FILE_KIB = 256


def read_maps(pid):
    maps = []
    cur = None
    head = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s*(.*)$")
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = head.match(line)
            if m:
                cur = {"start": int(m.group(1), 16), "end": int(m.group(2), 16),
                       "perms": m.group(3), "name": m.group(4).strip(), "kb": {}}
                maps.append(cur)
                continue
            k, _, v = line.partition(":")
            v = v.strip()
            if cur is not None and v.endswith(" kB"):
                cur["kb"][k] = int(v.split()[0])
    return maps


def classify(maps, i):
    m = maps[i]
    name, perms = m["name"], m["perms"]
    if name == "[heap]":
        return "main heap"
    if name == "[stack]":
        return "main stack"
    if name.startswith("anon_inode:bpf") or name.startswith("anon_inode:[bpf"):
        return "BPF maps"
    if name.startswith("/"):
        base = name.rsplit("/", 1)[-1]
        return "file: " + base
    if name.startswith("["):
        return "other"
    if name and not name.startswith("["):
        return "other: " + name
    # Anonymous.
    if perms.startswith("rw"):
        nxt = maps[i + 1] if i + 1 < len(maps) else None
        prv = maps[i - 1] if i > 0 else None
        if (m["start"] % HEAP_MAX == 0 and nxt and nxt["perms"] == "---p" and not nxt["name"]
                and nxt["start"] == m["end"]):
            return "malloc arenas"
        if (m["start"] % HEAP_MAX == 0 and nxt is None) or (
                m["start"] % HEAP_MAX == 0 and m["end"] - m["start"] == HEAP_MAX):
            return "malloc arenas"
        if (prv and prv["perms"] == "---p" and not prv["name"] and prv["end"] == m["start"]
                and prv["end"] - prv["start"] <= 64 << 10):
            return "thread stacks"
    return "mmapped blocks"


def breakdown(pid):
    maps = read_maps(pid)
    cats = {}
    for i, m in enumerate(maps):
        c = classify(maps, i)
        kb = m["kb"]
        e = cats.setdefault(c, {"rss": 0, "anon": 0, "file": 0, "shmem": 0, "pss": 0, "n": 0})
        e["rss"] += kb.get("Rss", 0)
        e["pss"] += kb.get("Pss", 0)
        e["anon"] += kb.get("Anonymous", 0)
        # smaps has no per-mapping shmem line: shared pages of a shmem-backed or anon_inode
        # mapping are its Rss minus its Anonymous pages.
        if c == "BPF maps" or m["name"].startswith("/dev/shm") or m["name"].startswith("/memfd"):
            e["shmem"] += kb.get("Rss", 0) - kb.get("Anonymous", 0)
        elif m["name"].startswith("/"):
            e["file"] += kb.get("Rss", 0) - kb.get("Anonymous", 0)
        e["n"] += 1
    # Small files into one row, so that the table stays readable.
    other = {"rss": 0, "anon": 0, "file": 0, "shmem": 0, "pss": 0, "n": 0}
    for c in [c for c in cats if c.startswith("file: ")]:
        if cats[c]["rss"] < SMALL_FILE_KIB:
            for k in other:
                other[k] += cats[c][k]
            del cats[c]
    if other["n"]:
        cats["file: other (each < %d KiB)" % SMALL_FILE_KIB] = other
    return cats


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: rss_breakdown.py PID [--json]")
    pid = sys.argv[1]
    cats = breakdown(pid)
    if "--json" in sys.argv[2:]:
        json.dump(cats, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    total = {k: sum(e[k] for e in cats.values()) for k in ("rss", "anon", "file", "shmem", "pss")}
    print("| category | RSS KiB | anon | file | shmem | PSS KiB | mappings |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c, e in sorted(cats.items(), key=lambda kv: -kv[1]["rss"]):
        if e["rss"] == 0:
            continue
        print(f"| {c} | {e['rss']} | {e['anon']} | {e['file']} | {e['shmem']} | {e['pss']} "
              f"| {e['n']} |")
    print(f"| total | {total['rss']} | {total['anon']} | {total['file']} | {total['shmem']} "
          f"| {total['pss']} | {sum(e['n'] for e in cats.values())} |")


if __name__ == "__main__":
    main()

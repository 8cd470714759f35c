#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Stack checks of the unwinding tests, over folded files (see folded.py for the format).

Usage: stacks.py COMMAND ...
  reach FILE --comm COMM [--kernel] FRAME...
                                    fraction of COMM's samples whose stack holds every FRAME, in
                                    this order from the root (other frames may come between);
                                    --kernel: only samples with kernel frames (taken in a syscall)
  adjacent FILE --comm COMM CALLER CALLEE_RE
                                    share (by count) of the samples holding CALLER whose next frame
                                    towards the leaf matches the regular expression CALLEE_RE
  perf-folded FILE                  turn `perf script -F comm,ip,sym --no-inline` output into the
                                    folded format (root first), on stdout
  compare OURS THEIRS --comm COMM --from FRAME [--min-share S] [--tol T]
                                    the stacks of COMM from FRAME down to the leaf, in both files:
                                    every stack with at least S (default 0.02) of the samples in
                                    either file must be in the other with a share within T (0.05)
  selftest                          check the above on built-in inputs

Numbers go to stdout as `key value` lines; a failed compare prints its reasons and exits 1;
errors exit 2.
"""
import argparse
import collections
import re
import sys


def parse_folded(path, comm):
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, sep, count = line.rpartition(" ")
            if not sep:
                raise SystemExit("%s:%d: no count" % (path, lineno))
            frames = stack.split(";")
            if comm is None or frames[0] == comm:
                rows.append((frames[1:], int(count)))
    return rows


def holds_in_order(frames, wanted):
    i = 0
    for f in frames:
        if i < len(wanted) and f == wanted[i]:
            i += 1
    return i == len(wanted)


def in_kernel(frames):
    return any(f.endswith("_[k]") for f in frames)


def adjacent(rows, caller, callee_re):
    """Samples with CALLER, and of those the ones whose next frame matches callee_re."""
    pat = re.compile(callee_re)
    total = hit = 0
    for frames, n in rows:
        if caller not in frames:
            continue
        total += n
        i = frames.index(caller)
        if i + 1 < len(frames) and pat.search(frames[i + 1]):
            hit += n
    return hit, total


def reach(rows, wanted):
    total = sum(n for _, n in rows)
    hit = sum(n for frames, n in rows if holds_in_order(frames, wanted))
    return hit, total


PERF_FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s*$")


def perf_folded(lines):
    """perf script prints a header line per sample, then one frame per line, leaf first."""
    stacks = collections.Counter()
    comm, frames = None, []

    def flush():
        if comm is not None and frames:
            stacks[";".join([comm] + frames[::-1])] += 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        m = PERF_FRAME.match(line)
        if m and comm is not None:
            sym = m.group(2)
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
            frames.append("[unknown]" if not sym or sym == "[unknown]" else sym)
        elif not line.startswith((" ", "\t")):
            flush()
            comm, frames = line.split()[0], []
    flush()
    return stacks


def from_frame(rows, frame):
    """Stacks cut at their first FRAME (kept) and shares among the samples that have FRAME."""
    counts = collections.Counter()
    for frames, n in rows:
        if frame in frames:
            counts[tuple(frames[frames.index(frame):])] += n
    total = sum(counts.values())
    return {k: v / total for k, v in counts.items()} if total else {}, total


def compare(ours, theirs, min_share, tol):
    problems = []
    for name, a, b in (("hostprof", ours, theirs), ("perf", theirs, ours)):
        for stack, share in sorted(a.items(), key=lambda kv: -kv[1])[:10]:
            if share < min_share:
                continue
            other = b.get(stack, 0.0)
            if abs(share - other) > tol:
                problems.append("%s has %s at %.1f%%, the other %.1f%%" %
                                (name, ";".join(stack), 100 * share, 100 * other))
    return problems


def selftest():
    rows = [(["_start", "main", "a", "b"], 3), (["main", "b"], 1), (["x"], 1)]
    assert reach(rows, ["main", "b"]) == (4, 5)
    assert reach(rows, ["b", "main"]) == (0, 5)
    assert adjacent(rows, "main", "^a$") == (3, 4)
    assert in_kernel(["main", "do_syscall_64_[k]"]) and not in_kernel(["main"])
    perf = ["p 1 [000] 1.0: cpu-clock:", "\t  1 leaf+0x4", "\t  2 main+0x10", "\t  3 [unknown]",
            "", "p 1 [000] 1.1: cpu-clock:", "\t  1 leaf+0x8", "\t  2 main+0x10", "\t  3 [unknown]"]
    got = perf_folded(perf)
    assert got == {"p;[unknown];main;leaf": 2}, got
    a, _ = from_frame([(["s", "main", "x"], 9), (["main", "y"], 1)], "main")
    b, _ = from_frame([(["t", "main", "x"], 8), (["main", "y"], 2)], "main")
    assert not compare(a, b, 0.02, 0.15)
    assert compare(a, b, 0.02, 0.05)
    print("selftest ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command")
    ap.add_argument("args", nargs="*")
    ap.add_argument("--comm")
    ap.add_argument("--kernel", action="store_true")
    ap.add_argument("--from", dest="frm")
    ap.add_argument("--min-share", type=float, default=0.02)
    ap.add_argument("--tol", type=float, default=0.05)
    o = ap.parse_intermixed_args()
    if o.command == "reach":
        rows = parse_folded(o.args[0], o.comm)
        if o.kernel:
            rows = [(f, n) for f, n in rows if in_kernel(f)]
        hit, total = reach(rows, o.args[1:])
        print("hit %d\nsamples %d\nfraction %.4f" % (hit, total, hit / total if total else 0))
    elif o.command == "adjacent":
        hit, total = adjacent(parse_folded(o.args[0], o.comm), o.args[1], o.args[2])
        print("hit %d\nsamples %d\nfraction %.4f" % (hit, total, hit / total if total else 0))
    elif o.command == "perf-folded":
        with open(o.args[0], encoding="utf-8", errors="replace") as f:
            for stack, n in perf_folded(f).most_common():
                print("%s %d" % (stack, n))
    elif o.command == "compare":
        ours, n1 = from_frame(parse_folded(o.args[0], o.comm), o.frm)
        theirs, n2 = from_frame(parse_folded(o.args[1], o.comm), o.frm)
        print("ours %d\ntheirs %d\nstacks %d" % (n1, n2, len(ours)))
        problems = compare(ours, theirs, o.min_share, o.tol) if n1 and n2 else ["no samples"]
        for p in problems:
            print("problem", p)
        return 1 if problems else 0
    elif o.command == "selftest":
        selftest()
    else:
        print("unknown command %s" % o.command, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

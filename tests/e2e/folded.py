#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Read hostprof's folded output and compute what the end-to-end tests check.

A folded file has one line per distinct stack: `comm;root;...;leaf COUNT`, where COUNT is a number
of samples, kernel frames end in `_[k]` and unresolved frames look like `[unknown] /path+0x12`
(so a frame may contain spaces: only the last space separates the count).

Usage: folded.py COMMAND FILE [--comm COMM] [ARGS]
  validate FILE            every line parses; prints the line and sample counts
  comms FILE               samples per comm, largest first
  total FILE               samples (of --comm if given)
  shares FILE FUNC...      self samples of each FUNC (leaf frame == FUNC) and its share among them
  contains FILE FRAME      fraction of samples whose stack has a frame equal to FRAME
  unresolved FILE          fraction of samples with an unresolved frame (`[unknown] ...`,
                           `[unmapped]+0x...`)
  kernel FILE              fraction of samples whose stack has a kernel frame (`..._[k]`)
  kernel-frames FILE       kernel frame names by samples, largest first (-n N)
  leaves FILE              leaf frames by samples, largest first (-n N)
  selftest                 check this parser against a built-in fixture

Numbers go to stdout as `key value` lines, for run.sh to read; errors to stderr with exit 2.
"""
import argparse
import collections
import sys

KERNEL_SUFFIX = "_[k]"


class FoldedError(Exception):
    pass


def parse(lines):
    """Yields (comm, frames, count) for each non-empty line; raises FoldedError on a bad line."""
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        stack, sep, count = line.rpartition(" ")
        if not sep or not stack:
            raise FoldedError("line %d: no count: %r" % (lineno, line[:200]))
        try:
            n = int(count)
        except ValueError:
            raise FoldedError("line %d: count %r is not an integer" % (lineno, count))
        if n <= 0:
            raise FoldedError("line %d: count %d is not positive" % (lineno, n))
        frames = stack.split(";")
        comm = frames[0]
        yield comm, frames[1:], n


def load(path, comm=None):
    with open(path, encoding="utf-8", errors="replace") as f:
        rows = list(parse(f))
    if comm is not None:
        rows = [r for r in rows if r[0] == comm]
    return rows


def is_kernel(frame):
    return frame.endswith(KERNEL_SUFFIX)


def total(rows):
    return sum(n for _, _, n in rows)


def shares(rows, funcs):
    """Self samples of each function in funcs, and its share of their sum (0 when the sum is 0)."""
    counts = collections.OrderedDict((f, 0) for f in funcs)
    for _, frames, n in rows:
        if frames and frames[-1] in counts:
            counts[frames[-1]] += n
    s = sum(counts.values())
    return counts, {f: (c / s if s else 0.0) for f, c in counts.items()}, s


def fraction(rows, pred):
    t = total(rows)
    hit = sum(n for _, frames, n in rows if pred(frames))
    return hit, t, (hit / t if t else 0.0)


def is_unresolved(frame):
    return frame.startswith("[unknown]") or frame.startswith("[unmapped]")


def ranked(rows, pick, limit):
    c = collections.Counter()
    for _, frames, n in rows:
        for name in pick(frames):
            c[name] += n
    return c.most_common(limit)


def leaf_of(frames):
    return frames[-1:] if frames else ["(no frames)"]


def kernel_frames_of(frames):
    return sorted({f for f in frames if is_kernel(f)})


FIXTURE = """\
cpu_ratio;_start;__libc_start_main;main;burn_a 10
cpu_ratio;_start;__libc_start_main;main;burn_b 20
cpu_ratio;_start;__libc_start_main;main;burn_c 25
cpu_ratio;_start;__libc_start_main;main;burn_c;asm_sysvec_apic_timer_interrupt_[k] 5
cpu_ratio;[unknown] /usr/lib/x86_64-linux-gnu/libc.so.6+0x27d0a;burn_c 3
other proc;main;burn_a 7

syscalls;main;do_writes;write;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];ksys_write_[k] 40
"""


def selftest():
    rows = list(parse(FIXTURE.splitlines(True)))
    assert len(rows) == 7, rows
    assert rows[4][1][0] == "[unknown] /usr/lib/x86_64-linux-gnu/libc.so.6+0x27d0a", rows[4]
    assert rows[5][0] == "other proc"
    cr = [r for r in rows if r[0] == "cpu_ratio"]
    assert total(cr) == 63, total(cr)
    counts, sh, s = shares(cr, ["burn_a", "burn_b", "burn_c"])
    assert s == 58 and counts["burn_c"] == 28, counts
    assert abs(sh["burn_a"] - 10 / 58) < 1e-9
    hit, t, fr = fraction(cr, lambda fs: "main" in fs)
    assert (hit, t) == (60, 63), (hit, t)
    hit, t, fr = fraction(cr, lambda fs: any(map(is_kernel, fs)))
    assert (hit, t) == (5, 63), (hit, t)
    hit, t, fr = fraction(cr, lambda fs: any(map(is_unresolved, fs)))
    assert (hit, t) == (3, 63), (hit, t)
    sc = [r for r in rows if r[0] == "syscalls"]
    assert ranked(sc, kernel_frames_of, 1)[0][1] == 40
    for bad in ["main;burn_a", "main;burn_a x", "main;burn_a 0", " 5"]:
        try:
            list(parse([bad]))
        except FoldedError:
            continue
        raise AssertionError("accepted %r" % bad)
    print("selftest ok")


def main(argv):
    p = argparse.ArgumentParser(description="Compute e2e numbers from a folded profile.")
    p.add_argument("command", choices=["validate", "comms", "total", "shares", "contains",
                                       "kernel", "kernel-frames", "leaves", "unresolved",
                                       "selftest"])
    p.add_argument("file", nargs="?")
    p.add_argument("args", nargs="*")
    p.add_argument("--comm", help="only the samples whose first field is COMM")
    p.add_argument("-n", type=int, default=10, help="entries to list (kernel-frames, leaves)")
    a = p.parse_intermixed_args(argv)

    if a.command == "selftest":
        selftest()
        return 0
    if a.file is None:
        p.error("missing FILE")
    try:
        rows = load(a.file, a.comm)
    except (OSError, FoldedError) as e:
        print("folded.py: %s: %s" % (a.file, e), file=sys.stderr)
        return 2

    if a.command == "validate":
        print("lines %d" % len(rows))
        print("samples %d" % total(rows))
    elif a.command == "comms":
        c = collections.Counter()
        for comm, _, n in rows:
            c[comm] += n
        for comm, n in c.most_common():
            print("%s %d" % (comm, n))
    elif a.command == "total":
        print("samples %d" % total(rows))
    elif a.command == "shares":
        if not a.args:
            p.error("shares needs at least one function name")
        counts, sh, s = shares(rows, a.args)
        for f in a.args:
            print("%s %d %.4f" % (f, counts[f], sh[f]))
        print("sum %d" % s)
        print("samples %d" % total(rows))
    elif a.command == "contains":
        if len(a.args) != 1:
            p.error("contains needs one frame name")
        hit, t, fr = fraction(rows, lambda fs: a.args[0] in fs)
        print("hit %d\nsamples %d\nfraction %.4f" % (hit, t, fr))
    elif a.command == "kernel":
        hit, t, fr = fraction(rows, lambda fs: any(map(is_kernel, fs)))
        print("hit %d\nsamples %d\nfraction %.4f" % (hit, t, fr))
    elif a.command == "unresolved":
        hit, t, fr = fraction(rows, lambda fs: any(map(is_unresolved, fs)))
        print("hit %d\nsamples %d\nfraction %.4f" % (hit, t, fr))
    elif a.command == "kernel-frames":
        for name, n in ranked(rows, kernel_frames_of, a.n):
            print("%s %d" % (name, n))
    elif a.command == "leaves":
        for name, n in ranked(rows, leaf_of, a.n):
            print("%s %d" % (name, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

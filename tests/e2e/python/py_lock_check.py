#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Judge a contention profile of tests/e2e/python/py_lock.py (pyframes_contention).

Usage: py_lock_check.py RAWFILE REPORT.json
RAWFILE is `go tool pprof -raw` of hostprof's contention profile; REPORT.json is what the
script measured. Prints `OK <numbers>` or one `FAIL <why>` line per failed check:
- the contention time (the `contention` or `delay` sample type, nanoseconds) of the stacks that
  hold Waiter.wait_turn, reached from Thread._bootstrap (Python frames walked in BPF), as a
  fraction of the capture's duration, is within 15% of the fraction of its run the waiter
  measured in acquire() (the script runs longer than the capture, steadily; the GIL, taken again
  inside acquire(), waits under the same frames and inside the same measurement);
- >= 95% of the process's contention time has a Python frame (a function named like a Python
  one: <module>, Holder.hold, Waiter.wait_turn, Thread.*) in its stack.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pprof_raw  # noqa: E402

PYTHON_FRAMES = ("Waiter.wait_turn", "Holder.hold", "Thread.run", "Thread._bootstrap",
                 "Thread._bootstrap_inner", "<module>")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    p = pprof_raw.parse(open(argv[1]).read())
    report = json.load(open(argv[2]))
    kind = next((t.split("/")[0] for t in p.types if t.split("/")[0] in ("contention", "delay")),
                None)
    if kind is None:
        print("FAIL no contention sample type in the profile (types: %s)" % " ".join(p.types))
        return 1
    i = p.type_index(kind)
    total = waiter = with_python = 0
    for s in p.samples:
        names = p.stack(s)
        ns = s.values[i]
        total += ns
        if any(n in PYTHON_FRAMES for n in names):
            with_python += ns
        if "Waiter.wait_turn" in names and "Thread._bootstrap" in names:
            waiter += ns
    fails = []
    duration = p.duration_s
    if not duration:
        print("FAIL the profile has no duration")
        return 1
    got = waiter / 1e9 / duration
    want = report["wait_ns"] / report["elapsed_ns"] if report.get("elapsed_ns") else 0
    if not want:
        fails.append("the script measured no wait in acquire()")
    elif abs(got - want) > 0.15 * want:
        fails.append("waits under Waiter.wait_turn < Thread._bootstrap: %.1f%% of the %.2f s "
                     "captured, the script measured %.1f%% of its run in acquire() (%+.1f%%, "
                     "allowed 15%%)" % (100 * got, duration, 100 * want,
                                        100.0 * (got - want) / want))
    if not total or with_python < 0.95 * total:
        fails.append("%.1f%% of the process's %.3f s of contention has a Python frame in its "
                     "stack, need >= 95%%" % (100.0 * with_python / total if total else 0,
                                               total / 1e9))
    for f in fails:
        print("FAIL " + f)
    if not fails:
        print("OK Python %s: waits under Waiter.wait_turn %.1f%% of the capture, the script "
              "measured %.1f%% of its run in acquire() (%+.1f%%); %.1f%% of the contention has "
              "Python frames" % (report["python"], 100 * got, 100 * want,
                                 100.0 * (got - want) / want, 100.0 * with_python / total))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

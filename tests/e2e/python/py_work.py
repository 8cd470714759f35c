# SPDX-License-Identifier: BSD-2-Clause
"""A Python workload that measures itself, for the CPython frame tests (tests/e2e/python.sh).

Usage: py_work.py SECONDS OUT.json [--mode cpu|wall]

Runs for SECONDS, or until SIGTERM or SIGINT, then writes OUT.json: for each function below,
the CPU time (time.thread_time) and wall time (time.perf_counter) spent inside its calls, its
share of the process's CPU or wall time over the same stretch, its qualified name, file, line
range and the lines of its hot loop (those marked `# hot` in this file, found at run time so
that no line number is written twice). Plain standard library, Python 3.9 to 3.13.

--mode cpu (the default), with these stacks (root first):
  <module> > main > run_main > Driver.round > Driver.step > Shapes.area       ~ 40% of the CPU
                                                          > crunch            ~ 25%
                                                          > tiny_helper       ~ 15%
                                                          > sort_with_qsort   ~ 15%: libc's qsort
       through ctypes, calling back compare_ints in Python, so that native frames (_ctypes,
       libffi, libc) sit between two runs of Python frames
  Thread._bootstrap > ... > Thread.run > Worker.spin: a thread (named py-worker with
       prctl, so that the profile's thread_name label finds it even from another PID
       namespace) burning ~ 20% in bursts, sleeping between them
--mode wall: one thread; Sleeper.nap sleeps (time.sleep) ~ 40% of the wall time, crunch burns
  the rest; only wall time is measured (see Driver.step).

The shares are inclusive: a call's time holds whatever runs under it (builtins, C code,
waiting for the GIL), which is what a profile attributes to the frame that made the call.
"""
import ctypes
import inspect
import json
import os
import signal
import sys
import threading
import time

# CPU milliseconds each main-thread function gets per round of Driver.round.
BUDGET_MS = {"Shapes.area": 8.0, "crunch": 5.0, "tiny_helper": 3.0, "sort_with_qsort": 3.0}
WORKER_NAME = b"py-worker"
PR_SET_NAME = 15

stop = threading.Event()


class Shapes:
    def __init__(self, n):
        self.sides = [1.0 + (i % 7) * 0.25 for i in range(n)]

    def area(self):
        total = 0.0
        for s in self.sides:  # hot
            total += s * s * 0.4330127  # hot
        return total


def crunch(n):
    acc = 0
    for i in range(n):  # hot
        acc = (acc * 31 + i) & 0xFFFFFF  # hot
    return acc


def tiny_helper(n):
    x = 1
    for _ in range(n):  # hot
        x ^= x << 1  # hot
        x &= 0xFFFF  # hot
    return x


def compare_ints(a, b):
    x = a[0]  # hot
    y = b[0]  # hot
    return (x > y) - (x < y)  # hot


CMP_FUNC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                            ctypes.POINTER(ctypes.c_int))
COMPARE = CMP_FUNC(compare_ints)
# dlopen(NULL): the process's global symbols, libc's qsort among them, without find_library
# (which needs ldconfig or a compiler, absent from a minimal root).
LIBC = ctypes.CDLL(None)
LIBC.qsort.restype = None


def sort_with_qsort(n):
    values = (ctypes.c_int * n)(*[(i * 7919) % 1009 for i in range(n)])
    LIBC.qsort(values, n, ctypes.sizeof(ctypes.c_int), COMPARE)  # hot
    return values[0]


class Sleeper:
    def nap(self, seconds):
        time.sleep(seconds)  # hot


class Meter:
    """Inclusive CPU and wall time per function name, on the thread that calls it."""

    def __init__(self):
        self.cpu = {}
        self.wall = {}
        self.lock = threading.Lock()

    def add(self, name, cpu, wall):
        with self.lock:
            self.cpu[name] = self.cpu.get(name, 0.0) + cpu
            self.wall[name] = self.wall.get(name, 0.0) + wall


METER = Meter()


class Worker:
    """The thread's own function: bursts of ~4 ms of CPU, 12 ms asleep between them."""

    def __init__(self):
        self.cpu = 0.0
        self.wall = 0.0

    def spin(self):
        LIBC.prctl(PR_SET_NAME, ctypes.c_char_p(WORKER_NAME), 0, 0, 0)
        c0, w0 = time.thread_time(), time.perf_counter()
        while not stop.is_set():
            t = time.thread_time()
            while time.thread_time() - t < 0.004:
                crunch_in_worker = 0
                for i in range(2000):  # hot
                    crunch_in_worker += i * i  # hot
            stop.wait(0.012)
        self.cpu = time.thread_time() - c0
        self.wall = time.perf_counter() - w0


class Driver:
    def __init__(self, mode):
        self.mode = mode
        self.shapes = Shapes(3000)
        self.sleeper = Sleeper()

    def step(self, name, fn, arg, budget):
        """Calls fn(arg) until its time this round (CPU time; wall time in wall mode) reaches
        budget seconds."""
        spent = 0.0
        while spent < budget:
            if self.mode == "wall":
                # Only the wall clock (vDSO, no system call): a system call's return is where a
                # busy machine preempts a thread, and such a wait between two timed calls would
                # be the caller's in the profile but could fall inside fn's interval here.
                w0 = time.perf_counter()
                fn(arg) if arg is not None else fn()
                w1 = time.perf_counter()
                spent += w1 - w0
                METER.add(name, 0.0, w1 - w0)
                continue
            c0 = time.thread_time()
            w0 = time.perf_counter()
            fn(arg) if arg is not None else fn()
            w1 = time.perf_counter()
            c1 = time.thread_time()
            spent += c1 - c0
            METER.add(name, c1 - c0, w1 - w0)

    def round(self):
        if self.mode == "wall":
            self.step("crunch", crunch, 20000, 0.012)
            w0 = time.perf_counter()
            self.sleeper.nap(0.008)
            METER.add("Sleeper.nap", 0.0, time.perf_counter() - w0)
            return
        self.step("Shapes.area", self.shapes.area, None, BUDGET_MS["Shapes.area"] / 1e3)
        self.step("crunch", crunch, 20000, BUDGET_MS["crunch"] / 1e3)
        self.step("tiny_helper", tiny_helper, 3000, BUDGET_MS["tiny_helper"] / 1e3)
        self.step("sort_with_qsort", sort_with_qsort, 400, BUDGET_MS["sort_with_qsort"] / 1e3)


def run_main(seconds, mode):
    driver = Driver(mode)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end and not stop.is_set():
        driver.round()


def hot_lines(fn):
    """The code object, its line range, and the lines marked `# hot`, of function fn."""
    code = fn.__code__
    src, first = inspect.getsourcelines(fn)
    hot = [first + i for i, line in enumerate(src) if line.rstrip().endswith("# hot")]
    return code, first, first + len(src) - 1, hot


def describe(fn, qualname):
    code, first, last, hot = hot_lines(fn)
    return {"qualname": qualname, "name": code.co_name, "file": code.co_filename,
            "first_line": first, "last_line": last, "hot_lines": hot}


def main():
    args = sys.argv[1:]
    mode = "cpu"
    if "--mode" in args:
        i = args.index("--mode")
        mode = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2 or mode not in ("cpu", "wall"):
        sys.stderr.write(__doc__)
        return 2
    seconds, out = float(args[0]), args[1]
    # A handler makes SIGTERM stop the run cleanly, also as PID 1 of a PID namespace (which
    # signals without a handler do not reach).
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    worker = Worker()
    thread = None
    c0, w0 = time.process_time(), time.perf_counter()
    if mode == "cpu":
        thread = threading.Thread(target=worker.spin, name="py-worker")
        thread.start()
    # The test starts profiling once this mark exists: the process is in its steady state.
    open(out + ".ready", "w").close()
    run_main(seconds, mode)
    stop.set()
    if thread is not None:
        thread.join()
    total_cpu = time.process_time() - c0
    total_wall = time.perf_counter() - w0

    funcs = {
        "Shapes.area": describe(Shapes.area, "Shapes.area"),
        "crunch": describe(crunch, "crunch"),
        "tiny_helper": describe(tiny_helper, "tiny_helper"),
        "sort_with_qsort": describe(sort_with_qsort, "sort_with_qsort"),
        "compare_ints": describe(compare_ints, "compare_ints"),
        "Sleeper.nap": describe(Sleeper.nap, "Sleeper.nap"),
        "Worker.spin": describe(Worker.spin, "Worker.spin"),
    }
    METER.add("Worker.spin", worker.cpu, worker.wall)
    for name, f in funcs.items():
        f["cpu_s"] = round(METER.cpu.get(name, 0.0), 6)
        f["wall_s"] = round(METER.wall.get(name, 0.0), 6)
        f["cpu_share"] = round(100.0 * f["cpu_s"] / total_cpu, 2) if total_cpu else 0.0
        f["wall_share"] = round(100.0 * f["wall_s"] / total_wall, 2) if total_wall else 0.0
    # Which functions the profile must show with a share (the others are checked otherwise).
    if mode == "cpu":
        measured = ["Shapes.area", "crunch", "tiny_helper", "sort_with_qsort", "Worker.spin"]
    else:
        measured = ["Sleeper.nap", "crunch"]
    report = {
        "python": "%d.%d.%d" % sys.version_info[:3],
        "version": list(sys.version_info[:2]),
        "executable": sys.executable,
        "pid": os.getpid(),
        "mode": mode,
        "script": os.path.basename(__file__),
        "total_cpu_s": round(total_cpu, 6),
        "total_wall_s": round(total_wall, 6),
        "measured": measured,
        "functions": funcs,
        "callback": {"function": "compare_ints", "caller": "sort_with_qsort"},
        "threads": {"main": {"root": "<module>"},
                    "worker": {"thread_name": WORKER_NAME.decode(), "root": "Thread._bootstrap",
                               "function": "Worker.spin"}} if mode == "cpu"
        else {"main": {"root": "<module>"}},
    }
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    os.rename(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

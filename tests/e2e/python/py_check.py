#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Check hostprof's profile of tests/e2e/python/py_work.py against what the script measured.

Usage: py_check.py COMMAND ...
  check RAW WORK_JSON [--type cpu|wall] [--tol POINTS]
        RAW is `go tool pprof -raw` of the profile (parsed by tests/e2e/pprof_raw.py), WORK_JSON
        what py_work.py wrote. Every sample of the profile is the workload's (hostprof ran with
        --pid). Checks, in this order, and prints one `FAIL ...` line per failure:
        names   every function the script names is in the profile under its qualified name
                (co_qualname; its plain co_name before 3.11, whose code objects have none)
        shares  each measured function's inclusive share (samples whose stack holds it, over all
                the process's samples, weighted by the time-valued sample type) within POINTS
                (default 5) of the script's own inclusive share
        lines   each function's frames name the script (basename) and a line within the
                function; >= 95% of them, and its most sampled line is one marked `# hot`; the
                start line, when set, is the code object's first line
        reach   >= 95% of the main thread's samples (tid = pid) hold <module>; >= 95% of the
                worker thread's (its thread_name label) hold its root, Thread._bootstrap
                (threading's first Python frame on a new thread, as <module> is the main
                thread's), and its own function Worker.spin
        native  >= 90% of the samples holding the qsort callback (compare_ints) go, towards
                the root, through native frames of which one is libc's (qsort) to the Python
                frame that called qsort (sort_with_qsort): Python > native > Python
        --perf-trampolines: judge the frames of CPython's perf trampolines (python -X perf,
        named py::QUALNAME:FILE from its perf map) instead, without the lines check (they have
        no line): the script's own measurement and these checks, against frames that do not
        come from hostprof's CPython walker
  absent RAW WORK_JSON
        no Python frame at all (a frame naming a .py file, <module>, or a function of the
        script): for the versions hostprof does not walk
  otlp OTLP_JSON WORK_JSON
        the same profile written as OTLP/JSON: every location of a function of the script (and
        of <module>) carries profile.frame.type "cpython"
  selftest
        the checks above on built-in profiles, good and broken
Numbers go to stdout as `key value` lines; exit 0 when every check passed, 1 when one failed,
2 on bad input.

Why inclusive shares: a Python function's samples mostly end in native code (the evaluation
loop's helpers, builtins, libc, the GIL), so its self share would depend on what the walker
leaves leafward of it; the script times whole calls, which is the inclusive share.
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pprof_raw  # noqa: E402  (tests/e2e/pprof_raw.py)

REACH_MIN = 0.95
LINES_MIN = 0.95
NATIVE_MIN = 0.90
MIN_SAMPLES = 200


class CheckError(Exception):
    pass


def expected_name(work, qualname, seen=()):
    """How the profile names a function of the script on this interpreter: its qualified name
    from 3.11 (co_qualname); before, the plain co_name, or the qualified one if the profile has
    it (found some other way)."""
    if tuple(work["version"]) >= (3, 11) or qualname in seen:
        return qualname
    return qualname.rsplit(".", 1)[-1]


def is_python(line):
    return line.file.endswith(".py") or line.file.startswith("<frozen")


def value_index(p):
    """The time-valued sample type (cpu or wall nanoseconds), else the first."""
    for i, t in enumerate(p.types):
        if t.endswith("/nanoseconds"):
            return i
    return 0


def rename_trampolines(p):
    """py::QUALNAME:FILE frames (CPython's perf trampolines) as QUALNAME in FILE."""
    for lines in p.lines.values():
        for ln in lines:
            if ln.name.startswith("py::") and ":" in ln.name[4:]:
                ln.name, ln.file = ln.name[4:].split(":", 1)


class Checker:
    def __init__(self, p, work, kind="cpu", tol=5.0, lines=True):
        self.p, self.work, self.kind, self.tol, self.lines = p, work, kind, tol, lines
        self.vi = value_index(p)
        self.failures = []
        self.out = []
        self.samples = [(s, p.frames(s), s.values[self.vi]) for s in p.samples]
        self.total = sum(v for _, _, v in self.samples)
        self.count = sum(s.values[0] for s in p.samples)
        self.seen = {ln.name for _, frames, _ in self.samples for ln, _ in frames}

    def say(self, key, value):
        self.out.append("%s %s" % (key, value))

    def fail(self, msg):
        self.failures.append(msg)

    def name(self, qualname):
        return expected_name(self.work, qualname, self.seen)

    def holds(self, frames, name):
        return any(ln.name == name for ln, _ in frames)

    def names_seen(self):
        c = collections.Counter()
        for _, frames, v in self.samples:
            for name in {ln.name for ln, _ in frames}:
                c[name] += v
        return c

    def python_names_seen(self, n=8):
        c = collections.Counter()
        for _, frames, v in self.samples:
            for name in {ln.name for ln, _ in frames if is_python(ln)}:
                c[name] += v
        return " ".join(name for name, _ in c.most_common(n)) or "none"

    def check_names(self):
        seen = self.names_seen()
        want = list(self.work["functions"].keys() if self.kind == "cpu"
                    else self.work["measured"])
        if self.kind == "cpu":
            want = [f for f in want if f != "Sleeper.nap"]
        for t in self.work["threads"].values():
            want.append(t["root"])
        missing = [self.name(q) for q in want if self.name(q) not in seen]
        self.say("names_missing", len(missing))
        if missing:
            self.fail("no function %s in the profile (Python functions seen: %s)"
                      % (", ".join(missing), self.python_names_seen()))
        return not missing

    def share(self, name):
        hit = sum(v for _, frames, v in self.samples if self.holds(frames, name))
        return 100.0 * hit / self.total if self.total else 0.0

    def check_shares(self):
        key = "cpu_share" if self.kind == "cpu" else "wall_share"
        for q in self.work["measured"]:
            want = self.work["functions"][q][key]
            got = self.share(self.name(q))
            self.say("share %s" % q, "%.1f %.1f" % (got, want))
            if abs(got - want) > self.tol:
                self.fail("%s has %.1f%% of the %s profile (inclusive), the script measured "
                          "%.1f%% (+-%g points)" % (self.name(q), got, self.kind, want, self.tol))

    def check_lines(self):
        names = list(self.work["measured"])
        if self.kind == "cpu":
            names.append(self.work["callback"]["function"])
        for q in names:
            f = self.work["functions"][q]
            name = self.name(q)
            lines = collections.Counter()
            files = collections.Counter()
            starts = collections.Counter()
            for _, frames, v in self.samples:
                for ln, _ in frames:
                    if ln.name == name:
                        lines[ln.line] += v
                        files[os.path.basename(ln.file)] += v
                        starts[ln.start] += v
                        break
            n = sum(lines.values())
            if not n:
                continue  # check_names said so
            inside = sum(v for line, v in lines.items()
                         if f["first_line"] <= line <= f["last_line"])
            top = lines.most_common(1)[0][0]
            self.say("lines %s" % q, "%s top=%d inside=%.3f" % (
                ",".join("%d" % x for x, _ in lines.most_common(3)), top, inside / n))
            bad_files = [b for b in files if b != self.work["script"]]
            if bad_files:
                self.fail("%s frames name the file %s, not %s" % (
                    name, ", ".join(sorted(bad_files)), self.work["script"]))
            if inside / n < LINES_MIN:
                self.fail("%s: only %.1f%% of its frames have a line within %d-%d (lines seen: %s)"
                          % (name, 100.0 * inside / n, f["first_line"], f["last_line"],
                             " ".join("%d" % x for x, _ in lines.most_common(5))))
            elif top not in f["hot_lines"]:
                self.fail("%s: its most sampled line is %d, not one of its hot loop's %s" % (
                    name, top, f["hot_lines"]))
            bad_starts = [s for s in starts if s not in (0, f["first_line"])]
            if bad_starts:
                self.fail("%s: start line %s, the code object's first line is %d" % (
                    name, bad_starts, f["first_line"]))

    def check_reach(self):
        threads = self.work["threads"]
        worker = threads.get("worker")
        main_root = self.name(threads["main"]["root"])
        groups = collections.defaultdict(list)
        for s, frames, v in self.samples:
            if worker and s.labels.get("thread_name") == worker["thread_name"]:
                groups["worker"].append((frames, v))
            elif s.labels.get("tid") == s.labels.get("pid") and "tid" in s.labels:
                groups["main"].append((frames, v))
            else:
                groups["other"].append((frames, v))
        checks = [("main", main_root)]
        if worker:
            checks += [("worker", self.name(worker["root"])),
                       ("worker", self.name(worker["function"]))]
        self.say("thread_shares", " ".join(
            "%s=%.1f" % (k, 100.0 * sum(v for _, v in g) / self.total)
            for k, g in sorted(groups.items())))
        for group, name in checks:
            g = groups.get(group, [])
            tot = sum(v for _, v in g)
            hit = sum(v for frames, v in g if self.holds(frames, name))
            fr = hit / tot if tot else 0.0
            self.say("reach %s %s" % (group, name), "%.3f" % fr)
            if not tot:
                self.fail("no samples of the %s thread%s" % (group, (
                    " (thread_name %s)" % worker["thread_name"]) if group == "worker" else ""))
            elif fr < REACH_MIN:
                self.fail("%.1f%% of the %s thread's samples reach %s, need >= %d%%; "
                          "top stack: %s" % (100 * fr, group, name, 100 * REACH_MIN,
                                             self.top_stack(g)))

    def top_stack(self, group):
        c = collections.Counter()
        for frames, v in group:
            c[";".join(ln.name for ln, _ in reversed(frames))] += v
        return c.most_common(1)[0][0][-300:] if c else "none"

    def check_native(self):
        cb = self.name(self.work["callback"]["function"])
        caller = self.name(self.work["callback"]["caller"])
        tot = good = 0
        between = collections.Counter()
        for _, frames, v in self.samples:
            idx = [i for i, (ln, _) in enumerate(frames) if ln.name == cb]
            if not idx:
                continue
            tot += v
            i = idx[0] + 1
            # The callback may be there twice (a perf trampoline's frame beside the walker's).
            while i < len(frames) and frames[i][0].name == cb:
                i += 1
            natives = []
            while i < len(frames) and not is_python(frames[i][0]):
                natives.append(frames[i])
                i += 1
            libc = [ln.name for ln, m in natives if os.path.basename(m).startswith("libc.so")]
            if i < len(frames) and frames[i][0].name == caller and libc:
                good += v
            between[" > ".join(ln.name for ln, _ in natives[-4:]) or "(none)"] += v
        fr = good / tot if tot else 0.0
        self.say("native_between", "%.3f" % fr)
        if between:
            self.say("native_frames", between.most_common(1)[0][0].replace(" ", "_"))
        if not tot:
            return  # check_names said so
        if fr < NATIVE_MIN:
            self.fail("%.1f%% of the samples in %s go through libc (qsort) to %s, need >= %d%%; "
                      "native frames below %s: %s" % (
                          100 * fr, cb, caller, 100 * NATIVE_MIN, cb,
                          "; ".join("%s (%d)" % kv for kv in between.most_common(3))))

    def run(self):
        self.say("samples", self.count)
        if self.count < MIN_SAMPLES:
            self.fail("only %d samples in the profile, need >= %d" % (self.count, MIN_SAMPLES))
            return self.failures
        if not self.check_names() and self.python_names_seen(1) == "none":
            return self.failures  # no Python frame at all: the other checks would only repeat it
        self.check_shares()
        if self.lines:
            self.check_lines()
        self.check_reach()
        if self.kind == "cpu":
            self.check_native()
        return self.failures


def check_absent(p, work):
    """Failures if any Python frame is in the profile."""
    script_names = {expected_name(work, q) for q in work["functions"]} | {"<module>"}
    c = collections.Counter()
    for s in p.samples:
        for ln, _ in p.frames(s):
            if is_python(ln) or ln.name in script_names:
                c["%s %s:%d" % (ln.name, ln.file, ln.line)] += s.values[0]
    if c:
        return ["%d Python frames in the profile of an unsupported version, e.g. %s" % (
            sum(c.values()), ", ".join(k for k, _ in c.most_common(3)))]
    return []


def otlp_frame_types(doc):
    """Function name -> Counter of the profile.frame.type of its locations, from OTLP/JSON."""
    d = doc.get("dictionary", {})
    strings = d.get("stringTable", [])
    funcs = d.get("functionTable", [])
    attrs = d.get("attributeTable", [])

    def string(i):
        return strings[i] if isinstance(i, int) and 0 <= i < len(strings) else ""

    out = collections.defaultdict(collections.Counter)
    for loc in d.get("locationTable", []):
        ftype = "(none)"
        for ai in loc.get("attributeIndices", []):
            a = attrs[ai] if 0 <= ai < len(attrs) else {}
            if string(a.get("keyStrindex", 0)) == "profile.frame.type":
                ftype = a.get("value", {}).get("stringValue", "(not a string)")
        for ln in loc.get("lines", []):
            fi = ln.get("functionIndex", 0)
            f = funcs[fi] if 0 <= fi < len(funcs) else {}
            out[string(f.get("nameStrindex", 0))][ftype] += 1
    return out


def check_otlp(doc, work):
    types = otlp_frame_types(doc)
    failures = []
    want = [expected_name(work, q) for q in work["functions"] if q != "Sleeper.nap"]
    want.append(expected_name(work, work["threads"]["main"]["root"]))
    missing = [name for name in want if not types.get(name)]
    if missing:
        failures.append("no location of %s in the OTLP profile" % ", ".join(missing))
    for name in want:
        got = types.get(name)
        if got and set(got) != {"cpython"}:
            failures.append("locations of %s have profile.frame.type %s, not cpython" % (
                name, ", ".join("%s (%d)" % kv for kv in sorted(got.items()))))
    return failures


# --- self-test: profiles written as pprof -raw prints them ----------------------------------------

SCRIPT = "/w/py_work.py"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
PY = "/usr/bin/python3.11"
CTYPES = "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so"


def fixture_work(version=(3, 11)):
    def f(q, first, last, hot, cpu, wall=0.0):
        return {"qualname": q, "name": q.rsplit(".", 1)[-1], "file": SCRIPT, "first_line": first,
                "last_line": last, "hot_lines": hot, "cpu_share": cpu, "wall_share": wall}
    return {
        "version": list(version), "script": "py_work.py", "mode": "cpu",
        "measured": ["Shapes.area", "crunch", "Worker.spin"],
        "functions": {"Shapes.area": f("Shapes.area", 49, 53, [51, 52], 50.0),
                      "crunch": f("crunch", 56, 60, [58, 59], 25.0),
                      "compare_ints": f("compare_ints", 71, 74, [72, 73, 74], 0.0),
                      "sort_with_qsort": f("sort_with_qsort", 86, 89, [88], 0.0),
                      "Worker.spin": f("Worker.spin", 121, 132, [128, 129], 20.0)},
        "callback": {"function": "compare_ints", "caller": "sort_with_qsort"},
        "threads": {"main": {"root": "<module>"},
                    "worker": {"thread_name": "py-worker", "root": "Thread._bootstrap",
                               "function": "Worker.spin"}},
    }


# Frames as (name, file, line, start, mapping); Python frames have no mapping here.
def pyf(name, line, start, file=SCRIPT):
    return (name, file, line, start, None)


def natf(name, mapping):
    return (name, "", 0, 0, mapping)


MAIN = [pyf("Driver.step", 140, 138), pyf("Driver.round", 150, 145),
        pyf("run_main", 160, 157), pyf("main", 190, 170), pyf("<module>", 240, 1),
        natf("_PyEval_EvalFrameDefault", PY), natf("Py_BytesMain", PY)]
WORKER = [pyf("Thread.run", 975, 970, "/usr/lib/python3.11/threading.py"),
          pyf("Thread._bootstrap_inner", 1038, 1016, "/usr/lib/python3.11/threading.py"),
          pyf("Thread._bootstrap", 995, 990, "/usr/lib/python3.11/threading.py"),
          natf("thread_run", PY), natf("start_thread", LIBC)]
QSORT = [natf("_CallPythonObject", CTYPES), natf("ffi_closure_unix64_inner", CTYPES),
         natf("msort_with_tmp", LIBC), natf("qsort_r", LIBC), natf("ffi_call", CTYPES),
         natf("PyCFuncPtr_call", CTYPES)]


def good_stacks():
    """(count, frames leaf first, labels) adding up to the shares of fixture_work()."""
    main = {"pid": "7", "tid": "7", "thread_name": "python3"}
    worker = {"pid": "7", "tid": "8", "thread_name": "py-worker"}
    return [
        (300, [natf("PyFloat_FromDouble", PY), pyf("Shapes.area", 52, 49)] + MAIN, main),
        (200, [pyf("Shapes.area", 51, 49)] + MAIN, main),
        (250, [pyf("crunch", 59, 56)] + MAIN, main),
        (60, [pyf("compare_ints", 73, 71)] + QSORT + [pyf("sort_with_qsort", 88, 86)] + MAIN,
         main),
        (40, [natf("PyObject_Free", PY)] + MAIN, main),
        (195, [pyf("Worker.spin", 129, 121)] + WORKER, worker),
        (5, [natf("take_gil", PY), pyf("Worker.spin", 127, 121)] + WORKER, worker),
    ]


def raw_text(stacks, types=("samples/count", "cpu/nanoseconds"), period=10000000):
    """The `pprof -raw` text of a profile of these stacks."""
    locs = {}
    maps = {}
    out = ["PeriodType: cpu nanoseconds", "Period: %d" % period, "Samples:", " ".join(types)]
    for count, frames, labels in stacks:
        ids = []
        for fr in frames:
            if fr not in locs:
                locs[fr] = len(locs) + 1
                if fr[4] and fr[4] not in maps:
                    maps[fr[4]] = len(maps) + 1
            ids.append(locs[fr])
        vals = [count] + [count * period] * (len(types) - 1)
        out.append("%s: %s " % ("".join("%11d" % v for v in vals), " ".join(map(str, ids))))
        out.append("                " + " ".join("%s:[%s]" % kv for kv in
                                                sorted(labels.items()) if kv[0] != "pid"
                                                and kv[0] != "tid"))
        out.append("                pid:[%s] tid:[%s]" % (labels["pid"], labels["tid"]))
    out.append("Locations")
    for fr, i in locs.items():
        name, file, line, start, mapping = fr
        m = " M=%d" % maps[mapping] if mapping else ""
        out.append("%6d: 0x%x%s %s %s:%d:0 s=%d" % (i, 0x1000 + i, m, name, file, line, start))
    out.append("Mappings")
    for mapping, i in maps.items():
        out.append("%d: 0x1000/0x2000/0x0 %s  [FN]" % (i, mapping))
    return "\n".join(out) + "\n"


def run_check(stacks, work, kind="cpu"):
    return Checker(pprof_raw.parse(raw_text(stacks)), work, kind).run()


def expect_failure(stacks, work, needle):
    failures = run_check(stacks, work)
    assert any(needle in f for f in failures), "expected %r among %r" % (needle, failures)


def selftest():
    work = fixture_work()
    failures = run_check(good_stacks(), work)
    assert failures == [], failures

    def edit(fn):
        return [(c, [fn(f) for f in frames], lab) for c, frames, lab in good_stacks()]

    # The walker did nothing: only the interpreter's frames.
    expect_failure([(c, [f for f in fr if f[4]], lab) for c, fr, lab in good_stacks()], work,
                   "no function Shapes.area, crunch")
    # Plain names on 3.11, where qualified ones are wanted; accepted on 3.10.
    plain = edit(lambda f: (f[0].rsplit(".", 1)[-1],) + f[1:] if not f[4] else f)
    expect_failure(plain, work, "no function Shapes.area")
    assert run_check(plain, fixture_work((3, 10))) == []
    assert run_check(good_stacks(), fixture_work((3, 10))) == []
    # A share off by more than 5 points: Shapes.area's 200 samples at line 51 given to crunch.
    moved = good_stacks()
    moved[1] = (200, [pyf("crunch", 59, 56)] + MAIN, moved[1][2])
    expect_failure(moved, work, "Shapes.area has 28.6% of the cpu profile (inclusive), the script measured 50.0%")
    # Lines outside the function, a hot line missed, another file, a wrong start line.
    expect_failure(edit(lambda f: (f[0], f[1], 80, f[3], f[4]) if f[0] == "crunch" else f),
                   work, "crunch: only 0.0% of its frames have a line within 56-60")
    expect_failure(edit(lambda f: (f[0], f[1], 57, f[3], f[4]) if f[0] == "crunch" else f),
                   work, "crunch: its most sampled line is 57")
    expect_failure(edit(lambda f: (f[0], "/w/other.py") + f[2:] if f[0] == "crunch" else f),
                   work, "crunch frames name the file other.py")
    expect_failure(edit(lambda f: f[:3] + (50,) + f[4:] if f[0] == "crunch" else f),
                   work, "crunch: start line [50]")
    # Main-thread stacks cut short of <module>; the worker's of Thread._bootstrap.
    cut = good_stacks()
    cut[2] = (cut[2][0], cut[2][1][:3], cut[2][2])
    expect_failure(cut, work, "thread's samples reach <module>, need >= 95%")
    cut = edit(lambda f: ("??",) + f[1:] if f[0] == "Thread._bootstrap" else f)
    expect_failure(cut, work, "no function Thread._bootstrap")
    # No worker thread_name: the thread's samples are missing.
    noname = [(c, fr, dict(lab, thread_name="python3")) for c, fr, lab in good_stacks()]
    expect_failure(noname, work, "no samples of the worker thread")
    # The callback's stack lost its native frames (or libc's among them).
    nonat = edit(lambda f: ("??",) + f[1:4] + (None,) if f in QSORT else f)
    expect_failure([(c, [f for f in fr if f[0] != "??"], lab) for c, fr, lab in nonat], work,
                   "0.0% of the samples in compare_ints go through libc")
    expect_failure(edit(lambda f: f[:4] + (CTYPES,) if f[4] == LIBC else f), work,
                   "go through libc (qsort) to sort_with_qsort")
    # Perf trampolines' frames, as hostprof names them from the perf map.
    tramp = edit(lambda f: ("py::%s:%s" % (f[0], f[1]), "", 0, 0, "[anon]") if not f[4] else f)
    p = pprof_raw.parse(raw_text(tramp))
    assert Checker(p, work).run(), "trampoline names taken for the walker's"
    rename_trampolines(p)
    assert Checker(p, work, lines=False).run() == []
    # Too few samples.
    expect_failure([(1, fr, lab) for _, fr, lab in good_stacks()], work, "only 7 samples")

    # absent: an unsupported version leaves only native frames; one Python frame is too many.
    native_only = [(c, [f for f in fr if f[4]], lab) for c, fr, lab in good_stacks()]
    assert check_absent(pprof_raw.parse(raw_text(native_only)), work) == []
    assert check_absent(pprof_raw.parse(raw_text(good_stacks())), work)

    # OTLP frame types.
    def otlp(ftype):
        strings = ["", "profile.frame.type", ftype, "native", "_PyEval_EvalFrameDefault"]
        names = [expected_name(work, q) for q in work["functions"]] + ["<module>"]
        funcs = [{}] + [{"nameStrindex": len(strings) + i} for i in range(len(names))]
        locs = [{}] + [{"lines": [{"functionIndex": i + 1}], "attributeIndices": [1]}
                       for i in range(len(names))]
        funcs.append({"nameStrindex": 4})
        locs.append({"lines": [{"functionIndex": len(funcs) - 1}], "attributeIndices": [2]})
        return {"dictionary": {"stringTable": strings + names, "functionTable": funcs,
                               "locationTable": locs, "attributeTable": [
                                   {}, {"keyStrindex": 1, "value": {"stringValue": ftype}},
                                   {"keyStrindex": 1, "value": {"stringValue": "native"}}]}}
    assert check_otlp(otlp("cpython"), work) == []
    bad = check_otlp(otlp("native"), work)
    assert bad and "locations of Shapes.area have profile.frame.type native (1), not cpython" \
        in bad[0], bad
    print("selftest ok")


def main(argv):
    if argv[:1] == ["selftest"]:
        selftest()
        return 0
    if len(argv) < 3 or argv[0] not in ("check", "absent", "otlp"):
        sys.stderr.write(__doc__)
        return 2
    cmd, raw, work_path = argv[0], argv[1], argv[2]
    kind, tol, trampolines = "cpu", 5.0, False
    rest = argv[3:]
    while rest:
        if rest[0] == "--perf-trampolines":
            trampolines = True
            rest = rest[1:]
            continue
        if rest[0] == "--type" and len(rest) > 1 and rest[1] in ("cpu", "wall"):
            kind = rest[1]
        elif rest[0] == "--tol" and len(rest) > 1:
            tol = float(rest[1])
        else:
            sys.stderr.write("py_check.py: unknown argument %r\n" % rest[0])
            return 2
        rest = rest[2:]
    try:
        with open(work_path, encoding="utf-8") as f:
            work = json.load(f)
        if cmd == "otlp":
            with open(raw, encoding="utf-8") as f:
                failures = check_otlp(json.load(f), work)
            for msg in failures:
                print("FAIL %s" % msg)
            return 1 if failures else 0
        with open(raw, encoding="utf-8", errors="replace") as f:
            p = pprof_raw.parse(f.read())
    except (OSError, ValueError, pprof_raw.RawError) as e:
        print("py_check.py: %s" % e, file=sys.stderr)
        return 2
    if cmd == "absent":
        failures = check_absent(p, work)
        print("samples %d" % sum(s.values[0] for s in p.samples))
    else:
        if trampolines:
            rename_trampolines(p)
        c = Checker(p, work, kind, tol, lines=not trampolines)
        failures = c.run()
        print("\n".join(c.out))
    for msg in failures:
        print("FAIL %s" % msg)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

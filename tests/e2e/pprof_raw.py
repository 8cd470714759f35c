#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Read the text that `go tool pprof -raw` prints for a profile, for the end-to-end tests.

Going through pprof (rather than decoding the protobuf here) checks that the real pprof tool
accepts hostprof's output. The format is pprof's Profile.String(): a `Samples:` header line naming
the sample types (`samples/count cpu/nanoseconds`), one line per sample (`VALUES...: LOC_IDS...`)
followed by its label lines (`key:[v] key:[v]`, string labels then numeric ones), then
`Locations` (`ID: 0xADDR M=N func file:line s=N`, inlined callers on the following lines) and
`Mappings`.

Usage: pprof_raw.py COMMAND RAWFILE [ARGS]
  total RAWFILE [TYPE]        sum of the values of sample type TYPE (default: samples)
  funcs RAWFILE               function names by samples (self), largest first
  threads RAWFILE FUNC        for the samples whose stack has FUNC: samples per thread_name, tid,
                              pid and comm label
  labels RAWFILE FUNC KEY...  for the samples whose stack has FUNC: samples per combination of
                              the labels KEY... (`-` for one a sample does not carry), as
                              `N key=value,key=value`
  selftest                    check this parser against a built-in fixture
"""
import collections
import re
import sys

SAMPLE_RE = re.compile(r"^((?:\s+-?\d+)+): ?(.*)$")
LABEL_RE = re.compile(r"(\S+?):\[([^\]]*)\]")
LOC_RE = re.compile(r"^\s*(\d+): (0x[0-9a-fA-F]+) (?:M=\d+ )?(?:\[F\] )?(.*)$")
# `name file:line s=N`, `(systemname)` may follow; `??` when the line has no function.
LINE_RE = re.compile(r"^(.*?) (\S*):-?\d+ s=-?\d+(?:\(.*\))?$")
# The same with its parts: name, file, line, then `:column` (newer pprof prints it) and start line.
LINE_PARTS_RE = re.compile(r"^(.*?) (\S*?):(-?\d+)(?::-?\d+)? s=(-?\d+)(?:\(.*\))?$")
MAPPING_RE = re.compile(r"^\s*(\d+): 0x[0-9a-fA-F]+/0x[0-9a-fA-F]+/0x[0-9a-fA-F]+ ?(\S*)")


class RawError(Exception):
    pass


class Sample:
    def __init__(self, values, locs):
        self.values = values
        self.locs = locs
        self.labels = {}

    def __repr__(self):
        return "Sample(%r, %r, %r)" % (self.values, self.locs, self.labels)


class Profile:
    def __init__(self):
        self.types = []
        self.samples = []
        self.locations = {}  # id -> function names, leaf (innermost inlined) first
        self.lines = {}  # id -> Line(name, file, line, start) per function, as locations
        self.loc_mapping = {}  # id -> mapping id (absent: the location has no mapping)
        self.mappings = {}  # mapping id -> file
        self.duration_s = 0.0  # the `Duration:` header (pprof prints seconds, "8.03" or "3.1s")

    def type_index(self, name):
        for i, t in enumerate(self.types):
            if t.split("/")[0] == name:
                return i
        raise RawError("no sample type %r (types: %s)" % (name, " ".join(self.types)))

    def total(self, name):
        i = self.type_index(name)
        return sum(s.values[i] for s in self.samples)

    def frames(self, sample):
        """(Line, mapping file) of a sample's frames, leaf first; the file is "" without one."""
        out = []
        for loc in sample.locs:
            mapping = self.mappings.get(self.loc_mapping.get(loc), "")
            for ln in self.lines.get(loc) or [Line("??", "", 0, 0)]:
                out.append((ln, mapping))
        return out

    def stack(self, sample):
        """Function names of a sample, leaf first; `??` for a location without function."""
        names = []
        for loc in sample.locs:
            names.extend(self.locations.get(loc, ["??"]) or ["??"])
        return names


class Line:
    def __init__(self, name, file, line, start):
        self.name, self.file, self.line, self.start = name, file, line, start

    def __repr__(self):
        return "Line(%r, %r, %d, %d)" % (self.name, self.file, self.line, self.start)


def line_parts(text):
    """A location line's function name, file, line and start line (`??`, "", 0, 0 if none)."""
    text = text.strip()
    m = LINE_PARTS_RE.match(text)
    if m:
        return Line(m.group(1), m.group(2), int(m.group(3)), int(m.group(4)))
    return Line(function_name(text), "", 0, 0)


def function_name(text):
    text = text.strip()
    if text == "??" or text == "":
        return "??"
    m = LINE_RE.match(text)
    return m.group(1) if m else text


def parse(text):
    p = Profile()
    section = None
    cur = None
    loc_id = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if section is None and line.startswith("Duration: "):
            try:
                p.duration_s = float(line.split()[1].rstrip("s"))
            except ValueError:
                raise RawError("line %d: a duration pprof does not print: %r" % (lineno, line))
            continue
        if line == "Samples:":
            section = "header"
            continue
        if line == "Locations":
            section = "locations"
            continue
        if line == "Mappings":
            section = "mappings"
            continue
        if section == "header":
            p.types = [t.replace("[dflt]", "") for t in line.split()]
            section = "samples"
            continue
        if section == "samples":
            m = SAMPLE_RE.match(line)
            if m:
                values = [int(v) for v in m.group(1).split()]
                if len(values) != len(p.types):
                    raise RawError("line %d: %d values for %d sample types"
                                   % (lineno, len(values), len(p.types)))
                cur = Sample(values, [int(x) for x in m.group(2).split()])
                p.samples.append(cur)
                continue
            pairs = LABEL_RE.findall(line)
            if cur is not None and pairs and line.startswith(" "):
                for k, v in pairs:
                    cur.labels[k] = v
                continue
            raise RawError("line %d: neither a sample nor labels: %r" % (lineno, line[:200]))
        if section == "locations":
            m = LOC_RE.match(line)
            if m and not line.startswith("             " + " "):
                loc_id = int(m.group(1))
                p.locations[loc_id] = [function_name(m.group(3))] if m.group(3).strip() else []
                p.lines[loc_id] = [line_parts(m.group(3))] if m.group(3).strip() else []
                mid = re.search(r" M=(\d+) ", line)
                if mid:
                    p.loc_mapping[loc_id] = int(mid.group(1))
            elif loc_id is not None and line.strip():
                p.locations[loc_id].append(function_name(line))
                p.lines[loc_id].append(line_parts(line))
        if section == "mappings":
            m = MAPPING_RE.match(line)
            if m:
                p.mappings[int(m.group(1))] = m.group(2)
    if not p.types:
        raise RawError("no `Samples:` section")
    return p


def threads(p, func):
    """Counters over the samples whose stack contains func: by thread_name, tid, pid, comm."""
    i = p.type_index("samples")
    out = {k: collections.Counter() for k in ("thread_name", "tid", "pid", "comm")}
    for s in p.samples:
        if func in p.stack(s):
            for k in out:
                out[k][s.labels.get(k, "(none)")] += s.values[i]
    return out


def label_sets(p, func, keys):
    """Samples whose stack contains func, counted by their values of the labels keys."""
    i = p.type_index("samples")
    c = collections.Counter()
    for s in p.samples:
        if func in p.stack(s):
            c[",".join("%s=%s" % (k, s.labels.get(k, "-")) for k in keys)] += s.values[i]
    return c


FIXTURE = """\
PeriodType: cpu nanoseconds
Period: 10101010
Duration: 3.1s
Samples:
samples/count cpu/nanoseconds
          3   30303030: 1 2 3 
                comm:[cpu_threads] thread_name:[hp-worker]
                pid:[100] tid:[101]
          2   20202020: 4 3 
                comm:[cpu_threads] thread_name:[cpu_threads]
                pid:[100] tid:[100 count]
          1   10101010: 5 
Locations
     1: 0x1234 M=1 worker_burn /src/cpu_threads.c:50 s=48
     2: 0x1300 M=1 spin /src/x.h:3 s=0
             start_thread :0 s=0
     3: 0x1400 M=1 clone3 :0 s=0
     4: 0x1500 M=1 main_burn /src/cpu_threads.c:60 s=58
     5: 0xffffffff81000000 
Mappings
1: 0x1000/0x2000/0x0 /bin/cpu_threads  [FN]
"""


def selftest():
    p = parse(FIXTURE)
    assert p.types == ["samples/count", "cpu/nanoseconds"], p.types
    assert len(p.samples) == 3
    assert p.total("samples") == 6 and p.total("cpu") == 60606060
    assert p.locations[2] == ["spin", "start_thread"], p.locations
    assert p.stack(p.samples[0]) == ["worker_burn", "spin", "start_thread", "clone3"]
    assert p.stack(p.samples[2]) == ["??"], p.stack(p.samples[2])
    f = p.frames(p.samples[0])
    assert [(ln.name, ln.file, ln.line, ln.start, m) for ln, m in f] == [
        ("worker_burn", "/src/cpu_threads.c", 50, 48, "/bin/cpu_threads"),
        ("spin", "/src/x.h", 3, 0, "/bin/cpu_threads"),
        ("start_thread", "", 0, 0, "/bin/cpu_threads"),
        ("clone3", "", 0, 0, "/bin/cpu_threads")], f
    ln = line_parts("Shapes.area /w/py_work.py:52:7 s=49")
    assert (ln.name, ln.file, ln.line, ln.start) == ("Shapes.area", "/w/py_work.py", 52, 49), ln
    ln = line_parts("[unknown] /usr/bin/python3.11+0x1cfae4 :0:0 s=0")
    assert (ln.name, ln.file, ln.line) == ("[unknown] /usr/bin/python3.11+0x1cfae4", "", 0), ln
    t = threads(p, "worker_burn")
    assert t["thread_name"] == {"hp-worker": 3} and t["tid"] == {"101": 3}, t
    t = threads(p, "main_burn")
    assert t["tid"] == {"100 count": 2}, t
    for bad in ["Samples:\nsamples/count cpu/nanoseconds\n 1: 1\n",
                "Samples:\nsamples/count\nbogus\n"]:
        try:
            parse(bad)
        except RawError:
            continue
        raise AssertionError("accepted %r" % bad)
    print("selftest ok")


def usage():
    sys.stderr.write(__doc__)
    return 2


def main(argv):
    if argv[:1] == ["selftest"]:
        selftest()
        return 0
    if len(argv) < 2:
        return usage()
    cmd, path, args = argv[0], argv[1], argv[2:]
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            p = parse(f.read())
        if cmd == "total":
            print("%s %d" % (args[0] if args else "samples",
                             p.total(args[0] if args else "samples")))
        elif cmd == "funcs":
            i = p.type_index("samples")
            c = collections.Counter()
            for s in p.samples:
                c[p.stack(s)[0] if s.locs else "(no frames)"] += s.values[i]
            for name, n in c.most_common():
                print("%s %d" % (name, n))
        elif cmd == "threads" and len(args) == 1:
            for k, counter in threads(p, args[0]).items():
                for v, n in counter.most_common():
                    print("%s %s %d" % (k, v.replace(" ", "_"), n))
        elif cmd == "labels" and len(args) >= 2:
            for combo, n in label_sets(p, args[0], args[1:]).most_common():
                print("%d %s" % (n, combo))
        else:
            return usage()
    except (OSError, RawError) as e:
        print("pprof_raw.py: %s: %s" % (path, e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

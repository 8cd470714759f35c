#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Judge the kernel matrix's captures of one kernel (the files tests/kernels/guest.sh wrote).

Usage: check.py DIR KERNEL_RELEASE [LABEL]

Prints `PASS label check: ...` or `FAIL label check: ...` per check and exits 1 if any failed.
What a kernel must show depends on what it has, and the checks expect exactly that:
- the .eh_frame walker runs under bpf_loop from Linux 5.17; before, the CPU samples walk across
  tail calls, said in one line, and the off-CPU and lock stacks come from frame pointers;
- the kernel lock tracepoints need 5.19; without them the contention profile has futex waits only
  and says so;
- with wall on, the sched_switch program times the futex waits where it has the bpf_loop walker
  (5.17+), and the summary says so; before, the futex calls' programs do.

The checks, each on the guest's own files:
  cpu_split     cpu_ratio's burn_a/b/c self shares within 5 points of the shares of CPU time the
                workload measured in each (1/6, 2/6, 3/6 by design; under TCG one loop may run
                slower than the same loop elsewhere)
  cpu_main      >= 95% of cpu_ratio's samples have main in their stack
  cpu_formats   go tool pprof reads the pprof file (same sample total as the folded file), and
                protoc decodes the OTLP file against the repository's schema, naming burn_c
  nofp          nofp's leaves split 1:2:3 within 5 points; >= 95% reach main (before 5.17
                hostprof said it walks with tail calls; never the frame-pointer fallback)
  python        python3: >= 95% of the samples reach Py_BytesMain through its Python frames
                <module> and down, >= 90% hold all 41 frames of down (walked in BPF); before
                5.17 (no bpf_loop) through _PyEval_EvalFrameDefault instead
  wall          sleeper's wall profile: compute 30% and the nanosleep path 70% (+-5), the wall
                total one window (+-5%); its off-CPU time in nanosleep 70% of the window
                (+-10); before 5.15 the line that mutex waits cannot be told apart
  contention    --types wall,contention: the futex_wait total within 20% of what the mutex
                workload measured itself, timed where this kernel should (above); the
                kernel-lock line where the kernel has no lock tracepoints
  agent         the agent wrote at least two windows and exited 0 on SIGTERM; a window decodes
                with go tool pprof and holds cpu_ratio's burn_c
  thread_ctx    otel_ctx_lib's OpenTelemetry thread contexts: >= 95% of the cpu samples in
                in_span_a carry span a1a1...; none in no_span; >= 95% of the wall samples of
                in_span_wait carry their thread's span (read from the TLS pointer, through a
                TLSDESC library's static TLS)
  go_labels     go_labels_newest's goroutine labels: >= 95% of the samples in main.inSpanA carry
                span a1a1... and its trace, none in main.noSpan; on arm64 (whose Go frames are
                not walked) spans A, B and none each on >= 15% of all samples, before 5.15 (g
                is in x28, which BPF reads through bpf_task_pt_regs) no labels, and hostprof
                says why
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import folded  # noqa: E402
import pprof_raw  # noqa: E402

SHARE_TOL = 5.0
FALLBACK_FP = "user stacks come from frame pointers only"
TAIL_CALLS = "walk user stacks with tail calls"
FALLBACK_LOCKS = "no lock:contention_begin tracepoint"
AT_SWITCHES = "timed by the off-CPU program at the scheduler's switches"
FALLBACK_STATE = "no bpf_task_pt_regs (Linux 5.15+): off-CPU waits"
OTLP_REQ = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"
OTLP_PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"


class Failed(Exception):
    pass


def kernel_version(release):
    m = re.match(r"(\d+)\.(\d+)", release)
    if not m:
        raise ValueError("not a kernel release: %r" % release)
    return int(m.group(1)), int(m.group(2))


class Capture:
    """The files of one capture: NAME.rc, NAME.stdout, NAME.stderr and its outputs."""

    def __init__(self, d, name):
        self.d = d
        self.name = name

    def path(self, suffix):
        return os.path.join(self.d, self.name + suffix)

    def text(self, suffix):
        try:
            with open(self.path(suffix), encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def require_ok(self):
        """Raises Failed unless the capture ran and exited 0; the reason quotes its stderr."""
        rc = self.text(".rc").split()
        if not rc:
            raise Failed("the guest wrote no %s.rc: the capture did not run (the boot log "
                         "says how far the guest got)" % self.name)
        if rc[0] != "0":
            errors = [line for line in self.text(".stderr").splitlines()
                      if "error" in line or "warning" in line]
            raise Failed("hostprof exited %s; %s" % (rc[0], " | ".join(errors[-3:]) or
                                                     "stderr: " + self.text(".stderr")[-300:]))

    def folded(self, suffix, comm=None):
        if not os.path.exists(self.path(suffix)):
            raise Failed("no %s%s was written" % (self.name, suffix))
        try:
            return folded.load(self.path(suffix), comm)
        except folded.FoldedError as e:
            raise Failed("%s%s is not folded: %s" % (self.name, suffix, e))


def pct(x):
    return "%.1f%%" % (100 * x)


def pprof(path):
    """The profile as pprof_raw reads `go tool pprof -raw`: proof that pprof itself accepts it."""
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"))
    r = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        raise Failed("go tool pprof cannot read %s: %s" % (os.path.basename(path),
                                                         r.stderr.strip()[-300:]))
    return pprof_raw.parse(r.stdout)


def check_shares(rows, want, what):
    counts, share, total = folded.shares(rows, list(want))
    if total < 300:
        raise Failed("only %d samples in %s (need >= 300 to measure shares); leaves: %s"
                     % (total, " ".join(want), folded.ranked(rows, folded.leaf_of, 5)))
    measured = " ".join("%s=%s (%d)" % (f, pct(share[f]), counts[f]) for f in want)
    off = [f for f, w in want.items() if abs(100 * share[f] - w) > SHARE_TOL]
    if off:
        raise Failed("%s self shares %s; expected %s%% +-%g points" % (
            what, measured, "/".join("%g" % w for w in want.values()), SHARE_TOL))
    return "%s of %d samples" % (measured, total)


def reach(rows, *frames):
    """Fraction of samples whose stack holds all of frames."""
    return folded.fraction(rows, lambda fs: all(f in fs for f in frames))


class Kernel:
    def __init__(self, d, release):
        self.d = d
        self.release = release
        self.version = kernel_version(release)
        self.tail_calls = self.version < (5, 17)
        self.kernel_locks = self.version >= (5, 19)
        self.arm64 = "arm64" in release or "aarch64" in release

    def walker_said(self, c):
        """Raises Failed unless the capture walked as this kernel should, and said so where
        that is not the default (bpf_loop)."""
        said = c.text(".stderr")
        if FALLBACK_FP in said:
            raise Failed("hostprof fell back to frame pointers: %s"
                         % [line for line in said.splitlines() if FALLBACK_FP in line][0])
        if self.tail_calls and TAIL_CALLS not in said:
            raise Failed("no bpf_loop here, yet hostprof did not say it would %s" % TAIL_CALLS)

    def check_cpu_split(self):
        c = Capture(self.d, "cpu_fp")
        c.require_ok()
        rows = c.folded(".folded", "cpu_ratio")
        truth = {}
        for line in c.text(".truth").splitlines():
            name, ns = line.split()
            truth[name] = int(ns)
        if sorted(truth) != ["burn_a", "burn_b", "burn_c"] or not all(truth.values()):
            raise Failed("cpu_ratio wrote no measurement of its own (cpu_fp.truth: %r)"
                         % c.text(".truth")[:100])
        spent = sum(truth.values())
        want = {f: 100 * ns / spent for f, ns in truth.items()}
        return check_shares(rows, want, "cpu_ratio") + " (the workload measured %s; designed " \
            "16.7/33.3/50.0)" % "/".join("%.1f" % want[f] for f in sorted(want))

    def check_cpu_main(self):
        c = Capture(self.d, "cpu_fp")
        c.require_ok()
        hit, total, fr = reach(c.folded(".folded", "cpu_ratio"), "main")
        if total == 0 or fr < 0.95:
            raise Failed("%d of %d cpu_ratio samples (%s) have main in the stack, need >= 95%%"
                         % (hit, total, pct(fr)))
        return "%d of %d cpu_ratio samples (%s) have main in the stack" % (hit, total, pct(fr))

    def check_cpu_formats(self):
        c = Capture(self.d, "cpu_fp")
        c.require_ok()
        n_folded = folded.total(c.folded(".folded"))
        n_pprof = pprof(c.path(".pb.gz")).total("samples")
        if n_pprof != n_folded:
            raise Failed("pprof holds %d samples, the folded file %d" % (n_pprof, n_folded))
        with open(c.path(".otlp.pb"), "rb") as f:
            r = subprocess.run(["protoc", "--decode=" + OTLP_REQ, "--proto_path",
                                os.path.join(ROOT, "proto"), OTLP_PROTO], stdin=f,
                               capture_output=True)
        if r.returncode != 0:
            raise Failed("protoc cannot decode cpu_fp.otlp.pb: %s"
                         % r.stderr.decode(errors="replace").strip()[-300:])
        if b'"burn_c"' not in r.stdout:
            raise Failed("the OTLP request does not name burn_c")
        return "pprof and folded agree on %d samples; the OTLP request decodes and names burn_c" \
            % n_pprof

    def check_nofp(self):
        c = Capture(self.d, "cpu_nofp")
        c.require_ok()
        rows = c.folded(".folded", "nofp")
        split = check_shares(rows, {"nofp_leaf_a": 16.7, "nofp_leaf_b": 33.3,
                                    "nofp_leaf_c": 50.0}, "nofp")
        hit, total, fr = reach(rows, "main")
        self.walker_said(c)
        if fr < 0.95:
            raise Failed("%s of nofp's samples reach main with the walker, need >= 95%%; %s"
                         % (pct(fr), split))
        return "%s; %s reach main (walked with .eh_frame tables%s)" % (
            split, pct(fr), ", across tail calls" if self.tail_calls else "")

    def check_python(self):
        c = Capture(self.d, "python")
        c.require_ok()
        rows = c.folded(".folded", "python3")
        total = folded.total(rows)
        if total < 300:
            raise Failed("only %d python3 samples" % total)
        self.walker_said(c)
        if self.tail_calls:
            # No bpf_loop: Python's frames are not walked, the interpreter's native ones are.
            hit, total, fr = reach(rows, "Py_BytesMain", "_PyEval_EvalFrameDefault")
            if fr < 0.95:
                raise Failed("%s of %d python3 samples reach Py_BytesMain through "
                             "_PyEval_EvalFrameDefault, need >= 95%%; top: %s"
                             % (pct(fr), total, folded.ranked(rows, folded.leaf_of, 3)))
            return "%s of %d python3 samples reach Py_BytesMain through " \
                "_PyEval_EvalFrameDefault (Python frames need bpf_loop, 5.17)" % (pct(fr), total)
        # Python frames walked in BPF: down() recurses 40 deep under <module>, so a sample in
        # it holds 41 frames of down, between <module> and the native Py_BytesMain.
        hit, total, fr = reach(rows, "Py_BytesMain", "<module>", "down")
        if fr < 0.95:
            raise Failed("%s of %d python3 samples reach Py_BytesMain through <module> and "
                         "down, need >= 95%%; top: %s"
                         % (pct(fr), total, folded.ranked(rows, folded.leaf_of, 3)))
        _, _, deep = folded.fraction(rows, lambda fs: fs.count("down") == 41)
        if deep < 0.90:
            raise Failed("%s of the samples hold down's 41 frames, need >= 90%%" % pct(deep))
        return "%s of %d python3 samples reach Py_BytesMain through <module> and down; %s " \
            "hold its 41 frames" % (pct(fr), total, pct(deep))

    def in_compute(self, frames):
        """Is this a stack of sleeper's compute()? Before 5.17 the wall stacks come from frame
        pointers, which lose compute's frame under libc's clock_gettime (libc keeps none); where
        the clock is not read in the vDSO (qemu's HPET on 5.10) that is a tenth of the time.
        There, those stacks count as compute, their only caller but for one call per cycle."""
        if "compute" in frames:
            return True
        return self.tail_calls and any(f.startswith("clock_gettime") for f in frames)

    def check_wall(self):
        c = Capture(self.d, "wall")
        c.require_ok()
        m = re.search(r"^Captured ([0-9.]+) s ", c.text(".stdout"), re.M)
        if not m:
            raise Failed("the summary has no 'Captured N s' line")
        window_ns = float(m.group(1)) * 1e9
        if not window_ns:
            raise Failed("an empty capture (the sleeper exited before hostprof was attached?): %s"
                         % " | ".join(c.text(".stderr").splitlines()[-3:]))
        wall = c.folded(".wall.folded", "sleeper")
        off = c.folded(".offcpu.folded", "sleeper")
        t = folded.total(wall)
        compute = sum(n for _, fs, n in wall if self.in_compute(fs)) / t if t else 0
        sleep = sum(n for _, fs, n in wall if any("nanosleep" in f for f in fs)) / t if t else 0
        # Only the sleeps: time the thread spent preempted is off-CPU too, and depends on the
        # rest of the machine.
        off_share = sum(n for _, fs, n in off if any("nanosleep" in f for f in fs)) / window_ns
        if abs(100 * compute - 30) > 5 or abs(100 * sleep - 70) > 5:
            raise Failed("wall shares compute %s, nanosleep path %s; expected 30/70 +-5"
                         % (pct(compute), pct(sleep)))
        if abs(t / window_ns - 1) > 0.05:
            raise Failed("the wall total is %.3f of the window, expected 1 +-5%%"
                         % (t / window_ns))
        if abs(100 * off_share - 70) > 10:
            raise Failed("off-CPU in nanosleep is %s of the window, expected 70%% +-10"
                         % pct(off_share))
        said = FALLBACK_STATE in c.text(".stderr")
        if said != (self.version < (5, 15)):
            raise Failed("the line '%s' was %s on %s" % (FALLBACK_STATE, "printed" if said else
                                                          "not printed", self.release))
        return "wall: compute %s, nanosleep %s, total %.3f x the window; off-CPU in nanosleep " \
            "%s of it" % (
            pct(compute), pct(sleep), t / window_ns, pct(off_share))

    def check_contention(self):
        c = Capture(self.d, "contention")
        c.require_ok()
        measured = c.text(".measured").strip()
        if not measured:
            raise Failed("the mutex workload wrote no measurement")
        theirs = int(measured)
        p = pprof(c.path(".contention.pb.gz"))
        i = p.type_index("contention")
        kinds = {}
        for s in p.samples:
            k = s.labels.get("lock_kind", "(none)")
            kinds[k] = kinds.get(k, 0) + s.values[i]
        mine = kinds.get("futex_wait", 0)
        if not theirs or abs(mine / theirs - 1) > 0.2:
            raise Failed("futex_wait total %d ns, the workload measured %d ns (need within "
                         "20%%); kinds: %s" % (mine, theirs, kinds))
        said = FALLBACK_LOCKS in c.text(".stderr")
        if not self.kernel_locks and not said:
            raise Failed("no lock tracepoints here, yet hostprof did not say '%s'"
                         % FALLBACK_LOCKS)
        if self.kernel_locks and said:
            raise Failed("hostprof says '%s' on a kernel that has them" % FALLBACK_LOCKS)
        at_switches = AT_SWITCHES in c.text(".stdout")
        if at_switches == self.tail_calls:
            raise Failed("futex waits timed %s, on a kernel %s bpf_loop" % (
                "at the switches" if at_switches else "at the futex calls",
                "without" if self.tail_calls else "with"))
        return "futex_wait %d ns vs %d ns measured (%+.1f%%), timed %s%s" % (
            mine, theirs, 100 * (mine / theirs - 1),
            "at the switches" if at_switches else "at the futex calls",
            "" if self.kernel_locks else "; kernel locks off, said so")

    def check_agent(self):
        c = Capture(self.d, "agent")
        c.require_ok()
        windows = [line for line in c.text(".files").splitlines() if ".pb.gz" in line]
        if len(windows) < 2:
            raise Failed("%d windows written in the 11 s after the agent said it profiles, at a "
                         "3 s interval, need >= 2" % len(windows))
        p = pprof(c.path(".window.pb.gz"))
        i = p.type_index("samples")
        burn = sum(s.values[i] for s in p.samples if "burn_c" in p.stack(s))
        if burn == 0:
            raise Failed("the agent's window has no sample in burn_c (%d samples)"
                         % p.total("samples"))
        return "%d windows; the first holds %d samples, %d in burn_c" % (
            len(windows), p.total("samples"), burn)

    def check_thread_ctx(self):
        c = Capture(self.d, "thread_ctx")
        c.require_ok()
        cpu = pprof(c.path(".cpu.pb.gz"))
        wall = pprof(c.path(".wall.pb.gz"))

        def spans(p, func):
            i = p.type_index("samples")
            out = {}
            for s in p.samples:
                if func in p.stack(s):
                    k = s.labels.get("span_id", "-")
                    out[k] = out.get(k, 0) + s.values[i]
            return out

        a, none, w = spans(cpu, "in_span_a"), spans(cpu, "no_span"), spans(wall, "in_span_wait")
        na, nn, nw = sum(a.values()), sum(none.values()), sum(w.values())
        ha = a.get("a1a1a1a1a1a1a1a1", 0)
        hw = w.get("a1a1a1a1a1a1a1a1", 0) + w.get("b2b2b2b2b2b2b2b2", 0)
        if na < 20 or nn < 20 or nw < 10:
            raise Failed("too few samples: in_span_a %d, no_span %d, in_span_wait (wall) %d"
                         % (na, nn, nw))
        if ha < 0.95 * na or none.get("-", 0) != nn or hw < 0.95 * nw:
            raise Failed("in_span_a %s, no_span %s, in_span_wait %s (want span a1.. on >= 95%%, "
                         "none, a span on >= 95%%)" % (a, none, w))
        return "span A on %d of %d in_span_a samples, none on %d no_span ones; wall: %d of %d " \
            "waits in a span carry it" % (ha, na, nn, hw, nw)

    def check_go_labels(self):
        c = Capture(self.d, "go_labels")
        c.require_ok()
        p = pprof(c.path(".pb.gz"))
        i = p.type_index("samples")
        a, none = {}, {}
        for s in p.samples:
            stack = p.stack(s)
            for func, out in (("main.inSpanA", a), ("main.noSpan", none)):
                if func in stack:
                    k = (s.labels.get("span_id", "-"), s.labels.get("trace_id", "-"))
                    out[k] = out.get(k, 0) + s.values[i]
        na, nn = sum(a.values()), sum(none.values())
        if self.arm64 and self.version < (5, 15):
            # No labels to read (and Go's stacks on this kernel's tail-call walker are short,
            # so the functions may not be in them): every sample must be without a span.
            said = "goroutine labels not read" in c.text(".stderr") and \
                "bpf_task_pt_regs" in c.text(".stderr")
            spans = sum(1 for s in p.samples if "span_id" in s.labels)
            if spans or not said:
                raise Failed("arm64 before 5.15: want no labels and the reason said; got %d "
                             "samples with a span, said: %s" % (spans, said))
            return "no labels (g in x28 needs bpf_task_pt_regs), and hostprof says so"
        if self.arm64:
            # Go's arm64 frames are not walked here (Go keeps its frame pointer below its frame
            # and writes no .eh_frame): judge the labels over all samples. Each goroutine spends
            # half its time in its span.
            combos = {}
            for s in p.samples:
                k = (s.labels.get("span_id", "-"), s.labels.get("trace_id", "-"))
                combos[k] = combos.get(k, 0) + s.values[i]
            total = sum(combos.values())
            want_a = ("a1a1a1a1a1a1a1a1", "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01")
            want_b = ("b2b2b2b2b2b2b2b2", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b02")
            shares = [combos.get(k, 0) / max(total, 1) for k in (want_a, want_b, ("-", "-"))]
            if total < 100 or min(shares) < 0.15 or \
                    set(combos) - {want_a, want_b, ("-", "-")}:
                raise Failed("want spans A and B and no span on >= 15%% of %d samples each, "
                             "nothing else: %s" % (total, combos))
            return "spans A, B and none on %.0f%%, %.0f%%, %.0f%% of %d samples" % (
                100 * shares[0], 100 * shares[1], 100 * shares[2], total)
        if na < 20 or nn < 20:
            raise Failed("too few samples: main.inSpanA %d, main.noSpan %d" % (na, nn))
        if none.get(("-", "-"), 0) != nn:
            raise Failed("main.noSpan samples carry spans: %s" % none)
        ha = a.get(("a1a1a1a1a1a1a1a1", "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01"), 0)
        if ha < 0.95 * na:
            raise Failed("main.inSpanA: %d of %d samples carry span A: %s" % (ha, na, a))
        return "span A on %d of %d main.inSpanA samples, none on %d main.noSpan ones" % (
            ha, na, nn)

    CHECKS = ["cpu_split", "cpu_main", "cpu_formats", "nofp", "python", "wall", "contention",
              "agent", "thread_ctx", "go_labels"]
    # The capture each check reads, where it is not the check's own name.
    CAPTURE_OF = {"cpu_split": "cpu_fp", "cpu_main": "cpu_fp", "cpu_formats": "cpu_fp",
                  "nofp": "cpu_nofp"}

    def workload_ended(self, check):
        """What the guest wrote when the check's workload ended before its capture did."""
        text = Capture(self.d, self.CAPTURE_OF.get(check, check)).text(".workload").strip()
        return " | ".join(line for line in text.splitlines() if line.strip())[-800:]


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    d, release = argv[0], argv[1]
    label = argv[2] if len(argv) == 3 else release
    k = Kernel(d, release)
    failed = 0
    for name in Kernel.CHECKS:
        try:
            print("PASS %s %s: %s" % (label, name, getattr(k, "check_" + name)()))
        except (Failed, OSError, pprof_raw.RawError) as e:
            ended = k.workload_ended(name)
            print("FAIL %s %s: %s%s" % (label, name, e, " [" + ended + "]" if ended else ""))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

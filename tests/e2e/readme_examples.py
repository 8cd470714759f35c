#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run the README's command examples and check its sample outputs against what hostprof prints.

Every ```sh block of the README that names build/hostprof carries an HTML comment right above it:

  <!-- test: run -->           every command of the block is run (as root, in a scratch dir)
  <!-- test: skip REASON -->   not run, and REASON says why (needs a cluster, a browser...)

and a sample output (a plain ``` block) says whose output it is:

  <!-- test: output of N -->      the Nth command of the last run block
  <!-- test: output of: CMD -->   CMD, run for this purpose (same rewriting as below)

A block without its comment fails the check, so a new example cannot slip past it.

What runs is the README's own text, rewritten only where one machine cannot do as it says:
`sudo ` is dropped (the tests run as root); build/hostprof is the binary under test; PID 1234 is a
workload started for the purpose (tests/e2e/cpu_ratio.c); durations are cut to 2 s; receivers
(`localhost:4318`, `collector:4318`, `pyroscope:4040`, `https://oneuptime.com`) become the local
recording receiver; `go tool pprof -http=:` becomes `-top`; the agent's config and output paths
become the repository's systemd/config.yaml and a scratch directory; Go's cpu.out is stood in by
hostprof's own cpu.pb.gz (both are gzipped pprof). Agents run 5 s, then get
SIGTERM. Each command must exit 0.

A sample output matches when its lines appear in the output in order, where a number (signed or
not) stands for any number and a size (`1.3 MiB`) for any size, a run of spaces for any run of
spaces, `...` inside a line for any text, and a line of only `...` for any lines.

Usage: readme_examples.py --readme README.md --hostprof PATH --pid PID --receiver URL --work DIR
       readme_examples.py selftest
Prints `PASS ...` / `FAIL ...` per command and sample, and `examples N`, `outputs N`; exits 1 on a
failure.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

ANNOTATION = re.compile(r"^<!-- test: (run|skip .+|output of \d+|output of: .+) -->$")
DURATION = re.compile(r"(--duration|-d)(\s+|=)[0-9.]+")
RECEIVERS = re.compile(r"https?://(localhost:4318|collector:4318|pyroscope:4040|oneuptime\.com)")
AGENT_SECONDS = 5
# A size as hostprof prints it: any size matches any other ("1.3 MiB" and "96 KiB").
SIZE = r"[0-9]+(?:\.[0-9]+)?\s+(?:B|KiB|MiB|GiB)\b"


class Block:
    def __init__(self, lang, lines, line, note):
        self.lang, self.lines, self.line, self.note = lang, lines, line, note


def blocks(text):
    """The fenced blocks of a markdown text, each with the annotation right above it (or None)."""
    out, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        note = lines[j].strip() if j >= 0 and ANNOTATION.match(lines[j].strip()) else None
        body, k = [], i + 1
        while k < len(lines) and not re.match(r"^\s*```\s*$", lines[k]):
            body.append(lines[k][indent:] if lines[k][:indent].strip() == "" else lines[k])
            k += 1
        out.append(Block(m.group(1), body, i + 1, note))
        i = k + 1
    return out


def commands(lines):
    """The commands of a shell block: continuation lines joined, comments and blanks dropped."""
    cmds, cur = [], ""
    for line in lines:
        line = re.sub(r"(^|\s)#.*$", "", line).rstrip()
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        if cur.strip():
            cmds.append(" ".join(cur.split()))
        cur = ""
    return cmds


def rewrite(cmd, o):
    """The README's command as this machine can run it (see the module's comment)."""
    cmd = re.sub(r"^sudo\s+", "", cmd)
    cmd = re.sub(r"(^|\s)build/hostprof(\s|$)", r"\1" + o.hostprof + r"\2", cmd)
    cmd = re.sub(r"--pid(\s+|=)1234\b", r"--pid\g<1>" + str(o.pid), cmd)
    cmd = DURATION.sub(r"\1\g<2>2", cmd)
    cmd = RECEIVERS.sub(o.receiver, cmd)
    cmd = cmd.replace("$ONEUPTIME_TOKEN", "readme-test-token")
    cmd = cmd.replace("go tool pprof -http=:", "go tool pprof -top")
    cmd = cmd.replace("/etc/hostprof/config.yaml", os.path.join(o.root, "systemd/config.yaml"))
    cmd = cmd.replace("--config systemd/config.yaml",
                      "--config " + os.path.join(o.root, "systemd/config.yaml"))
    cmd = cmd.replace("/var/lib/hostprof", os.path.join(o.work, "agent-out"))
    return cmd


def is_agent(cmd):
    return re.search(r"\sagent(\s|$)", cmd) and "--print-config" not in cmd \
        and "--help" not in cmd


def stand_in(cmd, o):
    """Files the README takes from elsewhere: Go's cpu.out (`go test -cpuprofile`) is gzipped
    pprof, as hostprof's own cpu.pb.gz of the first example is; /var/lib/hostprof is a scratch
    directory."""
    out = os.path.join(o.work, "cpu.out")
    src = os.path.join(o.work, "cpu.pb.gz")
    if re.search(r"\scpu\.out(\s|$)", cmd) and not os.path.exists(out) and os.path.exists(src):
        with open(src, "rb") as f, open(out, "wb") as g:
            g.write(f.read())
    # The agent's output directory exists where the README runs it (the unit's StateDirectory).
    os.makedirs(os.path.join(o.work, "agent-out"), exist_ok=True)


def run(cmd, o):
    """(exit status, output with stderr merged in order) of one rewritten command."""
    stand_in(cmd, o)
    env = dict(os.environ, HOME=o.work)
    p = subprocess.Popen(["bash", "-c", cmd], cwd=o.work, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace",
                         start_new_session=True)
    try:
        if is_agent(cmd):
            time.sleep(AGENT_SECONDS)
            os.killpg(p.pid, signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return 124, out
    return p.returncode, out


def line_pattern(sample):
    """A regex for one sample line: numbers, space runs and `...` are wildcards."""
    parts = re.split(r"(\.\.\.|%s|[+-]?[0-9]+(?:\.[0-9]+)?|\s+)" % SIZE, sample.strip())
    rx = ""
    for part in parts:
        if re.fullmatch(SIZE, part or "-"):
            rx += SIZE
        elif part == "...":
            rx += ".*"
        elif re.fullmatch(r"[+-]?[0-9]+(?:\.[0-9]+)?", part):
            rx += r"[+-]?[0-9]+(?:\.[0-9]+)?"
        elif part and part.isspace():
            rx += r"\s+"
        else:
            rx += re.escape(part)
    return re.compile(r"^\s*" + rx + r"\s*$")


def match_output(sample, actual):
    """None when the sample's lines are found in order in actual, else what was not found."""
    lines = actual.split("\n")
    pos, skip = 0, False
    for s in sample:
        if not s.strip():
            continue
        if s.strip() == "...":
            skip = True
            continue
        pat = line_pattern(s)
        found = next((i for i in range(pos, len(lines)) if pat.match(lines[i])), None)
        if found is None or (not skip and found != pos and pos > 0 and
                             any(lines[k].strip() for k in range(pos, found))):
            return s.strip()
        pos, skip = found + 1, False
    return None


def check(o):
    text = open(o.readme, encoding="utf-8").read()
    failures = examples = outputs = 0
    last_run = []
    results = {}

    def report(ok, what):
        nonlocal failures
        print("%s %s" % ("PASS" if ok else "FAIL", what))
        failures += not ok

    for b in blocks(text):
        if b.lang == "sh":
            cmds = commands(b.lines)
            if not any(re.search(r"(^|\s)build/hostprof\s", c + " ") for c in cmds):
                continue
            if not b.note or not (b.note.startswith("<!-- test: run") or
                                  b.note.startswith("<!-- test: skip")):
                report(False, "README:%d: a hostprof example without <!-- test: run --> or "
                              "<!-- test: skip REASON --> above it" % b.line)
                continue
            if "test: skip" in b.note:
                continue
            last_run = []
            for c in cmds:
                real = rewrite(c, o)
                rc, out = run(real, o)
                examples += 1
                results[c] = (rc, out)
                last_run.append(c)
                report(rc == 0, "README:%d: `%s` exited %d%s" % (
                    b.line, c, rc, "" if rc == 0 else ": " + out.strip()[-400:]))
        elif b.lang == "" and b.note and "output of" in b.note:
            m = re.match(r"<!-- test: output of (\d+) -->", b.note)
            if m:
                n = int(m.group(1))
                if n < 1 or n > len(last_run):
                    report(False, "README:%d: output of command %d, but the run block above "
                                  "has %d" % (b.line, n, len(last_run)))
                    continue
                cmd = last_run[n - 1]
            else:
                cmd = re.match(r"<!-- test: output of: (.+) -->", b.note).group(1)
                if cmd not in results:
                    results[cmd] = run(rewrite(cmd, o), o)
            rc, out = results[cmd]
            outputs += 1
            missing = match_output(b.lines, out)
            report(rc == 0 and missing is None,
                   "README:%d: the sample output of `%s`%s" % (
                       b.line, cmd, "" if missing is None else
                       " has a line hostprof does not print: `%s`; it printed:\n%s" %
                       (missing, out.strip()[:1500])))
    print("examples %d" % examples)
    print("outputs %d" % outputs)
    return 1 if failures else 0


def selftest():
    md = ("x\n<!-- test: run -->\n```sh\nsudo build/hostprof profile --pid 1234 -d 10 \\\n"
          "  -o a.folded   # note\n```\n\n<!-- test: output of 1 -->\n```\nA 10 s\n...\n"
          "Wrote ... file\n```\n")
    bs = blocks(md)
    assert [b.lang for b in bs] == ["sh", ""] and bs[0].note == "<!-- test: run -->", bs
    assert commands(bs[0].lines) == ["sudo build/hostprof profile --pid 1234 -d 10 -o a.folded"]

    class O:
        hostprof, pid, receiver, work, root = "/b/hp", 77, "http://127.0.0.1:9", "/w", "/r"
    r = rewrite(commands(bs[0].lines)[0], O)
    assert r == "/b/hp profile --pid 77 -d 2 -o a.folded", r
    assert rewrite("x --otlp-endpoint http://localhost:4318/v1development/profiles", O) == \
        "x --otlp-endpoint http://127.0.0.1:9/v1development/profiles"
    assert match_output(bs[1].lines, "A 2.0 s\nnoise\nWrote the file\n") is None
    assert match_output(bs[1].lines, "B 2 s\nWrote the file\n") == "A 10 s"
    assert match_output(["a 1", "b 2"], "a 1\nx\nb 2\n") == "b 2", "no skip without ..."
    assert match_output(["a 1", "b 2"], "a 1\nb 2\n") is None
    assert match_output(["m 8.0 MiB x"], "m 96 KiB x\n") is None
    assert match_output(["f +3.61 x"], "f -2.90 x\n") is None
    assert match_output(["m 8.0 MiB x"], "m 96 KiB y\n") == "m 8.0 MiB x"
    print("selftest ok")


def main(argv):
    if argv == ["selftest"]:
        selftest()
        return 0
    p = argparse.ArgumentParser(description="Run the README's examples.")
    p.add_argument("--readme", required=True)
    p.add_argument("--hostprof", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--receiver", required=True, help="base URL of a recording receiver")
    p.add_argument("--work", required=True)
    o = p.parse_args(argv)
    o.root = os.path.dirname(os.path.abspath(o.readme))
    o.hostprof = os.path.abspath(o.hostprof)
    return check(o)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Symbolization throughput, memory and agreement: hostprof's dso layer beside eu-addr2line
(elfutils), addr2line (binutils), llvm-symbolizer (LLVM) and blazesym's command-line tool
blazecli, over one fixed list of addresses per binary.

Binaries: libc.so.6 with its separate debug file from libc6-dbg (/usr/lib/debug/.build-id), and,
when libstdc++6-12-dbg is installed, its unstripped libstdc++ (C++: namespaces, classes, deep
inlining). A binary whose debug info is missing is skipped with a message saying which package
brings it (scripts/deps.sh test installs both).

Addresses: N (default 100000) made by `bench_symbolize gen` with a fixed seed: a random function
of the symbol table, a random offset inside it.

Per binary:
- hostprof: `bench_symbolize run` in its own process: dso__find_symbol + dso__find_lines per
  address; cold = the first pass (loads the ELF, opens the DWARF, builds every table it meets),
  warm = the median of three more passes over the same list (DWARF open, tables built; nothing
  caches results per address at this level). The process also holds the address list (8 bytes
  an address).
- eu-addr2line -a -f -i, addr2line -a -f -i and llvm-symbolizer -a -f -i --no-demangle
  --output-style=GNU: the list as one batch on stdin (-a only to split the output per address).
  blazecli symbolize elf: the list as arguments (it reads no stdin; the child's stack limit is
  raised so that the kernel takes 200,000 of them). Cold = that batch; warm = the list given
  twice in one batch, minus the cold time: the second pass's marginal cost with everything
  loaded. Each timing is the fastest of up to REPEAT (3) runs while they take under 10 s in all:
  this machine is shared, and other work only ever slows a run down. blazecli comes from
  $BLAZECLI (make bench-symbolize builds a pinned one with cargo), else from PATH.
- Peak RSS of each process: /usr/bin/time -f %M.
- Agreement with eu-addr2line: the innermost frame's function and line (the function from DWARF,
  or from the symbol table where DWARF names none, as both do); then whole inline chains
  (every frame's function and line). And hostprof against each other tool the same way;
  blazecli demangles C++ names and has no switch against it, so there hostprof's names go
  through c++filt first.

Writes OUTDIR/symbolize.md and OUTDIR/symbolize.json; prints the markdown. Numbers only, except
the agreement target (>= 99%), which is reported as met or not.

Usage: bench_symbolize.py BENCH_SYMBOLIZE OUTDIR
       (environment: ADDRS=N, SEED=S, REPEAT=R, BLAZECLI=PATH)
"""

import glob
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_AGREE_PCT = 99.0
TARGET_SPEEDUP = 10.0


def build_id_debug_file(binary):
    out = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not m:
        return None
    bid = m.group(1)
    path = f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug"
    return path if os.path.exists(path) else None


def find_libc():
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith("libc.so.6 ") and "=>" in line:
            return os.path.realpath(line.split("=>")[1].strip())
    return None


def targets():
    """(name, binary, symbol file) of each binary measured; messages for those skipped."""
    found, skipped = [], []
    libc = find_libc()
    dbg = build_id_debug_file(libc) if libc else None
    if libc and dbg:
        found.append(("libc.so.6", libc, dbg))
    else:
        skipped.append("libc.so.6: no debug file under /usr/lib/debug/.build-id "
                       "(install libc6-dbg: scripts/deps.sh test)")
    cxx = sorted(glob.glob("/usr/lib/*/debug/libstdc++.so.6.0.*"))
    cxx = [p for p in cxx if not p.endswith(".py")]
    if cxx:
        found.append(("libstdc++.so.6 (-dbg)", cxx[-1], cxx[-1]))
    else:
        skipped.append("libstdc++: no unstripped copy under /usr/lib/*/debug "
                       "(install libstdc++6-12-dbg: scripts/deps.sh test)")
    return found, skipped


TIME = shutil.which("time", path="/usr/bin:/bin")


def raise_stack_limit():
    """The kernel takes arguments up to a quarter of the stack limit (at most 6 MiB): blazecli's
    200,000 addresses and their pointers need about 3.5 MiB."""
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    want = 64 << 20
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_STACK,
                           (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))


def timed(cmd, stdin_path, stdout_path, preexec=None):
    """Runs cmd; returns (seconds, peak RSS KiB, exit status). The RSS comes from /usr/bin/time,
    which forks the command from its own small process: a child forked from this Python, which
    holds the parsed outputs, would count the Python's pages in its peak (Linux keeps the peak
    of the pre-exec copy). Without /usr/bin/time, wait4() here, and the figure may be high."""
    with tempfile.NamedTemporaryFile("r") as rss, open(stdin_path) as fin, \
            open(stdout_path, "w") as fout:
        full = [TIME, "-q", "-f", "%M", "-o", rss.name] + cmd if TIME else cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdin=fin, stdout=fout, stderr=subprocess.DEVNULL,
                             preexec_fn=preexec)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        peak = ru.ru_maxrss
        if TIME:
            text = rss.read().split()
            peak = int(text[-1]) if text and text[-1].isdigit() else 0
    return dt, peak, os.waitstatus_to_exitcode(status)


# A shared machine's other work lands in any one timing: each tool's runs are repeated while
# they are quick (up to REPEAT times, while under REPEAT_BUDGET_S in all) and the fastest is
# taken. eu-addr2line on libstdc++ (about a minute) runs once.
REPEAT = int(os.environ.get("REPEAT", "3"))
REPEAT_BUDGET_S = 10.0


def best_of(run, path, out):
    """run(path, out) -> (seconds, rss, status), repeated: the fastest time, the largest RSS, the
    first failure."""
    best, peak, spent = None, 0, 0.0
    for _ in range(max(REPEAT, 1)):
        dt, rss, st = run(path, out)
        if st:
            return dt, rss, st
        best = dt if best is None else min(best, dt)
        peak = max(peak, rss)
        spent += dt
        if spent + dt > REPEAT_BUDGET_S:
            break
    return best, peak, 0


def parse_addr2line(path):
    """-a -f -i output: {addr: [(function, line), ...]} innermost first."""
    res, cur = {}, None
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        s = lines[i]
        if s.startswith("0x") and " " not in s:
            cur = res.setdefault(int(s, 16), [])
            i += 1
            continue
        fn = s
        loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
        i += 2
        # eu-addr2line names the innermost of a chain "f inlined at FILE:L:C in CALLER".
        fn = re.sub(r" inlined at .* in .*$", "", fn)
        # binutils prints "(discriminator N)" after the line.
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        m = re.search(r":(\d+|\?)(?::\d+)?$", loc)
        line = int(m.group(1)) if m and m.group(1).isdigit() else 0
        if cur is not None:
            cur.append((fn, line))
    return res


def parse_blazecli(path):
    """`blazecli symbolize elf` output: {addr: [(function, line), ...]} innermost first.

    Each address starts a line "0x...: NAME @ 0xSYM+0xOFF FILE:LINE:COL" (the outermost
    function, at the line where the inlined code sits), followed by its inlined frames, outermost
    first, as "NAME @ FILE:LINE:COL [inlined]"; an address outside every symbol is
    "<no-symbol>", which addr2line calls "??"."""
    def frame(text):
        name, _, where = text.partition(" @ ")
        if name.startswith("<no-symbol"):
            return ("??", 0)
        m = re.search(r":(\d+)(?::\d+)?(?: \[inlined\])?$", where)
        return (name, int(m.group(1)) if m else 0)

    outer, inlined = {}, {}
    cur = None
    with open(path, errors="replace") as f:
        for row in f:
            row = row.rstrip("\n")
            m = re.match(r"^0x([0-9a-fA-F]+): (.*)$", row)
            if m:
                cur = int(m.group(1), 16)
                outer[cur], inlined[cur] = frame(m.group(2)), []
            elif row.strip() and cur is not None:
                inlined[cur].append(frame(row.strip()))
    return {a: list(reversed(inlined[a])) + [outer[a]] for a in outer}


def demangle_hostprof(hp):
    """hostprof's results with C++ names demangled by c++filt (binutils), one batch."""
    names = sorted({fn for r in hp.values() for fn, _ in [r["innermost"]] + r["chain"]
                    if fn.startswith("_Z")})
    exe = shutil.which("c++filt")
    if not names or not exe:
        return hp
    out = subprocess.run([exe], input="\n".join(names) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    if len(out) != len(names):
        raise SystemExit(f"c++filt: {len(names)} names in, {len(out)} out")
    m = dict(zip(names, out))
    return {a: {"innermost": (m.get(r["innermost"][0], r["innermost"][0]), r["innermost"][1]),
                "chain": [(m.get(fn, fn), ln) for fn, ln in r["chain"]]} for a, r in hp.items()}


def parse_hostprof(path):
    res = {}
    with open(path, errors="replace") as f:
        for row in f:
            parts = row.rstrip("\n").split("\t")
            if len(parts) < 4:
                continue
            addr, fn, line, frames = int(parts[0], 16), parts[1], int(parts[2]), parts[3:]
            chain = []
            for fr in frames if frames != [""] else []:
                name, _, ln = fr.rpartition(":")
                chain.append((name, int(ln) if ln.isdigit() else 0))
            res[addr] = {"innermost": (fn, line), "chain": chain}
    return res


def fold_repeats(chain):
    """eu-addr2line -i prints some chains two or three times over: the chain once, and whether
    it was repeated."""
    n = len(chain)
    for p in range(1, n // 2 + 1):
        if n % p == 0 and chain == chain[:p] * (n // p):
            return chain[:p], True
    return chain, False


def agreement(addrs, hp, ref):
    same = same_line = chains = repeated = deeper = shallower = 0
    examples, chain_examples = [], []
    for a in addrs:
        h = hp.get(a)
        if h is None:
            continue
        e, rep = fold_repeats(ref.get(a) or [("??", 0)])
        repeated += rep
        ok = h["innermost"] == e[0]
        same += ok
        same_line += h["innermost"][1] == e[0][1]
        hc = h["chain"] or [h["innermost"]]
        chains += hc == e
        deeper += len(hc) > len(e)
        shallower += len(hc) < len(e)
        if not ok and len(examples) < 5:
            examples.append({"addr": hex(a), "hostprof": "%s:%d" % h["innermost"],
                             "reference": "%s:%d" % e[0]})
        if ok and hc != e and len(chain_examples) < 3:
            chain_examples.append({"addr": hex(a),
                                   "hostprof": " <- ".join("%s:%d" % f for f in hc),
                                   "reference": " <- ".join("%s:%d" % f for f in e)})
    n = len(addrs)
    return {"innermost_agree_pct": 100.0 * same / n, "disagreements": n - same,
            "innermost_line_agree_pct": 100.0 * same_line / n,
            "chain_agree_pct": 100.0 * chains / n, "hostprof_chain_deeper": deeper,
            "hostprof_chain_shallower": shallower, "reference_repeated_chains": repeated,
            "examples": examples, "chain_examples": chain_examples}


def run_target(name, binary, symfile, bench, n, seed, tmp):
    r = {"binary": binary, "symbol_file": symfile}
    addrs_path = os.path.join(tmp, "addrs")
    with open(addrs_path, "w") as f:
        subprocess.run([bench, "gen", str(n), str(seed), symfile], stdout=f, check=True)
    addrs = [int(x, 16) for x in open(addrs_path).read().split()]
    twice = os.path.join(tmp, "addrs2")
    with open(twice, "w") as f:
        f.write(open(addrs_path).read() * 2)

    hp_out, hp_kv = os.path.join(tmp, "hp.tsv"), os.path.join(tmp, "hp.txt")
    _, hp_rss, st = timed([bench, "run", binary, addrs_path, hp_out], os.devnull, hp_kv)
    if st:
        raise SystemExit(f"bench_symbolize run {binary} failed ({st})")
    kv = dict(line.split(None, 1) for line in open(hp_kv) if line.strip())
    r["hostprof"] = {"cold_addr_per_s": float(kv["cold_addr_per_s"]),
                     "warm_addr_per_s": float(kv["warm_addr_per_s"]),
                     "cold_s": float(kv["cold_s"]), "warm_s": float(kv["warm_s"]),
                     "peak_rss_kib": hp_rss if TIME else int(kv["peak_rss_kib"]),
                     "dwarf_bytes": int(kv["dwarf_bytes"]),
                     "with_lines": int(kv["with_lines"]), "with_inlines": int(kv["with_inlines"])}
    for tool, label in TOOLS:
        exe = tool_path(tool)
        if not exe:
            r[tool] = None
            continue
        out1 = os.path.join(tmp, tool + ".out")
        if tool == "blazecli":
            def run(path, out):
                words = open(path).read().split()
                return timed([exe, "symbolize", "elf", "--path", binary] + words, os.devnull, out,
                             preexec=raise_stack_limit)
        else:
            cmd = {"llvm-symbolizer": [exe, "--obj=" + binary, "-a", "-f", "-i", "--no-demangle",
                                       "--output-style=GNU"]}.get(
                tool, [exe, "-a", "-f", "-i", "-e", binary])

            def run(path, out):
                return timed(cmd, path, out)
        cold, rss, st1 = best_of(run, addrs_path, out1)
        both, rss2, st2 = best_of(run, twice, os.path.join(tmp, tool + ".out2"))
        if st1 or st2:
            raise SystemExit(f"{label} on {binary} failed ({st1 or st2})")
        warm = both - cold
        r[tool] = {"cold_addr_per_s": n / cold, "cold_s": cold,
                   "warm_addr_per_s": n / warm if warm > 0 else None,
                   "warm_s": warm, "peak_rss_kib": max(rss, rss2), "exe": exe}
        parsed = (parse_blazecli if tool == "blazecli" else parse_addr2line)(out1)
        if len(parsed) != len(set(addrs)):
            raise SystemExit(f"{label} on {binary}: {len(parsed)} addresses answered, "
                             f"want the list's {len(set(addrs))} distinct ones")
        r[tool]["parsed"] = parsed
    hp = parse_hostprof(hp_out)
    if r["eu-addr2line"]:
        r["agreement"] = agreement(addrs, hp, r["eu-addr2line"].pop("parsed"))
        r["speedup_warm_vs_eu"] = (r["hostprof"]["warm_addr_per_s"]
                                   / r["eu-addr2line"]["warm_addr_per_s"])
    r["agreement_others"] = {}
    for tool, _ in TOOLS[1:]:
        if r[tool]:
            ref = r[tool].pop("parsed")
            a = agreement(addrs, demangle_hostprof(hp) if tool == "blazecli" else hp, ref)
            r["agreement_others"][tool] = {k: a[k] for k in [
                "innermost_agree_pct", "innermost_line_agree_pct", "chain_agree_pct", "examples"]}
    return r


# The tools hostprof is compared with; the first is the reference of the agreement targets.
TOOLS = [("eu-addr2line", "eu-addr2line -f -i"), ("addr2line", "addr2line -f -i"),
         ("llvm-symbolizer", "llvm-symbolizer -f -i"), ("blazecli", "blazecli symbolize elf")]


def tool_path(tool):
    if tool == "blazecli" and os.environ.get("BLAZECLI"):
        exe = os.environ["BLAZECLI"]
        return exe if os.access(exe, os.X_OK) else None
    return shutil.which(tool)


def tool_version(tool):
    exe = tool_path(tool)
    if not exe:
        return None
    p = subprocess.run([exe, "--version"], capture_output=True, text=True)
    lines = [x.strip() for x in (p.stdout + p.stderr).splitlines() if x.strip()]
    # llvm-symbolizer prints a banner first ("LLVM (http://llvm.org/):"), then the version.
    for x in lines:
        if re.search(r"\d+\.\d+", x):
            return x
    return lines[0] if lines else None


def fmt_rate(x):
    return "-" if x is None or x != x else f"{x:,.0f}"


def main():
    bench, outdir = sys.argv[1], sys.argv[2]
    n = int(os.environ.get("ADDRS", "100000"))
    seed = int(os.environ.get("SEED", "1"))
    os.makedirs(outdir, exist_ok=True)
    found, skipped = targets()
    summary = {"addresses": n, "seed": seed, "targets": {}, "skipped": skipped,
               "targets_pct": {"agreement": TARGET_AGREE_PCT, "speedup_warm_vs_eu": TARGET_SPEEDUP}}
    out = []
    w = out.append
    w(f"## Symbolization: {n} addresses per binary, hostprof against eu-addr2line, addr2line, "
      "llvm-symbolizer and blazecli")
    w("")
    w(f"Addresses: `bench_symbolize gen {n} {seed}`: a random function of the symbol table, a "
      "random offset inside it. hostprof: dso__find_symbol + dso__find_lines in its own process; "
      "cold = first pass (loads the ELF, opens the DWARF, builds each CU's tables as met), warm = "
      "median of 3 further passes (DWARF open and tables built, no per-address result cache). "
      "The tools: the list as one batch on stdin (`-a -f -i -e BIN`); their warm = the list given "
      "twice in one batch, minus the cold run (blazecli: the list as arguments, once and twice); "
      f"each the fastest of up to {REPEAT} runs within {REPEAT_BUDGET_S:.0f} s. "
      "Peak RSS of each process (`/usr/bin/time -f %M`).")
    w("")
    versions = {t: tool_version(t) for t, _ in TOOLS}
    summary["versions"] = versions
    w("Versions: " + "; ".join(f"{t}: {v or 'not installed'}" for t, v in versions.items()) + ".")
    w("")
    with tempfile.TemporaryDirectory(prefix="hostprof-symbench.") as tmp:
        for name, binary, symfile in found:
            summary["targets"][name] = run_target(name, binary, symfile, bench, n, seed, tmp)
    for name, r in summary["targets"].items():
        h, eu = r["hostprof"], r.get("eu-addr2line")
        w(f"### {name}")
        w("")
        w(f"`{r['binary']}`" + (f", debug file `{r['symbol_file']}`"
                                if r["symbol_file"] != r["binary"] else ""))
        w("")
        w("| symbolizer | cold addr/s | warm addr/s | peak RSS (MiB) |")
        w("|---|---|---|---|")
        w(f"| hostprof (dso layer) | {fmt_rate(h['cold_addr_per_s'])} | "
          f"{fmt_rate(h['warm_addr_per_s'])} | {h['peak_rss_kib'] / 1024:.1f} |")
        for tool, label in TOOLS:
            t = r.get(tool)
            if t:
                w(f"| {label} | {fmt_rate(t['cold_addr_per_s'])} | "
                  f"{fmt_rate(t['warm_addr_per_s'])} | {t['peak_rss_kib'] / 1024:.1f} |")
            else:
                w(f"| {label} | not installed | | |")
        w("")
        w(f"hostprof's DWARF, as counted for the budget (none here): {h['dwarf_bytes'] / 1048576:.1f} MiB; "
          f"{h['with_lines']} addresses with a line, {h['with_inlines']} inside inlined code.")
        if eu:
            a = r["agreement"]
            sp = r["speedup_warm_vs_eu"]
            w(f"Warm speed-up over eu-addr2line: {sp:.1f}x (target >= {TARGET_SPEEDUP:.0f}x: "
              f"{'met' if sp >= TARGET_SPEEDUP else 'NOT met'}); hostprof warm over "
              f"eu-addr2line's one batch: {h['warm_addr_per_s'] / eu['cold_addr_per_s']:.1f}x.")
            w(f"Agreement with eu-addr2line, innermost function and line: "
              f"{a['innermost_agree_pct']:.2f}% ({a['disagreements']} disagreements; target >= "
              f"{TARGET_AGREE_PCT:.0f}%: {'met' if a['innermost_agree_pct'] >= TARGET_AGREE_PCT else 'NOT met'}). "
              f"Whole inline chains equal: {a['chain_agree_pct']:.2f}% (hostprof's deeper at "
              f"{a['hostprof_chain_deeper']}, shallower at {a['hostprof_chain_shallower']}; "
              f"eu-addr2line printed {a['reference_repeated_chains']} chains two or three times "
              "over, counted once).")
            for tool, label in TOOLS[1:]:
                b = r["agreement_others"].get(tool)
                if b:
                    w(f"Against {tool}{' (names demangled)' if tool == 'blazecli' else ''}: "
                      f"innermost {b['innermost_agree_pct']:.2f}% (its line alone "
                      f"{b['innermost_line_agree_pct']:.2f}%), "
                      f"chains {b['chain_agree_pct']:.2f}%" +
                      (f"; e.g. {b['examples'][0]['addr']}: hostprof "
                       f"`{b['examples'][0]['hostprof']}`, {tool} "
                       f"`{b['examples'][0]['reference']}`" if b["examples"] else "") + ".")
            for ex in a["examples"]:
                w(f"- {ex['addr']}: hostprof `{ex['hostprof']}`, eu-addr2line `{ex['reference']}`")
            if a["chain_examples"]:
                w("")
                w("Chains that differ where the innermost frame agrees (innermost first):")
            for ex in a["chain_examples"]:
                w(f"- {ex['addr']}: hostprof `{ex['hostprof']}`; eu-addr2line `{ex['reference']}`")
        w("")
    for s in skipped:
        w(f"Skipped: {s}")
    md = "\n".join(out).rstrip() + "\n"
    open(os.path.join(outdir, "symbolize.md"), "w").write(md)
    json.dump(summary, open(os.path.join(outdir, "symbolize.json"), "w"), indent=2,
              sort_keys=True)
    print(md, end="")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())

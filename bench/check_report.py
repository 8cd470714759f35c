#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Check that a benchmark report (bench/report.sh) is produced and well-formed: report.md has
its six sections and tables, report.json parses and holds a finite number for every figure the
tables print. The values themselves are not judged: on shared machines they are noise.

Usage: check_report.py DIR   (exit 1 with the problems listed)
"""

import json
import math
import os
import re
import sys


def main():
    d = sys.argv[1]
    problems = []
    try:
        md = open(os.path.join(d, "report.md")).read()
    except OSError as e:
        print(f"check_report: {e}")
        return 1
    for heading in ["## 1. Overhead on CPU-bound work", "## 2. Scheduler-heavy load",
                    "## 3. Memory", "## 4. Export size", "## 5. Fidelity",
                    "## 6. Unwinding"]:
        if heading not in md:
            problems.append(f"report.md lacks '{heading}'")
    for row in ["| nothing attached |", "| hostprof agent, 19 Hz |", "| hostprof agent, 99 Hz |",
                "| perf record -F 99 -a -g |", "| bpftrace profile:hz:99",
                "| OpenTelemetry eBPF profiler, 20 Hz |", "| OpenTelemetry eBPF profiler, 99 Hz |",
                "| RSS |", "| nofp: reach main",
                "| BPF maps (memlock) |", "| OTLP/HTTP protobuf, gzip |"]:
        if row not in md:
            problems.append(f"report.md lacks the row '{row}'")
    # A word of its own: function names in the symbolization examples may hold "nan".
    if re.search(r"(?<![A-Za-z_])nan(?![A-Za-z_])", md, re.IGNORECASE):
        problems.append("report.md prints a NaN")
    try:
        j = json.load(open(os.path.join(d, "report.json")))
    except (OSError, ValueError) as e:
        problems.append(f"report.json: {e}")
        j = {}
    figures = [("overhead", c, k) for c in ["none", "hostprof19", "hostprof99", "perf99",
                                            "bpftrace99", "otel20", "otel99"]
               for k in ["median_s", "slowdown_pct", "profiler_cpu_pct_of_core",
                         "bpf_pct_of_core"]]
    figures += [("overhead", "steady", "profiler_cpu_pct_of_core")]
    figures += [("sched", k) for k in ["alone_trips_per_s", "agent_trips_per_s", "ns_per_switch"]]
    figures += [("memory", k) for k in ["rss_mib", "pss_mib", "bpf_maps_mib"]]
    figures += [("memory_otel", k) for k in ["rss_mib", "pss_mib", "bpf_maps_mib"]]
    # BPF time per sample, of the profilers whose programs take the samples.
    figures += [("overhead", c, "bpf_ns_per_sample") for c in ["hostprof19", "hostprof99",
                                                               "otel20", "otel99"]]
    figures += [("fidelity", who, "nofp", "reach_main") for who in ["hostprof", "otel"]]
    figures += [("fidelity", who, "python3", "reach_main") for who in ["hostprof", "otel"]]
    figures += [("export", k) for k in ["otlp_gzip_bytes_per_min", "pprof_gzip_bytes_per_min"]]
    for path in figures:
        node = j
        for p in path:
            node = node.get(p) if isinstance(node, dict) else None
        if not isinstance(node, (int, float)) or not math.isfinite(node):
            problems.append(f"report.json: {'.'.join(path)} is {node!r}, not a number")
    # Optional: the symbolization figures, present when `make bench-symbolize` ran first.
    sym = j.get("symbolize")
    if sym is not None:
        if "Symbolization" not in md:
            problems.append("report.json has symbolization figures that report.md does not show")
        for name, t in sym.get("targets", {}).items():
            paths = [("hostprof", k) for k in ["cold_addr_per_s", "warm_addr_per_s",
                                               "peak_rss_kib"]]
            if t.get("eu-addr2line"):
                paths += [("eu-addr2line", "cold_addr_per_s"), ("eu-addr2line", "peak_rss_kib"),
                          ("agreement", "innermost_agree_pct"),
                          ("agreement", "chain_agree_pct")]
            for path in paths:
                node = t
                for p in path:
                    node = node.get(p) if isinstance(node, dict) else None
                if not isinstance(node, (int, float)) or not math.isfinite(node):
                    problems.append(f"report.json: symbolize.targets[{name!r}]."
                                    f"{'.'.join(path)} is {node!r}, not a number")
    for k in ["cpu", "cores", "kernel"]:
        if not j.get("machine", {}).get(k):
            problems.append(f"report.json: machine.{k} is missing")
    # Things that were measured must have happened.
    if j.get("memory", {}).get("rss_mib", 0) <= 0:
        problems.append("the agent's RSS was not read")
    if j.get("export", {}).get("otlp_requests", 0) < 1:
        problems.append("no OTLP request reached the local receiver")
    if j.get("raw", {}).get("otel", {}).get("requests", 0) < 1:
        problems.append("no OTLP request of the OpenTelemetry eBPF profiler reached its receiver "
                        "in the overhead runs")
    # Not the fidelity itself (a smoke counts seconds of samples), but that the stacks were read,
    # ordered and named at all: none reaching main, or a leaf of nofp never named, is a fault of
    # the capture or of the receiver's decoding, not noise.
    for who in ["hostprof", "otel"]:
        for comm in ["nofp", "python3"]:
            f = j.get("fidelity", {}).get(who, {}).get(comm, {})
            if f.get("samples", 0) < 1:
                problems.append(f"fidelity: no samples of {comm} in {who}'s profile")
            elif not f.get("reach_main"):
                problems.append(f"fidelity: none of the {f['samples']} samples of {comm} in "
                                f"{who}'s profile reach main (fidelity-{who}.folded)")
        shares = j.get("fidelity", {}).get(who, {}).get("nofp", {}).get("shares", {})
        missing = [x for x in ["nofp_leaf_a", "nofp_leaf_b", "nofp_leaf_c"] if x not in shares]
        if missing:
            problems.append(f"fidelity: {', '.join(missing)} never a leaf in {who}'s profile of "
                            f"nofp (fidelity-{who}.folded)")
    for p in problems:
        print(f"check_report: {p}")
    if not problems:
        print(f"check_report: {d}/report.md and report.json are well-formed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

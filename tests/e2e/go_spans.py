#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Check the goroutine labels in a profile of a Go workload, for the end-to-end tests.

The input is what `go tool pprof -raw` prints (read by pprof_raw.py). Prints one line of counts
and exits 1 when a check fails, with the reason on the same line.

Usage: go_spans.py COMMAND RAWFILE [ARGS]
  golabels RAWFILE           tests/e2e/go_labels: samples in inSpanA carry span A's ids and
                             labels (the query value cut to 50 bytes and "..."), samples in
                             inSpanB span B's ids and 6 of its 8 other labels (the sampler keeps
                             6 besides the ids), each with its own value; noSpan none (>= 95% of
                             the in-span samples, all of the others)
  otelsdk RAWFILE SPANS      tests/e2e/otel_go: every span_id in the profile is a span the SDK
                             exported to SPANS (stdouttrace, one JSON object per span), with that
                             span's trace_id and span_name; >= 95% of the samples in busyWork
                             carry a "busy" span; idleWork (outside any span) none
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pprof_raw  # noqa: E402

SPAN_A = {"span_id": "a1a1a1a1a1a1a1a1", "trace_id": "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01",
          "endpoint": "/checkout", "query": "q" * 50 + "\u2026"}
SPAN_B = {"span_id": "b2b2b2b2b2b2b2b2", "trace_id": "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b02"}
SPAN_B_OTHERS = dict([("endpoint", "/cart")] + [("l%d" % i, "v%d" % i) for i in range(1, 8)])
SHARE = 0.95


def samples_in(p, func):
    i = p.type_index("samples")
    for s in p.samples:
        if func in p.stack(s):
            yield s.values[i], s.labels


def golabels(p):
    bad = []
    counts = []
    for func, check in (
            ("main.inSpanA", lambda lb: all(lb.get(k) == v for k, v in SPAN_A.items())),
            ("main.inSpanB", lambda lb: all(lb.get(k) == v for k, v in SPAN_B.items()) and
             sum(lb.get(k) == v for k, v in SPAN_B_OTHERS.items()) == 6 and
             all(k in SPAN_B_OTHERS or k in SPAN_B or k in ("thread_name", "tid", "pid", "comm")
                 for k in lb)),
            ("main.noSpan", lambda lb: not any(k in lb for k in
                                               ("span_id", "trace_id", "endpoint", "query")))):
        hit = total = 0
        wrong = {}
        for n, lb in samples_in(p, func):
            total += n
            if check(lb):
                hit += n
            else:
                key = ",".join("%s=%s" % kv for kv in sorted(lb.items())
                               if kv[0] not in ("thread_name", "tid", "pid", "comm"))
                wrong[key] = wrong.get(key, 0) + n
        counts.append("%s %d/%d" % (func, hit, total))
        need = total if func == "main.noSpan" else SHARE * total
        if total < 20:
            bad.append("%s: only %d samples" % (func, total))
        elif hit < need:
            bad.append("%s: %d of %d samples right; others: %s" % (func, hit, total, wrong))
    return counts, bad


def otelsdk(p, spans_file):
    spans = {}
    dec = json.JSONDecoder()
    with open(spans_file) as f:
        text = f.read()
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        obj, pos = dec.raw_decode(text, pos)
        sc = obj["SpanContext"]
        spans[sc["SpanID"]] = (sc["TraceID"], obj["Name"])
    bad = []
    seen = set()
    i = p.type_index("samples")
    for s in p.samples:
        sid = s.labels.get("span_id")
        if sid is None:
            continue
        seen.add(sid)
        if sid not in spans:
            bad.append("span %s is in the profile but the SDK exported no such span" % sid)
        elif (s.labels.get("trace_id"), s.labels.get("span_name")) != spans[sid]:
            bad.append("span %s: trace_id %s span_name %s, the SDK says %s" %
                       (sid, s.labels.get("trace_id"), s.labels.get("span_name"), spans[sid]))
    busy = total = idle = idle_total = 0
    for s in p.samples:
        stack = p.stack(s)
        n = s.values[i]
        if "main.busyWork" in stack:
            total += n
            sid = s.labels.get("span_id")
            busy += n if sid in spans and spans[sid][1] == "busy" else 0
        if "main.idleWork" in stack:
            idle_total += n
            idle += n if "span_id" not in s.labels else 0
    if total < 20:
        bad.append("busyWork: only %d samples" % total)
    elif busy < SHARE * total:
        bad.append("busyWork: %d of %d samples carry a busy span" % (busy, total))
    if idle != idle_total:
        bad.append("idleWork: %d of %d samples carry a span" % (idle_total - idle, idle_total))
    counts = ["%d spans exported" % len(spans), "%d in the profile" % len(seen),
              "busyWork %d/%d in a busy span" % (busy, total),
              "idleWork %d/%d without" % (idle, idle_total)]
    return counts, bad[:5]


def main(argv):
    if len(argv) < 2 or argv[0] not in ("golabels", "otelsdk") or \
            (argv[0] == "otelsdk") != (len(argv) == 3):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        p = pprof_raw.parse(f.read())
    counts, bad = golabels(p) if argv[0] == "golabels" else otelsdk(p, argv[2])
    print(", ".join(counts) + ("; " + "; ".join(bad) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

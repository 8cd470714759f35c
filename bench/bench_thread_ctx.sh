#!/usr/bin/env bash
# The cost of reading the OpenTelemetry thread context (OTEP 4947) at every sample. The same
# workload (tests/e2e/otel_ctx.c as otel_ctx_lib: two threads switching spans, the TLS variable in
# a TLSDESC library) is profiled at 999 Hz with its process context published, so that the
# sampler follows its TLS variable at each sample, and with OTEL_CTX_PUBLISH=0, so that it only
# misses its hash lookup; the kernel's own accounting (kernel.bpf_stats_enabled) gives the CPU
# sampler's mean run time per sample. Three rounds each, the median kept. Numbers only; nothing
# is asserted. With GO_LABELS (tests/e2e/go_labels), the same for a Go program whose goroutines
# carry pprof labels half of the time, against the same program with GOLABELS_OFF=1 (no labels:
# the sampler still follows g, m and curg to find none).
# Usage (root): bench/bench_thread_ctx.sh HOSTPROF OTEL_CTX_LIB [GO_LABELS]
set -u
hostprof=$1 workload=$2 go_workload=${3:-}
secs=4
[ "$(id -u)" -eq 0 ] || { echo "bench_thread_ctx: needs root (BPF)" >&2; exit 1; }
out=$(mktemp -d /tmp/hostprof-bench.XXXXXX)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'rm -rf "$out"; sysctl -qw kernel.bpf_stats_enabled="$old_stats"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# sampler_ns PUBLISH [WORKLOAD]: "samples ns_per_sample" of the CPU sampler over one capture.
sampler_ns() {
	local pid hp
	OTEL_CTX_PUBLISH=$1 GOLABELS_OFF=$((1 - $1)) "${2:-$workload}" $((secs + 3)) &
	pid=$!
	sleep 0.3
	"$hostprof" profile --pid "$pid" --frequency 999 --duration $((secs + 1)) -q \
		-o "$out/t.pb.gz" >"$out/hp.log" 2>&1 &
	hp=$!
	sleep "$secs"
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("hp_cpu_sample") and p.get("run_cnt"):
        print(p["run_cnt"], "%.0f" % (p["run_time_ns"] / p["run_cnt"]))'
	wait "$hp"
	wait "$pid" 2>/dev/null
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "?" }'
}

echo "## Thread context: CPU sampler run time per sample (999 Hz, ${secs} s, bpf_stats, median of 3)"
echo
echo "| process | samples (last round) | ns per sample |"
echo "|---|---|---|"
# rows WORKLOAD LABEL_WITH LABEL_WITHOUT: the table's two rows for a workload; sets with, without.
rows() {
	local publish round m n ns label
	for publish in 1 0; do
		: >"$out/ns"
		for round in 1 2 3; do
			read -r n ns < <(sampler_ns "$publish" "$1")
			echo "${ns:-}" >>"$out/ns"
		done
		m=$(grep . "$out/ns" | median)
		if [ "$publish" = 1 ]; then
			with=$m label=$2
		else
			without=$m label=$3
		fi
		echo "| $label | ${n:-?} | $m |"
	done
}

rows "$workload" "publishes a thread context (TLSDESC, read every sample)" \
	"publishes none (one hash lookup misses)"
c_with=$with c_without=$without
if [ -n "$go_workload" ]; then
	rows "$go_workload" "Go, goroutine labels on half the samples" \
		"Go, the same work with no labels (GOLABELS_OFF=1)"
	go_with=$with go_without=$without
fi
with=$c_with without=$c_without
echo
if [ -n "${with:-}" ] && [ -n "${without:-}" ] && [ "$with" != "?" ] && [ "$without" != "?" ]; then
	echo "Reading the context costs $((with - without)) ns per sample (the issue's bound: 300 ns)."
fi
if [ -n "${go_with:-}" ] && [ -n "${go_without:-}" ] && [ "$go_with" != "?" ] && [ "$go_without" != "?" ]; then
	echo "Goroutine labels cost $((go_with - go_without)) ns per sample, over half of whose samples carry them: $(((go_with - go_without) * 2)) ns per labelled sample."
fi

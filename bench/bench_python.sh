#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# What CPython frames cost. Numbers only; nothing is asserted.
#
# 1. The CPU sampler's BPF run time per Python sample, at Python call depths 20 and 100
#    (bench/py_deep.py under Debian's /usr/bin/python3: recursion, then a spin at the bottom),
#    beside a native program walked with .eh_frame tables at the same depth (bench/deep.c built
#    without frame pointers). The kernel's accounting (kernel.bpf_stats_enabled) gives the
#    sampler's run time and runs over a 999 Hz capture; the runs that are not the target's
#    (the other CPUs' idle task, other processes) cost what a capture of a sleeping process
#    costs per run, measured first, and are taken out:
#        ns per target sample = (run_time - (runs - samples) x idle_ns) / samples
#    where samples is what hostprof's summary counted. Three rounds, the median kept.
# 2. The symbolizer's code-object cache with several Python services running (bench/
#    py_services.py: SERVICES processes of FUNCTIONS distinct functions each, all called in turn):
#    the `python` rows of `profile --stats` (entries, bound, memory), and hostprof's RSS; "not
#    reported yet" while --stats has no such row.
#
# Usage (root): bench/bench_python.sh HOSTPROF DEEP_NOFP [PYTHON]
set -u
hostprof=$1 deep=$2 python=${3:-/usr/bin/python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=4
services=${PY_BENCH_SERVICES:-6}
functions=${PY_BENCH_FUNCTIONS:-3000}
[ "$(id -u)" -eq 0 ] || {
	echo "bench_python: needs root (BPF)" >&2
	exit 1
}
out=$(mktemp -d /tmp/hostprof-bench.XXXXXX)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
loads=()
cleanup() {
	local p
	for p in "${loads[@]}"; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$out"
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# sampler_stats: "runs run_time_ns" of the CPU sampler programs (whichever variant loaded).
sampler_stats() {
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
runs = ns = 0
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("hp_cpu_sample") and p.get("run_cnt"):
        runs += p["run_cnt"]
        ns += p["run_time_ns"]
print(runs, ns)'
}

# capture CMD...: profiles CMD (started here) at 999 Hz for $secs; prints
# "runs run_time_ns samples" (samples: what the summary counted).
capture() {
	local pid hp runs ns
	"$@" >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	"$hostprof" profile --pid "$pid" --frequency 999 -o "$out/p.pb.gz" >"$out/hp.log" 2>&1 &
	hp=$!
	sleep "$secs"
	read -r runs ns < <(sampler_stats)
	kill -INT "$hp"
	wait "$hp"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "${runs:-0} ${ns:-0} $(sed -nE 's/^Captured .*: ([0-9]+) samples.*/\1/p' "$out/hp.log")"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "?" }'
}

# Per run of the sampler that is not the target's: a capture of a process that sleeps.
idle_ns() {
	local runs ns n
	read -r runs ns n < <(capture sleep $((secs + 5)))
	awk -v r="$runs" -v t="$ns" 'BEGIN { printf "%.0f", r ? t / r : 0 }'
}

# per_sample CMD...: the median over three rounds of the sampler's ns per target sample; the
# last round's sample count goes to $out/samples.
per_sample() {
	local runs ns n
	: >"$out/ns"
	for _ in 1 2 3; do
		read -r runs ns n < <(capture "$@")
		echo "${n:-0}" >"$out/samples"
		awk -v r="$runs" -v t="$ns" -v s="${n:-0}" -v d="$IDLE" \
			'BEGIN { if (s > 0) printf "%.0f\n", (t - (r - s) * d) / s }' >>"$out/ns"
	done
	grep . "$out/ns" | median
}

IDLE=$(idle_ns)
echo "## CPython frames: CPU sampler run time per sample (999 Hz, ${secs} s, bpf_stats, median of 3)"
echo
echo "A run that is not the target's costs ${IDLE} ns (a capture of a sleeping process); it is"
echo "taken out of the figures below. $("$python" -c 'import sys; print("Python", sys.version.split()[0])') is $python."
echo
echo "| workload | depth | samples (last round) | ns per sample |"
echo "|---|---|---|---|"
for depth in 20 100; do
	py=$(per_sample "$python" "$here/py_deep.py" "$depth" $((secs + 5)))
	echo "| Python ($python, py_deep.py) | $depth Python frames | $(cat "$out/samples") | $py |"
	c=$(per_sample "$deep" "$depth" $((secs + 5)))
	echo "| native (deep, no frame pointers, .eh_frame) | $depth C frames | $(cat "$out/samples") | $c |"
done
echo
echo "The issue's target: <= 3000 ns per Python sample at depth 20."

echo
echo "## The symbolizer's code-object cache: $services Python services of $functions functions each"
echo
pids=()
for ((i = 0; i < services; i++)); do
	"$python" "$here/py_services.py" "$functions" 60 >/dev/null 2>&1 &
	pids+=($!)
	loads+=($!)
done
sleep 1
"$hostprof" profile --pid "$(
	IFS=,
	echo "${pids[*]}"
)" --duration 10 --stats -o "$out/svc.pb.gz" >"$out/svc.log" 2>&1
for p in "${pids[@]}"; do
	kill "$p" 2>/dev/null
done
wait 2>/dev/null
sed -nE 's/^Captured .*: ([0-9]+) samples.*/samples: \1/p' "$out/svc.log"
rows=$(sed -n '/^Caches/,$p' "$out/svc.log" | grep -i -E 'python|code object')
if [ -n "$rows" ]; then
	sed -n '/^Caches/p' "$out/svc.log"
	echo "$rows"
else
	echo "python code-object cache: not reported yet (no python row in --stats)"
fi
grep -E 'hostprof resident' "$out/svc.log"

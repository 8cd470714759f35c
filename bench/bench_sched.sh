#!/usr/bin/env bash
# The cost of hostprof's scheduler-side programs. Under a context-switch-heavy load (bench/pingpong:
# on each CPU a pair of threads pinned to it, ping-ponging through pipes), run the workload alone and under `hostprof profile --all --types
# cpu,wall,contention`, alternating A B A B, and print: the workload's round trips per second
# (median) and its slowdown; then, in one more profiled run with the kernel's own accounting on
# (kernel.bpf_stats_enabled, which itself costs two clock reads per program run, so it stays off
# while throughput is measured), per BPF program its run count and mean cost per run. Numbers
# only; nothing is asserted.
# HP_ARGS adds hostprof options (--wait-sample-us 0: every wait's stacks, as before sampling) and
# names the run in the table; HP_TYPES replaces the profile types (cpu,contention or cpu,wall:
# what each hook costs alone); HOSTPROF_FUTEX_WAITS=syscalls, in the environment, times futex waits
# at the futex calls, as before the sched_switch program took them (named in the table too).
# Usage (root): [HP_ARGS=...] [HP_TYPES=...] bench/bench_sched.sh HOSTPROF PINGPONG [REPETITIONS]
set -u
hostprof=$1 pingpong=$2 reps=${3:-3}
read -r -a hp_args <<<"${HP_ARGS:-}"
types=${HP_TYPES:-cpu,wall,contention}
secs=4
[ "$(id -u)" -eq 0 ] || { echo "bench_sched: needs root (BPF)" >&2; exit 1; }
out=$(mktemp -d /tmp/hostprof-bench.XXXXXX)
trap 'rm -rf "$out"; sysctl -qw kernel.bpf_stats_enabled="$old_stats"' EXIT
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=0

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$out/alone"
: >"$out/profiled"
: >"$out/progs"
# profiled SECONDS: the workload's round trips per second under hostprof.
profiled() {
	local hp
	"$hostprof" profile --all --types "$types" --duration $(($1 + 3)) "${hp_args[@]}" \
		-o "$out/p.folded" >/dev/null 2>"$out/hostprof.log" &
	hp=$!
	# Measured once its programs are attached (its "profiling ..." line) and its first reading
	# of the host is done: loading the contention programs alone takes seconds of verification,
	# which a fixed pause measured as the cost of every context switch.
	for _ in $(seq 300); do
		grep -q "profiling" "$out/hostprof.log" || ! kill -0 "$hp" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	"$pingpong" "$1"
	# While hostprof still runs: its programs' counters since they were loaded.
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("hp_") and p.get("run_cnt"):
        print(p["name"], p["run_cnt"], p["run_time_ns"])' >>"$out/progs"
	wait "$hp"
}

for r in $(seq "$reps"); do
	"$pingpong" "$secs" >>"$out/alone"
	profiled "$secs" >>"$out/profiled"
done
: >"$out/progs"
sysctl -qw kernel.bpf_stats_enabled=1
profiled "$secs" >/dev/null
sysctl -qw kernel.bpf_stats_enabled=0

alone=$(median <"$out/alone")
profiled=$(median <"$out/profiled")
echo "## Scheduler-heavy load: ${reps} x ${secs} s each way, A B A B, medians"
echo
# Each CPU runs one pair: a round trip is two context switches on it, so a switch takes
# cpus / (2 x rate) seconds of that CPU, and hostprof adds the difference.
echo "| run | round trips/s | context switches/s | slowdown | added per context switch |"
echo "|---|---|---|---|---|"
echo "| alone | $alone | $((alone * 2)) | | |"
awk -v a="$alone" -v p="$profiled" -v c="$(nproc)" -v args="${HP_ARGS:-defaults}${HOSTPROF_FUTEX_WAITS:+; HOSTPROF_FUTEX_WAITS=$HOSTPROF_FUTEX_WAITS}" -v t="$types" 'BEGIN {
	printf "| hostprof %s (%s) | %d | %d | %.1f%% | %.2f µs |\n", t, args, p, 2 * p,
		100 * (a - p) / a, 1e6 * c / 2 * (1 / p - 1 / a) }'
echo
echo "Per program, from one more run with kernel.bpf_stats_enabled (its own clock reads add to each):"
echo
echo "| BPF program | runs | ns per run |"
echo "|---|---|---|"
awk '{ n[$1] += $2; t[$1] += $3 } END { for (p in n) printf "| %s | %d | %.0f |\n", p, n[p], t[p] / n[p] }' \
	"$out/progs" | sort

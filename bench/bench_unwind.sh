#!/usr/bin/env bash
# The cost of walking user stacks. A program recursing to a fixed depth (bench/deep.c, built with
# and without frame pointers) is profiled at 999 Hz with frame pointers (--unwind fp) and with
# the .eh_frame tables (--unwind dwarf), at depth 10 and 64; the kernel's own accounting
# (kernel.bpf_stats_enabled) gives the mean run time of the CPU sampler per sample. Then the
# profiler's own CPU time against `perf record -F 99 -a --call-graph dwarf` over the same load.
# Numbers only; nothing is asserted.
# Then the cost of the tables themselves: the time and memory to build those of libc, python3 and
# the largest binary over 50 MB on the machine (bench_tables), the rows map that 200 distinct
# binaries need, and the BPF map memory (memlock) of a whole-host capture.
# Usage (root): bench/bench_unwind.sh HOSTPROF DEEP_FP DEEP_NOFP BENCH_TABLES
set -u
hostprof=$1 deep_fp=$2 deep_nofp=$3 bench_tables=$4
secs=4
[ "$(id -u)" -eq 0 ] || { echo "bench_unwind: needs root (BPF)" >&2; exit 1; }
out=$(mktemp -d /tmp/hostprof-bench.XXXXXX)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'rm -rf "$out"; sysctl -qw kernel.bpf_stats_enabled="$old_stats"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# sampler_cost MODE BINARY DEPTH: "runs ns_per_run" of hp_cpu_sample over one capture. MODE fp,
# dwarf, or tailcall (dwarf as kernels without bpf_loop walk: across tail calls, whose time the
# kernel counts to the program that began the chain).
sampler_cost() {
	local mode=$1 bin=$2 depth=$3 pid hp walker=
	"$bin" "$depth" $((secs + 3)) &
	pid=$!
	if [ "$mode" = tailcall ]; then
		mode=dwarf walker=tailcall
	fi
	HOSTPROF_UNWIND_WALKER=$walker "$hostprof" profile --pid "$pid" --unwind "$mode" --frequency 999 \
		--duration $((secs + 1)) -q -o "$out/u.folded" >"$out/hp.log" 2>&1 &
	hp=$!
	sleep "$secs"
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    # hp_cpu_sample (frame pointers, tail calls) or hp_cpu_sample_loop (the bpf_loop walker),
    # whose name bpftool cuts at 15 characters
    if p.get("name", "").startswith("hp_cpu_sample") and p.get("run_cnt"):
        print(p["run_cnt"], "%.0f" % (p["run_time_ns"] / p["run_cnt"]))'
	wait "$hp"
	wait "$pid" 2>/dev/null
}

# cpu_seconds PID: user + system CPU seconds of a process so far.
cpu_seconds() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat"
}

echo "## Unwinding: hp_cpu_sample run time per sample (999 Hz, ${secs} s, bpf_stats)"
echo
echo "| unwinder | binary | depth | samples | ns per sample |"
echo "|---|---|---|---|---|"
for depth in 10 64; do
	for run in "fp $deep_fp frame-pointers" "dwarf $deep_nofp no-frame-pointers" "dwarf $deep_fp frame-pointers" \
		"tailcall $deep_nofp no-frame-pointers"; do
		set -- $run
		read -r n ns < <(sampler_cost "$1" "$2" "$depth")
		echo "| $1 | $3 | $depth | ${n:-?} | ${ns:-?} |"
	done
done

echo
echo "## Profiler CPU time over the same load, side by side (deep, depth 64, 99 Hz, whole host)"
echo
"$deep_nofp" 64 $((2 * secs + 6)) &
load=$!
"$hostprof" profile --all --frequency 99 --duration $((secs + 1)) -q -o "$out/all.folded" >/dev/null 2>&1 &
hp=$!
sleep "$secs"
hp_cpu=$(cpu_seconds "$hp")
wait "$hp"
if command -v perf >/dev/null; then
	perf record -q -a -F 99 --call-graph dwarf -o "$out/perf.data" -- sleep "$secs" >/dev/null 2>&1 &
	pf=$!
	sleep $((secs - 1))
	perf_cpu=$(cpu_seconds "$pf")
	wait "$pf"
	perf_size=$(du -k "$out/perf.data" | cut -f1)
	# perf record only copies 8 KiB of stack per sample; the unwinding is perf script's work.
	t0=$(date +%s.%N)
	perf script -i "$out/perf.data" -F comm,ip,sym >/dev/null 2>&1
	perf_unwind=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
else
	perf_cpu="(perf not installed)" perf_size="-" perf_unwind="-"
fi
wait "$load" 2>/dev/null
echo "| profiler | CPU seconds over ~${secs} s | output |"
echo "|---|---|---|"
echo "| hostprof --unwind dwarf | $hp_cpu | $(du -k "$out/all.folded" | cut -f1) KiB folded |"
echo "| perf record --call-graph dwarf | $perf_cpu | ${perf_size} KiB perf.data (stacks copied, unwound later) |"
echo "| + perf script (its unwinding, wall seconds) | ${perf_unwind:-?} | symbolized stacks |"

echo
echo "## Building unwind tables (bench_tables)"
echo
big=$(find /usr/lib /usr/bin /usr/libexec -type f -size +50M 2>/dev/null |
	while read -r f; do head -c 4 "$f" | grep -q ELF && echo "$f"; done | head -1)
libc=$(find /usr/lib /lib -name libc.so.6 -type f 2>/dev/null | head -1)
python=$(readlink -f /usr/bin/python3)
"$bench_tables" ${libc:+"$libc"} ${python:+"$python"} ${big:+"$big"}
[ -n "$big" ] || echo "(no ELF binary over 50 MB on this machine)"
echo
many=$(find /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/bin -maxdepth 1 -type f \
	\( -name '*.so*' -o -perm -u+x \) 2>/dev/null | sort |
	while read -r f; do head -c 4 "$f" | grep -q ELF && echo "$f"; done | head -200)
# shellcheck disable=SC2086
"$bench_tables" --sum $many

echo
echo "## BPF map memory of a whole-host capture (bpftool memlock, after 4 s)"
echo
"$hostprof" profile --all --duration 6 -q -o "$out/mem.folded" >/dev/null 2>&1 &
hp=$!
sleep 4
# Our maps are those of our programs (hp_*): Debian's bpftool does not say which process holds
# a map.
ids=$(bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
ids = set()
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("hp_"):
        ids.update(p.get("map_ids", []))
print(" ".join(str(i) for i in sorted(ids)))')
bpftool -j map show 2>/dev/null | python3 -c '
import json, sys
want = set(int(i) for i in sys.argv[1].split())
rows = [(m.get("bytes_memlock", 0), m.get("name", "?")) for m in json.load(sys.stdin)
        if m.get("id") in want]
rows.sort(reverse=True)
print("| map | memlock MiB |")
print("|---|---|")
for b, n in rows[:8]:
    print("| %s | %.1f |" % (n, b / 1048576))
print("| all %d maps | %.1f |" % (len(rows), sum(b for b, _ in rows) / 1048576))' "$ids"
wait "$hp"

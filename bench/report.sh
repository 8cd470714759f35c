#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The overhead budget, measured side by side in one run: what hostprof costs the host, beside
# perf, bpftrace and the OpenTelemetry eBPF profiler doing the same job. Writes OUTDIR/report.md (tables) and OUTDIR/report.json
# (every raw number). Numbers only: nothing here is asserted (timings on shared machines are
# noise); the report warns when a measurement's spread is wide.
#
#  1. Overhead on CPU-bound work (bench/fixedwork: zlib on every core, a fixed amount): nothing
#     attached, `hostprof agent` at 19 Hz and 99 Hz, `perf record -F 99 -a -g`, bpftrace's
#     profile:hz:99 aggregation, and the OpenTelemetry eBPF profiler (ebpf-profiler, exporting
#     OTLP over gRPC to bench/otelprof/receiver) at 20 Hz (its default) and 99 Hz, in turn
#     (A B C ..., A B C ..., ...). Per row: the work's median time and slowdown, the profiler's
#     own CPU time (/proc/PID/stat) and the run time of its BPF programs
#     (kernel.bpf_stats_enabled), each as a share of one core, and that run time per sample
#     (over the runs of its perf_event programs: a tail call's time counts in its caller's).
#  2. Scheduler-heavy load (bench/pingpong: on each CPU a pair of threads pinned to it,
#     ping-ponging through pipes): alone and under
#     the agent with cpu,wall,contention, in turn; the slowdown and the mean cost per sched_switch
#     event of the agent's hook.
#  3. Memory: the agent at its defaults after MEM_SECS on a host running about 200 processes of
#     several binaries (shell loops with coreutils, python3, a C++ program with exceptions, a
#     program calling into a shared library): RSS, PSS, and the memlock of its BPF maps; then the
#     OpenTelemetry eBPF profiler at its defaults on the same host for as long, the same figures.
#  4. Export size: the same run exports OTLP (gzip) to a local receiver and writes pprof files:
#     bytes per minute of each.
#  5. Fidelity: nofp (tests/e2e/nofp.c: C without frame pointers, through a library without them,
#     leaves split 1:2:3) and Debian's python3 running tests/e2e/py_recurse.py (40 deep), at once,
#     under `hostprof profile --pid` and then under the OpenTelemetry eBPF profiler at 99 Hz
#     (counted after FID_SETTLE s, once it has found them): the share of samples that reach main
#     (nofp: main > level_one > level_two > level_three; python3: Py_BytesMain >
#     _PyEval_EvalFrameDefault, or > <module> where the Python frames replace the loop), nofp's
#     leaf shares, and for the profiler that names Python
#     functions, the share holding all 41 frames of `down`.
#  6. The unwinding and scheduler figures of `make bench-unwind`, the symbolization figures of
#     `make bench-symbolize` and the soak of `make bench-soak`, when they are in OUTDIR, are
#     gathered at the end.
#
# Usage (root): bench/report.sh [--smoke] OUTDIR
#   --smoke: one short repetition of everything (about a minute), for `make test`: it shows that
#   the report is produced and well-formed, not what the numbers are.
# Environment: HOSTPROF, FIXEDWORK, PINGPONG, WL (the e2e workloads directory), PY (the python3
# of the memory and fidelity sections: the distribution's), OTELPROF_DIR (ebpf-profiler and
# otlp-profiles-receiver, from bench/otelprof/build.sh), REPS (rounds), RUNS (runs of the work
# per block), WORK_SECS (one run's length, calibrated), MEM_SECS, MEM_PROCS, FID_SECS.
set -u
smoke=0
if [ "${1:-}" = --smoke ]; then
	smoke=1
	shift
fi
outdir=${1:?usage: bench/report.sh [--smoke] OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-build}
case $OUTPUT in /*) ;; *) OUTPUT=$root/$OUTPUT ;; esac
HOSTPROF=${HOSTPROF:-$OUTPUT/hostprof}
FIXEDWORK=${FIXEDWORK:-$OUTPUT/bench/fixedwork}
PINGPONG=${PINGPONG:-$OUTPUT/bench/pingpong}
WL=${WL:-$OUTPUT/e2e}
# The distribution's python3 (not one on PATH before it, such as a pyenv build with its DWARF):
# what a host runs.
PY=${PY:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
if [ "$smoke" = 1 ]; then
	REPS=${REPS:-1} RUNS=${RUNS:-1} WORK_SECS=${WORK_SECS:-1} MEM_SECS=${MEM_SECS:-6}
	MEM_PROCS=${MEM_PROCS:-24}
	SCHED_SECS=1 SETTLE=1 AGENT_SETTLE=1 STEADY_SETTLE=1 STEADY_SECS=2
	FID_SECS=${FID_SECS:-3} FID_SETTLE=3
	# The OpenTelemetry eBPF profiler's export interval: short enough to be seen in a smoke.
	OTEL_INTERVAL=2s
else
	REPS=${REPS:-5} RUNS=${RUNS:-4} WORK_SECS=${WORK_SECS:-4} MEM_SECS=${MEM_SECS:-60}
	MEM_PROCS=${MEM_PROCS:-200}
	# The agent's first seconds read the host's processes and load their unwind tables, as
	# they are first sampled (at 19 Hz, tens of seconds for a host's idle ones): measured after
	# them, as the steady state a host lives in.
	SCHED_SECS=4 SETTLE=2 AGENT_SETTLE=${AGENT_SETTLE:-20} STEADY_SETTLE=30 STEADY_SECS=60
	FID_SECS=${FID_SECS:-20} FID_SETTLE=10
	OTEL_INTERVAL=5s # its default
fi
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF, perf, bpftrace)" >&2; exit 1; }
OTELPROF_DIR=${OTELPROF_DIR:-}
OTELPROF=$OTELPROF_DIR/ebpf-profiler
OTELRX=$OTELPROF_DIR/otlp-profiles-receiver
for t in "$HOSTPROF" "$FIXEDWORK" "$PINGPONG" "$WL/cxx_throw" "$WL/lib_ratio" "$WL/nofp" \
	"$OTELPROF" "$OTELRX"; do
	[ -x "$t" ] || { echo "bench: $t is missing: run make bench (it builds them)" >&2; exit 1; }
done
mkdir -p "$outdir"
tmp=$(mktemp -d /tmp/hostprof-report.XXXXXX)
results=$tmp/results
: >"$results"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
BG=()
mounted_tracefs=
cleanup() {
	local p
	for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	[ -z "$mounted_tracefs" ] || umount /sys/kernel/tracing
	rm -rf "$tmp"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1
# The OpenTelemetry eBPF profiler attaches its tracepoints through tracefs (hostprof needs none);
# mounted for the run when the host has not, and unmounted after.
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs tracefs /sys/kernel/tracing || {
		echo "bench: cannot mount tracefs on /sys/kernel/tracing (the OpenTelemetry eBPF profiler needs it)" >&2
		exit 1
	}
	mounted_tracefs=1
fi
cores=$(nproc)

# record KEY VALUE: one raw number for report.json (KEY a dotted path).
record() { echo "$1 $2" >>"$results"; }
# kv KEY FILE: the value of a `key value` line (0 when there is none).
kv() { awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' "$2" 2>/dev/null || echo 0; }

# cpu_ns PID: nanoseconds on a CPU of its live threads (schedstat: the scheduler's own clock, not
# ticks). A thread gone meanwhile takes its time with it: the profilers' threads live as long
# as they do.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'
}

# The BPF programs and maps loaded now, by ID: what a profiler adds is what was not there before.
# Read with bpftool and awk only: a python3 here would be one more process for the profiler under
# test to load tables for and symbolize, inside the measurement.
prog_ids() { bpftool prog show 2>/dev/null | awk -F: '/^[0-9]+:/ { printf "%s ", $1 }'; }
# bpf_ns BASELINE_IDS: run time (ns) and run count summed over the programs not in the baseline,
# and the run count of those of them that are perf_event programs: the samples (a tail call's
# time is counted in the program that made it, and its own count stays 0).
bpf_ns() {
	bpftool prog show 2>/dev/null | awk -v base=" $1 " '
		/^[0-9]+:/ { id = $1; sub(/:$/, "", id); mine = index(base, " " id " ") == 0
			perf = $2 == "perf_event" }
		mine { for (i = 1; i < NF; i++) {
			if ($i == "run_time_ns") t += $(i + 1)
			if ($i == "run_cnt") { n += $(i + 1); if (perf) s += $(i + 1) } } }
		END { print t + 0, n + 0, s + 0 }'
}
# map_bytes BASELINE_MAP_IDS: memlock of the maps not in the baseline.
map_ids() { bpftool -j map show 2>/dev/null | python3 -c 'import json,sys; print(" ".join(str(m["id"]) for m in json.load(sys.stdin)))'; }
map_bytes() {
	bpftool -j map show 2>/dev/null | python3 -c '
import json, sys
base = set(sys.argv[1].split())
print(sum(m.get("bytes_memlock", 0) for m in json.load(sys.stdin) if str(m["id"]) not in base))' "$1"
}

# start_profiler NAME: starts one of the compared profilers in the background; sets PROF_PID.
start_profiler() {
	PROF_PID=
	case $1 in
	none) return ;;
	hostprof19 | hostprof99)
		mkdir -p "$tmp/agent-out"
		"$HOSTPROF" agent -F "${1#hostprof}" --output-dir "$tmp/agent-out" \
			--set export.keep_files=2 -q >"$tmp/$1.log" 2>&1 &
		PROF_PID=$!
		BG+=("$PROF_PID")
		sleep "$AGENT_SETTLE"
		return
		;;
	otel20 | otel99)
		# Its defaults but for the rate: OTLP over gRPC every 5 s, to the receiver started
		# below, which only counts what it is sent.
		"$OTELPROF" -collection-agent "127.0.0.1:$otel_port" -disable-tls \
			-reporter-interval "$OTEL_INTERVAL" -samples-per-second "${1#otel}" \
			>"$tmp/$1.log" 2>&1 &
		PROF_PID=$!
		BG+=("$PROF_PID")
		sleep "$AGENT_SETTLE"
		return
		;;
	perf99) perf record -F 99 -a -g -q -o "$tmp/perf.data" >"$tmp/$1.log" 2>&1 & ;;
	bpftrace99)
		bpftrace -e 'profile:hz:99 { @[kstack, ustack, comm] = count(); }' >/dev/null \
			2>"$tmp/$1.log" &
		;;
	esac
	PROF_PID=$!
	BG+=("$PROF_PID")
	sleep "$SETTLE"
}

stop_profiler() {
	[ -n "$PROF_PID" ] || return
	kill -INT "$PROF_PID" 2>/dev/null
	wait "$PROF_PID" 2>/dev/null
	rm -f "$tmp/perf.data"
}

# start_otel_receiver NAME ARGS...: the OTLP gRPC receiver the OpenTelemetry eBPF profiler
# exports to (bench/otelprof/receiver); sets otel_port and OTELRX_PID.
start_otel_receiver() {
	local name=$1 _
	shift
	"$OTELRX" -stats "$tmp/$name.stats" "$@" >"$tmp/$name.port" 2>"$tmp/$name.log" &
	OTELRX_PID=$!
	BG+=("$OTELRX_PID")
	otel_port=
	for _ in $(seq 50); do
		otel_port=$(head -1 "$tmp/$name.port" 2>/dev/null)
		[ -n "$otel_port" ] && return
		sleep 0.1
	done
	echo "bench: $OTELRX did not start: $(cat "$tmp/$name.log")" >&2
	exit 1
}

# ---- 1. overhead on CPU-bound work ----
# Calibrate the work to about WORK_SECS with nothing attached.
iters=4
t=$("$FIXEDWORK" "$cores" "$iters")
iters=$(awk -v t="$t" -v want="$WORK_SECS" -v i="$iters" 'BEGIN { n = int(i * want / t); print n < 1 ? 1 : n }')
warm_iters=$(awk -v i="$iters" 'BEGIN { n = int(i / 8); print n < 1 ? 1 : n }')
# One run to warm caches and clocks, not counted: the first of a series is the slow one.
"$FIXEDWORK" "$cores" "$iters" >/dev/null
record overhead.iterations "$iters"
record overhead.threads "$cores"
record overhead.runs_per_block "$RUNS"
# Blocks in turn (A B C D E, A B C D E, ...), RUNS runs of the work in each: a block's runs are
# back to back, so that a profiler's start and settling are paid once per block, and each round
# gives one paired comparison with the nothing-attached block beside it.
configs=(none hostprof19 hostprof99 perf99 bpftrace99 otel20 otel99)
start_otel_receiver otelrx
n=0
for rep in $(seq "$REPS"); do
	for c in "${configs[@]}"; do
		base=$(prog_ids)
		start_profiler "$c"
		# First sight: the work once, short and not counted, so that every profiler has
		# seen its binaries before the timed runs (the agent reads their symbols and DWARF
		# once per binary, as a host's long-running profiler has long since done). What it
		# cost is its own figure.
		f0=0
		[ -n "$PROF_PID" ] && f0=$(cpu_ns "$PROF_PID")
		"$FIXEDWORK" "$cores" "$warm_iters" >/dev/null
		sleep 2 # the agent drains and symbolizes once a second
		[ -n "$PROF_PID" ] && record "overhead.$c.first_sight_cpu_s.$rep" "$(awk -v a="$f0" -v b="$(cpu_ns "$PROF_PID")" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
		# The BPF counters are read by new processes (bpftool, python3), which the profiler
		# also sees, loads tables for and symbolizes: its CPU time is taken inside their
		# readings, after it has settled from the first, and before the last. The BPF run
		# time is over the readings' whole span.
		read -r bpf0 _ smp0 < <(bpf_ns "$base")
		t0=$(date +%s.%N)
		sleep 1.5
		cpu0=0
		[ -n "$PROF_PID" ] && cpu0=$(cpu_ns "$PROF_PID")
		walls=0
		for k in $(seq "$RUNS"); do
			n=$((n + 1))
			wall=$("$FIXEDWORK" "$cores" "$iters")
			record "overhead.$c.wall_s.$n" "$wall"
			record "overhead.$c.round.$n" "$rep"
			walls=$(awk -v a="$walls" -v b="$wall" 'BEGIN { printf "%.4f", a + b }')
		done
		cpu1=0
		[ -n "$PROF_PID" ] && cpu1=$(cpu_ns "$PROF_PID")
		read -r bpf1 _ smp1 < <(bpf_ns "$base")
		t1=$(date +%s.%N)
		stop_profiler
		record "overhead.$c.block_wall_s.$rep" "$walls"
		record "overhead.$c.profiler_cpu_s.$rep" "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
		# Scaled to the work's time: the share of one core is then (bpf_s / wall_s).
		record "overhead.$c.bpf_s.$rep" "$(awk -v a="$bpf0" -v b="$bpf1" -v s0="$t0" -v s1="$t1" -v w="$walls" 'BEGIN { printf "%.6f", (b - a) / 1e9 * w / (s1 - s0) }')"
		record "overhead.$c.bpf_run_ns.$rep" $((bpf1 - bpf0))
		record "overhead.$c.bpf_samples.$rep" $((smp1 - smp0))
	done
done

# ---- 1b. the agent's own CPU in its steady state ----
# Each run above measures a few seconds right after the agent started, while it still reads the
# host's processes and loads their tables for the first time, and /proc/PID/stat counts 10 ms
# ticks (a fifth of a percent of a 5 s run). A continuous profiler lives in its steady state:
# the agent at 19 Hz, STEADY_SETTLE s after its start, over STEADY_SECS s, with the fixed work
# running throughout.
"$HOSTPROF" agent -F 19 --output-dir "$tmp/agent-out" --set export.keep_files=2 -q \
	>"$tmp/steady.log" 2>&1 &
PROF_PID=$!
BG+=("$PROF_PID")
( end=$((SECONDS + STEADY_SETTLE + STEADY_SECS + 2)); while [ $SECONDS -lt $end ]; do
	"$FIXEDWORK" "$cores" "$iters" >/dev/null; done ) &
steady_load=$!
BG+=("$steady_load")
sleep "$STEADY_SETTLE"
cpu0=$(cpu_ns "$PROF_PID")
t0=$(date +%s.%N)
sleep "$STEADY_SECS"
cpu1=$(cpu_ns "$PROF_PID")
t1=$(date +%s.%N)
stop_profiler
wait "$steady_load" 2>/dev/null
record otel.requests "$(kv requests "$tmp/otelrx.stats")"
record otel.samples "$(kv samples "$tmp/otelrx.stats")"
record overhead.steady.after_s "$STEADY_SETTLE"
record overhead.agent_settle_s "$AGENT_SETTLE"
record overhead.steady.secs "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
record overhead.steady.profiler_cpu_s "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"

# ---- 2. scheduler-heavy load ----
for rep in $(seq "$REPS"); do
	record "sched.alone.trips_per_s.$rep" "$("$PINGPONG" "$SCHED_SECS")"
	base=$(prog_ids)
	"$HOSTPROF" agent --types cpu,wall,contention --output-dir "$tmp" --set export.keep_files=1 \
		-q >"$tmp/sched.log" 2>&1 &
	PROF_PID=$!
	BG+=("$PROF_PID")
	sleep "$SETTLE"
	# The agent's sched_switch program: hp_offcpu_switch, or its _loop, _return or _raw variant.
	read -r b0 n0 < <(bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
t = n = 0
for p in json.load(sys.stdin):
    if "offcpu_switch" in p.get("name", ""): t += p.get("run_time_ns", 0); n += p.get("run_cnt", 0)
print(t, n)')
	record "sched.agent.trips_per_s.$rep" "$("$PINGPONG" "$SCHED_SECS")"
	read -r b1 n1 < <(bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
t = n = 0
for p in json.load(sys.stdin):
    if "offcpu_switch" in p.get("name", ""): t += p.get("run_time_ns", 0); n += p.get("run_cnt", 0)
print(t, n)')
	stop_profiler
	record "sched.agent.switch_events.$rep" $((n1 - n0))
	record "sched.agent.ns_per_switch.$rep" "$(awk -v t=$((b1 - b0)) -v n=$((n1 - n0)) 'BEGIN { printf "%.0f", n ? t / n : 0 }')"
done

# ---- 3 and 4. memory on a host of ~MEM_PROCS processes, and export size ----
py_loop='import time
while True:
    sum(range(3000)); time.sleep(0.5)'
py_libs='import ssl, sqlite3, ctypes, decimal, hashlib, lzma, bz2, zlib, json, time, uuid
while True:
    hashlib.sha256(b"x" * 4096).hexdigest(); time.sleep(0.5)'
# The C and C++ programs burn a core each: two of each, at the lowest priority; the rest wake
# twice a second.
for i in $(seq "$MEM_PROCS"); do
	case $i in
	1 | 2) nice -n 19 "$WL/cxx_throw" "$((2 * MEM_SECS + 60))" >/dev/null 2>&1 & ;;
	3 | 4) nice -n 19 "$WL/lib_ratio" "$((2 * MEM_SECS + 60))" >/dev/null 2>&1 & ;;
	*)
		case $((i % 10)) in
		0 | 1) "$PY" -c "$py_loop" >/dev/null 2>&1 & ;;
		2) "$PY" -c "$py_libs" >/dev/null 2>&1 & ;;
		*) sh -c 'while :; do date >/dev/null; ls / >/dev/null; sleep 0.5; done' >/dev/null 2>&1 & ;;
		esac
		;;
	esac
	BG+=($!)
done
sleep 1
record memory.processes "$(ls /proc | grep -c '^[0-9]')"
rx=$tmp/rx
mkdir -p "$rx" "$tmp/mem-out"
python3 "$root/tests/receiver/http_receiver.py" --dir "$rx" --lifetime $((MEM_SECS + 60)) \
	--max-requests 100000 >"$tmp/rx.port" 2>/dev/null &
BG+=($!)
for _ in $(seq 50); do
	port=$(head -1 "$tmp/rx.port" 2>/dev/null)
	[ -n "$port" ] && break
	sleep 0.1
done
mbase=$(map_ids)
interval=15
[ "$smoke" = 1 ] && interval=2
"$HOSTPROF" agent --otlp-endpoint "http://127.0.0.1:$port/v1development/profiles" \
	--output-dir "$tmp/mem-out" --set export.keep_files=100000 \
	--upload-interval "${interval}s" -q >"$tmp/mem.log" 2>&1 &
agent=$!
BG+=("$agent")
t0=$(date +%s.%N)
sleep "$MEM_SECS"
record memory.rss_kib "$(awk '/^VmRSS:/ { print $2 }' "/proc/$agent/status")"
record memory.pss_kib "$(awk '/^Pss:/ { print $2 }' "/proc/$agent/smaps_rollup")"
record memory.bpf_map_bytes "$(map_bytes "$mbase")"
record memory.seconds "$MEM_SECS"
kill -TERM "$agent"
wait "$agent"
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
record export.seconds "$secs"
record export.otlp_gzip_bytes "$(cat "$rx"/*.meta 2>/dev/null | awk '/^raw_length / { s += $2 } END { print s + 0 }')"
record export.otlp_requests "$(find "$rx" -name '*.meta' | wc -l)"
record export.pprof_gzip_bytes "$(find "$tmp/mem-out" -name '*.pb.gz' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')"

# The OpenTelemetry eBPF profiler at its defaults (20 Hz, OTLP every 5 s) on the same host, as
# long.
start_otel_receiver otelmem
mbase=$(map_ids)
"$OTELPROF" -collection-agent "127.0.0.1:$otel_port" -disable-tls \
	-reporter-interval "$OTEL_INTERVAL" >"$tmp/otelmem.log" 2>&1 &
prof=$!
BG+=("$prof")
sleep "$MEM_SECS"
if kill -0 "$prof" 2>/dev/null; then
	record memory_otel.rss_kib "$(awk '/^VmRSS:/ { print $2 }' "/proc/$prof/status")"
	record memory_otel.pss_kib "$(awk '/^Pss:/ { print $2 }' "/proc/$prof/smaps_rollup")"
	record memory_otel.bpf_map_bytes "$(map_bytes "$mbase")"
else
	echo "bench: the OpenTelemetry eBPF profiler exited: $(tail -3 "$tmp/otelmem.log")" >&2
fi
record memory_otel.processes "$(ls /proc | grep -c '^[0-9]')"
record memory_otel.seconds "$MEM_SECS"
kill -INT "$prof"
wait "$prof"
record memory_otel.otlp_requests "$(kv requests "$tmp/otelmem.stats")"
for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
BG=()

# ---- 6. fidelity ----
# nofp and python3 at once, in the background for both captures; the same processes for both.
PY_RECURSE=$(cat "$root/tests/e2e/py_recurse.py")
"$WL/nofp" 0 >/dev/null 2>&1 &
fid_nofp=$!
BG+=("$fid_nofp")
"$PY" -c "$PY_RECURSE" >/dev/null 2>&1 &
fid_py=$!
BG+=("$fid_py")
sleep 1
"$HOSTPROF" profile --pid "$fid_nofp,$fid_py" --duration "$FID_SECS" -F 99 \
	-o "$outdir/fidelity-hostprof.folded" -q >"$tmp/fid-hostprof.log" 2>&1 ||
	echo "bench: hostprof profile for the fidelity figures failed: $(tail -3 "$tmp/fid-hostprof.log")" >&2
# Native frames reach the receiver as file addresses and build-ids: it symbolizes them with
# these files' symbols (and libc's debug file, found by build-id).
elfs=()
for f in "$WL/nofp" "$PY"; do
	elfs+=(-elf "$(readlink -f "$f")")
	while read -r lib; do elfs+=(-elf "$lib"); done < <(ldd "$f" | awk '$3 ~ /^\// { print $3 }')
done
start_otel_receiver otelfid -folded "$tmp/fid-otel.folded" -pid "$fid_nofp" -pid "$fid_py" "${elfs[@]}"
rx=$OTELRX_PID
"$OTELPROF" -collection-agent "127.0.0.1:$otel_port" -disable-tls -samples-per-second 99 \
	-reporter-interval 1s >"$tmp/otelfid.log" 2>&1 &
prof=$!
BG+=("$prof")
sleep "$FID_SETTLE"
kill -USR1 "$rx"
sleep "$FID_SECS"
cp "$tmp/fid-otel.folded" "$outdir/fidelity-otel.folded"
kill -INT "$prof"
wait "$prof"
for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
BG=()
record fidelity.seconds "$FID_SECS"
record fidelity.settle_s "$FID_SETTLE"

# ---- the report ----
HP_E2E="$root/tests/e2e" python3 - "$results" "$outdir" "$smoke" "$outdir/unwind.md" "$outdir/soak.txt" "$outdir/symbolize.md" "$root/bench/otelprof/go.mod" <<'EOF'
import json, os, platform, statistics, subprocess, sys

# The e2e tests' reading of stacks: a stack reaches main as the unwinding tests judge it.
sys.path.insert(0, os.environ["HP_E2E"])
from stacks import holds_in_order  # noqa: E402

results, outdir, smoke, unwind_md, soak_txt, symbolize_md, otel_gomod = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
raw = {}
for line in open(results):
    key, value = line.split(None, 1)
    node = raw
    parts = key.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = float(value)

def series(node):
    return [node[k] for k in sorted(node, key=int)]


def read_folded(path, comm):
    """(frames root first, count) of COMM's samples; kernel frames at the leaf dropped."""
    rows = []
    if not os.path.exists(path):
        return rows
    for line in open(path, encoding="utf-8", errors="replace"):
        stack, sep, count = line.rstrip("\n").rpartition(" ")
        if not sep:
            continue
        frames = stack.split(";")
        if frames[0] != comm:
            continue
        frames = frames[1:]
        while frames and frames[-1].endswith("_[k]"):
            frames.pop()
        rows.append((frames, int(count)))
    return rows

def fidelity(outdir, seconds):
    out = {"seconds": seconds, "settle_s": raw.get("fidelity", {}).get("settle_s", 0)}
    for who in ("hostprof", "otel"):
        path = os.path.join(outdir, f"fidelity-{who}.folded")
        nofp = read_folded(path, "nofp")
        total = sum(n for _, n in nofp)
        reach = sum(n for f, n in nofp if holds_in_order(f, ["main", "level_one", "level_two", "level_three"]))
        leaves = {}
        for f, n in nofp:
            if f and f[-1] in ("nofp_leaf_a", "nofp_leaf_b", "nofp_leaf_c"):
                leaves[f[-1]] = leaves.get(f[-1], 0) + n
        nleaves = sum(leaves.values())
        py = read_folded(path, "python3")
        ptotal = sum(n for _, n in py)
        # Through the interpreter's loop, or through the Python frames that take its place.
        preach = sum(n for f, n in py
                     if holds_in_order(f, ["Py_BytesMain", "_PyEval_EvalFrameDefault"])
                     or holds_in_order(f, ["Py_BytesMain", "<module>"]))
        named = any("down" in f for f, _ in py)
        down41 = sum(n for f, n in py if f.count("down") == 41)
        out[who] = {
            "nofp": {"samples": total, "reach_main": reach / total if total else None,
                     "shares": {k: v / nleaves for k, v in leaves.items()} if nleaves else {}},
            "python3": {"samples": ptotal, "reach_main": preach / ptotal if ptotal else None,
                        "down41": (down41 / ptotal if ptotal else None) if named else None}}
    return out

def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()

machine = {"cpu": cpu_model(), "cores": os.cpu_count(), "kernel": platform.release(),
           "hostprof": subprocess.run([os.environ.get("HOSTPROF", "build/hostprof"), "--version"],
                                      capture_output=True, text=True).stdout.strip(),
           # The release pinned by bench/otelprof/go.mod (the binary has no version stamped).
           "ebpf_profiler": next((l.split()[1] for l in open(otel_gomod)
                                  if l.split()[:1] == ["go.opentelemetry.io/ebpf-profiler"]), "?")}
warnings = []
summary = {"machine": machine, "smoke": smoke, "raw": raw, "overhead": {}, "sched": {},
           "memory": {}, "export": {}, "warnings": warnings}

def spread(name, xs):
    med = statistics.median(xs)
    s = (max(xs) - min(xs)) / med * 100 if med else 0
    if len(xs) > 1 and s > 5:
        warnings.append(f"{name}: spread {s:.1f}% of the median across {len(xs)} runs: the machine was noisy, read the slowdowns with care")
    return s

ov = raw.get("overhead", {})
none = statistics.median(series(ov["none"]["wall_s"]))
labels = {"none": "nothing attached", "hostprof19": "hostprof agent, 19 Hz",
          "hostprof99": "hostprof agent, 99 Hz", "perf99": "perf record -F 99 -a -g",
          "bpftrace99": "bpftrace profile:hz:99 {kstack, ustack, comm}",
          "otel20": "OpenTelemetry eBPF profiler, 20 Hz", "otel99": "OpenTelemetry eBPF profiler, 99 Hz"}
def by_round(node):
    """The median work time of each round's block, by round."""
    rounds = {}
    for k, wall in node["wall_s"].items():
        rounds.setdefault(int(node["round"][k]), []).append(wall)
    return {r: statistics.median(v) for r, v in rounds.items()}

none_rounds = by_round(ov["none"])
rows = []
for c in ["none", "hostprof19", "hostprof99", "perf99", "bpftrace99", "otel20", "otel99"]:
    node = ov.get(c)
    if not node:
        continue
    walls = series(node["wall_s"])
    med = statistics.median(walls)
    block_walls = series(node["block_wall_s"])
    # Pooled over the blocks: the profiler's CPU time over the work's.
    cpu = sum(series(node["profiler_cpu_s"])) / sum(block_walls) * 100
    bpf = statistics.median([b / w * 100 for b, w in zip(series(node["bpf_s"]), block_walls)])
    # Paired by round: each block against the nothing-attached block of its round, which drifts
    # with the machine as it does; the median over rounds, which one disturbed round does not
    # move.
    mine = by_round(node)
    paired = [(mine[r] / none_rounds[r] - 1) * 100 for r in sorted(mine) if r in none_rounds]
    first = node.get("first_sight_cpu_s")
    # The BPF run time per sample, pooled: over the runs of its perf_event programs.
    nsamples = sum(series(node["bpf_samples"])) if "bpf_samples" in node else 0
    ns_per_sample = sum(series(node["bpf_run_ns"])) / nsamples if nsamples else None
    entry = {"label": labels[c], "median_s": med,
             "slowdown_pct": statistics.median(paired) if paired else 0.0,
             "slowdown_rounds_pct": paired,
             "slowdown_pooled_pct": (med - none) / none * 100,
             "profiler_cpu_pct_of_core": cpu, "bpf_pct_of_core": bpf,
             # What it took from the machine: the share of all cores' time, the most it can
             # slow work that keeps every core busy (cache effects aside).
             "accounted_pct_of_machine": (cpu + bpf) / machine["cores"],
             "first_sight_cpu_ms": statistics.median(series(first)) * 1000 if first else 0.0,
             "bpf_ns_per_sample": ns_per_sample, "bpf_samples": nsamples,
             "spread_pct": spread(labels[c], walls), "runs": len(walls), "rounds": len(paired)}
    summary["overhead"][c] = entry
    rows.append(entry)

sc = raw.get("sched", {})
alone = statistics.median(series(sc["alone"]["trips_per_s"]))
agent = statistics.median(series(sc["agent"]["trips_per_s"]))
summary["sched"] = {"alone_trips_per_s": alone, "agent_trips_per_s": agent,
                    "slowdown_pct": (alone - agent) / alone * 100,
                    "ns_per_switch": statistics.median(series(sc["agent"]["ns_per_switch"])),
                    "switch_events": statistics.median(series(sc["agent"]["switch_events"]))}
spread("pingpong alone", series(sc["alone"]["trips_per_s"]))
mem = raw["memory"]
summary["memory"] = {"rss_mib": mem["rss_kib"] / 1024, "pss_mib": mem["pss_kib"] / 1024,
                     "bpf_maps_mib": mem["bpf_map_bytes"] / 1048576,
                     "processes": int(mem["processes"]), "after_s": mem["seconds"]}
mo = raw.get("memory_otel", {})
summary["memory_otel"] = {"rss_mib": mo.get("rss_kib", float("nan")) / 1024,
                          "pss_mib": mo.get("pss_kib", float("nan")) / 1024,
                          "bpf_maps_mib": mo.get("bpf_map_bytes", float("nan")) / 1048576,
                          "processes": int(mo.get("processes", 0)), "after_s": mo.get("seconds", 0),
                          "otlp_requests": int(mo.get("otlp_requests", 0))}
if "rss_kib" not in mo:
    warnings.append("the OpenTelemetry eBPF profiler was not running at the end of the memory run: its memory was not read")
ex = raw["export"]
per_min = 60 / ex["seconds"]
summary["export"] = {"otlp_gzip_bytes_per_min": ex["otlp_gzip_bytes"] * per_min,
                     "pprof_gzip_bytes_per_min": ex["pprof_gzip_bytes"] * per_min,
                     "otlp_requests": int(ex["otlp_requests"]), "seconds": ex["seconds"]}

m = summary["memory"]
o19 = summary["overhead"].get("hostprof19", {})
out = []
w = out.append
w("# hostprof overhead report" + (" (smoke run: one short repetition, not a measurement)" if smoke else ""))
w("")
w(f"Machine: {machine['cpu']}, {machine['cores']} CPUs, Linux {machine['kernel']}; {machine['hostprof']}; OpenTelemetry eBPF profiler {machine['ebpf_profiler']}.")
w(f"Command: `make bench` (this table: `bench/report.sh {outdir}`).")
w("")
w("## 1. Overhead on CPU-bound work")
w("")
runs_per_block = int(raw['overhead'].get('runs_per_block', 1))
w(f"`bench/fixedwork`: zlib compression of a fixed buffer on all {int(raw['overhead']['threads'])} cores, {int(raw['overhead']['iterations'])} iterations each. {rows[0]['rounds']} rounds; in each, every row's block in turn: the profiler started, settled ({raw['overhead'].get('agent_settle_s', 0):.0f} s for the agent and the OpenTelemetry eBPF profiler), shown the work once, then {runs_per_block} timed runs of it.")
w("")
w("| profiler | work time (s), median | slowdown | rounds (min, max) | profiler CPU (% of one core) | BPF run time (% of one core) | BPF per sample (µs) | both, as a share of the machine | first sight of the work (ms of CPU) | spread |")
w("|---|---|---|---|---|---|---|---|---|---|")
def per_sample(r):
    # Nothing attached has no samples of its own: what runs then is the host's (other tools').
    if r["bpf_ns_per_sample"] is None or r["label"] == labels["none"]:
        return "-"
    return f"{r['bpf_ns_per_sample'] / 1000:.1f}"
def rng(r):
    return "" if r["label"] == labels["none"] or not r["slowdown_rounds_pct"] else f"{min(r['slowdown_rounds_pct']):+.2f}%, {max(r['slowdown_rounds_pct']):+.2f}%"
for r in rows:
    w(f"| {r['label']} | {r['median_s']:.3f} | {r['slowdown_pct']:+.2f}% | {rng(r)} | {r['profiler_cpu_pct_of_core']:.2f}% | {r['bpf_pct_of_core']:.2f}% | {per_sample(r)} | {r['accounted_pct_of_machine']:.2f}% | {r['first_sight_cpu_ms']:.0f} | {r['spread_pct']:.1f}% |")
w("")
st = ov.get("steady", {})
steady_pct = st["profiler_cpu_s"] / st["secs"] * 100 if st.get("secs") else float("nan")
summary["overhead"]["steady"] = {"after_s": st.get("after_s"), "secs": st.get("secs"),
                                 "profiler_cpu_pct_of_core": steady_pct}
none_rows = summary["overhead"]["none"]
w(f"Slowdown: per round, the median of the block's runs against the median of the nothing-attached block of the same round; the median over the rounds, and their range. The nothing-attached runs alone spread {none_rows['spread_pct']:.1f}% on this machine: a slowdown much smaller than that is not resolved by timing the work, and the share of the machine is then the figure to read. Profiler CPU: the time on a CPU of its threads (/proc/PID/task/*/schedstat), pooled over the timed runs; BPF run time from kernel.bpf_stats_enabled. BPF per sample: that run time over the runs of the profiler's perf_event programs (one per sample; a tail call's time counts in its caller's), with the whole host being sampled, not only the work. Both as a share of the machine: their sum over the number of cores, what the profiler took from work that keeps every core busy. First sight: its CPU time while it saw the work's process and binaries for the first time (for the agent: reading their symbols and the DWARF of libc's and zlib's debug files, once per binary), which a profiler that has run on the host for long has already spent.")
w("")
w(f"The agent at 19 Hz in its steady state, {st.get('after_s', 0):.0f} s after its start, over {st.get('secs', 0):.0f} s with the work running: **{steady_pct:.2f}% of one core**.")
w("")
w(f"Targets at 19 Hz: slowdown <= 0.5% (timed: {o19.get('slowdown_pct', float('nan')):+.2f}%, rounds {rng(o19) if o19 else ''}; taken from the machine: {o19.get('accounted_pct_of_machine', float('nan')):.2f}%), the agent's own CPU <= 0.3% of one core (measured {o19.get('profiler_cpu_pct_of_core', float('nan')):.2f}% over the timed runs, {steady_pct:.2f}% in the steady state).")
w("")
s = summary["sched"]
w("## 2. Scheduler-heavy load")
w("")
w(f"`bench/pingpong`: on each of the {machine['cores']} CPUs a pair of threads pinned to it, ping-ponging through pipes (each round trip is two context switches on that CPU); the agent with `--types cpu,wall,contention`.")
w("")
w("| run | round trips/s | context switches/s | slowdown | sched_switch events | ns per event (BPF) |")
w("|---|---|---|---|---|---|")
w(f"| alone | {s['alone_trips_per_s']:.0f} | {2 * s['alone_trips_per_s']:.0f} | | | |")
w(f"| hostprof agent cpu,wall,contention | {s['agent_trips_per_s']:.0f} | {2 * s['agent_trips_per_s']:.0f} | {s['slowdown_pct']:+.1f}% | {s['switch_events']:.0f} | {s['ns_per_switch']:.0f} |")
w("")
w("## 3. Memory")
w("")
mo = summary["memory_otel"]
w(f"The agent at its defaults (19 Hz, cpu), {m['after_s']:.0f} s into a run on a host of {m['processes']} processes (shell loops with coreutils, the distribution's python3 with and without many extension modules, a C++ program throwing exceptions, a program calling into a shared library); then the OpenTelemetry eBPF profiler at its defaults (20 Hz, OTLP every 5 s) on the same host for as long.")
w("")
w("| | hostprof agent | target | OpenTelemetry eBPF profiler |")
w("|---|---|---|---|")
w(f"| RSS | {m['rss_mib']:.1f} MiB | <= 40 MB | {mo['rss_mib']:.1f} MiB |")
w(f"| PSS | {m['pss_mib']:.1f} MiB | | {mo['pss_mib']:.1f} MiB |")
w(f"| BPF maps (memlock) | {m['bpf_maps_mib']:.1f} MiB | <= 64 MB | {mo['bpf_maps_mib']:.1f} MiB |")
w("")
e = summary["export"]
w("## 4. Export size")
w("")
w(f"The same run, {e['otlp_requests']} windows: bytes on the wire per minute.")
w("")
w("| format | bytes per minute |")
w("|---|---|")
w(f"| OTLP/HTTP protobuf, gzip | {e['otlp_gzip_bytes_per_min']:.0f} |")
w(f"| pprof, gzip (one file per window) | {e['pprof_gzip_bytes_per_min']:.0f} |")
w("")
fid = fidelity(outdir, raw.get("fidelity", {}).get("seconds", 0))
summary["fidelity"] = fid
w("## 5. Fidelity")
w("")
w(f"`tests/e2e/nofp` (C built with -fomit-frame-pointer, calling through libnofp.so, built alike; leaves split 1:2:3) and Debian's `{os.environ.get('PY', '/usr/bin/python3')}` running `tests/e2e/py_recurse.py` (`down` 40 deep, 41 frames), together: {fid['seconds']:.0f} s under `hostprof profile --pid` at 99 Hz, then {fid['seconds']:.0f} s under the OpenTelemetry eBPF profiler at 99 Hz, counted from {fid['settle_s']:.0f} s after its start. The profiler sends native frames unsymbolized (address and build-id, for a backend to name); bench/otelprof/receiver names them from the same files' symbol tables, and libc's debug file. Folded stacks: fidelity-*.folded.")
w("")
w("| | hostprof | OpenTelemetry eBPF profiler | known |")
w("|---|---|---|---|")
def fp(x):
    return "-" if x is None else f"{100 * x:.1f}%"
h, o = fid["hostprof"], fid["otel"]
w(f"| nofp samples | {h['nofp']['samples']} | {o['nofp']['samples']} | |")
w(f"| nofp: reach main > level_one > level_two > level_three | {fp(h['nofp']['reach_main'])} | {fp(o['nofp']['reach_main'])} | 100% |")
for leaf, known in (("nofp_leaf_a", 1 / 6), ("nofp_leaf_b", 2 / 6), ("nofp_leaf_c", 3 / 6)):
    w(f"| nofp: {leaf} share of the leaves | {fp(h['nofp']['shares'].get(leaf))} | {fp(o['nofp']['shares'].get(leaf))} | {100 * known:.1f}% |")
w(f"| python3 samples | {h['python3']['samples']} | {o['python3']['samples']} | |")
w(f"| python3: reach Py_BytesMain > _PyEval_EvalFrameDefault or <module> | {fp(h['python3']['reach_main'])} | {fp(o['python3']['reach_main'])} | 100% |")
w(f"| python3: all 41 `down` frames named | {'- (no Python names without -X perf)' if h['python3']['down41'] is None else fp(h['python3']['down41'])} | {fp(o['python3']['down41'])} | 100% |")
w("")
w("## 6. Unwinding, symbolization, soak")
w("")
if os.path.exists(unwind_md):
    w(f"From `make bench-unwind` ({os.path.basename(unwind_md)}):")
    w("")
    w(open(unwind_md).read().strip())
else:
    w("`make bench-unwind` has not written its figures here yet.")
w("")
if os.path.exists(soak_txt):
    w("From `make bench-soak`: " + open(soak_txt).read().strip().splitlines()[-1])
else:
    w("`make bench-soak` has not run here yet.")
w("")
if os.path.exists(symbolize_md):
    w(f"From `make bench-symbolize` ({os.path.basename(symbolize_md)}):")
    w("")
    # One heading level down: its sections sit inside this one.
    w("\n".join("#" + l if l.startswith("##") else l for l in open(symbolize_md).read().strip().splitlines()))
    symbolize_json = os.path.splitext(symbolize_md)[0] + ".json"
    if os.path.exists(symbolize_json):
        summary["symbolize"] = json.load(open(symbolize_json))
else:
    w("`make bench-symbolize` has not written its figures here yet.")
if warnings:
    w("")
    w("## Warnings")
    w("")
    for x in warnings:
        w(f"- {x}")
open(os.path.join(outdir, "report.md"), "w").write("\n".join(out) + "\n")
json.dump(summary, open(os.path.join(outdir, "report.json"), "w"), indent=2, sort_keys=True)
print("\n".join(out))
EOF

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Where the agent's resident memory goes. Fills the host up to about RSS_HOST_PROCS processes
# of several binaries (as bench/report.sh's memory section does: shell loops with coreutils,
# python3 idle and with its C extensions loaded, a C++ program throwing exceptions and a
# program calling into a shared library when WL has them), runs `hostprof agent` whole-host at
# RSS_HZ (19, its default) writing files (and exporting where RSS_AGENT_ARGS says), and every
# INTERVAL seconds prints VmRSS, RssAnon, RssFile, RssShmem, PSS, the open DWARF and the symbol
# tables (/metrics). At the end: the least-squares slope of RSS after the warm-up (the first
# third), the breakdown of the last sample by category (bench/rss_breakdown.py), every cache's
# bytes from /metrics, and glibc's malloc_stats() (through gdb, when it is installed: the heap's
# arenas, in use and held), the DWARF handles open, let go, opened again and closed, and the
# agent's CPU time.
# Numbers only, nothing asserted.
#
# Usage (root): bench/rss.sh HOSTPROF [SECONDS [INTERVAL]]    defaults: 180 s, every 10 s
# Environment: RSS_HOST_PROCS (400), RSS_HZ (19), WL (the e2e workloads directory: cxx_throw and
# lib_ratio), PY (the distribution's python3), RSS_AGENT_ARGS (more agent flags).
set -u
hostprof=$1 secs=${2:-180} every=${3:-10}
target=${RSS_HOST_PROCS:-400} hz=${RSS_HZ:-19}
PY=${PY:-/usr/bin/python3}
WL=${WL:-$(dirname "$hostprof")/e2e}
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "rss: needs root (BPF)" >&2; exit 1; }
out=$(mktemp -d /tmp/hostprof-rss.XXXXXX)
BG=()
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT

nprocs() { ls /proc | grep -c '^[0-9]'; }

py_loop='import time
while True:
    sum(range(3000)); time.sleep(0.5)'
py_libs='import ssl, sqlite3, ctypes, decimal, hashlib, lzma, bz2, zlib, json, time, uuid
while True:
    hashlib.sha256(b"x" * 4096).hexdigest(); time.sleep(0.5)'
# Each shell loop is two processes (the shell and its sleep) most of the time.
want=$(((target - $(nprocs)) * 2 / 3))
for i in $(seq "$want"); do
	case $i in
	1 | 2) [ -x "$WL/cxx_throw" ] && nice -n 19 "$WL/cxx_throw" $((secs + 60)) >/dev/null 2>&1 & ;;
	3 | 4) [ -x "$WL/lib_ratio" ] && nice -n 19 "$WL/lib_ratio" $((secs + 60)) >/dev/null 2>&1 & ;;
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
sleep 2
mkdir -p "$out/files"

# shellcheck disable=SC2086
"$hostprof" agent -F "$hz" --upload-interval 15s --output-dir "$out/files" \
	--set export.keep_files=2 --http-listen 127.0.0.1:0 ${RSS_AGENT_ARGS:-} \
	>"$out/agent.log" 2>&1 &
agent=$!
for _ in $(seq 50); do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/agent.log" | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done

outputs="files only"
[ -n "${RSS_AGENT_ARGS:-}" ] && outputs="files and $RSS_AGENT_ARGS"
printf '# hostprof agent RSS: %s s at %s Hz, 15 s windows, %s, %s processes on the host\n' \
	"$secs" "$hz" "$outputs" "$(nprocs)"
printf '# machine: %s, %s CPUs, kernel %s, load average %s\n' \
	"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)" "$(nproc)" "$(uname -r)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%7s %8s %8s %8s %8s %8s %9s %9s %6s %5s\n' seconds rss_kib anon_kib file_kib \
	shmem_kib pss_kib dwarf_kib syms_kib procs wins
: >"$out/samples"
t0=$(date +%s)
while :; do
	now=$(($(date +%s) - t0))
	[ "$now" -ge "$secs" ] && break
	if ! kill -0 "$agent" 2>/dev/null; then
		echo "rss: the agent exited: $(tail -3 "$out/agent.log")" >&2
		exit 1
	fi
	st=$(awk '/^(VmRSS|RssAnon|RssFile|RssShmem):/ { printf "%s ", $2 }' "/proc/$agent/status")
	pss=$(awk '/^Pss:/ { print $2 }' "/proc/$agent/smaps_rollup" 2>/dev/null)
	m=$(curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null)
	metric() { awk -v k="$1" '$1 == k { printf "%d", $2 / 1024 }' <<<"$m"; }
	# shellcheck disable=SC2086
	printf '%7d %8d %8d %8d %8d %8d %9s %9s %6s %5s\n' "$now" $st "${pss:-0}" \
		"$(metric hostprof_dwarf_bytes)" \
		"$(metric 'hostprof_cache_bytes{cache="binaries"}')" \
		"$(awk '$1 == "hostprof_processes_tracked" { print $2 }' <<<"$m")" \
		"$(awk '$1 == "hostprof_windows_total" { print $2 }' <<<"$m")"
	echo "$now ${st%% *}" >>"$out/samples"
	sleep "$every"
done

awk -v secs="$secs" '
	$1 >= secs / 3 { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2
		if (n == 1) first = $2; last = $2 }
	END {
		if (n < 2) { print "rss: too few samples after the warm-up"; exit }
		slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
		printf "RSS after the warm-up: %.0f KiB/min by least squares (%d samples), %+d KiB first to last\n", slope * 60, n, last - first
	}' "$out/samples"
echo
echo "# breakdown at ${secs} s (KiB)"
python3 "$here/rss_breakdown.py" "$agent"
echo
echo "# caches, from /metrics (KiB)"
curl -s "http://127.0.0.1:$port/metrics" |
	awk '/^hostprof_(cache_bytes|dwarf_bytes|dwarf_table_bytes|kubelet_memory_bytes|export_queue_bytes)/ {
		printf "%-60s %d\n", $1, $2 / 1024 }'
# What the DWARF costs in time: handles open now, let go when idle (their line and inline tables
# kept), opened again for a CU not met before (each reads and decompresses the debug sections),
# tables dropped to keep the budget; and the agent's CPU.
curl -s "http://127.0.0.1:$port/metrics" |
	awk '$1 ~ /^hostprof_dwarf_(handles|binaries_complete|closed_total|released_total|reopened_total)$/ {
	printf "%-60s %d\n", $1, $2 }'
awk -v hz="$(getconf CLK_TCK)" -v secs="$secs" '{ cpu = ($14 + $15) / hz
	printf "agent CPU over the run: %.2f s (%.2f%% of a core)\n", cpu, 100 * cpu / secs }' \
	"/proc/$agent/stat"
if command -v gdb >/dev/null; then
	echo
	echo "# glibc malloc_stats() (bytes; the agent paused for it)"
	n=$(wc -l <"$out/agent.log")
	gdb -p "$agent" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1
	sleep 0.5
	tail -n +"$((n + 1))" "$out/agent.log" | grep -E '^(Arena|system|in use|Total|max mmap)'
fi

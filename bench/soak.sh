#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The agent's memory over time. Runs `hostprof agent` at 99 Hz (5 s windows, written to a
# temporary directory, /metrics scraped) while a workload churns processes (about 15 new
# processes a second from several binaries: a C program, python3, coreutils), samples the
# agent's RSS and PSS every INTERVAL seconds, and prints them with the slope of RSS after the
# warm-up (the first third of the run), by least squares.
#
# Usage (root): bench/soak.sh HOSTPROF SHORT_LIVED [SECONDS [INTERVAL]]
#   defaults: 600 s, sampled every 10 s (the full soak; `make bench-soak`)
# With --check as the first argument, exit 1 when the RSS grew by more than SOAK_MAX_GROWTH_KIB
# (default 6144) over the part after the warm-up, not counting what the open DWARF handles grew
# by (a cache that fills up to its own bound, limits.max_dwarf_bytes, as lookups come: /metrics
# reports it): the 2-minute form that `make test` runs. The bound is on growth, not on time, and
# is wide: a leak of one window's profile per window grows it by several MiB within the run.
set -u
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
hostprof=$1 short_lived=$2 secs=${3:-600} every=${4:-10}
max_growth=${SOAK_MAX_GROWTH_KIB:-6144}
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (BPF)" >&2; exit 1; }
out=$(mktemp -d /tmp/hostprof-soak.XXXXXX)
churn=
agent=
cleanup() {
	[ -n "$churn" ] && kill "$churn" 2>/dev/null
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT

# The churn: every 0.2 s, a burst of short processes of different binaries.
(
	while :; do
		"$short_lived" 0.05 &
		python3 -c 'sum(range(20000))' &
		sort /etc/passwd >/dev/null &
		sh -c 'i=0; while [ $i -lt 500 ]; do i=$((i + 1)); done' &
		wait
		sleep 0.05
	done
) >/dev/null 2>&1 &
churn=$!

"$hostprof" agent -F 99 --upload-interval 5s --output-dir "$out" --set export.keep_files=2 \
	--http-listen 127.0.0.1:0 >"$out/agent.log" 2>&1 &
agent=$!
sleep 1
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/agent.log" | head -1)

printf '# hostprof agent soak: %s s at 99 Hz, 5 s windows, ~15 new processes/s\n' "$secs"
printf '# machine: %s, %s CPUs, kernel %s\n' \
	"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)" "$(nproc)" "$(uname -r)"
printf '%8s %10s %10s %10s %8s %10s\n' seconds rss_kib pss_kib dwarf_kib procs windows
: >"$out/samples"
t0=$(date +%s)
while :; do
	now=$(($(date +%s) - t0))
	[ "$now" -ge "$secs" ] && break
	if ! kill -0 "$agent" 2>/dev/null; then
		echo "soak: the agent exited: $(tail -3 "$out/agent.log")" >&2
		exit 1
	fi
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$agent/status")
	pss=$(awk '/^Pss:/ { print $2 }' "/proc/$agent/smaps_rollup" 2>/dev/null)
	metrics=$(curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null)
	procs=$(awk '/^hostprof_processes_tracked / { print $2 }' <<<"$metrics")
	windows=$(awk '/^hostprof_windows_total / { print $2 }' <<<"$metrics")
	dwarf=$(awk '/^hostprof_dwarf_bytes / { printf "%d", $2 / 1024 }' <<<"$metrics")
	printf '%8d %10d %10d %10s %8s %10s\n' "$now" "$rss" "${pss:-0}" "${dwarf:-?}" "${procs:-?}" \
		"${windows:-?}"
	echo "$now $rss ${dwarf:-0}" >>"$out/samples"
	sleep "$every"
done

# Least squares over the samples after the warm-up, and the growth from its first to last sample.
awk -v secs="$secs" -v check="$check" -v max="$max_growth" '
	$1 >= secs / 3 { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2
		if (n == 1) { first = $2; dfirst = $3 }; last = $2; dlast = $3 }
	END {
		if (n < 2) { print "soak: too few samples after the warm-up"; exit 1 }
		slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
		grew = (last - dlast) - (first - dfirst)
		printf "RSS after the warm-up: %.0f KiB/min by least squares (%d samples); %+d KiB from first to last, %+d KiB of it outside the DWARF cache\n", slope * 60, n, last - first, grew
		if (check && grew > max) {
			printf "soak: RSS grew by %d KiB after the warm-up, beside the DWARF cache (bound %d KiB): a leak?\n", grew, max
			exit 1
		}
	}' "$out/samples"

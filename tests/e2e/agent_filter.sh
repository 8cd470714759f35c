# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# shellcheck disable=SC2317  # the tests are called indirectly, as "t_$name"
#
# The agent's relabel drops applied in the kernel (bpf/common.bpf.h, capture/drop_filter.h),
# sourced by run.sh:
#   agent_kernel_filter  two copies of cpu_ratio, hp_kdrop (a drop rule names it) and hp_kkeep:
#                     hp_kdrop is in no window while the rule holds, hp_kkeep is; the kernel counts
#                     the events it skipped (hostprof_kernel_filter_dropped_total grows); after a
#                     SIGHUP to a keep rule (only hp_kkeep, then stopped: the host dropped) and then
#                     to no rules, hp_kdrop is profiled again. With kernel.bpf_stats_enabled, the
#                     sampler's mean ns per run with the host dropped and with nothing dropped
#                     are reported.

# kf_config NAME FILE: the test's configurations: drop hp_kdrop, keep only hp_kkeep, no rules.
kf_config() {
	{
		printf 'frequency: 99\ntypes: [cpu, wall]\nupload_interval: 2s\nhttp_listen: "127.0.0.1:0"\n'
		printf 'export:\n  directory: "%s"\n  keep_files: 1000\n' "$KF_DIR/out"
		case $1 in
		drop) printf 'relabel:\n  - action: drop\n    source: process.executable.name\n    regex: hp_kdrop\n' ;;
		keep) printf 'relabel:\n  - action: keep\n    source: process.executable.name\n    regex: hp_kkeep\n' ;;
		esac
	} >"$2"
}

# kf_metric NAME: one sample of the agent's /metrics (NAME with its labels), or empty.
kf_metric() {
	curl --noproxy '*' -s --max-time 5 "http://127.0.0.1:$KF_PORT/metrics" |
		awk -v n="$1" '$1 == n { print $2; exit }'
}

# kf_sampler PID: "runs ns seen dropped" of the agent's cpu sampler (its perf_event program):
# run_cnt and run_time_ns from the fdinfo of its program fd (counted while
# kernel.bpf_stats_enabled is 1), and, with bpftool, the samples that passed the filter and those
# it dropped from the sampler's own per-CPU stats map (read at the same moment, unlike /metrics,
# which the capture loop renders when it gets to it); "- -" without bpftool.
kf_sampler() {
	local f runs=0 ns=0 id="" both
	for f in /proc/"$1"/fdinfo/*; do
		grep -q '^prog_type:[[:space:]]*7$' "$f" 2>/dev/null || continue
		runs=$((runs + $(awk '/^run_cnt:/ { print $2 }' "$f")))
		ns=$((ns + $(awk '/^run_time_ns:/ { print $2 }' "$f")))
		id=${id:-$(awk '/^prog_id:/ { print $2 }' "$f")}
	done
	both=$(kf_stats_of_prog "$id")
	# bpftool's own run counts, read with the stats: the same moment.
	if [ "${both%% *}" != - ]; then
		echo "$both"
	else
		echo "$runs $ns - -"
	fi
}

# kf_stats_of_prog ID: "runs ns seen dropped": the program's run_cnt and run_time_ns, then summed
# over CPUs from its map named stats (enum hp_stat: HP_STAT_SAMPLES_SEEN is 0,
# HP_STAT_FILTER_DROPPED 10). "- - - -" without bpftool.
kf_stats_of_prog() {
	command -v bpftool >/dev/null && [ -n "$1" ] || {
		echo "- - - -"
		return
	}
	python3 -c '
import json, subprocess, sys
def tool(*a):
    return json.loads(subprocess.run(["bpftool", "-j", *a], capture_output=True, text=True).stdout)
def num(v):
    return v if isinstance(v, int) else int.from_bytes(bytes(int(b, 16) for b in v), "little")
prog = tool("prog", "show", "id", sys.argv[1])
for m in prog.get("map_ids", []):
    if tool("map", "show", "id", str(m)).get("name") != "stats":
        continue
    dump = tool("map", "dump", "id", str(m))
    prog = tool("prog", "show", "id", sys.argv[1])
    sums = {num(e.get("key", 0)): sum(num(v["value"]) for v in e.get("values", [])) for e in dump}
    print(prog.get("run_cnt", 0), prog.get("run_time_ns", 0), sums.get(0, 0), sums.get(10, 0))
    sys.exit(0)
print("- - - -")' "$1" 2>/dev/null || echo "- - - -"
}

# kf_window_comms FILE: the process names (first folded frame) of a cpu window, one per line.
kf_window_comms() {
	"$HOSTPROF" render "$1" -o "$1.folded" >/dev/null 2>&1 || return
	cut -d';' -f1 "$1.folded" | sort -u
}

# kf_wait SECONDS COMMAND...: poll COMMAND every 0.5 s until it succeeds; false after SECONDS.
kf_wait() {
	local n=$(($1 * 2))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		kill -0 "$KF_APID" 2>/dev/null || return 1
		sleep 0.5
		n=$((n - 1))
	done
	return 1
}

kf_added_at_least() {
	local v
	v=$(kf_metric 'hostprof_kernel_filter_added_total{kind="pid"}')
	[ -n "$v" ] && [ "$v" -ge "$1" ]
}

kf_dropped_above() {
	local v
	v=$(kf_metric hostprof_kernel_filter_dropped_total)
	[ -n "$v" ] && [ "$v" -gt "$1" ]
}

kf_reloaded() {
	[ "$(grep -c 'configuration reloaded' "$KF_LOG")" -ge "$1" ]
}

# kf_measure SECONDS: "runs ns seen dropped" of the sampler over SECONDS ("-" where unknown).
kf_measure() {
	local a b
	read -r -a a <<<"$(kf_sampler "$KF_APID")"
	sleep "$1"
	read -r -a b <<<"$(kf_sampler "$KF_APID")"
	if [ "${a[2]}" = - ] || [ "${b[2]}" = - ]; then
		echo "$((b[0] - a[0])) $((b[1] - a[1])) - -"
	else
		echo "$((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2])) $((b[3] - a[3]))"
	fi
}

# kf_after_reload_has COMM: a cpu window written after the last reload names COMM.
kf_after_reload_has() {
	local f
	for f in "$KF_DIR"/out/cpu-*.pb.gz; do
		[ -e "$f" ] && [ "$f" -nt "$KF_MARK" ] || continue
		kf_window_comms "$f" | grep -qx "$1" && return 0
	done
	return 1
}

t_agent_kernel_filter() {
	local conf log stats_was drop keep d1 d2 bad="" f comms before=() n_keep=0 p2 p3 mean2 mean3
	local r2 t2 s2 x2 r3 t3 s3 x3
	KF_DIR=$WORK/kfilter
	KF_LOG=$WORK/agent_kernel_filter.log
	KF_MARK=$KF_DIR/reload-mark
	log=$KF_LOG
	conf=$KF_DIR/agent.yaml
	mkdir -p "$KF_DIR/out"
	cp "$WL/cpu_ratio" "$KF_DIR/hp_kdrop"
	cp "$WL/cpu_ratio" "$KF_DIR/hp_kkeep"
	start_bg "$KF_DIR/hp_kdrop" 300
	drop=$WPID
	start_bg "$KF_DIR/hp_kkeep" 300
	keep=$WPID
	kf_config drop "$conf"
	stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null)
	sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null
	"$HOSTPROF" agent --config "$conf" >"$log" 2>&1 &
	KF_APID=$!
	PIDS+=("$KF_APID")
	kf_wait 30 grep -q '(port [0-9]*)' "$log"
	KF_PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$log" | head -1)

	# 1. The drop rule: hp_kdrop goes into the filter at its first drain, then costs a lookup.
	if ! kf_wait 90 kf_added_at_least 1; then
		bad="no PID put into the kernel's filter within 90 s: $(grep -v libbpf "$log" | tail -2 | tr '\n' ' ')"
	else
		# /metrics is rendered by the capture loop, which a loaded host may hold up for a
		# while (a first drain symbolizes a lot): polled, not slept on.
		d1=$(kf_metric hostprof_kernel_filter_dropped_total)
		kf_wait 60 kf_dropped_above "${d1:-0}" ||
			bad="hostprof_kernel_filter_dropped_total did not grow in 60 s while hp_kdrop ran (${d1:-none})"
		d2=$(kf_metric hostprof_kernel_filter_dropped_total)
	fi

	# 2. Keep only hp_kkeep: nearly every sample of the host is a dropped one.
	if [ -z "$bad" ]; then
		kf_config keep "$conf"
		kill -HUP "$KF_APID"
		kf_wait 30 kf_reloaded 1 || bad="the SIGHUP to the keep rule was not answered"
	fi
	if [ -z "$bad" ]; then
		kf_wait 30 kf_added_at_least 5
		# hp_kkeep was in the windows of the drop rule; without it, what passes the filter
		# is only the first samples of new processes.
		stop_workload "$keep"
		p2=$(kf_measure 8)
	fi

	# 3. No rules: every process is judged again, hp_kdrop is profiled again.
	if [ -z "$bad" ]; then
		for f in "$KF_DIR"/out/cpu-*.pb.gz; do
			[ -e "$f" ] && before+=("$f")
		done
		kf_config none "$conf"
		touch "$KF_MARK"
		kill -HUP "$KF_APID"
		kf_wait 30 kf_reloaded 2 || bad="the SIGHUP to no rules was not answered"
	fi
	if [ -z "$bad" ]; then
		p3=$(kf_measure 8)
		kf_wait 60 kf_after_reload_has hp_kdrop ||
			bad="hp_kdrop is in no window after the reload to no rules: the filter was not emptied"
	fi
	kill -TERM "$KF_APID" 2>/dev/null
	wait "$KF_APID"
	stop_workload "$drop"
	sysctl -qw kernel.bpf_stats_enabled="${stats_was:-0}" 2>/dev/null

	# Every window written while a rule left hp_kdrop out lacks it; hp_kkeep is in them.
	for f in "${before[@]}"; do
		comms=$(kf_window_comms "$f")
		if grep -qx hp_kdrop <<<"$comms"; then
			bad="${bad:-hp_kdrop is in $(basename "$f"), written while a rule dropped it}"
		fi
		grep -qx hp_kkeep <<<"$comms" && n_keep=$((n_keep + 1))
	done
	if [ -z "$bad" ] && { [ "${#before[@]}" -lt 2 ] || [ "$n_keep" -lt 1 ]; }; then
		bad="${#before[@]} windows while the rules held, $n_keep with hp_kkeep"
	fi
	if [ -n "$bad" ]; then
		fail agent_kernel_filter "$bad"
		return
	fi
	read -r r2 t2 s2 x2 <<<"$p2"
	read -r r3 t3 s3 x3 <<<"$p3"
	mean2=$(awk -v t="$t2" -v r="$r2" 'BEGIN { printf "%.0f", r ? t / r : 0 }')
	mean3=$(awk -v t="$t3" -v r="$r3" 'BEGIN { printf "%.0f", r ? t / r : 0 }')
	pass agent_kernel_filter "hp_kdrop in none of ${#before[@]} windows under the drop and keep rules (hp_kkeep in $n_keep), in them again after a reload to no rules; kernel filter skipped $d2 events under the drop rule; sampler with the host dropped (a keep rule for hp_kkeep, stopped): $r2 runs, $s2 passed the filter, $x2 dropped by it, mean $mean2 ns/run; with no rules: $r3 runs, $s3 passed, mean $mean3 ns/run"
}

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2317  # the tests are called indirectly, as "t_$name"
#
# End-to-end tests of hostprof on the real kernel: profile workloads whose profile is known in
# advance (tests/e2e/*.c, built by `make e2e-workloads` into $OUTPUT/e2e) and check what hostprof
# writes. Run as root from anywhere: OUTPUT=build tests/e2e/run.sh (what `make e2e` does).
#
# Each test prints `PASS name: ...` or `FAIL name: ...`, then one closing line
# `e2e: N passed, N failed`; the exit status is non-zero when anything failed. Outputs stay in a
# mktemp directory, whose path is printed when a test fails (E2E_KEEP=1 keeps it always).
#
# Environment: OUTPUT (build directory, default build, relative to the repository root),
# HOSTPROF (default $OUTPUT/hostprof), E2E_ONLY (space-separated test names to run; the others
# are not run and not counted).
#
# The tests (t_NAME below):
#   one 5 s capture of cpu_ratio (--pid, 99 Hz, folded + pprof) feeds
#     ratio           self shares of burn_a/b/c within 5 points of 1/6, 2/6, 3/6
#     reach_main      >= 99% of the samples have main in their stack (frame pointers unwind)
#     pie_resolved    the burn functions are named in the PIE; < 1% unresolved PIE frames
#     pid_filter      only cpu_ratio is in the output of --pid
#     sample_rate     samples ~= the workload's CPU seconds x frequency
#     summary         stdout gives the sample count, 1 process and the top function
#     pprof_valid     go tool pprof reads it, same sample total as the folded file, burn_c on top
#     pprof_cpu_time  cpu/nanoseconds per sample is the period, 1e9/frequency
#   lib_resolved      lib_ratio: functions of a shared library named, shares within 5 points
#   kernel_frames     syscalls: >= 30% of samples have kernel frames, named like kernel symbols
#   multi_pid         --pid A,B records both processes and nothing else
#   all_mode          --all records cpu_ratio under its comm, with its burn functions
#   exits_mid_capture a target that exits after 2 s of a 5 s capture: exit 0, valid outputs
#   command_mode      -- COMMAND: returns when the command exits, its samples recorded
#   command_status    -- COMMAND: exits with the command's status (3, 127 when it cannot run,
#                     143 when killed by SIGTERM), the profile written all the same
#   command_children  -- sh -c 'cpu_ratio 3': the shell's child is profiled (>= 90% of the
#                     samples); --no-inherit: none of it
#   output_checks     outputs in /proc, in a missing directory, or naming a directory fail before
#                     the capture; a write that fails after it is saved under $TMPDIR, named
#   verbose_prefix    -v: libbpf's messages prefixed "hostprof: libbpf: " once
#   threads           cpu_threads: thread_name/tid/pid labels of each thread in pprof
#   bad_pid           a pid that does not exist: nonzero exit, the pid named on stderr
#   bad_flags         unknown flag, bad --duration, bad --frequency: nonzero, flag named
#   help_version      --help, profile --help, --version
#   html_views        the page's grouping, function list, sandwich/callers, filters, URL hash,
#                     fitting height, differential colours and 100k-stack load time in chromium
#   render_diff       render --base OLD NEW: the table of changes with exact shares; exit 2 on
#                     a non-HTML output or an unreadable base
#   render_formats    render reads cpu.out and a .txt folded file by content; unknown bytes exit 2,
#                     as an unknown output format does; a corrupt pprof exits 1
#   otel_process_context  a process publishing an OTEP 4719 context beside OTEL_SERVICE_NAME:
#                     its OTLP resource is the published one
#   thread_context    OTEP 4947 thread contexts from the executable (local-exec), a TLSDESC
#                     library and a dlopened one: >= 95% of in-span samples carry their span's
#                     ids and attributes, none of the others; OTLP links
#   thread_context_wall  the same in wall and contention profiles: waits in a span carry it
#   offcpu_sampled    short_waits (24,000 waits of ~160 us, far below the 10.1 ms sampling
#                     period, and one in 129 of 8 ms): sampled, the nap stacks' off-CPU time and
#                     count within 20% of what the workload measured (the expected spread is ~5%),
#                     tail_nap's within 15% (~4%), and stacks taken for under 5% of the waits;
#                     with --wait-sample-us 0, every wait, within 5% (the workload measures its
#                     time off the CPU: wall less CPU time)
#   offcpu_preempted  crowded (two spinning threads pinned to one CPU: their waits are
#                     preemptions of a few ms, in no system call): off-CPU time in crowded() within
#                     20% of what the threads measured (wall less CPU time), and stacks taken for
#                     under 70% of the waits (walked by chance at switch-out); with
#                     --wait-sample-us 0, every wait, within 10%
#   offcpu_pending           `sleep 4` under a 2 s capture: the wait still going on at the end is
#                            counted up to it, with its names and stack; no other sleeping wait
#                            (hostprof's hold on the command before it runs)
#   offcpu_asleep_at_start   `sleep 8` asleep before a 2 s capture by --pid begins: one wait of
#                            the whole window, with its names and kernel stack
#   offcpu_long_after_short  short_waits --long (a 50 ms nap after 30 of 20 us): off-CPU time in
#                     long_nap within 10% of what the workload measured, most long naps walked
#                     at the return to user mode (Linux 6.18's task work; elsewhere the summary
#                     says they kept their kernel stack only, and the time is still counted)
#   go_labels         goroutine pprof labels of Go programs built by Debian's Go (a label map),
#                     the newest Go (a sorted slice) and with cgo (g at runtime.tlsg): >= 95% of
#                     in-span samples carry their ids and labels, none of the others; OTLP links;
#                     go tool pprof -tagfocus=span_id isolates one span
#   otel_go_sdk       an OpenTelemetry Go SDK service with otel-profiling-go: every span id in the
#                     profile is one the SDK exported, with its trace id and name; the busy
#                     handler's samples carry busy spans
#                     (read at switch-out, at the wait's end), waits outside none
#   readme_examples   every hostprof example of README.md runs and exits 0 (or says why it is
#                     skipped), and its sample outputs match what hostprof prints
#                     (tests/e2e/readme_examples.py)
#   not_root          as nobody: nonzero, names CAP_BPF, CAP_PERFMON or root
#   binaries_denied   with the capabilities but CAP_DAC_READ_SEARCH, a binary in a 0700 directory:
#                     the summary counts it and names the capability; with it, it is read
#   idle_hint         a target at ~1% of a CPU: the summary says it was nearly idle
# and, from the sourced files: unwind.sh (stacks without frame pointers), python.sh (pyframes_*:
# CPython frames walked in BPF), agent.sh (agent_*), collector.sh (collector_*) and hostile.sh
# (one agent run among hostile processes):
#   hostile_agent     every window holds cpu_ratio, /healthz 200 throughout, the capture loop
#                     never held up past 1 s, peak RSS within SECURITY.md's bound
#   hostile_files     FIFO debug files, a 1.5 GiB .symtab and a 1 GiB perf map line refused
#   hostile_canary    symlinks out of a container's root never reach the host's canaries
#   hostile_names     control characters and markup escaped in the log, intact in the outputs
#
# The captures run one after another, never in parallel: the machines have 2 cores, and a second
# busy process would take CPU time from the workload whose shares are being measured.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
E2E=$ROOT/tests/e2e
OUTPUT=${OUTPUT:-build}
case $OUTPUT in /*) ;; *) OUTPUT=$ROOT/$OUTPUT ;; esac
HOSTPROF=${HOSTPROF:-$OUTPUT/hostprof}
WL=$OUTPUT/e2e
FREQ=99
# Percentage points that a measured self share may differ from the workload's designed share.
SHARE_TOL=5

if [ "$(id -u)" -ne 0 ]; then
	echo "e2e: must run as root: hostprof needs CAP_BPF and CAP_PERFMON to load its BPF programs" \
		"and open perf events, and the not_root test drops from root to nobody" >&2
	exit 1
fi

passed=0
failed=0
WORK=$(mktemp -d /tmp/hostprof-e2e.XXXXXX) || exit 1
PIDS=()
# Functions finish() calls before it exits, for what a test made outside $WORK.
CLEANUPS=()

pass() {
	local name=$1
	shift
	echo "PASS $name: $*"
	passed=$((passed + 1))
}

fail() {
	local name=$1
	shift
	echo "FAIL $name: $*"
	failed=$((failed + 1))
}

stop_workloads() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	PIDS=()
}

# finish: stops the workloads, keeps or removes the outputs, prints the closing line and exits.
finish() {
	local c
	trap - EXIT
	stop_workloads
	for c in "${CLEANUPS[@]}"; do
		"$c"
	done
	if [ "$failed" -eq 0 ] && [ "${E2E_KEEP:-0}" != 1 ]; then
		rm -rf "$WORK"
	else
		echo "e2e: outputs kept in $WORK"
	fi
	echo "e2e: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
# On an early exit (signal, bug), still kill every workload and count the run as failed.
trap 'echo "e2e: stopped before the end"; failed=$((failed + 1)); finish' EXIT
trap 'exit 130' INT TERM

# wanted NAME: whether test NAME is to run (E2E_ONLY unset, or NAME listed in it).
wanted() {
	[ -z "${E2E_ONLY:-}" ] && return 0
	case " $E2E_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

# start_workload NAME ARGS...: starts $WL/NAME in the background, sets WPID, and remembers the
# pid for the EXIT trap. Every workload also takes a time limit of its own, in case the trap
# does not run (kill -9 of this script).
start_workload() {
	local name=$1
	shift
	"$WL/$name" "$@" >"$WORK/$name.log" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
}

# start_bg CMD ARGS...: like start_workload for any command (sets WPID).
start_bg() {
	"$@" >/dev/null 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
}

# stop_workload PID: kills and reaps it, and forgets it (so the EXIT trap never signals a pid that
# may have been reused since).
stop_workload() {
	local p keep=()
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	for p in "${PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# cpu_ticks PID: user+system CPU time of PID in clock ticks (empty when it is gone).
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null
}

# hp NAME ARGS...: runs hostprof with ARGS under a time limit; stdout and stderr go to
# $WORK/NAME.out and $WORK/NAME.err. Sets HP_RC and HP_SECS (wall time).
hp() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	# From the work directory: a capture without -o writes profile.pb.gz where it runs.
	(cd "$WORK" && timeout -k 5 "${HP_TIMEOUT:-60}" "$HOSTPROF" "$@") >"$WORK/$name.out" \
		2>"$WORK/$name.err"
	HP_RC=$?
	t1=$(date +%s.%N)
	HP_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

# hp_failure NAME: one line describing a failed hostprof run, for FAIL messages.
hp_failure() {
	local msg
	msg=$(head -c 300 "$WORK/$1.err" | tr '\n' ' ')
	if [ "$HP_RC" -eq 124 ] || [ "$HP_RC" -eq 137 ]; then
		echo "hostprof was killed after ${HP_TIMEOUT:-60} s (hung?); stderr: ${msg:-(empty)}"
	else
		echo "hostprof exited $HP_RC after ${HP_SECS} s; stderr: ${msg:-(empty)}"
	fi
}

folded() {
	python3 "$E2E/folded.py" "$@"
}

# outputs_ok TEST FILE...: each FILE is there and not empty, and each .folded one parses; else
# fails TEST and returns 1.
outputs_ok() {
	local test=$1 f out
	shift
	for f in "$@"; do
		if [ ! -s "$f" ]; then
			fail "$test" "hostprof exited 0 but wrote no (or an empty) $(basename "$f")"
			return 1
		fi
		case $f in
		*.folded)
			if ! out=$(folded validate "$f" 2>&1); then
				fail "$test" "$(basename "$f") is not in the folded format: $out"
				return 1
			fi
			;;
		esac
	done
}

# kv KEY: the second field of the line whose first field is KEY, read from stdin.
kv() {
	awk -v k="$1" '$1 == k { print $2; exit }'
}

# fcheck EXPR: true when the awk expression EXPR (over numbers) holds.
fcheck() {
	awk "BEGIN { exit !($1) }"
}

# top_stacks FILE N: the N folded lines with the most samples, on one line.
top_stacks() {
	awk '{ print $NF "\t" $0 }' "$1" | sort -rn | head -"$2" | cut -f2 | tr '\n' '|'
}

pct() {
	awk -v x="$1" 'BEGIN { printf "%.1f%%", 100 * x }'
}

# pprof ARGS...: `go tool pprof` with a private HOME and cache. -symbolize=none everywhere: pprof
# must show the names hostprof wrote, not names it looked up itself in the local binaries.
pprof() {
	HOME=$WORK GOCACHE=$WORK/gocache PPROF_TMPDIR=$WORK GOTOOLCHAIN=local GOFLAGS='' \
		go tool pprof -symbolize=none "$@"
}

# check_shares NAME FILE COMM FUNC=SHARE...: the self share of each FUNC among the FUNCs (leaf
# frame counts) is within SHARE_TOL points of SHARE (in percent). Prints the PASS/FAIL line.
check_shares() {
	local name=$1 file=$2 comm=$3
	shift 3
	local funcs=() want=() spec out sum measured="" expected="" bad="" i f n s
	for spec in "$@"; do
		funcs+=("${spec%%=*}")
		want+=("${spec#*=}")
	done
	out=$(folded shares "$file" --comm "$comm" "${funcs[@]}" 2>&1) || {
		fail "$name" "cannot read $file: $out"
		return
	}
	sum=$(kv sum <<<"$out")
	for i in "${!funcs[@]}"; do
		f=${funcs[$i]}
		n=$(awk -v k="$f" '$1 == k { print $2 }' <<<"$out")
		s=$(awk -v k="$f" '$1 == k { printf "%.1f", 100 * $3 }' <<<"$out")
		measured+="${measured:+ }$f=$s% ($n)"
		expected+="${expected:+/}${want[$i]}"
		if ! fcheck "$s >= ${want[$i]} - $SHARE_TOL && $s <= ${want[$i]} + $SHARE_TOL"; then
			bad+=" $f"
		fi
	done
	if [ "$sum" -lt 100 ]; then
		fail "$name" "only $sum samples of comm $comm in ${funcs[*]} (need >= 100 to measure shares); leaf frames seen: $(folded leaves "$file" --comm "$comm" -n 6 | tr '\n' ' ')"
	elif [ -n "$bad" ]; then
		fail "$name" "self shares $measured; expected $expected% +-$SHARE_TOL points; off:$bad"
	else
		pass "$name" "self shares $measured of $sum samples; expected $expected% +-$SHARE_TOL points"
	fi
}

# --- preconditions -------------------------------------------------------------------------------

precondition_failed() {
	echo "e2e: $*" >&2
	fail setup "$*"
	finish
}

check_preconditions() {
	local w out
	[ -x "$HOSTPROF" ] || precondition_failed "no executable $HOSTPROF (run make first)"
	for w in cpu_ratio lib_ratio libhpwork.so syscalls short_lived cpu_threads; do
		[ -e "$WL/$w" ] || precondition_failed "no workload $WL/$w (run make e2e-workloads)"
	done
	command -v python3 >/dev/null || precondition_failed "python3 is missing"
	command -v go >/dev/null || precondition_failed "go is missing (go tool pprof validates the pprof output)"
	out=$(python3 "$E2E/folded.py" selftest 2>&1 && python3 "$E2E/pprof_raw.py" selftest 2>&1) ||
		precondition_failed "the parsing helpers fail their self-test: $out"
}

# --- capture 1: cpu_ratio by pid, reused by several tests ----------------------------------------

# Time the hypervisor took from this VM, all CPUs (the 8th value of /proc/stat's cpu line).
# cpu-clock samples follow the guest's wall clock, while the kernel's per-task CPU accounting
# leaves stolen time out, so under steal the two disagree by up to this much.
steal_ticks() {
	awk '/^cpu / { print $9 }' /proc/stat
}

RATIO_OK=0
capture_ratio() {
	local pid c0 c1 st0 st1 out
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	c0=$(cpu_ticks "$pid")
	st0=$(steal_ticks)
	hp ratio profile --pid "$pid" --duration 5 --frequency "$FREQ" \
		-o "$WORK/ratio.folded" -o "$WORK/ratio.pb.gz"
	c1=$(cpu_ticks "$pid")
	st1=$(steal_ticks)
	stop_workload "$pid"
	RATIO_CPU=$(awk -v a="${c0:-0}" -v b="${c1:-0}" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f", (b - a) / hz }')
	RATIO_STEAL=$(awk -v a="${st0:-0}" -v b="${st1:-0}" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f", (b - a) / hz }')
	RATIO_WALL=$HP_SECS
	if [ "$HP_RC" -ne 0 ]; then
		RATIO_ERR="capture of cpu_ratio failed: $(hp_failure ratio)"
	elif [ ! -s "$WORK/ratio.folded" ] || [ ! -s "$WORK/ratio.pb.gz" ]; then
		RATIO_ERR="capture of cpu_ratio wrote no (or empty) ratio.folded/ratio.pb.gz"
	elif ! out=$(folded validate "$WORK/ratio.folded" 2>&1); then
		RATIO_ERR="ratio.folded is not in the folded format: $out"
	else
		RATIO_OK=1
		pprof -raw "$WORK/ratio.pb.gz" >"$WORK/ratio.raw" 2>"$WORK/ratio.raw.err"
		RATIO_RAW_RC=$?
	fi
}

need_ratio() {
	[ "$RATIO_OK" -eq 1 ] && return 0
	fail "$1" "$RATIO_ERR"
	return 1
}

t_ratio() {
	need_ratio ratio || return
	check_shares ratio "$WORK/ratio.folded" cpu_ratio burn_a=16.7 burn_b=33.3 burn_c=50.0
}

t_reach_main() {
	local out hit total fr
	need_ratio reach_main || return
	out=$(folded contains "$WORK/ratio.folded" --comm cpu_ratio main)
	hit=$(kv hit <<<"$out")
	total=$(kv samples <<<"$out")
	fr=$(kv fraction <<<"$out")
	if [ "$total" -gt 0 ] && fcheck "$fr >= 0.99"; then
		pass reach_main "$hit of $total cpu_ratio samples ($(pct "$fr")) have main in the stack (need >= 99%)"
	else
		fail reach_main "$hit of $total cpu_ratio samples ($(pct "$fr")) have main in the stack, need >= 99%; top stacks: $(top_stacks "$WORK/ratio.folded" 3)"
	fi
}

# The burn functions are named in the PIE, and hardly any sample has a frame of the PIE left
# unresolved.
t_pie_resolved() {
	local out f n missing="" unknown total
	need_ratio pie_resolved || return
	out=$(folded shares "$WORK/ratio.folded" --comm cpu_ratio burn_a burn_b burn_c)
	for f in burn_a burn_b burn_c; do
		n=$(kv "$f" <<<"$out")
		[ "${n:-0}" -gt 0 ] || missing+=" $f"
	done
	total=$(kv samples <<<"$out")
	unknown=$(grep -F '[unknown]' "$WORK/ratio.folded" | grep -F "$WL/cpu_ratio" |
		awk '{ s += $NF } END { print s + 0 }')
	if [ -n "$missing" ]; then
		fail pie_resolved "no leaf frame named$missing; leaf frames seen: $(folded leaves "$WORK/ratio.folded" -n 6 | tr '\n' ' ')"
	elif [ "$total" -eq 0 ] || ! fcheck "$unknown <= 0.01 * $total"; then
		fail pie_resolved "$unknown of $total samples have an unresolved [unknown] frame in $WL/cpu_ratio (allowed: 1%)"
	else
		pass pie_resolved "burn_a, burn_b, burn_c named in the PIE; $unknown of $total samples with an unresolved cpu_ratio frame"
	fi
}

# With --pid, only that process is sampled.
t_pid_filter() {
	local comms others
	need_ratio pid_filter || return
	comms=$(folded comms "$WORK/ratio.folded")
	others=$(awk '$1 != "cpu_ratio"' <<<"$comms" | head -5 | tr '\n' ' ')
	if [ -z "$others" ] && [ -n "$comms" ]; then
		pass pid_filter "every sample of --pid belongs to cpu_ratio ($(kv cpu_ratio <<<"$comms") samples)"
	else
		fail pid_filter "--pid of cpu_ratio also recorded other comms (comm samples): $others"
	fi
}

# A busy process sampled at F Hz yields about F samples per second of its CPU time. The workload's
# CPU time is measured over the whole hostprof run (start-up, 5 s capture, output); the capture
# saw about 5/wall of it.
t_sample_rate() {
	local total lo hi
	need_ratio sample_rate || return
	total=$(folded total "$WORK/ratio.folded" --comm cpu_ratio | kv samples)
	lo=$(awk -v c="$RATIO_CPU" -v w="$RATIO_WALL" -v f="$FREQ" \
		'BEGIN { r = (w > 5) ? 5 / w : 1; printf "%d", 0.8 * c * r * f }')
	hi=$(awk -v c="$RATIO_CPU" -v s="$RATIO_STEAL" -v f="$FREQ" \
		'BEGIN { printf "%d", 1.05 * (c + s) * f + 5 }')
	if [ "$total" -ge "$lo" ] && [ "$total" -le "$hi" ]; then
		pass sample_rate "$total samples at $FREQ Hz; cpu_ratio used ${RATIO_CPU} s of CPU during the ${RATIO_WALL} s run, ${RATIO_STEAL} s stolen by the hypervisor (expected $lo..$hi)"
	else
		fail sample_rate "$total samples at $FREQ Hz, expected $lo..$hi: cpu_ratio used ${RATIO_CPU} s of CPU during the ${RATIO_WALL} s run of a 5 s capture, ${RATIO_STEAL} s stolen; summary: $(head -c 300 "$WORK/ratio.out" | tr '\n' ' ')"
	fi
}

# The summary on stdout reports the samples (as many as the folded file has), the processes (one:
# --pid of a single-threaded process) and the top functions.
t_summary() {
	local total nums procs
	need_ratio summary || return
	total=$(folded total "$WORK/ratio.folded" | kv samples)
	nums=$(grep -o -E '[0-9]+ samples' "$WORK/ratio.out" | awk '{ printf "%s ", $1 }')
	procs=$(grep -o -E '[0-9]+ process(es)?' "$WORK/ratio.out" | awk '{ print $1; exit }')
	if ! grep -q 'burn_c' "$WORK/ratio.out"; then
		fail summary "stdout does not name the top function burn_c: $(head -c 400 "$WORK/ratio.out" | tr '\n' ' ')"
	elif [[ " $nums" != *" $total "* ]]; then
		fail summary "stdout should say '$total samples' (the folded total); it says: ${nums:-no 'N samples'}"
	elif grep -qE '(^|[^0-9])1 processes' "$WORK/ratio.out"; then
		fail summary "stdout says '1 processes': $(grep -E '1 processes' "$WORK/ratio.out" | head -1)"
	elif [ "${procs:-}" != 1 ]; then
		fail summary "stdout says '${procs:-no} processes' for --pid of one single-threaded process (the outputs hold pids: $(grep -o -E 'pid:\[[0-9]+\]' "$WORK/ratio.raw" 2>/dev/null | sort -u | tr '\n' ' ')); line: $(grep -E '[0-9]+ process' "$WORK/ratio.out" | head -1)"
	else
		pass summary "stdout says $total samples, 1 process, and names the top function burn_c"
	fi
}

t_pprof_valid() {
	local ftotal ptotal top first
	need_ratio pprof_valid || return
	if [ "$RATIO_RAW_RC" -ne 0 ]; then
		fail pprof_valid "go tool pprof -raw rejects ratio.pb.gz: $(head -c 300 "$WORK/ratio.raw.err" | tr '\n' ' ')"
		return
	fi
	if ! ptotal=$(python3 "$E2E/pprof_raw.py" total "$WORK/ratio.raw" samples 2>&1); then
		fail pprof_valid "cannot read the pprof -raw output (ratio.raw): $ptotal"
		return
	fi
	ptotal=$(kv samples <<<"$ptotal")
	ftotal=$(folded total "$WORK/ratio.folded" | kv samples)
	if ! pprof -top -sample_index=cpu "$WORK/ratio.pb.gz" >"$WORK/ratio.top" 2>"$WORK/ratio.top.err"; then
		fail pprof_valid "go tool pprof -top -sample_index=cpu fails: $(head -c 300 "$WORK/ratio.top.err" | tr '\n' ' ')"
		return
	fi
	# The first row under the `flat flat% sum% cum cum%` header has the largest flat value.
	top=$(awk 'f { for (i = 6; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : ""); print ""; exit }
		/flat%/ { f = 1 }' "$WORK/ratio.top")
	first=$(awk '/flat%/ { getline; print; exit }' "$WORK/ratio.top" | sed 's/  */ /g')
	if [ "$ptotal" != "$ftotal" ]; then
		fail pprof_valid "pprof has $ptotal samples (samples/count), the folded file of the same capture $ftotal"
	elif [ "$top" != burn_c ]; then
		fail pprof_valid "largest flat cpu in pprof -top is '${top:-(none)}', expected burn_c; top rows: $(sed -n '/flat%/,+3p' "$WORK/ratio.top" | tr -s ' ' | tr '\n' '|')"
	else
		pass pprof_valid "go tool pprof reads it; $ptotal samples as in the folded file; top flat cpu:$first"
	fi
}

# Each sample's cpu/nanoseconds value is the sampling period, 1e9/F ns.
t_pprof_cpu_time() {
	local ns n
	need_ratio pprof_cpu_time || return
	if [ ! -s "$WORK/ratio.raw" ]; then
		fail pprof_cpu_time "no pprof -raw output to read (see pprof_valid)"
		return
	fi
	n=$(python3 "$E2E/pprof_raw.py" total "$WORK/ratio.raw" samples 2>&1 | kv samples)
	ns=$(python3 "$E2E/pprof_raw.py" total "$WORK/ratio.raw" cpu 2>&1 | kv cpu)
	if [ -z "$ns" ] || [ -z "$n" ] || [ "$n" -eq 0 ]; then
		fail pprof_cpu_time "no cpu/nanoseconds or samples/count sample type: $(sed -n '/^Samples:/,+1p' "$WORK/ratio.raw" | tr '\n' ' ')"
	elif fcheck "$ns >= 0.98 * $n * 1e9 / $FREQ && $ns <= 1.02 * $n * 1e9 / $FREQ"; then
		pass pprof_cpu_time "cpu/nanoseconds total $ns = $n samples x $(awk -v a="$ns" -v b="$n" 'BEGIN { printf "%d", a / b }') ns (1e9/$FREQ)"
	else
		fail pprof_cpu_time "cpu/nanoseconds total $ns for $n samples: $(awk -v a="$ns" -v b="$n" 'BEGIN { printf "%d", a / b }') ns per sample, expected about $(awk -v f="$FREQ" 'BEGIN { printf "%d", 1e9 / f }')"
	fi
}

# --- the other captures -----------------------------------------------------------------------------

t_lib_resolved() {
	local pid
	start_workload lib_ratio 60
	pid=$WPID
	sleep 0.3
	hp lib profile --pid "$pid" --duration 5 --frequency "$FREQ" -o "$WORK/lib.folded"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail lib_resolved "capture of lib_ratio failed: $(hp_failure lib)"
		return
	fi
	outputs_ok lib_resolved "$WORK/lib.folded" || return
	check_shares lib_resolved "$WORK/lib.folded" lib_ratio \
		lib_burn_x=25.0 lib_burn_y=25.0 lib_burn_z=50.0
}

t_kernel_frames() {
	local pid out hit total fr named unnamed syscall kf
	start_workload syscalls 60
	pid=$WPID
	sleep 0.3
	hp sys profile --pid "$pid" --duration 4 --frequency "$FREQ" -o "$WORK/sys.folded"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail kernel_frames "capture of syscalls failed: $(hp_failure sys)"
		return
	fi
	outputs_ok kernel_frames "$WORK/sys.folded" || return
	out=$(folded kernel "$WORK/sys.folded" --comm syscalls)
	hit=$(kv hit <<<"$out")
	total=$(kv samples <<<"$out")
	fr=$(kv fraction <<<"$out")
	kf=$(folded kernel-frames "$WORK/sys.folded" --comm syscalls -n 1000)
	# Named: looks like a kernel symbol, `name_[k]` or `name.isra.0_[k]`.
	named=$(awk '$1 ~ /^[A-Za-z_][A-Za-z0-9_.]*_\[k\]$/' <<<"$kf" | wc -l)
	# Samples with a kernel frame whose name is not a symbol (e.g. [unknown]_[k]).
	unnamed=$(awk '$1 !~ /^[A-Za-z_][A-Za-z0-9_.]*_\[k\]$/ { n += $NF } END { print n + 0 }' <<<"$kf")
	syscall=$(awk '$1 ~ /write|sys_|entry_SYSCALL/ { print $1; exit }' <<<"$kf")
	if [ "$total" -eq 0 ]; then
		fail kernel_frames "no samples of comm syscalls; comms: $(folded comms "$WORK/sys.folded" | head -5 | tr '\n' ' ')"
	elif ! fcheck "$fr >= 0.30"; then
		fail kernel_frames "$hit of $total syscalls samples ($(pct "$fr")) have a kernel frame, need >= 30%; leaf frames: $(folded leaves "$WORK/sys.folded" --comm syscalls -n 5 | tr '\n' ' ')"
	elif [ -z "$syscall" ]; then
		fail kernel_frames "no kernel frame with write, sys_ or entry_SYSCALL in its name; kernel frames: $(head -8 <<<"$kf" | tr '\n' ' ')"
	elif ! fcheck "$unnamed <= 0.02 * $hit"; then
		fail kernel_frames "$unnamed of $hit samples with kernel frames have one whose name is not a symbol (allowed: 2%): $(awk '$1 !~ /^[A-Za-z_][A-Za-z0-9_.]*_\[k\]$/' <<<"$kf" | head -5 | tr '\n' ' ')"
	else
		pass kernel_frames "$hit of $total syscalls samples ($(pct "$fr")) have kernel frames; $named distinct named kernel frames, e.g. $syscall; top: $(head -3 <<<"$kf" | awk '{ printf "%s ", $1 }')"
	fi
}

# --pid A,B profiles both processes and nothing else.
t_multi_pid() {
	local a b comms others na nb
	start_workload cpu_ratio 60
	a=$WPID
	start_workload lib_ratio 60
	b=$WPID
	sleep 0.3
	hp multi profile --pid "$a,$b" --duration 3 --frequency "$FREQ" -o "$WORK/multi.folded"
	stop_workload "$a"
	stop_workload "$b"
	if [ "$HP_RC" -ne 0 ]; then
		fail multi_pid "capture of --pid $a,$b failed: $(hp_failure multi)"
		return
	fi
	outputs_ok multi_pid "$WORK/multi.folded" || return
	comms=$(folded comms "$WORK/multi.folded")
	na=$(kv cpu_ratio <<<"$comms")
	nb=$(kv lib_ratio <<<"$comms")
	others=$(awk '$1 != "cpu_ratio" && $1 != "lib_ratio"' <<<"$comms" | head -5 | tr '\n' ' ')
	if [ "${na:-0}" -lt 20 ] || [ "${nb:-0}" -lt 20 ]; then
		fail multi_pid "--pid $a,$b: expected both cpu_ratio and lib_ratio (>= 20 samples each); comms (samples): $(tr '\n' ' ' <<<"$comms")"
	elif [ -n "$others" ]; then
		fail multi_pid "--pid $a,$b also recorded other comms (comm samples): $others"
	else
		pass multi_pid "--pid $a,$b: cpu_ratio $na and lib_ratio $nb samples, no other process"
	fi
}

# --all records every busy process: cpu_ratio under its comm with its burn functions, and the
# syscalls workload beside it.
t_all_mode() {
	local pid spid out n ns comms
	start_workload cpu_ratio 60
	pid=$WPID
	start_workload syscalls 60
	spid=$WPID
	sleep 0.3
	hp all profile --all --duration 4 --frequency "$FREQ" -o "$WORK/all.folded"
	stop_workload "$pid"
	stop_workload "$spid"
	if [ "$HP_RC" -ne 0 ]; then
		fail all_mode "capture with --all failed: $(hp_failure all)"
		return
	fi
	outputs_ok all_mode "$WORK/all.folded" || return
	comms=$(folded comms "$WORK/all.folded")
	out=$(folded shares "$WORK/all.folded" --comm cpu_ratio burn_a burn_b burn_c)
	n=$(kv samples <<<"$out")
	ns=$(kv syscalls <<<"$comms")
	if [ "$n" -lt 100 ]; then
		fail all_mode "$n samples under comm cpu_ratio (a busy process for 4 s at $FREQ Hz: expected ~$((4 * FREQ))); comms: $(head -6 <<<"$comms" | tr '\n' ' ')"
	elif [ "$(kv burn_a <<<"$out")" -eq 0 ] || [ "$(kv burn_b <<<"$out")" -eq 0 ] ||
		[ "$(kv burn_c <<<"$out")" -eq 0 ]; then
		fail all_mode "cpu_ratio samples lack a burn function: $(tr '\n' ' ' <<<"$out")"
	elif [ "${ns:-0}" -lt 20 ]; then
		fail all_mode "${ns:-0} samples under comm syscalls, a second busy process (need >= 20); comms: $(head -6 <<<"$comms" | tr '\n' ' ')"
	else
		pass all_mode "$n samples under comm cpu_ratio, $(kv sum <<<"$out") in burn_a/b/c ($(awk '$1 ~ /^burn_/ { printf "%s=%s ", $1, $2 }' <<<"$out")); syscalls $ns; $(wc -l <<<"$comms") comms in all"
	fi
}

t_exits_mid_capture() {
	local pid n
	start_workload short_lived 2
	pid=$WPID
	sleep 0.2
	hp exit profile --pid "$pid" --duration 5 --frequency "$FREQ" \
		-o "$WORK/exit.folded" -o "$WORK/exit.pb.gz"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail exits_mid_capture "hostprof should exit 0 when its target exits mid-capture: $(hp_failure exit)"
		return
	fi
	outputs_ok exits_mid_capture "$WORK/exit.folded" "$WORK/exit.pb.gz" || return
	if ! pprof -raw "$WORK/exit.pb.gz" >"$WORK/exit.raw" 2>"$WORK/exit.raw.err"; then
		fail exits_mid_capture "go tool pprof -raw rejects exit.pb.gz: $(head -c 300 "$WORK/exit.raw.err" | tr '\n' ' ')"
		return
	fi
	n=$(folded contains "$WORK/exit.folded" burn_until_exit | kv hit)
	if [ "${n:-0}" -lt 10 ]; then
		fail exits_mid_capture "${n:-0} samples in burn_until_exit (need >= 10 of the ~2 s it ran); comms: $(folded comms "$WORK/exit.folded" | head -5 | tr '\n' ' ')"
	else
		pass exits_mid_capture "exit 0 after ${HP_SECS} s, valid pprof, $n samples in burn_until_exit before the target exited"
	fi
}

t_short_lived_loop() {
	local loop out n total hit unres gone
	# Processes of about 50 ms each, one after another, none of them known to hostprof before
	# its first sample: each must be snapshotted (maps and binaries) while it still lives.
	start_bg bash -c "while :; do '$WL/short_lived' 0.05; done"
	loop=$WPID
	sleep 0.3
	hp shortloop profile --all --duration 6 --frequency "$FREQ" -o "$WORK/shortloop.folded"
	stop_workload "$loop"
	if [ "$HP_RC" -ne 0 ]; then
		fail short_lived_loop "capture with --all failed: $(hp_failure shortloop)"
		return
	fi
	outputs_ok short_lived_loop "$WORK/shortloop.folded" || return
	out=$(folded unresolved "$WORK/shortloop.folded" --comm short_lived)
	unres=$(kv hit <<<"$out")
	total=$(kv samples <<<"$out")
	hit=$(folded contains "$WORK/shortloop.folded" --comm short_lived burn_until_exit | kv hit)
	gone=$(grep -E -o '(Unresolved frames|Processes read at their first sample):.*' "$WORK/shortloop.out" | tr '\n' ' ')
	n=$((total - unres))
	if [ "${total:-0}" -lt 100 ]; then
		fail short_lived_loop "${total:-0} samples under comm short_lived in 6 s (need >= 100: the loop keeps a core busy); comms: $(folded comms "$WORK/shortloop.folded" | head -5 | tr '\n' ' ')"
	elif ! fcheck "$n >= 0.95 * $total"; then
		fail short_lived_loop "$n of $total short_lived samples symbolized (need >= 95%); unresolved leaves: $(folded leaves "$WORK/shortloop.folded" --comm short_lived -n 5 | tr '\n' ' '); ${gone:-}"
	elif ! fcheck "$hit >= 0.8 * $total"; then
		fail short_lived_loop "$hit of $total short_lived samples in burn_until_exit (need >= 80%): leaves $(folded leaves "$WORK/shortloop.folded" --comm short_lived -n 5 | tr '\n' ' ')"
	else
		pass short_lived_loop "$n of $total samples of ~50 ms processes symbolized ($hit in burn_until_exit)${gone:+; $gone}"
	fi
}

t_stats() {
	local procs bins rss pid
	# A busy process, so that there is something to track on an idle machine.
	start_workload cpu_ratio 10
	pid=$WPID
	sleep 0.3
	hp stats profile --all --duration 2 --frequency "$FREQ" --stats --max-processes 16 \
		--max-binaries 32 --max-dwarf-mb 8 -o "$WORK/stats.folded"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail stats "profile --stats failed: $(hp_failure stats)"
		return
	fi
	# "  processes (maps)   ENTRIES   BOUND   MEMORY UNIT  note"
	procs=$(awk '/^  processes \(maps\)/ { print $3, $4 }' "$WORK/stats.out")
	bins=$(awk '/^  binaries \(symbols\)/ { print $3, $4, $5 }' "$WORK/stats.out")
	rss=$(awk '/^  hostprof resident/ { print $4, $5 }' "$WORK/stats.out")
	if [ -z "$procs" ] || [ -z "$bins" ] || [ -z "$rss" ]; then
		fail stats "no cache table after the summary: $(grep -A9 '^Caches' "$WORK/stats.out" | tr '\n' '|')"
	elif [ "${procs#* }" != 16 ] || [ "${procs% *}" -gt 16 ] || [ "${procs% *}" -lt 1 ]; then
		fail stats "processes row '$procs': want 1..16 entries under the bound 16 (--max-processes 16)"
	elif [ "$(cut -d' ' -f2 <<<"$bins")" != 32 ] || [ "$(cut -d' ' -f1 <<<"$bins")" -gt 32 ]; then
		fail stats "binaries row '$bins': want at most 32 under the bound 32"
	elif ! grep -q '^  DWARF (handles, tables).*8.0 MiB' "$WORK/stats.out"; then
		fail stats "DWARF row without the 8 MiB budget: $(grep 'DWARF' "$WORK/stats.out")"
	else
		pass stats "processes $procs, binaries $bins (entries bound MiB), RSS $rss"
	fi
}

t_command_mode() {
	local n total out comms
	hp cmd profile --duration 10 --frequency "$FREQ" -o "$WORK/cmd.folded" -- "$WL/short_lived" 2
	if [ "$HP_RC" -ne 0 ]; then
		fail command_mode "hostprof ... -- short_lived 2: $(hp_failure cmd)"
		return
	fi
	outputs_ok command_mode "$WORK/cmd.folded" || return
	out=$(folded contains "$WORK/cmd.folded" --comm short_lived burn_until_exit)
	n=$(kv hit <<<"$out")
	total=$(kv samples <<<"$out")
	comms=$(folded comms "$WORK/cmd.folded" | head -5 | tr '\n' ' ')
	# Few samples are enough: a loaded machine may give the command much less than a core.
	if ! fcheck "$HP_SECS < 7"; then
		fail command_mode "took ${HP_SECS} s for a 2 s command with --duration 10: should stop when the command exits"
	elif [ "${n:-0}" -lt 20 ] || ! fcheck "$n >= 0.9 * $total"; then
		fail command_mode "${n:-0} of ${total:-0} short_lived samples in burn_until_exit (need >= 20 and >= 90%; ~$((2 * FREQ)) on an idle machine); comms: $comms"
	else
		pass command_mode "returned after ${HP_SECS} s (--duration 10, command runs 2 s); $n of $total short_lived samples in burn_until_exit"
	fi
}

# hostprof profile -- COMMAND exits with the command's status, as a shell would: 3 for `exit 3`,
# 127 (and the reason) for a command that cannot be run, 128 + 15 for one killed by SIGTERM; the
# profile is written all the same.
t_command_status() {
	local got=""
	hp cmd3 profile --duration 5 -o "$WORK/cmd3.folded" -- sh -c 'exit 3'
	got+="exit 3 -> $HP_RC; "
	[ "$HP_RC" -eq 3 ] && [ -e "$WORK/cmd3.folded" ] || {
		fail command_status "-- sh -c 'exit 3': exit $HP_RC (want 3), folded written: $([ -e "$WORK/cmd3.folded" ] && echo yes || echo no)"
		return
	}
	hp cmd127 profile --duration 5 -o "$WORK/cmd127.folded" -- /nonexistent/hostprof-cmd
	got+="missing command -> $HP_RC; "
	if [ "$HP_RC" -ne 127 ] || ! grep -q "cannot run '/nonexistent/hostprof-cmd'" "$WORK/cmd127.err"; then
		fail command_status "-- /nonexistent/hostprof-cmd: exit $HP_RC (want 127), stderr: $(tail -2 "$WORK/cmd127.err" | tr '\n' ' ')"
		return
	fi
	hp cmdsig profile --duration 5 -o "$WORK/cmdsig.folded" -- sh -c 'kill -TERM $$'
	got+="killed by SIGTERM -> $HP_RC"
	if [ "$HP_RC" -ne 143 ]; then
		fail command_status "-- sh -c 'kill -TERM \$\$': exit $HP_RC (want 143)"
	else
		pass command_status "$got"
	fi
}

# -- COMMAND follows the processes the command starts, as perf record does: a shell running
# cpu_ratio (a fork and an exec away) has cpu_ratio's samples, its burn functions named and split;
# --no-inherit profiles the shell alone.
t_command_children() {
	local out n total kids_off
	hp kids profile --duration 10 --frequency "$FREQ" -o "$WORK/kids.folded" \
		-- sh -c "\"$WL/cpu_ratio\" 3; true"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$WORK/kids.folded" ]; then
		fail command_children "-- sh -c 'cpu_ratio 3': $(hp_failure kids)"
		return
	fi
	out=$(folded contains "$WORK/kids.folded" --comm cpu_ratio main)
	n=$(kv hit <<<"$out")
	total=$(folded total "$WORK/kids.folded" | kv samples)
	hp kids_off profile --duration 10 --frequency "$FREQ" --no-inherit \
		-o "$WORK/kids_off.folded" -- sh -c "\"$WL/cpu_ratio\" 2; true"
	kids_off=$(folded total "$WORK/kids_off.folded" --comm cpu_ratio 2>/dev/null | kv samples)
	if [ "${n:-0}" -lt 100 ] || ! fcheck "$n >= 0.9 * $total"; then
		fail command_children "${n:-0} of ${total:-0} samples are cpu_ratio's, started by the shell (need >= 100 and >= 90%); comms: $(folded comms "$WORK/kids.folded" | head -3 | tr '\n' ' ')"
	elif [ "${kids_off:-0}" -ne 0 ] || [ "$HP_RC" -ne 0 ]; then
		fail command_children "--no-inherit still has ${kids_off:-0} cpu_ratio samples (exit $HP_RC)"
	else
		pass command_children "$n of $total samples from cpu_ratio, the shell's child, with main in the stack; --no-inherit: 0"
	fi
}

# Outputs are checked before the capture: /proc, a missing directory and a directory as the file
# each fail at once, naming the problem. A write that still fails after the capture (its directory
# removed meanwhile) saves the profile under $TMPDIR and names it.
t_output_checks() {
	local gone=$WORK/gone rescue=$WORK/rescue saved
	hp out_proc profile --all -d 5 -o /proc/hostprof-e2e.folded
	if [ "$HP_RC" -eq 0 ] || ! fcheck "$HP_SECS < 3" ||
		! grep -q "cannot write '/proc/hostprof-e2e.folded': no file can be created in '/proc'" "$WORK/out_proc.err"; then
		fail output_checks "-o /proc/x.folded: exit $HP_RC after $HP_SECS s (want an error before the 5 s capture): $(tail -1 "$WORK/out_proc.err")"
		return
	fi
	hp out_nodir profile --all -d 5 -o /nonexistent-hostprof/x.folded
	if [ "$HP_RC" -eq 0 ] || ! grep -q "the directory '/nonexistent-hostprof' does not exist" "$WORK/out_nodir.err"; then
		fail output_checks "-o /nonexistent-hostprof/x.folded: exit $HP_RC: $(tail -1 "$WORK/out_nodir.err")"
		return
	fi
	mkdir -p "$WORK/isdir.folded"
	hp out_isdir profile --all -d 5 -o "$WORK/isdir.folded"
	if [ "$HP_RC" -eq 0 ] || ! grep -q "it is a directory" "$WORK/out_isdir.err"; then
		fail output_checks "-o DIRECTORY: exit $HP_RC: $(tail -1 "$WORK/out_isdir.err")"
		return
	fi
	mkdir -p "$gone" "$rescue"
	# A busy target, so that the profile has samples however idle the machine is.
	start_workload cpu_ratio 10
	local wl=$WPID
	(sleep 1 && rmdir "$gone") &
	TMPDIR=$rescue hp out_gone profile --pid "$wl" -d 3 -o "$gone/x.folded"
	wait "$!"
	stop_workload "$wl"
	saved=$(ls "$rescue"/hostprof-*-x.folded 2>/dev/null | head -1)
	if [ -z "$saved" ] || [ ! -s "$saved" ] || ! grep -q "the profile was saved as $saved instead" "$WORK/out_gone.err"; then
		fail output_checks "a directory removed during the capture: nothing saved in \$TMPDIR ($(ls "$rescue" | tr '\n' ' ')); stderr: $(tail -1 "$WORK/out_gone.err")"
	elif [ "$HP_RC" -eq 0 ]; then
		fail output_checks "a failed write exited 0"
	else
		pass output_checks "/proc, a missing directory and a directory refused before capturing ($(tail -1 "$WORK/out_proc.err" | cut -c1-80)...); a write that failed afterwards was saved as $saved ($(wc -l <"$saved") lines), exit $HP_RC"
	fi
}

# -v passes libbpf's messages on once prefixed: "hostprof: libbpf: ...", not "libbpf: libbpf:".
t_verbose_prefix() {
	local n
	hp verbose profile -v --duration 1 -o "$WORK/verbose.folded" -- true
	n=$(grep -c '^hostprof: libbpf: ' "$WORK/verbose.err")
	if [ "$HP_RC" -ne 0 ] || [ "$n" -lt 10 ]; then
		fail verbose_prefix "exit $HP_RC, $n lines of libbpf's under -v (want >= 10)"
	elif grep -q 'libbpf: libbpf:' "$WORK/verbose.err"; then
		fail verbose_prefix "libbpf's lines are prefixed twice: $(grep -m1 'libbpf: libbpf:' "$WORK/verbose.err")"
	else
		pass verbose_prefix "$n libbpf lines under -v, each prefixed 'hostprof: libbpf: ' once"
	fi
}

# A target that runs 2 ms every 250 ms: the summary says it was nearly idle (a handful of samples
# is not a broken profiler), and the unwinding line ends cleanly; a busy target is not called idle.
t_idle_hint() {
	local spin='import time
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < 0.002: pass
    time.sleep(0.25)'
	start_bg python3 -c "$spin"
	sleep 0.5
	hp idle profile --pid "$WPID" --duration 2 --frequency 1000 -o "$WORK/idle.folded"
	stop_workload "$WPID"
	if [ "$HP_RC" -ne 0 ]; then
		fail idle_hint "capture failed: $(hp_failure idle)"
	elif ! grep -qE '^The targets were nearly idle: [1-9][0-9]* samples of a possible [0-9]+' "$WORK/idle.out"; then
		fail idle_hint "no 'nearly idle' line for a target at ~1% of a CPU: $(head -c 400 "$WORK/idle.out" | tr '\n' '|')"
	elif grep -qE '^User stacks: .*:$' "$WORK/idle.out"; then
		fail idle_hint "the unwinding line ends with a colon: $(grep '^User stacks' "$WORK/idle.out")"
	elif [ -s "$WORK/ratio.out" ] && grep -q 'nearly idle' "$WORK/ratio.out"; then
		fail idle_hint "the busy cpu_ratio capture was called idle"
	else
		pass idle_hint "$(grep -oE '^The targets were nearly idle: [0-9]+ samples of a possible [0-9]+' "$WORK/idle.out")"
	fi
}

t_bad_pid() {
	local free bad=""
	# A pid that was just freed (nothing reuses it within a second on an idle machine), and one
	# above any pid_max.
	true &
	free=$!
	wait "$free"
	for p in 999999999 "$free"; do
		[ -d "/proc/$p" ] && continue
		HP_TIMEOUT=20 hp badpid profile --pid "$p" --duration 2
		if [ "$HP_RC" -eq 0 ]; then
			bad+=" --pid $p exited 0;"
		elif [ "$HP_RC" -eq 124 ] || [ "$HP_RC" -eq 137 ]; then
			bad+=" --pid $p hung;"
		elif ! grep -q -- "$p" "$WORK/badpid.err"; then
			bad+=" --pid $p: stderr does not name the pid: '$(head -c 200 "$WORK/badpid.err" | tr '\n' ' ')';"
		fi
	done
	if [ -n "$bad" ]; then
		fail bad_pid "$bad"
	else
		pass bad_pid "--pid 999999999 and --pid $free (exited) fail nonzero naming the pid, e.g. '$(head -1 "$WORK/badpid.err")'"
	fi
}

# bad_flag LABEL PATTERN ARGS...: hostprof ARGS must exit nonzero and say PATTERN on stderr.
bad_flag() {
	local label=$1 pattern=$2
	shift 2
	HP_TIMEOUT=20 hp flag "$@"
	if [ "$HP_RC" -eq 0 ]; then
		BAD+=" [$label] exited 0;"
	elif [ "$HP_RC" -eq 124 ] || [ "$HP_RC" -eq 137 ]; then
		BAD+=" [$label] hung;"
	elif ! grep -q -e "$pattern" "$WORK/flag.err"; then
		BAD+=" [$label] stderr does not name $pattern: '$(head -c 200 "$WORK/flag.err" | tr '\n' ' ')';"
	else
		SEEN+=" [$label] $(head -1 "$WORK/flag.err")"
	fi
}

t_bad_flags() {
	local pid
	BAD="" SEEN=""
	# A valid target, so that the flag is the only thing wrong.
	start_bg sleep 60
	pid=$WPID
	bad_flag "unknown flag" '--bogus-flag' profile --pid "$pid" --duration 1 --bogus-flag
	bad_flag "--duration abc" '--duration' profile --pid "$pid" --duration abc
	bad_flag "--duration -1" '--duration' profile --pid "$pid" --duration -1
	bad_flag "--frequency 0" '--frequency' profile --pid "$pid" --duration 1 --frequency 0
	stop_workload "$pid"
	if [ -n "$BAD" ]; then
		fail bad_flags "$BAD"
	else
		pass bad_flags "each exits nonzero naming the flag:$SEEN"
	fi
}

t_help_version() {
	local bad="" version
	version=$(cat "$ROOT/VERSION" 2>/dev/null)
	HP_TIMEOUT=10 hp help --help
	if [ "$HP_RC" -ne 0 ] || ! grep -q -e '--pid' "$WORK/help.out" "$WORK/help.err"; then
		bad+=" 'hostprof --help' exited $HP_RC or does not mention --pid;"
	fi
	HP_TIMEOUT=10 hp phelp profile --help
	if [ "$HP_RC" -ne 0 ] || ! grep -q -e '--pid' "$WORK/phelp.out" "$WORK/phelp.err"; then
		bad+=" 'hostprof profile --help' exited $HP_RC or does not mention --pid;"
	fi
	HP_TIMEOUT=10 hp version --version
	if [ "$HP_RC" -ne 0 ] || ! grep -q -F -e "${version:-.}" "$WORK/version.out"; then
		bad+=" 'hostprof --version' exited $HP_RC, printed '$(head -c 100 "$WORK/version.out" | tr '\n' ' ')' (VERSION is $version);"
	fi
	if [ -n "$bad" ]; then
		fail help_version "$bad"
	else
		pass help_version "--help and profile --help exit 0 and mention --pid; --version prints '$(head -1 "$WORK/version.out")'"
	fi
}

# As nobody, in a directory nobody can write (so that the default output file is not what fails),
# hostprof must refuse and say which privilege it lacks.
# Run with capabilities instead of root (the README's setcap line less CAP_DAC_READ_SEARCH), a
# binary in a directory only root may read gives [unknown] frames, and the summary says how many
# binaries could not be opened and which capability is missing; with it, they are named.
t_binaries_denied() {
	local dir=$WORK/caps secret=$WORK/secret pid out
	local drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	local caps=cap_bpf,cap_perfmon,cap_sys_ptrace,cap_syslog,cap_checkpoint_restore
	if ! command -v setcap >/dev/null; then
		fail binaries_denied "setcap is missing: install the Debian package libcap2-bin"
		return
	fi
	mkdir -p "$dir/out" "$secret" && chmod 711 "$WORK" && chmod 755 "$dir" && chmod 777 "$dir/out"
	chmod 700 "$secret" && cp "$WL/cpu_ratio" "$secret/"
	cp "$HOSTPROF" "$dir/hostprof" && setcap "$caps+ep" "$dir/hostprof"
	"$secret/cpu_ratio" 20 >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	sleep 0.3
	timeout -k 5 20 "${drop[@]}" "$dir/hostprof" profile --pid "$pid" -d 2 \
		-o "$dir/out/denied.folded" >"$WORK/denied.out" 2>"$WORK/denied.err"
	setcap "$caps,cap_dac_read_search+ep" "$dir/hostprof"
	timeout -k 5 20 "${drop[@]}" "$dir/hostprof" profile --pid "$pid" -d 2 \
		-o "$dir/out/allowed.folded" >"$WORK/allowed.out" 2>"$WORK/allowed.err"
	stop_workload "$pid"
	out=$(grep '^Binaries not readable' "$WORK/denied.out")
	if [ -z "$out" ] || ! grep -q 'CAP_DAC_READ_SEARCH' <<<"$out"; then
		fail binaries_denied "no line naming the unreadable binaries and CAP_DAC_READ_SEARCH: $(head -5 "$WORK/denied.out" | tr '\n' ' ') $(tail -1 "$WORK/denied.err")"
	elif ! grep -q ';burn_c ' "$dir/out/allowed.folded" || grep -q '^Binaries not readable' "$WORK/allowed.out"; then
		fail binaries_denied "with CAP_DAC_READ_SEARCH the binary is still not read: $(head -5 "$WORK/allowed.out" | tr '\n' ' ')"
	else
		pass binaries_denied "without CAP_DAC_READ_SEARCH: '$out'; with it, burn_c is named"
	fi
}

t_not_root() {
	local exe=$HOSTPROF rc msg dir=$WORK/nobody
	local drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	mkdir -p "$dir" && chmod 711 "$WORK" && chown nobody:nogroup "$dir"
	if ! "${drop[@]}" test -x "$exe"; then
		# The build directory is not reachable by nobody: use a copy it can run.
		cp "$HOSTPROF" "$dir/hostprof.copy" && chmod 755 "$dir/hostprof.copy"
		exe=$dir/hostprof.copy
	fi
	(cd "$dir" && timeout -k 5 20 "${drop[@]}" "$exe" profile --pid $$ --duration 1) \
		>"$WORK/notroot.out" 2>"$WORK/notroot.err"
	rc=$?
	msg=$(head -c 300 "$WORK/notroot.err" | tr '\n' ' ')
	if [ "$rc" -eq 0 ]; then
		fail not_root "exited 0 as nobody; stderr: ${msg:-(empty)}"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail not_root "hung as nobody"
	elif ! grep -q -E 'CAP_BPF|CAP_PERFMON|root' "$WORK/notroot.err"; then
		fail not_root "exited $rc as nobody, but stderr does not name CAP_BPF, CAP_PERFMON or root: ${msg:-(empty)}"
	else
		pass not_root "exited $rc as nobody: $(head -1 "$WORK/notroot.err")"
	fi
}

# label_of RAW FUNC KEY: the value of label KEY that most samples through FUNC carry.
label_of() {
	python3 "$E2E/pprof_raw.py" threads "$1" "$2" | awk -v k="$3" '$1 == k { print $2; exit }'
}

t_threads() {
	local pid out wname mname wtid mtid wpid
	start_workload cpu_threads 60
	pid=$WPID
	sleep 0.3
	hp thr profile --pid "$pid" --duration 3 --frequency "$FREQ" \
		-o "$WORK/thr.pb.gz" -o "$WORK/thr.folded"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail threads "capture of cpu_threads failed: $(hp_failure thr)"
		return
	fi
	outputs_ok threads "$WORK/thr.folded" "$WORK/thr.pb.gz" || return
	if ! pprof -raw "$WORK/thr.pb.gz" >"$WORK/thr.raw" 2>"$WORK/thr.raw.err"; then
		fail threads "go tool pprof -raw rejects thr.pb.gz: $(head -c 300 "$WORK/thr.raw.err" | tr '\n' ' ')"
		return
	fi
	wname=$(label_of "$WORK/thr.raw" worker_burn thread_name)
	mname=$(label_of "$WORK/thr.raw" main_burn thread_name)
	wtid=$(label_of "$WORK/thr.raw" worker_burn tid)
	mtid=$(label_of "$WORK/thr.raw" main_burn tid)
	wpid=$(label_of "$WORK/thr.raw" worker_burn pid)
	out="worker_burn: thread_name=$wname tid=$wtid pid=$wpid; main_burn: thread_name=$mname tid=$mtid (pid $pid)"
	# Numeric labels may carry a unit (`tid:[123 unit]`, printed as 123_unit).
	if [ "$wname" != hp-worker ]; then
		fail threads "samples in worker_burn should have thread_name hp-worker: $out"
	elif [ "$mname" != cpu_threads ]; then
		fail threads "samples in main_burn should have thread_name cpu_threads: $out"
	elif [ "${mtid%%_*}" != "$pid" ] || [ "${wpid%%_*}" != "$pid" ] || [ -z "$wtid" ] ||
		[ "${wtid%%_*}" = "$pid" ]; then
		fail threads "expected pid $pid on both threads, tid $pid on the main thread and another tid on the worker: $out"
	else
		pass threads "$out"
	fi
}

# Maps far too small for the load: every sample that could not be recorded is counted by reason,
# the totals add up exactly (samples = recorded + lost), and what was recorded is still written.
t_map_full() {
	local a b out seen recorded lost dropped total
	start_workload cpu_ratio 60
	a=$WPID
	start_workload syscalls 60
	b=$WPID
	sleep 0.3
	hp mapfull profile --pid "$a,$b" --duration 2 --frequency "$FREQ" \
		--counts-map-entries 2 --stack-map-entries 4 -o "$WORK/mapfull.folded"
	stop_workload "$a"
	stop_workload "$b"
	if [ "$HP_RC" -ne 0 ]; then
		fail map_full "capture with tiny maps failed: $(hp_failure mapfull)"
		return
	fi
	outputs_ok map_full "$WORK/mapfull.folded" || return
	out=$(cat "$WORK/mapfull.out")
	read -r seen recorded lost < <(sed -nE 's/.*: ([0-9]+) samples, ([0-9]+) recorded, ([0-9]+) lost;.*/\1 \2 \3/p' <<<"$out")
	dropped=$(sed -nE 's/^ *sample lost: counts map full +([0-9]+)$/\1/p' <<<"$out")
	total=$(folded total "$WORK/mapfull.folded" | kv samples)
	if [ -z "$seen" ] || [ -z "$dropped" ]; then
		fail map_full "the summary does not report the lost samples by reason: $(head -c 400 <<<"$out" | tr '\n' ' ')"
	elif [ "$seen" -ne $((recorded + lost)) ] || [ "$lost" -ne "$dropped" ] || [ "$lost" -eq 0 ]; then
		fail map_full "samples $seen != recorded $recorded + lost $lost, or lost != counts-map-full $dropped"
	elif [ "${total:-0}" -ne "$recorded" ]; then
		fail map_full "the folded file holds ${total:-0} samples, the summary says $recorded recorded"
	elif ! grep -q -- "--counts-map-entries" <<<"$out"; then
		fail map_full "the summary does not say how to avoid the losses"
	else
		pass map_full "$seen samples = $recorded recorded + $lost lost (counts map full), all $recorded in the output; the summary names the flags to raise"
	fi
}

# The idle task (pid 0, comm swapper/N) is left out of --all unless --include-idle is given.
t_include_idle() {
	local with without
	hp idle1 profile --all --duration 2 --frequency "$FREQ" -o "$WORK/idle_without.folded"
	hp idle2 profile --all --include-idle --duration 2 --frequency "$FREQ" \
		-o "$WORK/idle_with.folded"
	if [ "$HP_RC" -ne 0 ]; then
		fail include_idle "--all --include-idle failed: $(hp_failure idle2)"
		return
	fi
	without=$(grep -c '^swapper/' "$WORK/idle_without.folded")
	with=$(folded comms "$WORK/idle_with.folded" | awk '$1 ~ /^swapper\// { n += $2 } END { print n + 0 }')
	if [ "$without" -ne 0 ]; then
		fail include_idle "without --include-idle, $without stacks of the idle task (swapper/N) were recorded"
	elif [ "$with" -lt 10 ]; then
		fail include_idle "with --include-idle, only $with idle samples in 2 s (the idle task runs whenever a CPU has nothing else to do)"
	else
		pass include_idle "idle task: 0 stacks without --include-idle, $with samples with it"
	fi
}

# Start the local HTTP receiver (tests/receiver/http_receiver.py) recording into $1; sets RX_PORT.
start_receiver() {
	local dir=$1 fifo
	shift
	mkdir -p "$dir"
	fifo=$dir.port
	python3 "$ROOT/tests/receiver/http_receiver.py" --dir "$dir" --lifetime 90 "$@" >"$fifo" &
	PIDS+=($!)
	RX_PORT=
	for _ in $(seq 50); do
		RX_PORT=$(head -1 "$fifo" 2>/dev/null)
		[ -n "$RX_PORT" ] && break
		sleep 0.1
	done
}

OTLP_PROTO_ARGS=(--proto_path="$ROOT/proto"
	opentelemetry/proto/collector/profiles/v1development/profiles_service.proto)
OTLP_REQ=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest

# OTLP/HTTP to a local receiver: one request on the profiles path, gzipped, with the token header
# read from a file (--otlp-header-file; hostprof never prints it, and warns once, by the header's
# name, that it goes over plain http://); the body decodes with protoc against our schema and holds the
# workload's process, functions and exactly the samples of the folded file, in nanoseconds.
t_otlp_http() {
	local pid token=hp-secret-4711 rx=$WORK/rx_http n decoded total sum
	start_receiver "$rx"
	[ -n "$RX_PORT" ] || { fail otlp_http "the test receiver did not start"; return; }
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	(umask 077 && printf '%s\n' "$token" >"$WORK/otlp.token")
	hp otlp profile --pid "$pid" --duration 2 --frequency "$FREQ" -o "$WORK/otlp.folded" \
		--otlp-endpoint "http://127.0.0.1:$RX_PORT/v1development/profiles" \
		--otlp-header-file "x-oneuptime-token=$WORK/otlp.token"
	stop_workload "$pid"
	n=$(ls "$rx"/*.body 2>/dev/null | wc -l)
	if [ "$HP_RC" -ne 0 ]; then
		fail otlp_http "capture with OTLP export failed: $(hp_failure otlp)"
	elif [ "$n" -ne 1 ]; then
		fail otlp_http "the receiver got $n requests, expected 1"
	elif grep -q "$token" "$WORK/otlp.out" "$WORK/otlp.err"; then
		fail otlp_http "hostprof printed the token"
	elif [ "$(grep -c "header 'x-oneuptime-token' looks like a credential and is sent over plain http://" "$WORK/otlp.err")" -ne 1 ]; then
		fail otlp_http "no single warning that the token goes over plain http://: $(head -c 300 "$WORK/otlp.err")"
	elif ! grep -q "^path /v1development/profiles$" "$rx/0000.meta" ||
		! grep -q "^header x-oneuptime-token: $token$" "$rx/0000.meta" ||
		! grep -q "^header content-encoding: gzip$" "$rx/0000.meta" ||
		! grep -q "^header content-type: application/x-protobuf$" "$rx/0000.meta"; then
		fail otlp_http "request path or headers wrong: $(grep -v token "$rx/0000.meta" | tr '\n' ' ')"
	elif ! decoded=$(protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$rx/0000.body" 2>&1); then
		fail otlp_http "protoc cannot decode the request: $(head -c 300 <<<"$decoded")"
	else
		total=$(folded total "$WORK/otlp.folded" --comm cpu_ratio | kv samples)
		sum=$(awk '/^ *values: / { s += $2 } END { printf "%d", s }' <<<"$decoded")
		if ! grep -q 'string_value: "cpu_ratio"' <<<"$decoded" ||
			! grep -q "int_value: $pid\$" <<<"$decoded" ||
			! grep -q '"burn_c"' <<<"$decoded"; then
			fail otlp_http "the request lacks the process (service.name cpu_ratio, pid $pid) or burn_c"
		elif [ "$sum" -ne $((total * (1000000000 / FREQ))) ]; then
			fail otlp_http "sample values add up to $sum ns, the folded file has $total samples x $((1000000000 / FREQ)) ns"
		else
			pass otlp_http "1 gzipped request on /v1development/profiles with the token header from --otlp-header-file (never printed; one cleartext warning); protoc decodes it: cpu_ratio pid $pid, burn_c, $sum ns = $total samples x period"
		fi
	fi
}

# A receiver that never comes up: the capture still writes its files, hostprof says what was not
# delivered and exits non-zero, within the export deadline; -q still says why.
t_otlp_down() {
	local pid port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	hp otlpdown profile --pid "$pid" --duration 1 --frequency "$FREQ" -o "$WORK/down.folded" \
		--otlp-endpoint "http://127.0.0.1:$port/v1development/profiles" --export-deadline 3
	# -q keeps the error that says why.
	hp otlpdown_q profile -q --pid "$pid" --duration 1 --frequency "$FREQ" \
		-o "$WORK/down_q.folded" --otlp-endpoint "http://127.0.0.1:$port/v1development/profiles" \
		--export-deadline 2
	stop_workload "$pid"
	if ! grep -q "not delivered by the shutdown deadline; last error: .*port $port" "$WORK/otlpdown_q.err"; then
		fail otlp_down "with -q, nothing says why the export failed: $(tr '\n' ' ' <"$WORK/otlpdown_q.err")"
	elif [ "$HP_RC" -eq 0 ]; then
		fail otlp_down "exited 0 although nothing was delivered"
	elif [ ! -s "$WORK/down.folded" ]; then
		fail otlp_down "the folded file was not written"
	elif ! grep -q "not delivered" "$WORK/otlpdown.out" "$WORK/otlpdown.err"; then
		fail otlp_down "no report of what was not delivered: $(tail -3 "$WORK/otlpdown.out" | tr '\n' ' ')"
	elif awk -v s="$HP_SECS" 'BEGIN { exit !(s > 10) }'; then
		fail otlp_down "took $HP_SECS s with a 3 s export deadline"
	else
		pass otlp_down "exit $HP_RC after $HP_SECS s (1 s capture, 3 s deadline), files written, $(grep -h "OTLP export" "$WORK/otlpdown.out" | head -1)"
	fi
}

# OTLP/gRPC to a real grpc-js server (tests/grpc/server.js) that loads our .proto files: the first
# call is answered UNAVAILABLE, and hostprof must retry and deliver the profile on the second.
t_otlp_grpc() {
	local pid out=$WORK/rx_grpc port line calls
	mkdir -p "$out"
	[ -d "$ROOT/tests/grpc/node_modules/@grpc/grpc-js" ] ||
		{ fail otlp_grpc "tests/grpc/node_modules is missing: run make test (npm ci)"; return; }
	node "$ROOT/tests/grpc/server.js" --port 0 --out "$out" --answers unavailable,ok \
		--max-calls 2 --timeout 60 >"$out.log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 100); do
		line=$(grep -m1 '^listening ' "$out.log" 2>/dev/null) && break
		sleep 0.1
	done
	port=${line##*:}
	[ -n "$port" ] || { fail otlp_grpc "the gRPC server did not start: $(head -c 300 "$out.log")"; return; }
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	hp otlpgrpc profile --pid "$pid" --duration 2 --frequency "$FREQ" \
		--otlp-endpoint "http://127.0.0.1:$port" --otlp-protocol grpc \
		--otlp-header "x-oneuptime-token=grpc-secret"
	stop_workload "$pid"
	calls=$(ls "$out"/call-*.json 2>/dev/null | wc -l)
	if [ "$HP_RC" -ne 0 ]; then
		fail otlp_grpc "capture with OTLP/gRPC export failed: $(hp_failure otlpgrpc)"
	elif [ "$calls" -ne 2 ]; then
		fail otlp_grpc "the server saw $calls calls, expected 2 (UNAVAILABLE, then a retry)"
	elif ! grep -q '"cpu_ratio"' "$out/call-2.json" || ! grep -q '"burn_c"' "$out/call-2.json" ||
		! grep -q 'grpc-secret' "$out/call-2.json"; then
		fail otlp_grpc "the retried call lacks cpu_ratio, burn_c or the metadata: $(head -c 300 "$out/call-2.json")"
	elif grep -q grpc-secret "$WORK/otlpgrpc.out" "$WORK/otlpgrpc.err"; then
		fail otlp_grpc "hostprof printed the token"
	else
		pass otlp_grpc "grpc-js decoded the request after one UNAVAILABLE and a retry; $(grep -h 'OTLP export' "$WORK/otlpgrpc.out")"
	fi
}

# Pyroscope's Push API: one PushRequest whose series are labelled __name__=process_cpu and the
# service, with the token header; the embedded pprof opens in go tool pprof with burn_c in it.
t_pyroscope_push() {
	local pid rx=$WORK/rx_pyro decoded raw pprof_top
	start_receiver "$rx"
	[ -n "$RX_PORT" ] || { fail pyroscope_push "the test receiver did not start"; return; }
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	hp pyro profile --pid "$pid" --duration 2 --frequency "$FREQ" \
		--pyroscope-url "http://127.0.0.1:$RX_PORT/pyroscope" \
		--pyroscope-header "x-oneuptime-token=pyro-secret"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail pyroscope_push "capture with Pyroscope export failed: $(hp_failure pyro)"
		return
	fi
	if ! grep -q "^path /pyroscope/push.v1.PusherService/Push$" "$rx/0000.meta" ||
		! grep -q "^header x-oneuptime-token: pyro-secret$" "$rx/0000.meta"; then
		fail pyroscope_push "request path or token wrong: $(grep -v secret "$rx/0000.meta" | head -c 300 | tr '\n' ' ')"
		return
	fi
	decoded=$(protoc --decode=push.v1.PushRequest --proto_path="$ROOT/proto" push/v1/push.proto \
		<"$rx/0000.body" 2>&1)
	raw=$(python3 - "$rx/0000.body" "$WORK/pyro.pb.gz" <<'PY'
import sys
# Walk PushRequest.series[0].samples[0].raw_profile (fields 1, 2, 1) by hand.
def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 2:
            n, i = varint(b, i)
            yield num, b[i:i + n]
            i += n
        elif wt == 0:
            _, i = varint(b, i)
        else:
            raise SystemExit("unexpected wire type %d" % wt)
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
req = open(sys.argv[1], "rb").read()
series = next(v for n, v in fields(req) if n == 1)
sample = next(v for n, v in fields(series) if n == 2)
prof = next(v for n, v in fields(sample) if n == 1)
open(sys.argv[2], "wb").write(prof)
print(len(prof))
PY
	)
	if ! grep -q 'value: "process_cpu"' <<<"$decoded" || ! grep -q 'value: "cpu_ratio"' <<<"$decoded"; then
		fail pyroscope_push "the series lacks __name__=process_cpu or service_name=cpu_ratio: $(head -c 300 <<<"$decoded")"
	elif ! pprof_top=$(go tool pprof -top -symbolize=none "$WORK/pyro.pb.gz" 2>&1) ||
		! grep -q burn_c <<<"$pprof_top"; then
		fail pyroscope_push "the embedded pprof ($raw bytes) does not open or lacks burn_c: $(head -c 300 <<<"$pprof_top")"
	else
		pass pyroscope_push "PushRequest on /pyroscope/push.v1.PusherService/Push with the token; labels process_cpu/cpu_ratio; its pprof ($raw bytes) opens in go tool pprof with burn_c"
	fi
}

# Wall time (--types cpu,wall): a thread computing ~30% and sleeping ~70% of a 100 ms cycle.
# wall shows compute and the nanosleep path in that ratio (+-5 points), the thread's wall total
# equals the capture window (+-5%), and cpu holds only the compute part.
t_wall() {
	local pid shares window compute sleep_share ratio cpu_compute
	start_workload sleeper 60
	pid=$WPID
	sleep 0.3
	hp wall profile --pid "$pid" --duration 4 --frequency "$FREQ" --types cpu,wall \
		-o "$WORK/wall.folded"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail wall "capture of --types cpu,wall failed: $(hp_failure wall)"
		return
	fi
	if [ ! -s "$WORK/wall.wall.folded" ] || [ ! -s "$WORK/wall.cpu.folded" ]; then
		fail wall "expected wall.cpu.folded and wall.wall.folded, got: $(ls "$WORK" | grep '^wall' | tr '\n' ' ')"
		return
	fi
	window=$(sed -nE 's/^Captured ([0-9.]+) s .*/\1/p' "$WORK/wall.out")
	shares=$(awk -v w="$window" '
		FILENAME ~ /wall.wall/ { t += $NF; if ($0 ~ /;compute/) c += $NF; if ($0 ~ /nanosleep/) s += $NF }
		FILENAME ~ /wall.cpu/ { ct += $NF; if ($0 ~ /;compute/) cc += $NF }
		END { printf "%.1f %.1f %.3f %.1f", 100 * c / t, 100 * s / t, t / 1e9 / w, 100 * cc / ct }' \
		"$WORK/wall.wall.folded" "$WORK/wall.cpu.folded")
	read -r compute sleep_share ratio cpu_compute <<<"$shares"
	if awk -v c="$compute" -v s="$sleep_share" 'BEGIN { exit !(c < 25 || c > 35 || s < 65 || s > 75) }'; then
		fail wall "wall shares compute $compute% and sleep $sleep_share%, expected 30 and 70 +-5"
	elif awk -v r="$ratio" 'BEGIN { exit !(r < 0.95 || r > 1.05) }'; then
		fail wall "the thread's wall total is $ratio of the $window s window, expected 1 +-5%"
	elif awk -v c="$cpu_compute" 'BEGIN { exit !(c < 95) }'; then
		fail wall "cpu has only $cpu_compute% of its samples in compute, expected nearly all"
	else
		pass wall "wall: compute $compute%, nanosleep path $sleep_share% (30/70 +-5); wall total = $ratio x the $window s window; cpu: $cpu_compute% in compute"
	fi
}

# Sum the second sample value of a pprof per lock_kind label: "kind total_ns" lines.
# pprof_label_sums FILE LABEL: "value total" per value of a string label, over the first sample
# value (go tool pprof -raw decodes the file).
pprof_label_sums() {
	HOME=${HOME:-/tmp} go tool pprof -raw "$1" 2>/dev/null | awk -v label="$2" '
		/^Samples:/ { on = 1; next }
		/^Locations/ { on = 0 }
		on && /^ *[0-9]+ +[0-9]+:/ { v = $2; sub(":", "", v); pending = v; next }
		on && pending != "" && match($0, label ":\\[[^]]*\\]") {
			k = substr($0, RSTART + length(label) + 2, RLENGTH - length(label) - 3)
			sum[k] += pending; pending = "" }
		END { for (k in sum) printf "%s %.0f\n", k, sum[k] }'
}

pprof_lock_kinds() {
	pprof_label_sums "$1" lock_kind
}

# Off-CPU time in a mutex wait is thread_state "lock", and agrees with the time the workload
# measured in pthread_mutex_lock; a condition variable's waits stay "sleeping".
t_offcpu_lock_state() {
	local states lock theirs cond_states cond_lock cond_sleep
	hp lockstate profile --types offcpu -o "$WORK/lockstate.pb.gz" \
		-- "$WL/mutex" 2 "$WORK/lockstate.measured"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$WORK/lockstate.measured" ]; then
		fail offcpu_lock_state "capture of the mutex workload failed: $(hp_failure lockstate)"
		return
	fi
	states=$(pprof_label_sums "$WORK/lockstate.pb.gz" thread_state)
	lock=$(awk '$1 == "lock" { print $2 }' <<<"$states")
	theirs=$(cat "$WORK/lockstate.measured")
	hp condstate profile --types offcpu -o "$WORK/condstate.pb.gz" \
		-- "$WL/mutex" 2 "$WORK/condstate.measured" condvar
	cond_states=$(pprof_label_sums "$WORK/condstate.pb.gz" thread_state)
	cond_lock=$(awk '$1 == "lock" { print $2 }' <<<"$cond_states")
	cond_sleep=$(awk '$1 == "sleeping" { print $2 }' <<<"$cond_states")
	if [ -z "$lock" ]; then
		fail offcpu_lock_state "no off-CPU time in state lock; states: $(tr '\n' ' ' <<<"$states")"
	elif awk -v a="$lock" -v b="$theirs" 'BEGIN { r = a / b; exit !(r < 0.7 || r > 1.2) }'; then
		fail offcpu_lock_state "lock state total $lock ns, the workload measured $theirs ns in pthread_mutex_lock (need 70%..120%)"
	elif awk -v l="${cond_lock:-0}" -v s="${cond_sleep:-0}" 'BEGIN { exit !(s == 0 || l > s / 10) }'; then
		fail offcpu_lock_state "condvar waits are tagged lock: $(tr '\n' ' ' <<<"$cond_states")"
	else
		pass offcpu_lock_state "off-CPU in a mutex wait: lock $lock ns vs $theirs ns measured; condvar: sleeping ${cond_sleep:-0} ns, lock ${cond_lock:-0} ns"
	fi
}

# Contention on one pthread mutex (4 threads, 2 ms holds): the futex_wait time hostprof records
# agrees within 20% with what the workload measured around pthread_mutex_lock itself.
# contention_mutex_case NAME HOSTPROF: the mutex workload's futex waits, captured by HOSTPROF, within
# 20% of what it measured itself; OTLP has the contention profiles. CONTENTION_RESULT says what was
# found; false after a fail.
# TYPES (default contention) and the TOLERANCE allowed (default 0.2) may follow.
contention_mutex_case() {
	local name=$1 types=${3:-contention} tolerance=${4:-0.2} kinds mine theirs pb
	HOSTPROF=$2 hp "$name" profile --types "$types" --frequency "$FREQ" \
		-o "$WORK/$name.pb.gz" -o "$WORK/$name.otlp.pb" -- "$WL/mutex" 3 "$WORK/$name.measured"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$WORK/$name.measured" ]; then
		fail "$name" "capture of the mutex workload failed: $(hp_failure "$name")"
		return 1
	fi
	# With more than one type, each pprof file is named after its type, and the OTLP request's
	# one string table has "nanoseconds" once, before "contention".
	pb="$WORK/$name.pb.gz"
	[ "$types" = contention ] || pb="$WORK/$name.contention.pb.gz"
	kinds=$(pprof_lock_kinds "$pb")
	mine=$(awk '$1 == "futex_wait" { print $2 }' <<<"$kinds")
	theirs=$(cat "$WORK/$name.measured")
	if [ -z "$mine" ]; then
		fail "$name" "no futex_wait contention recorded; lock kinds: $(tr '\n' ' ' <<<"$kinds")"
	elif awk -v a="$mine" -v b="$theirs" -v t="$tolerance" 'BEGIN { r = a / b; exit !(r < 1 - t || r > 1 + t) }'; then
		fail "$name" "futex_wait total $mine ns, the workload measured $theirs ns (more than $tolerance apart)"
	elif ! protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$WORK/$name.otlp.pb" 2>/dev/null |
		tr '\n' ' ' | grep -Eq 'string_table: "contention" *(string_table: "nanoseconds" *)?string_table: "contentions" *string_table: "count"'; then
		fail "$name" "the OTLP request lacks the contention/nanoseconds and contentions/count profiles"
	else
		CONTENTION_RESULT="futex_wait total $mine ns vs $theirs ns measured by the workload; OTLP has contention/nanoseconds and contentions/count; lock kinds: $(tr '\n' ' ' <<<"$kinds")"
		return 0
	fi
	return 1
}

# Through the futex calls' own tracepoints (tracefs is mounted here).
t_contention_mutex() {
	contention_mutex_case contention_mutex "$HOSTPROF" &&
		pass contention_mutex "$CONTENTION_RESULT"
}

# The same without tracefs: in a mount namespace whose tracefs and debugfs are empty tmpfs, futex
# waits are followed through raw_syscalls sys_enter and sys_exit, and hostprof says why.
t_contention_raw_syscalls() {
	local wrap="$WORK/no_tracefs.sh"

	printf '#!/bin/sh\nexec unshare -m sh -c %s "%s" "$@"\n' \
		"'mount -t tmpfs none /sys/kernel/tracing && mount -t tmpfs none /sys/kernel/debug && exec \"\$0\" \"\$@\"'" \
		"$HOSTPROF" >"$wrap"
	chmod +x "$wrap"
	contention_mutex_case contention_raw_syscalls "$wrap" || return
	if ! grep -q 'no syscalls:sys_enter_futex tracepoint' "$WORK/contention_raw_syscalls.err"; then
		fail contention_raw_syscalls "hostprof did not say it followed futex waits without tracefs; stderr: $(head -c 300 "$WORK/contention_raw_syscalls.err")"
	else
		pass contention_raw_syscalls "without tracefs: $CONTENTION_RESULT"
	fi
}

# With wall on, the sched_switch program times the futex waits (the futex calls run no program):
# the same contention profile, futex_wait within 10% of what the workload measured (the issue's
# bar), the summary saying so; a condition variable's waits still futex_wait_bitset.
t_contention_at_switches() {
	local kinds cond mutex
	contention_mutex_case contention_at_switches "$HOSTPROF" wall,contention 0.1 || return
	if ! grep -q 'timed by the off-CPU program at the scheduler' "$WORK/contention_at_switches.out"; then
		fail contention_at_switches "the summary does not say the futex waits were timed at the switches: $(grep -A2 '^Contention' "$WORK/contention_at_switches.out")"
		return
	fi
	hp condsw profile --types wall,contention --frequency "$FREQ" -o "$WORK/condsw.pb.gz" \
		-- "$WL/mutex" 2 "$WORK/condsw.measured" condvar
	kinds=$(pprof_lock_kinds "$WORK/condsw.contention.pb.gz")
	cond=$(awk '$1 == "futex_wait_bitset" { print $2 }' <<<"$kinds")
	mutex=$(awk '$1 == "futex_wait" { print $2 }' <<<"$kinds")
	if [ "$HP_RC" -ne 0 ] || [ -z "$cond" ] || awk -v c="$cond" 'BEGIN { exit !(c < 1e9) }'; then
		fail contention_at_switches "condvar: expected about 2 s of futex_wait_bitset waits; lock kinds: $(tr '\n' ' ' <<<"$kinds") $(hp_failure condsw)"
	elif awk -v c="$cond" -v m="${mutex:-0}" 'BEGIN { exit !(m > c / 10) }'; then
		fail contention_at_switches "condvar waits show up as futex_wait (mutex) too: $(tr '\n' ' ' <<<"$kinds")"
	else
		pass contention_at_switches "at the switches: $CONTENTION_RESULT; condvar: futex_wait_bitset $cond ns, futex_wait ${mutex:-0} ns"
	fi
}

# Waits on a condition variable are tagged futex_wait_bitset, apart from mutex waits
# (futex_wait): a reader can tell them apart (the heuristic is in the README).
t_contention_condvar() {
	local kinds cond mutex
	hp condc profile --types contention --frequency "$FREQ" -o "$WORK/cond.pb.gz" \
		-- "$WL/mutex" 2 "$WORK/cond.measured" condvar
	if [ "$HP_RC" -ne 0 ]; then
		fail contention_condvar "capture of the condvar workload failed: $(hp_failure condc)"
		return
	fi
	kinds=$(pprof_lock_kinds "$WORK/cond.pb.gz")
	cond=$(awk '$1 == "futex_wait_bitset" { print $2 }' <<<"$kinds")
	mutex=$(awk '$1 == "futex_wait" { print $2 }' <<<"$kinds")
	if [ -z "$cond" ] || awk -v c="$cond" 'BEGIN { exit !(c < 1e9) }'; then
		fail contention_condvar "expected about 2 s of futex_wait_bitset waits; lock kinds: $(tr '\n' ' ' <<<"$kinds")"
	elif awk -v c="$cond" -v m="${mutex:-0}" 'BEGIN { exit !(m > c / 10) }'; then
		fail contention_condvar "condvar waits show up as futex_wait (mutex) too: $(tr '\n' ' ' <<<"$kinds")"
	else
		pass contention_condvar "condvar waits tagged futex_wait_bitset ($cond ns), mutex-style futex_wait ${mutex:-0} ns"
	fi
}

# Kernel lock contention: 8 threads mapping and unmapping memory queue on the process's
# mmap_lock, an rwsem: the contention profile shows rwsem waits with kernel stacks through munmap
# or mmap.
t_contention_kernel() {
	local kinds rwsem
	hp mmapc profile --types contention --frequency "$FREQ" -o "$WORK/mmap.pb.gz" \
		-o "$WORK/mmap.folded" -- "$WL/mmap_churn" 2
	if [ "$HP_RC" -ne 0 ]; then
		fail contention_kernel "capture of the mmap workload failed: $(hp_failure mmapc)"
		return
	fi
	kinds=$(pprof_lock_kinds "$WORK/mmap.pb.gz")
	rwsem=$(awk '$1 ~ /^rwsem_/ { s += $2 } END { printf "%.0f", s }' <<<"$kinds")
	if [ "${rwsem:-0}" -lt 1000000 ]; then
		fail contention_kernel "less than 1 ms of rwsem waits; lock kinds: $(tr '\n' ' ' <<<"$kinds")"
	elif ! grep -Eq '(munmap|mmap|do_user_addr_fault|exc_page_fault)[^;]*_\[k\]' "$WORK/mmap.folded"; then
		fail contention_kernel "no kernel stack through mmap, munmap or a page fault"
	else
		pass contention_kernel "rwsem waits $rwsem ns with kernel stacks through the mm; lock kinds: $(tr '\n' ' ' <<<"$kinds")"
	fi
}

# A capture written straight to a flame graph page, and the same page rendered from the pprof:
# self-contained (nothing fetched from the network) and naming the workload's functions.
t_html() {
	local pid
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	hp html profile --pid "$pid" --duration 2 --frequency "$FREQ" -o "$WORK/cpu.html" \
		-o "$WORK/cpu.pb.gz"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$WORK/cpu.html" ]; then
		fail html "capture to .html failed: $(hp_failure html)"
		return
	fi
	hp render render "$WORK/cpu.pb.gz" -o "$WORK/rendered.html" -o "$WORK/rendered.folded"
	if [ "$HP_RC" -ne 0 ]; then
		fail html "hostprof render of our own pprof failed: $(hp_failure render)"
	elif grep -Eq '(src|href)=["'"'"']?(https?:)?//' "$WORK/cpu.html" "$WORK/rendered.html"; then
		fail html "the page loads something from the network"
	elif ! grep -q burn_c "$WORK/cpu.html" || ! grep -q burn_c "$WORK/rendered.html" ||
		! grep -q burn_c "$WORK/rendered.folded"; then
		fail html "burn_c is missing from the page or the rendered outputs"
	else
		pass html "profile -o cpu.html and render cpu.pb.gz -o .html/.folded: self-contained pages naming burn_c ($(stat -c %s "$WORK/cpu.html") bytes)"
	fi
}

# browser_expected CPU.folded WALL.folded PERIOD: the JSON of expected numbers for
# tests/browser/flame.js. Shares are of the stacks holding each function, of the type's total; the
# cpu folded file counts samples where the page shows nanoseconds (samples x PERIOD).
browser_expected() {
	awk -v period="$3" '
	{
		t = FILENAME ~ /\.wall\.folded$/ ? "wall" : "cpu"; v = $NF; tot[t] += v
		split($1, fr, ";"); kid[t] += fr[1] == "cpu_ratio" ? v : 0
		for (f in want) if ((";" $1 ";") ~ (";" f ";")) sh[t, f] += v
	}
	BEGIN { want["burn_a"]; want["burn_b"]; want["burn_c"] }
	END {
		printf "{\"types\":["
		for (i = 1; i <= 2; i++) {
			t = (i == 1) ? "cpu" : "wall"; T = (t == "cpu") ? tot[t] * period : tot[t]
			printf "%s{\"type\":\"%s\",\"total\":%.0f,\"children\":{\"cpu_ratio\":%.6f},", ((i > 1) ? "," : ""), t, T, kid[t] / tot[t]
			printf "\"shares\":{\"burn_a\":%.6f,\"burn_b\":%.6f,\"burn_c\":%.6f}}", sh[t, "burn_a"] / tot[t], sh[t, "burn_b"] / tot[t], sh[t, "burn_c"] / tot[t]
		}
		printf "],\"zoom\":\"burn_c\",\"search\":{\"regex\":\"^burn_[ab]$\",\"share\":%.6f}}\n", (sh["cpu", "burn_a"] + sh["cpu", "burn_b"]) / tot["cpu"]
	}' "$1" "$2"
}

# The page in a real browser: a cpu,wall capture of cpu_ratio written as HTML and folded;
# tests/browser/flame.js (playwright-core driving Debian's headless chromium) checks the drawn
# widths against the folded shares, zooms by a click, searches, switches types and keeps
# screenshots in $OUTPUT/browser.
t_html_browser() {
	local pid exp out rc t0 t1 shots=$OUTPUT/browser
	if [ ! -x /usr/bin/chromium ]; then
		fail html_browser "/usr/bin/chromium is missing: apt-get install chromium (make deps-test installs it)"
		return
	elif ! command -v node >/dev/null; then
		fail html_browser "node is missing: install nodejs and npm (make deps-test)"
		return
	elif [ ! -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
		fail html_browser "tests/browser/node_modules lacks playwright-core: run make browser-deps (npm ci)"
		return
	fi
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	# Every wait kept (--wait-sample-us 0): the busy workload's few short waits, sampled, may
	# all be left out, and the page's type switch must change the total it shows.
	hp hbrowser profile --pid "$pid" --duration 3 --frequency "$FREQ" --types cpu,wall \
		--wait-sample-us 0 -o "$WORK/page.html" -o "$WORK/page.folded"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$WORK/page.html" ] || [ ! -s "$WORK/page.cpu.folded" ] ||
		[ ! -s "$WORK/page.wall.folded" ]; then
		fail html_browser "capture to page.html + page.{cpu,wall}.folded failed: $(hp_failure hbrowser)"
		return
	fi
	exp=$(browser_expected "$WORK/page.cpu.folded" "$WORK/page.wall.folded" $((1000000000 / FREQ)))
	echo "$exp" >"$WORK/page.expected.json"
	t0=$(date +%s%N)
	out=$(timeout -k 5 120 node "$ROOT/tests/browser/flame.js" "$WORK/page.html" "$exp" "$shots" 2>&1)
	rc=$?
	t1=$(date +%s%N)
	if [ "$rc" -ne 0 ]; then
		fail html_browser "flame.js exited $rc after $(((t1 - t0) / 1000000)) ms; expected $exp: $(grep -v '^flame: [^F]' <<<"$out" | head -c 1500 | tr '\n' ' ')"
	else
		pass html_browser "chromium: widths, click zoom + reset, search, cpu/wall switch checked in $(((t1 - t0) / 1000000)) ms; $(grep -E '^flame: (cpu|wall|search)' <<<"$out" | sed 's/^flame: //' | tr '\n' ';')screenshots in $shots"
	fi
}

# The live status line on a terminal: tmux runs a 4 s capture; capture-pane shows the progress
# line while it runs, then the final table with the line erased. With stderr not a terminal,
# there is no escape code at all.
t_terminal() {
	local pid sock=$WORK/tmux.sock sess=hp$$ live="" pane="" i esc
	if ! command -v tmux >/dev/null; then
		fail terminal "tmux is missing: apt-get install tmux (make deps-test installs it)"
		return
	fi
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	# A private tmux server (-S): never one of the machine's own sessions.
	tmux -S "$sock" new-session -d -s "$sess" -x 120 -y 40 \
		"cd '$WORK' && '$HOSTPROF' profile --pid $pid --duration 4 --top 5 -o '$WORK/term.folded'; sleep 30"
	# The line counts samples once the programs are loaded, which takes seconds on a loaded
	# 2-core machine: look for it until the capture's table shows (one fixed look at 2 s was
	# flaky).
	for i in $(seq 1 100); do
		live=$(tmux -S "$sock" capture-pane -p -t "$sess" 2>&1)
		grep -Eq '/ 4\.0s.*%.* [1-9][0-9]* samples' <<<"$live" && break
		grep -q 'Top 5 functions by self' <<<"$live" && break
		sleep 0.2
	done
	for i in $(seq 1 30); do
		pane=$(tmux -S "$sock" capture-pane -p -t "$sess" 2>&1)
		grep -q 'Top 5 functions by self' <<<"$pane" && break
		sleep 0.5
	done
	tmux -S "$sock" kill-server 2>/dev/null
	hp term_pipe profile --pid "$pid" --duration 1 -o "$WORK/term_pipe.folded"
	stop_workload "$pid"
	esc=$(tr -cd '\033' <"$WORK/term_pipe.err" | wc -c)
	if ! grep -Eq '/ 4\.0s.*%.* [1-9][0-9]* samples' <<<"$live"; then
		fail terminal "no progress line counting samples (\"N.Ns / 4.0s ... % ... N samples\") in the pane while the capture ran: $(grep -v '^$' <<<"$live" | head -c 400 | tr '\n' '|')"
	elif ! grep -q 'Top 5 functions by self' <<<"$pane"; then
		fail terminal "no final table (\"Top 5 functions by self\") within 15 s: $(grep -v '^$' <<<"$pane" | head -c 400 | tr '\n' '|')"
	elif ! grep -q 'burn_c' <<<"$pane"; then
		fail terminal "the final table lacks burn_c: $(grep -v '^$' <<<"$pane" | head -c 400 | tr '\n' '|')"
	elif grep -q '/ 4\.0s.*%' <<<"$pane"; then
		fail terminal "the progress line is still on the screen after the capture: $(grep '/ 4\.0s' <<<"$pane" | head -1)"
	elif [ "$HP_RC" -ne 0 ]; then
		fail terminal "the 1 s capture with stderr to a file failed: $(hp_failure term_pipe)"
	elif [ "$esc" -ne 0 ]; then
		fail terminal "$esc escape character(s) in stderr written to a file: $(head -c 200 "$WORK/term_pipe.err" | cat -v | tr '\n' '|')"
	else
		pass terminal "tmux pane showed \"$(grep -m1 '/ 4\.0s' <<<"$live" | sed 's/ *$//')\" while capturing, then the top-5 table with burn_c and the line erased; stderr to a file has no escape codes"
	fi
}

# render reads an input of an unknown name by its content: Go's cpu.out (gzip'd pprof) and a
# folded file named .txt; bytes of neither kind are a usage error (exit 2, as an unknown output
# format), a corrupt pprof a failure (exit 1).
t_render_formats() {
	need_ratio render_formats || return
	cp "$WORK/ratio.pb.gz" "$WORK/cpu.out"
	cp "$WORK/ratio.folded" "$WORK/stacks.txt"
	head -c 4096 /dev/urandom | tr -d '\037' >"$WORK/junk.bin"
	printf '\037\213not really gzip' >"$WORK/bad.out"
	hp render_out render "$WORK/cpu.out" -o "$WORK/cpu_out.folded"
	local rc_out=$HP_RC
	hp render_txt render "$WORK/stacks.txt" -o "$WORK/stacks_txt.folded"
	local rc_txt=$HP_RC
	hp render_junk render "$WORK/junk.bin" -o "$WORK/junk.folded"
	local rc_junk=$HP_RC
	hp render_bad render "$WORK/bad.out" -o "$WORK/bad.folded"
	local rc_bad=$HP_RC
	hp render_badout render "$WORK/cpu.out" -o "$WORK/x.unknownext"
	if [ "$rc_out" -ne 0 ] || ! grep -q ';burn_c ' "$WORK/cpu_out.folded"; then
		fail render_formats "render cpu.out: exit $rc_out: $(hp_failure render_out)"
	elif [ "$rc_txt" -ne 0 ] || ! grep -q ';burn_c ' "$WORK/stacks_txt.folded"; then
		fail render_formats "render stacks.txt (folded): exit $rc_txt: $(hp_failure render_txt)"
	elif [ "$rc_junk" -ne 2 ] || ! grep -q "unknown input format (its content is neither" "$WORK/render_junk.err"; then
		fail render_formats "render junk.bin: exit $rc_junk (want 2): $(tail -1 "$WORK/render_junk.err")"
	elif [ "$rc_bad" -ne 1 ]; then
		fail render_formats "render of a corrupt gzip: exit $rc_bad (want 1): $(tail -1 "$WORK/render_bad.err")"
	elif [ "$HP_RC" -ne 2 ]; then
		fail render_formats "render -o x.unknownext: exit $HP_RC (want 2, as an unknown input)"
	else
		pass render_formats "cpu.out (gzip'd pprof) and stacks.txt (folded) rendered by content; unknown bytes exit 2, an unknown output 2, a corrupt pprof 1"
	fi
}

# The page never fails: hostprof render of small folded files (empty, one frame, a stack 300
# frames deep, names holding <script> and an <img onerror>, Unicode names), each loaded in
# chromium by tests/browser/robust.js: no page error, no dialog, no network request, and the test
# hook's root total is the input's.
t_html_pages() {
	local d=$WORK/pages f out rc bad=""
	if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null ||
		[ ! -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
		fail html_pages "chromium, node or tests/browser/node_modules/playwright-core is missing (make deps-test browser-deps)"
		return
	fi
	mkdir -p "$d"
	: >"$d/empty.folded"
	printf 'p;main 5\n' >"$d/one.folded"
	awk 'BEGIN { s = "p"; for (i = 0; i < 300; i++) s = s ";f" i; print s " 4" }' >"$d/deep.folded"
	printf '%s\n' 'p;main;<script>alert(1)</script> 3' \
		'p;main;</script><img src=x onerror=alert(2)> 2' >"$d/xss.folded"
	printf '%s\n' '日本語;函数;😀 7' 'p;Ünïcödé;汉字 1' >"$d/unicode.folded"
	for f in empty one deep xss unicode; do
		hp "pages_$f" render "$d/$f.folded" -o "$d/$f.html"
		if [ "$HP_RC" -ne 0 ] || [ ! -s "$d/$f.html" ]; then
			bad+=" $f: $(hp_failure "pages_$f");"
		fi
	done
	if [ -n "$bad" ]; then
		fail html_pages "hostprof render failed:$bad"
		return
	fi
	cat >"$d/expected.json" <<EOF
{"pages": [
 {"page": "$d/empty.html", "total": 0},
 {"page": "$d/one.html", "total": 5, "names": ["main"]},
 {"page": "$d/deep.html", "total": 4, "depth": 300, "names": ["f0", "f299"], "hash": "#d=all"},
 {"page": "$d/xss.html", "total": 5, "names": ["<script>alert(1)</script>", "</script><img src=x onerror=alert(2)>"]},
 {"page": "$d/unicode.html", "total": 8, "names": ["函数", "😀", "Ünïcödé", "汉字"]}
]}
EOF
	out=$(timeout -k 5 120 node "$ROOT/tests/browser/robust.js" "$d/expected.json" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail html_pages "robust.js exited $rc: $(grep -v '^robust: PASS' <<<"$out" | head -c 1500 | tr '\n' ' ')"
	else
		pass html_pages "chromium loads empty, one-frame, 300-deep, <script>-named and Unicode pages: no error, dialog or request; totals match ($(sed -n 's/^robust: PASS //p' <<<"$out" | tr '\n' ';'))"
	fi
}

# The page's views (issue 19) in chromium, by tests/browser/views.js: a cpu,wall capture of two
# cpu_ratio processes and a sleeper (grouping by executable merges the two pids; function list
# with file:line and binary; sandwich and callers of burn_c; state and thread filters against
# the embedded samples; the URL hash restores a view), a 300-deep spike that must fit the window,
# a differential page of hand-made folded files with known shares, and a 100k-stack page whose
# load time is printed. Screenshots views-*.png in $OUTPUT/browser.
t_html_views() {
	local a b c a2 d=$WORK/views out rc shots=$OUTPUT/browser
	if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null ||
		[ ! -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
		fail html_views "chromium, node or tests/browser/node_modules/playwright-core is missing (make deps-test browser-deps)"
		return
	fi
	mkdir -p "$d"
	start_workload cpu_ratio 60
	a=$WPID
	start_workload cpu_ratio 60
	b=$WPID
	start_workload sleeper 60
	c=$WPID
	sleep 0.3
	hp hviews profile --pid "$a,$b,$c" --duration 3 --frequency "$FREQ" --types cpu,wall \
		-o "$d/capture.html"
	stop_workload "$a"
	stop_workload "$b"
	stop_workload "$c"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$d/capture.html" ]; then
		fail html_views "capture of two cpu_ratio and a sleeper failed: $(hp_failure hviews)"
		return
	fi
	# A service whose samples serve OpenTelemetry spans, for the span filter.
	start_workload otel_ctx_lib 60
	a2=$WPID
	sleep 0.5
	hp hviews_spans profile --pid "$a2" --duration 2 --frequency "$FREQ" -o "$d/spans.html"
	stop_workload "$a2"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$d/spans.html" ]; then
		fail html_views "capture of otel_ctx_lib failed: $(hp_failure hviews_spans)"
		return
	fi
	awk 'BEGIN { s = "p;main"; for (i = 0; i < 300; i++) s = s ";f" i; print s " 1"; print "p;main;wide 99" }' \
		>"$d/deep.folded"
	printf '%s\n' 'app;main;grow 20' 'app;main;shrink 40' 'app;main;same 20' 'app;main;gone 20' \
		>"$d/old.folded"
	printf '%s\n' 'app;main;grow 60' 'app;main;shrink 20' 'app;main;same 20' 'app;main;fresh 100' \
		>"$d/new.folded"
	# 100k distinct stacks of 50 programs sharing callers, as bench/bench_html.sh makes them.
	awk 'BEGIN { for (i = 0; i < 100000; i++) { p = i % 50; k = int(i / 50); s = "svc-" p ";_start;main"
		v = k; for (j = 0; j < 7; j++) { s = s ";mod" j "::handler_" (v % 4 * 31 + j * 7 + p % 5) % 40; v = int(v / 4) }
		for (j = 0; j < k % 30; j++) s = s ";helper_" (k + j * 13) % 97
		print s ";leaf_" k, int(20000 / (1 + p) / (1 + i * 7 % 97)) + 1 } }' >"$d/big.folded"
	hp hviews_deep render "$d/deep.folded" -o "$d/deep.html" &&
		hp hviews_diff render --base "$d/old.folded" "$d/new.folded" -o "$d/diff.html" &&
		hp hviews_big render "$d/big.folded" -o "$d/big.html"
	if [ "$HP_RC" -ne 0 ] || [ ! -s "$d/deep.html" ] || [ ! -s "$d/diff.html" ] || [ ! -s "$d/big.html" ]; then
		fail html_views "hostprof render of the hand-made pages failed (exit $HP_RC)"
		return
	fi
	cat >"$d/spec.json" <<EOS
{"capture": "$d/capture.html", "exe": "cpu_ratio", "pids": [$a, $b], "fn": "burn_c", "caller": "main",
 "spans": "$d/spans.html", "span": "a1a1a1a1a1a1a1a1", "in_span": "in_span_a", "other_span": "in_span_b",
 "deep": "$d/deep.html", "diff": "$d/diff.html", "gone": "gone",
 "deltas": {"grow": 0.1, "shrink": -0.3, "same": -0.1, "fresh": 0.5},
 "big": "$d/big.html"}
EOS
	out=$(timeout -k 5 300 node "$ROOT/tests/browser/views.js" "$d/spec.json" "$shots" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail html_views "views.js exited $rc: $(grep -v '^views: [^F]' <<<"$out" | head -c 2000 | tr '\n' ' ')"
	else
		pass html_views "$(sed 's/^views: //' <<<"$out" | tr '\n' ';') screenshots views-*.png in $shots"
	fi
}

# render --base OLD NEW: the table of the biggest changes, with shares known from hand-made
# folded files (base total 100, new 200); --top 3 keeps the three biggest; a base of another
# type and a non-HTML output are usage errors (exit 2).
t_render_diff() {
	local d=$WORK/rdiff got want
	mkdir -p "$d"
	printf '%s\n' 'app;main;grow 20' 'app;main;shrink 40' 'app;main;same 20' 'app;main;gone 20' \
		>"$d/old.folded"
	printf '%s\n' 'app;main;grow 60' 'app;main;shrink 20' 'app;main;same 20' 'app;main;fresh 100' \
		>"$d/new.folded"
	hp rdiff render --base "$d/old.folded" "$d/new.folded"
	if [ "$HP_RC" -ne 0 ]; then
		fail render_diff "render --base failed: $(hp_failure rdiff)"
		return
	fi
	# Biggest change first (ties by name): fresh +50, shrink -30, gone -20, grow +10, same -10,
	# main 0; columns self base/new/change, total base/new/change.
	got=$(awk 'NR > 2 { printf "%s %s %s %s %s %s %s\n", $1, $2, $3, $4, $5, $6, $7 }' "$WORK/rdiff.out")
	want='fresh 0.00% 50.00% +50.00 0.00% 50.00% +50.00
shrink 40.00% 10.00% -30.00 40.00% 10.00% -30.00
gone 20.00% 0.00% -20.00 20.00% 0.00% -20.00
grow 20.00% 30.00% +10.00 20.00% 30.00% +10.00
same 20.00% 10.00% -10.00 20.00% 10.00% -10.00
main 0.00% 0.00% +0.00 100.00% 100.00% +0.00'
	if [ "$got" != "$want" ]; then
		fail render_diff "table: $(tr '\n' '|' <"$WORK/rdiff.out"); expected rows $(tr '\n' '|' <<<"$want")"
		return
	elif ! head -n 1 "$WORK/rdiff.out" | grep -q 'base total 100, new total 200'; then
		fail render_diff "the table's header does not give the totals: $(head -n 1 "$WORK/rdiff.out")"
		return
	fi
	hp rdiff_top render --base "$d/old.folded" "$d/new.folded" --top 3 -o "$d/diff.html"
	got=$(awk 'NR > 2 && NF == 7 { print $1 }' "$WORK/rdiff_top.out" | tr '\n' ' ')
	if [ "$HP_RC" -ne 0 ] || [ "$got" != "fresh shrink gone " ] || [ ! -s "$d/diff.html" ] ||
		! grep -q "Wrote $d/diff.html" "$WORK/rdiff_top.out"; then
		fail render_diff "--top 3 -o diff.html: exit $HP_RC, rows '$got', expected 'fresh shrink gone'"
		return
	fi
	hp rdiff_fmt render --base "$d/old.folded" "$d/new.folded" -o "$d/diff.pb.gz"
	local fmt_rc=$HP_RC fmt_err
	fmt_err=$(head -c 300 "$WORK/rdiff_fmt.err")
	hp rdiff_bad render --base "$d/nothing.bin" "$d/new.folded"
	if [ "$fmt_rc" -ne 2 ] || ! grep -q 'html' <<<"$fmt_err"; then
		fail render_diff "--base with a .pb.gz output: exit $fmt_rc (expected 2): $fmt_err"
	elif [ "$HP_RC" -ne 2 ] || ! grep -q 'nothing.bin' "$WORK/rdiff_bad.err"; then
		fail render_diff "--base of an unreadable file: exit $HP_RC (expected 2, naming it): $(hp_failure rdiff_bad)"
	else
		pass render_diff "table of 6 functions with exact shares and changes, --top 3, -o diff.html; .pb.gz output and unreadable base exit 2"
	fi
}

# --- run -----------------------------------------------------------------------------------------

# The whole run is one function, called on the last line: bash has then read the entire file
# before any test starts, so editing this file during a run does not derail it.
# A process that generates machine code at run time (mmap, then mprotect) and names it in its perf
# map, as a JIT does: the samples in that code are named from the map.
t_jit_mmap() {
	local pid out n total
	start_workload jit_mmap 4
	pid=$WPID
	sleep 0.3
	hp jitmap profile --pid "$pid" --duration 3 --frequency "$FREQ" -o "$WORK/jitmap.folded"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail jit_mmap "capture of jit_mmap failed: $(hp_failure jitmap)"
		return
	fi
	outputs_ok jit_mmap "$WORK/jitmap.folded" || return
	out=$(folded shares "$WORK/jitmap.folded" jit_hot_loop)
	n=$(kv jit_hot_loop <<<"$out" | cut -d' ' -f1)
	total=$(kv samples <<<"$out")
	if [ "${total:-0}" -lt 50 ] || ! fcheck "${n:-0} >= 0.8 * $total"; then
		fail jit_mmap "${n:-0} of ${total:-0} samples have the leaf jit_hot_loop (need >= 50 samples and >= 80%); leaves: $(folded leaves "$WORK/jitmap.folded" -n 5 | tr '\n' ' ')"
	elif ! grep -q 'run_jit;jit_hot_loop ' "$WORK/jitmap.folded"; then
		fail jit_mmap "no stack reaches jit_hot_loop from its native caller run_jit: $(grep -m2 jit_hot_loop "$WORK/jitmap.folded" | tr '\n' ' ')"
	else
		pass jit_mmap "$n of $total samples named jit_hot_loop from /tmp/perf-$pid.map, under run_jit"
	fi
}

# Node with --perf-basic-prof: JIT frames are named from /tmp/perf-PID.map, and OTLP marks them
# profile.frame.type "v8js".
t_jit_node() {
	local node pid hot main decoded
	node=$(command -v node || command -v nodejs)
	if [ -z "$node" ]; then
		fail jit_node "nodejs is not installed (node not in PATH): install the Debian package nodejs"
		return
	fi
	# From $WORK: --perf-basic-prof also writes isolate-*-v8.log into the current directory.
	start_bg env -C "$WORK" "$node" --perf-basic-prof --no-turbo-inlining -e 'function hot(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i);return s} const end=Date.now()+4000; while(Date.now()<end) hot(1e5)'
	pid=$WPID
	# Let V8 compile hot() and write its map before the capture starts.
	sleep 0.5
	hp jit profile --pid "$pid" --duration 3 --frequency "$FREQ" -o "$WORK/jit.folded" \
		-o "$WORK/jit.otlp.pb"
	wait "$pid" 2>/dev/null
	rm -f "/tmp/perf-$pid.map"
	if [ "$HP_RC" -ne 0 ]; then
		fail jit_node "capture of node failed: $(hp_failure jit)"
		return
	fi
	# JIT names hold spaces ("JS:*hot [eval]:1"): only the count after the last one is cut off.
	hot=$(awk '{ st = $0; sub(/ [0-9]+$/, "", st); if (st ~ /hot/) s += $NF } END { print s + 0 }' "$WORK/jit.folded")
	# ... and of those, the ones whose walk went through the JIT frames to the start of node.
	main=$(awk '{ st = $0; sub(/ [0-9]+$/, "", st); if (st ~ /;__libc_start_call_main;.*hot/) s += $NF } END { print s + 0 }' "$WORK/jit.folded")
	if [ "$hot" -eq 0 ]; then
		fail jit_node "no frame containing hot in the folded output; leaf frames seen: $(folded leaves "$WORK/jit.folded" -n 6 | tr '\n' ' ')"
	elif [ $((main * 100)) -lt $((hot * 95)) ]; then
		fail jit_node "$main of the $hot samples in hot reach __libc_start_call_main, need >= 95%; $(grep -m1 '^User stacks' "$WORK/jit.out")"
	elif ! decoded=$(protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$WORK/jit.otlp.pb" 2>&1); then
		fail jit_node "protoc cannot decode the OTLP output: $(head -c 300 <<<"$decoded")"
	elif ! grep -q '"v8js"' <<<"$decoded"; then
		fail jit_node "the OTLP output has no profile.frame.type \"v8js\""
	else
		pass jit_node "$hot samples with a hot frame named from node's perf map, $main of them reaching __libc_start_call_main; OTLP has profile.frame.type v8js"
	fi
}

# A process that publishes an OpenTelemetry process context (OTEP 4719, tests/e2e/otel_ctx.c)
# beside OTEL_SERVICE_NAME: its resource, decoded by protoc, is the one it published.
t_otel_process_context() {
	local pid line want="service.name=ctx-checkout" a
	start_bg env OTEL_SERVICE_NAME=env-name "$WL/otel_ctx" 4
	pid=$WPID
	sleep 0.3
	hp otelctx profile --pid "$pid" --duration 2 --frequency "$FREQ" -o "$WORK/otelctx.otlp.pb"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail otel_process_context "capture failed: $(hp_failure otelctx)"
		return
	fi
	protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$WORK/otelctx.otlp.pb" >"$WORK/otelctx.txt" 2>&1
	line=$(python3 "$E2E/otlp_resources.py" "$WORK/otelctx.txt" | grep -P "process.pid=$pid(;|\t)" | cut -f2)
	for a in service.name=ctx-checkout service.version=2.4.1 service.instance.id=ctx-instance-7 \
		deployment.environment.name=e2e; do
		case ";$line;" in *";$a;"*) ;; *)
			fail otel_process_context "the resource of pid $pid lacks $a (the published context); it is: ${line:-none}"
			return
			;;
		esac
	done
	pass otel_process_context "the published context is the resource ($want, service.version, service.instance.id, deployment.environment.name), over OTEL_SERVICE_NAME=env-name"
}

# OTEP 4947 thread contexts, read in BPF at every sample: tests/e2e/otel_ctx.c runs span A on one
# thread and span B on another, and no span between them, with the TLS variable in the
# executable (local-exec), in a TLSDESC library loaded at start (static TLS) and dlopened
# (dynamic TLS, through the DTV). Samples in in_span_a/in_span_b must carry their span's ids and
# attributes (>= 95%), samples in no_span none; OTLP's link table holds both spans.
t_thread_context() {
	local wl pid raw out a b none msg="" bad=0 links rc
	for wl in otel_ctx otel_ctx_lib otel_ctx_dl; do
		start_workload "$wl" 5
		pid=$WPID
		sleep 0.5
		hp "tctx_$wl" profile --pid "$pid" --duration 3 --frequency "$FREQ" \
			-o "$WORK/tctx_$wl.pb.gz" -o "$WORK/tctx_$wl.otlp.pb"
		stop_workload "$pid"
		if [ "$HP_RC" -ne 0 ]; then
			fail thread_context "capture of $wl failed: $(hp_failure "tctx_$wl")"
			return
		fi
		raw=$WORK/tctx_$wl.raw
		pprof -raw "$WORK/tctx_$wl.pb.gz" >"$raw" 2>&1
		a=$(python3 "$E2E/pprof_raw.py" labels "$raw" in_span_a span_id trace_id http.route user.id)
		b=$(python3 "$E2E/pprof_raw.py" labels "$raw" in_span_b span_id trace_id http.route user.id)
		none=$(python3 "$E2E/pprof_raw.py" labels "$raw" no_span span_id)
		out=$(python3 - "$a" "$b" "$none" <<'PY'
import sys
def share(text, want):
    rows = [l.split(" ", 1) for l in text.splitlines() if l.strip()]
    total = sum(int(n) for n, _ in rows)
    hit = sum(int(n) for n, combo in rows if combo == want)
    return hit, total
a = share(sys.argv[1], "span_id=a1a1a1a1a1a1a1a1,trace_id=0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01,http.route=/checkout,user.id=u-1")
b = share(sys.argv[2], "span_id=b2b2b2b2b2b2b2b2,trace_id=0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b02,http.route=/cart,user.id=u-2b")
n = share(sys.argv[3], "span_id=-")
print("%d %d %d %d %d %d" % (a + b + n))
PY
)
		read -r ah at bh bt nh nt <<<"$out"
		links=$(protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$WORK/tctx_$wl.otlp.pb" 2>&1 | grep -c '^  link_table')
		if [ "${at:-0}" -lt 20 ] || [ "${bt:-0}" -lt 20 ] || [ "${nt:-0}" -lt 20 ]; then
			fail thread_context "$wl: too few samples (in_span_a $at, in_span_b $bt, no_span $nt); $(grep -m1 'thread context' "$WORK/tctx_$wl.err")"
			bad=1
		elif [ $((ah * 100)) -lt $((at * 95)) ] || [ $((bh * 100)) -lt $((bt * 95)) ] || [ "$nh" -ne "$nt" ]; then
			fail thread_context "$wl: in_span_a $ah of $at samples carry span A and its attributes, in_span_b $bh of $bt span B (need >= 95%), no_span $nh of $nt carry no span (need all); a: $(tr '\n' ' ' <<<"$a") b: $(tr '\n' ' ' <<<"$b")"
			bad=1
		elif [ "$links" -ne 3 ]; then
			fail thread_context "$wl: the OTLP link table has $links entries, want 3 (the zero link, span A, span B)"
			bad=1
		fi
		msg="$msg $wl: A $ah/$at, B $bh/$bt, none $nh/$nt;"
	done
	# render reads the spans back: OTLP's links and pprof's labels survive a conversion.
	"$HOSTPROF" render "$WORK/tctx_otel_ctx_lib.otlp.pb" -o "$WORK/tctx_rt.pb.gz" >/dev/null 2>&1
	pprof -raw "$WORK/tctx_rt.pb.gz" >"$WORK/tctx_rt.raw" 2>&1
	a=$(python3 "$E2E/pprof_raw.py" labels "$WORK/tctx_rt.raw" in_span_a span_id trace_id http.route)
	if ! grep -q '^[0-9]* span_id=a1a1a1a1a1a1a1a1,trace_id=0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01,http.route=/checkout$' <<<"$a" ||
		grep -q 'span_id=-' <<<"$a"; then
		fail thread_context "render of the OTLP file lost the spans: in_span_a: $(tr '\n' ' ' <<<"$a")"
		bad=1
	fi
	# --span-id keeps that span's samples alone; a span no sample served is an error.
	"$HOSTPROF" render "$WORK/tctx_otel_ctx_lib.pb.gz" --span-id B2B2B2B2B2B2B2B2 \
		-o "$WORK/tctx_b.pb.gz" >/dev/null 2>&1
	pprof -raw "$WORK/tctx_b.pb.gz" >"$WORK/tctx_b.raw" 2>&1
	b=$(python3 "$E2E/pprof_raw.py" labels "$WORK/tctx_b.raw" in_span_b span_id)
	a=$(python3 "$E2E/pprof_raw.py" labels "$WORK/tctx_b.raw" in_span_a span_id)
	none=$("$HOSTPROF" render "$WORK/tctx_otel_ctx_lib.pb.gz" --span-id 00000000000000ff \
		-o "$WORK/tctx_none.pb.gz" 2>&1)
	rc=$?
	if ! grep -q '^[0-9]* span_id=b2b2b2b2b2b2b2b2$' <<<"$b" || [ -n "$a" ] ||
		[ "$(python3 "$E2E/pprof_raw.py" labels "$WORK/tctx_b.raw" main span_id | grep -vc 'span_id=b2b2b2b2b2b2b2b2$')" -ne 0 ]; then
		fail thread_context "render --span-id b2...: in_span_b: $(tr '\n' ' ' <<<"$b"); in_span_a (want none): $(tr '\n' ' ' <<<"$a")"
		bad=1
	elif [ "$rc" -ne 1 ] || ! grep -q 'no sample served span 00000000000000ff' <<<"$none"; then
		fail thread_context "render --span-id of a span nobody served: exit $rc (want 1), said: $none"
		bad=1
	fi
	[ "$bad" -eq 0 ] && pass thread_context "samples carrying their span's ids and attributes (pprof labels; OTLP link table of 3; kept by render OTLP -> pprof; render --span-id keeps one span):${msg%;}"
}

# offcpu_both_ways TEST TAG WORKLOAD ARGS...: captures WORKLOAD ARGS $WORK/TAG.txt (the file it
# writes what it measured itself to) under --types offcpu, at the default wait sampling and with
# --wait-sample-us 0, and after each runs the Python on stdin with the pprof -raw text, that file,
# the summary and the mode ("auto" or the flags): it prints one line and exits non-zero on a
# failure. TEST passes when both runs do.
offcpu_both_ways() {
	local test=$1 tag=$2 check args out bad=0 msg=""
	shift 2
	check=$(cat)
	for args in "" "--wait-sample-us 0"; do
		# shellcheck disable=SC2086  # args is empty or two words
		hp "$tag" profile --types offcpu $args -o "$WORK/$tag.pb.gz" -- "$@" "$WORK/$tag.txt"
		if [ "$HP_RC" -ne 0 ]; then
			fail "$test" "capture ($args) failed: $(hp_failure "$tag")"
			return
		fi
		pprof -raw "$WORK/$tag.pb.gz" >"$WORK/$tag.raw" 2>&1
		out=$(python3 -c "$check" "$WORK/$tag.raw" "$WORK/$tag.txt" "$WORK/$tag.out" "${args:-auto}") ||
			bad=1
		msg="$msg $out;"
	done
	if [ "$bad" -eq 0 ]; then
		pass "$test" "${msg%;}"
	else
		fail "$test" "${msg%;}"
	fi
}

# Waits far shorter than the sampling period are sampled in proportion to their length: the
# totals must still be what the workload measured itself, while few stacks are taken. The tail
# naps (8 ms, one in 129) are waits longer than their guess (struct hp_offcpu_start); weighted by
# period / guess, their total rested on ~3 walks and missed by half (a loaded CI: 24% short).
t_offcpu_sampled() {
	offcpu_both_ways offcpu_sampled sampled "$WL/short_waits" 6 <<'PY'
import re, sys
sys.path.insert(0, "tests/e2e")
import pprof_raw
p = pprof_raw.parse(open(sys.argv[1]).read())
naps, nap_ns, tails, tail_ns = [int(x) for x in open(sys.argv[2]).read().split()[1::2]]
said = open(sys.argv[3]).read()
i, j = p.type_index("samples"), p.type_index("off_cpu")
got = {"nap": [0, 0], "tail_nap": [0, 0]}
for s in p.samples:
    for name in set(p.stack(s)) & set(got):
        got[name][0] += s.values[i]
        got[name][1] += s.values[j]
sampled = sys.argv[4] == "auto"
# Sampled, the expected spread (one standard deviation) is ~5% for the naps (~4 s of waits in
# ~400 kept), ~4% for the tails (~190, each kept with probability 0.8).
tol = {"nap": 0.20, "tail_nap": 0.15} if sampled else {"nap": 0.05, "tail_nap": 0.05}
bad = []
for name, n_want, ns_want in (("nap", naps, nap_ns), ("tail_nap", tails, tail_ns)):
    n, ns = got[name]
    if abs(ns - ns_want) > tol[name] * ns_want:
        bad.append("off-CPU in %s %.3f s, measured %.3f s" % (name, ns / 1e9, ns_want / 1e9))
    if abs(n - n_want) > tol[name] * n_want:
        bad.append("%d waits in %s, measured %d" % (n, name, n_want))
m = re.search(r"Off-CPU: (\d+) waits recorded(?: \(stacks of (\d+): (\d+) .* sampled, (\d+) not kept)?", said)
if not m:
    bad.append("no Off-CPU line in the summary")
elif sampled and (not m.group(2) or int(m.group(2)) > 0.05 * int(m.group(1)) or not int(m.group(3))):
    bad.append("stacks taken for %s of %s waits (want < 5%%, some sampled): %s" % (m.group(2), m.group(1), m.group(0)))
print("%s: nap %.3f s of %.3f measured, %d of %d waits; tail_nap %.3f s of %.3f, %d of %d; %s%s" % (
    sys.argv[4], got["nap"][1] / 1e9, nap_ns / 1e9, got["nap"][0], naps,
    got["tail_nap"][1] / 1e9, tail_ns / 1e9, got["tail_nap"][0], tails,
    ("stacks of %s" % m.group(2)) if m and m.group(2) else "every stack",
    ("; " + "; ".join(bad)) if bad else ""))
sys.exit(1 if bad else 0)
PY
}

# Preemptions are waits too, and their stacks cannot wait for a system call's exit: walked at
# switch-out by chance, in proportion to the thread's last wait, and weighted (struct
# hp_offcpu_start). The totals must match what the threads measured either way.
t_offcpu_preempted() {
	offcpu_both_ways offcpu_preempted preempted "$WL/crowded" 3 <<'PY'
import re, sys
sys.path.insert(0, "tests/e2e")
import pprof_raw
p = pprof_raw.parse(open(sys.argv[1]).read())
measured = int(open(sys.argv[2]).read().split()[1])
said = open(sys.argv[3]).read()
j = p.type_index("off_cpu")
ns = sum(s.values[j] for s in p.samples if "crowded" in p.stack(s))
sampled = sys.argv[4] == "auto"
# Sampled, ~300 waits of ~4 ms stand for the whole: the spread over 11 runs was 5%.
tol = 0.20 if sampled else 0.10
bad = []
if abs(ns - measured) > tol * measured:
    bad.append("off-CPU in crowded %.3f s, measured %.3f s" % (ns / 1e9, measured / 1e9))
m = re.search(r"Off-CPU: (\d+) waits recorded(?: \(stacks of (\d+): (\d+) .* sampled, (\d+) not kept)?", said)
if not m:
    bad.append("no Off-CPU line in the summary")
elif sampled and (not m.group(2) or int(m.group(2)) > 0.7 * int(m.group(1))):
    bad.append("stacks taken for %s of %s waits (want < 70%%): %s" % (m.group(2), m.group(1), m.group(0)))
print("%s: crowded %.3f s off-CPU of %.3f measured, %s of %s waits walked%s" % (
    sys.argv[4], ns / 1e9, measured / 1e9, m.group(2) if m and m.group(2) else "all",
    m.group(1) if m else "?", ("; " + "; ".join(bad)) if bad else ""))
sys.exit(1 if bad else 0)
PY
}

# one_sleep_wait NAME: NAME.pb.gz holds one sleeping wait of `sleep`, still going on at the end,
# of about the window captured (from NAME.err), with its names and a nanosleep stack. Prints what
# it found; false if it is not so.
one_sleep_wait() {
	pprof -raw "$WORK/$1.pb.gz" >"$WORK/$1.raw" 2>&1
	python3 - "$WORK/$1.raw" "$WORK/$1.err" <<'PY'
import re, sys
sys.path.insert(0, "tests/e2e")
import pprof_raw
p = pprof_raw.parse(open(sys.argv[1]).read())
said = open(sys.argv[2]).read()
m = re.search(r"Captured ([0-9.]+) s", said)
window = float(m.group(1)) if m else 2.0
i, j = p.type_index("samples"), p.type_index("off_cpu")
ns = n = 0
named = stacked = True
for s in p.samples:
    if s.labels.get("thread_state") != "sleeping":
        continue
    if s.labels.get("comm") != "sleep" or s.labels.get("thread_name") != "sleep":
        named = False
        continue
    ns += s.values[j]
    n += s.values[i]
    stacked = stacked and any("nanosleep" in f for f in p.stack(s))
bad = []
if not 0.85 * window <= ns / 1e9 <= 1.05 * window:
    bad.append("sleep off-CPU %.3f s, want about the %.1f s captured" % (ns / 1e9, window))
if n != 1:
    bad.append("%d waits, want the one still going on" % n)
if not named:
    bad.append("a sleeping wait without the names comm=sleep, thread_name=sleep")
if not stacked:
    bad.append("its stack lacks nanosleep")
print("sleep: %.3f s sleeping in %d wait of the %.1f s captured%s" % (
    ns / 1e9, n, window, ("; " + "; ".join(bad)) if bad else ""))
sys.exit(1 if bad else 0)
PY
}

# A wait still going on when the capture ends counts up to the end: `sleep 4` under a 2 s capture
# is one wait of about the capture's length, with its names and its kernel stack, read from the
# start record (through the hp_offcpu_pending task iterator where the records are in task storage).
# Every wait kept (--wait-sample-us 0): the command's wait at hostprof's release pipe, before it
# ran, must not show (it did, under comm=hostprof, where the child was a target while held).
t_offcpu_pending() {
	local out
	hp pending profile --types offcpu --wait-sample-us 0 --duration 2 -o "$WORK/pending.pb.gz" -- sleep 4
	if [ "$HP_RC" -ne 0 ]; then
		fail offcpu_pending "capture failed: $(hp_failure pending)"
	elif out=$(one_sleep_wait pending); then
		pass offcpu_pending "$out"
	else
		fail offcpu_pending "$out"
	fi
}

# A thread asleep since before the capture began, and through it: its wait counts from the start
# (the hp_offcpu_seed task iterator gives it a start record when the program is attached) to the
# end, with the kernel stack it sleeps in; the summary says so. Before, such a thread had no
# record, and its wait was not counted at all. The records are in task storage on kernels with the
# bpf_loop walker (5.17+), which this host has.
t_offcpu_asleep_at_start() {
	local out pid
	sleep 8 &
	pid=$!
	sleep 0.5
	hp asleep profile --pid "$pid" --types offcpu --duration 2 -o "$WORK/asleep.pb.gz"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [ "$HP_RC" -ne 0 ]; then
		fail offcpu_asleep_at_start "capture failed: $(hp_failure asleep)"
	elif ! out=$(one_sleep_wait asleep); then
		fail offcpu_asleep_at_start "$out"
	elif ! grep -q '1 thread was already off the CPU when the capture began' "$WORK/asleep.out"; then
		fail offcpu_asleep_at_start "the summary does not say the thread was asleep at the start: $(grep -A3 '^Off-CPU' "$WORK/asleep.out")"
	else
		pass offcpu_asleep_at_start "asleep since before the capture: $out"
	fi
}

# A long wait after short ones is mostly not walked when it begins (its thread's recent waits
# were short: walked by chance); on a kernel with BPF task work (Linux 6.18) its user stack is
# read when the thread returns to user mode, so long_nap keeps its off-CPU time. Elsewhere the
# summary must say so, and the time must still be counted, in kernel-only stacks.
t_offcpu_long_after_short() {
	local task_work=no
	bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
		grep -q "FUNC 'bpf_task_work_schedule_resume_impl'" && task_work=yes
	HP_TASK_WORK=$task_work offcpu_both_ways offcpu_long_after_short long_short \
		"$WL/short_waits" --long 3 <<'PY'
import os, re, sys
sys.path.insert(0, "tests/e2e")
import pprof_raw
p = pprof_raw.parse(open(sys.argv[1]).read())
naps, measured = [int(x) for x in open(sys.argv[2]).read().split()[1::2]]
said = open(sys.argv[3]).read()
sampled = sys.argv[4] == "auto"
task_work = os.environ.get("HP_TASK_WORK") == "yes" if sampled else True
j = p.type_index("off_cpu")
in_long = sum(s.values[j] for s in p.samples if "long_nap" in p.stack(s))
not_short = sum(s.values[j] for s in p.samples if "short_nap" not in p.stack(s))
at_return = re.search(r"(\d+) of them were long waits .* walked when it returned", said)
kernel_only = re.search(r"(\d+) of them were long waits .* kernel stack only", said)
bad = []
# Where user stacks are walked, long_nap holds them all; elsewhere the unwalked ones have none.
ns = in_long if task_work else not_short
if abs(ns - measured) > 0.10 * measured:
    bad.append("off-CPU in %s %.3f s, measured %.3f s" % (
        "long_nap" if task_work else "stacks without short_nap", ns / 1e9, measured / 1e9))
if sampled and task_work:
    if not at_return or int(at_return.group(1)) < naps // 2:
        bad.append("want most of the %d long naps walked at the return to user mode: %s" % (
            naps, at_return.group(0) if at_return else "no such line in the summary"))
    if kernel_only and int(kernel_only.group(1)) > naps // 10:
        bad.append(kernel_only.group(0))
elif sampled and (not kernel_only or int(kernel_only.group(1)) < naps // 2):
    bad.append("without task work, most of the %d long naps should be kept with their kernel "
               "stack only: %s" % (naps, kernel_only.group(0) if kernel_only else "not said"))
print("%s: %d long naps of %.3f s; long_nap %.3f s off-CPU, %s at the return to user mode, %s "
      "kernel stack only%s" % (sys.argv[4], naps, measured / 1e9, in_long / 1e9,
      at_return.group(1) if at_return else 0, kernel_only.group(1) if kernel_only else 0,
      ("; " + "; ".join(bad)) if bad else ""))
sys.exit(1 if bad else 0)
PY
}

# Goroutine labels (pprof.Do) read in BPF: tests/e2e/go_labels runs span A and span B on two
# goroutines, each followed by work outside any span, built three ways (see tests/e2e/go.mk).
t_go_labels() {
	local wl out msg="" bad=0 links focus ver
	for wl in go_labels_debian go_labels_newest go_labels_cgo; do
		start_workload "$wl" 5
		sleep 0.5
		hp "$wl" profile --pid "$WPID" --duration 3 --frequency "$FREQ" \
			-o "$WORK/$wl.pb.gz" -o "$WORK/$wl.otlp.pb"
		stop_workload "$WPID"
		ver=$(go version "$WL/$wl" 2>/dev/null | awk '{print $2}')
		if [ "$HP_RC" -ne 0 ]; then
			fail go_labels "capture of $wl ($ver) failed: $(hp_failure "$wl")"
			return
		fi
		pprof -raw "$WORK/$wl.pb.gz" >"$WORK/$wl.raw" 2>&1
		if ! out=$(python3 "$E2E/go_spans.py" golabels "$WORK/$wl.raw"); then
			fail go_labels "$wl ($ver): $out; $(grep -m1 -i 'context\|label' "$WORK/$wl.err")"
			bad=1
			continue
		fi
		links=$(protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$WORK/$wl.otlp.pb" 2>&1 | grep -c '^  link_table')
		# -tagfocus keeps span A's samples: inSpanA's, and none of inSpanB or noSpan.
		focus=$(pprof -top -tagfocus=span_id=a1a1a1a1a1a1a1a1 "$WORK/$wl.pb.gz" 2>&1)
		if [ "$links" -ne 3 ]; then
			fail go_labels "$wl ($ver): the OTLP link table has $links entries, want 3 (the zero link, span A, span B)"
			bad=1
		elif ! grep -q 'main.inSpanA' <<<"$focus" || grep -q 'main.inSpanB\|main.noSpan' <<<"$focus"; then
			fail go_labels "$wl ($ver): go tool pprof -tagfocus=span_id=a1a1a1a1a1a1a1a1 does not isolate span A: $(tr '\n' ' ' <<<"$focus" | cut -c1-400)"
			bad=1
		fi
		msg="$msg $wl ($ver): $out;"
	done
	[ "$bad" -eq 0 ] && pass go_labels "goroutine labels carried, OTLP link table of 3, -tagfocus isolates span A:${msg%;}"
}

# A real OpenTelemetry Go SDK service (tests/e2e/otel_go, modules from the Go module proxy): the
# spans the profile names are the ones the SDK exported.
t_otel_go_sdk() {
	local out
	rm -f "$WORK/otelgo_spans.json"
	start_workload otelgo 5 "$WORK/otelgo_spans.json"
	sleep 0.5
	hp otelgo profile --pid "$WPID" --duration 3 --frequency "$FREQ" -o "$WORK/otelgo.pb.gz"
	# The SDK writes each span as it ends: let the service finish, so the file has them all.
	wait "$WPID" 2>/dev/null
	if [ "$HP_RC" -ne 0 ]; then
		fail otel_go_sdk "capture failed: $(hp_failure otelgo)"
		return
	fi
	pprof -raw "$WORK/otelgo.pb.gz" >"$WORK/otelgo.raw" 2>&1
	if out=$(python3 "$E2E/go_spans.py" otelsdk "$WORK/otelgo.raw" "$WORK/otelgo_spans.json"); then
		pass otel_go_sdk "$out"
	else
		fail otel_go_sdk "$out"
	fi
}

# The same spans in a wall profile: the 10 ms waits in in_span_wait carry the span the thread
# served when it blocked (read at switch-out), those in no_span_wait none.
t_thread_context_wall() {
	local pid raw w none out
	start_workload otel_ctx_lib 6
	pid=$WPID
	sleep 0.5
	hp tctx_wall profile --pid "$pid" --duration 4 --frequency "$FREQ" \
		--types cpu,wall,contention -o "$WORK/tctx_wall.pb.gz"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail thread_context_wall "capture failed: $(hp_failure tctx_wall)"
		return
	fi
	raw=$WORK/tctx_wall.raw
	pprof -raw "$WORK/tctx_wall.wall.pb.gz" >"$raw" 2>&1
	w=$(python3 "$E2E/pprof_raw.py" labels "$raw" in_span_wait span_id http.route)
	none=$(python3 "$E2E/pprof_raw.py" labels "$raw" no_span_wait span_id)
	out=$(awk -v part=w '{ n += $1; if ($2 == "span_id=a1a1a1a1a1a1a1a1,http.route=/checkout" || $2 == "span_id=b2b2b2b2b2b2b2b2,http.route=/cart") hit += $1 } END { print hit + 0, n + 0 }' <<<"$w")
	read -r wh wt <<<"$out"
	out=$(awk '{ n += $1; if ($2 == "span_id=-") hit += $1 } END { print hit + 0, n + 0 }' <<<"$none")
	read -r nh nt <<<"$out"
	pprof -raw "$WORK/tctx_wall.contention.pb.gz" >"$WORK/tctx_lock.raw" 2>&1
	out=$(python3 "$E2E/pprof_raw.py" labels "$WORK/tctx_lock.raw" in_span_lock span_id http.route |
		awk '{ n += $1; if ($2 == "span_id=a1a1a1a1a1a1a1a1,http.route=/checkout" || $2 == "span_id=b2b2b2b2b2b2b2b2,http.route=/cart") hit += $1 } END { print hit + 0, n + 0 }')
	read -r lh lt <<<"$out"
	# Counts of waits, not of timer samples: each thread waits about 20 times a second.
	if [ "${wt:-0}" -lt 10 ] || [ "${nt:-0}" -lt 10 ] || [ "${lt:-0}" -lt 5 ]; then
		fail thread_context_wall "too few samples in the waits (wall: in_span_wait $wt, no_span_wait $nt; contention: in_span_lock $lt)"
	elif [ $((lh * 100)) -lt $((lt * 95)) ]; then
		fail thread_context_wall "contention: $lh of $lt waits in in_span_lock carry their thread's span (need >= 95%)"
	elif [ $((wh * 100)) -lt $((wt * 95)) ] || [ "$nh" -ne "$nt" ]; then
		fail thread_context_wall "in_span_wait: $wh of $wt samples carry their thread's span (need >= 95%); no_span_wait: $nh of $nt carry none (need all); $(tr '\n' ' ' <<<"$w")"
	else
		pass thread_context_wall "wall: $wh of $wt samples of waits in a span carry it, $nh of $nt outside carry none; contention: $lh of $lt mutex waits in a span carry it"
	fi
}

# The README's examples, run as written (tests/e2e/readme_examples.py says what it rewrites: PID
# 1234 is cpu_ratio, receivers are the local recording receiver, durations 2 s).
t_readme_examples() {
	local out pid rx=$WORK/readme-rx dir=$WORK/readme n
	mkdir -p "$dir"
	start_workload cpu_ratio
	pid=$WPID
	start_receiver "$rx"
	[ -n "$RX_PORT" ] || { fail readme_examples "the test receiver did not start"; return; }
	sleep 0.3
	# The e2e run's Go cache, as pprof() uses: go tool pprof is built once, not per command.
	out=$(GOCACHE=$WORK/gocache GOTOOLCHAIN=local python3 "$E2E/readme_examples.py" \
		--readme "$ROOT/README.md" --hostprof "$HOSTPROF" \
		--pid "$pid" --receiver "http://127.0.0.1:$RX_PORT" --work "$dir" 2>&1)
	stop_workload "$pid"
	printf '%s\n' "$out" >"$WORK/readme_examples.log"
	n=$(kv examples <<<"$out")
	if grep -q '^FAIL' <<<"$out" || ! grep -q '^examples' <<<"$out"; then
		fail readme_examples "$(grep -A12 '^FAIL' <<<"$out" | head -c 3000)$(grep -q '^examples' <<<"$out" || tail -c 1500 <<<"$out")"
	elif [ "${n:-0}" -lt 15 ]; then
		fail readme_examples "only ${n:-0} README commands were run; the README has more hostprof examples than that"
	else
		pass readme_examples "$n README commands ran and exited 0; $(kv outputs <<<"$out") sample outputs match what hostprof prints"
	fi
}

# shellcheck source=tests/e2e/unwind.sh
. "$E2E/unwind.sh"
# shellcheck source=tests/e2e/python.sh
. "$E2E/python.sh"
# shellcheck source=tests/e2e/agent.sh
. "$E2E/agent.sh"
# shellcheck source=tests/e2e/agent_filter.sh
. "$E2E/agent_filter.sh"
# shellcheck source=tests/e2e/collector.sh
. "$E2E/collector.sh"
# shellcheck source=tests/e2e/hostile.sh
. "$E2E/hostile.sh"

main() {
	local t
	check_preconditions
	RATIO_ERR="not captured"
	RATIO_RAW_RC=1
	if wanted ratio || wanted reach_main || wanted pie_resolved || wanted pid_filter ||
		wanted sample_rate || wanted summary || wanted pprof_valid || wanted pprof_cpu_time ||
		wanted render_formats; then
		capture_ratio
	fi
	for t in ratio reach_main pie_resolved pid_filter sample_rate summary pprof_valid pprof_cpu_time \
		lib_resolved kernel_frames multi_pid map_full include_idle wall contention_mutex contention_raw_syscalls contention_at_switches contention_condvar contention_kernel offcpu_lock_state html html_browser html_pages html_views render_diff render_formats readme_examples otel_process_context thread_context thread_context_wall offcpu_sampled offcpu_preempted offcpu_pending offcpu_asleep_at_start offcpu_long_after_short go_labels otel_go_sdk terminal otlp_http otlp_down otlp_grpc pyroscope_push all_mode exits_mid_capture short_lived_loop stats command_mode command_status command_children output_checks verbose_prefix threads \
		jit_node jit_mmap nofp_unwind nofp_ratio python_unwind python_perf_jit tailcall_unwind cxx_unwind perf_agree unwind_summary \
		dlopen_unwind exec_unwind kernel_entry contention_caller unwind_rows_full \
		pyframes_debian pyframes_pyenv pyframes_container pyframes_versions pyframes_unsupported pyframes_wall pyframes_contention pyframes_agent pyframes_harness \
		agent_service agent_process_context agent_containers agent_kubelet agent_systemd agent_relabel agent_reload \
		agent_reload_pairs agent_sigterm agent_http agent_caps agent_config_errors agent_print_config agent_soak agent_kernel_filter \
		collector_http collector_forward collector_links collector_grpc collector_json collector_refusal collector_agent collector_agent_grpc \
		hostile_agent hostile_files hostile_canary hostile_names \
		idle_hint bad_pid bad_flags help_version not_root binaries_denied; do
		wanted "$t" && "t_$t"
	done
	finish
}

main "$@"

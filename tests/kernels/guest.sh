#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The kernel matrix's captures. Booted as /init of the guest (tests/kernels/initramfs.sh puts it
# there), it mounts what hostprof needs, runs the captures one after another and prints each
# capture's exit status, stdout, stderr and output files on the console, base64 between marker
# lines (`@@HPK FILE name@@` ... `@@HPK END@@`), then powers the guest off. tests/kernels/run.sh
# cuts the files out and tests/kernels/check.py judges them on the host: the guest judges nothing.
#
# On the host itself (HPK_HOST=1, as root), the same captures run with WL (the e2e workloads) and
# OUT (where the files go) from the environment, and nothing is printed or powered off: the
# files stay in OUT.
#
# The cases (all by default; `hpk.cases=a,b` on the kernel command line or HPK_CASES picks some;
# `hpk.verbose=1` runs every capture with -v):
#   cpu_fp     cpu_ratio (frame pointers, burn_a/b/c 1:2:3) by --pid: folded, pprof and OTLP;
#              the workload's own CPU time per function in cpu_fp.truth
#   cpu_nofp   nofp (no frame pointers, leaves 1:2:3 in libnofp.so) by --pid
#   python     Debian's python3 running a recursive function, by --pid
#   wall       sleeper (30% compute, 70% nanosleep) with --types cpu,wall,offcpu
#   contention mutex (4 threads on one pthread mutex, the workload times its own waits) with
#              --types wall,contention
#   agent      `hostprof agent --output-dir` for two windows while cpu_ratio runs
#   thread_ctx otel_ctx_lib (OpenTelemetry process and thread contexts, spans on two threads,
#              the TLS variable in a TLSDESC library) with --types cpu,wall
#   go_labels  go_labels_newest (goroutine pprof labels, spans on two goroutines) by --pid
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=${HOME:-/root}
WL=${WL:-/opt/e2e}
OUT=${OUT:-/tmp/out}
HOSTPROF=${HOSTPROF:-hostprof}
# How long the by_pid workloads run, stopped when their capture ends: longer than a capture may
# take (HPK_HANG). Under emulation hostprof takes 30 to 70 s to load and verify its programs
# before a 4 s capture; workloads of 60 s ended first, and their captures found no samples.
WL_SECONDS=$((${HPK_HANG:-240} + 60))
# Samples per second: more than the e2e tests' 99 Hz, so that a share is measured on about 1200
# samples and its noise (about 1.4 points) stays well inside the 5 points allowed.
FREQ=199
HPK_VERBOSE=${HPK_VERBOSE:-}

if [ -z "${HPK_HOST:-}" ]; then
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev 2>/dev/null
	mount -t tmpfs tmp /tmp
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null
	# Kernel messages would interleave with the base64 on the console.
	echo 0 >/proc/sys/kernel/printk 2>/dev/null
	for c in $(cat /proc/cmdline); do
		case $c in
		hpk.cases=*) HPK_CASES=$(echo "${c#hpk.cases=}" | tr , ' ') ;;
		hpk.verbose=1) HPK_VERBOSE=-v ;; # the verifier's log of a program that fails to load
		esac
	done
fi
mkdir -p "$OUT"

emit() {
	[ -n "${HPK_HOST:-}" ] && return
	echo "@@HPK FILE $1@@"
	base64 "$2"
	echo "@@HPK END@@"
}

emit_outputs() {
	for f in "$OUT/$1".*; do
		[ -f "$f" ] && emit "$(basename "$f")" "$f"
	done
}

# capture NAME ARGS...: run `hostprof ARGS`, keep its status and seconds in NAME.rc, its output in
# NAME.stdout and NAME.stderr.
capture() {
	name=$1
	shift
	start=$(date +%s)
	# shellcheck disable=SC2086  # HPK_VERBOSE is empty or -v
	"$HOSTPROF" $HPK_VERBOSE "$@" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr" &
	hp=$!
	# A capture still running after HPK_HANG seconds is hung: where each of its threads waits
	# goes to the end of its stderr (the check prints that), it is killed, and the next cases
	# run. Had the kernel hung instead, nothing more comes, and the host's timeout says so.
	(
		sleep "${HPK_HANG:-240}"
		kill -0 "$hp" 2>/dev/null || exit 0
		for t in /proc/"$hp"/task/*; do
			echo "hung after ${HPK_HANG:-240} s: thread ${t##*/} in $(cat "$t/wchan" 2>/dev/null): $(tr '\n' ' ' <"$t/stack" 2>/dev/null)"
		done >>"$OUT/$name.stderr"
		kill -9 "$hp"
	) &
	watchdog=$!
	wait "$hp"
	rc=$?
	kill "$watchdog" 2>/dev/null
	echo "$rc $(($(date +%s) - start))" >"$OUT/$name.rc"
}

# by_pid NAME SECONDS COMMAND... -- HOSTPROF_ARGS...: start COMMAND, profile it by --pid, stop it
# (SIGTERM), and emit every NAME.* file, what the workload wrote at its end included.
by_pid() {
	name=$1
	seconds=$2
	shift 2
	cmd=""
	while [ "$1" != "--" ]; do
		cmd="$cmd '$1'"
		shift
	done
	shift
	# exec: $! is then the workload itself, not a shell waiting for it. Its stderr is kept: when
	# it ends before the capture does, NAME.workload says how (its status, its stderr and the
	# kernel's last messages), which check.py prints with the case's failure.
	eval "exec $cmd" >/dev/null 2>"$OUT/$name.workload_stderr" &
	pid=$!
	sleep 0.5
	capture "$name" profile --pid "$pid" --duration "$seconds" "$@"
	if kill "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null
	else
		wait "$pid" 2>/dev/null
		{
			echo "the workload ended before the capture did, status $?"
			cat "$OUT/$name.workload_stderr"
			echo "the kernel's last messages:"
			dmesg | tail -20
		} >"$OUT/$name.workload"
	fi
	rm -f "$OUT/$name.workload_stderr"
	emit_outputs "$name"
}

# tests/e2e/py_recurse.py, which initramfs.sh puts beside the workloads.
PY_RECURSE=$(cat "${PY_SCRIPT:-$WL/py_recurse.py}")

run_agent() {
	"$WL/cpu_ratio" "$WL_SECONDS" >/dev/null 2>&1 &
	pid=$!
	mkdir -p "$OUT/agent.dir"
	start=$(date +%s)
	"$HOSTPROF" agent --output-dir "$OUT/agent.dir" --upload-interval 3s --frequency 49 \
		--cache-dir /tmp/agent-cache >"$OUT/agent.stdout" 2>"$OUT/agent.stderr" &
	agent=$!
	# Under emulation the agent takes seconds to load its programs (about 10 on arm64 6.1): the
	# windows are counted from when it says it profiles (at most 60 s from its start), then
	# three intervals and a margin.
	i=0
	while [ "$i" -lt 120 ] && kill -0 "$agent" 2>/dev/null &&
		! grep -q 'profiling the whole host' "$OUT/agent.stderr"; do
		sleep 0.5
		i=$((i + 1))
	done
	sleep 11
	kill -TERM "$agent"
	wait "$agent"
	echo "$? $(($(date +%s) - start))" >"$OUT/agent.rc"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	ls -l "$OUT/agent.dir" >"$OUT/agent.files"
	# One window's files are enough to check: the first complete cpu profile.
	first=$(ls "$OUT/agent.dir" | grep 'cpu.*\.pb\.gz$' | head -1)
	[ -n "$first" ] && cp "$OUT/agent.dir/$first" "$OUT/agent.window.pb.gz"
	emit_outputs agent
}

[ -z "${HPK_HOST:-}" ] && echo "@@HPK KERNEL $(uname -r) $(uname -m)@@"
for case in ${HPK_CASES:-cpu_fp cpu_nofp python wall contention agent thread_ctx go_labels}; do
	case $case in
	cpu_fp)
		by_pid cpu_fp 6 "$WL/cpu_ratio" "$WL_SECONDS" "$OUT/cpu_fp.truth" -- --frequency $FREQ \
			-o "$OUT/cpu_fp.folded" -o "$OUT/cpu_fp.pb.gz" -o "$OUT/cpu_fp.otlp.pb" ;;
	cpu_nofp)
		by_pid cpu_nofp 6 "$WL/nofp" "$WL_SECONDS" -- --frequency $FREQ -o "$OUT/cpu_nofp.folded" ;;
	python)
		by_pid python 5 python3 -c "$PY_RECURSE" -- --frequency $FREQ \
			-o "$OUT/python.folded" ;;
	wall)
		by_pid wall 6 "$WL/sleeper" "$WL_SECONDS" -- --frequency 99 --types cpu,wall,offcpu \
			-o "$OUT/wall.folded" ;;
	contention)
		capture contention profile --types wall,contention -o "$OUT/contention.pb.gz" \
			-- "$WL/mutex" 3 "$OUT/contention.measured"
		emit_outputs contention ;;
	agent)
		run_agent ;;
	thread_ctx)
		by_pid thread_ctx 4 "$WL/otel_ctx_lib" "$WL_SECONDS" -- --frequency $FREQ --types cpu,wall \
			-o "$OUT/thread_ctx.pb.gz" ;;
	go_labels)
		by_pid go_labels 4 "$WL/go_labels_newest" "$WL_SECONDS" -- --frequency $FREQ \
			-o "$OUT/go_labels.pb.gz" ;;
	*)
		echo "guest: unknown case $case" >&2 ;;
	esac
done
if [ -z "${HPK_HOST:-}" ]; then
	echo "@@HPK DONE@@"
	poweroff -f
fi

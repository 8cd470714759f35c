# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# shellcheck disable=SC2317  # the tests are called indirectly, as "t_$name"
#
# CPython frames walked in BPF, end to end (sourced by run.sh: hp, pprof, pass, fail, kv,
# stop_workload, $WORK and $PIDS come from there). Every test profiles
# tests/e2e/python/py_work.py, a script that times its own functions, for 8 s at 299 Hz with
# `profile --pid`, stops it with SIGTERM (it then writes what it measured as JSON), and judges
# the pprof output with tests/e2e/python/py_check.py (its docstring says each check and why):
# the named functions under their qualified names (Shapes.area), their inclusive shares within
# 5 points of the script's own, their file:line inside the function and on its hot loop,
# >= 95% of the main thread's samples reaching <module> and of the worker thread's reaching
# Thread._bootstrap and Worker.spin, and libc's qsort (called through ctypes) between the
# Python callback and the Python caller. The OTLP/JSON output of the same capture must mark the
# script's frames profile.frame.type "cpython", and a supported version must not be named in a
# "frames not walked" line of the summary.
#
#   pyframes_debian       Debian's /usr/bin/python3 (3.11, stripped to .dynsym)
#   pyframes_pyenv        the pyenv 3.11 on PATH (`pyenv which python3.11`; libpython shared)
#   pyframes_container    Python 3.13 of a Debian trixie root (tests/e2e/python/trixie_root.sh:
#                         debootstrap, cached under /var/cache/hostprof-test/python-roots), run
#                         by `unshare --mount --pid --fork --mount-proc --root`: its own mount and
#                         PID namespaces and root, as in a container
#   pyframes_versions     pyenv's 3.10, 3.12 and 3.13, one capture each (3.10's code objects
#                         have no qualified name: the plain name is expected there)
#   pyframes_unsupported  pyenv's 3.9: the summary has a line naming "Python 3.9" and the PID
#                         (e.g. "Python 3.9 in PID 1234: frames not walked"), and no Python frame
#                         is in the profile, which still has its native samples
#   pyframes_wall         --types wall, Debian's python3 sleeping in Sleeper.nap (time.sleep)
#                         part of the time: its wall share and crunch's within 5 points, the
#                         sleeping stacks reach <module>
#   pyframes_contention   --types contention, Debian's python3 with two threads taking one
#                         threading.Lock in turn (tests/e2e/python/py_lock.py): the futex waits
#                         under Waiter.wait_turn, reached from Thread._bootstrap, within 15% of
#                         the time the script measured in acquire(), and >= 95% of the process's
#                         waits with a Python frame in their stack
#   pyframes_agent        `hostprof agent` (cpu and wall, 4 s windows) beside Debian's python3
#                         running py_work.py: a whole window's cpu profile names Shapes.area and
#                         >= 95% of the interpreter's samples reach <module> or
#                         Thread._bootstrap; the wall profile too (a thread preempted on its way
#                         out of a system call keeps its user stack); /metrics counts
#                         one walked interpreter and its code objects
#   pyframes_harness      the same checks (but lines) under pyenv's 3.12 with -X perf, over the
#                         frames of its perf trampolines (py::Shapes.area:FILE) instead of the
#                         walker's: the script's measurement and the checker agree with frames
#                         hostprof already names, so a failure of the tests above is the walker's

PYW=$E2E/python
PY_SECS=8
# 299 Hz rather than the suite's 99: ~2,000 samples in 8 s of an interpreter busy on one CPU, so
# that a 30% share's sampling noise is about 1 point (the 5 allowed are 5 standard deviations; 3
# at 99 Hz), and under 1.5 still when other work on the machine takes half of the workload's CPU.
PY_FREQ=299
PY_TMPDIRS=()
PY_OPTS=() # the interpreter's own options, before the script
PY_SELFTEST=

# py_cleanup: removes the work directories made inside the trixie root (run by finish()).
py_cleanup() {
	local d
	for d in "${PY_TMPDIRS[@]}"; do
		rm -rf "$d"
	done
}
CLEANUPS+=(py_cleanup)

# py_selftest_ok NAME: the checker passes its self-test (once per run), else fails NAME.
py_selftest_ok() {
	if [ -z "$PY_SELFTEST" ]; then
		PY_SELFTEST=$(python3 "$PYW/py_check.py" selftest 2>&1 | tail -3 | tr '\n' ' ')
	fi
	[ "$PY_SELFTEST" = "selftest ok " ] && return 0
	fail "$1" "tests/e2e/python/py_check.py fails its self-test: $PY_SELFTEST"
	return 1
}

# pyenv_python MINOR: pyenv's newest 3.MINOR interpreter (empty when there is none).
pyenv_python() {
	local root c
	root=$(pyenv root 2>/dev/null) || root=${PYENV_ROOT:-$HOME/.pyenv}
	for c in "$root"/versions/3."$1".*/bin/python3."$1"; do
		[ -x "$c" ] && echo "$c"
	done | sort -V | tail -1
}

# py_start NAME PYTHON [ARGS...]: starts the workload under PYTHON (with PY_OPTS; ARGS after its
# own), its report to $WORK/NAME.json. Sets WPID and PY_PID (the same here) and PY_JSON.
py_start() {
	local name=$1 py=$2
	shift 2
	PY_JSON=$WORK/$name.json
	rm -f "$PY_JSON" "$PY_JSON.ready"
	"$py" "${PY_OPTS[@]}" "$PYW/py_work.py" 60 "$PY_JSON" "$@" >"$WORK/$name.log" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	PY_PID=$WPID
}

# py_start_container NAME ROOT: copies the workload into ROOT's /tmp and starts it with ROOT's
# python3 in new mount and PID namespaces chrooted to ROOT (--kill-child: killing unshare, WPID,
# kills the interpreter, which is PID 1 inside). PY_PID is the interpreter's PID on the host,
# the child of unshare. Returns 1 (PY_ERR set) when it does not start.
py_start_container() {
	local name=$1 root=$2 dir inner i ns
	PY_ERR=""
	dir=$(mktemp -d "$root/tmp/hostprof-e2e.XXXXXX") || {
		PY_ERR="cannot make a directory in $root/tmp"
		return 1
	}
	PY_TMPDIRS+=("$dir")
	cp "$PYW/py_work.py" "$dir/"
	inner=/tmp/${dir##*/}
	PY_JSON=$dir/out.json
	unshare --mount --pid --fork --kill-child --mount-proc --root="$root" \
		/usr/bin/python3 "$inner/py_work.py" 60 "$inner/out.json" >"$WORK/$name.log" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	PY_PID=
	for ((i = 0; i < 100; i++)); do
		read -r PY_PID _ <"/proc/$WPID/task/$WPID/children" 2>/dev/null
		[ -n "$PY_PID" ] && break
		sleep 0.1
	done
	if [ -z "$PY_PID" ]; then
		PY_ERR="unshare started no interpreter: $(head -c 300 "$WORK/$name.log" | tr '\n' ' ')"
		stop_workload "$WPID"
		return 1
	fi
	# The test means something only if the interpreter is really elsewhere: its own mount and
	# PID namespaces, and the trixie root as its /.
	for ns in mnt pid; do
		if [ "$(readlink "/proc/$PY_PID/ns/$ns")" = "$(readlink "/proc/self/ns/$ns")" ]; then
			PY_ERR="the interpreter (PID $PY_PID) shares hostprof's $ns namespace"
		fi
	done
	if [ "$(readlink "/proc/$PY_PID/root")" != "$root" ]; then
		PY_ERR+="${PY_ERR:+; }the interpreter's root is $(readlink "/proc/$PY_PID/root"), not $root"
	fi
	if [ -n "$PY_ERR" ]; then
		stop_workload "$WPID"
		return 1
	fi
}

# py_capture NAME [HOSTPROF_ARGS...]: once the workload is in its steady state (its .ready
# mark), profiles PY_PID for PY_SECS into $WORK/NAME.pb.gz and $WORK/NAME.otlp.json (cpu) or
# $WORK/NAME.pb.gz alone (with other --types), stops it with SIGTERM, waits for its report (kept
# as $WORK/NAME.json) and decodes the pprof into $WORK/NAME.raw. Returns 1 with PY_ERR set on a
# failure of the harness or of hostprof's run.
py_capture() {
	local name=$1 i outs=()
	shift
	PY_ERR=""
	for ((i = 0; i < 150; i++)); do
		[ -e "$PY_JSON.ready" ] && break
		kill -0 "$PY_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -e "$PY_JSON.ready" ]; then
		PY_ERR="the workload did not start within 15 s: $(tail -c 300 "$WORK/$name.log" | tr '\n' ' ')"
		stop_workload "$WPID"
		return 1
	fi
	outs=(-o "$WORK/$name.pb.gz")
	[ $# -eq 0 ] && outs+=(-o "$WORK/$name.otlp.json")
	hp "$name" profile --pid "$PY_PID" --duration "$PY_SECS" --frequency "$PY_FREQ" "${outs[@]}" "$@"
	kill -TERM "$PY_PID" 2>/dev/null
	for ((i = 0; i < 150; i++)); do
		[ -s "$PY_JSON" ] && break
		kill -0 "$PY_PID" 2>/dev/null || break
		sleep 0.1
	done
	stop_workload "$WPID"
	if [ "$HP_RC" -ne 0 ]; then
		PY_ERR="capture failed: $(hp_failure "$name")"
		return 1
	fi
	if [ ! -s "$PY_JSON" ]; then
		PY_ERR="the workload wrote no report: $(tail -c 300 "$WORK/$name.log" | tr '\n' ' ')"
		return 1
	fi
	[ "$PY_JSON" = "$WORK/$name.json" ] || cp "$PY_JSON" "$WORK/$name.json"
	PY_JSON=$WORK/$name.json
	if ! pprof -raw "$WORK/$name.pb.gz" >"$WORK/$name.raw" 2>"$WORK/$name.raw.err"; then
		PY_ERR="go tool pprof cannot read $name.pb.gz: $(head -c 300 "$WORK/$name.raw.err")"
		return 1
	fi
}

# py_judge NAME [py_check.py ARGS...]: checks $WORK/NAME.raw (and NAME.otlp.json when written)
# against $WORK/NAME.json. Sets PY_VERSION, PY_FAILS (the failures, `; `-separated; empty when
# all passed) and PY_NUMBERS (the measured shares, for the PASS line).
py_judge() {
	local name=$1 out rc said
	shift
	PY_VERSION=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["python"])' \
		"$WORK/$name.json" 2>/dev/null)
	out=$(python3 "$PYW/py_check.py" check "$WORK/$name.raw" "$WORK/$name.json" "$@" 2>&1)
	rc=$?
	echo "$out" >"$WORK/$name.check"
	if [ "$rc" -eq 2 ]; then
		PY_FAILS="py_check.py could not read its inputs: $(head -c 300 <<<"$out" | tr '\n' ' ')"
		return
	fi
	PY_FAILS=$(sed -n 's/^FAIL //p' <<<"$out" | head -6 | paste -sd';' | sed 's/;/; /g')
	if [ -s "$WORK/$name.otlp.json" ] &&
		! out=$(python3 "$PYW/py_check.py" otlp "$WORK/$name.otlp.json" "$WORK/$name.json" 2>&1); then
		PY_FAILS+="${PY_FAILS:+; }OTLP: $(sed -n 's/^FAIL //p' <<<"$out" | head -3 | paste -sd';' | sed 's/;/; /g')"
	fi
	# The interpreter's own refusals ("frames not walked", "interpreter frames were not walked"),
	# not the off-CPU lines about waits whose walk was left out.
	said=$(grep -h 'frames not walked\|frames were not walked' "$WORK/$name.out" "$WORK/$name.err" |
		head -1)
	[ -z "$said" ] || PY_FAILS+="${PY_FAILS:+; }the summary says, of a supported version: $said"
	PY_NUMBERS=$(awk '$1 == "share" { printf "%s%s %s%% (script %s%%)", sep, $2, $3, $4; sep = ", " }
		$1 == "reach" { r = r sprintf(" %s %.1f%%", $3, 100 * $4) }
		$1 == "native_between" { n = sprintf("; qsort between Python frames in %.1f%%", 100 * $2) }
		END { printf "; reach%s%s", r, n }' "$WORK/$name.check")
}

# py_frames_test NAME PYTHON: one interpreter, cpu profile, every check.
py_frames_test() {
	local name=$1 py=$2
	py_start "$name" "$py"
	if ! py_capture "$name"; then
		fail "$name" "$py: $PY_ERR"
		return
	fi
	py_judge "$name"
	if [ -n "$PY_FAILS" ]; then
		fail "$name" "Python $PY_VERSION ($py, PID $PY_PID): $PY_FAILS"
	else
		pass "$name" "Python $PY_VERSION ($py): $PY_NUMBERS"
	fi
}

t_pyframes_debian() {
	py_selftest_ok pyframes_debian || return
	if [ ! -x /usr/bin/python3 ]; then
		fail pyframes_debian "/usr/bin/python3 is missing: install the Debian package python3"
		return
	fi
	py_frames_test pyframes_debian /usr/bin/python3
}

t_pyframes_pyenv() {
	local py
	py_selftest_ok pyframes_pyenv || return
	py=$(pyenv which python3.11 2>/dev/null) || py=$(pyenv_python 11)
	if [ -z "$py" ]; then
		fail pyframes_pyenv "no pyenv Python 3.11 (pyenv install 3.11)"
		return
	fi
	py_frames_test pyframes_pyenv "$py"
}

t_pyframes_container() {
	local root t0 secs
	py_selftest_ok pyframes_container || return
	t0=$(date +%s)
	if ! root=$("$PYW/trixie_root.sh" 2>"$WORK/trixie_root.log"); then
		fail pyframes_container "no trixie root: $(tail -5 "$WORK/trixie_root.log" | tr '\n' ' ')"
		return
	fi
	secs=$(($(date +%s) - t0))
	echo "pyframes_container: trixie root ready in $secs s ($root)"
	if ! py_start_container pyframes_container "$root" || ! py_capture pyframes_container; then
		fail pyframes_container "Python of the trixie root: $PY_ERR"
		return
	fi
	py_judge pyframes_container
	if [ -n "$PY_FAILS" ]; then
		fail pyframes_container "Python $PY_VERSION in its own mount and PID namespaces (host PID $PY_PID): $PY_FAILS"
	else
		pass pyframes_container "Python $PY_VERSION in its own mount and PID namespaces: $PY_NUMBERS"
	fi
}

t_pyframes_versions() {
	local minor py bad="" good="" name
	py_selftest_ok pyframes_versions || return
	for minor in 10 12 13; do
		py=$(pyenv_python "$minor")
		if [ -z "$py" ]; then
			bad+="${bad:+ | }no pyenv Python 3.$minor (pyenv install 3.$minor)"
			continue
		fi
		name=pyframes_3$minor
		py_start "$name" "$py"
		if ! py_capture "$name"; then
			bad+="${bad:+ | }$py: $PY_ERR"
			continue
		fi
		py_judge "$name"
		if [ -n "$PY_FAILS" ]; then
			bad+="${bad:+ | }Python $PY_VERSION: $PY_FAILS"
		else
			good+="${good:+ | }Python $PY_VERSION: $PY_NUMBERS"
		fi
	done
	if [ -n "$bad" ]; then
		fail pyframes_versions "$bad"
	else
		pass pyframes_versions "$good"
	fi
}

t_pyframes_unsupported() {
	local py line out n
	py_selftest_ok pyframes_unsupported || return
	py=$(pyenv_python 9)
	if [ -z "$py" ]; then
		fail pyframes_unsupported "no pyenv Python 3.9 (pyenv install 3.9)"
		return
	fi
	py_start pyframes_unsupported "$py"
	if ! py_capture pyframes_unsupported; then
		fail pyframes_unsupported "$py: $PY_ERR"
		return
	fi
	line=$(cat "$WORK/pyframes_unsupported.out" "$WORK/pyframes_unsupported.err" |
		grep -F "Python 3.9" | grep -wF "$PY_PID" | head -1)
	out=$(python3 "$PYW/py_check.py" absent "$WORK/pyframes_unsupported.raw" \
		"$WORK/pyframes_unsupported.json" 2>&1)
	n=$(kv samples <<<"$out")
	if [ -z "$line" ]; then
		fail pyframes_unsupported "no line of hostprof's output names \"Python 3.9\" and PID $PY_PID (e.g. \"Python 3.9 in PID $PY_PID: frames not walked\"); its summary: $(grep -v '^ ' "$WORK/pyframes_unsupported.out" | head -4 | tr '\n' ' ')"
	elif grep -q '^FAIL' <<<"$out"; then
		fail pyframes_unsupported "said \"$line\", yet: $(sed -n 's/^FAIL //p' <<<"$out")"
	elif [ "${n:-0}" -lt 100 ]; then
		fail pyframes_unsupported "said \"$line\", but only ${n:-0} samples: the process's native stacks must still be profiled"
	else
		pass pyframes_unsupported "said \"$line\"; $n samples, no Python frame among them"
	fi
}

t_pyframes_wall() {
	local name=pyframes_wall
	py_selftest_ok "$name" || return
	py_start "$name" /usr/bin/python3 --mode wall
	if ! py_capture "$name" --types wall; then
		fail "$name" "/usr/bin/python3: $PY_ERR"
		return
	fi
	py_judge "$name" --type wall
	if [ -n "$PY_FAILS" ]; then
		fail "$name" "Python $PY_VERSION, wall: $PY_FAILS"
	else
		pass "$name" "Python $PY_VERSION, wall: $PY_NUMBERS"
	fi
}

t_pyframes_contention() {
	local name=pyframes_contention out
	PY_JSON=$WORK/$name.json
	rm -f "$PY_JSON" "$PY_JSON.ready"
	/usr/bin/python3 "$PYW/py_lock.py" 60 "$PY_JSON" >"$WORK/$name.log" 2>&1 &
	WPID=$!
	PY_PID=$WPID
	PIDS+=("$WPID")
	if ! py_capture "$name" --types contention; then
		fail "$name" "/usr/bin/python3: $PY_ERR"
		return
	fi
	out=$(python3 "$PYW/py_lock_check.py" "$WORK/$name.raw" "$PY_JSON" 2>&1)
	if grep -q '^FAIL' <<<"$out"; then
		fail "$name" "$(sed -n 's/^FAIL //p' <<<"$out" | head -3 | paste -sd';')"
	else
		pass "$name" "$(sed -n 's/^OK //p' <<<"$out")"
	fi
}

t_pyframes_agent() {
	local name=pyframes_agent dir port agent i raw metrics cpu wall out
	dir=$WORK/$name.d
	mkdir -p "$dir"
	py_start "$name" /usr/bin/python3
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$HOSTPROF" agent --output-dir "$dir" --upload-interval 4s --types cpu,wall \
		--http-listen "127.0.0.1:$port" --cache-dir "$dir/cache" >"$WORK/$name.out" 2>&1 &
	agent=$!
	# Three whole windows after the agent says it profiles (its first may start before the
	# interpreter was looked at).
	for ((i = 0; i < 300; i++)); do
		grep -q 'profiling' "$WORK/$name.out" && break
		kill -0 "$agent" 2>/dev/null || break
		sleep 0.1
	done
	sleep 13
	metrics=$(curl -s "http://127.0.0.1:$port/metrics")
	kill -TERM "$agent" 2>/dev/null
	wait "$agent" 2>/dev/null
	stop_workload "$WPID"
	cpu=$(find "$dir" -name 'cpu-*.pb.gz' | sort | tail -2 | head -1)
	wall=$(find "$dir" -name 'wall-*.pb.gz' | sort | tail -2 | head -1)
	if [ -z "$cpu" ] || [ -z "$wall" ]; then
		fail "$name" "the agent wrote no whole cpu and wall windows: $(tail -c 300 "$WORK/$name.out" | tr '\n' ' ')"
		return
	fi
	raw=$WORK/$name.cpu.raw
	pprof -raw "$cpu" >"$raw" 2>&1
	pprof -raw "$wall" >"$WORK/$name.wall.raw" 2>&1
	out=$(python3 - "$raw" "$WORK/$name.wall.raw" "$PY_PID" "$E2E" <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
import pprof_raw
fails = []
for path, kind in ((sys.argv[1], "cpu"), (sys.argv[2], "wall")):
    p = pprof_raw.parse(open(path).read())
    mine = [s for s in p.samples if s.labels.get("pid") == sys.argv[3]]
    # A wait whose stack ends in the kernel's entry has no user stack: a long wait not walked
    # when it began, on a kernel without task work (see struct hp_offcpu_start); such waits count
    # against the 95% below.
    kernel_only = sum(s.values[0] for s in mine
                      if p.stack(s) and p.stack(s)[-1].startswith("entry_SYSCALL"))
    n = sum(s.values[0] for s in mine)
    area = sum(s.values[0] for s in mine if "Shapes.area" in p.stack(s))
    root = sum(s.values[0] for s in mine
               if {"<module>", "Thread._bootstrap"} & set(p.stack(s)))
    if not n:
        fails.append("%s: no sample of PID %s" % (kind, sys.argv[3]))
    elif not area or root < 0.95 * n:
        fails.append("%s: %d of %d samples in Shapes.area, %.1f%% reach <module> or "
                     "Thread._bootstrap (need > 0 and >= 95%%)" % (kind, area, n, 100.0 * root / n))
    else:
        print("OK %s: %d samples (%d without a user stack), %d in Shapes.area, %.1f%% reach "
              "the roots" % (kind, n, kernel_only, area, 100.0 * root / n))
for f in fails:
    print("FAIL " + f)
PY
)
	if ! grep -q '^hostprof_interpreter_processes{state="walked"} [1-9]' <<<"$metrics"; then
		out+=$'\n'"FAIL /metrics: no walked interpreter: $(grep '^hostprof_interpreter_processes' <<<"$metrics" | tr '\n' ' ')"
	fi
	if ! grep -q '^hostprof_python_code_objects [1-9]' <<<"$metrics"; then
		out+=$'\n'"FAIL /metrics: no Python code object cached"
	fi
	if grep -q '^FAIL' <<<"$out"; then
		fail "$name" "$(sed -n 's/^FAIL //p' <<<"$out" | paste -sd';')"
	else
		pass "$name" "$(sed -n 's/^OK //p' <<<"$out" | paste -sd';'); /metrics: $(grep -m1 '^hostprof_python_code_objects' <<<"$metrics")"
	fi
}

t_pyframes_harness() {
	local name=pyframes_harness py
	py_selftest_ok "$name" || return
	py=$(pyenv_python 12)
	if [ -z "$py" ]; then
		fail "$name" "no pyenv Python 3.12 (pyenv install 3.12): -X perf needs 3.12 or newer"
		return
	fi
	PY_OPTS=(-X perf)
	py_start "$name" "$py"
	PY_OPTS=()
	py_capture "$name"
	rm -f "/tmp/perf-$PY_PID.map"
	if [ -n "$PY_ERR" ]; then
		fail "$name" "$py -X perf: $PY_ERR"
		return
	fi
	rm -f "$WORK/$name.otlp.json" # the trampolines' frames are not the walker's
	py_judge "$name" --perf-trampolines
	if [ -n "$PY_FAILS" ]; then
		fail "$name" "Python $PY_VERSION -X perf, judged on its perf trampolines' frames: $PY_FAILS"
	else
		pass "$name" "Python $PY_VERSION -X perf, judged on its perf trampolines' frames: $PY_NUMBERS"
	fi
}

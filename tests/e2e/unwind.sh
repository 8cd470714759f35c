# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash disable=SC2317
#
# The unwinding tests of tests/e2e/run.sh (sourced by it: hp, folded, kv, fcheck, pct, pass and
# fail come from there). Stacks of code built without frame pointers are walked in the kernel with
# tables built from .eh_frame; each test also runs the frame-pointer unwinder on the same workload,
# to show that the workload really needs the tables (else the test would prove nothing).
#
#   nofp_unwind    nofp (-O2 -fomit-frame-pointer, through libnofp.so): >= 99% of the samples reach
#                  main; with --unwind fp, fewer than half do
#   nofp_ratio     the leaves of nofp split 1:2:3 within 5 points
#   python_unwind  Debian's /usr/bin/python3 running a recursive function: >= 95% of the samples
#                  reach __libc_start_call_main through Py_BytesMain, <module> and down (its Python
#                  frames, walked in BPF), >= 90% hold all 41 frames of down
#   python_perf_jit  every Python 3.12+ on the machine (pyenv's, built without frame pointers)
#                  under -X perf: >= 95% of the samples reach Py_BytesMain through the perf
#                  trampolines named py::<module> and py::down (code copied at run time, which
#                  only the template's rows step through)
#   cxx_unwind     cxx_throw: samples in libstdc++ and libgcc_s (exceptions being thrown) reach
#                  worker_loop and the thread's start in libstdc++ and libc
#   perf_agree     nofp under hostprof and under `perf record --call-graph dwarf` at the same time:
#                  the top stacks from main down agree within 5 points
#   unwind_summary the summary says how the walks ended and how many tables were loaded; a second
#                  run with the same --cache-dir builds none and its stacks still reach main
#   dlopen_unwind  nofp_dlopen opens libnofp.so after its tables were loaded: the walker asks for a
#                  re-read of its mappings, which gives it the library's table within a tick of the
#                  main loop (>= 90% of the library's samples reach main)
#   exec_unwind    nofp_exec_a execs nofp_exec_b, whose code lies at the same addresses: the exec
#                  event makes the profiler load the new image's tables (>= 90% reach main)
#   kernel_entry   python3 reading /dev/zero: samples taken in the kernel start the user walk
#                  from the registers saved at syscall entry, and >= 95% reach Py_BytesMain
#   contention_caller  a mutex wait is charged to the function that called pthread_mutex_lock:
#                  >= 95% of contend_lock's wait time has glibc's pthread_mutex_lock right below
#                  it (frame pointers skip it, glibc has none)
#   unwind_rows_full  --unwind-table-rows too small for libc: output written, the summary names the
#                  flag to raise

stacks() {
	python3 "$E2E/stacks.py" "$@"
}

# ratio HIT TOTAL: HIT / TOTAL with four decimals (0 when TOTAL is 0).
ratio() {
	awk -v h="${1:-0}" -v t="${2:-0}" 'BEGIN { printf "%.4f", t ? h / t : 0 }'
}

# unwind_capture NAME WORKLOAD_ARGS... -- HOSTPROF_ARGS...: profile a workload for 4 s.
unwind_capture() {
	local name=$1 pid
	shift
	local wl=()
	while [ "$1" != "--" ]; do
		wl+=("$1")
		shift
	done
	shift
	start_bg "${wl[@]}"
	pid=$WPID
	sleep 0.5
	hp "$name" profile --pid "$pid" --duration 4 --frequency "$FREQ" -o "$WORK/$name.folded" "$@"
	stop_workload "$pid"
}

t_nofp_unwind() {
	local out fr hit total fp_fr
	unwind_capture nofp "$WL/nofp" 60 --
	if [ "$HP_RC" -ne 0 ]; then
		fail nofp_unwind "capture of nofp failed: $(hp_failure nofp)"
		return
	fi
	out=$(stacks reach "$WORK/nofp.folded" --comm nofp main level_one level_two level_three)
	fr=$(kv fraction <<<"$out")
	hit=$(kv hit <<<"$out")
	total=$(kv samples <<<"$out")
	unwind_capture nofp_fp "$WL/nofp" 60 -- --unwind fp
	fp_fr=$(stacks reach "$WORK/nofp_fp.folded" --comm nofp main | kv fraction)
	if [ "$total" -lt 100 ]; then
		fail nofp_unwind "only $total samples of nofp"
	elif ! fcheck "$fr >= 0.99"; then
		fail nofp_unwind "$hit of $total samples ($(pct "$fr")) reach main through level_one..three, need >= 99%; top stacks: $(top_stacks "$WORK/nofp.folded" 3)"
	elif ! fcheck "${fp_fr:-1} < 0.5"; then
		fail nofp_unwind "frame pointers alone reach main in $(pct "${fp_fr:-1}") of the samples: the workload does not test the tables"
	else
		pass nofp_unwind "$hit of $total samples ($(pct "$fr")) reach main with the tables; $(pct "$fp_fr") with frame pointers only"
	fi
}

t_nofp_ratio() {
	if [ ! -s "$WORK/nofp.folded" ]; then
		unwind_capture nofp "$WL/nofp" 60 --
	fi
	check_shares nofp_ratio "$WORK/nofp.folded" nofp nofp_leaf_a=16.7 nofp_leaf_b=33.3 \
		nofp_leaf_c=50.0
}

# Python recursing 40 deep, forever (tests/e2e/py_recurse.py).
PY_RECURSE=$(cat "$E2E/py_recurse.py")

t_python_unwind() {
	local py=/usr/bin/python3 out fr total fp_fr deep
	if [ ! -x "$py" ]; then
		fail python_unwind "$py is missing: install the Debian package python3"
		return
	fi
	unwind_capture python "$py" -c "$PY_RECURSE" --
	if [ "$HP_RC" -ne 0 ]; then
		fail python_unwind "capture of python3 failed: $(hp_failure python)"
		return
	fi
	# Its Python frames are walked in BPF: <module>, then down() 41 deep in place of the
	# interpreter's _PyEval_EvalFrameDefault.
	out=$(stacks reach "$WORK/python.folded" --comm python3 __libc_start_call_main Py_BytesMain \
		'<module>' down)
	fr=$(kv fraction <<<"$out")
	total=$(kv samples <<<"$out")
	deep=$(python3 - "$WORK/python.folded" <<'PY'
import sys
total = deep = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if not stack.startswith("python3;"):
        continue
    total += int(n)
    deep += int(n) if stack.split(";").count("down") == 41 else 0
print("%.4f" % (deep / total if total else 0))
PY
)
	unwind_capture python_fp "$py" -c "$PY_RECURSE" -- --unwind fp
	fp_fr=$(stacks reach "$WORK/python_fp.folded" --comm python3 Py_BytesMain | kv fraction)
	if [ "$total" -lt 100 ]; then
		fail python_unwind "only $total samples of python3"
	elif ! fcheck "$fr >= 0.95"; then
		fail python_unwind "$(pct "$fr") of $total samples reach __libc_start_call_main > Py_BytesMain > <module> > down, need >= 95%; top stacks: $(top_stacks "$WORK/python.folded" 2)"
	elif ! fcheck "$deep >= 0.90"; then
		fail python_unwind "$(pct "$deep") of the samples hold down's 41 Python frames, need >= 90%; top stacks: $(top_stacks "$WORK/python.folded" 2)"
	else
		pass python_unwind "$(pct "$fr") of $total python3 samples reach main through <module> and down (Python frames walked in BPF), $(pct "$deep") hold all 41 of down; $(pct "${fp_fr:-0}") reach Py_BytesMain with frame pointers only"
	fi
}

# Python recursing 12 deep under -X perf: each level is 4 frames (the trampoline, the evaluator
# and two calls between them), and the walk stops at 127.
PY_PERF=${PY_RECURSE//down(40)/down(12)}

# The Python 3.12+ interpreters of this machine, one per minor version: pyenv's, and a
# distribution's python3.1x.
python_perf_interpreters() {
	local c root seen=" " v
	root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	for c in "$root"/versions/3.1[2-9]*/bin/python3 /usr/bin/python3.1[2-9]; do
		[ -x "$c" ] || continue
		v=$("$c" -c 'import sys; print("%d.%d" % sys.version_info[:2]) if sys.version_info >= (3, 12) else None' 2>/dev/null) || continue
		case "$v" in "" | None) continue ;; esac
		case "$seen" in *" $v "*) continue ;; esac
		seen="$seen$v "
		echo "$c"
	done
}

t_python_perf_jit() {
	local py pys comm out fr total msg="" bad=0 name v
	pys=$(python_perf_interpreters)
	if [ -z "$pys" ]; then
		fail python_perf_jit "no Python 3.12 or newer on this machine (pyenv versions or /usr/bin/python3.1x): -X perf needs one"
		return
	fi
	for py in $pys; do
		v=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
		name=pyperf_${v//./_}
		comm=$(basename "$py")
		unwind_capture "$name" "$py" -X perf -c "$PY_PERF" --
		rm -f "/tmp/perf-$WPID.map"
		if [ "$HP_RC" -ne 0 ]; then
			fail python_perf_jit "capture of $py -X perf failed: $(hp_failure "$name")"
			return
		fi
		# The trampolines name the functions from the perf map, and the walker's Python
		# frames (down) take the interpreter loop's place between them.
		out=$(stacks reach "$WORK/$name.folded" --comm "$comm" Py_BytesMain 'py::<module>:<string>' \
			'py::down:<string>' down)
		fr=$(kv fraction <<<"$out")
		total=$(kv samples <<<"$out")
		if [ "${total:-0}" -lt 100 ]; then
			fail python_perf_jit "only ${total:-0} samples of $py"
			bad=1
		elif ! fcheck "$fr >= 0.95"; then
			fail python_perf_jit "$py -X perf: $(pct "$fr") of $total samples reach Py_BytesMain > py::<module> > py::down > down, need >= 95%; $(grep -m1 '^User stacks' "$WORK/$name.out"); top stacks: $(top_stacks "$WORK/$name.folded" 2)"
			bad=1
		fi
		msg="$msg $v: $(pct "$fr") of $total;"
	done
	[ "$bad" -eq 0 ] && pass python_perf_jit "samples reaching Py_BytesMain through the perf trampolines:${msg%;}"
}

# Kernels without bpf_loop (5.15, 5.16) walk across tail calls, 4 frames per program: forced here
# (HOSTPROF_UNWIND_WALKER=tailcall) on a kernel that has bpf_loop, the same stacks must come out.
t_tailcall_unwind() {
	local nofp_fr nofp_total py_fr py_total
	export HOSTPROF_UNWIND_WALKER=tailcall
	unwind_capture tail_nofp "$WL/nofp" 60 --
	local rc1=$HP_RC
	unwind_capture tail_python /usr/bin/python3 -c "$PY_RECURSE" --
	local rc2=$HP_RC
	unset HOSTPROF_UNWIND_WALKER
	if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
		fail tailcall_unwind "capture with tail calls failed: $(hp_failure tail_nofp) / $(hp_failure tail_python)"
		return
	fi
	nofp_fr=$(stacks reach "$WORK/tail_nofp.folded" --comm nofp main level_one level_two level_three | kv fraction)
	nofp_total=$(stacks reach "$WORK/tail_nofp.folded" --comm nofp main | kv samples)
	py_fr=$(stacks reach "$WORK/tail_python.folded" --comm python3 __libc_start_call_main Py_BytesMain _PyEval_EvalFrameDefault | kv fraction)
	py_total=$(stacks reach "$WORK/tail_python.folded" --comm python3 Py_BytesMain | kv samples)
	if [ "${nofp_total:-0}" -lt 100 ] || [ "${py_total:-0}" -lt 100 ]; then
		fail tailcall_unwind "too few samples: nofp ${nofp_total:-0}, python3 ${py_total:-0} (need >= 100 each)"
	elif ! fcheck "$nofp_fr >= 0.99"; then
		fail tailcall_unwind "$(pct "$nofp_fr") of nofp samples reach main through level_one..three with tail calls, need >= 99%; top stacks: $(top_stacks "$WORK/tail_nofp.folded" 3)"
	elif ! fcheck "$py_fr >= 0.95"; then
		fail tailcall_unwind "$(pct "$py_fr") of python3 samples reach main through _PyEval_EvalFrameDefault with tail calls, need >= 95%; top stacks: $(top_stacks "$WORK/tail_python.folded" 2)"
	else
		pass tailcall_unwind "with tail calls: $(pct "$nofp_fr") of $nofp_total nofp samples and $(pct "$py_fr") of $py_total python3 samples reach main"
	fi
}

t_cxx_unwind() {
	local out fr total thrown
	unwind_capture cxx "$WL/cxx_throw" 60 --
	if [ "$HP_RC" -ne 0 ]; then
		fail cxx_unwind "capture of cxx_throw failed: $(hp_failure cxx)"
		return
	fi
	# Samples taken while an exception is thrown: their stacks pass through libstdc++ and
	# libgcc_s, and must go on to worker_loop and the thread's start.
	out=$(stacks reach "$WORK/cxx.folded" --comm cxx_throw __cxa_throw)
	thrown=$(kv hit <<<"$out")
	out=$(stacks reach "$WORK/cxx.folded" --comm cxx_throw start_thread "worker_loop(double)" __cxa_throw)
	fr=$(ratio "$(kv hit <<<"$out")" "${thrown:-0}")
	total=$(stacks reach "$WORK/cxx.folded" --comm cxx_throw | kv samples)
	if [ "${thrown:-0}" -lt 20 ]; then
		fail cxx_unwind "only ${thrown:-0} of $total samples in __cxa_throw; top stacks: $(top_stacks "$WORK/cxx.folded" 3)"
	elif ! fcheck "$fr >= 0.95"; then
		fail cxx_unwind "$(pct "$fr") of the $thrown samples in __cxa_throw reach start_thread > worker_loop, need >= 95%; top stacks: $(grep -F __cxa_throw "$WORK/cxx.folded" | sort -t' ' -k2 -rn | head -3 | tr '\n' '|')"
	else
		pass cxx_unwind "$(pct "$fr") of $thrown samples inside __cxa_throw (libstdc++, libgcc_s) reach worker_loop and start_thread"
	fi
}

t_perf_agree() {
	local pid out perf_pid
	if ! command -v perf >/dev/null; then
		fail perf_agree "perf is not installed: install the Debian package linux-perf"
		return
	fi
	start_bg "$WL/nofp" 60
	pid=$WPID
	sleep 0.5
	perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf -p "$pid" -o "$WORK/perf.data" \
		-- sleep 4 >"$WORK/perf.record.log" 2>&1 &
	perf_pid=$!
	hp perfagree profile --pid "$pid" --duration 4 --frequency "$FREQ" -o "$WORK/perfagree.folded"
	wait "$perf_pid"
	stop_workload "$pid"
	if [ "$HP_RC" -ne 0 ]; then
		fail perf_agree "capture of nofp failed: $(hp_failure perfagree)"
		return
	fi
	if ! perf script -i "$WORK/perf.data" -F comm,ip,sym --no-inline >"$WORK/perf.script" \
		2>"$WORK/perf.script.err"; then
		fail perf_agree "perf script failed: $(head -c 300 "$WORK/perf.script.err")"
		return
	fi
	stacks perf-folded "$WORK/perf.script" >"$WORK/perf.folded"
	if out=$(stacks compare "$WORK/perfagree.folded" "$WORK/perf.folded" --comm nofp --from main); then
		pass perf_agree "the top stacks below main agree with perf --call-graph dwarf within 5 points ($(kv ours <<<"$out") vs $(kv theirs <<<"$out") samples, $(kv stacks <<<"$out") stacks)"
	else
		fail perf_agree "$(grep problem <<<"$out" | head -4 | tr '\n' ' ')"
	fi
}

t_unwind_summary() {
	local line again cache=$WORK/unwind-cache
	unwind_capture unwsum "$WL/nofp" 60 -- -o "$WORK/unwsum.pb.gz" --cache-dir "$cache"
	line=$(grep -F 'User stacks:' "$WORK/unwsum.out")
	# The second run finds every table in the disk cache, and its stacks are as complete.
	unwind_capture unwsum2 "$WL/nofp" 60 -- --cache-dir "$cache"
	again=$(grep -F 'User stacks:' "$WORK/unwsum2.out")
	if [ "$HP_RC" -ne 0 ]; then
		fail unwind_summary "capture failed: $(hp_failure unwsum2)"
	elif ! grep -Eq 'walked with unwind tables \([1-9][0-9]* binaries: [1-9][0-9]* built, 0 from the disk cache' <<<"$line" ||
		! grep -Eq 'reached the end [1-9]' <<<"$line"; then
		fail unwind_summary "the summary does not report the walks and tables: '${line:-no User stacks line}'"
	elif ! grep -Eq 'binaries: 0 built, [1-9][0-9]* from the disk cache' <<<"$again"; then
		fail unwind_summary "a second run with the same --cache-dir rebuilt its tables: '${again:-no User stacks line}'"
	elif [ -n "$(find "$cache" -type d -perm /077)" ]; then
		fail unwind_summary "cache directories open to others: $(find "$cache" -type d -perm /077 | head -3)"
	elif ! fcheck "$(stacks reach "$WORK/unwsum2.folded" --comm nofp main | kv fraction) >= 0.99"; then
		fail unwind_summary "stacks from cached tables do not reach main: $(top_stacks "$WORK/unwsum2.folded" 2)"
	else
		pass unwind_summary "$line; then from the cache: $(grep -Eo '[0-9]+ built, [0-9]+ from the disk cache' <<<"$again")"
	fi
}

t_dlopen_unwind() {
	local out fr total
	hp dlopen profile --duration 6 --frequency "$FREQ" -o "$WORK/dlopen.folded" \
		-- "$WL/nofp_dlopen" 1 6
	if [ "$HP_RC" -ne 0 ]; then
		fail dlopen_unwind "capture of nofp_dlopen failed: $(hp_failure dlopen)"
		return
	fi
	out=$(stacks reach "$WORK/dlopen.folded" --comm nofp_dlopen nofp_leaf_c)
	total=$(kv hit <<<"$out")
	out=$(stacks reach "$WORK/dlopen.folded" --comm nofp_dlopen main after_dlopen call_loaded \
		nofp_leaf_c)
	fr=$(ratio "$(kv hit <<<"$out")" "${total:-0}")
	if [ "${total:-0}" -lt 100 ]; then
		fail dlopen_unwind "only ${total:-0} samples in the dlopen'ed nofp_leaf_c; top stacks: $(top_stacks "$WORK/dlopen.folded" 3)"
	elif ! fcheck "$fr >= 0.90"; then
		fail dlopen_unwind "$(pct "$fr") of $total samples in the dlopen'ed library reach main, need >= 90%; top stacks: $(top_stacks "$WORK/dlopen.folded" 3)"
	else
		pass dlopen_unwind "$(pct "$fr") of $total samples in libnofp.so, opened after the capture began, reach main > after_dlopen > call_loaded"
	fi
}

t_kernel_entry() {
	local py=/usr/bin/python3 out fr total
	local prog='
import os
fd = os.open("/dev/zero", os.O_RDONLY)
def reader(n):
    while True:
        os.read(fd, 1 << 20)
reader(0)
'
	unwind_capture kentry "$py" -c "$prog" --
	if [ "$HP_RC" -ne 0 ]; then
		fail kernel_entry "capture of python3 failed: $(hp_failure kentry)"
		return
	fi
	# The Python frames, walked in BPF from the registers saved at the system call's entry.
	out=$(stacks reach "$WORK/kentry.folded" --comm python3 --kernel Py_BytesMain '<module>' \
		reader)
	fr=$(kv fraction <<<"$out")
	total=$(kv samples <<<"$out")
	if [ "${total:-0}" -lt 100 ]; then
		fail kernel_entry "only ${total:-0} python3 samples taken in the kernel; top stacks: $(top_stacks "$WORK/kentry.folded" 2)"
	elif ! fcheck "$fr >= 0.95"; then
		fail kernel_entry "$(pct "$fr") of $total samples taken in the kernel have a user stack reaching Py_BytesMain > <module> > reader, need >= 95%; top stacks: $(top_stacks "$WORK/kentry.folded" 2)"
	else
		pass kernel_entry "$(pct "$fr") of $total python3 samples taken inside read(2) unwind their user stack, Python frames and all, to Py_BytesMain"
	fi
}

t_contention_caller() {
	local out fr fp_fr total
	hp lockcaller profile --types contention -o "$WORK/lockcaller.folded" \
		-- "$WL/mutex" 2 "$WORK/lockcaller.measured"
	if [ "$HP_RC" -ne 0 ]; then
		fail contention_caller "capture of the mutex workload failed: $(hp_failure lockcaller)"
		return
	fi
	out=$(stacks adjacent "$WORK/lockcaller.folded" --comm mutex contend_lock pthread_mutex_lock)
	fr=$(kv fraction <<<"$out")
	total=$(kv samples <<<"$out")
	hp lockcaller_fp profile --types contention --unwind fp -o "$WORK/lockcaller_fp.folded" \
		-- "$WL/mutex" 2 "$WORK/lockcaller_fp.measured"
	fp_fr=$(stacks adjacent "$WORK/lockcaller_fp.folded" --comm mutex contend_lock \
		pthread_mutex_lock | kv fraction)
	if [ "${total:-0}" -le 0 ]; then
		fail contention_caller "no contention under contend_lock; top stacks: $(top_stacks "$WORK/lockcaller.folded" 2)"
	elif ! fcheck "$fr >= 0.95"; then
		fail contention_caller "$(pct "$fr") of contend_lock's wait time has pthread_mutex_lock right below it, need >= 95%; top stacks: $(top_stacks "$WORK/lockcaller.folded" 2)"
	else
		pass contention_caller "$(pct "$fr") of contend_lock's wait time is under its own pthread_mutex_lock call; $(pct "${fp_fr:-0}") with frame pointers only"
	fi
}

# A rows map too small for libc: the capture still writes its output, the binaries that did not
# fit walk with frame pointers, and the summary names the flag to raise.
t_unwind_rows_full() {
	local line
	hp rowsfull profile --duration 2 --unwind-table-rows 1024 -o "$WORK/rowsfull.folded" \
		-- "$WL/nofp" 2
	line=$(grep -F 'did not fit the rows map' "$WORK/rowsfull.out")
	if [ "$HP_RC" -ne 0 ]; then
		fail unwind_rows_full "capture failed: $(hp_failure rowsfull)"
	elif [ ! -s "$WORK/rowsfull.folded" ]; then
		fail unwind_rows_full "no output written"
	elif ! grep -q -- '--unwind-table-rows' <<<"$line"; then
		fail unwind_rows_full "the summary does not say that binaries did not fit: $(grep -F 'User stacks' "$WORK/rowsfull.out")"
	else
		pass unwind_rows_full "$(sed 's/^ *//' <<<"$line"); output written"
	fi
}

# An exec into other code at the same addresses (two non-PIE images): the kernel's exec event
# drops the old entry and the new image's tables are loaded; its stacks reach main.
t_exec_unwind() {
	local out fr total
	hp execunw profile --duration 5 --frequency "$FREQ" -o "$WORK/execunw.folded" \
		-- "$WL/nofp_exec_a" 1 5
	if [ "$HP_RC" -ne 0 ]; then
		fail exec_unwind "capture of nofp_exec_a failed: $(hp_failure execunw)"
		return
	fi
	total=$(stacks reach "$WORK/execunw.folded" --comm nofp_exec_b b_leaf | kv hit)
	out=$(stacks reach "$WORK/execunw.folded" --comm nofp_exec_b main b_middle b_leaf)
	fr=$(ratio "$(kv hit <<<"$out")" "${total:-0}")
	if [ "${total:-0}" -lt 100 ]; then
		fail exec_unwind "only ${total:-0} samples in the exec'd image's b_leaf; top stacks: $(top_stacks "$WORK/execunw.folded" 3)"
	elif ! fcheck "$fr >= 0.90"; then
		fail exec_unwind "$(pct "$fr") of $total samples of the exec'd image reach main > b_middle > b_leaf, need >= 90%; top stacks: $(top_stacks "$WORK/execunw.folded" 3)"
	else
		pass exec_unwind "$(pct "$fr") of $total samples of an image exec'd over the same addresses reach main"
	fi
}

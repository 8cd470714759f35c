#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The kernel matrix: the essential captures (tests/kernels/guest.sh) on Debian's cloud kernels,
# each booted under qemu with software emulation (TCG: nested KVM is not assumed), and on the host
# itself; tests/kernels/check.py judges every kernel's files. Run as root from anywhere:
# OUTPUT=build tests/kernels/run.sh (what `make kernel-matrix` does, and `make test` after e2e).
#
# Per kernel: one `PASS|FAIL kernel check: ...` line per check, then `kernels: N passed, N failed`;
# the exit status is non-zero when anything failed. A guest that stops before it finishes is
# booted once more, and fails if it stops again (the first stop is said, its console kept as
# console.first.log). Each kernel's console log and files stay in $OUTPUT/kernels/SERIES/
# (console.log, out/).
#
# Environment: OUTPUT (default build), KERNELS (default "5.10 6.1 6.12 host"; host only where the
# host is of KERNEL_ARCH), KERNEL_ARCH (amd64, or arm64 with qemu-system-aarch64), KERNEL_INITRAMFS
# (a ready initramfs: `make arm64-initramfs` builds the arm64 one; by default one is built from
# $OUTPUT), KERNEL_CACHE (tests/kernels/fetch.sh), KERNEL_TIMEOUT (seconds a guest may run, 900).
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
KDIR=$ROOT/tests/kernels
OUTPUT=${OUTPUT:-build}
case $OUTPUT in /*) ;; *) OUTPUT=$ROOT/$OUTPUT ;; esac
KERNELS=${KERNELS:-5.10 6.1 6.12 host}
ARCH=${KERNEL_ARCH:-amd64}
TIMEOUT=${KERNEL_TIMEOUT:-900}
WORK=$OUTPUT/kernels
passed=0
failed=0

if [ "$(id -u)" -ne 0 ]; then
	echo "kernels: must run as root (the host's captures load BPF programs)" >&2
	exit 1
fi

case $ARCH in
amd64)
	QEMU=(qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1G)
	CONSOLE=ttyS0
	;;
arm64)
	QEMU=(qemu-system-aarch64 -M virt -accel tcg -cpu max -smp 2 -m 1G)
	CONSOLE=ttyAMA0
	;;
*)
	echo "kernels: KERNEL_ARCH is amd64 or arm64, not $ARCH" >&2
	exit 2
	;;
esac

# count_results FILE: add the PASS and FAIL lines of check.py's output to the totals.
count_results() {
	local p f
	p=$(grep -c '^PASS ' "$1")
	f=$(grep -c '^FAIL ' "$1")
	passed=$((passed + p))
	failed=$((failed + f))
}

# A whole kernel failed before its checks ran: one FAIL line that says why.
kernel_failed() {
	echo "FAIL $1 boot: $2"
	failed=$((failed + 1))
}

run_host() {
	local out=$WORK/host/out
	rm -rf "$out"
	mkdir -p "$out"
	echo "kernels: host $(uname -r)"
	HPK_HOST=1 WL=$OUTPUT/e2e OUT=$out HOSTPROF=$OUTPUT/hostprof \
		PY_SCRIPT=$ROOT/tests/e2e/py_recurse.py sh "$KDIR/guest.sh"
	python3 "$KDIR/check.py" "$out" "$(uname -r)" host | tee "$WORK/host/results"
	count_results "$WORK/host/results"
}

# boot_guest VMLINUZ DIR: run the guest, its console into DIR/console.log, its files cut out
# into DIR/out (DIR/release: its kernel); false if it stopped before it finished. Sets secs.
boot_guest() {
	local start
	start=$(date +%s)
	timeout "$TIMEOUT" "${QEMU[@]}" -nographic -no-reboot -kernel "$1" \
		-initrd "$INITRAMFS" \
		-append "console=$CONSOLE quiet loglevel=1 panic=-1" >"$2/console.log" 2>&1
	secs=$(($(date +%s) - start))
	python3 "$KDIR/console.py" "$2/console.log" "$2/out" >"$2/release" 2>"$2/console.err"
}

run_guest() {
	local series=$1 dir=$WORK/$1 vmlinuz secs release machine
	mkdir -p "$dir"
	rm -rf "$dir/out"
	if ! vmlinuz=$("$KDIR/fetch.sh" "$series" "$ARCH" 2>"$dir/fetch.log"); then
		kernel_failed "$ARCH/$series" "cannot fetch the kernel: $(tail -3 "$dir/fetch.log" | tr '\n' ' ')"
		return
	fi
	echo "kernels: $ARCH/$series: booting $(cat "$(dirname "$vmlinuz")/package" 2>/dev/null) under qemu (TCG)"
	if ! boot_guest "$vmlinuz" "$dir"; then
		# Twice in CI (2026-11-26 and -27) a guest stopped at the start of one case (6.12, then
		# 6.1: both at the wall case), with nothing on its console, and a dozen reruns of the
		# same kernel did not do it again. A second failure is a failure; a first one is said,
		# and its console kept.
		mv "$dir/console.log" "$dir/console.first.log"
		echo "kernels: $ARCH/$series: $(cat "$dir/console.err") (after $secs s; its console: $dir/console.first.log): booting it once more"
		rm -rf "$dir/out"
		if ! boot_guest "$vmlinuz" "$dir"; then
			kernel_failed "$ARCH/$series" "$(cat "$dir/console.err") (after $secs s, the second time too; see $dir/console.log and console.first.log)"
			return
		fi
	fi
	read -r release machine <"$dir/release"
	echo "kernels: $ARCH/$series: $release ran its captures in $secs s"
	python3 "$KDIR/check.py" "$dir/out" "$release" "$ARCH/$series" | tee "$dir/results"
	count_results "$dir/results"
}

mkdir -p "$WORK"
INITRAMFS=${KERNEL_INITRAMFS:-$WORK/initramfs.cpio.gz}
if [ -z "${KERNEL_INITRAMFS:-}" ] && [ "$KERNELS" != host ]; then
	if ! HOSTPROF=$OUTPUT/hostprof WORKLOADS=$OUTPUT/e2e OUTPUT=$OUTPUT \
		"$KDIR/initramfs.sh" "$INITRAMFS"; then
		echo "kernels: cannot build the initramfs" >&2
		exit 1
	fi
fi
host_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
for k in $KERNELS; do
	if [ "$k" = host ] && [ "$host_arch" != "$ARCH" ]; then
		echo "kernels: host: skipped, the host is $host_arch and the build $ARCH"
	elif [ "$k" = host ]; then
		run_host
	else
		run_guest "$k"
	fi
done
echo "kernels ($ARCH): $passed passed, $failed failed"
[ "$failed" -eq 0 ]

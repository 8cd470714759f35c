#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Build the initramfs that the kernel matrix boots: busybox (static), hostprof and every shared
# library it loads, the e2e workloads, Debian's python3 with the few modules it needs to start,
# and tests/kernels/guest.sh as /init. The guest needs no disk and no network: it runs the
# captures and prints their outputs on the serial console, where tests/kernels/run.sh reads them.
#
# Usage: initramfs.sh OUT.cpio.gz [SYSROOT]
#   SYSROOT (default /) is where the libraries and python3 of the target architecture are found,
#   for a cross-built hostprof; HOSTPROF and WORKLOADS (default $OUTPUT/hostprof, $OUTPUT/e2e)
#   name what goes in, BUSYBOX the static busybox (default /bin/busybox), LDD the command that
#   lists a binary's libraries as ldd does (tests/kernels/elfdeps.sh for a foreign architecture).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:?usage: initramfs.sh OUT.cpio.gz [SYSROOT]}
SYSROOT=${2:-/}
OUTPUT=${OUTPUT:-$ROOT/build}
HOSTPROF=${HOSTPROF:-$OUTPUT/hostprof}
WORKLOADS=${WORKLOADS:-$OUTPUT/e2e}
BUSYBOX=${BUSYBOX:-/bin/busybox}
LDD=${LDD:-ldd}

for f in "$HOSTPROF" "$BUSYBOX" "$WORKLOADS/cpu_ratio"; do
	[ -e "$f" ] || { echo "initramfs: $f is missing (make, make e2e-workloads, apt-get install busybox-static)" >&2; exit 1; }
done
if readelf -l "$BUSYBOX" | grep -q 'program interpreter'; then
	echo "initramfs: $BUSYBOX is not static: apt-get install busybox-static" >&2
	exit 1
fi

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,sbin,proc,sys,dev,tmp,run,root,etc,var/cache,opt/e2e,usr/bin,usr/lib}
cp "$BUSYBOX" "$STAGE/bin/busybox"
for app in sh mount mkdir cat echo sleep base64 ls poweroff kill grep sed awk head tail wc \
	uname date rm cp id chmod dmesg env seq mknod stat printf tr test '['; do
	ln -sf busybox "$STAGE/bin/$app"
done
install -m 0755 "$ROOT/tests/kernels/guest.sh" "$STAGE/init"
echo 'root:x:0:0:root:/root:/bin/sh' >"$STAGE/etc/passwd"
echo 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >>"$STAGE/etc/passwd"
echo 'root:x:0:' >"$STAGE/etc/group"

# Copy a file from SYSROOT into the stage under the same path, with the directories it needs. A
# file not in SYSROOT comes from the host's own path: a cross build's libraries are installed by
# Debian multiarch (/usr/lib/aarch64-linux-gnu), and SYSROOT holds only what cannot be (python3,
# busybox).
stage_copy() {
	local src=$1 dst=$STAGE${2:-$1} from=$SYSROOT$1
	[ -e "$from" ] || from=$src
	mkdir -p "$(dirname "$dst")"
	cp -L "$from" "$dst"
}

# A binary's shared libraries, and the dynamic loader, under the paths it asks for.
stage_libs() {
	local lib
	for lib in $($LDD "$1" | awk '/=>/ && $3 ~ /^\// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'); do
		[ -e "$STAGE$lib" ] || stage_copy "$lib"
	done
}

install -m 0755 "$HOSTPROF" "$STAGE/usr/bin/hostprof"
stage_libs "$HOSTPROF"
cp -a "$WORKLOADS"/. "$STAGE/opt/e2e/"
for w in "$STAGE"/opt/e2e/*; do stage_libs "$w"; done
cp "$ROOT/tests/e2e/py_recurse.py" "$STAGE/opt/e2e/"

# python3: the interpreter and the modules it imports before running -c (encodings and the codecs
# behind it); the rest of the standard library is not needed by the workload.
PY=$(readlink -f "$SYSROOT/usr/bin/python3")
PYVER=$(basename "$PY")
stage_copy "/usr/bin/$PYVER"
ln -sf "$PYVER" "$STAGE/usr/bin/python3"
stage_libs "$PY"
mkdir -p "$STAGE/usr/lib/$PYVER"
cp -a "$SYSROOT/usr/lib/$PYVER/encodings" "$STAGE/usr/lib/$PYVER/"
for m in codecs io abc os stat posixpath genericpath _collections_abc _sitebuiltins site; do
	[ -e "$SYSROOT/usr/lib/$PYVER/$m.py" ] && cp "$SYSROOT/usr/lib/$PYVER/$m.py" "$STAGE/usr/lib/$PYVER/"
done

(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "initramfs: $OUT ($(du -h "$OUT" | cut -f1))"

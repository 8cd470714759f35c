#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A Debian trixie root with python3 (CPython 3.13), for the CPython frame tests: their
# interpreter runs from it in its own mount and PID namespaces, as in a container. Prints the
# root's path on stdout; what it does goes to stderr.
#
# Usage (root): trixie_root.sh
#
# The root is built once with debootstrap (minbase, python3 included) into PY_ROOT_CACHE
# (default /var/cache/hostprof-test/python-roots) and reused while its recipe (suite, variant,
# packages, architecture) is unchanged. It is built beside its final place and renamed there
# only when complete, with a stamp holding the recipe: a root without the stamp, or with another
# recipe, is a half-built or stale one (an interrupted build, a changed recipe) and is removed
# and built again. debootstrap mounts /proc and /sys inside the root while it runs; an
# interrupted build can leave them mounted, so they are unmounted before anything is removed,
# and rm never crosses into another file system.
# The mirror is DEBIAN_MIRROR, else the first Debian archive this machine's apt sources name.
set -euo pipefail

CACHE=${PY_ROOT_CACHE:-/var/cache/hostprof-test/python-roots}
SUITE=trixie
ARCH=$(dpkg --print-architecture)
RECIPE="suite=$SUITE variant=minbase include=python3 arch=$ARCH"
DIR=$CACHE/$SUITE-python3
STAMP=.hostprof-root-complete

say() {
	echo "trixie_root: $*" >&2
}

[ "$(id -u)" -eq 0 ] || {
	say "needs root (debootstrap, chroot)"
	exit 1
}

# The Debian archive of this machine's apt sources (one-line or deb822), else deb.debian.org.
mirror() {
	local m
	m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
		2>/dev/null | grep -v '^\s*#' | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ') || true
	echo "${m:-http://deb.debian.org/debian}"
}

complete() {
	[ -f "$1/$STAMP" ] && [ "$(cat "$1/$STAMP")" = "$RECIPE" ] && [ -x "$1/usr/bin/python3" ]
}

# remove_root DIR: unmount what an interrupted debootstrap left mounted inside, deepest first,
# then remove it without leaving its file system.
remove_root() {
	local d=$1 mp
	[ -e "$d" ] || return 0
	awk '{ print $2 }' /proc/self/mounts | grep -F "$d/" | sort -r | while read -r mp; do
		umount -l "$mp" 2>/dev/null || say "cannot unmount $mp"
	done
	if awk '{ print $2 }' /proc/self/mounts | grep -qF "$d/"; then
		say "$d still has file systems mounted inside; not removing it"
		exit 1
	fi
	rm -rf --one-file-system "$d"
}

mkdir -p "$CACHE"
exec 9>"$CACHE/$SUITE-python3.lock"
flock 9 # one build at a time; a second caller waits, then finds it complete

if complete "$DIR"; then
	echo "$DIR"
	exit 0
fi
if [ -e "$DIR" ]; then
	say "removing the half-built or stale root $DIR (no stamp, or not: $RECIPE)"
	remove_root "$DIR"
fi
if [ -e "$DIR.tmp" ]; then
	say "removing $DIR.tmp, left by an interrupted build"
	remove_root "$DIR.tmp"
fi
command -v debootstrap >/dev/null || {
	say "no debootstrap: make deps (scripts/deps.sh test) installs it"
	exit 1
}

MIRROR=${DEBIAN_MIRROR:-$(mirror)}
say "building a Debian $SUITE root with python3 from $MIRROR into $DIR (once; log: $CACHE/$SUITE-python3.log)"
t0=$(date +%s)
if ! debootstrap --arch="$ARCH" --variant=minbase --include=python3 "$SUITE" "$DIR.tmp" "$MIRROR" \
	>"$CACHE/$SUITE-python3.log" 2>&1; then
	tail -15 "$CACHE/$SUITE-python3.log" >&2
	say "debootstrap failed (log above); the half-built root is removed at the next run"
	exit 1
fi
if ! v=$(chroot "$DIR.tmp" /usr/bin/python3 -c 'import ctypes, sys; print(sys.version.split()[0])'); then
	say "the new root's python3 does not run"
	exit 1
fi
echo "$RECIPE" >"$DIR.tmp/$STAMP"
mv "$DIR.tmp" "$DIR"
say "built in $(($(date +%s) - t0)) s: Python $v, $(du -sh --one-file-system "$DIR" | cut -f1)"
echo "$DIR"

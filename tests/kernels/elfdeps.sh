#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# ldd for a binary of another architecture (a cross-built aarch64 hostprof), which the host's ldd
# cannot run: it walks DT_NEEDED (readelf -d) recursively and finds each library where the
# target's dynamic loader would, in the multiarch directories of the binary's architecture. They
# are looked for under each ROOT in turn, then under / (where Debian multiarch installs the arm64
# libraries: /usr/lib/aarch64-linux-gnu). The output is ldd's, which tests/kernels/initramfs.sh
# reads as LDD, with paths as the guest sees them:
#	libbpf.so.1 => /usr/lib/aarch64-linux-gnu/libbpf.so.1 (0)
#	/lib/ld-linux-aarch64.so.1 (0)
# Libraries found through a $ORIGIN run path travel with the binary and are not listed, and
# neither is one found nowhere (ldd's "not found" line has no path either).
#
# Usage: elfdeps.sh [--root DIR]... ELF
set -euo pipefail

roots=()
while [ $# -gt 1 ] && [ "$1" = --root ]; do
	roots+=("${2%/}")
	shift 2
done
ELF=${1:?usage: elfdeps.sh [--root DIR]... ELF}
roots+=("")

case $(readelf -h "$ELF" | awk -F: '/Machine:/ { gsub(/^ +/, "", $2); print $2 }') in
AArch64) triplet=aarch64-linux-gnu ;;
"Advanced Micro Devices X86-64") triplet=x86_64-linux-gnu ;;
*) echo "elfdeps: $ELF: unknown machine" >&2; exit 1 ;;
esac
# The directories glibc's loader searches without an ld.so.cache (the guest has none).
sysdirs=("/lib/$triplet" "/usr/lib/$triplet" /lib /usr/lib)

# The first ROOT holding PATH: the file on this host.
on_host() {
	local r
	for r in "${roots[@]}"; do
		if [ -e "$r$1" ]; then
			echo "$r$1"
			return 0
		fi
	done
	return 1
}

declare -A seen=()
# walk FILE: list FILE's libraries not yet seen, then theirs.
walk() {
	local file=$1 dir lib d host origin
	origin=$(dirname "$file")
	local -a needed=() runpath=()
	mapfile -t needed < <(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	IFS=: read -r -a runpath < <(readelf -d "$file" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p' | head -1) || true
	for lib in "${needed[@]}"; do
		[ -n "${seen[$lib]:-}" ] && continue
		seen[$lib]=1
		for d in "${runpath[@]}" "${sysdirs[@]}"; do
			case $d in
			'$ORIGIN'* | '${ORIGIN}'*)
				# Beside the binary (the e2e workloads' own libraries): copied with it.
				d=${d/'${ORIGIN}'/$origin}
				[ -e "${d/'$ORIGIN'/$origin}/$lib" ] && continue 2
				;;
			*)
				if host=$(on_host "$d/$lib"); then
					printf '\t%s => %s (0)\n' "$lib" "$d/$lib"
					walk "$host"
					continue 2
				fi
				;;
			esac
		done
		printf '\t%s => not found\n' "$lib"
	done
}

interp=$(readelf -l "$ELF" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
walk "$ELF"
[ -n "$interp" ] && printf '\t%s (0)\n' "$interp"
exit 0

#!/usr/bin/env bash
# Regenerate the checked-in vmlinux/<arch>/vmlinux.h from kernel BTF.
#
#   vmlinux/update.sh [--debian] [--out DIR] [x86_64] [arm64]     (no arch: both)
#
# x86_64: from the running kernel's /sys/kernel/btf/vmlinux when this host is x86_64 (that is how
#         the checked-in header was made), else, or with --debian, from Debian's amd64 kernel.
# arm64:  always from Debian's arm64 kernel package, so that any host can produce it.
#
# The Debian path downloads linux-image-<abi>-<arch>-unsigned (the ABI the linux-image-<arch>
# meta-package currently points at) with apt-get, using a private apt state in a temp dir: the
# host's apt configuration and architecture list are not touched. The kernel's .BTF section is
# carved out of the vmlinuz (raw arm64 Image, Image.gz, EFI zboot or x86 bzImage) and dumped with
# bpftool. Every header is checked (key types present, a CO-RE perf_event program compiles)
# before it replaces the old one.
#
# Environment: DEBIAN_MIRROR (http://deb.debian.org), DEBIAN_SUITE (bookworm), KERNEL_PKG (a
# specific package instead of the meta-package's choice), BPFTOOL, CLANG, PYTHON3.
# Needs: apt-get, dpkg-deb, python3, bpftool, debian-archive-keyring; clang for the compile check.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$here
force_debian=0
arches=()
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org}
DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}
BPFTOOL=${BPFTOOL:-bpftool}
CLANG=${CLANG:-clang}
PYTHON3=${PYTHON3:-python3}

usage() {
	sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--debian) force_debian=1 ;;
	--out)
		[ $# -ge 2 ] || usage 2
		out=$2
		shift
		;;
	-h | --help) usage 0 ;;
	x86_64 | arm64) arches+=("$1") ;;
	*)
		echo "update.sh: unknown argument '$1'" >&2
		usage 2
		;;
	esac
	shift
done
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 arm64)

tmp=$(mktemp -d /tmp/hostprof-vmlinux.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

die() {
	echo "update.sh: $*" >&2
	exit 1
}

# Print the raw BTF blob found in a kernel image. Raw BTF starts with a header: u16 magic 0xEB9F,
# u8 version 1, u8 flags 0, u32 hdr_len, u32 type_off, type_len, str_off, str_len (offsets
# relative to the end of the header). The kernel itself rejects BTF whose sections overlap or
# leave gaps, so those rules tell the real blob from a chance occurrence of the magic.
extract_btf() { # vmlinuz blob
	"$PYTHON3" - "$1" "$2" <<'EOF'
import bz2, lzma, struct, subprocess, sys, zlib

MAGIC = b"\x9f\xeb\x01\x00"  # 0xEB9F little-endian, version 1, flags 0


def decompress(buf):
    """Decompress a stream at the start of buf, ignoring what trails it (the kernel build
    appends the uncompressed size). None if buf does not start with a known format."""
    try:
        if buf[:3] == b"\x1f\x8b\x08":
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(buf)
        if buf[:6] == b"\xfd7zXZ\x00":
            return lzma.LZMADecompressor(lzma.FORMAT_XZ).decompress(buf)
        if buf[:3] == b"\x5d\x00\x00":
            return lzma.LZMADecompressor(lzma.FORMAT_ALONE).decompress(buf)
        if buf[:3] == b"BZh":
            return bz2.BZ2Decompressor().decompress(buf)
        for magic, tool in ((b"\x28\xb5\x2f\xfd", "zstd"), (b"\x02\x21\x4c\x18", "lz4")):
            if buf[:4] == magic:
                # Both tools complain about the trailing size but have written the data.
                p = subprocess.run([tool, "-dc"], input=buf, capture_output=True)
                return p.stdout or None
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as e:
        print(f"extract: decompression failed: {e}", file=sys.stderr)
    return None


def images(data):
    """The kernel images a vmlinuz may hold, most direct first."""
    yield "raw", data  # arm64 Image (Debian ships it uncompressed), or an ELF vmlinux
    if data[:2] == b"MZ" and data[4:8] == b"zimg":  # EFI zboot: u32 payload offset, size
        off, size = struct.unpack_from("<II", data, 8)
        yield "EFI zboot", decompress(data[off:off + size])
    if data[0x202:0x206] == b"HdrS":  # x86 bzImage: payload follows the real-mode setup
        setup_sects = data[0x1F1] or 4
        base = (setup_sects + 1) * 512
        off, size = struct.unpack_from("<II", data, 0x248)
        yield "bzImage", decompress(data[base + off:base + off + size])
    yield "compressed", decompress(data)  # Image.gz and friends


def btf_at(data, pos):
    """Length of a valid BTF blob at pos, or 0."""
    if pos + 24 > len(data):
        return 0
    hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<5I", data, pos + 4)
    if hdr_len < 24 or hdr_len > 256 or not type_len or not str_len or type_off % 4:
        return 0
    secs = sorted([(type_off, type_len), (str_off, str_len)])
    if secs[0][0] != 0 or secs[0][0] + secs[0][1] != secs[1][0]:
        return 0
    total = hdr_len + secs[1][0] + secs[1][1]
    if pos + total > len(data):
        return 0
    strs = data[pos + hdr_len + str_off:pos + hdr_len + str_off + str_len]
    if strs[0] != 0 or strs[-1] != 0:  # string 0 is "", and the last string is terminated
        return 0
    return total


def find_btf(data):
    best = (0, 0)
    pos = data.find(MAGIC)
    while pos >= 0:
        n = btf_at(data, pos)
        if n > best[1]:
            best = (pos, n)
        pos = data.find(MAGIC, pos + 1)
    return best


data = open(sys.argv[1], "rb").read()
for kind, image in images(data):
    if not image:
        continue
    pos, size = find_btf(image)
    if size:
        open(sys.argv[2], "wb").write(image[pos:pos + size])
        print(f"extract: {size} bytes of BTF at offset {pos:#x} of the {kind} image "
              f"({len(image)} bytes)", file=sys.stderr)
        sys.exit(0)
sys.exit(f"extract: no BTF found in {sys.argv[1]}")
EOF
}

# Fail unless the header has the types hostprof relies on and a CO-RE perf_event program that
# reads the sampled IP compiles against it for that architecture.
verify_header() { # arch header
	local arch=$1 h=$2 t target
	local types=("struct task_struct {" "struct bpf_perf_event_data {")
	case $arch in
	x86_64) types+=("struct pt_regs {") target=x86 ;;
	arm64) types+=("struct user_pt_regs {") target=arm64 ;;
	esac
	for t in "${types[@]}"; do
		grep -qF "$t" "$h" || die "$arch: '$t' missing from the generated header"
	done
	if ! command -v "$CLANG" >/dev/null; then
		echo "update.sh: $CLANG not found, compile check skipped" >&2
		return 0
	fi
	mkdir -p "$tmp/cc-$arch"
	cp "$h" "$tmp/cc-$arch/vmlinux.h"
	cat >"$tmp/cc-$arch/probe.bpf.c" <<'EOF'
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

SEC("perf_event")
int probe(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 ip = PT_REGS_IP(&ctx->regs);

	return ip != 0 && BPF_CORE_READ(task, group_leader, tgid) > 0;
}
EOF
	"$CLANG" -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$target -I"$tmp/cc-$arch" \
		-c "$tmp/cc-$arch/probe.bpf.c" -o "$tmp/cc-$arch/probe.bpf.o" ||
		die "$arch: a BPF program does not compile against the generated header"
}

# Write $out/<arch>/vmlinux.h from a BTF file, only once it has been verified.
install_header() { # arch btf
	local arch=$1 btf=$2 h=$tmp/vmlinux-$1.h
	"$BPFTOOL" btf dump file "$btf" format c >"$h" || die "$arch: bpftool btf dump failed"
	verify_header "$arch" "$h"
	mkdir -p "$out/$arch"
	mv "$h" "$out/$arch/vmlinux.h"
	echo "$arch: wrote $out/$arch/vmlinux.h ($(wc -l <"$out/$arch/vmlinux.h") lines)"
}

from_running_kernel() { # arch
	[ -r /sys/kernel/btf/vmlinux ] || die "/sys/kernel/btf/vmlinux unreadable (CONFIG_DEBUG_INFO_BTF?)"
	echo "$1: from the running kernel $(uname -r), $("$BPFTOOL" version | head -n 1)"
	install_header "$1" /sys/kernel/btf/vmlinux
}

from_debian() { # arch
	local arch=$1 darch pkg meta version st=$tmp/apt-$1 apt vmlinuz
	case $arch in
	x86_64) darch=amd64 ;;
	arm64) darch=arm64 ;;
	esac
	mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$st/sources" "$st/prefs" "$st/dl"
	cat >"$st/sources/debian.sources" <<EOF
Types: deb
URIs: $DEBIAN_MIRROR/debian
Suites: $DEBIAN_SUITE $DEBIAN_SUITE-updates
Components: main
Architectures: $darch
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $DEBIAN_MIRROR/debian-security
Suites: $DEBIAN_SUITE-security
Components: main
Architectures: $darch
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	# Every path apt would read or write points into $st, and the architecture is set for
	# these commands only: the host's sources, lists, dpkg status and
	# `dpkg --print-foreign-architectures` stay as they are.
	apt=(-q -o "APT::Architecture=$darch" -o "APT::Architectures::=$darch"
		-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$st/sources"
		-o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$st/prefs"
		-o "Dir::State::Lists=$st/lists" -o "Dir::State::status=/dev/null"
		-o "Dir::Cache=$st/cache")
	# apt drops to the _apt user to download; let it write into our private dirs.
	if [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1; then
		chmod 0755 "$tmp" "$st"
		chown _apt "$st/lists/partial" "$st/cache/archives/partial" "$st/dl"
	fi
	apt-get "${apt[@]}" update >"$st/update.log" 2>&1 ||
		{ cat "$st/update.log" >&2; die "$arch: apt-get update failed"; }

	meta=linux-image-$darch
	if [ -n "${KERNEL_PKG:-}" ]; then
		pkg=$KERNEL_PKG
	else
		# The meta-package depends on the current ABI's signed image; the -unsigned one
		# holds the same kernel without the EFI signature.
		pkg=$(apt-cache "${apt[@]}" depends "$meta" |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
		[ -n "$pkg" ] || die "$arch: cannot resolve $meta"
		if apt-cache "${apt[@]}" show "$pkg-unsigned" >/dev/null 2>&1; then
			pkg=$pkg-unsigned
		fi
	fi
	version=$(apt-cache "${apt[@]}" show --no-all-versions "$pkg" |
		awk '$1 == "Version:" { print $2; exit }')
	[ -n "$version" ] || die "$arch: package $pkg not found in $DEBIAN_SUITE"
	echo "$arch: from Debian $DEBIAN_SUITE $pkg $version, $("$BPFTOOL" version | head -n 1)"
	(cd "$st/dl" && apt-get "${apt[@]}" download "$pkg=$version" >"$st/download.log" 2>&1) ||
		{ cat "$st/download.log" >&2; die "$arch: download of $pkg failed"; }

	dpkg-deb --fsys-tarfile "$st"/dl/*.deb | tar -x -C "$st" --wildcards './boot/vmlinuz-*' ||
		die "$arch: no /boot/vmlinuz-* in $pkg"
	vmlinuz=("$st"/boot/vmlinuz-*)
	rm -f "$st"/dl/*.deb
	extract_btf "${vmlinuz[0]}" "$st/vmlinux.btf"
	install_header "$arch" "$st/vmlinux.btf"
}

for arch in "${arches[@]}"; do
	if [ "$arch" = x86_64 ] && [ "$(uname -m)" = x86_64 ] && [ "$force_debian" -eq 0 ]; then
		from_running_kernel "$arch"
	else
		from_debian "$arch"
	fi
done

#!/usr/bin/env bash
# Install the Debian packages that hostprof needs, and only those that are missing, so that a
# second run costs one dpkg-query. Usage: scripts/deps.sh [build|test|arm64]
set -euo pipefail

build_pkgs=(make gcc clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
	protobuf-c-compiler libprotobuf-c-dev libcurl4-gnutls-dev libssh2-1-dev nettle-dev pkg-config
	libiberty-dev libyaml-dev libjson-c-dev libmicrohttpd-dev libsystemd-dev)
# libcurl's GnuTLS build, the one libdebuginfod already loads: one libcurl in the process, and
# OpenSSL never initialised (it kept ~1.7 MiB more of libcrypto resident for the agent's life).
# libssh2-1-dev: libcurl's SSH backend is initialised without its OpenSSL crypto
# (src/base/curl_client.c says why).
# liblzma decompresses MiniDebugInfo (.gnu_debugdata, the symbols Fedora and RHEL binaries keep).
build_pkgs+=(liblzma-dev)
# libdebuginfod-dev: the client library that fetches separate debug files by build-id from the
# servers in DEBUGINFOD_URLS (src/symbols/debuginfod_fetch.c).
build_pkgs+=(libdebuginfod-dev)
# go tool pprof decodes our pprof output independently; protoc decodes protobuf by schema.
# openssl makes the gRPC test receiver's TLS certificate.
test_pkgs=(golang-go protobuf-compiler python3 clang-format cppcheck binutils openssl g++ chromium tmux)
# The unwinding tests: libc's symbols (libc6-dbg) name the frames that stacks must pass through,
# and perf (linux-perf) is the independent DWARF unwinder they are compared with.
test_pkgs+=(libc6-dbg linux-perf)
# make bench-symbolize compares hostprof's DWARF symbolization with eu-addr2line (elfutils),
# addr2line (binutils, above), llvm-symbolizer (llvm, a build package) and blazecli (built with
# cargo: bench/symbolizers.mk) on libc (libc6-dbg) and on libstdc++'s unstripped copy
# (libstdc++6-12-dbg: C++ namespaces, classes and deep inlining).
test_pkgs+=(elfutils libstdc++6-12-dbg)
# GNU time (/usr/bin/time -f %M): the peak RSS of each process that benchmark compares.
test_pkgs+=(time)
# lld links the arm64 unwind-table fixture (clang --target=aarch64-linux-gnu -fuse-ld=lld): the
# aarch64 CFI is checked on any host. Without it the test skips arm64.
test_pkgs+=(lld)
# xz compresses the MiniDebugInfo fixtures (.gnu_debugdata), as distributions make them.
test_pkgs+=(xz-utils)
# make fuzz (and its short run in make check) links libFuzzer and the sanitizer runtimes of clang,
# which libclang-rt-dev holds (clang only recommends it).
test_pkgs+=(libclang-rt-dev)
# The agent's deployment artifacts: yamllint lints the chart and the example config, and
# systemd-analyze (package systemd) verifies the unit.
test_pkgs+=(yamllint systemd)
# debuginfod: a real server on loopback serves the fixtures' debug files to the fetcher's test
# (tests/unit/test_debuginfod.c).
test_pkgs+=(debuginfod)
# strace: the hostile-process suite (tests/e2e/hostile.sh) records every file the agent opens.
test_pkgs+=(strace)
# The overhead report compares hostprof with bpftrace (and perf, above); make test runs its smoke.
test_pkgs+=(bpftrace)
# The kernel matrix (tests/kernels): Debian's cloud kernels booted under qemu (software emulation),
# an initramfs of busybox (static) made with cpio; apt fetches the kernels with the archive's keys.
test_pkgs+=(qemu-system-x86 busybox-static cpio debian-archive-keyring)
# debootstrap builds the Debian trixie root whose Python 3.13 runs in its own mount and PID
# namespaces, as in a container, for the CPython frame tests (tests/e2e/python/trixie_root.sh).
test_pkgs+=(debootstrap)
# Node.js and npm run the gRPC test receiver (@grpc/grpc-js from npm). A machine may already have
# a Node.js that bundles npm (nodesource's), which Debian's npm package would conflict with.
if ! command -v npm >/dev/null 2>&1; then
	test_pkgs+=(nodejs npm)
fi

# arm64 (make arm64): the cross compilers and the arm64 copies of the build's libraries, installed
# beside the amd64 ones through Debian multiarch (/usr/lib/aarch64-linux-gnu). Multi-Arch: same
# packages must be the same version on both architectures, so apt may upgrade an amd64 library to
# the archive's version along with its arm64 twin. libstdc++6:arm64 runs the C++ workload in the
# guest; qemu-system-arm boots it, cpio makes its initramfs.
arm64_pkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-system-arm cpio)
for p in libbpf-dev libelf-dev libdw-dev zlib1g-dev libprotobuf-c-dev libcurl4-gnutls-dev \
	libssh2-1-dev nettle-dev libiberty-dev libyaml-dev libjson-c-dev libmicrohttpd-dev \
	libsystemd-dev liblzma-dev libdebuginfod-dev libstdc++6; do
	arm64_pkgs+=("$p:arm64")
done

want=("${build_pkgs[@]}")
case "${1:-build}" in
test) want+=("${test_pkgs[@]}") ;;
arm64) want+=("${arm64_pkgs[@]}") ;;
esac

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages: ${missing[*]}" >&2
	echo "deps: run 'make deps' as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The :arm64 packages are only found once dpkg knows the architecture (the update below reads
# its package lists).
if [ "${1:-build}" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

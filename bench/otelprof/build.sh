#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Build the OpenTelemetry eBPF profiler (go.opentelemetry.io/ebpf-profiler, the release pinned in
# bench/otelprof/go.mod, from the Go module proxy; its BPF objects ship inside the module) and
# bench/otelprof/receiver, the OTLP gRPC receiver it exports to in bench/report.sh, into DIR.
#
# Usage: build.sh DIR      (bench/otelprof.mk passes /var/cache/hostprof-test/ebpf-profiler-VERSION)
#
# DIR keeps the two binaries and a stamp: the sha256 of everything they are built from. A run
# whose stamp matches does nothing, so a second `make bench` (or CI on the same machine) reuses
# them; any change to the inputs rebuilds.
#
# The profiler is built from a copy of the module's source (checked against go.sum) in which one
# file is ours: rlimit/rlimit.go, by bench/otelprof/overlay/rlimit.go. Its own raises the memlock
# hard limit, which root without CAP_SYS_RESOURCE (a container, this machine) may not, and then
# refuses to start; ours leaves the limit alone in that case (BPF memory is charged to the memory
# cgroup since Linux 5.11). `go build -overlay` cannot replace files of the module cache, hence
# the copy. The profiler is built with its own go.mod and go.sum, as its release is.
set -euo pipefail

DIR=${1:?usage: build.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
GO=${GO:-go}
command -v "$GO" >/dev/null || {
	echo "otelprof: '$GO' not found: the OpenTelemetry eBPF profiler is built with Go (>= 1.24)" >&2
	exit 1
}
# Older ones (Debian's golang-go in bookworm is 1.19) stop at the module's `go 1.24` line with
# less to go on than this.
gov=$("$GO" env GOVERSION)
case $gov in
go1.2[4-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
*)
	echo "otelprof: $GO is $gov; the OpenTelemetry eBPF profiler needs Go >= 1.24 (GO=/path/to/go)" >&2
	exit 1
	;;
esac

stamp=$(cd "$here" && cat go.mod go.sum overlay/rlimit.go receiver/main.go build.sh | sha256sum | cut -d' ' -f1)
if [ -x "$DIR/ebpf-profiler" ] && [ -x "$DIR/otlp-profiles-receiver" ] &&
	[ "$(cat "$DIR/.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
mkdir -p "$DIR"
rm -f "$DIR/.stamp"
export GOFLAGS="${GOFLAGS:-} -mod=readonly -trimpath"

# The module's source, verified against the hash in our go.sum.
src=$(cd "$here" && "$GO" mod download -json go.opentelemetry.io/ebpf-profiler |
	awk -F'"' '$2 == "Dir" { print $4 }')
[ -n "$src" ] && [ -f "$src/main.go" ] || {
	echo "otelprof: go mod download go.opentelemetry.io/ebpf-profiler gave no source (see above)" >&2
	exit 1
}
rm -rf "$DIR/src"
cp -r "$src" "$DIR/src"
chmod -R u+w "$DIR/src"
cp "$here/overlay/rlimit.go" "$DIR/src/rlimit/rlimit.go"
echo "  GO       $DIR/ebpf-profiler"
(cd "$DIR/src" && nice "$GO" build -o "$DIR/ebpf-profiler.tmp" .)
mv "$DIR/ebpf-profiler.tmp" "$DIR/ebpf-profiler"
rm -rf "$DIR/src"

echo "  GO       $DIR/otlp-profiles-receiver"
(cd "$here" && nice "$GO" build -o "$DIR/otlp-profiles-receiver" ./receiver)
echo "$stamp" >"$DIR/.stamp"

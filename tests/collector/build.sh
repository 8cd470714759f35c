#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Build the OpenTelemetry Collector of the end-to-end tests with the Collector's own builder
# (go.opentelemetry.io/collector/cmd/builder), and print the path of the binary.
#
# Usage: build.sh VERSION        e.g. build.sh 0.161.0
#
# The builder and every module it compiles in (tests/collector/builder.yaml) are at VERSION. The
# binary is cached in COLLECTOR_CACHE (default /var/cache/hostprof-test/collector), in a folder
# named after VERSION and a hash of builder.yaml, so a second run, or a fresh clone, reuses it
# without asking the network, and a change of either builds anew. Go's module and build caches
# live there too (go/), so that a new VERSION downloads only what changed; the build cache is
# trimmed after a build, as only the binary is used.
set -euo pipefail

VERSION=${1:?usage: build.sh VERSION}
case $VERSION in
[0-9]*.[0-9]*.[0-9]*) ;;
*)
	echo "collector: version '$VERSION' is not of the form 0.161.0" >&2
	exit 2
	;;
esac
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${COLLECTOR_CACHE:-/var/cache/hostprof-test/collector}
HASH=$(sha256sum "$HERE/builder.yaml" | cut -c1-12)
DIR=$CACHE/v$VERSION-$HASH
BIN=$DIR/otelcol-hostprof

if [ -x "$BIN" ]; then
	echo "$BIN"
	exit 0
fi
command -v go >/dev/null || {
	echo "collector: no go command: the Collector is built with Go (make deps)" >&2
	exit 1
}

mkdir -p "$CACHE/go"
TMP=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The Collector's go.mod names the Go it needs; an older local Go fetches that toolchain from
# the module proxy (GOTOOLCHAIN's default), like any module.
export GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build GOFLAGS="-modcacherw -buildvcs=false"
export GOBIN=$TMP/bin CGO_ENABLED=0
t0=$(date +%s)
echo "collector: building the OpenTelemetry Collector v$VERSION into $DIR (a few minutes, once)" >&2
go install "go.opentelemetry.io/collector/cmd/builder@v$VERSION" >&2
sed -e "s/@VERSION@/$VERSION/g" -e "s|@OUTPUT@|$TMP/src|" "$HERE/builder.yaml" >"$TMP/builder.yaml"
"$TMP/bin/builder" --config "$TMP/builder.yaml" >"$TMP/builder.log" 2>&1 || {
	tail -30 "$TMP/builder.log" >&2
	echo "collector: the builder failed (log above)" >&2
	exit 1
}
"$TMP/src/otelcol-hostprof" --version >&2
mkdir -p "$DIR"
cp "$TMP/builder.yaml" "$TMP/builder.log" "$DIR/"
mv "$TMP/src/otelcol-hostprof" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
go clean -cache
echo "collector: built in $(($(date +%s) - t0)) s" >&2
echo "$BIN"

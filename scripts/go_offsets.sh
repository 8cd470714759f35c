#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Print the runtime layout table of src/symbols/go_labels_ref.c again, from the DWARF of a small
# program built by each Go release (the latest patch of each minor, fetched from the Go module
# proxy as golang.org/toolchain, as GOTOOLCHAIN does), for amd64 and arm64. Run it when a new Go
# release comes out, and add its line to the table (and raise GO_LABELS_MAX_MINOR). A developer's
# tool: make test does not run it (it downloads about 70 MB per release).
#
# Usage: scripts/go_offsets.sh [MINOR...]   (default: 19 to the newest the proxy lists)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local

versions=$(go list -m -versions golang.org/toolchain | tr ' ' '\n' | grep -E 'go1\.[0-9]+\.[0-9]+\.linux-amd64$' |
	sed -E 's/.*-go(1\.[0-9]+\.[0-9]+)\.linux-amd64/\1/' | sort -V)
minors=${*:-$(echo "$versions" | cut -d. -f2 | sort -n | uniq | awk '$1 >= 19')}

(cd "$ROOT/scripts/go_offsets" && go build -o "$WORK/gooffsets" .)
mkdir -p "$WORK/prog"
cat >"$WORK/prog/main.go" <<'GO'
package main

import (
	"context"
	"runtime/pprof"
)

func main() { pprof.Do(context.Background(), pprof.Labels("k", "v"), func(context.Context) {}) }
GO
printf 'module prog\n\ngo 1.19\n' >"$WORK/prog/go.mod"
for minor in $minors; do
	v=$(echo "$versions" | grep -E "^1\.$minor\." | tail -1)
	[ -n "$v" ] || { echo "go_offsets: no go1.$minor release on the proxy" >&2; continue; }
	for arch in amd64 arm64; do
		(cd "$WORK/prog" && GOTOOLCHAIN=go$v GOARCH=$arch CGO_ENABLED=0 go build -o "$WORK/p-$v-$arch" .)
		"$WORK/gooffsets" "$WORK/p-$v-$arch"
	done
done

#!/usr/bin/env bash
# The real Helm for make deploy-check: helm.sh/helm/v3 at a pinned version, built from the Go
# module proxy (its go.sum checked against the checksum database, as any `go install` is) into a
# cache that a second run reuses. Usage: tests/deploy/build-helm.sh VERSION DIR -> DIR/helm
#
# The module and build caches are private to the build and removed after it (about 1.1 GB for
# one helm of 75 MB): the binary is the cache, and a new VERSION is a new DIR.
set -euo pipefail

version=${1:?usage: build-helm.sh VERSION DIR}
dir=${2:?usage: build-helm.sh VERSION DIR}

die() {
	echo "build-helm: $*" >&2
	exit 1
}

# Helm v3.22's go.mod asks for Go 1.26. Debian's golang-go (1.19) is too old: the Go of the
# machine image (/usr/local/go) must come first on PATH.
want_go=1.26
command -v go >/dev/null || die "go is missing: helm $version needs Go $want_go or newer on PATH"
have_go=$(go env GOVERSION | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')
oldest=$(printf '%s\n' "$want_go" "$have_go" | sort -V | head -n 1)
[ -n "$have_go" ] && [ "$oldest" = "$want_go" ] ||
	die "helm $version needs Go $want_go or newer; $(command -v go) is $(go env GOVERSION)"
# GOTOOLCHAIN=local: the machine's own Go, never one downloaded because go.mod asks for it.
export GOTOOLCHAIN=local CGO_ENABLED=0 GO111MODULE=on
mkdir -p "$(dirname "$dir")"
work=$(mktemp -d "$dir.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GOPATH=$work/gopath GOCACHE=$work/gocache GOBIN=$work/bin
# -modcacherw: the module cache can then be removed with rm -rf.
export GOFLAGS="-buildvcs=false -modcacherw"
# Helm takes its version from this variable (-X), as its own release builds do; without it
# `helm version` prints only v3.NN.
if ! go install -trimpath \
	-ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
	"helm.sh/helm/v3/cmd/helm@$version" >"$work/log" 2>&1; then
	grep -v '^go: downloading ' "$work/log" >&2 || true
	die "go install helm.sh/helm/v3/cmd/helm@$version failed ($(go version))"
fi
got=$("$work/bin/helm" version --template '{{.Version}}')
[ "$got" = "$version" ] || die "the helm built says it is $got, want $version"
mkdir -p "$dir"
mv "$work/bin/helm" "$dir/helm.tmp"
mv "$dir/helm.tmp" "$dir/helm"

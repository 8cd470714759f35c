#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Fetch a Debian cloud kernel for the kernel matrix and print the path of its vmlinuz.
#
# Usage: fetch.sh SERIES [ARCH]     e.g. fetch.sh 6.1, fetch.sh 5.10 arm64 (ARCH default amd64)
#
# The newest linux-image-cloud-ARCH of the series in Debian's archive (5.10: bullseye, 6.1:
# bookworm, 6.12: trixie, with their security updates), through apt with a private sources list,
# state and cache under KERNEL_CACHE (default /var/cache/hostprof-test/kernels): the host's own apt
# setup is not touched. A kernel fetched once is used again without asking the network;
# KERNEL_REFRESH=1 looks for a newer one of the series.
set -euo pipefail

SERIES=${1:?usage: fetch.sh SERIES [ARCH]}
ARCH=${2:-amd64}
CACHE=${KERNEL_CACHE:-/var/cache/hostprof-test/kernels}
DIR=$CACHE/$ARCH/$SERIES
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

case $SERIES in
5.10) SUITE=bullseye ;;
6.1) SUITE=bookworm ;;
6.12) SUITE=trixie ;;
*)
	echo "fetch: no Debian release carries the $SERIES series (5.10, 6.1 or 6.12)" >&2
	exit 2
	;;
esac

if [ -z "${KERNEL_REFRESH:-}" ] && [ -e "$DIR/vmlinuz" ]; then
	echo "$DIR/vmlinuz"
	exit 0
fi
[ -r "$KEYRING" ] || {
	echo "fetch: $KEYRING is missing: apt-get install debian-archive-keyring" >&2
	exit 1
}

# A private apt: its own configuration (APT_CONFIG), so that none of the host's apt.conf.d,
# sources or index targets apply.
APTDIR=$CACHE/apt/$SUITE-$ARCH
mkdir -p "$APTDIR"/etc/apt.conf.d "$APTDIR"/etc/preferences.d "$APTDIR"/etc/sources.list.d \
	"$APTDIR"/state/lists/partial "$APTDIR"/cache/archives/partial "$DIR"
cat >"$APTDIR/etc/sources.list" <<SOURCES
deb [arch=$ARCH signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main
deb [arch=$ARCH signed-by=$KEYRING] http://deb.debian.org/debian-security $SUITE-security main
SOURCES
cat >"$APTDIR/apt.conf" <<CONF
Dir::Etc "$APTDIR/etc";
Dir::Etc::Parts "$APTDIR/etc/apt.conf.d";
Dir::Etc::SourceList "$APTDIR/etc/sources.list";
Dir::Etc::SourceParts "$APTDIR/etc/sources.list.d";
Dir::Etc::PreferencesParts "$APTDIR/etc/preferences.d";
Dir::State "$APTDIR/state";
Dir::State::status "$APTDIR/state/status";
Dir::Cache "$APTDIR/cache";
APT::Architecture "$ARCH";
APT::Architectures { "$ARCH"; };
Debug::NoLocking "true";
Acquire::Languages "none";
APT::Sandbox::User "root";
CONF
touch "$APTDIR/state/status"
export APT_CONFIG=$APTDIR/apt.conf
if ! apt-get -qq update 2>"$APTDIR/update.log"; then
	echo "fetch: apt-get update of Debian $SUITE failed (is deb.debian.org reachable?):" >&2
	cat "$APTDIR/update.log" >&2
	exit 1
fi
meta=linux-image-cloud-$ARCH
versions=$(apt-cache madison "$meta" | awk -v s="$SERIES." 'index($3, s) == 1 { print $3 }' |
	sort -Vr)
if [ -z "$versions" ]; then
	echo "fetch: Debian $SUITE has no $meta of the $SERIES series" >&2
	exit 1
fi
# The newest first; an index may name a package that its mirror no longer has (seen with
# bullseye-security's arm64), and then the next one does.
pkg=
for version in $versions; do
	candidate=$(apt-cache show "$meta=$version" |
		sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)
	rm -rf "$DIR/deb"
	mkdir -p "$DIR/deb"
	if (cd "$DIR/deb" && apt-get -qq download "$candidate=$version" 2>>"$APTDIR/download.log"); then
		pkg=$candidate
		break
	fi
	echo "fetch: $candidate $version could not be downloaded; trying an older one" >&2
done
if [ -z "$pkg" ]; then
	echo "fetch: no $meta of the $SERIES series could be downloaded:" >&2
	cat "$APTDIR/download.log" >&2
	exit 1
fi
rm -rf "$DIR/root"
dpkg-deb -x "$DIR"/deb/*.deb "$DIR/root"
image=$(ls "$DIR"/root/boot/vmlinu[xz]-* | head -1)
cp "$image" "$DIR/vmlinuz.tmp"
cp "$DIR"/root/boot/config-* "$DIR/config"
mv "$DIR/vmlinuz.tmp" "$DIR/vmlinuz"
echo "$pkg $version" >"$DIR/package"
rm -rf "$DIR/deb" "$DIR/root"
echo "fetch: $pkg $version" >&2
echo "$DIR/vmlinuz"

#!/usr/bin/env bash
# make deploy-check: the deployment artifacts of `hostprof agent`, checked without a cluster, a
# running systemd or Docker. Installs nothing outside a temporary directory.
#
#   1. the systemd unit: `make install` into a temporary prefix, then `systemd-analyze verify`
#      (ExecStart= points at the installed copy of the real binary) and `security --offline`;
#      `make install DESTDIR=` lays files out as documented and keeps an existing config;
#   2. systemd/config.yaml: every key the agent knows is set (the agent's --print-config names
#      the file beside each key it took from it), and it agrees with the unit (chartcheck unit);
#   3. yamllint --strict on the YAML written by hand (.yamllint);
#   4. the Helm chart, by the real Helm ($HELM, which make builds: tests/deploy/helm.mk):
#      `helm lint --strict` and `helm template` with values.yaml, each example and
#      tests/deploy/values-*.yaml; then what Helm does not check, over Helm's output
#      (tests/deploy/chartcheck: hostPID, capabilities, probes, mounts, the config against the
#      pod, the token only in a Secret); written to $OUTPUT/deploy/<case>/ and linted;
#   (and every config that a deployment ships loaded by `hostprof agent --print-config` itself);
#   5. broken inputs that must fail: an appVersion that is not VERSION, a template syntax error,
#      an undefined value (rendered as an empty field), an unknown function, invalid YAML, a pod
#      without hostPID, probes on the wrong path, an unknown config key (in the chart's values
#      and in the example config), a token header without a token, a token in clear, an
#      incomplete example config, a unit that hides /proc/kallsyms, a unit with a typo;
#   6. the Dockerfile's runtime packages against the libraries that build/hostprof needs (and two
#      broken copies that must fail). The image itself is not built: that takes Docker and
#      minutes.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out_arg=${OUTPUT:-build}
out=$out_arg
case $out in /*) ;; *) out=$top/$out ;; esac
# `make install` as deploy-check runs it: with the binary that `make` built, never rebuilt
# (-o), so that a source being edited meanwhile cannot start a compile.
make=${MAKE:-make}
install_bin() {
	"$make" --no-print-directory -s -o "$out_arg/hostprof" install OUTPUT="$out_arg" "$@"
}
bin=$out/hostprof
dir=$out/deploy
chart=helm/hostprof
chk=$dir/chartcheck
helm=${HELM:-}
release=hostprof
ns=hostprof

say() { printf '  %-8s %s\n' "$1" "$2"; }
die() {
	echo "deploy-check: $*" >&2
	exit 1
}

[ -x "$bin" ] || die "$bin is missing: run make first"
if [ -z "$helm" ] || [ ! -x "$helm" ]; then
	die "no helm in HELM=$helm: run make deploy-check (it builds one)"
fi
for cmd in go gofmt yamllint systemd-analyze dpkg-query; do
	command -v "$cmd" >/dev/null || die "$cmd is missing: run make deps"
done
# PyYAML: Debian's python3-yaml, which yamllint depends on, is /usr/bin/python3's.
python=${PYTHON:-}
for p in /usr/bin/python3 python3; do
	if [ -z "$python" ] && "$p" -c 'import yaml' 2>/dev/null; then
		python=$p
	fi
done
[ -n "$python" ] || die "no python3 with PyYAML: install python3-yaml (make deps)"

tmp=$(mktemp -d /tmp/hostprof-deploy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir"
# Helm's own files (repository cache, plugins, registry logins): none of the user's, none kept.
export HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config \
	HELM_DATA_HOME=$tmp/helm/data
say HELM "$("$helm" version --template '{{.Version}} ({{.GoVersion}})') $helm"

# --- the checks Helm does not make ----------------------------------------------------------
# Only the standard library: no module is downloaded (GOPROXY=off), and no newer toolchain.
(
	export GOPROXY=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GO111MODULE=on
	if [ -z "$(go env GOCACHE 2>/dev/null)" ] || [ "$(go env GOCACHE)" = off ]; then
		export GOCACHE=$dir/go-build
	fi
	say GO "$chk"
	unformatted=$(gofmt -l tests/deploy/chartcheck)
	[ -z "$unformatted" ] || die "gofmt: not formatted: $unformatted"
	cd tests/deploy/chartcheck && go vet . && go build -o "$chk" .
)

# --- 1. the systemd unit --------------------------------------------------------------------
say INSTALL "into $tmp/root (PREFIX, SYSCONFDIR)"
install_bin PREFIX="$tmp/root/usr" SYSCONFDIR="$tmp/root/etc" >/dev/null
unit=$tmp/root/usr/lib/systemd/system/hostprof.service
grep -qxF "ExecStart=$tmp/root/usr/bin/hostprof agent --config $tmp/root/etc/hostprof/config.yaml" \
	"$unit" || die "install: ExecStart= does not follow PREFIX and SYSCONFDIR"
grep -qxF "LoadCredential=otlp-token:$tmp/root/etc/hostprof/otlp-token" "$unit" ||
	die "install: LoadCredential= does not follow SYSCONFDIR"
cmp -s "$bin" "$tmp/root/usr/bin/hostprof" || die "install: the binary is not $bin"

# verify warns about unknown keys and bad values but exits 0: any output is a failure.
verify_unit() {
	local msg
	msg=$(systemd-analyze verify --man=no "$1" 2>&1) || {
		echo "$msg"
		return 1
	}
	[ -z "$msg" ] || {
		echo "$msg"
		return 1
	}
}
say VERIFY systemd/hostprof.service
verify_unit "$unit" || die "systemd-analyze verify failed"
# The exposure score (0 best, 10 worst) must not creep up: 3.6 when written.
exposure=$(systemd-analyze security --offline=yes --threshold=40 "$unit" 2>&1) ||
	die "systemd-analyze security: exposure above 4.0: $(echo "$exposure" | tail -n 1)"
say SECURITY "$(echo "$exposure" | grep -o 'Overall exposure level.*' |
	sed 's/ for [^:]*:/:/; s/ [^ -~]*$//')"

say INSTALL "DESTDIR=$tmp/dest (PREFIX=/usr/local), twice"
install_bin DESTDIR="$tmp/dest" >/dev/null
cmp -s "$tmp/dest/usr/local/lib/systemd/system/hostprof.service" systemd/hostprof.service ||
	die "install: with the default PREFIX the unit must be systemd/hostprof.service as is"
cmp -s "$tmp/dest/etc/hostprof/config.yaml" systemd/config.yaml ||
	die "install: $tmp/dest/etc/hostprof/config.yaml is not systemd/config.yaml"
[ "$(stat -c %a "$tmp/dest/etc/hostprof/config.yaml")" = 600 ] || die "install: config not 0600"
[ -x "$tmp/dest/usr/local/bin/hostprof" ] || die "install: no $tmp/dest/usr/local/bin/hostprof"
echo "# a local change" >>"$tmp/dest/etc/hostprof/config.yaml"
install_bin DESTDIR="$tmp/dest" >/dev/null
grep -q '^# a local change$' "$tmp/dest/etc/hostprof/config.yaml" ||
	die "install: a second install replaced the existing config"

# --- 2. the example config ------------------------------------------------------------------
# The agent's --print-config ends each key it took from a file with "# FILE:LINE", and prints
# those it defaulted bare: a bare key means the example does not document it. (The lines of a
# relabel rule carry the mark on its last line only.)
complete_config() { # FILE
	local missing
	missing=$(env -i PATH="$PATH" "$bin" agent --config "$1" --print-config |
		awk '/^ *- / {rule = 1; next}
			/^[a-z_]+:/ {rule = 0}
			rule {next}
			/^ *[a-z_]+: / && !/  # / {print}') || return 1
	[ -z "$missing" ] || {
		echo "$1 does not set, so --print-config shows the default:" "$missing"
		return 1
	}
}
say CONFIG "systemd/config.yaml (every key the agent prints; agrees with the unit)"
complete_config systemd/config.yaml || die "systemd/config.yaml is incomplete"
"$chk" unit -python "$python" -unit systemd/hostprof.service systemd/config.yaml

# --- 3. YAML written by hand ----------------------------------------------------------------
say YAMLLINT "systemd/config.yaml $chart/{Chart,values}.yaml $chart/examples tests/deploy"
yamllint --strict .yamllint systemd/config.yaml "$chart/Chart.yaml" "$chart/values.yaml" \
	"$chart/examples" tests/deploy/values-*.yaml tests/deploy/yamllint-rendered.yaml

# --- 4. the chart -----------------------------------------------------------------------------
version=$(cat VERSION)
# The default image tag is the chart's appVersion, as Helm reads Chart.yaml.
check_app_version() { # CHART
	local app
	app=$("$helm" show chart "$1" | sed -n 's/^appVersion: *//p' | tr -d "\"'") || return 1
	[ "$app" = "$version" ] || {
		echo "$1/Chart.yaml: appVersion $app, but hostprof is $version (VERSION)"
		return 1
	}
}
check_app_version "$chart" || die "appVersion"
# The probe (tests/deploy/probe.tpl): a template added to a copy of the chart that prints what
# Helm computed for the release, for chartcheck to compare the manifest with.
# render_chart CHART OUT [VALUES...]: helm lint --strict (a warning fails too), helm template
# into OUT/manifest.yaml, then chartcheck over Helm's output (OUT/config.yaml, OUT/NOTES.txt).
# Every step returns on failure itself: callers run it under || and `if`, where set -e is off.
render_chart() {
	local src=$1 out=$2 f
	shift 2
	local args=(--namespace "$ns")
	for f in "$@"; do
		args+=(-f "$f")
	done
	mkdir -p "$out" || return 1
	"$helm" lint --strict --quiet "$src" "${args[@]}" >"$out/lint.txt" 2>&1 || {
		grep -E '^\[(ERROR|WARNING)\]|^Error' "$out/lint.txt" >&2 || cat "$out/lint.txt" >&2
		return 1
	}
	"$helm" template "$release" "$src" "${args[@]}" >"$out/manifest.yaml" || return 1
	rm -rf "$tmp/probe-chart" && cp -r "$src" "$tmp/probe-chart" || return 1
	cp tests/deploy/probe.tpl "$tmp/probe-chart/templates/zz-probe.json" || return 1
	"$helm" template "$release" "$tmp/probe-chart" "${args[@]}" \
		--show-only templates/zz-probe.json >"$out/probe.yaml" || return 1
	"$chk" manifest -python "$python" -manifest "$out/manifest.yaml" -probe "$out/probe.yaml" \
		-namespace "$ns" -out "$out"
}
cases=(default oneuptime otel-collector token variants)
for c in "${cases[@]}"; do
	case $c in
	default) files=() ;;
	oneuptime | otel-collector) files=("$chart/examples/values-$c.yaml") ;;
	token) files=("$chart/examples/values-oneuptime.yaml" tests/deploy/values-token.yaml) ;;
	variants) files=(tests/deploy/values-variants.yaml) ;;
	esac
	say HELM "lint, template, check: $c -> $dir/$c/"
	rm -rf "${dir:?}/$c"
	render_chart "$chart" "$dir/$c" ${files[@]+"${files[@]}"} || die "chart case $c failed"
done
say YAMLLINT "$dir/*/manifest.yaml config.yaml"
lint_rendered=()
for c in "${cases[@]}"; do
	lint_rendered+=("$dir/$c/manifest.yaml" "$dir/$c/config.yaml")
done
yamllint --strict -c tests/deploy/yamllint-rendered.yaml "${lint_rendered[@]}"

# --- the agent's own parser ------------------------------------------------------------------
# The authority: every config file a deployment ships must load in `hostprof agent`, in a clean
# environment (HOSTPROF_* and OTEL_* would override the file). Header files are read at export
# time, so the credential and Secret paths need not exist here.
agent_config() { env -i PATH="$PATH" "$@" "$bin" agent --config "$config" --print-config; }
say PARSE "systemd/config.yaml and $dir/*/config.yaml: hostprof agent --print-config"
for config in systemd/config.yaml "$dir"/*/config.yaml; do
	agent_config >/dev/null || die "hostprof agent refuses $config"
done
# The variables that the DaemonSet sets, as the agent sees them after Kubernetes expands $(...).
config=$dir/oneuptime/config.yaml
grep -q 'name: HOSTPROF_KUBERNETES_KUBELET_URL' "$dir/oneuptime/manifest.yaml" ||
	die "the DaemonSet no longer sets HOSTPROF_KUBERNETES_KUBELET_URL"
printed=$(agent_config NODE_NAME=node-1 HOSTPROF_KUBERNETES_KUBELET_URL=https://10.0.0.1:10250/pods)
grep -q 'node_name: "node-1"' <<<"$printed" || die "the agent ignores NODE_NAME"
grep -q 'kubelet_url: "https://10.0.0.1:10250/pods"' <<<"$printed" ||
	die "the agent ignores HOSTPROF_KUBERNETES_KUBELET_URL"

# --- 5. what must fail ----------------------------------------------------------------------
# expect_fail NAME COMMAND...: the command must exit non-zero; its first message is shown.
expect_fail() {
	local name=$1 msg
	shift
	if msg=$("$@" 2>&1); then
		die "negative test '$name' passed, but must fail"
	fi
	say FAILS "$name: $(echo "$msg" | grep -v '^ *$' | head -n 1 | cut -c 1-90)"
}
# break_chart NAME SED FILE: a copy of the chart with one template edited (and really changed).
break_chart() {
	rm -rf "${tmp:?}/$1" && cp -r "$chart" "$tmp/$1"
	sed -i -e "$2" "$tmp/$1/templates/$3"
	if cmp -s "$chart/templates/$3" "$tmp/$1/templates/$3"; then
		die "break_chart $1: the sed script changed nothing"
	fi
}
render_copy() { render_chart "$tmp/$1" "$tmp/$1.out"; }
rm -rf "$tmp/appversion" && cp -r "$chart" "$tmp/appversion"
sed -i 's/^appVersion: .*/appVersion: "0.0.0-old"/' "$tmp/appversion/Chart.yaml"
expect_fail "appVersion not VERSION" check_app_version "$tmp/appversion"
break_chart syntax 's/nindent 4 }}/nindent 4 }/' configmap.yaml
expect_fail "template syntax" render_copy syntax
break_chart undefined 's/image.pullPolicy/image.pullPolicyy/' daemonset.yaml
expect_fail "undefined value" render_copy undefined
break_chart function 's/| quote/| quoted/' _helpers.tpl
expect_fail "unknown function" render_copy function
break_chart yaml 's/^      hostPID: true/     hostPID: true/' daemonset.yaml
expect_fail "invalid YAML" render_copy yaml
break_chart hostpid 's/hostPID: true/hostPID: false/' daemonset.yaml
expect_fail "no hostPID" render_copy hostpid
break_chart probe 's|path: /readyz|path: /healthz|' daemonset.yaml
expect_fail "readiness not on /readyz" render_copy probe
# A key the agent does not know renders fine (the chart passes config: through): the agent must
# refuse the config that Helm rendered.
printf 'config:\n  frequncy: 19\n' >"$tmp/typo.yaml"
render_chart "$chart" "$tmp/typo.out" "$tmp/typo.yaml" >/dev/null ||
	die "the chart with config.frequncy did not render: the agent's check below would prove nothing"
config=$tmp/typo.out/config.yaml
expect_fail "unknown config key (chart)" agent_config
printf 'token:\n  header: x-oneuptime-token\n  existingSecret: ""\n' >"$tmp/nosecret.yaml"
expect_fail "token header without a token" render_chart "$chart" "$tmp/nosecret.out" \
	"$tmp/nosecret.yaml"
printf 'config:\n  export:\n    otlp:\n      headers:\n        x-oneuptime-token: abc\n' \
	>"$tmp/clear.yaml"
expect_fail "token in clear" render_chart "$chart" "$tmp/clear.out" \
	"$chart/examples/values-oneuptime.yaml" "$tmp/clear.yaml"
grep -v '^  keep_files:' systemd/config.yaml >"$tmp/incomplete.yaml"
expect_fail "example config without a key" complete_config "$tmp/incomplete.yaml"
sed 's/^ReadOnlyPaths=.*/ProtectKernelTunables=yes/' systemd/hostprof.service \
	>"$tmp/tunables.service"
expect_fail "unit hiding /proc/kallsyms" "$chk" unit -python "$python" \
	-unit "$tmp/tunables.service" systemd/config.yaml
config=$tmp/typo-config.yaml
sed 's/^frequency:/frequncy:/' systemd/config.yaml >"$config"
expect_fail "unknown config key (systemd)" agent_config
mkdir -p "$tmp/typo"
sed 's/^NoNewPrivileges=/NoNewPrivilege=/' "$unit" >"$tmp/typo/hostprof.service"
expect_fail "unit with a typo" verify_unit "$tmp/typo/hostprof.service"

# --- 6. the Dockerfile ----------------------------------------------------------------------
# dockerfile_check FILE: the runtime stage installs exactly the packages of the shared libraries
# that build/hostprof needs (and ca-certificates), each a real Debian package. A static library
# (libiberty) needs none; libc6 is in the base image.
dockerfile_check() {
	local file=$1 p lib l so pkg
	local -a listed needed ldlibs
	local -A want=([ca-certificates]=1) have=()
	# The packages after `apt-get install` in the last stage, one a line.
	mapfile -t listed < <(awk '/^FROM /{b = ""} {b = b $0 "\n"} END {printf "%s", b}' "$file" |
		sed -n '/apt-get install/,/&&/p' |
		grep -E '^[[:space:]]+[a-z0-9][a-z0-9.+-]+[[:space:]]*.$' |
		sed -E 's/[^a-z0-9.+-]//g')
	[ ${#listed[@]} -gt 0 ] || die "$file: no runtime packages found"
	# The binary's DT_NEEDED libraries, and the Makefile's -l libraries: a shared one is needed
	# as soon as code uses it (the agent's libyaml, json-c, libmicrohttpd, libsystemd).
	needed=()
	for lib in $(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}'); do
		needed+=("$lib")
	done
	mapfile -t ldlibs < <(sed -n '/^LDLIBS/,/[^\\]$/p' Makefile | grep -oE -- '-l[a-z0-9_+-]+')
	for l in "${ldlibs[@]}"; do
		so=/usr/lib/$triplet/lib${l#-l}.so
		if [ -e "$so" ]; then
			so=$(readlink -f "$so")
			needed+=("$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')")
		fi
	done
	for lib in "${needed[@]}"; do
		pkg=$(dpkg-query -S "*/$triplet/$lib" 2>/dev/null |
			awk -F: 'NR == 1 {print $1}' || true)
		[ -n "$pkg" ] || die "$file check: no Debian package ships $lib"
		[ "$pkg" = libc6 ] || want[$pkg]=1
	done
	for p in "${listed[@]}"; do
		have[$p]=1
	done
	for p in "${!want[@]}"; do
		[ -n "${have[$p]:-}" ] ||
			die "$file: the runtime stage lacks $p (build/hostprof needs it)"
	done
	for p in "${listed[@]}"; do
		[ -n "${want[$p]:-}" ] ||
			die "$file: the runtime stage installs $p, which nothing needs"
		dpkg-query -W "$p" >/dev/null 2>&1 || apt-cache show "$p" >/dev/null 2>&1 ||
			die "$file: no Debian package $p"
	done
	grep -q '^RUN scripts/deps.sh build' "$file" ||
		die "$file: the build stage must install with scripts/deps.sh build"
	grep -qF 'ENTRYPOINT ["/usr/local/bin/hostprof", "agent"]' "$file" ||
		die "$file: ENTRYPOINT must be hostprof agent (the chart passes only --config)"
	echo "${listed[*]}"
}
triplet=$(gcc -print-multiarch)
packages=$(dockerfile_check Dockerfile)
say DOCKER "runtime packages match build/hostprof: $packages"
grep -v '^[[:space:]]*libdw1 \\$' Dockerfile >"$tmp/Dockerfile.lacking"
expect_fail "Dockerfile without libdw1" dockerfile_check "$tmp/Dockerfile.lacking"
sed 's/^\([[:space:]]*\)libbpf1 \\$/&\n\1curl \\/' Dockerfile >"$tmp/Dockerfile.extra"
expect_fail "Dockerfile with curl" dockerfile_check "$tmp/Dockerfile.extra"
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
	say DOCKER "not built here (minutes); docker build -t hostprof:$version ."
else
	say DOCKER "no Docker daemon: the image itself is not built by this check"
fi

if command -v shellcheck >/dev/null; then
	shellcheck tests/deploy/check.sh
fi
echo "deploy-check: ok"

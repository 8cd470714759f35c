#!/usr/bin/env bash
# Run every unit test binary given as an argument, without root privileges: when started as root,
# each test runs as 'nobody', so that a test that silently needs privileges fails here.
# Prints each file's line and one closing summary line; exits non-zero if anything failed.
#
# As 'nobody' the tests may not be able to reach the checkout (a clone under a 0700 directory),
# so they run from a world-readable copy of what they read: their binaries, tests/fixtures,
# proto/, systemd/, README.md, the test receivers and $OUTPUT/fixtures, laid out as in the
# checkout.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-build}
passed=0 failed=0 crashed=0
drop=()
run_dir=$top
if [ "$(id -u)" -eq 0 ]; then
	drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	run_dir=$(mktemp -d /tmp/hostprof-unit.XXXXXX) || exit 1
	trap 'rm -rf "$run_dir"' EXIT
	mkdir -p "$run_dir/tests" "$run_dir/build/tests"
	# What tests read: fixtures, the schemas (protoc --decode, the gRPC server), the local
	# receivers that the transport tests start, and README.md (test_options: every option is
	# documented there).
	cp -r "$top/tests/fixtures" "$top/proto" "$top/systemd" "$top/README.md" "$run_dir/" 2>/dev/null
	mkdir -p "$run_dir/helm/hostprof" && cp "$top/helm/hostprof/values.yaml" "$run_dir/helm/hostprof/"
	mv "$run_dir/fixtures" "$run_dir/tests/"
	for d in receiver grpc; do
		[ -d "$top/tests/$d" ] && cp -r "$top/tests/$d" "$run_dir/tests/"
	done
	case $out in /*) fx=$out/fixtures ;; *) fx=$top/$out/fixtures ;; esac
	[ -d "$fx" ] && cp -r "$fx" "$run_dir/build/"
	chmod -R a+rX "$run_dir"
	out=build
fi
for t in "$@"; do
	bin=$t
	if [ "$run_dir" != "$top" ]; then
		cp "$t" "$run_dir/build/tests/" && chmod a+rx "$run_dir/build/tests/$(basename "$t")"
		bin=$run_dir/build/tests/$(basename "$t")
	fi
	output=$(cd "$run_dir" && OUTPUT=$out HOME=/tmp GOCACHE=/tmp/hostprof-gocache-$(id -u nobody) \
		"${drop[@]}" "$bin" 2>&1)
	rc=$?
	printf '%s\n' "$output"
	line=$(printf '%s\n' "$output" | grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ]; then
		echo "$(basename "$t"): exited $rc without a summary line (crash?)"
		crashed=$((crashed + 1))
		continue
	fi
	p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$(basename "$t"): exited $rc although no check failed"
		crashed=$((crashed + 1))
	fi
done
failed=$((failed + crashed))
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

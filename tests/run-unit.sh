#!/usr/bin/env bash
# Run every unit test binary given as an argument, without root privileges: when started as root,
# each test runs as 'nobody', so that a test that silently needs privileges fails here.
# Prints each file's line and one closing summary line; exits non-zero if anything failed.
set -u
passed=0 failed=0 crashed=0
drop=()
if [ "$(id -u)" -eq 0 ]; then
	drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
for t in "$@"; do
	out=$(cd "$(dirname "$0")/.." && HOME=/tmp GOCACHE=/tmp/hostprof-gocache "${drop[@]}" "$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
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

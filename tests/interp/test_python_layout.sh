#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# src/interp/python_layout.c (and the _Py_DebugOffsets positions of python_check.c) against the
# headers of every CPython 3.10 to 3.13 that pyenv installed here ($PYENV_ROOT, ~/.pyenv):
# scripts/python_offsets.sh compiles offsetof() of each field against a release's headers, and
# compare_layout.py holds the table to it. A number planted wrong in a copy of the table must be
# caught. Skipped, saying so, when no such release is present or gcc is missing.
# Prints `test_python_layout: N passed, N failed`; exits non-zero when anything failed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
layout=$top/src/interp/python_layout.c
check=$top/src/interp/python_check.c
compare=$top/tests/interp/compare_layout.py
tmp=$(mktemp -d /tmp/hostprof-pylayout.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

prefixes=()
for root in "${PYENV_ROOT:-}" "$HOME/.pyenv"; do
	[ -n "$root" ] || continue
	for p in "$root"/versions/3.1[0-3]*; do
		[ -n "$(ls -d "$p"/include/python3.1[0-3] 2>/dev/null)" ] || continue
		prefixes+=("$p")
	done
	[ ${#prefixes[@]} -gt 0 ] && break
done
if [ ${#prefixes[@]} -eq 0 ] || ! command -v "${CC:-gcc}" >/dev/null; then
	echo "  skipped: no pyenv CPython 3.10 to 3.13 under \$PYENV_ROOT or ~/.pyenv (or no gcc)"
	echo "test_python_layout: $passed passed, $failed failed"
	exit 0
fi

for p in "${prefixes[@]}"; do
	name=${p##*/}
	if ! "$top/scripts/python_offsets.sh" "$p" >"$tmp/$name.off" 2>"$tmp/$name.err"; then
		fail "$name: python_offsets.sh: $(cat "$tmp/$name.err")"
		continue
	fi
	if out=$(python3 "$compare" "$layout" "$check" <"$tmp/$name.off" 2>&1); then ok; else
		fail "$name: $out"
	fi
	# The comparison can fail: the code object's name planted 8 bytes off in a copy.
	minor=$(sed -n 's/^version 3\.//p' "$tmp/$name.off")
	python3 - "$layout" "$minor" >"$tmp/bad.c" <<'PY'
import re, sys
src, minor = open(sys.argv[1]).read(), sys.argv[2]
i = src.index(".minor = %s," % minor)
j = src.index(".code_name = ", i)
k = src.index(",", j)
print(src[:j] + ".code_name = %d" % (int(src[j + 13:k]) + 8) + src[k:], end="")
PY
	if out=$(python3 "$compare" "$tmp/bad.c" "$check" <"$tmp/$name.off" 2>&1) ||
		! grep -q "code_name is" <<<"$out"; then
		fail "$name: a planted wrong code_name was not caught: $out"
	else ok; fi
	echo "  $name: 3.$minor's layout agrees with its headers"
done
echo "test_python_layout: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

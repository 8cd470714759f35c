#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Tests of scripts/check_layers.py and scripts/check_sizes.py, the checks that `make unit` and
# `make check` run over src/: the real tree passes, and each kind of fault planted in a copy of it
# fails with a line that names the file and the rule (an include that goes up the layers, one
# without its folder, a folder that is no layer, a source file outside the folders, two modules
# that call each other, a file or a function too long).
# Prints `test_check_layers: N passed, N failed`; exits non-zero when anything failed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
check=$top/scripts/check_layers.py
tmp=$(mktemp -d /tmp/hostprof-layers.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# expect_fail NAME PATTERN SRC [ARGS...]: the check exits 1 and prints a line matching PATTERN.
expect_fail() {
	local name=$1 pattern=$2 out rc
	shift 2
	out=$(python3 "$check" "$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 1 ] && grep -qE -- "$pattern" <<<"$out"; then ok; else
		fail "$name: exit $rc, wanted 1 and a line matching '$pattern'; got: $out"
	fi
}

# A fresh copy of the real tree for each planted fault.
fresh() { rm -rf "$tmp/src" && cp -r "$top/src" "$tmp/src"; }

# The tree as it is: clean.
out=$(python3 "$check" "$top/src" 2>&1) && ok || fail "the real tree: $out"

fresh
printf '#include "cmd/cmds.h"\n' >>"$tmp/src/base/log.c"
expect_fail "upward include" 'base/log\.c:[0-9]+: #include "cmd/cmds\.h" goes up the layers' "$tmp/src"

fresh
printf '#include "export/transport.h"\n' >>"$tmp/src/symbols/dso.h"
expect_fail "upward include in a header" 'symbols/dso\.h:[0-9]+: .*goes up the layers' "$tmp/src"

fresh
printf '#include "log.h"\n' >>"$tmp/src/model/profile.c"
expect_fail "include without its folder" 'model/profile\.c:[0-9]+: #include "log\.h" does not name a layer folder' "$tmp/src"

fresh
printf '#include "base/no_such.h"\n' >>"$tmp/src/model/profile.c"
expect_fail "include of a missing file" 'no such file' "$tmp/src"

fresh
mkdir "$tmp/src/misc" && printf 'int x;\n' >"$tmp/src/misc/x.c"
expect_fail "folder that is no layer" 'misc: a folder that is not a layer' "$tmp/src"

fresh
printf 'int y;\n' >"$tmp/src/stray.c"
expect_fail "file outside the folders" 'stray\.c: a source file outside the layer folders' "$tmp/src"

# Call cycles, read from objects: a -> b -> a fails, a -> b alone passes.
mkdir -p "$tmp/obj/base" "$tmp/empty/base"
printf 'int b(void);\nint a(void) { return b(); }\n' >"$tmp/a.c"
printf 'int a(void);\nint b(void) { return a(); }\n' >"$tmp/b.c"
printf 'int b(void) { return 1; }\n' >"$tmp/b2.c"
cc -c "$tmp/a.c" -o "$tmp/obj/base/a.o" && cc -c "$tmp/b.c" -o "$tmp/obj/base/b.o" &&
	cc -c "$tmp/b2.c" -o "$tmp/b2.o" || fail "cc could not build the cycle fixtures"
fresh
expect_fail "call cycle" 'modules that call each other in a cycle: base/a -> base/b -> base/a' \
	"$tmp/src" --objects "$tmp/obj"
cp "$tmp/b2.o" "$tmp/obj/base/b.o"
out=$(python3 "$check" "$tmp/src" --objects "$tmp/obj" 2>&1) && ok || fail "no cycle: $out"
expect_fail "no objects" 'no objects to read' "$tmp/src" --objects "$tmp/empty"

# scripts/check_sizes.py: the real tree passes; a file or a function past its size fails.
sizes=$top/scripts/check_sizes.py
out=$(python3 "$sizes" "$top/src" 2>&1) && ok || fail "sizes of the real tree: $out"
fresh
seq 1 1300 | sed 's|.*|/* & */|' >"$tmp/src/base/long.c"
out=$(python3 "$sizes" "$tmp/src" 2>&1)
[ $? -eq 1 ] && grep -q 'base/long\.c: 1301 lines' <<<"$out" && ok || fail "long file: $out"
fresh
{ printf 'int big(void)\n{\n'; seq 1 160 | sed 's|.*|\t;|'; printf '}\n'; } >"$tmp/src/base/big.c"
out=$(python3 "$sizes" "$tmp/src" 2>&1)
[ $? -eq 1 ] && grep -q 'base/big\.c:2: big() is 162 lines' <<<"$out" && ok || fail "long function: $out"

echo "test_check_layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

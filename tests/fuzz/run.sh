#!/usr/bin/env bash
# Run the fuzz targets built by tests/fuzz/fuzz.mk one after the other, each for SECONDS:
#   run.sh FUZZ_DIR SECONDS TIMEOUT TARGET...
# A target fails on a crash, a sanitizer report, a leak, an input slower than TIMEOUT seconds or
# one that runs out of memory. libFuzzer then writes that input to FUZZ_DIR/TARGET-{crash,leak,
# timeout,oom}-SHA1; this script names it and the command that replays it. Every target runs even
# when one fails; the exit status is non-zero if any failed. New interesting inputs are kept in
# FUZZ_DIR/corpus/TARGET, so later runs start where this one stopped.
set -u
if [ $# -lt 4 ]; then
	echo "usage: $0 FUZZ_DIR SECONDS TIMEOUT TARGET..." >&2
	exit 2
fi
dir=$1 secs=$2 timeout=$3
shift 3
failed=()
for t in "$@"; do
	bin=$dir/fuzz_$t log=$dir/$t.log marker=$dir/.$t.started
	mkdir -p "$dir/corpus/$t"
	touch "$marker"
	# detect_leaks: ASan's leak check after every input that allocated more than it freed.
	# The seeds come second: libFuzzer writes new inputs to the first directory only.
	"$bin" -max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=2048 -detect_leaks=1 \
		-artifact_prefix="$dir/$t-" -print_final_stats=1 \
		"$dir/corpus/$t" "$dir/seeds/$t" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)
	if [ "$rc" -eq 0 ]; then
		printf '  FUZZ     %-11s ok: %s runs in %s s, %s, corpus %s files\n' "$t" "${runs:-?}" \
			"$secs" "${cov:-cov: ?}" "$(find "$dir/corpus/$t" -type f | wc -l)"
		rm -f "$marker"
		continue
	fi
	failed+=("$t")
	artifact=$(find "$dir" -maxdepth 1 -name "$t-*" -newer "$marker" -type f | head -n 1)
	rm -f "$marker"
	echo "  FUZZ     $t FAILED (exit $rc): $(grep -m1 -E '^==[0-9]+==ERROR|SUMMARY|runtime error|contract broken|ALARM|out-of-memory|leak' "$log")" >&2
	grep -A 12 -m1 -E '^==[0-9]+==ERROR|runtime error|contract broken|ALARM|out-of-memory' "$log" | sed 's/^/    /' >&2
	if [ -n "$artifact" ]; then
		echo "    the input is kept in $artifact" >&2
		echo "    reproduce: $bin $artifact" >&2
	fi
	echo "    full log: $log" >&2
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
	exit 1
fi

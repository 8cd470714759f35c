#!/usr/bin/env bash
# The HTML flame graph under load: a synthetic profile of 100k distinct stacks (50 processes,
# depths 8 to 40, kernel tails on a fifth of them) rendered with `hostprof render`, then opened
# in headless Chromium. Prints the page size and the load+render time that the page itself
# measures (performance.now() after the first draw, written into <body data-render-ms>), and
# keeps a screenshot. Not part of `make test`: it installs chromium when missing.
#
# Usage: bench/bench_html.sh [HOSTPROF] [OUTDIR]     (defaults: build/hostprof build/bench)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
hp=${1:-$top/build/hostprof}
out=${2:-$top/build/bench}
stacks=${STACKS:-100000}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if ! command -v chromium >/dev/null 2>&1; then
	echo "bench-html: chromium is missing; installing it with apt-get" >&2
	apt-get install -y chromium >/dev/null || {
		echo "bench-html: FAILED: could not install chromium (apt-get install chromium)" >&2
		exit 1
	}
fi

folded=$out/html-$stacks.folded
html=$out/html-$stacks.html
# Stacks share a tree of callers (base-4 digits of k pick each level's frame), so the graph has
# structure; the unique leaf makes every stack distinct. Counts are skewed, as real ones are.
awk -v n="$stacks" 'BEGIN {
	srand(7);
	for (i = 0; i < n; i++) {
		p = i % 50; k = int(i / 50);
		line = sprintf("svc-%d", p);
		line = line ";_start;__libc_start_main;main";
		v = k;
		for (j = 0; j < 7; j++) {
			d = v % 4; v = int(v / 4);
			line = line sprintf(";pkg%d::module::handler_%d", j, (d * 31 + j * 7 + p % 5) % 40);
		}
		extra = (k * 7919) % 30;
		for (j = 0; j < extra; j++)
			line = line sprintf(";helper_%d", (k + j * 13) % 97);
		line = line sprintf(";leaf_%d", k);
		if (i % 5 == 0)
			line = line ";entry_SYSCALL_64_[k];do_syscall_64_[k];ksys_read_[k]";
		c = int(20000 / ((1 + p) ^ 1.2) / (1 + (i * 7) % 97)) + 1;
		print line, c;
	}
}' > "$folded"

t0=$(date +%s%N)
"$hp" render "$folded" -o "$html" >/dev/null
t1=$(date +%s%N)

profile_dir=$(mktemp -d)
trap 'rm -rf "$profile_dir"' EXIT
chrome=(chromium --headless=new --no-sandbox --disable-gpu --disable-background-networking
	--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile_dir"
	--window-size=1400,900)
ms=$("${chrome[@]}" --dump-dom "file://$html" 2>/dev/null |
	sed -n 's/.*data-render-ms="\([0-9.]*\)".*/\1/p' | head -n 1)
"${chrome[@]}" --screenshot="$out/html-$stacks.png" "file://$html" >/dev/null 2>&1 || true

{
	echo "html: $stacks distinct stacks, folded input $(stat -c %s "$folded") bytes"
	echo "html: hostprof render took $(((t1 - t0) / 1000000)) ms; page $(stat -c %s "$html") bytes"
	if [ -n "$ms" ]; then
		echo "html: page load + first render in headless Chromium: $ms ms"
	else
		echo "html: FAILED: the page did not report its render time (script error?)"
	fi
	if [ -s "$out/html-$stacks.png" ]; then
		echo "html: screenshot $out/html-$stacks.png"
	else
		echo "html: FAILED: no screenshot"
	fi
} | tee "$out/html.txt"
[ -n "$ms" ]

# bench-rss: where the agent's resident memory goes, whole-host at 19 Hz on a host filled up to
# about 400 processes (bench/rss.sh; root). Prints RSS over time and its breakdown by category;
# numbers only. RSS_SECS (180) and RSS_EVERY (10) set the run. Report: $(OUTPUT)/bench/rss.md
.PHONY: bench-rss

RSS_SECS ?= 180
RSS_EVERY ?= 10

bench-rss: $(OUTPUT)/hostprof $(OUTPUT)/e2e/cxx_throw $(OUTPUT)/e2e/lib_ratio | $(OUTPUT)/bench
	$(Q)WL=$(OUTPUT)/e2e bench/rss.sh $(OUTPUT)/hostprof $(RSS_SECS) $(RSS_EVERY) \
		> $(OUTPUT)/bench/rss.md.tmp && mv $(OUTPUT)/bench/rss.md.tmp $(OUTPUT)/bench/rss.md
	$(Q)cat $(OUTPUT)/bench/rss.md

# Part of `make bench` (after the report, which does not read it).
bench: bench-rss

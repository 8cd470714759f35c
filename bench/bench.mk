# bench: micro-benchmarks over the library, one bench/bench_<name>.c each, built into
# $(OUTPUT)/bench/. They print numbers and assert nothing; each run's report is also kept in
# $(OUTPUT)/bench/<name>.txt. `make bench` runs them all.
# Included from the top Makefile: uses its $(OUTPUT), $(CC), $(CFLAGS), $(LDLIBS), $(Q) and
# $(msg).

BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))

.PHONY: bench bench-otlp

bench: bench-otlp

$(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bench/bench_%: bench/bench_%.c $(OUTPUT)/libhostprof.a | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(EXTRA_LDFLAGS) $< $(OUTPUT)/libhostprof.a $(LDLIBS) -o $@

# OTLP request size (raw, gzip; JSON too) against gzipped pprof, and encode time, for a
# synthetic 10k-stack, 50-process profile.
bench-otlp: $(OUTPUT)/bench/bench_otlp
	$(Q)$< > $(OUTPUT)/bench/otlp.txt.tmp && mv $(OUTPUT)/bench/otlp.txt.tmp $(OUTPUT)/bench/otlp.txt
	$(Q)cat $(OUTPUT)/bench/otlp.txt

-include $(wildcard $(OUTPUT)/bench/*.d)

# bench: micro-benchmarks over the library, one bench/bench_<name>.c each, built into
# $(OUTPUT)/bench/. They print numbers and assert nothing; each run's report is also kept in
# $(OUTPUT)/bench/<name>.txt. `make bench` runs them all.
# Included from the top Makefile: uses its $(OUTPUT), $(CC), $(CFLAGS), $(LDLIBS), $(Q) and
# $(msg).

BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))

.PHONY: bench bench-otlp bench-sched bench-html bench-unwind bench-thread-ctx bench-symbolize bench-soak bench-report \
	bench-smoke

# The report comes last: it gathers what the others wrote.
bench: bench-otlp bench-sched bench-html bench-unwind bench-thread-ctx bench-symbolize bench-soak bench-report

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

# The HTML flame graph of a synthetic 100k-distinct-stack profile: `hostprof render` time, page
# size, load + first render time in headless Chromium (installed if missing), and a screenshot
# in $(OUTPUT)/bench/html-100000.png. Report: $(OUTPUT)/bench/html.txt.
bench-html: $(OUTPUT)/hostprof | $(OUTPUT)/bench
	$(Q)bench/bench_html.sh $(OUTPUT)/hostprof $(OUTPUT)/bench

-include $(wildcard $(OUTPUT)/bench/*.d)

# The scheduler-side programs' cost per event under a context-switch-heavy load (root).
$(OUTPUT)/bench/pingpong: bench/pingpong.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g $< -o $@ -lpthread

bench-sched: $(OUTPUT)/hostprof $(OUTPUT)/bench/pingpong
	$(Q)(bench/bench_sched.sh $(OUTPUT)/hostprof $(OUTPUT)/bench/pingpong && echo && \
		HOSTPROF_FUTEX_WAITS=syscalls bench/bench_sched.sh $(OUTPUT)/hostprof \
		$(OUTPUT)/bench/pingpong && echo && \
		HP_ARGS="--wait-sample-us 0" bench/bench_sched.sh $(OUTPUT)/hostprof \
		$(OUTPUT)/bench/pingpong && echo && \
		HP_TYPES=cpu,contention bench/bench_sched.sh $(OUTPUT)/hostprof \
		$(OUTPUT)/bench/pingpong && echo && \
		HP_TYPES=cpu,wall bench/bench_sched.sh $(OUTPUT)/hostprof \
		$(OUTPUT)/bench/pingpong) > $(OUTPUT)/bench/sched.md.tmp && \
		mv $(OUTPUT)/bench/sched.md.tmp $(OUTPUT)/bench/sched.md
	$(Q)cat $(OUTPUT)/bench/sched.md

# The user-stack walker's cost per sample, frame pointers against .eh_frame tables, at depth 10
# and 64; the profiler's CPU time against perf --call-graph dwarf; the time and memory to build
# tables, and the BPF map memory of a whole-host capture (root).
$(OUTPUT)/bench/deep_fp: bench/deep.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer $< -o $@

$(OUTPUT)/bench/deep_nofp: bench/deep.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer $< -o $@

bench-unwind: $(OUTPUT)/hostprof $(OUTPUT)/bench/deep_fp $(OUTPUT)/bench/deep_nofp \
		$(OUTPUT)/bench/bench_tables
	$(Q)bench/bench_unwind.sh $(OUTPUT)/hostprof $(OUTPUT)/bench/deep_fp \
		$(OUTPUT)/bench/deep_nofp $(OUTPUT)/bench/bench_tables > $(OUTPUT)/bench/unwind.md.tmp && \
		mv $(OUTPUT)/bench/unwind.md.tmp $(OUTPUT)/bench/unwind.md
	$(Q)cat $(OUTPUT)/bench/unwind.md

# The OpenTelemetry thread context: the CPU sampler's run time per sample with a process that
# publishes one (read at every sample) and one that does not. Report: $(OUTPUT)/bench/thread_ctx.md
bench-thread-ctx: $(OUTPUT)/hostprof e2e-workloads | $(OUTPUT)/bench
	$(Q)bench/bench_thread_ctx.sh $(OUTPUT)/hostprof $(OUTPUT)/e2e/otel_ctx_lib \
		$(OUTPUT)/e2e/go_labels_newest \
		> $(OUTPUT)/bench/thread_ctx.md.tmp && \
		mv $(OUTPUT)/bench/thread_ctx.md.tmp $(OUTPUT)/bench/thread_ctx.md
	$(Q)cat $(OUTPUT)/bench/thread_ctx.md

# DWARF symbolization: hostprof's dso layer (bench_symbolize) against eu-addr2line, addr2line,
# llvm-symbolizer and blazecli (bench/symbolizers.mk builds it) on 100,000 fixed addresses in libc
# (libc6-dbg) and libstdc++ (libstdc++6-12-dbg): addresses per second cold and warm, peak RSS,
# agreement with each. A binary without its debug info is skipped with the package to install.
# No root. Report: $(OUTPUT)/bench/symbolize.md and .json.
bench-symbolize: $(OUTPUT)/bench/bench_symbolize
	$(Q)python3 bench/bench_symbolize.py $< $(OUTPUT)/bench > /dev/null
	$(Q)cat $(OUTPUT)/bench/symbolize.md

# The agent's RSS over 10 minutes at 99 Hz under process churn, sampled every 10 s, with the
# slope after the warm-up (root). `make test` runs a 2-minute form that checks it.
bench-soak: $(OUTPUT)/hostprof e2e-workloads | $(OUTPUT)/bench
	$(Q)bench/soak.sh $(OUTPUT)/hostprof $(OUTPUT)/e2e/short_lived > $(OUTPUT)/bench/soak.txt.tmp && \
		mv $(OUTPUT)/bench/soak.txt.tmp $(OUTPUT)/bench/soak.txt
	$(Q)cat $(OUTPUT)/bench/soak.txt

# The overhead budget side by side with perf, bpftrace and the OpenTelemetry eBPF profiler
# (bench/otelprof.mk): $(OUTPUT)/bench/report.md and report.json (bench/report.sh says what is
# measured). bench-smoke is its one-minute form, which `make test` runs to show the report is
# produced and well-formed.
$(OUTPUT)/bench/fixedwork: bench/fixedwork.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g $< -o $@ -lz -lpthread

BENCH_REPORT_DEPS := $(OUTPUT)/hostprof $(OUTPUT)/bench/fixedwork $(OUTPUT)/bench/pingpong e2e-workloads

bench-report: $(BENCH_REPORT_DEPS)
	$(Q)OUTPUT=$(OUTPUT) bench/report.sh $(OUTPUT)/bench

bench-smoke: $(BENCH_REPORT_DEPS)
	$(Q)mkdir -p $(OUTPUT)/bench-smoke
	$(Q)OUTPUT=$(OUTPUT) bench/report.sh --smoke $(OUTPUT)/bench-smoke > /dev/null
	$(Q)python3 bench/check_report.py $(OUTPUT)/bench-smoke

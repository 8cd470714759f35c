# The OpenTelemetry eBPF profiler beside hostprof in the overhead report (bench/report.sh): the
# pinned release of go.opentelemetry.io/ebpf-profiler (bench/otelprof/go.mod) and our OTLP gRPC
# receiver for it, built by bench/otelprof/build.sh into a cache directory that later runs reuse.
# Included from the top Makefile; bench-report and bench-smoke depend on it.

OTELPROF_VERSION := $(shell awk '$$1 == "go.opentelemetry.io/ebpf-profiler" { print $$2 }' bench/otelprof/go.mod)
OTELPROF_DIR ?= /var/cache/hostprof-test/ebpf-profiler-$(OTELPROF_VERSION)
export OTELPROF_DIR

.PHONY: otelprof
otelprof:
	$(Q)bench/otelprof/build.sh $(OTELPROF_DIR)

bench-report bench-smoke: otelprof

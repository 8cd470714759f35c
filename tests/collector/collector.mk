# The OpenTelemetry Collector of the end-to-end tests (tests/e2e/collector.sh), built by the
# Collector's own builder at one pinned release for every module (tests/collector/build.sh):
#   collector   $(OUTPUT)/otelcol-hostprof, a link to the binary cached in COLLECTOR_CACHE
#               (/var/cache/hostprof-test/collector) by version and builder.yaml; the first build
#               takes minutes, later ones nothing
# Included from the top Makefile: uses its $(OUTPUT), $(Q) and $(msg).

# The release of the builder, the core modules (otlpreceiver, debugexporter, otlphttpexporter)
# and contrib's fileexporter. Its pdata speaks opentelemetry-proto v1.11.0, hostprof's wire shape.
COLLECTOR_VERSION ?= 0.161.0

.PHONY: collector
# Phony, and build.sh returns at once when the binary is cached: a fresh clone's files are all
# newer than the cache, so make's times cannot tell whether it is up to date; the cache's name can.
collector: | $(OUTPUT)
	$(call msg,COLLECTOR,$(OUTPUT)/otelcol-hostprof)
	$(Q)bin=$$(tests/collector/build.sh $(COLLECTOR_VERSION)) && ln -sfn "$$bin" $(OUTPUT)/otelcol-hostprof

e2e: collector

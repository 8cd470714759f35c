# Fuzz targets for what processes, the kernel and receivers hand the agent: /proc/PID/maps,
# cgroup (container ID, systemd unit), environ (service name), NSpid, the kubelet's /pods, Docker's
# config.v2.json, OTLP export responses, google.rpc.Status and Retry-After, gRPC answers (headers,
# trailers, frames), kallsyms, the unwind-table disk cache and OTEL_EXPORTER_OTLP_HEADERS.
# Built and run like the targets of fuzz.mk (its rules and run.sh); their seeds are written by
# tests/fuzz/input_seeds.py from tests/fixtures and the formats' specifications.
# Included from the top Makefile after fuzz.mk: FUZZ_TARGETS given on the command line still
# chooses among all targets.

FUZZ_INPUT_TARGETS := proc_maps cgroup environ nspid kubelet_pods docker_config otlp_response \
	rpc_status grpc_answer ksyms unwind_cache otlp_headers
FUZZ_TARGETS += $(FUZZ_INPUT_TARGETS)
FUZZ_INPUT_CHOSEN := $(filter $(FUZZ_INPUT_TARGETS),$(FUZZ_TARGETS))

fuzz-build: $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_INPUT_CHOSEN)) $(FUZZ_DIR)/seeds/inputs.stamp

$(FUZZ_DIR)/seeds/inputs.stamp: tests/fuzz/input_seeds.py $(wildcard tests/fixtures/maps/* \
		tests/fixtures/cgroup/* tests/fixtures/kallsyms/* tests/fixtures/kubelet/* \
		tests/fixtures/docker/containers/*/*)
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds/ of $(FUZZ_INPUT_TARGETS))
	$(Q)rm -rf $(addprefix $(FUZZ_DIR)/seeds/,$(FUZZ_INPUT_TARGETS))
	$(Q)python3 tests/fuzz/input_seeds.py $(FUZZ_DIR)/seeds && touch $@

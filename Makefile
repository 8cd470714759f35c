# hostprof build. `make` builds build/hostprof; `make help` lists the targets.
# V=1 shows full commands. OUTPUT=dir moves the build directory. VMLINUX_H=path overrides the
# checked-in vmlinux.h for the target architecture.

OUTPUT ?= build
ARCH ?= $(shell uname -m | sed -e 's/aarch64/arm64/')
VMLINUX_H ?= vmlinux/$(ARCH)/vmlinux.h
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c

ifeq ($(ARCH),x86_64)
BPF_TARGET_ARCH := x86
else
BPF_TARGET_ARCH := $(ARCH)
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARNINGS := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wformat=2 -Wstrict-prototypes
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARNINGS) -MMD -MP -D_GNU_SOURCE \
	-DHOSTPROF_VERSION='"$(VERSION)"' -DHOSTPROF_GIT_REV='"$(GIT_REV)"' \
	-Iinclude -Isrc -I$(OUTPUT) -I$(OUTPUT)/proto
# libyaml: the agent's config file; json-c: the kubelet's /pods and Docker's container configs;
# libmicrohttpd: /metrics, /healthz, /readyz; libsystemd: sd_notify for Type=notify;
# liblzma: MiniDebugInfo (.gnu_debugdata is xz). libdebuginfod: separate debug files fetched by
# build-id when DEBUGINFOD_URLS is set.
LDLIBS += -lbpf -ldw -lelf -ldebuginfod -lz -lprotobuf-c -lcurl -lssh2 -lnettle -lpthread -liberty \
	-lyaml -ljson-c -lmicrohttpd -lsystemd -llzma
EXTRA_CFLAGS ?=
EXTRA_LDFLAGS ?=

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_TARGET_ARCH) -Wall -Werror \
	-I$(OUTPUT)/bpf -Iinclude -Ibpf

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.skel.h,$(BPF_SRCS))

# Nested as their packages are (proto/opentelemetry/proto/...): imports name those paths.
PROTOS := $(shell find proto -name '*.proto' | sort)
PB_SRCS := $(patsubst proto/%.proto,$(OUTPUT)/proto/%.pb-c.c,$(PROTOS))
PB_HDRS := $(PB_SRCS:.c=.h)
PB_OBJS := $(PB_SRCS:.c=.o)

SRCS := $(wildcard src/*/*.c)
OBJS := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(OUTPUT)/src/cmd/main.o,$(OBJS)) $(PB_OBJS)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

.PHONY: all deps deps-test deps-build run test unit layers e2e kernel-matrix check bpf-cross format format-check clean help bench \
	arm64 arm64-initramfs
.DEFAULT_GOAL := all
# Keep the BPF objects: make would delete them as intermediates of the skeletons.
.SECONDARY:

all: $(OUTPUT)/hostprof

help:
	@echo "make            build $(OUTPUT)/hostprof"
	@echo "make deps       install the missing Debian packages of the build and tests (root)"
	@echo "make run        profile the whole host for 5 s into ./profile.html, .pb.gz and .folded"
	@echo "make test       unit tests (no root), then end-to-end tests on the real kernel, then the"
	@echo "                kernel matrix"
	@echo "make kernel-matrix  the essential captures on Debian's 5.10, 6.1 and 6.12 kernels under"
	@echo "                qemu (amd64 and arm64), and on the host (KERNELS=\"6.1 host\" and"
	@echo "                ARM64_KERNELS=\"6.1\" pick some)"
	@echo "make check      -Werror build, unit tests under ASan+UBSan, a short fuzz run, the layer"
	@echo "                check (scripts/check_layers.py), static analysis"
	@echo "make fuzz       every fuzz target for FUZZ_SECONDS (30) each; crashing inputs in $(OUTPUT)/fuzz"
	@echo "make format     clang-format every source file in place"
	@echo "make bench      run the benchmarks (not part of make test); report in $(OUTPUT)/bench"
	@echo "make arm64      cross-build hostprof and the e2e workloads for aarch64 into $(ARM64_OUTPUT)"
	@echo "                (installs the arm64 multiarch packages: scripts/deps.sh arm64)"
	@echo "make arm64-initramfs  the aarch64 guest's initramfs: $(ARM64_OUTPUT)/initramfs.cpio.gz"

# deps: what the build and the tests need; deps-build: the build alone (for make run, which
# needs no Go, Chromium or test receivers).
deps deps-test:
	$(Q)scripts/deps.sh test

deps-build:
	$(Q)scripts/deps.sh build

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/src $(OUTPUT)/proto $(OUTPUT)/tests:
	$(Q)mkdir -p $@

# --- BPF: CO-RE objects and their skeletons ---
$(OUTPUT)/bpf/vmlinux.h: $(VMLINUX_H) | $(OUTPUT)/bpf
	$(Q)cp $< $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(OUTPUT)/bpf/vmlinux.h include/hostprof_abi.h $(wildcard bpf/*.bpf.h) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/bpf/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# --- protobuf ---
$(OUTPUT)/proto/%.pb-c.c $(OUTPUT)/proto/%.pb-c.h: proto/%.proto | $(OUTPUT)/proto
	$(call msg,PROTOC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(OUTPUT)/proto $<

# Generated code includes the headers of the protos it imports: all of them come first.
$(OUTPUT)/proto/%.pb-c.o: $(OUTPUT)/proto/%.pb-c.c | $(PB_HDRS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-unused-parameter $(EXTRA_CFLAGS) -c $< -o $@

# --- userspace ---
$(OUTPUT)/src/%.o: src/%.c $(SKELS) $(PB_HDRS) | $(OUTPUT)/src
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

$(OUTPUT)/libhostprof.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/hostprof: $(OUTPUT)/src/cmd/main.o $(OUTPUT)/libhostprof.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(EXTRA_LDFLAGS) $^ $(LDLIBS) -o $@

# --- tests ---
include tests/unit/fixtures.mk
include tests/e2e/workloads.mk
include tests/e2e/go.mk
include tests/grpc/grpc.mk
include tests/browser/browser.mk
include tests/fuzz/fuzz.mk
include tests/fuzz/fuzz_inputs.mk
include tests/interp/interp.mk
include tests/fuzz/python.mk
-include bench/bench.mk
include bench/rss.mk
include bench/symbolizers.mk
include bench/python.mk
-include bench/otelprof.mk
include deploy.mk
include tests/collector/collector.mk
include tests/deploy/helm.mk

$(OUTPUT)/tests/test_%: tests/unit/test_%.c tests/unit/check.h $(OUTPUT)/libhostprof.a | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -Itests/unit $(EXTRA_LDFLAGS) $< $(OUTPUT)/libhostprof.a $(LDLIBS) -o $@

unit: $(UNIT_BINS) unit-fixtures grpc-deps grpc-fixtures layers
	$(Q)tests/layers/test_check_layers.sh
	$(Q)OUTPUT=$(OUTPUT) tests/run-unit.sh $(UNIT_BINS)

# The layers of src/ (docs/ARCHITECTURE.md): includes name their folder and go only down the
# order in scripts/check_layers.py, and no two modules call each other (read from the objects);
# no file or function past the sizes in scripts/check_sizes.py.
layers: $(OBJS)
	$(call msg,LAYERS,src)
	$(Q)python3 scripts/check_layers.py src --objects $(OUTPUT)/src
	$(Q)python3 scripts/check_sizes.py src

e2e: $(OUTPUT)/hostprof e2e-workloads e2e-go-workloads browser-deps grpc-deps
	$(Q)OUTPUT=$(OUTPUT) tests/e2e/run.sh

# The captures of tests/kernels/guest.sh on Debian's cloud kernels, each booted under qemu (TCG),
# and on the host; then the arm64 build on Debian's arm64 kernels (qemu-system-aarch64). The
# kernels are fetched once into KERNEL_CACHE (tests/kernels/fetch.sh). KERNELS picks some of the
# amd64 ones ("6.1 host"), ARM64_KERNELS of the arm64 ones ("" for none).
ARM64_KERNELS ?= 5.10 6.1 6.12
kernel-matrix: $(OUTPUT)/hostprof e2e-workloads $(if $(strip $(ARM64_KERNELS)),arm64-initramfs)
	$(Q)OUTPUT=$(OUTPUT) tests/kernels/run.sh
	$(if $(strip $(ARM64_KERNELS)),$(Q)OUTPUT=$(ARM64_OUTPUT) KERNEL_ARCH=arm64 \
		KERNELS="$(ARM64_KERNELS)" KERNEL_INITRAMFS=$(ARM64_OUTPUT)/initramfs.cpio.gz \
		tests/kernels/run.sh)

test: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory deploy-check
	$(Q)$(MAKE) --no-print-directory e2e
	$(Q)$(MAKE) --no-print-directory kernel-matrix
	$(Q)$(MAKE) --no-print-directory bench-smoke

run: deps-build
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUTPUT)/hostprof profile --all --duration 5 -o profile.html -o profile.pb.gz \
		-o profile.folded
	@echo
	@echo "Open the flame graph: xdg-open profile.html (or copy it to a machine with a browser;"
	@echo "it needs no server). The same profile for other tools: go tool pprof -http=: profile.pb.gz,"
	@echo "or profile.folded for flamegraph.pl and speedscope."

# check: warnings are errors, unit tests under ASan and UBSan in a separate build directory (unit
# runs the layer check and its test), the agent's reloads under ASan (LeakSanitizer fails its exit
# status on a leak; root), every fuzz target for FUZZ_CHECK_SECONDS (it shares the corpus with
# make fuzz, so each run starts from what the earlier ones found), and cppcheck.
FUZZ_CHECK_SECONDS ?= 15
check: deps-test
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/check \
		EXTRA_CFLAGS='-Werror -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' \
		EXTRA_LDFLAGS='-fsanitize=address,undefined' all unit
	$(Q)$(MAKE) --no-print-directory e2e-workloads
	$(Q)HOSTPROF=$(OUTPUT)/check/hostprof E2E_ONLY=agent_reload_pairs OUTPUT=$(OUTPUT) \
		tests/e2e/run.sh
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS)
	$(Q)$(MAKE) --no-print-directory bpf-cross
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem -Iinclude -Isrc src/

# The BPF programs must also compile for the architecture we do not run here.
bpf-cross: | $(OUTPUT)/bpf
	$(Q)mkdir -p $(OUTPUT)/bpf-arm64 && cp vmlinux/arm64/vmlinux.h $(OUTPUT)/bpf-arm64/
	$(Q)for f in $(BPF_SRCS); do \
		echo "  BPF      $$f (arm64)"; \
		$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_arm64 -Wall -Werror -I$(OUTPUT)/bpf-arm64 \
			-Iinclude -Ibpf -c $$f -o $(OUTPUT)/bpf-arm64/$$(basename $$f .c).o || exit 1; \
	done

# arm64 for real: the same build with the aarch64 cross compilers against the arm64 copies of the
# libraries (Debian multiarch, /usr/lib/aarch64-linux-gnu), the BPF objects and skeletons from
# vmlinux/arm64 with __TARGET_ARCH_arm64 (ARCH=arm64). Its own output directory, so the native
# build is untouched. The cross ar writes the archive's symbol index, which the host's cannot for
# aarch64 objects.
ARM64_OUTPUT ?= $(OUTPUT)/arm64
ARM64_CROSS ?= aarch64-linux-gnu-
arm64:
	$(Q)scripts/deps.sh arm64
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(ARM64_OUTPUT) ARCH=arm64 CC=$(ARM64_CROSS)gcc \
		CXX=$(ARM64_CROSS)g++ AR=$(ARM64_CROSS)ar all e2e-workloads

# The guest's initramfs for qemu-system-aarch64 (tests/kernels/initramfs.sh). What multiarch cannot
# install beside the host's own copies (the static busybox, python3) is unpacked from the arm64
# packages into $(ARM64_OUTPUT)/sysroot; the libraries come from /usr/lib/aarch64-linux-gnu,
# found by tests/kernels/elfdeps.sh since the host's ldd cannot run an aarch64 binary.
# apt-get download needs the arm64 package lists that scripts/deps.sh arm64 (make arm64) fetches.
ARM64_GUEST_PKGS := busybox-static python3-minimal python3.11-minimal libpython3.11-minimal libexpat1
$(ARM64_OUTPUT)/sysroot/.done: | arm64
	$(Q)rm -rf $(ARM64_OUTPUT)/sysroot $(ARM64_OUTPUT)/debs
	$(Q)mkdir -p $(ARM64_OUTPUT)/sysroot $(ARM64_OUTPUT)/debs
	$(Q)cd $(ARM64_OUTPUT)/debs && apt-get download -q $(addsuffix :arm64,$(ARM64_GUEST_PKGS))
	$(Q)for d in $(ARM64_OUTPUT)/debs/*.deb; do dpkg-deb -x $$d $(ARM64_OUTPUT)/sysroot || exit 1; done
	$(Q)touch $@

arm64-initramfs: arm64 $(ARM64_OUTPUT)/sysroot/.done
	$(Q)HOSTPROF=$(ARM64_OUTPUT)/hostprof WORKLOADS=$(ARM64_OUTPUT)/e2e \
		BUSYBOX=$(ARM64_OUTPUT)/sysroot/bin/busybox \
		LDD="tests/kernels/elfdeps.sh --root $(abspath $(ARM64_OUTPUT)/sysroot)" \
		tests/kernels/initramfs.sh $(ARM64_OUTPUT)/initramfs.cpio.gz $(ARM64_OUTPUT)/sysroot

FORMAT_FILES = $(wildcard src/*/*.c src/*/*.h bpf/*.c bpf/*.h include/*.h tests/unit/*.c tests/unit/*.h tests/e2e/*.c tests/fixtures/*.c bench/*.c \
	tests/fuzz/*.c tests/fuzz/*.h)

format:
	$(Q)clang-format -i $(FORMAT_FILES)

format-check:
	$(Q)clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/src/*/*.d $(OUTPUT)/tests/*.d)

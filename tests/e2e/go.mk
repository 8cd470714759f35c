# Go workloads of the end-to-end tests (tests/e2e/run.sh: go_labels, otel_go_sdk), built into
# $(OUTPUT)/e2e. Included by the top Makefile (Q and msg come from there).
#   go_labels_debian  tests/e2e/go_labels by Debian's Go (1.19: labels in a map), stripped
#   go_labels_newest  the same by the newest Go on the machine (`go` on PATH: labels in a slice)
#   go_labels_cgo     the same with cgo and its symbol table (g at runtime.tlsg, placed by ld)
#   otelgo            tests/e2e/otel_go: an OpenTelemetry Go SDK service with otel-profiling-go,
#                     its modules from the Go module proxy at the versions go.mod and go.sum pin
# The module and build caches live in E2E_GO_CACHE, beside the other test downloads, so that
# a CI run fetches the SDK once.

# The kernel matrix's guests run go_labels_newest too (tests/kernels/guest.sh): e2e-workloads
# builds it, for arm64 in the arm64 build (ARCH=arm64).
E2E_GOARCH := $(if $(filter arm64,$(ARCH)),arm64,amd64)
E2E_GO_DEBIAN ?= /usr/lib/go-1.19/bin/go
E2E_GO ?= go
E2E_GO_CACHE ?= /var/cache/hostprof-test/go
E2E_GOENV = GOCACHE=$(E2E_GO_CACHE)/build GOMODCACHE=$(E2E_GO_CACHE)/mod \
	GOFLAGS="-modcacherw -buildvcs=false -trimpath" GOPATH=$(E2E_GO_CACHE)/path
E2E_GO_BINS := $(addprefix $(E2E_DIR)/,go_labels_debian go_labels_newest go_labels_cgo otelgo)
E2E_GO_LABELS_SRC := tests/e2e/go_labels/main.go tests/e2e/go_labels/cgo.go \
	tests/e2e/go_labels/go.mod tests/e2e/go.mk

.PHONY: e2e-go-workloads
e2e-go-workloads: $(E2E_GO_BINS)
e2e-workloads: $(E2E_DIR)/go_labels_newest

$(E2E_DIR)/go_labels_debian: $(E2E_GO_LABELS_SRC) | $(E2E_DIR)
	$(call msg,GO,$@)
	$(Q)test -x $(E2E_GO_DEBIAN) || { echo "$@: no $(E2E_GO_DEBIAN): install Debian's golang-go (make deps)" >&2; exit 1; }
	$(Q)cd tests/e2e/go_labels && $(E2E_GOENV) GOTOOLCHAIN=local CGO_ENABLED=0 \
		$(E2E_GO_DEBIAN) build -ldflags='-s -w' -o $(abspath $@) .

$(E2E_DIR)/go_labels_newest: $(E2E_GO_LABELS_SRC) | $(E2E_DIR)
	$(call msg,GO,$@)
	$(Q)cd tests/e2e/go_labels && $(E2E_GOENV) GOTOOLCHAIN=local CGO_ENABLED=0 \
		GOARCH=$(E2E_GOARCH) $(E2E_GO) build -ldflags='-s -w' -o $(abspath $@) .

$(E2E_DIR)/go_labels_cgo: $(E2E_GO_LABELS_SRC) | $(E2E_DIR)
	$(call msg,GO,$@)
	$(Q)cd tests/e2e/go_labels && $(E2E_GOENV) GOTOOLCHAIN=local CGO_ENABLED=1 \
		$(E2E_GO) build -tags hostprof_cgo -o $(abspath $@) .

# GOTOOLCHAIN stays at its default: an older local Go fetches the release go.mod names.
$(E2E_DIR)/otelgo: tests/e2e/otel_go/main.go tests/e2e/otel_go/go.mod tests/e2e/otel_go/go.sum \
		tests/e2e/go.mk | $(E2E_DIR)
	$(call msg,GO,$@)
	$(Q)cd tests/e2e/otel_go && $(E2E_GOENV) CGO_ENABLED=0 GOPROXY=$${GOPROXY:-https://proxy.golang.org} \
		$(E2E_GO) build -mod=readonly -ldflags='-s -w' -o $(abspath $@) .

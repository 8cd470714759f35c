# The real Helm that make deploy-check lints and renders the chart with (tests/deploy/check.sh):
# helm.sh/helm/v3 at HELM_VERSION, built by tests/deploy/build-helm.sh from the Go module proxy
# into HELM_CACHE once; later runs, and other checkouts on the machine, reuse the binary.
# Cold: 148 s of CPU, 4 to 6 minutes on a shared 2-core VM, with 400 MB of modules downloaded
# (and removed after); warm: nothing to do.
# Included from the top Makefile: uses its $(Q) and $(msg).
.PHONY: helm

# The newest v3 that builds with Go 1.26 (helm v4 changes the chart API and the CLI).
HELM_VERSION ?= v3.22.0
HELM_CACHE ?= /var/cache/hostprof-test/helm-$(HELM_VERSION)
HELM := $(HELM_CACHE)/helm

helm: $(HELM)

$(HELM):
	$(call msg,GO,helm.sh/helm/v3/cmd/helm@$(HELM_VERSION) -> $@)
	$(Q)tests/deploy/build-helm.sh $(HELM_VERSION) $(HELM_CACHE)

deploy-check: $(HELM)

# What tests/e2e/run.sh's html_browser test needs besides hostprof and chromium (scripts/deps.sh
# test installs Debian's chromium, which playwright-core drives at /usr/bin/chromium):
#   browser-deps   tests/browser/node_modules (playwright-core only, no browser download),
#                  installed with `npm ci` from package-lock.json when missing or older than it
# Included from the top Makefile: uses its $(Q) and $(msg), and $(NPM) from tests/grpc/grpc.mk.

BROWSER_DIR := tests/browser
# npm writes node_modules/.package-lock.json on every install: a file to compare times with.
BROWSER_STAMP := $(BROWSER_DIR)/node_modules/.package-lock.json
NPM ?= npm

.PHONY: browser-deps
browser-deps: $(BROWSER_STAMP)

# --ignore-scripts: playwright-core has no install script to run, and registry code has no
# business running as root here.
$(BROWSER_STAMP): $(BROWSER_DIR)/package-lock.json $(BROWSER_DIR)/package.json
	$(call msg,NPM,$(BROWSER_DIR)/node_modules)
	$(Q)cd $(BROWSER_DIR) && $(NPM) ci --no-audit --no-fund --ignore-scripts --loglevel=error
	$(Q)touch $@

# The symbolizers that make bench-symbolize compares hostprof with, besides Debian's
# (eu-addr2line, addr2line, llvm-symbolizer: scripts/deps.sh): blazesym's command-line tool
# blazecli at BLAZECLI_VERSION, built once with cargo from crates.io (--locked: the versions of
# its Cargo.lock) into BLAZECLI_CACHE; later runs reuse it. Cold: about 90 s of CPU. It needs
# Rust 1.75 or newer: rustup's cargo (Debian's is older).
# Included from the top Makefile: uses its $(Q) and $(msg).
.PHONY: blazecli

BLAZECLI_VERSION ?= 0.1.14
BLAZECLI_CACHE ?= /var/cache/hostprof-test/blazecli-$(BLAZECLI_VERSION)
BLAZECLI_BIN := $(BLAZECLI_CACHE)/bin/blazecli
# rustup installs into ~/.cargo/bin, which a non-login shell may not have on PATH.
CARGO ?= $(shell command -v cargo 2>/dev/null || echo $(HOME)/.cargo/bin/cargo)

blazecli: $(BLAZECLI_BIN)

$(BLAZECLI_BIN):
	$(call msg,CARGO,blazecli $(BLAZECLI_VERSION) -> $@)
	$(Q)[ -x "$(CARGO)" ] || { echo "blazecli: no cargo (rustup's, Rust 1.75 or newer)" >&2; exit 1; }
	$(Q)$(CARGO) install --quiet --locked --version $(BLAZECLI_VERSION) \
		--root $(BLAZECLI_CACHE).tmp blazecli
	$(Q)mkdir -p $(dir $@) && mv $(BLAZECLI_CACHE).tmp/bin/blazecli $@ && rm -rf $(BLAZECLI_CACHE).tmp

bench-symbolize: $(BLAZECLI_BIN)
bench-symbolize: export BLAZECLI = $(BLAZECLI_BIN)

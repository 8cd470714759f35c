# Deployment artifacts of `hostprof agent`: `make install` (binary, systemd unit, example config)
# and `make deploy-check` (the unit, the Helm chart and the YAML files checked without a cluster).
# Included from the top Makefile: uses its $(OUTPUT), $(Q) and $(msg).
#
# make install [DESTDIR=/staging] [PREFIX=/usr/local] [SYSCONFDIR=/etc] [UNITDIR=...]
#   $(PREFIX)/bin/hostprof
#   $(UNITDIR)/hostprof.service    UNITDIR defaults to $(PREFIX)/lib/systemd/system, which
#                                  systemd searches for PREFIX=/usr/local and /usr; with another
#                                  PREFIX, set UNITDIR=/etc/systemd/system (or /usr/lib/...)
#   $(SYSCONFDIR)/hostprof/config.yaml   only if there is none: a local config is never replaced
# DESTDIR is prepended to every path written, never to the paths written into the unit
# (ExecStart= and the config and token paths follow PREFIX and SYSCONFDIR).
#
# make deploy-check (part of make test, after the unit tests): tests/deploy/check.sh. It installs
# into a temporary directory only, and needs go, yamllint, python3-yaml and systemd-analyze
# (make deps), and the real Helm, which tests/deploy/helm.mk builds once into a cache.
.PHONY: install deploy-check

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system

install: $(OUTPUT)/hostprof
	$(call msg,INSTALL,$(DESTDIR)$(BINDIR)/hostprof)
	$(Q)install -D -m 0755 $(OUTPUT)/hostprof $(DESTDIR)$(BINDIR)/hostprof
	$(call msg,INSTALL,$(DESTDIR)$(UNITDIR)/hostprof.service)
	$(Q)install -d -m 0755 $(DESTDIR)$(UNITDIR)
	$(Q)sed -e 's|/usr/local/bin/hostprof|$(BINDIR)/hostprof|g' \
		-e 's|/etc/hostprof/|$(SYSCONFDIR)/hostprof/|g' \
		systemd/hostprof.service > $(DESTDIR)$(UNITDIR)/hostprof.service.tmp
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/hostprof.service.tmp
	$(Q)mv $(DESTDIR)$(UNITDIR)/hostprof.service.tmp $(DESTDIR)$(UNITDIR)/hostprof.service
	$(Q)install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/hostprof
	$(Q)if [ -e $(DESTDIR)$(SYSCONFDIR)/hostprof/config.yaml ]; then \
		printf '  %-8s %s\n' KEEP "$(DESTDIR)$(SYSCONFDIR)/hostprof/config.yaml (not replaced)"; \
	else \
		printf '  %-8s %s\n' INSTALL $(DESTDIR)$(SYSCONFDIR)/hostprof/config.yaml; \
		install -m 0600 systemd/config.yaml $(DESTDIR)$(SYSCONFDIR)/hostprof/config.yaml; \
	fi
	$(Q)if [ -z "$(DESTDIR)" ]; then \
		echo "Next (systemd/README.md): the token in $(SYSCONFDIR)/hostprof/otlp-token (0600),"; \
		echo "the receiver in $(SYSCONFDIR)/hostprof/config.yaml, then"; \
		echo "systemctl daemon-reload && systemctl enable --now hostprof"; \
	fi

deploy-check: $(OUTPUT)/hostprof
	$(Q)OUTPUT=$(OUTPUT) MAKE="$(MAKE)" HELM=$(HELM) tests/deploy/check.sh

# What tests/unit/test_transport_grpc.c needs besides the test binary:
#   grpc-deps      tests/grpc/node_modules (@grpc/grpc-js, @grpc/proto-loader for server.js),
#                  installed with `npm ci` from package-lock.json when missing or older than it
#   grpc-fixtures  $(OUTPUT)/fixtures/grpc-tls/{cert,key}.pem, a self-signed certificate for
#                  127.0.0.1 that the TLS (ALPN h2) checks serve and trust via ca_file
# Included from the top Makefile: uses its $(OUTPUT), $(Q) and $(msg).

GRPC_DIR := tests/grpc
# npm writes node_modules/.package-lock.json on every install: a file to compare times with,
# where the directory's own time only moves when entries come and go.
GRPC_STAMP := $(GRPC_DIR)/node_modules/.package-lock.json
GRPC_TLS_DIR := $(OUTPUT)/fixtures/grpc-tls
NPM ?= npm
OPENSSL ?= openssl

.PHONY: grpc-deps grpc-fixtures
grpc-deps: $(GRPC_STAMP)
grpc-fixtures: $(GRPC_TLS_DIR)/cert.pem

# --ignore-scripts: the one install script in the tree (protobufjs's postinstall) only prints
# version advice, and registry code has no business running as root here.
$(GRPC_STAMP): $(GRPC_DIR)/package-lock.json $(GRPC_DIR)/package.json
	$(call msg,NPM,$(GRPC_DIR)/node_modules)
	$(Q)cd $(GRPC_DIR) && $(NPM) ci --no-audit --no-fund --ignore-scripts --loglevel=error
	$(Q)touch $@

# EC P-256, valid for a century: a test fixture must not expire under a checkout. The key is a
# throwaway that the unprivileged test user must be able to read.
$(GRPC_TLS_DIR)/cert.pem:
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(GRPC_TLS_DIR)
	$(Q)$(OPENSSL) req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout $(GRPC_TLS_DIR)/key.pem -out $@.tmp -days 36500 -subj /CN=hostprof-test \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost 2>/dev/null
	$(Q)chmod 644 $(GRPC_TLS_DIR)/key.pem && mv $@.tmp $@

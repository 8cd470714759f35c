# hostprof agent image, for the Helm chart in helm/hostprof (its image.repository).
#
#   docker build -t REGISTRY/hostprof:$(cat VERSION) --build-arg GIT_REV=$(git rev-parse --short HEAD) .
#
# The build stage installs the build packages with scripts/deps.sh, as on a developer's machine;
# the runtime stage has only the shared libraries that build/hostprof links against (checked by
# `make deploy-check` against the binary's DT_NEEDED entries and the Makefile's LDLIBS).

FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/deps.sh scripts/deps.sh
RUN scripts/deps.sh build && rm -rf /var/lib/apt/lists/*
COPY . .
# Without .git in the context, the revision comes from the build argument.
ARG GIT_REV=unknown
RUN make -j"$(nproc)" GIT_REV="$GIT_REV" && \
	install -D -m 0755 build/hostprof /out/hostprof

FROM debian:bookworm-slim
# libbpf1 libelf1 libdw1 zlib1g: BPF and ELF/DWARF; libdebuginfod1: debug files from the
# servers in DEBUGINFOD_URLS; libprotobuf-c1: OTLP and pprof;
# libcurl3-gnutls: the transports (libcurl's GnuTLS build, which libdebuginfod1 uses too);
# libssh2-1: libcurl's SSH backend, set up without crypto (never used); libnettle8: SHA-256
# (the file ids); libyaml-0-2: the config file; libjson-c5: the kubelet's /pods and Docker's
# container configs; libmicrohttpd12: /metrics, /healthz, /readyz; libsystemd0: sd_notify;
# liblzma5: MiniDebugInfo (.gnu_debugdata);
# ca-certificates: TLS to the receivers.
# libiberty (demangling) is a static library: nothing to install.
RUN apt-get update && \
	apt-get install -y --no-install-recommends \
		ca-certificates \
		libbpf1 \
		libcurl3-gnutls \
		libdebuginfod1 \
		libdw1 \
		libelf1 \
		libjson-c5 \
		liblzma5 \
		libmicrohttpd12 \
		libnettle8 \
		libprotobuf-c1 \
		libssh2-1 \
		libsystemd0 \
		libyaml-0-2 \
		zlib1g \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=build /out/hostprof /usr/local/bin/hostprof
# The unwind-table cache (config cache_dir); the chart mounts a volume here.
RUN install -d -m 0700 /var/cache/hostprof
# Runs as root: the chart adds the capabilities, which Kubernetes grants to uid 0 only.
ENTRYPOINT ["/usr/local/bin/hostprof", "agent"]

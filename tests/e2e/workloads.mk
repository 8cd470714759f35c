# End-to-end workloads: small C programs whose CPU profile is known in advance, built into
# $(OUTPUT)/e2e and driven by tests/e2e/run.sh. Included by the top Makefile (Q and msg come from
# there). They get their own flags, never CFLAGS/EXTRA_CFLAGS: a sanitizer or -O0 would change the
# profiles the tests predict. Frame pointers everywhere, since the profiler unwinds with them.

E2E_DIR := $(OUTPUT)/e2e
E2E_CFLAGS := -O2 -g -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -D_GNU_SOURCE

E2E_BINS := $(addprefix $(E2E_DIR)/,cpu_ratio lib_ratio libhpwork.so syscalls short_lived cpu_threads \
	sleeper short_waits crowded mutex mmap_churn nofp libnofp.so nofp_dlopen nofp_exec_a nofp_exec_b cxx_throw \
	jit_mmap otel_ctx libotel_tls.so otel_ctx_lib otel_ctx_dl)

.PHONY: e2e-workloads
e2e-workloads: $(E2E_BINS)

$(E2E_DIR):
	$(Q)mkdir -p $@

# A PIE: symbols must be resolved relative to a randomized load address.
$(E2E_DIR)/cpu_ratio: tests/e2e/cpu_ratio.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -fPIE -pie $< -o $@

$(E2E_DIR)/libhpwork.so: tests/e2e/hpwork.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -fPIC -shared -Wl,-soname,libhpwork.so $< -o $@

# Finds libhpwork.so next to itself through $ORIGIN, so it runs from $(E2E_DIR) as it is.
$(E2E_DIR)/lib_ratio: tests/e2e/lib_ratio.c $(E2E_DIR)/libhpwork.so tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -fPIE -pie $< -L$(E2E_DIR) -lhpwork -Wl,-rpath,'$$ORIGIN' -o $@

$(E2E_DIR)/syscalls: tests/e2e/syscalls.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) $< -o $@

# Not a PIE (ET_EXEC), so the suite covers binaries loaded at their link address too.
$(E2E_DIR)/short_lived: tests/e2e/short_lived.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -fno-pie -no-pie $< -o $@

$(E2E_DIR)/cpu_threads: tests/e2e/cpu_threads.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -pthread $< -o $@

$(E2E_DIR)/short_waits: tests/e2e/short_waits.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) $< -o $@

$(E2E_DIR)/crowded: tests/e2e/crowded.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -pthread $< -o $@

$(E2E_DIR)/sleeper: tests/e2e/sleeper.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) $< -o $@

$(E2E_DIR)/mutex: tests/e2e/mutex.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) $< -o $@ -lpthread

# Publishes an OpenTelemetry process context (OTEP 4719) and thread contexts (OTEP 4947) as an
# SDK would; the TLS variable three ways: in the executable (local-exec, exported in .dynsym as
# the OTEP requires), in a TLSDESC library loaded at start, and in the same library dlopened.
OTEL_CTX_DEPS := tests/e2e/otel_ctx.c tests/e2e/otel_tls.c tests/e2e/otel_publish.h \
	tests/e2e/workloads.mk tests/e2e/workload.h
$(E2E_DIR)/otel_ctx: $(OTEL_CTX_DEPS) | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -DOTEL_TLS_IN_EXE $< -pthread \
		-Wl,--export-dynamic-symbol=otel_thread_ctx_v1 -o $@

# TLSDESC: gcc calls it gnu2 on x86_64, desc on aarch64 (where it is the default anyway).
TLSDESC_FLAG = $(if $(filter aarch64%,$(shell $(CC) -dumpmachine)),-mtls-dialect=desc,-mtls-dialect=gnu2)
$(E2E_DIR)/libotel_tls.so: tests/e2e/otel_tls.c tests/e2e/workloads.mk | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -fPIC $(TLSDESC_FLAG) -shared -Wl,-soname,libotel_tls.so $< -o $@

$(E2E_DIR)/otel_ctx_lib: $(OTEL_CTX_DEPS) $(E2E_DIR)/libotel_tls.so | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -DOTEL_TLS_LIB $< -pthread -L$(E2E_DIR) -lotel_tls \
		-Wl,-rpath,'$$ORIGIN' -o $@

$(E2E_DIR)/otel_ctx_dl: $(OTEL_CTX_DEPS) $(E2E_DIR)/libotel_tls.so | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) -DOTEL_TLS_DLOPEN $< -pthread -ldl -Wl,-rpath,'$$ORIGIN' -o $@

# Generates its code at run time and names it in /tmp/perf-PID.map.
$(E2E_DIR)/jit_mmap: tests/e2e/jit_mmap.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) $< -o $@

$(E2E_DIR)/mmap_churn: tests/e2e/mmap_churn.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(E2E_CFLAGS) $< -o $@ -lpthread

# Built like most distribution binaries: no frame pointers, in the program and in its library. Only
# the .eh_frame tables can unwind it. No sibling calls, so that every frame the test expects is
# really on the stack (a tail call would make perf and hostprof both skip one, rightly).
NOFP_CFLAGS := $(filter-out -fno-omit-frame-pointer,$(E2E_CFLAGS)) -fomit-frame-pointer \
	-fno-optimize-sibling-calls

$(E2E_DIR)/libnofp.so: tests/e2e/nofp_lib.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fPIC -shared -Wl,-soname,libnofp.so $< -o $@

$(E2E_DIR)/nofp: tests/e2e/nofp.c $(E2E_DIR)/libnofp.so tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fPIE -pie $< -L$(E2E_DIR) -lnofp -Wl,-rpath,'$$ORIGIN' -o $@

# Opens libnofp.so only after a delay: its table must be loaded when the process maps it.
$(E2E_DIR)/nofp_dlopen: tests/e2e/nofp_dlopen.c $(E2E_DIR)/libnofp.so tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fPIE -pie $< -o $@ -ldl

# Two non-PIE images whose code starts at the same address: the exec test.
$(E2E_DIR)/nofp_exec_a: tests/e2e/nofp_exec.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fno-pie -no-pie $< -o $@

$(E2E_DIR)/nofp_exec_b: tests/e2e/nofp_exec.c tests/e2e/workloads.mk tests/e2e/workload.h | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -DSECOND -fno-pie -no-pie $< -o $@

$(E2E_DIR)/cxx_throw: tests/e2e/cxx_throw.cpp tests/e2e/workloads.mk | $(E2E_DIR)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CXX) -O2 -g -fomit-frame-pointer -Wall -Wextra $< -o $@ -pthread

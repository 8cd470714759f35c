# Fuzz targets (libFuzzer) for the parsers of outside input, built into $(FUZZ_DIR) with their own
# compilation of the sources: coverage instrumentation and ASan+UBSan on every object, so the
# normal build and the check build stay as they are.
#   make fuzz                    every target for FUZZ_SECONDS (30) each; fails on a crash, a leak,
#                                an input slower than FUZZ_TIMEOUT (5 s) or running out of memory,
#                                and names the input it kept and the command that replays it
#   make fuzz FUZZ_SECONDS=600   a long run; FUZZ_TARGETS="elf perfmap" runs only those
# The corpus grows in $(FUZZ_DIR)/corpus/TARGET across runs; the seeds are made here, from the
# fixture sources (ELF files with and without DWARF or .eh_frame) and from hostprof render.
# Included from the top Makefile: uses its $(OUTPUT), $(CLANG), $(CFLAGS), $(LDLIBS), $(Q), $(msg).

FUZZ_DIR := $(OUTPUT)/fuzz
FUZZ_SECONDS ?= 30
FUZZ_TIMEOUT ?= 5
FUZZ_TARGETS ?= elf perfmap dec_folded dec_pprof dec_otlp config otel_ctx
FUZZ_CC ?= $(CLANG)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = $(CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link

FUZZ_OBJS := $(patsubst src/%.c,$(FUZZ_DIR)/obj/src/%.o,$(filter-out src/cmd/main.c,$(SRCS))) \
	$(patsubst $(OUTPUT)/proto/%.c,$(FUZZ_DIR)/obj/proto/%.o,$(PB_SRCS))
FUZZ_BINS := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_TARGETS))
FUZZ_SEEDS := $(FUZZ_DIR)/seeds/elf.stamp $(FUZZ_DIR)/seeds/perfmap.stamp \
	$(FUZZ_DIR)/seeds/dec.stamp $(FUZZ_DIR)/seeds/config.stamp $(FUZZ_DIR)/seeds/otel_ctx.stamp

.PHONY: fuzz fuzz-build
fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TIMEOUT) $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_BINS) $(FUZZ_SEEDS)

$(FUZZ_DIR)/obj/src/%.o: src/%.c $(SKELS) $(PB_HDRS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

# Generated code: its warnings are not ours.
$(FUZZ_DIR)/obj/proto/%.o: $(OUTPUT)/proto/%.c | $(PB_HDRS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -w -c $< -o $@

$(FUZZ_DIR)/libhostprof-fuzz.a: $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_DIR)/libhostprof-fuzz.a
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Itests/fuzz $< $(FUZZ_DIR)/libhostprof-fuzz.a \
		$(LDLIBS) -o $@

# ELF seeds, small (one file page for code and data: -z noseparate-code), built with the
# toolchain the fixtures use:
#   inline          DWARF 5 with a two-deep inline chain, .eh_frame, build-id
#   inline-dwarf4   the same as DWARF 4 (other CU and line table headers)
#   inline-gz       the same with zlib-compressed debug sections, when the toolchain can
#   inline-stripped no .symtab, no DWARF: .dynsym and .eh_frame only
#   unwind          no frame pointers, a VLA (FP-based CFA) and the lazy PLT's CFA expression
#   unwind-dbgframe.so  CFI in .debug_frame only
FUZZ_ELF_CFLAGS := -O2 -fPIE -pie -Wl,-z,noseparate-code -Wl,--build-id=sha1
FUZZ_ELF_SRC := tests/fixtures/elf

$(FUZZ_DIR)/seeds/elf.stamp: $(FUZZ_ELF_SRC)/fx_inline.c $(FUZZ_ELF_SRC)/fx_unwind.c
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds/elf)
	$(Q)set -e; d=$(FUZZ_DIR)/seeds/elf; rm -rf $$d; mkdir -p $$d; \
	$(CC) $(FUZZ_ELF_CFLAGS) -g $(FUZZ_ELF_SRC)/fx_inline.c -o $$d/inline; \
	$(CC) $(FUZZ_ELF_CFLAGS) -gdwarf-4 $(FUZZ_ELF_SRC)/fx_inline.c -o $$d/inline-dwarf4; \
	$(CC) $(FUZZ_ELF_CFLAGS) -g -gz=zlib $(FUZZ_ELF_SRC)/fx_inline.c -o $$d/inline-gz \
		2>/dev/null || rm -f $$d/inline-gz; \
	strip --strip-all -o $$d/inline-stripped $$d/inline; \
	$(CC) $(FUZZ_ELF_CFLAGS) -fomit-frame-pointer -fcf-protection=none -Wl,-z,lazy \
		$(FUZZ_ELF_SRC)/fx_unwind.c -o $$d/unwind; \
	$(CC) -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -shared -fPIC \
		-Wl,-z,noseparate-code $(FUZZ_ELF_SRC)/fx_unwind.c -o $$d/unwind-dbgframe.so.tmp; \
	objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr \
		$$d/unwind-dbgframe.so.tmp $$d/unwind-dbgframe.so; \
	rm -f $$d/unwind-dbgframe.so.tmp; \
	touch $@

# Perf maps: the checked-in fixtures (V8, JVM, CPython and broken lines).
$(FUZZ_DIR)/seeds/perfmap.stamp: $(wildcard tests/fixtures/perfmap/*.map)
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds/perfmap)
	$(Q)rm -rf $(FUZZ_DIR)/seeds/perfmap && mkdir -p $(FUZZ_DIR)/seeds/perfmap && \
		cp $^ $(FUZZ_DIR)/seeds/perfmap/ && touch $@

# Decoder inputs: one small folded profile (user and kernel frames), and what hostprof render
# makes of it as pprof (gzipped and raw) and OTLP.
$(FUZZ_DIR)/seeds/dec.stamp: $(OUTPUT)/hostprof
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds/dec_*)
	$(Q)set -e; s=$(FUZZ_DIR)/seeds; rm -rf $$s/dec_folded $$s/dec_pprof $$s/dec_otlp; \
	mkdir -p $$s/dec_folded $$s/dec_pprof $$s/dec_otlp; \
	printf '%s\n' '# a comment' 'app;main;work;leaf 5' 'app;main;work;other 3' \
		'app;main;read;vfs_read_[k];ext4_file_read_iter_[k] 2' '' \
		'worker;start_thread;run;py::f:x.py_[j] 1' > $$s/dec_folded/basic.folded; \
	$(OUTPUT)/hostprof render $$s/dec_folded/basic.folded -o $$s/dec_pprof/basic.pb.gz \
		-o $$s/dec_otlp/basic.otlp.pb >/dev/null; \
	gzip -dc $$s/dec_pprof/basic.pb.gz > $$s/dec_pprof/basic.pb; \
	touch $@

$(FUZZ_DIR)/seeds/config.stamp: systemd/config.yaml
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds/config)
	$(Q)set -e; d=$(FUZZ_DIR)/seeds/config; rm -rf $$d; mkdir -p $$d; cp $< $$d/; \
	printf '%s\n' 'frequency: 99' 'types: [cpu, offcpu]' 'export:' '  otlp:' \
		'    endpoint: http://localhost:4318' '    headers:' '      x-token: abc' \
		> $$d/small.yaml; \
	touch $@

# An OpenTelemetry process context payload (a resource with service.name, the thread-context key
# map ["route"]), 0xff, then a thread context record (ids, valid, attribute route=abc).
$(FUZZ_DIR)/seeds/otel_ctx.stamp: tests/fuzz/fuzz.mk
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds/otel_ctx)
	$(Q)set -e; d=$(FUZZ_DIR)/seeds/otel_ctx; rm -rf $$d; mkdir -p $$d; \
	python3 -c 'import sys; \
	kv = lambda k, v: bytes([10, len(k)]) + k + bytes([18, len(v)]) + v; \
	svc = kv(b"service.name", bytes([10, 1]) + b"s"); \
	res = bytes([10, len(svc)]) + svc; \
	arr = bytes([10, 7, 10, 5]) + b"route"; \
	keymap = kv(b"threadlocal.attribute_key_map", bytes([42, len(arr)]) + arr); \
	payload = bytes([10, len(res)]) + res + bytes([18, len(keymap)]) + keymap; \
	rec = bytes(range(1, 17)) + bytes([9] * 8) + bytes([1, 1, 5, 0, 0, 3]) + b"abc"; \
	sys.stdout.buffer.write(payload + bytes([255]) + rec)' > $$d/basic; \
	touch $@

-include $(wildcard $(FUZZ_DIR)/obj/src/*/*.d $(FUZZ_DIR)/*.d)

# Test ELF binaries for tests/unit/test_dso.c, built from tests/fixtures/elf/*.c into
# $(OUTPUT)/fixtures/, with what the test compares against, computed by binutils rather than by our
# own ELF reader:
#   X.buildid  the build-id as `readelf -n` prints it
#   X.syms     `nm -S --defined-only` (X.dynsyms: the same over .dynsym, for the stripped library)
#   X.funcs    every defined FUNC/IFUNC symbol's value, from `readelf -sW`
#   X.phdrs    the PT_LOAD lines of `readelf -lW`
#   X.lines    for every instruction of fx_inline's fx_outer (of fx_ranges' fx_nest, fx_split and
#              fx_split's .cold part), `addr2line -a -f -i`: the address, then (function,
#              file:line) pairs of its inline chain, innermost first
#   X.demangle for objects with C++ and Rust (legacy and v0) symbols: "mangled<TAB>readable" per
#              defined code symbol, the readable form from `nm --demangle` (binutils)
# Included from the top Makefile: uses its $(OUTPUT), $(CC), $(Q) and $(msg).

UNIT_FX_DIR := $(OUTPUT)/fixtures
UNIT_FX_SRC := tests/fixtures/elf
# No sanitizers or project flags: these are inputs to the test, not code under test. Build-ids are
# requested explicitly because not every toolchain adds them by default.
UNIT_FX_CFLAGS := -O2 -fno-omit-frame-pointer -Wl,--build-id=sha1
UNIT_FX_READELF ?= readelf
UNIT_FX_NM ?= nm
UNIT_FX_STRIP ?= strip
UNIT_FX_OBJDUMP ?= objdump
UNIT_FX_ADDR2LINE ?= addr2line

UNIT_FX_BINS := $(UNIT_FX_DIR)/fx_pie $(UNIT_FX_DIR)/fx_nopie $(UNIT_FX_DIR)/libfx.so \
	$(UNIT_FX_DIR)/libfx-stripped.so $(UNIT_FX_DIR)/fx_twoexec $(UNIT_FX_DIR)/fx_inline \
	$(UNIT_FX_DIR)/fx_ranges
UNIT_FX_META := $(foreach b,$(UNIT_FX_BINS),$(b).buildid $(b).htlhash $(b).syms $(b).funcs $(b).phdrs) \
	$(UNIT_FX_DIR)/libfx-stripped.so.dynsyms $(UNIT_FX_DIR)/fx_inline.lines \
	$(UNIT_FX_DIR)/fx_ranges.lines \
	$(UNIT_FX_DIR)/fx_cxx.o.demangle $(UNIT_FX_DIR)/fx_rust_legacy.o.demangle \
	$(UNIT_FX_DIR)/fx_rust_v0.o.demangle

.PHONY: unit-fixtures
unit-fixtures: $(UNIT_FX_BINS) $(UNIT_FX_META)

$(UNIT_FX_DIR):
	$(Q)mkdir -p $@

$(UNIT_FX_DIR)/fx_pie: $(UNIT_FX_SRC)/fx_prog.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNIT_FX_CFLAGS) -fPIE -pie $< -o $@

$(UNIT_FX_DIR)/fx_nopie: $(UNIT_FX_SRC)/fx_prog.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNIT_FX_CFLAGS) -fno-pie -no-pie $< -o $@

$(UNIT_FX_DIR)/libfx.so: $(UNIT_FX_SRC)/fx_lib.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNIT_FX_CFLAGS) -shared -fPIC $< -o $@

# --strip-all drops .symtab; .dynsym, which the loader needs, stays.
$(UNIT_FX_DIR)/libfx-stripped.so: $(UNIT_FX_DIR)/libfx.so
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_STRIP) --strip-all -o $@ $<

# Placing "fxsecond" far from .text makes the linker give it a second R+X PT_LOAD (with
# separate-code, the first one holds only code). Fail here, not in the test, if a linker
# ever merges them.
$(UNIT_FX_DIR)/fx_twoexec: $(UNIT_FX_SRC)/fx_twoexec.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNIT_FX_CFLAGS) -fPIE -pie -Wl,-z,separate-code \
		-Wl,--section-start=fxsecond=0x200000 $< -o $@.tmp
	$(Q)n=$$($(UNIT_FX_READELF) -lW $@.tmp | grep -cE '^ *LOAD .* [R ][W ]E +0x'); \
	if [ "$$n" -lt 2 ]; then \
		echo "$@: expected 2 executable PT_LOAD segments, got $$n" >&2; rm -f $@.tmp; exit 1; \
	fi
	$(Q)mv $@.tmp $@

# DWARF with inlined code: fx_outer holds a two-deep chain of always-inline functions.
$(UNIT_FX_DIR)/fx_inline: $(UNIT_FX_SRC)/fx_inline.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNIT_FX_CFLAGS) -g -fPIE -pie $< -o $@

$(UNIT_FX_DIR)/fx_inline.lines: $(UNIT_FX_DIR)/fx_inline
	$(Q)set -e; range=$$($(UNIT_FX_NM) -S $< | awk '$$4 == "fx_outer" { print $$1, $$2 }'); \
	set -- $$range; start=$$((0x$$1)); end=$$((0x$$1 + 0x$$2)); \
	$(UNIT_FX_OBJDUMP) -d --start-address=$$start --stop-address=$$end $< | \
		sed -n 's/^ *\([0-9a-f][0-9a-f]*\):.*/0x\1/p' | \
		$(UNIT_FX_ADDR2LINE) -a -f -i -e $< > $@.tmp && mv $@.tmp $@

# DWARF function ranges: nested and sibling inlined instances, a function split into a hot and a
# .cold part (DW_AT_ranges), and a CU without functions. Fail here if the compiler did not split.
$(UNIT_FX_DIR)/fx_ranges: $(UNIT_FX_SRC)/fx_ranges.c $(UNIT_FX_SRC)/fx_nofunc.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNIT_FX_CFLAGS) -g -fPIE -pie $^ -o $@.tmp
	$(Q)$(UNIT_FX_NM) $@.tmp | grep -q ' fx_split\.cold$$' || \
		{ echo "$@: the compiler made no fx_split.cold" >&2; rm -f $@.tmp; exit 1; }
	$(Q)mv $@.tmp $@

$(UNIT_FX_DIR)/fx_ranges.lines: $(UNIT_FX_DIR)/fx_ranges
	$(Q)set -e; $(UNIT_FX_NM) -S $< | awk '$$4 ~ /^fx_(nest|split)/ { print $$1, $$2 }' | \
	while read -r a s; do \
		start=$$((0x$$a)); end=$$((0x$$a + 0x$$s)); \
		$(UNIT_FX_OBJDUMP) -d --start-address=$$start --stop-address=$$end $<; \
	done | sed -n 's/^ *\([0-9a-f][0-9a-f]*\):.*/0x\1/p' | \
		$(UNIT_FX_ADDR2LINE) -a -f -i -e $< > $@.tmp && mv $@.tmp $@

# Mangled names, made by the compilers themselves. Without rustc the Rust objects are empty
# files and the test checks C++ only.
UNIT_FX_CXX ?= g++
UNIT_FX_RUSTC ?= rustc

$(UNIT_FX_DIR)/fx_cxx.o: $(UNIT_FX_SRC)/fx_cxx.cc | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_CXX) -O2 -c $< -o $@

# rustc's stable default is the legacy mangling; v0 is asked for.
$(UNIT_FX_DIR)/fx_rust_legacy.o: $(UNIT_FX_SRC)/fx_rust.rs | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)if command -v $(UNIT_FX_RUSTC) >/dev/null 2>&1; then \
		$(UNIT_FX_RUSTC) --crate-type=lib --emit=obj -O $< -o $@; else : > $@; fi

$(UNIT_FX_DIR)/fx_rust_v0.o: $(UNIT_FX_SRC)/fx_rust.rs | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)if command -v $(UNIT_FX_RUSTC) >/dev/null 2>&1; then \
		$(UNIT_FX_RUSTC) --crate-type=lib --emit=obj -O -C symbol-mangling-version=v0 \
			$< -o $@; else : > $@; fi

# --no-sort keeps both listings in symbol-table order, so that they pair up line by line.
$(UNIT_FX_DIR)/%.o.demangle: $(UNIT_FX_DIR)/%.o
	$(Q)if [ -s $< ]; then \
		$(UNIT_FX_NM) --defined-only --no-sort $< | awk '$$2 ~ /^[TtWw]$$/ { print $$3 }' \
			> $@.raw && \
		$(UNIT_FX_NM) -C --defined-only --no-sort $< | awk '$$2 ~ /^[TtWw]$$/' | \
			cut -d' ' -f3- > $@.readable && \
		paste $@.raw $@.readable > $@.tmp && rm -f $@.raw $@.readable; \
	else : > $@.tmp; fi && mv $@.tmp $@

$(UNIT_FX_DIR)/%.buildid: $(UNIT_FX_DIR)/%
	$(Q)$(UNIT_FX_READELF) -n $< | sed -n 's/^ *Build ID: *//p' > $@.tmp && mv $@.tmp $@

# The OpenTelemetry file id: SHA-256 of the first 4 KiB, the last 4 KiB and the big-endian
# 64-bit length, first 16 bytes in hex (specification/profiles/mappings.md).
$(UNIT_FX_DIR)/%.htlhash: $(UNIT_FX_DIR)/%
	$(Q)python3 -c 'import hashlib,sys; d=open(sys.argv[1],"rb").read(); \
		print(hashlib.sha256(d[:4096] + d[-4096:] + len(d).to_bytes(8, "big")).hexdigest()[:32])' \
		$< > $@.tmp && mv $@.tmp $@

$(UNIT_FX_DIR)/%.syms: $(UNIT_FX_DIR)/%
	$(Q)$(UNIT_FX_NM) -S --defined-only $< > $@.tmp 2>/dev/null; mv $@.tmp $@

$(UNIT_FX_DIR)/%.dynsyms: $(UNIT_FX_DIR)/%
	$(Q)$(UNIT_FX_NM) -D -S --defined-only $< > $@.tmp && mv $@.tmp $@

$(UNIT_FX_DIR)/%.funcs: $(UNIT_FX_DIR)/%
	$(Q)$(UNIT_FX_READELF) -sW $< | \
		awk '($$4 == "FUNC" || $$4 == "IFUNC") && $$7 != "UND" { print $$2, $$3, $$8 }' \
		> $@.tmp && mv $@.tmp $@

$(UNIT_FX_DIR)/%.phdrs: $(UNIT_FX_DIR)/%
	$(Q)$(UNIT_FX_READELF) -lW $< | grep -E '^ *LOAD ' > $@.tmp && mv $@.tmp $@

# Separate debug files (tests/unit/test_debuginfo.c). libfxdbg.so is fx_lib.c with DWARF; its
# stripped copy keeps only .dynsym (fx_lib_hidden and fx_lib_local are gone) and a .gnu_debuglink
# to libfxdbg.so.debug, laid out as a distribution would:
#   debugroot-buildid/.build-id/xx/rest.debug   the debug file, found by build-id
#   debuglink/                                  stripped copy and debug file side by side
#   debuglink-corrupt/                          the same, with "fx_lib_hidden" renamed inside the
#                                               debug file: parseable, but the CRC no longer matches
#   debugroot-truncated/.build-id/...           the debug file cut in half
#   debugroot-mismatch/.build-id/...            another binary (fx_inline) under this build-id
#   libfxdbg.so.dbglines                        "function address file:line" of addr2line on the
#                                               debug file, at the start and middle of functions
UNIT_FX_DBG := $(UNIT_FX_DIR)/libfxdbg.so
UNIT_FX_DBG_LINK := $(notdir $(UNIT_FX_DBG)).debug
UNIT_FX_DBG_FUNCS := fx_lib_local fx_lib_hidden fx_lib_alpha fx_lib_beta
UNIT_FX_OBJCOPY ?= objcopy

unit-fixtures: $(UNIT_FX_DBG).dbglines $(UNIT_FX_DIR)/debuginfo.stamp

$(UNIT_FX_DBG): $(UNIT_FX_SRC)/fx_lib.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNIT_FX_CFLAGS) -g -shared -fPIC $< -o $@

# The debuglink name is the basename of the file given, and its CRC that file's contents.
$(UNIT_FX_DIR)/debuginfo.stamp: $(UNIT_FX_DBG) $(UNIT_FX_DBG).buildid $(UNIT_FX_DIR)/fx_inline
	$(call msg,FIXTURE,$(UNIT_FX_DIR)/debug*)
	$(Q)set -e; cd $(UNIT_FX_DIR); \
	rm -rf debuglink debuglink-corrupt debugroot-buildid debugroot-truncated debugroot-mismatch; \
	mkdir -p debuglink debuglink-corrupt; \
	$(UNIT_FX_OBJCOPY) --only-keep-debug libfxdbg.so debuglink/$(UNIT_FX_DBG_LINK); \
	$(UNIT_FX_STRIP) --strip-all -o libfxdbg-stripped.so libfxdbg.so; \
	(cd debuglink && $(UNIT_FX_OBJCOPY) --add-gnu-debuglink=$(UNIT_FX_DBG_LINK) \
		../libfxdbg-stripped.so); \
	if $(UNIT_FX_NM) -D libfxdbg-stripped.so | grep -qE 'fx_lib_(hidden|local)'; then \
		echo "$@: fx_lib_hidden/fx_lib_local must not be in .dynsym" >&2; exit 1; fi; \
	cp libfxdbg-stripped.so debuglink/; \
	cp libfxdbg-stripped.so debuglink-corrupt/; \
	perl -0777 -pe 's/fx_lib_hidden/fx_lib_HIDDEN/g' debuglink/$(UNIT_FX_DBG_LINK) \
		> debuglink-corrupt/$(UNIT_FX_DBG_LINK); \
	if cmp -s debuglink/$(UNIT_FX_DBG_LINK) debuglink-corrupt/$(UNIT_FX_DBG_LINK); then \
		echo "$@: the corrupt debug file is not corrupt" >&2; exit 1; fi; \
	id=$$(cat libfxdbg.so.buildid); test -n "$$id"; \
	sub=.build-id/$$(echo $$id | cut -c1-2); leaf=$$(echo $$id | cut -c3-).debug; \
	for r in buildid truncated mismatch; do mkdir -p debugroot-$$r/$$sub; done; \
	cp debuglink/$(UNIT_FX_DBG_LINK) debugroot-buildid/$$sub/$$leaf; \
	size=$$(stat -c %s debuglink/$(UNIT_FX_DBG_LINK)); \
	head -c $$((size / 2)) debuglink/$(UNIT_FX_DBG_LINK) > debugroot-truncated/$$sub/$$leaf; \
	cp fx_inline debugroot-mismatch/$$sub/$$leaf; \
	touch debuginfo.stamp

$(UNIT_FX_DBG).dbglines: $(UNIT_FX_DIR)/debuginfo.stamp
	$(Q)set -e; for f in $(UNIT_FX_DBG_FUNCS); do \
		set -- $$($(UNIT_FX_NM) -S $(UNIT_FX_DBG) | awk -v f=$$f '$$4 == f { print $$1, $$2 }'); \
		test -n "$$2"; \
		for a in $$((0x$$1)) $$((0x$$1 + 0x$$2 / 2)); do \
			a=$$(printf '0x%x' $$a); \
			pos=$$($(UNIT_FX_ADDR2LINE) -e $(UNIT_FX_DIR)/debuglink/$(UNIT_FX_DBG_LINK) $$a | \
				sed 's/ (discriminator.*//'); \
			echo "$$f $$a $$pos"; \
		done; \
	done > $@.tmp; mv $@.tmp $@

# Unwind tables (tests/unit/test_unwind_table.c). What the table must say comes from binutils,
# never from our CFI reader; no-follow-links keeps readelf to the file's own CFI (it would read a
# separate debug file found by build-id instead, and exit 1):
#   X.cfi       `readelf --debug-dump=frames-interp -W`: every CIE's initial row and every FDE's
#               rows (LOC, CFA, one column per register) as readelf executes the CFA programs
#   X.cfiops    from the raw dump, what the interpreted one does not show: "OFF cfa_expression
#               OPERATIONS" for every DW_CFA_def_cfa_expression (it prints "exp"), to tell the PLT's
#               expression apart, and "OFF undefined rN" for every DW_CFA_undefined (it prints "u"
#               for that and for a register without a rule), OFF being the CIE's or FDE's offset
#   X.sections  `readelf -SW`: where .eh_frame and .debug_frame are, for the corrupt copies
# The fixtures:
#   fx_unwind_pie            -O2 without frame pointers: SP-based CFAs of several sizes, an
#                            FP-based one (the VLA), the lazy PLT's expression, _start's RA undefined
#   libfx_unwind.so          the same source as an -O2 shared library
#   fx_unwind_o0             -O0: FP-based CFAs everywhere, FDEs that follow each other directly
#   libfx_unwind_dbgframe.so .debug_frame only. Even with -fno-asynchronous-unwind-tables the link
#                            adds crtend's .eh_frame terminator, which objcopy removes: the copy
#                            with it is kept as libfx_unwind_dbgframe_eh.so (CFI in .debug_frame
#                            only, next to an .eh_frame without FDEs)
#   libfx_unwind_nocfi.so    neither section: an empty table, not an error
#   libfx_unwind_arm64.so    aarch64 (clang and lld), with pointer authentication
#                            (DW_CFA_AARCH64_negate_ra_state); an empty file, and the test skips it,
#                            when this toolchain cannot build it
#   libc-copy.so.6           the C library the compiler links with: hand-written CFI (a signal
#                            trampoline, CFAs in other registers); empty when there is none
# -z lazy keeps the lazy-binding PLT, whose CFI is the expression; -fcf-protection=none keeps the
# classic PLT layout that the expression describes (IBT PLTs differ).
UNIT_FX_UW_CFLAGS := -fcf-protection=none -Wl,-z,lazy
UNIT_FX_UW_BINS := $(UNIT_FX_DIR)/fx_unwind_pie $(UNIT_FX_DIR)/libfx_unwind.so \
	$(UNIT_FX_DIR)/fx_unwind_o0 $(UNIT_FX_DIR)/libfx_unwind_dbgframe.so \
	$(UNIT_FX_DIR)/libfx_unwind_dbgframe_eh.so $(UNIT_FX_DIR)/libfx_unwind_arm64.so \
	$(UNIT_FX_DIR)/libc-copy.so.6
UNIT_FX_UW_META := $(foreach b,$(UNIT_FX_UW_BINS),$(b).cfi $(b).cfiops $(b).sections)
UNIT_FX_CLANG ?= $(CLANG)

unit-fixtures: $(UNIT_FX_UW_BINS) $(UNIT_FX_UW_META) $(UNIT_FX_DIR)/libfx_unwind_nocfi.so

# Linked by lld, whose default layout puts the read-only segment and the code in one file page (R
# at offset 0, R E at 0x700 with address 0x1700): the loader's bias must come from the R E one.
unit-fixtures: $(UNIT_FX_DIR)/fx_lld $(UNIT_FX_DIR)/fx_lld.phdrs

$(UNIT_FX_DIR)/fx_lld: $(UNIT_FX_SRC)/fx_prog.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_CLANG) -fuse-ld=lld -O2 -fPIE -pie -Wl,--build-id=sha1 $< -o $@

$(UNIT_FX_DIR)/fx_unwind_pie: $(UNIT_FX_SRC)/fx_unwind.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O2 -fomit-frame-pointer $(UNIT_FX_UW_CFLAGS) -fPIE -pie $< -o $@

$(UNIT_FX_DIR)/libfx_unwind.so: $(UNIT_FX_SRC)/fx_unwind.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O2 $(UNIT_FX_UW_CFLAGS) -shared -fPIC $< -o $@

$(UNIT_FX_DIR)/fx_unwind_o0: $(UNIT_FX_SRC)/fx_unwind.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O0 $(UNIT_FX_UW_CFLAGS) -fPIE -pie $< -o $@

$(UNIT_FX_DIR)/libfx_unwind_dbgframe_eh.so: $(UNIT_FX_SRC)/fx_unwind.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables $(UNIT_FX_UW_CFLAGS) \
		-shared -fPIC $< -o $@

$(UNIT_FX_DIR)/libfx_unwind_dbgframe.so: $(UNIT_FX_DIR)/libfx_unwind_dbgframe_eh.so
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_OBJCOPY) --remove-section=.eh_frame --remove-section=.eh_frame_hdr $< $@.tmp
	$(Q)if $(UNIT_FX_READELF) -SW $@.tmp | grep -q ' \.eh_frame' || \
		! $(UNIT_FX_READELF) -SW $@.tmp | grep -q ' \.debug_frame '; then \
		echo "$@: expected .debug_frame and no .eh_frame" >&2; rm -f $@.tmp; exit 1; \
	fi
	$(Q)mv $@.tmp $@

$(UNIT_FX_DIR)/libfx_unwind_nocfi.so: $(UNIT_FX_DIR)/libfx_unwind_dbgframe_eh.so
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_OBJCOPY) --remove-section=.eh_frame --remove-section=.eh_frame_hdr \
		--remove-section=.debug_frame $< $@

$(UNIT_FX_DIR)/libfx_unwind_arm64.so: $(UNIT_FX_SRC)/fx_unwind.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)if ! $(UNIT_FX_CLANG) --target=aarch64-linux-gnu -fuse-ld=lld -nostdlib -shared -fPIC \
		-O2 -fomit-frame-pointer -mbranch-protection=pac-ret $< -o $@ 2>/dev/null; then \
		echo "$@: clang/lld cannot build for aarch64: the test skips arm64" >&2; : > $@; fi

$(UNIT_FX_DIR)/libc-copy.so.6: | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)libc=$$($(CC) -print-file-name=libc.so.6); \
	if [ -f "$$libc" ]; then cp -L "$$libc" $@; else : > $@; fi

# An empty file (no arm64 toolchain, no libc.so.6) gets empty listings.
$(UNIT_FX_DIR)/%.cfi: $(UNIT_FX_DIR)/%
	$(Q)if [ -s $< ]; then \
		$(UNIT_FX_READELF) --debug-dump=no-follow-links --debug-dump=frames-interp -W $< \
			> $@.tmp; \
	else : > $@.tmp; fi && mv $@.tmp $@

$(UNIT_FX_DIR)/%.cfiops: $(UNIT_FX_DIR)/%
	$(Q)if [ -s $< ]; then \
		$(UNIT_FX_READELF) --debug-dump=no-follow-links --debug-dump=frames -W $< | \
			awk '$$4 == "CIE" || $$4 == "FDE" { off = $$1 } \
			$$1 == "DW_CFA_undefined:" { print off, "undefined", $$2 } \
			/DW_CFA_def_cfa_expression \(/ { \
				sub(/^.*DW_CFA_def_cfa_expression \(/, ""); sub(/\)$$/, ""); \
				print off, "cfa_expression", $$0 }' > $@.tmp; \
	else : > $@.tmp; fi && mv $@.tmp $@

$(UNIT_FX_DIR)/%.sections: $(UNIT_FX_DIR)/%
	$(Q)if [ -s $< ]; then $(UNIT_FX_READELF) -SW $< > $@.tmp; else : > $@.tmp; fi && \
		mv $@.tmp $@

# MiniDebugInfo (tests/unit/test_minidebuginfo.c), made as Fedora's find-debuginfo does (GDB
# manual, "MiniDebugInfo"): the function symbols that .dynsym lacks, kept in a symbol-only copy of
# the debug file, xz-compressed into .gnu_debugdata of the stripped binary. Under minidebug/:
#   fx_mdi_full      -rdynamic: fx_mdi_exported_* in .dynsym, fx_mdi_static_* in .symtab only
#   fx_mdi_full.nm   `nm -S --defined-only` of it, where the functions must be found
#   fx_mdi           stripped, with .gnu_debugdata
#   fx_mdi_trunc     its xz cut in half;  fx_mdi_garbage  xz of a text file, not an ELF file
#   fx_mdi_notxz     the uncompressed file;  fx_mdi_huge  xz of 65 MiB of zeros (over the bound)
#   fx_mdi_xz9       the same MiniDebugInfo by xz -9 from a pipe: its 64 MiB dictionary is over
#                    the decoder's memory limit
#   mini.xz          the good .gnu_debugdata contents, for the decoder's own tests
UNIT_FX_MDI := $(UNIT_FX_DIR)/minidebug
UNIT_FX_XZ ?= xz

unit-fixtures: $(UNIT_FX_MDI)/minidebug.stamp

$(UNIT_FX_MDI)/minidebug.stamp: $(UNIT_FX_SRC)/fx_minidebug.c | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$(UNIT_FX_MDI)/*)
	$(Q)set -e; rm -rf $(UNIT_FX_MDI); mkdir -p $(UNIT_FX_MDI); cd $(UNIT_FX_MDI); \
	$(CC) $(UNIT_FX_CFLAGS) -rdynamic -fPIE -pie $(abspath $<) -o fx_mdi_full; \
	$(UNIT_FX_NM) -S --defined-only fx_mdi_full > fx_mdi_full.nm; \
	$(UNIT_FX_NM) -D --format=posix --defined-only fx_mdi_full | awk '{ print $$1 }' | \
		sort > dynsyms; \
	$(UNIT_FX_NM) --format=posix --defined-only fx_mdi_full | \
		awk '$$2 == "T" || $$2 == "t" || $$2 == "D" { print $$1 }' | sort > funcsyms; \
	comm -13 dynsyms funcsyms > keep_symbols; \
	if grep -q fx_mdi_exported keep_symbols || ! grep -q fx_mdi_static_a keep_symbols; then \
		echo "$@: fx_mdi_static_* must be kept, fx_mdi_exported_* in .dynsym" >&2; exit 1; fi; \
	$(UNIT_FX_OBJCOPY) --only-keep-debug fx_mdi_full debug; \
	$(UNIT_FX_OBJCOPY) -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=keep_symbols debug mini; \
	$(UNIT_FX_XZ) -c mini > mini.xz; \
	$(UNIT_FX_STRIP) --strip-all --remove-section .comment -o stripped fx_mdi_full; \
	add() { $(UNIT_FX_OBJCOPY) --add-section .gnu_debugdata=$$2 stripped $$1; }; \
	add fx_mdi mini.xz; \
	head -c $$(($$(stat -c %s mini.xz) / 2)) mini.xz > trunc.xz; add fx_mdi_trunc trunc.xz; \
	$(UNIT_FX_XZ) -c $(abspath $<) > garbage.xz; add fx_mdi_garbage garbage.xz; \
	add fx_mdi_notxz mini; \
	head -c 65M /dev/zero | $(UNIT_FX_XZ) -0 -c > huge.xz; add fx_mdi_huge huge.xz; \
	cat mini | $(UNIT_FX_XZ) -9 -c > xz9.xz; add fx_mdi_xz9 xz9.xz; \
	if $(UNIT_FX_READELF) -SW fx_mdi | grep -q ' \.symtab '; then \
		echo "$@: fx_mdi must have no .symtab" >&2; exit 1; fi; \
	touch minidebug.stamp

# Go (tests/unit/test_gopclntab.c): fx_go_full with its symbol table, fx_go and fx_go_pie without
# (-ldflags=-s -w), and what `go tool nm -size` says of the unstripped builds (.gonm). The
# corrupt copies are made by the test. The Go caches stay in the build directory (beside the
# fixtures, which the unit runner copies), so that a clean machine builds without a home directory.
UNIT_FX_GO ?= go
UNIT_FX_GOENV = GOCACHE=$(abspath $(OUTPUT))/gocache GOPATH=$(abspath $(OUTPUT))/gopath \
	GO111MODULE=off GOFLAGS= CGO_ENABLED=0
UNIT_FX_GO_BINS := $(UNIT_FX_DIR)/fx_go_full $(UNIT_FX_DIR)/fx_go $(UNIT_FX_DIR)/fx_go_pie_full \
	$(UNIT_FX_DIR)/fx_go_pie

unit-fixtures: $(UNIT_FX_GO_BINS) $(UNIT_FX_DIR)/fx_go_full.gonm $(UNIT_FX_DIR)/fx_go_pie_full.gonm

$(UNIT_FX_DIR)/fx_go_full: tests/fixtures/go/fx_go.go | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_GOENV) $(UNIT_FX_GO) build -o $@ $<

$(UNIT_FX_DIR)/fx_go: tests/fixtures/go/fx_go.go | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_GOENV) $(UNIT_FX_GO) build -ldflags='-s -w' -o $@ $<

$(UNIT_FX_DIR)/fx_go_pie_full: tests/fixtures/go/fx_go.go | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_GOENV) $(UNIT_FX_GO) build -buildmode=pie -o $@ $<

$(UNIT_FX_DIR)/fx_go_pie: tests/fixtures/go/fx_go.go | $(UNIT_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UNIT_FX_GOENV) $(UNIT_FX_GO) build -buildmode=pie -ldflags='-s -w' -o $@ $<

$(UNIT_FX_DIR)/%.gonm: $(UNIT_FX_DIR)/%
	$(Q)$(UNIT_FX_GOENV) $(UNIT_FX_GO) tool nm -size $< > $@.tmp && mv $@.tmp $@
include tests/unit/python.mk

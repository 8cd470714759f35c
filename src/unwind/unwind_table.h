/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Compact unwind tables built from a binary's call frame information (CFI).
 *
 * The BPF walker cannot run DWARF CFA programs: it needs, for any PC, one fixed-size row saying how
 * to find the caller's frame. So userspace executes every FDE's program once and writes down the
 * rule in force at each address where it changes (struct hp_unwind_row in hostprof_abi.h: 16
 * bytes, sorted by pc, each valid up to the next row's pc).
 *
 * Where the CFI comes from: .eh_frame (what every binary built with unwind tables has, and what
 * the C++ runtime itself uses) and .debug_frame (binaries built with
 * -fno-asynchronous-unwind-tables -g, whose .eh_frame may cover only crt1's _start). Both are read;
 * where both describe an address, .eh_frame's rule wins. Both are DWARF CFI (DWARF 5 §6.4, LSB
 * "Exception Frames"); .eh_frame adds pointer encodings and augmentation strings ("zR", "zPLR",
 * "S", ...).
 *
 * How a CFI row maps to a compact row, and why each rule exists:
 *   CFA = SP + n            HP_CFA_SP, cfa_offset n: the common case without a frame pointer.
 *   CFA = FP + n            HP_CFA_FP, cfa_offset n: after `push rbp; mov rbp, rsp` (x86_64) or
 *                           `mov x29, sp` (arm64); -O0 code and functions with alloca/VLA.
 *   the x86_64 PLT expression
 *                           HP_CFA_PLT, cfa_offset n: lazy-binding PLT entries share one FDE whose
 *                           CFA is rsp + n + ((rip & 15) >= 11 ? 8 : 0) (the push of the PLT
 *                           index happens at byte 11 of each 16-byte entry; x86_64 psABI). It is
 *                           recognised by the bytes of the expression, so a binary that names its
 *                           sections differently still gets it.
 *   CIE augmentation 'S'    HP_CFA_SIGNAL: a signal trampoline (__restore_rt); its CFI describes
 *                           the ucontext by expressions, which the walker reads by its own layout.
 *   RA undefined            HP_CFA_END: _start and a thread's first frame mark the stack's end
 *                           this way (psABI); stopping there is a clean end, not a failure.
 *   any other expression, a CFA register other than SP/FP, an offset that does not fit the row, an
 *   RA the row cannot hold  HP_CFA_UNSUPPORTED: the walker stops there and counts it; guessing
 *                           would produce a wrong stack, which is worse than a short one.
 *   addresses between FDEs and after the last one
 *                           HP_CFA_NONE: no CFI, so the walker falls back to the frame pointer.
 *   FP (rbp / x29)          fp_rule HP_REG_OFFSET with fp_offset from the CFA when saved on the
 *                           stack, HP_REG_SAME when the function has not touched it (the
 *                           default for a callee-saved register), HP_REG_UNDEFINED when it is
 *                           explicitly undefined or saved in a way the row cannot hold (another
 *                           register, an expression): the caller's FP is then unknown.
 *   RA                      x86_64: HP_REG_OFFSET, -8 (the call pushed it). arm64: HP_REG_OFFSET
 *                           once x30 is stored, HP_REG_SAME before that (leaf functions and
 *                           prologues: the return address is still in the link register).
 *                           DW_CFA_AARCH64_negate_ra_state (pointer authentication) changes how
 *                           the saved value is signed, not where it is: the walker strips the
 *                           PAC bits, so the row needs nothing.
 *
 * The table is then compacted: FDEs are sorted by address, where two rows start at the same pc
 * the later FDE wins (deterministically), an HP_CFA_NONE row closes every FDE that is not directly
 * followed by another, and neighbouring rows with identical rules are merged, across FDEs too (the
 * walker cannot tell them apart, so a row's pc is where its rule starts, not its FDE). Addresses
 * must fit in 32 bits (the row's pc), which every ELF executable and shared library does;
 * a binary that does not gets an error.
 */
#ifndef HOSTPROF_UNWIND_TABLE_H
#define HOSTPROF_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "hostprof_abi.h"

enum unwind_arch {
	UNWIND_ARCH_NONE = 0, /* from the ELF header */
	UNWIND_ARCH_X86_64,
	UNWIND_ARCH_ARM64,
};

#define UNWIND_TABLE_DEFAULT_MAX_ROWS (4u << 20) /* 64 MiB of rows: larger than any real binary */

struct unwind_table_opts {
	size_t max_rows;       /* 0: UNWIND_TABLE_DEFAULT_MAX_ROWS; the build fails above it */
	enum unwind_arch arch; /* UNWIND_ARCH_NONE: from e_machine; else forced (tests) */
};

enum unwind_cfi_source {
	UNWIND_SRC_NONE = 0, /* a binary without CFI: an empty table */
	UNWIND_SRC_EH_FRAME,
	UNWIND_SRC_DEBUG_FRAME,
};

struct unwind_table_stats {
	uint32_t rows;	      /* after compaction */
	uint32_t raw_rows;    /* before */
	uint32_t cies;	      /* CIEs parsed */
	uint32_t fdes;	      /* FDEs with a non-empty range */
	uint32_t unknown_ops; /* FDEs cut short by an opcode we do not know (rest UNSUPPORTED) */
	uint32_t fp_lossy;    /* rows whose FP rule could not be held (made HP_REG_UNDEFINED) */
	uint32_t per_cfa_rule[8]; /* rows per enum hp_cfa_rule, after compaction */
	enum unwind_cfi_source source;
};

struct unwind_table;

/*
 * Build the table of the ELF file at path, or of an already open libelf handle (not consumed; the
 * table does not keep it). opts may be NULL. On error: NULL, errno set, and a one-line reason in
 * err (when errlen > 0) such as ".eh_frame: FDE at 0x1a0: CIE pointer out of the section".
 */
struct unwind_table *unwind_table__build(const char *path, const struct unwind_table_opts *opts,
					 char *err, size_t errlen);
struct unwind_table *unwind_table__build_elf(Elf *elf, const struct unwind_table_opts *opts,
					     char *err, size_t errlen);

/*
 * A table over rows that are already compact (the disk cache); rows are copied. Rows must be
 * sorted by strictly increasing pc: NULL with errno EINVAL otherwise.
 */
struct unwind_table *unwind_table__from_rows(enum unwind_arch arch,
					     const struct hp_unwind_row *rows, size_t nr);

void unwind_table__delete(struct unwind_table *table);

/* The rows (owned by the table, valid until it is deleted), sorted by pc. */
const struct hp_unwind_row *unwind_table__rows(const struct unwind_table *table, size_t *nr);
enum unwind_arch unwind_table__arch(const struct unwind_table *table);
const struct unwind_table_stats *unwind_table__stats(const struct unwind_table *table);

/*
 * The row in force at file address pc: the last row whose pc <= pc, as the BPF walker finds it.
 * NULL below the first row and above 32 bits (no CFI there: frame pointers). pc at or past the end
 * of the last FDE finds its closing HP_CFA_NONE row.
 */
const struct hp_unwind_row *unwind_table__find(const struct unwind_table *table, uint64_t pc);

/* The architecture of an ELF file the builder can read: little-endian, 64-bit, x86_64 or arm64;
 * UNWIND_ARCH_NONE for anything else. */
enum unwind_arch unwind_arch__of_elf(Elf *elf);
const char *unwind_arch__name(enum unwind_arch arch);
const char *unwind_cfa_rule__name(unsigned int rule);

#endif /* HOSTPROF_UNWIND_TABLE_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The unwind table builder's own state, shared only by its files (include it from
 * unwind/unwind_table.c and unwind/cfi_*.c, nowhere else; everyone else uses unwind_table.h):
 *
 *   cfi_reader.c   bounded reads of the CFI sections: integers, LEB128, encoded pointers, entries
 *   cfi_parse.c    the sections, their CIEs and FDEs (.eh_frame and .debug_frame)
 *   cfi_program.c  the CFA program interpreter: a CIE's or an FDE's instructions into rules
 *   cfi_rows.c     rules into compact rows, and the rows sorted and compacted into the table
 *   unwind_table.c the public interface: build, look up, describe
 *
 * Every read goes through struct rd, which carries the end of what it may read (the section, or
 * the entry being parsed): corrupt lengths, pointers and truncated programs become errors that
 * name the section and the entry's offset, never reads past the data.
 */
#ifndef HOSTPROF_UNWIND_TABLE_IMPL_H
#define HOSTPROF_UNWIND_TABLE_IMPL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/leb128.h"
#include "unwind/unwind_table.h"

/* .eh_frame pointer encodings (LSB, "DWARF Exception Header Encoding"). */
enum {
	PE_absptr = 0x00,
	PE_uleb128 = 0x01,
	PE_udata2 = 0x02,
	PE_udata4 = 0x03,
	PE_udata8 = 0x04,
	PE_sleb128 = 0x09,
	PE_sdata2 = 0x0a,
	PE_sdata4 = 0x0b,
	PE_sdata8 = 0x0c,
	PE_pcrel = 0x10,
	PE_textrel = 0x20,
	PE_datarel = 0x30,
	PE_funcrel = 0x40,
	PE_aligned = 0x50,
	PE_indirect = 0x80,
	PE_omit = 0xff,
};

/* DWARF register numbers of the psABIs. */
#define X86_64_RSP 7
#define X86_64_RBP 6
#define X86_64_RA 16
#define ARM64_X29 29
#define ARM64_X30 30
#define ARM64_SP 31

enum rule_kind {
	RULE_UNSET = 0, /* not mentioned: the architecture's default */
	RULE_UNDEF,
	RULE_SAME,
	RULE_OFFSET,
	RULE_VAL_OFFSET,
	RULE_REGISTER,
	RULE_EXPR,
	RULE_VAL_EXPR,
};

struct reg_rule {
	uint8_t kind;
	int64_t val; /* offset from the CFA, or the register */
};

enum cfa_kind { CFA_UNSET = 0, CFA_REG, CFA_EXPR };

struct frame_state {
	uint8_t cfa_kind;
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	uint64_t cfa_expr_len;
	struct reg_rule fp, ra;
};

struct cie {
	uint64_t off; /* of its length field in the section */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;
	uint8_t seg_size;
	bool has_z;
	bool signal;
	bool bad; /* an augmentation we cannot parse: its FDEs are skipped */
	struct frame_state init;
};

struct raw_row {
	struct hp_unwind_row row;
	uint32_t seq; /* insertion order: among rows at one pc, the later FDE wins */
	uint8_t prio; /* 0: the NONE row closing an FDE; 1: a row of an FDE */
	uint8_t pad[3];
};

struct unwind_table {
	enum unwind_arch arch;
	struct hp_unwind_row *rows;
	size_t nr;
	struct unwind_table_stats stats;
};

struct cfi_builder {
	enum unwind_arch arch;
	unsigned int sp_reg, fp_reg;
	uint8_t addr_size;
	bool debug_frame;
	const char *sec_name;
	const uint8_t *sec;
	size_t sec_size;
	uint64_t sec_addr;
	uint64_t text_addr, got_addr;
	bool has_text, has_got;
	size_t max_rows;
	size_t cur_fde_first; /* index in raw of the current FDE's first row */

	struct cie *cies; /* sorted by off */
	size_t nr_cies, cap_cies;

	struct raw_row *raw;
	size_t nr_raw, cap_raw;

	struct unwind_table_stats stats;
	char *err;
	size_t errlen;
};

struct rd {
	const uint8_t *p, *end;
};

/* Fails the build with errnum (returned as -errnum) and a reason naming the section. */
int cfi_fail(struct cfi_builder *b, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline uint64_t sec_off(const struct cfi_builder *b, const uint8_t *p)
{
	return (uint64_t)(p - b->sec);
}

static inline bool rd_bytes(struct rd *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	if (out)
		memcpy(out, r->p, n);
	r->p += n;
	return true;
}

/* Little-endian only: x86_64 and arm64 Linux (the ELF header is checked). */
static inline bool rd_uint(struct rd *r, size_t n, uint64_t *v)
{
	uint8_t buf[8];

	if (n > 8 || !rd_bytes(r, buf, n))
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v |= (uint64_t)buf[i] << (8 * i);
	return true;
}

static inline bool rd_u8(struct rd *r, uint8_t *v)
{
	return rd_bytes(r, v, 1);
}

static inline bool rd_uleb(struct rd *r, uint64_t *v)
{
	return leb128__read_u(&r->p, r->end, v);
}

static inline bool rd_sleb(struct rd *r, int64_t *v)
{
	return leb128__read_s(&r->p, r->end, v);
}

static inline bool is_cie_id(const struct cfi_builder *b, uint64_t id, bool is64)
{
	if (!b->debug_frame)
		return id == 0;
	return is64 ? id == UINT64_MAX : id == 0xffffffffu;
}

/* cfi_reader.c: 0 or -errno, with the reason in the builder. */

/*
 * An .eh_frame encoded pointer. *indirect tells the caller that the value is the address of the
 * pointer rather than the pointer (only personality routines use that, and we skip them).
 */
int cfi_rd_encoded(struct cfi_builder *b, struct rd *r, uint8_t enc, uint64_t funcbase,
		   uint64_t *out, bool *indirect);
/* One entry's header: its length (32- or 64-bit form), and the reader bounded to its body. */
int cfi_rd_entry(struct cfi_builder *b, uint64_t off, struct rd *body, bool *is64, bool *term);

/* cfi_rows.c */

bool cfi_same_rules(const struct hp_unwind_row *a, const struct hp_unwind_row *b);
/* Appends a raw row: prio 1 for a row of an FDE, 0 for the NONE row that closes one. */
int cfi_push_raw(struct cfi_builder *b, const struct hp_unwind_row *row, uint8_t prio);
/* The row in force from pc on, under the rules of st. */
int cfi_emit_row(struct cfi_builder *b, const struct cie *cie, const struct frame_state *st,
		 uint64_t pc);
/* The rest of an FDE whose program we cannot follow: the walker must stop there. */
int cfi_emit_unsupported(struct cfi_builder *b, uint64_t pc);
/* The raw rows sorted and compacted into t's rows, with their statistics. */
int cfi_finish(struct cfi_builder *b, struct unwind_table *t);

/* cfi_program.c */

/*
 * Runs a CIE's initial instructions (fde_end == 0: only st changes) or an FDE's, emitting a row
 * wherever the location advances.
 */
int cfi_run_program(struct cfi_builder *b, const struct cie *cie, struct rd *r,
		    struct frame_state *st, uint64_t fde_start, uint64_t fde_end);

/* cfi_parse.c */

struct cfi_sections {
	Elf_Scn *eh_frame, *debug_frame;
	GElf_Shdr eh_sh, debug_sh;
};

/* The CFI sections of elf, and the .text and .got addresses their pointers may be relative to. */
int cfi_find_sections(struct cfi_builder *b, Elf *elf, struct cfi_sections *out);
/* Parses one CFI section into b's rows; *used when it described any code. */
int cfi_parse_section(struct cfi_builder *b, Elf_Scn *scn, GElf_Shdr *sh, bool debug_frame,
		      bool *used);

#endif /* HOSTPROF_UNWIND_TABLE_IMPL_H */

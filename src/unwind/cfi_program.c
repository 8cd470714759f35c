// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CFA program interpreter: a CIE's initial instructions or an FDE's, executed once into the
 * rules the rows are made of (unwind_table.h says which rules a row can hold).
 */
#include <errno.h>

#include "unwind/unwind_table_impl.h"

/* Call frame instructions (DWARF 5 §6.4.2, Figure 7.29 of §7.24; GNU and AArch64 extensions). */
enum {
	CFA_nop = 0x00,
	CFA_set_loc = 0x01,
	CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03,
	CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05,
	CFA_restore_extended = 0x06,
	CFA_undefined = 0x07,
	CFA_same_value = 0x08,
	CFA_register = 0x09,
	CFA_remember_state = 0x0a,
	CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e,
	CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10,
	CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12,
	CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14,
	CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16,
	CFA_AARCH64_negate_ra_state = 0x2d, /* DW_CFA_GNU_window_save on SPARC */
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
	CFA_advance_loc = 0x40, /* the high two bits; the low six are the operand */
	CFA_offset = 0x80,
	CFA_restore = 0xc0,
};

#define REMEMBER_DEPTH 64 /* DW_CFA_remember_state nesting; compilers use 1 or 2 */

/* The rule a register gets from DW_CFA_restore: the CIE's initial one. */
static struct reg_rule *tracked(struct cfi_builder *b, const struct cie *cie,
				struct frame_state *st, uint64_t reg)
{
	if (reg == b->fp_reg)
		return &st->fp;
	if (reg == cie->ra_reg)
		return &st->ra;
	return NULL; /* a register the walker does not need */
}

static void restore_reg(struct cfi_builder *b, const struct cie *cie, struct frame_state *st,
			uint64_t reg, bool in_fde)
{
	struct reg_rule *rule = tracked(b, cie, st, reg);

	if (!rule)
		return;
	if (!in_fde)
		*rule = (struct reg_rule){0};
	else if (rule == &st->fp)
		*rule = cie->init.fp;
	else
		*rule = cie->init.ra;
}

static void set_reg(struct cfi_builder *b, const struct cie *cie, struct frame_state *st,
		    uint64_t reg, uint8_t kind, int64_t val)
{
	struct reg_rule *rule = tracked(b, cie, st, reg);

	if (rule)
		*rule = (struct reg_rule){.kind = kind, .val = val};
}

/*
 * A factored offset times the CIE's data alignment. Both come from the file, and their product
 * may not fit 64 bits (undefined behaviour in int64_t; found by tests/fuzz/fuzz_elf): it
 * saturates, far outside what a row holds, so the rule ends up unsupported.
 */
static int64_t scaled(__int128 factored, int64_t align)
{
	__int128 v = factored * align; /* |each| < 2^64: the product fits 128 bits */

	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < INT64_MIN)
		return INT64_MIN;
	return (int64_t)v;
}

/* One run of a program: where it reads, the state it changes, and the states it remembered. */
struct cfa_run {
	struct cfi_builder *b;
	const struct cie *cie;
	struct rd *r;
	struct frame_state *st;
	bool in_fde;
	uint64_t loc;
	unsigned int depth;
	struct frame_state *stack; /* REMEMBER_DEPTH entries */
};

/* What one instruction did. */
enum op_result {
	OP_DONE,
	OP_ADVANCE, /* the location moves on by *delta bytes */
	OP_BAD,	    /* unknown, or it ends inside its operands */
};

/* DW_CFA_set_loc and DW_CFA_advance_loc1/2/4: how far the location moves, in bytes. */
static enum op_result op_advance(struct cfa_run *x, uint8_t op, uint64_t *delta)
{
	uint64_t next = 0;
	size_t n = 4;

	switch (op) {
	case CFA_set_loc:
		if (x->b->debug_frame
			    ? !rd_uint(x->r, x->cie->addr_size, &next)
			    : cfi_rd_encoded(x->b, x->r, x->cie->fde_enc, 0, &next, NULL) != 0)
			return OP_BAD;
		if (next < x->loc)
			return OP_BAD;
		*delta = next - x->loc;
		return OP_ADVANCE;
	case CFA_advance_loc1:
		n = 1;
		break;
	case CFA_advance_loc2:
		n = 2;
		break;
	}
	if (!rd_uint(x->r, n, delta))
		return OP_BAD;
	*delta *= x->cie->code_align;
	return OP_ADVANCE;
}

/*
 * The offset operand of op: a signed LEB128 in the _sf forms, else an unsigned one (negated by
 * DW_CFA_GNU_negative_offset_extended). It is factored, times the data alignment, except in the
 * unsigned forms of DW_CFA_def_cfa and DW_CFA_def_cfa_offset.
 */
static bool rd_offset(struct cfa_run *x, uint8_t op, int64_t *out)
{
	uint64_t u;
	int64_t s;

	switch (op) {
	case CFA_offset_extended_sf:
	case CFA_val_offset_sf:
	case CFA_def_cfa_sf:
	case CFA_def_cfa_offset_sf:
		if (!rd_sleb(x->r, &s))
			return false;
		*out = scaled(s, x->cie->data_align);
		return true;
	}
	if (!rd_uleb(x->r, &u))
		return false;
	if (op == CFA_def_cfa || op == CFA_def_cfa_offset)
		*out = (int64_t)u;
	else if (op == CFA_GNU_negative_offset_extended)
		*out = scaled(-(__int128)u, x->cie->data_align);
	else
		*out = scaled(u, x->cie->data_align);
	return true;
}

/* The instructions that give one register a rule, or take it back to the CIE's; each starts
 * with the register. */
static enum op_result op_register(struct cfa_run *x, uint8_t op)
{
	struct cfi_builder *b = x->b;
	const struct cie *cie = x->cie;
	struct frame_state *st = x->st;
	struct rd *r = x->r;
	uint64_t reg = 0, off = 0;
	int64_t soff = 0;

	if (!rd_uleb(r, &reg))
		return OP_BAD;
	switch (op) {
	case CFA_offset_extended:
	case CFA_offset_extended_sf:
	case CFA_GNU_negative_offset_extended:
	case CFA_val_offset:
	case CFA_val_offset_sf:
		if (!rd_offset(x, op, &soff))
			return OP_BAD;
		set_reg(b, cie, st, reg,
			op == CFA_val_offset || op == CFA_val_offset_sf ? RULE_VAL_OFFSET
									: RULE_OFFSET,
			soff);
		break;
	case CFA_restore_extended:
		restore_reg(b, cie, st, reg, x->in_fde);
		break;
	case CFA_undefined:
		set_reg(b, cie, st, reg, RULE_UNDEF, 0);
		break;
	case CFA_same_value:
		set_reg(b, cie, st, reg, RULE_SAME, 0);
		break;
	case CFA_register:
		if (!rd_uleb(r, &off))
			return OP_BAD;
		set_reg(b, cie, st, reg, RULE_REGISTER, (int64_t)off);
		break;
	case CFA_expression:
	case CFA_val_expression:
		if (!rd_uleb(r, &off) || off > (uint64_t)(r->end - r->p))
			return OP_BAD;
		set_reg(b, cie, st, reg, op == CFA_expression ? RULE_EXPR : RULE_VAL_EXPR, 0);
		r->p += off;
		break;
	default:
		return OP_BAD;
	}
	return OP_DONE;
}

/* The instructions that define the CFA. */
static enum op_result op_def_cfa(struct cfa_run *x, uint8_t op)
{
	struct frame_state *st = x->st;
	struct rd *r = x->r;
	uint64_t reg = 0, off = 0;
	int64_t soff = 0;

	switch (op) {
	case CFA_def_cfa:
	case CFA_def_cfa_sf:
		if (!rd_uleb(r, &reg) || !rd_offset(x, op, &soff))
			return OP_BAD;
		st->cfa_kind = CFA_REG;
		st->cfa_reg = reg;
		st->cfa_off = soff;
		break;
	case CFA_def_cfa_register:
		if (!rd_uleb(r, &reg))
			return OP_BAD;
		/* Only meaningful after a register rule; an expression CFA has none. */
		if (st->cfa_kind == CFA_EXPR)
			st->cfa_off = 0;
		st->cfa_kind = CFA_REG;
		st->cfa_reg = reg;
		break;
	case CFA_def_cfa_offset:
	case CFA_def_cfa_offset_sf:
		if (!rd_offset(x, op, &soff))
			return OP_BAD;
		st->cfa_off = soff;
		break;
	case CFA_def_cfa_expression:
		if (!rd_uleb(r, &off) || off > (uint64_t)(r->end - r->p))
			return OP_BAD;
		st->cfa_kind = CFA_EXPR;
		st->cfa_expr = r->p;
		st->cfa_expr_len = off;
		r->p += off;
		break;
	default:
		return OP_BAD;
	}
	return OP_DONE;
}

/* One instruction, op, whose operands follow at x->r. */
static enum op_result step(struct cfa_run *x, uint8_t op, uint64_t *delta)
{
	uint64_t off;

	switch (op & 0xc0) {
	case CFA_advance_loc:
		*delta = (uint64_t)(op & 0x3f) * x->cie->code_align;
		return OP_ADVANCE;
	case CFA_offset:
		if (!rd_uleb(x->r, &off))
			return OP_BAD;
		set_reg(x->b, x->cie, x->st, op & 0x3f, RULE_OFFSET,
			scaled(off, x->cie->data_align));
		return OP_DONE;
	case CFA_restore:
		restore_reg(x->b, x->cie, x->st, op & 0x3f, x->in_fde);
		return OP_DONE;
	}
	switch (op) {
	case CFA_nop:
	case CFA_AARCH64_negate_ra_state:
		/* Where the return address is does not change (see unwind_table.h). */
		return OP_DONE;
	case CFA_GNU_args_size:
		return rd_uleb(x->r, &off) ? OP_DONE : OP_BAD;
	case CFA_set_loc:
	case CFA_advance_loc1:
	case CFA_advance_loc2:
	case CFA_advance_loc4:
		return op_advance(x, op, delta);
	case CFA_remember_state:
		if (x->depth == REMEMBER_DEPTH)
			return OP_BAD;
		x->stack[x->depth++] = *x->st;
		return OP_DONE;
	case CFA_restore_state:
		if (x->depth == 0)
			return OP_BAD;
		/* The CFA of a restored state is what was remembered, as binutils and
		 * libgcc do (DWARF 5 §6.4.2.4 lets the producer rely on it). */
		*x->st = x->stack[--x->depth];
		return OP_DONE;
	case CFA_def_cfa:
	case CFA_def_cfa_sf:
	case CFA_def_cfa_register:
	case CFA_def_cfa_offset:
	case CFA_def_cfa_offset_sf:
	case CFA_def_cfa_expression:
		return op_def_cfa(x, op);
	case CFA_offset_extended:
	case CFA_offset_extended_sf:
	case CFA_GNU_negative_offset_extended:
	case CFA_val_offset:
	case CFA_val_offset_sf:
	case CFA_restore_extended:
	case CFA_undefined:
	case CFA_same_value:
	case CFA_register:
	case CFA_expression:
	case CFA_val_expression:
		return op_register(x, op);
	default:
		/* Unknown: its operands are not read, so the error names the opcode itself. */
		return OP_BAD;
	}
}

/*
 * Execute a CFA program: a CIE's initial instructions (fde_end == 0: only the state changes) or
 * an FDE's, emitting a row wherever the location advances. Opcodes and their operands follow
 * DWARF 5 §6.4.2; the GNU ones follow binutils. An opcode we do not know, or a program that ends
 * inside an instruction, makes the rest of the FDE HP_CFA_UNSUPPORTED: its operands' size is
 * unknown, so nothing after it can be trusted.
 */
int cfi_run_program(struct cfi_builder *b, const struct cie *cie, struct rd *r,
		    struct frame_state *st, uint64_t fde_start, uint64_t fde_end)
{
	/* Not in struct cfa_run, whose initializer would clear it for every FDE. */
	struct frame_state stack[REMEMBER_DEPTH];
	struct cfa_run x = {
		.b = b,
		.cie = cie,
		.r = r,
		.st = st,
		.in_fde = fde_end != 0,
		.loc = fde_start,
		.stack = stack,
	};
	int err;

	while (r->p < r->end) {
		uint64_t delta = 0;
		enum op_result res;
		uint8_t op;

		if (!rd_u8(r, &op))
			break;
		res = step(&x, op, &delta);
		if (res == OP_BAD)
			goto bad;
		if (res == OP_DONE || !x.in_fde)
			continue; /* a CIE has no location to advance */
		if (delta && x.loc < fde_end) {
			err = cfi_emit_row(b, cie, st, x.loc);
			if (err)
				return err;
		}
		x.loc = delta > fde_end - x.loc ? fde_end : x.loc + delta;
	}
	if (x.in_fde && x.loc < fde_end)
		return cfi_emit_row(b, cie, st, x.loc);
	return 0;
bad:
	/* A CIE we cannot run makes its FDEs unusable; an FDE stops where we lost it. */
	if (!x.in_fde)
		return cfi_fail(b, EINVAL,
				"CIE at 0x%llx: instruction 0x%02x at 0x%llx cannot be run",
				(unsigned long long)cie->off, r->p > b->sec ? r->p[-1] : 0,
				(unsigned long long)sec_off(b, r->p));
	return x.loc < fde_end ? cfi_emit_unsupported(b, x.loc) : 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * CFI rules into compact rows, and the rows of every FDE into the table (the mapping and the
 * compaction are described in unwind_table.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "base/vec.h"
#include "unwind/unwind_table_impl.h"

/* The raw rows' first capacity; the limit in cfi_push_raw() is checked at its doublings. */
#define CFI_RAW_FIRST_CAP 1024

/*
 * The x86_64 PLT's CFA (psABI; what GNU ld and lld emit for lazy PLT entries):
 *   DW_OP_breg7 (rsp) n; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge;
 *   DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. rsp + n, plus 8 once the entry has pushed its relocation index (byte 11 of 16).
 */
static bool is_plt_expr(const uint8_t *p, uint64_t len, int64_t *n)
{
	static const uint8_t tail[] = {0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
	struct rd r = {p, p + len};
	uint8_t op;

	if (!rd_u8(&r, &op) || op != 0x77 || !rd_sleb(&r, n))
		return false;
	return (size_t)(r.end - r.p) == sizeof(tail) && !memcmp(r.p, tail, sizeof(tail));
}

static bool fits_s16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

static void to_row(struct cfi_builder *b, const struct cie *cie, const struct frame_state *st,
		   uint64_t pc, struct hp_unwind_row *row)
{
	memset(row, 0, sizeof(*row));
	row->pc = (uint32_t)pc;
	if (cie->signal) {
		row->cfa_rule = HP_CFA_SIGNAL;
		return;
	}
	switch (st->ra.kind) {
	case RULE_UNDEF:
		row->cfa_rule = HP_CFA_END;
		return;
	case RULE_OFFSET:
		if (!fits_s16(st->ra.val))
			goto unsupported;
		row->ra_rule = HP_REG_OFFSET;
		row->ra_offset = (int16_t)st->ra.val;
		break;
	case RULE_UNSET:
	case RULE_SAME:
		/* On arm64 the return address is still in x30; x86_64 has no RA register. */
		if (b->arch != UNWIND_ARCH_ARM64)
			goto unsupported;
		row->ra_rule = HP_REG_SAME;
		break;
	case RULE_REGISTER:
		if (b->arch != UNWIND_ARCH_ARM64 || st->ra.val != ARM64_X30)
			goto unsupported;
		row->ra_rule = HP_REG_SAME;
		break;
	default:
		goto unsupported;
	}
	switch (st->cfa_kind) {
	case CFA_REG:
		if (st->cfa_reg == b->sp_reg)
			row->cfa_rule = HP_CFA_SP;
		else if (st->cfa_reg == b->fp_reg)
			row->cfa_rule = HP_CFA_FP;
		else
			goto unsupported;
		if (st->cfa_off < INT32_MIN || st->cfa_off > INT32_MAX)
			goto unsupported;
		row->cfa_offset = (int32_t)st->cfa_off;
		break;
	case CFA_EXPR: {
		int64_t n;

		if (b->arch != UNWIND_ARCH_X86_64 ||
		    !is_plt_expr(st->cfa_expr, st->cfa_expr_len, &n) || n < 0 || n > INT32_MAX)
			goto unsupported;
		row->cfa_rule = HP_CFA_PLT;
		row->cfa_offset = (int32_t)n;
		break;
	}
	default:
		goto unsupported;
	}
	switch (st->fp.kind) {
	case RULE_UNSET:
	case RULE_SAME:
		row->fp_rule = HP_REG_SAME;
		break;
	case RULE_OFFSET:
		if (fits_s16(st->fp.val)) {
			row->fp_rule = HP_REG_OFFSET;
			row->fp_offset = (int16_t)st->fp.val;
		} else {
			row->fp_rule = HP_REG_UNDEFINED;
			b->stats.fp_lossy++;
		}
		break;
	case RULE_REGISTER:
		if (st->fp.val == b->fp_reg) {
			row->fp_rule = HP_REG_SAME;
			break;
		}
		row->fp_rule = HP_REG_UNDEFINED;
		b->stats.fp_lossy++;
		break;
	case RULE_UNDEF:
		row->fp_rule = HP_REG_UNDEFINED;
		break;
	default:
		row->fp_rule = HP_REG_UNDEFINED;
		b->stats.fp_lossy++;
		break;
	}
	return;
unsupported:
	memset(row, 0, sizeof(*row));
	row->pc = (uint32_t)pc;
	row->cfa_rule = HP_CFA_UNSUPPORTED;
}

bool cfi_same_rules(const struct hp_unwind_row *a, const struct hp_unwind_row *b)
{
	return a->cfa_offset == b->cfa_offset && a->fp_offset == b->fp_offset &&
	       a->ra_offset == b->ra_offset && a->cfa_rule == b->cfa_rule &&
	       a->fp_rule == b->fp_rule && a->ra_rule == b->ra_rule;
}

int cfi_push_raw(struct cfi_builder *b, const struct hp_unwind_row *row, uint8_t prio)
{
	struct raw_row *last = b->nr_raw > b->cur_fde_first ? &b->raw[b->nr_raw - 1] : NULL;

	/* Within one FDE a row that changes nothing the walker uses is no row at all. */
	if (prio && last && last->prio && cfi_same_rules(&last->row, row))
		return 0;
	/* Raw rows may exceed the compact limit a little (closing rows, duplicates), not by more
	 * than one row per row plus its closer: checked whenever the array is full. */
	if (b->nr_raw == b->cap_raw && b->cap_raw >= 2 * b->max_rows)
		return cfi_fail(b, E2BIG, "more than %zu rows", b->max_rows);
	if (VEC_RESERVE(b->raw, b->cap_raw,
			b->nr_raw < CFI_RAW_FIRST_CAP ? CFI_RAW_FIRST_CAP : b->nr_raw + 1))
		return cfi_fail(b, ENOMEM, "out of memory");
	b->raw[b->nr_raw++] = (struct raw_row){.row = *row, .seq = b->stats.fdes, .prio = prio};
	b->stats.raw_rows++;
	return 0;
}

/* The row in force from pc on, under the rules of st. */
int cfi_emit_row(struct cfi_builder *b, const struct cie *cie, const struct frame_state *st,
		 uint64_t pc)
{
	struct hp_unwind_row row;

	if (pc > UINT32_MAX)
		return cfi_fail(b, ERANGE, "address 0x%llx does not fit a 32-bit row",
				(unsigned long long)pc);
	to_row(b, cie, st, pc, &row);
	return cfi_push_raw(b, &row, 1);
}

/* The rest of an FDE whose program we cannot follow: the walker must stop there. */
int cfi_emit_unsupported(struct cfi_builder *b, uint64_t pc)
{
	struct hp_unwind_row row = {.pc = (uint32_t)pc, .cfa_rule = HP_CFA_UNSUPPORTED};

	if (pc > UINT32_MAX)
		return cfi_fail(b, ERANGE, "address 0x%llx does not fit a 32-bit row",
				(unsigned long long)pc);
	b->stats.unknown_ops++;
	return cfi_push_raw(b, &row, 1);
}

static int compare_raw(const void *a, const void *b)
{
	const struct raw_row *x = a, *y = b;

	if (x->row.pc != y->row.pc)
		return x->row.pc < y->row.pc ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sort the rows of every FDE by address and keep one per address: the last after sorting, which
 * is the later FDE's row over an earlier one, and any FDE's row over a closing NONE row. Then
 * merge neighbours whose rules are the same: the walker cannot tell them apart.
 */
int cfi_finish(struct cfi_builder *b, struct unwind_table *t)
{
	size_t n = 0;

	if (b->nr_raw)
		qsort(b->raw, b->nr_raw, sizeof(*b->raw), compare_raw);
	t->rows = malloc((b->nr_raw ? b->nr_raw : 1) * sizeof(*t->rows));
	if (!t->rows)
		return cfi_fail(b, ENOMEM, "out of memory");
	for (size_t i = 0; i < b->nr_raw; i++) {
		const struct hp_unwind_row *row = &b->raw[i].row;

		if (i + 1 < b->nr_raw && b->raw[i + 1].row.pc == row->pc)
			continue;
		if (n && cfi_same_rules(&t->rows[n - 1], row))
			continue;
		/* Nothing to close before the first row: below it there is no table anyway. */
		if (!n && row->cfa_rule == HP_CFA_NONE)
			continue;
		t->rows[n++] = *row;
	}
	if (n > b->max_rows)
		return cfi_fail(b, E2BIG, "%zu rows, more than the limit of %zu", n, b->max_rows);
	t->nr = n;
	for (size_t i = 0; i < n; i++)
		b->stats.per_cfa_rule[t->rows[i].cfa_rule & 7]++;
	b->stats.rows = (uint32_t)n;
	return 0;
}

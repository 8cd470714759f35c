// SPDX-License-Identifier: BSD-2-Clause
/*
 * Compact unwind tables from .eh_frame / .debug_frame (the format and the CFI-to-row mapping are
 * described in unwind_table.h).
 *
 * Every read goes through struct rd, which carries the end of what it may read (the section, or
 * the entry being parsed): corrupt lengths, pointers and truncated programs become errors that
 * name the section and the entry's offset, never reads past the data.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/unwind_table.h"

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

#define REMEMBER_DEPTH 64	     /* DW_CFA_remember_state nesting; compilers use 1 or 2 */
#define MAX_AUG_LEN 16		     /* longer augmentation strings are not ones we know */
#define MAX_DEBUG_FRAME (256u << 20) /* inflated .debug_frame */

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

struct builder {
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

static int fail(struct builder *b, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct builder *b, int errnum, const char *fmt, ...)
{
	if (b->err && b->errlen) {
		int n = snprintf(b->err, b->errlen, "%s: ", b->sec_name ? b->sec_name : "elf");
		va_list ap;

		if (n < 0 || (size_t)n >= b->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(b->err + n, b->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

static uint64_t sec_off(const struct builder *b, const uint8_t *p)
{
	return (uint64_t)(p - b->sec);
}

static bool rd_bytes(struct rd *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	if (out)
		memcpy(out, r->p, n);
	r->p += n;
	return true;
}

/* Little-endian only: x86_64 and arm64 Linux (the ELF header is checked). */
static bool rd_uint(struct rd *r, size_t n, uint64_t *v)
{
	uint8_t buf[8];

	if (n > 8 || !rd_bytes(r, buf, n))
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v |= (uint64_t)buf[i] << (8 * i);
	return true;
}

static bool rd_u8(struct rd *r, uint8_t *v)
{
	return rd_bytes(r, v, 1);
}

static bool rd_uleb(struct rd *r, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	/* At most 10 bytes hold 64 bits: more is corrupt, not a bigger number. */
	for (int i = 0; i < 10; i++) {
		uint8_t byte;

		if (!rd_u8(r, &byte))
			return false;
		if (shift < 64)
			*v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80))
			return true;
	}
	return false;
}

static bool rd_sleb(struct rd *r, int64_t *v)
{
	uint64_t u = 0;
	unsigned int shift = 0;

	for (int i = 0; i < 10; i++) {
		uint8_t byte;

		if (!rd_u8(r, &byte))
			return false;
		if (shift < 64)
			u |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80)) {
			if (shift < 64 && (byte & 0x40))
				u |= ~(uint64_t)0 << shift;
			*v = (int64_t)u;
			return true;
		}
	}
	return false;
}

/*
 * An .eh_frame encoded pointer. *indirect tells the caller that the value is the address of the
 * pointer rather than the pointer (only personality routines use that, and we skip them).
 */
static int rd_encoded(struct builder *b, struct rd *r, uint8_t enc, uint64_t funcbase,
		      uint64_t *out, bool *indirect)
{
	uint64_t base = 0, v = 0;
	uint64_t here = b->sec_addr + sec_off(b, r->p);
	int64_t s;

	if (indirect)
		*indirect = enc & PE_indirect;
	switch (enc & 0x70) {
	case PE_absptr:
		break;
	case PE_pcrel:
		base = here;
		break;
	case PE_textrel:
		if (!b->has_text)
			return fail(b, EINVAL, "text-relative pointer at 0x%llx without .text",
				    (unsigned long long)sec_off(b, r->p));
		base = b->text_addr;
		break;
	case PE_datarel:
		if (!b->has_got)
			return fail(b, EINVAL, "data-relative pointer at 0x%llx without .got",
				    (unsigned long long)sec_off(b, r->p));
		base = b->got_addr;
		break;
	case PE_funcrel:
		base = funcbase;
		break;
	case PE_aligned: {
		size_t mis = (size_t)(here % b->addr_size);

		if (mis && !rd_bytes(r, NULL, b->addr_size - mis))
			goto truncated;
		break;
	}
	default:
		return fail(b, EINVAL, "pointer encoding 0x%02x at 0x%llx", enc,
			    (unsigned long long)sec_off(b, r->p));
	}
	switch (enc & 0x0f) {
	case PE_absptr:
		if (!rd_uint(r, b->addr_size, &v))
			goto truncated;
		break;
	case PE_uleb128:
		if (!rd_uleb(r, &v))
			goto truncated;
		break;
	case PE_udata2:
		if (!rd_uint(r, 2, &v))
			goto truncated;
		break;
	case PE_udata4:
		if (!rd_uint(r, 4, &v))
			goto truncated;
		break;
	case PE_udata8:
		if (!rd_uint(r, 8, &v))
			goto truncated;
		break;
	case PE_sleb128:
		if (!rd_sleb(r, &s))
			goto truncated;
		v = (uint64_t)s;
		break;
	case PE_sdata2:
		if (!rd_uint(r, 2, &v))
			goto truncated;
		v = (uint64_t)(int64_t)(int16_t)v;
		break;
	case PE_sdata4:
		if (!rd_uint(r, 4, &v))
			goto truncated;
		v = (uint64_t)(int64_t)(int32_t)v;
		break;
	case PE_sdata8:
		if (!rd_uint(r, 8, &v))
			goto truncated;
		break;
	default:
		return fail(b, EINVAL, "pointer encoding 0x%02x at 0x%llx", enc,
			    (unsigned long long)sec_off(b, r->p));
	}
	v += base;
	if (b->addr_size == 4)
		v &= 0xffffffffu;
	*out = v;
	return 0;
truncated:
	return fail(b, EINVAL, "pointer at 0x%llx runs past its entry",
		    (unsigned long long)sec_off(b, r->p));
}

/* One entry's header: its length (32- or 64-bit form), and the reader bounded to its body. */
static int rd_entry(struct builder *b, uint64_t off, struct rd *body, bool *is64, bool *term)
{
	struct rd r = {b->sec + off, b->sec + b->sec_size};
	uint64_t len;

	*term = false;
	if (!rd_uint(&r, 4, &len))
		return fail(b, EINVAL, "entry at 0x%llx: truncated length",
			    (unsigned long long)off);
	*is64 = len == 0xffffffffu;
	if (*is64) {
		if (!rd_uint(&r, 8, &len))
			return fail(b, EINVAL, "entry at 0x%llx: truncated 64-bit length",
				    (unsigned long long)off);
	} else if (len >= 0xfffffff0u) {
		return fail(b, EINVAL, "entry at 0x%llx: reserved length 0x%llx",
			    (unsigned long long)off, (unsigned long long)len);
	}
	if (len == 0) {
		*term = true;
		body->p = body->end = r.p;
		return 0;
	}
	if (len > (uint64_t)(r.end - r.p))
		return fail(b, EINVAL, "entry at 0x%llx: length 0x%llx runs past the section",
			    (unsigned long long)off, (unsigned long long)len);
	body->p = r.p;
	body->end = r.p + len;
	return 0;
}

static bool is_cie_id(const struct builder *b, uint64_t id, bool is64)
{
	if (!b->debug_frame)
		return id == 0;
	return is64 ? id == UINT64_MAX : id == 0xffffffffu;
}

static int run_program(struct builder *b, const struct cie *cie, struct rd *r,
		       struct frame_state *st, uint64_t fde_start, uint64_t fde_end);

static int parse_cie(struct builder *b, uint64_t off, struct cie *c)
{
	struct rd r;
	bool is64, term;
	uint64_t id;
	uint8_t version;
	char aug[MAX_AUG_LEN + 1];
	size_t aug_len = 0;
	int err;

	memset(c, 0, sizeof(*c));
	c->off = off;
	c->addr_size = b->addr_size;
	err = rd_entry(b, off, &r, &is64, &term);
	if (err)
		return err;
	if (term)
		return fail(b, EINVAL, "CIE at 0x%llx: zero length", (unsigned long long)off);
	if (!rd_uint(&r, (b->debug_frame && is64) ? 8 : 4, &id) || !is_cie_id(b, id, is64))
		return fail(b, EINVAL, "entry at 0x%llx: not a CIE", (unsigned long long)off);
	if (!rd_u8(&r, &version))
		goto truncated;
	if (b->debug_frame ? (version != 1 && version != 3 && version != 4)
			   : (version != 1 && version != 3))
		return fail(b, EINVAL, "CIE at 0x%llx: version %u", (unsigned long long)off,
			    version);
	for (;;) {
		uint8_t ch;

		if (!rd_u8(&r, &ch))
			goto truncated;
		if (!ch)
			break;
		if (aug_len == MAX_AUG_LEN) {
			/* Keep reading to the NUL so the entry stays parseable; the CIE is
			 * unusable. */
			c->bad = true;
			continue;
		}
		aug[aug_len++] = (char)ch;
	}
	aug[aug_len] = 0;
	if (version >= 4) {
		if (!rd_u8(&r, &c->addr_size) || !rd_u8(&r, &c->seg_size))
			goto truncated;
		if (c->addr_size != 4 && c->addr_size != 8)
			return fail(b, EINVAL, "CIE at 0x%llx: address size %u",
				    (unsigned long long)off, c->addr_size);
	}
	if (!rd_uleb(&r, &c->code_align) || !rd_sleb(&r, &c->data_align))
		goto truncated;
	if (version == 1) {
		uint8_t ra;

		if (!rd_u8(&r, &ra))
			goto truncated;
		c->ra_reg = ra;
	} else if (!rd_uleb(&r, &c->ra_reg)) {
		goto truncated;
	}
	c->fde_enc = PE_absptr;
	if (aug[0] == 'z') {
		uint64_t len;
		struct rd a;

		c->has_z = true;
		if (!rd_uleb(&r, &len) || len > (uint64_t)(r.end - r.p))
			goto truncated;
		a.p = r.p;
		a.end = r.p + len;
		r.p = a.end;
		for (size_t i = 1; i < aug_len && !c->bad; i++) {
			uint8_t enc;
			uint64_t ignored;

			switch (aug[i]) {
			case 'L':
				if (!rd_u8(&a, &enc))
					goto truncated;
				break;
			case 'R':
				if (!rd_u8(&a, &c->fde_enc))
					goto truncated;
				break;
			case 'P':
				if (!rd_u8(&a, &enc))
					goto truncated;
				err = rd_encoded(b, &a, enc, 0, &ignored, NULL);
				if (err)
					return err;
				break;
			case 'S':
				c->signal = true;
				break;
			case 'B': /* AArch64: return addresses signed with the B key */
			case 'G': /* AArch64: memory-tagged stack frames */
				break;
			default:
				/* What follows may have data whose size we do not know. */
				c->bad = true;
				break;
			}
		}
	} else if (!strcmp(aug, "eh")) {
		/* Old GCC: the address of the exception table follows. */
		if (!rd_bytes(&r, NULL, b->addr_size))
			goto truncated;
	} else if (aug[0]) {
		c->bad = true;
	}
	if (c->code_align == 0 && !c->bad)
		return fail(b, EINVAL, "CIE at 0x%llx: code alignment 0", (unsigned long long)off);
	if (c->bad)
		return 0;
	/* The initial instructions: their rules are what DW_CFA_restore returns to. A CIE whose
	 * program cannot be run leaves its FDEs without rows (frame pointers there). */
	if (run_program(b, c, &r, &c->init, 0, 0) == -EINVAL)
		c->bad = true;
	return 0;
truncated:
	return fail(b, EINVAL, "CIE at 0x%llx: truncated", (unsigned long long)off);
}

/* The CIE at off, parsed once: CIEs usually come in section order, so the search is short. */
static int get_cie(struct builder *b, uint64_t off, const struct cie **out)
{
	size_t lo = 0, hi = b->nr_cies;
	struct cie c;
	int err;

	if (hi && b->cies[hi - 1].off == off) {
		*out = &b->cies[hi - 1];
		return 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->cies[mid].off == off) {
			*out = &b->cies[mid];
			return 0;
		}
		if (b->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	err = parse_cie(b, off, &c);
	if (err)
		return err;
	if (b->nr_cies == b->cap_cies) {
		size_t cap = b->cap_cies ? 2 * b->cap_cies : 8;
		struct cie *n = realloc(b->cies, cap * sizeof(*n));

		if (!n)
			return fail(b, ENOMEM, "out of memory");
		b->cies = n;
		b->cap_cies = cap;
	}
	memmove(&b->cies[lo + 1], &b->cies[lo], (b->nr_cies - lo) * sizeof(c));
	b->cies[lo] = c;
	b->nr_cies++;
	b->stats.cies++;
	*out = &b->cies[lo];
	return 0;
}

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

static void to_row(struct builder *b, const struct cie *cie, const struct frame_state *st,
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

static bool same_rules(const struct hp_unwind_row *a, const struct hp_unwind_row *b)
{
	return a->cfa_offset == b->cfa_offset && a->fp_offset == b->fp_offset &&
	       a->ra_offset == b->ra_offset && a->cfa_rule == b->cfa_rule &&
	       a->fp_rule == b->fp_rule && a->ra_rule == b->ra_rule;
}

static int push_raw(struct builder *b, const struct hp_unwind_row *row, uint8_t prio)
{
	struct raw_row *last = b->nr_raw > b->cur_fde_first ? &b->raw[b->nr_raw - 1] : NULL;

	/* Within one FDE a row that changes nothing the walker uses is no row at all. */
	if (prio && last && last->prio && same_rules(&last->row, row))
		return 0;
	if (b->nr_raw == b->cap_raw) {
		size_t cap = b->cap_raw ? 2 * b->cap_raw : 1024;
		struct raw_row *n;

		/* Raw rows may exceed the compact limit a little (closing rows, duplicates), not
		 * by more than one row per row plus its closer. */
		if (b->cap_raw >= 2 * b->max_rows)
			return fail(b, E2BIG, "more than %zu rows", b->max_rows);
		n = realloc(b->raw, cap * sizeof(*n));
		if (!n)
			return fail(b, ENOMEM, "out of memory");
		b->raw = n;
		b->cap_raw = cap;
	}
	b->raw[b->nr_raw++] = (struct raw_row){.row = *row, .seq = b->stats.fdes, .prio = prio};
	b->stats.raw_rows++;
	return 0;
}

/* The row in force from pc on, under the rules of st. */
static int emit_row(struct builder *b, const struct cie *cie, const struct frame_state *st,
		    uint64_t pc)
{
	struct hp_unwind_row row;

	if (pc > UINT32_MAX)
		return fail(b, ERANGE, "address 0x%llx does not fit a 32-bit row",
			    (unsigned long long)pc);
	to_row(b, cie, st, pc, &row);
	return push_raw(b, &row, 1);
}

/* The rest of an FDE whose program we cannot follow: the walker must stop there. */
static int emit_unsupported(struct builder *b, uint64_t pc)
{
	struct hp_unwind_row row = {.pc = (uint32_t)pc, .cfa_rule = HP_CFA_UNSUPPORTED};

	if (pc > UINT32_MAX)
		return fail(b, ERANGE, "address 0x%llx does not fit a 32-bit row",
			    (unsigned long long)pc);
	b->stats.unknown_ops++;
	return push_raw(b, &row, 1);
}

/* The rule a register gets from DW_CFA_restore: the CIE's initial one. */
static struct reg_rule *tracked(struct builder *b, const struct cie *cie, struct frame_state *st,
				uint64_t reg)
{
	if (reg == b->fp_reg)
		return &st->fp;
	if (reg == cie->ra_reg)
		return &st->ra;
	return NULL; /* a register the walker does not need */
}

static void restore_reg(struct builder *b, const struct cie *cie, struct frame_state *st,
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

static void set_reg(struct builder *b, const struct cie *cie, struct frame_state *st, uint64_t reg,
		    uint8_t kind, int64_t val)
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

/*
 * Execute a CFA program: a CIE's initial instructions (fde_end == 0: only the state changes) or
 * an FDE's, emitting a row wherever the location advances. Opcodes and their operands follow
 * DWARF 5 §6.4.2; the GNU ones follow binutils. An opcode we do not know, or a program that ends
 * inside an instruction, makes the rest of the FDE HP_CFA_UNSUPPORTED: its operands' size is
 * unknown, so nothing after it can be trusted.
 */
static int run_program(struct builder *b, const struct cie *cie, struct rd *r,
		       struct frame_state *st, uint64_t fde_start, uint64_t fde_end)
{
	struct frame_state stack[REMEMBER_DEPTH];
	unsigned int depth = 0;
	bool in_fde = fde_end != 0;
	uint64_t loc = fde_start;
	int err;

	while (r->p < r->end) {
		uint64_t reg = 0, off = 0, delta = 0, next = 0;
		int64_t soff = 0;
		uint8_t op, low;

		if (!rd_u8(r, &op))
			break;
		low = op & 0x3f;
		switch (op & 0xc0) {
		case CFA_advance_loc:
			delta = low;
			goto advance;
		case CFA_offset:
			if (!rd_uleb(r, &off))
				goto bad;
			set_reg(b, cie, st, low, RULE_OFFSET, scaled(off, cie->data_align));
			continue;
		case CFA_restore:
			restore_reg(b, cie, st, low, in_fde);
			continue;
		}
		switch (op) {
		case CFA_nop:
			continue;
		case CFA_set_loc:
			if (b->debug_frame ? !rd_uint(r, cie->addr_size, &next)
					   : rd_encoded(b, r, cie->fde_enc, 0, &next, NULL) != 0)
				goto bad;
			if (next < loc)
				goto bad;
			delta = next - loc;
			goto advance_abs;
		case CFA_advance_loc1:
			if (!rd_uint(r, 1, &delta))
				goto bad;
			goto advance;
		case CFA_advance_loc2:
			if (!rd_uint(r, 2, &delta))
				goto bad;
			goto advance;
		case CFA_advance_loc4:
			if (!rd_uint(r, 4, &delta))
				goto bad;
			goto advance;
		case CFA_offset_extended:
			if (!rd_uleb(r, &reg) || !rd_uleb(r, &off))
				goto bad;
			set_reg(b, cie, st, reg, RULE_OFFSET, scaled(off, cie->data_align));
			continue;
		case CFA_offset_extended_sf:
			if (!rd_uleb(r, &reg) || !rd_sleb(r, &soff))
				goto bad;
			set_reg(b, cie, st, reg, RULE_OFFSET, scaled(soff, cie->data_align));
			continue;
		case CFA_GNU_negative_offset_extended:
			if (!rd_uleb(r, &reg) || !rd_uleb(r, &off))
				goto bad;
			set_reg(b, cie, st, reg, RULE_OFFSET,
				scaled(-(__int128)off, cie->data_align));
			continue;
		case CFA_val_offset:
			if (!rd_uleb(r, &reg) || !rd_uleb(r, &off))
				goto bad;
			set_reg(b, cie, st, reg, RULE_VAL_OFFSET, scaled(off, cie->data_align));
			continue;
		case CFA_val_offset_sf:
			if (!rd_uleb(r, &reg) || !rd_sleb(r, &soff))
				goto bad;
			set_reg(b, cie, st, reg, RULE_VAL_OFFSET, scaled(soff, cie->data_align));
			continue;
		case CFA_restore_extended:
			if (!rd_uleb(r, &reg))
				goto bad;
			restore_reg(b, cie, st, reg, in_fde);
			continue;
		case CFA_undefined:
			if (!rd_uleb(r, &reg))
				goto bad;
			set_reg(b, cie, st, reg, RULE_UNDEF, 0);
			continue;
		case CFA_same_value:
			if (!rd_uleb(r, &reg))
				goto bad;
			set_reg(b, cie, st, reg, RULE_SAME, 0);
			continue;
		case CFA_register:
			if (!rd_uleb(r, &reg) || !rd_uleb(r, &off))
				goto bad;
			set_reg(b, cie, st, reg, RULE_REGISTER, (int64_t)off);
			continue;
		case CFA_remember_state:
			if (depth == REMEMBER_DEPTH)
				goto bad;
			stack[depth++] = *st;
			continue;
		case CFA_restore_state:
			if (depth == 0)
				goto bad;
			/* The CFA of a restored state is what was remembered, as binutils and
			 * libgcc do (DWARF 5 §6.4.2.4 lets the producer rely on it). */
			*st = stack[--depth];
			continue;
		case CFA_def_cfa:
			if (!rd_uleb(r, &reg) || !rd_uleb(r, &off))
				goto bad;
			st->cfa_kind = CFA_REG;
			st->cfa_reg = reg;
			st->cfa_off = (int64_t)off;
			continue;
		case CFA_def_cfa_sf:
			if (!rd_uleb(r, &reg) || !rd_sleb(r, &soff))
				goto bad;
			st->cfa_kind = CFA_REG;
			st->cfa_reg = reg;
			st->cfa_off = scaled(soff, cie->data_align);
			continue;
		case CFA_def_cfa_register:
			if (!rd_uleb(r, &reg))
				goto bad;
			/* Only meaningful after a register rule; an expression CFA has none. */
			if (st->cfa_kind == CFA_EXPR)
				st->cfa_off = 0;
			st->cfa_kind = CFA_REG;
			st->cfa_reg = reg;
			continue;
		case CFA_def_cfa_offset:
			if (!rd_uleb(r, &off))
				goto bad;
			st->cfa_off = (int64_t)off;
			continue;
		case CFA_def_cfa_offset_sf:
			if (!rd_sleb(r, &soff))
				goto bad;
			st->cfa_off = scaled(soff, cie->data_align);
			continue;
		case CFA_def_cfa_expression:
			if (!rd_uleb(r, &off) || off > (uint64_t)(r->end - r->p))
				goto bad;
			st->cfa_kind = CFA_EXPR;
			st->cfa_expr = r->p;
			st->cfa_expr_len = off;
			r->p += off;
			continue;
		case CFA_expression:
		case CFA_val_expression:
			if (!rd_uleb(r, &reg) || !rd_uleb(r, &off) ||
			    off > (uint64_t)(r->end - r->p))
				goto bad;
			set_reg(b, cie, st, reg, op == CFA_expression ? RULE_EXPR : RULE_VAL_EXPR,
				0);
			r->p += off;
			continue;
		case CFA_GNU_args_size:
			if (!rd_uleb(r, &off))
				goto bad;
			continue;
		case CFA_AARCH64_negate_ra_state:
			/* Where the return address is does not change (see unwind_table.h). */
			continue;
		default:
			goto bad;
		}
	advance:
		delta *= cie->code_align;
	advance_abs:
		if (!in_fde)
			continue; /* a CIE has no location to advance */
		if (delta && loc < fde_end) {
			err = emit_row(b, cie, st, loc);
			if (err)
				return err;
		}
		loc = delta > fde_end - loc ? fde_end : loc + delta;
	}
	if (in_fde && loc < fde_end)
		return emit_row(b, cie, st, loc);
	return 0;
bad:
	/* A CIE we cannot run makes its FDEs unusable; an FDE stops where we lost it. */
	if (!in_fde)
		return fail(b, EINVAL, "CIE at 0x%llx: instruction 0x%02x at 0x%llx cannot be run",
			    (unsigned long long)cie->off, r->p > b->sec ? r->p[-1] : 0,
			    (unsigned long long)sec_off(b, r->p));
	return loc < fde_end ? emit_unsupported(b, loc) : 0;
}

/* One FDE: its range, then its program from the CIE's initial state. */
static int parse_fde(struct builder *b, struct rd *r, const struct cie *cie)
{
	struct frame_state st;
	uint64_t start, range, aug_len;
	int err;

	if (b->debug_frame) {
		if (!rd_uint(r, cie->addr_size, &start) || !rd_uint(r, cie->addr_size, &range))
			return fail(b, EINVAL, "FDE at 0x%llx: truncated",
				    (unsigned long long)sec_off(b, r->p));
	} else {
		err = rd_encoded(b, r, cie->fde_enc, 0, &start, NULL);
		/* The range is a length: the encoding's size, without its base. */
		if (!err)
			err = rd_encoded(b, r, cie->fde_enc & 0x0f, 0, &range, NULL);
		if (err)
			return err;
	}
	if (cie->has_z) {
		if (!rd_uleb(r, &aug_len) || aug_len > (uint64_t)(r->end - r->p))
			return fail(b, EINVAL, "FDE at 0x%llx: truncated augmentation",
				    (unsigned long long)sec_off(b, r->p));
		r->p += aug_len;
	}
	/* Functions the linker discarded keep their FDE with a zero start (.debug_frame) or an
	 * empty range; neither describes code. */
	if (!range || !start || start + range < start)
		return 0;
	if (start + range - 1 > UINT32_MAX)
		return fail(b, ERANGE, "FDE for 0x%llx: address does not fit a 32-bit row",
			    (unsigned long long)start);
	b->stats.fdes++;
	b->cur_fde_first = b->nr_raw;
	st = cie->init;
	err = run_program(b, cie, r, &st, start, start + range);
	if (err)
		return err;
	/* Where the FDE ends, the frame pointer takes over again, unless another FDE starts at the
	 * same address (sorting puts its rows after this one: see finish()). */
	b->cur_fde_first = b->nr_raw;
	return push_raw(b, &(struct hp_unwind_row){.pc = (uint32_t)(start + range)}, 0);
}

/* Every FDE of the section in b->sec. */
static int parse_section(struct builder *b)
{
	uint64_t off = 0;
	int err;

	while (off < b->sec_size) {
		const uint8_t *id_at;
		const struct cie *cie = NULL;
		struct rd body;
		bool is64, term;
		uint64_t id, cie_off;

		err = rd_entry(b, off, &body, &is64, &term);
		if (err)
			return err;
		if (term) {
			/* .eh_frame ends with a zero terminator; what follows is padding. */
			if (!b->debug_frame)
				return 0;
			off += 4;
			continue;
		}
		id_at = body.p;
		if (!rd_uint(&body, (b->debug_frame && is64) ? 8 : 4, &id))
			return fail(b, EINVAL, "entry at 0x%llx: truncated",
				    (unsigned long long)off);
		if (!is_cie_id(b, id, is64)) {
			/* .eh_frame: the distance back to the CIE from this field; .debug_frame:
			 * the CIE's offset in the section. */
			if (b->debug_frame)
				cie_off = id;
			else if (id > sec_off(b, id_at))
				cie_off = UINT64_MAX;
			else
				cie_off = sec_off(b, id_at) - id;
			if (cie_off >= b->sec_size)
				return fail(b, EINVAL,
					    "FDE at 0x%llx: CIE pointer out of the section",
					    (unsigned long long)off);
			err = get_cie(b, cie_off, &cie);
			if (err)
				return err;
			if (!cie->bad) {
				err = parse_fde(b, &body, cie);
				if (err)
					return err;
			}
		}
		off = sec_off(b, body.end);
	}
	return 0;
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
static int finish(struct builder *b, struct unwind_table *t)
{
	size_t n = 0;

	if (b->nr_raw)
		qsort(b->raw, b->nr_raw, sizeof(*b->raw), compare_raw);
	t->rows = malloc((b->nr_raw ? b->nr_raw : 1) * sizeof(*t->rows));
	if (!t->rows)
		return fail(b, ENOMEM, "out of memory");
	for (size_t i = 0; i < b->nr_raw; i++) {
		const struct hp_unwind_row *row = &b->raw[i].row;

		if (i + 1 < b->nr_raw && b->raw[i + 1].row.pc == row->pc)
			continue;
		if (n && same_rules(&t->rows[n - 1], row))
			continue;
		/* Nothing to close before the first row: below it there is no table anyway. */
		if (!n && row->cfa_rule == HP_CFA_NONE)
			continue;
		t->rows[n++] = *row;
	}
	if (n > b->max_rows)
		return fail(b, E2BIG, "%zu rows, more than the limit of %zu", n, b->max_rows);
	t->nr = n;
	for (size_t i = 0; i < n; i++)
		b->stats.per_cfa_rule[t->rows[i].cfa_rule & 7]++;
	b->stats.rows = (uint32_t)n;
	return 0;
}

/* A section's bytes, inflated when compressed (SHF_COMPRESSED, as `ld --compress-debug-sections`
 * writes .debug_frame). NULL when it has none in the file (SHT_NOBITS in a debug file). */
static Elf_Data *section_data(Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS || sh->sh_size == 0)
		return NULL;
	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		/* Bound what a corrupt header could make libelf allocate. */
		if (!gelf_getchdr(scn, &ch) || ch.ch_size > MAX_DEBUG_FRAME ||
		    elf_compress(scn, 0, 0) < 0)
			return NULL;
	}
	d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size ? d : NULL;
}

struct cfi_sections {
	Elf_Scn *eh_frame, *debug_frame;
	GElf_Shdr eh_sh, debug_sh;
};

static int find_sections(struct builder *b, Elf *elf, struct cfi_sections *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(out, 0, sizeof(*out));
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return fail(b, EINVAL, "no section name table: %s", elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame")) {
			out->eh_frame = scn;
			out->eh_sh = sh;
		} else if (!strcmp(name, ".debug_frame")) {
			out->debug_frame = scn;
			out->debug_sh = sh;
		} else if (!strcmp(name, ".text")) {
			b->text_addr = sh.sh_addr;
			b->has_text = true;
		} else if (!strcmp(name, ".got")) {
			b->got_addr = sh.sh_addr;
			b->has_got = true;
		}
	}
	return 0;
}

/* Parse one CFI section into b's rows. Entries' CIE offsets are per section: start afresh. */
static int parse_cfi(struct builder *b, Elf_Scn *scn, GElf_Shdr *sh, bool debug_frame, bool *used)
{
	Elf_Data *d = section_data(scn, sh);
	uint32_t fdes = b->stats.fdes;
	int err;

	*used = false;
	if (!d)
		return 0;
	b->debug_frame = debug_frame;
	b->sec_name = debug_frame ? ".debug_frame" : ".eh_frame";
	b->sec = d->d_buf;
	b->sec_size = d->d_size;
	b->sec_addr = sh->sh_addr;
	b->nr_cies = 0;
	err = parse_section(b);
	*used = b->stats.fdes > fdes;
	return err;
}

enum unwind_arch unwind_arch__of_elf(Elf *elf)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return UNWIND_ARCH_NONE;
	if (eh.e_machine == EM_X86_64)
		return UNWIND_ARCH_X86_64;
	if (eh.e_machine == EM_AARCH64)
		return UNWIND_ARCH_ARM64;
	return UNWIND_ARCH_NONE;
}

struct unwind_table *unwind_table__build_elf(Elf *elf, const struct unwind_table_opts *opts,
					     char *err, size_t errlen)
{
	struct builder b = {.err = err, .errlen = errlen, .addr_size = 8};
	struct unwind_table *t = NULL;
	struct cfi_sections cfi;
	bool used_debug = false, used_eh = false;
	int ret;

	if (err && errlen)
		err[0] = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = fail(&b, ENOEXEC, "not an ELF file");
		goto out;
	}
	b.arch = opts && opts->arch ? opts->arch : unwind_arch__of_elf(elf);
	if (b.arch == UNWIND_ARCH_NONE) {
		ret = fail(&b, ENOEXEC, "not a little-endian 64-bit x86_64 or arm64 ELF file");
		goto out;
	}
	b.sp_reg = b.arch == UNWIND_ARCH_ARM64 ? ARM64_SP : X86_64_RSP;
	b.fp_reg = b.arch == UNWIND_ARCH_ARM64 ? ARM64_X29 : X86_64_RBP;
	b.max_rows = opts && opts->max_rows ? opts->max_rows : UNWIND_TABLE_DEFAULT_MAX_ROWS;
	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = fail(&b, ENOMEM, "out of memory");
		goto out;
	}
	t->arch = b.arch;
	ret = find_sections(&b, elf, &cfi);
	/* .debug_frame first, so that where both describe an address .eh_frame's rows win: it is
	 * what the runtime itself unwinds with. */
	if (!ret && cfi.debug_frame)
		ret = parse_cfi(&b, cfi.debug_frame, &cfi.debug_sh, true, &used_debug);
	if (!ret && cfi.eh_frame)
		ret = parse_cfi(&b, cfi.eh_frame, &cfi.eh_sh, false, &used_eh);
	if (!ret)
		ret = finish(&b, t);
	b.stats.source = used_eh      ? UNWIND_SRC_EH_FRAME
			 : used_debug ? UNWIND_SRC_DEBUG_FRAME
				      : UNWIND_SRC_NONE;
	t->stats = b.stats;
out:
	free(b.cies);
	free(b.raw);
	if (ret) {
		unwind_table__delete(t);
		errno = -ret;
		return NULL;
	}
	return t;
}

struct unwind_table *unwind_table__build(const char *path, const struct unwind_table_opts *opts,
					 char *err, size_t errlen)
{
	struct unwind_table *t;
	int fd, saved;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	t = unwind_table__build_elf(elf, opts, err, errlen);
	saved = errno;
	elf_end(elf);
	close(fd);
	errno = saved;
	return t;
}

struct unwind_table *unwind_table__from_rows(enum unwind_arch arch,
					     const struct hp_unwind_row *rows, size_t nr)
{
	struct unwind_table *t;

	for (size_t i = 1; i < nr; i++) {
		if (rows[i].pc <= rows[i - 1].pc) {
			errno = EINVAL;
			return NULL;
		}
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->rows = malloc((nr ? nr : 1) * sizeof(*t->rows));
	if (!t->rows) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	if (nr)
		memcpy(t->rows, rows, nr * sizeof(*rows));
	t->nr = nr;
	t->arch = arch;
	t->stats.rows = (uint32_t)nr;
	t->stats.raw_rows = (uint32_t)nr;
	for (size_t i = 0; i < nr; i++)
		t->stats.per_cfa_rule[rows[i].cfa_rule & 7]++;
	return t;
}

void unwind_table__delete(struct unwind_table *table)
{
	if (!table)
		return;
	free(table->rows);
	free(table);
}

const struct hp_unwind_row *unwind_table__rows(const struct unwind_table *table, size_t *nr)
{
	*nr = table->nr;
	return table->rows;
}

enum unwind_arch unwind_table__arch(const struct unwind_table *table)
{
	return table->arch;
}

const struct unwind_table_stats *unwind_table__stats(const struct unwind_table *table)
{
	return &table->stats;
}

const struct hp_unwind_row *unwind_table__find(const struct unwind_table *table, uint64_t pc)
{
	size_t lo = 0, hi = table->nr;

	if (pc > UINT32_MAX)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (table->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &table->rows[lo - 1] : NULL;
}

const char *unwind_arch__name(enum unwind_arch arch)
{
	switch (arch) {
	case UNWIND_ARCH_X86_64:
		return "x86_64";
	case UNWIND_ARCH_ARM64:
		return "arm64";
	default:
		return "none";
	}
}

const char *unwind_cfa_rule__name(unsigned int rule)
{
	static const char *const names[] = {
		[HP_CFA_NONE] = "none",
		[HP_CFA_SP] = "sp",
		[HP_CFA_FP] = "fp",
		[HP_CFA_PLT] = "plt",
		[HP_CFA_END] = "end",
		[HP_CFA_SIGNAL] = "signal",
		[HP_CFA_UNSUPPORTED] = "unsupported",
	};

	return rule < sizeof(names) / sizeof(names[0]) && names[rule] ? names[rule] : "?";
}

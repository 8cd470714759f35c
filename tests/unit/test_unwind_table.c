// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for src/unwind/unwind_table.c and its cfi_*.c on the fixtures that
 * tests/unit/fixtures.mk builds into $OUTPUT/fixtures (OUTPUT defaults to "build"):
 * tests/fixtures/elf/fx_unwind.c as an -O2 PIE, an -O2 library, an -O0 PIE, a library with
 * .debug_frame only and an arm64 library, plus a copy of the C library (hand-written CFI: a signal
 * trampoline, CFAs in other registers).
 *
 * The oracle is binutils: `readelf --debug-dump=frames-interp` executes every FDE's CFA program
 * and prints its rows (X.cfi; X.cfiops adds what that dump cannot show). For every row readelf
 * prints, the table must give the compact row that unwind_table.h maps that CFI row to, at the
 * row's address and at the last address before the next row; at the end of an FDE it must give
 * the next FDE's first row or HP_CFA_NONE. Every row of the table must in turn start where readelf
 * has a row, or close an FDE. Corrupt copies (written to a mkdtemp() directory under /tmp, or
 * mutated in memory and read through elf_memory()) must fail with a message or give a sorted
 * table, and never crash: `make check` runs this under ASan and UBSan. Needs no privileges.
 *
 * Usage: test_unwind_table [BINARY]: with a binary, next to which BINARY.cfi, BINARY.cfiops and
 * BINARY.sections were made as fixtures.mk makes them, checks only that binary's rows.
 */
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixture_paths.h"
#include "hostprof_abi.h"
#include "unwind/unwind_table.h"

/* -DFUZZ_SEED=... -DFUZZ_EH_ITERATIONS=... for a longer run by hand. */
#ifndef FUZZ_EH_ITERATIONS
#define FUZZ_EH_ITERATIONS 3000
#endif
#ifndef FUZZ_DEBUG_ITERATIONS
#define FUZZ_DEBUG_ITERATIONS 1000
#endif
#ifndef FUZZ_SEED
#define FUZZ_SEED 0x6877756e77696e64ull /* "hwunwind" */
#endif

static const char *rule_name(unsigned int rule)
{
	const char *n = unwind_cfa_rule__name(rule);

	return n ? n : "(null)";
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static bool write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(buf, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* --- what readelf says --- */

/* A row as unwind_table.h says readelf's row must be compacted; only the rule's fields count. */
struct want {
	uint64_t loc;
	uint8_t cfa_rule;
	int64_t cfa_offset;
	uint8_t fp_rule;
	int64_t fp_offset;
	uint8_t ra_rule;
	int64_t ra_offset;
	bool skip;	/* a row the mapping does not say enough about: not checked */
	char text[160]; /* readelf's line and header, for messages */
};

struct cfi_cie {
	uint64_t off;
	bool signal; /* augmentation 'S' */
	bool has_row;
	struct want row; /* the initial row (loc unused) */
};

struct cfi_fde {
	uint64_t off, cie, start, end;
	size_t raw_first, raw_end; /* the rows readelf printed under it, while parsing */
	size_t first, nr;	   /* its rows in cfi.rows, by increasing loc */
};

/* A line of BINARY.cfiops: what the interpreted dump does not say. */
struct cfi_op {
	uint64_t off;	/* of the CIE or FDE that holds it */
	int undefined;	/* DW_CFA_undefined of this DWARF register; -1: an expression */
	char text[256]; /* the DW_CFA_def_cfa_expression's operations */
};

struct cfi {
	enum unwind_arch arch;
	struct cfi_cie *cies;
	size_t nr_cies;
	struct cfi_fde *fdes;
	size_t nr_fdes;
	struct want *rows;
	size_t nr_rows;
	struct cfi_op *ops;
	size_t nr_ops;
	size_t nonempty_fdes;
};

/* Room for element nr of an array of capacity 16, 32, 64, ... */
static void *grow(void *p, size_t nr, size_t size)
{
	void *q;

	if (nr && (nr < 16 || (nr & (nr - 1))))
		return p;
	q = realloc(p, (nr ? nr * 2 : 16) * size);
	if (!q) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return q;
}

static void cfi__free(struct cfi *c)
{
	free(c->cies);
	free(c->fdes);
	free(c->rows);
	free(c->ops);
	memset(c, 0, sizeof(*c));
}

/* DWARF register numbers (x86_64 and AArch64 psABIs). */
#define DWARF_X86_64_RBP 6
#define DWARF_X86_64_RA 16
#define DWARF_ARM64_X29 29
#define DWARF_ARM64_X30 30

static const char *sp_name(enum unwind_arch arch)
{
	return arch == UNWIND_ARCH_ARM64 ? "sp" : "rsp";
}

static const char *fp_name(enum unwind_arch arch)
{
	return arch == UNWIND_ARCH_ARM64 ? "x29" : "rbp";
}

/*
 * The x86_64 lazy PLT's CFA expression, as `readelf --debug-dump=frames` prints it: rsp + n, plus
 * 8 from byte 11 of each 16-byte entry on (x86_64 psABI). Any other expression is unsupported.
 */
static bool plt_expression(const char *text, int64_t *off)
{
	static const char tail[] = "DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11; "
				   "DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus";
	long long n;
	int used = 0;

	if (sscanf(text, "DW_OP_breg7 (rsp): %lld; %n", &n, &used) != 1 || !used)
		return false;
	if (strcmp(text + used, tail))
		return false;
	*off = n;
	return true;
}

static const char *cfa_expression(const struct cfi *c, uint64_t fde_off, uint64_t cie_off)
{
	const char *found = NULL;

	/* The FDE's own expression wins over its CIE's; the last one of each is in force. */
	for (size_t i = 0; i < c->nr_ops; i++)
		if (c->ops[i].off == cie_off && c->ops[i].undefined < 0 && !found)
			found = c->ops[i].text;
	for (size_t i = 0; i < c->nr_ops; i++)
		if (c->ops[i].off == fde_off && c->ops[i].undefined < 0)
			found = c->ops[i].text;
	return found;
}

/*
 * Whether the FDE or its CIE makes reg explicitly undefined. The interpreted dump prints "u" for
 * that and for a register that no instruction mentions. An FDE that undefines a register after
 * its first rows would be misread; _start undefines at its start.
 */
static bool undefines(const struct cfi *c, uint64_t fde_off, uint64_t cie_off, int reg)
{
	for (size_t i = 0; i < c->nr_ops; i++)
		if ((c->ops[i].off == fde_off || c->ops[i].off == cie_off) &&
		    c->ops[i].undefined == reg)
			return true;
	return false;
}

/* readelf's "c-16" (saved at CFA-16): the offset; false for any other rule. */
static bool saved_at(const char *col, int64_t *off)
{
	char *end;
	long long n;

	if (col[0] != 'c' || (col[1] != '-' && col[1] != '+'))
		return false;
	errno = 0;
	n = strtoll(col + 1, &end, 10);
	if (errno || *end)
		return false;
	*off = n;
	return true;
}

/*
 * The compact row for one row of readelf, by the mapping of unwind_table.h. cols are readelf's
 * register columns; fp and ra index them (-1: no column, which is "u"). "u" means undefined when
 * the raw dump has DW_CFA_undefined for the register (BINARY.cfiops), else that no instruction set
 * a rule: the FP is then unchanged, and so is arm64's x30 (the return address is still in the
 * link register). x86_64's CIEs always give the RA a rule, so its "u" without DW_CFA_undefined
 * is not a case unwind_table.h speaks of: such rows are not checked.
 */
static void want_from(const struct cfi *c, struct want *w, const char *cfa, char **cols, int fp,
		      int ra, uint64_t fde_off, const struct cfi_cie *cie)
{
	const char *fpc = fp >= 0 ? cols[fp] : "u";
	const char *rac = ra >= 0 ? cols[ra] : "u";
	uint64_t cie_off = cie ? cie->off : UINT64_MAX;
	bool arm64 = c->arch == UNWIND_ARCH_ARM64;
	int64_t off;
	const char *sign;

	w->cfa_rule = HP_CFA_UNSUPPORTED;
	w->cfa_offset = 0;
	if (!strcmp(cfa, "exp")) {
		const char *e = cfa_expression(c, fde_off, cie_off);

		if (c->arch == UNWIND_ARCH_X86_64 && e && plt_expression(e, &off)) {
			w->cfa_rule = HP_CFA_PLT;
			w->cfa_offset = off;
		}
	} else if ((sign = strpbrk(cfa, "+-"))) {
		size_t len = (size_t)(sign - cfa);
		char *end;
		long long n = strtoll(sign, &end, 10);

		if (!*end && len == strlen(sp_name(c->arch)) &&
		    !strncmp(cfa, sp_name(c->arch), len))
			w->cfa_rule = HP_CFA_SP;
		else if (!*end && len == strlen(fp_name(c->arch)) &&
			 !strncmp(cfa, fp_name(c->arch), len))
			w->cfa_rule = HP_CFA_FP;
		w->cfa_offset = n;
		if (n < INT32_MIN || n > INT32_MAX)
			w->cfa_rule = HP_CFA_UNSUPPORTED;
	}

	w->fp_rule = HP_REG_SAME;
	w->fp_offset = 0;
	if (saved_at(fpc, &off)) {
		w->fp_rule =
			off >= INT16_MIN && off <= INT16_MAX ? HP_REG_OFFSET : HP_REG_UNDEFINED;
		w->fp_offset = off;
	} else if (!strcmp(fpc, "u")) {
		if (undefines(c, fde_off, cie_off, arm64 ? DWARF_ARM64_X29 : DWARF_X86_64_RBP))
			w->fp_rule = HP_REG_UNDEFINED;
	} else if (strcmp(fpc, "s")) {
		w->fp_rule = HP_REG_UNDEFINED; /* v+N, exp, vexp, another register */
	}

	w->ra_rule = HP_REG_SAME;
	w->ra_offset = 0;
	if (saved_at(rac, &off)) {
		w->ra_rule = HP_REG_OFFSET;
		w->ra_offset = off;
		if (off < INT16_MIN || off > INT16_MAX)
			w->cfa_rule = HP_CFA_UNSUPPORTED;
	} else if (!strcmp(rac, "u")) {
		if (undefines(c, fde_off, cie_off, arm64 ? DWARF_ARM64_X30 : DWARF_X86_64_RA))
			w->cfa_rule = HP_CFA_END;
		else if (!arm64)
			w->skip = true;
	} else if (arm64 && (!strcmp(rac, "s") || !strcmp(rac, "x30"))) {
		w->ra_rule = HP_REG_SAME; /* still (or again) in the link register */
	} else {
		w->cfa_rule = HP_CFA_UNSUPPORTED;
	}

	if (cie && cie->signal)
		w->cfa_rule = HP_CFA_SIGNAL;
}

static struct cfi_cie *find_cie(struct cfi *c, uint64_t off)
{
	for (size_t i = 0; i < c->nr_cies; i++)
		if (c->cies[i].off == off)
			return &c->cies[i];
	return NULL;
}

/* BINARY.cfiops: "OFF cfa_expression OPERATIONS" and "OFF undefined rN" lines. */
static void read_ops(struct cfi *c, const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	CHECK(f != NULL, "%s missing: run make unit-fixtures", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct cfi_op op = {.undefined = -1};
		char kind[32];
		int used = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 " %31s %n", &op.off, kind, &used) != 2 || !used)
			continue;
		if (!strcmp(kind, "undefined")) {
			if (sscanf(line + used, "r%d", &op.undefined) != 1)
				continue;
		} else if (!strcmp(kind, "cfa_expression")) {
			snprintf(op.text, sizeof(op.text), "%s", line + used);
		} else {
			continue;
		}
		c->ops = grow(c->ops, c->nr_ops, sizeof(*c->ops));
		c->ops[c->nr_ops++] = op;
	}
	fclose(f);
}

#define MAX_TOKS 64

/* The FDE's rows: sorted by loc, those outside the FDE dropped, of equal locs the last one. */
static void resolve_fde(struct cfi *c, struct cfi_fde *d, const struct want *raw)
{
	size_t first = c->nr_rows;

	for (size_t r = d->raw_first; r < d->raw_end; r++) {
		if (raw[r].loc < d->start || raw[r].loc >= d->end)
			continue;
		c->rows = grow(c->rows, c->nr_rows, sizeof(*c->rows));
		c->rows[c->nr_rows++] = raw[r];
	}
	/* Insertion sort keeps equal locs in readelf's order. */
	for (size_t a = first + 1; a < c->nr_rows; a++) {
		for (size_t b = a; b > first && c->rows[b - 1].loc > c->rows[b].loc; b--) {
			struct want t = c->rows[b];

			c->rows[b] = c->rows[b - 1];
			c->rows[b - 1] = t;
		}
	}
	for (size_t a = first; a + 1 < c->nr_rows;) {
		if (c->rows[a].loc == c->rows[a + 1].loc) {
			memmove(&c->rows[a], &c->rows[a + 1],
				(c->nr_rows - a - 1) * sizeof(*c->rows));
			c->nr_rows--;
		} else {
			a++;
		}
	}
	/* readelf prints no row for an FDE whose program is only nops: the CIE's row holds. */
	if (c->nr_rows == first && d->end > d->start) {
		const struct cfi_cie *owner = find_cie(c, d->cie);

		CHECK(owner && owner->has_row,
		      "FDE at 0x%" PRIx64 ": readelf shows no initial row for its CIE 0x%" PRIx64,
		      d->off, d->cie);
		if (owner && owner->has_row) {
			c->rows = grow(c->rows, c->nr_rows, sizeof(*c->rows));
			c->rows[c->nr_rows] = owner->row;
			c->rows[c->nr_rows].loc = d->start;
			c->nr_rows++;
		}
	}
	d->first = first;
	d->nr = c->nr_rows - first;
}

/*
 * Parses BINARY.cfi, keeping the entries of one section (".eh_frame" or ".debug_frame"): CIE
 * lines with their initial row, FDE lines ("OFF LEN ID FDE cie=X pc=LO..HI") with their rows.
 * A column header ("LOC CFA rbx rbp ra") precedes the rows and says which column is which.
 */
static bool cfi__read(struct cfi *c, const char *binary, const char *section, enum unwind_arch arch)
{
	char path[PATH_MAX + 16], line[1024], header[256] = "";
	int fp = -1, ra = -1, nr_cols = 0;
	bool in_section = false;
	struct cfi_cie *cie = NULL;
	struct cfi_fde *fde = NULL;
	struct want *raw = NULL;
	size_t nr_raw = 0;
	FILE *f;

	memset(c, 0, sizeof(*c));
	c->arch = arch;
	snprintf(path, sizeof(path), "%s.cfiops", binary);
	read_ops(c, path);
	snprintf(path, sizeof(path), "%s.cfi", binary);
	f = fopen(path, "r");
	CHECK(f != NULL, "%s missing: run make unit-fixtures", path);
	if (!f)
		return false;

	while (fgets(line, sizeof(line), f)) {
		char copy[sizeof(line)], *save = NULL, *toks[MAX_TOKS];
		unsigned long long off, len, id, lo, hi;
		struct want w;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "Contents of the ", 16)) {
			size_t sl = strlen(section);

			/* "...section:", or "...section (loaded from FILE):" in a file with a
			 * debuglink.
			 */
			in_section = !strncmp(line + 16, section, sl) &&
				     !strncmp(line + 16 + sl, " section", 8);
			cie = NULL;
			fde = NULL;
			continue;
		}
		if (!in_section)
			continue;
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &id,
			   &lo, &hi) == 6) {
			c->fdes = grow(c->fdes, c->nr_fdes, sizeof(*c->fdes));
			fde = &c->fdes[c->nr_fdes++];
			memset(fde, 0, sizeof(*fde));
			fde->off = off;
			fde->cie = id;
			fde->start = lo;
			fde->end = hi;
			fde->raw_first = fde->raw_end = nr_raw;
			if (hi > lo)
				c->nonempty_fdes++;
			cie = NULL;
			nr_cols = 0;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx CIE", &off, &len, &id) == 3 &&
		    strstr(line, " CIE")) {
			const char *aug = strchr(line, '"');
			const char *aug_end = aug ? strchr(aug + 1, '"') : NULL;

			c->cies = grow(c->cies, c->nr_cies, sizeof(*c->cies));
			cie = &c->cies[c->nr_cies++];
			memset(cie, 0, sizeof(*cie));
			cie->off = off;
			cie->signal = aug_end && memchr(aug + 1, 'S', (size_t)(aug_end - aug - 1));
			fde = NULL;
			nr_cols = 0;
			continue;
		}
		if (!cie && !fde)
			continue;

		snprintf(copy, sizeof(copy), "%s", line);
		/* A register rule prints as "r9 (r9)": the name in parentheses is not a column. */
		for (char *t = strtok_r(copy, " \t", &save); t && n < MAX_TOKS;
		     t = strtok_r(NULL, " \t", &save))
			if (t[0] != '(')
				toks[n++] = t;
		if (n >= 2 && !strcmp(toks[0], "LOC") && !strcmp(toks[1], "CFA")) {
			fp = ra = -1;
			nr_cols = n - 2;
			for (int i = 2; i < n; i++) {
				if (!strcmp(toks[i], fp_name(arch)))
					fp = i - 2;
				else if (!strcmp(toks[i], "ra"))
					ra = i - 2;
			}
			snprintf(header, sizeof(header), "%.255s", line);
			continue;
		}
		if (n < 2 || n - 2 != nr_cols ||
		    strspn(toks[0], "0123456789abcdef") != strlen(toks[0]))
			continue;

		memset(&w, 0, sizeof(w));
		w.loc = strtoull(toks[0], NULL, 16);
		/* CIEs come before the FDEs that use them, in both sections. */
		want_from(c, &w, toks[1], toks + 2, fp, ra, fde ? fde->off : UINT64_MAX,
			  fde ? find_cie(c, fde->cie) : cie);
		snprintf(w.text, sizeof(w.text), "\"%.60s\" under \"%.80s\"", line, header);
		if (cie) {
			cie->row = w;
			cie->has_row = true;
		} else {
			raw = grow(raw, nr_raw, sizeof(*raw));
			raw[nr_raw++] = w;
			fde->raw_end = nr_raw;
		}
	}
	fclose(f);

	for (size_t i = 0; i < c->nr_fdes; i++)
		resolve_fde(c, &c->fdes[i], raw);
	free(raw);
	return true;
}

/* Offset and size of a section in the file, from `readelf -SW` (BINARY.sections). */
static bool section_of(const char *binary, const char *name, uint64_t *off, uint64_t *size)
{
	char path[PATH_MAX + 16], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s.sections", binary);
	f = fopen(path, "r");
	CHECK(f != NULL, "%s missing: run make unit-fixtures", path);
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char sname[64], type[32];
		unsigned long long addr, o, s;
		const char *p = strchr(line, ']');

		if (p &&
		    sscanf(p + 1, "%63s %31s %llx %llx %llx", sname, type, &addr, &o, &s) == 5 &&
		    !strcmp(sname, name)) {
			*off = o;
			*size = s;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* --- comparing --- */

static bool row_matches(const struct hp_unwind_row *r, const struct want *w)
{
	if (w->skip)
		return true;
	if (r->cfa_rule != w->cfa_rule)
		return false;
	if (w->cfa_rule != HP_CFA_SP && w->cfa_rule != HP_CFA_FP && w->cfa_rule != HP_CFA_PLT)
		return true;
	if (r->cfa_offset != w->cfa_offset || r->fp_rule != w->fp_rule || r->ra_rule != w->ra_rule)
		return false;
	if (w->fp_rule == HP_REG_OFFSET && r->fp_offset != w->fp_offset)
		return false;
	if (w->ra_rule == HP_REG_OFFSET && r->ra_offset != w->ra_offset)
		return false;
	return true;
}

static const char *describe(char *buf, size_t len, const struct hp_unwind_row *r)
{
	if (!r)
		snprintf(buf, len, "no row");
	else
		snprintf(buf, len,
			 "row pc=0x%x %s cfa_offset=%d fp_rule=%u fp_offset=%d ra_rule=%u "
			 "ra_offset=%d",
			 r->pc, rule_name(r->cfa_rule), r->cfa_offset, r->fp_rule, r->fp_offset,
			 r->ra_rule, r->ra_offset);
	return buf;
}

static const char *describe_want(char *buf, size_t len, const struct want *w)
{
	snprintf(buf, len,
		 "%s cfa_offset=%" PRId64 " fp_rule=%u fp_offset=%" PRId64 " ra_rule=%u "
		 "ra_offset=%" PRId64,
		 rule_name(w->cfa_rule), w->cfa_offset, w->fp_rule, w->fp_offset, w->ra_rule,
		 w->ra_offset);
	return buf;
}

/*
 * The row in force at pc must have w's rules. It may start before the FDE: the table merges
 * neighbours with the same rules even across FDEs, which the walker cannot tell apart.
 */
static void expect_at(const char *name, const struct unwind_table *t, uint64_t pc,
		      const struct want *w, const char *what)
{
	const struct hp_unwind_row *r = unwind_table__find(t, pc);
	char got[192], want[192];

	CHECK(r && row_matches(r, w) && r->pc <= pc,
	      "%s: 0x%" PRIx64 " (%s): got %s; want %s; readelf: %s", name, pc, what,
	      describe(got, sizeof(got), r), describe_want(want, sizeof(want), w), w->text);
}

/* The FDE whose first row is in force at pc; where two start there, the later one wins. */
static const struct cfi_fde *fde_starting_at(const struct cfi *c, uint64_t pc)
{
	const struct cfi_fde *found = NULL;

	for (size_t i = 0; i < c->nr_fdes; i++)
		if (c->fdes[i].start == pc && c->fdes[i].end > pc && c->fdes[i].nr)
			found = &c->fdes[i];
	return found;
}

static bool covered(const struct cfi *c, uint64_t pc)
{
	for (size_t i = 0; i < c->nr_fdes; i++)
		if (c->fdes[i].start <= pc && pc < c->fdes[i].end)
			return true;
	return false;
}

static bool overlaps_another(const struct cfi *c, const struct cfi_fde *d)
{
	for (size_t i = 0; i < c->nr_fdes; i++) {
		const struct cfi_fde *o = &c->fdes[i];

		if (o != d && o->end > o->start && o->start < d->end && d->start < o->end)
			return true;
	}
	return false;
}

static bool rows_sorted(const struct unwind_table *t, size_t *bad)
{
	size_t nr = 0;
	const struct hp_unwind_row *rows = unwind_table__rows(t, &nr);

	*bad = 0;
	if (nr && !rows)
		return false;
	for (size_t i = 1; i < nr; i++) {
		if (rows[i].pc <= rows[i - 1].pc) {
			*bad = i;
			return false;
		}
	}
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every row of the table starts where readelf has a row, or closes an FDE with HP_CFA_NONE. */
static void check_reverse(const char *name, const struct unwind_table *t, const struct cfi *c)
{
	size_t nr = 0, stray = 0;
	const struct hp_unwind_row *rows = unwind_table__rows(t, &nr);
	uint64_t *locs = calloc(c->nr_rows + 1, sizeof(*locs));

	if (!locs)
		return;
	for (size_t i = 0; i < c->nr_rows; i++)
		locs[i] = c->rows[i].loc;
	qsort(locs, c->nr_rows, sizeof(*locs), cmp_u64);
	for (size_t i = 0; i < nr; i++) {
		const struct hp_unwind_row *r = &rows[i];
		uint64_t pc = r->pc;
		bool known = false;
		char got[192];

		if (r->cfa_rule == HP_CFA_NONE) {
			for (size_t f = 0; f < c->nr_fdes && !known; f++)
				known = c->fdes[f].end == pc && c->fdes[f].start < pc;
			known = known && !covered(c, pc);
		} else {
			known = bsearch(&pc, locs, c->nr_rows, sizeof(*locs), cmp_u64) != NULL;
		}
		if (!known && stray++ < 10)
			fprintf(stderr, "  %s: %s: readelf has no row there%s\n", name,
				describe(got, sizeof(got), r),
				r->cfa_rule == HP_CFA_NONE ? " (and no FDE ends there)" : "");
	}
	CHECK(stray == 0, "%s: %zu of %zu rows start where readelf has no row", name, stray, nr);
	free(locs);
}

/* --- the fixtures against readelf --- */

#define NEED(rule) (1u << (rule))
#define NEED_ADJACENT (1u << 16) /* an FDE that starts where another ends */
#define NEED_RA_IN_LR (1u << 17) /* arm64: rows with x30 not yet saved, and saved */

static const char *section_name(enum unwind_cfi_source source)
{
	return source == UNWIND_SRC_DEBUG_FRAME ? ".debug_frame" : ".eh_frame";
}

/* What the fixture is there for must show in readelf's rows, or it tests less than it claims. */
static void check_coverage(const char *name, const struct cfi *c, unsigned int need)
{
	unsigned int seen = 0;

	for (size_t i = 0; i < c->nr_rows; i++) {
		const struct want *w = &c->rows[i];

		if (w->skip)
			continue;
		seen |= NEED(w->cfa_rule);
		if (w->cfa_rule == HP_CFA_SP || w->cfa_rule == HP_CFA_FP)
			seen |= w->ra_rule == HP_REG_SAME ? 1u << 18 : 1u << 19;
	}
	if ((seen & (3u << 18)) == 3u << 18)
		seen |= NEED_RA_IN_LR;
	for (size_t i = 0; i < c->nr_fdes; i++)
		if (c->fdes[i].end > c->fdes[i].start && fde_starting_at(c, c->fdes[i].end))
			seen |= NEED_ADJACENT;
	CHECK((seen & need) == need,
	      "%s: readelf's rows lack what the fixture is for: 0x%x of 0x%x", name, seen & need,
	      need);
}

static void check_stats(const char *name, const struct unwind_table *t, const struct cfi *c,
			enum unwind_cfi_source source)
{
	const struct unwind_table_stats *st = unwind_table__stats(t);
	uint32_t per_rule[8] = {0}, sum = 0;
	size_t nr = 0;
	const struct hp_unwind_row *rows = unwind_table__rows(t, &nr);

	CHECK(st != NULL, "%s: no stats", name);
	if (!st)
		return;
	for (size_t i = 0; i < nr; i++)
		if (rows[i].cfa_rule < 8)
			per_rule[rows[i].cfa_rule]++;
	CHECK(st->source == source, "%s: source %d, want %d", name, st->source, source);
	CHECK(st->fdes > 0 && st->rows > 0, "%s: %u fdes, %u rows", name, st->fdes, st->rows);
	CHECK(st->fdes == c->nonempty_fdes, "%s: %u fdes, readelf shows %zu with a range", name,
	      st->fdes, c->nonempty_fdes);
	CHECK(st->rows == nr, "%s: stats say %u rows, the table has %zu", name, st->rows, nr);
	CHECK(st->cies >= 1 && st->cies <= c->nr_cies, "%s: %u CIEs, readelf shows %zu", name,
	      st->cies, c->nr_cies);
	CHECK(st->raw_rows > 0, "%s: no raw rows", name);
	CHECK(st->unknown_ops == 0, "%s: %u FDEs with unknown opcodes", name, st->unknown_ops);
	CHECK(st->fp_lossy == 0, "%s: %u rows lost their FP rule", name, st->fp_lossy);
	for (unsigned int r = 0; r < 8; r++) {
		sum += st->per_cfa_rule[r];
		CHECK(st->per_cfa_rule[r] == per_rule[r],
		      "%s: stats count %u %s rows, the table %u", name, st->per_cfa_rule[r],
		      rule_name(r), per_rule[r]);
	}
	CHECK(sum == st->rows, "%s: per-rule counts add up to %u, not %u", name, sum, st->rows);
}

/*
 * Checks one binary against readelf. arch and source may be NONE: then the table's own are
 * taken (the command-line mode, for binaries that are not fixtures).
 */
static void check_binary(const char *name, const char *path, enum unwind_arch arch,
			 enum unwind_cfi_source source, unsigned int need)
{
	char err[256] = "";
	struct unwind_table *t;
	const struct unwind_table_stats *st;
	size_t bad;
	uint64_t lowest = UINT64_MAX;
	struct cfi c;

	t = unwind_table__build(path, NULL, err, sizeof(err));
	CHECK(t != NULL, "%s: %s (%s)", name, err, strerror(errno));
	if (!t)
		return;
	st = unwind_table__stats(t);
	if (arch == UNWIND_ARCH_NONE)
		arch = unwind_table__arch(t);
	if (source == UNWIND_SRC_NONE && st)
		source = st->source;
	CHECK(unwind_table__arch(t) == arch, "%s: arch %s", name,
	      unwind_arch__name(unwind_table__arch(t)));
	if (!cfi__read(&c, path, section_name(source), arch)) {
		unwind_table__delete(t);
		return;
	}
	check_coverage(name, &c, need);
	check_stats(name, t, &c, source);
	CHECK(rows_sorted(t, &bad), "%s: row %zu does not follow row %zu", name, bad, bad - 1);

	for (size_t i = 0; i < c.nr_fdes; i++) {
		const struct cfi_fde *d = &c.fdes[i];
		const struct cfi_fde *next;

		if (d->end <= d->start || !d->nr)
			continue;
		if (d->start < lowest)
			lowest = d->start;
		/* Where FDEs overlap, which one wins is for the lookup test of that pc alone. */
		if (overlaps_another(&c, d))
			continue;
		for (size_t k = 0; k < d->nr; k++) {
			const struct want *w = &c.rows[d->first + k];
			uint64_t until = k + 1 < d->nr ? c.rows[d->first + k + 1].loc : d->end;

			expect_at(name, t, w->loc, w, "readelf's row");
			if (until - 1 > w->loc)
				expect_at(name, t, until - 1, w,
					  k + 1 < d->nr ? "before the next row" : "last byte");
		}
		next = fde_starting_at(&c, d->end);
		if (next) {
			expect_at(name, t, d->end, &c.rows[next->first],
				  "end, where the next FDE starts");
		} else if (!covered(&c, d->end)) {
			const struct hp_unwind_row *r = unwind_table__find(t, d->end);
			char got[192];

			CHECK(r && r->cfa_rule == HP_CFA_NONE && r->pc == d->end,
			      "%s: 0x%" PRIx64 " (end of FDE 0x%" PRIx64 "..0x%" PRIx64
			      "): got %s, "
			      "want HP_CFA_NONE starting there",
			      name, d->end, d->start, d->end, describe(got, sizeof(got), r));
		}
	}
	if (lowest != UINT64_MAX && lowest > 0)
		CHECK(unwind_table__find(t, lowest - 1) == NULL, "%s: a row below 0x%" PRIx64, name,
		      lowest);
	check_reverse(name, t, &c);
	cfi__free(&c);
	unwind_table__delete(t);
}

/*
 * The fixtures built with $(CC) are for the machine the tests run on; the lazy PLT and its
 * expression exist on x86_64 only.
 */
#if defined(__aarch64__)
#define HOST_ARCH UNWIND_ARCH_ARM64
#define NEED_PLT 0u
#define HOST_LIBC_NEEDS 0u
#else
#define HOST_ARCH UNWIND_ARCH_X86_64
#define NEED_PLT NEED(HP_CFA_PLT)
/* glibc's __restore_rt (CIE "zRS") and clone's DW_CFA_undefined rip. */
#define HOST_LIBC_NEEDS (NEED(HP_CFA_SIGNAL) | NEED(HP_CFA_END))
#endif

static const struct fixture {
	const char *name;
	enum unwind_arch arch;
	enum unwind_cfi_source source;
	unsigned int need;
	bool optional; /* an empty file when the toolchain cannot make it: skipped */
} fixture_list[] = {
	{"fx_unwind_pie", HOST_ARCH, UNWIND_SRC_EH_FRAME,
	 NEED(HP_CFA_SP) | NEED(HP_CFA_FP) | NEED_PLT | NEED(HP_CFA_END), false},
	{"libfx_unwind.so", HOST_ARCH, UNWIND_SRC_EH_FRAME,
	 NEED(HP_CFA_SP) | NEED(HP_CFA_FP) | NEED_PLT, false},
	{"fx_unwind_o0", HOST_ARCH, UNWIND_SRC_EH_FRAME,
	 NEED(HP_CFA_SP) | NEED(HP_CFA_FP) | NEED_PLT | NEED(HP_CFA_END) | NEED_ADJACENT, false},
	{"libfx_unwind_dbgframe.so", HOST_ARCH, UNWIND_SRC_DEBUG_FRAME,
	 NEED(HP_CFA_SP) | NEED(HP_CFA_FP), false},
	{"libfx_unwind_dbgframe_eh.so", HOST_ARCH, UNWIND_SRC_DEBUG_FRAME,
	 NEED(HP_CFA_SP) | NEED(HP_CFA_FP), false},
	{"libfx_unwind_arm64.so", UNWIND_ARCH_ARM64, UNWIND_SRC_EH_FRAME,
	 NEED(HP_CFA_SP) | NEED(HP_CFA_FP) | NEED_RA_IN_LR, true},
	{"libc-copy.so.6", HOST_ARCH, UNWIND_SRC_EH_FRAME, NEED(HP_CFA_SP) | HOST_LIBC_NEEDS, true},
};

static void test_fixtures(void)
{
	for (size_t i = 0; i < sizeof(fixture_list) / sizeof(fixture_list[0]); i++) {
		const struct fixture *f = &fixture_list[i];
		struct stat st;

		if (f->optional && stat(fx(f->name), &st) == 0 && st.st_size == 0) {
			printf("test_unwind_table: %s: not made by this toolchain, skipped\n",
			       f->name);
			continue;
		}
		check_binary(f->name, fx(f->name), f->arch, f->source, f->need);
	}
}

/* A binary without any CFI: an empty table, not an error. */
static void test_no_cfi(void)
{
	char err[256] = "";
	struct unwind_table *t =
		unwind_table__build(fx("libfx_unwind_nocfi.so"), NULL, err, sizeof(err));
	const struct unwind_table_stats *st;
	size_t nr = 1;

	CHECK(t != NULL, "libfx_unwind_nocfi.so: %s", err);
	if (!t)
		return;
	st = unwind_table__stats(t);
	unwind_table__rows(t, &nr);
	CHECK(nr == 0, "libfx_unwind_nocfi.so: %zu rows", nr);
	CHECK(st && st->source == UNWIND_SRC_NONE && st->rows == 0,
	      "libfx_unwind_nocfi.so: source %d", st ? (int)st->source : -1);
	CHECK(unwind_table__find(t, 0x1100) == NULL, "libfx_unwind_nocfi.so: a row");
	unwind_table__delete(t);
}

/* --- broken input --- */

/* A broken binary must give an error with a message, or a table whose rows are sorted. */
static void check_outcome(const char *what, struct unwind_table *t, const char *err)
{
	size_t bad;

	if (!t) {
		CHECK(err[0] != '\0', "%s: failed without a message", what);
		return;
	}
	CHECK(rows_sorted(t, &bad), "%s: row %zu does not follow row %zu", what, bad, bad - 1);
	unwind_table__delete(t);
}

static void test_errors(void)
{
	char err[256], buf[4096];
	struct unwind_table_opts opts = {0};
	struct unwind_table *t;
	uint64_t x = FUZZ_SEED;

	err[0] = '\0';
	errno = 0;
	t = unwind_table__build(tmp("does-not-exist"), NULL, err, sizeof(err));
	CHECK(t == NULL && errno == ENOENT, "missing file: %p, errno %d", (void *)t, errno);
	CHECK(err[0] != '\0', "missing file: no message");
	unwind_table__delete(t);

	/* Random bytes (xorshift: they never start with \x7fELF). */
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (char)x;
	}
	CHECK(write_file(tmp("random"), buf, sizeof(buf)), "write %s", tmp("random"));
	err[0] = '\0';
	errno = 0;
	t = unwind_table__build(tmp("random"), NULL, err, sizeof(err));
	CHECK(t == NULL && errno != 0 && err[0], "not ELF: %p, errno %d, \"%s\"", (void *)t, errno,
	      err);
	unwind_table__delete(t);

	CHECK(write_file(tmp("empty"), "", 0), "write %s", tmp("empty"));
	err[0] = '\0';
	t = unwind_table__build(tmp("empty"), NULL, err, sizeof(err));
	CHECK(t == NULL && err[0], "empty file: %p, \"%s\"", (void *)t, err);
	unwind_table__delete(t);

	/* errlen 0: no message, and no write either. */
	t = unwind_table__build(tmp("random"), NULL, NULL, 0);
	CHECK(t == NULL, "not ELF, no err buffer");

	opts.max_rows = 2;
	err[0] = '\0';
	t = unwind_table__build(fx("fx_unwind_pie"), &opts, err, sizeof(err));
	CHECK(t == NULL && err[0], "max_rows 2: %p, \"%s\"", (void *)t, err);
	unwind_table__delete(t);
	unwind_table__delete(NULL);
}

/* Copies of the PIE with bytes of .eh_frame overwritten with 0xff, and cut short. */
static void test_corrupt(void)
{
	const char *pie = fx("fx_unwind_pie");
	size_t len = 0;
	char *orig = read_file(pie, &len), *buf = NULL, err[256];
	uint64_t off = 0, size = 0;
	struct cfi c = {0};

	CHECK(orig != NULL, "%s: %s", pie, strerror(errno));
	if (!orig || !section_of(pie, ".eh_frame", &off, &size) || !size || off + size > len) {
		CHECK(0, "%s: no .eh_frame in its section list", pie);
		free(orig);
		return;
	}
	buf = malloc(len);
	if (!buf || !cfi__read(&c, pie, ".eh_frame", UNWIND_ARCH_X86_64) || c.nr_fdes < 2) {
		CHECK(0, "%s: no FDEs", pie);
		goto out;
	}
	{
		/* Where: the whole section, the first CIE's length, id and augmentation, an FDE's
		 * length, CIE pointer, initial location and range, the middle, the terminator.
		 */
		const struct {
			uint64_t at, n;
		} spots[] = {
			{0, size},
			{0, 4},
			{4, 4},
			{9, 4},
			{c.fdes[1].off, 4},
			{c.fdes[1].off + 4, 4},
			{c.fdes[1].off + 8, 4},
			{c.fdes[1].off + 12, 4},
			{c.fdes[1].off + 16, 8},
			{size / 2, 16},
			{size - 4, 4},
		};

		for (size_t i = 0; i < sizeof(spots) / sizeof(spots[0]); i++) {
			char what[64];
			uint64_t n =
				spots[i].at + spots[i].n > size ? size - spots[i].at : spots[i].n;

			memcpy(buf, orig, len);
			memset(buf + off + spots[i].at, 0xff, n);
			snprintf(what, sizeof(what),
				 "0xff at .eh_frame+0x%" PRIx64 " (%" PRIu64 ")", spots[i].at, n);
			CHECK(write_file(tmp("corrupt"), buf, len), "write %s", tmp("corrupt"));
			err[0] = '\0';
			check_outcome(what,
				      unwind_table__build(tmp("corrupt"), NULL, err, sizeof(err)),
				      err);
		}
	}
	/*
	 * A register saved at a factored offset whose product with the data alignment (-8) does
	 * not fit 64 bits: undefined behaviour in the builder once (UBSan in make check; found by
	 * tests/fuzz/fuzz_elf), and a wrapped offset of 0 that claimed rbp at CFA+0. The first FDE
	 * whose program has room (and no augmentation data) starts with
	 * DW_CFA_offset_extended_sf rbp, -2^62 (then nops): rbp is not recoverable there.
	 */
	{
		static const uint8_t huge[] = {0x11, 0x06, 0x80, 0x80, 0x80, 0x80,
					       0x80, 0x80, 0x80, 0x80, 0x40};
		const struct cfi_fde *f = NULL;
		uint32_t flen = 0;

		for (size_t i = 0; i < c.nr_fdes && !f; i++) {
			uint64_t at = off + c.fdes[i].off;

			memcpy(&flen, orig + at, 4);
			if (c.fdes[i].end > c.fdes[i].start && flen >= 13 + sizeof(huge) &&
			    at + 4 + flen <= off + size && orig[at + 16] == 0 &&
			    !overlaps_another(&c, &c.fdes[i]))
				f = &c.fdes[i];
		}
		CHECK(f != NULL, "an FDE with room for the program");
		if (f) {
			uint64_t at = off + f->off;
			const struct hp_unwind_row *r;
			struct unwind_table *t;

			memcpy(buf, orig, len);
			memset(buf + at + 17, 0, flen - 13);
			memcpy(buf + at + 17, huge, sizeof(huge));
			CHECK(write_file(tmp("huge"), buf, len), "write %s", tmp("huge"));
			err[0] = '\0';
			t = unwind_table__build(tmp("huge"), NULL, err, sizeof(err));
			CHECK(t != NULL, "huge offset: %s", err);
			r = t ? unwind_table__find(t, f->start) : NULL;
			CHECK(r && r->pc == f->start && r->fp_rule == HP_REG_UNDEFINED,
			      "huge offset at 0x%" PRIx64 ": %s", f->start,
			      r ? describe(err, sizeof(err), r) : "no row");
			unwind_table__delete(t);
		}
	}
	/* Cut in the middle of .eh_frame: the section header table is gone too. */
	CHECK(write_file(tmp("truncated"), orig, off + size / 2), "write %s", tmp("truncated"));
	err[0] = '\0';
	check_outcome("truncated", unwind_table__build(tmp("truncated"), NULL, err, sizeof(err)),
		      err);
out:
	cfi__free(&c);
	free(buf);
	free(orig);
}

static uint64_t rng_state = FUZZ_SEED;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * Random mutations of one section, each copy read through elf_memory(): nothing may crash (ASan
 * and UBSan under make check), a failure needs a message, a table must be sorted and searchable.
 */
static void fuzz(const char *name, const char *section, unsigned int iterations)
{
	const char *path = fx(name);
	size_t len = 0;
	char *orig = read_file(path, &len), *buf = NULL, err[256];
	uint64_t off = 0, size = 0;
	unsigned int built = 0, failed = 0, silent = 0, unsorted = 0, lost = 0;

	CHECK(orig != NULL, "%s: %s", path, strerror(errno));
	if (!orig || !section_of(path, section, &off, &size) || !size || off + size > len) {
		CHECK(0, "%s: no %s in its section list", name, section);
		free(orig);
		return;
	}
	buf = malloc(len);
	if (!buf)
		goto out;
	for (unsigned int i = 0; i < iterations; i++) {
		unsigned int mutations = 1 + rng() % 6;
		struct unwind_table *t;
		Elf *elf;

		memcpy(buf, orig, len);
		for (unsigned int m = 0; m < mutations; m++) {
			uint64_t at = off + rng() % size;

			switch (rng() % 5) {
			case 0:
				buf[at] ^= (char)(1u << (rng() % 8));
				break;
			case 1:
				buf[at] = (char)rng();
				break;
			case 2:
				buf[at] = (char)0xff;
				break;
			case 3:
				buf[at] = 0;
				break;
			default: /* a whole length, pointer or offset */
				for (uint64_t b = 0; b < 4 && at + b < off + size; b++)
					buf[at + b] = (char)rng();
				break;
			}
		}
		elf = elf_memory(buf, len);
		CHECK(elf != NULL, "%s: elf_memory: %s", name, elf_errmsg(-1));
		if (!elf)
			break;
		err[0] = '\0';
		t = unwind_table__build_elf(elf, NULL, err, sizeof(err));
		if (t) {
			size_t nr = 0, bad;
			const struct hp_unwind_row *rows = unwind_table__rows(t, &nr);

			built++;
			if (!rows_sorted(t, &bad) && unsorted++ < 5)
				fprintf(stderr, "  %s fuzz %u: row %zu pc 0x%x after 0x%x\n", name,
					i, bad, rows[bad].pc, rows[bad - 1].pc);
			for (size_t r = 0; r < nr; r++) {
				const struct hp_unwind_row *hit = unwind_table__find(t, rows[r].pc);

				if (hit != &rows[r] && lost++ < 5)
					fprintf(stderr, "  %s fuzz %u: row at 0x%x not found\n",
						name, i, rows[r].pc);
			}
			unwind_table__delete(t);
		} else {
			failed++;
			if (!err[0] && silent++ < 5)
				fprintf(stderr, "  %s fuzz %u: failed without a message\n", name,
					i);
		}
		elf_end(elf);
	}
	CHECK(unsorted == 0, "%s: %u mutated tables unsorted", name, unsorted);
	CHECK(lost == 0, "%s: %u rows of mutated tables not found at their pc", name, lost);
	CHECK(silent == 0, "%s: %u failures without a message", name, silent);
	CHECK(built + failed == iterations, "%s: %u built + %u failed of %u", name, built, failed,
	      iterations);
out:
	free(buf);
	free(orig);
}

/* --- tables from rows (the disk cache) --- */

static void test_from_rows(void)
{
	struct hp_unwind_row rows[3] = {
		{.pc = 0x1000,
		 .cfa_rule = HP_CFA_SP,
		 .cfa_offset = 8,
		 .ra_rule = HP_REG_OFFSET,
		 .ra_offset = -8},
		{.pc = 0x1004,
		 .cfa_rule = HP_CFA_FP,
		 .cfa_offset = 16,
		 .fp_rule = HP_REG_OFFSET,
		 .fp_offset = -16,
		 .ra_rule = HP_REG_OFFSET,
		 .ra_offset = -8},
		{.pc = 0x1040, .cfa_rule = HP_CFA_NONE},
	};
	struct hp_unwind_row bad[3];
	const struct hp_unwind_row *got, *r;
	struct unwind_table *t;
	size_t nr = 0;

	t = unwind_table__from_rows(UNWIND_ARCH_X86_64, rows, 3);
	CHECK(t != NULL, "from_rows: %s", strerror(errno));
	if (t) {
		rows[1].cfa_offset = 99; /* copied: the table does not see this */
		got = unwind_table__rows(t, &nr);
		CHECK(nr == 3 && got && got[1].cfa_offset == 16, "from_rows: %zu rows", nr);
		CHECK(unwind_table__arch(t) == UNWIND_ARCH_X86_64, "from_rows: arch");
		CHECK(unwind_table__find(t, 0xfff) == NULL, "from_rows: a row below the first");
		r = unwind_table__find(t, 0x1000);
		CHECK(r && r->pc == 0x1000, "from_rows: 0x1000");
		r = unwind_table__find(t, 0x1003);
		CHECK(r && r->pc == 0x1000, "from_rows: 0x1003");
		r = unwind_table__find(t, 0x1004);
		CHECK(r && r->pc == 0x1004 && r->cfa_rule == HP_CFA_FP, "from_rows: 0x1004");
		r = unwind_table__find(t, 0x103f);
		CHECK(r && r->pc == 0x1004, "from_rows: 0x103f");
		r = unwind_table__find(t, 0x1040);
		CHECK(r && r->cfa_rule == HP_CFA_NONE, "from_rows: 0x1040");
		/*
		 * Past 32 bits: the closing row, or no row (the table cannot cover it); never the
		 * row of the pc truncated to 32 bits.
		 */
		r = unwind_table__find(t, 0x100001000ull);
		CHECK(!r || r->pc == 0x1040, "from_rows: 0x100001000 finds row 0x%x", r->pc);
		r = unwind_table__find(t, UINT64_MAX);
		CHECK(!r || r->pc == 0x1040, "from_rows: UINT64_MAX finds row 0x%x", r->pc);
		unwind_table__delete(t);
	}
	rows[1].cfa_offset = 16;

	memcpy(bad, rows, sizeof(bad));
	bad[0].pc = 0x1008; /* 0x1008, 0x1004, 0x1040 */
	errno = 0;
	t = unwind_table__from_rows(UNWIND_ARCH_X86_64, bad, 3);
	CHECK(t == NULL && errno == EINVAL, "unsorted rows: %p, errno %d", (void *)t, errno);
	unwind_table__delete(t);

	memcpy(bad, rows, sizeof(bad));
	bad[1].pc = 0x1000; /* two rows at 0x1000 */
	errno = 0;
	t = unwind_table__from_rows(UNWIND_ARCH_X86_64, bad, 3);
	CHECK(t == NULL && errno == EINVAL, "equal pcs: %p, errno %d", (void *)t, errno);
	unwind_table__delete(t);

	CHECK(unwind_arch__name(UNWIND_ARCH_X86_64) && unwind_arch__name(UNWIND_ARCH_ARM64),
	      "arch names");
	for (unsigned int rule = HP_CFA_NONE; rule <= HP_CFA_UNSUPPORTED; rule++)
		CHECK(unwind_cfa_rule__name(rule) != NULL, "no name for rule %u", rule);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * A copy of fx_unwind_pie whose .eh_frame header claims 1 GiB at the end of a sparse file: not
 * read (libelf would have read it all), the build fails with EFBIG and says why.
 */
static void test_sparse_eh_frame(void)
{
	size_t len = 0;
	char *orig = read_file(fx("fx_unwind_pie"), &len), err[256] = "";
	const char *path = tmp("sparse-eh");
	struct unwind_table *t;
	Elf64_Ehdr eh;
	Elf64_Shdr names;
	bool patched = false;
	FILE *f = fopen(path, "w+");

	if (!orig || !f || len < sizeof(eh) || fwrite(orig, 1, len, f) != len) {
		CHECK(0, "setup: a copy of fx_unwind_pie");
		goto out;
	}
	memcpy(&eh, orig, sizeof(eh));
	memcpy(&names, orig + eh.e_shoff + (uint64_t)eh.e_shstrndx * eh.e_shentsize, sizeof(names));
	for (unsigned i = 0; i < eh.e_shnum && !patched; i++) {
		uint64_t at = eh.e_shoff + (uint64_t)i * eh.e_shentsize;
		Elf64_Shdr sh;

		memcpy(&sh, orig + at, sizeof(sh));
		if (strcmp(orig + names.sh_offset + sh.sh_name, ".eh_frame"))
			continue;
		sh.sh_offset = (len + 4095) & ~(uint64_t)4095;
		sh.sh_size = 1ULL << 30;
		patched = !fseek(f, (long)at, SEEK_SET) && fwrite(&sh, sizeof(sh), 1, f) == 1 &&
			  !fflush(f) && !ftruncate(fileno(f), (off_t)(sh.sh_offset + sh.sh_size));
	}
	CHECK(patched, "setup: .eh_frame moved");
	fclose(f);
	f = NULL;
	t = unwind_table__build(path, NULL, err, sizeof(err));
	CHECK(!t && errno == EFBIG, "a 1 GiB .eh_frame: %s", t ? "built" : strerror(errno));
	CHECK(strstr(err, "over its cap") != NULL, "the error says why: %s", err);
	unwind_table__delete(t);
out:
	if (f)
		fclose(f);
	free(orig);
	unlink(path);
}

int main(int argc, char **argv)
{
	elf_version(EV_CURRENT);
	if (argc == 2) {
		check_binary(argv[1], argv[1], UNWIND_ARCH_NONE, UNWIND_SRC_NONE, 0);
		return check_summary("test_unwind_table");
	}
	if (fixture_paths__init("test_unwind_table") != 0) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return check_summary("test_unwind_table");
	}

	test_fixtures();
	test_no_cfi();
	test_errors();
	test_corrupt();
	test_sparse_eh_frame();
	fuzz("fx_unwind_pie", ".eh_frame", FUZZ_EH_ITERATIONS);
	fuzz("libfx_unwind_dbgframe.so", ".debug_frame", FUZZ_DEBUG_ITERATIONS);
	test_from_rows();

	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return check_summary("test_unwind_table");
}

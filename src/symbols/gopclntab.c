// SPDX-License-Identifier: BSD-2-Clause
/*
 * The Go pclntab (golang.org/s/go12symtab; runtime/symtab.go's pcHeader, functab and _func;
 * debug/gosym/pclntab.go). What we read of it:
 *
 *   header    magic u32, two zero bytes, the PC quantum (1, 2 or 4), the pointer size (4 or 8),
 *             then pointer-sized words: 1.16+ nfunc, nfiles, [1.18+: textStart], funcnametab,
 *             cutab, filetab, pctab and pclntab offsets (from the header); 1.2: nfunc alone.
 *   functab   nfunc (entry, funcoff) pairs and one closing entry, the end of the last function;
 *             1.18+: u32 entries relative to textStart; before: pointer-sized absolute entries.
 *             It starts at the pclntab offset (1.16+) or right after nfunc (1.2).
 *   _func     at funcoff from the functab (1.16+) or from the header (1.2): its entry again (u32
 *             or pointer), then nameoff, an int32 into funcnametab (1.16+) or from the header.
 *
 * Every offset read from the table is checked against its length before use: the table comes from
 * whatever binary a process mapped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "symbols/gopclntab.h"

#define GO12_MAGIC 0xfffffffbu
#define GO116_MAGIC 0xfffffffau
#define GO118_MAGIC 0xfffffff0u
#define GO120_MAGIC 0xfffffff1u /* the layout of 1.18; funcIDs changed */

struct pcln {
	const uint8_t *p;
	size_t len;
	bool big_endian;
	unsigned int ptrsize;
	unsigned int fieldsize; /* of a functab entry: 4 for 1.18+, else ptrsize */
	bool relative;		/* 1.18+: entries are offsets from text */
	uint64_t text;
	uint64_t nfunc;
	uint64_t ftab;	   /* offset of the functab */
	uint64_t ftab_end; /* and of its end */
	uint64_t funcbase; /* what funcoff is relative to */
	uint64_t namebase; /* what nameoff is relative to */
};

static int __attribute__((format(printf, 3, 4)))
corrupt(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The n-byte (1 to 8) unsigned integer at off, in the table's byte order. */
static bool rd(const struct pcln *t, uint64_t off, unsigned int n, uint64_t *v)
{
	uint64_t x = 0;

	if (off > t->len || t->len - off < n)
		return false;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int k = t->big_endian ? i : n - 1 - i;

		x = x << 8 | t->p[off + k];
	}
	*v = x;
	return true;
}

static bool add(uint64_t a, uint64_t b, uint64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

static int parse_header(struct pcln *t, uint64_t text_addr, char *err, size_t errlen)
{
	uint64_t magic, w, nameoff, pclnoff;
	unsigned int quantum;

	if (t->len < 8)
		return corrupt(err, errlen, "pclntab: %zu bytes, too short for a header", t->len);
	magic = (uint64_t)t->p[0] | (uint64_t)t->p[1] << 8 | (uint64_t)t->p[2] << 16 |
		(uint64_t)t->p[3] << 24;
	if ((magic & 0xfffffff0u) != 0xfffffff0u) {
		t->big_endian = true;
		rd(t, 0, 4, &magic);
	}
	quantum = t->p[6];
	t->ptrsize = t->p[7];
	if (t->p[4] || t->p[5] || (quantum != 1 && quantum != 2 && quantum != 4) ||
	    (t->ptrsize != 4 && t->ptrsize != 8))
		return corrupt(err, errlen, "pclntab: bad header");
	t->fieldsize = t->ptrsize;
	if (!rd(t, 8, t->ptrsize, &t->nfunc))
		return corrupt(err, errlen, "pclntab: header cut short");

	switch (magic) {
	case GO12_MAGIC:
		t->ftab = 8 + t->ptrsize;
		t->funcbase = t->namebase = 0;
		return 0;
	case GO116_MAGIC:
		nameoff = 8 + 2 * t->ptrsize;
		pclnoff = 8 + 6 * t->ptrsize;
		break;
	case GO118_MAGIC:
	case GO120_MAGIC:
		t->relative = true;
		t->fieldsize = 4;
		if (!rd(t, 8 + 2 * t->ptrsize, t->ptrsize, &t->text))
			return corrupt(err, errlen, "pclntab: header cut short");
		/* A PIE's table may hold 0 here until the loader relocates it. */
		if (!t->text)
			t->text = text_addr;
		if (!t->text)
			return corrupt(err, errlen, "pclntab: no text start");
		nameoff = 8 + 3 * t->ptrsize;
		pclnoff = 8 + 7 * t->ptrsize;
		break;
	default:
		return corrupt(err, errlen, "pclntab: unknown magic 0x%08llx",
			       (unsigned long long)magic);
	}
	if (!rd(t, nameoff, t->ptrsize, &t->namebase) || !rd(t, pclnoff, t->ptrsize, &w))
		return corrupt(err, errlen, "pclntab: header cut short");
	if (t->namebase >= t->len || w >= t->len)
		return corrupt(err, errlen, "pclntab: offsets beyond the table");
	t->ftab = t->funcbase = w;
	return 0;
}

/* The address that a functab entry value stands for. */
static bool entry_addr(const struct pcln *t, uint64_t v, uint64_t *addr)
{
	if (!t->relative) {
		*addr = v;
		return true;
	}
	return add(t->text, v, addr);
}

/* Function i: its address range and name; false when anything about it is out of bounds. */
static bool read_func(const struct pcln *t, uint64_t i, uint64_t *addr, uint64_t *end,
		      const char **name, size_t *name_len)
{
	uint64_t fs = t->fieldsize, off = t->ftab + 2 * i * fs;
	uint64_t entry, funcoff, next, fentry, fo, nameoff, no;

	if (!rd(t, off, fs, &entry) || !rd(t, off + fs, fs, &funcoff) ||
	    !rd(t, off + 2 * fs, fs, &next))
		return false;
	/* The _func records follow the functab, and each repeats its entry: cheap checks that
	 * funcoff leads to the right place. */
	if (!add(t->funcbase, funcoff, &fo) || fo < t->ftab_end || !rd(t, fo, fs, &fentry) ||
	    fentry != entry)
		return false;
	if (!rd(t, fo + fs, 4, &nameoff) || (nameoff & 0x80000000u) ||
	    !add(t->namebase, nameoff, &no) || no >= t->len)
		return false;
	if (!entry_addr(t, entry, addr) || !entry_addr(t, next, end) || *end < *addr)
		return false;
	*name = (const char *)t->p + no;
	*name_len = strnlen(*name, t->len - no);
	return *name_len < t->len - no;
}

int gopclntab__read(const void *data, size_t len, uint64_t text_addr, gopclntab_fn fn, void *arg,
		    char *err, size_t errlen)
{
	struct pcln t = {.p = data, .len = len};
	uint64_t prev = 0;
	int err_or_n = 0;

	if (errlen)
		err[0] = '\0';
	if (parse_header(&t, text_addr, err, errlen))
		return -EINVAL;
	/* The functab (2 * nfunc + 1 fields) must fit: this also bounds nfunc for the loops. */
	if (t.ftab >= len || t.nfunc > (len - t.ftab) / t.fieldsize / 2 ||
	    (2 * t.nfunc + 1) * t.fieldsize > len - t.ftab)
		return corrupt(err, errlen, "pclntab: %llu functions do not fit",
			       (unsigned long long)t.nfunc);
	if (t.nfunc > INT32_MAX)
		return corrupt(err, errlen, "pclntab: too many functions");
	t.ftab_end = t.ftab + (2 * t.nfunc + 1) * t.fieldsize;

	/* First pass: check everything, so that a corrupt table reports nothing. */
	for (uint64_t i = 0; i < t.nfunc; i++) {
		uint64_t addr, end;
		const char *name;
		size_t name_len;

		if (!read_func(&t, i, &addr, &end, &name, &name_len))
			return corrupt(err, errlen, "pclntab: function %llu is corrupt",
				       (unsigned long long)i);
		if (addr < prev)
			return corrupt(err, errlen, "pclntab: function %llu out of order",
				       (unsigned long long)i);
		prev = addr;
	}
	for (uint64_t i = 0; i < t.nfunc; i++) {
		uint64_t addr, end;
		const char *name;
		size_t name_len;
		int rc;

		read_func(&t, i, &addr, &end, &name, &name_len);
		/* Empty names and zero-length entries name no code. */
		if (!name_len || end == addr)
			continue;
		rc = fn(arg, addr, end - addr, name, name_len);
		if (rc < 0)
			return rc;
		err_or_n++;
	}
	return err_or_n;
}

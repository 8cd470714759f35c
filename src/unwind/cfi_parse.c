// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CFI sections, .eh_frame and .debug_frame (DWARF 5 §6.4, LSB "Exception Frames"): every CIE
 * parsed once, every FDE's program run from its CIE's initial state.
 */
#include <errno.h>
#include <stdlib.h>

#include "base/safe_open.h"
#include "base/vec.h"
#include "unwind/unwind_table_impl.h"

#define MAX_AUG_LEN 16 /* longer augmentation strings are not ones we know */

static int cie_truncated(struct cfi_builder *b, const struct cie *c)
{
	return cfi_fail(b, EINVAL, "CIE at 0x%llx: truncated", (unsigned long long)c->off);
}

/*
 * A CIE's fields up to its augmentation data, where r is left: its header, version and
 * augmentation string (into aug, NUL-terminated), alignments and return address register.
 */
static int parse_cie_fields(struct cfi_builder *b, struct rd *r, struct cie *c, char *aug)
{
	unsigned long long off = c->off;
	size_t aug_len = 0;
	bool is64, term;
	uint8_t version;
	uint64_t id;
	int err;

	err = cfi_rd_entry(b, c->off, r, &is64, &term);
	if (err)
		return err;
	if (term)
		return cfi_fail(b, EINVAL, "CIE at 0x%llx: zero length", off);
	if (!rd_uint(r, (b->debug_frame && is64) ? 8 : 4, &id) || !is_cie_id(b, id, is64))
		return cfi_fail(b, EINVAL, "entry at 0x%llx: not a CIE", off);
	if (!rd_u8(r, &version))
		return cie_truncated(b, c);
	if (b->debug_frame ? (version != 1 && version != 3 && version != 4)
			   : (version != 1 && version != 3))
		return cfi_fail(b, EINVAL, "CIE at 0x%llx: version %u", off, version);
	for (;;) {
		uint8_t ch;

		if (!rd_u8(r, &ch))
			return cie_truncated(b, c);
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
		if (!rd_u8(r, &c->addr_size) || !rd_u8(r, &c->seg_size))
			return cie_truncated(b, c);
		if (c->addr_size != 4 && c->addr_size != 8)
			return cfi_fail(b, EINVAL, "CIE at 0x%llx: address size %u", off,
					c->addr_size);
	}
	if (!rd_uleb(r, &c->code_align) || !rd_sleb(r, &c->data_align))
		return cie_truncated(b, c);
	if (version == 1) {
		uint8_t ra;

		if (!rd_u8(r, &ra))
			return cie_truncated(b, c);
		c->ra_reg = ra;
	} else if (!rd_uleb(r, &c->ra_reg)) {
		return cie_truncated(b, c);
	}
	return 0;
}

/* The augmentation data that a "z" augmentation string announces, one letter at a time. */
static int parse_cie_aug_z(struct cfi_builder *b, struct rd *r, struct cie *c, const char *aug)
{
	uint64_t len;
	struct rd a;

	c->has_z = true;
	if (!rd_uleb(r, &len) || len > (uint64_t)(r->end - r->p))
		return cie_truncated(b, c);
	a.p = r->p;
	a.end = r->p + len;
	r->p = a.end;
	for (size_t i = 1; aug[i] && !c->bad; i++) {
		uint8_t enc;
		uint64_t ignored;
		int err;

		switch (aug[i]) {
		case 'L':
			if (!rd_u8(&a, &enc))
				return cie_truncated(b, c);
			break;
		case 'R':
			if (!rd_u8(&a, &c->fde_enc))
				return cie_truncated(b, c);
			break;
		case 'P':
			if (!rd_u8(&a, &enc))
				return cie_truncated(b, c);
			err = cfi_rd_encoded(b, &a, enc, 0, &ignored, NULL);
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
	return 0;
}

static int parse_cie(struct cfi_builder *b, uint64_t off, struct cie *c)
{
	char aug[MAX_AUG_LEN + 1];
	struct rd r;
	int err;

	memset(c, 0, sizeof(*c));
	c->off = off;
	c->addr_size = b->addr_size;
	err = parse_cie_fields(b, &r, c, aug);
	if (err)
		return err;
	c->fde_enc = PE_absptr;
	if (aug[0] == 'z') {
		err = parse_cie_aug_z(b, &r, c, aug);
		if (err)
			return err;
	} else if (!strcmp(aug, "eh")) {
		/* Old GCC: the address of the exception table follows. */
		if (!rd_bytes(&r, NULL, b->addr_size))
			return cie_truncated(b, c);
	} else if (aug[0]) {
		c->bad = true;
	}
	if (c->code_align == 0 && !c->bad)
		return cfi_fail(b, EINVAL, "CIE at 0x%llx: code alignment 0",
				(unsigned long long)off);
	if (c->bad)
		return 0;
	/* The initial instructions: their rules are what DW_CFA_restore returns to. A CIE whose
	 * program cannot be run leaves its FDEs without rows (frame pointers there). */
	if (cfi_run_program(b, c, &r, &c->init, 0, 0) == -EINVAL)
		c->bad = true;
	return 0;
}

/* The CIE at off, parsed once: CIEs usually come in section order, so the search is short. */
static int get_cie(struct cfi_builder *b, uint64_t off, const struct cie **out)
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
	if (VEC_RESERVE(b->cies, b->cap_cies, b->nr_cies + 1))
		return cfi_fail(b, ENOMEM, "out of memory");
	memmove(&b->cies[lo + 1], &b->cies[lo], (b->nr_cies - lo) * sizeof(c));
	b->cies[lo] = c;
	b->nr_cies++;
	b->stats.cies++;
	*out = &b->cies[lo];
	return 0;
}

/* One FDE: its range, then its program from the CIE's initial state. */
static int parse_fde(struct cfi_builder *b, struct rd *r, const struct cie *cie)
{
	struct frame_state st;
	uint64_t start, range, aug_len;
	int err;

	if (b->debug_frame) {
		if (!rd_uint(r, cie->addr_size, &start) || !rd_uint(r, cie->addr_size, &range))
			return cfi_fail(b, EINVAL, "FDE at 0x%llx: truncated",
					(unsigned long long)sec_off(b, r->p));
	} else {
		err = cfi_rd_encoded(b, r, cie->fde_enc, 0, &start, NULL);
		/* The range is a length: the encoding's size, without its base. */
		if (!err)
			err = cfi_rd_encoded(b, r, cie->fde_enc & 0x0f, 0, &range, NULL);
		if (err)
			return err;
	}
	if (cie->has_z) {
		if (!rd_uleb(r, &aug_len) || aug_len > (uint64_t)(r->end - r->p))
			return cfi_fail(b, EINVAL, "FDE at 0x%llx: truncated augmentation",
					(unsigned long long)sec_off(b, r->p));
		r->p += aug_len;
	}
	/* Functions the linker discarded keep their FDE with a zero start (.debug_frame) or an
	 * empty range; neither describes code. */
	if (!range || !start || start + range < start)
		return 0;
	if (start + range - 1 > UINT32_MAX)
		return cfi_fail(b, ERANGE, "FDE for 0x%llx: address does not fit a 32-bit row",
				(unsigned long long)start);
	b->stats.fdes++;
	b->cur_fde_first = b->nr_raw;
	st = cie->init;
	err = cfi_run_program(b, cie, r, &st, start, start + range);
	if (err)
		return err;
	/* Where the FDE ends, the frame pointer takes over again, unless another FDE starts at the
	 * same address (sorting puts its rows after this one: see cfi_finish()). */
	b->cur_fde_first = b->nr_raw;
	return cfi_push_raw(b, &(struct hp_unwind_row){.pc = (uint32_t)(start + range)}, 0);
}

/* Every FDE of the section in b->sec. */
static int parse_section(struct cfi_builder *b)
{
	uint64_t off = 0;
	int err;

	while (off < b->sec_size) {
		const uint8_t *id_at;
		const struct cie *cie = NULL;
		struct rd body;
		bool is64, term;
		uint64_t id, cie_off;

		err = cfi_rd_entry(b, off, &body, &is64, &term);
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
			return cfi_fail(b, EINVAL, "entry at 0x%llx: truncated",
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
				return cfi_fail(b, EINVAL,
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
		if (!gelf_getchdr(scn, &ch) || ch.ch_size > SAFE_OPEN_MAX_CFI_BYTES ||
		    elf_compress(scn, 0, 0) < 0)
			return NULL;
	}
	d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size ? d : NULL;
}

/* A section's bytes in the file, or inflated when that is more. */
static uint64_t section_bytes(Elf_Scn *scn, const GElf_Shdr *sh)
{
	uint64_t n = sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
	GElf_Chdr ch;

	if ((sh->sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch) && ch.ch_size > n)
		n = ch.ch_size;
	return n;
}

/* -EFBIG when a section read whole is over its cap (base/safe_open.h): a sparse binary can
 * claim gigabytes that libelf would read. */
static int check_cap(struct cfi_builder *b, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
		     uint64_t cap)
{
	uint64_t n = section_bytes(scn, sh);

	if (n <= cap)
		return 0;
	return cfi_fail(b, EFBIG, "section %s claims %.1f MiB, over its cap of %.0f MiB", name,
			n / 1048576.0, cap / 1048576.0);
}

int cfi_find_sections(struct cfi_builder *b, Elf *elf, struct cfi_sections *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr names;
	int err;

	memset(out, 0, sizeof(*out));
	if (elf_getshdrstrndx(elf, &shstrndx) != 0 || !(scn = elf_getscn(elf, shstrndx)) ||
	    !gelf_getshdr(scn, &names))
		return cfi_fail(b, EINVAL, "no section name table: %s", elf_errmsg(-1));
	err = check_cap(b, scn, &names, "of names", SAFE_OPEN_MAX_SMALL_SECTION_BYTES);
	if (err)
		return err;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame") || !strcmp(name, ".debug_frame")) {
			err = check_cap(b, scn, &sh, name, SAFE_OPEN_MAX_CFI_BYTES);
			if (err)
				return err;
		}
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
int cfi_parse_section(struct cfi_builder *b, Elf_Scn *scn, GElf_Shdr *sh, bool debug_frame,
		      bool *used)
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

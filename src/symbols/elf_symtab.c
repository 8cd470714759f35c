// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a dso keeps of an ELF file: its load segments, its GNU build-id and a sorted table of its
 * function symbols, from .symtab or, in a stripped binary, from what stands in for it
 * (MiniDebugInfo, Go's .gopclntab, .dynsym). Also what the file says about its separate debug
 * file. Every offset and size is checked against the file: the file is the process's choice.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hex.h"
#include "base/elf_limits.h"
#include "base/log.h"
#include "base/safe_open.h"
#include "base/vec.h"
#include "symbols/dso_internal.h"
#include "symbols/gopclntab.h"
#include "symbols/minidebuginfo.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* A symbol as read from the file, before sorting and deduplication. */
struct raw_sym {
	uint64_t addr, size;
	uint64_t sec_end; /* end of the symbol's section, UINT64_MAX when unknown */
	const char *name; /* points into the Elf's string table: copied before elf_end() */
	size_t name_len;
	int rank; /* binding preference: global > weak > local */
};

/* true when [off, off + size) lies inside a file of file_size bytes. */
static bool in_file(uint64_t off, uint64_t size, uint64_t file_size)
{
	return off <= file_size && size <= file_size - off;
}

/* Looks for a GNU build-id note in one block of notes. */
static bool find_build_id(struct dso *d, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return false;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    in_file(name_off, 4, data->d_size) && !memcmp(base + name_off, "GNU", 4) &&
		    nh.n_descsz > 0 && in_file(desc_off, nh.n_descsz, data->d_size)) {
			/*
			 * Longer ids (--build-id=0x...) do not fit the fixed buffer; a truncated id
			 * would name another binary in debuginfod, so none is better.
			 */
			if (nh.n_descsz > DSO_BUILD_ID_MAX)
				return false;
			memcpy(d->build_id, base + desc_off, nh.n_descsz);
			d->build_id_len = nh.n_descsz;
			hex__encode(d->build_id_hex, d->build_id, d->build_id_len);
			return true;
		}
		off = next;
	}
	return false;
}

static int read_segments(struct dso *d, Elf *elf, uint64_t file_size)
{
	size_t phnum, nload = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &phnum))
		return dso__fail(d, "%s: bad program headers: %s", d->path, elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			return dso__fail(d, "%s: bad program header %zu: %s", d->path, i,
					 elf_errmsg(-1));
		if (ph.p_type == PT_LOAD)
			nload++;
	}
	if (nload) {
		d->segs = calloc(nload, sizeof(*d->segs));
		if (!d->segs)
			return -ENOMEM;
	}
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			return dso__fail(d, "%s: bad program header %zu", d->path, i);
		/* A truncated binary cannot be trusted: its tail may be any other file's. */
		if ((ph.p_type == PT_LOAD || ph.p_type == PT_NOTE) &&
		    !in_file(ph.p_offset, ph.p_filesz, file_size))
			return dso__fail(d, "%s: segment %zu lies beyond the end of the file",
					 d->path, i);
		if (ph.p_type == PT_LOAD) {
			struct load_seg *s = &d->segs[d->nsegs++];

			s->offset = ph.p_offset;
			s->vaddr = ph.p_vaddr;
			s->filesz = ph.p_filesz;
			s->memsz = ph.p_memsz;
			s->flags = ph.p_flags;
		} else if (ph.p_type == PT_NOTE && !d->build_id_len && ph.p_filesz &&
			   elf_limits__fits(ph.p_filesz, SAFE_OPEN_MAX_SMALL_SECTION_BYTES, d->path,
					    "PT_NOTE")) {
			Elf_Type type = ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;

			find_build_id(d, elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, type));
		}
	}
	return 0;
}

static int sym_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * Orders by address, and among aliases at one address puts the preferred name first: global
 * before weak before local, then the name with fewer leading underscores ("memcpy" over
 * "__memcpy"), then the shorter, then alphabetical, so that the choice never depends on the order
 * of the symbol table.
 */
static int raw_sym_cmp(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;
	size_t ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return strcmp(x->name, y->name);
}

static uint64_t section_end(Elf *elf, size_t shndx, uint64_t addr)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return UINT64_MAX;
	scn = elf_getscn(elf, shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return UINT64_MAX;
	if (addr < sh.sh_addr || sh.sh_size > UINT64_MAX - sh.sh_addr ||
	    addr >= sh.sh_addr + sh.sh_size)
		return UINT64_MAX;
	return sh.sh_addr + sh.sh_size;
}

/* The end of the load segment containing vaddr, for a zero-size symbol with nothing after it. */
static uint64_t segment_end(const struct dso *d, uint64_t vaddr)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct load_seg *s = &d->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s->vaddr + s->memsz;
	}
	return vaddr + 1;
}

/* Symbols gathered from one or more tables before they are stored into a dso. */
struct raw_syms {
	struct raw_sym *v;
	size_t n, cap;
};

static int raw_syms__push(struct raw_syms *r, const struct raw_sym *s)
{
	/* Grown as needed: most entries of a big .symtab are not functions. */
	if (VEC_RESERVE(r->v, r->cap, r->n + 1))
		return -ENOMEM;
	r->v[r->n++] = *s;
	return 0;
}

/*
 * Appends the function symbols of one ELF symbol table to raw; their names point into elf, which
 * must outlive raw. Returns 0, -EINVAL when the table's data cannot be read, or -ENOMEM.
 */
static int collect_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, int machine,
			   struct raw_syms *raw)
{
	size_t count, entsize;
	Elf_Data *data;

	data = elf_getdata(scn, NULL);
	if (!data)
		return -EINVAL;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!entsize || !data->d_buf)
		return 0;
	count = data->d_size / entsize;

	for (size_t i = 0; i < count; i++) {
		unsigned char type;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		/* elf_strptr() checks that the name is NUL-terminated inside the string table. */
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		/* Thumb functions have bit 0 set in st_value; the code starts one byte lower. */
		if (machine == EM_ARM)
			sym.st_value &= ~(GElf_Addr)1;
		if (raw_syms__push(raw,
				   &(struct raw_sym){
					   .addr = sym.st_value,
					   .size = sym.st_size,
					   .name = name,
					   .name_len = strlen(name),
					   .rank = sym_rank(GELF_ST_BIND(sym.st_info)),
					   .sec_end = sym.st_size ? UINT64_MAX
								  : section_end(elf, sym.st_shndx,
										sym.st_value),
				   }))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Sorts raw, keeps one name per address and stores the result as d's function table (d->nsyms
 * stays 0 when raw is empty). raw is consumed. Returns 0 or -ENOMEM.
 */
static int store_symbols(struct dso *d, struct raw_syms *rs)
{
	struct raw_sym *raw = rs->v;
	size_t nraw = rs->n, names_len = 0, nout = 0, max_len = 0;
	const char **names = NULL;
	uint32_t *ids = NULL;
	char *arena = NULL, *p;
	int err;

	*rs = (struct raw_syms){0};
	if (!nraw) {
		free(raw);
		return 0;
	}

	qsort(raw, nraw, sizeof(*raw), raw_sym_cmp);
	/* Keep the first (preferred) name at each address; aliases may disagree on the size. */
	for (size_t i = 0; i < nraw; i++) {
		if (nout && raw[nout - 1].addr == raw[i].addr) {
			if (raw[i].size > raw[nout - 1].size)
				raw[nout - 1].size = raw[i].size;
			if (raw[i].sec_end < raw[nout - 1].sec_end)
				raw[nout - 1].sec_end = raw[i].sec_end;
			continue;
		}
		raw[nout++] = raw[i];
	}
	for (size_t i = 0; i < nout; i++) {
		names_len += raw[i].name_len + 1;
		if (raw[i].name_len > max_len)
			max_len = raw[i].name_len;
	}

	err = -ENOMEM;
	free(d->syms);
	strpack__delete(d->names);
	free(d->name_buf);
	d->nsyms = 0;
	d->names = NULL;
	d->name_buf = NULL;
	d->names_bytes = 0;
	d->names_max = 0;
	if (names_len > DSO_NAMES_MAX) {
		err = dso__fail(d, "%s: symbol names of %zu MiB, over %zu MiB", d->path,
				names_len >> 20, DSO_NAMES_MAX >> 20);
		goto out;
	}
	/* The names NUL-terminated (a Go table's are not), then packed; the arena goes. */
	d->syms = calloc(nout, sizeof(*d->syms));
	arena = malloc(names_len);
	names = malloc(nout * sizeof(*names));
	ids = malloc(nout * sizeof(*ids));
	d->name_buf = malloc(max_len + 1);
	if (!d->syms || !arena || !names || !ids || !d->name_buf)
		goto out;
	p = arena;
	for (size_t i = 0; i < nout; i++) {
		memcpy(p, raw[i].name, raw[i].name_len);
		p[raw[i].name_len] = '\0';
		names[i] = p;
		p += raw[i].name_len + 1;
	}
	d->names = strpack__new(names, nout, ids);
	if (!d->names)
		goto out;
	d->names_max = max_len;
	d->names_bytes = strpack__bytes(d->names) + max_len + 1;
	for (size_t i = 0; i < nout; i++) {
		struct dso_sym *s = &d->syms[i];
		const struct raw_sym *r = &raw[i];
		uint64_t end;

		s->name = ids[i];
		s->addr = r->addr;
		s->sized = r->size != 0;
		if (r->size) {
			end = r->size > UINT64_MAX - r->addr ? UINT64_MAX : r->addr + r->size;
		} else {
			/* No size (hand-written assembly): it runs to the next symbol. */
			end = i + 1 < nout ? raw[i + 1].addr : UINT64_MAX;
			if (r->sec_end < end)
				end = r->sec_end;
			if (end == UINT64_MAX)
				end = segment_end(d, r->addr);
			if (end <= r->addr)
				end = r->addr + 1;
		}
		s->len = end - r->addr > UINT32_MAX ? UINT32_MAX : (uint32_t)(end - r->addr);
	}
	d->nsyms = nout;
	err = 0;
out:
	free(ids);
	free(names);
	free(arena);
	free(raw);
	return err;
}

/*
 * Whether a symbol table and its string table (read whole, both) are within
 * SAFE_OPEN_MAX_SYMTAB_BYTES together. A sparse file can claim a 1.5 GiB .symtab that libelf
 * would read.
 */
static bool symtab_fits(const struct dso *d, Elf *elf, const GElf_Shdr *sh)
{
	Elf_Scn *strscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr strsh = {0};
	uint64_t bytes = sh->sh_size;

	if (strscn && gelf_getshdr(strscn, &strsh) && strsh.sh_type != SHT_NOBITS)
		bytes += strsh.sh_size;
	return elf_limits__fits(bytes, SAFE_OPEN_MAX_SYMTAB_BYTES, d->path,
				sh->sh_type == SHT_DYNSYM ? ".dynsym" : ".symtab");
}

/*
 * Reads the function symbols of one symbol table into d. Returns 0 (d->nsyms may be 0), -EINVAL
 * after dso__fail() on a corrupt table, or -ENOMEM.
 */
static int read_symbols(struct dso *d, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, int machine)
{
	struct raw_syms raw = {0};
	int err;

	if (!symtab_fits(d, elf, shdr))
		return 0;
	err = collect_symbols(elf, scn, shdr, machine, &raw);

	if (err) {
		free(raw.v);
		if (err == -EINVAL)
			return dso__fail(d, "%s: unreadable symbol table: %s", d->path,
					 elf_errmsg(-1));
		return err;
	}
	return store_symbols(d, &raw);
}

/*
 * MiniDebugInfo: the functions of the .symtab compressed in .gnu_debugdata, merged with .dynsym's
 * (the MiniDebugInfo leaves out what .dynsym has). A section that cannot be used is skipped with a
 * debug message: the binary's own tables remain. Returns 0 (d->nsyms may be 0), -EINVAL after
 * dso__fail() on a corrupt .dynsym, or -ENOMEM.
 */
static int read_minidebuginfo(struct dso *d, Elf *elf, Elf_Scn *scn, Elf_Scn *dynsym,
			      const GElf_Shdr *dynsym_sh, int machine)
{
	struct raw_syms raw = {0};
	struct minidebuginfo *m;
	Elf_Data *data = NULL;
	Elf_Scn *symtab;
	GElf_Shdr sh;
	char why[128];
	int err = 0;

	if (gelf_getshdr(scn, &sh) &&
	    elf_limits__section_fits(scn, &sh, SAFE_OPEN_MAX_SMALL_SECTION_BYTES, d->path,
				     ".gnu_debugdata"))
		data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return 0;
	if (dynsym && !symtab_fits(d, elf, dynsym_sh))
		dynsym = NULL;
	m = minidebuginfo__open(data->d_buf, data->d_size, machine, why, sizeof(why));
	if (!m) {
		log_debug("%s: .gnu_debugdata ignored: %s", d->path, why);
		return 0;
	}
	symtab = minidebuginfo__symtab(m, &sh);
	if (!symtab) {
		log_debug("%s: .gnu_debugdata ignored: no symbol table", d->path);
		goto out;
	}
	err = collect_symbols(minidebuginfo__elf(m), symtab, &sh, machine, &raw);
	if (err == -EINVAL)
		log_debug("%s: .gnu_debugdata ignored: unreadable symbol table", d->path);
	if (err || !raw.n) {
		err = err == -ENOMEM ? err : 0;
		goto out;
	}
	if (dynsym) {
		err = collect_symbols(elf, dynsym, dynsym_sh, machine, &raw);
		if (err == -EINVAL)
			err = dso__fail(d, "%s: unreadable symbol table: %s", d->path,
					elf_errmsg(-1));
		if (err)
			goto out;
	}
	err = store_symbols(d, &raw);
out:
	free(raw.v);
	minidebuginfo__close(m);
	return err;
}

static int push_go_func(void *arg, uint64_t addr, uint64_t size, const char *name, size_t name_len)
{
	return raw_syms__push(arg, &(struct raw_sym){
					   .addr = addr,
					   .size = size,
					   .sec_end = UINT64_MAX,
					   .name = name,
					   .name_len = name_len,
					   .rank = sym_rank(STB_GLOBAL),
				   });
}

/*
 * Go binaries linked without .symtab (-ldflags=-s) keep every function in .gopclntab, which the
 * Go runtime needs for its own tracebacks. A corrupt table is skipped with a debug message.
 * Returns 0 (d->nsyms may be 0) or -ENOMEM.
 */
static int read_gopclntab(struct dso *d, Elf_Scn *scn, uint64_t text_addr)
{
	struct raw_syms raw = {0};
	Elf_Data *data = NULL;
	GElf_Shdr sh;
	char why[128];
	int n;

	if (gelf_getshdr(scn, &sh) &&
	    elf_limits__section_fits(scn, &sh, SAFE_OPEN_MAX_SYMTAB_BYTES, d->path, ".gopclntab"))
		data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;
	n = gopclntab__read(data->d_buf, data->d_size, text_addr, push_go_func, &raw, why,
			    sizeof(why));
	if (n < 0) {
		free(raw.v);
		if (n == -ENOMEM)
			return n;
		log_debug("%s: .gopclntab ignored: %s", d->path, why);
		return 0;
	}
	return store_symbols(d, &raw);
}

/*
 * libelf quietly reports no program or section headers when their table lies beyond the end of
 * the file, which is what a truncated binary looks like: check the header's own numbers.
 */
static int check_tables(struct dso *d, Elf *elf, const GElf_Ehdr *eh, uint64_t file_size)
{
	size_t phent = gelf_fsize(elf, ELF_T_PHDR, 1, EV_CURRENT);
	size_t shent = gelf_fsize(elf, ELF_T_SHDR, 1, EV_CURRENT);
	size_t phnum = eh->e_phnum, shnum = eh->e_shnum, n;

	/* Extended numbering keeps the real counts in section 0. */
	if (phnum == PN_XNUM || (!shnum && eh->e_shoff)) {
		if (!eh->e_shoff || !in_file(eh->e_shoff, shent, file_size))
			return dso__fail(d, "%s: section headers lie beyond the end of the file",
					 d->path);
		if (phnum == PN_XNUM && elf_getphdrnum(elf, &phnum))
			return dso__fail(d, "%s: bad program headers: %s", d->path, elf_errmsg(-1));
		if (!shnum && elf_getshdrnum(elf, &shnum))
			return dso__fail(d, "%s: bad section headers: %s", d->path, elf_errmsg(-1));
	}
	/* Counts are at most 32 bits and entries are small: the products cannot overflow. */
	if (phnum && !in_file(eh->e_phoff, (uint64_t)phnum * phent, file_size))
		return dso__fail(d, "%s: program headers lie beyond the end of the file", d->path);
	if (shnum && (!eh->e_shoff || !in_file(eh->e_shoff, (uint64_t)shnum * shent, file_size)))
		return dso__fail(d, "%s: section headers lie beyond the end of the file", d->path);
	/* libelf must see the same tables, or it dropped one for a reason of its own. */
	if (elf_getphdrnum(elf, &n) || n != phnum)
		return dso__fail(d, "%s: bad program headers", d->path);
	if (elf_getshdrnum(elf, &n) || n != shnum)
		return dso__fail(d, "%s: bad section headers", d->path);
	return 0;
}

/*
 * .gnu_debuglink: a NUL-terminated file name, padding to 4 bytes, then the CRC-32 of the debug
 * file in the binary's byte order. A name with a '/' is refused: it would lead the search out of
 * the directories it is meant to look in.
 */
static void read_debuglink(Elf_Scn *scn, const GElf_Shdr *sh, const GElf_Ehdr *eh,
			   struct debug_hints *h)
{
	Elf_Data *data = NULL;
	const unsigned char *p;
	size_t len, crc_off;

	/* A name of at most 255 bytes and a CRC: anything bigger is not a debuglink. */
	if (sh->sh_size <= sizeof(h->link) + 8)
		data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	if (!len || len >= sizeof(h->link) || len == data->d_size || memchr(p, '/', len))
		return;
	crc_off = (len + 4) & ~(size_t)3;
	if (!in_file(crc_off, 4, data->d_size))
		return;
	p += crc_off;
	if (eh->e_ident[EI_DATA] == ELFDATA2MSB)
		h->link_crc =
			(uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	else
		h->link_crc =
			(uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
	memcpy(h->link, data->d_buf, len + 1);
}

/* The sections the function table is read from, found in one pass over the section table. */
struct elf_sections {
	Elf_Scn *symtab, *dynsym, *debugdata, *gopclntab;
	GElf_Shdr symtab_sh, dynsym_sh;
	uint64_t text_addr;
};

/*
 * One pass over the section table: every section must lie inside the file. Finds into t the
 * tables of functions, a debug file's build-id (binaries without program headers keep it in a
 * section), and into hints (which may be NULL) what a debug file search needs. Returns 0, or
 * -EINVAL after dso__fail().
 */
static int scan_sections(struct dso *d, Elf *elf, const GElf_Ehdr *eh, uint64_t file_size,
			 struct debug_hints *hints, struct elf_sections *t)
{
	size_t shnum = 0, nscn = 0, shstrndx = SHN_UNDEF;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrnum(elf, &shnum))
		return dso__fail(d, "%s: bad section table: %s", d->path, elf_errmsg(-1));
	/* Section names matter to the debug file search and the fallback symbol tables. Over
	 * their cap (elf_strptr() reads them whole), the tables are still found by type. */
	if (elf_getshdrstrndx(elf, &shstrndx) ||
	    (shstrndx != SHN_UNDEF && !elf_limits__names_fit(elf, &shstrndx, d->path)))
		shstrndx = SHN_UNDEF;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = NULL;

		nscn++;
		if (!gelf_getshdr(scn, &sh))
			return dso__fail(d, "%s: bad section header: %s", d->path, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS && !in_file(sh.sh_offset, sh.sh_size, file_size))
			return dso__fail(d, "%s: section %zu lies beyond the end of the file",
					 d->path, elf_ndxscn(scn));
		if (sh.sh_type == SHT_SYMTAB && !t->symtab) {
			t->symtab = scn;
			t->symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !t->dynsym) {
			t->dynsym = scn;
			t->dynsym_sh = sh;
		} else if (sh.sh_type == SHT_NOTE && !d->build_id_len &&
			   elf_limits__section_fits(scn, &sh, SAFE_OPEN_MAX_SMALL_SECTION_BYTES,
						    d->path, "SHT_NOTE")) {
			/* Binaries without program headers (debug files) keep it in a section. */
			find_build_id(d, elf_getdata(scn, NULL));
		}
		if (shstrndx != SHN_UNDEF && sh.sh_type != SHT_NOBITS)
			name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (hints && name) {
			if (!strcmp(name, ".debug_info"))
				hints->has_debug_info = true;
			else if (!strcmp(name, ".gnu_debuglink") && !hints->link[0])
				read_debuglink(scn, &sh, eh, hints);
		}
		if (!name)
			continue;
		if (!strcmp(name, ".gnu_debugdata") && !t->debugdata)
			t->debugdata = scn;
		/* PIE builds name it .data.rel.ro.gopclntab (relocations make it RELRO). */
		else if ((!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab")) &&
			 !t->gopclntab)
			t->gopclntab = scn;
		else if (!strcmp(name, ".text") && (sh.sh_flags & SHF_ALLOC))
			t->text_addr = sh.sh_addr;
	}
	if (hints)
		hints->has_symtab = t->symtab != NULL;
	/* elf_nextscn() also stops on errors: a table cut short is corrupt. */
	if (nscn + 1 < shnum)
		return dso__fail(d, "%s: bad section table", d->path);
	return 0;
}

/*
 * The function table: .symtab; without it, .dynsym with MiniDebugInfo, Go's own table, or
 * .dynsym alone. Returns 0 (d->nsyms may be 0), -EINVAL after dso__fail(), or -ENOMEM.
 */
static int read_functions(struct dso *d, Elf *elf, int machine, const struct elf_sections *t)
{
	int err;

	if (t->symtab) {
		err = read_symbols(d, elf, t->symtab, &t->symtab_sh, machine);
		if (err)
			return err;
	}
	if (!d->nsyms && t->debugdata) {
		err = read_minidebuginfo(d, elf, t->debugdata, t->dynsym, &t->dynsym_sh, machine);
		if (err)
			return err;
	}
	if (!d->nsyms && t->gopclntab) {
		err = read_gopclntab(d, t->gopclntab, t->text_addr);
		if (err)
			return err;
	}
	/* Stripped binaries keep the exported functions in .dynsym. */
	if (!d->nsyms && t->dynsym) {
		err = read_symbols(d, elf, t->dynsym, &t->dynsym_sh, machine);
		if (err)
			return err;
	}
	return 0;
}

int elf_symtab__read(struct dso *d, Elf *elf, uint64_t file_size, struct debug_hints *hints)
{
	struct elf_sections t = {0};
	GElf_Ehdr eh;
	int err;

	if (elf_kind(elf) != ELF_K_ELF)
		return dso__fail(d, "%s: not an ELF file", d->path);
	if (!gelf_getehdr(elf, &eh))
		return dso__fail(d, "%s: bad ELF header: %s", d->path, elf_errmsg(-1));

	err = check_tables(d, elf, &eh, file_size);
	if (err)
		return err;
	err = read_segments(d, elf, file_size);
	if (err)
		return err;
	err = scan_sections(d, elf, &eh, file_size, hints, &t);
	if (err)
		return err;
	return read_functions(d, elf, eh.e_machine, &t);
}

/*
 * Fills out[i] for the names of one symbol table that are still missing there; returns how many
 * it found. Only global and weak definitions count: a local symbol may share its name with
 * another file's.
 */
static size_t find_names(const struct dso *d, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 const char *const names[], size_t n, struct dso_symbol *out)
{
	size_t count, entsize, found = 0;
	Elf_Data *data;

	if (!symtab_fits(d, elf, sh) || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
		return 0;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	count = entsize ? data->d_size / entsize : 0;
	for (size_t i = 1; i < count; i++) {
		unsigned char type, bind;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if ((type != STT_FUNC && type != STT_OBJECT) || sym.st_shndx == SHN_UNDEF ||
		    (bind != STB_GLOBAL && bind != STB_WEAK))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (out[k].name || strcmp(name, names[k]))
				continue;
			out[k] = (struct dso_symbol){
				.name = names[k], .addr = sym.st_value, .size = sym.st_size};
			found++;
			break;
		}
	}
	return found;
}

int dso__find_symbols_by_name(const struct dso *d, const char *const names[], size_t n,
			      struct dso_symbol *out)
{
	Elf_Scn *scn = NULL, *tables[2] = {NULL, NULL}; /* .dynsym, .symtab */
	GElf_Shdr shdrs[2], sh;
	size_t found = 0;
	struct stat st;
	Elf *elf = NULL;
	int fd, err;

	for (size_t i = 0; i < n; i++)
		out[i] = (struct dso_symbol){0};
	if (!d || !d->readable || !d->open_path || !d->have_fid)
		return -ENOENT;
	fd = safe_open(d->open_path, SAFE_OPEN_MAX_ELF_BYTES, &st);
	if (fd < 0)
		return fd;
	err = -ESTALE;
	if (!fid_equal(&d->fid, &st))
		goto out;
	/* As dso__load() reads it: pread(), so that a file truncated under us is an error. */
	err = -EINVAL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		int k;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		k = sh.sh_type == SHT_DYNSYM ? 0 : sh.sh_type == SHT_SYMTAB ? 1 : -1;
		if (k < 0 || tables[k])
			continue;
		if (!in_file(sh.sh_offset, sh.sh_size, (uint64_t)st.st_size))
			goto out;
		tables[k] = scn;
		shdrs[k] = sh;
	}
	for (int k = 0; k < 2 && found < n; k++)
		if (tables[k])
			found += find_names(d, elf, tables[k], &shdrs[k], names, n, out);
	err = (int)found;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

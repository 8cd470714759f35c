// SPDX-License-Identifier: BSD-2-Clause
/*
 * Binaries, read once per identity. A dso keeps only what symbolization needs (load segments,
 * build-id, a sorted function table with its own copy of the names): the file and its Elf handle
 * are closed as soon as it is loaded, so an agent watching thousands of binaries holds no fds.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <openssl/evp.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/clock.h"
#include "symbols/debuginfod_fetch.h"
#include "symbols/dso.h"
#include "symbols/dwarf_index.h"
#include "symbols/gopclntab.h"
#include "symbols/line_cache.h"
#include "base/log.h"
#include "symbols/minidebuginfo.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct dso_sym {
	uint64_t addr;
	uint64_t end;	  /* exclusive: addr + size, or up to the next symbol when size is 0 */
	uint64_t size;	  /* as in the ELF file */
	const char *name; /* points into dso->names */
};

struct load_seg {
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t flags;
};

/*
 * What stat() says about the file a dso was read from. The cache checks it on every hit, because
 * (dev, inode) alone does not name a file for ever: once a binary is deleted and no longer mapped,
 * its inode number can be handed to a new file.
 */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

/* Where a binary's separate debug file from debuginfod stands. */
enum dso_fetch {
	FETCH_NONE,    /* nothing to fetch, no fetcher, or settled */
	FETCH_WANTED,  /* to be asked (a fresh dso, or the queue was full) */
	FETCH_PENDING, /* asked: being fetched */
	FETCH_FAILED,  /* none to be had now: asked again after the fetcher's retry interval */
};

struct dso {
	uint64_t dev, inode; /* the identity the caller gave, from /proc/PID/maps */
	char *path;	     /* display path */
	char *error;	     /* NULL when readable */
	bool readable;
	bool have_fid;
	struct file_id fid;

	uint8_t build_id[DSO_BUILD_ID_MAX];
	size_t build_id_len;
	char build_id_hex[2 * DSO_BUILD_ID_MAX + 1];
	char htlhash_hex[33]; /* "" when the file could not be read */

	struct load_seg *segs;
	size_t nsegs;
	struct dso_sym *syms; /* sorted by addr, one per address */
	size_t nsyms;
	char *names; /* one block holding every symbol name */
	size_t names_bytes;

	/*
	 * DWARF is big and most binaries never need it (no sample lands in them, or they have
	 * none), so it is opened on the first line lookup, from the path the latest lookup came
	 * through, and lives exactly as long as the dso: the cache's bound bounds the handles too.
	 */
	char *open_path;
	Dwarf *dw;
	Elf *dw_elf;
	struct dwarf_index *dw_index; /* the open DWARF's per-CU function tables */
	Dwarf_Off dw_walked;	      /* how far walks over all CUs have reached */
	size_t dw_bytes;	      /* what the open DWARF holds in memory, as counted */
	size_t dw_sections;	      /* of which its debug sections */
	bool dw_reset_due;	      /* alone over the budget: drop its CUs' tables */
	bool dwarf_too_big;	      /* its sections alone are over the budget: not read */
	bool dwarf_tried; /* an open was attempted: a file without usable DWARF is not retried */
	/* Its answers' owner in the cache's line cache: new whenever its lines may change (a
	 * debug file adopted, a refused DWARF open allowed again); 0 outside a cache. */
	uint64_t lines_owner;
	struct dso_cache *cache; /* the DWARF budget is the cache's */
	/*
	 * The separate debug file whose DWARF replaces the binary's missing .debug_info, NULL when
	 * none. Its identity is kept for the same reason as fid: it is opened again later.
	 */
	char *debug_path;
	struct file_id debug_fid;
	/* What neither the binary nor a local debug file gave: debuginfod may. */
	bool lacks_symtab, lacks_dwarf;
	enum dso_fetch fetch;
	uint64_t fetch_gen;	 /* FETCH_PENDING: the fetcher's generation when last asked */
	uint64_t fetch_retry_ns; /* FETCH_FAILED: ask again from then on (CLOCK_MONOTONIC) */

	/* cache links */
	struct dso *hnext;
	struct dso *lru_prev, *lru_next; /* lru_prev towards the most recently used */
	uint64_t last_use;
};

struct dso_cache {
	size_t max_dsos;
	size_t n;
	struct dso **buckets;
	unsigned int bucket_bits;
	struct dso *lru_head, *lru_tail;
	uint64_t clock;	  /* bumped on every use; orders entries that share an identity */
	char *debug_root; /* NULL: DSO_DEBUG_ROOT; "": no lookups under a root */
	struct debuginfod_fetch *fetch; /* borrowed; NULL: no debuginfod */
	/* The debug sections of big binaries (libc's debug file, libpython) take tens of MiB
	 * each: the open DWARF handles have a byte budget of their own, least recently used
	 * closed first (and opened again when needed). */
	size_t dwarf_bytes, max_dwarf_bytes;
	/* Line lookups answered before, whatever happened to the handles since (line_cache.h). */
	struct line_cache *lines;
	uint64_t lines_owners; /* the last owner given out */
	uint64_t dwarf_closed;
};

#define DSO_DEBUG_ROOT "/usr/lib/debug"

#define DSO_MAX_BUCKET_BITS 16

/* ------------------------------------------------------------------------------------------ */
/* Loading one binary */

/* A symbol as read from the file, before sorting and deduplication. */
struct raw_sym {
	uint64_t addr, size;
	uint64_t sec_end; /* end of the symbol's section, UINT64_MAX when unknown */
	const char *name; /* points into the Elf's string table: copied before elf_end() */
	size_t name_len;
	int rank; /* binding preference: global > weak > local */
};

/* Close d's DWARF; a later line lookup opens it again. */
static void dwarf_close(struct dso *d)
{
	if (d->dw)
		dwarf_end(d->dw);
	if (d->dw_elf)
		elf_end(d->dw_elf);
	dwarf_index__delete(d->dw_index);
	if (d->cache && d->dw)
		d->cache->dwarf_bytes -= d->dw_bytes;
	d->dw = NULL;
	d->dw_elf = NULL;
	d->dw_index = NULL;
	d->dw_bytes = 0;
	d->dw_sections = 0;
	d->dw_walked = 0;
	d->dw_reset_due = false;
	d->dwarf_tried = false;
}

static void dso_free(struct dso *d)
{
	if (!d)
		return;
	dwarf_close(d);
	free(d->open_path);
	free(d->debug_path);
	free(d->path);
	free(d->error);
	free(d->segs);
	free(d->syms);
	free(d->names);
	free(d);
}

/*
 * Marks d unreadable with a message. Returns -EINVAL, the error of a corrupt or unreadable file,
 * or -ENOMEM when even the message cannot be kept.
 */
static int __attribute__((format(printf, 2, 3))) dso_fail(struct dso *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	d->readable = false;
	free(d->error);
	d->error = NULL;
	va_start(ap, fmt);
	n = vasprintf(&d->error, fmt, ap);
	va_end(ap);
	if (n < 0) {
		d->error = NULL;
		return -ENOMEM;
	}
	/* Whatever was read before the failure is not trustworthy. */
	free(d->segs);
	free(d->syms);
	free(d->names);
	d->segs = NULL;
	d->syms = NULL;
	d->names = NULL;
	d->nsegs = d->nsyms = 0;
	d->build_id_len = 0;
	d->build_id_hex[0] = '\0';
	return -EINVAL;
}

static void fid_from_stat(struct file_id *fid, const struct stat *st)
{
	fid->dev = st->st_dev;
	fid->ino = st->st_ino;
	fid->size = st->st_size;
	fid->mtime = st->st_mtim;
	fid->ctime = st->st_ctim;
}

static bool fid_equal(const struct file_id *a, const struct stat *st)
{
	return a->dev == st->st_dev && a->ino == st->st_ino && a->size == st->st_size &&
	       a->mtime.tv_sec == st->st_mtim.tv_sec && a->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       a->ctime.tv_sec == st->st_ctim.tv_sec && a->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

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
			for (size_t i = 0; i < d->build_id_len; i++)
				snprintf(d->build_id_hex + 2 * i, 3, "%02x", d->build_id[i]);
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
		return dso_fail(d, "%s: bad program headers: %s", d->path, elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			return dso_fail(d, "%s: bad program header %zu: %s", d->path, i,
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
			return dso_fail(d, "%s: bad program header %zu", d->path, i);
		/* A truncated binary cannot be trusted: its tail may be any other file's. */
		if ((ph.p_type == PT_LOAD || ph.p_type == PT_NOTE) &&
		    !in_file(ph.p_offset, ph.p_filesz, file_size))
			return dso_fail(d, "%s: segment %zu lies beyond the end of the file",
					d->path, i);
		if (ph.p_type == PT_LOAD) {
			struct load_seg *s = &d->segs[d->nsegs++];

			s->offset = ph.p_offset;
			s->vaddr = ph.p_vaddr;
			s->filesz = ph.p_filesz;
			s->memsz = ph.p_memsz;
			s->flags = ph.p_flags;
		} else if (ph.p_type == PT_NOTE && !d->build_id_len && ph.p_filesz) {
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
	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 256;
		struct raw_sym *nv = reallocarray(r->v, ncap, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = ncap;
	}
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
	size_t nraw = rs->n, names_len = 0, nout = 0;
	char *p;
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
	for (size_t i = 0; i < nout; i++)
		names_len += raw[i].name_len + 1;

	err = -ENOMEM;
	free(d->syms);
	free(d->names);
	d->nsyms = 0;
	d->syms = calloc(nout, sizeof(*d->syms));
	d->names = malloc(names_len);
	d->names_bytes = names_len;
	if (!d->syms || !d->names)
		goto out;
	p = d->names;
	for (size_t i = 0; i < nout; i++) {
		struct dso_sym *s = &d->syms[i];
		const struct raw_sym *r = &raw[i];

		memcpy(p, r->name, r->name_len);
		p[r->name_len] = '\0';
		s->name = p;
		p += r->name_len + 1;
		s->addr = r->addr;
		s->size = r->size;
		if (r->size) {
			s->end = r->size > UINT64_MAX - r->addr ? UINT64_MAX : r->addr + r->size;
		} else {
			/* No size (hand-written assembly): it runs to the next symbol. */
			uint64_t end = i + 1 < nout ? raw[i + 1].addr : UINT64_MAX;

			if (r->sec_end < end)
				end = r->sec_end;
			if (end == UINT64_MAX)
				end = segment_end(d, r->addr);
			s->end = end > r->addr ? end : r->addr + 1;
		}
	}
	d->nsyms = nout;
	err = 0;
out:
	free(raw);
	return err;
}

/*
 * Reads the function symbols of one symbol table into d. Returns 0 (d->nsyms may be 0), -EINVAL
 * after dso_fail() on a corrupt table, or -ENOMEM.
 */
static int read_symbols(struct dso *d, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, int machine)
{
	struct raw_syms raw = {0};
	int err = collect_symbols(elf, scn, shdr, machine, &raw);

	if (err) {
		free(raw.v);
		if (err == -EINVAL)
			return dso_fail(d, "%s: unreadable symbol table: %s", d->path,
					elf_errmsg(-1));
		return err;
	}
	return store_symbols(d, &raw);
}

/*
 * MiniDebugInfo: the functions of the .symtab compressed in .gnu_debugdata, merged with .dynsym's
 * (the MiniDebugInfo leaves out what .dynsym has). A section that cannot be used is skipped with a
 * debug message: the binary's own tables remain. Returns 0 (d->nsyms may be 0), -EINVAL after
 * dso_fail() on a corrupt .dynsym, or -ENOMEM.
 */
static int read_minidebuginfo(struct dso *d, Elf *elf, Elf_Scn *scn, Elf_Scn *dynsym,
			      const GElf_Shdr *dynsym_sh, int machine)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct raw_syms raw = {0};
	struct minidebuginfo *m;
	Elf_Scn *symtab;
	GElf_Shdr sh;
	char why[128];
	int err = 0;

	if (!data || !data->d_buf || !data->d_size)
		return 0;
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
			err = dso_fail(d, "%s: unreadable symbol table: %s", d->path,
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
	Elf_Data *data = elf_getdata(scn, NULL);
	struct raw_syms raw = {0};
	char why[128];
	int n;

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
			return dso_fail(d, "%s: section headers lie beyond the end of the file",
					d->path);
		if (phnum == PN_XNUM && elf_getphdrnum(elf, &phnum))
			return dso_fail(d, "%s: bad program headers: %s", d->path, elf_errmsg(-1));
		if (!shnum && elf_getshdrnum(elf, &shnum))
			return dso_fail(d, "%s: bad section headers: %s", d->path, elf_errmsg(-1));
	}
	/* Counts are at most 32 bits and entries are small: the products cannot overflow. */
	if (phnum && !in_file(eh->e_phoff, (uint64_t)phnum * phent, file_size))
		return dso_fail(d, "%s: program headers lie beyond the end of the file", d->path);
	if (shnum && (!eh->e_shoff || !in_file(eh->e_shoff, (uint64_t)shnum * shent, file_size)))
		return dso_fail(d, "%s: section headers lie beyond the end of the file", d->path);
	/* libelf must see the same tables, or it dropped one for a reason of its own. */
	if (elf_getphdrnum(elf, &n) || n != phnum)
		return dso_fail(d, "%s: bad program headers", d->path);
	if (elf_getshdrnum(elf, &n) || n != shnum)
		return dso_fail(d, "%s: bad section headers", d->path);
	return 0;
}

/* What a binary says about its separate debug file, gathered while its sections are read. */
struct debug_hints {
	bool has_symtab;
	bool has_debug_info;
	char link[256]; /* the .gnu_debuglink file name, "" when none */
	uint32_t link_crc;
};

/*
 * .gnu_debuglink: a NUL-terminated file name, padding to 4 bytes, then the CRC-32 of the debug
 * file in the binary's byte order. A name with a '/' is refused: it would lead the search out of
 * the directories it is meant to look in.
 */
static void read_debuglink(Elf_Scn *scn, const GElf_Ehdr *eh, struct debug_hints *h)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const unsigned char *p;
	size_t len, crc_off;

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

/*
 * Reads the ELF contents into d, and into hints (which may be NULL) what a search for a separate
 * debug file needs. Returns 0, -EINVAL after dso_fail(), or -ENOMEM.
 */
static int read_elf(struct dso *d, Elf *elf, uint64_t file_size, struct debug_hints *hints)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL, *debugdata = NULL, *gopclntab = NULL;
	GElf_Shdr symtab_sh, dynsym_sh, sh;
	size_t shnum = 0, nscn = 0, shstrndx = SHN_UNDEF;
	uint64_t text_addr = 0;
	GElf_Ehdr eh;
	int err;

	if (elf_kind(elf) != ELF_K_ELF)
		return dso_fail(d, "%s: not an ELF file", d->path);
	if (!gelf_getehdr(elf, &eh))
		return dso_fail(d, "%s: bad ELF header: %s", d->path, elf_errmsg(-1));

	err = check_tables(d, elf, &eh, file_size);
	if (err)
		return err;
	err = read_segments(d, elf, file_size);
	if (err)
		return err;

	if (elf_getshdrnum(elf, &shnum))
		return dso_fail(d, "%s: bad section table: %s", d->path, elf_errmsg(-1));
	/* Section names matter to the debug file search and the fallback symbol tables. */
	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = SHN_UNDEF;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = NULL;

		nscn++;
		if (!gelf_getshdr(scn, &sh))
			return dso_fail(d, "%s: bad section header: %s", d->path, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS && !in_file(sh.sh_offset, sh.sh_size, file_size))
			return dso_fail(d, "%s: section %zu lies beyond the end of the file",
					d->path, elf_ndxscn(scn));
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_sh = sh;
		} else if (sh.sh_type == SHT_NOTE && !d->build_id_len) {
			/* Binaries without program headers (debug files) keep it in a section. */
			find_build_id(d, elf_getdata(scn, NULL));
		}
		if (shstrndx != SHN_UNDEF && sh.sh_type != SHT_NOBITS)
			name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (hints && name) {
			if (!strcmp(name, ".debug_info"))
				hints->has_debug_info = true;
			else if (!strcmp(name, ".gnu_debuglink") && !hints->link[0])
				read_debuglink(scn, &eh, hints);
		}
		if (!name)
			continue;
		if (!strcmp(name, ".gnu_debugdata") && !debugdata)
			debugdata = scn;
		/* PIE builds name it .data.rel.ro.gopclntab (relocations make it RELRO). */
		else if ((!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab")) &&
			 !gopclntab)
			gopclntab = scn;
		else if (!strcmp(name, ".text") && (sh.sh_flags & SHF_ALLOC))
			text_addr = sh.sh_addr;
	}
	if (hints)
		hints->has_symtab = symtab != NULL;
	/* elf_nextscn() also stops on errors: a table cut short is corrupt. */
	if (nscn + 1 < shnum)
		return dso_fail(d, "%s: bad section table", d->path);

	if (symtab) {
		err = read_symbols(d, elf, symtab, &symtab_sh, eh.e_machine);
		if (err)
			return err;
	}
	/* Without .symtab: .dynsym with MiniDebugInfo, Go's own table, or .dynsym alone. */
	if (!d->nsyms && debugdata) {
		err = read_minidebuginfo(d, elf, debugdata, dynsym, &dynsym_sh, eh.e_machine);
		if (err)
			return err;
	}
	if (!d->nsyms && gopclntab) {
		err = read_gopclntab(d, gopclntab, text_addr);
		if (err)
			return err;
	}
	/* Stripped binaries keep the exported functions in .dynsym. */
	if (!d->nsyms && dynsym) {
		err = read_symbols(d, elf, dynsym, &dynsym_sh, eh.e_machine);
		if (err)
			return err;
	}
	return 0;
}

/* pread() all of len bytes at off; false on a short read or an error. */
static bool pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += n;
	}
	return true;
}

/*
 * The OpenTelemetry file id (process.executable.build_id.htlhash): the first 16 bytes, in hex, of
 * SHA-256(first 4 KiB || last 4 KiB || file length as a big-endian uint64). It names any file,
 * with or without a GNU build-id, and is cheap: two 4 KiB reads whatever the file's size. For a
 * file under 4 KiB the two windows are the whole file, twice.
 */
static void compute_htlhash(struct dso *d, int fd, off_t size)
{
	enum { WINDOW = 4096 };
	size_t head = size < WINDOW ? (size_t)size : WINDOW;
	uint8_t buf[WINDOW], len_be[8], digest[EVP_MAX_MD_SIZE];
	unsigned int digest_len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);

	for (int i = 0; i < 8; i++)
		len_be[i] = (uint8_t)((uint64_t)size >> (56 - 8 * i));
	ok = ok && pread_full(fd, buf, head, 0) && EVP_DigestUpdate(ctx, buf, head);
	ok = ok && pread_full(fd, buf, head, size - head) && EVP_DigestUpdate(ctx, buf, head);
	ok = ok && EVP_DigestUpdate(ctx, len_be, sizeof(len_be)) &&
	     EVP_DigestFinal_ex(ctx, digest, &digest_len) && digest_len >= 16;
	EVP_MD_CTX_free(ctx);
	d->htlhash_hex[0] = '\0';
	if (!ok)
		return;
	for (int i = 0; i < 16; i++)
		snprintf(d->htlhash_hex + 2 * i, 3, "%02x", digest[i]);
}

/* ------------------------------------------------------------------------------------------ */
/* Separate debug files */

/*
 * A debug file found by .gnu_debuglink is read through once for its CRC. Beyond this size it is
 * not worth the I/O on an agent's hot path (and no real debug file comes near it).
 */
#define DEBUGLINK_MAX_SIZE (4ULL << 30)

/* .gnu_debuglink's CRC is the one of zlib's crc32(). */
static bool file_crc_matches(int fd, off_t size, uint32_t want)
{
	unsigned char buf[16384];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;

	if (size < 0 || (uint64_t)size > DEBUGLINK_MAX_SIZE)
		return false;
	while (off < size) {
		size_t n = size - off < (off_t)sizeof(buf) ? (size_t)(size - off) : sizeof(buf);

		if (!pread_full(fd, buf, n, off))
			return false;
		crc = crc32(crc, buf, n);
		off += n;
	}
	return crc == want;
}

/*
 * Reads a candidate debug file into a scratch dso (its symbols, build-id and hints). Returns it
 * when it is an ELF file whose build-id agrees with d's (when both have one) and, for a
 * .gnu_debuglink candidate (check_crc), whose CRC is the one the binary recorded; NULL otherwise,
 * out of memory included: the binary's own tables are then used, as without a debug file.
 */
static struct dso *load_debug_file(const struct dso *d, const char *path, bool check_crc,
				   uint32_t crc, struct debug_hints *dh)
{
	struct dso *dbg = NULL;
	struct stat st;
	Elf *elf = NULL;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	if (check_crc && !file_crc_matches(fd, st.st_size, crc)) {
		log_debug("%s: debug file %s: CRC mismatch, ignored", d->path, path);
		goto fail;
	}
	dbg = calloc(1, sizeof(*dbg));
	if (!dbg || !(dbg->path = strdup(path)))
		goto fail;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto fail;
	dbg->readable = true;
	memset(dh, 0, sizeof(*dh));
	if (read_elf(dbg, elf, st.st_size, dh) || !dbg->readable) {
		log_debug("%s: debug file %s ignored: %s", d->path, path, dso__error(dbg));
		goto fail;
	}
	if (d->build_id_len && dbg->build_id_len &&
	    (d->build_id_len != dbg->build_id_len ||
	     memcmp(d->build_id, dbg->build_id, d->build_id_len))) {
		log_debug("%s: debug file %s has another build-id, ignored", d->path, path);
		goto fail;
	}
	fid_from_stat(&dbg->fid, &st);
	dbg->have_fid = true;
	elf_end(elf);
	close(fd);
	return dbg;
fail:
	elf_end(elf);
	dso_free(dbg);
	close(fd);
	return NULL;
}

/*
 * A binary opened through /proc/PID/root or /proc/PID/map_files lives in that process's mount
 * namespace: its debug files are looked for there too. Writes "/proc/PID/root" (or "") to prefix
 * and returns the binary's path as that process sees it, whose directory the debuglink search
 * uses.
 */
static const char *debug_search_base(const char *open_path, const char *display_path, char *prefix,
				     size_t len)
{
	const char *p = open_path + strlen("/proc/");
	size_t digits = 0;

	prefix[0] = '\0';
	if (strncmp(open_path, "/proc/", strlen("/proc/")))
		return open_path;
	while (p[digits] >= '0' && p[digits] <= '9')
		digits++;
	if (!digits || (size_t)snprintf(prefix, len, "/proc/%.*s/root", (int)digits, p) >= len) {
		prefix[0] = '\0';
		return open_path;
	}
	p += digits;
	if (!strncmp(p, "/root/", strlen("/root/")))
		return p + strlen("/root");
	if (!strncmp(p, "/map_files/", strlen("/map_files/")) && display_path &&
	    display_path[0] == '/')
		return display_path;
	prefix[0] = '\0';
	return open_path;
}

/* Tries one candidate path, built from fmt; false when it does not fit or is not the file. */
static struct dso *__attribute__((format(printf, 6, 7)))
try_debug_file(const struct dso *d, bool check_crc, uint32_t crc, struct debug_hints *dh, char *buf,
	       const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		return NULL;
	return load_debug_file(d, buf, check_crc, crc, dh);
}

/*
 * Finds the separate debug file of a stripped binary, the way GDB and elfutils do: by build-id
 * under the debug root, then by .gnu_debuglink beside the binary, in its .debug/ directory and
 * under the debug root. Returns the scratch dso of the first that fits, or NULL.
 */
static struct dso *find_debug_file(const struct dso *d, const char *open_path,
				   const char *display_path, const char *root,
				   const struct debug_hints *h, struct debug_hints *dh)
{
	char prefix[64], dir[PATH_MAX], buf[PATH_MAX];
	const char *base, *slash;
	struct dso *dbg = NULL;

	base = debug_search_base(open_path, display_path, prefix, sizeof(prefix));
	if (root[0] && d->build_id_len > 1)
		dbg = try_debug_file(d, false, 0, dh, buf, "%s%s/.build-id/%.2s/%s.debug", prefix,
				     root, d->build_id_hex, d->build_id_hex + 2);
	if (dbg || !h->link[0])
		return dbg;
	slash = strrchr(base, '/');
	if (!slash || (size_t)(slash - base) >= sizeof(dir))
		return NULL;
	memcpy(dir, base, slash - base);
	dir[slash - base] = '\0';
	dbg = try_debug_file(d, true, h->link_crc, dh, buf, "%s%s/%s", prefix, dir, h->link);
	if (!dbg)
		dbg = try_debug_file(d, true, h->link_crc, dh, buf, "%s%s/.debug/%s", prefix, dir,
				     h->link);
	if (!dbg && root[0])
		dbg = try_debug_file(d, true, h->link_crc, dh, buf, "%s%s%s/%s", prefix, root, dir,
				     h->link);
	return dbg;
}

/*
 * Completes what d lacks (d->lacks_symtab, d->lacks_dwarf) from a debug file read into dbg: the
 * function symbols of its .symtab, and the path of its DWARF, opened on the first line lookup.
 * Addresses need no translation: a debug file keeps the binary's section addresses. dbg is
 * consumed.
 */
static void adopt_debug_file(struct dso *d, struct dso *dbg, const struct debug_hints *dh)
{
	if (d->lacks_symtab && dh->has_symtab && dbg->nsyms) {
		struct dso_sym *syms = d->syms;
		char *names = d->names;
		size_t names_bytes = d->names_bytes;

		d->syms = dbg->syms;
		d->names = dbg->names;
		d->names_bytes = dbg->names_bytes;
		d->nsyms = dbg->nsyms;
		dbg->syms = syms;
		dbg->names = names;
		dbg->names_bytes = names_bytes;
		d->lacks_symtab = false;
	}
	if (d->lacks_dwarf && dh->has_debug_info) {
		/* A handle opened (or tried) on the binary alone had no DWARF to give. */
		dwarf_close(d);
		free(d->debug_path);
		d->debug_path = dbg->path;
		d->debug_fid = dbg->fid;
		dbg->path = NULL;
		d->lacks_dwarf = false;
	}
	dso_free(dbg);
}

/*
 * Looks for the separate debug file of a stripped binary on this host. Failures are quiet: the
 * binary's .dynsym is what it was without a debug file, and debuginfod may still have one.
 */
static void use_debug_file(struct dso *d, const char *open_path, const char *display_path,
			   const char *root, const struct debug_hints *h)
{
	struct debug_hints dh;
	struct dso *dbg;

	d->lacks_symtab = !h->has_symtab;
	d->lacks_dwarf = !h->has_debug_info;
	if (!d->readable || (h->has_symtab && h->has_debug_info) ||
	    (!d->build_id_len && !h->link[0]))
		return;
	dbg = find_debug_file(d, open_path, display_path, root, h, &dh);
	if (!dbg)
		return;
	log_debug("%s: separate debug file %s", d->path, dbg->path);
	adopt_debug_file(d, dbg, &dh);
}

/*
 * Opens and reads one binary, and its separate debug file when it is stripped. Returns NULL only
 * when memory runs out; a file that cannot be read yields a dso with readable == false.
 */
static struct dso *dso_load(uint64_t dev, uint64_t inode, const char *open_path,
			    const char *display_path, const char *debug_root)
{
	struct debug_hints hints = {0};
	struct dso *d;
	struct stat st;
	Elf *elf = NULL;
	int fd = -1, err;

	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dev = dev;
	d->inode = inode;
	d->path = strdup(display_path ? display_path : open_path ? open_path : "");
	if (!d->path)
		goto nomem;
	if (open_path && !(d->open_path = strdup(open_path)))
		goto nomem;
	if (!open_path) {
		if (dso_fail(d, "%s: no path to open", d->path) == -ENOMEM)
			goto nomem;
		return d;
	}

	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		/* Remember which file failed, so that the next lookup does not retry it. */
		if (!stat(open_path, &st)) {
			fid_from_stat(&d->fid, &st);
			d->have_fid = true;
		}
		if (dso_fail(d, "open %s: %s", open_path, strerror(err)) == -ENOMEM)
			goto nomem;
		return d;
	}
	if (fstat(fd, &st)) {
		err = errno;
		if (dso_fail(d, "stat %s: %s", open_path, strerror(err)) == -ENOMEM)
			goto nomem;
		goto out;
	}
	fid_from_stat(&d->fid, &st);
	d->have_fid = true;
	if (!S_ISREG(st.st_mode)) {
		if (dso_fail(d, "%s: not a regular file", d->path) == -ENOMEM)
			goto nomem;
		goto out;
	}

	compute_htlhash(d, fd, st.st_size);

	/*
	 * ELF_C_READ, not ELF_C_READ_MMAP: libelf then reads with pread(), so a binary truncated
	 * while we read it gives a read error instead of SIGBUS.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		if (dso_fail(d, "%s: not an ELF file (%s)", d->path, elf_errmsg(-1)) == -ENOMEM)
			goto nomem;
		goto out;
	}
	d->readable = true;
	err = read_elf(d, elf, st.st_size, &hints);
	if (err == -ENOMEM)
		goto nomem;
	elf_end(elf);
	elf = NULL;
	close(fd);
	fd = -1;
	use_debug_file(d, open_path, display_path, debug_root, &hints);
	return d;
out:
	elf_end(elf);
	close(fd);
	return d;

nomem:
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	dso_free(d);
	errno = ENOMEM;
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The cache */

struct dso_cache *dso_cache__new(size_t max_dsos)
{
	struct dso_cache *c;

	if (!max_dsos) {
		errno = EINVAL;
		return NULL;
	}
	/* libelf refuses to work until told which ELF version its caller speaks. */
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOTSUP;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_dsos = max_dsos;
	c->max_dwarf_bytes = DSO_DEFAULT_DWARF_BYTES;
	c->lines = line_cache__new(LINE_CACHE_DEFAULT_SLOTS);
	if (!c->lines) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->bucket_bits = 4;
	while (((size_t)1 << c->bucket_bits) < max_dsos && c->bucket_bits < DSO_MAX_BUCKET_BITS)
		c->bucket_bits++;
	c->buckets = calloc((size_t)1 << c->bucket_bits, sizeof(*c->buckets));
	if (!c->buckets) {
		line_cache__delete(c->lines);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void dso_cache__delete(struct dso_cache *c)
{
	struct dso *d, *next;

	if (!c)
		return;
	for (d = c->lru_head; d; d = next) {
		next = d->lru_next;
		dso_free(d);
	}
	free(c->buckets);
	free(c->debug_root);
	line_cache__delete(c->lines);
	free(c);
}

int dso_cache__set_debug_root(struct dso_cache *c, const char *dir)
{
	char *copy = NULL;

	if (!c)
		return -EINVAL;
	if (dir && !(copy = strdup(dir)))
		return -ENOMEM;
	free(c->debug_root);
	c->debug_root = copy;
	return 0;
}

size_t dso_cache__size(const struct dso_cache *c)
{
	return c ? c->n : 0;
}

static size_t dso_bucket(const struct dso_cache *c, uint64_t dev, uint64_t inode)
{
	uint64_t h = (inode ^ (dev * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull;

	return h >> (64 - c->bucket_bits);
}

bool dso_cache__has(const struct dso_cache *c, uint64_t dev, uint64_t inode)
{
	for (const struct dso *d = c ? c->buckets[dso_bucket(c, dev, inode)] : NULL; d;
	     d = d->hnext)
		if (d->dev == dev && d->inode == inode && d->readable)
			return true;
	return false;
}

static void lru_unlink(struct dso_cache *c, struct dso *d)
{
	if (d->lru_prev)
		d->lru_prev->lru_next = d->lru_next;
	else
		c->lru_head = d->lru_next;
	if (d->lru_next)
		d->lru_next->lru_prev = d->lru_prev;
	else
		c->lru_tail = d->lru_prev;
	d->lru_prev = d->lru_next = NULL;
}

static void lru_push_front(struct dso_cache *c, struct dso *d)
{
	d->lru_prev = NULL;
	d->lru_next = c->lru_head;
	if (c->lru_head)
		c->lru_head->lru_prev = d;
	c->lru_head = d;
	if (!c->lru_tail)
		c->lru_tail = d;
}

/* The DWARF handle is opened later through the path of the latest lookup: an older one may be
 * the /proc/PID/map_files entry of a process that has exited. */
static void set_open_path(struct dso *d, const char *open_path)
{
	char *copy;

	if (!open_path || (d->open_path && !strcmp(d->open_path, open_path)))
		return;
	copy = strdup(open_path);
	if (!copy)
		return; /* keep the old one: a stale path only costs the lines */
	free(d->open_path);
	d->open_path = copy;
}

static struct dso *touch(struct dso_cache *c, struct dso *d)
{
	lru_unlink(c, d);
	lru_push_front(c, d);
	d->last_use = ++c->clock;
	return d;
}

static void cache_remove(struct dso_cache *c, struct dso *d)
{
	struct dso **pp = &c->buckets[dso_bucket(c, d->dev, d->inode)];

	while (*pp && *pp != d)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = d->hnext;
	lru_unlink(c, d);
	c->n--;
	dso_free(d);
}

static void cache_insert(struct dso_cache *c, struct dso *d)
{
	size_t b = dso_bucket(c, d->dev, d->inode);

	if (c->n >= c->max_dsos)
		cache_remove(c, c->lru_tail);
	d->hnext = c->buckets[b];
	c->buckets[b] = d;
	lru_push_front(c, d);
	d->last_use = ++c->clock;
	d->lines_owner = ++c->lines_owners;
	c->n++;
}

static bool same_build_id(const struct dso *a, const struct dso *b)
{
	return a->readable && b->readable && a->build_id_len &&
	       a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

void dso_cache__set_dwarf_budget(struct dso_cache *c, size_t bytes)
{
	/* What was too big for the old budget may fit the new one. */
	for (struct dso *d = c->lru_head; d; d = d->lru_next)
		if (d->dwarf_too_big) {
			d->dwarf_too_big = false;
			d->dwarf_tried = false;
		}
	c->max_dwarf_bytes = bytes;
}

static size_t opt_bytes(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

size_t dso_cache__memory(const struct dso_cache *c)
{
	struct line_cache_stats ls;
	size_t bytes;

	if (!c)
		return 0;
	line_cache__stats(c->lines, &ls);
	bytes = sizeof(*c) + ((size_t)1 << c->bucket_bits) * sizeof(*c->buckets) + ls.bytes;
	for (const struct dso *d = c->lru_head; d; d = d->lru_next)
		bytes += sizeof(*d) + d->nsegs * sizeof(*d->segs) + d->nsyms * sizeof(*d->syms) +
			 d->names_bytes + opt_bytes(d->path) + opt_bytes(d->error) +
			 opt_bytes(d->open_path) + opt_bytes(d->debug_path);
	return bytes;
}

void dso_cache__dwarf_stats(const struct dso_cache *c, size_t *bytes, uint64_t *closed)
{
	*bytes = c->dwarf_bytes;
	*closed = c->dwarf_closed;
}

void dso_cache__set_fetcher(struct dso_cache *c, struct debuginfod_fetch *f)
{
	c->fetch = f;
}

/* A failed fetch is asked about again this often; the fetcher says when it really retries. */
#define FETCH_RECHECK_NS (60 * 1000000000ULL)

/*
 * Asks the fetcher about d's debug file when there may be news: a fresh dso, a fetch that ended
 * since the last ask (the generation moved), or a failure old enough to be retried. A file that
 * arrived is adopted as a local debug file would be, and only when its build-id is d's.
 */
static void poll_fetch(struct dso_cache *c, struct dso *d)
{
	char path[PATH_MAX];
	struct debug_hints dh;
	struct dso *dbg;
	uint64_t gen;

	if (!c->fetch || d->fetch == FETCH_NONE)
		return;
	/* Read before asking: a fetch that ends meanwhile moves it again, and is not missed. */
	gen = debuginfod_fetch__generation(c->fetch);
	if (d->fetch == FETCH_PENDING && gen == d->fetch_gen)
		return;
	if (d->fetch == FETCH_FAILED && clock__ns(CLOCK_MONOTONIC) < d->fetch_retry_ns)
		return;
	switch (debuginfod_fetch__get(c->fetch, d->build_id, d->build_id_len, d->path, path,
				      sizeof(path))) {
	case DEBUGINFOD_PENDING:
	case DEBUGINFOD_BUSY: /* queued later: asked again when a fetch ends */
		d->fetch = FETCH_PENDING;
		d->fetch_gen = gen;
		return;
	case DEBUGINFOD_FAILED:
		d->fetch = FETCH_FAILED;
		d->fetch_retry_ns = clock__ns(CLOCK_MONOTONIC) + FETCH_RECHECK_NS;
		return;
	case DEBUGINFOD_READY:
		break;
	}
	dbg = load_debug_file(d, path, false, 0, &dh);
	/* load_debug_file() refuses another build-id; a file without one proves nothing. */
	if (!dbg || !dbg->build_id_len) {
		log_debug("%s: debuginfod's file %s is not its debug file, ignored", d->path, path);
		dso_free(dbg);
		debuginfod_fetch__reject(c->fetch, d->build_id, d->build_id_len);
		d->fetch = FETCH_FAILED;
		d->fetch_retry_ns = clock__ns(CLOCK_MONOTONIC) + FETCH_RECHECK_NS;
		return;
	}
	log_debug("%s: debug file %s from debuginfod", d->path, path);
	adopt_debug_file(d, dbg, &dh);
	d->lines_owner = ++c->lines_owners;
	d->fetch = FETCH_NONE;
}

static struct dso *cache_get(struct dso_cache *c, uint64_t dev, uint64_t inode,
			     const char *open_path, const char *display_path)
{
	struct dso *d, *next, *latest = NULL, *fresh;
	size_t b;
	struct stat st;
	bool have_st;

	b = dso_bucket(c, dev, inode);
	/*
	 * One stat() per lookup tells whether the file behind this identity is still the one we
	 * read. It is much cheaper than reading the build-id again, and it catches inode reuse.
	 */
	have_st = open_path && !stat(open_path, &st);
	for (d = c->buckets[b]; d; d = d->hnext) {
		if (d->dev != dev || d->inode != inode)
			continue;
		if (have_st && d->have_fid && fid_equal(&d->fid, &st)) {
			set_open_path(d, open_path);
			return touch(c, d);
		}
		if (!latest || d->last_use > latest->last_use)
			latest = d;
	}
	/* The file cannot be checked (its process is gone, say): what we last knew is the best. */
	if (latest && !have_st)
		return touch(c, latest);

	fresh = dso_load(dev, inode, open_path, display_path,
			 c->debug_root ? c->debug_root : DSO_DEBUG_ROOT);
	if (!fresh)
		return NULL;
	for (d = c->buckets[b]; d; d = next) {
		next = d->hnext;
		if (d->dev != dev || d->inode != inode)
			continue;
		/* The same binary, touched (chmod, unlink) or reached through another path. */
		if (same_build_id(d, fresh)) {
			d->fid = fresh->fid;
			d->have_fid = fresh->have_fid;
			/* A DWARF open refused because the file had changed may now succeed. */
			if (!d->dw) {
				d->dwarf_tried = false;
				d->lines_owner = ++c->lines_owners;
			}
			set_open_path(d, open_path);
			dso_free(fresh);
			return touch(c, d);
		}
		/*
		 * Without a build-id, or without having read the old file, nothing says the old
		 * entry still describes anything mapped: the fresh read replaces it. Two different
		 * build-ids are two files (inode reuse) and both stay.
		 */
		if (!d->readable || !d->build_id_len)
			cache_remove(c, d);
	}
	fresh->cache = c;
	/* Only a build-id names the file on a debuginfod server. */
	if (c->fetch && fresh->readable && fresh->build_id_len &&
	    (fresh->lacks_symtab || fresh->lacks_dwarf))
		fresh->fetch = FETCH_WANTED;
	cache_insert(c, fresh);
	return fresh;
}

struct dso *dso_cache__get(struct dso_cache *c, uint64_t dev, uint64_t inode, const char *open_path,
			   const char *display_path)
{
	struct dso *d;

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	d = cache_get(c, dev, inode, open_path, display_path);
	if (d)
		poll_fetch(c, d);
	return d;
}

bool dso__debug_pending(const struct dso *d)
{
	return d && (d->fetch == FETCH_WANTED || d->fetch == FETCH_PENDING);
}

/* ------------------------------------------------------------------------------------------ */
/* Queries */

bool dso__readable(const struct dso *d)
{
	return d && d->readable;
}

const char *dso__error(const struct dso *d)
{
	if (!d)
		return "no dso";
	return d->error ? d->error : "";
}

const char *dso__path(const struct dso *d)
{
	return d ? d->path : "";
}

size_t dso__build_id(const struct dso *d, const uint8_t **id)
{
	if (!d || !d->build_id_len) {
		if (id)
			*id = NULL;
		return 0;
	}
	if (id)
		*id = d->build_id;
	return d->build_id_len;
}

const char *dso__build_id_hex(const struct dso *d)
{
	return d ? d->build_id_hex : "";
}

const char *dso__htlhash_hex(const struct dso *d)
{
	return d ? d->htlhash_hex : "";
}

bool dso__file_addr(const struct dso *d, uint64_t map_start, uint64_t map_pgoff, uint64_t addr,
		    uint64_t *file_addr)
{
	const struct load_seg *best = NULL;
	uint64_t off;

	if (!d || addr < map_start) {
		if (file_addr)
			*file_addr = 0;
		return false;
	}
	off = addr - map_start + map_pgoff;
	if (file_addr)
		*file_addr = off;
	/*
	 * Segments may share a page of the file (the kernel maps whole pages), so several can
	 * cover one offset; a sampled address is code, so the executable one wins.
	 */
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct load_seg *s = &d->segs[i];

		if (off < s->offset || off - s->offset >= s->filesz)
			continue;
		if (!best || ((s->flags & PF_X) && !(best->flags & PF_X)))
			best = s;
	}
	if (!best)
		return false;
	if (file_addr)
		*file_addr = off - best->offset + best->vaddr;
	return true;
}

bool dso__find_symbol(const struct dso *d, uint64_t file_addr, struct dso_symbol *sym)
{
	size_t lo = 0, hi;
	const struct dso_sym *s;

	if (!d || !d->nsyms)
		return false;
	/* The last symbol starting at or before file_addr. */
	hi = d->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->syms[mid].addr <= file_addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	s = &d->syms[lo - 1];
	if (file_addr >= s->end)
		return false;
	if (sym) {
		sym->name = s->name;
		sym->addr = s->addr;
		sym->size = s->size;
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* DWARF: file, line and inline chains */

/*
 * What an open DWARF holds is counted, not measured: libdw reports none of it, and the heap
 * (mallinfo2) is every thread's. Measured around a lookup, it took in whatever the process
 * watcher or the exporter allocated meanwhile, and the budget filled with their noise until
 * handles were closed and opened again, over and over. The count:
 *  - at open, the debug sections as read (decompressed): debug_bytes();
 *  - per CU at its first lookup, libdw's record of it, its line table, and our function table;
 *  - per CU reached by a walk over all CUs (a binary without .debug_aranges), libdw's record.
 * Measured with elfutils 0.188 over libc's and libstdc++'s debug info (heap growth, one thread):
 * a CU's record is about 1 KiB, a line table row 59-69 bytes. test_lines holds the count to
 * within a quarter of the heap's growth over a real binary's CUs.
 */
#define DWARF_CU_BYTES 1024
#define DWARF_LINE_ROW_BYTES 64

/* A debug section's size once read: a compressed one's (SHF_COMPRESSED, or GNU .zdebug) from its
 * header, without decompressing it. */
static size_t section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
	const unsigned char *p;
	Elf_Data *raw;
	GElf_Chdr ch;
	size_t n = 0;

	if ((sh->sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
		return ch.ch_size;
	if (strncmp(name, ".zdebug_", 8))
		return sh->sh_size;
	raw = elf_rawdata(scn, NULL);
	p = raw ? raw->d_buf : NULL;
	if (!p || raw->d_size < 12 || memcmp(p, "ZLIB", 4))
		return sh->sh_size;
	for (int i = 4; i < 12; i++) /* big-endian */
		n = n << 8 | p[i];
	return n;
}

/* The debug sections' sizes once read (decompressed), before or after libdw reads them. A corrupt
 * header makes a huge size, which no budget admits. */
static size_t debug_bytes(Elf *elf)
{
	size_t shstrndx, total = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		n = section_bytes(scn, &sh, name);
		total = n > SIZE_MAX - total ? SIZE_MAX : total + n;
	}
	return total;
}

/*
 * Whether the DWARF string sections end with a NUL. libdw (0.188) reads the names of a line
 * table's files and directories in .debug_line_str with strlen(), and so reads past the section
 * when its last string is unterminated (found by tests/fuzz/fuzz_elf). A compiler never writes
 * that; such a file gets no lines. Called after dwarf_begin_elf(), which has decompressed them.
 */
static bool dwarf_strings_terminated(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".debug_str") && strcmp(name, ".debug_line_str") &&
			      strcmp(name, ".zdebug_str") && strcmp(name, ".zdebug_line_str")))
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf && data->d_size &&
		    ((const char *)data->d_buf)[data->d_size - 1] != '\0')
			return false;
	}
	return true;
}

/*
 * Drop what d's DWARF built for its CUs (libdw's line tables and CU records, our function
 * tables), keeping its debug sections: libdw reads them into the Elf handle, decompressed, and a
 * new Dwarf over the same Elf starts from them. A CU's tables take tens of microseconds to build
 * again; the sections of a big binary took tens of milliseconds to read and decompress. Never
 * between a lookup of d and the use of its answer (its strings would go with the tables).
 */
static void dwarf_reset(struct dso *d)
{
	Dwarf *dw;

	d->dw_reset_due = false;
	dwarf_end(d->dw);
	dwarf_index__delete(d->dw_index);
	d->dw = NULL;
	d->dw_index = NULL;
	dw = dwarf_begin_elf(d->dw_elf, DWARF_C_READ, NULL);
	d->dw_index = dw ? dwarf_index__new() : NULL;
	if (!d->dw_index) {
		/* Closed instead: opened again from the file on its next lookup. */
		if (dw)
			dwarf_end(dw);
		if (d->cache)
			d->cache->dwarf_bytes -= d->dw_bytes;
		d->dw_bytes = 0;
		dwarf_close(d);
		return;
	}
	d->dw = dw;
	if (d->cache)
		d->cache->dwarf_bytes -= d->dw_bytes - d->dw_sections;
	d->dw_bytes = d->dw_sections;
	d->dw_walked = 0;
	if (d->cache)
		d->cache->dwarf_closed++;
}

/*
 * Account for what d's DWARF grew by. Over the budget, drop the CUs' tables of the binary that
 * holds the most of them, when that is enough; else close the least recently used others until
 * the budget holds. The newest is kept even alone over it (it is needed now); when what it built
 * for its CUs is then over a quarter of the budget, its next lookup starts them afresh.
 */
static void dwarf_budget(struct dso_cache *c, struct dso *newest, size_t grew)
{
	struct dso *most = NULL;

	newest->dw_bytes += grew;
	c->dwarf_bytes += grew;
	if (c->dwarf_bytes <= c->max_dwarf_bytes)
		return;
	/* Dropping one binary's CUs' tables is enough: its sections stay, not read again. */
	for (struct dso *d = c->lru_head; d; d = d->lru_next)
		if (d != newest && d->dw &&
		    (!most || d->dw_bytes - d->dw_sections > most->dw_bytes - most->dw_sections))
			most = d;
	if (most && c->dwarf_bytes - (most->dw_bytes - most->dw_sections) <= c->max_dwarf_bytes) {
		dwarf_reset(most);
		return;
	}
	for (struct dso *d = c->lru_tail; d && c->dwarf_bytes > c->max_dwarf_bytes;
	     d = d->lru_prev) {
		if (d == newest || !d->dw)
			continue;
		dwarf_close(d);
		c->dwarf_closed++;
	}
	if (c->dwarf_bytes > c->max_dwarf_bytes &&
	    newest->dw_bytes - newest->dw_sections > c->max_dwarf_bytes / 4)
		newest->dw_reset_due = true;
}

/*
 * An fd on the file d's DWARF is read from, which must still be the one the dso was read from:
 * its separate debug file, else the binary through the path of its latest lookup, else through
 * the path it was mapped from. The path through /proc is gone with a short-lived process (or was
 * an fd of the process watcher's, since closed); the mapped path may still name the same file
 * here, which the identity check tells. -1 when none is.
 */
static int open_dwarf_file(const struct dso *d)
{
	const char *paths[2] = {d->open_path, d->path[0] == '/' ? d->path : NULL};
	struct stat st;
	int fd;

	if (d->debug_path) {
		fd = open(d->debug_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && fid_equal(&d->debug_fid, &st))
			return fd;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!d->have_fid)
		return -1;
	for (size_t i = 0; i < 2; i++) {
		if (!paths[i] || (i && paths[0] && !strcmp(paths[0], paths[1])))
			continue;
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && fid_equal(&d->fid, &st))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* Opens d's DWARF once. */
static Dwarf *dso_dwarf(struct dso *d)
{
	Elf *elf = NULL;
	Dwarf *dw = NULL;
	size_t need;
	int fd;

	if (d->dw && d->dw_reset_due)
		dwarf_reset(d);
	if (d->dwarf_tried)
		return d->dw;
	d->dwarf_tried = true;
	if (!d->readable || !d->open_path)
		return NULL;
	fd = open_dwarf_file(d);
	if (fd < 0)
		return NULL;
	/* As in dso_load(): pread(), not mmap, so that a file truncated under us is an error,
	 * not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto fail;
	/*
	 * DWARF bigger than the whole budget is not read: open, it would close every other binary's
	 * to make room, and be closed in turn by the next of them, each time read and decompressed
	 * again. Its frames keep their names from the symbol table.
	 */
	need = debug_bytes(elf);
	if (d->cache && need > d->cache->max_dwarf_bytes) {
		d->dwarf_too_big = true;
		log_warn(
			"%s: its DWARF is %.1f MiB once read, over limits.max_dwarf_bytes "
			"(%.1f MiB): its frames get no file:line or inline frames; raise the limit "
			"to read it",
			d->debug_path ? d->debug_path : d->path, need / 1048576.0,
			d->cache->max_dwarf_bytes / 1048576.0);
		goto fail;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw || !dwarf_strings_terminated(elf))
		goto fail;
	d->dw_index = dwarf_index__new();
	if (!d->dw_index)
		goto fail;
	/*
	 * dwarf_begin_elf() has read every debug section it uses into memory, so the fd can go:
	 * a dso holds no fds, whatever the number of cached binaries.
	 */
	elf_cntl(elf, ELF_C_FDDONE);
	close(fd);
	d->dw = dw;
	d->dw_elf = elf;
	return dw;
fail:
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	close(fd);
	return NULL;
}

/* The CU containing pc: through .debug_aranges, else (clang, or GCC without aranges) by asking
 * each CU for its ranges. libdw keeps a record of each CU the walk reaches: those reached for
 * the first time are counted into *grew. */
static bool cu_of(struct dso *d, Dwarf_Addr pc, Dwarf_Die *cu, size_t *grew)
{
	Dwarf_Off off = 0, next;
	bool found = false;
	size_t hsize;

	if (dwarf_addrdie(d->dw, pc, cu))
		return true;
	while (!found && dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		found = dwarf_offdie(d->dw, off + hsize, cu) && dwarf_haspc(cu, pc) > 0;
		if (off >= d->dw_walked) {
			*grew += DWARF_CU_BYTES;
			d->dw_walked = next;
		}
		off = next;
	}
	return found;
}

static size_t find_lines_counted(struct dso *d, uint64_t file_addr, struct dso_line *out,
				 size_t max);

size_t dso__find_lines(struct dso *d, uint64_t file_addr, struct dso_line *out, size_t max)
{
	struct line_cache *lc = d && d->cache && out && max ? d->cache->lines : NULL;
	size_t n;

	if (lc && line_cache__get(lc, d->lines_owner, file_addr, max, out, &n))
		return n;
	n = find_lines_counted(d, file_addr, out, max);
	/* Only what the DWARF said is kept: without a handle (none, or a file that cannot be
	 * opened now) the answer costs nothing and may change; and a fetch on the way would give
	 * more lines later. */
	if (lc && d->dw && !dso__debug_pending(d))
		line_cache__put(lc, d->lines_owner, file_addr, max, out, n);
	return n;
}

static size_t find_lines(struct dso *d, uint64_t file_addr, struct dso_line *out, size_t max,
			 size_t *grew);

/* A lookup, and what it made the open DWARF hold counted into the budget. */
static size_t find_lines_counted(struct dso *d, uint64_t file_addr, struct dso_line *out,
				 size_t max)
{
	size_t n, grew = 0;

	n = find_lines(d, file_addr, out, max, &grew);
	if (!d || !d->dw || !d->cache)
		return n;
	if (!d->dw_sections) { /* opened by this lookup */
		d->dw_sections = debug_bytes(d->dw_elf);
		grew += d->dw_sections;
	}
	if (grew)
		dwarf_budget(d->cache, d, grew);
	return n;
}

/* Adds to *grew what the lookup made the open DWARF hold (see DWARF_CU_BYTES). */
static size_t find_lines(struct dso *d, uint64_t file_addr, struct dso_line *out, size_t max,
			 size_t *grew)
{
	struct dwarf_frame frames[DWARF_INDEX_MAX_DEPTH + 1];
	struct dso_line all[DWARF_INDEX_MAX_DEPTH + 1];
	const char *file = NULL, *comp_dir;
	struct dwarf_index_stats before, after;
	Dwarf_Attribute ca;
	Dwarf_Line *line;
	Dwarf_Lines *table;
	size_t n = 0, rows;
	bool first, built;
	Dwarf_Die cu;
	int lineno = 0, nf;

	if (!d || !out || !max || !dso_dwarf(d) || !cu_of(d, file_addr, &cu, grew))
		return 0;
	first = !dwarf_index__has(d->dw_index, &cu);
	dwarf_index__stats(d->dw_index, &before);
	comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &ca));
	line = dwarf_getsrc_die(&cu, file_addr);
	if (line) {
		file = dwarf_linesrc(line, NULL, NULL);
		if (dwarf_lineno(line, &lineno) || lineno < 0)
			lineno = 0;
	}
	nf = dwarf_index__frames(d->dw_index, &cu, file_addr, frames, DWARF_INDEX_MAX_DEPTH + 1,
				 &built);
	if (first) {
		/* The line table was built by dwarf_getsrc_die() above; asking again reads it. */
		if (dwarf_getsrclines(&cu, &table, &rows))
			rows = 0;
		dwarf_index__stats(d->dw_index, &after);
		*grew += DWARF_CU_BYTES + rows * DWARF_LINE_ROW_BYTES +
			 (after.bytes > before.bytes ? after.bytes - before.bytes : 0);
	}
	if (nf <= 0) {
		/* Lines without a function DIE: the caller names it from the symbol table. */
		if (!line)
			return 0;
		out[0] = (struct dso_line){.file = file, .comp_dir = comp_dir, .line = lineno};
		return 1;
	}
	/* The innermost frame is where the line table says; each inlined frame's caller is at
	 * that frame's call site. */
	for (int i = 0; i < nf; i++) {
		all[n++] = (struct dso_line){.function = frames[i].function,
					     .file = file,
					     .comp_dir = comp_dir,
					     .line = lineno};
		file = frames[i].call_file;
		lineno = (int)frames[i].call_line;
	}
	if (n <= max) {
		memcpy(out, all, n * sizeof(*out));
		return n;
	}
	/* Too deep: the innermost frames, and the real function last. */
	memcpy(out, all, (max - 1) * sizeof(*out));
	out[max - 1] = all[n - 1];
	return max;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * A dso's DWARF handle. DWARF is big and most binaries never need it, so it is opened on the
 * first line lookup, from a file that must still be the one the dso was read from, and refused
 * when its debug sections alone are over the cache's budget. The budget itself (who is closed
 * when it is exceeded) is the cache's: dso_cache.c.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/elf_limits.h"
#include "base/log.h"
#include "base/safe_open.h"
#include "symbols/dso_internal.h"
#include "symbols/dwarf_index.h"

void dso__dwarf_close(struct dso *d)
{
	if (d->dw)
		dwarf_end(d->dw);
	if (d->dw_elf)
		elf_end(d->dw_elf);
	dwarf_index__delete(d->dw_index);
	if (d->cache)
		d->cache->dwarf_bytes -= d->dw_bytes;
	d->dw = NULL;
	d->dw_elf = NULL;
	d->dw_index = NULL;
	d->dw_bytes = 0;
	d->dw_sections = 0;
	d->dw_libdw = 0;
	d->dw_indexed = 0;
	d->dw_busy = false;
	d->dw_all = false;
	d->dw_opens = 0;
	d->dw_reset_due = false;
	d->dwarf_tried = false;
}

/*
 * Let d's libdw handle go (its debug sections, decompressed, and libdw's records of its CUs),
 * keeping the tables built from it: lookups in the CUs met so far are answered without it, and
 * the file is opened again for a CU not met before.
 */
void dso__dwarf_release(struct dso *d)
{
	size_t freed = d->dw_sections + d->dw_libdw;

	if (!d->dw)
		return;
	dwarf_end(d->dw);
	elf_end(d->dw_elf);
	d->dw = NULL;
	d->dw_elf = NULL;
	if (d->cache)
		d->cache->dwarf_bytes -= freed;
	d->dw_bytes -= freed;
	d->dw_sections = 0;
	d->dw_libdw = 0;
	d->dw_busy = false;
	d->dwarf_tried = false;
}

/* A debug section's size once read: a compressed one's (SHF_COMPRESSED, or GNU .zdebug) from its
 * header, without decompressing it. */
static size_t inflated_bytes(Elf *elf, const GElf_Shdr *sh, const char *name)
{
	const unsigned char *p;
	Elf_Data *raw;
	size_t n = 0;

	/*
	 * Only the header, converted to host order: gelf_getchdr() reads the whole compressed
	 * section, which libelf then keeps until elf_end(), also for a section hidden from libdw
	 * and never read (libc6-dbg's .debug_loclists: 0.6 MiB).
	 */
	if (sh->sh_flags & SHF_COMPRESSED) {
		bool is64 = gelf_getclass(elf) == ELFCLASS64;

		raw = elf_getdata_rawchunk(elf, sh->sh_offset,
					   is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr),
					   ELF_T_CHDR);
		if (raw && raw->d_buf && is64 && raw->d_size >= sizeof(Elf64_Chdr))
			return ((const Elf64_Chdr *)raw->d_buf)->ch_size;
		if (raw && raw->d_buf && !is64 && raw->d_size >= sizeof(Elf32_Chdr))
			return ((const Elf32_Chdr *)raw->d_buf)->ch_size;
	}
	if (strncmp(name, ".zdebug_", 8))
		return sh->sh_size;
	/* Only the 12 bytes of the header: elf_rawdata() would read the whole section. */
	raw = elf_getdata_rawchunk(elf, sh->sh_offset, 12, ELF_T_BYTE);
	p = raw ? raw->d_buf : NULL;
	if (!p || raw->d_size < 12 || memcmp(p, "ZLIB", 4))
		return sh->sh_size;
	for (int i = 4; i < 12; i++) /* big-endian */
		n = n << 8 | p[i];
	return n;
}

/* The debug sections' sizes once read (decompressed, or as they are in the file when that is
 * more), before or after libdw reads them. A corrupt header, or a section name table over its
 * cap, makes a huge size, which no budget admits. path names the file in warnings. */
size_t elf_debug_bytes(Elf *elf, const char *path)
{
	size_t shstrndx, total = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	/* Names unreadable under their cap: nothing is read either. */
	if (!elf_limits__names_fit(elf, &shstrndx, path))
		return SIZE_MAX;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		/*
		 * The bytes read from the file count too: a compressed section's header may claim
		 * a few bytes once inflated while the section itself spans a sparse gigabyte.
		 */
		n = inflated_bytes(elf, &sh, name);
		if (sh.sh_size > n)
			n = sh.sh_size;
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
 * Drop the tables d's DWARF built for its CUs (ours, and libdw's line tables and CU records),
 * keeping its CU map and, when open, its debug sections: libdw reads them into the Elf handle,
 * decompressed, and a new Dwarf over the same Elf starts from them. A CU's tables take tens of
 * microseconds to build again; the sections of a big binary took tens of milliseconds to read
 * and decompress. Never between a lookup of d and the use of its answer (its strings go with the
 * tables).
 */
void dso__dwarf_reset(struct dso *d)
{
	struct dwarf_index_stats st;
	size_t before = d->dw_bytes;

	d->dw_reset_due = false;
	d->dw_all = false;
	dwarf_index__drop_cus(d->dw_index);
	dwarf_index__stats(d->dw_index, &st);
	d->dw_indexed = d->dw_index ? st.bytes : 0;
	d->dw_bytes = d->dw_sections + d->dw_libdw + d->dw_indexed;
	if (d->cache)
		d->cache->dwarf_bytes -= before - d->dw_bytes;
	dso__dwarf_restart(d);
	if (d->cache)
		d->cache->dwarf_closed++;
}

bool dso__dwarf_restart(struct dso *d)
{
	if (!d->dw)
		return false;
	dwarf_end(d->dw);
	d->dw = dwarf_begin_elf(d->dw_elf, DWARF_C_READ, NULL);
	if (d->cache)
		d->cache->dwarf_bytes -= d->dw_libdw;
	d->dw_bytes -= d->dw_libdw;
	d->dw_libdw = 0;
	if (d->dw)
		return true;
	/* Let go instead: opened again from the file when needed. */
	elf_end(d->dw_elf);
	d->dw_elf = NULL;
	if (d->cache)
		d->cache->dwarf_bytes -= d->dw_sections;
	d->dw_bytes -= d->dw_sections;
	d->dw_sections = 0;
	d->dwarf_tried = false;
	return false;
}

/*
 * Debug sections that libdw reads (and decompresses) whole at dwarf_begin_elf() but that no
 * lookup of ours reaches: variables' locations, macros, name indexes and CFI. Lines and inline
 * chains need .debug_info, .debug_abbrev, .debug_line, .debug_str, .debug_line_str,
 * .debug_str_offsets, .debug_addr, .debug_aranges and the range lists. In libc6-dbg (2.36)
 * .debug_loclists alone is 1.4 MiB of the 9.8 MiB read.
 */
static const char *const unread_sections[] = {
	"loc",	    "loclists",	    "macro",	    "macinfo", "pubnames",
	"pubtypes", "gnu_pubnames", "gnu_pubtypes", "frame",
};

static bool unread_section(const char *name)
{
	if (!strncmp(name, ".debug_", 7))
		name += 7;
	else if (!strncmp(name, ".zdebug_", 8))
		name += 8;
	else
		return false;
	for (size_t i = 0; i < sizeof(unread_sections) / sizeof(unread_sections[0]); i++)
		if (!strcmp(name, unread_sections[i]))
			return true;
	return false;
}

/*
 * Hide those sections from libdw, which skips a section of type SHT_NOBITS (a stripped one).
 * Only the in-memory header of elf changes (read with ELF_C_READ: nothing is written back).
 * elf_debug_bytes() skips them too, so that the budget counts what is read.
 */
static void hide_unread_sections(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !unread_section(name))
			continue;
		sh.sh_type = SHT_NOBITS;
		gelf_update_shdr(scn, &sh);
	}
}

/* An fd on path when it is still the file fid describes, else -1. */
static int open_same_file(const char *path, const struct file_id *fid)
{
	struct stat st;
	int fd = safe_open(path, SAFE_OPEN_MAX_ELF_BYTES, &st);

	if (fd >= 0 && fid_equal(fid, &st))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * An fd on the file d's DWARF is read from, which must still be the one the dso was read from:
 * its separate debug file, else the binary through the path of its latest lookup (through
 * /proc, resolved inside the process's root). Never the display path: that is the path inside
 * the process's mount namespace, and opened here it names a file of the host's (a container
 * binary called /run/initctl would open the host's FIFO). -1 when none is.
 */
static int open_dwarf_file(const struct dso *d)
{
	if (d->debug_path)
		return open_same_file(d->debug_path, &d->debug_fid);
	if (!d->have_fid || !d->open_path)
		return -1;
	return open_same_file(d->open_path, &d->fid);
}

/* Opens d's DWARF once. */
Dwarf *dso__dwarf_open(struct dso *d)
{
	Elf *elf = NULL;
	Dwarf *dw = NULL;
	size_t need;
	int fd;

	if (d->dwarf_tried)
		return d->dw;
	d->dwarf_tried = true;
	if (!d->readable || !d->open_path)
		return NULL;
	fd = open_dwarf_file(d);
	if (fd < 0)
		return NULL;
	/* As in dso__load(): pread(), not mmap, so that a file truncated under us is an error,
	 * not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto fail;
	/*
	 * DWARF bigger than the whole budget is not read: open, it would close every other binary's
	 * to make room, and be closed in turn by the next of them, each time read and decompressed
	 * again. Its frames keep their names from the symbol table.
	 */
	need = elf_debug_bytes(elf, d->debug_path ? d->debug_path : d->open_path);
	/* The section names were found within their cap (else need is SIZE_MAX): what is left
	 * once the unread sections are hidden is what the budget must admit. */
	if (need != SIZE_MAX) {
		hide_unread_sections(elf);
		need = elf_debug_bytes(elf, d->debug_path ? d->debug_path : d->open_path);
	}
	if (d->cache && need > d->cache->max_dwarf_bytes) {
		d->dwarf_too_big = true;
		log_warn("%s: its DWARF is %.1f MiB once read, over the DWARF budget (%.1f MiB): "
			 "its frames get no file:line or inline frames; raise %s to read it",
			 d->debug_path ? d->debug_path : d->path, need / 1048576.0,
			 d->cache->max_dwarf_bytes / 1048576.0,
			 d->cache->max_dwarf_name ? d->cache->max_dwarf_name : "the budget");
		goto fail;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw || !dwarf_strings_terminated(elf))
		goto fail;
	/* Kept from an earlier handle: the tables it built still hold. */
	if (!d->dw_index && !(d->dw_index = dwarf_index__new()))
		goto fail;
	/*
	 * dwarf_begin_elf() has read every debug section it uses into memory, so the fd can go:
	 * a dso holds no fds, whatever the number of cached binaries.
	 */
	elf_cntl(elf, ELF_C_FDDONE);
	close(fd);
	d->dw = dw;
	d->dw_elf = elf;
	d->dw_busy = true;
	if (dwarf_index__mapped(d->dw_index)) {
		d->dw_opens++;
		if (d->cache)
			d->cache->dwarf_reopened++;
	}
	return dw;
fail:
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	close(fd);
	return NULL;
}

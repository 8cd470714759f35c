// SPDX-License-Identifier: BSD-2-Clause
/*
 * Binaries, read once per identity. A dso keeps only what symbolization needs (load segments,
 * build-id, a sorted function table with its own copy of the names): the file and its Elf handle
 * are closed as soon as it is loaded, so an agent watching thousands of binaries holds no fds.
 *
 * This file is the object itself: how it ends, how it fails, and what it answers. Reading it is
 * elf_symtab.c and dso_load.c, its debug files debug_file.c, its cache dso_cache.c, its DWARF
 * dso_dwarf.c and dso_lines.c (dso_internal.h says who calls whom).
 */
#include <errno.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/search.h"
#include "base/strpack.h"
#include "symbols/dso.h"
#include "symbols/dso_internal.h"

void dso__free(struct dso *d)
{
	if (!d)
		return;
	dso__dwarf_close(d);
	free(d->open_path);
	free(d->debug_path);
	free(d->path);
	free(d->error);
	free(d->segs);
	free(d->syms);
	strpack__delete(d->names);
	free(d->name_buf);
	free(d);
}

int dso__fail(struct dso *d, const char *fmt, ...)
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
	strpack__delete(d->names);
	free(d->name_buf);
	d->segs = NULL;
	d->syms = NULL;
	d->names = NULL;
	d->name_buf = NULL;
	d->names_bytes = 0;
	d->nsegs = d->nsyms = 0;
	d->build_id_len = 0;
	d->build_id_hex[0] = '\0';
	return -EINVAL;
}

bool dso__debug_pending(const struct dso *d)
{
	return d && (d->fetch == FETCH_WANTED || d->fetch == FETCH_PENDING);
}

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

bool dso__load_bias(const struct dso *d, uint64_t map_start, uint64_t map_pgoff, uint64_t *bias)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!d || page <= 0)
		return false;
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct load_seg *s = &d->segs[i];

		/* The segment's first byte sits at its offset into the page the mapping starts. */
		if (s->offset < map_pgoff || s->offset - map_pgoff >= (uint64_t)page)
			continue;
		*bias = map_start + (s->offset - map_pgoff) - s->vaddr;
		return true;
	}
	return false;
}

bool dso__find_symbol(const struct dso *d, uint64_t file_addr, struct dso_symbol *sym)
{
	size_t lo;
	const struct dso_sym *s;

	if (!d || !d->nsyms)
		return false;
	/* The last symbol starting at or before file_addr. */
	lo = SEARCH_UPPER_BOUND(d->syms, d->nsyms, addr, file_addr);
	if (!lo)
		return false;
	s = &d->syms[lo - 1];
	if (file_addr - s->addr >= s->len)
		return false;
	if (sym) {
		/* name_buf holds the longest name: this cannot fail. */
		sym->name = strpack__get(d->names, s->name, d->name_buf, d->names_max + 1);
		if (!sym->name)
			return false;
		sym->addr = s->addr;
		sym->size = s->sized ? s->len : 0;
	}
	return true;
}

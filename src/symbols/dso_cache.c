// SPDX-License-Identifier: BSD-2-Clause
/*
 * The cache of binaries by identity (device, inode, and the build-id when an inode is reused),
 * never by path: the same library mapped by many processes, or seen through different container
 * roots, is read once. Bounded in entries and in the bytes of their symbol tables (least recently
 * used evicted), and in the bytes of open DWARF handles (least recently used closed), and the
 * owner of the line cache.
 */
#include <errno.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/chain.h"
#include "base/safe_open.h"
#include "symbols/dso_internal.h"
#include "symbols/line_cache.h"

#define DSO_DEBUG_ROOT "/usr/lib/debug"

#define DSO_MAX_BUCKET_BITS 16

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
	c->max_sym_bytes = DSO_DEFAULT_SYMBOL_BYTES;
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

static struct dso *dso_of(const struct lru_link *l)
{
	return LRU_ENTRY(l, struct dso, lru);
}

void dso_cache__delete(struct dso_cache *c)
{
	struct dso *d, *next;

	if (!c)
		return;
	for (d = dso_of(lru__newest(&c->lru)); d; d = next) {
		next = dso_of(d->lru.older);
		dso__free(d);
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
	lru__touch(&c->lru, &d->lru);
	d->last_use = ++c->clock;
	return d;
}

static void cache_remove(struct dso_cache *c, struct dso *d)
{
	CHAIN_UNLINK(&c->buckets[dso_bucket(c, d->dev, d->inode)], d, hnext);
	lru__unlink(&c->lru, &d->lru);
	c->n--;
	c->sym_bytes -= d->sym_bytes;
	dso__free(d);
}

static size_t sym_bytes(const struct dso *d)
{
	return d->nsyms * sizeof(*d->syms) + d->names_bytes;
}

/*
 * Evict the least recently used binaries other than keep while over the symbol budget. Those
 * with an open DWARF handle stay: the DWARF budget bounds them, and reading a debug file again
 * (libc's: 8 MiB decompressed) costs far more than a symbol table. Those holding only tables
 * built from their DWARF go with them: kept, any number of small binaries' tables would keep
 * their symbol tables past the budget.
 */
static void keep_symbol_budget(struct dso_cache *c, const struct dso *keep)
{
	struct dso *d = dso_of(lru__oldest(&c->lru));

	while (d && c->sym_bytes > c->max_sym_bytes) {
		struct dso *newer = dso_of(d->lru.newer);

		if (d != keep && !d->dw)
			cache_remove(c, d);
		d = newer;
	}
}

/* Count d's symbol tables again (a debug file's adopted): they may have grown. */
static void recount_symbols(struct dso_cache *c, struct dso *d)
{
	c->sym_bytes -= d->sym_bytes;
	d->sym_bytes = sym_bytes(d);
	c->sym_bytes += d->sym_bytes;
	keep_symbol_budget(c, d);
}

static void cache_insert(struct dso_cache *c, struct dso *d)
{
	if (c->n >= c->max_dsos)
		cache_remove(c, dso_of(lru__oldest(&c->lru)));
	CHAIN_PUSH(&c->buckets[dso_bucket(c, d->dev, d->inode)], d, hnext);
	lru__push_front(&c->lru, &d->lru);
	d->last_use = ++c->clock;
	d->lines_owner = ++c->lines_owners;
	c->n++;
	d->sym_bytes = 0;
	recount_symbols(c, d);
}

void dso_cache__set_symbol_budget(struct dso_cache *c, size_t bytes)
{
	c->max_sym_bytes = bytes;
	keep_symbol_budget(c, dso_of(lru__newest(&c->lru)));
}

static bool same_build_id(const struct dso *a, const struct dso *b)
{
	return a->readable && b->readable && a->build_id_len &&
	       a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

void dso_cache__set_dwarf_budget(struct dso_cache *c, size_t bytes, const char *name)
{
	c->max_dwarf_name = name;
	/* What was too big for the old budget may fit the new one. */
	for (struct dso *d = dso_of(lru__newest(&c->lru)); d; d = dso_of(d->lru.older))
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
	for (const struct dso *d = dso_of(lru__newest(&c->lru)); d; d = dso_of(d->lru.older))
		bytes += sizeof(*d) + d->nsegs * sizeof(*d->segs) + d->nsyms * sizeof(*d->syms) +
			 d->names_bytes + opt_bytes(d->path) + opt_bytes(d->error) +
			 opt_bytes(d->open_path) + opt_bytes(d->debug_path);
	return bytes;
}

uint64_t dso_cache__denied(const struct dso_cache *c)
{
	return c->denied;
}

void dso_cache__dwarf_stats(const struct dso_cache *c, struct dso_dwarf_stats *out)
{
	*out = (struct dso_dwarf_stats){.bytes = c->dwarf_bytes,
					.closed = c->dwarf_closed,
					.released = c->dwarf_released,
					.reopened = c->dwarf_reopened};
	for (const struct dso *d = dso_of(lru__newest(&c->lru)); d; d = dso_of(d->lru.older)) {
		out->handles += d->dw != NULL;
		out->complete += d->dw_all;
		out->indexed_bytes += d->dw_indexed;
	}
}

/* What d's DWARF built for its CUs: dropped by dso__dwarf_reset(), the sections kept. */
static size_t tables_of(const struct dso *d)
{
	return d->dw_libdw + d->dw_indexed;
}

/*
 * Account for what d's DWARF grew by. Over the budget, let the others' handles go first, least
 * recently used first: they keep their tables, so only a CU none of them has met needs its file
 * again. Still over, drop the tables of the binary that holds the most of them, when that is
 * enough; else close the least recently used others wholly until the budget holds. The newest
 * is kept even alone over it (it is needed now); when what it built for its CUs is then over a
 * quarter of the budget, its next lookup starts them afresh.
 */
void dso_cache__dwarf_grew(struct dso_cache *c, struct dso *newest, size_t grew)
{
	struct dso *most = NULL;

	newest->dw_bytes += grew;
	c->dwarf_bytes += grew;
	for (struct dso *d = dso_of(lru__oldest(&c->lru)); d && c->dwarf_bytes > c->max_dwarf_bytes;
	     d = dso_of(d->lru.newer))
		if (d != newest && d->dw) {
			dso__dwarf_release(d);
			c->dwarf_released++;
		}
	if (c->dwarf_bytes <= c->max_dwarf_bytes)
		return;
	for (struct dso *d = dso_of(lru__newest(&c->lru)); d; d = dso_of(d->lru.older))
		if (d != newest && tables_of(d) && (!most || tables_of(d) > tables_of(most)))
			most = d;
	if (most && c->dwarf_bytes - tables_of(most) <= c->max_dwarf_bytes) {
		dso__dwarf_reset(most);
		return;
	}
	for (struct dso *d = dso_of(lru__oldest(&c->lru)); d && c->dwarf_bytes > c->max_dwarf_bytes;
	     d = dso_of(d->lru.newer)) {
		if (d == newest || !d->dw_bytes)
			continue;
		dso__dwarf_close(d);
		c->dwarf_closed++;
	}
	if (c->dwarf_bytes > c->max_dwarf_bytes && tables_of(newest) > c->max_dwarf_bytes / 4)
		newest->dw_reset_due = true;
}

size_t dso_cache__release_idle(struct dso_cache *c)
{
	size_t n = 0;

	for (struct dso *d = dso_of(lru__newest(&c->lru)); d; d = dso_of(d->lru.older)) {
		if (!d->dw)
			continue;
		if (d->dw_busy) {
			d->dw_busy = false;
			continue;
		}
		dso__dwarf_release(d);
		c->dwarf_released++;
		n++;
	}
	return n;
}

void dso_cache__set_fetcher(struct dso_cache *c, struct debuginfod_fetch *f)
{
	c->fetch = f;
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
	have_st = open_path && !safe_open__stat(open_path, &st);
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

	fresh = dso__load(dev, inode, open_path, display_path,
			  c->debug_root ? c->debug_root : DSO_DEBUG_ROOT);
	if (!fresh)
		return NULL;
	c->denied += fresh->denied;
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
				/* Tables built from the file still describe it. */
				if (!d->dw_index)
					d->lines_owner = ++c->lines_owners;
			}
			set_open_path(d, open_path);
			dso__free(fresh);
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
	if (d && debug_file__poll_fetch(d, c->fetch)) {
		d->lines_owner = ++c->lines_owners;
		recount_symbols(c, d);
	}
	return d;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The private side of symbols/dso.h: the layout of a dso and of its cache, and the calls between
 * the files of the dso module. Only those files include it (dso.c, elf_symtab.c, debug_file.c,
 * dso_load.c, dso_cache.c, dso_dwarf.c, dso_lines.c); everything else speaks symbols/dso.h.
 *
 * The files call one another one way only, each using those after it:
 *   dso_lines   line lookups, and what they add to the DWARF budget
 *   dso_cache   binaries by identity, their LRU, bounds and DWARF budget
 *   dso_load    opening one binary (and its htlhash)
 *   debug_file  separate debug files: build-id path, .gnu_debuglink, debuginfod
 *   elf_symtab  an ELF file's segments, build-id and function symbols
 *   dso         the object: freeing, failing, accessors and address queries
 *   dso_dwarf   a dso's DWARF handle: opening, letting go, restarting, closing, dropping its
 *               CUs' tables
 */
#ifndef HOSTPROF_DSO_INTERNAL_H
#define HOSTPROF_DSO_INTERNAL_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/lru.h"
#include "base/strpack.h"
#include "symbols/dso.h"

struct dwarf_index;
struct line_cache;

/*
 * 16 bytes a function: a binary's table is held for as long as the binary is cached, and the
 * symbol tables of the binaries a busy host runs were the agent's biggest item (half of it these
 * entries, at 32 bytes before). A function longer than 4 GiB is read as 4 GiB long.
 */
struct dso_sym {
	uint64_t addr;
	uint32_t len; /* to the exclusive end: size, or up to the next symbol when size is 0 */
	uint32_t name : 31; /* id in dso->names */
	uint32_t sized : 1; /* the ELF size is len (else it is 0) */
};

_Static_assert(sizeof(struct dso_sym) == 16, "dso_sym should stay compact");

/* The names' bytes before packing (and so their ids) stay under 2^31. */
#define DSO_NAMES_MAX ((size_t)1 << 31)

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
	bool denied; /* could not be opened for want of permission (EACCES, EPERM) */
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
	/* The names, front-coded (a third to a half smaller for C++ names), and a buffer that the
	 * last one looked up is decoded into, as long as the longest. */
	struct strpack *names;
	char *name_buf;
	size_t names_max;   /* the longest name's length */
	size_t names_bytes; /* both */

	/*
	 * DWARF is big and most binaries never need it (no sample lands in them, or they have
	 * none), so it is opened on the first line lookup, from the path the latest lookup came
	 * through, and lives exactly as long as the dso: the cache's bound bounds the handles too.
	 */
	char *open_path;
	Dwarf *dw;
	Elf *dw_elf;
	/* Its CU map and the tables of the CUs met (dwarf_index.h): they outlive the handle. */
	struct dwarf_index *dw_index;
	size_t dw_bytes;    /* what its DWARF holds in memory, as counted: the three below */
	size_t dw_sections; /* the open handle's debug sections */
	size_t dw_libdw;    /* the open handle's CU records and line tables */
	size_t dw_indexed;  /* the index */
	bool dw_busy;	    /* opened, or a CU's tables built, since the last idle check */
	bool dw_all;	    /* every CU's tables built: the file is not needed again */
	uint32_t dw_opens;  /* handles opened with the CU map read: a count that keeps climbing
			     * says its code is met a CU at a time (see dso_lines.c) */
	bool dw_reset_due;  /* alone over the budget: drop its CUs' tables */
	bool dwarf_too_big; /* its sections alone are over the budget: not read */
	bool dwarf_tried;   /* an open was attempted: a file without usable DWARF is not retried */
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
	struct lru_link lru;
	uint64_t last_use;
	size_t sym_bytes; /* counted into the cache's symbol budget */
};

struct dso_cache {
	size_t max_dsos;
	size_t n;
	struct dso **buckets;
	unsigned int bucket_bits;
	struct lru lru;	  /* the oldest is evicted first */
	uint64_t clock;	  /* bumped on every use; orders entries that share an identity */
	char *debug_root; /* NULL: DSO_DEBUG_ROOT; "": no lookups under a root */
	struct debuginfod_fetch *fetch; /* borrowed; NULL: no debuginfod */
	/* The debug sections of big binaries (libc's debug file, libpython) take tens of MiB
	 * each: the open DWARF handles have a byte budget of their own, least recently used
	 * closed first (and opened again when needed). */
	size_t dwarf_bytes, max_dwarf_bytes;
	size_t sym_bytes, max_sym_bytes; /* the symbol tables' budget */
	const char *max_dwarf_name;	 /* the setting that raises the budget; NULL: not known */
	uint64_t denied; /* binaries loaded that could not be opened for want of permission */
	/* Line lookups answered before, whatever happened to the handles since (line_cache.h). */
	struct line_cache *lines;
	uint64_t lines_owners;	 /* the last owner given out */
	uint64_t dwarf_closed;	 /* tables dropped to keep the budget */
	uint64_t dwarf_released; /* handles let go, their tables kept */
	uint64_t dwarf_reopened; /* handles opened again after one was let go */
};

static inline void fid_from_stat(struct file_id *fid, const struct stat *st)
{
	fid->dev = st->st_dev;
	fid->ino = st->st_ino;
	fid->size = st->st_size;
	fid->mtime = st->st_mtim;
	fid->ctime = st->st_ctim;
}

static inline bool fid_equal(const struct file_id *a, const struct stat *st)
{
	return a->dev == st->st_dev && a->ino == st->st_ino && a->size == st->st_size &&
	       a->mtime.tv_sec == st->st_mtim.tv_sec && a->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       a->ctime.tv_sec == st->st_ctim.tv_sec && a->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* dso.c */

void dso__free(struct dso *d);
/*
 * Marks d unreadable with a message. Returns -EINVAL, the error of a corrupt or unreadable file,
 * or -ENOMEM when even the message cannot be kept.
 */
int __attribute__((format(printf, 2, 3))) dso__fail(struct dso *d, const char *fmt, ...);

/* elf_symtab.c */

/* What a binary says about its separate debug file, gathered while its sections are read. */
struct debug_hints {
	bool has_symtab;
	bool has_debug_info;
	char link[256]; /* the .gnu_debuglink file name, "" when none */
	uint32_t link_crc;
};

/*
 * Reads the ELF contents into d, and into hints (which may be NULL) what a search for a separate
 * debug file needs. Returns 0, -EINVAL after dso__fail(), or -ENOMEM.
 */
int elf_symtab__read(struct dso *d, Elf *elf, uint64_t file_size, struct debug_hints *hints);

/* debug_file.c */

/*
 * Looks for the separate debug file of a stripped binary on this host, under root ("": beside
 * the binary only). Failures are quiet: the binary's .dynsym is what it was without a debug file,
 * and debuginfod may still have one.
 */
void debug_file__use(struct dso *d, const char *open_path, const char *display_path,
		     const char *root, const struct debug_hints *h);
/*
 * Asks f about d's debug file when there may be news (see the definition). Returns true when a
 * file arrived and was adopted: what d's lines are read from has changed.
 */
bool debug_file__poll_fetch(struct dso *d, struct debuginfod_fetch *f);

/* dso_load.c */

/*
 * Opens and reads one binary, and its separate debug file when it is stripped. Returns NULL only
 * when memory runs out; a file that cannot be read yields a dso with readable == false.
 */
struct dso *dso__load(uint64_t dev, uint64_t inode, const char *open_path, const char *display_path,
		      const char *debug_root);

/* dso_cache.c */

/*
 * Account for what newest's DWARF grew by; over the budget, drop the CUs' tables of another
 * binary or close the least recently used others (see the definition).
 */
void dso_cache__dwarf_grew(struct dso_cache *c, struct dso *newest, size_t grew);

/* dso_dwarf.c */

/* Opens d's DWARF handle once (again after a close or a release); NULL when there is none to
 * use. */
Dwarf *dso__dwarf_open(struct dso *d);
/* Close d's DWARF, handle and tables; a later line lookup opens it again. */
void dso__dwarf_close(struct dso *d);
/* Let d's handle go, keeping its tables (see the definition). */
void dso__dwarf_release(struct dso *d);
/* Drop what d's DWARF built for its CUs, keeping its CU map and debug sections (see the
 * definition). */
void dso__dwarf_reset(struct dso *d);
/* Start d's open handle afresh over the sections it read, dropping libdw's records of its CUs
 * (not our tables). false when that failed: the handle is then let go. */
bool dso__dwarf_restart(struct dso *d);
/* The debug sections' sizes once read (decompressed, or as in the file when that is more),
 * before or after libdw reads them; SIZE_MAX when they must not be read. */
size_t elf_debug_bytes(Elf *elf, const char *path);

#endif /* HOSTPROF_DSO_INTERNAL_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One object per binary identity (device, inode, build-id): its ELF symbol tables, load segments
 * and build-id. Binaries are cached by identity, never by path, so the same library mapped by many
 * processes (or seen through different container roots) is read once.
 */
#ifndef HOSTPROF_DSO_H
#define HOSTPROF_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DSO_BUILD_ID_MAX 20

struct dso;
struct dso_cache;

struct dso_symbol {
	const char *name; /* owned by the dso: valid until the next dso_cache__get() */
	uint64_t addr;	  /* ELF virtual address of the symbol's start */
	uint64_t size;
};

/* Returns NULL and sets errno on failure. max_dsos caps the cache (least recently used evicted). */
struct dso_cache *dso_cache__new(size_t max_dsos);
void dso_cache__delete(struct dso_cache *c);
/*
 * Where separate debug files of stripped binaries are looked for, by build-id
 * (<dir>/.build-id/xx/rest.debug) and by .gnu_debuglink (<dir>/<binary's directory>/name, after the
 * binary's own directory and its .debug/). NULL restores the default, /usr/lib/debug; "" searches
 * beside the binary only. Binaries already cached keep what they found. Returns 0 or -errno.
 */
int dso_cache__set_debug_root(struct dso_cache *c, const char *dir);

struct debuginfod_fetch;
/*
 * Ask debuginfod (through f, borrowed: it must outlive the cache) for the debug file of binaries
 * that have a build-id but no DWARF or no .symtab, here or in a local debug file. The ask never
 * blocks: while the fetch runs the binary is symbolized without it (dso__debug_pending() says
 * so), and the dso_cache__get() after it ended adopts the file, once its build-id is checked.
 * Set it before the first dso_cache__get(); NULL switches it off for binaries read later.
 */
void dso_cache__set_fetcher(struct dso_cache *c, struct debuginfod_fetch *f);

/*
 * The dso for the file with this identity, opening `open_path` (a path that this process can open,
 * e.g. /proc/PID/map_files/...) on first use. A file that cannot be opened or is not a valid ELF
 * still yields a dso, marked unreadable, so that its frames become "[unknown]" without retrying
 * the open for every sample. Returns NULL only on allocation failure.
 * Each call stat()s open_path: a file that changed behind the same (dev, inode) (inode reuse) is
 * read again, and becomes a separate dso when its build-id differs.
 * The pointer is valid until the next dso_cache__get() on the same cache.
 */
struct dso *dso_cache__get(struct dso_cache *c, uint64_t dev, uint64_t inode, const char *open_path,
			   const char *display_path);
size_t dso_cache__size(const struct dso_cache *c);
/* Whether a readable binary of this identity is cached (nothing is read or checked). */
bool dso_cache__has(const struct dso_cache *c, uint64_t dev, uint64_t inode);
/* Bytes held by the cached binaries' tables (symbols, names, segments), DWARF handles aside. */
size_t dso_cache__memory(const struct dso_cache *c);

#define DSO_DEFAULT_DWARF_BYTES (14u << 20)
/*
 * Bound the memory of DWARF: the open handles (their debug sections, read and decompressed, and
 * libdw's records) and the tables built for the CUs met. Beyond it the least recently used
 * handles are let go, their tables kept; then the biggest tables are dropped, or the least
 * recently used binaries' DWARF closed, to be opened again on their next line lookup. One alone
 * over the budget stays open while it is the newest, and drops its CUs' tables (keeping its
 * sections) once they are over a quarter of the budget. A binary whose debug sections alone are
 * over the budget is not read (a warning names it). Default DSO_DEFAULT_DWARF_BYTES.
 */
void dso_cache__set_dwarf_budget(struct dso_cache *c, size_t bytes, const char *name);
/* 6 MiB of front-coded names hold what 8 MiB held when the names were stored whole. */
#define DSO_DEFAULT_SYMBOL_BYTES (6u << 20)
/*
 * Bound the bytes of the cached binaries' symbol tables (entries and names): beyond it the least
 * recently used binaries are evicted, as beyond max_dsos, and read again when met again. The
 * newest stays even alone over it, and so do binaries with an open DWARF handle (the DWARF
 * budget bounds those, and their debug sections are the costly part to read again). Without it a
 * host that runs many binaries (builds, tests) kept every one it had sampled up to max_dsos: 64 MiB
 * on a busy machine. Default DSO_DEFAULT_SYMBOL_BYTES.
 */
void dso_cache__set_symbol_budget(struct dso_cache *c, size_t bytes);
/* Binaries that could not be opened for want of permission (a directory only its owner reads). */
uint64_t dso_cache__denied(const struct dso_cache *c);
struct dso_dwarf_stats {
	size_t bytes;	      /* held by DWARF handles and tables, as counted */
	size_t indexed_bytes; /* of which the tables (dwarf_index.h), which outlive the handles */
	size_t handles;	      /* handles open */
	size_t complete;      /* binaries with every CU's tables built, never opened again */
	uint64_t closed;      /* tables dropped, or DWARF closed, to keep the budget */
	uint64_t released;    /* handles let go, their tables kept: idle, or to keep the budget */
	uint64_t reopened;    /* handles opened again for a CU not met before */
};
void dso_cache__dwarf_stats(const struct dso_cache *c, struct dso_dwarf_stats *out);
/*
 * Let go of the DWARF handles that built nothing since the last call (nor were opened): their
 * tables answer the CUs met, and their debug sections, decompressed, are most of what they
 * hold. Called after each drain's frames are symbolized (every second), so a handle closes once
 * a whole drain met no CU new to it. Returns how many were let go.
 */
size_t dso_cache__release_idle(struct dso_cache *c);

/* true while debuginfod may still bring d's debug file: what d says now (symbols, lines) can
 * change at a later dso_cache__get(), so it is not to be cached for good. */
bool dso__debug_pending(const struct dso *d);

/* false when the file could not be opened or parsed as ELF; dso__error() says why. */
bool dso__readable(const struct dso *d);
const char *dso__error(const struct dso *d);
const char *dso__path(const struct dso *d); /* the display path */
/* Raw GNU build-id bytes; returns their length (0 when the binary has none). */
size_t dso__build_id(const struct dso *d, const uint8_t **id);
/* Lowercase hex of the build-id, "" when none. */
const char *dso__build_id_hex(const struct dso *d);
/* The OpenTelemetry file id (32 lowercase hex chars), computed from the file's first and last
 * 4 KiB and its length; "" when the file could not be read. */
const char *dso__htlhash_hex(const struct dso *d);

/*
 * Turn a runtime address into the ELF virtual address it was loaded from, given the mapping's
 * start and file offset (pgoff). Works for PIE and non-PIE executables, shared libraries and
 * binaries with several executable segments: the address is first turned into a file offset
 * (addr - map_start + pgoff), and then into a virtual address through the PT_LOAD segment that
 * covers that offset. Returns false when no segment covers it (then *file_addr is the file offset).
 */
bool dso__file_addr(const struct dso *d, uint64_t map_start, uint64_t map_pgoff, uint64_t addr,
		    uint64_t *file_addr);

/*
 * The load bias of a binary one of whose mappings starts at map_start with file offset map_pgoff:
 * runtime address - ELF address, the same for every address of the binary (also .bss, which no
 * file mapping covers). Only a mapping that starts on the page of a load segment's first byte
 * tells it (the loader maps each segment from there; a later piece of a segment split by
 * mprotect() does not say which segment it belongs to when two share a page). Returns false for
 * any other mapping.
 */
bool dso__load_bias(const struct dso *d, uint64_t map_start, uint64_t map_pgoff, uint64_t *bias);

/*
 * Symbols by name, functions and data objects alike (the table in memory holds functions only):
 * out[i] gets names[i]'s ELF address and size, its name set to names[i], or a NULL name when the
 * binary defines no global or weak symbol of that name. .dynsym is searched first, .symtab for
 * the names it lacks; a separate debug file is not read. The file is opened again, through the
 * path of d's latest dso_cache__get(), and must still be the file d was read from. Returns how
 * many names were found, or -errno: -ENOENT (no path to open), -ESTALE (the file changed), or
 * what opening or reading it gave (-EINVAL for a corrupt file).
 */
int dso__find_symbols_by_name(const struct dso *d, const char *const names[], size_t n,
			      struct dso_symbol *out);

/*
 * The function symbol containing file_addr, from .symtab (the separate debug file's when the binary
 * is stripped and one was found), falling back to .dynsym with the MiniDebugInfo of .gnu_debugdata,
 * then to Go's .gopclntab, then to .dynsym alone. Returns false when there is none.
 */
bool dso__find_symbol(const struct dso *d, uint64_t file_addr, struct dso_symbol *sym);

/* At most this many frames per address: deeper inline chains keep their innermost frames and
 * the outermost (real) function. */
#define DSO_MAX_LINES 16

/* One frame of an address's inline chain. Strings are owned by the dso's DWARF handle: valid
 * until the dso is evicted, which is no earlier than the next dso_cache__get(). */
struct dso_line {
	const char *function; /* from DWARF, the linkage name if any; NULL when unnamed */
	const char *file;     /* NULL when unknown; may be relative to comp_dir */
	const char *comp_dir; /* the compilation directory (DW_AT_comp_dir); NULL when unknown */
	int64_t line;	      /* 0 when unknown */
};

/*
 * The source position of file_addr from the binary's DWARF (or its separate debug file): the
 * inline chain, innermost first, the last entry being the function the code was compiled into.
 * Returns the number of entries written (at most max), 0 when there is no usable DWARF for that
 * address. The DWARF handle is opened on the first call and kept until the dso is freed; a file
 * that changed on disk since the dso was read is not trusted and yields 0. The strings in out are
 * valid until the next call on any dso of the cache.
 */
size_t dso__find_lines(struct dso *d, uint64_t file_addr, struct dso_line *out, size_t max);

#endif /* HOSTPROF_DSO_H */

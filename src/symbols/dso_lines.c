// SPDX-License-Identifier: BSD-2-Clause
/*
 * An address's source position and inline chain from a dso's DWARF (or its separate debug
 * file's), answered from the cache's line cache when it was asked before, else from the dso's
 * index (dwarf_index.h), which the DWARF handle is opened to extend only for a CU not met
 * before; and what each lookup makes the DWARF hold, counted into the cache's DWARF budget.
 */
#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "symbols/dso_internal.h"
#include "symbols/dwarf_index.h"
#include "symbols/line_cache.h"

/*
 * What a DWARF holds is counted, not measured: libdw reports none of it, and the heap
 * (mallinfo2) is every thread's. Measured around a lookup, it took in whatever the process
 * watcher or the exporter allocated meanwhile, and the budget filled with their noise until
 * handles were closed and opened again, over and over. The count:
 *  - at open, the debug sections as read (decompressed): elf_debug_bytes();
 *  - per CU, libdw's record of it (all of them when the CU map is read), and at its first
 *    lookup its line table;
 *  - our index, exactly: the CU map, and each CU's tables with their strings.
 * Measured with elfutils 0.188 over libc's and libstdc++'s debug info (heap growth, one thread):
 * a CU's record is about 1 KiB, a line table row 59-69 bytes. test_lines holds the count to
 * within a quarter of the heap's growth over a real binary's CUs.
 */
#define DWARF_CU_BYTES 1024
#define DWARF_LINE_ROW_BYTES 64

/* What a lookup made d's DWARF hold: libdw's (gone with the handle) and the index's. */
struct dwarf_growth {
	size_t libdw, index;
};

static size_t index_bytes(const struct dso *d)
{
	struct dwarf_index_stats st;

	dwarf_index__stats(d->dw_index, &st);
	return d->dw_index ? st.bytes : 0;
}

/* d's CU map, read when its DWARF is first opened. */
static bool cu_map_ready(struct dso *d, struct dwarf_growth *g)
{
	size_t before, cus, max_cus;
	int err;

	if (d->dw_index && dwarf_index__mapped(d->dw_index))
		return true;
	if (!dso__dwarf_open(d))
		return false;
	before = index_bytes(d);
	max_cus = d->cache ? d->cache->max_dwarf_bytes / DWARF_CU_BYTES : SIZE_MAX;
	err = dwarf_index__map_cus(d->dw_index, d->dw, max_cus, &cus);
	if (err == -E2BIG) {
		const char *raise = d->cache && d->cache->max_dwarf_name ? d->cache->max_dwarf_name
									 : "the budget";

		log_warn("%s: its DWARF has over %zu compilation units, whose records alone would "
			 "be over the DWARF budget: its frames get no file:line or inline frames; "
			 "raise %s to read it",
			 d->path, max_cus, raise);
		d->dwarf_too_big = true;
		dso__dwarf_close(d);
		d->dwarf_tried = true; /* not opened again until the budget changes */
		return false;
	}
	if (err)
		return false;
	g->libdw += cus * DWARF_CU_BYTES;
	g->index += index_bytes(d) - before;
	return true;
}

/*
 * A binary whose handle was opened again this many times for CUs not met before has its code
 * met a CU at a time, and every opening reads and decompresses its debug sections (libc's: 30 to
 * 45 ms of CPU for 8.4 MiB). On a busy host libc's was opened again every few seconds for as
 * long as the agent ran; with all its CUs' tables built (2,063 CUs: 1.4 MiB, 0.26 s once) it
 * is never needed again.
 */
#define DWARF_OPENS_BEFORE_ALL 3
/* libdw's line tables of the CUs built while building them all, before they are dropped: its
 * tables for all of libc's CUs would be 18 MiB. */
#define DWARF_ALL_LIBDW_BYTES (1u << 20)

/* Whether all of d's CUs' tables would fit in half the budget, by the size of those built. */
static bool all_cus_fit(const struct dso *d)
{
	struct dwarf_index_stats st;

	dwarf_index__stats(d->dw_index, &st);
	if (!d->cache || !st.cus || !st.cus_mapped)
		return false;
	return st.bytes / st.cus * st.cus_mapped <= d->cache->max_dwarf_bytes / 2;
}

/* Builds the tables of every CU of d not built yet, dropping libdw's records on the way. */
static void build_all_cus(struct dso *d, struct dwarf_growth *g)
{
	Dwarf_Off off = 0, next;
	size_t hsize, before = index_bytes(d), held = 0;

	while (d->dw && dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		size_t rows;
		Dwarf_Die cu;

		if (!dwarf_index__has_cu(d->dw_index, off + hsize) &&
		    dwarf_offdie(d->dw, off + hsize, &cu) &&
		    !dwarf_index__add_cu(d->dw_index, &cu, &rows))
			held += DWARF_CU_BYTES + rows * DWARF_LINE_ROW_BYTES;
		if (held > DWARF_ALL_LIBDW_BYTES && dso__dwarf_restart(d))
			held = 0;
		off = next;
	}
	/* Unless the handle was lost on the way: the CUs left are built one at a time. */
	d->dw_all = d->dw != NULL;
	/* What libdw holds is counted for what is left of it; the rest was dropped. */
	g->libdw += held;
	g->index += index_bytes(d) - before;
}

/* The tables of the CU at cu_off, built from the handle, opened again when it was let go. */
static bool cu_ready(struct dso *d, Dwarf_Off cu_off, struct dwarf_growth *g)
{
	size_t before, rows;
	Dwarf_Die cu;

	if (dwarf_index__has_cu(d->dw_index, cu_off))
		return true;
	/* All built, and this one could not be: the file would say no more. */
	if (d->dw_all || !dso__dwarf_open(d) || !dwarf_offdie(d->dw, cu_off, &cu))
		return false;
	before = index_bytes(d);
	if (dwarf_index__add_cu(d->dw_index, &cu, &rows))
		return false;
	d->dw_busy = true;
	g->libdw += rows * DWARF_LINE_ROW_BYTES;
	g->index += index_bytes(d) - before;
	if (d->dw_opens >= DWARF_OPENS_BEFORE_ALL && all_cus_fit(d))
		build_all_cus(d, g);
	return true;
}

static size_t find_lines_counted(struct dso *d, uint64_t file_addr, struct dso_line *out,
				 size_t max, bool *known);

size_t dso__find_lines(struct dso *d, uint64_t file_addr, struct dso_line *out, size_t max)
{
	struct line_cache *lc = d && d->cache && out && max ? d->cache->lines : NULL;
	bool known = false;
	size_t n;

	if (lc && line_cache__get(lc, d->lines_owner, file_addr, max, out, &n))
		return n;
	n = find_lines_counted(d, file_addr, out, max, &known);
	/* Only what the DWARF said is kept: without it (none, or a file that cannot be opened
	 * now) the answer costs nothing and may change; and a fetch on the way would give more
	 * lines later. */
	if (lc && known && !dso__debug_pending(d))
		line_cache__put(lc, d->lines_owner, file_addr, max, out, n);
	return n;
}

static size_t find_lines(struct dso *d, uint64_t file_addr, struct dso_line *out, size_t max,
			 struct dwarf_growth *g, bool *known);

/* A lookup, and what it made the DWARF hold counted into the budget. */
static size_t find_lines_counted(struct dso *d, uint64_t file_addr, struct dso_line *out,
				 size_t max, bool *known)
{
	struct dwarf_growth g = {0};
	size_t n, sections = 0;

	if (d && d->dw_reset_due)
		dso__dwarf_reset(d);
	n = find_lines(d, file_addr, out, max, &g, known);
	if (!d || !d->cache)
		return n;
	if (d->dw && !d->dw_sections) { /* opened by this lookup */
		sections = elf_debug_bytes(d->dw_elf, d->path);
		d->dw_sections = sections;
	}
	d->dw_libdw += g.libdw;
	d->dw_indexed += g.index;
	if (sections + g.libdw + g.index)
		dso_cache__dwarf_grew(d->cache, d, sections + g.libdw + g.index);
	return n;
}

/* *known is set when the answer is the DWARF's (the CU map was read, and the CU's tables are
 * built if a CU covers the address). */
static size_t find_lines(struct dso *d, uint64_t file_addr, struct dso_line *out, size_t max,
			 struct dwarf_growth *g, bool *known)
{
	struct dwarf_frame frames[DWARF_INDEX_MAX_DEPTH + 1];
	struct dso_line all[DWARF_INDEX_MAX_DEPTH + 1];
	struct dwarf_pos pos;
	const char *file;
	Dwarf_Off cu_off;
	size_t n = 0;
	int lineno, nf;

	if (!d || !out || !max || !cu_map_ready(d, g))
		return 0;
	if (!dwarf_index__cu_of(d->dw_index, file_addr, &cu_off)) {
		*known = true;
		return 0;
	}
	if (!cu_ready(d, cu_off, g))
		return 0;
	*known = true;
	nf = dwarf_index__lookup(d->dw_index, cu_off, file_addr, &pos, frames,
				 DWARF_INDEX_MAX_DEPTH + 1);
	file = pos.file;
	lineno = pos.line;
	if (nf <= 0) {
		/* Lines without a function DIE: the caller names it from the symbol table. */
		if (!pos.found)
			return 0;
		out[0] = (struct dso_line){.file = file, .comp_dir = pos.comp_dir, .line = lineno};
		return 1;
	}
	/* The innermost frame is where the line table says; each inlined frame's caller is at
	 * that frame's call site. */
	for (int i = 0; i < nf; i++) {
		all[n++] = (struct dso_line){.function = frames[i].function,
					     .file = file,
					     .comp_dir = pos.comp_dir,
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

// SPDX-License-Identifier: BSD-2-Clause
/*
 * An address's source position and inline chain from a dso's DWARF (or its separate debug
 * file's), answered from the cache's line cache when it was asked before, and what each lookup
 * makes the open DWARF hold, counted into the cache's DWARF budget.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

#include "symbols/dso_internal.h"
#include "symbols/dwarf_index.h"
#include "symbols/line_cache.h"

/*
 * What an open DWARF holds is counted, not measured: libdw reports none of it, and the heap
 * (mallinfo2) is every thread's. Measured around a lookup, it took in whatever the process
 * watcher or the exporter allocated meanwhile, and the budget filled with their noise until
 * handles were closed and opened again, over and over. The count:
 *  - at open, the debug sections as read (decompressed): elf_debug_bytes();
 *  - per CU at its first lookup, libdw's record of it, its line table, and our function table;
 *  - per CU reached by a walk over all CUs (a binary without .debug_aranges), libdw's record.
 * Measured with elfutils 0.188 over libc's and libstdc++'s debug info (heap growth, one thread):
 * a CU's record is about 1 KiB, a line table row 59-69 bytes. test_lines holds the count to
 * within a quarter of the heap's growth over a real binary's CUs.
 */
#define DWARF_CU_BYTES 1024
#define DWARF_LINE_ROW_BYTES 64

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
		d->dw_sections = elf_debug_bytes(d->dw_elf, d->path);
		grew += d->dw_sections;
	}
	if (grew)
		dso_cache__dwarf_grew(d->cache, d, grew);
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

	if (!d || !out || !max || !dso__dwarf_open(d) || !cu_of(d, file_addr, &cu, grew))
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

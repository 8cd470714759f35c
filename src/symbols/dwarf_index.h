/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A binary's DWARF, as much of it as its lookups have needed, in tables of our own that outlive
 * the libdw handle they were read from:
 *  - the CU map: every CU's address ranges, read once when the DWARF is first opened;
 *  - per CU, on its first lookup: its functions (DW_TAG_subprogram) and inlined instances
 *    (DW_TAG_inlined_subroutine) flattened into a sorted table of address segments, each naming
 *    its innermost function, and its line table's rows, with the strings they name copied.
 * An address's position and inline chain are then two binary searches and a walk up parent
 * links, and need no Dwarf at all: the handle, whose decompressed debug sections are most of
 * what it holds (8.4 MiB for libc), can be closed while the tables answer, and opened again only
 * for a CU not met before (dso_cache.c).
 */
#ifndef HOSTPROF_DWARF_INDEX_H
#define HOSTPROF_DWARF_INDEX_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting deeper than this (namespaces, classes, blocks and functions together) is not indexed:
 * corrupt DWARF with cyclic or absurdly deep trees cannot run away. */
#define DWARF_INDEX_MAX_DEPTH 64

struct dwarf_index;

/* One function of an address's chain. Strings are the index's (valid until it drops the CU). */
struct dwarf_frame {
	const char *function; /* the linkage name when there is one; NULL when unnamed */
	/* Inlined instances only: where the caller (the next frame) calls it; NULL/0 unknown. */
	const char *call_file;
	int64_t call_line;
	bool inlined;
};

/* Where an address is, as the CU's line table says (the row dwarf_getsrc_die() finds). */
struct dwarf_pos {
	bool found;	      /* a row covers the address */
	const char *file;     /* NULL: the row names no file */
	int line;	      /* 0: unknown */
	const char *comp_dir; /* the CU's DW_AT_comp_dir; NULL when none */
};

/* Returns NULL and sets errno on failure. */
struct dwarf_index *dwarf_index__new(void);
/* Accepts NULL. */
void dwarf_index__delete(struct dwarf_index *x);

/*
 * Reads the CU map from dw: each CU's ranges as dwarf_ranges() gives them for its DIE. *cus is
 * set to the number of CUs read (libdw keeps a record of each, about 1 KiB). 0; -E2BIG past
 * max_cus CUs (a file made of tiny CUs would make libdw hold a thousand times its size), or
 * -ENOMEM: the map is then left empty, and dwarf_index__mapped() false.
 */
int dwarf_index__map_cus(struct dwarf_index *x, Dwarf *dw, size_t max_cus, size_t *cus);
bool dwarf_index__mapped(const struct dwarf_index *x);
/* The CU containing pc: the first in file order whose ranges contain it. false: none does. */
bool dwarf_index__cu_of(const struct dwarf_index *x, uint64_t pc, Dwarf_Off *cu_off);

/* Whether the CU whose DIE is at cu_off has its tables built. */
bool dwarf_index__has_cu(const struct dwarf_index *x, Dwarf_Off cu_off);
/*
 * Builds cu's tables (its functions and its line table). *rows is set to the rows of the line
 * table libdw read for it. 0, -EEXIST when built already, -ENOMEM or -EOVERFLOW.
 */
int dwarf_index__add_cu(struct dwarf_index *x, Dwarf_Die *cu, size_t *rows);
/*
 * pc in the built CU at cu_off: its position into *pos, and the chain of functions containing
 * it into out, innermost first, ending at the innermost DW_TAG_subprogram (the function the code
 * was compiled into): the DIEs a walk from the CU's root would find, through lexical blocks,
 * namespaces and classes, taking the first in DIE order where siblings overlap. Returns the
 * number of frames written (at most max; deeper chains keep their innermost max - 1 and the
 * outermost), 0 when no function contains pc, or -EINVAL (no such CU built, or no room).
 */
int dwarf_index__lookup(const struct dwarf_index *x, Dwarf_Off cu_off, uint64_t pc,
			struct dwarf_pos *pos, struct dwarf_frame *out, size_t max);
/* Drops every CU's tables, keeping the CU map. */
void dwarf_index__drop_cus(struct dwarf_index *x);

/*
 * dwarf_index__lookup() for the CU cu, whose tables are built first when they are not (*built
 * is then set). -errno on failure.
 */
int dwarf_index__frames(struct dwarf_index *x, Dwarf_Die *cu, uint64_t pc, struct dwarf_frame *out,
			size_t max, bool *built);

/* Whether cu's table is built: its next lookup will not build it. */
bool dwarf_index__has(const struct dwarf_index *x, Dwarf_Die *cu);

/* What the index holds, for tests, the budget and the benchmark. */
struct dwarf_index_stats {
	size_t cus;	   /* CUs indexed */
	size_t funcs;	   /* function and inlined-instance nodes */
	size_t segments;   /* address segments */
	size_t rows;	   /* line rows kept */
	size_t spans;	   /* CU map entries */
	size_t cus_mapped; /* CUs in the map */
	size_t bytes;	   /* heap held by the tables, the map and their strings */
};
void dwarf_index__stats(const struct dwarf_index *x, struct dwarf_index_stats *st);

#endif /* HOSTPROF_DWARF_INDEX_H */

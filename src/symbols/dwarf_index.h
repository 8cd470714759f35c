/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per compilation unit, the address ranges of its functions (DW_TAG_subprogram) and inlined
 * instances (DW_TAG_inlined_subroutine), flattened into a sorted table of address segments, each
 * naming its innermost function: an address's inline chain is one binary search and a walk up
 * parent links, instead of a walk of the CU's DIE tree for every address. Built on a CU's first
 * lookup; lives as long as the Dwarf handle it was built from (its strings point into it).
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

/* One function of an address's chain. Strings are the Dwarf handle's. */
struct dwarf_frame {
	const char *function; /* the linkage name when there is one; NULL when unnamed */
	/* Inlined instances only: where the caller (the next frame) calls it; NULL/0 unknown. */
	const char *call_file;
	int64_t call_line;
	bool inlined;
};

/* Returns NULL and sets errno on failure. */
struct dwarf_index *dwarf_index__new(void);
/* Accepts NULL. */
void dwarf_index__delete(struct dwarf_index *x);

/*
 * The chain of functions containing pc in the CU cu, innermost first, ending at the innermost
 * DW_TAG_subprogram (the function the code was compiled into): the DIEs a walk from the CU's
 * root would find, through lexical blocks, namespaces and classes, taking the first in DIE order
 * where siblings overlap. The CU's table is built on its first lookup (*built is then set).
 * Returns the number of frames written (at most max; deeper chains keep their innermost max - 1
 * and the outermost), 0 when no function contains pc, or -errno (-ENOMEM).
 */
int dwarf_index__frames(struct dwarf_index *x, Dwarf_Die *cu, uint64_t pc, struct dwarf_frame *out,
			size_t max, bool *built);

/* Whether cu's table is built: its next lookup will not build it. */
bool dwarf_index__has(const struct dwarf_index *x, Dwarf_Die *cu);

/* What the index holds, for tests and the benchmark. */
struct dwarf_index_stats {
	size_t cus;	 /* CUs indexed */
	size_t funcs;	 /* function and inlined-instance nodes */
	size_t segments; /* address segments */
	size_t bytes;	 /* heap held by the tables */
};
void dwarf_index__stats(const struct dwarf_index *x, struct dwarf_index_stats *st);

#endif /* HOSTPROF_DWARF_INDEX_H */

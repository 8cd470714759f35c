// SPDX-License-Identifier: BSD-2-Clause
/*
 * A CU's function ranges as a sorted segment table. Building it walks the CU's DIE tree once,
 * collecting every DIE that scopes addresses (functions, inlined instances, lexical blocks) with
 * its ranges, then sweeps the range ends in address order: between two ends the set of DIEs
 * covering the address is fixed, and so is the innermost function a tree walk would reach. Each
 * function's name and call site are read once, here, so a lookup touches no DIE at all.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/dwarf_index.h"

#include "base/vec.h"

#define NONE UINT32_MAX
#define MAX_NODES (UINT32_MAX - 1)

/* A function or inlined instance: one link of an address's chain. */
struct fn_node {
	const char *name;
	const char *call_file;
	uint32_t call_line : 31;
	uint32_t inlined : 1;
	uint32_t parent; /* the enclosing function's node, NONE for the outermost */
};

struct cu_table {
	Dwarf_Off cu_off;
	struct fn_node *nodes;
	/* Segment i covers [seg_lo[i], seg_lo[i + 1]); its innermost function is seg_node[i]
	 * (NONE: none). The last segment is always NONE. */
	uint64_t *seg_lo;
	uint32_t *seg_node;
	uint32_t nnodes, nsegs;
};

struct dwarf_index {
	struct cu_table **slots; /* open addressing by cu_off; NULL is empty */
	size_t cap, n;
	size_t funcs, segs, bytes;
};

struct dwarf_index *dwarf_index__new(void)
{
	return calloc(1, sizeof(struct dwarf_index));
}

static void cu_table_free(struct cu_table *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->seg_lo);
	free(t->seg_node);
	free(t);
}

void dwarf_index__delete(struct dwarf_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->cap; i++)
		cu_table_free(x->slots[i]);
	free(x->slots);
	free(x);
}

void dwarf_index__stats(const struct dwarf_index *x, struct dwarf_index_stats *st)
{
	*st = (struct dwarf_index_stats){0};
	if (!x)
		return;
	st->cus = x->n;
	st->funcs = x->funcs;
	st->segments = x->segs;
	st->bytes = x->bytes + x->cap * sizeof(*x->slots);
}

/* ---- building one CU's table ---- */

/* A DIE that scopes addresses: a function, an inlined instance or a block. */
struct gate {
	uint32_t parent; /* the enclosing gate, NONE at the CU */
	uint32_t func;	 /* the node of the nearest function at or above it, NONE when none */
};

struct range {
	uint64_t lo, hi;
	uint32_t gate;
};

/* One end of a range: where a gate starts or stops covering addresses. */
struct edge {
	uint64_t addr;
	uint32_t gate;
	int delta; /* +1 start, -1 end */
};

struct build {
	Dwarf_Die *cu;
	Dwarf_Files *files;
	size_t nfiles;
	bool files_tried;
	struct gate *gates;
	size_t ngates, gates_cap;
	struct range *ranges;
	size_t nranges, ranges_cap;
	struct fn_node *nodes;
	size_t nnodes, nodes_cap;
	int err;
};

/* The linkage (mangled) name when there is one, so that the demangler gives the full name;
 * through DW_AT_abstract_origin and DW_AT_specification, where inlined and out-of-line
 * instances keep their names. */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return name;
}

static struct fn_node make_node(struct build *b, Dwarf_Die *die, bool inlined, uint32_t parent)
{
	struct fn_node n = {.name = die_function_name(die), .inlined = inlined, .parent = parent};
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!inlined)
		return n;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0) {
		if (!b->files_tried) {
			b->files_tried = true;
			if (dwarf_getsrcfiles(b->cu, &b->files, &b->nfiles))
				b->files = NULL;
		}
		if (b->files && w < b->nfiles)
			n.call_file = dwarf_filesrc(b->files, w, NULL, NULL);
	}
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= INT32_MAX)
		n.call_line = (uint32_t)w;
	return n;
}

/* Records die as a gate under parent when it covers any address; returns its index, or NONE
 * when it covers none (then nothing under it can be reached either) or on error. */
static uint32_t add_gate(struct build *b, Dwarf_Die *die, int tag, uint32_t parent)
{
	uint32_t g = (uint32_t)b->ngates, func = parent == NONE ? NONE : b->gates[parent].func;
	bool is_func = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t first = b->nranges;

	if (b->ngates >= MAX_NODES) {
		b->err = -EOVERFLOW;
		return NONE;
	}
	/* Ranges as dwarf_haspc() sees them: up to the first error. */
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (VEC_RESERVE(b->ranges, b->ranges_cap, b->nranges + 1)) {
			b->err = -ENOMEM;
			return NONE;
		}
		b->ranges[b->nranges++] = (struct range){lo, hi, g};
	}
	if (b->nranges == first)
		return NONE;
	if (is_func) {
		if (VEC_RESERVE(b->nodes, b->nodes_cap, b->nnodes + 1)) {
			b->err = -ENOMEM;
			return NONE;
		}
		b->nodes[b->nnodes] = make_node(b, die, tag == DW_TAG_inlined_subroutine, func);
		func = (uint32_t)b->nnodes++;
	}
	if (VEC_RESERVE(b->gates, b->gates_cap, b->ngates + 1)) {
		b->err = -ENOMEM;
		return NONE;
	}
	b->gates[b->ngates++] = (struct gate){.parent = parent, .func = func};
	return g;
}

/*
 * The gates under parent, in DIE order (which is gate index order): lexical blocks scope
 * addresses like functions; namespaces, modules and classes are looked through, because GCC
 * nests C++ function definitions in them. What a walk for one address would skip (a DIE that
 * covers no address) is skipped with everything under it.
 */
static void walk(struct build *b, Dwarf_Die *parent, uint32_t parent_gate, int depth)
{
	Dwarf_Die child;

	if (depth > DWARF_INDEX_MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		uint32_t g;

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			g = add_gate(b, &child, tag, parent_gate);
			if (g != NONE)
				walk(b, &child, g, depth + 1);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			walk(b, &child, parent_gate, depth + 1);
			break;
		default:
			break;
		}
	} while (!b->err && dwarf_siblingof(&child, &child) == 0);
}

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The sweep. The gates covering the current address are kept sorted by index, i.e. in DIE
 * order, parents before children. A walk from the CU root takes, at each level, the first
 * child covering the address: going through the covering gates in order and stepping down
 * whenever one is a child of the current one finds the same gate (the innermost reached), and
 * the function chain is the function nodes above it.
 */
static int sweep(struct build *b, struct cu_table *t)
{
	struct edge *edges = NULL;
	uint32_t *count = NULL, *active = NULL, last = NONE;
	size_t nedges = 2 * b->nranges, nactive = 0, cap_lo = 0, cap_node = 0;
	int err = -ENOMEM;

	edges = reallocarray(NULL, nedges ? nedges : 1, sizeof(*edges));
	count = calloc(b->ngates ? b->ngates : 1, sizeof(*count));
	active = reallocarray(NULL, b->ngates ? b->ngates : 1, sizeof(*active));
	if (!edges || !count || !active)
		goto out;
	for (size_t i = 0; i < b->nranges; i++) {
		edges[2 * i] = (struct edge){b->ranges[i].lo, b->ranges[i].gate, 1};
		edges[2 * i + 1] = (struct edge){b->ranges[i].hi, b->ranges[i].gate, -1};
	}
	qsort(edges, nedges, sizeof(*edges), edge_cmp);
	for (size_t i = 0; i < nedges;) {
		uint64_t addr = edges[i].addr;
		uint32_t tip = NONE, func;

		for (; i < nedges && edges[i].addr == addr; i++) {
			uint32_t g = edges[i].gate;
			size_t lo = 0, hi = nactive;

			/* A gate's own ranges may overlap: it covers while any does. */
			if (edges[i].delta > 0 ? count[g]++ : --count[g])
				continue;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (active[mid] < g)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (edges[i].delta > 0) {
				memmove(&active[lo + 1], &active[lo],
					(nactive - lo) * sizeof(*active));
				active[lo] = g;
				nactive++;
			} else {
				memmove(&active[lo], &active[lo + 1],
					(nactive - lo - 1) * sizeof(*active));
				nactive--;
			}
		}
		for (size_t k = 0; k < nactive; k++)
			if (b->gates[active[k]].parent == tip)
				tip = active[k];
		func = tip == NONE ? NONE : b->gates[tip].func;
		if (t->nsegs && func == last)
			continue;
		if (VEC_RESERVE(t->seg_lo, cap_lo, t->nsegs + 1) ||
		    VEC_RESERVE(t->seg_node, cap_node, t->nsegs + 1))
			goto out;
		t->seg_lo[t->nsegs] = addr;
		t->seg_node[t->nsegs++] = func;
		last = func;
	}
	err = 0;
out:
	free(edges);
	free(count);
	free(active);
	return err;
}

static struct cu_table *build(Dwarf_Die *cu, int *err)
{
	struct build b = {.cu = cu};
	struct cu_table *t = calloc(1, sizeof(*t));

	*err = -ENOMEM;
	if (!t)
		return NULL;
	t->cu_off = dwarf_dieoffset(cu);
	walk(&b, cu, NONE, 0);
	if (b.err) {
		*err = b.err;
		goto fail;
	}
	*err = sweep(&b, t);
	if (*err)
		goto fail;
	free(b.gates);
	free(b.ranges);
	/* Exactly sized: the table lives as long as the Dwarf handle. */
	t->nnodes = (uint32_t)b.nnodes;
	if (b.nnodes) {
		struct fn_node *nodes = reallocarray(b.nodes, b.nnodes, sizeof(*nodes));

		t->nodes = nodes ? nodes : b.nodes;
	} else {
		free(b.nodes);
	}
	if (t->nsegs) {
		uint64_t *lo = reallocarray(t->seg_lo, t->nsegs, sizeof(*lo));
		uint32_t *node = reallocarray(t->seg_node, t->nsegs, sizeof(*node));

		t->seg_lo = lo ? lo : t->seg_lo;
		t->seg_node = node ? node : t->seg_node;
	}
	return t;
fail:
	free(b.gates);
	free(b.ranges);
	free(b.nodes);
	cu_table_free(t);
	return NULL;
}

/* ---- the CU map and lookups ---- */

static size_t slot_of(const struct dwarf_index *x, Dwarf_Off off)
{
	return (size_t)((off * 0x9e3779b97f4a7c15ULL) >> 17) & (x->cap - 1);
}

static int insert(struct dwarf_index *x, struct cu_table *t)
{
	size_t i;

	if (2 * (x->n + 1) > x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		struct cu_table **old = x->slots, **slots = calloc(cap, sizeof(*slots));
		size_t old_cap = x->cap;

		if (!slots)
			return -ENOMEM;
		x->slots = slots;
		x->cap = cap;
		for (size_t j = 0; j < old_cap; j++) {
			if (!old[j])
				continue;
			for (i = slot_of(x, old[j]->cu_off); x->slots[i]; i = (i + 1) & (cap - 1))
				;
			x->slots[i] = old[j];
		}
		free(old);
	}
	for (i = slot_of(x, t->cu_off); x->slots[i]; i = (i + 1) & (x->cap - 1))
		;
	x->slots[i] = t;
	x->n++;
	x->funcs += t->nnodes;
	x->segs += t->nsegs;
	x->bytes += sizeof(*t) + t->nnodes * sizeof(*t->nodes) +
		    t->nsegs * (sizeof(*t->seg_lo) + sizeof(*t->seg_node));
	return 0;
}

static struct cu_table *find(const struct dwarf_index *x, Dwarf_Off off)
{
	if (!x->cap)
		return NULL;
	for (size_t i = slot_of(x, off); x->slots[i]; i = (i + 1) & (x->cap - 1))
		if (x->slots[i]->cu_off == off)
			return x->slots[i];
	return NULL;
}

bool dwarf_index__has(const struct dwarf_index *x, Dwarf_Die *cu)
{
	return x && cu && find(x, dwarf_dieoffset(cu));
}

int dwarf_index__frames(struct dwarf_index *x, Dwarf_Die *cu, uint64_t pc, struct dwarf_frame *out,
			size_t max, bool *built)
{
	struct cu_table *t;
	size_t lo = 0, hi, n = 0;
	uint32_t node;
	int err;

	*built = false;
	if (!x || !cu || !out || !max)
		return -EINVAL;
	t = find(x, dwarf_dieoffset(cu));
	if (!t) {
		t = build(cu, &err);
		if (!t)
			return err;
		err = insert(x, t);
		if (err) {
			cu_table_free(t);
			return err;
		}
		*built = true;
	}
	/* The last segment starting at or before pc. */
	hi = t->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->seg_lo[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	/* Up to the function the code was compiled into; too deep, the innermost max - 1 and
	 * it. The depth bound of the walk bounds this loop. */
	for (node = t->seg_node[lo - 1]; node != NONE; node = t->nodes[node].parent) {
		const struct fn_node *f = &t->nodes[node];

		out[n < max ? n : max - 1] = (struct dwarf_frame){.function = f->name,
								  .call_file = f->call_file,
								  .call_line = f->call_line,
								  .inlined = f->inlined};
		n++;
		if (!f->inlined)
			break;
	}
	return (int)(n < max ? n : max);
}

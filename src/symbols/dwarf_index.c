// SPDX-License-Identifier: BSD-2-Clause
/*
 * A CU's function ranges as a sorted segment table, its line rows, and the strings both name,
 * copied; and the map of CUs by address. Building a CU's table walks its DIE tree once,
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

#include "base/leb128.h"
#include "base/search.h"
#include "base/vec.h"

#define NONE UINT32_MAX
#define MAX_NODES (UINT32_MAX - 1)
/* A line row's file: none named, or the end of a sequence (no line from there on). */
#define ROW_NOFILE UINT32_MAX
#define ROW_END (UINT32_MAX - 1)
/* The strings of one CU stay under this (their offsets and the two row markers above). */
#define MAX_STRS (UINT32_MAX - 2)

/* A function or inlined instance: one link of an address's chain. Strings are offsets in the
 * CU's strs, NONE when absent. */
struct fn_node {
	uint32_t name;
	uint32_t call_file;
	uint32_t call_line : 31;
	uint32_t inlined : 1;
	uint32_t parent; /* the enclosing function's node, NONE for the outermost */
};

/* A line table row as read: its address, line and file (an offset in strs, or ROW_NOFILE /
 * ROW_END). Kept encoded (struct cu_table). */
struct line_row {
	uint64_t addr;
	int32_t line;
	uint32_t file;
};

/*
 * The rows are kept in blocks of ROW_BLOCK, each found by its first row's address and decoded
 * from its start: per row, as LEB128 numbers, the address's distance from the row before (0 for
 * a block's first), the file's code (ROW_CODE_END, ROW_CODE_NOFILE, or ROW_CODE_FILE + its
 * index in files) and the change of line, zigzagged. About 4 bytes a row against libdw's 64:
 * all of libc's CUs' tables come to 1.4 MiB, against 3 MiB with rows of 16 bytes.
 */
#define ROW_BLOCK 16
#define ROW_CODE_END 0
#define ROW_CODE_NOFILE 1
#define ROW_CODE_FILE 2

struct cu_table {
	Dwarf_Off cu_off;
	struct fn_node *nodes;
	/* Segment i covers [seg_lo[i], seg_lo[i + 1]); its innermost function is seg_node[i]
	 * (NONE: none). The last segment is always NONE. */
	uint64_t *seg_lo;
	uint32_t *seg_node;
	/* The line rows, by address as libdw sorts them: addresses are offsets from row_base. */
	uint64_t row_base;
	uint32_t *block_lo; /* each block's first row's address */
	uint32_t *block_at; /* where each block's rows start in row_bytes */
	uint8_t *row_bytes;
	uint32_t *files;   /* the files the rows name: offsets in strs */
	char *strs;	   /* every name above, NUL-terminated, each once */
	uint32_t comp_dir; /* offset in strs, NONE when the CU has none */
	uint32_t nnodes, nsegs, nrows, nblocks, nfiles, row_len;
	size_t bytes;
};

/* One range of a CU in the map; max_hi is the greatest hi of this entry and all before it (by
 * lo), so that a lookup stops going back once no earlier range can reach the address. */
struct cu_span {
	uint64_t lo, hi, max_hi;
	Dwarf_Off cu_off;
};

struct dwarf_index {
	struct cu_table **slots; /* open addressing by cu_off; NULL is empty */
	size_t cap, n;
	size_t funcs, segs, rows, bytes;
	struct cu_span *spans; /* sorted by lo */
	size_t nspans, ncus;
	bool mapped;
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
	free(t->block_lo);
	free(t->block_at);
	free(t->row_bytes);
	free(t->files);
	free(t->strs);
	free(t);
}

void dwarf_index__drop_cus(struct dwarf_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->cap; i++)
		cu_table_free(x->slots[i]);
	free(x->slots);
	x->slots = NULL;
	x->cap = x->n = 0;
	x->funcs = x->segs = x->rows = x->bytes = 0;
}

void dwarf_index__delete(struct dwarf_index *x)
{
	if (!x)
		return;
	dwarf_index__drop_cus(x);
	free(x->spans);
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
	st->rows = x->rows;
	st->spans = x->nspans;
	st->cus_mapped = x->ncus;
	st->bytes =
		sizeof(*x) + x->bytes + x->cap * sizeof(*x->slots) + x->nspans * sizeof(*x->spans);
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

/* A string copied into the CU's strs, found again by the pointer libdw gave: libdw hands out
 * the same pointer for the same string (a .debug_str entry, a file table entry). */
struct interned {
	const char *key;
	uint32_t off;
};

struct build {
	Dwarf_Die *cu;
	Dwarf_Files *files;
	size_t nfiles;
	bool files_tried;
	struct interned *strmap; /* open addressing by pointer */
	size_t strmap_cap, nstrs;
	char *strs;
	size_t strs_len, strs_cap;
	struct gate *gates;
	size_t ngates, gates_cap;
	struct range *ranges;
	size_t nranges, ranges_cap;
	struct fn_node *nodes;
	size_t nnodes, nodes_cap;
	int err;
};

static size_t strmap_slot(const char *key, size_t cap)
{
	return (size_t)(((uintptr_t)key * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
}

static int strmap_grow(struct build *b)
{
	size_t cap = b->strmap_cap ? 2 * b->strmap_cap : 64, i;
	struct interned *map = calloc(cap, sizeof(*map));

	if (!map)
		return -ENOMEM;
	for (size_t j = 0; j < b->strmap_cap; j++) {
		if (!b->strmap[j].key)
			continue;
		for (i = strmap_slot(b->strmap[j].key, cap); map[i].key; i = (i + 1) & (cap - 1))
			;
		map[i] = b->strmap[j];
	}
	free(b->strmap);
	b->strmap = map;
	b->strmap_cap = cap;
	return 0;
}

/* s's offset in the CU's strs, copied there on its first use; NONE for NULL or on error (then
 * b->err is set). */
static uint32_t intern(struct build *b, const char *s)
{
	size_t i, len;
	uint32_t off;

	if (!s || b->err)
		return NONE;
	if (2 * (b->nstrs + 1) > b->strmap_cap && (b->err = strmap_grow(b)))
		return NONE;
	for (i = strmap_slot(s, b->strmap_cap); b->strmap[i].key; i = (i + 1) & (b->strmap_cap - 1))
		if (b->strmap[i].key == s)
			return b->strmap[i].off;
	len = strlen(s) + 1;
	if (len > MAX_STRS - b->strs_len) {
		b->err = -EOVERFLOW;
		return NONE;
	}
	if (VEC_RESERVE(b->strs, b->strs_cap, b->strs_len + len)) {
		b->err = -ENOMEM;
		return NONE;
	}
	off = (uint32_t)b->strs_len;
	memcpy(b->strs + off, s, len);
	b->strs_len += len;
	b->strmap[i] = (struct interned){.key = s, .off = off};
	b->nstrs++;
	return off;
}

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
	struct fn_node n = {.name = intern(b, die_function_name(die)),
			    .call_file = NONE,
			    .inlined = inlined,
			    .parent = parent};
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
			n.call_file = intern(b, dwarf_filesrc(b->files, w, NULL, NULL));
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

/*
 * The CU's line table as dwarf_getsrc_die() reads it: the last row at or before an address
 * answers, unless it ends a sequence. A row at the same address as the next one is never that
 * row, and one saying what the row before it says changes no answer: neither is kept. Into
 * *rows (*n of them), to be encoded.
 */
static int read_rows(struct build *b, struct line_row **rows, size_t *n, size_t *read)
{
	Dwarf_Lines *lines;
	size_t total, m = 0;
	struct line_row *r;

	*rows = NULL;
	*n = *read = 0;
	if (dwarf_getsrclines(b->cu, &lines, &total) || !total)
		return 0; /* no line table: no rows */
	*read = total;
	r = reallocarray(NULL, total, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < total && !b->err; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct line_row row = {.file = ROW_END};
		Dwarf_Addr addr;
		bool end = false;
		int lineno = 0;

		if (!l || dwarf_lineaddr(l, &addr))
			continue;
		row.addr = addr;
		if (dwarf_lineendsequence(l, &end) || !end) {
			if (dwarf_lineno(l, &lineno) || lineno < 0)
				lineno = 0;
			row.line = lineno;
			row.file = intern(b, dwarf_linesrc(l, NULL, NULL)); /* NONE is ROW_NOFILE */
		}
		if (m && r[m - 1].addr == row.addr)
			m--;
		if (m && row.file != ROW_END && r[m - 1].file == row.file &&
		    r[m - 1].line == row.line)
			continue;
		r[m++] = row;
	}
	*rows = r;
	*n = m;
	return b->err;
}

/* Appends v as LEB128 to (*buf, *len, *cap). */
static int put_uleb(uint8_t **buf, size_t *len, size_t *cap, uint64_t v)
{
	if (VEC_RESERVE(*buf, *cap, *len + 10))
		return -ENOMEM;
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		(*buf)[(*len)++] = byte | (v ? 0x80 : 0);
	} while (v);
	return 0;
}

/* The code of a row's file (see ROW_BLOCK), the file added to t->files when new. */
static int file_code(struct cu_table *t, size_t *cap, uint32_t file, uint64_t *code)
{
	if (file == ROW_END || file == ROW_NOFILE) {
		*code = file == ROW_END ? ROW_CODE_END : ROW_CODE_NOFILE;
		return 0;
	}
	/* Searched from the newest: rows run through one file at a time. */
	for (size_t i = t->nfiles; i-- > 0;)
		if (t->files[i] == file) {
			*code = ROW_CODE_FILE + i;
			return 0;
		}
	if (VEC_RESERVE(t->files, *cap, t->nfiles + 1))
		return -ENOMEM;
	t->files[t->nfiles] = file;
	*code = ROW_CODE_FILE + t->nfiles++;
	return 0;
}

/*
 * rows[0, n) encoded into t. A CU whose rows span 4 GiB or more (no compiler makes one) keeps
 * none: its addresses get their functions without lines.
 */
static int encode_rows(struct cu_table *t, const struct line_row *rows, size_t n)
{
	size_t len = 0, cap = 0, files_cap = 0, nblocks = (n + ROW_BLOCK - 1) / ROW_BLOCK;
	int32_t line = 0;
	uint64_t prev = 0;

	if (!n || rows[n - 1].addr - rows[0].addr > UINT32_MAX || n > UINT32_MAX)
		return 0;
	t->row_base = rows[0].addr;
	t->block_lo = reallocarray(NULL, nblocks, sizeof(*t->block_lo));
	t->block_at = reallocarray(NULL, nblocks, sizeof(*t->block_at));
	if (!t->block_lo || !t->block_at)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t code, zig;
		int64_t dl;

		if (i % ROW_BLOCK == 0) {
			if (len > UINT32_MAX)
				return -EOVERFLOW;
			t->block_lo[i / ROW_BLOCK] = (uint32_t)(rows[i].addr - t->row_base);
			t->block_at[i / ROW_BLOCK] = (uint32_t)len;
			prev = rows[i].addr;
			line = 0;
		}
		dl = (int64_t)rows[i].line - line;
		zig = dl < 0 ? ((uint64_t)(-dl) << 1) - 1 : (uint64_t)dl << 1;
		if (file_code(t, &files_cap, rows[i].file, &code) ||
		    put_uleb(&t->row_bytes, &len, &cap, rows[i].addr - prev) ||
		    put_uleb(&t->row_bytes, &len, &cap, code) ||
		    put_uleb(&t->row_bytes, &len, &cap, zig))
			return -ENOMEM;
		prev = rows[i].addr;
		line = rows[i].line;
	}
	if (len > UINT32_MAX)
		return -EOVERFLOW;
	t->row_len = (uint32_t)len;
	if (len < cap) {
		uint8_t *fit = realloc(t->row_bytes, len);

		t->row_bytes = fit ? fit : t->row_bytes;
	}
	if (t->nfiles && t->nfiles < files_cap) {
		uint32_t *fit = reallocarray(t->files, t->nfiles, sizeof(*fit));

		t->files = fit ? fit : t->files;
	}
	t->nrows = (uint32_t)n;
	t->nblocks = (uint32_t)nblocks;
	t->bytes += len + nblocks * (sizeof(*t->block_lo) + sizeof(*t->block_at)) +
		    t->nfiles * sizeof(*t->files);
	return 0;
}

static void build_free(struct build *b)
{
	free(b->gates);
	free(b->ranges);
	free(b->nodes);
	free(b->strmap);
	free(b->strs);
}

static struct cu_table *build(Dwarf_Die *cu, size_t *rows_read, int *err)
{
	struct build b = {.cu = cu};
	struct cu_table *t = calloc(1, sizeof(*t));
	struct line_row *rows = NULL;
	Dwarf_Attribute a;
	size_t nrows = 0;

	*err = -ENOMEM;
	if (!t)
		return NULL;
	t->cu_off = dwarf_dieoffset(cu);
	t->comp_dir = intern(&b, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)));
	walk(&b, cu, NONE, 0);
	if (b.err) {
		*err = b.err;
		goto fail;
	}
	*err = sweep(&b, t);
	if (!*err)
		*err = read_rows(&b, &rows, &nrows, rows_read);
	if (!*err)
		*err = encode_rows(t, rows, nrows);
	free(rows);
	if (*err)
		goto fail;
	/* Exactly sized: the table lives as long as the binary's index. */
	t->nnodes = (uint32_t)b.nnodes;
	if (b.nnodes) {
		struct fn_node *nodes = reallocarray(b.nodes, b.nnodes, sizeof(*nodes));

		t->nodes = nodes ? nodes : b.nodes;
		b.nodes = NULL;
	}
	if (t->nsegs) {
		uint64_t *lo = reallocarray(t->seg_lo, t->nsegs, sizeof(*lo));
		uint32_t *node = reallocarray(t->seg_node, t->nsegs, sizeof(*node));

		t->seg_lo = lo ? lo : t->seg_lo;
		t->seg_node = node ? node : t->seg_node;
	}
	if (b.strs_len) {
		char *strs = realloc(b.strs, b.strs_len);

		t->strs = strs ? strs : b.strs;
		b.strs = NULL;
	}
	t->bytes += sizeof(*t) + t->nnodes * sizeof(*t->nodes) +
		    t->nsegs * (sizeof(*t->seg_lo) + sizeof(*t->seg_node)) + b.strs_len;
	build_free(&b);
	return t;
fail:
	build_free(&b);
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
	x->rows += t->nrows;
	x->bytes += t->bytes;
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

bool dwarf_index__has_cu(const struct dwarf_index *x, Dwarf_Off cu_off)
{
	return x && find(x, cu_off);
}

bool dwarf_index__has(const struct dwarf_index *x, Dwarf_Die *cu)
{
	return x && cu && find(x, dwarf_dieoffset(cu));
}

int dwarf_index__add_cu(struct dwarf_index *x, Dwarf_Die *cu, size_t *rows)
{
	struct cu_table *t;
	int err;

	*rows = 0;
	if (!x || !cu)
		return -EINVAL;
	if (find(x, dwarf_dieoffset(cu)))
		return -EEXIST;
	t = build(cu, rows, &err);
	if (!t)
		return err;
	err = insert(x, t);
	if (err)
		cu_table_free(t);
	return err;
}

static const char *str_at(const struct cu_table *t, uint32_t off)
{
	return off == NONE ? NULL : t->strs + off;
}

/* The last row at or before pc, as dwarf_getsrc_die() finds it: the last block starting at or
 * before it, decoded up to it. */
static void position(const struct cu_table *t, uint64_t pc, struct dwarf_pos *pos)
{
	uint64_t off, addr, code = ROW_CODE_END;
	size_t lo, n;
	const uint8_t *p, *end;
	int64_t line = 0, at_line = 0;

	*pos = (struct dwarf_pos){.comp_dir = str_at(t, t->comp_dir)};
	if (!t->nrows || pc < t->row_base)
		return;
	/* Every row is within 4 GiB of the first: further on, the last row answers. */
	off = pc - t->row_base > UINT32_MAX ? UINT32_MAX : pc - t->row_base;
	lo = SEARCH_UPPER_BOUND_VALUE(t->block_lo, t->nblocks, off);
	if (!lo)
		return;
	p = t->row_bytes + t->block_at[lo - 1];
	end = t->row_bytes + t->row_len;
	addr = t->block_lo[lo - 1];
	n = t->nrows - (lo - 1) * ROW_BLOCK;
	for (size_t i = 0; i < n && i < ROW_BLOCK; i++) {
		uint64_t step, c, zig;

		/* Our own bytes: a row cut short (a bug) ends the block. */
		if (!leb128__read_u(&p, end, &step) || !leb128__read_u(&p, end, &c) ||
		    !leb128__read_u(&p, end, &zig))
			break;
		addr += step;
		line += zig & 1 ? -(int64_t)((zig + 1) >> 1) : (int64_t)(zig >> 1);
		if (addr > off)
			break;
		code = c;
		at_line = line;
	}
	if (code == ROW_CODE_END)
		return;
	pos->found = true;
	pos->file = code == ROW_CODE_NOFILE ? NULL : str_at(t, t->files[code - ROW_CODE_FILE]);
	pos->line = (int)at_line;
}

int dwarf_index__lookup(const struct dwarf_index *x, Dwarf_Off cu_off, uint64_t pc,
			struct dwarf_pos *pos, struct dwarf_frame *out, size_t max)
{
	const struct cu_table *t = x ? find(x, cu_off) : NULL;
	size_t lo, n = 0;
	uint32_t node;

	if (!t || !out || !max)
		return -EINVAL;
	if (pos)
		position(t, pc, pos);
	/* The last segment starting at or before pc. */
	lo = SEARCH_UPPER_BOUND_VALUE(t->seg_lo, t->nsegs, pc);
	if (!lo)
		return 0;
	/* Up to the function the code was compiled into; too deep, the innermost max - 1 and
	 * it. The depth bound of the walk bounds this loop. */
	for (node = t->seg_node[lo - 1]; node != NONE; node = t->nodes[node].parent) {
		const struct fn_node *f = &t->nodes[node];

		out[n < max ? n : max - 1] =
			(struct dwarf_frame){.function = str_at(t, f->name),
					     .call_file = str_at(t, f->call_file),
					     .call_line = f->call_line,
					     .inlined = f->inlined};
		n++;
		if (!f->inlined)
			break;
	}
	return (int)(n < max ? n : max);
}

int dwarf_index__frames(struct dwarf_index *x, Dwarf_Die *cu, uint64_t pc, struct dwarf_frame *out,
			size_t max, bool *built)
{
	size_t rows;
	int err;

	*built = false;
	if (!x || !cu || !out || !max)
		return -EINVAL;
	err = dwarf_index__add_cu(x, cu, &rows);
	if (err && err != -EEXIST)
		return err;
	*built = !err;
	return dwarf_index__lookup(x, dwarf_dieoffset(cu), pc, NULL, out, max);
}

/* ---- the CU map ---- */

static int span_cmp(const void *a, const void *b)
{
	const struct cu_span *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->cu_off < y->cu_off ? -1 : x->cu_off > y->cu_off;
}

int dwarf_index__map_cus(struct dwarf_index *x, Dwarf *dw, size_t max_cus, size_t *cus)
{
	struct cu_span *spans = NULL;
	Dwarf_Off off = 0, next;
	size_t hsize, n = 0, cap = 0;
	uint64_t max_hi = 0;

	*cus = 0;
	if (!x || !dw)
		return -EINVAL;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t r = 0;
		Dwarf_Die cu;

		if (*cus >= max_cus) {
			free(spans);
			return -E2BIG;
		}
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			(*cus)++;
			/* As dwarf_haspc() sees them: up to the first error. */
			while ((r = dwarf_ranges(&cu, r, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				if (VEC_RESERVE(spans, cap, n + 1)) {
					free(spans);
					return -ENOMEM;
				}
				spans[n++] =
					(struct cu_span){.lo = lo, .hi = hi, .cu_off = off + hsize};
			}
		}
		off = next;
	}
	if (n)
		qsort(spans, n, sizeof(*spans), span_cmp);
	for (size_t i = 0; i < n; i++) {
		max_hi = spans[i].hi > max_hi ? spans[i].hi : max_hi;
		spans[i].max_hi = max_hi;
	}
	if (n && n < cap) {
		struct cu_span *fit = reallocarray(spans, n, sizeof(*spans));

		spans = fit ? fit : spans;
	}
	free(x->spans);
	x->spans = spans;
	x->nspans = n;
	x->ncus = *cus;
	x->mapped = true;
	return 0;
}

bool dwarf_index__mapped(const struct dwarf_index *x)
{
	return x && x->mapped;
}

bool dwarf_index__cu_of(const struct dwarf_index *x, uint64_t pc, Dwarf_Off *cu_off)
{
	bool found = false;
	size_t lo;

	if (!x)
		return false;
	lo = SEARCH_UPPER_BOUND(x->spans, x->nspans, lo, pc);
	/* Back through the ranges that start at or before pc while one may still reach it; of
	 * those containing it, the first CU in the file (where a walk over the CUs stops). */
	for (size_t i = lo; i-- > 0 && x->spans[i].max_hi > pc;)
		if (x->spans[i].hi > pc && (!found || x->spans[i].cu_off < *cu_off)) {
			*cu_off = x->spans[i].cu_off;
			found = true;
		}
	return found;
}

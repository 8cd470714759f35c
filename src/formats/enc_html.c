// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTML encoder: one self-contained page (inline CSS and JS, nothing fetched) that draws an
 * interactive flame graph of the profiles on a <canvas>.
 *
 * The samples are merged here into one call tree per profile type (root -> "comm (pid)" -> the
 * stack from its root frame to its leaf), and frames under 0.01% of the total are folded into one
 * "other" node per parent, so that a 100k-stack profile becomes a few thousand nodes. Pruning
 * within each process, as before the page could group, keeps the tree that small: merged across
 * processes first, the same 100k stacks keep ten times as many nodes, and the page would take
 * seconds to load. The page gets that tree as two arrays (each node's parent and frame) and the
 * samples as (node, process, thread, thread state, span, value), merged on those keys: it then
 * builds the tree it draws for the grouping (executable, process, service or none) and filters
 * (thread, state, span) the reader picks, and the callers and callees of a function, by skipping
 * the process level and regrouping. Frames are indices into one frame table, and strings into one
 * string table, shared by all types (and by the base profiles of a differential page, so that a
 * frame of both sides is one frame).
 *
 * The data goes in a <script type="application/json"> block; '<', '>' and '&' are written as
 * \u escapes, so no name can close the block ("</script") or open a comment in it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/hash.h"
#include "base/hash_index.h"
#include "base/path.h"
#include "base/table.h"
#include "base/vec.h"
#include "formats/enc_html_page.h"
#include "formats/encode.h"

/* Frames under total / PRUNE_DIVISOR go into "other": 0.01%. */
#define PRUNE_DIVISOR 10000

/* The page's frame kinds; keep in step with KINDS in the page's script. */
enum html_kind {
	HK_NATIVE = 0,
	HK_KERNEL,
	HK_INLINED,
	HK_PROCESS,
	HK_ROOT,
	HK_OTHER,
	HK_JIT,
	HK_PYTHON,
};

/* The page's kind of a location's frames (inlined ones aside). */
static uint32_t html_kind_of(enum frame_kind k)
{
	switch (k) {
	case FRAME_KERNEL:
		return HK_KERNEL;
	case FRAME_CPYTHON:
		return HK_PYTHON;
	case FRAME_JIT_V8:
	case FRAME_JIT_JVM:
	case FRAME_JIT_CPYTHON:
	case FRAME_JIT_OTHER:
		return HK_JIT;
	case FRAME_NATIVE:
		break;
	}
	return HK_NATIVE;
}

struct html_frame {
	uint32_t name, file; /* page string indices */
	int64_t line;
	uint32_t kind;
	uint32_t bin; /* page string index of the mapping's file name; 0 when none */
};

struct html_node {
	uint32_t frame;
	uint32_t parent;
	uint32_t first_child, next_sibling; /* 0 = none (node 0 is the root, never a child) */
	int64_t value;
};

struct html_build {
	/* The page's string table; index 0 is "". */
	char **strs;
	size_t nr_strs, cap_strs;
	struct hash_index str_set; /* ids are positions + 1, here and in the other sets */

	struct html_frame *frames;
	size_t nr_frames, cap_frames;
	struct hash_index frame_set;

	/* One profile's tree at a time, and the node of each of its samples' leaves. */
	struct html_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct hash_index node_set;
	uint32_t other_frame;
	uint32_t *leaf;
	size_t cap_leaf;

	/*
	 * What the page gets: only the frames that emitted nodes use, and their strings, numbered
	 * in order of first use (a pruned frame's name stays out of the page). *_out[i] is the
	 * output index + 1, 0 while unused; out_frames/out_strs list the entries in output order.
	 */
	uint32_t *frame_out, *out_frames;
	size_t cap_frame_out, cap_out_frames, nr_out_frames;
	uint32_t *str_out, *out_strs;
	size_t cap_str_out, cap_out_strs, nr_out_strs;
};

static uint32_t hash_str(const char *s)
{
	return hash_fold(hash_bytes(s, strlen(s)));
}

static uint32_t hash_frame(const struct html_frame *f)
{
	uint64_t h = hash_add(0x6672616d65, f->name);

	h = hash_add(h, f->file);
	h = hash_add(h, f->kind);
	return hash_fold(hash_add(h, f->bin));
}

static uint32_t hash_node(uint32_t parent, uint32_t frame)
{
	return hash_fold(hash_add(hash_mix64(parent), frame));
}

static bool str_eq(const void *ctx, uint32_t id, const void *key)
{
	return strcmp(((const struct html_build *)ctx)->strs[id - 1], key) == 0;
}

/*
 * A frame is a function (name, file, kind, binary), as in any flame graph: the line is not part
 * of it, or a function called from three lines of main would show three mains. The page shows the
 * smallest line seen, the nearest to the function's start.
 */
static bool frame_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct html_frame *a = &((const struct html_build *)ctx)->frames[id - 1], *f = key;

	return a->name == f->name && a->file == f->file && a->kind == f->kind && a->bin == f->bin;
}

static bool node_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct html_node *a = &((const struct html_build *)ctx)->nodes[id - 1], *n = key;

	return a->parent == n->parent && a->frame == n->frame;
}

/* Room for one more entry in a table (at position nr) and in its set. */
#define HTML_RESERVE(arr, cap, nr, set)                                                            \
	(VEC_RESERVE(arr, cap, (size_t)(nr) + 1) || hash_index__reserve(set) ? -ENOMEM : 0)

static int64_t html_build__string(struct html_build *b, const char *s)
{
	uint32_t h = hash_str(s), id;

	if (!*s)
		return 0;
	id = hash_index__find(&b->str_set, h, str_eq, b, s);
	if (id)
		return id - 1;
	if (HTML_RESERVE(b->strs, b->cap_strs, b->nr_strs, &b->str_set))
		return -ENOMEM;
	b->strs[b->nr_strs] = strdup(s);
	if (!b->strs[b->nr_strs])
		return -ENOMEM;
	hash_index__insert(&b->str_set, b->nr_strs + 1, h);
	return b->nr_strs++;
}

static int64_t html_build__frame(struct html_build *b, const struct html_frame *f)
{
	uint32_t h = hash_frame(f), id = hash_index__find(&b->frame_set, h, frame_eq, b, f);

	if (id) {
		struct html_frame *seen = &b->frames[id - 1];

		if (f->line > 0 && (seen->line == 0 || f->line < seen->line))
			seen->line = f->line;
		return id - 1;
	}
	if (HTML_RESERVE(b->frames, b->cap_frames, b->nr_frames, &b->frame_set))
		return -ENOMEM;
	b->frames[b->nr_frames] = *f;
	hash_index__insert(&b->frame_set, b->nr_frames + 1, h);
	return b->nr_frames++;
}

/* A frame from names; memset first so that padding compares equal in html_build__frame(). */
static int64_t html_build__named_frame(struct html_build *b, const char *name, const char *file,
				       int64_t line, uint32_t kind, const char *bin)
{
	struct html_frame f;
	int64_t n, fl = 0, bn = 0;

	char norm[4096];

	memset(&f, 0, sizeof(f));
	n = html_build__string(b, name);
	if (n >= 0 && file && *file) {
		/* "./misc/../sysdeps/x.c" and "sysdeps/x.c" are one file to the reader. */
		snprintf(norm, sizeof(norm), "%s", file);
		path__normalize(norm);
		fl = html_build__string(b, norm);
	}
	if (n >= 0 && fl >= 0 && bin)
		bn = html_build__string(b, bin);
	if (n < 0 || fl < 0 || bn < 0)
		return n < 0 ? n : fl < 0 ? fl : bn;
	f.name = n;
	f.file = fl;
	f.line = line;
	f.kind = kind;
	f.bin = bn;
	return html_build__frame(b, &f);
}

/* The child of parent for frame, created (with value 0) when new; its index or -ENOMEM. */
static int64_t html_build__child(struct html_build *b, uint32_t parent, uint32_t frame)
{
	struct html_node key = {.frame = frame, .parent = parent};
	uint32_t h = hash_node(parent, frame),
		 id = hash_index__find(&b->node_set, h, node_eq, b, &key);

	if (id)
		return id - 1;
	if (HTML_RESERVE(b->nodes, b->cap_nodes, b->nr_nodes, &b->node_set))
		return -ENOMEM;
	key.next_sibling = b->nodes[parent].first_child;
	b->nodes[b->nr_nodes] = key;
	b->nodes[parent].first_child = b->nr_nodes;
	hash_index__insert(&b->node_set, b->nr_nodes + 1, h);
	return b->nr_nodes++;
}

/*
 * The frames of one location, outermost first, into out[] (at most max); their number, or
 * -errno. A location with inline lines gives one frame per line: the outermost is the real
 * function, the others are inlined into it.
 */
static int loc_frames(struct html_build *b, const struct profile *p, uint32_t loc, int64_t *out,
		      size_t max)
{
	const struct profile_location *l = profile__location_at(p, loc);
	const struct profile_mapping *m = profile__mapping_at(p, l->mapping);
	const char *bin = l->mapping && m ? profile__string_at(p, m->filename) : NULL;
	const struct profile_line *lines = NULL;
	size_t nr_lines = 0, n = 0;

	lines = profile__location_lines(p, loc, &nr_lines);
	for (size_t i = nr_lines; i-- > 0 && n < max;) {
		const struct profile_function *f = profile__function_at(p, lines[i].function);
		const char *name = f ? profile__string_at(p, f->name) : NULL;
		uint32_t kind = i + 1 < nr_lines && l->kind == FRAME_NATIVE ? HK_INLINED
									    : html_kind_of(l->kind);

		out[n] = html_build__named_frame(b, name && *name ? name : "[unknown]",
						 f ? profile__string_at(p, f->filename) : NULL,
						 lines[i].line, kind, bin);
		if (out[n] < 0)
			return (int)out[n];
		n++;
	}
	if (!nr_lines && max) {
		const struct profile_function *f = profile__function_at(p, l->function);

		out[0] = html_build__named_frame(
			b, profile__location_name(p, loc),
			l->function && f ? profile__string_at(p, f->filename) : NULL, 0,
			html_kind_of(l->kind), bin);
		if (out[0] < 0)
			return (int)out[0];
		n = 1;
	}
	return (int)n;
}

static int64_t process_frame(struct html_build *b, const struct profile *p,
			     const struct profile_labels *lb)
{
	const char *comm = profile__string_at(p, lb->comm);
	char name[512];

	if (!comm || !*comm)
		comm = "[unknown]";
	/* Folded input carries no pid: then the name alone, rather than a made-up "(0)". */
	if (lb->pid || !strncmp(comm, "swapper", 7))
		snprintf(name, sizeof(name), "%s (%" PRIu32 ")", comm, lb->pid);
	else
		snprintf(name, sizeof(name), "%s", comm);
	return html_build__named_frame(b, name, NULL, 0, HK_PROCESS, NULL);
}

/* Build the call tree of p in b->nodes (node 0 = the root), and b->leaf[i], sample i's node. */
static int html_build__tree(struct html_build *b, const struct profile *p)
{
	size_t nr_samples = profile__nr_samples(p);
	int64_t root, frames[64];

	b->nr_nodes = 0;
	hash_index__clear(&b->node_set);
	root = html_build__named_frame(b, "all", NULL, 0, HK_ROOT, NULL);
	if (root < 0)
		return (int)root;
	if (VEC_RESERVE(b->nodes, b->cap_nodes, 1) ||
	    VEC_RESERVE(b->leaf, b->cap_leaf, nr_samples + 1))
		return -ENOMEM;
	b->nodes[0] = (struct html_node){.frame = (uint32_t)root};
	b->nr_nodes = 1;

	for (size_t i = 1; i < nr_samples; i++) {
		const struct profile_sample *s = profile__sample_at(p, i);
		const uint32_t *stack;
		size_t depth;
		int64_t node, f;

		b->leaf[i] = 0;
		if (!s->value)
			continue;
		b->nodes[0].value += s->value;
		/* Pruned per process, as each process's own flame graph would be: see the top. */
		f = process_frame(b, p, &s->labels);
		if (f < 0)
			return (int)f;
		node = html_build__child(b, 0, (uint32_t)f);
		if (node < 0)
			return (int)node;
		b->nodes[node].value += s->value;
		stack = profile__stack_at(p, s->stack, &depth);
		/* The model keeps stacks leaf first; the tree grows from the root. */
		for (size_t j = depth; j-- > 0;) {
			int n = loc_frames(b, p, stack[j], frames,
					   sizeof(frames) / sizeof(frames[0]));

			if (n < 0)
				return n;
			for (int k = 0; k < n; k++) {
				node = html_build__child(b, (uint32_t)node, (uint32_t)frames[k]);
				if (node < 0)
					return (int)node;
				b->nodes[node].value += s->value;
			}
		}
		b->leaf[i] = (uint32_t)node;
	}
	return 0;
}

/* Make index idx valid in a zero-filled map array, and its list (of distinct indices) as long. */
static int grow_map(uint32_t **map, size_t *cap, size_t idx, uint32_t **list, size_t *cap_list)
{
	size_t old = *cap;

	if (VEC_RESERVE(*map, *cap, idx + 1))
		return -ENOMEM;
	memset(*map + old, 0, (*cap - old) * sizeof(**map));
	return VEC_RESERVE(*list, *cap_list, idx + 1);
}

static int64_t html_build__out_str(struct html_build *b, uint32_t idx)
{
	int err = grow_map(&b->str_out, &b->cap_str_out, idx, &b->out_strs, &b->cap_out_strs);

	if (err)
		return err;
	if (!b->str_out[idx]) {
		b->out_strs[b->nr_out_strs++] = idx;
		b->str_out[idx] = b->nr_out_strs;
	}
	return b->str_out[idx] - 1;
}

/* The page's index of a string given as text; "" (and NULL) is the page's string 0. */
static int64_t html_build__page_str(struct html_build *b, const char *s)
{
	int64_t idx = html_build__string(b, s ? s : "");

	return idx < 0 ? idx : html_build__out_str(b, (uint32_t)idx);
}

/* The page's index of a frame, giving it (and its strings) one on first use. */
static int64_t html_build__out_frame(struct html_build *b, uint32_t frame)
{
	const struct html_frame *f = &b->frames[frame];
	int err = grow_map(&b->frame_out, &b->cap_frame_out, frame, &b->out_frames,
			   &b->cap_out_frames);
	int64_t e;

	if (err)
		return err;
	if (b->frame_out[frame])
		return b->frame_out[frame] - 1;
	if ((e = html_build__out_str(b, f->name)) < 0 ||
	    (e = html_build__out_str(b, f->file)) < 0 || (e = html_build__out_str(b, f->bin)) < 0)
		return e;
	b->out_frames[b->nr_out_frames++] = frame;
	b->frame_out[frame] = b->nr_out_frames;
	return b->frame_out[frame] - 1;
}

/*
 * What one profile becomes on the page: the pruned tree as parent and frame arrays (a node's
 * parent comes before it), the processes, and the samples merged by (node, process, thread,
 * state, span). The page builds its trees from these, for the grouping and filters the reader
 * picks.
 */
struct page_node {
	uint32_t parent, frame; /* page frame index */
	uint32_t other;		/* this node's "other" child + 1; 0 while it has none */
};

struct page_proc {
	uint32_t pid, comm, exe, service; /* page string indices but pid */
};

struct page_sample {
	uint32_t node, proc, tid, thread, state; /* proc: index in procs; thread, state: strings */
	uint32_t span; /* page string of the span the sample served (OTEP 4947); 0: none */
	int64_t value;
};

struct emit {
	struct html_build *b;
	const struct profile *p;
	int64_t threshold;
	size_t pruned;
	uint32_t *out; /* tree node -> page node */
	uint8_t *cut;  /* tree node pruned (its value, or an ancestor's, under the threshold) */
	struct page_node *nodes;
	size_t nr_nodes, cap_nodes;
	TABLE(struct page_proc) procs;
	TABLE(struct page_sample) samples;
};

static int64_t emit__node(struct emit *e, uint32_t parent, uint32_t frame)
{
	if (VEC_RESERVE(e->nodes, e->cap_nodes, e->nr_nodes + 1))
		return -ENOMEM;
	e->nodes[e->nr_nodes] = (struct page_node){.parent = parent, .frame = frame};
	return (int64_t)e->nr_nodes++;
}

/*
 * Tree nodes under the threshold are merged into one "other" child of their parent; their
 * subtrees go with them. Nodes come parent first (html_build__child()), so one pass suffices.
 */
static int emit__prune(struct emit *e)
{
	struct html_build *b = e->b;
	int64_t other, n;

	e->out = calloc(b->nr_nodes, sizeof(*e->out));
	e->cut = calloc(b->nr_nodes, 1);
	if (!e->out || !e->cut)
		return -ENOMEM;
	n = html_build__out_frame(b, b->nodes[0].frame);
	if (n < 0 || (n = emit__node(e, UINT32_MAX, (uint32_t)n)) < 0)
		return (int)n;
	other = html_build__out_frame(b, b->other_frame);
	if (other < 0)
		return (int)other;
	for (size_t i = 1; i < b->nr_nodes; i++) {
		const struct html_node *t = &b->nodes[i];
		uint32_t po = e->out[t->parent];

		if (e->cut[t->parent]) {
			e->cut[i] = 1;
			e->out[i] = po;
			continue;
		}
		if (t->value < e->threshold) {
			e->cut[i] = 1;
			e->pruned++;
			if (!e->nodes[po].other) {
				n = emit__node(e, po, (uint32_t)other);
				if (n < 0)
					return (int)n;
				e->nodes[po].other = (uint32_t)n + 1;
			}
			e->out[i] = e->nodes[po].other - 1;
			continue;
		}
		n = html_build__out_frame(b, t->frame);
		if (n < 0 || (n = emit__node(e, po, (uint32_t)n)) < 0)
			return (int)n;
		e->out[i] = (uint32_t)n;
	}
	return 0;
}

static bool proc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct page_proc *a = &((const struct emit *)ctx)->procs.arr[id], *k = key;

	return a->pid == k->pid && a->comm == k->comm;
}

static bool sample_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct page_sample *a = &((const struct emit *)ctx)->samples.arr[id], *k = key;

	return a->node == k->node && a->proc == k->proc && a->tid == k->tid &&
	       a->thread == k->thread && a->state == k->state && a->span == k->span;
}

/*
 * The process of a sample: its pid and comm, with the executable and service names the profile
 * recorded for the pid. Folded input knows only the comm, which then stands for all three.
 */
static int64_t emit__proc(struct emit *e, const struct profile_labels *lb)
{
	const struct profile_process *pr = lb->pid ? profile__find_process(e->p, lb->pid) : NULL;
	const char *comm = profile__string_at(e->p, lb->comm);
	const char *exe = pr ? profile__string_at(e->p, pr->exe_name) : NULL;
	const char *svc = pr ? profile__string_at(e->p, pr->service_name) : NULL;
	struct page_proc key = {.pid = lb->pid};
	int64_t c, x, s;

	if (!comm || !*comm)
		comm = "[unknown]";
	if (!exe || !*exe)
		exe = comm;
	if (!svc || !*svc)
		svc = exe;
	if ((c = html_build__page_str(e->b, comm)) < 0)
		return c;
	key.comm = (uint32_t)c;
	c = hash_index__find(&e->procs.idx, hash_fold(hash_add(hash_mix64(key.pid), key.comm)),
			     proc_eq, e, &key);
	if (c > 0)
		return c;
	if ((x = html_build__page_str(e->b, exe)) < 0 || (s = html_build__page_str(e->b, svc)) < 0)
		return x < 0 ? x : s;
	key.exe = (uint32_t)x;
	key.service = (uint32_t)s;
	return TABLE_ADD(&e->procs, SIZE_MAX, &key,
			 hash_fold(hash_add(hash_mix64(key.pid), key.comm)), proc_eq, e);
}

static int emit__samples(struct emit *e)
{
	size_t nr = profile__nr_samples(e->p);

	if (TABLE_INIT(&e->procs) || TABLE_INIT(&e->samples))
		return -ENOMEM;
	for (size_t i = 1; i < nr; i++) {
		const struct profile_sample *s = profile__sample_at(e->p, i);
		struct page_sample key;
		int64_t proc, th, st, sp, id;
		uint64_t h;

		if (!s->value)
			continue;
		proc = emit__proc(e, &s->labels);
		th = html_build__page_str(e->b, profile__string_at(e->p, s->labels.thread_name));
		st = html_build__page_str(e->b, profile__string_at(e->p, s->labels.thread_state));
		sp = html_build__page_str(e->b, profile__string_at(e->p, s->labels.span_id));
		if (proc < 0 || th < 0 || st < 0 || sp < 0)
			return (int)(proc < 0 ? proc : th < 0 ? th : st < 0 ? st : sp);
		memset(&key, 0, sizeof(key));
		key.node = e->out[e->b->leaf[i]];
		key.proc = (uint32_t)proc;
		key.tid = s->labels.tid;
		key.thread = (uint32_t)th;
		key.state = (uint32_t)st;
		key.span = (uint32_t)sp;
		h = hash_add(hash_mix64(key.node), key.proc ^ (uint64_t)key.span << 32);
		h = hash_add(hash_add(h, key.tid), key.thread);
		id = TABLE_ADD(&e->samples, SIZE_MAX, &key, hash_fold(hash_add(h, key.state)),
			       sample_eq, e);
		if (id < 0)
			return (int)id;
		e->samples.arr[id].value += s->value;
	}
	return 0;
}

static void emit__free(struct emit *e)
{
	free(e->out);
	free(e->cut);
	free(e->nodes);
	TABLE_FREE(&e->procs);
	TABLE_FREE(&e->samples);
}

/* A JSON string; see the file comment for why '<', '>' and '&' are escaped. */
static void put_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == 0x7f)
			fprintf(f, "\\u%04x", *c);
		else if (c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9))
			/* U+2028/2029 end a line in older JavaScript; harmless escaped. */
			fprintf(f, "\\u%04x", 0x2000 + (c[2] - 0x80)), c += 2;
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static void emit__json(const struct emit *e, FILE *f)
{
	fputs("\"tp\":[", f);
	for (size_t i = 0; i < e->nr_nodes; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "",
			i ? (int64_t)e->nodes[i].parent : (int64_t)-1);
	fputs("],\n\"tf\":[", f);
	for (size_t i = 0; i < e->nr_nodes; i++)
		fprintf(f, "%s%" PRIu32, i ? "," : "", e->nodes[i].frame);
	fputs("],\n\"procs\":[", f);
	for (size_t i = 1; i < e->procs.nr; i++) {
		const struct page_proc *p = &e->procs.arr[i];

		fprintf(f, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32, i > 1 ? "," : "",
			p->pid, p->comm, p->exe, p->service);
	}
	/* Samples refer to processes from 0: the table's zero entry is not written. */
	fputs("],\n\"s\":[", f);
	for (size_t i = 1; i < e->samples.nr; i++) {
		const struct page_sample *s = &e->samples.arr[i];

		fprintf(f,
			"%s%" PRIu32 ",%" PRId64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32
			",%" PRIu32,
			i > 1 ? "," : "", s->node, s->value, s->proc - 1, s->tid, s->thread,
			s->state, s->span);
	}
	fputs("]", f);
}

/* One profile's object: its description, then its tree and samples (see struct emit). */
static int write_profile(FILE *f, struct html_build *b, const struct profile *p)
{
	const struct profile_desc *d = profile__desc(p);
	struct emit e = {.b = b, .p = p};
	int err;

	err = html_build__tree(b, p);
	/* Integer division: every node of a non-empty profile keeps value >= 1. */
	e.threshold = b->nodes[0].value / PRUNE_DIVISOR;
	if (!err)
		err = emit__prune(&e);
	if (!err)
		err = emit__samples(&e);
	if (err)
		goto out;
	fputs("{\"type\":", f);
	put_json_string(f, d->sample_type ? d->sample_type : "");
	fputs(",\"unit\":", f);
	put_json_string(f, d->sample_unit ? d->sample_unit : "");
	fprintf(f,
		",\"period\":%" PRId64 ",\"duration\":%" PRIu64 ",\"total\":%" PRId64
		",\"threshold\":%" PRId64 ",\"pruned\":%zu,\n",
		d->period, d->duration_nanos, b->nodes[0].value, e.threshold, e.pruned);
	emit__json(&e, f);
out:
	emit__free(&e);
	return err;
}

static void html_build__free(struct html_build *b)
{
	for (size_t i = 0; i < b->nr_strs; i++)
		free(b->strs[i]);
	free(b->strs);
	hash_index__free(&b->str_set);
	free(b->frames);
	hash_index__free(&b->frame_set);
	free(b->nodes);
	hash_index__free(&b->node_set);
	free(b->leaf);
	free(b->frame_out);
	free(b->out_frames);
	free(b->str_out);
	free(b->out_strs);
}

int enc_html__write_diff(const struct profile *const *profiles, const struct profile *const *bases,
			 size_t n, const char *path)
{
	struct html_build b = {0};
	char *out = NULL, *body = NULL;
	size_t out_size = 0, body_size = 0;
	int64_t other;
	FILE *f = NULL;
	int err = 0;

	if (!profiles || !n || !path)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!profiles[i])
			return -EINVAL;
	}
	/* String 0 is "", so that 0 means "none" in frames, as in the model. */
	if (VEC_RESERVE(b.strs, b.cap_strs, 1))
		return -ENOMEM;
	b.strs[b.nr_strs++] = strdup("");
	if (!b.strs[0]) {
		err = -ENOMEM;
		goto out;
	}
	other = html_build__named_frame(&b, "other", NULL, 0, HK_OTHER, NULL);
	if (other < 0) {
		err = (int)other;
		goto out;
	}
	b.other_frame = (uint32_t)other;
	/* "" is the page's string 0 too: 0 means "none" there. */
	if ((other = html_build__out_str(&b, 0)) < 0) {
		err = (int)other;
		goto out;
	}

	/* The profiles first: they fill the string and frame tables that are written after. */
	f = open_memstream(&body, &body_size);
	if (!f) {
		err = -errno;
		goto out;
	}
	fputs("\"profiles\":[\n", f);
	for (size_t i = 0; i < n && !err; i++) {
		if (i)
			fputs(",\n", f);
		err = write_profile(f, &b, profiles[i]);
		if (!err && bases && bases[i]) {
			fputs(",\n\"base\":", f);
			if (!(err = write_profile(f, &b, bases[i])))
				fputc('}', f);
		}
		fputc('}', f);
	}
	fputs("]}", f);
	if (ferror(f) && !err)
		err = -ENOMEM;
	if (fclose(f) != 0 && !err)
		err = -ENOMEM;
	f = NULL;
	if (err)
		goto out;

	f = open_memstream(&out, &out_size);
	if (!f) {
		err = -errno;
		goto out;
	}
	fputs(enc_html_page_head, f);
	fputs("{\"version\":", f);
	put_json_string(f, HOSTPROF_VERSION);
	fputs(",\n\"strings\":[", f);
	for (size_t i = 0; i < b.nr_out_strs; i++) {
		if (i)
			fputc(',', f);
		put_json_string(f, b.strs[b.out_strs[i]]);
	}
	fputs("],\n\"frames\":[", f);
	for (size_t i = 0; i < b.nr_out_frames; i++) {
		const struct html_frame *fr = &b.frames[b.out_frames[i]];

		fprintf(f, "%s%" PRIu32 ",%" PRIu32 ",%" PRId64 ",%" PRIu32 ",%" PRIu32,
			i ? "," : "", b.str_out[fr->name] - 1, b.str_out[fr->file] - 1, fr->line,
			fr->kind, b.str_out[fr->bin] - 1);
	}
	fputs("],\n", f);
	fwrite(body, 1, body_size, f);
	fputs(enc_html_page_model, f);
	fputs(enc_html_page_view, f);
	if (ferror(f))
		err = -ENOMEM;
	if (fclose(f) != 0 && !err)
		err = -ENOMEM;
	f = NULL;
	if (!err)
		err = atomic_file__write(path, out, out_size);
out:
	if (f)
		fclose(f);
	free(out);
	free(body);
	html_build__free(&b);
	return err;
}

int enc_html__write(const struct profile *const *profiles, size_t n, const char *path)
{
	return enc_html__write_diff(profiles, NULL, n, path);
}

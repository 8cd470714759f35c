// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTML encoder: one self-contained page (inline CSS and JS, nothing fetched) that draws an
 * interactive flame graph of the profiles on a <canvas>.
 *
 * The samples are merged here into one call tree per profile type (root -> "comm (pid)" -> the
 * stack from its root frame to its leaf), because the page then only has to lay out what it is
 * given: a 100k-stack profile becomes a few thousand nodes once frames under 0.01% of the total
 * are folded into one "other" node per parent. The tree is embedded in preorder as three arrays
 * (frame, depth, value), and frames as indices into one string table shared by all types.
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
#include "base/vec.h"
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
};

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

	/* One profile's tree at a time. */
	struct html_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct hash_index node_set;
	uint32_t other_frame;

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

	memset(&f, 0, sizeof(f));
	n = html_build__string(b, name);
	if (n >= 0 && file)
		fl = html_build__string(b, file);
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
		uint32_t kind = l->kind == FRAME_KERNEL	  ? HK_KERNEL
				: l->kind >= FRAME_JIT_V8 ? HK_JIT
				: i + 1 < nr_lines	  ? HK_INLINED
							  : HK_NATIVE;

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
			l->kind == FRAME_KERNEL	  ? HK_KERNEL
			: l->kind >= FRAME_JIT_V8 ? HK_JIT
						  : HK_NATIVE,
			bin);
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

/* Build the call tree of p in b->nodes (node 0 = the root). */
static int html_build__tree(struct html_build *b, const struct profile *p)
{
	size_t nr_samples = profile__nr_samples(p);
	int64_t root, frames[64];

	b->nr_nodes = 0;
	hash_index__clear(&b->node_set);
	root = html_build__named_frame(b, "all", NULL, 0, HK_ROOT, NULL);
	if (root < 0)
		return (int)root;
	if (VEC_RESERVE(b->nodes, b->cap_nodes, 1))
		return -ENOMEM;
	b->nodes[0] = (struct html_node){.frame = (uint32_t)root};
	b->nr_nodes = 1;

	for (size_t i = 1; i < nr_samples; i++) {
		const struct profile_sample *s = profile__sample_at(p, i);
		const uint32_t *stack;
		size_t depth;
		int64_t node, f;

		if (!s->value)
			continue;
		b->nodes[0].value += s->value;
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
	}
	return 0;
}

struct emit {
	struct html_build *b;
	int64_t threshold;
	size_t pruned;
	/* The emitted preorder: frame, depth, value. */
	uint32_t *f, *d;
	int64_t *v;
	size_t nr, cap_f, cap_d, cap_v;
};

static int emit__push(struct emit *e, uint32_t frame, uint32_t depth, int64_t value)
{
	if (VEC_RESERVE(e->f, e->cap_f, e->nr + 1) || VEC_RESERVE(e->d, e->cap_d, e->nr + 1) ||
	    VEC_RESERVE(e->v, e->cap_v, e->nr + 1))
		return -ENOMEM;
	e->f[e->nr] = frame;
	e->d[e->nr] = depth;
	e->v[e->nr++] = value;
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

static struct html_build *sort_build; /* qsort() has no context argument */

/* Children by value, largest first (on the left), then by name for a stable layout. */
static int cmp_child(const void *a, const void *b)
{
	const struct html_node *x = &sort_build->nodes[*(const uint32_t *)a];
	const struct html_node *y = &sort_build->nodes[*(const uint32_t *)b];

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(sort_build->strs[sort_build->frames[x->frame].name],
		      sort_build->strs[sort_build->frames[y->frame].name]);
}

static int emit__node(struct emit *e, uint32_t idx, uint32_t depth)
{
	struct html_build *b = e->b;
	uint32_t *kids = NULL;
	size_t nr = 0;
	int64_t other = 0, out;
	int err;

	out = html_build__out_frame(b, b->nodes[idx].frame);
	if (out < 0)
		return (int)out;
	err = emit__push(e, (uint32_t)out, depth, b->nodes[idx].value);
	if (err)
		return err;
	for (uint32_t c = b->nodes[idx].first_child; c; c = b->nodes[c].next_sibling)
		nr++;
	if (!nr)
		return 0;
	kids = malloc(nr * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	nr = 0;
	for (uint32_t c = b->nodes[idx].first_child; c; c = b->nodes[c].next_sibling)
		kids[nr++] = c;
	sort_build = b;
	qsort(kids, nr, sizeof(*kids), cmp_child);
	for (size_t i = 0; i < nr && !err; i++) {
		if (b->nodes[kids[i]].value < e->threshold) {
			other += b->nodes[kids[i]].value;
			e->pruned++;
			continue;
		}
		err = emit__node(e, kids[i], depth + 1);
	}
	if (!err && other > 0) {
		out = html_build__out_frame(b, b->other_frame);
		err = out < 0 ? (int)out : emit__push(e, (uint32_t)out, depth + 1, other);
	}
	free(kids);
	return err;
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

static const char page_head[] =
	/* The page itself; enc_html__write() puts the data in place of its DATA marker. */
	"<!DOCTYPE html>\n"
	"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<title>hostprof flame graph</title>\n"
	"<style>\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;font:13px/1.4 system-ui,-apple-system,\"Segoe "
	"UI\",Roboto,Helvetica,Arial,sans-serif;background:#fafafa;color:#222}\n"
	"header{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid "
	"#ddd;padding:8px 12px;display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center}\n"
	"header h1{font-size:15px;margin:0}\n"
	".lbl{color:#666;margin-right:4px}\n"
	"select,input,button{font:inherit;padding:3px 7px;border:1px solid "
	"#bbb;border-radius:4px;background:#fff;color:#222}\n"
	"button{cursor:pointer}\n"
	".seg button{border-radius:0;margin-left:-1px}\n"
	".seg button:first-child{border-radius:4px 0 0 4px;margin:0}\n"
	".seg button:last-child{border-radius:0 4px 4px 0}\n"
	"button.on{background:#2563eb;color:#fff;border-color:#2563eb}\n"
	"#search{width:230px}\n"
	"input.bad{border-color:#d00;background:#fee}\n"
	"#match{font-weight:600;color:#a0158f}\n"
	"#bar{display:flex;gap:12px;align-items:center;padding:6px "
	"12px;font-size:12px;color:#555;flex-wrap:wrap}\n"
	"#crumbs a{color:#2563eb;cursor:pointer}\n"
	"#crumbs a:hover{text-decoration:underline}\n"
	"#note{padding:0 12px 6px;font-size:12px;color:#666}\n"
	"#graph{margin:0 12px 8px;overflow-y:auto;overflow-x:hidden;border:1px solid "
	"#e4e4e4;background:#fff}\n"
	"canvas{display:block;width:100%}\n"
	"#tip{position:fixed;pointer-events:none;background:#fff;border:1px solid "
	"#999;border-radius:4px;padding:6px 9px;box-shadow:0 2px 10px "
	"rgba(0,0,0,.18);max-width:640px;font-size:12px;display:none;z-index:5;overflow-wrap:"
	"anywhere}\n"
	"#tip .t{font:600 12px ui-monospace,Menlo,Consolas,monospace;margin-bottom:3px}\n"
	"#tip .m{color:#555}\n"
	"#list{padding:0 12px 12px;display:none}\n"
	"table{border-collapse:collapse;width:100%;font-size:12px;background:#fff}\n"
	"th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}\n"
	"th{cursor:pointer;background:#f0f0f0;user-select:none}\n"
	"th.s::after{content:\" \\25BE\"}\n"
	"th.s.up::after{content:\" \\25B4\"}\n"
	"td.n,th.n{text-align:left;white-space:normal;overflow-wrap:anywhere;font-family:ui-"
	"monospace,Menlo,Consolas,monospace}\n"
	"tbody tr{cursor:pointer}\n"
	"tbody tr:hover td{background:#eef4ff}\n"
	".legend i{display:inline-block;width:10px;height:10px;margin:0 3px 0 "
	"10px;vertical-align:-1px;border-radius:2px}\n"
	"footer{padding:0 12px 6px;font-size:11px;color:#888}\n"
	"</style></head>\n"
	"<body>\n"
	"<header>\n"
	"<h1>hostprof</h1>\n"
	"<span id=\"typewrap\"><span class=\"lbl\">Type</span><select id=\"type\" title=\"Profile "
	"type\"></select></span>\n"
	"<span><span class=\"lbl\">Process</span><select id=\"proc\" title=\"Show one "
	"process\"></select></span>\n"
	"<span class=\"seg\"><button id=\"vflame\" class=\"on\">Flame graph</button><button "
	"id=\"vlist\">Function list</button></span>\n"
	"<label><input type=\"checkbox\" id=\"invert\"> Inverted (icicle)</label>\n"
	"<span><input id=\"search\" type=\"search\" placeholder=\"Search functions (regex)\" "
	"spellcheck=\"false\"> <span id=\"match\"></span></span>\n"
	"<span class=\"legend\" id=\"legend\"></span>\n"
	"</header>\n"
	"<div id=\"bar\"><button id=\"reset\" title=\"Zoom out to the whole view (Esc)\">Reset "
	"zoom</button><span id=\"crumbs\"></span></div>\n"
	"<div id=\"note\"></div>\n"
	"<div id=\"graph\"><canvas id=\"cv\"></canvas></div>\n"
	"<div id=\"list\"><div style=\"margin:0 0 6px\"><input id=\"filter\" type=\"search\" "
	"placeholder=\"Filter functions (regex)\" spellcheck=\"false\"> <span id=\"listinfo\" "
	"class=\"lbl\"></span></div>\n"
	"<table><thead><tr><th class=\"n\" data-k=\"name\">Function</th><th "
	"data-k=\"self\">Self</th><th data-k=\"self\">Self %</th><th "
	"data-k=\"total\">Total</th><th data-k=\"total\">Total %</th></tr></thead><tbody "
	"id=\"rows\"></tbody></table></div>\n"
	"<footer id=\"foot\"></footer>\n"
	"<div id=\"tip\"></div>\n"
	"<script id=\"data\" type=\"application/json\">/*DATA*/</script>\n"
	"<script>\n"
	"\"use strict\";\n"
	"(function () {\n"
	"var D = JSON.parse(document.getElementById(\"data\").textContent);\n"
	"var S = D.strings, F = D.frames;\n"
	"var KINDS = [\"native\", \"kernel\", \"inlined\", \"process\", \"all\", \"other\", "
	"\"jit\"];\n"
	"var ROW = 18;\n"
	"function $(id) { return document.getElementById(id); }\n"
	"var cv = $(\"cv\"), ctx = cv.getContext(\"2d\"), tip = $(\"tip\");\n"
	"var P, N, par, end, xs, self, maxDepth, frameMatch = null, re = null;\n"
	"var base = 0, zoom = 0, inverted = false, view = \"flame\", sortKey = \"self\", sortUp = "
	"false;\n"
	"var rowRects = [], firstDraw = true, scrollDown = false;\n"
	"\n"
	"function fName(f) { return S[F[f * 5]]; }\n"
	"function name(i) { return S[F[P.f[i] * 5]]; }\n"
	"function kind(i) { return F[P.f[i] * 5 + 3]; }\n"
	"\n"
	"function fmt(v) {\n"
	"\tvar u = P.unit;\n"
	"\tif (u === \"nanoseconds\") {\n"
	"\t\tif (v >= 1e9) return (v / 1e9).toFixed(2) + \" s\";\n"
	"\t\tif (v >= 1e6) return (v / 1e6).toFixed(1) + \" ms\";\n"
	"\t\tif (v >= 1e3) return (v / 1e3).toFixed(1) + \" \\u00b5s\";\n"
	"\t\treturn v + \" ns\";\n"
	"\t}\n"
	"\tif (u === \"bytes\") {\n"
	"\t\tvar k = [\"B\", \"KiB\", \"MiB\", \"GiB\", \"TiB\"], j = 0;\n"
	"\t\twhile (v >= 1024 && j < 4) { v /= 1024; j++; }\n"
	"\t\treturn (j ? v.toFixed(1) : v) + \" \" + k[j];\n"
	"\t}\n"
	"\tif (u === \"count\" || u === \"samples\" || !u) return v.toLocaleString(\"en-US\") + \" "
	"samples\";\n"
	"\treturn v.toLocaleString(\"en-US\") + \" \" + u;\n"
	"}\n"
	"function pct(v, of) { return of > 0 ? (100 * v / of).toFixed(2) + \"%\" : \"-\"; }\n"
	"\n"
	"/* Nodes come in preorder with their depth: rebuild parents, subtree ends and x offsets. "
	"*/\n"
	"function load(pi) {\n"
	"\tP = D.profiles[pi];\n"
	"\tN = P.f.length;\n"
	"\tpar = new Int32Array(N); end = new Int32Array(N);\n"
	"\txs = new Float64Array(N); self = new Float64Array(N);\n"
	"\tvar st = [], nx = [0];\n"
	"\tmaxDepth = 0;\n"
	"\tfor (var i = 0; i < N; i++) {\n"
	"\t\tvar d = P.d[i];\n"
	"\t\twhile (st.length > d) end[st.pop()] = i;\n"
	"\t\tvar p = d > 0 ? st[d - 1] : -1;\n"
	"\t\tpar[i] = p;\n"
	"\t\txs[i] = p >= 0 ? nx[d] : 0;\n"
	"\t\tif (p >= 0) { nx[d] += P.v[i]; self[p] -= P.v[i]; }\n"
	"\t\tself[i] += P.v[i];\n"
	"\t\tst.push(i);\n"
	"\t\tnx[d + 1] = xs[i];\n"
	"\t\tif (d > maxDepth) maxDepth = d;\n"
	"\t}\n"
	"\twhile (st.length) end[st.pop()] = N;\n"
	"\tbase = zoom = 0;\n"
	"\tvar sel = $(\"proc\"), procs = [];\n"
	"\tsel.innerHTML = \"\";\n"
	"\tfor (i = 1; i < N; i = end[i]) if (par[i] === 0) procs.push(i);\n"
	"\tprocs.sort(function (a, b) { return P.v[b] - P.v[a]; });\n"
	"\taddOpt(sel, \"0\", \"All processes (\" + procs.length + \")\");\n"
	"\tprocs.forEach(function (j) { addOpt(sel, String(j), name(j) + \" \\u2014 \" + "
	"pct(P.v[j], P.v[0])); });\n"
	"\tvar note = P.pruned > 0 ?\n"
	"\t\tP.pruned.toLocaleString(\"en-US\") + \" frames under 0.01% of the total (below \" + "
	"fmt(P.threshold) +\n"
	"\t\t\") are merged into \\u201cother\\u201d frames; the function list counts them "
	"there.\" :\n"
	"\t\t\"No frame was pruned (frames under 0.01% of the total would be merged into "
	"\\u201cother\\u201d).\";\n"
	"\t$(\"note\").textContent = \"Total \" + fmt(P.v[0]) + (P.duration ? \" over \" + "
	"(P.duration / 1e9).toFixed(1) + \" s\" : \"\") +\n"
	"\t\t\" \\u00b7 \" + (N - 1).toLocaleString(\"en-US\") + \" frames drawn. \" + note;\n"
	"\tlegend();\n"
	"\tsetSearch();\n"
	"}\n"
	"function addOpt(sel, v, t) { var o = document.createElement(\"option\"); o.value = v; "
	"o.textContent = t; sel.appendChild(o); }\n"
	"\n"
	"function hash(s) { var h = 2166136261; for (var i = 0; i < s.length; i++) { h ^= "
	"s.charCodeAt(i); h = Math.imul(h, 16777619); } return h >>> 0; }\n"
	"function kindColor(k, h) {\n"
	"\tswitch (k) {\n"
	"\tcase 1: return \"hsl(\" + (195 + h % 25) + \",62%,\" + (58 + (h >> 8) % 12) + \"%)\";\n"
	"\tcase 2: return \"hsl(\" + (100 + h % 35) + \",48%,\" + (55 + (h >> 8) % 12) + \"%)\";\n"
	"\tcase 3: return \"hsl(\" + (262 + h % 16) + \",36%,\" + (70 + (h >> 8) % 8) + \"%)\";\n"
	"\tcase 4: return \"#b9b9c0\";\n"
	"\tcase 5: return \"#dcdcdc\";\n"
	"\tcase 6: return \"hsl(\" + (320 + h % 20) + \",55%,66%)\";\n"
	"\tdefault: return \"hsl(\" + (8 + h % 42) + \",82%,\" + (57 + (h >> 8) % 10) + \"%)\";\n"
	"\t}\n"
	"}\n"
	"function legend() {\n"
	"\tvar seen = {}, html = \"\";\n"
	"\tfor (var f = 0; f < F.length / 5; f++) seen[F[f * 5 + 3]] = 1;\n"
	"\t[0, 1, 2, 6].forEach(function (k) {\n"
	"\t\tif (seen[k]) html += \"<i style=\\\"background:\" + kindColor(k, 20) + \"\\\"></i>\" "
	"+ KINDS[k];\n"
	"\t});\n"
	"\t$(\"legend\").innerHTML = html;\n"
	"}\n"
	"\n"
	"function draw() {\n"
	"\tvar g = $(\"graph\"), dpr = window.devicePixelRatio || 1, H = (maxDepth + 1) * ROW;\n"
	"\t/* The graph scrolls inside its box, so the controls and the note stay in view. */\n"
	"\tg.style.height = Math.min(H + 2, Math.max(200, window.innerHeight - "
	"g.getBoundingClientRect().top - 30 + window.scrollY)) + \"px\";\n"
	"\tcv.style.height = H + \"px\";\n"
	"\tvar W = g.clientWidth;\n"
	"\tcv.width = Math.max(1, Math.floor(W * dpr)); cv.height = Math.floor(H * dpr);\n"
	"\tctx.setTransform(dpr, 0, 0, dpr, 0, 0);\n"
	"\tctx.clearRect(0, 0, W, H);\n"
	"\tctx.font = \"12px ui-monospace,Menlo,Consolas,monospace\";\n"
	"\tctx.textBaseline = \"middle\";\n"
	"\tvar cw = ctx.measureText(\"m\").width;\n"
	"\trowRects = [];\n"
	"\tfor (var d = 0; d <= maxDepth; d++) rowRects.push([]);\n"
	"\tvar z = zoom, zv = P.v[z], zx = xs[z], sc = zv > 0 ? W / zv : 0;\n"
	"\tfunction box(i, x, w) {\n"
	"\t\tvar d = P.d[i], y = inverted ? d * ROW : H - (d + 1) * ROW, k = kind(i), nm = "
	"name(i);\n"
	"\t\tvar m = frameMatch && frameMatch[P.f[i]];\n"
	"\t\tctx.fillStyle = m ? \"#e64fc8\" : kindColor(k, hash(nm));\n"
	"\t\tctx.globalAlpha = frameMatch && !m && k < 3 ? 0.45 : 1;\n"
	"\t\tctx.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);\n"
	"\t\tctx.globalAlpha = 1;\n"
	"\t\trowRects[d].push(x, w, i);\n"
	"\t\tif (w > 3 * cw + 6) {\n"
	"\t\t\tvar n = Math.floor((w - 6) / cw), t = nm.length > n ? nm.slice(0, n - 1) + "
	"\"\\u2026\" : nm;\n"
	"\t\t\tctx.fillStyle = \"#111\";\n"
	"\t\t\tctx.fillText(t, x + 3, y + ROW / 2);\n"
	"\t\t}\n"
	"\t}\n"
	"\tvar anc = [];\n"
	"\tfor (var a = par[z]; a >= 0; a = par[a]) anc.push(a);\n"
	"\tfor (var j = anc.length - 1; j >= 0; j--) box(anc[j], 0, W);\n"
	"\tif (sc === 0) {\n"
	"\t\tbox(z, 0, W);\n"
	"\t} else {\n"
	"\t\tfor (var i = z; i < end[z];) {\n"
	"\t\t\tvar w = P.v[i] * sc;\n"
	"\t\t\tif (w < 0.3) { i = end[i]; continue; }\n"
	"\t\t\tbox(i, (xs[i] - zx) * sc, w);\n"
	"\t\t\ti++;\n"
	"\t\t}\n"
	"\t}\n"
	"\tcrumbs();\n"
	"\t/* Flame graphs grow upwards from the root: start with the root in view. */\n"
	"\tif (firstDraw || scrollDown) g.scrollTop = inverted ? 0 : g.scrollHeight;\n"
	"\tfirstDraw = scrollDown = false;\n"
	"}\n"
	"\n"
	"function crumbs() {\n"
	"\tvar c = $(\"crumbs\"), path = [];\n"
	"\tfor (var a = zoom; a >= 0; a = par[a]) path.unshift(a);\n"
	"\tc.innerHTML = \"\";\n"
	"\tpath.forEach(function (i, k) {\n"
	"\t\tif (k) c.appendChild(document.createTextNode(\" \\u203a \"));\n"
	"\t\tvar l = document.createElement(i === zoom ? \"b\" : \"a\");\n"
	"\t\tl.textContent = name(i);\n"
	"\t\tif (i !== zoom) l.onclick = function () { zoomTo(i); };\n"
	"\t\tc.appendChild(l);\n"
	"\t});\n"
	"\t$(\"reset\").disabled = zoom === base;\n"
	"}\n"
	"\n"
	"function zoomTo(i) {\n"
	"\t/* Zooming above the selected process drops the process filter. */\n"
	"\tvar a = base;\n"
	"\twhile (a >= 0 && a !== i) a = par[a];\n"
	"\tif (a === i && i !== base) { base = 0; $(\"proc\").value = \"0\"; }\n"
	"\tzoom = i;\n"
	"\trefresh();\n"
	"}\n"
	"\n"
	"function hit(ev) {\n"
	"\tvar r = cv.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;\n"
	"\tvar H = (maxDepth + 1) * ROW, d = inverted ? Math.floor(y / ROW) : Math.floor((H - y) / "
	"ROW);\n"
	"\tif (d < 0 || d > maxDepth) return -1;\n"
	"\tvar row = rowRects[d], lo = 0, hi = row.length / 3 - 1;\n"
	"\twhile (lo <= hi) {\n"
	"\t\tvar mid = (lo + hi) >> 1, rx = row[mid * 3], rw = row[mid * 3 + 1];\n"
	"\t\tif (x < rx) hi = mid - 1; else if (x >= rx + rw) lo = mid + 1; else return row[mid * "
	"3 + 2];\n"
	"\t}\n"
	"\treturn -1;\n"
	"}\n"
	"\n"
	"function esc(s) { return s.replace(/[&<>\"]/g, function (c) { return \"&#\" + "
	"c.charCodeAt(0) + \";\"; }); }\n"
	"cv.addEventListener(\"mousemove\", function (ev) {\n"
	"\tvar i = hit(ev);\n"
	"\tif (i < 0) { tip.style.display = \"none\"; cv.style.cursor = \"\"; return; }\n"
	"\tcv.style.cursor = \"pointer\";\n"
	"\tvar f = P.f[i], file = S[F[f * 5 + 1]], line = F[f * 5 + 2], bin = S[F[f * 5 + 4]], k = "
	"F[f * 5 + 3];\n"
	"\tvar h = \"<div class=\\\"t\\\">\" + esc(name(i)) + \"</div>\";\n"
	"\tif (file) h += \"<div class=\\\"m\\\">\" + esc(file) + (line ? \":\" + line : \"\") + "
	"\"</div>\";\n"
	"\tif (bin) h += \"<div class=\\\"m\\\">binary: \" + esc(bin) + \"</div>\";\n"
	"\th += \"<div class=\\\"m\\\">\" + KINDS[k] + \" frame</div>\";\n"
	"\th += \"<div>Total: <b>\" + fmt(P.v[i]) + \"</b> (\" + pct(P.v[i], P.v[base]) + \" of "
	"view, \" + pct(P.v[i], P.v[0]) + \" of all)</div>\";\n"
	"\th += \"<div>Self: <b>\" + fmt(self[i]) + \"</b> (\" + pct(self[i], P.v[base]) + "
	"\")</div>\";\n"
	"\ttip.innerHTML = h;\n"
	"\ttip.style.display = \"block\";\n"
	"\tvar tx = ev.clientX + 14, ty = ev.clientY + 14, tw = tip.offsetWidth, th = "
	"tip.offsetHeight;\n"
	"\tif (tx + tw > window.innerWidth - 4) tx = Math.max(4, ev.clientX - tw - 14);\n"
	"\tif (ty + th > window.innerHeight - 4) ty = Math.max(4, ev.clientY - th - 14);\n"
	"\ttip.style.left = tx + \"px\"; tip.style.top = ty + \"px\";\n"
	"});\n"
	"cv.addEventListener(\"mouseleave\", function () { tip.style.display = \"none\"; });\n"
	"cv.addEventListener(\"click\", function (ev) { var i = hit(ev); if (i >= 0) zoomTo(i); "
	"});\n"
	"\n"
	"function setSearch() {\n"
	"\tvar q = $(\"search\").value;\n"
	"\t$(\"search\").classList.remove(\"bad\");\n"
	"\tre = null; frameMatch = null;\n"
	"\tif (q) {\n"
	"\t\ttry { re = new RegExp(q); } catch (e) { $(\"search\").classList.add(\"bad\"); }\n"
	"\t}\n"
	"\tif (re) {\n"
	"\t\tframeMatch = new Uint8Array(F.length / 5);\n"
	"\t\tfor (var f = 0; f < frameMatch.length; f++) frameMatch[f] = re.test(fName(f)) ? 1 : "
	"0;\n"
	"\t}\n"
	"}\n"
	"/* The matched share counts each matched subtree once, so recursion is not counted twice. "
	"*/\n"
	"function matchShare() {\n"
	"\tif (!frameMatch) { $(\"match\").textContent = \"\"; return; }\n"
	"\tvar sum = 0;\n"
	"\tfor (var i = zoom; i < end[zoom];) {\n"
	"\t\tif (frameMatch[P.f[i]]) { sum += P.v[i]; i = end[i]; } else i++;\n"
	"\t}\n"
	"\t$(\"match\").textContent = \"Matched: \" + fmt(sum) + \" (\" + pct(sum, P.v[zoom]) + "
	"\")\";\n"
	"\t$(\"match\").setAttribute(\"data-share\", P.v[zoom] > 0 ? (sum / P.v[zoom]).toString() "
	": \"0\");\n"
	"}\n"
	"\n"
	"/* Self and total by function name over the zoomed subtree; total counts a name once per "
	"path. */\n"
	"function functions() {\n"
	"\tvar m = new Map(), path = [], on = new Map(), z = zoom, dz = P.d[z];\n"
	"\tfor (var i = z; i < end[z]; i++) {\n"
	"\t\tvar d = P.d[i] - dz;\n"
	"\t\twhile (path.length > d) { var o = path.pop(); on.set(o, on.get(o) - 1); }\n"
	"\t\tvar nm = name(i), c = on.get(nm) || 0;\n"
	"\t\ton.set(nm, c + 1); path.push(nm);\n"
	"\t\tif (kind(i) === 3 || kind(i) === 4) continue;\n"
	"\t\tvar e = m.get(nm);\n"
	"\t\tif (!e) { e = { name: nm, self: 0, total: 0 }; m.set(nm, e); }\n"
	"\t\te.self += self[i];\n"
	"\t\tif (!c) e.total += P.v[i];\n"
	"\t}\n"
	"\treturn Array.from(m.values());\n"
	"}\n"
	"function table() {\n"
	"\tvar all = functions(), fq = $(\"filter\").value, fre = null, tot = P.v[zoom];\n"
	"\t$(\"filter\").classList.remove(\"bad\");\n"
	"\tif (fq) { try { fre = new RegExp(fq, \"i\"); } catch (e) { "
	"$(\"filter\").classList.add(\"bad\"); } }\n"
	"\tvar rows = fre ? all.filter(function (e) { return fre.test(e.name); }) : all;\n"
	"\trows.sort(function (a, b) {\n"
	"\t\tvar r = sortKey === \"name\" ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : "
	"a[sortKey] - b[sortKey];\n"
	"\t\treturn sortUp ? r : -r;\n"
	"\t});\n"
	"\tvar lim = Math.min(rows.length, 2000), h = [];\n"
	"\tfor (var i = 0; i < lim; i++) {\n"
	"\t\tvar e = rows[i];\n"
	"\t\th.push(\"<tr data-i=\\\"\" + i + \"\\\"><td class=\\\"n\\\">\" + esc(e.name) + "
	"\"</td><td>\" + fmt(e.self) + \"</td><td>\" + pct(e.self, tot) +\n"
	"\t\t\t\"</td><td>\" + fmt(e.total) + \"</td><td>\" + pct(e.total, tot) + "
	"\"</td></tr>\");\n"
	"\t}\n"
	"\t$(\"rows\").innerHTML = h.join(\"\");\n"
	"\t$(\"listinfo\").textContent = rows.length + \" functions\" + (lim < rows.length ? \", "
	"first \" + lim + \" shown\" : \"\") +\n"
	"\t\t(zoom !== 0 ? \" (in the zoomed view: \" + name(zoom) + \")\" : \"\");\n"
	"\tArray.prototype.forEach.call(document.querySelectorAll(\"th\"), function (th) {\n"
	"\t\tth.className = (th.dataset.k === \"name\" ? \"n\" : \"\") + (th.dataset.k === sortKey "
	"? \" s\" + (sortUp ? \" up\" : \"\") : \"\");\n"
	"\t});\n"
	"\t$(\"rows\").onclick = function (ev) {\n"
	"\t\tvar tr = ev.target.closest(\"tr\");\n"
	"\t\tif (!tr) return;\n"
	"\t\t$(\"search\").value = \"^\" + "
	"rows[+tr.dataset.i].name.replace(/[.*+?^${}()|[\\]\\\\]/g, \"\\\\$&\") + \"$\";\n"
	"\t\tsetSearch(); setView(\"flame\");\n"
	"\t};\n"
	"}\n"
	"Array.prototype.forEach.call(document.querySelectorAll(\"th\"), function (th) {\n"
	"\tth.onclick = function () {\n"
	"\t\tif (sortKey === th.dataset.k) sortUp = !sortUp; else { sortKey = th.dataset.k; sortUp "
	"= th.dataset.k === \"name\"; }\n"
	"\t\ttable();\n"
	"\t};\n"
	"});\n"
	"\n"
	"function setView(v) {\n"
	"\tview = v;\n"
	"\ttip.style.display = \"none\";\n"
	"\t$(\"vflame\").className = v === \"flame\" ? \"on\" : \"\";\n"
	"\t$(\"vlist\").className = v === \"list\" ? \"on\" : \"\";\n"
	"\t$(\"graph\").style.display = v === \"flame\" ? \"\" : \"none\";\n"
	"\t$(\"list\").style.display = v === \"list\" ? \"block\" : \"none\";\n"
	"\trefresh();\n"
	"}\n"
	"function refresh() {\n"
	"\tmatchShare();\n"
	"\tif (view === \"flame\") draw(); else { crumbs(); table(); }\n"
	"}\n"
	"\n"
	"var ts = $(\"type\");\n"
	"D.profiles.forEach(function (p, i) { addOpt(ts, String(i), p.type + \" (\" + p.unit + "
	"\")\"); });\n"
	"if (D.profiles.length < 2) $(\"typewrap\").style.display = \"none\";\n"
	"ts.onchange = function () { load(+ts.value); refresh(); };\n"
	"$(\"proc\").onchange = function () { base = zoom = +$(\"proc\").value; refresh(); };\n"
	"$(\"vflame\").onclick = function () { setView(\"flame\"); };\n"
	"$(\"vlist\").onclick = function () { setView(\"list\"); };\n"
	"$(\"invert\").onchange = function () { inverted = $(\"invert\").checked; scrollDown = "
	"true; refresh(); };\n"
	"$(\"reset\").onclick = function () { zoom = base; refresh(); };\n"
	"var st = null;\n"
	"$(\"search\").oninput = function () { clearTimeout(st); st = setTimeout(function () { "
	"setSearch(); refresh(); }, 120); };\n"
	"$(\"filter\").oninput = function () { table(); };\n"
	"window.addEventListener(\"resize\", function () { if (view === \"flame\") draw(); });\n"
	"document.addEventListener(\"keydown\", function (ev) {\n"
	"\tif (ev.target.tagName === \"INPUT\") return;\n"
	"\tif (ev.key === \"Escape\") { zoom = base; refresh(); }\n"
	"\telse if (ev.key === \"/\") { ev.preventDefault(); $(\"search\").focus(); }\n"
	"});\n"
	"\n"
	"/* Read-only test hook (tests/browser/flame.js): frames as last laid out, in CSS px */\n"
	"window.__hostprof = { view: function () {\n"
	"\tvar H = (maxDepth + 1) * ROW, out = [];\n"
	"\trowRects.forEach(function (row, d) {\n"
	"\t\tfor (var k = 0; k < row.length; k += 3) out.push({ name: name(row[k + 2]), depth: d, "
	"x: row[k], w: row[k + 1],\n"
	"\t\t\ty: inverted ? d * ROW : H - (d + 1) * ROW, h: ROW, value: P.v[row[k + 2]] });\n"
	"\t});\n"
	"\treturn { type: P.type, unit: P.unit, total: P.v[0], zoom: name(zoom), zoomValue: "
	"P.v[zoom], width: $(\"graph\").clientWidth,\n"
	"\t\tframes: out };\n"
	"} };\n"
	"load(0);\n"
	"refresh();\n"
	"var ms = performance.now();\n"
	"document.body.setAttribute(\"data-render-ms\", ms.toFixed(1));\n"
	"$(\"foot\").textContent = \"hostprof \" + (D.version || \"\") + \" \\u00b7 \" + "
	"(D.profiles.length) + \" profile type(s) \\u00b7 page loaded and drawn in \" +\n"
	"\tms.toFixed(0) + \" ms \\u00b7 click a frame to zoom, Esc to reset, / to search\";\n"
	"})();\n"
	"</script></body></html>\n"
	/* page:end */
	;

static int write_profile(FILE *f, struct html_build *b, const struct profile *p)
{
	const struct profile_desc *d = profile__desc(p);
	struct emit e = {.b = b};
	int err;

	err = html_build__tree(b, p);
	if (err)
		return err;
	/* Integer division: every node of a non-empty profile keeps value >= 1. */
	e.threshold = b->nodes[0].value / PRUNE_DIVISOR;
	err = emit__node(&e, 0, 0);
	if (err)
		goto out;
	fputs("{\"type\":", f);
	put_json_string(f, d->sample_type ? d->sample_type : "");
	fputs(",\"unit\":", f);
	put_json_string(f, d->sample_unit ? d->sample_unit : "");
	fprintf(f,
		",\"period\":%" PRId64 ",\"duration\":%" PRIu64 ",\"threshold\":%" PRId64
		",\"pruned\":%zu,\n\"f\":[",
		d->period, d->duration_nanos, e.threshold, e.pruned);
	for (size_t i = 0; i < e.nr; i++)
		fprintf(f, "%s%" PRIu32, i ? "," : "", e.f[i]);
	fputs("],\n\"d\":[", f);
	for (size_t i = 0; i < e.nr; i++)
		fprintf(f, "%s%" PRIu32, i ? "," : "", e.d[i]);
	fputs("],\n\"v\":[", f);
	for (size_t i = 0; i < e.nr; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", e.v[i]);
	fputs("]}", f);
out:
	free(e.f);
	free(e.d);
	free(e.v);
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
	free(b->frame_out);
	free(b->out_frames);
	free(b->str_out);
	free(b->out_strs);
}

int enc_html__write(const struct profile *const *profiles, size_t n, const char *path)
{
	struct html_build b = {0};
	char *out = NULL, *body = NULL, *marker;
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
	marker = strstr(page_head, "/*DATA*/");
	fwrite(page_head, 1, marker - page_head, f);
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
	fputs(marker + strlen("/*DATA*/"), f);
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

// SPDX-License-Identifier: BSD-2-Clause
/*
 * Interning into the OTLP request's ProfilesDictionary (see enc_otlp.c): one hash index per
 * table, so that every string, mapping, function, location, stack and attribute is there once,
 * and every table starts with its zero entry.
 */
#include <errno.h>
#include <string.h>

#include "base/hash.h"
#include "base/hex.h"
#include "base/utf8.h"
#include "formats/otlp_build.h"

static const char *const key_names[NR_KEYS] = {
	[KEY_THREAD_NAME] = "thread.name",
	[KEY_THREAD_ID] = "thread.id",
	/* Why the thread was off the CPU (wall and off-CPU profiles): running, sleeping, io, ... */
	[KEY_THREAD_STATE] = "thread.state",
	/* hostprof's own, for contention: futex_wait, futex_wait_bitset, mutex, spinlock, ... */
	[KEY_LOCK_KIND] = "hostprof.lock.kind",
	[KEY_LOCK_ADDR] = "hostprof.lock.address",
	[KEY_FRAME_TYPE] = "profile.frame.type",
	[KEY_BUILD_ID_GNU] = "process.executable.build_id.gnu",
	[KEY_BUILD_ID_HTLHASH] = "process.executable.build_id.htlhash",
};

/* The index of the entry equal to key in table t of b, else of a new copy of key. */
#define DICT_INTERN(b, t, key, hash, eq) TABLE_ADD(t, DICT_MAX_ENTRIES, key, hash, eq, b)

static bool string_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_string *k = key;

	return b->strs.arr[idx].len == k->len && memcmp(b->strs.arr[idx].s, k->s, k->len) == 0;
}

/* s must be valid UTF-8 and stay valid until the request is built. */
static int64_t dict_string_raw(struct otlp_build *b, const char *s, size_t len)
{
	struct dict_string key = {s, len};

	if (!len)
		return 0;
	return DICT_INTERN(b, &b->strs, &key, hash_fold(hash_bytes(s, len)), string_eq);
}

const char *otlp_dict__valid_utf8(struct arena *a, const char *s, size_t *len)
{
	char *copy;

	if (utf8__valid(s, *len))
		return s;
	/* Each bad byte becomes the three of U+FFFD. */
	if (*len > (SIZE_MAX - 1) / 3)
		return NULL;
	copy = arena__alloc(a, *len * 3 + 1);
	if (!copy)
		return NULL;
	*len = utf8__replace_invalid(copy, s, *len, UTF8_REPLACEMENT);
	return copy;
}

int64_t otlp_dict__string(struct otlp_build *b, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (!len)
		return 0;
	s = otlp_dict__valid_utf8(&b->arena, s, &len);
	if (!s)
		return -ENOMEM;
	return dict_string_raw(b, s, len);
}

static int64_t dict_key(struct otlp_build *b, enum key k)
{
	int64_t idx;

	if (b->keys[k])
		return b->keys[k];
	idx = otlp_dict__string(b, key_names[k]);
	if (idx > 0)
		b->keys[k] = idx;
	return idx;
}

static uint64_t attr_hash(const struct dict_attr *a)
{
	uint64_t h = hash_add(a->key, a->kind);

	if (a->kind == ATTR_INT)
		return hash_add(h, (uint64_t)a->ival);
	return hash_add(h, hash_bytes(a->sval, a->slen));
}

static bool attr_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_attr *x = &b->attrs.arr[idx], *k = key;

	if (x->key != k->key || x->kind != k->kind)
		return false;
	if (k->kind == ATTR_INT)
		return x->ival == k->ival;
	return x->slen == k->slen && memcmp(x->sval, k->sval, k->slen) == 0;
}

static int64_t dict_attr(struct otlp_build *b, const struct dict_attr *a)
{
	return DICT_INTERN(b, &b->attrs, a, hash_fold(attr_hash(a)), attr_eq);
}

int64_t otlp_dict__attr_string(struct otlp_build *b, enum key k, const char *value)
{
	struct dict_attr a = {.kind = ATTR_STRING};
	int64_t key = dict_key(b, k);

	if (key < 0)
		return key;
	a.key = key;
	a.slen = strlen(value);
	a.sval = otlp_dict__valid_utf8(&b->arena, value, &a.slen);
	if (!a.sval)
		return -ENOMEM;
	return dict_attr(b, &a);
}

int64_t otlp_dict__attr_int(struct otlp_build *b, enum key k, int64_t value)
{
	struct dict_attr a = {.kind = ATTR_INT, .ival = value};
	int64_t key = dict_key(b, k);

	if (key < 0)
		return key;
	a.key = key;
	return dict_attr(b, &a);
}

int64_t otlp_dict__attr_kv(struct otlp_build *b, const char *key, const char *value)
{
	struct dict_attr a = {.kind = ATTR_STRING};
	int64_t k = otlp_dict__string(b, key);

	if (k <= 0)
		return k;
	a.key = k;
	a.slen = strlen(value);
	a.sval = otlp_dict__valid_utf8(&b->arena, value, &a.slen);
	if (!a.sval)
		return -ENOMEM;
	return dict_attr(b, &a);
}

static uint64_t link_hash(const struct dict_link *l)
{
	return hash_add(hash_bytes(l->trace_id, sizeof(l->trace_id)),
			hash_bytes(l->span_id, sizeof(l->span_id)));
}

static bool link_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;

	return !memcmp(&b->links.arr[idx], key, sizeof(struct dict_link));
}

/* n bytes from 2n hex digits; false when s is not exactly that. */
static bool from_hex(uint8_t *out, size_t n, const char *s)
{
	if (!s || strlen(s) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		int hi = hex__digit(s[2 * i]), lo = hex__digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

int64_t otlp_dict__link(struct otlp_build *b, const char *trace_hex, const char *span_hex)
{
	struct dict_link l;

	if (!from_hex(l.trace_id, sizeof(l.trace_id), trace_hex) ||
	    !from_hex(l.span_id, sizeof(l.span_id), span_hex))
		return 0;
	return DICT_INTERN(b, &b->links, &l, hash_fold(link_hash(&l)), link_eq);
}

static uint64_t mapping_hash(const struct dict_mapping *m)
{
	uint64_t h = hash_add(m->start, m->limit);

	h = hash_add(h, m->offset);
	h = hash_add(h, m->filename);
	h = hash_add(h, m->build_id);
	return hash_add(h, m->htlhash);
}

static bool mapping_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_mapping *x = &b->maps.arr[idx], *k = key;

	return x->start == k->start && x->limit == k->limit && x->offset == k->offset &&
	       x->filename == k->filename && x->build_id == k->build_id && x->htlhash == k->htlhash;
}

int64_t otlp_dict__mapping(struct otlp_build *b, const struct dict_mapping *m)
{
	static const struct dict_mapping zero;

	if (memcmp(m, &zero, sizeof(zero)) == 0)
		return 0;
	return DICT_INTERN(b, &b->maps, m, hash_fold(mapping_hash(m)), mapping_eq);
}

static bool function_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_function *x = &b->funcs.arr[idx], *k = key;

	return x->name == k->name && x->system_name == k->system_name && x->filename == k->filename;
}

int64_t otlp_dict__function(struct otlp_build *b, const struct dict_function *f)
{
	return DICT_INTERN(b, &b->funcs, f,
			   hash_fold(hash_add(hash_add(f->name, f->system_name), f->filename)),
			   function_eq);
}

static bool location_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_location *x = &b->locs.arr[idx], *k = key;

	if (x->mapping != k->mapping || x->address != k->address || x->function != k->function ||
	    x->frame_type != k->frame_type || x->nr_lines != k->nr_lines)
		return false;
	for (size_t i = 0; i < k->nr_lines; i++) {
		const struct dict_line *a = &b->lines[x->lines_off + i];
		const struct dict_line *c = &b->lines[k->lines_off + i];

		if (a->function != c->function || a->line != c->line)
			return false;
	}
	return true;
}

int64_t otlp_dict__location(struct otlp_build *b, const struct dict_location *l)
{
	size_t before = b->locs.nr;
	uint64_t h;
	int64_t r;

	h = hash_add(hash_add(l->mapping, l->address), l->function);
	/* Staged lines (see src_location_lines() in otlp_collect.c) are part of the identity. */
	for (size_t i = 0; i < l->nr_lines; i++)
		h = hash_add(hash_add(h, b->lines[l->lines_off + i].function),
			     (uint64_t)b->lines[l->lines_off + i].line);
	r = DICT_INTERN(b, &b->locs, l, hash_fold(hash_add(h, l->frame_type)), location_eq);
	/* New: its staged lines are kept. */
	if (b->locs.nr > before)
		b->nr_lines += l->nr_lines;
	return r;
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_stack *x = &b->stacks.arr[idx], *k = key;

	return x->n == k->n &&
	       memcmp(b->stack_locs + x->off, b->stack_locs + k->off, k->n * sizeof(int32_t)) == 0;
}

/*
 * Interns the n location indices staged at stack_locs[nr_stack_locs..]: kept when new, else
 * dropped by leaving nr_stack_locs where it was.
 */
int64_t otlp_dict__stack_staged(struct otlp_build *b, size_t n)
{
	struct dict_stack key = {b->nr_stack_locs, n};
	size_t before = b->stacks.nr;
	int64_t r;

	r = DICT_INTERN(b, &b->stacks, &key,
			hash_fold(hash_bytes(b->stack_locs + key.off, n * sizeof(int32_t))),
			stack_eq);
	if (b->stacks.nr > before)
		b->nr_stack_locs += n;
	return r;
}

/* Every table starts with its zero entry, which is never in a hash index. */
int otlp_dict__init(struct otlp_build *b)
{
	if (TABLE_INIT(&b->strs) || TABLE_INIT(&b->maps) || TABLE_INIT(&b->funcs) ||
	    TABLE_INIT(&b->locs) || TABLE_INIT(&b->stacks) || TABLE_INIT(&b->attrs) ||
	    TABLE_INIT(&b->links))
		return -ENOMEM;
	b->strs.arr[0] = (struct dict_string){"", 0};
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * Interning into the OTLP request's ProfilesDictionary (see enc_otlp.c): one hash index per
 * table, so that every string, mapping, function, location, stack and attribute is there once,
 * and every table starts with its zero entry.
 */
#include <errno.h>
#include <string.h>

#include "base/hash.h"
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

/*
 * The index of the entry equal to key (size bytes, of the table's type) in the table at arr,
 * else of a new copy of key at arr[*nr]. After TABLE_ROOM().
 */
static int64_t dict_intern(struct otlp_build *b, struct hash_index *idx, void *arr, size_t *nr,
			   size_t size, uint32_t hash, hash_index_eq_fn eq, const void *key)
{
	uint32_t id = hash_index__find(idx, hash, eq, b, key);

	if (id)
		return id;
	memcpy((char *)arr + *nr * size, key, size);
	hash_index__insert(idx, *nr, hash);
	return (*nr)++;
}

static bool string_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_string *k = key;

	return b->strs[idx].len == k->len && memcmp(b->strs[idx].s, k->s, k->len) == 0;
}

/* s must be valid UTF-8 and stay valid until the request is built. */
static int64_t dict_string_raw(struct otlp_build *b, const char *s, size_t len)
{
	struct dict_string key = {s, len};
	int err;

	if (!len)
		return 0;
	err = TABLE_ROOM(&b->str_idx, b->strs, b->cap_strs, b->nr_strs);
	if (err)
		return err;
	return dict_intern(b, &b->str_idx, b->strs, &b->nr_strs, sizeof(key),
			   hash_fold(hash_bytes(s, len)), string_eq, &key);
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
	const struct dict_attr *x = &b->attrs[idx], *k = key;

	if (x->key != k->key || x->kind != k->kind)
		return false;
	if (k->kind == ATTR_INT)
		return x->ival == k->ival;
	return x->slen == k->slen && memcmp(x->sval, k->sval, k->slen) == 0;
}

static int64_t dict_attr(struct otlp_build *b, const struct dict_attr *a)
{
	int err = TABLE_ROOM(&b->attr_idx, b->attrs, b->cap_attrs, b->nr_attrs);

	if (err)
		return err;
	return dict_intern(b, &b->attr_idx, b->attrs, &b->nr_attrs, sizeof(*a),
			   hash_fold(attr_hash(a)), attr_eq, a);
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
	const struct dict_mapping *x = &b->maps[idx], *k = key;

	return x->start == k->start && x->limit == k->limit && x->offset == k->offset &&
	       x->filename == k->filename && x->build_id == k->build_id && x->htlhash == k->htlhash;
}

int64_t otlp_dict__mapping(struct otlp_build *b, const struct dict_mapping *m)
{
	static const struct dict_mapping zero;
	int err;

	if (memcmp(m, &zero, sizeof(zero)) == 0)
		return 0;
	err = TABLE_ROOM(&b->map_idx, b->maps, b->cap_maps, b->nr_maps);
	if (err)
		return err;
	return dict_intern(b, &b->map_idx, b->maps, &b->nr_maps, sizeof(*m),
			   hash_fold(mapping_hash(m)), mapping_eq, m);
}

static bool function_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_function *x = &b->funcs[idx], *k = key;

	return x->name == k->name && x->system_name == k->system_name && x->filename == k->filename;
}

int64_t otlp_dict__function(struct otlp_build *b, const struct dict_function *f)
{
	int err = TABLE_ROOM(&b->func_idx, b->funcs, b->cap_funcs, b->nr_funcs);

	if (err)
		return err;
	return dict_intern(b, &b->func_idx, b->funcs, &b->nr_funcs, sizeof(*f),
			   hash_fold(hash_add(hash_add(f->name, f->system_name), f->filename)),
			   function_eq, f);
}

static bool location_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_location *x = &b->locs[idx], *k = key;

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
	size_t before = b->nr_locs;
	uint64_t h;
	int64_t r;
	int err;

	err = TABLE_ROOM(&b->loc_idx, b->locs, b->cap_locs, b->nr_locs);
	if (err)
		return err;
	h = hash_add(hash_add(l->mapping, l->address), l->function);
	/* Staged lines (see src_location_lines() in otlp_collect.c) are part of the identity. */
	for (size_t i = 0; i < l->nr_lines; i++)
		h = hash_add(hash_add(h, b->lines[l->lines_off + i].function),
			     (uint64_t)b->lines[l->lines_off + i].line);
	r = dict_intern(b, &b->loc_idx, b->locs, &b->nr_locs, sizeof(*l),
			hash_fold(hash_add(h, l->frame_type)), location_eq, l);
	/* New: its staged lines are kept. */
	if (b->nr_locs > before)
		b->nr_lines += l->nr_lines;
	return r;
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	const struct dict_stack *x = &b->stacks[idx], *k = key;

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
	size_t before = b->nr_stacks;
	int64_t r;
	int err;

	err = TABLE_ROOM(&b->stack_idx, b->stacks, b->cap_stacks, b->nr_stacks);
	if (err)
		return err;
	r = dict_intern(b, &b->stack_idx, b->stacks, &b->nr_stacks, sizeof(key),
			hash_fold(hash_bytes(b->stack_locs + key.off, n * sizeof(int32_t))),
			stack_eq, &key);
	if (b->nr_stacks > before)
		b->nr_stack_locs += n;
	return r;
}

/* Every table starts with its zero entry, which is never in a hash index. */
int otlp_dict__init(struct otlp_build *b)
{
	if (VEC_RESERVE(b->strs, b->cap_strs, 1) || VEC_RESERVE(b->maps, b->cap_maps, 1) ||
	    VEC_RESERVE(b->funcs, b->cap_funcs, 1) || VEC_RESERVE(b->locs, b->cap_locs, 1) ||
	    VEC_RESERVE(b->stacks, b->cap_stacks, 1) || VEC_RESERVE(b->attrs, b->cap_attrs, 1))
		return -ENOMEM;
	b->strs[0] = (struct dict_string){"", 0};
	b->maps[0] = (struct dict_mapping){0};
	b->funcs[0] = (struct dict_function){0};
	b->locs[0] = (struct dict_location){0};
	b->stacks[0] = (struct dict_stack){0};
	b->attrs[0] = (struct dict_attr){0};
	b->nr_strs = b->nr_maps = b->nr_funcs = b->nr_locs = b->nr_stacks = b->nr_attrs = 1;
	return 0;
}

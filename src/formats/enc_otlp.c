// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTLP profiles encoder: profile models to one ExportProfilesServiceRequest
 * (opentelemetry-proto v1.10/v1.11 shape), binary or OTLP/JSON.
 *
 * The request carries one ProfilesDictionary that is this encoder's own: every string, mapping,
 * function, location, stack and attribute is re-interned from each input profile's tables on
 * first use, so several profiles (several profile types) share one deduplicated dictionary and
 * nothing that no sample reaches ends up in it. Every table starts with its zero entry.
 *
 * Receivers decide what we may use (see the OTLP notes in the spec): resource attributes are plain
 * `key` + `string_value`/`int_value`, attribute_table values too, never the *_strindex forms; the
 * dictionary is always present with all seven zero entries. Strings are made valid UTF-8 before
 * they enter the message, because proto3 parsers (the Collector's, Pyroscope's, protoc's) reject a
 * whole request over one bad byte in a command line or a symbol name.
 *
 * The binary and the JSON forms are produced from the same protobuf-c structs: the JSON writer
 * walks the generated descriptors, so the two can never disagree on a field.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/atomic_file.h"
#include "formats/encode.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

/*
 * The generated names run past 80 columns on their own; these aliases keep the code readable.
 * They name the generated structs and nothing else.
 */
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_resource_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_value_type;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line pb_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__Link pb_link;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_kvu;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_key_value;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any_value;

#define SCOPE_NAME "hostprof"
#define UNKNOWN_NAME "[unknown]"
/* Dictionary indices are int32 on the wire. */
#define DICT_MAX_ENTRIES ((size_t)INT32_MAX)
#define ARENA_BLOCK_SIZE (64 * 1024)
#define HIDX_MIN_SLOTS 64
/* service.name, process.pid, .executable.name, .executable.path, .command_line, host.name,
 * host.arch, os.type, container.id */
#define MAX_RESOURCE_ATTRS (9 + PROFILE_MAX_PROCESS_ATTRS)
/* thread.name, thread.id, thread.state, and a lock wait's kind and address */
#define MAX_SAMPLE_ATTRS 5
/* Deeper than any message of ours; a guard against a cycle, not a limit anyone meets. */
#define JSON_MAX_DEPTH 32

/* The zero entry of link_table: the spec asks for all-zero ids of the real lengths. */
static const uint8_t zero_trace_id[16];
static const uint8_t zero_span_id[8];

/* Attribute keys, interned on first use so that an unused key leaves no orphan string. */
enum key {
	KEY_THREAD_NAME,
	KEY_THREAD_ID,
	KEY_THREAD_STATE,
	KEY_LOCK_KIND,
	KEY_LOCK_ADDR,
	KEY_FRAME_TYPE,
	KEY_BUILD_ID_GNU,
	KEY_BUILD_ID_HTLHASH,
	NR_KEYS,
};

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

/* --- arena: the protobuf-c structs of one request, released in one go --- */

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

struct arena {
	struct arena_block *head;
};

/* Zeroed memory that lives until arena__free(); NULL on overflow or ENOMEM. */
static void *arena__alloc(struct arena *a, size_t size)
{
	const size_t align = alignof(max_align_t);
	struct arena_block *blk = a->head;
	void *ret;

	if (size > SIZE_MAX / 2)
		return NULL;
	size = (size + align - 1) & ~(align - 1);
	if (!size)
		size = align;
	if (!blk || blk->size - blk->used < size) {
		size_t bytes = size > ARENA_BLOCK_SIZE ? size : ARENA_BLOCK_SIZE;

		blk = calloc(1, sizeof(*blk) + bytes);
		if (!blk)
			return NULL;
		blk->size = bytes;
		blk->next = a->head;
		a->head = blk;
	}
	ret = (char *)blk->data + blk->used;
	blk->used += size;
	return ret;
}

static void *arena__array(struct arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / 2 / size)
		return NULL;
	return arena__alloc(a, n * size);
}

static void arena__free(struct arena *a)
{
	while (a->head) {
		struct arena_block *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

/* --- growable arrays --- */

/* Makes room for element nr of *arr; -E2BIG past what an int32 index can name. */
static int array_grow(void **arr, size_t *cap, size_t nr, size_t elem_size)
{
	size_t new_cap;
	void *tmp;

	if (nr < *cap)
		return 0;
	if (nr >= DICT_MAX_ENTRIES)
		return -E2BIG;
	new_cap = *cap ? *cap * 2 : 16;
	while (new_cap <= nr)
		new_cap *= 2;
	if (new_cap > SIZE_MAX / elem_size)
		return -ENOMEM;
	tmp = realloc(*arr, new_cap * elem_size);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = new_cap;
	return 0;
}

/* Through a real void * rather than a cast of &arr, which would break strict aliasing. */
#define ARRAY_GROW(arr, cap, nr)                                                                   \
	({                                                                                         \
		void *tmp_ = (arr);                                                                \
		int err_ = array_grow(&tmp_, &(cap), (nr), sizeof(*(arr)));                        \
		(arr) = tmp_;                                                                      \
		err_;                                                                              \
	})

/*
 * An open-addressing index from hash to table position. Position 0 marks an empty slot: the zero
 * entries are never inserted, callers map them to 0 before looking up.
 */
struct hslot {
	uint32_t idx;
	uint32_t hash;
};

struct hidx {
	struct hslot *slots;
	size_t mask;
	size_t nr;
};

/* Room for one more entry at a load of at most 3/4, so that a probe always ends. */
static int hidx__reserve(struct hidx *h)
{
	size_t nslots = h->slots ? h->mask + 1 : 0, new_nslots;
	struct hslot *slots;

	if ((h->nr + 1) * 4 <= nslots * 3)
		return 0;
	new_nslots = nslots ? nslots * 2 : HIDX_MIN_SLOTS;
	slots = calloc(new_nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < nslots; i++) {
		size_t j;

		if (!h->slots[i].idx)
			continue;
		for (j = h->slots[i].hash & (new_nslots - 1); slots[j].idx;
		     j = (j + 1) & (new_nslots - 1))
			;
		slots[j] = h->slots[i];
	}
	free(h->slots);
	h->slots = slots;
	h->mask = new_nslots - 1;
	return 0;
}

struct otlp_build;
typedef bool (*hidx_eq_fn)(const struct otlp_build *b, uint32_t idx, const void *key);

/* The slot of the entry equal to key, else the empty slot where it belongs. After reserve(). */
static struct hslot *hidx__find(const struct hidx *h, uint32_t hash, hidx_eq_fn eq,
				const struct otlp_build *b, const void *key)
{
	for (size_t i = hash & h->mask;; i = (i + 1) & h->mask) {
		struct hslot *s = &h->slots[i];

		if (!s->idx || (s->hash == hash && eq(b, s->idx, key)))
			return s;
	}
}

static void hidx__set(struct hidx *h, struct hslot *s, uint32_t idx, uint32_t hash)
{
	s->idx = idx;
	s->hash = hash;
	h->nr++;
}

/* --- UTF-8 --- */

/* The length of the well-formed UTF-8 sequence (RFC 3629) at s, or 0 if there is none. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (left < n)
		return 0;
	/* The second byte's range excludes overlong forms, surrogates and code points > 10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return n;
}

#define REPLACEMENT_CHAR "\xef\xbf\xbd" /* U+FFFD */

static bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = p[i] < 0x80 ? 1 : utf8_seq(p + i, len - i);

		if (!n)
			return false;
		i += n;
	}
	return true;
}

/*
 * s as valid UTF-8: s itself when it is, else a copy in the arena where every byte that starts no
 * well-formed sequence became U+FFFD. NULL on ENOMEM.
 */
static const char *utf8_clean(struct arena *a, const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t in = *len, out = 0;
	char *copy;

	if (utf8_valid(s, in))
		return s;
	if (in > (SIZE_MAX - 1) / 3)
		return NULL;
	copy = arena__alloc(a, in * 3 + 1);
	if (!copy)
		return NULL;
	for (size_t i = 0; i < in;) {
		size_t n = utf8_seq(p + i, in - i);

		if (n) {
			memcpy(copy + out, p + i, n);
			out += n;
			i += n;
		} else {
			memcpy(copy + out, REPLACEMENT_CHAR, 3);
			out += 3;
			i++;
		}
	}
	copy[out] = '\0';
	*len = out;
	return copy;
}

/* --- the dictionary, in our own compact form until it is laid out as protobuf-c structs --- */

struct dict_string {
	const char *s; /* NUL-terminated; in a profile, the arena, or static */
	size_t len;
};

struct dict_mapping {
	uint64_t start, limit, offset;
	uint32_t filename;
	uint32_t build_id; /* attribute indices; 0 = none */
	uint32_t htlhash;
};

struct dict_function {
	uint32_t name, system_name, filename;
};

struct dict_location {
	uint32_t mapping;
	uint64_t address;
	uint32_t function;   /* the innermost function when the location has lines */
	uint32_t frame_type; /* attribute index */
	size_t lines_off;    /* into otlp_build::lines */
	size_t nr_lines;     /* 0: one Line with `function` and no line number */
};

/* One level of a location's inline chain, innermost first. */
struct dict_line {
	uint32_t function;
	int64_t line;
};

struct dict_stack {
	size_t off; /* into otlp_build::stack_locs */
	size_t n;
};

enum attr_kind {
	ATTR_STRING,
	ATTR_INT,
};

/* A string value stays inline (string_value), so it is not a string_table entry. */
struct dict_attr {
	uint32_t key; /* string index */
	enum attr_kind kind;
	int64_t ival;
	const char *sval;
	size_t slen;
};

/* One sample of the output: the model's samples, merged where OTLP sees no difference. */
struct out_sample {
	uint32_t res; /* resource index */
	uint32_t stack;
	uint32_t attrs[MAX_SAMPLE_ATTRS];
	uint32_t nr_attrs;
	int64_t value;
	int64_t count;
};

/* One ResourceProfiles: a process, known from a process entry or only from its samples. */
struct resource {
	uint32_t pid;
	const struct profile *p;	    /* where proc or comm come from */
	const struct profile_process *proc; /* NULL when no profile has an entry for pid */
	uint32_t comm;			    /* model string index, for processes without entry */
	size_t nr_samples;		    /* over all input profiles */
};

/* One input profile: where its tables went in the dictionary, and its samples. */
struct otlp_src {
	const struct profile *p;
	/* Model index -> dictionary index, filled on first use; 0 = not yet. */
	uint32_t *str_map;
	uint32_t *mapping_map;
	uint32_t *location_map;
	uint32_t *stack_map;
	uint32_t *thread_name_map; /* thread name string -> thread.name attribute */

	struct out_sample *samples;
	size_t nr_samples, cap_samples;
	struct hidx sample_idx;
	size_t *res_off;	 /* per resource: first sample once sorted; nr_res + 1 entries */
	pb_sample **sample_ptrs; /* sorted by resource */

	bool counts; /* values are sample counts (otlp_opts.samples_count for cpu) */
	/* The contentions/count Profile that goes beside a contention profile: the same samples,
	 * their wait counts as values. */
	bool contentions;
	pb_value_type *sample_type;
	pb_value_type *period_type; /* NULL when the profile has no period type */
};

struct otlp_build {
	const struct otlp_opts *o;
	struct arena arena;

	struct dict_string *strs;
	size_t nr_strs, cap_strs;
	struct hidx str_idx;

	struct dict_mapping *maps;
	size_t nr_maps, cap_maps;
	struct hidx map_idx;

	struct dict_function *funcs;
	size_t nr_funcs, cap_funcs;
	struct hidx func_idx;

	struct dict_location *locs;
	size_t nr_locs, cap_locs;
	struct hidx loc_idx;
	struct dict_line *lines; /* all locations' lines back to back; new ones staged at the end */
	size_t nr_lines, cap_lines;

	struct dict_stack *stacks;
	size_t nr_stacks, cap_stacks;
	int32_t *stack_locs;
	size_t nr_stack_locs, cap_stack_locs;
	struct hidx stack_idx;

	struct dict_attr *attrs;
	size_t nr_attrs, cap_attrs;
	struct hidx attr_idx;

	uint32_t keys[NR_KEYS]; /* string indices; 0 = not interned yet */
	uint32_t frame_attr[5]; /* profile.frame.type attribute per type name; 0 = not yet */

	struct resource *res;
	size_t nr_res, cap_res;
	struct hidx res_idx;

	struct otlp_src *srcs;
	size_t nr_srcs;

	pb_request req;
	pb_dictionary dict;
	pb_scope scope;
};

/* --- interning into the dictionary --- */

static bool string_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
	const struct dict_string *k = key;

	return b->strs[idx].len == k->len && memcmp(b->strs[idx].s, k->s, k->len) == 0;
}

/* s must be valid UTF-8 and stay valid until the request is built. */
static int64_t dict_string_raw(struct otlp_build *b, const char *s, size_t len)
{
	struct dict_string key = {s, len};
	struct hslot *slot;
	uint32_t hash;
	int err;

	if (!len)
		return 0;
	err = hidx__reserve(&b->str_idx);
	if (!err)
		err = ARRAY_GROW(b->strs, b->cap_strs, b->nr_strs);
	if (err)
		return err;
	hash = hash_fold(hash_bytes(s, len));
	slot = hidx__find(&b->str_idx, hash, string_eq, b, &key);
	if (slot->idx)
		return slot->idx;
	b->strs[b->nr_strs] = key;
	hidx__set(&b->str_idx, slot, b->nr_strs, hash);
	return b->nr_strs++;
}

static int64_t dict_string(struct otlp_build *b, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (!len)
		return 0;
	s = utf8_clean(&b->arena, s, &len);
	if (!s)
		return -ENOMEM;
	return dict_string_raw(b, s, len);
}

static int64_t dict_key(struct otlp_build *b, enum key k)
{
	int64_t idx;

	if (b->keys[k])
		return b->keys[k];
	idx = dict_string(b, key_names[k]);
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

static bool attr_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
	const struct dict_attr *x = &b->attrs[idx], *k = key;

	if (x->key != k->key || x->kind != k->kind)
		return false;
	if (k->kind == ATTR_INT)
		return x->ival == k->ival;
	return x->slen == k->slen && memcmp(x->sval, k->sval, k->slen) == 0;
}

static int64_t dict_attr(struct otlp_build *b, const struct dict_attr *a)
{
	struct hslot *slot;
	uint32_t hash;
	int err;

	err = hidx__reserve(&b->attr_idx);
	if (!err)
		err = ARRAY_GROW(b->attrs, b->cap_attrs, b->nr_attrs);
	if (err)
		return err;
	hash = hash_fold(attr_hash(a));
	slot = hidx__find(&b->attr_idx, hash, attr_eq, b, a);
	if (slot->idx)
		return slot->idx;
	b->attrs[b->nr_attrs] = *a;
	hidx__set(&b->attr_idx, slot, b->nr_attrs, hash);
	return b->nr_attrs++;
}

static int64_t dict_attr_string(struct otlp_build *b, enum key k, const char *value)
{
	struct dict_attr a = {.kind = ATTR_STRING};
	int64_t key = dict_key(b, k);

	if (key < 0)
		return key;
	a.key = key;
	a.slen = strlen(value);
	a.sval = utf8_clean(&b->arena, value, &a.slen);
	if (!a.sval)
		return -ENOMEM;
	return dict_attr(b, &a);
}

static int64_t dict_attr_int(struct otlp_build *b, enum key k, int64_t value)
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

static bool mapping_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
	const struct dict_mapping *x = &b->maps[idx], *k = key;

	return x->start == k->start && x->limit == k->limit && x->offset == k->offset &&
	       x->filename == k->filename && x->build_id == k->build_id && x->htlhash == k->htlhash;
}

static int64_t dict_mapping(struct otlp_build *b, const struct dict_mapping *m)
{
	static const struct dict_mapping zero;
	struct hslot *slot;
	uint32_t hash;
	int err;

	if (memcmp(m, &zero, sizeof(zero)) == 0)
		return 0;
	err = hidx__reserve(&b->map_idx);
	if (!err)
		err = ARRAY_GROW(b->maps, b->cap_maps, b->nr_maps);
	if (err)
		return err;
	hash = hash_fold(mapping_hash(m));
	slot = hidx__find(&b->map_idx, hash, mapping_eq, b, m);
	if (slot->idx)
		return slot->idx;
	b->maps[b->nr_maps] = *m;
	hidx__set(&b->map_idx, slot, b->nr_maps, hash);
	return b->nr_maps++;
}

static bool function_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
	const struct dict_function *x = &b->funcs[idx], *k = key;

	return x->name == k->name && x->system_name == k->system_name && x->filename == k->filename;
}

static int64_t dict_function(struct otlp_build *b, const struct dict_function *f)
{
	struct hslot *slot;
	uint32_t hash;
	int err;

	err = hidx__reserve(&b->func_idx);
	if (!err)
		err = ARRAY_GROW(b->funcs, b->cap_funcs, b->nr_funcs);
	if (err)
		return err;
	hash = hash_fold(hash_add(hash_add(f->name, f->system_name), f->filename));
	slot = hidx__find(&b->func_idx, hash, function_eq, b, f);
	if (slot->idx)
		return slot->idx;
	b->funcs[b->nr_funcs] = *f;
	hidx__set(&b->func_idx, slot, b->nr_funcs, hash);
	return b->nr_funcs++;
}

static bool location_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
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

static int64_t dict_location(struct otlp_build *b, const struct dict_location *l)
{
	struct hslot *slot;
	uint64_t h;
	uint32_t hash;
	int err;

	err = hidx__reserve(&b->loc_idx);
	if (!err)
		err = ARRAY_GROW(b->locs, b->cap_locs, b->nr_locs);
	if (err)
		return err;
	h = hash_add(hash_add(l->mapping, l->address), l->function);
	/* Staged lines (see src_location()) are part of the identity. */
	for (size_t i = 0; i < l->nr_lines; i++)
		h = hash_add(hash_add(h, b->lines[l->lines_off + i].function),
			     (uint64_t)b->lines[l->lines_off + i].line);
	hash = hash_fold(hash_add(h, l->frame_type));
	slot = hidx__find(&b->loc_idx, hash, location_eq, b, l);
	if (slot->idx)
		return slot->idx;
	/* New: its staged lines are kept. */
	b->nr_lines += l->nr_lines;
	b->locs[b->nr_locs] = *l;
	hidx__set(&b->loc_idx, slot, b->nr_locs, hash);
	return b->nr_locs++;
}

static bool stack_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
	const struct dict_stack *x = &b->stacks[idx], *k = key;

	return x->n == k->n &&
	       memcmp(b->stack_locs + x->off, b->stack_locs + k->off, k->n * sizeof(int32_t)) == 0;
}

/*
 * Interns the n location indices staged at stack_locs[nr_stack_locs..]: kept when new, else
 * dropped by leaving nr_stack_locs where it was.
 */
static int64_t dict_stack_staged(struct otlp_build *b, size_t n)
{
	struct dict_stack key = {b->nr_stack_locs, n};
	struct hslot *slot;
	uint32_t hash;
	int err;

	err = hidx__reserve(&b->stack_idx);
	if (!err)
		err = ARRAY_GROW(b->stacks, b->cap_stacks, b->nr_stacks);
	if (err)
		return err;
	hash = hash_fold(hash_bytes(b->stack_locs + key.off, n * sizeof(int32_t)));
	slot = hidx__find(&b->stack_idx, hash, stack_eq, b, &key);
	if (slot->idx)
		return slot->idx;
	b->stacks[b->nr_stacks] = key;
	b->nr_stack_locs += n;
	hidx__set(&b->stack_idx, slot, b->nr_stacks, hash);
	return b->nr_stacks++;
}

/* --- from one input profile into the dictionary --- */

static int64_t src_string(struct otlp_build *b, struct otlp_src *src, uint32_t idx)
{
	const char *s;
	int64_t ret;

	if (!idx)
		return 0;
	if (src->str_map[idx])
		return src->str_map[idx];
	s = profile__string_at(src->p, idx);
	if (!s)
		return -EINVAL;
	ret = dict_string(b, s);
	if (ret > 0)
		src->str_map[idx] = ret;
	return ret;
}

static int64_t src_mapping(struct otlp_build *b, struct otlp_src *src, uint32_t idx)
{
	const struct profile_mapping *m;
	struct dict_mapping d = {0};
	int64_t r;

	if (!idx)
		return 0;
	if (src->mapping_map[idx])
		return src->mapping_map[idx];
	m = profile__mapping_at(src->p, idx);
	if (!m)
		return -EINVAL;
	d.start = m->start;
	d.limit = m->limit;
	d.offset = m->offset;
	r = src_string(b, src, m->filename);
	if (r < 0)
		return r;
	d.filename = r;
	if (m->build_id) {
		const char *s = profile__string_at(src->p, m->build_id);

		r = s ? dict_attr_string(b, KEY_BUILD_ID_GNU, s) : -EINVAL;
		if (r < 0)
			return r;
		d.build_id = r;
	}
	if (m->htlhash) {
		const char *s = profile__string_at(src->p, m->htlhash);

		r = s ? dict_attr_string(b, KEY_BUILD_ID_HTLHASH, s) : -EINVAL;
		if (r < 0)
			return r;
		d.htlhash = r;
	}
	r = dict_mapping(b, &d);
	if (r > 0)
		src->mapping_map[idx] = r;
	return r;
}

static int64_t frame_type_attr(struct otlp_build *b, enum frame_kind kind)
{
	const char *name = "native";
	size_t slot = 0;
	int64_t r;

	/* No default: a new frame kind must choose its semconv name here (-Wswitch says so). */
	switch (kind) {
	case FRAME_NATIVE:
		name = "native";
		slot = 0;
		break;
	case FRAME_KERNEL:
		name = "kernel";
		slot = 1;
		break;
	case FRAME_JIT_V8:
		name = "v8js";
		slot = 2;
		break;
	case FRAME_JIT_JVM:
		name = "jvm";
		slot = 3;
		break;
	case FRAME_JIT_CPYTHON:
		name = "cpython";
		slot = 4;
		break;
	case FRAME_JIT_OTHER:
		/* JIT code of a runtime the map does not name: semconv has no better word. */
		name = "native";
		slot = 0;
		break;
	}
	if (b->frame_attr[slot])
		return b->frame_attr[slot];
	r = dict_attr_string(b, KEY_FRAME_TYPE, name);
	if (r > 0)
		b->frame_attr[slot] = r;
	return r;
}

/*
 * A location's function: the model's, or, for a frame the symbolizer could not resolve, one named
 * by its "[unknown] binary+0xoffset" label so that no viewer shows a nameless frame. This is the
 * rule of profile__location_name(), which the other encoders follow too.
 */
static int64_t src_location_function(struct otlp_build *b, struct otlp_src *src,
				     const struct profile_location *l)
{
	const struct profile_function *f =
		l->function ? profile__function_at(src->p, l->function) : NULL;
	struct dict_function d = {0};
	int64_t r;

	if (l->function && !f)
		return -EINVAL;
	if (f && f->name) {
		r = src_string(b, src, f->name);
		if (r < 0)
			return r;
		d.name = r;
		r = src_string(b, src, f->system_name);
		if (r < 0)
			return r;
		d.system_name = r;
		r = src_string(b, src, f->filename);
		if (r < 0)
			return r;
		d.filename = r;
	} else {
		r = l->label ? src_string(b, src, l->label) : dict_string(b, UNKNOWN_NAME);
		if (r < 0)
			return r;
		d.name = d.system_name = r;
	}
	return dict_function(b, &d);
}

/*
 * Stages the location's inline chain after the last kept line; dict_location() keeps it if the
 * location is new. 0 or -errno.
 */
static int64_t src_location_lines(struct otlp_build *b, struct otlp_src *src, uint32_t idx,
				  struct dict_location *d)
{
	size_t n;
	const struct profile_line *lines = profile__location_lines(src->p, idx, &n);
	int err;

	d->lines_off = b->nr_lines;
	d->nr_lines = 0;
	if (!n)
		return 0;
	err = ARRAY_GROW(b->lines, b->cap_lines, b->nr_lines + n - 1);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct profile_location one = {.function = lines[i].function};
		int64_t r = src_location_function(b, src, &one);

		if (r < 0)
			return r;
		b->lines[b->nr_lines + i] =
			(struct dict_line){.function = r, .line = lines[i].line};
	}
	d->nr_lines = n;
	d->function = b->lines[b->nr_lines].function;
	return 0;
}

static int64_t src_location(struct otlp_build *b, struct otlp_src *src, uint32_t idx)
{
	const struct profile_location *l;
	struct dict_location d = {0};
	int64_t r;

	if (src->location_map[idx])
		return src->location_map[idx];
	l = idx ? profile__location_at(src->p, idx) : NULL;
	if (!l)
		return -EINVAL;
	/* Kernel frames belong to no mapping of the process. */
	if (l->kind != FRAME_KERNEL) {
		r = src_mapping(b, src, l->mapping);
		if (r < 0)
			return r;
		d.mapping = r;
	}
	d.address = l->address;
	r = src_location_function(b, src, l);
	if (r < 0)
		return r;
	d.function = r;
	r = src_location_lines(b, src, idx, &d);
	if (r < 0)
		return r;
	r = frame_type_attr(b, l->kind);
	if (r < 0)
		return r;
	d.frame_type = r;
	r = dict_location(b, &d);
	if (r > 0)
		src->location_map[idx] = r;
	return r;
}

static int64_t src_stack(struct otlp_build *b, struct otlp_src *src, uint32_t idx)
{
	const uint32_t *locs;
	size_t n;
	int64_t r;
	int err;

	if (!idx)
		return 0;
	if (src->stack_map[idx])
		return src->stack_map[idx];
	locs = profile__stack_at(src->p, idx, &n);
	if (!n)
		return idx < profile__nr_stacks(src->p) ? 0 : -EINVAL;
	if (n > DICT_MAX_ENTRIES)
		return -E2BIG;
	/* Stage the translated stack after the last one; dict_stack_staged() keeps it if new. */
	err = ARRAY_GROW(b->stack_locs, b->cap_stack_locs, b->nr_stack_locs + n - 1);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		r = src_location(b, src, locs[i]);
		if (r < 0)
			return r;
		/* Both the model and OTLP list a stack leaf first. */
		b->stack_locs[b->nr_stack_locs + i] = (int32_t)r;
	}
	r = dict_stack_staged(b, n);
	if (r > 0)
		src->stack_map[idx] = r;
	return r;
}

/* --- resources --- */

static bool resource_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
	return b->res[idx - 1].pid == *(const uint32_t *)key;
}

/* The resource of pid, created when new; its index in b->res, or -errno. Never the zero slot:
 * the index stores position + 1. */
static int64_t resource_get(struct otlp_build *b, uint32_t pid)
{
	uint32_t hash = hash_fold(hash_add(0x70696473, pid));
	struct hslot *slot;
	int err;

	err = hidx__reserve(&b->res_idx);
	if (!err)
		err = ARRAY_GROW(b->res, b->cap_res, b->nr_res);
	if (err)
		return err;
	slot = hidx__find(&b->res_idx, hash, resource_eq, b, &pid);
	if (slot->idx)
		return slot->idx - 1;
	b->res[b->nr_res] = (struct resource){.pid = pid};
	hidx__set(&b->res_idx, slot, b->nr_res + 1, hash);
	return b->nr_res++;
}

/* Every process entry first, in the order of the inputs and of their process tables. */
static int collect_processes(struct otlp_build *b)
{
	for (size_t k = 0; k < b->nr_srcs; k++) {
		const struct profile *p = b->srcs[k].p;
		size_t nr = profile__nr_processes(p);

		for (size_t i = 0; i < nr; i++) {
			const struct profile_process *proc = profile__process_at(p, i);
			int64_t r;

			if (!proc)
				return -EINVAL;
			r = resource_get(b, proc->pid);
			if (r < 0)
				return (int)r;
			if (!b->res[r].proc) {
				b->res[r].proc = proc;
				b->res[r].p = p;
			}
		}
	}
	return 0;
}

/* --- samples --- */

static uint64_t sample_hash(const struct out_sample *s)
{
	uint64_t h = hash_add(s->res, s->stack);

	for (uint32_t i = 0; i < s->nr_attrs; i++)
		h = hash_add(h, s->attrs[i]);
	return h;
}

/* What sample_eq() compares: a candidate and the input whose samples the index covers. */
struct sample_key {
	const struct otlp_src *src;
	const struct out_sample *s;
};

static bool sample_eq(const struct otlp_build *b, uint32_t idx, const void *key)
{
	const struct sample_key *k = key;
	const struct out_sample *x = &k->src->samples[idx - 1];

	(void)b; /* the samples are the input's, which the key names */

	return x->res == k->s->res && x->stack == k->s->stack && x->nr_attrs == k->s->nr_attrs &&
	       memcmp(x->attrs, k->s->attrs, k->s->nr_attrs * sizeof(x->attrs[0])) == 0;
}

static int64_t src_thread_name(struct otlp_build *b, struct otlp_src *src, uint32_t idx)
{
	const char *s;
	int64_t r;

	if (src->thread_name_map[idx])
		return src->thread_name_map[idx];
	s = profile__string_at(src->p, idx);
	if (!s)
		return -EINVAL;
	r = dict_attr_string(b, KEY_THREAD_NAME, s);
	if (r > 0)
		src->thread_name_map[idx] = r;
	return r;
}

/*
 * The model keys samples by (stack, pid, tid, comm, thread name); OTLP's sample identity within
 * one resource is (stack, attributes), which leaves out comm. Samples that differ only there (a
 * process that exec'd within the window) are summed into one, as the spec asks.
 */
static int src_add_sample(struct otlp_build *b, size_t k, const struct profile_sample *s)
{
	struct otlp_src *src = &b->srcs[k];
	struct out_sample key = {0}, *o;
	struct hslot *slot;
	uint32_t hash;
	int64_t r;
	int err;

	r = resource_get(b, s->labels.pid);
	if (r < 0)
		return (int)r;
	key.res = r;
	if (!b->res[r].proc && !b->res[r].comm && s->labels.comm) {
		b->res[r].p = src->p;
		b->res[r].comm = s->labels.comm;
	}
	r = src_stack(b, src, s->stack);
	if (r < 0)
		return (int)r;
	key.stack = r;
	if (s->labels.thread_name) {
		r = src_thread_name(b, src, s->labels.thread_name);
		if (r < 0)
			return (int)r;
		key.attrs[key.nr_attrs++] = r;
	}
	/* tid 0 is real (the idle task), so thread.id is always set. */
	r = dict_attr_int(b, KEY_THREAD_ID, s->labels.tid);
	if (r < 0)
		return (int)r;
	key.attrs[key.nr_attrs++] = r;
	if (s->labels.thread_state) {
		r = dict_attr_string(b, KEY_THREAD_STATE,
				     profile__string_at(src->p, s->labels.thread_state));
		if (r < 0)
			return (int)r;
		key.attrs[key.nr_attrs++] = r;
	}
	if (s->labels.wait_kind) {
		r = dict_attr_string(b, KEY_LOCK_KIND,
				     profile__string_at(src->p, s->labels.wait_kind));
		if (r < 0)
			return (int)r;
		key.attrs[key.nr_attrs++] = r;
		r = dict_attr_int(b, KEY_LOCK_ADDR, (int64_t)s->labels.wait_addr);
		if (r < 0)
			return (int)r;
		key.attrs[key.nr_attrs++] = r;
	}

	err = hidx__reserve(&src->sample_idx);
	if (!err)
		err = ARRAY_GROW(src->samples, src->cap_samples, src->nr_samples);
	if (err)
		return err;
	hash = hash_fold(sample_hash(&key));
	slot = hidx__find(&src->sample_idx, hash, sample_eq, b, &(struct sample_key){src, &key});
	if (!slot->idx) {
		/* Positions start at 1 in the index, where 0 marks an empty slot. */
		src->samples[src->nr_samples++] = key;
		hidx__set(&src->sample_idx, slot, src->nr_samples, hash);
		b->res[key.res].nr_samples++;
	}
	o = &src->samples[slot->idx - 1];
	if (__builtin_add_overflow(o->value, s->value, &o->value) ||
	    __builtin_add_overflow(o->count, s->count, &o->count))
		return -EOVERFLOW;
	return 0;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static pb_value_type *value_type(struct otlp_build *b, const char *type, const char *unit, int *err)
{
	pb_value_type *vt = arena__alloc(&b->arena, sizeof(*vt));
	int64_t t, u;

	if (!vt) {
		*err = -ENOMEM;
		return NULL;
	}
	opentelemetry__proto__profiles__v1development__value_type__init(vt);
	t = dict_string(b, type);
	u = dict_string(b, unit);
	if (t < 0 || u < 0) {
		*err = t < 0 ? (int)t : (int)u;
		return NULL;
	}
	vt->type_strindex = (int32_t)t;
	vt->unit_strindex = (int32_t)u;
	return vt;
}

static int src_collect(struct otlp_build *b, size_t k)
{
	struct otlp_src *src = &b->srcs[k];
	const struct profile *p = src->p;
	const struct profile_desc *d = profile__desc(p);
	size_t nr = profile__nr_samples(p);
	int err = 0;

	src->str_map = calloc(profile__nr_strings(p) + 1, sizeof(*src->str_map));
	src->thread_name_map = calloc(profile__nr_strings(p) + 1, sizeof(*src->thread_name_map));
	src->mapping_map = calloc(profile__nr_mappings(p) + 1, sizeof(*src->mapping_map));
	src->location_map = calloc(profile__nr_locations(p) + 1, sizeof(*src->location_map));
	src->stack_map = calloc(profile__nr_stacks(p) + 1, sizeof(*src->stack_map));
	if (!src->str_map || !src->thread_name_map || !src->mapping_map || !src->location_map ||
	    !src->stack_map)
		return -ENOMEM;

	/* Sample 0 is the model's zero entry. */
	for (size_t i = 1; i < nr; i++) {
		err = src_add_sample(b, k, profile__sample_at(p, i));
		if (err)
			return err;
	}
	/* A profile without samples adds no Profile, so its type strings would be orphans. */
	if (!src->nr_samples)
		return 0;

	src->counts = b->o->samples_count && strcmp(or_empty(d->sample_type), "cpu") == 0;
	if (src->contentions) {
		src->counts = true;
		src->sample_type = value_type(b, "contentions", "count", &err);
	} else if (src->counts)
		src->sample_type = value_type(b, "samples", "count", &err);
	else
		src->sample_type = value_type(b, d->sample_type, d->sample_unit, &err);
	if (!src->sample_type)
		return err;
	if (d->period_type && d->period_type[0]) {
		src->period_type = value_type(b, d->period_type, d->period_unit, &err);
		if (!src->period_type)
			return err;
	}
	return 0;
}

/* --- the dictionary as protobuf-c structs --- */

static int32_t *int32_list(struct arena *a, const uint32_t *idx, size_t n, size_t *out_n)
{
	int32_t *list = arena__array(a, n, sizeof(*list));
	size_t m = 0;

	if (!list)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (idx[i])
			list[m++] = (int32_t)idx[i];
	}
	*out_n = m;
	return list;
}

static int build_dict_mappings(struct otlp_build *b)
{
	pb_mapping *m = arena__array(&b->arena, b->nr_maps, sizeof(*m));
	pb_mapping **ptrs = arena__array(&b->arena, b->nr_maps, sizeof(*ptrs));

	if (!m || !ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->nr_maps; i++) {
		const struct dict_mapping *d = &b->maps[i];
		uint32_t attrs[2] = {d->build_id, d->htlhash};

		opentelemetry__proto__profiles__v1development__mapping__init(&m[i]);
		m[i].memory_start = d->start;
		m[i].memory_limit = d->limit;
		m[i].file_offset = d->offset;
		m[i].filename_strindex = (int32_t)d->filename;
		m[i].attribute_indices = int32_list(&b->arena, attrs, 2, &m[i].n_attribute_indices);
		if (!m[i].attribute_indices)
			return -ENOMEM;
		ptrs[i] = &m[i];
	}
	b->dict.n_mapping_table = b->nr_maps;
	b->dict.mapping_table = ptrs;
	return 0;
}

static int build_dict_locations(struct otlp_build *b)
{
	pb_location *l = arena__array(&b->arena, b->nr_locs, sizeof(*l));
	pb_location **ptrs = arena__array(&b->arena, b->nr_locs, sizeof(*ptrs));
	/* One Line for a location without lines, else one per level. */
	pb_line *lines = arena__array(&b->arena, b->nr_locs + b->nr_lines, sizeof(*lines));
	pb_line **line_ptrs = arena__array(&b->arena, b->nr_locs + b->nr_lines, sizeof(*line_ptrs));
	size_t next = 0;
	int32_t *attrs = arena__array(&b->arena, b->nr_locs, sizeof(*attrs));

	if (!l || !ptrs || !lines || !line_ptrs || !attrs)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__location__init(&l[0]);
	ptrs[0] = &l[0];
	for (size_t i = 1; i < b->nr_locs; i++) {
		const struct dict_location *d = &b->locs[i];

		opentelemetry__proto__profiles__v1development__location__init(&l[i]);
		l[i].mapping_index = (int32_t)d->mapping;
		l[i].address = d->address;
		l[i].lines = &line_ptrs[next];
		if (!d->nr_lines) {
			opentelemetry__proto__profiles__v1development__line__init(&lines[next]);
			lines[next].function_index = (int32_t)d->function;
			line_ptrs[next] = &lines[next];
			next++;
			l[i].n_lines = 1;
		}
		for (size_t j = 0; j < d->nr_lines; j++, next++) {
			const struct dict_line *dl = &b->lines[d->lines_off + j];

			opentelemetry__proto__profiles__v1development__line__init(&lines[next]);
			lines[next].function_index = (int32_t)dl->function;
			lines[next].line = dl->line;
			line_ptrs[next] = &lines[next];
		}
		if (d->nr_lines)
			l[i].n_lines = d->nr_lines;
		attrs[i] = (int32_t)d->frame_type;
		l[i].n_attribute_indices = 1;
		l[i].attribute_indices = &attrs[i];
		ptrs[i] = &l[i];
	}
	b->dict.n_location_table = b->nr_locs;
	b->dict.location_table = ptrs;
	return 0;
}

static int build_dict_functions(struct otlp_build *b)
{
	pb_function *f = arena__array(&b->arena, b->nr_funcs, sizeof(*f));
	pb_function **ptrs = arena__array(&b->arena, b->nr_funcs, sizeof(*ptrs));

	if (!f || !ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->nr_funcs; i++) {
		opentelemetry__proto__profiles__v1development__function__init(&f[i]);
		f[i].name_strindex = (int32_t)b->funcs[i].name;
		f[i].system_name_strindex = (int32_t)b->funcs[i].system_name;
		f[i].filename_strindex = (int32_t)b->funcs[i].filename;
		ptrs[i] = &f[i];
	}
	b->dict.n_function_table = b->nr_funcs;
	b->dict.function_table = ptrs;
	return 0;
}

static int build_dict_attrs(struct otlp_build *b)
{
	pb_kvu *kv = arena__array(&b->arena, b->nr_attrs, sizeof(*kv));
	pb_kvu **ptrs = arena__array(&b->arena, b->nr_attrs, sizeof(*ptrs));
	pb_any_value *v = arena__array(&b->arena, b->nr_attrs, sizeof(*v));

	if (!kv || !ptrs || !v)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__key_value_and_unit__init(&kv[0]);
	ptrs[0] = &kv[0];
	for (size_t i = 1; i < b->nr_attrs; i++) {
		const struct dict_attr *a = &b->attrs[i];

		opentelemetry__proto__profiles__v1development__key_value_and_unit__init(&kv[i]);
		opentelemetry__proto__common__v1__any_value__init(&v[i]);
		kv[i].key_strindex = (int32_t)a->key;
		if (a->kind == ATTR_INT) {
			v[i].value_case =
				OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
			v[i].int_value = a->ival;
		} else {
			v[i].value_case =
				OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
			/* protobuf-c wants char *; packing only reads it. */
			v[i].string_value = (char *)a->sval;
		}
		kv[i].value = &v[i];
		ptrs[i] = &kv[i];
	}
	b->dict.n_attribute_table = b->nr_attrs;
	b->dict.attribute_table = ptrs;
	return 0;
}

static int build_dictionary(struct otlp_build *b)
{
	pb_link *link = arena__alloc(&b->arena, sizeof(*link));
	pb_link **link_ptrs = arena__alloc(&b->arena, sizeof(*link_ptrs));
	pb_stack *st = arena__array(&b->arena, b->nr_stacks, sizeof(*st));
	pb_stack **st_ptrs = arena__array(&b->arena, b->nr_stacks, sizeof(*st_ptrs));
	char **strs = arena__array(&b->arena, b->nr_strs, sizeof(*strs));
	int err;

	if (!link || !link_ptrs || !st || !st_ptrs || !strs)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__profiles_dictionary__init(&b->dict);

	err = build_dict_mappings(b);
	if (!err)
		err = build_dict_locations(b);
	if (!err)
		err = build_dict_functions(b);
	if (!err)
		err = build_dict_attrs(b);
	if (err)
		return err;

	/* No samples carry links; the table holds only its zero entry. */
	opentelemetry__proto__profiles__v1development__link__init(link);
	link->trace_id.len = sizeof(zero_trace_id);
	link->trace_id.data = (uint8_t *)zero_trace_id;
	link->span_id.len = sizeof(zero_span_id);
	link->span_id.data = (uint8_t *)zero_span_id;
	link_ptrs[0] = link;
	b->dict.n_link_table = 1;
	b->dict.link_table = link_ptrs;

	for (size_t i = 0; i < b->nr_strs; i++)
		strs[i] = (char *)b->strs[i].s;
	b->dict.n_string_table = b->nr_strs;
	b->dict.string_table = strs;

	for (size_t i = 0; i < b->nr_stacks; i++) {
		opentelemetry__proto__profiles__v1development__stack__init(&st[i]);
		st[i].n_location_indices = b->stacks[i].n;
		st[i].location_indices = b->stacks[i].n ? b->stack_locs + b->stacks[i].off : NULL;
		st_ptrs[i] = &st[i];
	}
	b->dict.n_stack_table = b->nr_stacks;
	b->dict.stack_table = st_ptrs;
	return 0;
}

/* --- resources, scope and profiles as protobuf-c structs --- */

struct attr_list {
	pb_key_value *kv;
	pb_any_value *v;
	pb_key_value **ptrs;
	size_t n;
};

/* Unknown (NULL or empty) values are left out rather than sent empty. */
static int attr_list__string(struct arena *a, struct attr_list *l, const char *key,
			     const char *value)
{
	size_t len = value ? strlen(value) : 0;
	pb_key_value *kv = &l->kv[l->n];
	pb_any_value *v = &l->v[l->n];

	if (!len)
		return 0;
	value = utf8_clean(a, value, &len);
	if (!value)
		return -ENOMEM;
	opentelemetry__proto__common__v1__key_value__init(kv);
	opentelemetry__proto__common__v1__any_value__init(v);
	kv->key = (char *)key;
	v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = (char *)value;
	kv->value = v;
	l->ptrs[l->n++] = kv;
	return 0;
}

static void attr_list__int(struct attr_list *l, const char *key, int64_t value)
{
	pb_key_value *kv = &l->kv[l->n];
	pb_any_value *v = &l->v[l->n];

	opentelemetry__proto__common__v1__key_value__init(kv);
	opentelemetry__proto__common__v1__any_value__init(v);
	kv->key = (char *)key;
	v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
	v->int_value = value;
	kv->value = v;
	l->ptrs[l->n++] = kv;
}

static pb_resource *build_resource(struct otlp_build *b, const struct resource *r)
{
	struct arena *a = &b->arena;
	pb_resource *res = arena__alloc(a, sizeof(*res));
	struct attr_list l = {
		.kv = arena__array(a, MAX_RESOURCE_ATTRS, sizeof(*l.kv)),
		.v = arena__array(a, MAX_RESOURCE_ATTRS, sizeof(*l.v)),
		.ptrs = arena__array(a, MAX_RESOURCE_ATTRS, sizeof(*l.ptrs)),
	};
	const char *service = NULL, *exe_name = NULL, *exe_path = NULL, *cmdline = NULL;
	const char *container = NULL;
	int err;

	if (!res || !l.kv || !l.v || !l.ptrs)
		return NULL;
	if (r->proc) {
		service = profile__string_at(r->p, r->proc->service_name);
		exe_name = profile__string_at(r->p, r->proc->exe_name);
		exe_path = profile__string_at(r->p, r->proc->exe_path);
		cmdline = profile__string_at(r->p, r->proc->command_line);
		container = profile__string_at(r->p, r->proc->container_id);
	} else if (r->comm) {
		/* The builder's own fallback for a process it knows nothing of: the service is
		 * named by the process name. The process name is not an executable name, so
		 * process.executable.name stays unset. */
		service = profile__string_at(r->p, r->comm);
	}
	err = attr_list__string(a, &l, "service.name", service);
	if (!err) {
		attr_list__int(&l, "process.pid", r->pid);
		err = attr_list__string(a, &l, "process.executable.name", exe_name);
	}
	if (!err)
		err = attr_list__string(a, &l, "process.executable.path", exe_path);
	if (!err)
		err = attr_list__string(a, &l, "process.command_line", cmdline);
	if (!err)
		err = attr_list__string(a, &l, "host.name", b->o->host_name);
	if (!err)
		err = attr_list__string(a, &l, "host.arch", b->o->host_arch);
	if (!err)
		err = attr_list__string(a, &l, "os.type", "linux");
	if (!err)
		err = attr_list__string(a, &l, "container.id", container);
	for (uint32_t i = 0; !err && r->proc && i < r->proc->nr_attrs; i++)
		err = attr_list__string(a, &l, profile__string_at(r->p, r->proc->attrs[i].key),
					profile__string_at(r->p, r->proc->attrs[i].value));
	if (err)
		return NULL;
	opentelemetry__proto__resource__v1__resource__init(res);
	res->n_attributes = l.n;
	res->attributes = l.ptrs;
	return res;
}

/* Lays out each input's samples grouped by resource, in first-seen order within a resource. */
static int build_samples(struct otlp_build *b, struct otlp_src *src)
{
	struct arena *a = &b->arena;
	size_t nr = src->nr_samples, *cursor;
	pb_sample *s = arena__array(a, nr, sizeof(*s));
	pb_sample **ptrs = arena__array(a, nr, sizeof(*ptrs));
	int64_t *values = arena__array(a, nr, sizeof(*values));
	int32_t *attrs = arena__array(a, nr, MAX_SAMPLE_ATTRS * sizeof(*attrs));

	src->res_off = calloc(b->nr_res + 1, sizeof(*src->res_off));
	cursor = arena__array(a, b->nr_res, sizeof(*cursor));
	if (!s || !ptrs || !values || !attrs || !src->res_off || !cursor)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		src->res_off[src->samples[i].res + 1]++;
	for (size_t r = 0; r < b->nr_res; r++) {
		src->res_off[r + 1] += src->res_off[r];
		cursor[r] = src->res_off[r];
	}
	for (size_t i = 0; i < nr; i++) {
		const struct out_sample *o = &src->samples[i];
		size_t pos = cursor[o->res]++;
		pb_sample *ps = &s[pos];

		opentelemetry__proto__profiles__v1development__sample__init(ps);
		ps->stack_index = (int32_t)o->stack;
		values[pos] = src->counts ? o->count : o->value;
		ps->n_values = 1;
		ps->values = &values[pos];
		for (uint32_t j = 0; j < o->nr_attrs; j++)
			attrs[pos * MAX_SAMPLE_ATTRS + j] = (int32_t)o->attrs[j];
		ps->n_attribute_indices = o->nr_attrs;
		ps->attribute_indices = &attrs[pos * MAX_SAMPLE_ATTRS];
		ptrs[pos] = ps;
	}
	/* The Profiles of the resources point into this array, one slice each. */
	src->sample_ptrs = ptrs;
	return 0;
}

static pb_profile *build_profile(const struct otlp_src *src, size_t r, pb_profile *pr)
{
	const struct profile_desc *d = profile__desc(src->p);

	opentelemetry__proto__profiles__v1development__profile__init(pr);
	pr->sample_type = src->sample_type;
	pr->n_samples = src->res_off[r + 1] - src->res_off[r];
	pr->samples = &src->sample_ptrs[src->res_off[r]];
	pr->time_unix_nano = d->time_nanos;
	pr->duration_nano = d->duration_nanos;
	if (src->period_type) {
		pr->period_type = src->period_type;
		pr->period = d->period;
	}
	return pr;
}

/* One ResourceProfiles per resource with samples, one ScopeProfiles in it, one Profile per input
 * with samples of that resource. Senders should not send empty envelopes, so a process entry
 * without samples adds nothing. */
static int build_request(struct otlp_build *b)
{
	struct arena *a = &b->arena;
	size_t nr_out = 0, out = 0, len;
	pb_resource_profiles *rp, **rp_ptrs;
	pb_scope_profiles *sp, **sp_ptrs;
	const char *version;

	for (size_t r = 0; r < b->nr_res; r++)
		nr_out += b->res[r].nr_samples > 0;
	rp = arena__array(a, nr_out, sizeof(*rp));
	rp_ptrs = arena__array(a, nr_out, sizeof(*rp_ptrs));
	sp = arena__array(a, nr_out, sizeof(*sp));
	sp_ptrs = arena__array(a, nr_out, sizeof(*sp_ptrs));
	if (!rp || !rp_ptrs || !sp || !sp_ptrs)
		return -ENOMEM;
	for (size_t k = 0; k < b->nr_srcs; k++) {
		if (b->srcs[k].nr_samples) {
			int err = build_samples(b, &b->srcs[k]);

			if (err)
				return err;
		}
	}

	opentelemetry__proto__common__v1__instrumentation_scope__init(&b->scope);
	b->scope.name = SCOPE_NAME;
	len = b->o->scope_version ? strlen(b->o->scope_version) : 0;
	version = len ? utf8_clean(a, b->o->scope_version, &len) : NULL;
	if (len && !version)
		return -ENOMEM;
	b->scope.version = (char *)version;

	for (size_t r = 0; r < b->nr_res; r++) {
		size_t nr_profiles = 0, m = 0;
		pb_profile *pr, **pr_ptrs;

		if (!b->res[r].nr_samples)
			continue;
		for (size_t k = 0; k < b->nr_srcs; k++) {
			const struct otlp_src *src = &b->srcs[k];

			nr_profiles += src->nr_samples && src->res_off[r + 1] > src->res_off[r];
		}
		pr = arena__array(a, nr_profiles, sizeof(*pr));
		pr_ptrs = arena__array(a, nr_profiles, sizeof(*pr_ptrs));
		if (!pr || !pr_ptrs)
			return -ENOMEM;
		for (size_t k = 0; k < b->nr_srcs; k++) {
			struct otlp_src *src = &b->srcs[k];

			if (!src->nr_samples || src->res_off[r + 1] == src->res_off[r])
				continue;
			pr_ptrs[m] = build_profile(src, r, &pr[m]);
			m++;
		}

		opentelemetry__proto__profiles__v1development__scope_profiles__init(&sp[out]);
		sp[out].scope = &b->scope;
		sp[out].n_profiles = nr_profiles;
		sp[out].profiles = pr_ptrs;
		sp_ptrs[out] = &sp[out];

		opentelemetry__proto__profiles__v1development__resource_profiles__init(&rp[out]);
		rp[out].resource = build_resource(b, &b->res[r]);
		if (!rp[out].resource)
			return -ENOMEM;
		rp[out].n_scope_profiles = 1;
		rp[out].scope_profiles = &sp_ptrs[out];
		rp_ptrs[out] = &rp[out];
		out++;
	}

	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__init(
		&b->req);
	b->req.n_resource_profiles = nr_out;
	b->req.resource_profiles = rp_ptrs;
	b->req.dictionary = &b->dict;
	return 0;
}

/* Every table starts with its zero entry, which is never in a hash index. */
static int dict_init(struct otlp_build *b)
{
	int err = ARRAY_GROW(b->strs, b->cap_strs, 0);

	if (!err)
		err = ARRAY_GROW(b->maps, b->cap_maps, 0);
	if (!err)
		err = ARRAY_GROW(b->funcs, b->cap_funcs, 0);
	if (!err)
		err = ARRAY_GROW(b->locs, b->cap_locs, 0);
	if (!err)
		err = ARRAY_GROW(b->stacks, b->cap_stacks, 0);
	if (!err)
		err = ARRAY_GROW(b->attrs, b->cap_attrs, 0);
	if (err)
		return err;
	b->strs[0] = (struct dict_string){"", 0};
	b->maps[0] = (struct dict_mapping){0};
	b->funcs[0] = (struct dict_function){0};
	b->locs[0] = (struct dict_location){0};
	b->stacks[0] = (struct dict_stack){0};
	b->attrs[0] = (struct dict_attr){0};
	b->nr_strs = b->nr_maps = b->nr_funcs = b->nr_locs = b->nr_stacks = b->nr_attrs = 1;
	return 0;
}

static void otlp_build__free(struct otlp_build *b)
{
	for (size_t k = 0; k < b->nr_srcs; k++) {
		struct otlp_src *src = &b->srcs[k];

		free(src->res_off);
		free(src->sample_idx.slots);
		free(src->samples);
		free(src->thread_name_map);
		free(src->stack_map);
		free(src->location_map);
		free(src->mapping_map);
		free(src->str_map);
	}
	free(b->srcs);
	free(b->res_idx.slots);
	free(b->res);
	free(b->attr_idx.slots);
	free(b->attrs);
	free(b->stack_idx.slots);
	free(b->stack_locs);
	free(b->stacks);
	free(b->loc_idx.slots);
	free(b->lines);
	free(b->locs);
	free(b->func_idx.slots);
	free(b->funcs);
	free(b->map_idx.slots);
	free(b->maps);
	free(b->str_idx.slots);
	free(b->strs);
	arena__free(&b->arena);
}

/* Builds b->req; the caller frees b with otlp_build__free() whatever this returns. */
static int otlp_build__run(struct otlp_build *b, const struct profile *const *profiles, size_t n,
			   const struct otlp_opts *o)
{
	static const struct otlp_opts defaults;
	int err;

	if (n && !profiles)
		return -EINVAL;
	for (size_t k = 0; k < n; k++) {
		if (!profiles[k])
			return -EINVAL;
	}
	b->o = o ? o : &defaults;
	err = dict_init(b);
	if (err)
		return err;
	/* Each contention profile also gives a contentions/count Profile, from the same samples. */
	b->srcs = calloc(2 * n + 1, sizeof(*b->srcs));
	if (!b->srcs)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		b->srcs[b->nr_srcs++].p = profiles[k];
		if (!strcmp(or_empty(profile__desc(profiles[k])->sample_type), "contention")) {
			b->srcs[b->nr_srcs].p = profiles[k];
			b->srcs[b->nr_srcs++].contentions = true;
		}
	}

	err = collect_processes(b);
	for (size_t k = 0; !err && k < b->nr_srcs; k++)
		err = src_collect(b, k);
	if (!err)
		err = build_dictionary(b);
	if (!err)
		err = build_request(b);
	return err;
}

/* --- OTLP/JSON, by walking the protobuf-c descriptors --- */

struct json_buf {
	char *buf;
	size_t len;
	size_t cap;
	int err;
};

static bool json_reserve(struct json_buf *j, size_t n)
{
	size_t cap;
	char *tmp;

	if (j->err)
		return false;
	if (n <= j->cap - j->len)
		return true;
	if (n > SIZE_MAX / 2 - j->len) {
		j->err = -ENOMEM;
		return false;
	}
	cap = j->cap ? j->cap : 4096;
	while (cap - j->len < n)
		cap *= 2;
	tmp = realloc(j->buf, cap);
	if (!tmp) {
		j->err = -ENOMEM;
		return false;
	}
	j->buf = tmp;
	j->cap = cap;
	return true;
}

static void json_put(struct json_buf *j, const void *s, size_t n)
{
	if (!json_reserve(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void json_putc(struct json_buf *j, char c)
{
	json_put(j, &c, 1);
}

/*
 * A JSON string (RFC 8259): quote, backslash and control characters escaped, bytes that are not
 * UTF-8 replaced by U+FFFD, since a JSON text must be Unicode. The message holds only cleaned
 * strings, so the replacement is a second line of defence, not the path normally taken.
 */
static void json_string(struct json_buf *j, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run;

	json_putc(j, '"');
	while (i < len) {
		/* Copy plain ASCII in one go: almost every string is nothing else. */
		for (run = i; run < len && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' &&
			      s[run] != '\\';
		     run++)
			;
		json_put(j, s + i, run - i);
		i = run;
		if (i == len)
			break;
		if (s[i] == '"' || s[i] == '\\') {
			char esc[2] = {'\\', (char)s[i]};

			json_put(j, esc, 2);
			i++;
		} else if (s[i] < 0x20) {
			char esc[6] = {'\\', 'u', '0', '0', hex[s[i] >> 4], hex[s[i] & 15]};

			switch (s[i]) {
			case '\b':
				json_put(j, "\\b", 2);
				break;
			case '\f':
				json_put(j, "\\f", 2);
				break;
			case '\n':
				json_put(j, "\\n", 2);
				break;
			case '\r':
				json_put(j, "\\r", 2);
				break;
			case '\t':
				json_put(j, "\\t", 2);
				break;
			default:
				json_put(j, esc, 6);
			}
			i++;
		} else {
			size_t n = utf8_seq(s + i, len - i);

			if (n) {
				json_put(j, s + i, n);
				i += n;
			} else {
				json_put(j, REPLACEMENT_CHAR, 3);
				i++;
			}
		}
	}
	json_putc(j, '"');
}

/* proto3 JSON names: the field name in lowerCamelCase ("time_unix_nano" -> "timeUnixNano"). */
static void json_key(struct json_buf *j, const char *name, bool *first)
{
	char buf[128];
	size_t n = 0;
	bool upper = false;

	for (; *name && n < sizeof(buf); name++) {
		if (*name == '_') {
			upper = true;
			continue;
		}
		buf[n++] = upper && *name >= 'a' && *name <= 'z' ? *name - 'a' + 'A' : *name;
		upper = false;
	}
	if (*name) {
		j->err = j->err ? j->err : -ENAMETOOLONG;
		return;
	}
	if (!*first)
		json_putc(j, ',');
	*first = false;
	json_string(j, buf, n);
	json_putc(j, ':');
}

static void json_printf(struct json_buf *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void json_printf(struct json_buf *j, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		j->err = j->err ? j->err : -EINVAL;
		return;
	}
	json_put(j, buf, n);
}

/* OTLP/JSON writes trace, span and profile ids as hex, not base64 as proto3 JSON would. */
static bool is_hex_id(const ProtobufCFieldDescriptor *f)
{
	return strcmp(f->name, "trace_id") == 0 || strcmp(f->name, "span_id") == 0 ||
	       strcmp(f->name, "profile_id") == 0;
}

static void json_bytes(struct json_buf *j, const ProtobufCFieldDescriptor *f,
		       const ProtobufCBinaryData *d)
{
	static const char hex[] = "0123456789abcdef";
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	json_putc(j, '"');
	if (is_hex_id(f)) {
		for (size_t i = 0; i < d->len; i++) {
			char c[2] = {hex[d->data[i] >> 4], hex[d->data[i] & 15]};

			json_put(j, c, 2);
		}
	} else {
		for (size_t i = 0; i < d->len; i += 3) {
			uint32_t v = (uint32_t)d->data[i] << 16;
			size_t left = d->len - i;
			char c[4];

			if (left > 1)
				v |= (uint32_t)d->data[i + 1] << 8;
			if (left > 2)
				v |= d->data[i + 2];
			c[0] = b64[v >> 18];
			c[1] = b64[(v >> 12) & 63];
			c[2] = left > 1 ? b64[(v >> 6) & 63] : '=';
			c[3] = left > 2 ? b64[v & 63] : '=';
			json_put(j, c, 4);
		}
	}
	json_putc(j, '"');
}

static void json_double(struct json_buf *j, double v)
{
	/* JSON has no NaN or infinity; proto3 JSON spells them as strings. */
	if (isnan(v))
		json_put(j, "\"NaN\"", 5);
	else if (isinf(v))
		json_printf(j, "\"%sInfinity\"", v < 0 ? "-" : "");
	else
		json_printf(j, "%.17g", v);
}

/* Integers by hand: they are most of a profile's JSON, and printf would dominate the time. */
static void json_uint(struct json_buf *j, uint64_t v, bool negative, bool quoted)
{
	char buf[24];
	size_t i = sizeof(buf);

	if (quoted)
		buf[--i] = '"';
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (negative)
		buf[--i] = '-';
	if (quoted)
		buf[--i] = '"';
	json_put(j, buf + i, sizeof(buf) - i);
}

static void json_int(struct json_buf *j, int64_t v, bool quoted)
{
	/* The magnitude of INT64_MIN does not fit int64_t; it does fit uint64_t. */
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	json_uint(j, mag, v < 0, quoted);
}

static void json_message(struct json_buf *j, const ProtobufCMessage *m, int depth);

/* One value of field f at v; 64-bit integers are strings, as proto3 JSON and OTLP ask. */
static void json_value(struct json_buf *j, const ProtobufCFieldDescriptor *f, const void *v,
		       int depth)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		json_int(j, *(const int32_t *)v, false);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		json_uint(j, *(const uint32_t *)v, false, false);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		json_int(j, *(const int64_t *)v, true);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		json_uint(j, *(const uint64_t *)v, false, true);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		json_double(j, *(const float *)v);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		json_double(j, *(const double *)v);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		if (*(const protobuf_c_boolean *)v)
			json_put(j, "true", 4);
		else
			json_put(j, "false", 5);
		break;
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)v;

		json_string(j, s ? s : "", s ? strlen(s) : 0);
		break;
	}
	case PROTOBUF_C_TYPE_BYTES:
		json_bytes(j, f, v);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		json_message(j, *(ProtobufCMessage *const *)v, depth + 1);
		break;
	default:
		j->err = j->err ? j->err : -EINVAL;
	}
}

static size_t field_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return 4;
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	}
	return 0;
}

/* Whether a field that has no presence bit holds its default, which proto3 JSON leaves out (and
 * protobuf-c does not pack either). */
static bool field_is_default(const ProtobufCFieldDescriptor *f, const void *v)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)v;

		return !s || !*s;
	}
	case PROTOBUF_C_TYPE_BYTES:
		return ((const ProtobufCBinaryData *)v)->len == 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(ProtobufCMessage *const *)v == NULL;
	case PROTOBUF_C_TYPE_FLOAT:
		return *(const float *)v == 0 && !signbit(*(const float *)v);
	case PROTOBUF_C_TYPE_DOUBLE:
		return *(const double *)v == 0 && !signbit(*(const double *)v);
	default: {
		static const char zero[8];
		size_t n = field_size(f);

		return n <= sizeof(zero) && memcmp(v, zero, n) == 0;
	}
	}
}

/* Whether f is present in the message at base, the rules protobuf-c packs by. */
static bool field_present(const ProtobufCFieldDescriptor *f, const char *base)
{
	const void *v = base + f->offset;

	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return *(const uint32_t *)(base + f->quantifier_offset) == f->id;
	switch (f->label) {
	case PROTOBUF_C_LABEL_REQUIRED:
		return true;
	case PROTOBUF_C_LABEL_OPTIONAL:
		if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING)
			return *(const void *const *)v != NULL;
		return *(const protobuf_c_boolean *)(base + f->quantifier_offset);
	case PROTOBUF_C_LABEL_NONE:
		return !field_is_default(f, v);
	case PROTOBUF_C_LABEL_REPEATED:
		return *(const size_t *)(base + f->quantifier_offset) > 0;
	}
	return false;
}

static void json_message(struct json_buf *j, const ProtobufCMessage *m, int depth)
{
	const ProtobufCMessageDescriptor *desc = m->descriptor;
	const char *base = (const char *)m;
	bool first = true;

	if (depth > JSON_MAX_DEPTH) {
		j->err = j->err ? j->err : -ELOOP;
		return;
	}
	json_putc(j, '{');
	for (unsigned i = 0; i < desc->n_fields && !j->err; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];

		if (!field_present(f, base))
			continue;
		json_key(j, f->name, &first);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			const char *arr = *(const char *const *)(base + f->offset);
			size_t size = field_size(f);

			json_putc(j, '[');
			for (size_t k = 0; k < n; k++) {
				if (k)
					json_putc(j, ',');
				json_value(j, f, arr + k * size, depth);
			}
			json_putc(j, ']');
		} else {
			json_value(j, f, base + f->offset, depth);
		}
	}
	json_putc(j, '}');
}

/* --- entry points --- */

int enc_otlp__encode(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		     uint8_t **out, size_t *len)
{
	struct otlp_build b = {0};
	uint8_t *buf = NULL;
	size_t size;
	int err;

	if (!out || !len)
		return -EINVAL;
	err = otlp_build__run(&b, profiles, n, o);
	if (err)
		goto out;
	size = protobuf_c_message_get_packed_size(&b.req.base);
	buf = malloc(size ? size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (protobuf_c_message_pack(&b.req.base, buf) != size) {
		err = -EIO;
		goto out;
	}
	*out = buf;
	*len = size;
	buf = NULL;
out:
	free(buf);
	otlp_build__free(&b);
	return err;
}

int enc_otlp__encode_json(const struct profile *const *profiles, size_t n,
			  const struct otlp_opts *o, char **out, size_t *len)
{
	struct otlp_build b = {0};
	struct json_buf j = {0};
	int err;

	if (!out || !len)
		return -EINVAL;
	err = otlp_build__run(&b, profiles, n, o);
	if (err)
		goto out;
	json_message(&j, &b.req.base, 0);
	json_putc(&j, '\n');
	json_putc(&j, '\0');
	err = j.err;
	if (err)
		goto out;
	*out = j.buf;
	*len = j.len - 1;
	j.buf = NULL;
out:
	free(j.buf);
	otlp_build__free(&b);
	return err;
}

int enc_otlp__write(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		    const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	if (!path)
		return -EINVAL;
	err = enc_otlp__encode(profiles, n, o, &buf, &len);
	if (!err)
		err = atomic_file__write(path, buf, len);
	free(buf);
	return err;
}

int enc_otlp__write_json(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
			 const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (!path)
		return -EINVAL;
	err = enc_otlp__encode_json(profiles, n, o, &buf, &len);
	if (!err)
		err = atomic_file__write(path, buf, len);
	free(buf);
	return err;
}

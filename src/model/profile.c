// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile model: append-only tables with open-addressing hash indexes.
 *
 * Every table is an array whose slot 0 holds the zero entry, plus a hash index (base/hash_index.h)
 * from the entry's hash to its position; the zero entries are never in the indexes.
 * A profile lives for one collection window and is then encoded and deleted, so the tables only
 * ever grow: their size is bounded by the distinct data of that window, not by time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/hash.h"
#include "base/hash_index.h"
#include "base/vec.h"
#include "model/profile.h"
#include "base/table.h"

/* Positions are uint32_t and 0 means "empty slot", so at most UINT32_MAX - 1 entries a table. */
#define PROFILE_MAX_ENTRIES (UINT32_MAX - 1u)

struct string_entry {
	const char *s; /* in the arena */
	size_t len;
};

struct stack_entry {
	size_t off; /* into profile::stack_locs */
	size_t n;
};

struct loc_lines {
	size_t off; /* into profile::lines */
	size_t n;
};

struct profile {
	struct profile_desc desc; /* the strings point at desc_strs */
	char *desc_strs[4];

	struct arena arena; /* the strings */

	TABLE(struct string_entry) strs;
	TABLE(struct profile_mapping) maps;
	TABLE(struct profile_function) funcs;

	TABLE(struct profile_location) locs;
	/* Parallel to locs: where each location's lines start in `lines`, and how many. */
	struct loc_lines *loc_lines;
	size_t cap_loc_lines;
	struct profile_line *lines; /* all locations' lines back to back */
	size_t nr_lines, cap_lines;

	TABLE(struct stack_entry) stacks;
	uint32_t *stack_locs; /* all stacks' location indices back to back */
	size_t nr_stack_locs, cap_stack_locs;

	TABLE(struct profile_sample) samples;

	/* procs.arr[0] is unused, so that index 0 can mean "empty" in its index as in the others.
	 */
	TABLE(struct profile_process) procs;
};

/* --- the tables --- */

/* Room for entry nr of a table: 0, -ENOMEM, or -E2BIG past what a uint32_t position names. */
#define TABLE_RESERVE(arr, cap, nr)                                                                \
	((nr) >= PROFILE_MAX_ENTRIES ? -E2BIG : VEC_RESERVE(arr, cap, (nr) + 1))

/* Add to a table of p: TABLE_ADD() within the bound of the positions. */
#define PROFILE_ADD(p, t, entry, hash, eq) TABLE_ADD(t, PROFILE_MAX_ENTRIES, entry, hash, eq, p)
#define PROFILE_APPEND(p, t, entry, hash) PROFILE_ADD(p, t, entry, hash, NULL)

/* The 32-bit hash of seed with each value (as uint64_t) folded in, in order. */
static inline uint32_t hash_values(uint64_t seed, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		seed = hash_add(seed, v[i]);
	return hash_fold(seed);
}

#define HASH_VALUES(seed, ...)                                                                     \
	hash_values((seed), (const uint64_t[]){__VA_ARGS__},                                       \
		    sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

/* --- strings --- */

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct profile *p = ctx;
	const struct string_entry *k = key;

	return p->strs.arr[idx].len == k->len && memcmp(p->strs.arr[idx].s, k->s, k->len) == 0;
}

/*
 * The index of s in p (0 for ""), -ENOENT when p has it not, or -EINVAL for NULL; the key and
 * hash it has in the table in *k and *hash.
 */
static int64_t string_find(const struct profile *p, const char *s, struct string_entry *k,
			   uint32_t *hash)
{
	uint32_t idx;

	if (!s)
		return -EINVAL;
	if (!*s)
		return 0;
	k->s = s;
	k->len = strlen(s);
	*hash = hash_fold(hash_bytes(s, k->len));
	idx = hash_index__find(&p->strs.idx, *hash, str_eq, p, k);
	return idx ? (int64_t)idx : -ENOENT;
}

int64_t profile__find_string(const struct profile *p, const char *s)
{
	struct string_entry k;
	uint32_t hash;

	return string_find(p, s, &k, &hash);
}

int64_t profile__string(struct profile *p, const char *s)
{
	struct string_entry k;
	uint32_t hash;
	int64_t idx = string_find(p, s, &k, &hash);

	if (idx != -ENOENT)
		return idx;
	k.s = arena__strndup(&p->arena, s, k.len);
	if (!k.s)
		return -ENOMEM;
	return PROFILE_APPEND(p, &p->strs, &k, hash);
}

static bool string_valid(const struct profile *p, uint32_t idx)
{
	return idx < p->strs.nr;
}

/* --- mappings --- */

/* has_functions is learned while symbolizing; it is not part of a mapping's identity. */
static uint32_t mapping_hash(const struct profile_mapping *m)
{
	return HASH_VALUES(0x6d6170, m->start, m->limit, m->offset, m->filename, m->build_id,
			   m->htlhash);
}

static bool mapping_same(const struct profile_mapping *a, const struct profile_mapping *b)
{
	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->filename == b->filename && a->build_id == b->build_id && a->htlhash == b->htlhash;
}

static bool mapping_eq(const void *ctx, uint32_t idx, const void *key)
{
	return mapping_same(&((const struct profile *)ctx)->maps.arr[idx], key);
}

int64_t profile__mapping(struct profile *p, const struct profile_mapping *m)
{
	int64_t idx;

	if (!m || !string_valid(p, m->filename) || !string_valid(p, m->build_id) ||
	    !string_valid(p, m->htlhash))
		return -EINVAL;
	if (mapping_same(m, &p->maps.arr[0]))
		return 0;
	idx = PROFILE_ADD(p, &p->maps, m, mapping_hash(m), mapping_eq);
	/* The same mapping seen once symbolized stays marked as such. */
	if (idx > 0)
		p->maps.arr[idx].has_functions |= m->has_functions;
	return idx;
}

/* --- functions --- */

static uint32_t function_hash(const struct profile_function *f)
{
	return HASH_VALUES(0x66756e63, f->name, f->system_name, f->filename);
}

static bool function_same(const struct profile_function *a, const struct profile_function *b)
{
	return a->name == b->name && a->system_name == b->system_name && a->filename == b->filename;
}

static bool function_eq(const void *ctx, uint32_t idx, const void *key)
{
	return function_same(&((const struct profile *)ctx)->funcs.arr[idx], key);
}

int64_t profile__function(struct profile *p, const struct profile_function *f)
{
	if (!f || !string_valid(p, f->name) || !string_valid(p, f->system_name) ||
	    !string_valid(p, f->filename))
		return -EINVAL;
	if (function_same(f, &p->funcs.arr[0]))
		return 0;
	return PROFILE_ADD(p, &p->funcs, f, function_hash(f), function_eq);
}

/* --- locations --- */

struct location_key {
	const struct profile_location *l;
	const struct profile_line *lines;
	size_t n;
};

static uint32_t location_hash(const struct location_key *k)
{
	const struct profile_location *l = k->l;
	uint64_t h = 0x6c6f63;

	h = hash_add(h, l->mapping);
	h = hash_add(h, l->address);
	h = hash_add(h, l->function);
	h = hash_add(h, l->label);
	h = hash_add(h, (uint64_t)l->kind);
	/* Without lines the hash is what it always was. */
	for (size_t i = 0; i < k->n; i++) {
		h = hash_add(h, k->lines[i].function);
		h = hash_add(h, (uint64_t)k->lines[i].line);
	}
	return hash_fold(h);
}

static bool location_same(const struct profile_location *a, const struct profile_location *b)
{
	return a->mapping == b->mapping && a->address == b->address && a->function == b->function &&
	       a->label == b->label && a->kind == b->kind;
}

static bool location_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct profile *p = ctx;
	const struct location_key *k = key;
	const struct loc_lines *ll = &p->loc_lines[idx];

	if (!location_same(&p->locs.arr[idx], k->l) || ll->n != k->n)
		return false;
	for (size_t i = 0; i < k->n; i++) {
		const struct profile_line *a = &p->lines[ll->off + i];

		if (a->function != k->lines[i].function || a->line != k->lines[i].line)
			return false;
	}
	return true;
}

int64_t profile__location(struct profile *p, const struct profile_location *l)
{
	return profile__location_with_lines(p, l, NULL, 0);
}

int64_t profile__location_with_lines(struct profile *p, const struct profile_location *l,
				     const struct profile_line *lines, size_t n)
{
	struct profile_location copy;
	struct location_key k;
	uint32_t hash, idx;
	int64_t ret;
	int err;

	if (!l || l->mapping >= p->maps.nr || l->function >= p->funcs.nr ||
	    !string_valid(p, l->label) || (unsigned)l->kind > FRAME_CPYTHON || (n && !lines))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].function || lines[i].function >= p->funcs.nr)
			return -EINVAL;
	}
	copy = *l;
	if (n) {
		if (copy.function && copy.function != lines[0].function)
			return -EINVAL;
		copy.function = lines[0].function;
	}
	if (!n && location_same(&copy, &p->locs.arr[0]))
		return 0;
	k = (struct location_key){.l = &copy, .lines = lines, .n = n};
	hash = location_hash(&k);
	idx = hash_index__find(&p->locs.idx, hash, location_eq, p, &k);
	if (idx)
		return idx;

	err = VEC_RESERVE_MORE(p->lines, p->cap_lines, p->nr_lines, n);
	if (!err)
		err = TABLE_RESERVE(p->loc_lines, p->cap_loc_lines, p->locs.nr);
	if (err)
		return err;
	/* loc_lines runs parallel to locs: its entry is written first, counted by the append. */
	p->loc_lines[p->locs.nr] = (struct loc_lines){.off = p->nr_lines, .n = n};
	ret = PROFILE_APPEND(p, &p->locs, &copy, hash);
	if (ret >= 0 && n) {
		memcpy(p->lines + p->nr_lines, lines, n * sizeof(*lines));
		p->nr_lines += n;
	}
	return ret;
}

/* --- stacks --- */

struct stack_key {
	const uint32_t *locs;
	size_t n;
};

static uint32_t stack_hash(const uint32_t *locs, size_t n)
{
	uint64_t h = hash_add(0x737461636b, n);

	for (size_t i = 0; i < n; i++)
		h = hash_add(h, locs[i]);
	return hash_fold(h);
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct profile *p = ctx;
	const struct stack_key *k = key;
	const struct stack_entry *s = &p->stacks.arr[idx];

	return s->n == k->n &&
	       memcmp(p->stack_locs + s->off, k->locs, k->n * sizeof(*k->locs)) == 0;
}

int64_t profile__stack(struct profile *p, const uint32_t *locations, size_t n)
{
	struct stack_key k = {.locs = locations, .n = n};
	struct stack_entry e;
	uint32_t hash, idx;
	int64_t ret;

	if (!n)
		return 0;
	if (!locations)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!locations[i] || locations[i] >= p->locs.nr)
			return -EINVAL;
	}
	hash = stack_hash(locations, n);
	idx = hash_index__find(&p->stacks.idx, hash, stack_eq, p, &k);
	if (idx)
		return idx;

	if (VEC_RESERVE_MORE(p->stack_locs, p->cap_stack_locs, p->nr_stack_locs, n))
		return -ENOMEM;
	e = (struct stack_entry){.off = p->nr_stack_locs, .n = n};
	ret = PROFILE_APPEND(p, &p->stacks, &e, hash);
	if (ret >= 0) {
		memcpy(p->stack_locs + p->nr_stack_locs, locations, n * sizeof(*locations));
		p->nr_stack_locs += n;
	}
	return ret;
}

/* --- samples --- */

struct sample_key {
	uint32_t stack;
	const struct profile_labels *labels;
};

static uint32_t sample_hash(uint32_t stack, const struct profile_labels *l)
{
	uint32_t h = HASH_VALUES(0x73616d70, stack, l->pid, l->tid, l->comm, l->thread_name,
				 l->thread_state, l->wait_kind, l->wait_addr, l->trace_id,
				 l->span_id, l->nr_ctx_attrs);

	for (uint32_t i = 0; i < l->nr_ctx_attrs && i < PROFILE_MAX_CTX_ATTRS; i++)
		h = HASH_VALUES(h, l->ctx_attrs[i].key, l->ctx_attrs[i].value);
	return h;
}

static bool same_ctx(const struct profile_labels *a, const struct profile_labels *b)
{
	if (a->trace_id != b->trace_id || a->span_id != b->span_id ||
	    a->nr_ctx_attrs != b->nr_ctx_attrs)
		return false;
	for (uint32_t i = 0; i < a->nr_ctx_attrs && i < PROFILE_MAX_CTX_ATTRS; i++)
		if (a->ctx_attrs[i].key != b->ctx_attrs[i].key ||
		    a->ctx_attrs[i].value != b->ctx_attrs[i].value)
			return false;
	return true;
}

static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sample_key *k = key;
	const struct profile_sample *s = &((const struct profile *)ctx)->samples.arr[idx];

	return s->stack == k->stack && s->labels.pid == k->labels->pid &&
	       s->labels.tid == k->labels->tid && s->labels.comm == k->labels->comm &&
	       s->labels.thread_name == k->labels->thread_name &&
	       s->labels.thread_state == k->labels->thread_state &&
	       s->labels.wait_kind == k->labels->wait_kind &&
	       s->labels.wait_addr == k->labels->wait_addr && same_ctx(&s->labels, k->labels);
}

int profile__add_sample(struct profile *p, uint32_t stack, const struct profile_labels *labels,
			int64_t value, int64_t count)
{
	struct sample_key k = {.stack = stack, .labels = labels};
	struct profile_sample *s;
	uint32_t hash;
	int64_t idx;

	if (!labels || stack >= p->stacks.nr || !string_valid(p, labels->comm) ||
	    !string_valid(p, labels->thread_name) || !string_valid(p, labels->thread_state) ||
	    !string_valid(p, labels->wait_kind) || !string_valid(p, labels->trace_id) ||
	    !string_valid(p, labels->span_id) || labels->nr_ctx_attrs > PROFILE_MAX_CTX_ATTRS)
		return -EINVAL;
	for (uint32_t i = 0; i < labels->nr_ctx_attrs; i++)
		if (!string_valid(p, labels->ctx_attrs[i].key) ||
		    !string_valid(p, labels->ctx_attrs[i].value))
			return -EINVAL;
	hash = sample_hash(stack, labels);
	idx = hash_index__find(&p->samples.idx, hash, sample_eq, p, &k);
	if (!idx) {
		struct profile_sample zero = {.stack = stack, .labels = *labels};

		idx = PROFILE_APPEND(p, &p->samples, &zero, hash);
		if (idx < 0)
			return (int)idx;
	}
	s = &p->samples.arr[idx];
	s->value += value;
	s->count += count;
	return 0;
}

size_t profile__keep_samples(struct profile *p,
			     bool (*keep)(const struct profile *p, const struct profile_sample *s,
					  void *ctx),
			     void *ctx)
{
	size_t kept = 1;

	/* Compacted in place, then indexed again: the kept samples stay in their order. */
	for (size_t i = 1; i < p->samples.nr; i++)
		if (keep(p, &p->samples.arr[i], ctx))
			p->samples.arr[kept++] = p->samples.arr[i];
	p->samples.nr = kept;
	hash_index__clear(&p->samples.idx);
	for (size_t i = 1; i < kept; i++) {
		/* Fewer entries than before: the index has room for them all. */
		hash_index__insert(&p->samples.idx, (uint32_t)i,
				   sample_hash(p->samples.arr[i].stack, &p->samples.arr[i].labels));
	}
	return kept - 1;
}

/* --- lifetime --- */

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

struct profile *profile__new(const struct profile_desc *desc)
{
	struct profile *p;
	int err = -ENOMEM;

	if (!desc) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->desc = *desc;
	p->desc_strs[0] = dup_or_empty(desc->sample_type);
	p->desc_strs[1] = dup_or_empty(desc->sample_unit);
	p->desc_strs[2] = dup_or_empty(desc->period_type);
	p->desc_strs[3] = dup_or_empty(desc->period_unit);
	for (int i = 0; i < 4; i++) {
		if (!p->desc_strs[i])
			goto err_out;
	}
	p->desc.sample_type = p->desc_strs[0];
	p->desc.sample_unit = p->desc_strs[1];
	p->desc.period_type = p->desc_strs[2];
	p->desc.period_unit = p->desc_strs[3];

	/* The zero entries: never in the hash indexes, matched explicitly by the interners. */
	if (TABLE_INIT(&p->strs) || TABLE_INIT(&p->maps) || TABLE_INIT(&p->funcs) ||
	    TABLE_INIT(&p->locs) || VEC_RESERVE(p->loc_lines, p->cap_loc_lines, 1) ||
	    TABLE_INIT(&p->stacks) || TABLE_INIT(&p->samples) || TABLE_INIT(&p->procs))
		goto err_out;
	p->strs.arr[0] = (struct string_entry){.s = "", .len = 0};
	memset(&p->loc_lines[0], 0, sizeof(p->loc_lines[0]));
	return p;

err_out:
	profile__delete(p);
	errno = -err;
	return NULL;
}

void profile__delete(struct profile *p)
{
	if (!p)
		return;
	TABLE_FREE(&p->procs);
	TABLE_FREE(&p->samples);
	TABLE_FREE(&p->stacks);
	free(p->stack_locs);
	TABLE_FREE(&p->locs);
	free(p->lines);
	free(p->loc_lines);
	TABLE_FREE(&p->funcs);
	TABLE_FREE(&p->maps);
	TABLE_FREE(&p->strs);
	arena__free(&p->arena);
	for (int i = 0; i < 4; i++)
		free(p->desc_strs[i]);
	free(p);
}

/* --- processes --- */

static uint32_t process_hash(uint32_t pid)
{
	return hash_fold(hash_add(0x70726f63, pid));
}

static bool process_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct profile *)ctx)->procs.arr[idx].pid == *(const uint32_t *)key;
}

int profile__set_process(struct profile *p, const struct profile_process *proc)
{
	uint32_t hash, idx;
	int64_t ret;

	if (!proc || !string_valid(p, proc->service_name) || !string_valid(p, proc->exe_name) ||
	    !string_valid(p, proc->exe_path) || !string_valid(p, proc->command_line) ||
	    !string_valid(p, proc->container_id) || proc->nr_attrs > PROFILE_MAX_PROCESS_ATTRS)
		return -EINVAL;
	for (uint32_t i = 0; i < proc->nr_attrs; i++)
		if (!proc->attrs[i].key || !string_valid(p, proc->attrs[i].key) ||
		    !string_valid(p, proc->attrs[i].value))
			return -EINVAL;
	hash = process_hash(proc->pid);
	idx = hash_index__find(&p->procs.idx, hash, process_eq, p, &proc->pid);
	if (idx) {
		p->procs.arr[idx] = *proc;
		return 0;
	}
	ret = PROFILE_APPEND(p, &p->procs, proc, hash);
	return ret < 0 ? (int)ret : 0;
}

const struct profile_process *profile__find_process(const struct profile *p, uint32_t pid)
{
	uint32_t idx = hash_index__find(&p->procs.idx, process_hash(pid), process_eq, p, &pid);

	return idx ? &p->procs.arr[idx] : NULL;
}

size_t profile__nr_processes(const struct profile *p)
{
	return p->procs.nr - 1;
}

const struct profile_process *profile__process_at(const struct profile *p, size_t idx)
{
	return idx + 1 < p->procs.nr ? &p->procs.arr[idx + 1] : NULL;
}

void profile__set_window(struct profile *p, uint64_t time_nanos, uint64_t duration_nanos)
{
	p->desc.time_nanos = time_nanos;
	p->desc.duration_nanos = duration_nanos;
}

const struct profile_desc *profile__desc(const struct profile *p)
{
	return &p->desc;
}

/* --- read access --- */

size_t profile__nr_strings(const struct profile *p)
{
	return p->strs.nr;
}

const char *profile__string_at(const struct profile *p, uint32_t idx)
{
	return idx < p->strs.nr ? p->strs.arr[idx].s : NULL;
}

size_t profile__nr_mappings(const struct profile *p)
{
	return p->maps.nr;
}

const struct profile_mapping *profile__mapping_at(const struct profile *p, uint32_t idx)
{
	return idx < p->maps.nr ? &p->maps.arr[idx] : NULL;
}

size_t profile__nr_functions(const struct profile *p)
{
	return p->funcs.nr;
}

const struct profile_function *profile__function_at(const struct profile *p, uint32_t idx)
{
	return idx < p->funcs.nr ? &p->funcs.arr[idx] : NULL;
}

size_t profile__nr_locations(const struct profile *p)
{
	return p->locs.nr;
}

const struct profile_location *profile__location_at(const struct profile *p, uint32_t idx)
{
	return idx < p->locs.nr ? &p->locs.arr[idx] : NULL;
}

const struct profile_line *profile__location_lines(const struct profile *p, uint32_t idx, size_t *n)
{
	if (idx >= p->locs.nr || !p->loc_lines[idx].n) {
		*n = 0;
		return NULL;
	}
	*n = p->loc_lines[idx].n;
	return p->lines + p->loc_lines[idx].off;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->stacks.nr;
}

const uint32_t *profile__stack_at(const struct profile *p, uint32_t idx, size_t *n)
{
	const struct stack_entry *s;

	if (idx >= p->stacks.nr || !p->stacks.arr[idx].n) {
		*n = 0;
		return NULL;
	}
	s = &p->stacks.arr[idx];
	*n = s->n;
	return p->stack_locs + s->off;
}

size_t profile__nr_samples(const struct profile *p)
{
	return p->samples.nr;
}

const struct profile_sample *profile__sample_at(const struct profile *p, size_t idx)
{
	return idx < p->samples.nr ? &p->samples.arr[idx] : NULL;
}

const char *profile__location_name(const struct profile *p, uint32_t loc_idx)
{
	const struct profile_location *l = profile__location_at(p, loc_idx);

	if (!l)
		return NULL;
	if (l->function && p->funcs.arr[l->function].name)
		return p->strs.arr[p->funcs.arr[l->function].name].s;
	if (l->label)
		return p->strs.arr[l->label].s;
	return "[unknown]";
}

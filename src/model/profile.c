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

/* Positions are uint32_t and 0 means "empty slot", so at most UINT32_MAX - 1 entries a table. */
#define TABLE_MAX_ENTRIES (UINT32_MAX - 1u)
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

	struct string_entry *strs;
	size_t nr_strs, cap_strs;
	struct hash_index str_idx;

	struct profile_mapping *maps;
	size_t nr_maps, cap_maps;
	struct hash_index map_idx;

	struct profile_function *funcs;
	size_t nr_funcs, cap_funcs;
	struct hash_index func_idx;

	struct profile_location *locs;
	size_t nr_locs, cap_locs;
	struct hash_index loc_idx;
	/* Parallel to locs: where each location's lines start in `lines`, and how many. */
	struct loc_lines *loc_lines;
	size_t cap_loc_lines;
	struct profile_line *lines; /* all locations' lines back to back */
	size_t nr_lines, cap_lines;

	struct stack_entry *stacks;
	size_t nr_stacks, cap_stacks;
	uint32_t *stack_locs; /* all stacks' location indices back to back */
	size_t nr_stack_locs, cap_stack_locs;
	struct hash_index stack_idx;

	struct profile_sample *samples;
	size_t nr_samples, cap_samples;
	struct hash_index sample_idx;

	/* procs[0] is unused, so that index 0 can mean "empty" in proc_idx as in the others. */
	struct profile_process *procs;
	size_t nr_procs, cap_procs;
	struct hash_index proc_idx;
};

/* --- the tables --- */

/* Room for entry nr of a table: 0, -ENOMEM, or -E2BIG past what a uint32_t position names. */
#define TABLE_RESERVE(arr, cap, nr)                                                                \
	((nr) >= TABLE_MAX_ENTRIES ? -E2BIG : VEC_RESERVE(arr, cap, (nr) + 1))

/*
 * The position in a table of the entry of elem_size bytes at entry: that of the equal one eq()
 * finds (when eq is not NULL), else entry's own, appended and indexed under hash.
 */
static int64_t table_add(const struct profile *p, void **arr, size_t *nr, size_t *cap,
			 struct hash_index *idx, const void *entry, size_t elem_size, uint32_t hash,
			 hash_index_eq_fn eq)
{
	uint32_t found = eq ? hash_index__find(idx, hash, eq, p, entry) : 0;
	int err;

	if (found)
		return found;
	if (*nr >= TABLE_MAX_ENTRIES)
		return -E2BIG;
	err = vec__reserve(arr, cap, *nr + 1, elem_size);
	if (!err)
		err = hash_index__reserve(idx);
	if (err)
		return err;
	memcpy((char *)*arr + *nr * elem_size, entry, elem_size);
	hash_index__insert(idx, (uint32_t)*nr, hash);
	return (int64_t)(*nr)++;
}

/* table_add() for a typed table of p; entry points at an element of its type. */
#define TABLE_ADD(p, arr, nr, cap, idx, entry, hash, eq)                                           \
	({                                                                                         \
		void *arr_ = (arr);                                                                \
		int64_t ret_;                                                                      \
                                                                                                   \
		(void)sizeof(*(arr) = *(entry));                                                   \
		ret_ = table_add((p), &arr_, &(nr), &(cap), (idx), (entry), sizeof(*(arr)),        \
				 (hash), (eq));                                                    \
		(arr) = arr_;                                                                      \
		ret_;                                                                              \
	})

/* Append an entry found new. */
#define TABLE_APPEND(p, arr, nr, cap, idx, entry, hash)                                            \
	TABLE_ADD(p, arr, nr, cap, idx, entry, hash, NULL)

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

	return p->strs[idx].len == k->len && memcmp(p->strs[idx].s, k->s, k->len) == 0;
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
	idx = hash_index__find(&p->str_idx, *hash, str_eq, p, k);
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
	return TABLE_APPEND(p, p->strs, p->nr_strs, p->cap_strs, &p->str_idx, &k, hash);
}

static bool string_valid(const struct profile *p, uint32_t idx)
{
	return idx < p->nr_strs;
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
	return mapping_same(&((const struct profile *)ctx)->maps[idx], key);
}

int64_t profile__mapping(struct profile *p, const struct profile_mapping *m)
{
	int64_t idx;

	if (!m || !string_valid(p, m->filename) || !string_valid(p, m->build_id) ||
	    !string_valid(p, m->htlhash))
		return -EINVAL;
	if (mapping_same(m, &p->maps[0]))
		return 0;
	idx = TABLE_ADD(p, p->maps, p->nr_maps, p->cap_maps, &p->map_idx, m, mapping_hash(m),
			mapping_eq);
	/* The same mapping seen once symbolized stays marked as such. */
	if (idx > 0)
		p->maps[idx].has_functions |= m->has_functions;
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
	return function_same(&((const struct profile *)ctx)->funcs[idx], key);
}

int64_t profile__function(struct profile *p, const struct profile_function *f)
{
	if (!f || !string_valid(p, f->name) || !string_valid(p, f->system_name) ||
	    !string_valid(p, f->filename))
		return -EINVAL;
	if (function_same(f, &p->funcs[0]))
		return 0;
	return TABLE_ADD(p, p->funcs, p->nr_funcs, p->cap_funcs, &p->func_idx, f, function_hash(f),
			 function_eq);
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

	if (!location_same(&p->locs[idx], k->l) || ll->n != k->n)
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

	if (!l || l->mapping >= p->nr_maps || l->function >= p->nr_funcs ||
	    !string_valid(p, l->label) || (unsigned)l->kind > FRAME_JIT_OTHER || (n && !lines))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].function || lines[i].function >= p->nr_funcs)
			return -EINVAL;
	}
	copy = *l;
	if (n) {
		if (copy.function && copy.function != lines[0].function)
			return -EINVAL;
		copy.function = lines[0].function;
	}
	if (!n && location_same(&copy, &p->locs[0]))
		return 0;
	k = (struct location_key){.l = &copy, .lines = lines, .n = n};
	hash = location_hash(&k);
	idx = hash_index__find(&p->loc_idx, hash, location_eq, p, &k);
	if (idx)
		return idx;

	err = VEC_RESERVE_MORE(p->lines, p->cap_lines, p->nr_lines, n);
	if (!err)
		err = TABLE_RESERVE(p->loc_lines, p->cap_loc_lines, p->nr_locs);
	if (err)
		return err;
	/* loc_lines runs parallel to locs: its entry is written first, counted by the append. */
	p->loc_lines[p->nr_locs] = (struct loc_lines){.off = p->nr_lines, .n = n};
	ret = TABLE_APPEND(p, p->locs, p->nr_locs, p->cap_locs, &p->loc_idx, &copy, hash);
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
	const struct stack_entry *s = &p->stacks[idx];

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
		if (!locations[i] || locations[i] >= p->nr_locs)
			return -EINVAL;
	}
	hash = stack_hash(locations, n);
	idx = hash_index__find(&p->stack_idx, hash, stack_eq, p, &k);
	if (idx)
		return idx;

	if (VEC_RESERVE_MORE(p->stack_locs, p->cap_stack_locs, p->nr_stack_locs, n))
		return -ENOMEM;
	e = (struct stack_entry){.off = p->nr_stack_locs, .n = n};
	ret = TABLE_APPEND(p, p->stacks, p->nr_stacks, p->cap_stacks, &p->stack_idx, &e, hash);
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
	return HASH_VALUES(0x73616d70, stack, l->pid, l->tid, l->comm, l->thread_name,
			   l->thread_state, l->wait_kind, l->wait_addr);
}

static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sample_key *k = key;
	const struct profile_sample *s = &((const struct profile *)ctx)->samples[idx];

	return s->stack == k->stack && s->labels.pid == k->labels->pid &&
	       s->labels.tid == k->labels->tid && s->labels.comm == k->labels->comm &&
	       s->labels.thread_name == k->labels->thread_name &&
	       s->labels.thread_state == k->labels->thread_state &&
	       s->labels.wait_kind == k->labels->wait_kind &&
	       s->labels.wait_addr == k->labels->wait_addr;
}

int profile__add_sample(struct profile *p, uint32_t stack, const struct profile_labels *labels,
			int64_t value, int64_t count)
{
	struct sample_key k = {.stack = stack, .labels = labels};
	struct profile_sample *s;
	uint32_t hash;
	int64_t idx;

	if (!labels || stack >= p->nr_stacks || !string_valid(p, labels->comm) ||
	    !string_valid(p, labels->thread_name) || !string_valid(p, labels->thread_state) ||
	    !string_valid(p, labels->wait_kind))
		return -EINVAL;
	hash = sample_hash(stack, labels);
	idx = hash_index__find(&p->sample_idx, hash, sample_eq, p, &k);
	if (!idx) {
		struct profile_sample zero = {.stack = stack, .labels = *labels};

		idx = TABLE_APPEND(p, p->samples, p->nr_samples, p->cap_samples, &p->sample_idx,
				   &zero, hash);
		if (idx < 0)
			return (int)idx;
	}
	s = &p->samples[idx];
	s->value += value;
	s->count += count;
	return 0;
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
	if (VEC_RESERVE(p->strs, p->cap_strs, 1) || VEC_RESERVE(p->maps, p->cap_maps, 1) ||
	    VEC_RESERVE(p->funcs, p->cap_funcs, 1) || VEC_RESERVE(p->locs, p->cap_locs, 1) ||
	    VEC_RESERVE(p->loc_lines, p->cap_loc_lines, 1) ||
	    VEC_RESERVE(p->stacks, p->cap_stacks, 1) ||
	    VEC_RESERVE(p->samples, p->cap_samples, 1) || VEC_RESERVE(p->procs, p->cap_procs, 1))
		goto err_out;
	memset(&p->procs[0], 0, sizeof(p->procs[0]));
	p->nr_procs = 1;
	p->strs[0] = (struct string_entry){.s = "", .len = 0};
	memset(&p->maps[0], 0, sizeof(p->maps[0]));
	memset(&p->funcs[0], 0, sizeof(p->funcs[0]));
	memset(&p->locs[0], 0, sizeof(p->locs[0]));
	memset(&p->loc_lines[0], 0, sizeof(p->loc_lines[0]));
	memset(&p->stacks[0], 0, sizeof(p->stacks[0]));
	memset(&p->samples[0], 0, sizeof(p->samples[0]));
	p->nr_strs = p->nr_maps = p->nr_funcs = p->nr_locs = p->nr_stacks = p->nr_samples = 1;
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
	hash_index__free(&p->proc_idx);
	free(p->procs);
	hash_index__free(&p->sample_idx);
	free(p->samples);
	hash_index__free(&p->stack_idx);
	free(p->stack_locs);
	free(p->stacks);
	hash_index__free(&p->loc_idx);
	free(p->lines);
	free(p->loc_lines);
	free(p->locs);
	hash_index__free(&p->func_idx);
	free(p->funcs);
	hash_index__free(&p->map_idx);
	free(p->maps);
	hash_index__free(&p->str_idx);
	free(p->strs);
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
	return ((const struct profile *)ctx)->procs[idx].pid == *(const uint32_t *)key;
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
	idx = hash_index__find(&p->proc_idx, hash, process_eq, p, &proc->pid);
	if (idx) {
		p->procs[idx] = *proc;
		return 0;
	}
	ret = TABLE_APPEND(p, p->procs, p->nr_procs, p->cap_procs, &p->proc_idx, proc, hash);
	return ret < 0 ? (int)ret : 0;
}

const struct profile_process *profile__find_process(const struct profile *p, uint32_t pid)
{
	uint32_t idx = hash_index__find(&p->proc_idx, process_hash(pid), process_eq, p, &pid);

	return idx ? &p->procs[idx] : NULL;
}

size_t profile__nr_processes(const struct profile *p)
{
	return p->nr_procs - 1;
}

const struct profile_process *profile__process_at(const struct profile *p, size_t idx)
{
	return idx + 1 < p->nr_procs ? &p->procs[idx + 1] : NULL;
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
	return p->nr_strs;
}

const char *profile__string_at(const struct profile *p, uint32_t idx)
{
	return idx < p->nr_strs ? p->strs[idx].s : NULL;
}

size_t profile__nr_mappings(const struct profile *p)
{
	return p->nr_maps;
}

const struct profile_mapping *profile__mapping_at(const struct profile *p, uint32_t idx)
{
	return idx < p->nr_maps ? &p->maps[idx] : NULL;
}

size_t profile__nr_functions(const struct profile *p)
{
	return p->nr_funcs;
}

const struct profile_function *profile__function_at(const struct profile *p, uint32_t idx)
{
	return idx < p->nr_funcs ? &p->funcs[idx] : NULL;
}

size_t profile__nr_locations(const struct profile *p)
{
	return p->nr_locs;
}

const struct profile_location *profile__location_at(const struct profile *p, uint32_t idx)
{
	return idx < p->nr_locs ? &p->locs[idx] : NULL;
}

const struct profile_line *profile__location_lines(const struct profile *p, uint32_t idx, size_t *n)
{
	if (idx >= p->nr_locs || !p->loc_lines[idx].n) {
		*n = 0;
		return NULL;
	}
	*n = p->loc_lines[idx].n;
	return p->lines + p->loc_lines[idx].off;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->nr_stacks;
}

const uint32_t *profile__stack_at(const struct profile *p, uint32_t idx, size_t *n)
{
	const struct stack_entry *s;

	if (idx >= p->nr_stacks || !p->stacks[idx].n) {
		*n = 0;
		return NULL;
	}
	s = &p->stacks[idx];
	*n = s->n;
	return p->stack_locs + s->off;
}

size_t profile__nr_samples(const struct profile *p)
{
	return p->nr_samples;
}

const struct profile_sample *profile__sample_at(const struct profile *p, size_t idx)
{
	return idx < p->nr_samples ? &p->samples[idx] : NULL;
}

const char *profile__location_name(const struct profile *p, uint32_t loc_idx)
{
	const struct profile_location *l = profile__location_at(p, loc_idx);

	if (!l)
		return NULL;
	if (l->function && p->funcs[l->function].name)
		return p->strs[p->funcs[l->function].name].s;
	if (l->label)
		return p->strs[l->label].s;
	return "[unknown]";
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * From the input profiles into the OTLP encoder's dictionary and resources (see enc_otlp.c):
 * each input's strings, mappings, locations and stacks are re-interned on first use through
 * per-input maps, so nothing that no sample reaches enters the dictionary; processes become
 * resources; samples are merged where OTLP sees no difference.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "formats/otlp_build.h"

#define UNKNOWN_NAME "[unknown]"

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
	ret = otlp_dict__string(b, s);
	if (ret > 0)
		src->str_map[idx] = ret;
	return ret;
}

/* An attribute whose value is the input's string idx; 0 when idx is 0 (no value). */
static int64_t src_attr_string(struct otlp_build *b, struct otlp_src *src, enum key k, uint32_t idx)
{
	const char *s;

	if (!idx)
		return 0;
	s = profile__string_at(src->p, idx);
	return s ? otlp_dict__attr_string(b, k, s) : -EINVAL;
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
	r = src_attr_string(b, src, KEY_BUILD_ID_GNU, m->build_id);
	if (r < 0)
		return r;
	d.build_id = r;
	r = src_attr_string(b, src, KEY_BUILD_ID_HTLHASH, m->htlhash);
	if (r < 0)
		return r;
	d.htlhash = r;
	r = otlp_dict__mapping(b, &d);
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
	case FRAME_CPYTHON:
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
	r = otlp_dict__attr_string(b, KEY_FRAME_TYPE, name);
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
		r = l->label ? src_string(b, src, l->label) : otlp_dict__string(b, UNKNOWN_NAME);
		if (r < 0)
			return r;
		d.name = d.system_name = r;
	}
	return otlp_dict__function(b, &d);
}

/*
 * Stages the location's inline chain after the last kept line; otlp_dict__location() keeps it if
 * the location is new. 0 or -errno.
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
	err = DICT_RESERVE(b->lines, b->cap_lines, b->nr_lines + n);
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
	r = otlp_dict__location(b, &d);
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
	/* Stage the translated stack after the last one; otlp_dict__stack_staged() keeps it if new.
	 */
	err = DICT_RESERVE(b->stack_locs, b->cap_stack_locs, b->nr_stack_locs + n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		r = src_location(b, src, locs[i]);
		if (r < 0)
			return r;
		/* Both the model and OTLP list a stack leaf first. */
		b->stack_locs[b->nr_stack_locs + i] = (int32_t)r;
	}
	r = otlp_dict__stack_staged(b, n);
	if (r > 0)
		src->stack_map[idx] = r;
	return r;
}

/* --- resources --- */

static bool resource_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_build *b = ctx;
	return b->res.arr[idx - 1].pid == *(const uint32_t *)key;
}

/* The resource of pid, created when new; its index in b->res, or -errno. Never the zero slot:
 * the index stores position + 1. */
static int64_t resource_get(struct otlp_build *b, uint32_t pid)
{
	uint32_t hash = hash_fold(hash_add(0x70696473, pid));
	uint32_t id;
	int err;

	err = TABLE_ROOM(&b->res);
	if (err)
		return err;
	id = hash_index__find(&b->res.idx, hash, resource_eq, b, &pid);
	if (id)
		return id - 1;
	b->res.arr[b->res.nr] = (struct resource){.pid = pid};
	hash_index__insert(&b->res.idx, b->res.nr + 1, hash);
	return b->res.nr++;
}

/* Every process entry first, in the order of the inputs and of their process tables. */
int otlp_collect__processes(struct otlp_build *b)
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
			if (!b->res.arr[r].proc) {
				b->res.arr[r].proc = proc;
				b->res.arr[r].p = p;
			}
		}
	}
	return 0;
}

/* --- samples --- */

static uint64_t sample_hash(const struct out_sample *s)
{
	uint64_t h = hash_add(hash_add(s->res, s->stack), s->link);

	for (uint32_t i = 0; i < s->nr_attrs; i++)
		h = hash_add(h, s->attrs[i]);
	return h;
}

/* ctx is the input whose samples the index covers. */
static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_src *src = ctx;
	const struct out_sample *x = &src->samples.arr[idx - 1], *k = key;

	return x->res == k->res && x->stack == k->stack && x->link == k->link &&
	       x->nr_attrs == k->nr_attrs &&
	       memcmp(x->attrs, k->attrs, k->nr_attrs * sizeof(x->attrs[0])) == 0;
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
	r = otlp_dict__attr_string(b, KEY_THREAD_NAME, s);
	if (r > 0)
		src->thread_name_map[idx] = r;
	return r;
}

/* The span the sample served (link_table) and its thread context's attributes (OTEP 4947). */
static int src_thread_ctx(struct otlp_build *b, const struct otlp_src *src,
			  const struct profile_sample *s, struct out_sample *key)
{
	int64_t r;

	if (s->labels.span_id) {
		r = otlp_dict__link(b, profile__string_at(src->p, s->labels.trace_id),
				    profile__string_at(src->p, s->labels.span_id));
		if (r < 0)
			return (int)r;
		key->link = (uint32_t)r;
	}
	for (uint32_t i = 0; i < s->labels.nr_ctx_attrs && key->nr_attrs < MAX_SAMPLE_ATTRS; i++) {
		r = otlp_dict__attr_kv(
			b, or_empty(profile__string_at(src->p, s->labels.ctx_attrs[i].key)),
			or_empty(profile__string_at(src->p, s->labels.ctx_attrs[i].value)));
		if (r < 0)
			return (int)r;
		if (r > 0)
			key->attrs[key->nr_attrs++] = (uint32_t)r;
	}
	return 0;
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
	uint32_t hash, id;
	int64_t r;
	int err;

	r = resource_get(b, s->labels.pid);
	if (r < 0)
		return (int)r;
	key.res = r;
	if (!b->res.arr[r].proc && !b->res.arr[r].comm && s->labels.comm) {
		b->res.arr[r].p = src->p;
		b->res.arr[r].comm = s->labels.comm;
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
	r = otlp_dict__attr_int(b, KEY_THREAD_ID, s->labels.tid);
	if (r < 0)
		return (int)r;
	key.attrs[key.nr_attrs++] = r;
	if (s->labels.thread_state) {
		r = src_attr_string(b, src, KEY_THREAD_STATE, s->labels.thread_state);
		if (r < 0)
			return (int)r;
		key.attrs[key.nr_attrs++] = r;
	}
	if (s->labels.wait_kind) {
		r = src_attr_string(b, src, KEY_LOCK_KIND, s->labels.wait_kind);
		if (r < 0)
			return (int)r;
		key.attrs[key.nr_attrs++] = r;
		r = otlp_dict__attr_int(b, KEY_LOCK_ADDR, (int64_t)s->labels.wait_addr);
		if (r < 0)
			return (int)r;
		key.attrs[key.nr_attrs++] = r;
	}
	err = src_thread_ctx(b, src, s, &key);
	if (err)
		return err;

	err = TABLE_ROOM(&src->samples);
	if (err)
		return err;
	hash = hash_fold(sample_hash(&key));
	id = hash_index__find(&src->samples.idx, hash, sample_eq, src, &key);
	if (!id) {
		/* Positions start at 1 in the index, where 0 marks an empty slot. */
		src->samples.arr[src->samples.nr++] = key;
		id = src->samples.nr;
		hash_index__insert(&src->samples.idx, id, hash);
		b->res.arr[key.res].nr_samples++;
	}
	o = &src->samples.arr[id - 1];
	if (__builtin_add_overflow(o->value, s->value, &o->value) ||
	    __builtin_add_overflow(o->count, s->count, &o->count))
		return -EOVERFLOW;
	return 0;
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
	t = otlp_dict__string(b, type);
	u = otlp_dict__string(b, unit);
	if (t < 0 || u < 0) {
		*err = t < 0 ? (int)t : (int)u;
		return NULL;
	}
	vt->type_strindex = (int32_t)t;
	vt->unit_strindex = (int32_t)u;
	return vt;
}

int otlp_collect__samples(struct otlp_build *b, size_t k)
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
	if (!src->samples.nr)
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

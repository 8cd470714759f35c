// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pprof encoder: the profile model to a gzipped perftools.profiles.Profile.
 *
 * A whole profile (no sample filter) keeps the model's indices as pprof ids (mapping, location
 * and function i get id i), so no table is renumbered and the output is the model as it is. A
 * filtered profile (one service out of a host-wide capture) keeps only the samples the filter
 * wants and only the strings, mappings, functions and locations those samples reach, renumbered
 * 1..n in model order: a receiver must not see another service's function names.
 *
 * Locations that the symbolizer could not resolve get a synthetic function named by their
 * "[unknown] binary+0xoffset" label, with ids after the real functions, so that pprof keeps
 * every frame instead of showing a bare address. All protobuf-c structs are built in arrays owned
 * by struct pprof_build and point into the model's strings; nothing is copied twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/gzip.h"
#include "formats/encode.h"
#include "formats/encode_common.h"
#include "profile.pb-c.h"

/* Strings that pprof needs and the model may not hold; appended after the model's strings. */
#define MAX_EXTRA_STRINGS 16

/* Sample values, in the order of sample_type; Go's CPU profiles use the same two. */
enum { VALUE_COUNT, VALUE_MAIN, NR_VALUES };

enum {
	LABEL_PID,
	LABEL_TID,
	LABEL_COMM,
	LABEL_THREAD_NAME,
	LABEL_THREAD_STATE,
	LABEL_LOCK_KIND,
	LABEL_LOCK_ADDR,
	LABEL_TRACE_ID,
	LABEL_SPAN_ID,
	NR_LABELS
};

/* Labels a sample may carry: the fixed ones, then its thread context's attributes. */
#define MAX_SAMPLE_LABELS (NR_LABELS + PROFILE_MAX_CTX_ATTRS)

/* A label's key, and whether its value is a number (else a model string index). */
static const struct {
	const char *name;
	bool num;
} label_defs[NR_LABELS] = {
	[LABEL_PID] = {"pid", true},
	[LABEL_TID] = {"tid", true},
	[LABEL_COMM] = {"comm", false},
	[LABEL_THREAD_NAME] = {"thread_name", false},
	[LABEL_THREAD_STATE] = {"thread_state", false},
	[LABEL_LOCK_KIND] = {"lock_kind", false},
	[LABEL_LOCK_ADDR] = {"lock_addr", true},
	/* The names Pyroscope's span profiles and Grafana's otel-profiling-go use. */
	[LABEL_TRACE_ID] = {"trace_id", false},
	[LABEL_SPAN_ID] = {"span_id", false},
};

/* (type, unit) pairs: sample_type[0], sample_type[1], then period_type. */
#define NR_HEADER_STRINGS (2 * (NR_VALUES + 1))

struct pprof_build {
	const struct profile *p;
	Perftools__Profiles__Profile msg;

	/*
	 * Model index -> output index (strings) or id (the rest); 0 = not emitted. Filled in two
	 * passes: first as "used" marks, then numbered. The identity for a whole profile.
	 */
	uint32_t *str_out;
	uint32_t *mapping_out;
	uint32_t *function_out;
	uint32_t *location_out;
	uint8_t *sample_kept;	/* by model sample index */
	size_t nr_kept_strings; /* model strings emitted, "" included: the extras follow */
	size_t nr_kept_mappings, nr_kept_functions, nr_kept_locations, nr_kept_samples;
	bool need_unknown;	    /* some emitted location has neither function nor label */
	bool need_label[NR_LABELS]; /* some emitted sample carries the label */

	/* String indices below are in model space: < nr model strings, else base + extra. */
	const char *extras[MAX_EXTRA_STRINGS];
	size_t nr_extras;
	int64_t header_str[NR_HEADER_STRINGS];
	int64_t label_keys[NR_LABELS];
	int64_t unknown_name;

	char **strings; /* the emitted model strings, then the extras */
	size_t nr_strings;

	Perftools__Profiles__ValueType types[NR_VALUES + 1]; /* the last is period_type */
	Perftools__Profiles__ValueType *type_ptrs[NR_VALUES];

	Perftools__Profiles__Mapping *mappings;
	Perftools__Profiles__Mapping **mapping_ptrs;

	Perftools__Profiles__Function *functions;
	Perftools__Profiles__Function **function_ptrs;
	uint32_t *synthetic_by_label; /* label string index -> synthetic function id; 0 = none */

	Perftools__Profiles__Location *locations;
	Perftools__Profiles__Location **location_ptrs;
	Perftools__Profiles__Line *lines;
	Perftools__Profiles__Line **line_ptrs;

	Perftools__Profiles__Sample *samples;
	Perftools__Profiles__Sample **sample_ptrs;
	uint64_t *location_ids; /* every sample's ids back to back */
	int64_t *values;
	Perftools__Profiles__Label *labels;
	Perftools__Profiles__Label **label_ptrs;
};

static void pprof_build__free(struct pprof_build *b)
{
	free(b->label_ptrs);
	free(b->labels);
	free(b->values);
	free(b->location_ids);
	free(b->sample_ptrs);
	free(b->samples);
	free(b->line_ptrs);
	free(b->lines);
	free(b->location_ptrs);
	free(b->locations);
	free(b->synthetic_by_label);
	free(b->function_ptrs);
	free(b->functions);
	free(b->mapping_ptrs);
	free(b->mappings);
	free(b->strings);
	free(b->sample_kept);
	free(b->location_out);
	free(b->function_out);
	free(b->mapping_out);
	free(b->str_out);
}

static void *alloc_array(size_t n, size_t size)
{
	/* calloc(0, ...) may return NULL; an empty table is not an error. */
	return calloc(n ? n : 1, size);
}

/* Mark a model string as used. Index 0 ("") is pprof's string_table[0], emitted anyway. */
static void pprof_build__use_string(struct pprof_build *b, uint32_t idx)
{
	if (idx < profile__nr_strings(b->p))
		b->str_out[idx] = 1;
}

/*
 * Decide what is emitted: the kept samples, the locations on their stacks, and the mappings,
 * functions and strings those reach. Without a filter everything is, so that a whole profile
 * keeps the entries no sample uses, as it always has.
 */
static int pprof_build__select(struct pprof_build *b,
			       bool (*keep)(const struct profile_sample *s, void *ctx), void *ctx)
{
	size_t nr_strs = profile__nr_strings(b->p), nr_maps = profile__nr_mappings(b->p);
	size_t nr_funcs = profile__nr_functions(b->p), nr_locs = profile__nr_locations(b->p);
	size_t nr_samples = profile__nr_samples(b->p);
	bool whole = !keep;

	b->str_out = alloc_array(nr_strs, sizeof(*b->str_out));
	b->mapping_out = alloc_array(nr_maps, sizeof(*b->mapping_out));
	b->function_out = alloc_array(nr_funcs, sizeof(*b->function_out));
	b->location_out = alloc_array(nr_locs, sizeof(*b->location_out));
	b->sample_kept = alloc_array(nr_samples, sizeof(*b->sample_kept));
	if (!b->str_out || !b->mapping_out || !b->function_out || !b->location_out ||
	    !b->sample_kept)
		return -ENOMEM;

	for (size_t i = 1; i < nr_samples; i++) {
		const struct profile_sample *s = profile__sample_at(b->p, i);
		const uint32_t *stack;
		size_t depth;

		if (!whole && !keep(s, ctx))
			continue;
		b->sample_kept[i] = 1;
		b->nr_kept_samples++;
		/* The model hands out only valid indices, so none is checked here. */
		stack = profile__stack_at(b->p, s->stack, &depth);
		for (size_t j = 0; j < depth; j++)
			b->location_out[stack[j]] = 1;
		pprof_build__use_string(b, s->labels.comm);
		pprof_build__use_string(b, s->labels.thread_name);
		pprof_build__use_string(b, s->labels.thread_state);
		pprof_build__use_string(b, s->labels.wait_kind);
		pprof_build__use_string(b, s->labels.trace_id);
		pprof_build__use_string(b, s->labels.span_id);
		for (uint32_t k = 0; k < s->labels.nr_ctx_attrs; k++) {
			pprof_build__use_string(b, s->labels.ctx_attrs[k].key);
			pprof_build__use_string(b, s->labels.ctx_attrs[k].value);
		}
		b->need_label[LABEL_TRACE_ID] |= s->labels.trace_id != 0;
		b->need_label[LABEL_SPAN_ID] |= s->labels.span_id != 0;
		b->need_label[LABEL_PID] = b->need_label[LABEL_TID] = true;
		b->need_label[LABEL_COMM] |= s->labels.comm != 0;
		b->need_label[LABEL_THREAD_NAME] |= s->labels.thread_name != 0;
		b->need_label[LABEL_THREAD_STATE] |= s->labels.thread_state != 0;
		b->need_label[LABEL_LOCK_KIND] |= s->labels.wait_kind != 0;
		b->need_label[LABEL_LOCK_ADDR] |= s->labels.wait_kind != 0;
	}

	for (size_t i = 1; i < nr_locs; i++) {
		const struct profile_location *l = profile__location_at(b->p, i);

		if (!whole && !b->location_out[i])
			continue;
		b->location_out[i] = 1;
		/* Kernel frames are emitted without their mapping, so they do not keep it. */
		if (l->kind != FRAME_KERNEL && l->mapping)
			b->mapping_out[l->mapping] = 1;
		if (l->function) {
			size_t n;
			const struct profile_line *ml = profile__location_lines(b->p, i, &n);

			b->function_out[l->function] = 1;
			for (size_t j = 0; j < n; j++)
				b->function_out[ml[j].function] = 1;
		} else if (l->label)
			pprof_build__use_string(b, l->label);
		else
			b->need_unknown = true;
	}
	for (size_t i = 1; i < nr_maps; i++) {
		const struct profile_mapping *m = profile__mapping_at(b->p, i);

		if (!whole && !b->mapping_out[i])
			continue;
		b->mapping_out[i] = 1;
		pprof_build__use_string(b, m->filename);
		pprof_build__use_string(b, m->build_id);
	}
	for (size_t i = 1; i < nr_funcs; i++) {
		const struct profile_function *f = profile__function_at(b->p, i);

		if (!whole && !b->function_out[i])
			continue;
		b->function_out[i] = 1;
		pprof_build__use_string(b, f->name);
		pprof_build__use_string(b, f->system_name);
		pprof_build__use_string(b, f->filename);
	}
	if (whole) {
		for (size_t i = 0; i < nr_strs; i++)
			b->str_out[i] = 1;
		/* The whole profile has always carried "[unknown]" and every label key. */
		b->need_unknown = true;
		for (int k = 0; k < NR_LABELS; k++)
			b->need_label[k] = true;
	}
	b->str_out[0] = 1;
	return 0;
}

/* Turn the marks into ids, in model order; the zero entries stay 0 (string 0 is ""). */
static size_t number_marks(uint32_t *out, size_t n, uint32_t first)
{
	uint32_t next = first;

	if (n)
		out[0] = 0;
	for (size_t i = 1; i < n; i++)
		out[i] = out[i] ? next++ : 0;
	return next - first;
}

static void pprof_build__number(struct pprof_build *b)
{
	b->nr_kept_strings = 1 + number_marks(b->str_out, profile__nr_strings(b->p), 1);
	b->nr_kept_mappings = number_marks(b->mapping_out, profile__nr_mappings(b->p), 1);
	b->nr_kept_functions = number_marks(b->function_out, profile__nr_functions(b->p), 1);
	b->nr_kept_locations = number_marks(b->location_out, profile__nr_locations(b->p), 1);
}

/* The string index of s: the model's own when it has s, else an extra appended to the table. */
static int64_t pprof_build__string(struct pprof_build *b, const char *s)
{
	size_t base = profile__nr_strings(b->p);
	int64_t idx = profile__find_string(b->p, s);

	if (idx >= 0) {
		pprof_build__use_string(b, (uint32_t)idx);
		return idx;
	}
	for (size_t i = 0; i < b->nr_extras; i++) {
		if (strcmp(b->extras[i], s) == 0)
			return base + i;
	}
	if (b->nr_extras == MAX_EXTRA_STRINGS)
		return -E2BIG;
	b->extras[b->nr_extras] = s;
	return base + b->nr_extras++;
}

/* A model-space string index (see struct pprof_build) to its index in the emitted table. */
static int64_t pprof_build__str(const struct pprof_build *b, int64_t idx)
{
	size_t base = profile__nr_strings(b->p);

	if (idx < 0)
		return 0;
	if ((size_t)idx < base)
		return b->str_out[idx];
	return (int64_t)(b->nr_kept_strings + ((size_t)idx - base));
}

/*
 * The strings the encoder adds itself (value types, label keys, "[unknown]"): the model's own
 * when it has them, else extras. All are known before the string table is laid out.
 */
static int pprof_build__extra_strings(struct pprof_build *b)
{
	const struct profile_desc *d = profile__desc(b->p);
	const char *names[NR_HEADER_STRINGS] = {
		"samples", "count", d->sample_type, d->sample_unit, d->period_type, d->period_unit,
	};

	for (size_t i = 0; i < NR_HEADER_STRINGS; i++) {
		b->header_str[i] = pprof_build__string(b, names[i]);
		if (b->header_str[i] < 0)
			return (int)b->header_str[i];
	}
	for (int k = 0; k < NR_LABELS; k++) {
		if (!b->need_label[k])
			continue;
		b->label_keys[k] = pprof_build__string(b, label_defs[k].name);
		if (b->label_keys[k] < 0)
			return (int)b->label_keys[k];
	}
	if (b->need_unknown) {
		b->unknown_name = pprof_build__string(b, "[unknown]");
		if (b->unknown_name < 0)
			return (int)b->unknown_name;
	}
	return 0;
}

static void pprof_build__header(struct pprof_build *b)
{
	const struct profile_desc *d = profile__desc(b->p);

	for (int i = 0; i <= NR_VALUES; i++) {
		perftools__profiles__value_type__init(&b->types[i]);
		b->types[i].type = pprof_build__str(b, b->header_str[2 * i]);
		b->types[i].unit = pprof_build__str(b, b->header_str[2 * i + 1]);
	}
	for (int i = 0; i < NR_VALUES; i++)
		b->type_ptrs[i] = &b->types[i];
	b->msg.n_sample_type = NR_VALUES;
	b->msg.sample_type = b->type_ptrs;
	b->msg.period_type = &b->types[NR_VALUES];
	b->msg.default_sample_type = b->types[VALUE_MAIN].type;
	b->msg.period = d->period;
	b->msg.time_nanos = (int64_t)d->time_nanos;
	b->msg.duration_nanos = (int64_t)d->duration_nanos;
}

static int pprof_build__mappings(struct pprof_build *b)
{
	size_t nr_model = profile__nr_mappings(b->p), n = b->nr_kept_mappings;

	b->mappings = alloc_array(n, sizeof(*b->mappings));
	b->mapping_ptrs = alloc_array(n, sizeof(*b->mapping_ptrs));
	if (!b->mappings || !b->mapping_ptrs)
		return -ENOMEM;
	for (size_t i = 1; i < nr_model; i++) {
		const struct profile_mapping *m = profile__mapping_at(b->p, i);
		uint32_t id = b->mapping_out[i];
		Perftools__Profiles__Mapping *pm;

		if (!id)
			continue;
		pm = &b->mappings[id - 1];
		perftools__profiles__mapping__init(pm);
		pm->id = id;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename = pprof_build__str(b, m->filename);
		pm->build_id = pprof_build__str(b, m->build_id);
		pm->has_functions = m->has_functions;
		b->mapping_ptrs[id - 1] = pm;
	}
	b->msg.n_mapping = n;
	b->msg.mapping = b->mapping_ptrs;
	return 0;
}

static void pprof_build__function(struct pprof_build *b, uint64_t id, int64_t name,
				  int64_t system_name, int64_t filename)
{
	Perftools__Profiles__Function *f = &b->functions[id - 1];

	perftools__profiles__function__init(f);
	f->id = id;
	f->name = name;
	f->system_name = system_name;
	f->filename = filename;
	b->function_ptrs[id - 1] = f;
}

/* Line i: of function_id, at line (0: unknown). */
static void pprof_build__line(struct pprof_build *b, size_t i, uint64_t function_id, int64_t line)
{
	Perftools__Profiles__Line *pl = &b->lines[i];

	perftools__profiles__line__init(pl);
	pl->function_id = function_id;
	pl->line = line;
	b->line_ptrs[i] = pl;
}

/*
 * The function of the one Line of location l, which has no inline chain: its own when kept,
 * else a synthetic one named by its label, one per label, numbered from *next_func on.
 */
static uint64_t pprof_build__line_function(struct pprof_build *b, const struct profile_location *l,
					   uint64_t *next_func)
{
	uint64_t func = b->function_out[l->function];
	int64_t name;

	if (func)
		return func;
	if (b->synthetic_by_label[l->label])
		return b->synthetic_by_label[l->label];
	name = l->label ? pprof_build__str(b, l->label) : pprof_build__str(b, b->unknown_name);
	func = (*next_func)++;
	pprof_build__function(b, func, name, name, 0);
	b->synthetic_by_label[l->label] = func;
	return func;
}

/* Location id, from model location l, with the n lines at line_ptrs[first..]. */
static void pprof_build__location(struct pprof_build *b, uint32_t id,
				  const struct profile_location *l, size_t first, size_t n)
{
	Perftools__Profiles__Location *pl = &b->locations[id - 1];

	perftools__profiles__location__init(pl);
	pl->id = id;
	/* Kernel frames belong to no mapping of the process. */
	pl->mapping_id = l->kind == FRAME_KERNEL ? 0 : b->mapping_out[l->mapping];
	pl->address = l->address;
	pl->n_line = n;
	pl->line = &b->line_ptrs[first];
	b->location_ptrs[id - 1] = pl;
}

/* Functions and locations together: the synthetic functions come from the locations. */
static int pprof_build__locations(struct pprof_build *b)
{
	size_t nr_model_funcs = profile__nr_functions(b->p);
	size_t nr_model_locs = profile__nr_locations(b->p);
	size_t nr_funcs = b->nr_kept_functions, nr_locs = b->nr_kept_locations;
	size_t nr_lines = nr_locs, next_line = 0;
	uint64_t next_func;

	/* At most one synthetic function per location. */
	b->functions = alloc_array(nr_funcs + nr_locs, sizeof(*b->functions));
	b->function_ptrs = alloc_array(nr_funcs + nr_locs, sizeof(*b->function_ptrs));
	b->synthetic_by_label =
		alloc_array(profile__nr_strings(b->p), sizeof(*b->synthetic_by_label));
	b->locations = alloc_array(nr_locs, sizeof(*b->locations));
	b->location_ptrs = alloc_array(nr_locs, sizeof(*b->location_ptrs));
	/* One Line per location, or one per level of its inline chain. */
	for (size_t i = 1; i < nr_model_locs; i++) {
		size_t n;

		if (b->location_out[i] && profile__location_lines(b->p, i, &n))
			nr_lines += n - 1;
	}
	b->lines = alloc_array(nr_lines, sizeof(*b->lines));
	b->line_ptrs = alloc_array(nr_lines, sizeof(*b->line_ptrs));
	if (!b->functions || !b->function_ptrs || !b->synthetic_by_label || !b->locations ||
	    !b->location_ptrs || !b->lines || !b->line_ptrs)
		return -ENOMEM;

	for (size_t i = 1; i < nr_model_funcs; i++) {
		const struct profile_function *f = profile__function_at(b->p, i);

		if (b->function_out[i])
			pprof_build__function(b, b->function_out[i], pprof_build__str(b, f->name),
					      pprof_build__str(b, f->system_name),
					      pprof_build__str(b, f->filename));
	}
	next_func = nr_funcs + 1;

	for (size_t i = 1; i < nr_model_locs; i++) {
		const struct profile_location *l = profile__location_at(b->p, i);
		const struct profile_line *ml;
		size_t nr_ml;

		if (!b->location_out[i])
			continue;
		ml = profile__location_lines(b->p, i, &nr_ml);
		/* Innermost first, as pprof wants them; every function here is kept. */
		for (size_t j = 0; j < nr_ml; j++)
			pprof_build__line(b, next_line + j, b->function_out[ml[j].function],
					  ml[j].line);
		if (!nr_ml)
			pprof_build__line(b, next_line,
					  pprof_build__line_function(b, l, &next_func), 0);
		pprof_build__location(b, b->location_out[i], l, next_line, nr_ml ? nr_ml : 1);
		next_line += nr_ml ? nr_ml : 1;
	}
	b->msg.n_function = next_func - 1;
	b->msg.function = b->function_ptrs;
	b->msg.n_location = nr_locs;
	b->msg.location = b->location_ptrs;
	return 0;
}

static int pprof_build__samples(struct pprof_build *b)
{
	size_t nr_model = profile__nr_samples(b->p), nr = b->nr_kept_samples;
	size_t nr_ids = 0, depth, id_off = 0, nr_labels = 0, out = 0;
	const uint32_t *stack;

	for (size_t i = 1; i < nr_model; i++) {
		if (!b->sample_kept[i])
			continue;
		profile__stack_at(b->p, profile__sample_at(b->p, i)->stack, &depth);
		nr_ids += depth;
	}
	if (nr > SIZE_MAX / (MAX_SAMPLE_LABELS * sizeof(*b->labels)))
		return -ENOMEM;
	b->samples = alloc_array(nr, sizeof(*b->samples));
	b->sample_ptrs = alloc_array(nr, sizeof(*b->sample_ptrs));
	b->location_ids = alloc_array(nr_ids, sizeof(*b->location_ids));
	b->values = alloc_array(nr * NR_VALUES, sizeof(*b->values));
	b->labels = alloc_array(nr * MAX_SAMPLE_LABELS, sizeof(*b->labels));
	b->label_ptrs = alloc_array(nr * MAX_SAMPLE_LABELS, sizeof(*b->label_ptrs));
	if (!b->samples || !b->sample_ptrs || !b->location_ids || !b->values || !b->labels ||
	    !b->label_ptrs)
		return -ENOMEM;

	for (size_t i = 1; i < nr_model; i++) {
		const struct profile_sample *s = profile__sample_at(b->p, i);
		Perftools__Profiles__Sample *ps = &b->samples[out];
		Perftools__Profiles__Label **lp = &b->label_ptrs[nr_labels];
		Perftools__Profiles__Label *l;
		const int64_t vals[NR_LABELS] = {
			[LABEL_PID] = s->labels.pid,
			[LABEL_TID] = s->labels.tid,
			[LABEL_COMM] = s->labels.comm,
			[LABEL_THREAD_NAME] = s->labels.thread_name,
			[LABEL_THREAD_STATE] = s->labels.thread_state,
			[LABEL_LOCK_KIND] = s->labels.wait_kind,
			[LABEL_LOCK_ADDR] = (int64_t)s->labels.wait_addr,
			[LABEL_TRACE_ID] = s->labels.trace_id,
			[LABEL_SPAN_ID] = s->labels.span_id,
		};
		size_t n = 0;

		if (!b->sample_kept[i])
			continue;
		perftools__profiles__sample__init(ps);
		stack = profile__stack_at(b->p, s->stack, &depth);
		/* Both the model and pprof list a stack leaf first. */
		for (size_t j = 0; j < depth; j++)
			b->location_ids[id_off + j] = b->location_out[stack[j]];
		ps->n_location_id = depth;
		ps->location_id = &b->location_ids[id_off];
		id_off += depth;

		ps->value = &b->values[out * NR_VALUES];
		ps->value[VALUE_COUNT] = s->count;
		ps->value[VALUE_MAIN] = s->value;
		ps->n_value = NR_VALUES;

		for (int k = 0; k < NR_LABELS; k++) {
			bool num = label_defs[k].num;

			/* pid 0 is real (the idle task), so the numbers are always set; names only
			 * when known, and the lock's address only with a lock. */
			if (!num && !vals[k])
				continue;
			if (k == LABEL_LOCK_ADDR && !s->labels.wait_kind)
				continue;
			l = &b->labels[nr_labels];
			perftools__profiles__label__init(l);
			l->key = pprof_build__str(b, b->label_keys[k]);
			l->str = pprof_build__str(b, num ? 0 : vals[k]);
			l->num = num ? vals[k] : 0;
			b->label_ptrs[nr_labels++] = l;
			n++;
		}
		for (uint32_t k = 0; k < s->labels.nr_ctx_attrs; k++) {
			l = &b->labels[nr_labels];
			perftools__profiles__label__init(l);
			l->key = pprof_build__str(b, s->labels.ctx_attrs[k].key);
			l->str = pprof_build__str(b, s->labels.ctx_attrs[k].value);
			b->label_ptrs[nr_labels++] = l;
			n++;
		}
		ps->n_label = n;
		ps->label = lp;
		b->sample_ptrs[out++] = ps;
	}
	b->msg.n_sample = nr;
	b->msg.sample = b->sample_ptrs;
	return 0;
}

static int pprof_build__strings(struct pprof_build *b)
{
	size_t base = profile__nr_strings(b->p);

	b->nr_strings = b->nr_kept_strings + b->nr_extras;
	b->strings = alloc_array(b->nr_strings, sizeof(*b->strings));
	if (!b->strings)
		return -ENOMEM;
	/* protobuf-c wants char **; packing only reads the strings. */
	b->strings[0] = (char *)profile__string_at(b->p, 0);
	for (size_t i = 1; i < base; i++) {
		if (b->str_out[i])
			b->strings[b->str_out[i]] = (char *)profile__string_at(b->p, i);
	}
	for (size_t i = 0; i < b->nr_extras; i++)
		b->strings[b->nr_kept_strings + i] = (char *)b->extras[i];
	b->msg.n_string_table = b->nr_strings;
	b->msg.string_table = b->strings;
	return 0;
}

int enc_pprof__encode(const struct profile *p,
		      bool (*keep)(const struct profile_sample *s, void *ctx), void *ctx,
		      uint8_t **out, size_t *len)
{
	struct pprof_build b = {.p = p};
	uint8_t *packed = NULL;
	size_t packed_len;
	int err;

	if (!p || !out || !len)
		return -EINVAL;
	perftools__profiles__profile__init(&b.msg);

	/* Every string is known (and marked) before the string table is laid out. */
	err = pprof_build__select(&b, keep, ctx);
	if (!err)
		err = pprof_build__extra_strings(&b);
	if (err)
		goto out;
	pprof_build__number(&b);
	pprof_build__header(&b);
	err = pprof_build__strings(&b);
	if (!err)
		err = pprof_build__mappings(&b);
	if (!err)
		err = pprof_build__locations(&b);
	if (!err)
		err = pprof_build__samples(&b);
	if (err)
		goto out;

	err = encode__pack(&b.msg.base, &packed, &packed_len);
	if (!err)
		/* gzip, not raw zlib: `go tool pprof` and the pprof backends expect a .pb.gz. */
		err = gzip__deflate(packed, packed_len, out, len);
out:
	free(packed);
	pprof_build__free(&b);
	return err;
}

int enc_pprof__write(const struct profile *p, const char *path)
{
	uint8_t *gz = NULL;
	size_t gz_len = 0;
	int err;

	if (!p || !path)
		return -EINVAL;
	err = enc_pprof__encode(p, NULL, NULL, &gz, &gz_len);
	return encode__write_file(err, gz, gz_len, path);
}

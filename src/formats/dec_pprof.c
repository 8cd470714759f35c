// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pprof decoder: a (gzipped) perftools.profiles.Profile into the model, the inverse of
 * enc_pprof.c, and the reader of Go's own profiles.
 *
 * Every index and id in the input is checked before use: pprof files come from anywhere. Ids
 * are arbitrary uint64 values, so each table is sorted by id and looked up by binary search.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/decode.h"
#include "base/gzip.h"
#include "base/vec.h"
#include "profile.pb-c.h"

/* A decompressed profile larger than this is refused rather than exhausting memory. */
#define MAX_PPROF_BYTES ((size_t)1 << 30)

struct id_map {
	uint64_t id;
	uint32_t first; /* model index (or, for locations, the first of its model locations) */
	uint32_t nr;	/* locations only: how many model locations (inline lines, expanded) */
};

struct pprof_dec {
	const Perftools__Profiles__Profile *msg;
	struct profile *p;
	const char *name;
	char *err;
	size_t err_len;
	uint32_t *strs; /* pprof string index -> model string index */
	struct id_map *mappings, *functions, *locations;
	uint32_t *loc_pool; /* the model location of each pprof location, by id_map.first */
	size_t nr_pool;
};

#define fail(d, code, ...) decode__fail((d)->err, (d)->err_len, (d)->name, code, __VA_ARGS__)

static int cmp_id(const void *a, const void *b)
{
	const struct id_map *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct id_map *find_id(const struct id_map *m, size_t n, uint64_t id)
{
	struct id_map key = {.id = id};

	return n ? bsearch(&key, m, n, sizeof(*m), cmp_id) : NULL;
}

/* Sort and reject duplicate ids (a lookup would pick either). */
static int sort_ids(struct pprof_dec *d, struct id_map *m, size_t n, const char *what)
{
	qsort(m, n, sizeof(*m), cmp_id);
	for (size_t i = 1; i < n; i++) {
		if (m[i].id == m[i - 1].id)
			return fail(d, -EINVAL, "two %ss have id %" PRIu64, what, m[i].id);
	}
	return 0;
}

/* A pprof string index to the model's; -EINVAL (with a message) when out of range. */
static int64_t str(struct pprof_dec *d, int64_t idx, const char *what, uint64_t id)
{
	if (idx < 0 || (uint64_t)idx >= d->msg->n_string_table)
		return fail(d, -EINVAL,
			    "%s %" PRIu64 ": string index %" PRId64 " out of range (%zu)", what, id,
			    idx, d->msg->n_string_table);
	return d->strs[idx];
}

/* A label hostprof writes for itself, not a span attribute. */
static bool known_label(const struct pprof_dec *d, int64_t key)
{
	static const char *const names[] = {"pid",	   "tid",	   "comm",
					    "thread_name", "thread_state", "lock_kind",
					    "lock_addr",   "trace_id",	   "span_id"};
	const char *s;

	if (key <= 0 || (uint64_t)key >= d->msg->n_string_table)
		return true;
	s = d->msg->string_table[key];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return true;
	return false;
}

static int dec_strings(struct pprof_dec *d)
{
	const Perftools__Profiles__Profile *m = d->msg;

	if (m->n_string_table == 0 || m->string_table[0][0])
		return fail(d, -EINVAL, "string_table[0] must be the empty string");
	d->strs = calloc(m->n_string_table, sizeof(*d->strs));
	if (!d->strs)
		return -ENOMEM;
	for (size_t i = 1; i < m->n_string_table; i++) {
		int64_t idx = profile__string(d->p, m->string_table[i]);

		if (idx < 0)
			return (int)idx;
		d->strs[i] = (uint32_t)idx;
	}
	return 0;
}

static int dec_mappings(struct pprof_dec *d)
{
	const Perftools__Profiles__Profile *m = d->msg;

	d->mappings = calloc(m->n_mapping + 1, sizeof(*d->mappings));
	if (!d->mappings)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_mapping; i++) {
		const Perftools__Profiles__Mapping *pm = m->mapping[i];
		struct profile_mapping mm = {0};
		int64_t fn, bid, idx;

		fn = str(d, pm->filename, "mapping", pm->id);
		bid = fn < 0 ? fn : str(d, pm->build_id, "mapping", pm->id);
		if (bid < 0)
			return (int)bid;
		if (!pm->id)
			return fail(d, -EINVAL, "mapping %zu has id 0", i);
		mm.start = pm->memory_start;
		mm.limit = pm->memory_limit;
		mm.offset = pm->file_offset;
		mm.filename = (uint32_t)fn;
		mm.build_id = (uint32_t)bid;
		mm.has_functions = pm->has_functions;
		idx = profile__mapping(d->p, &mm);
		if (idx < 0)
			return (int)idx;
		d->mappings[i] = (struct id_map){.id = pm->id, .first = (uint32_t)idx};
	}
	return sort_ids(d, d->mappings, m->n_mapping, "mapping");
}

static int dec_functions(struct pprof_dec *d)
{
	const Perftools__Profiles__Profile *m = d->msg;

	d->functions = calloc(m->n_function + 1, sizeof(*d->functions));
	if (!d->functions)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_function; i++) {
		const Perftools__Profiles__Function *pf = m->function[i];
		struct profile_function f = {0};
		int64_t name, sys, file, idx;

		name = str(d, pf->name, "function", pf->id);
		sys = name < 0 ? name : str(d, pf->system_name, "function", pf->id);
		file = sys < 0 ? sys : str(d, pf->filename, "function", pf->id);
		if (file < 0)
			return (int)file;
		if (!pf->id)
			return fail(d, -EINVAL, "function %zu has id 0", i);
		f.name = (uint32_t)name;
		f.system_name = sys ? (uint32_t)sys : (uint32_t)name;
		f.filename = (uint32_t)file;
		idx = profile__function(d->p, &f);
		if (idx == 0) {
			/* No name and no file is the model's "no function", which a line may not
			 * name: it is a function all the same, "[unknown]". */
			idx = profile__string(d->p, "[unknown]");
			if (idx > 0) {
				f.name = f.system_name = (uint32_t)idx;
				idx = profile__function(d->p, &f);
			}
		}
		if (idx < 0)
			return (int)idx;
		d->functions[i] = (struct id_map){.id = pf->id, .first = (uint32_t)idx};
	}
	return sort_ids(d, d->functions, m->n_function, "function");
}

static bool is_kernel(struct pprof_dec *d, const Perftools__Profiles__Location *pl,
		      const struct id_map *mapping)
{
	const char *file;

	if (!mapping)
		return pl->address >= DECODE_KERNEL_ADDR_MIN;
	file = profile__string_at(d->p, profile__mapping_at(d->p, mapping->first)->filename);
	return file && !strncmp(file, "[kernel", 7);
}

/* One pprof location to one model location, its inline lines (innermost first) included. */
static int dec_location(struct pprof_dec *d, const Perftools__Profiles__Location *pl,
			struct id_map *out)
{
	const struct id_map *mp = NULL;
	struct profile_location l = {0};
	struct profile_line *lines = NULL;
	int64_t idx;
	int err = 0;

	if (!pl->id)
		return fail(d, -EINVAL, "a location has id 0");
	if (pl->mapping_id) {
		mp = find_id(d->mappings, d->msg->n_mapping, pl->mapping_id);
		if (!mp)
			return fail(d, -EINVAL, "location %" PRIu64 ": no mapping with id %" PRIu64,
				    pl->id, pl->mapping_id);
		l.mapping = mp->first;
	}
	l.address = pl->address;
	l.kind = is_kernel(d, pl, mp) ? FRAME_KERNEL : FRAME_NATIVE;
	out->id = pl->id;
	out->first = (uint32_t)d->nr_pool;
	lines = calloc(pl->n_line + 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < pl->n_line; i++) {
		const struct id_map *f =
			find_id(d->functions, d->msg->n_function, pl->line[i]->function_id);

		if (!f) {
			err = fail(d, -EINVAL, "location %" PRIu64 ": no function with id %" PRIu64,
				   pl->id, pl->line[i]->function_id);
			goto out;
		}
		lines[i].function = f->first;
		lines[i].line = pl->line[i]->line;
	}
	if (!pl->n_line) {
		/* Unsymbolized: named after its binary and address, as the symbolizer does. */
		const char *bin = mp ? profile__string_at(
					       d->p, profile__mapping_at(d->p, mp->first)->filename)
				     : NULL;
		const char *base = bin && strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin;
		char label[512];

		snprintf(label, sizeof(label), "[unknown] %s+0x%" PRIx64,
			 base && *base ? base : "?", pl->address);
		idx = profile__string(d->p, label);
		if (idx < 0) {
			err = (int)idx;
			goto out;
		}
		l.label = (uint32_t)idx;
		idx = profile__location(d->p, &l);
	} else {
		l.function = lines[0].function;
		idx = profile__location_with_lines(d->p, &l, lines, pl->n_line);
	}
	if (idx < 0) {
		err = (int)idx;
		goto out;
	}
	d->loc_pool[d->nr_pool++] = (uint32_t)idx;
	out->nr = (uint32_t)(d->nr_pool - out->first);
out:
	free(lines);
	return err;
}

static int dec_locations(struct pprof_dec *d)
{
	const Perftools__Profiles__Profile *m = d->msg;
	size_t pool = 0;
	int err;

	for (size_t i = 0; i < m->n_location; i++)
		pool += m->location[i]->n_line ? m->location[i]->n_line : 1;
	d->locations = calloc(m->n_location + 1, sizeof(*d->locations));
	d->loc_pool = calloc(pool + 1, sizeof(*d->loc_pool));
	if (!d->locations || !d->loc_pool)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_location; i++) {
		err = dec_location(d, m->location[i], &d->locations[i]);
		if (err)
			return err;
	}
	return sort_ids(d, d->locations, m->n_location, "location");
}

static int64_t find_type(const Perftools__Profiles__Profile *m, const char *type, const char *unit)
{
	for (size_t i = 0; i < m->n_sample_type; i++) {
		const Perftools__Profiles__ValueType *t = m->sample_type[i];

		if ((uint64_t)t->type < m->n_string_table &&
		    (uint64_t)t->unit < m->n_string_table &&
		    !strcmp(m->string_table[t->type], type) &&
		    (!unit || !strcmp(m->string_table[t->unit], unit)))
			return (int64_t)i;
	}
	return -1;
}

static int dec_samples(struct pprof_dec *d, size_t main_idx, size_t count_idx)
{
	const Perftools__Profiles__Profile *m = d->msg;
	int64_t k_pid = -1, k_tid = -1, k_comm = -1, k_thread = -1, k_trace = -1, k_span = -1;
	uint32_t *stack = NULL, default_comm = 0;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 1; i < m->n_string_table; i++) {
		const char *s = m->string_table[i];

		if (!strcmp(s, "pid"))
			k_pid = (int64_t)i;
		else if (!strcmp(s, "tid"))
			k_tid = (int64_t)i;
		else if (!strcmp(s, "comm"))
			k_comm = (int64_t)i;
		else if (!strcmp(s, "thread_name"))
			k_thread = (int64_t)i;
		else if (!strcmp(s, "trace_id"))
			k_trace = (int64_t)i;
		else if (!strcmp(s, "span_id"))
			k_span = (int64_t)i;
	}
	/* Go's profiles have no process labels; their first mapping is the executable. Only
	 * then: in a host-wide profile, a sample without comm is no process's in particular. */
	if (m->n_mapping && k_pid < 0) {
		const char *exe = profile__string_at(
			d->p, profile__mapping_at(d->p, d->mappings[0].first)->filename);
		const char *base = exe && strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		int64_t idx = base && *base && *base != '[' ? profile__string(d->p, base) : 0;

		if (idx < 0)
			return (int)idx;
		default_comm = (uint32_t)idx;
	}
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];
		struct profile_labels lb = {.comm = default_comm};
		size_t depth = 0;
		int64_t st;

		if (s->n_value != m->n_sample_type) {
			err = fail(d, -EINVAL, "sample %zu has %zu values for %zu sample types", i,
				   s->n_value, m->n_sample_type);
			goto out;
		}
		for (size_t j = 0; j < s->n_location_id; j++) {
			const struct id_map *l =
				find_id(d->locations, m->n_location, s->location_id[j]);

			if (!l) {
				err = fail(d, -EINVAL, "sample %zu: no location with id %" PRIu64,
					   i, s->location_id[j]);
				goto out;
			}
			if (VEC_RESERVE_MORE(stack, cap, depth, l->nr)) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(stack + depth, d->loc_pool + l->first, l->nr * sizeof(*stack));
			depth += l->nr;
		}
		for (size_t j = 0; j < s->n_label; j++) {
			const Perftools__Profiles__Label *pl = s->label[j];
			int64_t v;

			if (pl->key == k_pid)
				lb.pid = (uint32_t)pl->num;
			else if (pl->key == k_tid)
				lb.tid = (uint32_t)pl->num;
			else if (pl->key == k_comm || pl->key == k_thread || pl->key == k_trace ||
				 pl->key == k_span) {
				v = str(d, pl->str, "label of sample", i);
				if (v < 0) {
					err = (int)v;
					goto out;
				}
				if (pl->key == k_comm)
					lb.comm = (uint32_t)v;
				else if (pl->key == k_thread)
					lb.thread_name = (uint32_t)v;
				else if (pl->key == k_trace)
					lb.trace_id = (uint32_t)v;
				else
					lb.span_id = (uint32_t)v;
			} else if (pl->str && k_span >= 0 &&
				   lb.nr_ctx_attrs < PROFILE_MAX_CTX_ATTRS &&
				   !known_label(d, pl->key)) {
				/* In a profile with spans, the other string labels are the spans'
				 * attributes (hostprof writes them so). */
				int64_t k = str(d, pl->key, "label key of sample", i);

				v = str(d, pl->str, "label of sample", i);
				if (k < 0 || v < 0) {
					err = (int)(k < 0 ? k : v);
					goto out;
				}
				lb.ctx_attrs[lb.nr_ctx_attrs++] =
					(struct profile_attr){(uint32_t)k, (uint32_t)v};
			}
		}
		st = profile__stack(d->p, stack, depth);
		if (st < 0) {
			err = (int)st;
			goto out;
		}
		err = profile__add_sample(d->p, (uint32_t)st, &lb, s->value[main_idx],
					  s->value[count_idx]);
		if (err)
			goto out;
	}
out:
	free(stack);
	return err;
}

/* Inflate compressed input; a failure is reported with the decoder's file name. */
static int gunzip(struct pprof_dec *d, const uint8_t *in, size_t len, uint8_t **out,
		  size_t *out_len)
{
	char why[160] = "";
	int err = gzip__inflate(in, len, MAX_PPROF_BYTES, out, out_len, why, sizeof(why));

	return err && why[0] ? fail(d, err, "%s", why) : err;
}

int dec_pprof__parse(const uint8_t *buf, size_t len, const char *name, struct profile **out,
		     char *err, size_t err_len)
{
	struct pprof_dec d = {.name = name, .err = err, .err_len = err_len};
	Perftools__Profiles__Profile *m = NULL;
	struct profile_desc desc = {0};
	uint8_t *raw = NULL;
	size_t raw_len = len;
	int64_t main_idx, count_idx;
	int e = 0;

	*out = NULL;
	if (err && err_len)
		err[0] = '\0';
	if (!buf || !name)
		return -EINVAL;
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		e = gunzip(&d, buf, len, &raw, &raw_len);
		if (e)
			goto out;
	}
	m = perftools__profiles__profile__unpack(NULL, raw_len, raw ? raw : buf);
	if (!m) {
		e = fail(&d, -EINVAL, "not a pprof profile: protobuf decoding of %zu bytes failed",
			 raw_len);
		goto out;
	}
	d.msg = m;
	if (m->n_string_table == 0) {
		e = fail(&d, -EINVAL, "empty string table (not a pprof profile?)");
		goto out;
	}
	if (!m->n_sample_type) {
		e = fail(&d, -EINVAL, "no sample_type");
		goto out;
	}
	main_idx = (int64_t)m->n_sample_type - 1;
	if (m->default_sample_type > 0 && (uint64_t)m->default_sample_type < m->n_string_table) {
		int64_t i = find_type(m, m->string_table[m->default_sample_type], NULL);

		if (i >= 0)
			main_idx = i;
	}
	count_idx = find_type(m, "samples", "count");
	if (count_idx < 0)
		count_idx = main_idx;
#define TYPE_STR(i) ((uint64_t)(i) < m->n_string_table ? m->string_table[(i)] : "")
	desc.sample_type = TYPE_STR(m->sample_type[main_idx]->type);
	desc.sample_unit = TYPE_STR(m->sample_type[main_idx]->unit);
	if (m->period_type) {
		desc.period_type = TYPE_STR(m->period_type->type);
		desc.period_unit = TYPE_STR(m->period_type->unit);
	}
#undef TYPE_STR
	desc.period = m->period;
	desc.time_nanos = m->time_nanos > 0 ? (uint64_t)m->time_nanos : 0;
	desc.duration_nanos = m->duration_nanos > 0 ? (uint64_t)m->duration_nanos : 0;
	d.p = profile__new(&desc);
	if (!d.p) {
		e = -ENOMEM;
		goto out;
	}
	e = dec_strings(&d);
	if (!e)
		e = dec_mappings(&d);
	if (!e)
		e = dec_functions(&d);
	if (!e)
		e = dec_locations(&d);
	if (!e)
		e = dec_samples(&d, (size_t)main_idx, (size_t)count_idx);
	if (e == -ENOMEM)
		fail(&d, e, "out of memory");
	else if (e && err && err_len && !err[0])
		/* The model refused something that the checks above let through. */
		fail(&d, e, "inconsistent profile (%s)", strerror(-e));
	if (!e) {
		*out = d.p;
		d.p = NULL;
	}
out:
	profile__delete(d.p);
	free(d.loc_pool);
	free(d.locations);
	free(d.functions);
	free(d.mappings);
	free(d.strs);
	if (m)
		perftools__profiles__profile__free_unpacked(m, NULL);
	free(raw);
	return e;
}

int dec_pprof__read(const char *path, struct profile **out, char *err, size_t err_len)
{
	char *buf = NULL;
	size_t len = 0;
	int e;

	*out = NULL;
	e = decode__read_file(path, (size_t)1 << 30, &buf, &len, err, err_len);
	if (!e)
		e = dec_pprof__parse((const uint8_t *)buf, len, path, out, err, err_len);
	free(buf);
	return e;
}

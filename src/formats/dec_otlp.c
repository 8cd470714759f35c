// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTLP profiles decoder: one ExportProfilesServiceRequest (.otlp.pb, gzipped or not) into one
 * model profile per profile type, the inverse of enc_otlp.c.
 *
 * Every index into the ProfilesDictionary is checked before use. The sample count is not on the
 * wire: for a cpu profile in nanoseconds with a period it is value / period, for a profile whose
 * unit is "count" it is the value, else 1 per sample. A "contentions"/"count" Profile beside a
 * "contention" one with the same samples gives the contention samples' counts; it is not a
 * profile of its own. The process name (comm label) is process.executable.name, else
 * service.name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "formats/decode.h"
#include "base/gzip.h"
#include "base/vec.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

#define MAX_OTLP_BYTES ((size_t)1 << 30)
#define MAX_OTLP_PROFILES 16

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_kvu;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_key_value;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any_value;

struct otlp_out {
	struct profile *p;
	/* dictionary index -> model index, 0 = not yet */
	uint32_t *loc_map;
	uint32_t *str_map;
};

struct otlp_dec {
	const pb_dictionary *dict;
	const char *name;
	char *err;
	size_t err_len;
	struct otlp_out outs[MAX_OTLP_PROFILES];
	size_t nr_outs;
	bool skipped_contentions;
};

#define fail(d, code, ...) decode__fail((d)->err, (d)->err_len, (d)->name, code, __VA_ARGS__)

/* A dictionary string, or NULL when idx is out of range. */
static const char *dstr(const struct otlp_dec *d, int32_t idx)
{
	if (idx < 0 || (size_t)idx >= d->dict->n_string_table)
		return idx == 0 ? "" : NULL;
	return d->dict->string_table[idx] ? d->dict->string_table[idx] : "";
}

static const pb_kvu *dattr(const struct otlp_dec *d, int32_t idx)
{
	if (idx <= 0 || (size_t)idx >= d->dict->n_attribute_table)
		return NULL;
	return d->dict->attribute_table[idx];
}

static int model_str(struct otlp_dec *d, struct otlp_out *o, int32_t idx, uint32_t *res,
		     const char *what)
{
	const char *s = dstr(d, idx);
	int64_t r;

	if (!s)
		return fail(d, -EINVAL, "%s: string index %d outside the string table (%zu)", what,
			    idx, d->dict->n_string_table);
	if (idx > 0 && o->str_map[idx]) {
		*res = o->str_map[idx];
		return 0;
	}
	r = profile__string(o->p, s);
	if (r < 0)
		return (int)r;
	if (idx > 0)
		o->str_map[idx] = (uint32_t)r;
	*res = (uint32_t)r;
	return 0;
}

/* key and string value of an attribute; NULL key when idx is bad (checked by caller). */
static const char *attr_key(const struct otlp_dec *d, const pb_kvu *kv)
{
	return kv ? dstr(d, kv->key_strindex) : NULL;
}

static const char *any_str(const pb_any_value *v)
{
	if (v && v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
		return v->string_value;
	return NULL;
}

static bool any_int(const pb_any_value *v, int64_t *out)
{
	if (v && v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE) {
		*out = v->int_value;
		return true;
	}
	return false;
}

/* Attribute idx of location or mapping nr (`what`), or NULL and *err set when idx is bad. */
static const pb_kvu *entry_attr(struct otlp_dec *d, const char *what, int32_t nr, int32_t idx,
				int *err)
{
	const pb_kvu *kv = dattr(d, idx);

	if (!attr_key(d, kv)) {
		*err = fail(d, -EINVAL, "%s %d: bad attribute index %d", what, nr, idx);
		return NULL;
	}
	return kv;
}

/* The frame kind that location li's profile.frame.type attribute names; native without one. */
static int location_kind(struct otlp_dec *d, const pb_location *pl, int32_t li,
			 enum frame_kind *kind)
{
	int err = 0;

	for (size_t i = 0; i < pl->n_attribute_indices; i++) {
		const pb_kvu *kv = entry_attr(d, "location", li, pl->attribute_indices[i], &err);
		const char *v;

		if (!kv)
			return err;
		v = any_str(kv->value);
		if (strcmp(attr_key(d, kv), "profile.frame.type") || !v)
			continue;
		if (!strcmp(v, "kernel"))
			*kind = FRAME_KERNEL;
		else if (!strcmp(v, "v8js"))
			*kind = FRAME_JIT_V8;
		else if (!strcmp(v, "jvm"))
			*kind = FRAME_JIT_JVM;
		else if (!strcmp(v, "cpython"))
			/* CPython's perf trampolines lie in a mapping; its interpreted frames in
			 * none */
			*kind = pl->mapping_index > 0 ? FRAME_JIT_CPYTHON : FRAME_CPYTHON;
	}
	return 0;
}

/* The mapping of location li into the model. */
static int decode_mapping(struct otlp_dec *d, struct otlp_out *o, int32_t li, const pb_location *pl,
			  uint32_t *res)
{
	const pb_mapping *pm;
	struct profile_mapping m = {0};
	int32_t mi = pl->mapping_index;
	int64_t r;
	int err;

	if (mi < 0 || (size_t)mi >= d->dict->n_mapping_table || !d->dict->mapping_table[mi])
		return fail(d, -EINVAL,
			    "location %d: mapping index %d outside the mapping table (%zu)", li, mi,
			    d->dict->n_mapping_table);
	pm = d->dict->mapping_table[mi];
	m.start = pm->memory_start;
	m.limit = pm->memory_limit;
	m.offset = pm->file_offset;
	err = model_str(d, o, pm->filename_strindex, &m.filename, "mapping filename");
	for (size_t i = 0; !err && i < pm->n_attribute_indices; i++) {
		const pb_kvu *kv = entry_attr(d, "mapping", mi, pm->attribute_indices[i], &err);
		const char *k, *v;

		if (!kv)
			return err;
		k = attr_key(d, kv);
		v = any_str(kv->value);
		if (!v)
			continue;
		if (!strcmp(k, "process.executable.build_id.gnu") ||
		    !strcmp(k, "process.executable.build_id.htlhash")) {
			r = profile__string(o->p, v);
			if (r < 0)
				return (int)r;
			if (k[strlen(k) - 1] == 'u')
				m.build_id = (uint32_t)r;
			else
				m.htlhash = (uint32_t)r;
		}
	}
	if (err)
		return err;
	m.has_functions = pl->n_lines > 0;
	r = profile__mapping(o->p, &m);
	if (r < 0)
		return (int)r;
	*res = (uint32_t)r;
	return 0;
}

/* Function fi, named by a line of location li, into the model. */
static int decode_function(struct otlp_dec *d, struct otlp_out *o, int32_t li, int32_t fi,
			   uint32_t *res)
{
	const pb_function *pf;
	struct profile_function f = {0};
	int64_t r;
	int err;

	if (fi <= 0 || (size_t)fi >= d->dict->n_function_table || !d->dict->function_table[fi])
		return fail(d, -EINVAL,
			    "location %d: function index %d outside the function table (%zu)", li,
			    fi, d->dict->n_function_table);
	pf = d->dict->function_table[fi];
	err = model_str(d, o, pf->name_strindex, &f.name, "function name");
	if (!err)
		err = model_str(d, o, pf->system_name_strindex, &f.system_name,
				"function system name");
	if (!err)
		err = model_str(d, o, pf->filename_strindex, &f.filename, "function filename");
	if (err)
		return err;
	r = profile__function(o->p, &f);
	if (r == 0) {
		/* A function with no name and no file is the model's "no function", which
		 * a line may not name: it is a function all the same, "[unknown]". */
		r = profile__string(o->p, "[unknown]");
		if (r > 0) {
			f.name = (uint32_t)r;
			r = profile__function(o->p, &f);
		}
	}
	if (r < 0)
		return (int)r;
	*res = (uint32_t)r;
	return 0;
}

static int decode_location(struct otlp_dec *d, struct otlp_out *o, int32_t li, uint32_t *res)
{
	const pb_location *pl;
	struct profile_location l = {0};
	struct profile_line *lines = NULL;
	size_t nl = 0;
	int64_t r;
	int err;

	if (li <= 0 || (size_t)li >= d->dict->n_location_table || !d->dict->location_table[li])
		return fail(d, -EINVAL, "location index %d outside the location table (%zu)", li,
			    d->dict->n_location_table);
	if (o->loc_map[li]) {
		*res = o->loc_map[li];
		return 0;
	}
	pl = d->dict->location_table[li];
	l.address = pl->address;
	err = location_kind(d, pl, li, &l.kind);
	if (!err && pl->mapping_index)
		err = decode_mapping(d, o, li, pl, &l.mapping);
	if (err)
		return err;
	if (pl->n_lines) {
		lines = calloc(pl->n_lines, sizeof(*lines));
		if (!lines)
			return -ENOMEM;
	}
	for (size_t i = 0; i < pl->n_lines; i++) {
		err = decode_function(d, o, li, pl->lines[i]->function_index, &lines[nl].function);
		if (err)
			goto out;
		lines[nl++].line = pl->lines[i]->line;
	}
	if (nl)
		l.function = lines[0].function;
	/* One line without a line number is how the encoder writes a bare function. */
	if (nl == 1 && lines[0].line == 0)
		nl = 0;
	r = profile__location_with_lines(o->p, &l, lines, nl);
	if (r == 0) {
		/*
		 * Nothing in it (address 0, no mapping, no lines, no kind) is the model's "no
		 * location", which no stack may hold. It is still a frame of the sample: it gets a
		 * name, as the pprof decoder names a location without lines.
		 */
		r = profile__string(o->p, "[unknown]");
		if (r > 0) {
			l.label = (uint32_t)r;
			r = profile__location_with_lines(o->p, &l, lines, nl);
		}
	}
	if (r < 0) {
		err = (int)r;
		goto out;
	}
	o->loc_map[li] = (uint32_t)r;
	*res = (uint32_t)r;
out:
	free(lines);
	return err;
}

struct res_info {
	bool has_pid;
	int64_t pid;
	const char *service, *exe_name, *exe_path, *cmdline, *container;
	/* The other string attributes (k8s.*, ...), minus the host facts that the encoder adds
	 * to every resource by itself. */
	const char *extra_keys[PROFILE_MAX_PROCESS_ATTRS], *extra_values[PROFILE_MAX_PROCESS_ATTRS];
	size_t nr_extra;
};

static bool host_fact(const char *k)
{
	return !strcmp(k, "host.name") || !strcmp(k, "host.arch") || !strcmp(k, "os.type");
}

static void resource_info(const Opentelemetry__Proto__Resource__V1__Resource *res,
			  struct res_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	for (size_t i = 0; res && i < res->n_attributes; i++) {
		const pb_key_value *kv = res->attributes[i];
		const char *k = kv ? kv->key : NULL;

		if (!k)
			continue;
		if (!strcmp(k, "process.pid"))
			ri->has_pid = any_int(kv->value, &ri->pid);
		else if (!strcmp(k, "service.name"))
			ri->service = any_str(kv->value);
		else if (!strcmp(k, "process.executable.name"))
			ri->exe_name = any_str(kv->value);
		else if (!strcmp(k, "process.executable.path"))
			ri->exe_path = any_str(kv->value);
		else if (!strcmp(k, "process.command_line"))
			ri->cmdline = any_str(kv->value);
		else if (!strcmp(k, "container.id"))
			ri->container = any_str(kv->value);
		else if (k[0] && !host_fact(k) && any_str(kv->value) &&
			 ri->nr_extra < PROFILE_MAX_PROCESS_ATTRS) {
			ri->extra_keys[ri->nr_extra] = k;
			ri->extra_values[ri->nr_extra++] = any_str(kv->value);
		}
	}
}

static int intern(struct profile *p, const char *s, uint32_t *out)
{
	int64_t r = profile__string(p, s ? s : "");

	if (r < 0)
		return (int)r;
	*out = (uint32_t)r;
	return 0;
}

static bool is_type(const struct otlp_dec *d, const pb_profile *pp, const char *type,
		    const char *unit)
{
	const char *t, *u;

	if (!pp || !pp->sample_type)
		return false;
	t = dstr(d, pp->sample_type->type_strindex);
	u = dstr(d, pp->sample_type->unit_strindex);
	return t && u && !strcmp(t, type) && !strcmp(u, unit);
}

/* The contentions/count sibling of a contention Profile, when its samples line up. */
static const pb_profile *contentions_of(const struct otlp_dec *d, const pb_scope_profiles *sp,
					const pb_profile *pp)
{
	for (size_t i = 0; i < sp->n_profiles; i++) {
		const pb_profile *c = sp->profiles[i];

		if (!is_type(d, c, "contentions", "count") || c->n_samples != pp->n_samples)
			continue;
		for (size_t k = 0; k < c->n_samples; k++) {
			const pb_sample *a = pp->samples[k], *b = c->samples[k];

			if (!a || !b || a->stack_index != b->stack_index || b->n_values < 1 ||
			    a->n_attribute_indices != b->n_attribute_indices ||
			    (a->n_attribute_indices &&
			     memcmp(a->attribute_indices, b->attribute_indices,
				    a->n_attribute_indices * sizeof(int32_t))))
				return NULL;
		}
		return c;
	}
	return NULL;
}

static int out_for(struct otlp_dec *d, const pb_profile *pp, struct otlp_out **res)
{
	struct profile_desc desc = {0};
	const char *t = NULL, *u = NULL;

	if (pp->sample_type) {
		t = dstr(d, pp->sample_type->type_strindex);
		u = dstr(d, pp->sample_type->unit_strindex);
		if (!t || !u)
			return fail(d, -EINVAL, "sample_type names a string outside the table");
	}
	t = t ? t : "";
	u = u ? u : "";
	for (size_t i = 0; i < d->nr_outs; i++) {
		const struct profile_desc *pd = profile__desc(d->outs[i].p);

		if (!strcmp(pd->sample_type, t) && !strcmp(pd->sample_unit, u)) {
			*res = &d->outs[i];
			return 0;
		}
	}
	if (d->nr_outs == MAX_OTLP_PROFILES)
		return fail(d, -EINVAL, "more than %d profile types", MAX_OTLP_PROFILES);
	desc.sample_type = t;
	desc.sample_unit = u;
	if (pp->period_type) {
		desc.period_type = dstr(d, pp->period_type->type_strindex);
		desc.period_unit = dstr(d, pp->period_type->unit_strindex);
		if (!desc.period_type || !desc.period_unit)
			return fail(d, -EINVAL, "period_type names a string outside the table");
	}
	desc.period = pp->period;
	desc.time_nanos = pp->time_unix_nano;
	desc.duration_nanos = pp->duration_nano;
	*res = &d->outs[d->nr_outs];
	(*res)->p = profile__new(&desc);
	(*res)->loc_map = calloc(d->dict->n_location_table + 1, sizeof(uint32_t));
	(*res)->str_map = calloc(d->dict->n_string_table + 1, sizeof(uint32_t));
	d->nr_outs++;
	if (!(*res)->p || !(*res)->loc_map || !(*res)->str_map)
		return -ENOMEM;
	return 0;
}

/* The labels every sample of resource rpi carries, and its process entry when it has a pid. */
static int decode_process(struct otlp_dec *d, struct otlp_out *o, const struct res_info *ri,
			  size_t rpi, struct profile_labels *base)
{
	struct profile_process proc = {0};
	int err;

	if (ri->has_pid) {
		if (ri->pid < 0 || ri->pid > UINT32_MAX)
			return fail(d, -EINVAL,
				    "resource %zu: process.pid %" PRId64 " out of range", rpi,
				    ri->pid);
		base->pid = (uint32_t)ri->pid;
	}
	err = intern(o->p, ri->exe_name ? ri->exe_name : ri->service, &base->comm);
	if (err || !base->pid)
		return err;
	proc.pid = base->pid;
	err = intern(o->p, ri->service, &proc.service_name);
	if (!err)
		err = intern(o->p, ri->exe_name, &proc.exe_name);
	if (!err)
		err = intern(o->p, ri->exe_path, &proc.exe_path);
	if (!err)
		err = intern(o->p, ri->cmdline, &proc.command_line);
	if (!err)
		err = intern(o->p, ri->container, &proc.container_id);
	for (size_t i = 0; !err && i < ri->nr_extra; i++) {
		err = intern(o->p, ri->extra_keys[i], &proc.attrs[i].key);
		if (!err)
			err = intern(o->p, ri->extra_values[i], &proc.attrs[i].value);
		proc.nr_attrs = (uint32_t)i + 1;
	}
	if (!err)
		err = profile__set_process(o->p, &proc);
	return err;
}

/* The stack of sample si into the model; *stack (*cap entries) is reused from sample to sample. */
static int decode_stack(struct otlp_dec *d, struct otlp_out *o, const pb_sample *s, size_t rpi,
			size_t si, uint32_t **stack, size_t *cap, uint32_t *res)
{
	const pb_stack *st;
	int64_t r;
	int err;

	if (s->stack_index < 0 || (size_t)s->stack_index >= d->dict->n_stack_table ||
	    !d->dict->stack_table[s->stack_index])
		return fail(
			d, -EINVAL,
			"resource %zu: sample %zu: stack index %d outside the stack table (%zu)",
			rpi, si, s->stack_index, d->dict->n_stack_table);
	st = d->dict->stack_table[s->stack_index];
	if (VEC_RESERVE(*stack, *cap, st->n_location_indices))
		return -ENOMEM;
	for (size_t k = 0; k < st->n_location_indices; k++) {
		err = decode_location(d, o, st->location_indices[k], &(*stack)[k]);
		if (err)
			return err;
	}
	r = profile__stack(o->p, *stack, st->n_location_indices);
	if (r < 0)
		return (int)r;
	*res = (uint32_t)r;
	return 0;
}

/* The trace and span of a sample's link, in hex as the model keeps them; none when zero. */
static int decode_link(struct otlp_out *o,
		       const Opentelemetry__Proto__Profiles__V1development__Link *l,
		       struct profile_labels *lb)
{
	char trace[33], span[17];
	bool any = false;
	int err;

	if (!l || l->trace_id.len != 16 || l->span_id.len != 8)
		return 0;
	for (size_t i = 0; i < 8; i++)
		any |= l->span_id.data[i] != 0;
	if (!any)
		return 0;
	hex__encode(trace, l->trace_id.data, 16);
	hex__encode(span, l->span_id.data, 8);
	err = intern(o->p, trace, &lb->trace_id);
	return err ? err : intern(o->p, span, &lb->span_id);
}

/* Sample si's attributes into its labels lb. */
static int decode_labels(struct otlp_dec *d, struct otlp_out *o, const pb_sample *s, size_t rpi,
			 size_t si, struct profile_labels *lb)
{
	int err = 0;

	for (size_t k = 0; !err && k < s->n_attribute_indices; k++) {
		const pb_kvu *kv = dattr(d, s->attribute_indices[k]);
		const char *key = attr_key(d, kv), *v;
		int64_t iv = 0;

		if (!key)
			return fail(d, -EINVAL,
				    "resource %zu: sample %zu: attribute index %d outside the "
				    "attribute table (%zu)",
				    rpi, si, s->attribute_indices[k], d->dict->n_attribute_table);
		v = any_str(kv->value);
		if (!strcmp(key, "thread.name") && v)
			err = intern(o->p, v, &lb->thread_name);
		else if (!strcmp(key, "thread.state") && v)
			err = intern(o->p, v, &lb->thread_state);
		else if (!strcmp(key, "hostprof.lock.kind") && v)
			err = intern(o->p, v, &lb->wait_kind);
		else if (!strcmp(key, "thread.id") && any_int(kv->value, &iv))
			lb->tid = (uint32_t)iv;
		else if (!strcmp(key, "hostprof.lock.address") && any_int(kv->value, &iv))
			lb->wait_addr = (uint64_t)iv;
		else if (v && lb->nr_ctx_attrs < PROFILE_MAX_CTX_ATTRS) {
			/* Any other string attribute: a span's, as hostprof writes them. */
			struct profile_attr *a = &lb->ctx_attrs[lb->nr_ctx_attrs];

			err = intern(o->p, key, &a->key);
			if (!err)
				err = intern(o->p, v, &a->value);
			if (!err)
				lb->nr_ctx_attrs++;
		}
	}
	if (!err && s->link_index > 0 && (size_t)s->link_index < d->dict->n_link_table)
		err = decode_link(o, d->dict->link_table[s->link_index], lb);
	return err;
}

static int decode_profile(struct otlp_dec *d, const struct res_info *ri,
			  const pb_scope_profiles *sp, const pb_profile *pp, size_t rpi)
{
	const pb_profile *cnt = NULL;
	struct profile_labels base = {0};
	struct otlp_out *o = NULL;
	uint32_t *stack = NULL;
	size_t cap = 0;
	bool cpu_ns, counts;
	int err;

	if (is_type(d, pp, "contentions", "count")) {
		d->skipped_contentions = true;
		return 0;
	}
	err = out_for(d, pp, &o);
	if (err)
		return err;
	if (is_type(d, pp, "contention", "nanoseconds"))
		cnt = contentions_of(d, sp, pp);
	cpu_ns = is_type(d, pp, "cpu", "nanoseconds") && pp->period > 0;
	counts = pp->sample_type && dstr(d, pp->sample_type->unit_strindex) &&
		 !strcmp(dstr(d, pp->sample_type->unit_strindex), "count");
	err = decode_process(d, o, ri, rpi, &base);

	for (size_t si = 0; !err && si < pp->n_samples; si++) {
		const pb_sample *s = pp->samples[si];
		struct profile_labels lb = base;
		int64_t count = 1;
		uint32_t stack_idx = 0;

		if (!s || s->n_values < 1) {
			err = fail(d, -EINVAL, "resource %zu: sample %zu has no value", rpi, si);
			break;
		}
		err = decode_stack(d, o, s, rpi, si, &stack, &cap, &stack_idx);
		if (!err)
			err = decode_labels(d, o, s, rpi, si, &lb);
		if (err)
			break;
		if (cnt)
			count = cnt->samples[si]->values[0];
		else if (cpu_ns)
			count = s->values[0] / pp->period;
		else if (counts)
			count = s->values[0];
		err = profile__add_sample(o->p, stack_idx, &lb, s->values[0], count);
	}
	free(stack);
	return err;
}

/* Inflate compressed input; a failure is reported with the decoder's file name. */
static int gunzip(struct otlp_dec *d, const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	char why[160] = "";
	int err = gzip__inflate(in, len, MAX_OTLP_BYTES, out, out_len, why, sizeof(why));

	return err && why[0] ? fail(d, err, "%s", why) : err;
}

int dec_otlp__parse(const uint8_t *buf, size_t len, const char *name, struct profile ***out,
		    size_t *nr, char *err_buf, size_t err_len)
{
	static const pb_dictionary empty_dict =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	struct otlp_dec d = {.name = name ? name : "input", .err = err_buf, .err_len = err_len};
	pb_request *req = NULL;
	uint8_t *raw = NULL;
	int err = 0;

	if (err_buf && err_len)
		err_buf[0] = '\0';
	if (!out || !nr || (!buf && len))
		return -EINVAL;
	*out = NULL;
	*nr = 0;
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		err = gunzip(&d, buf, len, &raw, &len);
		if (err)
			return err;
		buf = raw;
	}
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	if (!req) {
		err = fail(&d, -EINVAL,
			   "not an OTLP ExportProfilesServiceRequest: protobuf parse of %zu bytes "
			   "failed",
			   len);
		goto out;
	}
	d.dict = req->dictionary ? req->dictionary : &empty_dict;
	for (size_t i = 0; !err && i < req->n_resource_profiles; i++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
			req->resource_profiles[i];
		struct res_info ri;

		resource_info(rp->resource, &ri);
		for (size_t j = 0; !err && j < rp->n_scope_profiles; j++) {
			const pb_scope_profiles *sp = rp->scope_profiles[j];

			for (size_t k = 0; !err && k < sp->n_profiles; k++)
				err = decode_profile(&d, &ri, sp, sp->profiles[k], i);
		}
	}
	if (!err && !d.nr_outs)
		err = fail(&d, -EINVAL, "the request holds no profile");
	if (!err) {
		*out = calloc(d.nr_outs, sizeof(**out));
		if (!*out)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < d.nr_outs; i++) {
		if (!err)
			(*out)[i] = d.outs[i].p;
		else
			profile__delete(d.outs[i].p);
		free(d.outs[i].loc_map);
		free(d.outs[i].str_map);
	}
	if (!err)
		*nr = d.nr_outs;
	else if (err == -ENOMEM && err_buf && err_len && !err_buf[0])
		fail(&d, err, "out of memory");
out:
	if (req)
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
			req, NULL);
	free(raw);
	return err;
}

int dec_otlp__read(const char *path, struct profile ***out, size_t *nr, char *err, size_t err_len)
{
	char *buf = NULL;
	size_t len = 0;
	int e;

	e = decode__read_file(path, MAX_OTLP_BYTES, &buf, &len, err, err_len);
	if (e)
		return e;
	e = dec_otlp__parse((const uint8_t *)buf, len, path, out, nr, err, err_len);
	free(buf);
	return e;
}

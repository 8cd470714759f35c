// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTLP encoder's request as protobuf-c structs (see enc_otlp.c): the dictionary from its
 * compact form, then one ResourceProfiles per process with samples, one ScopeProfiles in it and
 * one Profile per input. Every struct lives in the build's arena, freed with it in one go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/otlp_build.h"

#define SCOPE_NAME "hostprof"
/* service.name, process.pid, .executable.name, .executable.path, .command_line, host.name,
 * host.arch, os.type, container.id */
#define MAX_RESOURCE_ATTRS (9 + PROFILE_MAX_PROCESS_ATTRS)

/* The zero entry of link_table: the spec asks for all-zero ids of the real lengths. */
static const uint8_t zero_trace_id[16];
static const uint8_t zero_span_id[8];

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
	pb_mapping *m = arena__array(&b->arena, b->maps.nr, sizeof(*m));
	pb_mapping **ptrs = arena__array(&b->arena, b->maps.nr, sizeof(*ptrs));

	if (!m || !ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->maps.nr; i++) {
		const struct dict_mapping *d = &b->maps.arr[i];
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
	b->dict.n_mapping_table = b->maps.nr;
	b->dict.mapping_table = ptrs;
	return 0;
}

static int build_dict_locations(struct otlp_build *b)
{
	pb_location *l = arena__array(&b->arena, b->locs.nr, sizeof(*l));
	pb_location **ptrs = arena__array(&b->arena, b->locs.nr, sizeof(*ptrs));
	/* One Line for a location without lines, else one per level. */
	pb_line *lines = arena__array(&b->arena, b->locs.nr + b->nr_lines, sizeof(*lines));
	pb_line **line_ptrs = arena__array(&b->arena, b->locs.nr + b->nr_lines, sizeof(*line_ptrs));
	size_t next = 0;
	int32_t *attrs = arena__array(&b->arena, b->locs.nr, sizeof(*attrs));

	if (!l || !ptrs || !lines || !line_ptrs || !attrs)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__location__init(&l[0]);
	ptrs[0] = &l[0];
	for (size_t i = 1; i < b->locs.nr; i++) {
		const struct dict_location *d = &b->locs.arr[i];

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
	b->dict.n_location_table = b->locs.nr;
	b->dict.location_table = ptrs;
	return 0;
}

static int build_dict_functions(struct otlp_build *b)
{
	pb_function *f = arena__array(&b->arena, b->funcs.nr, sizeof(*f));
	pb_function **ptrs = arena__array(&b->arena, b->funcs.nr, sizeof(*ptrs));

	if (!f || !ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->funcs.nr; i++) {
		opentelemetry__proto__profiles__v1development__function__init(&f[i]);
		f[i].name_strindex = (int32_t)b->funcs.arr[i].name;
		f[i].system_name_strindex = (int32_t)b->funcs.arr[i].system_name;
		f[i].filename_strindex = (int32_t)b->funcs.arr[i].filename;
		ptrs[i] = &f[i];
	}
	b->dict.n_function_table = b->funcs.nr;
	b->dict.function_table = ptrs;
	return 0;
}

static int build_dict_attrs(struct otlp_build *b)
{
	pb_kvu *kv = arena__array(&b->arena, b->attrs.nr, sizeof(*kv));
	pb_kvu **ptrs = arena__array(&b->arena, b->attrs.nr, sizeof(*ptrs));
	pb_any_value *v = arena__array(&b->arena, b->attrs.nr, sizeof(*v));

	if (!kv || !ptrs || !v)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__key_value_and_unit__init(&kv[0]);
	ptrs[0] = &kv[0];
	for (size_t i = 1; i < b->attrs.nr; i++) {
		const struct dict_attr *a = &b->attrs.arr[i];

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
	b->dict.n_attribute_table = b->attrs.nr;
	b->dict.attribute_table = ptrs;
	return 0;
}

int otlp_request__dictionary(struct otlp_build *b)
{
	pb_link *link = arena__array(&b->arena, b->links.nr, sizeof(*link));
	pb_link **link_ptrs = arena__array(&b->arena, b->links.nr, sizeof(*link_ptrs));
	pb_stack *st = arena__array(&b->arena, b->stacks.nr, sizeof(*st));
	pb_stack **st_ptrs = arena__array(&b->arena, b->stacks.nr, sizeof(*st_ptrs));
	char **strs = arena__array(&b->arena, b->strs.nr, sizeof(*strs));
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

	/* Entry 0 is the zero link of samples that served no span (the table's zero entry is
	 * all zero as well). */
	for (size_t i = 0; i < b->links.nr; i++) {
		opentelemetry__proto__profiles__v1development__link__init(&link[i]);
		link[i].trace_id.len = sizeof(zero_trace_id);
		link[i].trace_id.data = i ? b->links.arr[i].trace_id : (uint8_t *)zero_trace_id;
		link[i].span_id.len = sizeof(zero_span_id);
		link[i].span_id.data = i ? b->links.arr[i].span_id : (uint8_t *)zero_span_id;
		link_ptrs[i] = &link[i];
	}
	b->dict.n_link_table = b->links.nr;
	b->dict.link_table = link_ptrs;

	for (size_t i = 0; i < b->strs.nr; i++)
		strs[i] = (char *)b->strs.arr[i].s;
	b->dict.n_string_table = b->strs.nr;
	b->dict.string_table = strs;

	for (size_t i = 0; i < b->stacks.nr; i++) {
		opentelemetry__proto__profiles__v1development__stack__init(&st[i]);
		st[i].n_location_indices = b->stacks.arr[i].n;
		st[i].location_indices =
			b->stacks.arr[i].n ? b->stack_locs + b->stacks.arr[i].off : NULL;
		st_ptrs[i] = &st[i];
	}
	b->dict.n_stack_table = b->stacks.nr;
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
	value = otlp_dict__valid_utf8(a, value, &len);
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
	size_t nr = src->samples.nr, *cursor;
	pb_sample *s = arena__array(a, nr, sizeof(*s));
	pb_sample **ptrs = arena__array(a, nr, sizeof(*ptrs));
	int64_t *values = arena__array(a, nr, sizeof(*values));
	int32_t *attrs = arena__array(a, nr, MAX_SAMPLE_ATTRS * sizeof(*attrs));

	src->res_off = calloc(b->res.nr + 1, sizeof(*src->res_off));
	cursor = arena__array(a, b->res.nr, sizeof(*cursor));
	if (!s || !ptrs || !values || !attrs || !src->res_off || !cursor)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		src->res_off[src->samples.arr[i].res + 1]++;
	for (size_t r = 0; r < b->res.nr; r++) {
		src->res_off[r + 1] += src->res_off[r];
		cursor[r] = src->res_off[r];
	}
	for (size_t i = 0; i < nr; i++) {
		const struct out_sample *o = &src->samples.arr[i];
		size_t pos = cursor[o->res]++;
		pb_sample *ps = &s[pos];

		opentelemetry__proto__profiles__v1development__sample__init(ps);
		ps->stack_index = (int32_t)o->stack;
		values[pos] = src->counts ? o->count : o->value;
		ps->n_values = 1;
		ps->values = &values[pos];
		for (uint32_t j = 0; j < o->nr_attrs; j++)
			attrs[pos * MAX_SAMPLE_ATTRS + j] = (int32_t)o->attrs[j];
		ps->link_index = (int32_t)o->link;
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
int otlp_request__build(struct otlp_build *b)
{
	struct arena *a = &b->arena;
	size_t nr_out = 0, out = 0, len;
	pb_resource_profiles *rp, **rp_ptrs;
	pb_scope_profiles *sp, **sp_ptrs;
	const char *version;

	for (size_t r = 0; r < b->res.nr; r++)
		nr_out += b->res.arr[r].nr_samples > 0;
	rp = arena__array(a, nr_out, sizeof(*rp));
	rp_ptrs = arena__array(a, nr_out, sizeof(*rp_ptrs));
	sp = arena__array(a, nr_out, sizeof(*sp));
	sp_ptrs = arena__array(a, nr_out, sizeof(*sp_ptrs));
	if (!rp || !rp_ptrs || !sp || !sp_ptrs)
		return -ENOMEM;
	for (size_t k = 0; k < b->nr_srcs; k++) {
		if (b->srcs[k].samples.nr) {
			int err = build_samples(b, &b->srcs[k]);

			if (err)
				return err;
		}
	}

	opentelemetry__proto__common__v1__instrumentation_scope__init(&b->scope);
	b->scope.name = SCOPE_NAME;
	len = b->o->scope_version ? strlen(b->o->scope_version) : 0;
	version = len ? otlp_dict__valid_utf8(a, b->o->scope_version, &len) : NULL;
	if (len && !version)
		return -ENOMEM;
	b->scope.version = (char *)version;

	for (size_t r = 0; r < b->res.nr; r++) {
		size_t nr_profiles = 0, m = 0;
		pb_profile *pr, **pr_ptrs;

		if (!b->res.arr[r].nr_samples)
			continue;
		for (size_t k = 0; k < b->nr_srcs; k++) {
			const struct otlp_src *src = &b->srcs[k];

			nr_profiles += src->samples.nr && src->res_off[r + 1] > src->res_off[r];
		}
		pr = arena__array(a, nr_profiles, sizeof(*pr));
		pr_ptrs = arena__array(a, nr_profiles, sizeof(*pr_ptrs));
		if (!pr || !pr_ptrs)
			return -ENOMEM;
		for (size_t k = 0; k < b->nr_srcs; k++) {
			struct otlp_src *src = &b->srcs[k];

			if (!src->samples.nr || src->res_off[r + 1] == src->res_off[r])
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
		rp[out].resource = build_resource(b, &b->res.arr[r]);
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

// SPDX-License-Identifier: BSD-2-Clause
/*
 * Pyroscope encoders: the push API's PushRequest and the legacy /ingest API's requests.
 *
 * Pyroscope keys profiles by service, while hostprof captures the whole host, so both split the
 * profile by the process table's service_name: each service gets a pprof of its own samples only
 * (enc_pprof__encode with a filter), so that no service's flame graph shows another's frames.
 * Samples of processes the table does not know go to "unknown_service", OpenTelemetry's name for
 * a service that did not say.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/utf8.h"
#include "formats/encode.h"
#include "formats/payload.h"
#include "push/v1/push.pb-c.h"

#define UNKNOWN_SERVICE "unknown_service"
#define SPY_NAME "hostprof"
#define UUID_LEN 36

/* The labels every series carries; extra labels may not reuse these names. */
static const char *const own_labels[] = {"__name__", "service_name", "pyroscope_spy"};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

struct service {
	const char *name; /* the model's string, or UNKNOWN_SERVICE */
	size_t nr_processes;
	size_t nr_samples;
};

/*
 * The services of a profile, in the order the process table first saw them. Slots are found by
 * the service_name string index, which the model deduplicates, so equal names share a slot.
 */
struct services {
	const struct profile *p;
	struct service *v;
	size_t n;
	uint32_t *slot_by_str; /* string index -> slot + 1; 0 = no slot */
	size_t unknown;	       /* the slot of samples without a service */
};

/* What the pprof filter needs to keep one service's samples. */
struct service_filter {
	const struct services *set;
	size_t slot;
};

static void services__free(struct services *set)
{
	free(set->slot_by_str);
	free(set->v);
}

static size_t services__add(struct services *set, const char *name)
{
	set->v[set->n].name = name;
	return set->n++;
}

static size_t services__slot_of_pid(const struct services *set, uint32_t pid)
{
	const struct profile_process *proc = profile__find_process(set->p, pid);

	if (proc && proc->service_name && set->slot_by_str[proc->service_name])
		return set->slot_by_str[proc->service_name] - 1;
	return set->unknown;
}

static int services__init(struct services *set, const struct profile *p)
{
	size_t nr_procs = profile__nr_processes(p), nr_samples = profile__nr_samples(p);
	int64_t unknown_str;

	memset(set, 0, sizeof(*set));
	set->p = p;
	/* One slot per process at most, plus the unknown one. */
	set->v = calloc(nr_procs + 1, sizeof(*set->v));
	set->slot_by_str = calloc(profile__nr_strings(p) ? profile__nr_strings(p) : 1,
				  sizeof(*set->slot_by_str));
	if (!set->v || !set->slot_by_str) {
		services__free(set);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr_procs; i++) {
		const struct profile_process *proc = profile__process_at(p, i);
		uint32_t name = proc->service_name;

		if (name && !set->slot_by_str[name])
			set->slot_by_str[name] =
				services__add(set, profile__string_at(p, name)) + 1;
	}
	/* A service that really is called "unknown_service" and the unknown samples are one. */
	unknown_str = profile__find_string(p, UNKNOWN_SERVICE);
	if (unknown_str > 0 && set->slot_by_str[unknown_str])
		set->unknown = set->slot_by_str[unknown_str] - 1;
	else
		set->unknown = services__add(set, UNKNOWN_SERVICE);

	for (size_t i = 0; i < nr_procs; i++)
		set->v[services__slot_of_pid(set, profile__process_at(p, i)->pid)].nr_processes++;
	for (size_t i = 1; i < nr_samples; i++)
		set->v[services__slot_of_pid(set, profile__sample_at(p, i)->labels.pid)]
			.nr_samples++;
	return 0;
}

static bool keep_service(const struct profile_sample *s, void *ctx)
{
	const struct service_filter *f = ctx;

	return services__slot_of_pid(f->set, s->labels.pid) == f->slot;
}

static int encode_service(const struct services *set, size_t slot, uint8_t **out, size_t *len)
{
	struct service_filter f = {.set = set, .slot = slot};

	return enc_pprof__encode(set->p, keep_service, &f, out, len);
}

/* --- labels --- */

static bool is_name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

/*
 * Prometheus naming rules, [a-zA-Z_][a-zA-Z0-9_]* for label names and the same with ':' for
 * metric names (the server validates __name__ as one): invalid characters become '_', and a
 * leading digit gets a '_' in front. NULL for an empty name or without memory.
 */
static char *sanitize_name(const char *name, bool colon)
{
	size_t len = strlen(name), off;
	char *s;

	if (!len)
		return NULL;
	off = !is_name_char(name[0], true) && is_name_char(name[0], false) ? 1 : 0;
	s = malloc(len + off + 1);
	if (!s)
		return NULL;
	s[0] = '_';
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		s[i + off] = is_name_char(c, i + off == 0) || (colon && c == ':') ? c : '_';
	}
	s[len + off] = '\0';
	return s;
}

/*
 * A copy of s that is valid UTF-8, each invalid byte as '_': protobuf's string fields must be,
 * and the Go server rejects the whole request otherwise. Process environments are not bound to
 * any encoding.
 */
static char *utf8_copy(const char *s)
{
	size_t len = strlen(s);
	char *c = malloc(len + 1);

	if (c)
		utf8__replace_invalid(c, s, len, "_");
	return c;
}

/* Extra labels, sanitized once for every series; their strings are owned here. */
struct extra_labels {
	Types__V1__LabelPair *v;
	size_t n;
};

static void extra_labels__free(struct extra_labels *x)
{
	for (size_t i = 0; x->v && i < x->n; i++) {
		free(x->v[i].name);
		free(x->v[i].value);
	}
	free(x->v);
}

static int extra_labels__init(struct extra_labels *x, const struct pyroscope_label *labels,
			      size_t n)
{
	x->n = 0;
	x->v = calloc(n ? n : 1, sizeof(*x->v));
	if (!x->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Types__V1__LabelPair *l = &x->v[i];

		if (!labels[i].name || !labels[i].value || !labels[i].name[0])
			return -EINVAL;
		types__v1__label_pair__init(l);
		l->name = sanitize_name(labels[i].name, false);
		l->value = utf8_copy(labels[i].value);
		x->n++;
		if (!l->name || !l->value)
			return -ENOMEM;
		/* Names starting with "__" are the server's; it drops or rejects them. */
		if (strncmp(l->name, "__", 2) == 0)
			return -EINVAL;
		for (size_t k = 0; k < NR(own_labels); k++) {
			if (strcmp(l->name, own_labels[k]) == 0)
				return -EINVAL;
		}
		for (size_t k = 0; k < i; k++) {
			if (strcmp(l->name, x->v[k].name) == 0)
				return -EINVAL;
		}
	}
	return 0;
}

/* --- push --- */

/* A random (version 4) UUID: a collision would merge two uploads on the server. */
static int uuid_v4(char out[UUID_LEN + 1])
{
	uint8_t b[16];
	ssize_t n = getrandom(b, sizeof(b), GRND_NONBLOCK);

	/* Before the pool is ready (early boot) or without getrandom(), urandom still answers. */
	if (n != (ssize_t)sizeof(b)) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		n = read(fd, b, sizeof(b));
		close(fd);
		if (n != (ssize_t)sizeof(b))
			return n < 0 ? -errno : -EIO;
	}
	b[6] = (b[6] & 0x0f) | 0x40; /* version 4 */
	b[8] = (b[8] & 0x3f) | 0x80; /* RFC 4122 variant */
	snprintf(out, UUID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
	return 0;
}

/* Everything one series points to; the protobuf-c structs borrow these buffers. */
struct push_series {
	Push__V1__RawProfileSeries series;
	Types__V1__LabelPair own[NR(own_labels)];
	Types__V1__LabelPair **label_ptrs;
	Push__V1__RawSample sample;
	Push__V1__RawSample *sample_ptr;
	char *service; /* the service_name value, valid UTF-8 */
	char id[UUID_LEN + 1];
	uint8_t *pprof;
	size_t pprof_len;
};

static int cmp_label(const void *a, const void *b)
{
	const Types__V1__LabelPair *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int push_series__build(struct push_series *ps, const struct services *set, size_t slot,
			      const char *profile_name, const struct extra_labels *extra)
{
	size_t nr_labels = NR(own_labels) + extra->n;
	int err;

	ps->service = utf8_copy(set->v[slot].name);
	ps->label_ptrs = calloc(nr_labels, sizeof(*ps->label_ptrs));
	if (!ps->service || !ps->label_ptrs)
		return -ENOMEM;
	err = encode_service(set, slot, &ps->pprof, &ps->pprof_len);
	if (!err)
		err = uuid_v4(ps->id);
	if (err)
		return err;

	for (size_t i = 0; i < NR(own_labels); i++) {
		types__v1__label_pair__init(&ps->own[i]);
		ps->own[i].name = (char *)own_labels[i];
		ps->label_ptrs[i] = &ps->own[i];
	}
	ps->own[0].value = (char *)profile_name;
	ps->own[1].value = ps->service;
	ps->own[2].value = (char *)SPY_NAME;
	for (size_t i = 0; i < extra->n; i++)
		ps->label_ptrs[NR(own_labels) + i] = &extra->v[i];
	/* Sorted by name, as Prometheus-style label sets are everywhere. */
	qsort(ps->label_ptrs, nr_labels, sizeof(*ps->label_ptrs), cmp_label);

	push__v1__raw_sample__init(&ps->sample);
	ps->sample.raw_profile.data = ps->pprof;
	ps->sample.raw_profile.len = ps->pprof_len;
	ps->sample.id = ps->id;
	ps->sample_ptr = &ps->sample;

	push__v1__raw_profile_series__init(&ps->series);
	ps->series.n_labels = nr_labels;
	ps->series.labels = ps->label_ptrs;
	ps->series.n_samples = 1;
	ps->series.samples = &ps->sample_ptr;
	return 0;
}

static void push_series__free(struct push_series *ps)
{
	free(ps->pprof);
	free(ps->service);
	free(ps->label_ptrs);
}

int enc_pyroscope__push_labels(const struct profile *p, const char *profile_name,
			       const struct pyroscope_label *labels, size_t nr_labels,
			       uint8_t **out, size_t *len)
{
	struct extra_labels extra = {0};
	struct services set = {0};
	struct push_series *series = NULL;
	Push__V1__RawProfileSeries **series_ptrs = NULL;
	Push__V1__PushRequest req;
	char *name = NULL;
	uint8_t *buf = NULL;
	size_t n = 0, packed_len;
	int err;

	if (!p || !profile_name || !profile_name[0] || (nr_labels && !labels) || !out || !len)
		return -EINVAL;
	err = services__init(&set, p);
	if (err)
		return err;
	err = extra_labels__init(&extra, labels, nr_labels);
	if (err)
		goto out;
	name = sanitize_name(profile_name, true);
	series = calloc(set.n, sizeof(*series));
	series_ptrs = calloc(set.n, sizeof(*series_ptrs));
	if (!name || !series || !series_ptrs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < set.n; i++) {
		if (!set.v[i].nr_samples)
			continue;
		err = push_series__build(&series[n], &set, i, name, &extra);
		series_ptrs[n] = &series[n].series;
		/* Counted before the check: a half-built series has buffers to free too. */
		n++;
		if (err)
			goto out;
	}

	push__v1__push_request__init(&req);
	req.n_series = n;
	req.series = series_ptrs;
	packed_len = push__v1__push_request__get_packed_size(&req);
	buf = malloc(packed_len ? packed_len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (push__v1__push_request__pack(&req, buf) != packed_len) {
		err = -EIO;
		goto out;
	}
	*out = buf;
	*len = packed_len;
	buf = NULL;
out:
	free(buf);
	for (size_t i = 0; i < n; i++)
		push_series__free(&series[i]);
	free(series_ptrs);
	free(series);
	free(name);
	extra_labels__free(&extra);
	services__free(&set);
	return err;
}

int enc_pyroscope__push(const struct profile *p, const char *profile_name, uint8_t **out,
			size_t *len)
{
	return enc_pyroscope__push_labels(p, profile_name, NULL, 0, out, len);
}

/* --- legacy ingest --- */

/* Characters the legacy name grammar ("app.type{key=value,...}") gives a meaning to. */
static bool breaks_legacy_value(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == ' ' || c == '{' || c == '}' || c == ',' || c == '=' ||
	       c == '"';
}

/* The application names Pyroscope's legacy API accepts: letters, digits, '_', '-', '.', '/'. */
static bool is_app_char(char c)
{
	return is_name_char(c, false) || c == '-' || c == '.' || c == '/';
}

/* Appends s to the stream, each character rewritten to '_' where ok() refuses it. */
static void put_sanitized(FILE *f, const char *s, bool (*ok)(char c))
{
	for (; *s; s++)
		fputc(ok(*s) ? *s : '_', f);
}

static bool legacy_value_char(char c)
{
	return !breaks_legacy_value((unsigned char)c);
}

/* RFC 3986: everything but the unreserved characters is %XX. */
static void put_percent_encoded(FILE *f, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_' || *c == '~')
			fputc(*c, f);
		else
			fprintf(f, "%%%02X", *c);
	}
}

/* Close an open_memstream() stream; *buf (the stream's buffer) is only valid after that. */
static int memstream_close(FILE *f, char **buf)
{
	int err = ferror(f) ? -EIO : 0;

	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

/* "APP.TYPE{service_name=SERVICE}", made safe for the legacy grammar. */
static int legacy_name(const char *app, const char *type, const char *service, char **out)
{
	char *value = utf8_copy(service), *buf = NULL;
	size_t size;
	FILE *f;
	int err;

	if (!value)
		return -ENOMEM;
	f = open_memstream(&buf, &size);
	if (!f) {
		free(value);
		return -ENOMEM;
	}
	put_sanitized(f, app, is_app_char);
	fputc('.', f);
	put_sanitized(f, type, is_app_char);
	fputs("{service_name=", f);
	put_sanitized(f, value, legacy_value_char);
	fputc('}', f);
	free(value);
	err = memstream_close(f, &buf);
	*out = buf;
	return err;
}

static int ingest_query(const struct profile *p, const char *name, char **out)
{
	const struct profile_desc *d = profile__desc(p);
	char *buf = NULL;
	size_t size;
	FILE *f = open_memstream(&buf, &size);
	int err;

	if (!f)
		return -ENOMEM;
	fputs("name=", f);
	put_percent_encoded(f, name);
	/* Without a window the server takes the time of arrival, which beats 1970. */
	if (d->time_nanos) {
		uint64_t from = d->time_nanos / 1000000000U;
		uint64_t until = (d->time_nanos + d->duration_nanos + 999999999U) / 1000000000U;

		if (until <= from)
			until = from + 1;
		fprintf(f, "&from=%" PRIu64 "&until=%" PRIu64, from, until);
	}
	fputs("&format=pprof", f);
	if (d->period > 0)
		fprintf(f, "&sampleRate=%" PRId64,
			(int64_t)((1000000000LL + d->period / 2) / d->period));
	fputs("&spyName=" SPY_NAME, f);
	err = memstream_close(f, &buf);
	*out = buf;
	return err;
}

static int ingest_payload(const struct services *set, size_t slot, const char *app_name,
			  struct export_payload *pl)
{
	const struct profile_desc *d = profile__desc(set->p);
	const struct service *svc = &set->v[slot];
	char *name = NULL;
	int err;

	err = legacy_name(app_name ? app_name : svc->name,
			  d->sample_type && d->sample_type[0] ? d->sample_type : "cpu", svc->name,
			  &name);
	if (!err)
		err = ingest_query(set->p, name, &pl->query);
	if (!err)
		err = encode_service(set, slot, &pl->body, &pl->len);
	if (!err && asprintf(&pl->what,
			     "%s profile of service %s: %zu process%s, %zu samples, %" PRIu64 " s",
			     d->sample_type ? d->sample_type : "cpu", name, svc->nr_processes,
			     svc->nr_processes == 1 ? "" : "es", svc->nr_samples,
			     (uint64_t)(d->duration_nanos / 1000000000ULL)) < 0) {
		pl->what = NULL;
		err = -ENOMEM;
	}
	free(name);
	return err;
}

void enc_pyroscope__free_payloads(struct export_payload *payloads, size_t n)
{
	for (size_t i = 0; payloads && i < n; i++)
		export_payload__release(&payloads[i]);
	free(payloads);
}

int enc_pyroscope__ingest(const struct profile *p, const char *app_name,
			  struct export_payload **payloads, size_t *n)
{
	struct services set;
	struct export_payload *v = NULL;
	size_t nr = 0;
	int err;

	if (!p || !payloads || !n)
		return -EINVAL;
	if (app_name && !app_name[0])
		app_name = NULL;
	err = services__init(&set, p);
	if (err)
		return err;
	v = calloc(set.n, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < set.n; i++) {
		if (!set.v[i].nr_samples)
			continue;
		/* Counted first: a half-filled payload is freed with the rest. */
		err = ingest_payload(&set, i, app_name, &v[nr++]);
		if (err)
			goto out;
	}
	if (!nr) {
		free(v);
		v = NULL;
	}
	*payloads = v;
	*n = nr;
	v = NULL;
out:
	if (v)
		enc_pyroscope__free_payloads(v, nr);
	services__free(&set);
	return err;
}

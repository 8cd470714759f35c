// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pprof encoder, checked twice: decoded back with protobuf-c (every field), and read by
 * `go tool pprof`, the reference consumer, so that a file we can read but pprof cannot fails here.
 */
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "formats/encode.h"
#include "model/profile.h"
#include "profile.pb-c.h"

#define PERIOD 10000000LL /* 100 Hz */
#define BUILD_ID "b1d0c0ffee0123456789abcdef0123456789abcd"
#define UNKNOWN_LABEL "[unknown] libfoo.so+0x1234"

static char tmpdir[] = "/tmp/hostprof-test-pprof-XXXXXX";

/* What the hand-built profile holds; the checks below compare against these. */
static const struct {
	const char *name;
	const char *file;
} functions[] = {
	{"main", "app.c"},
	{"work", "app.c"},
	{"compute", "app.c"},
	{"do_syscall_64", ""},
};

static const struct {
	uint32_t mapping;
	uint64_t address;
	uint32_t function; /* 0: unresolved, named by UNKNOWN_LABEL */
	enum frame_kind kind;
} locations[] = {
	{1, 0x1100, 1, FRAME_NATIVE},
	{1, 0x1200, 2, FRAME_NATIVE},
	{1, 0x1300, 3, FRAME_NATIVE},
	{2, 0x1234, 0, FRAME_NATIVE},
	{0, 0xffffffff81000100ULL, 4, FRAME_KERNEL},
};

/* Stacks are leaf first, as in the model and in pprof. */
static const uint32_t stack1[] = {3, 2, 1};    /* main -> work -> compute */
static const uint32_t stack2[] = {5, 4, 2, 1}; /* main -> work -> libfoo -> kernel */
static const uint32_t stack3[] = {2, 1};

static const struct {
	const uint32_t *stack;
	size_t depth;
	uint32_t pid, tid;
	const char *comm, *thread_name;
	int64_t count;
	const char *names;  /* leaf first, as pprof -raw lists the location ids */
	const char *labels; /* as decode_labels() prints them */
} samples[] = {
	{stack1, 3, 100, 100, "app", "app", 3, "compute;work;main",
	 "pid=100 tid=100 comm=app thread_name=app"},
	{stack1, 3, 100, 101, "app", "worker", 4, "compute;work;main",
	 "pid=100 tid=101 comm=app thread_name=worker"},
	{stack2, 4, 200, 200, "other", "other", 5, "do_syscall_64;" UNKNOWN_LABEL ";work;main",
	 "pid=200 tid=200 comm=other thread_name=other"},
	/* No thread name: no thread_name label at all. */
	{stack3, 2, 200, 201, "other", "", 1, "work;main", "pid=200 tid=201 comm=other"},
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

static const struct profile_desc desc = {
	.sample_type = "cpu",
	.sample_unit = "nanoseconds",
	.period_type = "cpu",
	.period_unit = "nanoseconds",
	.period = PERIOD,
	.time_nanos = 1700000000123456789ULL,
	.duration_nanos = 5000000000ULL,
};

static uint32_t str(struct profile *p, const char *s)
{
	int64_t idx = profile__string(p, s);

	CHECK(idx >= 0, "string \"%s\": %lld", s, (long long)idx);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static struct profile *build_profile(void)
{
	struct profile *p = profile__new(&desc);
	struct profile_mapping m1 = {
		.start = 0x555555554000, .limit = 0x555555580000, .has_functions = true};
	struct profile_mapping m2 = {
		.start = 0x7f0000000000, .limit = 0x7f0000100000, .offset = 0x1000};
	int64_t idx;

	CHECK(p != NULL, "profile__new: %s", strerror(errno));
	if (!p)
		return NULL;
	m1.filename = str(p, "/usr/bin/app");
	m1.build_id = str(p, BUILD_ID);
	m2.filename = str(p, "/nonexistent/libfoo.so");
	CHECK_U64(profile__mapping(p, &m1), 1);
	CHECK_U64(profile__mapping(p, &m2), 2);
	for (size_t i = 0; i < NR(functions); i++) {
		struct profile_function f = {.name = str(p, functions[i].name)};

		f.system_name = f.name;
		f.filename = str(p, functions[i].file);
		CHECK_U64(profile__function(p, &f), i + 1);
	}
	for (size_t i = 0; i < NR(locations); i++) {
		struct profile_location l = {
			.mapping = locations[i].mapping,
			.address = locations[i].address,
			.function = locations[i].function,
			.kind = locations[i].kind,
		};

		if (!l.function)
			l.label = str(p, UNKNOWN_LABEL);
		CHECK_U64(profile__location(p, &l), i + 1);
	}
	for (size_t i = 0; i < NR(samples); i++) {
		struct profile_labels lb = {.pid = samples[i].pid, .tid = samples[i].tid};
		int64_t count = samples[i].count;

		lb.comm = str(p, samples[i].comm);
		lb.thread_name = str(p, samples[i].thread_name);
		idx = profile__stack(p, samples[i].stack, samples[i].depth);
		CHECK(idx > 0, "stack: %lld", (long long)idx);
		/* The first sample arrives in two parts, which the model merges. */
		if (i == 0) {
			CHECK(profile__add_sample(p, (uint32_t)idx, &lb, PERIOD, 1) == 0, "add");
			count--;
		}
		CHECK(profile__add_sample(p, (uint32_t)idx, &lb, count * PERIOD, count) == 0,
		      "add");
	}
	return p;
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0, got;
	uint8_t *b = NULL, *tmp;

	if (!f)
		return -errno;
	do {
		cap *= 2;
		tmp = realloc(b, cap);
		if (!tmp) {
			free(b);
			fclose(f);
			return -ENOMEM;
		}
		b = tmp;
		got = fread(b + n, 1, cap - n, f);
		n += got;
	} while (n == cap);
	fclose(f);
	*buf = b;
	*len = n;
	return 0;
}

static int gunzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = {0};
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	int zerr;

	if (!buf || inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	zs.next_in = (uint8_t *)in;
	zs.avail_in = len;
	zs.next_out = buf;
	zs.avail_out = cap;
	zerr = inflate(&zs, Z_FINISH);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	if (zerr != Z_STREAM_END) {
		free(buf);
		return -EBADMSG;
	}
	*out = buf;
	return 0;
}

static const char *S(const Perftools__Profiles__Profile *pb, int64_t idx)
{
	if (idx < 0 || (size_t)idx >= pb->n_string_table)
		return "(bad string index)";
	return pb->string_table[idx];
}

static const Perftools__Profiles__Function *function_by_id(const Perftools__Profiles__Profile *pb,
							   uint64_t id)
{
	for (size_t i = 0; i < pb->n_function; i++) {
		if (pb->function[i]->id == id)
			return pb->function[i];
	}
	return NULL;
}

static void decode_labels(const Perftools__Profiles__Profile *pb,
			  const Perftools__Profiles__Sample *s, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->n_label && off < size; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		if (l->str)
			off += snprintf(buf + off, size - off, "%s%s=%s", i ? " " : "",
					S(pb, l->key), S(pb, l->str));
		else
			off += snprintf(buf + off, size - off, "%s%s=%lld", i ? " " : "",
					S(pb, l->key), (long long)l->num);
	}
}

static Perftools__Profiles__Profile *decode_file(const char *path)
{
	Perftools__Profiles__Profile *pb;
	uint8_t *gz = NULL, *raw = NULL;
	size_t gz_len = 0, raw_len = 0;

	CHECK(read_file(path, &gz, &gz_len) == 0, "read %s", path);
	if (!gz)
		return NULL;
	CHECK(gz_len > 2 && gz[0] == 0x1f && gz[1] == 0x8b, "not gzip");
	CHECK(gunzip(gz, gz_len, &raw, &raw_len) == 0, "gunzip failed");
	free(gz);
	if (!raw)
		return NULL;
	pb = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	free(raw);
	CHECK(pb != NULL, "protobuf-c cannot unpack the profile");
	return pb;
}

static void check_decoded_empty(const char *path)
{
	Perftools__Profiles__Profile *pb = decode_file(path);

	if (!pb)
		return;
	CHECK(pb->n_sample == 0 && pb->n_location == 0 && pb->n_function == 0 && pb->n_mapping == 0,
	      "empty profile has entries");
	CHECK_U64(pb->n_sample_type, 2);
	CHECK_STR(S(pb, pb->default_sample_type), "cpu");
	CHECK_U64(pb->period, PERIOD);
	perftools__profiles__profile__free_unpacked(pb, NULL);
}

static void check_decoded(const char *path)
{
	Perftools__Profiles__Profile *pb = decode_file(path);
	char buf[256];

	if (!pb)
		return;

	CHECK(pb->n_string_table > 0 && strcmp(pb->string_table[0], "") == 0,
	      "string_table[0] is not \"\"");
	CHECK_U64(pb->n_sample_type, 2);
	if (pb->n_sample_type == 2) {
		CHECK_STR(S(pb, pb->sample_type[0]->type), "samples");
		CHECK_STR(S(pb, pb->sample_type[0]->unit), "count");
		CHECK_STR(S(pb, pb->sample_type[1]->type), "cpu");
		CHECK_STR(S(pb, pb->sample_type[1]->unit), "nanoseconds");
	}
	CHECK_STR(S(pb, pb->default_sample_type), "cpu");
	CHECK(pb->period_type != NULL, "no period_type");
	if (pb->period_type) {
		CHECK_STR(S(pb, pb->period_type->type), "cpu");
		CHECK_STR(S(pb, pb->period_type->unit), "nanoseconds");
	}
	CHECK_U64(pb->period, PERIOD);
	CHECK_U64(pb->time_nanos, 1700000000123456789ULL);
	CHECK_U64(pb->duration_nanos, 5000000000ULL);
	CHECK(pb->drop_frames == 0 && pb->keep_frames == 0 && pb->n_comment == 0, "extra fields");

	CHECK_U64(pb->n_mapping, 2);
	if (pb->n_mapping == 2) {
		const Perftools__Profiles__Mapping *m1 = pb->mapping[0], *m2 = pb->mapping[1];

		CHECK_U64(m1->id, 1);
		CHECK_U64(m1->memory_start, 0x555555554000);
		CHECK_U64(m1->memory_limit, 0x555555580000);
		CHECK_U64(m1->file_offset, 0);
		CHECK_STR(S(pb, m1->filename), "/usr/bin/app");
		CHECK_STR(S(pb, m1->build_id), BUILD_ID);
		CHECK(m1->has_functions, "mapping 1: has_functions lost");
		CHECK_U64(m2->id, 2);
		CHECK_U64(m2->memory_start, 0x7f0000000000);
		CHECK_U64(m2->memory_limit, 0x7f0000100000);
		CHECK_U64(m2->file_offset, 0x1000);
		CHECK_STR(S(pb, m2->filename), "/nonexistent/libfoo.so");
		CHECK_STR(S(pb, m2->build_id), "");
		CHECK(!m2->has_functions, "mapping 2: has_functions set");
	}

	/* The real functions keep their ids; the unknown frame adds one synthetic function. */
	CHECK_U64(pb->n_function, NR(functions) + 1);
	for (size_t i = 0; i < NR(functions) && i < pb->n_function; i++) {
		const Perftools__Profiles__Function *f = pb->function[i];

		CHECK_U64(f->id, i + 1);
		CHECK_STR(S(pb, f->name), functions[i].name);
		CHECK_STR(S(pb, f->system_name), functions[i].name);
		CHECK_STR(S(pb, f->filename), functions[i].file);
	}
	if (pb->n_function == NR(functions) + 1) {
		const Perftools__Profiles__Function *f = pb->function[NR(functions)];

		CHECK_U64(f->id, NR(functions) + 1);
		CHECK_STR(S(pb, f->name), UNKNOWN_LABEL);
		CHECK_STR(S(pb, f->system_name), UNKNOWN_LABEL);
		CHECK_STR(S(pb, f->filename), "");
	}

	CHECK_U64(pb->n_location, NR(locations));
	for (size_t i = 0; i < NR(locations) && i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];
		const Perftools__Profiles__Function *f;
		const char *want;

		CHECK_U64(l->id, i + 1);
		/* Kernel frames have no mapping in pprof either. */
		CHECK_U64(l->mapping_id,
			  locations[i].kind == FRAME_KERNEL ? 0 : locations[i].mapping);
		CHECK_U64(l->address, locations[i].address);
		CHECK(!l->is_folded, "location %zu folded", i + 1);
		CHECK_U64(l->n_line, 1);
		if (l->n_line != 1)
			continue;
		f = function_by_id(pb, l->line[0]->function_id);
		want = locations[i].function ? functions[locations[i].function - 1].name
					     : UNKNOWN_LABEL;
		CHECK(f != NULL, "location %zu: function %llu missing", i + 1,
		      (unsigned long long)l->line[0]->function_id);
		if (f)
			CHECK_STR(S(pb, f->name), want);
		CHECK_U64(l->line[0]->line, 0);
	}

	CHECK_U64(pb->n_sample, NR(samples));
	for (size_t i = 0; i < NR(samples) && i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		bool same = s->n_location_id == samples[i].depth;

		for (size_t j = 0; same && j < s->n_location_id; j++)
			same = s->location_id[j] == samples[i].stack[j];
		CHECK(same, "sample %zu: location ids differ", i);
		CHECK_U64(s->n_value, 2);
		if (s->n_value == 2) {
			CHECK_U64(s->value[0], samples[i].count);
			CHECK_U64(s->value[1], samples[i].count * PERIOD);
		}
		decode_labels(pb, s, buf, sizeof(buf));
		CHECK_STR(buf, samples[i].labels);
	}
	perftools__profiles__profile__free_unpacked(pb, NULL);
}

/* --- go tool pprof --- */

static char *find_go(void)
{
	char line[4096] = "";
	FILE *f = popen("command -v go 2>/dev/null", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		pclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	if (line[0] && access(line, X_OK) == 0)
		return strdup(line);
	if (access("/usr/lib/go-1.19/bin/go", X_OK) == 0)
		return strdup("/usr/lib/go-1.19/bin/go");
	return NULL;
}

/* Runs `go tool pprof ARGS FILE` and returns its stdout, or NULL (its stderr is then shown). */
static char *run_pprof(const char *go, const char *args, const char *file)
{
	char *cmd = NULL, *out = NULL, *errfile = NULL;
	size_t size = 0;
	char buf[4096];
	FILE *f, *mem;
	size_t n;
	int status;

	if (asprintf(&errfile, "%s/pprof.stderr", tmpdir) < 0)
		return NULL;
	/* GOCACHE and HOME come from tests/run-unit.sh; default them for a bare run. */
	if (asprintf(&cmd,
		     "cd '%s' && GOCACHE=\"${GOCACHE:-%s/gocache}\" HOME=\"${HOME:-%s}\" "
		     "'%s' tool pprof %s '%s' 2>'%s'",
		     tmpdir, tmpdir, tmpdir, go, args, file, errfile) < 0) {
		free(errfile);
		return NULL;
	}
	mem = open_memstream(&out, &size);
	f = popen(cmd, "r");
	if (f && mem) {
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, mem);
	}
	status = f ? pclose(f) : -1;
	if (mem)
		fclose(mem);
	CHECK(status == 0 && out, "`%s` failed with status %d", cmd, status);
	if (status != 0 || !out) {
		f = fopen(errfile, "r");
		while (f && fgets(buf, sizeof(buf), f))
			fprintf(stderr, "  pprof: %s", buf);
		if (f)
			fclose(f);
		free(out);
		out = NULL;
	}
	unlink(errfile);
	free(errfile);
	free(cmd);
	return out;
}

struct raw_location {
	unsigned id;
	unsigned long long address;
	int mapping; /* -1 when pprof printed none */
	char name[128];
};

/* "     4: 0x1234 M=2 [unknown] libfoo.so+0x1234 :0 s=0": the name may contain spaces. */
static bool parse_raw_location(const char *line, struct raw_location *loc)
{
	unsigned long long addr;
	char *rest, *end;
	int off = 0, m, moff = 0;

	if (sscanf(line, " %u: %llx %n", &loc->id, &addr, &off) != 2 || !off)
		return false;
	loc->address = addr;
	rest = strdup(line + off);
	if (!rest)
		return false;
	loc->mapping = -1;
	if (sscanf(rest, "M=%d %n", &m, &moff) == 1 && moff) {
		loc->mapping = m;
		memmove(rest, rest + moff, strlen(rest + moff) + 1);
	}
	rest[strcspn(rest, "\n")] = '\0';
	/* Drop " s=<start line>" and then " <file>:<line>". */
	for (int i = 0; i < 2; i++) {
		end = strrchr(rest, ' ');
		if (end)
			*end = '\0';
	}
	snprintf(loc->name, sizeof(loc->name), "%s", rest);
	free(rest);
	return true;
}

static void check_pprof_raw(const char *go, const char *file)
{
	struct raw_location locs[16];
	size_t nr_locs = 0;
	struct {
		long long count, value;
		unsigned ids[16];
		size_t depth;
		char labels[256];
	} got[8];
	size_t nr_got = 0;
	char *out = run_pprof(go, "-raw", file);
	char *line, *save = NULL;
	enum { HEAD, SAMPLES, LOCATIONS, MAPPINGS } section = HEAD;
	bool period = false, period_type = false, header = false, map1 = false, map2 = false;

	if (!out)
		return;
	memset(got, 0, sizeof(got));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long count, value;
		int off = 0;

		if (strcmp(line, "Samples:") == 0) {
			section = SAMPLES;
			continue;
		} else if (strcmp(line, "Locations") == 0) {
			section = LOCATIONS;
			continue;
		} else if (strcmp(line, "Mappings") == 0) {
			section = MAPPINGS;
			continue;
		}
		switch (section) {
		case HEAD:
			if (strcmp(line, "PeriodType: cpu nanoseconds") == 0)
				period_type = true;
			if (strcmp(line, "Period: 10000000") == 0)
				period = true;
			break;
		case SAMPLES:
			if (strcmp(line, "samples/count cpu/nanoseconds[dflt]") == 0) {
				header = true;
			} else if (sscanf(line, " %lld %lld: %n", &count, &value, &off) == 2 &&
				   off && nr_got < NR(got)) {
				char *p = line + off, *e;

				got[nr_got].count = count;
				got[nr_got].value = value;
				while (got[nr_got].depth < NR(got[0].ids)) {
					unsigned long id = strtoul(p, &e, 10);

					if (e == p)
						break;
					got[nr_got].ids[got[nr_got].depth++] = (unsigned)id;
					p = e;
				}
				nr_got++;
			} else if (nr_got && strstr(line, ":[")) {
				/* Label lines follow their sample: strings first, then numbers. */
				size_t len = strlen(got[nr_got - 1].labels);

				snprintf(got[nr_got - 1].labels + len, sizeof(got[0].labels) - len,
					 " %s", line);
			}
			break;
		case LOCATIONS:
			if (nr_locs < NR(locs) && parse_raw_location(line, &locs[nr_locs]))
				nr_locs++;
			break;
		case MAPPINGS:
			if (strstr(line,
				   "1: 0x555555554000/0x555555580000/0x0 /usr/bin/app " BUILD_ID))
				map1 = true;
			if (strstr(line, "2: 0x7f0000000000/0x7f0000100000/0x1000 "
					 "/nonexistent/libfoo.so"))
				map2 = true;
			break;
		}
	}
	CHECK(period_type, "pprof -raw: no \"PeriodType: cpu nanoseconds\" line");
	CHECK(period, "pprof -raw: no \"Period: 10000000\" line");
	CHECK(header, "pprof -raw: no \"samples/count cpu/nanoseconds[dflt]\" line");
	CHECK(map1, "pprof -raw: mapping 1 with its build-id not listed");
	CHECK(map2, "pprof -raw: mapping 2 not listed");
	CHECK_U64(nr_locs, NR(locations));
	/* pprof renumbers locations (and may reorder them): match them by address. */
	for (size_t i = 0; i < NR(locations); i++) {
		const struct raw_location *l = NULL;
		int want_mapping =
			locations[i].kind == FRAME_KERNEL ? -1 : (int)locations[i].mapping;

		for (size_t k = 0; k < nr_locs; k++) {
			if (locs[k].address == locations[i].address)
				l = &locs[k];
		}
		CHECK(l != NULL, "pprof -raw: no location at 0x%llx",
		      (unsigned long long)locations[i].address);
		if (!l)
			continue;
		/* The kernel frame has no mapping, and pprof prints no M= for it. */
		CHECK(l->mapping == want_mapping, "location 0x%llx: M=%d, want %d",
		      (unsigned long long)l->address, l->mapping, want_mapping);
		CHECK_STR(l->name, locations[i].function ? functions[locations[i].function - 1].name
							 : UNKNOWN_LABEL);
	}

	/* pprof may reorder samples; each expected one is found by its unique tid label. */
	CHECK_U64(nr_got, NR(samples));
	for (size_t i = 0; i < NR(samples); i++) {
		char tid[32], names[512] = "", want[256];
		size_t g, len = 0;

		snprintf(tid, sizeof(tid), "tid:[%u]", samples[i].tid);
		for (g = 0; g < nr_got && !strstr(got[g].labels, tid); g++)
			;
		CHECK(g < nr_got, "pprof -raw: no sample with %s", tid);
		if (g == nr_got)
			continue;
		CHECK_U64(got[g].count, samples[i].count);
		CHECK_U64(got[g].value, samples[i].count * PERIOD);
		for (size_t j = 0; j < got[g].depth; j++) {
			const char *name = "(no such location)";

			for (size_t k = 0; k < nr_locs; k++) {
				if (locs[k].id == got[g].ids[j])
					name = locs[k].name;
			}
			len += snprintf(names + len, sizeof(names) - len, "%s%s", j ? ";" : "",
					name);
		}
		CHECK_STR(names, samples[i].names);

		/* pprof prints string labels as "comm:[app]", numbers as "pid:[100]". */
		snprintf(want, sizeof(want), "pid:[%u]", samples[i].pid);
		CHECK(strstr(got[g].labels, want), "sample %zu: no %s in \"%s\"", i, want,
		      got[g].labels);
		snprintf(want, sizeof(want), "comm:[%s]", samples[i].comm);
		CHECK(strstr(got[g].labels, want), "sample %zu: no %s in \"%s\"", i, want,
		      got[g].labels);
		if (samples[i].thread_name[0]) {
			snprintf(want, sizeof(want), "thread_name:[%s]", samples[i].thread_name);
			CHECK(strstr(got[g].labels, want), "sample %zu: no %s in \"%s\"", i, want,
			      got[g].labels);
		} else {
			CHECK(!strstr(got[g].labels, "thread_name"),
			      "sample %zu: empty thread_name label in \"%s\"", i, got[g].labels);
		}
	}
	free(out);
}

/* The flat column of the `-top` line for function `name`, or NULL. */
static char *top_flat(char *out, const char *name, char flat[32])
{
	char *line, *save = NULL;
	size_t nlen = strlen(name);

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line);

		if (len > nlen + 2 && strcmp(line + len - nlen, name) == 0 &&
		    line[len - nlen - 1] == ' ' && sscanf(line, " %31s", flat) == 1)
			return flat;
	}
	return NULL;
}

static void check_pprof_top(const char *go, const char *file)
{
	static const struct {
		const char *args, *name, *flat;
	} tops[] = {
		{"-top -sample_index=cpu", "compute", "70ms"},
		{"-top -sample_index=cpu", "do_syscall_64", "50ms"},
		{"-top -sample_index=cpu", "work", "10ms"},
		{"-top -sample_index=cpu", "main", "0"},
		{"-top -sample_index=samples", "compute", "7"},
	};
	char flat[32];

	for (size_t i = 0; i < NR(tops); i++) {
		char *out = run_pprof(go, tops[i].args, file);

		if (!out)
			continue;
		if (i == 0)
			CHECK(strstr(out, "of 130ms total"), "pprof -top: total is not 130ms:\n%s",
			      out);
		if (top_flat(out, tops[i].name, flat))
			CHECK_STR(flat, tops[i].flat);
		else
			CHECK(0, "pprof %s: no line for %s", tops[i].args, tops[i].name);
		free(out);
	}
}

/* --- error paths --- */

static bool tmp_leftovers(const char *pattern)
{
	glob_t g;
	bool any = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;

	globfree(&g);
	return any;
}

static void check_errors(struct profile *p)
{
	char path[256], pattern[300];
	struct stat st;
	int err;

	/* A directory that does not exist: -ENOENT and nothing created. */
	snprintf(path, sizeof(path), "%s/missing/profile.pb.gz", tmpdir);
	err = enc_pprof__write(p, path);
	CHECK(err == -ENOENT, "missing dir: got %d (%s)", err, strerror(-err));
	CHECK(stat(path, &st) < 0 && errno == ENOENT, "%s exists", path);
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	CHECK(stat(path, &st) < 0, "%s was created", path);

	/* The rename fails (the target is a directory): the temporary file must be removed. */
	snprintf(path, sizeof(path), "%s/adir", tmpdir);
	CHECK(mkdir(path, 0700) == 0, "mkdir %s: %s", path, strerror(errno));
	err = enc_pprof__write(p, path);
	CHECK(err < 0, "writing over a directory succeeded");
	snprintf(pattern, sizeof(pattern), "%s/adir.tmp*", tmpdir);
	CHECK(!tmp_leftovers(pattern), "temporary file left behind: %s", pattern);
	CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "the directory was replaced");
	rmdir(path);

	CHECK(enc_pprof__write(NULL, "x") == -EINVAL, "NULL profile accepted");
	CHECK(enc_pprof__write(p, NULL) == -EINVAL, "NULL path accepted");
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	struct profile *p, *empty;
	char path[256], pattern[300];
	struct stat st;
	char *go;
	int err;

	if (!mkdtemp(tmpdir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return check_summary("test_enc_pprof");
	}
	p = build_profile();
	if (p) {
		snprintf(path, sizeof(path), "%s/profile.pb.gz", tmpdir);
		err = enc_pprof__write(p, path);
		CHECK(err == 0, "enc_pprof__write: %s", strerror(-err));
		/* Owner only: a profile names every process of the host. */
		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode of %s is not 0600",
		      path);
		snprintf(pattern, sizeof(pattern), "%s/profile.pb.gz.tmp*", tmpdir);
		CHECK(!tmp_leftovers(pattern), "temporary file left behind");
		check_decoded(path);

		go = find_go();
		CHECK(go != NULL, "no `go` in PATH nor /usr/lib/go-1.19/bin/go: install golang-go "
				  "(apt-get install golang-go), `go tool pprof` checks the output");
		if (go) {
			check_pprof_raw(go, path);
			check_pprof_top(go, path);
			free(go);
		}
		/* Overwriting an existing file replaces it. */
		CHECK(enc_pprof__write(p, path) == 0, "rewrite");
		check_errors(p);
		profile__delete(p);
	}

	/* An empty profile is still a valid file. */
	empty = profile__new(&desc);
	CHECK(empty != NULL, "profile__new");
	if (empty) {
		snprintf(path, sizeof(path), "%s/empty.pb.gz", tmpdir);
		CHECK(enc_pprof__write(empty, path) == 0, "empty profile");
		check_decoded_empty(path);
		profile__delete(empty);
	}

	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return check_summary("test_enc_pprof");
}

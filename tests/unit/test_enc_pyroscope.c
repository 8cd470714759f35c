// SPDX-License-Identifier: BSD-2-Clause
/*
 * The Pyroscope encoders and the filtered pprof encoder under them, on a hand-built profile of
 * three processes in two services plus samples of a pid the process table does not know.
 *
 * The PushRequest is read back three ways: by `protoc --decode` (an independent reader of the
 * wire format), by protobuf-c, and each series' pprof by `go tool pprof -raw`, the reference
 * consumer, which must see exactly that service's samples and functions.
 */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "formats/encode.h"
#include "model/profile.h"
#include "profile.pb-c.h"
#include "push/v1/push.pb-c.h"
#include "export/transport.h"
#include "types/v1/types.pb-c.h"

#define PERIOD 10000000LL /* 100 Hz */
#define TIME_NANOS 1700000000123456789ULL
#define DURATION_NANOS 10000000000ULL
#define API "checkout-api"
#define DB "db/writer \xc3\xbc" /* '/', a space and a non-ASCII letter, to be encoded */
#define LIBPG_LABEL "[unknown] libpg_ext.so+0x42"

#define NR(a) (sizeof(a) / sizeof((a)[0]))

static char tmpdir[] = "/tmp/hostprof-test-pyroscope-XXXXXX";

static const struct profile_desc desc = {
	.sample_type = "cpu",
	.sample_unit = "nanoseconds",
	.period_type = "cpu",
	.period_unit = "nanoseconds",
	.period = PERIOD,
	.time_nanos = TIME_NANOS,
	.duration_nanos = DURATION_NANOS,
};

static const struct {
	const char *file;
} mappings[] = {
	{"/usr/bin/api"},	   {"/usr/lib/libc.so.6"},
	{"/usr/bin/pg"},	   {"/opt/orphan.so"}, /* no sample reaches it */
	{"/usr/lib/libpg_ext.so"},
};

static const char *const functions[] = {
	"api_main",	 "handle_request", "pg_main", "exec_query", "__libc_start_call_main",
	"do_syscall_64", "orphan_fn", /* no sample reaches it */
	"worker_loop",
};

static const struct {
	uint32_t mapping;
	uint64_t address;
	uint32_t function; /* 0: unresolved */
	const char *label; /* its "[unknown] ..." label; NULL: none, pprof says "[unknown]" */
	enum frame_kind kind;
} locations[] = {
	{1, 0x1100, 1, NULL, FRAME_NATIVE},		   /* 1 api_main */
	{1, 0x1200, 2, NULL, FRAME_NATIVE},		   /* 2 handle_request */
	{3, 0x2100, 3, NULL, FRAME_NATIVE},		   /* 3 pg_main */
	{3, 0x2200, 4, NULL, FRAME_NATIVE},		   /* 4 exec_query */
	{2, 0x3100, 5, NULL, FRAME_NATIVE},		   /* 5 libc, in every service */
	{0, 0xffffffff81000100ULL, 6, NULL, FRAME_KERNEL}, /* 6 do_syscall_64 */
	{5, 0x42, 0, LIBPG_LABEL, FRAME_NATIVE},	   /* 7 */
	{4, 0x4100, 7, NULL, FRAME_NATIVE},		   /* 8 orphan */
	{1, 0x1300, 8, NULL, FRAME_NATIVE},		   /* 9 worker_loop */
	{0, 0x5000, 0, NULL, FRAME_NATIVE},		   /* 10 [unknown] */
};

static const uint32_t stack_api[] = {2, 1, 5};
static const uint32_t stack_worker[] = {9, 5};
static const uint32_t stack_query[] = {6, 4, 3, 5};
static const uint32_t stack_ext[] = {7, 3, 5};
static const uint32_t stack_lost[] = {10, 5};

static const struct {
	uint32_t pid;
	const char *service;
	const char *exe;
} processes[] = {
	{100, API, "api"},
	{101, API, "api-worker"},
	{200, DB, "pg"},
};

enum { SVC_API, SVC_DB, SVC_UNKNOWN, NR_SVC };

static const char *const services[NR_SVC] = {API, DB, "unknown_service"};

static const struct {
	const uint32_t *stack;
	size_t depth;
	uint32_t pid, tid;
	const char *comm;
	int64_t count;
	int svc;
	const char *names; /* leaf first */
} samples[] = {
	{stack_api, 3, 100, 100, "api", 3, SVC_API,
	 "handle_request;api_main;__libc_start_call_main"},
	{stack_worker, 2, 101, 101, "api-worker", 4, SVC_API, "worker_loop;__libc_start_call_main"},
	{stack_query, 4, 200, 200, "pg", 5, SVC_DB,
	 "do_syscall_64;exec_query;pg_main;__libc_start_call_main"},
	{stack_ext, 3, 200, 201, "pg", 2, SVC_DB, LIBPG_LABEL ";pg_main;__libc_start_call_main"},
	{stack_lost, 2, 300, 300, "lost", 1, SVC_UNKNOWN, "[unknown];__libc_start_call_main"},
};

/* The function names each service's pprof lists, sorted, ';'-joined. */
static const char *const service_functions[NR_SVC] = {
	[SVC_API] = "__libc_start_call_main;api_main;handle_request;worker_loop",
	[SVC_DB] = LIBPG_LABEL ";__libc_start_call_main;do_syscall_64;exec_query;pg_main",
	[SVC_UNKNOWN] = "[unknown];__libc_start_call_main",
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

	CHECK(p != NULL, "profile__new: %s", strerror(errno));
	if (!p)
		return NULL;
	for (size_t i = 0; i < NR(mappings); i++) {
		struct profile_mapping m = {
			.start = 0x400000 * (i + 1),
			.limit = 0x400000 * (i + 2),
			.filename = str(p, mappings[i].file),
			.has_functions = true,
		};

		CHECK_U64(profile__mapping(p, &m), i + 1);
	}
	for (size_t i = 0; i < NR(functions); i++) {
		struct profile_function f = {.name = str(p, functions[i])};

		f.system_name = f.name;
		CHECK_U64(profile__function(p, &f), i + 1);
	}
	for (size_t i = 0; i < NR(locations); i++) {
		struct profile_location l = {
			.mapping = locations[i].mapping,
			.address = locations[i].address,
			.function = locations[i].function,
			.kind = locations[i].kind,
		};

		if (locations[i].label)
			l.label = str(p, locations[i].label);
		CHECK_U64(profile__location(p, &l), i + 1);
	}
	for (size_t i = 0; i < NR(processes); i++) {
		struct profile_process proc = {
			.pid = processes[i].pid,
			.service_name = str(p, processes[i].service),
			.exe_name = str(p, processes[i].exe),
			.command_line = str(p, "secret --token=hunter2"), /* never in any pprof */
		};

		CHECK(profile__set_process(p, &proc) == 0, "set_process %u", proc.pid);
	}
	for (size_t i = 0; i < NR(samples); i++) {
		struct profile_labels lb = {.pid = samples[i].pid, .tid = samples[i].tid};
		int64_t idx = profile__stack(p, samples[i].stack, samples[i].depth);

		lb.comm = str(p, samples[i].comm);
		CHECK(idx > 0, "stack: %lld", (long long)idx);
		CHECK(profile__add_sample(p, (uint32_t)idx, &lb, samples[i].count * PERIOD,
					  samples[i].count) == 0,
		      "add");
	}
	return p;
}

/* --- helpers --- */

static int write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(buf, 1, len, f) != len)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* Runs cmd with `sh -c` and returns its stdout (its stderr is shown when it fails), or NULL. */
static char *run(const char *cmd)
{
	char *out = NULL;
	size_t size = 0, n;
	char buf[4096];
	FILE *f, *mem;
	int status;

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
		free(out);
		return NULL;
	}
	return out;
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

static Perftools__Profiles__Profile *decode_pprof(const uint8_t *gz, size_t len)
{
	Perftools__Profiles__Profile *pb;
	uint8_t *raw = NULL;
	size_t raw_len = 0;

	CHECK(len > 2 && gz[0] == 0x1f && gz[1] == 0x8b, "pprof is not gzipped");
	CHECK(gunzip(gz, len, &raw, &raw_len) == 0, "gunzip failed");
	if (!raw)
		return NULL;
	pb = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	free(raw);
	CHECK(pb != NULL, "protobuf-c cannot unpack the pprof");
	return pb;
}

static const char *S(const Perftools__Profiles__Profile *pb, int64_t idx)
{
	if (idx < 0 || (size_t)idx >= pb->n_string_table)
		return "(bad string index)";
	return pb->string_table[idx];
}

static void mark_string(bool *used, const Perftools__Profiles__Profile *pb, int64_t idx)
{
	CHECK(idx >= 0 && (size_t)idx < pb->n_string_table, "string index %lld out of range",
	      (long long)idx);
	if (idx >= 0 && (size_t)idx < pb->n_string_table)
		used[idx] = true;
}

/*
 * Every table entry must be reached from a sample (or, for strings, from any field): ids are
 * dense 1..n, each location is on a stack, each function on a location, each mapping under a
 * location, each string (but "") used. Returns the number of orphans found.
 */
static size_t count_orphans(const Perftools__Profiles__Profile *pb, const char *what, bool quiet)
{
	bool *str_used = calloc(pb->n_string_table + 1, sizeof(bool));
	bool *loc_used = calloc(pb->n_location + 1, sizeof(bool));
	bool *fn_used = calloc(pb->n_function + 1, sizeof(bool));
	bool *map_used = calloc(pb->n_mapping + 1, sizeof(bool));
	size_t orphans = 0;

	CHECK(str_used && loc_used && fn_used && map_used, "out of memory");
	if (!str_used || !loc_used || !fn_used || !map_used)
		goto out;
	for (size_t i = 0; i < pb->n_location; i++)
		CHECK_U64(pb->location[i]->id, i + 1);
	for (size_t i = 0; i < pb->n_function; i++)
		CHECK_U64(pb->function[i]->id, i + 1);
	for (size_t i = 0; i < pb->n_mapping; i++)
		CHECK_U64(pb->mapping[i]->id, i + 1);

	for (size_t i = 0; i < pb->n_sample_type; i++) {
		mark_string(str_used, pb, pb->sample_type[i]->type);
		mark_string(str_used, pb, pb->sample_type[i]->unit);
	}
	if (pb->period_type) {
		mark_string(str_used, pb, pb->period_type->type);
		mark_string(str_used, pb, pb->period_type->unit);
	}
	mark_string(str_used, pb, pb->default_sample_type);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];

		for (size_t j = 0; j < s->n_location_id; j++) {
			CHECK(s->location_id[j] >= 1 && s->location_id[j] <= pb->n_location,
			      "%s: sample location id %llu out of range", what,
			      (unsigned long long)s->location_id[j]);
			if (s->location_id[j] >= 1 && s->location_id[j] <= pb->n_location)
				loc_used[s->location_id[j]] = true;
		}
		for (size_t j = 0; j < s->n_label; j++) {
			mark_string(str_used, pb, s->label[j]->key);
			mark_string(str_used, pb, s->label[j]->str);
		}
	}
	for (size_t i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];

		if (!loc_used[i + 1])
			continue;
		if (l->mapping_id >= 1 && l->mapping_id <= pb->n_mapping)
			map_used[l->mapping_id] = true;
		CHECK(l->mapping_id <= pb->n_mapping, "%s: mapping id out of range", what);
		for (size_t j = 0; j < l->n_line; j++) {
			uint64_t f = l->line[j]->function_id;

			CHECK(f >= 1 && f <= pb->n_function, "%s: function id %llu out of range",
			      what, (unsigned long long)f);
			if (f >= 1 && f <= pb->n_function)
				fn_used[f] = true;
		}
	}
	for (size_t i = 0; i < pb->n_function; i++) {
		if (!fn_used[i + 1])
			continue;
		mark_string(str_used, pb, pb->function[i]->name);
		mark_string(str_used, pb, pb->function[i]->system_name);
		mark_string(str_used, pb, pb->function[i]->filename);
	}
	for (size_t i = 0; i < pb->n_mapping; i++) {
		if (!map_used[i + 1])
			continue;
		mark_string(str_used, pb, pb->mapping[i]->filename);
		mark_string(str_used, pb, pb->mapping[i]->build_id);
	}
	for (size_t i = 1; i <= pb->n_location; i++)
		orphans += !loc_used[i];
	for (size_t i = 1; i <= pb->n_function; i++)
		orphans += !fn_used[i];
	for (size_t i = 1; i <= pb->n_mapping; i++)
		orphans += !map_used[i];
	for (size_t i = 1; i < pb->n_string_table; i++) {
		if (!str_used[i] && !quiet)
			fprintf(stderr, "  %s: orphan string \"%s\"\n", what, pb->string_table[i]);
		orphans += !str_used[i];
	}
out:
	free(map_used);
	free(fn_used);
	free(loc_used);
	free(str_used);
	return orphans;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The decoded pprof's function names, sorted, ';'-joined, into buf. */
static void function_names(const Perftools__Profiles__Profile *pb, char *buf, size_t size)
{
	const char *names[32];
	size_t n = 0, off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < pb->n_function && n < NR(names); i++)
		names[n++] = S(pb, pb->function[i]->name);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n && off < size; i++)
		off += snprintf(buf + off, size - off, "%s%s", i ? ";" : "", names[i]);
}

/* The pprof of one service, decoded: its samples, exactly, and no orphans. */
static void check_service_pprof(const uint8_t *gz, size_t len, int svc)
{
	Perftools__Profiles__Profile *pb = decode_pprof(gz, len);
	size_t want = 0;
	char buf[512];

	if (!pb)
		return;
	for (size_t i = 0; i < NR(samples); i++)
		want += samples[i].svc == svc;
	CHECK_U64(pb->n_sample, want);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		int64_t pid = -1;

		for (size_t j = 0; j < s->n_label; j++) {
			if (strcmp(S(pb, s->label[j]->key), "pid") == 0)
				pid = s->label[j]->num;
		}
		for (size_t k = 0; k < NR(samples); k++) {
			if (samples[k].pid == pid)
				CHECK(samples[k].svc == svc, "pid %lld in service %s",
				      (long long)pid, services[svc]);
		}
	}
	function_names(pb, buf, sizeof(buf));
	CHECK_STR(buf, service_functions[svc]);
	CHECK_U64(count_orphans(pb, services[svc], false), 0);
	for (size_t i = 0; i < pb->n_string_table; i++)
		CHECK(!strstr(pb->string_table[i], "hunter2"), "the command line leaked");
	CHECK_U64(pb->period, PERIOD);
	CHECK_U64(pb->time_nanos, TIME_NANOS);
	CHECK_U64(pb->duration_nanos, DURATION_NANOS);
	perftools__profiles__profile__free_unpacked(pb, NULL);
}

/* --- go tool pprof --- */

static char *find_go(void)
{
	FILE *f = popen("command -v go 2>/dev/null", "r");
	char line[4096] = "";

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

static char *go;

/*
 * `go tool pprof -raw` on one service's pprof: the samples it lists (count, then the names of
 * their locations, leaf first) must be exactly that service's, found by their tid labels.
 */
static void check_pprof_raw(const uint8_t *gz, size_t len, int svc, const char *name)
{
	struct {
		unsigned id;
		char name[128];
	} locs[32];
	struct {
		long long count;
		unsigned ids[16];
		size_t depth;
		long long tid;
	} got[16];
	size_t nr_locs = 0, nr_got = 0, want = 0;
	char *path = NULL, *cmd = NULL, *out, *line, *save = NULL;
	enum { HEAD, SAMPLES, LOCATIONS, MAPPINGS } section = HEAD;

	if (!go) {
		CHECK(go != NULL, "go not found: install golang-go for `go tool pprof`");
		return;
	}
	if (asprintf(&path, "%s/%s.pb.gz", tmpdir, name) < 0)
		return;
	CHECK(write_file(path, gz, len) == 0, "write %s", path);
	/* GOCACHE and HOME come from tests/run-unit.sh; default them for a bare run. */
	if (asprintf(&cmd,
		     "cd '%s' && GOCACHE=\"${GOCACHE:-%s/gocache}\" HOME=\"${HOME:-%s}\" "
		     "'%s' tool pprof -raw '%s'",
		     tmpdir, tmpdir, tmpdir, go, path) < 0) {
		free(path);
		return;
	}
	out = run(cmd);
	free(cmd);
	free(path);
	if (!out)
		return;
	memset(got, 0, sizeof(got));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long count, value, tid;
		unsigned id;
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
		if (section == SAMPLES &&
		    sscanf(line, " %lld %lld: %n", &count, &value, &off) == 2 && off &&
		    nr_got < NR(got)) {
			char *p = line + off, *e;

			got[nr_got].count = count;
			got[nr_got].tid = -1;
			while (got[nr_got].depth < NR(got[0].ids)) {
				unsigned long v = strtoul(p, &e, 10);

				if (e == p)
					break;
				got[nr_got].ids[got[nr_got].depth++] = (unsigned)v;
				p = e;
			}
			nr_got++;
		} else if (section == SAMPLES && nr_got && strstr(line, "tid:[")) {
			if (sscanf(strstr(line, "tid:["), "tid:[%lld]", &tid) == 1)
				got[nr_got - 1].tid = tid;
		} else if (section == LOCATIONS && nr_locs < NR(locs) &&
			   sscanf(line, " %u: %*s %n", &id, &off) == 1 && off) {
			char *rest = line + off, *end;

			/* "M=2 name file:line s=0": drop the mapping, then " s=0" and " file:0". */
			if (strncmp(rest, "M=", 2) == 0)
				rest = strchr(rest, ' ') ? strchr(rest, ' ') + 1 : rest;
			for (int i = 0; i < 2; i++) {
				end = strrchr(rest, ' ');
				if (end)
					*end = '\0';
			}
			locs[nr_locs].id = id;
			snprintf(locs[nr_locs].name, sizeof(locs[0].name), "%s", rest);
			nr_locs++;
		}
	}

	for (size_t i = 0; i < NR(samples); i++)
		want += samples[i].svc == svc;
	CHECK(nr_got == want, "pprof -raw of %s: %zu samples, want %zu", services[svc], nr_got,
	      want);
	for (size_t i = 0; i < NR(samples); i++) {
		char names[512] = "";
		size_t g, off = 0;

		if (samples[i].svc != svc)
			continue;
		for (g = 0; g < nr_got && got[g].tid != samples[i].tid; g++)
			;
		CHECK(g < nr_got, "pprof -raw of %s: no sample with tid %u", services[svc],
		      samples[i].tid);
		if (g == nr_got)
			continue;
		CHECK_U64(got[g].count, samples[i].count);
		for (size_t j = 0; j < got[g].depth; j++) {
			const char *n = "(no such location)";

			for (size_t k = 0; k < nr_locs; k++) {
				if (locs[k].id == got[g].ids[j])
					n = locs[k].name;
			}
			off += snprintf(names + off, sizeof(names) - off, "%s%s", j ? ";" : "", n);
		}
		CHECK_STR(names, samples[i].names);
	}
	free(out);
}

/* --- protoc --- */

static const char *proto_type(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		return "string";
	case PROTOBUF_C_TYPE_BYTES:
		return "bytes";
	case PROTOBUF_C_TYPE_INT64:
		return "int64";
	case PROTOBUF_C_TYPE_UINT64:
		return "uint64";
	case PROTOBUF_C_TYPE_BOOL:
		return "bool";
	default:
		return NULL;
	}
}

/* One message of a .proto, as protobuf-c compiled it. */
static void write_message(FILE *f, const ProtobufCMessageDescriptor *m)
{
	fprintf(f, "message %s {\n", m->short_name);
	for (unsigned i = 0; i < m->n_fields; i++) {
		const ProtobufCFieldDescriptor *fd = &m->fields[i];
		const char *label = fd->label == PROTOBUF_C_LABEL_REPEATED ? "repeated " : "";

		if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
			fprintf(f, "\t%s.%s %s = %u;\n", label,
				((const ProtobufCMessageDescriptor *)fd->descriptor)->name,
				fd->name, fd->id);
		else
			fprintf(f, "\t%s%s %s = %u;\n", label, proto_type(fd), fd->name, fd->id);
	}
	fprintf(f, "}\n");
}

/*
 * The proto_path for `protoc --decode`: the checkout's proto/ when the test runs from there,
 * else (tests/run-unit.sh runs the tests as 'nobody' from a copy without the sources) the same
 * schema written out of the descriptors compiled into this binary from proto/.
 */
static char *proto_path(void)
{
	static const ProtobufCMessageDescriptor *const push[] = {
		&push__v1__push_request__descriptor,	   &push__v1__push_response__descriptor,
		&push__v1__raw_profile_series__descriptor, &push__v1__raw_sample__descriptor,
		&push__v1__profile_annotation__descriptor,
	};
	char *dir = NULL, *file = NULL;
	FILE *f;

	if (access("proto/push/v1/push.proto", R_OK) == 0 &&
	    access("proto/types/v1/types.proto", R_OK) == 0)
		return strdup("proto");
	if (asprintf(&dir, "%s/proto", tmpdir) < 0)
		return NULL;
	if (asprintf(&file, "mkdir -p '%s/push/v1' '%s/types/v1'", dir, dir) < 0 || system(file))
		goto fail;
	free(file);
	file = NULL;
	if (asprintf(&file, "%s/types/v1/types.proto", dir) < 0 || !(f = fopen(file, "w")))
		goto fail;
	fprintf(f, "syntax = \"proto3\";\npackage types.v1;\n");
	write_message(f, &types__v1__label_pair__descriptor);
	fclose(f);
	free(file);
	file = NULL;
	if (asprintf(&file, "%s/push/v1/push.proto", dir) < 0 || !(f = fopen(file, "w")))
		goto fail;
	fprintf(f, "syntax = \"proto3\";\npackage push.v1;\nimport \"types/v1/types.proto\";\n");
	for (size_t i = 0; i < NR(push); i++)
		write_message(f, push[i]);
	fclose(f);
	free(file);
	printf("note: no proto/ here, protoc decodes with the compiled-in schema\n");
	return dir;
fail:
	free(file);
	free(dir);
	return NULL;
}

static size_t count_substr(const char *s, const char *sub)
{
	size_t n = 0;

	for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub))
		n++;
	return n;
}

static void check_protoc_decode(const uint8_t *buf, size_t len)
{
	char *path = NULL, *cmd = NULL, *dir = proto_path(), *text;

	CHECK(dir != NULL, "no proto path");
	if (!dir || asprintf(&path, "%s/push.bin", tmpdir) < 0) {
		free(dir);
		return;
	}
	CHECK(write_file(path, buf, len) == 0, "write %s", path);
	if (asprintf(&cmd,
		     "protoc --decode=push.v1.PushRequest --proto_path='%s' push/v1/push.proto "
		     "<'%s'",
		     dir, path) < 0)
		cmd = NULL;
	text = cmd ? run(cmd) : NULL;
	if (text) {
		CHECK_U64(count_substr(text, "series {"), NR_SVC);
		CHECK_U64(count_substr(text, "samples {"), NR_SVC);
		CHECK_U64(count_substr(text, "raw_profile: "), NR_SVC);
		CHECK_U64(count_substr(text, "ID: \""), NR_SVC);
		CHECK_U64(count_substr(text, "name: \"__name__\"\n    value: \"process_cpu\""),
			  NR_SVC);
		CHECK_U64(count_substr(text, "name: \"pyroscope_spy\"\n    value: \"hostprof\""),
			  NR_SVC);
		CHECK_U64(count_substr(text, "name: \"service_name\""), NR_SVC);
		CHECK(strstr(text, "value: \"" API "\""), "no service %s in:\n%s", API, text);
		/* protoc prints non-ASCII bytes as octal escapes. */
		CHECK(strstr(text, "value: \"db/writer \\303\\274\""), "no service %s in:\n%s", DB,
		      text);
		CHECK(strstr(text, "value: \"unknown_service\""), "no unknown_service in:\n%s",
		      text);
		CHECK(!strstr(text, "annotations"), "annotations sent");
	}
	free(text);
	free(cmd);
	free(path);
	free(dir);
}

/* --- push --- */

static bool looks_like_uuid_v4(const char *s)
{
	if (!s || strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return false;
		}
	}
	return s[14] == '4' && strchr("89ab", s[19]);
}

static const char *label(const Push__V1__RawProfileSeries *s, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++) {
		if (strcmp(s->labels[i]->name, name) == 0)
			return s->labels[i]->value;
	}
	return NULL;
}

static void test_push(const struct profile *p)
{
	Push__V1__PushRequest *req;
	uint8_t *buf = NULL;
	size_t len = 0;
	const char *ids[NR_SVC] = {0};
	bool seen[NR_SVC] = {0};
	int err;

	err = enc_pyroscope__push(p, "process_cpu", &buf, &len);
	CHECK(err == 0, "push: %s", strerror(-err));
	if (err)
		return;
	check_protoc_decode(buf, len);

	req = push__v1__push_request__unpack(NULL, len, buf);
	CHECK(req != NULL, "protobuf-c cannot unpack the PushRequest");
	if (!req)
		goto out;
	CHECK_U64(req->n_series, NR_SVC);
	for (size_t i = 0; i < req->n_series; i++) {
		const Push__V1__RawProfileSeries *s = req->series[i];
		const char *svc_name = label(s, "service_name");
		int svc = -1;

		for (int k = 0; k < NR_SVC; k++) {
			if (svc_name && strcmp(svc_name, services[k]) == 0)
				svc = k;
		}
		CHECK(svc >= 0, "series %zu: service_name %s", i, svc_name ? svc_name : "(none)");
		if (svc < 0)
			continue;
		CHECK(!seen[svc], "two series for %s", services[svc]);
		seen[svc] = true;
		/* The series come in the order the process table saw the services. */
		CHECK_U64(svc, i);
		CHECK_U64(s->n_labels, 3);
		CHECK_STR(label(s, "__name__"), "process_cpu");
		CHECK_STR(label(s, "pyroscope_spy"), "hostprof");
		for (size_t k = 1; k < s->n_labels; k++)
			CHECK(strcmp(s->labels[k - 1]->name, s->labels[k]->name) < 0,
			      "labels not sorted");
		CHECK_U64(s->n_annotations, 0);
		CHECK_U64(s->n_samples, 1);
		if (s->n_samples != 1)
			continue;
		ids[svc] = s->samples[0]->id;
		CHECK(looks_like_uuid_v4(ids[svc]), "ID \"%s\" is no UUID v4", ids[svc]);
		check_service_pprof(s->samples[0]->raw_profile.data, s->samples[0]->raw_profile.len,
				    svc);
		check_pprof_raw(s->samples[0]->raw_profile.data, s->samples[0]->raw_profile.len,
				svc,
				svc == SVC_API	? "push-api"
				: svc == SVC_DB ? "push-db"
						: "push-unknown");
	}
	for (int a = 0; a < NR_SVC; a++) {
		for (int b = a + 1; b < NR_SVC; b++)
			CHECK(ids[a] && ids[b] && strcmp(ids[a], ids[b]) != 0, "IDs repeat");
	}
	push__v1__push_request__free_unpacked(req, NULL);
out:
	free(buf);
}

/* Extra labels: sanitized names, sorted in; reserved or repeated names refused. */
static void test_push_labels(const struct profile *p)
{
	const struct pyroscope_label good[] = {
		{"env-name", "prod"},
		{"1zone", "eu \xff"}, /* not UTF-8: the Go server would refuse the request */
	};
	const struct pyroscope_label reserved[] = {{"__delta__", "false"}};
	const struct pyroscope_label own[] = {{"service.name", "x"}};
	const struct pyroscope_label twice[] = {{"a-b", "1"}, {"a.b", "2"}};
	const struct pyroscope_label empty[] = {{"", "1"}};
	Push__V1__PushRequest *req;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	err = enc_pyroscope__push_labels(p, "process-cpu.v2", good, NR(good), &buf, &len);
	CHECK(err == 0, "push_labels: %s", strerror(-err));
	req = err ? NULL : push__v1__push_request__unpack(NULL, len, buf);
	CHECK(err || req, "cannot unpack");
	if (req && req->n_series) {
		const Push__V1__RawProfileSeries *s = req->series[0];

		CHECK_U64(s->n_labels, 5);
		CHECK_STR(label(s, "env_name"), "prod");
		CHECK_STR(label(s, "_1zone"), "eu _");
		CHECK_STR(label(s, "__name__"), "process_cpu_v2");
		for (size_t k = 1; k < s->n_labels; k++)
			CHECK(strcmp(s->labels[k - 1]->name, s->labels[k]->name) < 0,
			      "labels not sorted: %s, %s", s->labels[k - 1]->name,
			      s->labels[k]->name);
	}
	if (req)
		push__v1__push_request__free_unpacked(req, NULL);
	free(buf);

	buf = NULL;
	CHECK(enc_pyroscope__push_labels(p, "process_cpu", reserved, 1, &buf, &len) == -EINVAL,
	      "reserved name accepted");
	CHECK(enc_pyroscope__push_labels(p, "process_cpu", own, 1, &buf, &len) == -EINVAL,
	      "service.name accepted");
	CHECK(enc_pyroscope__push_labels(p, "process_cpu", twice, 2, &buf, &len) == -EINVAL,
	      "a name twice accepted");
	CHECK(enc_pyroscope__push_labels(p, "process_cpu", empty, 1, &buf, &len) == -EINVAL,
	      "empty name accepted");
	CHECK(enc_pyroscope__push(NULL, "process_cpu", &buf, &len) == -EINVAL, "NULL profile");
	CHECK(enc_pyroscope__push(p, NULL, &buf, &len) == -EINVAL, "NULL name");
	CHECK(enc_pyroscope__push(p, "", &buf, &len) == -EINVAL, "empty name");
	CHECK(buf == NULL, "output set on error");
}

/* Edge cases: nothing to send, and a service really named "unknown_service". */
static void test_push_edges(void)
{
	struct profile *p = profile__new(&desc);
	struct profile_process proc = {.pid = 1};
	struct profile_labels lb = {.pid = 1, .tid = 1};
	struct export_payload *pl = (void *)1;
	Push__V1__PushRequest *req;
	uint32_t loc = 1;
	struct profile_location l = {.address = 0x10};
	uint8_t *buf = NULL;
	size_t len = 0, n = 1;
	int64_t stack;

	CHECK(p != NULL, "profile__new");
	if (!p)
		return;
	CHECK(enc_pyroscope__push(p, "process_cpu", &buf, &len) == 0, "empty push");
	req = buf ? push__v1__push_request__unpack(NULL, len, buf) : NULL;
	CHECK(req && req->n_series == 0, "empty profile: series sent");
	if (req)
		push__v1__push_request__free_unpacked(req, NULL);
	free(buf);
	buf = NULL;
	CHECK(enc_pyroscope__ingest(p, "hostprof", &pl, &n) == 0, "empty ingest");
	CHECK(pl == NULL && n == 0, "empty profile: payloads made");

	proc.service_name = str(p, "unknown_service");
	CHECK(profile__set_process(p, &proc) == 0, "set_process");
	CHECK_U64(profile__location(p, &l), loc);
	stack = profile__stack(p, &loc, 1);
	CHECK(stack > 0 && profile__add_sample(p, (uint32_t)stack, &lb, PERIOD, 1) == 0, "add");
	lb.pid = lb.tid = 2; /* no process entry */
	CHECK(stack > 0 && profile__add_sample(p, (uint32_t)stack, &lb, PERIOD, 1) == 0, "add");
	CHECK(enc_pyroscope__push(p, "process_cpu", &buf, &len) == 0, "push");
	req = buf ? push__v1__push_request__unpack(NULL, len, buf) : NULL;
	CHECK(req && req->n_series == 1, "the unknown samples and unknown_service are not one");
	if (req && req->n_series == 1 && req->series[0]->n_samples == 1) {
		Perftools__Profiles__Profile *pb =
			decode_pprof(req->series[0]->samples[0]->raw_profile.data,
				     req->series[0]->samples[0]->raw_profile.len);

		CHECK(pb && pb->n_sample == 2, "unknown_service: not both samples");
		if (pb)
			perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	if (req)
		push__v1__push_request__free_unpacked(req, NULL);
	free(buf);
	profile__delete(p);
}

/* --- ingest --- */

static void test_ingest(const struct profile *p)
{
	/* '{' '=' '}' '/' and the UTF-8 bytes are percent-encoded; the space became '_'. */
	static const char *const want_app[NR_SVC] = {
		"name=hostprof.cpu%7Bservice_name%3Dcheckout-api%7D",
		"name=hostprof.cpu%7Bservice_name%3Ddb%2Fwriter_%C3%BC%7D",
		"name=hostprof.cpu%7Bservice_name%3Dunknown_service%7D",
	};
	/* Without an app name each service is its own application. */
	static const char *const want_svc[NR_SVC] = {
		"name=checkout-api.cpu%7Bservice_name%3Dcheckout-api%7D",
		"name=db%2Fwriter___.cpu%7Bservice_name%3Ddb%2Fwriter_%C3%BC%7D",
		"name=unknown_service.cpu%7Bservice_name%3Dunknown_service%7D",
	};
	static const char rest[] =
		"&from=1700000000&until=1700000011&format=pprof&sampleRate=100&spyName=hostprof";

	for (int round = 0; round < 2; round++) {
		struct export_payload *pl = NULL;
		size_t n = 0;
		int err = enc_pyroscope__ingest(p, round ? NULL : "hostprof", &pl, &n);

		CHECK(err == 0, "ingest: %s", strerror(-err));
		if (err)
			continue;
		CHECK_U64(n, NR_SVC);
		for (size_t i = 0; i < n && i < NR_SVC; i++) {
			char want[512], file[32];

			snprintf(want, sizeof(want), "%s%s", round ? want_svc[i] : want_app[i],
				 rest);
			CHECK_STR(pl[i].query, want);
			CHECK(pl[i].what && strstr(pl[i].what, "cpu profile of service"),
			      "what: %s", pl[i].what ? pl[i].what : "(null)");
			CHECK(pl[i].body && pl[i].len, "no body");
			if (!pl[i].body)
				continue;
			check_service_pprof(pl[i].body, pl[i].len, (int)i);
			if (round == 0) {
				snprintf(file, sizeof(file), "ingest-%zu", i);
				check_pprof_raw(pl[i].body, pl[i].len, (int)i, file);
			}
		}
		if (n)
			CHECK(strstr(pl[0].what, "2 processes, 2 samples, 10 s"), "what: %s",
			      pl[0].what);
		enc_pyroscope__free_payloads(pl, n);
	}
	CHECK(enc_pyroscope__ingest(NULL, "x", NULL, NULL) == -EINVAL, "NULL accepted");
}

/* --- the filtered pprof encoder --- */

static bool keep_pid(const struct profile_sample *s, void *ctx)
{
	return s->labels.pid == *(const uint32_t *)ctx;
}

static bool keep_all(const struct profile_sample *s, void *ctx)
{
	return true;
}

static bool keep_none(const struct profile_sample *s, void *ctx)
{
	return false;
}

static int read_whole(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long size;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	*buf = malloc(size ? size : 1);
	*len = *buf ? fread(*buf, 1, size, f) : 0;
	fclose(f);
	return *buf && *len == (size_t)size ? 0 : -EIO;
}

static void test_filtered_pprof(const struct profile *p)
{
	Perftools__Profiles__Profile *pb;
	uint8_t *buf = NULL, *file = NULL;
	size_t len = 0, file_len = 0;
	uint32_t pid = 200;
	char *path = NULL, names[512];
	int err;

	/* No filter: the whole model, orphans included, byte for byte what the file gets. */
	err = enc_pprof__encode(p, NULL, NULL, &buf, &len);
	CHECK(err == 0, "encode: %s", strerror(-err));
	if (asprintf(&path, "%s/whole.pb.gz", tmpdir) >= 0) {
		CHECK(enc_pprof__write(p, path) == 0, "write");
		CHECK(read_whole(path, &file, &file_len) == 0, "read %s", path);
		CHECK(buf && file && len == file_len && memcmp(buf, file, len) == 0,
		      "enc_pprof__encode(NULL) and enc_pprof__write differ");
		free(path);
	}
	free(file);
	pb = buf ? decode_pprof(buf, len) : NULL;
	if (pb) {
		CHECK_U64(pb->n_sample, NR(samples));
		CHECK_U64(pb->n_location, NR(locations));
		CHECK_U64(pb->n_mapping, NR(mappings));
		/* Two synthetic functions: the libpg_ext label and "[unknown]". */
		CHECK_U64(pb->n_function, NR(functions) + 2);
		/* orphan_fn, its location and its mapping; the command line and the exe
		 * names ("api" stays: it is the samples' comm) are unused strings. */
		CHECK(count_orphans(pb, "whole", true) > 3, "whole profile lost its orphans");
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	free(buf);

	/* Every sample, but only what they reach. */
	buf = NULL;
	err = enc_pprof__encode(p, keep_all, NULL, &buf, &len);
	CHECK(err == 0, "encode: %s", strerror(-err));
	pb = buf ? decode_pprof(buf, len) : NULL;
	if (pb) {
		CHECK_U64(pb->n_sample, NR(samples));
		CHECK_U64(pb->n_location, NR(locations) - 1);
		CHECK_U64(pb->n_mapping, NR(mappings) - 1);
		CHECK_U64(pb->n_function, NR(functions) - 1 + 2);
		CHECK_U64(count_orphans(pb, "keep_all", false), 0);
		function_names(pb, names, sizeof(names));
		CHECK(!strstr(names, "orphan_fn"), "orphan_fn emitted: %s", names);
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	free(buf);

	/* One pid: its samples, renumbered, with mapping, function and location ids dense. */
	buf = NULL;
	err = enc_pprof__encode(p, keep_pid, &pid, &buf, &len);
	CHECK(err == 0, "encode: %s", strerror(-err));
	pb = buf ? decode_pprof(buf, len) : NULL;
	if (pb) {
		CHECK_U64(pb->n_sample, 2);
		/* pg_main, exec_query, libc, do_syscall_64, the libpg_ext frame. */
		CHECK_U64(pb->n_location, 5);
		/* pg, libc, libpg_ext: the kernel frame keeps no mapping. */
		CHECK_U64(pb->n_mapping, 3);
		CHECK_U64(pb->n_function, 5);
		CHECK_U64(count_orphans(pb, "pid 200", false), 0);
		function_names(pb, names, sizeof(names));
		CHECK_STR(names, service_functions[SVC_DB]);
		for (size_t i = 0; i < pb->n_location; i++) {
			if (pb->location[i]->address == 0xffffffff81000100ULL)
				CHECK_U64(pb->location[i]->mapping_id, 0);
			if (pb->location[i]->address == 0x2100 && pb->location[i]->mapping_id &&
			    pb->location[i]->mapping_id <= pb->n_mapping)
				CHECK_STR(S(pb,
					    pb->mapping[pb->location[i]->mapping_id - 1]->filename),
					  "/usr/bin/pg");
		}
		CHECK_STR(S(pb, pb->default_sample_type), "cpu");
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	free(buf);

	/* Nothing kept: a valid profile with the header alone. */
	buf = NULL;
	err = enc_pprof__encode(p, keep_none, NULL, &buf, &len);
	CHECK(err == 0, "encode: %s", strerror(-err));
	pb = buf ? decode_pprof(buf, len) : NULL;
	if (pb) {
		CHECK(pb->n_sample == 0 && pb->n_location == 0 && pb->n_function == 0 &&
			      pb->n_mapping == 0,
		      "empty selection has entries");
		CHECK_U64(pb->n_sample_type, 2);
		CHECK_U64(pb->period, PERIOD);
		/* Not even the label keys: no sample carries a label. */
		CHECK_U64(count_orphans(pb, "keep_none", false), 0);
		CHECK_U64(pb->n_string_table, 5); /* "", samples, count, cpu, nanoseconds */
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	free(buf);
	CHECK(enc_pprof__encode(NULL, NULL, NULL, &buf, &len) == -EINVAL, "NULL profile");
	CHECK(enc_pprof__encode(p, NULL, NULL, NULL, &len) == -EINVAL, "NULL out");
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	struct profile *p;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	go = find_go();
	p = build_profile();
	if (p) {
		test_filtered_pprof(p);
		test_push(p);
		test_push_labels(p);
		test_ingest(p);
		profile__delete(p);
	}
	test_push_edges();
	free(go);
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return check_summary("test_enc_pyroscope");
}

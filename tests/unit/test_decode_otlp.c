// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTLP decoder: models -> enc_otlp -> dec_otlp give back the same samples (stacks leaf first,
 * labels, values, counts), process entries and descriptions; folded -> OTLP file -> folded is the
 * identity; broken, truncated and bit-flipped requests are refused without a crash.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "formats/decode.h"
#include "formats/encode.h"
#include "model/profile.h"

#define PERIOD 10000000LL

static char tmpdir[] = "/tmp/hostprof-test-decode-otlp-XXXXXX";

static uint32_t s_(struct profile *p, const char *s)
{
	int64_t idx = profile__string(p, s);

	CHECK(idx >= 0, "string \"%s\"", s);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static uint32_t func(struct profile *p, const char *name)
{
	struct profile_function f = {.name = s_(p, name), .filename = s_(p, "src/app.c")};
	int64_t idx;

	f.system_name = f.name;
	idx = profile__function(p, &f);
	CHECK(idx > 0, "function %s", name);
	return idx > 0 ? (uint32_t)idx : 0;
}

static uint32_t loc(struct profile *p, uint32_t mapping, uint64_t addr, const char *fn,
		    enum frame_kind kind)
{
	struct profile_location l = {.mapping = mapping, .address = addr, .kind = kind};
	int64_t idx;

	l.function = func(p, fn);
	idx = profile__location(p, &l);
	CHECK(idx > 0, "location %s", fn);
	return idx > 0 ? (uint32_t)idx : 0;
}

static void add(struct profile *p, const uint32_t *locs, size_t n, uint32_t pid, uint32_t tid,
		const char *comm, const char *state, const char *wait_kind, uint64_t wait_addr,
		int64_t value, int64_t count)
{
	struct profile_labels lb = {.pid = pid, .tid = tid, .wait_addr = wait_addr};
	int64_t st = profile__stack(p, locs, n);

	CHECK(st >= 0, "stack");
	lb.comm = s_(p, comm);
	lb.thread_name = s_(p, comm);
	if (state)
		lb.thread_state = s_(p, state);
	if (wait_kind)
		lb.wait_kind = s_(p, wait_kind);
	CHECK(profile__add_sample(p, st < 0 ? 0 : (uint32_t)st, &lb, value, count) == 0,
	      "add_sample");
}

static void procs(struct profile *p)
{
	struct profile_process a = {.pid = 100}, b = {.pid = 200};

	a.service_name = s_(p, "app-svc");
	a.exe_name = s_(p, "app");
	a.exe_path = s_(p, "/usr/bin/app");
	a.command_line = s_(p, "/usr/bin/app --serve");
	a.container_id = s_(p, "c0ffee");
	b.service_name = s_(p, "worker");
	b.exe_name = s_(p, "worker");
	CHECK(profile__set_process(p, &a) == 0, "process 100");
	CHECK(profile__set_process(p, &b) == 0, "process 200");
}

/* Stacks and frames shared by the three profiles below. */
static void frames(struct profile *p, uint32_t l[6])
{
	struct profile_mapping m = {.start = 0x1000, .limit = 0x100000, .offset = 0x1000};
	struct profile_location il = {.address = 0x1500};
	struct profile_line lines[2];
	int64_t map, idx;

	m.filename = s_(p, "/usr/bin/app");
	m.build_id = s_(p, "0123456789abcdef");
	m.htlhash = s_(p, "00112233445566778899aabbccddeeff");
	m.has_functions = true;
	map = profile__mapping(p, &m);
	CHECK(map > 0, "mapping");
	l[0] = loc(p, (uint32_t)map, 0x1100, "main", FRAME_NATIVE);
	l[1] = loc(p, (uint32_t)map, 0x1200, "ns::work(int)", FRAME_NATIVE);
	l[2] = loc(p, 0, 0xffffffff81000000ULL, "do_syscall_64", FRAME_KERNEL);
	l[3] = loc(p, 0, 0x7f0000001000ULL, "LazyCompile:*handler app.js:10", FRAME_JIT_V8);
	/* An inlined helper inside ns::work: two lines, innermost first. */
	il.mapping = (uint32_t)map;
	lines[0] = (struct profile_line){.function = func(p, "helper"), .line = 12};
	lines[1] = (struct profile_line){.function = func(p, "ns::work(int)"), .line = 40};
	il.function = lines[0].function;
	idx = profile__location_with_lines(p, &il, lines, 2);
	CHECK(idx > 0, "inline location");
	l[4] = idx > 0 ? (uint32_t)idx : 0;
	l[5] = loc(p, 0, 0xffffffff81001000ULL, "futex_wait", FRAME_KERNEL);
}

static struct profile *build(const char *type, const char *unit)
{
	struct profile_desc d = {.sample_type = type,
				 .sample_unit = unit,
				 .period_type = "cpu",
				 .period_unit = "nanoseconds",
				 .period = PERIOD};
	struct profile *p = profile__new(&d);
	uint32_t l[6];

	if (!p)
		return NULL;
	profile__set_window(p, 1700000000000000000ULL, 5000000000ULL);
	procs(p);
	frames(p, l);
	if (!strcmp(type, "cpu")) {
		add(p, (uint32_t[]){l[2], l[1], l[0]}, 3, 100, 100, "app", NULL, NULL, 0,
		    2 * PERIOD, 2);
		add(p, (uint32_t[]){l[4], l[0]}, 2, 100, 101, "app", NULL, NULL, 0, 5 * PERIOD, 5);
		add(p, (uint32_t[]){l[3], l[0]}, 2, 200, 200, "worker", NULL, NULL, 0, 7 * PERIOD,
		    7);
	} else if (!strcmp(type, "wall")) {
		add(p, (uint32_t[]){l[2], l[1], l[0]}, 3, 100, 100, "app", "sleeping", NULL, 0,
		    123456, 1);
		add(p, (uint32_t[]){l[1], l[0]}, 2, 200, 201, "worker", "running", NULL, 0, 999, 1);
	} else {
		add(p, (uint32_t[]){l[5], l[1], l[0]}, 3, 100, 100, "app", NULL, "futex_wait",
		    0x7ffd1000, 50000, 4);
		add(p, (uint32_t[]){l[5], l[0]}, 2, 200, 200, "worker", NULL, "mutex",
		    0xffff888001234000ULL, 7000, 3);
	}
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *S(const struct profile *p, uint32_t idx)
{
	const char *s = profile__string_at(p, idx);

	return s ? s : "";
}

/* Each sample as one line: labels, frames leaf first, value and count; sorted. */
static char **sample_lines(const struct profile *p, size_t *n, int64_t *total)
{
	size_t nr = profile__nr_samples(p) - 1;
	char **out = calloc(nr + 1, sizeof(*out));

	*n = nr;
	*total = 0;
	for (size_t i = 0; out && i < nr; i++) {
		const struct profile_sample *s = profile__sample_at(p, i + 1);
		char buf[2048];
		size_t depth, len;
		const uint32_t *st = profile__stack_at(p, s->stack, &depth);

		len = (size_t)snprintf(buf, sizeof(buf), "%u/%u/%s/%s/%s/%s/%llx:", s->labels.pid,
				       s->labels.tid, S(p, s->labels.comm),
				       S(p, s->labels.thread_name), S(p, s->labels.thread_state),
				       S(p, s->labels.wait_kind),
				       (unsigned long long)s->labels.wait_addr);
		for (size_t k = 0; k < depth && len < sizeof(buf); k++) {
			const struct profile_location *l = profile__location_at(p, st[k]);
			size_t nl;

			profile__location_lines(p, st[k], &nl);
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s[%d,%zu];",
						profile__location_name(p, st[k]),
						l ? (int)l->kind : -1, nl);
		}
		if (len < sizeof(buf))
			snprintf(buf + len, sizeof(buf) - len, " %lld %lld", (long long)s->value,
				 (long long)s->count);
		out[i] = strdup(buf);
		*total += s->value;
	}
	if (out)
		qsort(out, nr, sizeof(*out), cmp_str);
	return out;
}

static void free_lines(char **l, size_t n)
{
	for (size_t i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}

static void check_same(const struct profile *a, const struct profile *b)
{
	const struct profile_desc *da = profile__desc(a), *db = profile__desc(b);
	size_t na, nb;
	int64_t ta, tb;
	char **la = sample_lines(a, &na, &ta), **lb = sample_lines(b, &nb, &tb);

	CHECK_STR(db->sample_type, da->sample_type);
	CHECK_STR(db->sample_unit, da->sample_unit);
	CHECK_STR(db->period_type, da->period_type);
	CHECK_STR(db->period_unit, da->period_unit);
	CHECK_U64(db->period, da->period);
	CHECK_U64(db->time_nanos, da->time_nanos);
	CHECK_U64(db->duration_nanos, da->duration_nanos);
	CHECK_U64(nb, na);
	CHECK_U64(tb, ta);
	for (size_t i = 0; la && lb && i < na && i < nb; i++)
		CHECK_STR(lb[i], la[i]);
	free_lines(la, na);
	free_lines(lb, nb);

	CHECK_U64(profile__nr_processes(b), profile__nr_processes(a));
	for (size_t i = 0; i < profile__nr_processes(a); i++) {
		const struct profile_process *pa = profile__process_at(a, i);
		const struct profile_process *pb = profile__find_process(b, pa->pid);

		CHECK(pb != NULL, "process %u decoded", pa->pid);
		if (!pb)
			continue;
		CHECK_STR(S(b, pb->service_name), S(a, pa->service_name));
		CHECK_STR(S(b, pb->exe_name), S(a, pa->exe_name));
		CHECK_STR(S(b, pb->exe_path), S(a, pa->exe_path));
		CHECK_STR(S(b, pb->command_line), S(a, pa->command_line));
		CHECK_STR(S(b, pb->container_id), S(a, pa->container_id));
	}
	/* The mapping and its file ids. */
	for (size_t i = 1; i < profile__nr_mappings(a); i++) {
		const struct profile_mapping *ma = profile__mapping_at(a, (uint32_t)i);
		bool found = false;

		for (size_t j = 1; j < profile__nr_mappings(b); j++) {
			const struct profile_mapping *mb = profile__mapping_at(b, (uint32_t)j);

			found |= mb->start == ma->start && mb->limit == ma->limit &&
				 mb->offset == ma->offset &&
				 !strcmp(S(b, mb->filename), S(a, ma->filename)) &&
				 !strcmp(S(b, mb->build_id), S(a, ma->build_id)) &&
				 !strcmp(S(b, mb->htlhash), S(a, ma->htlhash));
		}
		CHECK(found, "mapping %zu decoded with its build ids", i);
	}
}

static const struct profile *by_type(struct profile **ps, size_t n, const char *type)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(profile__desc(ps[i])->sample_type, type))
			return ps[i];
	}
	return NULL;
}

/* Truncations and bit flips of a real request: refused with a message naming the input, or
 * decoded; never a crash (this test also runs under ASan in `make check`). */
static void test_fuzz_buf(const uint8_t *buf, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	size_t refused = 0, step = len / 400 + 1;
	unsigned seed = 12345;

	if (!copy)
		return;
	for (size_t cut = 0; cut < len; cut += step) {
		struct profile **ps = NULL;
		size_t n = 0;
		char err[256] = "";
		int e = dec_otlp__parse(buf, cut, "cut.otlp.pb", &ps, &n, err, sizeof(err));

		if (e) {
			refused++;
			CHECK(e == -EINVAL && !strncmp(err, "cut.otlp.pb: ", 13) && !ps && !n,
			      "truncated at %zu: %d %s", cut, e, err);
		}
		for (size_t i = 0; i < n; i++)
			profile__delete(ps[i]);
		free(ps);
	}
	CHECK(refused > 0, "some truncations refused");
	for (int round = 0; round < 2000 && len; round++) {
		struct profile **ps = NULL;
		size_t n = 0;
		char err[256] = "";
		int e;

		memcpy(copy, buf, len);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) & 7));
		}
		e = dec_otlp__parse(copy, len, "flip.otlp.pb", &ps, &n, err, sizeof(err));
		if (e)
			CHECK(e == -EINVAL && err[0], "bit flip %d: %d %s", round, e, err);
		for (size_t i = 0; i < n; i++)
			profile__delete(ps[i]);
		free(ps);
	}
	free(copy);
}

static void test_model_round_trip(void)
{
	struct profile *in[3] = {build("cpu", "nanoseconds"), build("wall", "nanoseconds"),
				 build("contention", "nanoseconds")};
	struct profile **out = NULL;
	uint8_t *buf = NULL;
	size_t len = 0, n = 0;
	char err[256] = "";
	int e;

	CHECK(in[0] && in[1] && in[2], "build");
	if (!in[0] || !in[1] || !in[2])
		goto out;
	CHECK(enc_otlp__encode((const struct profile *const *)in, 3, NULL, &buf, &len) == 0,
	      "encode");
	e = dec_otlp__parse(buf, len, "model.otlp.pb", &out, &n, err, sizeof(err));
	CHECK(e == 0, "decode: %d %s", e, err);
	/* contentions/count folds back into the contention profile's counts. */
	CHECK_U64(n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct profile *d = by_type(out, n, profile__desc(in[i])->sample_type);

		CHECK(d != NULL, "profile %s decoded", profile__desc(in[i])->sample_type);
		if (d)
			check_same(in[i], d);
	}
	test_fuzz_buf(buf, len);
out:
	for (size_t i = 0; i < n; i++)
		profile__delete(out[i]);
	free(out);
	free(buf);
	for (size_t i = 0; i < 3; i++)
		profile__delete(in[i]);
}

static char *read_text(const char *path)
{
	char *buf = NULL, err[256];
	size_t len;

	if (decode__read_file(path, 1 << 28, &buf, &len, err, sizeof(err)))
		return NULL;
	return buf;
}

/* What `hostprof render x.folded -o x.otlp.pb` and `render x.otlp.pb -o y.folded` do. */
static void test_folded_identity(void)
{
	/* In the order enc_folded writes: the identity is byte for byte. */
	static const char folded[] = "app;main;helper 7\n"
				     "app;main;ns::work(int) 3\n"
				     "app;main;ns::work(int);read_[k] 5\n"
				     "app;start_thread;loop 11\n";
	char path[256], path2[256], err[256] = "", *text = NULL;
	struct profile *p = NULL, **ps = NULL;
	size_t n = 0;
	int e;

	snprintf(path, sizeof(path), "%s/x.otlp.pb", tmpdir);
	snprintf(path2, sizeof(path2), "%s/y.folded", tmpdir);
	e = dec_folded__parse(folded, sizeof(folded) - 1, "x.folded", &p, err, sizeof(err));
	CHECK(e == 0, "folded: %s", err);
	if (e)
		return;
	CHECK(enc_otlp__write((const struct profile *const *)&p, 1, NULL, path) == 0, "write otlp");
	{
		struct stat st;

		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
		      "mode of %s is %o, not 0600", path, st.st_mode & 0777);
	}
	e = dec_otlp__read(path, &ps, &n, err, sizeof(err));
	CHECK(e == 0 && n == 1, "read otlp: %d %s", e, err);
	if (!e && n == 1) {
		CHECK(enc_folded__write(ps[0], path2) == 0, "write folded");
		text = read_text(path2);
		CHECK(text && !strcmp(text, folded), "folded -> otlp -> folded:\n%s---\n%s", folded,
		      text ? text : "");
		CHECK_STR(profile__desc(ps[0])->sample_unit, "count");
	}
	free(text);
	for (size_t i = 0; i < n; i++)
		profile__delete(ps[i]);
	free(ps);
	profile__delete(p);
}

static void expect_refused(const uint8_t *buf, size_t len, const char *what, const char *needle)
{
	struct profile **ps = NULL;
	size_t n = 0;
	char err[256] = "";
	int e = dec_otlp__parse(buf, len, "bad.otlp.pb", &ps, &n, err, sizeof(err));

	CHECK(e == -EINVAL, "%s: got %d", what, e);
	CHECK(!strncmp(err, "bad.otlp.pb: ", 13), "%s: message \"%s\"", what, err);
	CHECK(strstr(err, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err, needle);
	CHECK(ps == NULL && n == 0, "%s: no output", what);
}

static void test_broken(void)
{
	/* field 1 (resource_profiles) length 200 with 2 bytes: truncated */
	static const uint8_t trunc[] = {0x0a, 0xc8, 0x01, 0x00, 0x00};
	/* gzip magic, then garbage */
	static const uint8_t badgz[] = {0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00};
	/* resource_profiles { scope_profiles { profiles { samples { stack_index: 5 values: [1] } }
	 * } } and no dictionary: the stack index is outside the (empty) stack table. */
	static const uint8_t badidx[] = {0x0a, 0x0b, 0x12, 0x09, 0x12, 0x07, 0x12,
					 0x05, 0x08, 0x05, 0x22, 0x01, 0x01};
	expect_refused(trunc, sizeof(trunc), "truncated", "protobuf");
	expect_refused(badgz, sizeof(badgz), "bad gzip", "gzip");
	expect_refused(NULL, 0, "empty", "no profile");
	expect_refused(badidx, sizeof(badidx), "bad stack index", "stack index 5");
}

/*
 * A location with nothing in it (address 0, no mapping, no lines) equals the model's "no location"
 * entry, which profile__stack() refuses: the decoder used to fail with -EINVAL and no message
 * (found by tests/fuzz/fuzz_dec_otlp). It is a frame like any other, named "[unknown]".
 */
static void test_empty_location(void)
{
	/* dictionary { location_table: [{}, {}, {address: 0x1234}], stack_table: [{},
	 * {location_indices: [2, 1]}], string_table: [""] } and one sample { stack_index: 1 values:
	 * [1] }. */
	static const uint8_t req[] = {0x0a, 0x0b, 0x12, 0x09, 0x12, 0x07, 0x12, 0x05, 0x08,
				      0x01, 0x22, 0x01, 0x01, 0x12, 0x13, 0x12, 0x00, 0x12,
				      0x00, 0x12, 0x03, 0x10, 0xb4, 0x24, 0x3a, 0x00, 0x3a,
				      0x04, 0x0a, 0x02, 0x02, 0x01, 0x2a, 0x00};
	struct profile **ps = NULL;
	const struct profile_sample *smp;
	const struct profile_location *l;
	const uint32_t *stack = NULL;
	size_t n = 0, depth = 0;
	char err[256] = "";
	int e = dec_otlp__parse(req, sizeof(req), "empty-loc.otlp.pb", &ps, &n, err, sizeof(err));

	CHECK(e == 0 && n == 1, "empty location: %d (%s)", e, err);
	if (e || n != 1)
		return;
	CHECK_U64(profile__nr_samples(ps[0]), 2);
	smp = profile__sample_at(ps[0], 1);
	if (smp)
		stack = profile__stack_at(ps[0], smp->stack, &depth);
	CHECK(stack && depth == 2, "two frames: %zu", depth);
	if (stack && depth == 2) {
		l = profile__location_at(ps[0], stack[0]);
		CHECK(l && l->address == 0x1234, "the first frame is the one at 0x1234");
		CHECK(stack[1] != 0, "the empty location is a real one");
		CHECK_STR(profile__location_name(ps[0], stack[1]), "[unknown]");
	}
	profile__delete(ps[0]);
	free(ps);
}

/* The same for a line whose function has no name and no file (the model's "no function"). */
static void test_empty_function(void)
{
	/* dictionary { location_table: [{}, {lines: [{function_index: 1, line: 7}]}],
	 * function_table: [{}, {}], stack_table: [{}, {location_indices: [1]}], string_table: [""]
	 * } and one sample { stack_index: 1 values: [1] }. */
	static const uint8_t req[] = {0x0a, 0x0b, 0x12, 0x09, 0x12, 0x07, 0x12, 0x05, 0x08, 0x01,
				      0x22, 0x01, 0x01, 0x12, 0x17, 0x12, 0x00, 0x12, 0x06, 0x1a,
				      0x04, 0x08, 0x01, 0x10, 0x07, 0x1a, 0x00, 0x1a, 0x00, 0x3a,
				      0x00, 0x3a, 0x03, 0x0a, 0x01, 0x01, 0x2a, 0x00};
	struct profile **ps = NULL;
	const struct profile_sample *smp;
	const struct profile_line *lines = NULL;
	const uint32_t *stack = NULL;
	size_t n = 0, depth = 0, nl = 0;
	char err[256] = "";
	int e = dec_otlp__parse(req, sizeof(req), "empty-fn.otlp.pb", &ps, &n, err, sizeof(err));

	CHECK(e == 0 && n == 1, "empty function: %d (%s)", e, err);
	if (e || n != 1)
		return;
	smp = profile__sample_at(ps[0], 1);
	if (smp)
		stack = profile__stack_at(ps[0], smp->stack, &depth);
	CHECK(stack && depth == 1, "one frame: %zu", depth);
	if (stack && depth == 1)
		lines = profile__location_lines(ps[0], stack[0], &nl);
	CHECK(lines && nl == 1, "one line: %zu", nl);
	if (lines && nl == 1) {
		const struct profile_function *fn = profile__function_at(ps[0], lines[0].function);

		CHECK(fn != NULL, "the line names a function");
		if (fn)
			CHECK_STR(profile__string_at(ps[0], fn->name), "[unknown]");
		CHECK_U64(lines[0].line, 7);
	}
	profile__delete(ps[0]);
	free(ps);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_model_round_trip();
	test_folded_identity();
	test_broken();
	test_empty_location();
	test_empty_function();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_summary("test_decode_otlp");
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The decoders: model -> folded -> decode and model -> pprof -> decode give the same stacks and
 * counts (compared as folded text, which prints every stack from the root); broken inputs are
 * refused with a message naming the input and where; and a real Go CPU profile (written at test
 * time by a tiny program using runtime/pprof) decodes and renders to HTML.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "formats/decode.h"
#include "formats/encode.h"
#include "model/profile.h"
#include "profile.pb-c.h"

#define PERIOD 10000000LL

static char tmpdir[] = "/tmp/hostprof-test-decode-XXXXXX";

static const struct profile_desc desc = {
	.sample_type = "cpu",
	.sample_unit = "nanoseconds",
	.period_type = "cpu",
	.period_unit = "nanoseconds",
	.period = PERIOD,
};

static uint32_t str(struct profile *p, const char *s)
{
	int64_t idx = profile__string(p, s);

	CHECK(idx >= 0, "string \"%s\": %lld", s, (long long)idx);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static uint32_t loc(struct profile *p, uint32_t mapping, uint64_t address, const char *fn,
		    const char *label, enum frame_kind kind)
{
	struct profile_location l = {.mapping = mapping, .address = address, .kind = kind};
	int64_t idx;

	if (fn) {
		struct profile_function f = {.name = str(p, fn), .filename = str(p, "src/app.c")};

		f.system_name = f.name;
		idx = profile__function(p, &f);
		CHECK(idx > 0, "function %s", fn);
		l.function = idx > 0 ? (uint32_t)idx : 0;
	}
	if (label)
		l.label = str(p, label);
	idx = profile__location(p, &l);
	CHECK(idx > 0, "location 0x%llx", (unsigned long long)address);
	return idx > 0 ? (uint32_t)idx : 0;
}

static void add(struct profile *p, const uint32_t *locs, size_t n, uint32_t pid, uint32_t tid,
		const char *comm, int64_t count)
{
	struct profile_labels lb = {.pid = pid, .tid = tid};
	int64_t st = profile__stack(p, locs, n);

	CHECK(st >= 0, "stack");
	lb.comm = str(p, comm);
	lb.thread_name = str(p, comm);
	CHECK(profile__add_sample(p, st < 0 ? 0 : (uint32_t)st, &lb, count * PERIOD, count) == 0,
	      "add_sample");
}

/* Native frames sit in a mapping and kernel frames at kernel addresses, as the symbolizer
 * leaves them: what tells pprof readers which is which. */
static struct profile *build_profile(void)
{
	struct profile *p = profile__new(&desc);
	struct profile_mapping m = {.start = 0x1000, .limit = 0x100000};
	uint32_t map, l_main, l_work, l_k, l_unk, l_weird;

	if (!p)
		return NULL;
	m.filename = str(p, "/usr/bin/app");
	map = (uint32_t)profile__mapping(p, &m);
	l_main = loc(p, map, 0x1100, "main", NULL, FRAME_NATIVE);
	l_work = loc(p, map, 0x1200, "ns::work(int, char)", NULL, FRAME_NATIVE);
	l_weird = loc(p, map, 0x1300, "weird name\nwith break", NULL, FRAME_NATIVE);
	l_k = loc(p, 0, 0xffffffff81000000ULL, "do_syscall_64", NULL, FRAME_KERNEL);
	l_unk = loc(p, map, 0x1400, NULL, "[unknown] app+0x1400", FRAME_NATIVE);

	add(p, (uint32_t[]){l_k, l_unk, l_work, l_main}, 4, 100, 100, "app", 2);
	add(p, (uint32_t[]){l_k, l_unk, l_work, l_main}, 4, 100, 101, "app", 3);
	add(p, (uint32_t[]){l_weird, l_main}, 2, 200, 200, "my app", 7);
	add(p, (uint32_t[]){l_main}, 1, 300, 300, "", 1);
	add(p, NULL, 0, 100, 102, "app", 6);
	return p;
}

static char *read_text(const char *path)
{
	char *buf = NULL, err[256];
	size_t len;

	if (decode__read_file(path, 1 << 28, &buf, &len, err, sizeof(err)))
		return NULL;
	return buf;
}

static char *folded_of(const struct profile *p, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s.folded", tmpdir, name);
	CHECK(enc_folded__write(p, path) == 0, "folded %s", name);
	return read_text(path);
}

static void sums(const struct profile *p, int64_t *value, int64_t *count)
{
	*value = *count = 0;
	for (size_t i = 1; i < profile__nr_samples(p); i++) {
		*value += profile__sample_at(p, i)->value;
		*count += profile__sample_at(p, i)->count;
	}
}

static void test_folded_round_trip(const struct profile *p)
{
	char *a = folded_of(p, "model"), *b = NULL, err[256] = "", path[256];
	struct profile *d = NULL;
	int e;

	snprintf(path, sizeof(path), "%s/model.folded", tmpdir);
	e = dec_folded__read(path, &d, err, sizeof(err));
	CHECK(e == 0 && d, "decode folded: %d %s", e, err);
	if (d)
		b = folded_of(d, "decoded");
	CHECK(a && b && !strcmp(a, b), "folded round trip:\n%s---\n%s", a ? a : "", b ? b : "");
	if (d)
		CHECK_STR(profile__desc(d)->sample_unit, "count");
	/* folded -> pprof -> folded is the identity, kernel frames included. */
	if (d) {
		struct profile *d2 = NULL;
		char *c = NULL;

		snprintf(path, sizeof(path), "%s/from-folded.pb.gz", tmpdir);
		CHECK(enc_pprof__write(d, path) == 0, "pprof of folded");
		e = dec_pprof__read(path, &d2, err, sizeof(err));
		CHECK(e == 0, "decode pprof of folded: %s", err);
		if (d2)
			c = folded_of(d2, "folded-pprof-folded");
		CHECK(b && c && !strcmp(b, c), "folded->pprof->folded:\n%s---\n%s", b ? b : "",
		      c ? c : "");
		free(c);
		profile__delete(d2);
	}
	free(a);
	free(b);
	profile__delete(d);
}

static void test_pprof_round_trip(const struct profile *p)
{
	char *a = folded_of(p, "model2"), *b = NULL, err[256] = "", path[256];
	int64_t v1, c1, v2, c2;
	struct profile *d = NULL;
	bool saw_pid = false, saw_kernel = false;
	int e;

	snprintf(path, sizeof(path), "%s/model.pb.gz", tmpdir);
	CHECK(enc_pprof__write(p, path) == 0, "pprof write");
	e = dec_pprof__read(path, &d, err, sizeof(err));
	CHECK(e == 0 && d, "decode pprof: %d %s", e, err);
	if (!d)
		return;
	b = folded_of(d, "decoded2");
	CHECK(a && b && !strcmp(a, b), "pprof round trip:\n%s---\n%s", a ? a : "", b ? b : "");
	sums(p, &v1, &c1);
	sums(d, &v2, &c2);
	CHECK_U64(v2, v1);
	CHECK_U64(c2, c1);
	CHECK_STR(profile__desc(d)->sample_type, "cpu");
	CHECK_STR(profile__desc(d)->sample_unit, "nanoseconds");
	CHECK_U64(profile__desc(d)->period, PERIOD);
	for (size_t i = 1; i < profile__nr_samples(d); i++) {
		const struct profile_sample *s = profile__sample_at(d, i);

		saw_pid |= s->labels.pid == 200 &&
			   !strcmp(profile__string_at(d, s->labels.comm), "my app");
	}
	for (size_t i = 1; i < profile__nr_locations(d); i++) {
		const struct profile_location *l = profile__location_at(d, i);

		saw_kernel |= l->kind == FRAME_KERNEL &&
			      !strcmp(profile__location_name(d, i), "do_syscall_64");
	}
	CHECK(saw_pid, "pid 200 / comm 'my app' label kept");
	CHECK(saw_kernel, "kernel frame kept as kernel");
	free(a);
	free(b);
	profile__delete(d);
}

static void expect_folded_error(const char *text, const char *want)
{
	struct profile *d = (struct profile *)1;
	char err[256] = "";
	int e = dec_folded__parse(text, strlen(text), "in.folded", &d, err, sizeof(err));

	CHECK(e == -EINVAL && d == NULL, "folded '%s' accepted (%d)", text, e);
	CHECK(strstr(err, want) != NULL, "message for '%s': '%s', want '%s'", text, err, want);
}

static void test_folded_broken(void)
{
	struct profile *d = NULL;
	char err[256] = "";
	static const char ok[] = "# comment\n\napp;main 3\r\napp;main 2\nx 1";
	static const char nul[] = "a;b 1\nc\0d 2\n";

	expect_folded_error("a;b\n", "in.folded:1: expected");
	expect_folded_error("a;b 1\na;b x\n", "in.folded:2:");
	expect_folded_error("a;;b 1\n", "in.folded:1: empty frame");
	expect_folded_error("a;b -3\n", "not a non-negative");
	expect_folded_error("a;b 99999999999999999999999\n", "in.folded:1:");
	expect_folded_error(" 5\n", "in.folded:1:");
	expect_folded_error("a;_[k] 5\n", "empty frame");
	CHECK(dec_folded__parse(nul, sizeof(nul) - 1, "nul.folded", &d, err, sizeof(err)) ==
			      -EINVAL &&
		      strstr(err, "nul.folded:2: NUL"),
	      "NUL byte: %s", err);
	CHECK(dec_folded__parse(ok, strlen(ok), "ok.folded", &d, err, sizeof(err)) == 0 && d,
	      "comments, CRLF, no final newline: %s", err);
	if (d) {
		int64_t v, c;

		sums(d, &v, &c);
		CHECK_U64(c, 6);
		CHECK_U64(profile__nr_samples(d), 3); /* zero entry + two distinct */
	}
	profile__delete(d);
	CHECK(dec_folded__read("/nonexistent/x.folded", &d, err, sizeof(err)) == -ENOENT &&
		      strstr(err, "/nonexistent/x.folded"),
	      "missing file: %s", err);
}

static void expect_pprof_error(const uint8_t *buf, size_t len, const char *want, const char *what)
{
	struct profile *d = (struct profile *)1;
	char err[256] = "";
	int e = dec_pprof__parse(buf, len, "in.pb.gz", &d, err, sizeof(err));

	CHECK(e < 0 && d == NULL, "%s accepted (%d)", what, e);
	CHECK(strstr(err, "in.pb.gz: ") && strstr(err, want), "%s: message '%s', want '%s'", what,
	      err, want);
}

/* A hand-made Profile with one function, location and sample, packed (not gzipped). */
static uint8_t *pack_profile(int64_t name_idx, uint64_t loc_func_id, uint64_t sample_loc_id,
			     size_t *len)
{
	char *strings[] = {"", "cpu", "nanoseconds", "main"};
	Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vts[] = {&vt};
	Perftools__Profiles__Function f = PERFTOOLS__PROFILES__FUNCTION__INIT, *fs[] = {&f};
	Perftools__Profiles__Line ln = PERFTOOLS__PROFILES__LINE__INIT, *lns[] = {&ln};
	Perftools__Profiles__Location l = PERFTOOLS__PROFILES__LOCATION__INIT, *ls[] = {&l};
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT, *ss[] = {&s};
	uint64_t ids[] = {sample_loc_id};
	int64_t vals[] = {5};
	uint8_t *buf;

	vt.type = 1;
	vt.unit = 2;
	f.id = 1;
	f.name = name_idx;
	ln.function_id = loc_func_id;
	l.id = 1;
	l.address = 0x10;
	l.n_line = 1;
	l.line = lns;
	s.n_location_id = 1;
	s.location_id = ids;
	s.n_value = 1;
	s.value = vals;
	m.n_sample_type = 1;
	m.sample_type = vts;
	m.n_function = 1;
	m.function = fs;
	m.n_location = 1;
	m.location = ls;
	m.n_sample = 1;
	m.sample = ss;
	m.n_string_table = 4;
	m.string_table = strings;
	*len = perftools__profiles__profile__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		perftools__profiles__profile__pack(&m, buf);
	return buf;
}

static void test_pprof_broken(const struct profile *p)
{
	static const uint8_t junk[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0xff, 0x0a, 0x44};
	char path[256], *gz = NULL, err[256];
	struct profile *d = NULL;
	size_t len = 0, plen;
	uint8_t *raw;

	expect_pprof_error(junk, sizeof(junk), "protobuf decoding", "junk");
	expect_pprof_error((const uint8_t *)"", 0, "", "empty input");
	snprintf(path, sizeof(path), "%s/model.pb.gz", tmpdir);
	CHECK(enc_pprof__write(p, path) == 0, "pprof write");
	CHECK(decode__read_file(path, 1 << 28, &gz, &len, err, sizeof(err)) == 0, "%s", err);
	if (gz && len > 40) {
		expect_pprof_error((uint8_t *)gz, len / 2, "gzip data truncated", "half a gzip");
		gz[len / 2] ^= 0x5a;
		gz[len / 2 + 1] ^= 0xa5;
		expect_pprof_error((uint8_t *)gz, len, "", "corrupt gzip");
	}
	free(gz);

	raw = pack_profile(3, 1, 1, &plen);
	CHECK(raw && dec_pprof__parse(raw, plen, "ok.pb", &d, err, sizeof(err)) == 0 && d,
	      "hand-made profile: %s", err);
	if (d)
		CHECK_STR(profile__location_name(d, 1), "main");
	profile__delete(d);
	free(raw);
	/* A function with no name and no file (found by fuzz_dec_pprof): a frame, "[unknown]". */
	raw = pack_profile(0, 1, 1, &plen);
	d = NULL;
	CHECK(raw && dec_pprof__parse(raw, plen, "anon.pb", &d, err, sizeof(err)) == 0 && d,
	      "a function with nothing in it: %s", err);
	if (d)
		CHECK_STR(profile__location_name(d, 1), "[unknown]");
	profile__delete(d);
	free(raw);
	raw = pack_profile(99, 1, 1, &plen);
	expect_pprof_error(raw, plen, "string index 99 out of range", "bad string index");
	free(raw);
	raw = pack_profile(3, 7, 1, &plen);
	expect_pprof_error(raw, plen, "no function with id 7", "dangling function id");
	free(raw);
	raw = pack_profile(3, 1, 9, &plen);
	expect_pprof_error(raw, plen, "no location with id 9", "dangling location id");
	free(raw);
}

static int run(const char *cmd)
{
	int st = system(cmd);

	return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static const char go_prog[] =
	"package main\n"
	"import (\"os\"; \"runtime/pprof\"; \"time\")\n"
	"//go:noinline\n"
	"func burnHostprofTest(n int) int { s := 0; for i := 0; i < n; i++ { s += i * i % 7 }; "
	"return s }\n"
	"func main() {\n"
	"\tf, err := os.Create(os.Args[1]); if err != nil { panic(err) }\n"
	"\tif err := pprof.StartCPUProfile(f); err != nil { panic(err) }\n"
	"\tend := time.Now().Add(600 * time.Millisecond); x := 0\n"
	"\tfor time.Now().Before(end) { x += burnHostprofTest(1000000) }\n"
	"\tpprof.StopCPUProfile(); f.Close(); if x == 42 { println(x) }\n"
	"}\n";

/* Go's own CPU profile: inline lines, mappings, sample types (samples, cpu). */
static void test_go_pprof(void)
{
	char src[256], out[300], html[300], cmd[1024], err[256] = "", *page;
	struct profile *d = NULL;
	bool found = false;
	FILE *f;
	int e;

	if (run("command -v go >/dev/null 2>&1 || test -x /usr/lib/go-1.19/bin/go") != 0) {
		CHECK(0, "go is missing: install golang-go to test Go's pprof files");
		return;
	}
	snprintf(src, sizeof(src), "%s/burn.go", tmpdir);
	snprintf(out, sizeof(out), "%s/go-cpu.pb.gz", tmpdir);
	snprintf(html, sizeof(html), "%s/go-cpu.html", tmpdir);
	f = fopen(src, "w");
	CHECK(f != NULL, "create %s", src);
	if (!f)
		return;
	fputs(go_prog, f);
	fclose(f);
	/* GOCACHE and HOME may be unwritable for the test user; keep both under tmpdir. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && PATH=$PATH:/usr/lib/go-1.19/bin HOME=%s GOCACHE=%s/gocache "
		 "GOPATH=%s/gopath "
		 "GOFLAGS=-mod=mod GO111MODULE=off go run burn.go %s >%s/go.log 2>&1",
		 tmpdir, tmpdir, tmpdir, tmpdir, out, tmpdir);
	e = run(cmd);
	CHECK(e == 0, "go run failed (%d): see %s/go.log", e, tmpdir);
	if (e)
		return;
	e = dec_pprof__read(out, &d, err, sizeof(err));
	CHECK(e == 0 && d, "decode Go's profile: %s", err);
	if (!d)
		return;
	CHECK_STR(profile__desc(d)->sample_type, "cpu");
	CHECK_STR(profile__desc(d)->sample_unit, "nanoseconds");
	CHECK(profile__nr_samples(d) > 1, "Go profile has samples");
	for (size_t i = 1; i < profile__nr_locations(d); i++)
		found |= strstr(profile__location_name(d, i), "burnHostprofTest") != NULL;
	CHECK(found, "main.burnHostprofTest among the frames");
	CHECK(enc_html__write((const struct profile *const[]){d}, 1, html) == 0,
	      "render Go to HTML");
	{
		struct stat st;

		CHECK(stat(html, &st) == 0 && (st.st_mode & 0777) == 0600,
		      "mode of %s is %o, not 0600", html, st.st_mode & 0777);
	}
	page = read_text(html);
	CHECK(page && strstr(page, "main.burnHostprofTest"), "HTML of Go's profile has the frame");
	free(page);
	profile__delete(d);
}

int main(void)
{
	struct profile *p;
	char cmd[300];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	p = build_profile();
	CHECK(p != NULL, "build_profile");
	if (p) {
		test_folded_round_trip(p);
		test_pprof_round_trip(p);
		test_pprof_broken(p);
	}
	test_folded_broken();
	test_go_pprof();
	profile__delete(p);
	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s 2>/dev/null; rm -rf %s", tmpdir, tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_summary("test_decode");
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTML encoder: the page is self-contained, embeds the expected frames and totals, a name
 * holding "</script>" cannot end the data block, small frames are pruned into "other" (and the
 * page says so), and odd profiles (empty, 300 frames deep, several types) still give a page.
 * When python3 is there, the embedded data is also parsed as JSON and the tree checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "formats/decode.h"
#include "formats/encode.h"
#include "model/profile.h"

static char tmpdir[] = "/tmp/hostprof-test-html-XXXXXX";

static const struct profile_desc cpu_desc = {
	.sample_type = "cpu",
	.sample_unit = "nanoseconds",
	.period_type = "cpu",
	.period_unit = "nanoseconds",
	.period = 10000000,
};

static const struct profile_desc wall_desc = {
	.sample_type = "wall",
	.sample_unit = "nanoseconds",
	.period_type = "wall",
	.period_unit = "nanoseconds",
	.period = 10000000,
};

static uint32_t str(struct profile *p, const char *s)
{
	int64_t idx = profile__string(p, s);

	CHECK(idx >= 0, "string \"%s\"", s);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static uint32_t loc(struct profile *p, const char *fn, enum frame_kind kind)
{
	struct profile_function f = {.name = str(p, fn), .filename = str(p, "src/x.c")};
	struct profile_location l = {.kind = kind};
	int64_t idx;

	f.system_name = f.name;
	idx = profile__function(p, &f);
	l.function = idx > 0 ? (uint32_t)idx : 0;
	l.address = kind == FRAME_KERNEL ? 0xffffffff81000000ULL : 0x1000;
	idx = profile__location(p, &l);
	CHECK(idx > 0, "location %s", fn);
	return idx > 0 ? (uint32_t)idx : 0;
}

static void add(struct profile *p, const uint32_t *locs, size_t n, uint32_t pid, const char *comm,
		int64_t value)
{
	struct profile_labels lb = {.pid = pid, .tid = pid};
	int64_t st = profile__stack(p, locs, n);

	lb.comm = str(p, comm);
	CHECK(st >= 0 && profile__add_sample(p, (uint32_t)st, &lb, value, 1) == 0, "add sample");
}

static char *read_text(const char *path)
{
	char *buf = NULL, err[256];
	size_t len;

	if (decode__read_file(path, 1 << 28, &buf, &len, err, sizeof(err)))
		return NULL;
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, m = strlen(needle);

	for (const char *s = hay; (s = strcasestr(s, needle)); s += m)
		n++;
	return n;
}

static char *write_page(const struct profile *const *ps, size_t n, const char *name)
{
	char path[256];
	int e;

	snprintf(path, sizeof(path), "%s/%s.html", tmpdir, name);
	e = enc_html__write(ps, n, path);
	CHECK(e == 0, "write %s: %d", name, e);
	return e ? NULL : read_text(path);
}

/* Parse the data block as JSON and check the data's invariants: every node's parent comes
 * before it, frames, processes and strings are in range, the samples add up to the total (of the
 * first profile: want_total). Skipped without python3. */
static void check_json(const char *name, long long want_total)
{
	char cmd[2048];
	int st;

	if (system("command -v python3 >/dev/null 2>&1") != 0)
		return;
	snprintf(cmd, sizeof(cmd),
		 "python3 -c '\n"
		 "import json,re,sys\n"
		 "t=open(sys.argv[1],encoding=\"utf-8\").read()\n"
		 "m=re.search(r\"<script id=\\\"data\\\" "
		 "type=\\\"application/json\\\">(.*?)</script>\","
		 "t,re.S)\n"
		 "d=json.loads(m.group(1))\n"
		 "nf=len(d[\"frames\"])//5\n"
		 "def chk(p):\n"
		 "  tp,tf,s,pr=p[\"tp\"],p[\"tf\"],p[\"s\"],p[\"procs\"]\n"
		 "  assert len(tp)==len(tf) and tp[0]==-1\n"
		 "  assert all(0<=tp[i]<i for i in range(1,len(tp)))\n"
		 "  assert all(0<=f<nf for f in tf)\n"
		 "  assert len(s)%%7==0 and len(pr)%%4==0\n"
		 "  for i in range(0,len(s),7):\n"
		 "    assert 0<=s[i]<len(tp) and s[i+1]>0 and 0<=s[i+2]<len(pr)//4\n"
		 "    assert 0<=s[i+4]<len(d[\"strings\"]) and 0<=s[i+5]<len(d[\"strings\"])\n"
		 "    assert 0<=s[i+6]<len(d[\"strings\"])\n"
		 "  assert sum(s[1::7])==p[\"total\"], (sum(s[1::7]),p[\"total\"])\n"
		 "  if \"base\" in p: chk(p[\"base\"])\n"
		 "for p in d[\"profiles\"]: chk(p)\n"
		 "assert d[\"profiles\"][0][\"total\"]==%lld, d[\"profiles\"][0][\"total\"]\n"
		 "' %s/%s.html",
		 want_total, tmpdir, name);
	st = system(cmd);
	CHECK(st == 0, "%s: embedded JSON invalid or tree inconsistent", name);
}

static void test_page(void)
{
	struct profile *p = profile__new(&cpu_desc), *w = profile__new(&wall_desc);
	uint32_t m, work, k, evil, uni;
	char *page;

	if (!p || !w)
		return;
	m = loc(p, "main", FRAME_NATIVE);
	work = loc(p, "work", FRAME_NATIVE);
	k = loc(p, "do_syscall_64", FRAME_KERNEL);
	evil = loc(p, "</script><script>alert(1)</script><!--", FRAME_NATIVE);
	uni = loc(p, "λ_ünïcode_函数 \"q\" \\ &amp;", FRAME_NATIVE);
	add(p, (uint32_t[]){k, work, m}, 3, 100, "app", 6000);
	add(p, (uint32_t[]){evil, m}, 2, 100, "app", 3000);
	add(p, (uint32_t[]){uni, m}, 2, 200, "db</script>", 1000);
	add(w, (uint32_t[]){loc(w, "sleep", FRAME_NATIVE)}, 1, 100, "app", 5);

	page = write_page((const struct profile *const[]){p, w}, 2, "page");
	CHECK(page != NULL, "page written");
	if (!page)
		goto out;
	CHECK(!strstr(page, "http://") && !strstr(page, "https://"), "no network reference");
	CHECK(!strcasestr(page, " src=") && !strcasestr(page, "<link"), "nothing loaded");
	CHECK(count(page, "<script") == 2 && count(page, "</script") == 2,
	      "exactly the page's two script blocks: %zu open, %zu close", count(page, "<script"),
	      count(page, "</script"));
	CHECK(!strstr(page, "<!--"), "no comment opener from a name");
	CHECK(strstr(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"),
	      "evil name escaped");
	CHECK(strstr(page, "\"λ_ünïcode_函数 \\\"q\\\" \\\\ \\u0026amp;\""),
	      "unicode name as UTF-8");
	CHECK(strstr(page, "\"main\"") && strstr(page, "\"work\"") &&
		      strstr(page, "\"do_syscall_64\""),
	      "frames embedded");
	CHECK(strstr(page, "\"app\"") && strstr(page, "\"db\\u003c/script\\u003e\""),
	      "process names embedded, escaped");
	CHECK(strstr(page, "\"procs\":[100,") && strstr(page, ",200,"), "processes by pid");
	CHECK(strstr(page, "\"src/x.c\""), "file names embedded");
	CHECK(count(page, "{\"type\":") == 2 && strstr(page, "\"wall\""), "two profile types");
	CHECK(strstr(page, "\"total\":10000,"), "the total is the sum of the values");
	CHECK(strstr(page, "\"pruned\":0"), "nothing pruned in a small profile");
	CHECK(strstr(page, "0.01%"), "the page explains the pruning");
	free(page);
	check_json("page", 10000);
out:
	profile__delete(p);
	profile__delete(w);
}

static void test_prune(void)
{
	struct profile *p = profile__new(&cpu_desc);
	uint32_t big, tiny, m;
	char *page;

	if (!p)
		return;
	m = loc(p, "main", FRAME_NATIVE);
	big = loc(p, "big", FRAME_NATIVE);
	tiny = loc(p, "tiny_function", FRAME_NATIVE);
	add(p, (uint32_t[]){big, m}, 2, 1, "app", 1000000);
	add(p, (uint32_t[]){tiny, m}, 2, 1, "app", 99); /* < 0.01% of 1000099 */
	page = write_page((const struct profile *const[]){p}, 1, "prune");
	if (page) {
		CHECK(strstr(page, "\"pruned\":1"), "one frame pruned");
		CHECK(!strstr(page, "tiny_function"), "the pruned frame's name is not embedded");
		CHECK(strstr(page, "\"other\""), "an 'other' frame");
		CHECK(strstr(page, ",99]") || strstr(page, ",99,"),
		      "other carries the pruned value");
	}
	free(page);
	check_json("prune", 1000099);
	profile__delete(p);
}

static void test_odd_profiles(void)
{
	struct profile *e = profile__new(&cpu_desc), *deep = profile__new(&cpu_desc);
	uint32_t locs[300];
	char name[32], *page;

	if (!e || !deep)
		return;
	page = write_page((const struct profile *const[]){e}, 1, "empty");
	CHECK(page && strstr(page, "\"tp\":[-1]") && strstr(page, "\"total\":0,"), "empty profile");
	free(page);
	check_json("empty", 0);

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "frame_%d", i);
		locs[i] = loc(deep, name, FRAME_NATIVE);
	}
	add(deep, locs, 300, 7, "deep", 42);
	page = write_page((const struct profile *const[]){deep}, 1, "deep");
	CHECK(page && strstr(page, "frame_299") && strstr(page, ",300],\n\"tf\""),
	      "300-deep stack: root, process, then node 301's parent is 300");
	free(page);
	check_json("deep", 42);

	CHECK(enc_html__write((const struct profile *const[]){e}, 1, "/nonexistent/dir/x.html") < 0,
	      "unwritable path fails");
	CHECK(enc_html__write(NULL, 1, "x.html") == -EINVAL, "NULL profiles");
	CHECK(enc_html__write((const struct profile *const[]){e}, 0, "x.html") == -EINVAL,
	      "no profiles");
	profile__delete(e);
	profile__delete(deep);
}

/* A location with inline lines: one frame per line, the inner ones of the inlined kind (2),
 * each with its file:line. */
static void test_inline(void)
{
	struct profile *p = profile__new(&cpu_desc);
	struct profile_function fi = {0}, fo = {0};
	struct profile_line lines[2];
	struct profile_location l = {.address = 0x1234};
	int64_t li;
	char *page;

	if (!p)
		return;
	fi.name = fi.system_name = str(p, "inlined_helper");
	fi.filename = str(p, "src/helper.h");
	fo.name = fo.system_name = str(p, "outer_fn");
	fo.filename = str(p, "src/outer.c");
	lines[0] =
		(struct profile_line){.function = (uint32_t)profile__function(p, &fi), .line = 42};
	lines[1] =
		(struct profile_line){.function = (uint32_t)profile__function(p, &fo), .line = 7};
	l.function = lines[0].function;
	li = profile__location_with_lines(p, &l, lines, 2);
	CHECK(li > 0, "location with lines");
	add(p, (uint32_t[]){(uint32_t)li}, 1, 5, "inl", 10);
	page = write_page((const struct profile *const[]){p}, 1, "inline");
	CHECK(page && strstr(page, "\"inlined_helper\"") && strstr(page, "\"outer_fn\""),
	      "both lines are frames");
	CHECK(page && strstr(page, ",42,2,") && strstr(page, ",7,0,"),
	      "inner line is inlined (kind 2) with line 42, outer native with line 7");
	CHECK(page && strstr(page, "\"tp\":[-1,0,1,2]") && strstr(page, "\"s\":[3,10,"),
	      "outer and inner stacked: all, inl, outer, inner; the sample on inner");
	free(page);
	profile__delete(p);
}

/* pprof -> model -> HTML: the page's root total is the pprof's total. */
static void test_from_pprof(void)
{
	struct profile *p = profile__new(&cpu_desc), *d = NULL;
	char path[256], err[256] = "", *page;

	if (!p)
		return;
	add(p, (uint32_t[]){loc(p, "leaf", FRAME_NATIVE), loc(p, "root", FRAME_NATIVE)}, 2, 9,
	    "svc", 123456789);
	snprintf(path, sizeof(path), "%s/rt.pb.gz", tmpdir);
	CHECK(enc_pprof__write(p, path) == 0, "pprof");
	CHECK(dec_pprof__read(path, &d, err, sizeof(err)) == 0, "decode: %s", err);
	if (d) {
		page = write_page((const struct profile *const[]){d}, 1, "rt");
		CHECK(page && strstr(page, "\"total\":123456789,") &&
			      strstr(page, "\"s\":[3,123456789,"),
		      "totals survive pprof -> HTML");
		free(page);
	}
	profile__delete(d);
	profile__delete(p);
}

/*
 * What the page groups and filters by: two processes of one executable (the page's default
 * grouping merges them), their service, threads and thread states; file paths normalised.
 */
static void test_labels_paths(void)
{
	struct profile *p = profile__new(&wall_desc);
	struct profile_process pr = {0};
	struct profile_function fn = {0};
	struct profile_location l = {.address = 0x10};
	struct profile_labels lb = {0};
	uint32_t root, stack;
	char *page;

	if (!p)
		return;
	fn.name = fn.system_name = str(p, "read");
	fn.filename = str(p, "./misc/../sysdeps/unix//read.c");
	l.function = (uint32_t)profile__function(p, &fn);
	root = (uint32_t)profile__location(p, &l);
	stack = (uint32_t)profile__stack(p, &root, 1);
	for (uint32_t pid = 700; pid <= 701; pid++) {
		pr.pid = pid;
		pr.exe_name = str(p, "gzip");
		pr.service_name = str(p, "compressor");
		CHECK(profile__set_process(p, &pr) == 0, "process %u", pid);
		lb.pid = lb.tid = pid;
		lb.comm = str(p, "gzip-worker");
		lb.thread_name = str(p, "reader");
		lb.thread_state = str(p, pid == 700 ? "io" : "sleeping");
		CHECK(profile__add_sample(p, stack, &lb, 100 + pid, 1) == 0, "sample");
	}
	page = write_page((const struct profile *const[]){p}, 1, "labels");
	CHECK(page && strstr(page, "\"sysdeps/unix/read.c\"") && !strstr(page, "misc/.."),
	      "the file path is normalised");
	CHECK(page && strstr(page, "\"gzip\"") && strstr(page, "\"compressor\"") &&
		      strstr(page, "\"gzip-worker\""),
	      "executable, service and comm embedded");
	/* procs: pid, comm, exe, service; the two processes share the exe and service strings. */
	if (page) {
		const char *procs = strstr(page, "\"procs\":[");
		unsigned pid1, c1, e1, s1, pid2, c2, e2, s2;

		CHECK(procs && sscanf(procs, "\"procs\":[%u,%u,%u,%u,%u,%u,%u,%u]", &pid1, &c1, &e1,
				      &s1, &pid2, &c2, &e2, &s2) == 8,
		      "two processes");
		CHECK(procs && pid1 == 700 && pid2 == 701 && c1 == c2 && e1 == e2 && s1 == s2 &&
			      e1 != c1 && s1 != e1,
		      "one exe and one service for both pids: %.80s", procs ? procs : "");
		CHECK(strstr(page, "\"io\"") && strstr(page, "\"sleeping\"") &&
			      strstr(page, "\"reader\""),
		      "thread states and name embedded");
		CHECK(strstr(page, ",800,0,700,") && strstr(page, ",801,1,701,"),
		      "each sample with its value, process and tid");
	}
	free(page);
	check_json("labels", 1601);
	profile__delete(p);
}

/* A differential page: each profile carries its base, sharing the frame table. */
static void test_diff(void)
{
	struct profile *n = profile__new(&cpu_desc), *o = profile__new(&cpu_desc);
	char *page;

	if (!n || !o)
		return;
	add(n, (uint32_t[]){loc(n, "grown", FRAME_NATIVE), loc(n, "main", FRAME_NATIVE)}, 2, 1, "a",
	    75);
	add(n, (uint32_t[]){loc(n, "main", FRAME_NATIVE)}, 1, 1, "a", 25);
	add(o, (uint32_t[]){loc(o, "gone", FRAME_NATIVE), loc(o, "main", FRAME_NATIVE)}, 2, 1, "a",
	    30);
	add(o, (uint32_t[]){loc(o, "main", FRAME_NATIVE)}, 1, 1, "a", 10);
	page = NULL;
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/diff.html", tmpdir);
		CHECK(enc_html__write_diff((const struct profile *const[]){n},
					   (const struct profile *const[]){o}, 1, path) == 0,
		      "diff page");
		page = read_text(path);
	}
	CHECK(page && strstr(page, "\"base\":{\"type\":\"cpu\"") &&
		      strstr(page, "\"total\":100,") && strstr(page, "\"total\":40,"),
	      "the base profile follows the new one");
	CHECK(page && count(page, "\"main\"") == 1 && strstr(page, "\"gone\"") &&
		      strstr(page, "\"grown\""),
	      "one frame table: main once, the frames of both sides");
	free(page);
	check_json("diff", 100);
	profile__delete(n);
	profile__delete(o);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_page();
	test_prune();
	test_odd_profiles();
	test_from_pprof();
	test_inline();
	test_labels_paths();
	test_diff();
	snprintf(cmd, sizeof(cmd), "%s %s", getenv("KEEP") ? "echo" : "rm -rf", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_summary("test_enc_html");
}

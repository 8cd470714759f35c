// SPDX-License-Identifier: BSD-2-Clause
/* The folded encoder: the exact text for a hand-built profile, and its error paths. */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "formats/encode.h"
#include "model/profile.h"

#define PERIOD 10000000LL

static char tmpdir[] = "/tmp/hostprof-test-folded-XXXXXX";

static const struct profile_desc desc = {
	.sample_type = "cpu",
	.sample_unit = "nanoseconds",
	.period_type = "cpu",
	.period_unit = "nanoseconds",
	.period = PERIOD,
};

/*
 * Sorted bytewise. What each line shows:
 *  - a comm without a name becomes "[unknown]"; ';' in a comm becomes ':' and spaces '_';
 *  - '\n' in a function name becomes ' ', ';' becomes ':', spaces stay;
 *  - a sample with no frames is the comm alone;
 *  - tids 100 and 101 of "app" merge (5 = 2 + 3), and so do two stacks that differ only in
 *    the address inside main (5 = 1 + 4);
 *  - the stack runs from the root, the kernel frame gets "_[k]", the unknown frame its label;
 *  - the sample with count 0 ("other") is left out.
 */
static const char expected[] = "[unknown];main;line break 2\n"
			       "a:b;main;weird:name 1\n"
			       "app 6\n"
			       "app;main;ns::work(int, char);[unknown] libfoo.so+0x1234;"
			       "do_syscall_64_[k] 5\n"
			       "app;main;weird:name 5\n"
			       "my_app;main;line break 7\n";

static uint32_t str(struct profile *p, const char *s)
{
	int64_t idx = profile__string(p, s);

	CHECK(idx >= 0, "string \"%s\": %lld", s, (long long)idx);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static uint32_t func(struct profile *p, const char *name)
{
	struct profile_function f = {.name = str(p, name)};
	int64_t idx;

	f.system_name = f.name;
	idx = profile__function(p, &f);
	CHECK(idx > 0, "function %s: %lld", name, (long long)idx);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static uint32_t loc(struct profile *p, uint32_t mapping, uint64_t address, uint32_t function,
		    const char *label, enum frame_kind kind)
{
	struct profile_location l = {
		.mapping = mapping,
		.address = address,
		.function = function,
		.label = label ? str(p, label) : 0,
		.kind = kind,
	};
	int64_t idx = profile__location(p, &l);

	CHECK(idx > 0, "location 0x%llx: %lld", (unsigned long long)address, (long long)idx);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static uint32_t stack(struct profile *p, const uint32_t *locs, size_t n)
{
	int64_t idx = profile__stack(p, locs, n);

	CHECK(idx >= 0, "stack: %lld", (long long)idx);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static void add(struct profile *p, uint32_t st, uint32_t pid, uint32_t tid, const char *comm,
		const char *thread_name, int64_t count)
{
	struct profile_labels lb = {.pid = pid, .tid = tid};
	int err;

	lb.comm = str(p, comm);
	lb.thread_name = str(p, thread_name);
	err = profile__add_sample(p, st, &lb, count * PERIOD, count);
	CHECK(err == 0, "add_sample: %d", err);
}

static struct profile *build_profile(void)
{
	struct profile *p = profile__new(&desc);
	struct profile_mapping m = {.start = 0x7f0000000000, .limit = 0x7f0000100000};
	uint32_t map, l_main, l_work, l_weird, l_break, l_kernel, l_unknown, l_main2;
	uint32_t s1, s2, s3, s4;

	CHECK(p != NULL, "profile__new: %s", strerror(errno));
	if (!p)
		return NULL;
	m.filename = str(p, "/usr/lib/libfoo.so");
	map = (uint32_t)profile__mapping(p, &m);
	l_main = loc(p, 0, 0x100, func(p, "main"), NULL, FRAME_NATIVE);
	l_main2 = loc(p, 0, 0x104, func(p, "main"), NULL, FRAME_NATIVE);
	l_work = loc(p, 0, 0x200, func(p, "ns::work(int, char)"), NULL, FRAME_NATIVE);
	l_weird = loc(p, 0, 0x300, func(p, "weird;name"), NULL, FRAME_NATIVE);
	l_break = loc(p, 0, 0x400, func(p, "line\nbreak"), NULL, FRAME_NATIVE);
	l_kernel = loc(p, 0, 0xffffffff81000000ULL, func(p, "do_syscall_64"), NULL, FRAME_KERNEL);
	l_unknown = loc(p, map, 0x1234, 0, "[unknown] libfoo.so+0x1234", FRAME_NATIVE);

	/* Leaf first, as the model keeps them. */
	s1 = stack(p, (uint32_t[]){l_kernel, l_unknown, l_work, l_main}, 4);
	s2 = stack(p, (uint32_t[]){l_weird, l_main}, 2);
	s3 = stack(p, (uint32_t[]){l_weird, l_main2}, 2);
	s4 = stack(p, (uint32_t[]){l_break, l_main}, 2);

	add(p, s1, 100, 100, "app", "app", 2);
	add(p, s1, 100, 101, "app", "worker", 3);
	add(p, s2, 100, 100, "app", "app", 1);
	add(p, s3, 100, 100, "app", "app", 4);
	add(p, s4, 300, 300, "my app", "my app", 7);
	add(p, s2, 400, 400, "a;b", "", 1);
	add(p, s1, 200, 200, "other", "other", 0);
	add(p, s4, 500, 500, "", "", 2);
	add(p, 0, 100, 102, "app", "idle", 6);
	return p;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n;

	if (!f)
		return NULL;
	n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (n == (size_t)-1) {
		free(buf);
		return strdup("");
	}
	return buf;
}

static bool tmp_leftovers(const char *pattern)
{
	glob_t g;
	bool any = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;

	globfree(&g);
	return any;
}

int main(void)
{
	char path[256], pattern[300];
	struct profile *p;
	struct stat st;
	char *text;
	int err;

	if (!mkdtemp(tmpdir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return check_summary("test_enc_folded");
	}
	p = build_profile();
	if (p) {
		snprintf(path, sizeof(path), "%s/profile.folded", tmpdir);
		err = enc_folded__write(p, path);
		CHECK(err == 0, "enc_folded__write: %s", strerror(-err));
		{
			struct stat fst;

			CHECK(stat(path, &fst) == 0 && (fst.st_mode & 0777) == 0600,
			      "mode of %s is %o, not 0600", path, fst.st_mode & 0777);
		}
		text = read_text(path);
		CHECK_STR(text, expected);
		free(text);
		snprintf(pattern, sizeof(pattern), "%s/profile.folded.tmp*", tmpdir);
		CHECK(!tmp_leftovers(pattern), "temporary file left behind");
		/* Writing twice gives the same bytes: the output does not depend on hash order. */
		CHECK(enc_folded__write(p, path) == 0, "rewrite");
		text = read_text(path);
		CHECK_STR(text, expected);
		free(text);
		unlink(path);

		/* A directory that does not exist: -ENOENT and nothing created. */
		snprintf(path, sizeof(path), "%s/missing/profile.folded", tmpdir);
		err = enc_folded__write(p, path);
		CHECK(err == -ENOENT, "missing dir: got %d (%s)", err, strerror(-err));
		CHECK(stat(path, &st) < 0, "%s exists", path);

		/* The rename fails (the target is a directory): the temporary file is removed. */
		snprintf(path, sizeof(path), "%s/adir", tmpdir);
		CHECK(mkdir(path, 0700) == 0, "mkdir: %s", strerror(errno));
		err = enc_folded__write(p, path);
		CHECK(err == -EISDIR, "over a directory: got %d (%s)", err, strerror(-err));
		snprintf(pattern, sizeof(pattern), "%s/adir.tmp*", tmpdir);
		CHECK(!tmp_leftovers(pattern), "temporary file left behind");
		CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "the directory was replaced");
		rmdir(path);

		CHECK(enc_folded__write(NULL, "x") == -EINVAL, "NULL profile accepted");
		CHECK(enc_folded__write(p, NULL) == -EINVAL, "NULL path accepted");
		profile__delete(p);
	}

	/* An empty profile gives an empty file. */
	p = profile__new(&desc);
	CHECK(p != NULL, "profile__new");
	if (p) {
		snprintf(path, sizeof(path), "%s/empty.folded", tmpdir);
		CHECK(enc_folded__write(p, path) == 0, "empty profile");
		CHECK(stat(path, &st) == 0 && st.st_size == 0, "empty profile: file not empty");
		unlink(path);
		profile__delete(p);
	}
	CHECK(rmdir(tmpdir) == 0, "rmdir %s: %s (files left behind?)", tmpdir, strerror(errno));
	return check_summary("test_enc_folded");
}

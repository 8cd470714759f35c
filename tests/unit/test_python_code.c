// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/python_code.h: CPython code objects named from a process's memory, and their cache.
 *
 * Live: each CPython this user can run (the system's python3; pyenv's 3.10 to 3.13 when reachable:
 * under tests/run-unit.sh the tests run as nobody, who cannot enter /root) runs
 * tests/fixtures/python/code_objects.py, which prints what CPython says of a few code objects
 * (a method, names of 1-, 2- and 4-byte characters, a file name with a lone surrogate, a name
 * over the length cap, a line table over 64 KiB, lines 70,000 apart) and waits; the test reads
 * them through python_code__lookup() with process_vm_readv (its own child, same user) and
 * compares every field. A str is not a code object; an address nothing maps faults; a code object
 * freed and another made at its address is read again; the process gone is -ESRCH.
 *
 * Fake: a process image built here for each release's layout, read through the cache's reader
 * hook: every kind of str (compact ASCII, 1/2/4-byte, legacy), strings that are not UTF-8,
 * fields out of bounds, a checksum changed under a kept line and python_code_cache__expire(),
 * eviction by bytes, forgetting a process.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/utf8.h"
#include "check.h"
#include "python_child.h"
#include "interp/python_code.h"
#include "process/proc_mem.h"

#define SCRIPT "tests/fixtures/python/code_objects.py"

/* ---- the live processes ---- */

struct child {
	pid_t pid;
	FILE *out; /* its stdout */
	int in;	   /* its stdin */
};

static int child_start(struct child *ch, const char *python)
{
	struct python_child c;
	int err = python_child__start(&c, python, "-I", SCRIPT);

	ch->pid = c.pid;
	ch->in = c.in;
	ch->out = c.out;
	return err;
}

static void child_stop(struct child *ch)
{
	struct python_child c = {.pid = ch->pid, .in = ch->in, .out = ch->out};

	python_child__stop(&c, false);
	ch->in = -1;
	ch->out = NULL;
}

static size_t unhex(const char *hex, char *out, size_t max)
{
	size_t n = 0;
	unsigned b;

	while (n + 1 < max && sscanf(hex + 2 * n, "%2x", &b) == 1)
		out[n++] = (char)b;
	out[n] = '\0';
	return n;
}

/* One code object as CPython described it ("F" or "R" and its "L" line). */
struct described {
	uint64_t addr;
	char name[PYTHON_STR_MAX], file[PYTHON_STR_MAX];
	int64_t first;
	size_t units;
	char *pairs; /* "index:line ..." */
};

static bool read_described(FILE *f, char **line, size_t *cap, struct described *d)
{
	char name_hex[2 * PYTHON_STR_MAX + 1], file_hex[2 * PYTHON_STR_MAX + 1];

	if (sscanf(*line + 2, "%" SCNu64 " %2048s %2048s %" SCNd64 " %zu", &d->addr, name_hex,
		   file_hex, &d->first, &d->units) != 5)
		return false;
	unhex(name_hex, d->name, sizeof(d->name));
	unhex(file_hex, d->file, sizeof(d->file));
	if (getline(line, cap, f) <= 0 || (*line)[0] != 'L')
		return false;
	d->pairs = strdup(*line + 2);
	return d->pairs != NULL;
}

/* Every index CPython gave a line for, through the cache: the fields must match exactly. */
static void check_described(struct python_code_cache *c, pid_t pid, const struct python_layout *l,
			    uint64_t code_type, const struct described *d, const char *py)
{
	struct python_frame_info fi;
	size_t n = 0, bad = 0;
	char *p = d->pairs, *end;
	int err;

	for (;;) {
		unsigned long idx = strtoul(p, &end, 10);
		long long want;

		if (end == p || *end != ':')
			break;
		want = strtoll(end + 1, &p, 10);
		err = python_code__lookup(c, pid, l, code_type, d->addr, (uint32_t)idx, &fi);
		n++;
		if (err || fi.line != want) {
			if (!bad++)
				fprintf(stderr,
					"%s: %s: index %lu: err %d, line %" PRId64
					", CPython says %lld\n",
					py, d->name, idx, err, err ? -1 : fi.line, want);
			continue;
		}
	}
	CHECK(n > 0 && bad == 0, "%s: %s: %zu of %zu indexes wrong", py, d->name, bad, n);
	err = python_code__lookup(c, pid, l, code_type, d->addr, 0, &fi);
	CHECK(err == 0, "%s: %s: %s", py, d->name, strerror(-err));
	if (err)
		return;
	CHECK_STR(fi.qualname, d->name);
	CHECK_STR(fi.filename, d->file);
	CHECK(fi.first_line == d->first, "%s: first line %" PRId64 ", want %" PRId64, py,
	      fi.first_line, d->first);
	CHECK(utf8__valid(fi.qualname, strlen(fi.qualname)) &&
		      utf8__valid(fi.filename, strlen(fi.filename)),
	      "%s: UTF-8 out", py);
}

/* After the child's code objects: other objects, unmapped memory, a replaced object. */
static void check_others(struct python_code_cache *c, struct child *ch,
			 const struct python_layout *l, uint64_t code_type, uint64_t str_addr,
			 const struct described *victim, const char *py, char **line, size_t *cap)
{
	struct python_code_stats before, after;
	struct python_frame_info fi;
	struct described r = {0};
	int err;

	python_code_cache__stats(c, &before);
	err = python_code__lookup(c, ch->pid, l, code_type, str_addr, 0, &fi);
	python_code_cache__stats(c, &after);
	CHECK(err == -EINVAL, "%s: a str read as a code object: %d", py, err);
	CHECK_U64(after.type_mismatches, before.type_mismatches + 1);
	err = python_code__lookup(c, ch->pid, l, code_type, 0x10000, 0, &fi);
	CHECK(err == -EFAULT, "%s: an unmapped address: %d", py, err);

	/* The victim was read (index 0); now the child frees it and fills its address. */
	if (write(ch->in, "go\n", 3) != 3 || getline(line, cap, ch->out) <= 0) {
		CHECK(0, "%s: the child did not answer", py);
		return;
	}
	if (!strncmp(*line, "R none", 6)) {
		printf("test_python_code: %s: no code object landed at a freed one's address; the "
		       "fake covers it\n",
		       py);
		return;
	}
	CHECK(read_described(ch->out, line, cap, &r), "%s: bad R record", py);
	CHECK_U64(r.addr, victim->addr);
	/* Lines kept are trusted until expire; then the header is read again, its checksum has
	 * changed, and the object is read whole. */
	python_code_cache__expire(c);
	python_code_cache__stats(c, &before);
	err = python_code__lookup(c, ch->pid, l, code_type, r.addr, 0, &fi);
	python_code_cache__stats(c, &after);
	CHECK(err == 0, "%s: %s", py, strerror(-err));
	if (!err)
		CHECK_STR(fi.qualname, r.name);
	CHECK_U64(after.replaced, before.replaced + 1);
	if (r.pairs)
		check_described(c, ch->pid, l, code_type, &r, py);
	free(r.pairs);
}

static void test_live_one(const char *py)
{
	struct child ch = {.in = -1};
	struct python_code_cache *c = python_code_cache__new(0);
	struct described ds[16] = {0}, *victim = NULL;
	const struct python_layout *l = NULL;
	struct python_code_stats st;
	struct python_frame_info fi;
	uint64_t code_type = 0, str_addr = 0;
	size_t nd = 0, cap = 0;
	char *line = NULL;
	int minor = 0, err;

	err = child_start(&ch, py);
	CHECK(!err && c, "%s: %s", py, strerror(-err));
	if (err || !c)
		goto out;
	while (getline(&line, &cap, ch.out) > 0 && strncmp(line, "READY", 5)) {
		if (sscanf(line, "V %d", &minor) == 1)
			l = python_layout__get(minor);
		else if (line[0] == 'T')
			sscanf(line, "T %" SCNu64 " %" SCNu64, &code_type, &str_addr);
		else if (line[0] == 'F' && nd < 16 && read_described(ch.out, &line, &cap, &ds[nd]))
			nd++;
	}
	CHECK(l != NULL, "%s: no layout for 3.%d", py, minor);
	CHECK(nd == 9, "%s: %zu code objects described", py, nd);
	if (!l)
		goto out;
	for (size_t i = 0; i < nd; i++) {
		check_described(c, ch.pid, l, code_type, &ds[i], py);
		if (!strcmp(ds[i].name, "victim"))
			victim = &ds[i];
	}
	/* The second pass over the same indexes reads nothing. */
	python_code_cache__stats(c, &st);
	CHECK_U64(st.misses, nd);
	CHECK(st.hits > 0 && st.checks > 0, "%s: hits %" PRIu64 ", checks %" PRIu64, py, st.hits,
	      st.checks);
	if (victim)
		check_others(c, &ch, l, code_type, str_addr, victim, py, &line, &cap);
	printf("test_python_code: %s (3.%d): %zu code objects named, %" PRIu64 " misses\n", py,
	       minor, nd, st.misses);
	child_stop(&ch);
	python_code_cache__expire(c);
	err = python_code__lookup(c, ch.pid, l, code_type, ds[0].addr, 0, &fi);
	CHECK(err == -ESRCH, "%s: the process is gone: %d", py, err);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.entries, 0);
out:
	if (ch.out)
		child_stop(&ch);
	for (size_t i = 0; i < nd; i++)
		free(ds[i].pairs);
	free(line);
	python_code_cache__delete(c);
}

static void test_live(void)
{
	const char *roots[] = {getenv("PYENV_ROOT"), getenv("HOME"), "/root"};
	char found[8][PATH_MAX];
	size_t nf = 0, ran = 0;

	snprintf(found[nf++], PATH_MAX, "/usr/bin/python3");
	for (size_t r = 0; r < 3; r++) {
		char pattern[PATH_MAX];
		glob_t g;

		if (!roots[r])
			continue;
		snprintf(pattern, sizeof(pattern), "%s%s/versions/3.1[0-3].*/bin/python3", roots[r],
			 r == 0 ? "" : "/.pyenv");
		if (glob(pattern, 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc && nf < 8; i++) {
			bool dup = false;

			for (size_t j = 0; j < nf; j++)
				dup |= !strcmp(found[j], g.gl_pathv[i]);
			if (!dup)
				snprintf(found[nf++], PATH_MAX, "%s", g.gl_pathv[i]);
		}
		globfree(&g);
	}
	if (access("/root/.pyenv", X_OK) && !access("/root", F_OK))
		printf("test_python_code: pyenv's interpreters under /root are not reachable as "
		       "this "
		       "user: only the ones below run\n");
	for (size_t i = 0; i < nf; i++) {
		if (access(found[i], X_OK))
			continue;
		test_live_one(found[i]);
		ran++;
	}
	CHECK(ran > 0, "no CPython 3.10 to 3.13 to run: install python3");
}

/* ---- a fake process ---- */

#define FAKE_PID 4242
#define FAKE_REGIONS 256

struct region {
	uint64_t addr;
	size_t len;
	uint8_t *bytes;
};

struct fake {
	struct region r[FAKE_REGIONS];
	size_t nr;
	uint64_t next; /* where the next object goes */
	uint64_t reads;
	int minor;
	const struct python_layout *l;
};

static int fake_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	f->reads++;
	if (pid != FAKE_PID)
		return -ESRCH;
	if (!len || len > PROC_MEM_MAX_READ)
		return -EINVAL;
	for (size_t i = 0; i < f->nr; i++) {
		const struct region *r = &f->r[i];

		if (addr >= r->addr && addr - r->addr <= r->len &&
		    len <= r->len - (addr - r->addr)) {
			memcpy(buf, r->bytes + (addr - r->addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

static uint8_t *fake_alloc(struct fake *f, size_t len, uint64_t *addr)
{
	struct region *r;

	if (f->nr == FAKE_REGIONS)
		abort();
	r = &f->r[f->nr++];
	r->addr = f->next;
	r->len = len;
	r->bytes = calloc(1, len);
	if (!r->bytes)
		abort();
	f->next += (len + 4096 + 15) & ~15ULL; /* gaps: a read past an object faults */
	*addr = r->addr;
	return r->bytes;
}

static void fake_init(struct fake *f, int minor)
{
	memset(f, 0, sizeof(*f));
	f->next = 0x7f0000000000ULL;
	f->minor = minor;
	f->l = python_layout__get(minor);
}

static void fake_free(struct fake *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->r[i].bytes);
}

/* sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) in Include/cpython/unicodeobject.h:
 * 3.10 and 3.11 have wstr (and wstr_length), 3.12 on do not. */
static size_t ascii_size(int minor)
{
	return minor >= 12 ? 40 : 48;
}

static size_t compact_size(int minor)
{
	return minor >= 12 ? 56 : 72;
}

enum str_form { STR_COMPACT, STR_LEGACY };

/* A str of n code points of kind bytes each; state bits as the header lays them out. */
static uint64_t fake_str(struct fake *f, const uint32_t *cps, size_t n, unsigned kind, bool ascii,
			 enum str_form form, uint32_t extra_state)
{
	size_t head = form == STR_LEGACY ? compact_size(f->minor) + 8
		      : ascii		 ? ascii_size(f->minor)
					 : compact_size(f->minor);
	uint64_t addr, data_addr;
	uint8_t *o = fake_alloc(f, head + (form == STR_LEGACY ? 0 : (n + 1) * kind), &addr), *d;
	int64_t len = (int64_t)n;
	uint32_t state = kind << 2 | (form == STR_COMPACT) << 5 | ascii << 6 | extra_state;

	if (f->minor < 12)
		state |= 1U << 7; /* ready */
	memcpy(o + 16, &len, 8);
	memcpy(o + 32, &state, 4);
	if (form == STR_LEGACY) {
		d = fake_alloc(f, (n + 1) * kind, &data_addr);
		memcpy(o + compact_size(f->minor), &data_addr, 8);
	} else {
		d = o + head;
	}
	for (size_t i = 0; i < n; i++) {
		uint16_t u16 = (uint16_t)cps[i];

		if (kind == 1)
			d[i] = (uint8_t)cps[i];
		else if (kind == 2)
			memcpy(d + 2 * i, &u16, 2);
		else
			memcpy(d + 4 * i, &cps[i], 4);
	}
	return addr;
}

static uint64_t fake_ascii(struct fake *f, const char *s)
{
	uint32_t cps[256];
	size_t n = strlen(s);

	for (size_t i = 0; i < n && i < 256; i++)
		cps[i] = (uint8_t)s[i];
	return fake_str(f, cps, n, 1, true, STR_COMPACT, 0);
}

static uint64_t fake_bytes(struct fake *f, const uint8_t *b, size_t n, int64_t size)
{
	uint64_t addr;
	uint8_t *o = fake_alloc(f, 32 + n + 1, &addr);

	memcpy(o + 16, &size, 8);
	if (n)
		memcpy(o + 32, b, n);
	return addr;
}

#define CODE_TYPE 0x55550000a000ULL

/* A code object of the fake's release; returns its address, *hdr its header to change later. */
static uint64_t fake_code(struct fake *f, uint64_t name, uint64_t file, int32_t first,
			  uint64_t table, uint8_t **hdr)
{
	const struct python_layout *l = f->l;
	uint64_t addr, type = CODE_TYPE;
	uint8_t *o = fake_alloc(f, l->code_size, &addr);

	memcpy(o + 8, &type, 8);
	memcpy(o + l->code_filename, &file, 8);
	memcpy(o + l->code_name, &name, 8);
	if (l->code_qualname != HP_PY_NO_OFFSET)
		memcpy(o + l->code_qualname, &name, 8);
	memcpy(o + l->code_firstlineno, &first, 4);
	memcpy(o + l->code_linetable, &table, 8);
	if (hdr)
		*hdr = o;
	return addr;
}

/* A table of two entries: units 0-1 on the first line + 1, 2-3 on + 3 (each format). */
static uint64_t fake_table(struct fake *f)
{
	static const uint8_t t310[] = {4, 1, 4, 2};
	static const uint8_t t311[] = {0x80 | 11 << 3 | 1, 0, 1, 0x80 | 12 << 3 | 1, 0, 1};

	if (f->l->lines == PYTHON_LINES_310)
		return fake_bytes(f, t310, sizeof(t310), sizeof(t310));
	return fake_bytes(f, t311, sizeof(t311), sizeof(t311));
}

static struct python_code_cache *fake_cache(struct fake *f, size_t max)
{
	struct python_code_cache *c = python_code_cache__new(max);
	struct python_mem m = {.read = fake_read, .ctx = f};

	if (!c)
		abort();
	python_code_cache__set_reader(c, &m);
	return c;
}

static int lookup(struct python_code_cache *c, struct fake *f, uint64_t code, uint32_t index,
		  struct python_frame_info *fi)
{
	return python_code__lookup(c, FAKE_PID, f->l, CODE_TYPE, code, index, fi);
}

/* Every kind of str, in every release's header. */
static void test_strings(int minor)
{
	static const uint32_t latin1[] = {0xf1, 'a', 'n', 'd', 0xfa};
	static const uint32_t ucs2[] = {0x51fd, 0x6570, '.', 'p', 'y'};
	static const uint32_t ucs4[] = {'/', 0x1f40d, 0xdcff, 0, 0x110000, 'x'};
	static const struct {
		const uint32_t *cps;
		size_t n;
		unsigned kind;
		enum str_form form;
		const char *want;
	} cases[] = {
		{latin1, 5, 1, STR_COMPACT,
		 "\xc3\xb1"
		 "and\xc3\xba"},
		{ucs2, 5, 2, STR_COMPACT, "\xe5\x87\xbd\xe6\x95\xb0.py"},
		/* A lone surrogate, U+0000, past U+10FFFF: U+FFFD each. */
		{ucs4, 6, 4, STR_COMPACT,
		 "/\xf0\x9f\x90\x8d" UTF8_REPLACEMENT UTF8_REPLACEMENT UTF8_REPLACEMENT "x"},
		{ucs2, 5, 2, STR_LEGACY, "\xe5\x87\xbd\xe6\x95\xb0.py"},
		{latin1, 0, 1, STR_COMPACT, ""},
	};
	struct fake f;
	struct python_code_cache *c;
	struct python_frame_info fi;
	uint64_t file, table;
	int err;

	fake_init(&f, minor);
	c = fake_cache(&f, 0);
	file = fake_ascii(&f, "/srv/app.py");
	table = fake_table(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t name = fake_str(&f, cases[i].cps, cases[i].n, cases[i].kind, false,
					 cases[i].form, 0);
		uint64_t code = fake_code(&f, name, file, 10, table, NULL);

		err = lookup(c, &f, code, 2, &fi);
		CHECK(err == 0, "3.%d case %zu: %s", minor, i, strerror(-err));
		if (err)
			continue;
		CHECK_STR(fi.qualname, cases[i].want);
		CHECK_STR(fi.filename, "/srv/app.py");
		CHECK_U64(fi.line, 13);
		CHECK_U64(fi.first_line, 10);
	}
	/* A str said to be ASCII holding a byte above 127: U+FFFD, never raw. */
	{
		uint32_t bad[] = {'a', 0xe9, 'b'};
		uint64_t name = fake_str(&f, bad, 3, 1, true, STR_COMPACT, 0);
		uint64_t code = fake_code(&f, name, file, 10, table, NULL);

		err = lookup(c, &f, code, 0, &fi);
		CHECK(err == 0, "3.%d: %d", minor, err);
		if (!err)
			CHECK_STR(fi.qualname, "a" UTF8_REPLACEMENT "b");
	}
	python_code_cache__delete(c);
	fake_free(&f);
}

/* Names over the cap are cut at a character, within PYTHON_STR_MAX with the NUL. */
static void test_long_strings(void)
{
	static uint32_t cps[3000];
	struct fake f;
	struct python_code_cache *c;
	struct python_frame_info fi;
	uint64_t table, name, file, code;
	int err;

	fake_init(&f, 12);
	c = fake_cache(&f, 0);
	for (size_t i = 0; i < 3000; i++)
		cps[i] = i % 2 ? 0x1f40d : 0x20ac; /* 4 and 3 bytes of UTF-8 */
	name = fake_str(&f, cps, 3000, 4, false, STR_COMPACT, 0);
	for (size_t i = 0; i < 3000; i++)
		cps[i] = 'a' + i % 26;
	file = fake_str(&f, cps, 3000, 1, true, STR_COMPACT, 0);
	table = fake_table(&f);
	code = fake_code(&f, name, file, 1, table, NULL);
	err = lookup(c, &f, code, 0, &fi);
	CHECK(err == 0, "%s", strerror(-err));
	if (!err) {
		CHECK(strlen(fi.qualname) < PYTHON_STR_MAX && strlen(fi.qualname) > 1000,
		      "%zu bytes", strlen(fi.qualname));
		CHECK(utf8__valid(fi.qualname, strlen(fi.qualname)), "cut at a character");
		CHECK_U64(strlen(fi.filename), PYTHON_STR_MAX - 1);
	}
	python_code_cache__delete(c);
	fake_free(&f);
}

/* What is not a code object, or not a sane one, is -EINVAL, and counted. */
static void test_invalid(int minor)
{
	struct fake f;
	struct python_code_cache *c;
	struct python_frame_info fi;
	struct python_code_stats st;
	uint64_t name, file, table, code, big, neg, bad_kind, unready, unmapped = 0x7e0000000000ULL;
	uint32_t cps[] = {'x'};
	uint8_t *hdr;
	int err;

	fake_init(&f, minor);
	c = fake_cache(&f, 0);
	name = fake_ascii(&f, "f");
	file = fake_ascii(&f, "f.py");
	table = fake_table(&f);
	code = fake_code(&f, name, file, 1, table, &hdr);
	err = python_code__lookup(c, FAKE_PID, f.l, CODE_TYPE + 16, code, 0, &fi);
	CHECK(err == -EINVAL, "3.%d: another type: %d", minor, err);
	CHECK(lookup(c, &f, fake_code(&f, name, file, -1, table, NULL), 0, &fi) == -EINVAL,
	      "3.%d: a negative first line", minor);
	big = fake_bytes(&f, NULL, 0, PYTHON_CODE_MAX_TABLE + 1);
	CHECK(lookup(c, &f, fake_code(&f, name, file, 1, big, NULL), 0, &fi) == -EINVAL,
	      "3.%d: a line table over the bound", minor);
	neg = fake_bytes(&f, NULL, 0, -5);
	CHECK(lookup(c, &f, fake_code(&f, name, file, 1, neg, NULL), 0, &fi) == -EINVAL,
	      "3.%d: a negative size", minor);
	CHECK(lookup(c, &f, fake_code(&f, name, file, 1, table + 3, NULL), 0, &fi) == -EINVAL,
	      "3.%d: a misaligned pointer", minor);
	CHECK(lookup(c, &f, fake_code(&f, 0, file, 1, table, NULL), 0, &fi) == -EINVAL,
	      "3.%d: a null name", minor);
	bad_kind = fake_str(&f, cps, 1, 3, false, STR_COMPACT, 0);
	CHECK(lookup(c, &f, fake_code(&f, bad_kind, file, 1, table, NULL), 0, &fi) == -EINVAL,
	      "3.%d: a str of kind 3", minor);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.type_mismatches, 1);
	CHECK_U64(st.invalid, 6);
	/* Before 3.12, a str not ready (bit 7 clear) has no characters to read yet. */
	if (minor < 12) {
		unready = fake_str(&f, cps, 1, 1, true, STR_COMPACT, 0);
		f.r[f.nr - 1].bytes[32] &= 0x7f;
		CHECK(lookup(c, &f, fake_code(&f, unready, file, 1, table, NULL), 0, &fi) ==
			      -EINVAL,
		      "3.%d: a str not ready", minor);
	}
	/* Pointers to nothing: read failures. */
	CHECK(lookup(c, &f, fake_code(&f, unmapped, file, 1, table, NULL), 0, &fi) == -EFAULT,
	      "3.%d: an unmapped name", minor);
	CHECK(lookup(c, &f, unmapped, 0, &fi) == -EFAULT, "3.%d: an unmapped code object", minor);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.read_failures, 2);
	CHECK_U64(st.entries, 0);
	python_code_cache__delete(c);
	fake_free(&f);
}

/* A code object replaced at its address: found by its checksum on the next read of its header. */
static void test_checksum(void)
{
	struct fake f;
	struct python_code_cache *c;
	struct python_frame_info fi;
	struct python_code_stats st;
	uint64_t a, b, file, table, code, reads;
	uint8_t *hdr;
	int err;

	fake_init(&f, 13);
	c = fake_cache(&f, 0);
	a = fake_ascii(&f, "Old.f");
	b = fake_ascii(&f, "New.g");
	file = fake_ascii(&f, "m.py");
	table = fake_table(&f);
	code = fake_code(&f, a, file, 20, table, &hdr);
	err = lookup(c, &f, code, 0, &fi);
	CHECK(err == 0 && !strcmp(fi.qualname, "Old.f"), "%d", err);
	/* The same index again: answered from the kept line, nothing read. */
	reads = f.reads;
	err = lookup(c, &f, code, 0, &fi);
	CHECK(err == 0 && fi.line == 21, "%d", err);
	CHECK_U64(f.reads, reads);
	/* Another index: the header only, one read. */
	err = lookup(c, &f, code, 3, &fi);
	CHECK(err == 0 && fi.line == 23, "%d", err);
	CHECK_U64(f.reads, reads + 1);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.misses, 1);
	CHECK_U64(st.hits, 1);
	CHECK_U64(st.checks, 1);

	/* The object is replaced by another (its name and first line differ). */
	memcpy(hdr + f.l->code_name, &b, 8);
	memcpy(hdr + f.l->code_qualname, &b, 8);
	memset(hdr + f.l->code_firstlineno, 0, 4);
	hdr[f.l->code_firstlineno] = 40;
	/* A kept line is trusted until expire (that is the bargain: no read)... */
	err = lookup(c, &f, code, 0, &fi);
	CHECK(err == 0 && !strcmp(fi.qualname, "Old.f"), "kept line");
	/* ...a new index reads the header, sees the change and reads the object again. */
	err = lookup(c, &f, code, 1, &fi);
	CHECK(err == 0 && !strcmp(fi.qualname, "New.g") && fi.line == 41 && fi.first_line == 40,
	      "replaced: %d %s %" PRId64, err, err ? "" : fi.qualname, err ? 0 : fi.line);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.replaced, 1);
	CHECK_U64(st.misses, 2);
	CHECK_U64(st.entries, 1);

	/* Replaced back; after expire, even a kept line checks the header first. */
	memcpy(hdr + f.l->code_name, &a, 8);
	memcpy(hdr + f.l->code_qualname, &a, 8);
	python_code_cache__expire(c);
	err = lookup(c, &f, code, 1, &fi);
	CHECK(err == 0 && !strcmp(fi.qualname, "Old.f") && fi.line == 41, "after expire");
	python_code_cache__stats(c, &st);
	CHECK_U64(st.replaced, 2);
	/* Unchanged after another expire: a check, then the kept line again. */
	python_code_cache__expire(c);
	err = lookup(c, &f, code, 1, &fi);
	CHECK(err == 0 && fi.line == 41, "%d", err);
	reads = f.reads;
	err = lookup(c, &f, code, 1, &fi);
	CHECK(err == 0 && f.reads == reads, "a kept line after the check");
	python_code_cache__stats(c, &st);
	CHECK_U64(st.checks, 2);

	/* The same address under another code type (the process exec'd): read again. */
	err = python_code__lookup(c, FAKE_PID, f.l, CODE_TYPE + 16, code, 1, &fi);
	CHECK(err == -EINVAL, "another interpreter's type: %d", err);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.entries, 0);

	/* The object freed and its memory unmapped: the entry goes with the failed read. */
	err = lookup(c, &f, code, 1, &fi);
	CHECK(err == 0, "%d", err);
	f.r[f.nr - 1].addr = 0x10; /* the header, allocated last */
	err = lookup(c, &f, code, 2, &fi);
	CHECK(err == -EFAULT, "unmapped: %d", err);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.entries, 0);
	python_code_cache__delete(c);
	fake_free(&f);
}

/* Bounded in bytes, least recently used first; forget_pid; a process gone. */
static void test_bounds(void)
{
	static uint8_t t[4096];
	struct fake f;
	struct python_code_cache *c;
	struct python_frame_info fi;
	struct python_code_stats st;
	uint64_t codes[60], file, name;
	size_t over = 0;
	int err;

	fake_init(&f, 11);
	c = fake_cache(&f, 64 * 1024);
	for (size_t i = 0; i < sizeof(t); i += 3) {
		t[i] = 0x80 | 11 << 3;
		if (i + 2 < sizeof(t))
			t[i + 1] = t[i + 2] = 0;
	}
	file = fake_ascii(&f, "big.py");
	name = fake_ascii(&f, "g");
	for (size_t i = 0; i < 60; i++) {
		uint64_t table = fake_bytes(&f, t, sizeof(t), sizeof(t));

		codes[i] = fake_code(&f, name, file, (int32_t)i, table, NULL);
		err = lookup(c, &f, codes[i], 5, &fi);
		CHECK(err == 0 && fi.line == (int64_t)i + 6, "%zu: %d", i, err);
		python_code_cache__stats(c, &st);
		over += st.bytes > st.max_bytes;
		/* Keep the first one in use: the least recently used are others. */
		CHECK(lookup(c, &f, codes[0], 5, &fi) == 0, "%zu", i);
	}
	python_code_cache__stats(c, &st);
	CHECK_U64(over, 0);
	CHECK(st.evictions > 40 && st.entries < 16, "evictions %" PRIu64 ", entries %zu",
	      st.evictions, st.entries);
	CHECK_U64(st.misses, 60);
	/* codes[0] stayed; codes[1] was evicted and is read again. */
	CHECK(lookup(c, &f, codes[1], 5, &fi) == 0, "evicted one");
	python_code_cache__stats(c, &st);
	CHECK_U64(st.misses, 61);

	python_code_cache__forget_pid(c, FAKE_PID + 1);
	python_code_cache__stats(c, &st);
	CHECK(st.entries > 0, "another process's forget leaves these");
	python_code_cache__forget_pid(c, FAKE_PID);
	python_code_cache__stats(c, &st);
	CHECK_U64(st.entries, 0);
	CHECK(st.bytes < 4096, "only the index left: %zu bytes", st.bytes);

	/* A line table over PROC_MEM_MAX_READ, read in pieces. */
	{
		size_t n = 3 * PROC_MEM_MAX_READ;
		uint8_t *big = malloc(n);
		uint64_t table, code;

		if (!big)
			abort();
		for (size_t i = 0; i < n; i += 3) {
			big[i] = 0x80 | 11 << 3;
			big[i + 1] = big[i + 2] = 0;
		}
		table = fake_bytes(&f, big, n, (int64_t)n);
		code = fake_code(&f, name, file, 0, table, NULL);
		err = lookup(c, &f, code, (uint32_t)(n / 3 - 1), &fi);
		CHECK(err == 0 && fi.line == (int64_t)(n / 3), "%d %" PRId64, err,
		      err ? 0 : fi.line);
		free(big);
	}
	/* The process gone: -ESRCH, its entries forgotten. */
	err = python_code__lookup(c, FAKE_PID + 1, f.l, CODE_TYPE, codes[0], 5, &fi);
	CHECK(err == -ESRCH, "%d", err);
	python_code_cache__delete(c);
	fake_free(&f);
	python_code_cache__delete(NULL);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_live();
	for (int minor = PYTHON_LAYOUT_MIN_MINOR; minor <= PYTHON_LAYOUT_MAX_MINOR; minor++) {
		test_strings(minor);
		test_invalid(minor);
	}
	test_long_strings();
	test_checksum();
	test_bounds();
	return check_summary("test_python_code");
}

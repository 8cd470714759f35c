// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/python_lines.h: the line of a code unit from a CPython line table.
 *
 * Against CPython itself: $OUTPUT/fixtures/python-lines/3.N.txt (tests/unit/python.mk) holds, for
 * every interpreter the fixtures found, line tables of real code objects and the line of each
 * code unit as that interpreter's co_positions() or co_lines() gives it. Then hand-built tables for
 * what compilers rarely write: ranges without lines, long forms, lines far apart, broken and
 * truncated tables, each read from the end of a page followed by an unmapped one.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "fixture_paths.h"
#include "interp/python_lines.h"

/* Code objects with more units than this are checked at a sample of them: each lookup walks the
 * table from its start. */
#define CHECK_ALL_UNITS 3000

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One record of the fixture: "C minor first hex" then "L line...". */
struct record {
	int minor;
	int64_t first;
	uint8_t *table;
	size_t len;
	int64_t *lines;
	size_t units;
};

static int parse_c(char *s, struct record *r)
{
	char *hex;
	size_t n;

	if (sscanf(s, "C %d %" SCNd64, &r->minor, &r->first) != 2)
		return -EINVAL;
	hex = strrchr(s, ' ');
	if (!hex)
		return -EINVAL;
	hex++;
	n = strcspn(hex, "\n");
	r->table = malloc(n / 2 + 1);
	if (!r->table)
		return -ENOMEM;
	for (r->len = 0; r->len < n / 2; r->len++) {
		int hi = hexval(hex[2 * r->len]), lo = hexval(hex[2 * r->len + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		r->table[r->len] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int parse_l(char *s, struct record *r)
{
	size_t cap = 64;
	char *p = s + 1, *end;

	if (s[0] != 'L')
		return -EINVAL;
	r->lines = malloc(cap * sizeof(*r->lines));
	if (!r->lines)
		return -ENOMEM;
	for (;;) {
		long long v = strtoll(p, &end, 10);

		if (end == p)
			break;
		if (r->units == cap) {
			int64_t *more = realloc(r->lines, 2 * cap * sizeof(*r->lines));

			if (!more)
				return -ENOMEM;
			r->lines = more;
			cap *= 2;
		}
		r->lines[r->units++] = v;
		p = end;
	}
	return 0;
}

/* Every unit of a small code object, a spread of a large one's and its last ones. */
static size_t check_record(const struct record *r, const char *file, size_t nth)
{
	enum python_line_format fmt = r->minor >= 11 ? PYTHON_LINES_311 : PYTHON_LINES_310;
	size_t step = r->units > CHECK_ALL_UNITS ? r->units / 1000 + 1 : 1, bad = 0;

	for (size_t i = 0; i < r->units; i++) {
		int64_t got;

		if (i % step && i + 4 < r->units)
			continue;
		got = python_lines__line(fmt, r->table, r->len, r->first, (uint32_t)i);
		if (got != r->lines[i] && !bad++)
			fprintf(stderr,
				"%s: code object %zu (first line %" PRId64
				", %zu units): unit %zu: "
				"line %" PRId64 ", CPython says %" PRId64 "\n",
				file, nth, r->first, r->units, i, got, r->lines[i]);
	}
	/* Past the last unit there is no line. */
	if (python_lines__line(fmt, r->table, r->len, r->first, (uint32_t)r->units + 8) != 0)
		bad++;
	return bad;
}

static void test_file(const char *path, const char *name, size_t *records, size_t *units)
{
	FILE *f = fopen(path, "r");
	char *c_line = NULL, *l_line = NULL;
	size_t c_cap = 0, l_cap = 0, nth = 0, bad_records = 0;

	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	if (!f)
		return;
	while (getline(&c_line, &c_cap, f) > 0 && getline(&l_line, &l_cap, f) > 0) {
		struct record r = {0};
		int err = parse_c(c_line, &r);

		if (!err)
			err = parse_l(l_line, &r);
		CHECK(!err, "%s: record %zu does not parse: %s", name, nth, strerror(-err));
		if (!err && check_record(&r, name, nth))
			bad_records++;
		*units += r.units;
		free(r.table);
		free(r.lines);
		nth++;
	}
	CHECK(nth > 10, "%s: only %zu records", name, nth);
	CHECK(bad_records == 0, "%s: %zu of %zu code objects have lines CPython disagrees with",
	      name, bad_records, nth);
	*records += nth;
	free(c_line);
	free(l_line);
	fclose(f);
}

static void test_against_cpython(void)
{
	const char *dir = fx("python-lines");
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t files = 0, records = 0, units = 0;
	bool debian = false;

	CHECK(d != NULL, "%s: %s (make unit-fixtures)", dir, strerror(errno));
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (!strstr(e->d_name, ".txt"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		test_file(path, e->d_name, &records, &units);
		debian |= strncmp(e->d_name, "system-", 7) == 0;
		files++;
	}
	closedir(d);
	CHECK(debian, "no table from the system's python3 in %s", dir);
	printf("test_python_lines: %zu interpreters, %zu code objects, %zu code units against "
	       "CPython's own\n",
	       files, records, units);
}

/* A table at the very end of a readable page, an unmapped page after it: a read past its end
 * faults. */
struct guarded {
	uint8_t *map;
	size_t page;
};

static const uint8_t *guard(struct guarded *g, const uint8_t *t, size_t len)
{
	g->page = (size_t)sysconf(_SC_PAGESIZE);
	g->map =
		mmap(NULL, 2 * g->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED || mprotect(g->map + g->page, g->page, PROT_NONE) || len > g->page)
		abort();
	memcpy(g->map + g->page - len, t, len);
	return g->map + g->page - len;
}

static int64_t line_at(enum python_line_format fmt, const uint8_t *t, size_t len, int64_t first,
		       uint32_t index)
{
	struct guarded g;
	const uint8_t *p = guard(&g, t, len);
	int64_t line = python_lines__line(fmt, p, len, first, index);

	munmap(g.map, 2 * g.page);
	return line;
}

#define L310(first, index, ...)                                                                    \
	({                                                                                         \
		const uint8_t t_[] = {__VA_ARGS__};                                                \
		line_at(PYTHON_LINES_310, t_, sizeof(t_), (first), (index));                       \
	})

static void test_310(void)
{
	CHECK_U64(python_lines__line(PYTHON_LINES_310, NULL, 0, 5, 0), 0);
	CHECK_U64(line_at(PYTHON_LINES_310, (const uint8_t *)"", 0, 5, 0), 0);
	/* Six bytes on line 11: units 0 to 2; unit 3 is past the ranges. */
	CHECK_U64(L310(10, 0, 6, 1), 11);
	CHECK_U64(L310(10, 2, 6, 1), 11);
	CHECK_U64(L310(10, 3, 6, 1), 0);
	/* A range without a line (-128) leaves the running line where it was. */
	CHECK_U64(L310(10, 1, 4, 0, 4, 0x80, 4, 2), 10);
	CHECK_U64(L310(10, 2, 4, 0, 4, 0x80, 4, 2), 0);
	CHECK_U64(L310(10, 3, 4, 0, 4, 0x80, 4, 2), 0);
	CHECK_U64(L310(10, 4, 4, 0, 4, 0x80, 4, 2), 12);
	/* Lines far apart: empty ranges of +127 before the range itself. */
	CHECK_U64(L310(1, 0, 0, 127, 0, 127, 2, 6), 261);
	/* And back: -127 steps. */
	CHECK_U64(L310(300, 0, 0, 0x81, 0, 0x81, 2, 0xfb), 41);
	/* More than 254 bytes of one line: the rest in a next range with no change. */
	CHECK_U64(L310(1, 126, 254, 5, 10, 0, 2, 1), 6);
	CHECK_U64(L310(1, 127, 254, 5, 10, 0, 2, 1), 6);
	CHECK_U64(L310(1, 132, 254, 5, 10, 0, 2, 1), 7);
	/* Lines below 1 are none. */
	CHECK_U64(L310(3, 0, 2, 0xfb), 0);
	/* An odd byte at the end is no pair. */
	CHECK_U64(L310(3, 0, 2, 1, 7), 4);
	CHECK_U64(L310(3, 1, 2, 1, 7), 0);
	/* The largest index there is, and a first line no line table reaches. */
	CHECK_U64(L310(3, UINT32_MAX, 255, 1), 0);
	CHECK(L310(INT64_MAX, 0, 2, 127) <= (1LL << 40) + 127, "the line stays bounded");
}

/* An unsigned varint (Objects/locations.md) into p; returns its length. */
static size_t put_varint(uint8_t *p, uint32_t v)
{
	size_t n = 0;

	while (v >= 64) {
		p[n++] = (uint8_t)(64 | (v & 63));
		v >>= 6;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static size_t put_svarint(uint8_t *p, int32_t v)
{
	return put_varint(p, v < 0 ? ((uint32_t)-v << 1) | 1 : (uint32_t)v << 1);
}

/* The first byte of an entry of this kind covering units code units. */
static uint8_t head(int kind, int units)
{
	return (uint8_t)(0x80 | kind << 3 | (units - 1));
}

#define L311(first, index, ...)                                                                    \
	({                                                                                         \
		const uint8_t t_[] = {__VA_ARGS__};                                                \
		line_at(PYTHON_LINES_311, t_, sizeof(t_), (first), (index));                       \
	})

static void test_311_forms(void)
{
	uint8_t t[64];
	size_t n = 0;

	/* Short form (kind 0-9): same line, one byte of columns. */
	CHECK_U64(L311(7, 0, head(3, 2), 0x12), 7);
	CHECK_U64(L311(7, 1, head(3, 2), 0x12), 7);
	CHECK_U64(L311(7, 2, head(3, 2), 0x12), 0);
	/* One-line forms 10-12: +0, +1, +2, two column bytes. */
	CHECK_U64(L311(7, 0, head(10, 1), 1, 2), 7);
	CHECK_U64(L311(7, 0, head(11, 1), 1, 2), 8);
	CHECK_U64(L311(7, 0, head(12, 1), 1, 2), 9);
	CHECK_U64(L311(7, 1, head(12, 1), 1, 2, head(12, 8), 1, 2), 11);
	CHECK_U64(L311(7, 8, head(12, 1), 1, 2, head(12, 8), 1, 2), 11);
	CHECK_U64(L311(7, 9, head(12, 1), 1, 2, head(12, 8), 1, 2), 0);

	/* No columns (13) and long form (14): signed varint deltas, forwards and back, far. */
	t[n++] = head(13, 1);
	n += put_svarint(t + n, 100000);
	t[n++] = head(14, 3);
	n += put_svarint(t + n, -99990);
	n += put_varint(t + n, 2);     /* end line */
	n += put_varint(t + n, 4);     /* start column */
	n += put_varint(t + n, 70000); /* end column */
	t[n++] = head(15, 2);	       /* no location */
	t[n++] = head(13, 1);
	n += put_svarint(t + n, 1);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 0), 100005);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 1), 15);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 3), 15);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 4), 0);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 5), 0);
	/* The entry after "no location" moves from the line before it. */
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 6), 16);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 7), 0);
	/* A line moved below 1 is none; the next entry still moves from it. */
	n = 0;
	t[n++] = head(13, 1);
	n += put_svarint(t + n, -10);
	t[n++] = head(13, 1);
	n += put_svarint(t + n, 12);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 0), 0);
	CHECK_U64(line_at(PYTHON_LINES_311, t, n, 5, 1), 7);
}

static void test_311_broken(void)
{
	/* A varint cut short by the end of the table, or by the next entry's first byte. */
	CHECK_U64(L311(7, 0, head(13, 1), 0x41), 0);
	CHECK_U64(L311(7, 0, head(13, 1)), 0);
	CHECK_U64(L311(7, 1, head(13, 1), 0x41, head(0, 1), 0), 0);
	/* A varint of more chunks than any number has. */
	CHECK_U64(L311(7, 0, head(14, 1), 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x02), 0);
	/* Entries before a broken one still answer. */
	CHECK_U64(L311(7, 0, head(11, 1), 0, 0, head(13, 1), 0x7f), 8);
	/* Bytes without bit 7 at the start: one entry, as CPython's walk takes it. */
	CHECK(L311(7, 0, 0x05, 0x01, 0x02) >= 0, "no crash on stray bytes");
	/* Indexes far past the end. */
	CHECK_U64(L311(7, UINT32_MAX, head(0, 8), 0), 0);
	/* Short entries missing their column bytes: the line is still known. */
	CHECK_U64(L311(7, 0, head(11, 1)), 8);
	/* An unknown format. */
	CHECK_U64(python_lines__line((enum python_line_format)7, (const uint8_t *)"\x80", 1, 3, 0),
		  0);
}

/* A long table of one-unit entries: every index answered from its own entry. */
static void test_311_long(void)
{
	size_t n = 200000;
	uint8_t *t = malloc(3 * n);
	size_t bad = 0;

	if (!t)
		abort();
	for (size_t i = 0; i < n; i++) {
		t[3 * i] = head(11, 1);
		t[3 * i + 1] = 1;
		t[3 * i + 2] = 2;
	}
	for (uint32_t i = 0; i < n; i += 9973)
		bad += python_lines__line(PYTHON_LINES_311, t, 3 * n, 0, i) != (int64_t)i + 1;
	CHECK_U64(bad, 0);
	CHECK_U64(python_lines__line(PYTHON_LINES_311, t, 3 * n, 0, (uint32_t)n - 1), n);
	CHECK_U64(python_lines__line(PYTHON_LINES_311, t, 3 * n, 0, (uint32_t)n), 0);
	free(t);
}

int main(void)
{
	if (fixture_paths__init("test_python_lines")) {
		perror("mkdtemp");
		return 1;
	}
	test_against_cpython();
	test_310();
	test_311_forms();
	test_311_broken();
	test_311_long();
	rmdir(tmpdir);
	return check_summary("test_python_lines");
}

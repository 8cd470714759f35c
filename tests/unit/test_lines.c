// SPDX-License-Identifier: BSD-2-Clause
/*
 * File, line and inline frames from DWARF, end to end: dso → symbolizer → builder → profile →
 * folded, pprof and OTLP. The fixture fx_inline has a two-deep chain of always-inline functions
 * in fx_outer; fx_ranges has deeper and sibling inlined instances, a function split into a hot
 * and a .cold part (DW_AT_ranges) and a CU without functions, for the per-CU function index
 * (dwarf_index.c). What each address must resolve to comes from binutils' addr2line (X.lines),
 * not from our reader.
 */
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/builder.h"
#include "check.h"
#include "symbols/dso.h"
#include "symbols/dwarf_index.h"
#include "formats/encode.h"
#include "fake_proc.h"

#define MAX_ADDRS 512

struct expect {
	uint64_t addr;
	size_t n;
	struct {
		char function[64];
		char file[256];
		int64_t line;
	} lines[DSO_MAX_LINES];
};

static struct expect expects[MAX_ADDRS], range_expects[MAX_ADDRS];
static size_t nr_expects, nr_range_expects;

/* Reads `addr2line -a -f -i` output: "0xADDR", then (function, file:line) pairs. */
static void read_expects(const char *binary, struct expect *into, size_t *count)
{
	char path[3 * PATH_MAX], fn[64], pos[256];
	struct expect *e = NULL;
	size_t nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.lines", fixtures, binary);
	f = fopen(path, "r");
	CHECK(f != NULL, "%s missing: run make unit-fixtures", path);
	if (!f)
		return;
	while (fgets(fn, sizeof(fn), f)) {
		char *colon, *disc;

		fn[strcspn(fn, "\n")] = '\0';
		if (!strncmp(fn, "0x", 2)) {
			if (nr == MAX_ADDRS)
				break;
			e = &into[nr++];
			e->addr = strtoull(fn, NULL, 16);
			e->n = 0;
			continue;
		}
		if (!e || !fgets(pos, sizeof(pos), f))
			break;
		pos[strcspn(pos, "\n")] = '\0';
		/* "file:line (discriminator N)": the discriminator is not a line. */
		disc = strstr(pos, " (discriminator");
		if (disc)
			*disc = '\0';
		colon = strrchr(pos, ':');
		if (e->n == DSO_MAX_LINES || !colon)
			continue;
		*colon = '\0';
		snprintf(e->lines[e->n].function, sizeof(e->lines[0].function), "%s", fn);
		snprintf(e->lines[e->n].file, sizeof(e->lines[0].file), "%s", pos);
		e->lines[e->n].line = strtoll(colon + 1, NULL, 10);
		e->n++;
	}
	fclose(f);
	*count = nr;
}

/* An address whose chain is fx_leaf → fx_mid → fx_outer, and its expectation. */
static const struct expect *deepest(void)
{
	for (size_t i = 0; i < nr_expects; i++)
		if (expects[i].n == 3 && !strcmp(expects[i].lines[0].function, "fx_leaf") &&
		    !strcmp(expects[i].lines[1].function, "fx_mid") &&
		    !strcmp(expects[i].lines[2].function, "fx_outer"))
			return &expects[i];
	return NULL;
}

/*
 * Every address of binary's X.lines through dso__find_lines(), against addr2line's chains, twice:
 * the second pass is answered by the line cache, with copies of what the DWARF said.
 */
static void compare_lines(struct dso_cache *c, const char *binary, const struct expect *want,
			  size_t nr_want)
{
	char path[3 * PATH_MAX];
	struct dso_line got[DSO_MAX_LINES];
	struct dso *d;
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", fixtures, binary);
	CHECK(stat(path, &st) == 0, "setup: %s", path);
	d = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
	CHECK(d && dso__readable(d), "%s unreadable: %s", binary, dso__error(d));
	if (!d)
		return;
	CHECK(nr_want > 4, "only %zu addresses in %s.lines", nr_want, binary);
	for (size_t k = 0; k < 2 * nr_want; k++) {
		const struct expect *e = &want[k % nr_want];
		size_t n = dso__find_lines(d, e->addr, got, DSO_MAX_LINES);
		bool same = n == e->n;

		for (size_t j = 0; same && j < n; j++) {
			char file[2 * PATH_MAX];

			/* addr2line joins a relative name to the compilation directory. */
			snprintf(file, sizeof(file), "%s%s%s",
				 got[j].file && got[j].file[0] != '/' && got[j].comp_dir
					 ? got[j].comp_dir
					 : "",
				 got[j].file && got[j].file[0] != '/' && got[j].comp_dir ? "/" : "",
				 got[j].file ? got[j].file : "");
			same = got[j].function && !strcmp(got[j].function, e->lines[j].function) &&
			       !strcmp(file, e->lines[j].file) && got[j].line == e->lines[j].line;
		}
		CHECK(same,
		      "%s 0x%" PRIx64 " (pass %zu): %zu frames (want %zu), first %s %s:%" PRId64
		      " (want %s %s:%" PRId64 ")",
		      binary, e->addr, k / nr_want + 1, n, e->n, n ? got[0].function : "-",
		      n ? got[0].file : "-", n ? got[0].line : 0, e->lines[0].function,
		      e->lines[0].file, e->lines[0].line);
	}
}

static void test_dso_lines(void)
{
	char path[3 * PATH_MAX];
	struct dso_cache *c = dso_cache__new(4);
	struct dso_line got[DSO_MAX_LINES];
	struct dso *d;
	struct stat st;

	snprintf(path, sizeof(path), "%s/fx_inline", fixtures);
	CHECK(c && stat(path, &st) == 0, "setup: %s", path);
	if (!c || stat(path, &st))
		goto out;
	CHECK(deepest() != NULL, "addr2line shows no fx_leaf/fx_mid/fx_outer chain");
	compare_lines(c, "fx_inline", expects, nr_expects);
	compare_lines(c, "fx_ranges", range_expects, nr_range_expects);
	d = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
	if (!d)
		goto out;
	/* Asking for fewer keeps the innermost and the real function last. */
	if (deepest()) {
		size_t n = dso__find_lines(d, deepest()->addr, got, 2);

		CHECK_U64(n, 2);
		CHECK_STR(got[0].function, "fx_leaf");
		CHECK_STR(got[1].function, "fx_outer");
	}
	/* No DWARF (libfx.so is built without -g): nothing, and no crash. */
	snprintf(path, sizeof(path), "%s/libfx.so", fixtures);
	if (stat(path, &st) == 0) {
		d = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
		CHECK(d && dso__find_lines(d, func_addr("libfx.so", "fx_lib_alpha"), got,
					   DSO_MAX_LINES) == 0,
		      "lines from a binary without DWARF");
	}
out:
	dso_cache__delete(c);
}

/* The cache's DWARF bytes and the tables dropped or handles closed for the budget. */
static void dwarf_stats(struct dso_cache *c, size_t *bytes, uint64_t *closed)
{
	struct dso_dwarf_stats st;

	dso_cache__dwarf_stats(c, &st);
	*bytes = st.bytes;
	*closed = st.closed;
}

/* addr's chain through the index alone, against addr2line's: the functions, and each inlined
 * frame's call line, which is the next frame's line. */
static bool index_agrees(struct dwarf_index *x, Dwarf *dw, const struct expect *e)
{
	struct dwarf_frame fr[DWARF_INDEX_MAX_DEPTH + 1];
	Dwarf_Die cu;
	bool built;
	int n;

	if (!dwarf_addrdie(dw, e->addr, &cu))
		return false;
	n = dwarf_index__frames(x, &cu, e->addr, fr, DWARF_INDEX_MAX_DEPTH + 1, &built);
	if (n < 0 || (size_t)n != e->n)
		return false;
	for (int i = 0; i < n; i++)
		if (!fr[i].function || strcmp(fr[i].function, e->lines[i].function) ||
		    fr[i].inlined != (i + 1 < n) ||
		    (i + 1 < n && fr[i].call_line != e->lines[i + 1].line))
			return false;
	return true;
}

struct func_ranges {
	const char *name;
	int ranges;
};

static int count_ranges(Dwarf_Die *die, void *arg)
{
	struct func_ranges *f = arg;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	if (!dwarf_diename(die) || strcmp(dwarf_diename(die), f->name))
		return DWARF_CB_OK;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		f->ranges++;
	return DWARF_CB_ABORT;
}

static const struct expect *find_range_expect(bool (*pred)(const struct expect *))
{
	for (size_t i = 0; i < nr_range_expects; i++)
		if (pred(&range_expects[i]))
			return &range_expects[i];
	return NULL;
}

static bool is_nested(const struct expect *e)
{
	return e->n == 4 && !strcmp(e->lines[0].function, "fx_r_leaf") &&
	       !strcmp(e->lines[1].function, "fx_r_mid") &&
	       !strcmp(e->lines[2].function, "fx_r_top") &&
	       !strcmp(e->lines[3].function, "fx_nest");
}

/* An address of fx_split's .cold part, inside an instance inlined there. */
static bool in_cold_inline(const struct expect *e)
{
	uint64_t cold = func_addr("fx_ranges", "fx_split.cold");
	uint64_t hot = func_addr("fx_ranges", "fx_split");

	return cold && e->addr >= cold && (cold > hot || e->addr < hot) && e->n >= 2 &&
	       !strcmp(e->lines[e->n - 1].function, "fx_split");
}

static bool in_hot_split(const struct expect *e)
{
	uint64_t hot = func_addr("fx_ranges", "fx_split");

	return hot && e->addr >= hot && !strcmp(e->lines[e->n - 1].function, "fx_split");
}

/* The index on its own, over fx_ranges: nested and sibling inlined instances, a function and
 * an inlined instance with several ranges, a CU without functions, and bad arguments. */
static void test_dwarf_index(void)
{
	struct dwarf_frame fr[DWARF_INDEX_MAX_DEPTH + 1];
	struct func_ranges split = {.name = "fx_split"};
	struct dwarf_index_stats st;
	const struct expect *nested = find_range_expect(is_nested), *sibling = NULL;
	char path[3 * PATH_MAX];
	struct dwarf_index *x = dwarf_index__new();
	Dwarf_Off off = 0, next;
	Dwarf *dw = NULL;
	size_t hsize;
	bool built, found_nofunc = false;
	int fd, n;

	snprintf(path, sizeof(path), "%s/fx_ranges", fixtures);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	CHECK(x && dw, "setup: %s", path);
	if (!x || !dw)
		goto out;
	for (size_t i = 0; i < nr_range_expects; i++)
		CHECK(index_agrees(x, dw, &range_expects[i]),
		      "index: 0x%" PRIx64 " (%s, %zu frames)", range_expects[i].addr,
		      range_expects[i].lines[0].function, range_expects[i].n);

	/* The fixture has what the index is for. */
	CHECK(nested != NULL, "fx_ranges.lines has no fx_r_leaf/fx_r_mid/fx_r_top/fx_nest chain");
	for (size_t i = 0; nested && i < nr_range_expects; i++)
		if (is_nested(&range_expects[i]) &&
		    range_expects[i].lines[2].line != nested->lines[2].line)
			sibling = &range_expects[i];
	CHECK(sibling != NULL, "no two sibling instances of fx_r_mid in fx_r_top");
	CHECK(find_range_expect(in_cold_inline) != NULL, "no inlined code in fx_split.cold");
	CHECK(find_range_expect(in_hot_split) != NULL, "no address in fx_split's hot part");
	{
		Dwarf_Die cu;
		uint64_t hot = func_addr("fx_ranges", "fx_split");

		if (hot && dwarf_addrdie(dw, hot, &cu))
			dwarf_getfuncs(&cu, count_ranges, &split, 0);
		CHECK(split.ranges >= 2, "fx_split has %d ranges, want a hot and a cold one",
		      split.ranges);
	}

	/* Everything so far was in one CU. */
	dwarf_index__stats(x, &st);
	CHECK(st.cus == 1 && st.funcs >= 8 && st.segments > st.funcs && st.bytes > 0,
	      "stats: %zu CUs, %zu functions, %zu segments, %zu bytes", st.cus, st.funcs,
	      st.segments, st.bytes);
	/* Too deep for the room given: the innermost, and the real function last. */
	if (nested) {
		Dwarf_Die cu;

		n = dwarf_addrdie(dw, nested->addr, &cu)
			    ? dwarf_index__frames(x, &cu, nested->addr, fr, 2, &built)
			    : -1;
		CHECK(n == 2 && !built && !strcmp(fr[0].function, "fx_r_leaf") &&
			      !strcmp(fr[1].function, "fx_nest") && !fr[1].inlined,
		      "2 of 4 frames: %d", n);
	}

	/* A CU without functions: an empty table, built once. */
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		const char *name;

		if (dwarf_offdie(dw, off + hsize, &cu) && (name = dwarf_diename(&cu)) &&
		    strstr(name, "fx_nofunc.c")) {
			uint64_t pc = func_addr("fx_ranges", "fx_nest");

			found_nofunc = true;
			n = dwarf_index__frames(x, &cu, pc, fr, DWARF_INDEX_MAX_DEPTH, &built);
			CHECK(n == 0 && built, "no-function CU: %d frames, built %d", n, built);
			n = dwarf_index__frames(x, &cu, pc, fr, DWARF_INDEX_MAX_DEPTH, &built);
			CHECK(n == 0 && !built, "no-function CU again: %d frames, built %d", n,
			      built);
			CHECK(dwarf_index__has(x, &cu), "no-function CU not kept");
		}
		off = next;
	}
	CHECK(found_nofunc, "fx_ranges has no fx_nofunc.c CU");
	dwarf_index__stats(x, &st);
	CHECK_U64(st.cus, 2);

	/* Bad arguments. */
	CHECK(dwarf_index__frames(NULL, NULL, 0, fr, 1, &built) == -EINVAL, "NULL index");
	CHECK(dwarf_index__frames(x, NULL, 0, fr, 1, &built) == -EINVAL, "NULL CU");
	CHECK(dwarf_index__frames(x, NULL, 0, fr, 0, &built) == -EINVAL, "no room");
	CHECK(!dwarf_index__has(NULL, NULL), "has(NULL)");
out:
	dwarf_index__delete(x);
	dwarf_index__delete(NULL);
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
}

/* Over the DWARF budget, the least recently used handle is closed, and opened again when its
 * lines are asked for: the answers stay the same. Two copies of fx_inline are two binaries. */
static void test_dwarf_budget(const char *tmp)
{
	char a[3 * PATH_MAX], b[PATH_MAX + 16], cmd[8 * PATH_MAX];
	struct dso_cache *c = dso_cache__new(4);
	struct dso_line got[DSO_MAX_LINES];
	const struct expect *e = deepest(), *other = NULL;
	struct stat sa, sb;
	struct dso *da, *db;
	size_t bytes;
	uint64_t closed;

	snprintf(a, sizeof(a), "%s/fx_inline", fixtures);
	snprintf(b, sizeof(b), "%s/fx_inline.copy", tmp);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", a, b);
	if (!c || !e || system(cmd) != 0 || stat(a, &sa) || stat(b, &sb)) {
		CHECK(0, "setup: copy of fx_inline");
		dso_cache__delete(c);
		return;
	}
	for (size_t i = 0; i < nr_expects && !other; i++)
		if (e && expects[i].addr != e->addr && expects[i].n)
			other = &expects[i];
	da = dso_cache__get(c, sa.st_dev, sa.st_ino, a, a);
	CHECK(da && dso__find_lines(da, e->addr, got, DSO_MAX_LINES) == e->n, "A's lines");
	dwarf_stats(c, &bytes, &closed);
	CHECK(bytes > 0 && closed == 0, "A open: %zu bytes accounted, %" PRIu64 " closed", bytes,
	      closed);
	dso_cache__set_dwarf_budget(c, bytes, NULL); /* A fits, A and B do not */
	db = dso_cache__get(c, sb.st_dev, sb.st_ino, b, b);
	CHECK(db && dso__find_lines(db, e->addr, got, DSO_MAX_LINES) == e->n, "B's lines");
	dwarf_stats(c, &bytes, &closed);
	CHECK(closed == 1, "B's open closed A's: %" PRIu64, closed);
	/* An address asked before is answered by the line cache: A is not opened again. */
	da = dso_cache__get(c, sa.st_dev, sa.st_ino, a, a);
	CHECK(da && dso__find_lines(da, e->addr, got, DSO_MAX_LINES) == e->n &&
		      !strcmp(got[0].function, "fx_leaf"),
	      "A's lines again, from the cache");
	dwarf_stats(c, &bytes, &closed);
	CHECK(closed == 1, "nothing opened for them: %" PRIu64 " closed", closed);
	/* A new address opens A again (closing B's). */
	CHECK(other && dso__find_lines(da, other->addr, got, DSO_MAX_LINES) == other->n &&
		      !strcmp(got[0].function, other->lines[0].function),
	      "A reopened gives the lines of another address");
	dwarf_stats(c, &bytes, &closed);
	CHECK(closed == 2, "and closed B's: %" PRIu64, closed);
	/* A budget that holds both closes nothing. */
	dso_cache__set_dwarf_budget(c, 1ULL << 30, NULL);
	db = dso_cache__get(c, sb.st_dev, sb.st_ino, b, b);
	dso__find_lines(db, e->addr, got, DSO_MAX_LINES);
	dwarf_stats(c, &bytes, &closed);
	CHECK(closed == 2, "within the budget: nothing closed");
	dso_cache__delete(c);
	unlink(b);
}

/* The function addresses of this test's own binary (built with -g from many CUs): up to max of
 * them, spread over the whole symbol table. */
static size_t own_functions(const char *path, uint64_t *out, size_t max)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t n = 0;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !data || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && n < max; i++) {
			GElf_Sym sym;

			if (gelf_getsym(data, (int)i, &sym) &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value &&
			    sym.st_size > 1)
				out[n++] = sym.st_value + 1;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* DWARF bytes counted by a fresh cache after looking up addrs in path's binary. */
static size_t counted_dwarf(const char *path, const uint64_t *addrs, size_t n, size_t *heap_grew)
{
	struct dso_cache *c = dso_cache__new(4);
	struct dso_line got[DSO_MAX_LINES];
	size_t bytes = 0, h0, m0;
	uint64_t closed;
	struct dso *d;
	struct stat st;

	if (!c || stat(path, &st) || !(d = dso_cache__get(c, st.st_dev, st.st_ino, path, path))) {
		dso_cache__delete(c);
		return 0;
	}
	m0 = dso_cache__memory(c);
	h0 = heap_in_use();
	for (size_t i = 0; i < n; i++)
		dso__find_lines(d, addrs[i], got, DSO_MAX_LINES);
	/* What the line cache holds is not the DWARF's: taken out of the heap's growth. */
	if (heap_grew)
		*heap_grew = heap_in_use() - h0 - (dso_cache__memory(c) - m0);
	dwarf_stats(c, &bytes, &closed);
	dso_cache__delete(c);
	return bytes;
}

static atomic_bool churning;
static void *volatile churn_sink; /* makes the allocations observable: not optimised away */

/* Another thread allocating and freeing big blocks meanwhile, as the process watcher and the
 * exporter do in the agent. */
static void *churn(void *arg)
{
	(void)arg;
	while (atomic_load(&churning)) {
		char *p = malloc(4 << 20);

		if (p)
			memset(p, 1, 4 << 20);
		churn_sink = p;
		free(churn_sink);
	}
	return NULL;
}

/*
 * What an open DWARF holds is counted (dso_lines.c, DWARF_CU_BYTES): the count must stay near what
 * the heap really grows by (within a quarter, over this binary's CUs), and must not take in what
 * other threads allocate meanwhile (it used to, and the budget filled with their noise).
 */
static void test_dwarf_count(void)
{
	static uint64_t addrs[4096];
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t n, alone, grew = 0, with_churn;
	void *probe;
	pthread_t t;

	if (len <= 0) {
		CHECK(0, "readlink /proc/self/exe");
		return;
	}
	self[len] = '\0';
	n = own_functions(self, addrs, sizeof(addrs) / sizeof(addrs[0]));
	CHECK(n > 200, "functions of %s: %zu", self, n);
	alone = counted_dwarf(self, addrs, n, &grew);
	CHECK(alone > 0, "DWARF counted: %zu", alone);
	/* A heap that mallinfo2 cannot see (a sanitizer's allocator) has nothing to compare. */
	probe = malloc(1 << 20);
	if (probe && heap_in_use() >= (1 << 20)) {
		CHECK(alone >= grew - grew / 4 && alone <= grew + grew / 4,
		      "DWARF counted %zu bytes, the heap grew by %zu", alone, grew);
	} else {
		printf("test_lines: the heap cannot be measured here; count not compared\n");
	}
	free(probe);
	atomic_store(&churning, true);
	if (pthread_create(&t, NULL, churn, NULL)) {
		CHECK(0, "pthread_create");
		return;
	}
	with_churn = counted_dwarf(self, addrs, n, NULL);
	atomic_store(&churning, false);
	pthread_join(t, NULL);
	CHECK_U64(with_churn, alone);
}

/*
 * The index's answers are libdw's: over every CU of this test's own binary (many CUs, built with
 * -g), at every line row's address and the bytes around it, the CU the map finds is the one
 * dwarf_addrdie() finds, and the position the kept rows give is dwarf_getsrc_die()'s (found or
 * not, file and line), though the index keeps fewer rows than libdw reads.
 */
static void test_index_positions(void)
{
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct dwarf_index *x = dwarf_index__new();
	struct dwarf_frame fr[DWARF_INDEX_MAX_DEPTH + 1];
	struct dwarf_index_stats st;
	size_t checked = 0, found = 0, wrong = 0, cus = 0, libdw_rows = 0, ncus;
	uint64_t any_fn = 0; /* an address with a line */
	Dwarf_Off off = 0, next;
	Dwarf *dw = NULL;
	size_t hsize;
	int fd = -1;

	if (len > 0) {
		self[len] = '\0';
		fd = open(self, O_RDONLY | O_CLOEXEC);
	}
	dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	CHECK(x && dw, "setup: own DWARF");
	if (!x || !dw)
		goto out;
	CHECK(dwarf_index__map_cus(x, dw, SIZE_MAX, &ncus) == 0 && dwarf_index__mapped(x) &&
		      ncus > 10,
	      "CU map: %zu CUs", ncus);
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nlines, rows;

		if (!dwarf_offdie(dw, off + hsize, &cu) ||
		    dwarf_getsrclines(&cu, &lines, &nlines) || dwarf_index__add_cu(x, &cu, &rows)) {
			off = next;
			continue;
		}
		cus++;
		libdw_rows += rows;
		for (size_t i = 0; i < nlines; i++) {
			Dwarf_Addr row_addr;

			if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &row_addr))
				continue;
			for (Dwarf_Addr a = row_addr ? row_addr - 1 : 0; a <= row_addr + 1; a++) {
				Dwarf_Line *l = dwarf_getsrc_die(&cu, a);
				struct dwarf_pos pos;
				const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
				int lineno = 0;
				Dwarf_Off at;
				Dwarf_Die by_aranges;

				if (l && (dwarf_lineno(l, &lineno) || lineno < 0))
					lineno = 0;
				checked++;
				if (dwarf_index__lookup(x, off + hsize, a, &pos, fr, 1) < 0 ||
				    pos.found != (l != NULL) ||
				    (l && (pos.line != lineno || !pos.file != !file ||
					   (file && strcmp(pos.file, file))))) {
					if (wrong++ < 3)
						CHECK(0,
						      "0x%" PRIx64
						      ": libdw %s:%d, index %s:%d (%d)",
						      (uint64_t)a, file ? file : "-", lineno,
						      pos.file ? pos.file : "-", pos.line,
						      pos.found);
				}
				found += pos.found;
				if (pos.found)
					any_fn = a;
				/* Where the aranges say, the map says too. */
				if (dwarf_addrdie(dw, a, &by_aranges) &&
				    (!dwarf_index__cu_of(x, a, &at) ||
				     at != dwarf_dieoffset(&by_aranges)) &&
				    wrong++ < 3)
					CHECK(0,
					      "0x%" PRIx64 ": CU %" PRIx64
					      " by the aranges, not by the map",
					      (uint64_t)a, (uint64_t)dwarf_dieoffset(&by_aranges));
			}
		}
		off = next;
	}
	dwarf_index__stats(x, &st);
	CHECK(cus > 10 && checked > 10000 && found > checked / 2 && !wrong,
	      "%zu of %zu addresses over %zu CUs differ (%zu with a line)", wrong, checked, cus,
	      found);
	/* Fewer rows kept than read, encoded in a few bytes each. */
	CHECK(st.rows > 0 && st.rows < libdw_rows && st.spans >= cus,
	      "rows: %zu kept of %zu read, %zu CU ranges", st.rows, libdw_rows, st.spans);
	printf("test_lines: index: %zu CUs, %zu of %zu line rows kept, %zu bytes\n", st.cus,
	       st.rows, libdw_rows, st.bytes);
	/* Bad arguments, and a CU not built. */
	CHECK(dwarf_index__lookup(x, 1, 0, NULL, fr, 1) == -EINVAL, "lookup in a CU not built");
	CHECK(dwarf_index__lookup(NULL, 0, 0, NULL, fr, 1) == -EINVAL, "lookup in NULL");
	CHECK(!dwarf_index__cu_of(NULL, 0, &off), "cu_of(NULL)");
	CHECK(dwarf_index__map_cus(NULL, dw, SIZE_MAX, &ncus) == -EINVAL, "map_cus(NULL)");
	{
		/* More CUs than allowed: refused, nothing kept. */
		struct dwarf_index *few = dwarf_index__new();

		CHECK(few && dwarf_index__map_cus(few, dw, 3, &ncus) == -E2BIG &&
			      !dwarf_index__mapped(few) && !dwarf_index__cu_of(few, any_fn, &off),
		      "map_cus past 3 CUs");
		dwarf_index__delete(few);
	}
	dwarf_index__drop_cus(x);
	dwarf_index__stats(x, &st);
	CHECK(st.cus == 0 && st.rows == 0 && st.spans > 0 && any_fn &&
		      dwarf_index__cu_of(x, any_fn, &off),
	      "drop_cus keeps the map: %zu CUs, %zu spans", st.cus, st.spans);
out:
	dwarf_index__delete(x);
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
}

/* Looks up addrs[from, to) + delta in d and in f, counting the answers that agree. */
static void lines_agree(struct dso *d, struct dso *f, const uint64_t *addrs, size_t from, size_t to,
			uint64_t delta, size_t *same, size_t *compared)
{
	struct dso_line got[DSO_MAX_LINES], want[DSO_MAX_LINES];

	for (size_t i = from; i < to; i++) {
		size_t ng = dso__find_lines(d, addrs[i] + delta, got, DSO_MAX_LINES);
		size_t nw = dso__find_lines(f, addrs[i] + delta, want, DSO_MAX_LINES);

		(*compared)++;
		*same +=
			ng == nw &&
			(!ng || ((!got[0].function) == (!want[0].function) &&
				 got[ng - 1].line == want[nw - 1].line &&
				 (!got[0].function || !strcmp(got[0].function, want[0].function))));
	}
}

/*
 * A handle idle for a whole drain is let go, and its tables answer: another address of a CU met
 * before needs no reopening; a CU not met before opens the file again; opened again
 * DWARF_OPENS_BEFORE_ALL times (3), the binary has all its CUs' tables built and is never opened
 * again. The answers are a fresh cache's, which never lets its handle go.
 */
static void test_dwarf_release(void)
{
	static uint64_t addrs[4096];
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct dso_cache *c = dso_cache__new(4), *fresh = dso_cache__new(4);
	struct dso_dwarf_stats st;
	struct dso *d, *f;
	struct stat sb;
	size_t n, same = 0, compared = 0, q;

	if (len <= 0 || !c || !fresh) {
		CHECK(0, "setup");
		goto out;
	}
	self[len] = '\0';
	n = own_functions(self, addrs, sizeof(addrs) / sizeof(addrs[0]));
	q = n / 8;
	if (n < 100 || stat(self, &sb) ||
	    !(d = dso_cache__get(c, sb.st_dev, sb.st_ino, self, self)) ||
	    !(f = dso_cache__get(fresh, sb.st_dev, sb.st_ino, self, self))) {
		CHECK(0, "setup: %zu functions", n);
		goto out;
	}
	/* The first quarter of the functions, then a drain's end with it busy, then one idle. */
	lines_agree(d, f, addrs, 0, 2 * q, 0, &same, &compared);
	dso_cache__dwarf_stats(c, &st);
	CHECK(st.handles == 1 && st.released == 0, "open: %zu handles", st.handles);
	CHECK_U64(dso_cache__release_idle(c), 0);
	CHECK_U64(dso_cache__release_idle(c), 1);
	dso_cache__dwarf_stats(c, &st);
	CHECK(st.handles == 0 && st.released == 1 && st.indexed_bytes > 0 &&
		      st.bytes == st.indexed_bytes,
	      "let go: %zu handles, %zu bytes, of them %zu tables", st.handles, st.bytes,
	      st.indexed_bytes);
	/* One byte further into each: not in the line cache, in CUs met. */
	lines_agree(d, f, addrs, 0, 2 * q, 1, &same, &compared);
	dso_cache__dwarf_stats(c, &st);
	CHECK(st.reopened == 0 && st.handles == 0,
	      "CUs met answered without the file: %" PRIu64 " reopened", st.reopened);
	/* Three more eighths, each after the handle was let go: CUs not met, the file opened
	 * again each time; at the third, every CU's tables are built. */
	for (size_t k = 0; k < 3; k++) {
		dso_cache__release_idle(c);
		dso_cache__release_idle(c);
		lines_agree(d, f, addrs, (2 + k) * q, (3 + k) * q, 0, &same, &compared);
		dso_cache__dwarf_stats(c, &st);
		CHECK(st.reopened == k + 1 && st.handles == 1 && st.complete == (k == 2),
		      "new CUs, round %zu: %" PRIu64 " reopened, %zu handles, %zu complete", k,
		      st.reopened, st.handles, st.complete);
	}
	/* The rest: never opened again. */
	dso_cache__release_idle(c);
	dso_cache__release_idle(c);
	lines_agree(d, f, addrs, 5 * q, n, 0, &same, &compared);
	lines_agree(d, f, addrs, 0, n, 2, &same, &compared);
	dso_cache__dwarf_stats(c, &st);
	CHECK(st.reopened == 3 && st.handles == 0 && st.complete == 1,
	      "all built: %" PRIu64 " reopened, %zu handles", st.reopened, st.handles);
	CHECK(same == compared, "%zu of %zu answers as a handle kept open gives", same, compared);
out:
	dso_cache__delete(c);
	dso_cache__delete(fresh);
}

/* The sizes of path's debug sections, by readelf: those a line lookup reads, and the others
 * (locations, macros, name indexes, CFI). */
static void debug_section_sizes(const char *path, size_t *read, size_t *unread)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *f;

	*read = *unread = 0;
	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64], type[32];
		unsigned long long addr, off, size;
		char *p = strchr(line, ']');

		if (!p ||
		    sscanf(p + 1, "%63s %31s %llx %llx %llx", name, type, &addr, &off, &size) !=
			    5 ||
		    strncmp(name, ".debug_", 7))
			continue;
		if (!strcmp(name, ".debug_loclists") || !strcmp(name, ".debug_loc") ||
		    !strcmp(name, ".debug_macro") || !strcmp(name, ".debug_frame"))
			*unread += size;
		else
			*read += size;
	}
	if (f)
		pclose(f);
}

/*
 * The debug sections no lookup reads (here .debug_loclists, a fifth of this binary's DWARF) are
 * not read: the budget counts the others only (test_dwarf_count holds the count to the heap's
 * growth; measured here, the heap grew by 197 KB less once they were hidden, their size).
 */
static void test_dwarf_unread_sections(void)
{
	uint64_t addrs[1];
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t read, unread, counted;

	if (len <= 0) {
		CHECK(0, "readlink /proc/self/exe");
		return;
	}
	self[len] = '\0';
	debug_section_sizes(self, &read, &unread);
	CHECK(read > 0 && unread > read / 10, "%s: readelf: %zu bytes read, %zu unread", self, read,
	      unread);
	CHECK(own_functions(self, addrs, 1) == 1, "a function of %s", self);
	counted = counted_dwarf(self, addrs, 1, NULL);
	/* One lookup adds its CU's tables to the sections, less than the unread sections (0.61 of
	 * them in the sanitizer build, whose CUs are bigger): had those been counted too, the count
	 * would pass read + unread. */
	CHECK(counted >= read && counted < read + unread,
	      "counted %zu bytes, sections read %zu, unread %zu", counted, read, unread);
}

/*
 * Compressed debug sections (objcopy --compress-debug-sections=zlib of this binary): the budget
 * counts them as they are once inflated, as for the plain binary, and the compressed bytes of
 * the sections no lookup reads are not held either (their size was read from each section's
 * header alone; reading the header through the whole section kept it until the handle closed).
 */
static void test_dwarf_compressed(const char *tmp)
{
	char self[PATH_MAX], z[PATH_MAX + 32], cmd[3 * PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t plain, packed, grew_plain = 0, grew_packed = 0, read, unread, read_z, unread_z;
	uint64_t addrs[1];
	void *probe;

	if (len <= 0) {
		CHECK(0, "readlink /proc/self/exe");
		return;
	}
	self[len] = '\0';
	snprintf(z, sizeof(z), "%s/self.zlib", tmp);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'", self, z);
	if (system(cmd) != 0) {
		CHECK(0, "%s", cmd);
		return;
	}
	debug_section_sizes(self, &read, &unread);
	debug_section_sizes(z, &read_z, &unread_z);
	CHECK(read_z < read && unread_z > 0 && unread_z < unread, "compressed: %zu and %zu bytes",
	      read_z, unread_z);
	CHECK(own_functions(self, addrs, 1) == 1, "a function of %s", self);
	plain = counted_dwarf(self, addrs, 1, &grew_plain);
	packed = counted_dwarf(z, addrs, 1, &grew_packed);
	CHECK(plain > 0 && packed == plain, "counted %zu bytes compressed, %zu plain", packed,
	      plain);
	probe = malloc(1 << 20);
	if (probe && heap_in_use() >= (1 << 20))
		CHECK(grew_packed < grew_plain + unread_z / 2,
		      "the heap grew by %zu bytes compressed, %zu plain (unread: %zu compressed)",
		      grew_packed, grew_plain, unread_z);
	free(probe);
	unlink(z);
}

/*
 * One binary alone over the DWARF budget drops its CUs' tables from time to time (keeping its
 * sections), and answers the same: the count stays bounded, where it would grow to the whole
 * binary's otherwise.
 */
static void test_dwarf_reset(void)
{
	static uint64_t addrs[4096];
	static char want[4096][96];
	struct dso_line got[DSO_MAX_LINES];
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t n, whole, bytes, peak = 0, differ = 0;
	struct dso_cache *c;
	struct dso *d;
	struct stat st;
	uint64_t closed;

	if (len <= 0 || stat("/proc/self/exe", &st)) {
		CHECK(0, "readlink /proc/self/exe");
		return;
	}
	self[len] = '\0';
	n = own_functions(self, addrs, sizeof(addrs) / sizeof(addrs[0]));
	c = dso_cache__new(4);
	d = c ? dso_cache__get(c, st.st_dev, st.st_ino, self, self) : NULL;
	for (size_t i = 0; d && i < n; i++) {
		size_t k = dso__find_lines(d, addrs[i], got, DSO_MAX_LINES);

		snprintf(want[i], sizeof(want[i]), "%s:%" PRId64,
			 k && got[0].function ? got[0].function : "", k ? got[0].line : 0);
	}
	dwarf_stats(c, &whole, &closed);
	dso_cache__delete(c);
	c = dso_cache__new(4);
	d = c ? dso_cache__get(c, st.st_dev, st.st_ino, self, self) : NULL;
	if (!d) {
		CHECK(0, "dso of %s", self);
		dso_cache__delete(c);
		return;
	}
	dso_cache__set_dwarf_budget(c, whole / 2, NULL);
	for (size_t i = 0; i < n; i++) {
		size_t k = dso__find_lines(d, addrs[i], got, DSO_MAX_LINES);
		char line[96];

		snprintf(line, sizeof(line), "%s:%" PRId64,
			 k && got[0].function ? got[0].function : "", k ? got[0].line : 0);
		differ += strcmp(line, want[i]) != 0;
		dwarf_stats(c, &bytes, &closed);
		if (bytes > peak)
			peak = bytes;
	}
	dwarf_stats(c, &bytes, &closed);
	CHECK(closed > 0, "the CUs' tables dropped over the budget: %" PRIu64 " times", closed);
	CHECK(peak < whole - whole / 4, "DWARF counted at most %zu bytes, %zu with no budget", peak,
	      whole);
	CHECK_U64(differ, 0);
	dso_cache__delete(c);
}

/* DWARF whose sections alone are over the budget is not read (no lines, the symbol table still
 * names the function); a budget raised to hold it reads it. */
static void test_dwarf_too_big(void)
{
	char a[3 * PATH_MAX];
	struct dso_cache *c = dso_cache__new(4);
	struct dso_line got[DSO_MAX_LINES];
	const struct expect *e = deepest();
	struct dso_symbol sym;
	struct dso *d;
	struct stat st;
	size_t bytes;
	uint64_t closed;

	snprintf(a, sizeof(a), "%s/fx_inline", fixtures);
	if (!c || !e || stat(a, &st)) {
		CHECK(0, "setup: fx_inline");
		dso_cache__delete(c);
		return;
	}
	/* fewer bytes than any debug section set; the warning names the setting as given */
	dso_cache__set_dwarf_budget(c, 64, "--max-dwarf-mb");
	d = dso_cache__get(c, st.st_dev, st.st_ino, a, a);
	{
		char said[1024] = "";
		FILE *log = tmpfile();
		int saved = dup(STDERR_FILENO);

		fflush(stderr);
		if (log)
			dup2(fileno(log), STDERR_FILENO);
		CHECK(d && dso__find_lines(d, e->addr, got, DSO_MAX_LINES) == 0,
		      "no lines from DWARF over the budget");
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		close(saved);
		if (log) {
			rewind(log);
			said[fread(said, 1, sizeof(said) - 1, log)] = '\0';
			fclose(log);
		}
		CHECK(strstr(said, "over the DWARF budget") && strstr(said, "raise --max-dwarf-mb"),
		      "the warning names the flag: %s", said);
	}
	CHECK(d && dso__find_symbol(d, e->addr, &sym) && sym.name,
	      "the symbol table still names the function");
	dwarf_stats(c, &bytes, &closed);
	CHECK(bytes == 0 && closed == 0, "nothing read: %zu bytes, %" PRIu64 " closed", bytes,
	      closed);
	dso_cache__set_dwarf_budget(c, 1ULL << 30, NULL);
	CHECK(d && dso__find_lines(d, e->addr, got, DSO_MAX_LINES) == e->n &&
		      !strcmp(got[0].function, "fx_leaf"),
	      "read once the budget holds it");
	dso_cache__delete(c);
}

/* What the lookup after the fd was closed may go through. */
enum after_close {
	VIA_NOTHING,   /* only the closed fd's /proc/self/fd path (and the display path) */
	VIA_REUSED_FD, /* the same, its fd number now given to another file */
	VIA_ROOT,      /* the process's root, as the symbolizer passes it on a later lookup */
};

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL test_lines: blocked opening the display path (a FIFO)\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

/*
 * A dso read through an fd that is closed before its DWARF is opened (how the process watcher
 * hands binaries over: /proc/self/fd/N), as a container's binary /app/fx_inline: its display path
 * names a FIFO here (a container binary called /run/initctl names the host's), which must never
 * be opened; its lines come through the process's root (T/proc/77/root, a directory standing for
 * the /proc link) when a later lookup passes it. Returns the number of lines found for the
 * deepest address, and the innermost function's name in leaf (the lines die with the cache).
 */
static size_t lines_after_fd_closed(const char *tmp, enum after_close how, char *leaf, size_t len)
{
	struct dso_line got[DSO_MAX_LINES];
	char a[3 * PATH_MAX], b[3 * PATH_MAX], fifo[PATH_MAX + 16], via[64], cmd[8 * PATH_MAX];
	struct dso_cache *c = dso_cache__new(4);
	struct dso *d;
	struct stat st;
	size_t n = 0;
	int fd, other = -1;

	snprintf(a, sizeof(a), "%s/fx_inline", fixtures);
	snprintf(b, sizeof(b), "%s/proc/77/root/app/fx_inline", tmp);
	snprintf(fifo, sizeof(fifo), "%s/initctl", tmp);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/proc/77/root/app' && cp '%s' '%s'", tmp, a, b);
	fd = c && system(cmd) == 0 ? open(b, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 || fstat(fd, &st) || (mkfifo(fifo, 0600) && errno != EEXIST)) {
		CHECK(0, "setup: a copy of fx_inline and a FIFO");
		goto out;
	}
	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	d = dso_cache__get(c, st.st_dev, st.st_ino, via, fifo);
	close(fd);
	fd = -1;
	if (how == VIA_REUSED_FD) {
		/* The lowest free number: the one just closed. */
		other = open(a, O_RDONLY | O_CLOEXEC);
		CHECK(other == atoi(via + strlen("/proc/self/fd/")), "setup: the fd number reused");
	}
	if (how == VIA_ROOT && d)
		d = dso_cache__get(c, st.st_dev, st.st_ino, b, fifo);
	alarm(20);
	n = d ? dso__find_lines(d, deepest()->addr, got, DSO_MAX_LINES) : 0;
	alarm(0);
	snprintf(leaf, len, "%s", n && got[0].function ? got[0].function : "");
out:
	if (fd >= 0)
		close(fd);
	if (other >= 0)
		close(other);
	dso_cache__delete(c);
	unlink(b);
	return n;
}

static void test_dwarf_after_fd_closed(const char *tmp)
{
	char leaf[128];

	if (!deepest())
		return;
	signal(SIGALRM, on_alarm);
	/* The display path is the process's view: opened here it would name the host's FIFO. */
	CHECK(lines_after_fd_closed(tmp, VIA_NOTHING, leaf, sizeof(leaf)) == 0,
	      "lines without a path into the process");
	/* Another file behind the fd's number: no lines rather than maybe wrong ones. */
	CHECK(lines_after_fd_closed(tmp, VIA_REUSED_FD, leaf, sizeof(leaf)) == 0,
	      "a path that names another file is not trusted");
	CHECK(lines_after_fd_closed(tmp, VIA_ROOT, leaf, sizeof(leaf)) == deepest()->n &&
		      !strcmp(leaf, "fx_leaf"),
	      "lines through the process's root once the fd is closed (leaf '%s')", leaf);
}

/* Where the section called name lies in the file (libelf); false when it has none. */
static bool section_at(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;

			if (!gelf_getshdr(scn, &sh))
				continue;
			n = elf_strptr(elf, shstrndx, sh.sh_name);
			if (n && !strcmp(n, name) && sh.sh_type != SHT_NOBITS) {
				*off = sh.sh_offset;
				*size = sh.sh_size;
				found = true;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static bool write_bytes(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f))
		ok = false;
	return ok;
}

/*
 * A copy of fx_inline whose DWARF is broken: the dso stays readable with its ELF symbols, and a
 * line lookup at every address of fx_outer returns at most max frames with readable strings
 * (ASan in make check reads them). Returns how many addresses still got lines.
 */
static size_t check_broken_dwarf(struct dso_cache *c, const char *path, const char *what)
{
	uint64_t outer = func_addr("fx_inline", "fx_outer");
	struct dso_line got[DSO_MAX_LINES];
	struct dso_symbol sym;
	size_t with_lines = 0;
	struct stat st;
	struct dso *d;

	CHECK(stat(path, &st) == 0, "%s: %s", what, path);
	d = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
	CHECK(d && dso__readable(d), "%s: unreadable: %s", what, dso__error(d));
	if (!d || !dso__readable(d))
		return 0;
	CHECK(outer && dso__find_symbol(d, outer, &sym) && !strcmp(sym.name, "fx_outer"),
	      "%s: the symbol table still names fx_outer", what);
	for (size_t i = 0; i < nr_expects; i++) {
		size_t n = dso__find_lines(d, expects[i].addr, got, DSO_MAX_LINES);
		size_t chars = 0;

		CHECK(n <= DSO_MAX_LINES, "%s: %zu frames", what, n);
		for (size_t j = 0; j < n && j < DSO_MAX_LINES; j++)
			chars += (got[j].function ? strlen(got[j].function) : 0) +
				 (got[j].file ? strlen(got[j].file) : 0) +
				 (got[j].comp_dir ? strlen(got[j].comp_dir) : 0);
		with_lines += n > 0 && chars > 0;
	}
	return with_lines;
}

/* Garbage DWARF in a valid ELF file: no crash, no lines made up, the symbols still work. */
static void test_garbage_dwarf(const char *tmp)
{
	char src[3 * PATH_MAX], path[PATH_MAX + 32];
	struct dso_cache *c = dso_cache__new(8);
	uint64_t info_off = 0, info_size = 0, str_off = 0, str_size = 0;
	uint8_t *orig = NULL, *buf = NULL;
	uint32_t x = 2463534242u;
	size_t len = 0;
	FILE *f;

	snprintf(src, sizeof(src), "%s/fx_inline", fixtures);
	f = fopen(src, "r");
	if (f && !fseek(f, 0, SEEK_END) && (len = (size_t)ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		orig = malloc(len);
		buf = malloc(len);
		if (orig && fread(orig, 1, len, f) != len)
			len = 0;
	}
	if (f)
		fclose(f);
	CHECK(c && orig && buf && len, "setup: read %s", src);
	CHECK(section_at(src, ".debug_info", &info_off, &info_size) && info_size > 16 &&
		      info_off + info_size <= len,
	      "fx_inline has .debug_info");
	CHECK(section_at(src, ".debug_line_str", &str_off, &str_size) && str_size > 1 &&
		      str_off + str_size <= len,
	      "fx_inline has .debug_line_str (DWARF 5)");
	if (!c || !orig || !buf || !len || !info_size || info_off + info_size > len)
		goto out;

	/* .debug_info of random bytes (xorshift32). */
	memcpy(buf, orig, len);
	for (uint64_t i = 0; i < info_size; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[info_off + i] = (uint8_t)x;
	}
	snprintf(path, sizeof(path), "%s/garbage-info", tmp);
	CHECK(write_bytes(path, buf, len), "write %s", path);
	check_broken_dwarf(c, path, "random .debug_info");

	/* A truncated CU: its unit_length (the first 4 bytes, 32-bit DWARF) runs past the
	 * section, and then one that ends inside its own header. */
	memcpy(buf, orig, len);
	buf[info_off] = (uint8_t)(info_size * 2);
	buf[info_off + 1] = (uint8_t)(info_size * 2 >> 8);
	buf[info_off + 2] = (uint8_t)(info_size * 2 >> 16);
	buf[info_off + 3] = 0;
	snprintf(path, sizeof(path), "%s/garbage-cu-long", tmp);
	CHECK(write_bytes(path, buf, len), "write %s", path);
	check_broken_dwarf(c, path, "CU longer than .debug_info");
	memcpy(buf, orig, len);
	memcpy(buf + info_off, "\x04\0\0\0", 4);
	snprintf(path, sizeof(path), "%s/garbage-cu-short", tmp);
	CHECK(write_bytes(path, buf, len), "write %s", path);
	check_broken_dwarf(c, path, "CU cut inside its header");

	/*
	 * The last string of .debug_line_str unterminated: libdw would strlen() past the section
	 * (found by tests/fuzz/fuzz_elf; ASan reports it). The dso must refuse that DWARF.
	 */
	if (str_size > 1 && str_off + str_size <= len) {
		memcpy(buf, orig, len);
		buf[str_off + str_size - 1] = 'x';
		snprintf(path, sizeof(path), "%s/garbage-line-str", tmp);
		CHECK(write_bytes(path, buf, len), "write %s", path);
		CHECK_U64(check_broken_dwarf(c, path, "unterminated .debug_line_str"), 0);
	}
out:
	free(orig);
	free(buf);
	dso_cache__delete(c);
}

/* Replace the contents of path in place (the same inode): what `cp new old` does. */
static bool overwrite(const char *path, const char *from, const char *append)
{
	char cmd[4 * PATH_MAX];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", from, path);
	if (system(cmd) != 0)
		return false;
	if (!append)
		return true;
	f = fopen(path, "a");
	if (!f)
		return false;
	fputs(append, f);
	return fclose(f) == 0;
}

/*
 * A binary rewritten on disk after it was read (same dev and inode; the fid checks in dso_cache.c
 * and dso_dwarf.c): a dso read before must not take its lines from the new contents, the cache
 * reads the file again, and a different binary behind the same inode becomes a dso of its own.
 */
static void test_replaced(const char *tmp)
{
	char src[3 * PATH_MAX], pie[3 * PATH_MAX], path[PATH_MAX + 32];
	struct dso_cache *c = dso_cache__new(8);
	struct dso_line got[DSO_MAX_LINES];
	const struct expect *e = deepest();
	struct dso *d, *again, *other;
	struct dso_symbol sym;
	struct stat st, st2;
	char old_id[2 * DSO_BUILD_ID_MAX + 1];

	snprintf(src, sizeof(src), "%s/fx_inline", fixtures);
	snprintf(pie, sizeof(pie), "%s/fx_pie", fixtures);
	snprintf(path, sizeof(path), "%s/replaced", tmp);
	if (!c || !e || !overwrite(path, src, NULL) || stat(path, &st)) {
		CHECK(0, "setup: copy of fx_inline");
		dso_cache__delete(c);
		return;
	}
	d = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
	CHECK(d && dso__readable(d), "the copy is readable");
	if (!d)
		goto out;
	snprintf(old_id, sizeof(old_id), "%s", dso__build_id_hex(d));

	/* The same bytes and one more: the DWARF would still answer, but it is another file. */
	CHECK(overwrite(path, src, "x"), "rewrite in place");
	CHECK(stat(path, &st2) == 0 && st2.st_ino == st.st_ino, "the inode stayed");
	CHECK_U64(dso__find_lines(d, e->addr, got, DSO_MAX_LINES), 0);

	/* Read again: the same build-id is the same dso, and it has lines again. */
	again = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
	CHECK(again == d, "same build-id, same dso");
	CHECK_U64(dso__find_lines(again, e->addr, got, DSO_MAX_LINES), e->n);

	/* Another binary behind the same inode: a dso of its own, with that binary's symbols. */
	CHECK(overwrite(path, pie, NULL), "rewrite with fx_pie");
	other = dso_cache__get(c, st.st_dev, st.st_ino, path, path);
	CHECK(other && other != again && dso__readable(other), "a new dso for the new contents");
	if (other) {
		CHECK(strcmp(dso__build_id_hex(other), old_id) != 0, "its build-id is fx_pie's");
		CHECK(dso__find_symbol(other, func_addr("fx_pie", "fx_beta"), &sym) &&
			      !strcmp(sym.name, "fx_beta"),
		      "fx_pie's symbols");
		CHECK_U64(dso__find_lines(other, e->addr, got, DSO_MAX_LINES), 0);
	}
out:
	unlink(path);
	dso_cache__delete(c);
}

static void test_symbolizer_lines(struct symbolizer *s)
{
	const struct expect *e = deepest();
	struct frame f;

	if (!e)
		return;
	symbolizer__user(s, FAKE_PID, INLINE_BASE + e->addr, false, &f);
	CHECK_STR(f.function, "fx_outer");
	CHECK_U64(f.nr_lines, 3);
	for (size_t j = 0; j < 3 && j < f.nr_lines; j++) {
		CHECK_STR(f.lines[j].function, e->lines[j].function);
		CHECK_STR(f.lines[j].file, e->lines[j].file);
		CHECK_U64(f.lines[j].line, e->lines[j].line);
	}
	/* A return address is looked up one byte back, inside the same chain. */
	symbolizer__user(s, FAKE_PID, INLINE_BASE + e->addr + 1, true, &f);
	CHECK_U64(f.nr_lines, 3);
}

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static char *run(const char *cmd)
{
	char *out = NULL, buf[4096];
	size_t size = 0, n;
	FILE *f = popen(cmd, "r"), *mem = open_memstream(&out, &size);

	while (f && mem && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, mem);
	if (mem)
		fclose(mem);
	if (!f || pclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static void test_profile_and_encoders(struct symbolizer *s, const char *tmp)
{
	const struct expect *e = deepest();
	struct profile_desc desc = {.sample_type = "cpu",
				    .sample_unit = "nanoseconds",
				    .period_type = "cpu",
				    .period_unit = "nanoseconds",
				    .period = 1000000};
	struct profile *p = profile__new(&desc);
	struct builder *b = p ? builder__new(p, s, 64) : NULL;
	struct raw_sample rs = {.pid = FAKE_PID, .tid = FAKE_PID, .count = 3, .nr_user = 1};
	struct sample_batch batch = {0};
	const struct profile_sample *smp;
	const struct profile_line *lines;
	const uint32_t *stack;
	char path[PATH_MAX + 64], cmd[4 * PATH_MAX], want[1024];
	size_t depth, n;
	uint64_t user[1];
	char *text;

	if (!e || !b) {
		CHECK(b != NULL, "setup");
		goto out;
	}
	user[0] = INLINE_BASE + e->addr;
	snprintf(rs.process_name, sizeof(rs.process_name), "fxinline");
	CHECK(sample_batch__add(&batch, &rs, user, NULL) == 0, "batch");
	CHECK(builder__add_batch(b, &batch, BATCH_CPU, desc.period) == 0, "build");

	smp = profile__sample_at(p, 1);
	stack = smp ? profile__stack_at(p, smp->stack, &depth) : NULL;
	CHECK(stack && depth == 1, "stack");
	if (!stack)
		goto out;
	lines = profile__location_lines(p, stack[0], &n);
	CHECK_U64(n, 3);
	for (size_t j = 0; lines && j < n && j < 3; j++) {
		const struct profile_function *fn = profile__function_at(p, lines[j].function);

		CHECK_STR(profile__string_at(p, fn->name), e->lines[j].function);
		CHECK_STR(profile__string_at(p, fn->filename), e->lines[j].file);
		CHECK_U64(lines[j].line, e->lines[j].line);
	}
	/* Readers that know nothing of lines see the innermost function. */
	CHECK_STR(profile__location_name(p, stack[0]), "fx_leaf");

	/* Folded: the inlined frames are frames, root first. */
	snprintf(path, sizeof(path), "%s/out.folded", tmp);
	CHECK(enc_folded__write(p, path) == 0, "folded");
	text = slurp(path);
	CHECK(text && strstr(text, "fxinline;fx_outer;fx_mid;fx_leaf 3\n"), "folded: %s",
	      text ? text : "(none)");
	free(text);

	/* OTLP/JSON: one location, three lines with their line numbers. */
	{
		struct otlp_opts o = {.host_name = "h", .host_arch = "amd64", .scope_version = "t"};
		const struct profile *ps[1] = {p};
		char *json = NULL;
		size_t len = 0;

		CHECK(enc_otlp__encode_json(ps, 1, &o, &json, &len) == 0, "otlp json");
		for (size_t j = 0; json && j < 3; j++) {
			snprintf(want, sizeof(want), "\"line\":\"%" PRId64 "\"", e->lines[j].line);
			CHECK(strstr(json, want), "OTLP JSON lacks %s", want);
		}
		CHECK(json && strstr(json, "fx_inline.c"), "OTLP JSON lacks the file name");
		free(json);
	}

	/* pprof, read back by go tool pprof when it is installed. */
	snprintf(path, sizeof(path), "%s/out.pb.gz", tmp);
	CHECK(enc_pprof__write(p, path) == 0, "pprof");
	snprintf(cmd, sizeof(cmd),
		 "command -v go >/dev/null 2>&1 || exit 0; cd '%s' && "
		 "GOCACHE=\"${GOCACHE:-%s/gocache}\" HOME=\"${HOME:-%s}\" go tool pprof -raw '%s' "
		 "2>/dev/null",
		 tmp, tmp, tmp, path);
	text = run(cmd);
	CHECK(text != NULL, "go tool pprof -raw failed");
	if (text && *text) {
		/* Locations list each line as "function file:line s=0", innermost first. */
		char *at = text;

		for (size_t j = 0; j < 3 && at; j++) {
			snprintf(want, sizeof(want), "%s %s:%" PRId64, e->lines[j].function,
				 e->lines[j].file, e->lines[j].line);
			at = strstr(at, want);
			CHECK(at, "pprof -raw lacks \"%s\" (in order)", want);
		}
	}
	free(text);
out:
	sample_batch__release(&batch);
	builder__delete(b);
	profile__delete(p);
}

int main(void)
{
	struct symbolizer_opts o = {.proc_root = NULL,
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 8,
				    .max_dsos = 8};
	char tmp[] = "/tmp/hostprof-test-lines-XXXXXX";
	struct symbolizer *s;

	fake_proc__create();
	o.proc_root = root;
	read_expects("fx_inline", expects, &nr_expects);
	read_expects("fx_ranges", range_expects, &nr_range_expects);
	test_dso_lines();
	test_dwarf_index();
	test_dwarf_count();
	test_index_positions();
	test_dwarf_release();
	test_dwarf_unread_sections();
	test_dwarf_reset();
	s = symbolizer__new(&o);
	CHECK(s != NULL, "symbolizer: %s", strerror(errno));
	CHECK(mkdtemp(tmp) != NULL, "mkdtemp");
	if (s) {
		test_symbolizer_lines(s);
		test_profile_and_encoders(s, tmp);
		test_dwarf_budget(tmp);
		test_dwarf_compressed(tmp);
		test_dwarf_too_big();
		test_dwarf_after_fd_closed(tmp);
		test_garbage_dwarf(tmp);
		test_replaced(tmp);
	}
	symbolizer__delete(s);
	{
		char cmd[PATH_MAX];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	}
	fake_proc__remove();
	return check_summary("test_lines");
}

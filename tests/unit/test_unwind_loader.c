// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind loader over a fake /proc (fake_proc.h) and a sink in memory instead of the BPF maps:
 * which mappings a process entry lists, their biases (from the fixtures' program headers), that a
 * binary's rows are written once and shared, that they are the rows unwind_table builds, and what
 * happens when the rows map is too small.
 */
#include <stdio.h>
#include <string.h>

#include "fake_proc.h"
#include "base/clock.h"
#include "hostprof_abi.h"
#include "unwind/unwind_loader.h"
#include "unwind/unwind_table.h"

#define SINK_ROWS (1U << 20)
#define SECOND_PID (FAKE_PID + 1)

struct mem_sink {
	struct hp_unwind_row *rows;
	uint32_t rows_written; /* rows written, all calls together */
	struct hp_unwind_proc procs[2];
	pid_t pids[2];
	int deletes;
};

static int mem_write_rows(void *ctx, uint32_t base, const struct hp_unwind_row *rows, uint32_t n)
{
	struct mem_sink *m = ctx;

	if ((uint64_t)base + n > SINK_ROWS)
		return -E2BIG;
	memcpy(m->rows + base, rows, n * sizeof(*rows));
	m->rows_written += n;
	return 0;
}

static int mem_write_proc(void *ctx, pid_t pid, const struct hp_unwind_proc *entry)
{
	struct mem_sink *m = ctx;
	int slot = pid == FAKE_PID ? 0 : 1;

	m->pids[slot] = pid;
	m->procs[slot] = *entry;
	return 0;
}

static void mem_delete_proc(void *ctx, pid_t pid)
{
	struct mem_sink *m = ctx;

	m->deletes++;
	m->pids[pid == FAKE_PID ? 0 : 1] = 0;
}

/* The entry's mapping that starts at start, or NULL. */
static const struct hp_unwind_mapping *mapping_at(const struct hp_unwind_proc *p, uint64_t lo,
						  uint64_t hi)
{
	for (uint32_t i = 0; i < p->nr; i++)
		if (p->maps[i].start >= lo && p->maps[i].start < hi)
			return &p->maps[i];
	return NULL;
}

/* The rows a binary got must be exactly the table unwind_table builds for it. */
static void check_rows(const struct mem_sink *m, const struct hp_unwind_mapping *map,
		       const char *binary)
{
	char path[3 * PATH_MAX];
	struct unwind_table *t;
	const struct hp_unwind_row *rows;
	size_t nr = 0;

	snprintf(path, sizeof(path), "%s/%s", fixtures, binary);
	t = unwind_table__build(path, NULL, NULL, 0);
	CHECK(t != NULL, "%s: no table: %s", binary, strerror(errno));
	if (!t || !map)
		return;
	rows = unwind_table__rows(t, &nr);
	CHECK(map->row_count == nr, "%s: %u rows loaded, the table has %zu", binary, map->row_count,
	      nr);
	if (map->row_count == nr)
		CHECK(!memcmp(m->rows + map->row_base, rows, nr * sizeof(*rows)),
		      "%s: the loaded rows differ from the table", binary);
	unwind_table__delete(t);
}

static void copy_process(pid_t from, pid_t to)
{
	char cmd[4 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/%d && cp -a %s/%d %s/%d", root, to, root, from, root,
		 to);
	CHECK(system(cmd) == 0, "%s", cmd);
}

/* A loader that writes into m (the sink is copied by unwind_loader__new()). */
static struct unwind_loader *mem_loader(struct mem_sink *m, uint32_t max_rows, uint32_t max_procs)
{
	struct unwind_sink sink = {m, mem_write_rows, mem_write_proc, mem_delete_proc};
	struct unwind_loader_opts o = {.sink = &sink,
				       .max_rows = max_rows,
				       .max_procs = max_procs,
				       .max_binaries = 16,
				       .proc_root = root};

	return unwind_loader__new(&o);
}

/*
 * An lld-linked PIE: its code segment shares a file page with the read-only one, so the r-xp
 * mapping's file offset (0) lies in both; the bias must come from the executable segment.
 */
static void test_lld_bias(void)
{
	struct mem_sink m = {.rows = calloc(SINK_ROWS, sizeof(struct hp_unwind_row))};
	const uint64_t base = 0x7f0000000000ULL;
	struct unwind_loader *l = mem_loader(&m, SINK_ROWS, 8);
	const struct hp_unwind_mapping *code = NULL;
	char path[PATH_MAX + 64];
	FILE *f;

	CHECK(l != NULL, "unwind_loader__new: %s", strerror(errno));
	copy_process(FAKE_PID, SECOND_PID);
	snprintf(path, sizeof(path), "%s/%d/maps", root, SECOND_PID);
	f = fopen(path, "w");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	if (!l || !f || !m.rows) {
		if (f)
			fclose(f);
		unwind_loader__delete(l);
		free(m.rows);
		return;
	}
	write_segments(f, "fx_lld", base);
	fclose(f);
	CHECK(unwind_loader__add_process(l, SECOND_PID) == 0, "add_process (lld)");
	for (uint32_t i = 0; i < m.procs[1].nr; i++)
		if (m.procs[1].maps[i].row_count)
			code = &m.procs[1].maps[i];
	CHECK(code != NULL, "the lld binary's code mapping has rows");
	CHECK(code && code->bias == base, "lld bias %#llx, want %#llx",
	      code ? (unsigned long long)code->bias : 0ULL, (unsigned long long)base);
	check_rows(&m, code, "fx_lld");
	unwind_loader__delete(l);
	free(m.rows);
}

static void test_load_and_share(void)
{
	struct mem_sink m = {.rows = calloc(SINK_ROWS, sizeof(struct hp_unwind_row))};
	struct unwind_loader *l = mem_loader(&m, SINK_ROWS, 8);
	const struct hp_unwind_mapping *pie, *nopie, *lib, *gone;
	struct unwind_loader_stats st;
	uint32_t written;

	CHECK(l != NULL, "unwind_loader__new: %s", strerror(errno));
	if (!l)
		return;
	CHECK(unwind_loader__add_process(l, FAKE_PID) == 0, "add_process failed");
	CHECK(m.pids[0] == FAKE_PID && m.procs[0].nr >= 5, "entry with %u mappings", m.procs[0].nr);
	for (uint32_t i = 1; i < m.procs[0].nr; i++)
		CHECK(m.procs[0].maps[i - 1].end <= m.procs[0].maps[i].start,
		      "mappings not sorted at %u", i);

	/* A PIE whose segments keep their file offsets' page alignment: bias = load base. */
	pie = mapping_at(&m.procs[0], PIE_BASE, PIE_BASE + 0x100000);
	nopie = mapping_at(&m.procs[0], 0x400000, 0x500000);
	lib = mapping_at(&m.procs[0], LIB_BASE, LIB_BASE + 0x100000);
	gone = mapping_at(&m.procs[0], ANON_START + 0x20000, ANON_START + 0x30000);
	CHECK(pie && pie->bias == PIE_BASE, "PIE bias %#llx",
	      pie ? (unsigned long long)pie->bias : 0ULL);
	CHECK(nopie && nopie->bias == 0, "non-PIE bias %#llx",
	      nopie ? (unsigned long long)nopie->bias : 1ULL);
	CHECK(lib && lib->bias == LIB_BASE, "library bias");
	CHECK(gone && gone->row_count == 0, "a binary that does not exist has no rows");
	check_rows(&m, pie, "fx_pie");
	check_rows(&m, lib, "libfx.so");
	CHECK(unwind_loader__covers(l, FAKE_PID, pie ? pie->start : 0), "covers the PIE");
	CHECK(!unwind_loader__covers(l, FAKE_PID, ANON_START), "anonymous memory is not covered");

	/* A second process mapping the same binaries: no row is written again. */
	written = m.rows_written;
	copy_process(FAKE_PID, SECOND_PID);
	CHECK(unwind_loader__add_process(l, SECOND_PID) == 0, "second process");
	CHECK_U64(m.rows_written, written);
	CHECK(m.procs[1].nr == m.procs[0].nr && !memcmp(m.procs[1].maps, m.procs[0].maps,
							m.procs[0].nr * sizeof(m.procs[0].maps[0])),
	      "the second process's entry differs");

	/* Reloading a known process re-reads it and writes no rows either. */
	CHECK(unwind_loader__add_process(l, FAKE_PID) == 0, "reload");
	CHECK_U64(m.rows_written, written);
	unwind_loader__stats(l, &st);
	CHECK(st.processes == 2 && st.binaries >= 4 && st.rows_used == written,
	      "stats: %zu processes, %zu binaries, %llu rows", st.processes, st.binaries,
	      (unsigned long long)st.rows_used);
	CHECK(st.tables_failed >= 1, "the missing binary counts as failed");

	unwind_loader__remove_process(l, SECOND_PID);
	CHECK(m.deletes == 1 && !unwind_loader__has_process(l, SECOND_PID), "remove");
	CHECK(unwind_loader__add_process(l, 999999) == -ESRCH, "an unknown pid is -ESRCH");
	unwind_loader__delete(l);
	free(m.rows);
}

/* A rows map that holds one binary at a time: the others fall back and are counted, and when
 * nobody maps a binary any more, its room goes to the next. */
static void test_no_room(void)
{
	struct mem_sink m = {.rows = calloc(SINK_ROWS, sizeof(struct hp_unwind_row))};
	struct unwind_sink sink = {&m, mem_write_rows, mem_write_proc, mem_delete_proc};
	struct unwind_loader_opts o = {
		.sink = &sink, .max_procs = 8, .max_binaries = 16, .proc_root = root};
	char path[3 * PATH_MAX];
	struct unwind_loader_stats st;
	struct unwind_table *t;
	struct unwind_loader *l;
	size_t biggest = 0;
	FILE *f;
	const char *bins[] = {"fx_pie", "fx_nopie", "libfx.so", "libfx-stripped.so", "fx_inline"};

	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		size_t nr = 0;

		snprintf(path, sizeof(path), "%s/%s", fixtures, bins[i]);
		t = unwind_table__build(path, NULL, NULL, 0);
		if (t)
			unwind_table__rows(t, &nr);
		biggest = nr > biggest ? nr : biggest;
		unwind_table__delete(t);
	}
	o.max_rows = (uint32_t)biggest;
	l = unwind_loader__new(&o);
	CHECK(l != NULL, "unwind_loader__new");
	if (!l)
		return;
	CHECK(unwind_loader__add_process(l, FAKE_PID) == 0, "add");
	unwind_loader__stats(l, &st);
	CHECK(st.binaries == 1 && st.no_room >= 3, "one binary fits, %llu did not (binaries %zu)",
	      (unsigned long long)st.no_room, st.binaries);
	CHECK(st.rows_used <= biggest, "rows used %llu > capacity %zu",
	      (unsigned long long)st.rows_used, biggest);
	/* Another process mapping only libfx.so, one that did not fit: once the first process is
	 * gone, the binary it held is evicted and libfx.so loads. */
	unwind_loader__remove_process(l, FAKE_PID);
	copy_process(FAKE_PID, SECOND_PID);
	snprintf(path, sizeof(path), "%s/%d/maps", root, SECOND_PID);
	f = fopen(path, "w");
	CHECK(f != NULL, "%s", path);
	if (f) {
		write_segments(f, "libfx.so", LIB_BASE);
		fclose(f);
	}
	CHECK(unwind_loader__add_process(l, SECOND_PID) == 0, "add the second process");
	unwind_loader__stats(l, &st);
	CHECK(st.evictions >= 1 && m.procs[1].nr >= 1 && m.procs[1].maps[0].row_count > 0,
	      "libfx.so loaded after %llu evictions", (unsigned long long)st.evictions);
	unwind_loader__delete(l);
	free(m.rows);
}

/*
 * A full procs table: the load fails with ENOSPC, and the process is not due again before
 * UNWIND_RETRY_FAILED_NS. A process whose /proc directory is gone is swept.
 */
static void test_full_and_sweep(void)
{
	struct mem_sink m = {.rows = calloc(SINK_ROWS, sizeof(struct hp_unwind_row))};
	struct unwind_loader *l = mem_loader(&m, SINK_ROWS, 1);
	const uint64_t now = clock__ns(CLOCK_MONOTONIC);
	char cmd[3 * PATH_MAX];

	CHECK(l != NULL, "unwind_loader__new: %s", strerror(errno));
	if (!l || !m.rows) {
		unwind_loader__delete(l);
		free(m.rows);
		return;
	}
	copy_process(FAKE_PID, SECOND_PID);
	CHECK(unwind_loader__due(l, FAKE_PID, now), "a new process is due");
	CHECK(unwind_loader__add_process(l, FAKE_PID) == 0, "first process");
	CHECK(unwind_loader__add_process(l, SECOND_PID) == -ENOSPC, "no room for a second one");
	CHECK(!unwind_loader__due(l, SECOND_PID, clock__ns(CLOCK_MONOTONIC)),
	      "a failed load is not retried at once");
	CHECK(unwind_loader__due(l, SECOND_PID,
				 clock__ns(CLOCK_MONOTONIC) + UNWIND_RETRY_FAILED_NS + 1),
	      "a failed load is retried later");
	CHECK(unwind_loader__sweep(l) == 0, "nothing to sweep while FAKE_PID exists");
	snprintf(cmd, sizeof(cmd), "mv %s/%d %s/gone", root, FAKE_PID, root);
	CHECK(system(cmd) == 0, "%s", cmd);
	CHECK(unwind_loader__sweep(l) == 1, "the process whose /proc entry went is swept");
	CHECK(!unwind_loader__has_process(l, FAKE_PID) && m.deletes == 1,
	      "swept: forgotten, and its map entry deleted (%d deletes)", m.deletes);
	snprintf(cmd, sizeof(cmd), "mv %s/gone %s/%d", root, root, FAKE_PID);
	CHECK(system(cmd) == 0, "%s", cmd);
	unwind_loader__delete(l);
	free(m.rows);
}

int main(void)
{
	fake_proc__create();
	test_load_and_share();
	test_lld_bias();
	test_full_and_sweep();
	test_no_room();
	fake_proc__remove();
	return check_summary("test_unwind_loader");
}

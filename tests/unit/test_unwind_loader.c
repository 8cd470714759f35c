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
#include "process/proc_mem.h"
#include "unwind/code_template.h"
#include "unwind/row_index.h"
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
		if (t) {
			const struct hp_unwind_row *rows = unwind_table__rows(t, &nr);

			nr += row_index__slots(rows, nr); /* the slots the table takes */
		}
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

/*
 * Executable anonymous memory, as the fake process's memory reader shows it (fake_memory()):
 * CPython perf trampoline arenas of 3.12 (copies every 11 bytes, two arenas the kernel merged
 * into one mapping) and 3.13 (every 16), code of another JIT, an arena-like mapping of a size
 * no arena has, and one the reader is refused.
 */
#define ARENA_312 0x7f5000000000ULL
#define ARENA_313 0x7f5100000000ULL
#define OTHER_JIT 0x7f5200000000ULL
#define ODD_SIZE 0x7f5300000000ULL
#define REFUSED 0x7f5400000000ULL
#define ARENA (4096u * 16u)

static const uint8_t trampoline[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				     0x48, 0x83, 0xc4, 0x08, 0xc3};
static int memory_reads;

static int fake_memory(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	size_t stride = 0;

	memory_reads++;
	if (pid != SECOND_PID || len > PROC_MEM_MAX_READ)
		return -EINVAL;
	memset(out, 0, len);
	if (addr == ARENA_312 || addr == ODD_SIZE)
		stride = 11;
	else if (addr == ARENA_313)
		stride = 16;
	else if (addr == OTHER_JIT)
		memcpy(out, (const uint8_t[]){0x55, 0x48, 0x89, 0xe5, 0xc3}, 5); /* push rbp... */
	else
		return -EPERM;
	for (size_t at = 0; stride && at + sizeof(trampoline) <= len; at += stride)
		memcpy(out + at, trampoline, sizeof(trampoline));
	return 0;
}

static void test_code_templates(void)
{
	struct mem_sink m = {.rows = calloc(SINK_ROWS, sizeof(struct hp_unwind_row))};
	struct unwind_sink sink = {&m, mem_write_rows, mem_write_proc, mem_delete_proc};
	struct unwind_loader_opts o = {.sink = &sink,
				       .max_rows = SINK_ROWS,
				       .max_procs = 8,
				       .max_binaries = 16,
				       .proc_root = root,
				       .read_memory = fake_memory,
				       .arch = UNWIND_ARCH_X86_64};
	const struct hp_unwind_mapping *a12, *a13;
	const struct code_template *t;
	struct unwind_loader_stats st;
	struct unwind_loader *l;
	char path[PATH_MAX + 64];
	size_t nr_templates;
	FILE *f;

	copy_process(FAKE_PID, SECOND_PID);
	snprintf(path, sizeof(path), "%s/%d/maps", root, SECOND_PID);
	f = fopen(path, "w");
	l = unwind_loader__new(&o);
	CHECK(f && l && m.rows, "set up: %s", strerror(errno));
	if (!f || !l || !m.rows)
		goto out;
	fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 \n", ARENA_312, ARENA_312 + 2 * ARENA);
	fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 \n", ARENA_313, ARENA_313 + ARENA);
	fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 \n", OTHER_JIT, OTHER_JIT + ARENA);
	fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 \n", ODD_SIZE, ODD_SIZE + ARENA + 4096);
	fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 \n", REFUSED, REFUSED + ARENA);
	fclose(f);
	f = NULL;
	t = code_template__all(&nr_templates);
	CHECK(unwind_loader__add_process(l, SECOND_PID) == 0, "add_process (trampolines)");
	CHECK(memory_reads == 5, "each executable anonymous mapping probed once: %d reads",
	      memory_reads);
	CHECK(m.procs[1].nr == 2, "the two arenas are listed, nothing else: %u mappings",
	      m.procs[1].nr);
	a12 = mapping_at(&m.procs[1], ARENA_312, ARENA_312 + 1);
	a13 = mapping_at(&m.procs[1], ARENA_313, ARENA_313 + 1);
	CHECK(a12 && a12->end == ARENA_312 + 2 * ARENA && a12->stride == 11 && a12->period == ARENA,
	      "3.12 arenas: stride %u, period %u", a12 ? a12->stride : 0, a12 ? a12->period : 0);
	CHECK(a13 && a13->stride == 16 && a13->period == ARENA, "3.13 arena: stride %u",
	      a13 ? a13->stride : 0);
	CHECK(a12 && a13 && a12->row_base == a13->row_base && a12->row_count == t->nr_rows &&
		      m.rows_written == t->nr_rows + row_index__slots(t->rows, t->nr_rows),
	      "one run of %u template rows and their index shared by both (%u slots written)",
	      t->nr_rows, m.rows_written);
	if (a12 && a12->row_count == t->nr_rows) {
		const struct hp_unwind_row *r = m.rows + a12->row_base;

		/* The return address of the stub's call is at offset 6: the walker looks up 5. */
		CHECK(r[1].pc == 4 && r[1].cfa_rule == HP_CFA_SP && r[1].cfa_offset == 16 &&
			      r[1].ra_offset == -8 && r[1].fp_rule == HP_REG_SAME,
		      "after sub $8,%%rsp: CFA = SP + 16 (got pc %u rule %u offset %d)", r[1].pc,
		      r[1].cfa_rule, r[1].cfa_offset);
		CHECK(r[t->nr_rows - 1].cfa_rule == HP_CFA_NONE &&
			      r[t->nr_rows - 1].pc == sizeof(trampoline),
		      "the padding after a copy has no rule");
	}
	unwind_loader__stats(l, &st);
	CHECK(st.template_mappings == 2, "stats count 2 template mappings: %llu",
	      (unsigned long long)st.template_mappings);
	CHECK(nr_templates >= 1 && !memcmp(t->code, trampoline, sizeof(trampoline)),
	      "the template is CPython's x86_64 trampoline");
out:
	if (f)
		fclose(f);
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
	test_code_templates();
	fake_proc__remove();
	return check_summary("test_unwind_loader");
}

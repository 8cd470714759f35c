// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ELF/DWARF front on arbitrary files: the dso cache (ELF headers, symbol tables, build-id,
 * debug file search, program headers), DWARF line and inline lookups, and the unwind table builder
 * (.eh_frame and .debug_frame). Lookups go to addresses inside each PT_LOAD segment, at symbols
 * found there, and at the edges of the address space, because that is where the tables are read.
 * A crash, a leak, a hang or a broken invariant of the API (a symbol that does not contain its
 * address, unsorted unwind rows) is a finding.
 */
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols/dso.h"
#define FUZZ_INPUT_NAME "fuzz-elf"
#include "fuzz.h"
#include "unwind/unwind_table.h"

#define MAX_ADDRS 48
#define MAP_START 0x7f0000000000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_init(void)
{
	elf_version(EV_CURRENT);
}

/* Strings the API hands out must be readable to their end: ASan checks every byte. */
static volatile size_t sink;

static void touch_str(const char *s)
{
	sink += s ? strlen(s) : 0;
}

struct load {
	uint64_t vaddr, memsz, offset;
};

/* The PT_LOAD segments, read by libelf on its own: the addresses to ask the dso about. */
static size_t loads_of(int fd, struct load *out, size_t max)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0, phnum = 0;

	if (!elf)
		return 0;
	if (elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &phnum)) {
		for (size_t i = 0; i < phnum && n < max; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				out[n++] = (struct load){ph.p_vaddr, ph.p_memsz, ph.p_offset};
		}
	}
	elf_end(elf);
	return n;
}

static void lookup(struct dso *d, uint64_t addr, uint64_t *more, size_t *nr_more)
{
	struct dso_line lines[DSO_MAX_LINES];
	struct dso_symbol sym;
	size_t n;

	if (dso__find_symbol(d, addr, &sym)) {
		/* The symbol starts at or before the address (a zero-size one may reach further,
		 * so its end is not checked). */
		FUZZ_ASSERT(sym.addr <= addr);
		touch_str(sym.name);
		if (*nr_more + 2 <= MAX_ADDRS) {
			more[(*nr_more)++] = sym.addr;
			more[(*nr_more)++] = sym.addr + sym.size / 2;
		}
	}
	n = dso__find_lines(d, addr, lines, DSO_MAX_LINES);
	FUZZ_ASSERT(n <= DSO_MAX_LINES);
	for (size_t i = 0; i < n; i++) {
		touch_str(lines[i].function);
		touch_str(lines[i].file);
		touch_str(lines[i].comp_dir);
	}
	/* Fewer frames than the chain holds: the outermost must still fit. */
	FUZZ_ASSERT(n <= 1 || dso__find_lines(d, addr, lines, 1) == 1);
}

/* Symbols by name (interp/python_ref.h's lookup): the count matches what was filled in. */
static void fuzz_names(const struct dso *d)
{
	static const char *const names[] = {"main", "_start", "environ", "inlined_leaf", ""};
	struct dso_symbol out[sizeof(names) / sizeof(names[0])];
	int n = dso__find_symbols_by_name(d, names, sizeof(names) / sizeof(names[0]), out), got = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		FUZZ_ASSERT(!out[i].name || out[i].name == names[i]);
		got += out[i].name != NULL;
	}
	FUZZ_ASSERT(n < 0 ? got == 0 : n == got);
}

static void fuzz_dso(const struct load *loads, size_t nr_loads, const struct stat *st,
		     uint64_t *addrs, size_t *nr_addrs)
{
	struct dso_cache *c = dso_cache__new(2);
	const uint8_t *id;
	struct dso *d;

	if (!c)
		return;
	/* Debug files only beside the binary (there is none): the input is the whole world. */
	dso_cache__set_debug_root(c, "");
	d = dso_cache__get(c, st->st_dev, st->st_ino, input.path, "fuzz.elf");
	if (!d || !dso__readable(d)) {
		touch_str(dso__error(d));
		goto out;
	}
	FUZZ_ASSERT(dso__build_id(d, &id) <= DSO_BUILD_ID_MAX);
	touch_str(dso__build_id_hex(d));
	touch_str(dso__htlhash_hex(d));

	for (size_t i = 0; i < nr_loads; i++) {
		uint64_t pgoff = loads[i].offset & ~0xfffULL, fa;

		dso__file_addr(d, MAP_START, pgoff, MAP_START + (loads[i].offset - pgoff), &fa);
		dso__file_addr(d, MAP_START, pgoff, MAP_START + loads[i].memsz / 2, &fa);
		dso__file_addr(d, MAP_START, loads[i].offset, UINT64_MAX, &fa);
	}
	dso__file_addr(d, MAP_START, UINT64_MAX & ~0xfffULL, MAP_START + 1, &(uint64_t){0});
	for (size_t i = 0; i < nr_loads; i++)
		dso__load_bias(d, MAP_START, loads[i].offset & ~0xfffULL, &(uint64_t){0});
	fuzz_names(d);
	/* Symbols found add their own addresses to the list: the loop sees them too. */
	for (size_t i = 0; i < *nr_addrs; i++)
		lookup(d, addrs[i], addrs, nr_addrs);
out:
	dso_cache__delete(c);
}

static void fuzz_unwind(const uint64_t *addrs, size_t nr_addrs)
{
	/* A small row cap keeps a crafted table of millions of rows from timing out the run;
	 * the code that enforces the cap is the same at any size. */
	struct unwind_table_opts opts = {.max_rows = 1u << 16};
	const struct hp_unwind_row *rows;
	struct unwind_table *t;
	char err[256];
	size_t nr;

	t = unwind_table__build(input.path, &opts, err, sizeof(err));
	if (!t) {
		FUZZ_ASSERT(memchr(err, '\0', sizeof(err)) && err[0]);
		return;
	}
	rows = unwind_table__rows(t, &nr);
	FUZZ_ASSERT(nr <= opts.max_rows);
	/* The BPF walker binary-searches the rows: they must be strictly increasing. */
	for (size_t i = 1; i < nr; i++)
		FUZZ_ASSERT(rows[i].pc > rows[i - 1].pc);
	for (size_t i = 0; i < nr_addrs; i++) {
		const struct hp_unwind_row *r = unwind_table__find(t, addrs[i]);

		FUZZ_ASSERT(!r || (r >= rows && r < rows + nr && r->pc <= addrs[i]));
	}
	unwind_table__delete(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct load loads[8];
	uint64_t addrs[MAX_ADDRS];
	size_t nr_loads, nr_addrs = 0;
	struct stat st;

	fuzz_input__write(&input, data, size);
	if (fstat(input.fd, &st))
		abort();
	nr_loads = loads_of(input.fd, loads, sizeof(loads) / sizeof(loads[0]));
	for (size_t i = 0; i < nr_loads; i++) {
		addrs[nr_addrs++] = loads[i].vaddr;
		addrs[nr_addrs++] = loads[i].vaddr + loads[i].memsz / 2;
		addrs[nr_addrs++] = loads[i].vaddr + loads[i].memsz - 1;
	}
	addrs[nr_addrs++] = 0;
	addrs[nr_addrs++] = 0x1000;
	addrs[nr_addrs++] = UINT64_MAX;

	fuzz_dso(loads, nr_loads, &st, addrs, &nr_addrs);
	fuzz_unwind(addrs, nr_addrs);
	return 0;
}

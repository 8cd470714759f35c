// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench_symbolize: how fast the dso layer turns file addresses into functions and source lines.
 * Two commands, so that the addresses are made by one process and measured in another whose peak
 * RSS is the symbolizer's own:
 *
 *   bench_symbolize gen N SEED SYMFILE
 *     N file addresses, one hex number a line: a function picked at random (uniformly) from
 *     SYMFILE's .symtab (sized FUNC and IFUNC symbols inside an executable section, one per
 *     address), and a random offset inside it. The generator is splitmix64 seeded with SEED,
 *     so a list depends only on SEED and the symbol table.
 *
 *   bench_symbolize run BINARY ADDRS OUT
 *     Symbolizes the list with dso__find_symbol() + dso__find_lines() (src/symbols/dso.h), as the
 *     symbolizer does for each distinct address: a cold pass (the dso is loaded and its DWARF
 *     opened inside it), then three warm passes over the same list. Nothing caches results per
 *     address at this level: a warm pass pays every lookup, with the DWARF open and its per-CU
 *     tables built. Prints "key value" lines; then writes OUT (untimed, after the peak RSS is
 *     read): per address "addr<TAB>function<TAB>line", then a TAB and "function:line" for each
 *     frame of the inline chain, innermost first (C++ names may hold '|' or ':', never a TAB).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/dso.h"

#define WARM_PASSES 3

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct func {
	uint64_t addr, size;
};

static int func_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct exec_range {
	uint64_t lo, hi;
};

/* The sized functions of path's .symtab inside its executable sections, sorted, one per address. */
static struct func *read_funcs(const char *path, size_t *nr)
{
	struct exec_range ex[64];
	size_t nex = 0, n = 0, cap = 0;
	struct func *fs = NULL;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int fd;

	*nr = 0;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		fprintf(stderr, "bench_symbolize: %s: cannot read as ELF\n", path);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn)) && nex < 64) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size)
			ex[nex++] = (struct exec_range){sh.sh_addr, sh.sh_addr + sh.sh_size};
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			int type;
			bool inside = false;

			if (!gelf_getsym(data, (int)i, &s))
				continue;
			type = GELF_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !s.st_size ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			for (size_t j = 0; j < nex; j++)
				inside |= s.st_value >= ex[j].lo &&
					  s.st_value + s.st_size <= ex[j].hi;
			if (!inside)
				continue;
			if (n == cap) {
				struct func *g =
					realloc(fs, (cap = cap ? 2 * cap : 4096) * sizeof(*fs));

				if (!g)
					goto out;
				fs = g;
			}
			fs[n++] = (struct func){s.st_value, s.st_size};
		}
	}
	qsort(fs, n, sizeof(*fs), func_cmp);
	*nr = 0;
	for (size_t i = 0; i < n; i++)
		if (!*nr || fs[*nr - 1].addr != fs[i].addr)
			fs[(*nr)++] = fs[i];
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return fs;
}

static int gen(int argc, char **argv)
{
	unsigned long n;
	uint64_t seed;
	struct func *fs;
	size_t nr;

	if (argc != 5) {
		fprintf(stderr, "usage: bench_symbolize gen N SEED SYMFILE\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	seed = strtoull(argv[3], NULL, 0);
	fs = read_funcs(argv[4], &nr);
	if (!nr) {
		fprintf(stderr, "bench_symbolize: %s: no sized functions in .symtab\n", argv[4]);
		free(fs);
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		const struct func *f = &fs[splitmix64(&seed) % nr];

		printf("0x%" PRIx64 "\n", f->addr + splitmix64(&seed) % f->size);
	}
	free(fs);
	return 0;
}

/* What one lookup found: the symbol when DWARF names no function (as the symbolizer does). */
static size_t lookup(struct dso *d, uint64_t addr, struct dso_symbol *sym, struct dso_line *lines)
{
	bool have_sym = dso__find_symbol(d, addr, sym);

	if (!have_sym)
		sym->name = NULL;
	return dso__find_lines(d, addr, lines, DSO_MAX_LINES);
}

static int run(int argc, char **argv)
{
	struct dso_line lines[DSO_MAX_LINES];
	struct dso_cache *c = NULL;
	struct dso_symbol sym;
	struct rusage ru;
	struct dso *d = NULL;
	uint64_t *addrs = NULL, closed;
	size_t n = 0, cap = 0, with_lines = 0, with_inlines = 0, dwarf_bytes;
	struct dso_dwarf_stats dw;
	double t0, cold, warm[WARM_PASSES], best;
	struct stat st;
	char buf[64];
	FILE *f;

	if (argc != 5) {
		fprintf(stderr, "usage: bench_symbolize run BINARY ADDRS OUT\n");
		return 2;
	}
	f = fopen(argv[3], "r");
	if (!f) {
		fprintf(stderr, "bench_symbolize: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		if (n == cap) {
			uint64_t *g =
				realloc(addrs, (cap = cap ? 2 * cap : 65536) * sizeof(*addrs));

			if (!g)
				break;
			addrs = g;
		}
		addrs[n++] = strtoull(buf, NULL, 16);
	}
	fclose(f);
	if (!n || stat(argv[2], &st)) {
		fprintf(stderr, "bench_symbolize: no addresses, or %s missing\n", argv[2]);
		free(addrs);
		return 1;
	}

	t0 = now_s();
	c = dso_cache__new(4);
	/* No DWARF budget: the warm passes measure lookups with every CU's tables built (the
	 * agent's budget would drop libc's, which are bigger than it, from time to time). */
	if (c)
		dso_cache__set_dwarf_budget(c, SIZE_MAX, NULL);
	d = c ? dso_cache__get(c, st.st_dev, st.st_ino, argv[2], argv[2]) : NULL;
	if (!d || !dso__readable(d)) {
		fprintf(stderr, "bench_symbolize: %s: %s\n", argv[2],
			d ? dso__error(d) : "no memory");
		dso_cache__delete(c);
		free(addrs);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = lookup(d, addrs[i], &sym, lines);

		with_lines += k > 0 && lines[0].line > 0;
		with_inlines += k > 1;
	}
	cold = now_s() - t0;
	best = 0;
	for (int p = 0; p < WARM_PASSES; p++) {
		t0 = now_s();
		for (size_t i = 0; i < n; i++)
			lookup(d, addrs[i], &sym, lines);
		warm[p] = now_s() - t0;
		if (!p || warm[p] < best)
			best = warm[p];
	}
	getrusage(RUSAGE_SELF, &ru);
	dso_cache__dwarf_stats(c, &dw);
	dwarf_bytes = dw.bytes;
	closed = dw.closed;
	/* The median of the warm passes: one slow pass on a shared machine does not count. */
	for (int i = 1; i < WARM_PASSES; i++)
		for (int j = i; j > 0 && warm[j] < warm[j - 1]; j--) {
			double t = warm[j];

			warm[j] = warm[j - 1];
			warm[j - 1] = t;
		}
	printf("addresses %zu\n", n);
	printf("cold_s %.6f\n", cold);
	printf("warm_s %.6f\n", warm[WARM_PASSES / 2]);
	printf("warm_best_s %.6f\n", best);
	printf("cold_addr_per_s %.0f\n", n / cold);
	printf("warm_addr_per_s %.0f\n", n / warm[WARM_PASSES / 2]);
	printf("peak_rss_kib %ld\n", ru.ru_maxrss);
	printf("dwarf_bytes %zu\n", dwarf_bytes);
	printf("with_lines %zu\n", with_lines);
	printf("with_inlines %zu\n", with_inlines);

	f = fopen(argv[4], "w");
	if (!f) {
		fprintf(stderr, "bench_symbolize: %s: %s\n", argv[4], strerror(errno));
		dso_cache__delete(c);
		free(addrs);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = lookup(d, addrs[i], &sym, lines);
		const char *fn = k && lines[0].function ? lines[0].function : sym.name;

		fprintf(f, "0x%" PRIx64 "\t%s\t%" PRId64 "\t", addrs[i], fn ? fn : "??",
			k ? lines[0].line : 0);
		for (size_t j = 0; j < k; j++)
			fprintf(f, "%s%s:%" PRId64, j ? "\t" : "",
				lines[j].function ? lines[j].function
				: j || !fn	  ? "??"
						  : fn,
				lines[j].line);
		fputc('\n', f);
	}
	fclose(f);
	dso_cache__delete(c);
	free(addrs);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "gen"))
		return gen(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "run"))
		return run(argc, argv);
	fprintf(stderr, "usage: bench_symbolize gen N SEED SYMFILE | run BINARY ADDRS OUT\n");
	return 2;
}

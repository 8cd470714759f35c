// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel text symbols from a kallsyms file.
 *
 * /proc/kallsyms has ~120k-200k lines, so the table is kept compact (2.4 MiB for 122k symbols
 * where plain 16-byte entries and a string arena took 5.0): once sorted, each symbol is the low
 * 32 bits of its address and the id of its name in a front-coded string set (base/strpack.h);
 * the high 32 bits and the module are kept once per run of symbols that share them (the core
 * kernel is one run, each module one or two). While loading, the lines go into 16-byte entries
 * over a string arena, by offset because the arena grows by realloc().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "symbols/ksyms.h"

#include "base/hex.h"
#include "base/search.h"
#include "base/strpack.h"
#include "base/utf8.h"
#include "base/vec.h"

/* Arena offsets are 30 bits wide; the all-ones value means "no module" (core kernel). */
#define KSYMS_NO_MODULE ((1u << 30) - 1)
#define KSYMS_ARENA_MAX ((size_t)KSYMS_NO_MODULE)

struct ksym_entry {
	uint64_t addr;
	uint32_t name;	      /* arena offset */
	uint32_t module : 30; /* arena offset, or KSYMS_NO_MODULE */
	/* Only used to choose among aliases at one address (see entry_cmp()). */
	uint32_t weak : 1;
	uint32_t local : 1;
};

_Static_assert(sizeof(struct ksym_entry) == 16, "ksym_entry should stay compact");

/* What is read, before it is sorted and packed. */
struct ksyms_load {
	struct ksym_entry *syms;
	size_t nr;
	size_t cap;
	char *arena;
	size_t arena_len;
	size_t arena_cap;
	/* Offset of the module name appended last: kallsyms lists a module's symbols together, so
	 * reusing it stores each module name about once without a hash table. */
	uint32_t last_module;
};

/* One symbol of the table: the low 32 bits of its address and the id of its name. */
struct ksym_slot {
	uint32_t lo;
	uint32_t name;
};

/* From symbol `first` to the next run's first, the symbols share `value`: the high 32 bits of
 * their addresses, or their module (an offset in ksyms->modules, or KSYMS_NO_MODULE). */
struct ksym_run {
	uint32_t first;
	uint32_t value;
};

struct ksyms {
	struct ksym_slot *syms; /* by address, one per address */
	size_t nr;
	struct ksym_run *highs;
	size_t nr_highs;
	struct ksym_run *mods;
	size_t nr_mods;
	char *modules; /* the module names, each NUL-terminated */
	size_t modules_len;
	struct strpack *names;
};

/* Copy len bytes plus a NUL into the arena; returns the offset or -errno. */
static int64_t load__intern(struct ksyms_load *k, const char *s, size_t len)
{
	size_t need = k->arena_len + len + 1;
	int64_t off;

	if (need > KSYMS_ARENA_MAX)
		return -E2BIG;
	if (VEC_RESERVE(k->arena, k->arena_cap, need))
		return -ENOMEM;
	off = (int64_t)k->arena_len;
	memcpy(k->arena + k->arena_len, s, len);
	k->arena[k->arena_len + len] = '\0';
	k->arena_len = need;
	return off;
}

static int load__push(struct ksyms_load *k, const struct ksym_entry *e)
{
	if (VEC_RESERVE(k->syms, k->cap, k->nr + 1))
		return -ENOMEM;
	k->syms[k->nr++] = *e;
	return 0;
}

static bool is_text_type(char type)
{
	/* w/W are weak symbols; in kallsyms they are functions (weak objects would be v/V). */
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* One parsed line; the strings point into the line buffer. */
struct kline {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module; /* NULL when absent */
	size_t module_len;
};

/* No blank or control character: what the kernel prints in a symbol or module name. */
static bool is_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return false;
	return n > 0;
}

/*
 * Parse "ADDR TYPE NAME[\t[MODULE]]". Returns false for anything else, so that a truncated or
 * garbled line is skipped instead of becoming a symbol with a wrong address or name.
 */
static bool kline__parse(const char *s, struct kline *l)
{
	s = hex__parse_u64(s, &l->addr);
	if (!s || *s++ != ' ')
		return false;
	if (*s == '\0' || *s == ' ' || *s == '\t' || *s == '\n' || s[1] != ' ')
		return false;
	l->type = *s;
	s += 2;

	l->name = s;
	while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
		s++;
	l->name_len = (size_t)(s - l->name);
	if (!is_name(l->name, l->name_len))
		return false;

	l->module = NULL;
	l->module_len = 0;
	if (*s == '\t' && s[1] == '[') {
		const char *end;

		l->module = s + 2;
		end = strchr(l->module, ']');
		if (!end || end == l->module)
			return false;
		l->module_len = (size_t)(end - l->module);
		if (!is_name(l->module, l->module_len))
			return false;
		s = end + 1;
	}
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return *s == '\0';
}

static int load__add(struct ksyms_load *k, const struct kline *l)
{
	struct ksym_entry e = {
		.addr = l->addr,
		.module = KSYMS_NO_MODULE,
		.weak = l->type == 'w' || l->type == 'W',
		.local = l->type == 't' || l->type == 'w',
	};
	int64_t off;

	/* Longer than the kernel prints: cut (at a character) rather than lose the address. */
	off = load__intern(k, l->name, utf8__fit(l->name, l->name_len, KSYMS_NAME_MAX));
	if (off < 0)
		return (int)off;
	e.name = (uint32_t)off;

	if (l->module) {
		const char *last =
			k->last_module != KSYMS_NO_MODULE ? k->arena + k->last_module : NULL;
		size_t len = utf8__fit(l->module, l->module_len, KSYMS_NAME_MAX);

		if (last && strlen(last) == len && memcmp(last, l->module, len) == 0) {
			e.module = k->last_module;
		} else {
			off = load__intern(k, l->module, len);
			if (off < 0)
				return (int)off;
			e.module = (uint32_t)off;
			k->last_module = (uint32_t)off;
		}
	}
	return load__push(k, &e);
}

static unsigned int leading_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * x86_64 kernels build each syscall's 32-bit compat entry (__ia32_sys_X, __x32_compat_sys_X) as an
 * alias of the 64-bit one (__x64_sys_X) when the code is the same; a 64-bit process entered through
 * the __x64_ name, so a compat name would mislead.
 */
static bool is_compat_syscall_alias(const char *s)
{
	return !strncmp(s, "__ia32_", 7) || !strncmp(s, "__x32_", 6);
}

/*
 * Order by address; among aliases at one address, the best name first: a strong symbol over a
 * weak one, a global over a local, a native syscall entry over its compat alias, fewer leading
 * underscores (so "srso_alias_untrain_ret" wins over "_stext"/"_text"), then by name so that the
 * choice does not depend on qsort's order.
 */
static int entry_cmp(const void *pa, const void *pb, void *arg)
{
	const struct ksym_entry *a = pa, *b = pb;
	const char *arena = arg;
	unsigned int ua, ub;
	int r;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->weak != b->weak)
		return a->weak ? 1 : -1;
	if (a->local != b->local)
		return a->local ? 1 : -1;
	if (is_compat_syscall_alias(arena + a->name) != is_compat_syscall_alias(arena + b->name))
		return is_compat_syscall_alias(arena + a->name) ? 1 : -1;
	ua = leading_underscores(arena + a->name);
	ub = leading_underscores(arena + b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	r = strcmp(arena + a->name, arena + b->name);
	if (r)
		return r;
	return a->module < b->module ? -1 : a->module > b->module;
}

/* Sort and keep one entry per address. */
static void load__sort(struct ksyms_load *k)
{
	size_t i, n = 0;

	if (k->nr)
		qsort_r(k->syms, k->nr, sizeof(*k->syms), entry_cmp, k->arena);
	for (i = 0; i < k->nr; i++) {
		if (n && k->syms[n - 1].addr == k->syms[i].addr)
			continue;
		k->syms[n++] = k->syms[i];
	}
	k->nr = n;
}

static void load__free(struct ksyms_load *k)
{
	free(k->syms);
	free(k->arena);
}

/* Start a run at symbol i unless the last one already has value. */
static int add_run(struct ksym_run **runs, size_t *nr, size_t i, uint32_t value)
{
	struct ksym_run *p;

	if (*nr && (*runs)[*nr - 1].value == value)
		return 0;
	p = reallocarray(*runs, *nr + 1, sizeof(**runs));
	if (!p)
		return -ENOMEM;
	*runs = p;
	p[(*nr)++] = (struct ksym_run){.first = (uint32_t)i, .value = value};
	return 0;
}

/* The offset of a module name in k->modules, added when new; or -errno. */
static int64_t module_of(struct ksyms *k, const char *name)
{
	size_t len = strlen(name) + 1;
	char *p;

	for (size_t off = 0; off < k->modules_len; off += strlen(k->modules + off) + 1)
		if (!strcmp(k->modules + off, name))
			return (int64_t)off;
	if (k->modules_len + len > KSYMS_ARENA_MAX)
		return -E2BIG;
	p = realloc(k->modules, k->modules_len + len);
	if (!p)
		return -ENOMEM;
	k->modules = p;
	memcpy(p + k->modules_len, name, len);
	k->modules_len += len;
	return (int64_t)(k->modules_len - len);
}

/* The sorted symbols of l, packed into k. */
static int ksyms__pack(struct ksyms *k, const struct ksyms_load *l)
{
	const char **names = NULL;
	uint32_t *ids = NULL, module = KSYMS_NO_MODULE;
	int err = -ENOMEM;

	if (l->nr > UINT32_MAX)
		return -E2BIG;
	names = malloc((l->nr ? l->nr : 1) * sizeof(*names));
	ids = malloc((l->nr ? l->nr : 1) * sizeof(*ids));
	k->syms = malloc((l->nr ? l->nr : 1) * sizeof(*k->syms));
	if (!names || !ids || !k->syms)
		goto out;
	for (size_t i = 0; i < l->nr; i++)
		names[i] = l->arena + l->syms[i].name;
	k->names = strpack__new(names, l->nr, ids);
	if (!k->names) {
		err = -errno;
		goto out;
	}
	for (size_t i = 0, last = KSYMS_NO_MODULE; i < l->nr; i++) {
		const struct ksym_entry *e = &l->syms[i];

		/* A module's symbols are mostly together: its name is looked up when it changes. */
		if (e->module != last) {
			int64_t off = e->module == KSYMS_NO_MODULE
					      ? KSYMS_NO_MODULE
					      : module_of(k, l->arena + e->module);

			if (off < 0) {
				err = (int)off;
				goto out;
			}
			module = (uint32_t)off;
			last = e->module;
		}
		err = add_run(&k->highs, &k->nr_highs, i, (uint32_t)(e->addr >> 32));
		if (!err)
			err = add_run(&k->mods, &k->nr_mods, i, module);
		if (err)
			goto out;
		k->syms[i] = (struct ksym_slot){.lo = (uint32_t)e->addr, .name = ids[i]};
	}
	k->nr = l->nr;
	err = 0;
out:
	free(names);
	free(ids);
	return err;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms_load l = {.last_module = KSYMS_NO_MODULE};
	struct ksyms *k = NULL;
	FILE *f = NULL;
	char *line = NULL;
	size_t line_cap = 0;
	size_t nr_lines = 0, nr_nonzero = 0;
	int err;

	k = calloc(1, sizeof(*k));
	if (!k) {
		err = -ENOMEM;
		goto err_out;
	}

	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		goto err_out;
	}

	for (;;) {
		struct kline kl;
		ssize_t len;

		errno = 0;
		len = getline(&line, &line_cap, f);
		if (len < 0) {
			/* getline() also fails without setting the error flag (ENOMEM). */
			if (ferror(f) || (errno && !feof(f))) {
				err = errno ? -errno : -EIO;
				goto err_out;
			}
			break;
		}
		/* A NUL inside the line would hide its tail from the parser. */
		if (strlen(line) != (size_t)len || !kline__parse(line, &kl))
			continue;
		/* Count every well-formed line, data included: hidden addresses are all zero. */
		nr_lines++;
		if (kl.addr)
			nr_nonzero++;
		if (!is_text_type(kl.type) || !kl.addr)
			continue;
		err = load__add(&l, &kl);
		if (err)
			goto err_out;
	}

	/*
	 * Without CAP_SYSLOG (kernel.kptr_restrict >= 1, or kptr_restrict=0 with
	 * kernel.perf_event_paranoid >= 2) the kernel prints every address as zero. A table of
	 * names without addresses would silently symbolize nothing, so refuse it.
	 */
	if (nr_lines && !nr_nonzero) {
		err = -EPERM;
		goto err_out;
	}
	free(line);
	line = NULL;
	fclose(f);
	f = NULL;

	load__sort(&l);
	err = ksyms__pack(k, &l);
	if (err)
		goto err_out;
	load__free(&l);
	return k;

err_out:
	free(line);
	if (f)
		fclose(f);
	load__free(&l);
	ksyms__delete(k);
	errno = -err;
	return NULL;
}

void ksyms__delete(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->highs);
	free(k->mods);
	free(k->modules);
	strpack__delete(k->names);
	free(k);
}

/* The index of the symbol with the greatest address <= addr, or -1. */
static int64_t ksyms__index(const struct ksyms *k, uint64_t addr)
{
	uint32_t hi = (uint32_t)(addr >> 32), lo = (uint32_t)addr;
	size_t r = SEARCH_UPPER_BOUND(k->highs, k->nr_highs, value, hi);
	size_t first, end;

	if (!r)
		return -1;
	first = k->highs[r - 1].first;
	end = r < k->nr_highs ? k->highs[r].first : k->nr;
	/* A run of lower high bits: its last symbol is the one below addr. */
	if (k->highs[r - 1].value < hi)
		return (int64_t)end - 1;
	/* None of the run at or below addr: the last of the run before (none for the first). */
	return (int64_t)(first + SEARCH_UPPER_BOUND(k->syms + first, end - first, lo, lo)) - 1;
}

/*
 * kallsyms has no sizes, so a symbol is taken to extend up to the next one: an address in a gap
 * (e.g. past _etext, or past the last module symbol) resolves to the symbol before it. Only an
 * address below the lowest symbol is known to match nothing.
 */
bool ksyms__find(const struct ksyms *k, uint64_t addr, struct ksym *out)
{
	const struct ksym_run *hr, *mr;
	int64_t i;
	size_t r;

	if (!k || !k->nr || (i = ksyms__index(k, addr)) < 0)
		return false;
	if (!out)
		return true;
	/* The names were kept under KSYMS_NAME_MAX bytes when read, so this cannot fail. */
	out->name = strpack__get(k->names, k->syms[i].name, out->buf, sizeof(out->buf));
	if (!out->name)
		return false;
	r = SEARCH_UPPER_BOUND(k->highs, k->nr_highs, first, (size_t)i);
	hr = &k->highs[r - 1];
	r = SEARCH_UPPER_BOUND(k->mods, k->nr_mods, first, (size_t)i);
	mr = &k->mods[r - 1];
	out->module = mr->value == KSYMS_NO_MODULE ? NULL : k->modules + mr->value;
	out->addr = (uint64_t)hr->value << 32 | k->syms[i].lo;
	return true;
}

size_t ksyms__size(const struct ksyms *k)
{
	return k ? k->nr : 0;
}

size_t ksyms__bytes(const struct ksyms *k)
{
	if (!k)
		return 0;
	return sizeof(*k) + k->nr * sizeof(*k->syms) + k->nr_highs * sizeof(*k->highs) +
	       k->nr_mods * sizeof(*k->mods) + k->modules_len + strpack__bytes(k->names);
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel text symbols from a kallsyms file.
 *
 * /proc/kallsyms has ~120k-200k lines, so the table is kept compact: one string arena holding
 * every name (and each module name once per run of that module's lines), and 16-byte entries that
 * refer into it by offset. Offsets rather than pointers because the arena grows by realloc()
 * while loading.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "symbols/ksyms.h"

#include "base/hex.h"
#include "base/search.h"
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

struct ksyms {
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

/* Copy len bytes plus a NUL into the arena; returns the offset or -errno. */
static int64_t ksyms__intern(struct ksyms *k, const char *s, size_t len)
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

static int ksyms__push(struct ksyms *k, const struct ksym_entry *e)
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

static int ksyms__add(struct ksyms *k, const struct kline *l)
{
	struct ksym_entry e = {
		.addr = l->addr,
		.module = KSYMS_NO_MODULE,
		.weak = l->type == 'w' || l->type == 'W',
		.local = l->type == 't' || l->type == 'w',
	};
	int64_t off;

	off = ksyms__intern(k, l->name, l->name_len);
	if (off < 0)
		return (int)off;
	e.name = (uint32_t)off;

	if (l->module) {
		const char *last =
			k->last_module != KSYMS_NO_MODULE ? k->arena + k->last_module : NULL;

		if (last && strlen(last) == l->module_len &&
		    memcmp(last, l->module, l->module_len) == 0) {
			e.module = k->last_module;
		} else {
			off = ksyms__intern(k, l->module, l->module_len);
			if (off < 0)
				return (int)off;
			e.module = (uint32_t)off;
			k->last_module = (uint32_t)off;
		}
	}
	return ksyms__push(k, &e);
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

/* Sort, keep one entry per address and give back the slack of both arrays. */
static void ksyms__finish(struct ksyms *k)
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

	/* Shrinking cannot fail in a way that matters: on failure the larger block stays valid. */
	if (k->nr && k->nr < k->cap) {
		struct ksym_entry *p = reallocarray(k->syms, k->nr, sizeof(*p));

		if (p) {
			k->syms = p;
			k->cap = k->nr;
		}
	}
	if (k->arena_len && k->arena_len < k->arena_cap) {
		char *p = realloc(k->arena, k->arena_len);

		if (p) {
			k->arena = p;
			k->arena_cap = k->arena_len;
		}
	}
}

struct ksyms *ksyms__load(const char *path)
{
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
	k->last_module = KSYMS_NO_MODULE;

	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		goto err_out;
	}

	for (;;) {
		struct kline l;
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
		if (strlen(line) != (size_t)len || !kline__parse(line, &l))
			continue;
		/* Count every well-formed line, data included: hidden addresses are all zero. */
		nr_lines++;
		if (l.addr)
			nr_nonzero++;
		if (!is_text_type(l.type) || !l.addr)
			continue;
		err = ksyms__add(k, &l);
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

	ksyms__finish(k);
	free(line);
	fclose(f);
	return k;

err_out:
	free(line);
	if (f)
		fclose(f);
	ksyms__delete(k);
	errno = -err;
	return NULL;
}

void ksyms__delete(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->arena);
	free(k);
}

/*
 * kallsyms has no sizes, so a symbol is taken to extend up to the next one: an address in a gap
 * (e.g. past _etext, or past the last module symbol) resolves to the symbol before it. Only an
 * address below the lowest symbol is known to match nothing.
 */
bool ksyms__find(const struct ksyms *k, uint64_t addr, struct ksym *out)
{
	const struct ksym_entry *e;
	size_t n;

	if (!k)
		return false;
	n = SEARCH_UPPER_BOUND(k->syms, k->nr, addr, addr);
	if (!n)
		return false;
	e = &k->syms[n - 1];
	if (out) {
		out->name = k->arena + e->name;
		out->module = e->module == KSYMS_NO_MODULE ? NULL : k->arena + e->module;
		out->addr = e->addr;
	}
	return true;
}

size_t ksyms__size(const struct ksyms *k)
{
	return k ? k->nr : 0;
}

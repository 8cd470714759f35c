// SPDX-License-Identifier: BSD-2-Clause
/*
 * Compact unwind tables from .eh_frame / .debug_frame (the format and the CFI-to-row mapping are
 * described in unwind_table.h).
 *
 * This file is the public interface; the builder's stages are in cfi_*.c, which share
 * unwind_table_impl.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/safe_open.h"
#include "base/search.h"
#include "unwind/unwind_table_impl.h"

enum unwind_arch unwind_arch__of_elf(Elf *elf)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return UNWIND_ARCH_NONE;
	if (eh.e_machine == EM_X86_64)
		return UNWIND_ARCH_X86_64;
	if (eh.e_machine == EM_AARCH64)
		return UNWIND_ARCH_ARM64;
	return UNWIND_ARCH_NONE;
}

struct unwind_table *unwind_table__build_elf(Elf *elf, const struct unwind_table_opts *opts,
					     char *err, size_t errlen)
{
	struct cfi_builder b = {.err = err, .errlen = errlen, .addr_size = 8};
	struct unwind_table *t = NULL;
	struct cfi_sections cfi;
	bool used_debug = false, used_eh = false;
	int ret;

	if (err && errlen)
		err[0] = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = cfi_fail(&b, ENOEXEC, "not an ELF file");
		goto out;
	}
	b.arch = opts && opts->arch ? opts->arch : unwind_arch__of_elf(elf);
	if (b.arch == UNWIND_ARCH_NONE) {
		ret = cfi_fail(&b, ENOEXEC, "not a little-endian 64-bit x86_64 or arm64 ELF file");
		goto out;
	}
	b.sp_reg = b.arch == UNWIND_ARCH_ARM64 ? ARM64_SP : X86_64_RSP;
	b.fp_reg = b.arch == UNWIND_ARCH_ARM64 ? ARM64_X29 : X86_64_RBP;
	b.max_rows = opts && opts->max_rows ? opts->max_rows : UNWIND_TABLE_DEFAULT_MAX_ROWS;
	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = cfi_fail(&b, ENOMEM, "out of memory");
		goto out;
	}
	t->arch = b.arch;
	ret = cfi_find_sections(&b, elf, &cfi);
	/* .debug_frame first, so that where both describe an address .eh_frame's rows win: it is
	 * what the runtime itself unwinds with. */
	if (!ret && cfi.debug_frame)
		ret = cfi_parse_section(&b, cfi.debug_frame, &cfi.debug_sh, true, &used_debug);
	if (!ret && cfi.eh_frame)
		ret = cfi_parse_section(&b, cfi.eh_frame, &cfi.eh_sh, false, &used_eh);
	if (!ret)
		ret = cfi_finish(&b, t);
	b.stats.source = used_eh      ? UNWIND_SRC_EH_FRAME
			 : used_debug ? UNWIND_SRC_DEBUG_FRAME
				      : UNWIND_SRC_NONE;
	t->stats = b.stats;
out:
	free(b.cies);
	free(b.raw);
	if (ret) {
		unwind_table__delete(t);
		errno = -ret;
		return NULL;
	}
	return t;
}

struct unwind_table *unwind_table__build(const char *path, const struct unwind_table_opts *opts,
					 char *err, size_t errlen)
{
	struct unwind_table *t;
	int fd, saved;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	fd = safe_open(path, SAFE_OPEN_MAX_ELF_BYTES, NULL);
	if (fd < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, safe_open__strerror(fd));
		errno = -fd;
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	t = unwind_table__build_elf(elf, opts, err, errlen);
	saved = errno;
	elf_end(elf);
	close(fd);
	errno = saved;
	return t;
}

struct unwind_table *unwind_table__from_rows(enum unwind_arch arch,
					     const struct hp_unwind_row *rows, size_t nr)
{
	struct unwind_table *t;

	for (size_t i = 1; i < nr; i++) {
		if (rows[i].pc <= rows[i - 1].pc) {
			errno = EINVAL;
			return NULL;
		}
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->rows = malloc((nr ? nr : 1) * sizeof(*t->rows));
	if (!t->rows) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	if (nr)
		memcpy(t->rows, rows, nr * sizeof(*rows));
	t->nr = nr;
	t->arch = arch;
	t->stats.rows = (uint32_t)nr;
	t->stats.raw_rows = (uint32_t)nr;
	for (size_t i = 0; i < nr; i++)
		t->stats.per_cfa_rule[rows[i].cfa_rule & 7]++;
	return t;
}

void unwind_table__delete(struct unwind_table *table)
{
	if (!table)
		return;
	free(table->rows);
	free(table);
}

const struct hp_unwind_row *unwind_table__rows(const struct unwind_table *table, size_t *nr)
{
	*nr = table->nr;
	return table->rows;
}

enum unwind_arch unwind_table__arch(const struct unwind_table *table)
{
	return table->arch;
}

const struct unwind_table_stats *unwind_table__stats(const struct unwind_table *table)
{
	return &table->stats;
}

const struct hp_unwind_row *unwind_table__find(const struct unwind_table *table, uint64_t pc)
{
	size_t lo;

	if (pc > UINT32_MAX)
		return NULL;
	lo = SEARCH_UPPER_BOUND(table->rows, table->nr, pc, pc);
	return lo ? &table->rows[lo - 1] : NULL;
}

const char *unwind_arch__name(enum unwind_arch arch)
{
	switch (arch) {
	case UNWIND_ARCH_X86_64:
		return "x86_64";
	case UNWIND_ARCH_ARM64:
		return "arm64";
	default:
		return "none";
	}
}

const char *unwind_cfa_rule__name(unsigned int rule)
{
	static const char *const names[] = {
		[HP_CFA_NONE] = "none",
		[HP_CFA_SP] = "sp",
		[HP_CFA_FP] = "fp",
		[HP_CFA_PLT] = "plt",
		[HP_CFA_END] = "end",
		[HP_CFA_SIGNAL] = "signal",
		[HP_CFA_UNSUPPORTED] = "unsupported",
	};

	return rule < sizeof(names) / sizeof(names[0]) && names[rule] ? names[rule] : "?";
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The caps of base/safe_open.h applied to ELF sections before libelf reads them. libelf checks a
 * section against the file's size only, and a sparse file can be terabytes: elf_getdata() on a
 * .symtab that claims 1.5 GiB reads 1.5 GiB. A section over its cap is not read; the refusal is
 * counted (SAFE_OPEN_SECTION_BIG) and warned about, rate-limited.
 */
#ifndef HOSTPROF_ELF_LIMITS_H
#define HOSTPROF_ELF_LIMITS_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Whether a section of bytes bytes in the file (sh_size; for a compressed one, the larger of that
 * and its inflated size) may be read under cap. When not: counted, and a warning names path and
 * the section (name may be NULL).
 */
bool elf_limits__fits(uint64_t bytes, uint64_t cap, const char *path, const char *name);

/* The same for a section header: SHT_NOBITS takes no bytes; a compressed section's inflated
 * size counts too. */
bool elf_limits__section_fits(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t cap, const char *path,
			      const char *name);

/*
 * Whether the section name table may be read (elf_strptr() on it reads it whole):
 * SAFE_OPEN_MAX_SMALL_SECTION_BYTES. Fills *shstrndx. false also when there is none.
 */
bool elf_limits__names_fit(Elf *elf, size_t *shstrndx, const char *path);

#endif /* HOSTPROF_ELF_LIMITS_H */

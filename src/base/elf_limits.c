// SPDX-License-Identifier: BSD-2-Clause
#include "base/elf_limits.h"

#include <inttypes.h>
#include <stdio.h>

#include "base/safe_open.h"

bool elf_limits__fits(uint64_t bytes, uint64_t cap, const char *path, const char *name)
{
	char what[160];

	if (bytes <= cap)
		return true;
	snprintf(what, sizeof(what), "section %s claims %.1f MiB, over its cap of %.0f MiB",
		 name ? name : "(unnamed)", bytes / 1048576.0, cap / 1048576.0);
	safe_open__refused(SAFE_OPEN_SECTION_BIG, path, what);
	return false;
}

bool elf_limits__section_fits(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t cap, const char *path,
			      const char *name)
{
	uint64_t bytes = sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
	GElf_Chdr ch;

	if ((sh->sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch) && ch.ch_size > bytes)
		bytes = ch.ch_size;
	return elf_limits__fits(bytes, cap, path, name);
}

bool elf_limits__names_fit(Elf *elf, size_t *shstrndx, const char *path)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, shstrndx) || !(scn = elf_getscn(elf, *shstrndx)) ||
	    !gelf_getshdr(scn, &sh))
		return false;
	return elf_limits__section_fits(scn, &sh, SAFE_OPEN_MAX_SMALL_SECTION_BYTES, path,
					"the section name table");
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MiniDebugInfo (Fedora, RHEL): the .gnu_debugdata section of a stripped binary holds an
 * xz-compressed ELF file whose .symtab lists the functions that .dynsym lacks (the static and
 * hidden ones). This module decompresses it, within a bound, and opens it as an Elf handle; the
 * caller reads the symbol table as it reads any other.
 */
#ifndef HOSTPROF_MINIDEBUGINFO_H
#define HOSTPROF_MINIDEBUGINFO_H

#include <gelf.h>
#include <stddef.h>

/* A corrupt or hostile section must not eat memory: the decompressed file may not exceed this,
 * and the xz decoder may not use more than MINIDEBUGINFO_MEMLIMIT (enough for presets up to -7,
 * while distributions use the default, -6, which needs 9 MiB). */
#define MINIDEBUGINFO_MAX_BYTES (64u << 20)
#define MINIDEBUGINFO_MEMLIMIT (32u << 20)

struct minidebuginfo;

/*
 * Decompresses the contents of a .gnu_debugdata section (xz, len bytes) and opens the ELF file it
 * holds, which must be for the same machine (e_machine) as the binary. Returns NULL and sets errno
 * (EINVAL: not xz, corrupt, truncated, not a matching ELF file; EFBIG: over the bounds; ENOMEM),
 * with a message in err. The section's bytes are not needed after the call.
 */
struct minidebuginfo *minidebuginfo__open(const void *xz, size_t len, int machine, char *err,
					  size_t errlen);
/* The inner file, valid until minidebuginfo__close(). */
Elf *minidebuginfo__elf(const struct minidebuginfo *m);
/* Its first symbol table and that table's header; NULL when it has none that lies within it. */
Elf_Scn *minidebuginfo__symtab(const struct minidebuginfo *m, GElf_Shdr *sh);
/* Accepts NULL. */
void minidebuginfo__close(struct minidebuginfo *m);

#endif /* HOSTPROF_MINIDEBUGINFO_H */

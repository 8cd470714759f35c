// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/thread_ctx_ref.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/elf_limits.h"
#include "base/safe_open.h"
#include "process/proc.h"
#include "process/proc_mem.h"

/* Relocation types (x86_64 psABI; ELF for the Arm 64-bit Architecture). */
#define R_X86_64_DTPMOD64_ 16
#define R_X86_64_TPOFF64_ 18
#define R_X86_64_TLSDESC_ 36
#define R_AARCH64_TLS_DTPMOD64_ 1028
#define R_AARCH64_TLS_TPREL64_ 1030
#define R_AARCH64_TLSDESC_ 1031

/* A TLSDESC argument this close to 0 is a TLS-pointer offset; farther, a pointer into the heap
 * (glibc's struct tlsdesc_dynamic_arg). */
#define STATIC_TLS_SPAN (1LL << 30)

enum tls_access { ACCESS_NONE, ACCESS_TLSDESC, ACCESS_GD, ACCESS_IE };

/* What the binary says of the variable. */
struct tls_binary {
	uint16_t type, machine;
	uint64_t sym_value;  /* offset in the module's TLS block */
	uint64_t load_vaddr; /* of the PT_LOAD at file offset 0, page-aligned */
	uint64_t tls_memsz, tls_align, tls_vaddr;
	enum tls_access access;
	uint64_t got; /* the relocation's slot (file address) */
};

static enum tls_access access_of(uint16_t machine, uint32_t type)
{
	if (machine == EM_X86_64)
		return type == R_X86_64_TLSDESC_    ? ACCESS_TLSDESC
		       : type == R_X86_64_DTPMOD64_ ? ACCESS_GD
		       : type == R_X86_64_TPOFF64_  ? ACCESS_IE
						    : ACCESS_NONE;
	if (machine == EM_AARCH64)
		return type == R_AARCH64_TLSDESC_	 ? ACCESS_TLSDESC
		       : type == R_AARCH64_TLS_DTPMOD64_ ? ACCESS_GD
		       : type == R_AARCH64_TLS_TPREL64_	 ? ACCESS_IE
							 : ACCESS_NONE;
	return ACCESS_NONE;
}

/* The defined TLS symbol in .dynsym: its index, or 0. */
static size_t find_symbol(Elf *elf, Elf_Scn *dynsym, struct tls_binary *b, const char *path)
{
	GElf_Shdr sh, strsh = {0};
	Elf_Scn *strscn;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(dynsym, &sh) || !sh.sh_entsize)
		return 0;
	/* The binary is the process's choice: its tables are read within the caps. */
	strscn = elf_getscn(elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) ||
	    !elf_limits__fits(sh.sh_size + strsh.sh_size, SAFE_OPEN_MAX_SYMTAB_BYTES, path,
			      ".dynsym"))
		return 0;
	d = elf_getdata(dynsym, NULL);
	if (!d)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_TLS ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (name && !strcmp(name, THREAD_CTX_SYMBOL)) {
			b->sym_value = sym.st_value;
			return i;
		}
	}
	return 0;
}

/* The first dynamic relocation that reaches the symbol, the strongest access first. */
static void find_relocation(Elf *elf, size_t dynsym_index, size_t sym, struct tls_binary *b,
			    const char *path)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_link != dynsym_index || !sh.sh_entsize ||
		    !elf_limits__fits(sh.sh_size, SAFE_OPEN_MAX_SYMTAB_BYTES, path, "SHT_RELA") ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			enum tls_access a;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			a = access_of(b->machine, (uint32_t)GELF_R_TYPE(r.r_info));
			/* Against the symbol, or (bound locally) against none at its offset. */
			if (a == ACCESS_NONE ||
			    !(GELF_R_SYM(r.r_info) == sym ||
			      (GELF_R_SYM(r.r_info) == 0 && (uint64_t)r.r_addend == b->sym_value)))
				continue;
			if (b->access == ACCESS_NONE || a < b->access) {
				b->access = a;
				b->got = r.r_offset;
			}
		}
	}
}

/* Read what the binary at path says of the variable. 0, -ENOENT (it has none), or -errno. */
static int read_binary(const char *path, struct tls_binary *b)
{
	size_t dynsym_index = 0, sym = 0, nph = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int fd, err = -ENOENT;
	Elf *elf;

	fd = safe_open(path, SAFE_OPEN_MAX_ELF_BYTES, NULL);
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph)) {
		err = -ENOEXEC;
		goto out;
	}
	memset(b, 0, sizeof(*b));
	b->type = eh.e_type;
	b->machine = eh.e_machine;
	while ((scn = elf_nextscn(elf, scn)) && !sym) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM) {
			dynsym_index = elf_ndxscn(scn);
			sym = find_symbol(elf, scn, b, path);
		}
	}
	if (!sym)
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_TLS) {
			b->tls_memsz = ph.p_memsz;
			b->tls_align = ph.p_align ? ph.p_align : 1;
			b->tls_vaddr = ph.p_vaddr;
		} else if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
			b->load_vaddr = ph.p_vaddr & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
		}
	}
	find_relocation(elf, dynsym_index, sym, b, path);
	err = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

/*
 * The executable's own block, local exec: glibc puts it first (its l_tls_offset), where the
 * linker assumed it when it wrote the offsets into the code.
 */
static int local_exec(const struct tls_binary *b, struct hp_tls_ref *out)
{
	uint64_t firstbyte = (-b->tls_vaddr) & (b->tls_align - 1);

	if (!b->tls_memsz)
		return -ENOTSUP;
	out->kind = HP_TLS_STATIC;
	if (b->machine == EM_X86_64) /* variant II: the block ends at the TLS pointer */
		out->offset =
			(int64_t)b->sym_value -
			(int64_t)(round_up(b->tls_memsz - firstbyte, b->tls_align) + firstbyte);
	else if (b->machine == EM_AARCH64) /* variant I: after the 16-byte TCB */
		out->offset = (int64_t)(round_up(16, b->tls_align) + b->sym_value);
	else
		return -ENOTSUP;
	return 0;
}

/* What ld.so wrote in the GOT slot at addr decides the way. */
static int from_got(pid_t pid, const struct tls_binary *b, uint64_t addr, struct hp_tls_ref *out)
{
	uint64_t slot[2] = {0, 0}, dyn[2];
	int err = proc_mem__read(pid, addr, slot, sizeof(slot));

	if (err)
		return err;
	out->dtv_offset = b->machine == EM_X86_64 ? 8 : 0;
	switch (b->access) {
	case ACCESS_IE:
		out->kind = HP_TLS_STATIC;
		out->offset = (int64_t)slot[0];
		return 0;
	case ACCESS_GD:
		if (!slot[0])
			return -EAGAIN;
		out->kind = HP_TLS_DTV;
		out->module = (uint32_t)slot[0];
		out->offset = (int64_t)slot[1];
		return 0;
	case ACCESS_TLSDESC:
		if (!slot[0])
			return -EAGAIN;
		if ((int64_t)slot[1] > -STATIC_TLS_SPAN && (int64_t)slot[1] < STATIC_TLS_SPAN) {
			out->kind = HP_TLS_STATIC;
			out->offset = (int64_t)slot[1];
			return 0;
		}
		err = proc_mem__read(pid, slot[1], dyn, sizeof(dyn));
		if (err)
			return err;
		out->kind = HP_TLS_DTV;
		out->module = (uint32_t)dyn[0];
		out->offset = (int64_t)dyn[1];
		return dyn[0] ? 0 : -EAGAIN;
	default:
		return -ENOTSUP;
	}
}

int thread_ctx_ref__resolve(struct proc_table *procs, pid_t pid, struct hp_tls_ref *out, char *why,
			    size_t len)
{
	const struct proc *p = proc_table__get(procs, pid);
	char path[PATH_MAX];
	int err = -ENOENT;

	memset(out, 0, sizeof(*out));
	snprintf(why, len, "no binary of the process defines %s", THREAD_CTX_SYMBOL);
	if (!p)
		return -errno;
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct mapping *m = &p->maps.v[i];
		struct tls_binary b;
		uint64_t bias;
		int rc;

		/* Each binary once: by the mapping of its first page. */
		if (m->kind != MAPPING_FILE || m->pgoff != 0 ||
		    proc_table__mapping_path(procs, pid, m, path, sizeof(path)) ||
		    read_binary(path, &b))
			continue;
		p = proc_table__get(procs, pid); /* the pointer lives until the next table call */
		if (!p)
			return -ESRCH;
		bias = b.type == ET_DYN ? m->start - b.load_vaddr : 0;
		if (b.access != ACCESS_NONE)
			rc = from_got(pid, &b, bias + b.got, out);
		else if (p->exe_path && m->path && !strcmp(m->path, p->exe_path))
			rc = local_exec(&b, out);
		else
			rc = -ENOTSUP; /* a library with no relocation reaching it: local dynamic */
		snprintf(why, len, "%s in %s: %s", THREAD_CTX_SYMBOL, m->path ? m->path : path,
			 rc ? strerror(-rc) : "found");
		return rc;
	}
	return err;
}

// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/go_labels_ref.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/leb128.h"
#include "base/safe_open.h"
#include "process/proc.h"

/*
 * Offsets in runtime.g and runtime.m, from the DWARF of a program built by each release's latest
 * patch (1.19.8, 1.20.14, ..., 1.26.8) for amd64 and for arm64, which agree: g.m is always 48.
 */
static const struct go_runtime_layout layouts[] = {
	{19, 48, 192, 360, HP_CTX_GO_MAP},   {20, 48, 192, 360, HP_CTX_GO_MAP},
	{21, 48, 192, 344, HP_CTX_GO_MAP},   {22, 48, 192, 344, HP_CTX_GO_MAP},
	{23, 48, 192, 352, HP_CTX_GO_MAP},   {24, 48, 192, 352, HP_CTX_GO_SLICE},
	{25, 48, 184, 344, HP_CTX_GO_SLICE}, {26, 48, 184, 352, HP_CTX_GO_SLICE},
};

const struct go_runtime_layout *go_labels__layout(int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_HEADER 32
#define BUILDINFO_INLINE 0x2 /* flags: the strings follow the header (Go 1.18 on) */

int go_labels__version(const uint8_t *buildinfo, size_t len, int *minor, char *version, size_t vlen)
{
	const uint8_t *p, *stop = buildinfo + len;
	uint64_t n;
	char *end;
	long m;

	if (len < BUILDINFO_HEADER || memcmp(buildinfo, BUILDINFO_MAGIC, 14))
		return -EINVAL;
	if (!(buildinfo[15] & BUILDINFO_INLINE))
		return -ENOTSUP;
	/* The version string, after its length. */
	p = buildinfo + BUILDINFO_HEADER;
	if (!leb128__read_u(&p, stop, &n) || !n || n > (uint64_t)(stop - p) || n >= vlen)
		return -EINVAL;
	memcpy(version, p, n);
	version[n] = '\0';
	if (strncmp(version, "go1.", 4))
		return -ENOTSUP; /* "devel +abc": a toolchain built from source */
	errno = 0;
	m = strtol(version + 4, &end, 10);
	if (errno || end == version + 4 || m < 0 || m > INT_MAX)
		return -ENOTSUP;
	*minor = (int)m;
	return 0;
}

/* What a Go executable says of itself; found once per binary. */
struct go_binary {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int err; /* 0, or what go_labels_ref__resolve returns for it */
	char why[160];
	struct hp_tls_ref ref;
};

#define CACHE_SLOTS 64

struct go_labels_cache {
	struct go_binary slots[CACHE_SLOTS];
	size_t next; /* the slot the next binary takes: the oldest */
};

struct go_labels_cache *go_labels_cache__new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOTSUP;
		return NULL;
	}
	return calloc(1, sizeof(struct go_labels_cache));
}

void go_labels_cache__delete(struct go_labels_cache *c)
{
	free(c);
}

/* The value of the TLS symbol name in .symtab; false when it is stripped or absent. */
static bool tls_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    sh.sh_size > SAFE_OPEN_MAX_SYMTAB_BYTES || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_TLS)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*value = sym.st_value;
				return true;
			}
		}
	}
	return false;
}

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

/* Where g lies for the executable's threads (see the header). */
static int find_g(Elf *elf, uint16_t machine, struct hp_tls_ref *ref)
{
	uint64_t value = 0, memsz = 0, align = 8;
	size_t nph = 0;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS) {
			memsz = ph.p_memsz;
			align = ph.p_align ? ph.p_align : 1;
		}
	}
	if (machine == EM_X86_64) {
		/* Without cgo the runtime sets the thread pointer itself, just past m.tls[0]. */
		if (!memsz || !tls_symbol(elf, "runtime.tlsg", &value))
			value = 0;
		ref->kind = HP_TLS_STATIC;
		ref->offset = (int64_t)value - (int64_t)round_up(memsz ? memsz : 8, align);
		return 0;
	}
	if (machine == EM_AARCH64) {
		if (memsz && tls_symbol(elf, "runtime.tls_g", &value)) {
			ref->kind = HP_TLS_STATIC;
			ref->offset = (int64_t)(round_up(16, align) + value);
		} else {
			ref->kind = HP_TLS_GO_REG;
		}
		return 0;
	}
	return -ENOTSUP;
}

/* Read what the executable at fd says into b (err and why included). */
static void read_binary(int fd, struct go_binary *b)
{
	uint8_t info[BUILDINFO_HEADER + 80];
	const struct go_runtime_layout *l;
	char version[64] = "";
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	ssize_t got = -1;
	int minor = 0;
	Elf *elf;

	b->err = -ENOEXEC;
	snprintf(b->why, sizeof(b->why), "not an ELF file");
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".go.buildinfo") && sh.sh_type == SHT_PROGBITS) {
			got = pread(fd, info, sh.sh_size < sizeof(info) ? sh.sh_size : sizeof(info),
				    (off_t)sh.sh_offset);
			break;
		}
	}
	b->err = -ENOENT;
	snprintf(b->why, sizeof(b->why), "not a Go program (no .go.buildinfo)");
	if (got < 0)
		goto out;
	b->err = go_labels__version(info, (size_t)got, &minor, version, sizeof(version));
	if (b->err) {
		snprintf(b->why, sizeof(b->why), "Go build info %s",
			 b->err == -ENOTSUP ? "of a release before 1.18 or a development build"
					    : "unreadable");
		goto out;
	}
	l = go_labels__layout(minor);
	if (!l) {
		b->err = -ENOTSUP;
		snprintf(b->why, sizeof(b->why),
			 "%s: goroutine labels not read (runtime layouts known for go1.%d to "
			 "go1.%d)",
			 version, GO_LABELS_MIN_MINOR, GO_LABELS_MAX_MINOR);
		goto out;
	}
	b->err = find_g(elf, eh.e_machine, &b->ref);
	if (b->err) {
		snprintf(b->why, sizeof(b->why), "%s: an architecture whose g is not known",
			 version);
		goto out;
	}
	b->ref.record = l->record;
	b->ref.go_g_m = l->g_m;
	b->ref.go_m_curg = l->m_curg;
	b->ref.go_g_labels = l->g_labels;
	snprintf(b->why, sizeof(b->why), "%s: goroutine labels (%s)", version,
		 b->ref.kind == HP_TLS_GO_REG ? "g in x28" : "g in TLS");
out:
	if (elf)
		elf_end(elf);
}

static bool same_binary(const struct go_binary *b, const struct stat *st)
{
	return b->ino == st->st_ino && b->dev == st->st_dev && b->size == st->st_size &&
	       b->mtime.tv_sec == st->st_mtim.tv_sec && b->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

int go_labels_ref__resolve(struct go_labels_cache *c, struct proc_table *procs, pid_t pid,
			   struct hp_tls_ref *out, char *why, size_t len)
{
	const struct proc *p = proc_table__get(procs, pid);
	char path[PATH_MAX];
	struct go_binary *b;
	struct stat st;
	int fd = -1;

	memset(out, 0, sizeof(*out));
	snprintf(why, len, "the executable is not readable");
	if (!p)
		return -errno;
	for (size_t i = 0; i < p->maps.n && fd < 0; i++) {
		const struct mapping *m = &p->maps.v[i];

		if (m->kind != MAPPING_FILE || m->pgoff != 0 || !p->exe_path || !m->path ||
		    strcmp(m->path, p->exe_path) ||
		    proc_table__mapping_path(procs, pid, m, path, sizeof(path)))
			continue;
		fd = safe_open(path, SAFE_OPEN_MAX_ELF_BYTES, &st);
		if (fd < 0) {
			snprintf(why, len, "the executable: %s", safe_open__strerror(fd));
			return fd;
		}
	}
	if (fd < 0)
		return -ENOENT;
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		if (same_binary(&c->slots[i], &st)) {
			b = &c->slots[i];
			goto found;
		}
	}
	b = &c->slots[c->next];
	c->next = (c->next + 1) % CACHE_SLOTS;
	*b = (struct go_binary){
		.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim};
	read_binary(fd, b);
found:
	close(fd);
	*out = b->ref;
	snprintf(why, len, "%s", b->why);
	return b->err;
}

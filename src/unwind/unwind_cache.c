// SPDX-License-Identifier: BSD-2-Clause
#include "unwind/unwind_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/atomic_file.h"
#include "base/file_read.h"
#include "base/hex.h"
#include "base/safe_open.h"
#include "hostprof_abi.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

#define CACHE_MAGIC "HPUNWTAB"

/* The start of every cache file; the rows follow it directly. */
struct cache_header {
	char magic[8];	       /* CACHE_MAGIC, not NUL-terminated */
	uint32_t version;      /* HP_UNWIND_TABLE_VERSION */
	uint32_t arch;	       /* enum unwind_arch */
	uint32_t row_size;     /* sizeof(struct hp_unwind_row) */
	uint32_t build_id_len; /* bytes of build_id used */
	uint64_t nr_rows;
	uint8_t build_id[UNWIND_CACHE_BUILD_ID_MAX];
	uint32_t crc; /* zlib crc32 of this header with crc = 0, then of the rows */
	uint32_t pad; /* 0; keeps the rows 8-byte aligned */
};

/* The offsets that unwind_cache.h documents (and the unit test forges files by). */
_Static_assert(sizeof(struct cache_header) == 104, "cache_header layout");
_Static_assert(offsetof(struct cache_header, nr_rows) == 24 &&
		       offsetof(struct cache_header, build_id) == 32 &&
		       offsetof(struct cache_header, crc) == 96,
	       "cache_header offsets");
/* unwind_cache__decode() reads the rows in place, right after the header. */
_Static_assert(sizeof(struct cache_header) % _Alignof(struct hp_unwind_row) == 0,
	       "rows after the header stay aligned");

/* The GNU build-id note in one block of notes: its length, 0 when absent or longer than cap. */
static size_t note_build_id(Elf_Data *data, uint8_t *out, size_t cap)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return 0;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    name_off <= data->d_size - 4 && !memcmp(base + name_off, "GNU", 4) &&
		    nh.n_descsz > 0 && desc_off <= data->d_size &&
		    nh.n_descsz <= data->d_size - desc_off) {
			if (nh.n_descsz > cap)
				return 0;
			memcpy(out, base + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

size_t unwind_cache__build_id(Elf *elf, uint8_t *out, size_t cap)
{
	Elf_Scn *scn = NULL;
	size_t nphdr, len = 0;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return 0;
	/* The segments first: they are what the loaded binary has, even without section headers. */
	if (elf_getphdrnum(elf, &nphdr) == 0) {
		for (size_t i = 0; i < nphdr && !len; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE || !ph.p_filesz ||
			    ph.p_filesz > SAFE_OPEN_MAX_SMALL_SECTION_BYTES)
				continue;
			len = note_build_id(
				elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
						     ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
				out, cap);
		}
	}
	while (!len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		/* A build-id note is bytes: a bigger one is not read (base/safe_open.h). */
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    sh.sh_size <= SAFE_OPEN_MAX_SMALL_SECTION_BYTES)
			len = note_build_id(elf_getdata(scn, NULL), out, cap);
	}
	return len;
}

/* Does the builder find a .debug_frame with contents (what strip removes)? */
static bool has_debug_frame(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr names;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0 || !(scn = elf_getscn(elf, shstrndx)) ||
	    !gelf_getshdr(scn, &names) || names.sh_size > SAFE_OPEN_MAX_SMALL_SECTION_BYTES)
		return false;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(name, ".debug_frame"))
			return true;
	}
	return false;
}

int unwind_cache__key(Elf *elf, struct unwind_cache_key *key)
{
	memset(key, 0, sizeof(*key));
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -ENOENT;
	key->build_id_len = unwind_cache__build_id(elf, key->build_id, sizeof(key->build_id));
	key->arch = unwind_arch__of_elf(elf);
	if (key->build_id_len < UNWIND_CACHE_BUILD_ID_MIN || key->arch == UNWIND_ARCH_NONE ||
	    has_debug_frame(elf))
		return -ENOENT;
	return 0;
}

static bool valid_arch(enum unwind_arch arch)
{
	return arch == UNWIND_ARCH_X86_64 || arch == UNWIND_ARCH_ARM64;
}

/* The file of a key. -EINVAL for a key that is never cached, -ENAMETOOLONG for a dir too long. */
static int cache_path(const char *dir, const uint8_t *id, size_t id_len, enum unwind_arch arch,
		      char *path, size_t size)
{
	char hex[2 * UNWIND_CACHE_BUILD_ID_MAX + 1];
	int n;

	if (!dir || !dir[0] || !id || id_len < UNWIND_CACHE_BUILD_ID_MIN ||
	    id_len > UNWIND_CACHE_BUILD_ID_MAX || !valid_arch(arch))
		return -EINVAL;
	hex__encode(hex, id, id_len);
	n = snprintf(path, size, "%s/unwind/%.2s/%s.v%d.%s", dir, hex, hex + 2,
		     HP_UNWIND_TABLE_VERSION, unwind_arch__name(arch));
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int read_full(int fd, void *buf, size_t len)
{
	int err = file__read_full(fd, buf, len);

	return err == -ENODATA ? -EBADMSG : err; /* shorter than it said: truncated */
}

static uint32_t checksum(const struct cache_header *h, const struct hp_unwind_row *rows, size_t nr)
{
	struct cache_header copy = *h;
	uLong crc = crc32(0L, Z_NULL, 0);
	const Bytef *p = (const Bytef *)rows;
	size_t left = nr * sizeof(*rows);

	copy.crc = 0;
	crc = crc32(crc, (const Bytef *)&copy, sizeof(copy));
	/* zlib takes a uInt length: feed large tables in pieces. */
	while (left) {
		uInt n = left > (1U << 30) ? (1U << 30) : (uInt)left;

		crc = crc32(crc, p, n);
		p += n;
		left -= n;
	}
	return (uint32_t)crc;
}

/* Rules the walker knows; sorting is checked by unwind_table__from_rows(). */
static bool valid_rows(const struct hp_unwind_row *rows, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (rows[i].cfa_rule > HP_CFA_UNSUPPORTED || rows[i].fp_rule > HP_REG_UNDEFINED ||
		    rows[i].ra_rule > HP_REG_UNDEFINED)
			return false;
	return true;
}

static int check_header(const struct cache_header *h, const uint8_t *id, size_t id_len,
			enum unwind_arch arch, uint64_t file_size)
{
	if (memcmp(h->magic, CACHE_MAGIC, sizeof(h->magic)) ||
	    h->version != HP_UNWIND_TABLE_VERSION || h->arch != (uint32_t)arch ||
	    h->row_size != sizeof(struct hp_unwind_row) || h->build_id_len != id_len ||
	    memcmp(h->build_id, id, id_len) || h->pad)
		return -EBADMSG;
	/* The count is checked against the cap before it is multiplied or trusted for malloc. */
	if (h->nr_rows > UNWIND_TABLE_DEFAULT_MAX_ROWS ||
	    file_size != sizeof(*h) + h->nr_rows * sizeof(struct hp_unwind_row))
		return -EBADMSG;
	return 0;
}

int unwind_cache__decode(const void *buf, size_t len, const uint8_t *build_id, size_t id_len,
			 enum unwind_arch arch, struct unwind_table **out)
{
	const struct hp_unwind_row *rows;
	struct cache_header h;
	int err;

	*out = NULL;
	if (!build_id || id_len > UNWIND_CACHE_BUILD_ID_MAX || !valid_arch(arch))
		return -EINVAL;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	err = check_header(&h, build_id, id_len, arch, len);
	if (err)
		return err;
	/* The header's size keeps the rows as aligned as buf is (see struct cache_header). */
	rows = (const struct hp_unwind_row *)((const uint8_t *)buf + sizeof(h));
	if (checksum(&h, rows, h.nr_rows) != h.crc || !valid_rows(rows, h.nr_rows))
		return -EBADMSG;
	*out = unwind_table__from_rows(arch, rows, h.nr_rows);
	if (!*out)
		return errno == EINVAL ? -EBADMSG : -ENOMEM;
	return 0;
}

int unwind_cache__load(const char *dir, const uint8_t *build_id, size_t id_len,
		       enum unwind_arch arch, struct unwind_table **out)
{
	struct cache_header h;
	char path[PATH_MAX];
	void *buf = NULL;
	struct stat st;
	int fd = -1, err;

	*out = NULL;
	err = cache_path(dir, build_id, id_len, arch, path, sizeof(path));
	if (err)
		return err;
	/* O_NONBLOCK: a FIFO at the path must not hang the loader before fstat() rejects it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		err = errno == ELOOP ? -EBADMSG : -errno;
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EBADMSG;
		goto out;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		err = -EPERM;
		goto out;
	}
	if ((uint64_t)st.st_size < sizeof(h) ||
	    (uint64_t)st.st_size > sizeof(h) + (uint64_t)UNWIND_TABLE_DEFAULT_MAX_ROWS *
						       sizeof(struct hp_unwind_row)) {
		err = -EBADMSG;
		goto out;
	}
	/* The header first: a file that is not this key's table costs 104 bytes, not its size. */
	err = read_full(fd, &h, sizeof(h));
	if (!err)
		err = check_header(&h, build_id, id_len, arch, (uint64_t)st.st_size);
	if (err)
		goto out;
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(buf, &h, sizeof(h));
	err = read_full(fd, (uint8_t *)buf + sizeof(h), (size_t)st.st_size - sizeof(h));
	if (!err)
		err = unwind_cache__decode(buf, (size_t)st.st_size, build_id, id_len, arch, out);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

/* mkdir, 0700; one that already exists is left as it is. */
static int make_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int unwind_cache__store(const char *dir, const uint8_t *build_id, size_t id_len,
			const struct unwind_table *t)
{
	const struct hp_unwind_row *rows;
	struct cache_header *h = NULL;
	char path[PATH_MAX];
	size_t levels[3], nr = 0, size;
	int err;

	if (!t)
		return -EINVAL;
	err = cache_path(dir, build_id, id_len, unwind_table__arch(t), path, sizeof(path));
	if (err)
		return err;
	rows = unwind_table__rows(t, &nr);
	if (nr > UNWIND_TABLE_DEFAULT_MAX_ROWS)
		return -E2BIG;
	/* dir, dir/unwind and dir/unwind/xx: the path cut short at each level. */
	levels[0] = strlen(dir);
	levels[1] = levels[0] + strlen("/unwind");
	levels[2] = levels[1] + strlen("/xx");
	for (int i = 0; !err && i < 3; i++) {
		char c = path[levels[i]];

		path[levels[i]] = '\0';
		err = make_dir(path);
		path[levels[i]] = c;
	}
	if (err)
		return err;

	size = sizeof(*h) + nr * sizeof(*rows);
	h = calloc(1, size);
	if (!h)
		return -ENOMEM;
	memcpy(h->magic, CACHE_MAGIC, sizeof(h->magic));
	h->version = HP_UNWIND_TABLE_VERSION;
	h->arch = unwind_table__arch(t);
	h->row_size = sizeof(*rows);
	h->build_id_len = (uint32_t)id_len;
	h->nr_rows = nr;
	memcpy(h->build_id, build_id, id_len);
	if (nr)
		memcpy(h + 1, rows, nr * sizeof(*rows));
	h->crc = checksum(h, rows, nr);
	err = atomic_file__write(path, h, size);
	free(h);
	return err;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The disk cache of unwind tables (src/unwind/unwind_cache.c): a stored table loads back identical,
 * and every file the cache cannot vouch for is a clean miss. Tables are made with
 * unwind_table__from_rows(), so these tests do not depend on the CFI builder. Broken files are
 * forged with the format that unwind_cache.h describes, with a correct checksum where the test is
 * about another field, so that each check is the one that rejects them.
 *
 * The build-id reader is compared with `readelf -n` on the fixtures (tests/unit/fixtures.mk), and
 * which files get a key at all is tried on small ELF files written with libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "hostprof_abi.h"
#include "unwind/unwind_cache.h"
#include "unwind/unwind_table.h"

/* The file header, as unwind_cache.h describes it: byte offsets. */
#define HDR_MAGIC 0
#define HDR_VERSION 8
#define HDR_ARCH 12
#define HDR_ROW_SIZE 16
#define HDR_BUILD_ID_LEN 20
#define HDR_NR_ROWS 24
#define HDR_BUILD_ID 32
#define HDR_CRC 96
#define HDR_SIZE 104

static char tmpdir[] = "/tmp/test_unwind_cache.XXXXXX";
static char cache[PATH_MAX];

static const uint8_t id_a[20] = {0x3f, 0xa1, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
				 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x9c};
static const uint8_t id_b[16] = {0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
				 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf};

/* One row of each kind, with offsets of both signs. */
static const struct hp_unwind_row sample_rows[] = {
	{.pc = 0x1000,
	 .cfa_rule = HP_CFA_SP,
	 .cfa_offset = 8,
	 .ra_rule = HP_REG_OFFSET,
	 .ra_offset = -8},
	{.pc = 0x1001,
	 .cfa_rule = HP_CFA_SP,
	 .cfa_offset = 16,
	 .fp_rule = HP_REG_OFFSET,
	 .fp_offset = -16,
	 .ra_rule = HP_REG_OFFSET,
	 .ra_offset = -8},
	{.pc = 0x1004,
	 .cfa_rule = HP_CFA_FP,
	 .cfa_offset = 16,
	 .fp_rule = HP_REG_OFFSET,
	 .fp_offset = -16,
	 .ra_rule = HP_REG_OFFSET,
	 .ra_offset = -8},
	{.pc = 0x1040, .cfa_rule = HP_CFA_NONE},
	{.pc = 0x2000,
	 .cfa_rule = HP_CFA_PLT,
	 .cfa_offset = 8,
	 .ra_rule = HP_REG_OFFSET,
	 .ra_offset = -8},
	{.pc = 0x2100, .cfa_rule = HP_CFA_END},
	{.pc = 0x2200, .cfa_rule = HP_CFA_SIGNAL},
	{.pc = 0x2300, .cfa_rule = HP_CFA_UNSUPPORTED, .fp_rule = HP_REG_UNDEFINED},
	{.pc = 0xfffffff0, .cfa_rule = HP_CFA_NONE},
};
#define NR_SAMPLE (sizeof(sample_rows) / sizeof(sample_rows[0]))

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The file the cache uses for (id, arch). */
static const char *entry_path(const uint8_t *id, size_t len, enum unwind_arch arch)
{
	static char path[2 * PATH_MAX];
	char hex[2 * UNWIND_CACHE_BUILD_ID_MAX + 1];

	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(path, sizeof(path), "%s/unwind/%.2s/%s.v%d.%s", cache, hex, hex + 2,
		 HP_UNWIND_TABLE_VERSION, unwind_arch__name(arch));
	return path;
}

static size_t read_file(const char *path, uint8_t **buf)
{
	struct stat st;
	size_t n = 0;
	FILE *f = fopen(path, "rb");

	*buf = NULL;
	if (!f || fstat(fileno(f), &st) < 0) {
		if (f)
			fclose(f);
		return 0;
	}
	*buf = malloc(st.st_size + 1);
	if (*buf)
		n = fread(*buf, 1, st.st_size, f);
	fclose(f);
	return n;
}

/* Written as the cache writes: owner-only, whole. */
static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len, "write %s: %s", path,
	      strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* Recompute the checksum of a forged file over what it holds, as the cache computes it. */
static void fix_crc(uint8_t *buf, size_t len)
{
	uint32_t zero = 0, crc;
	uLong c = crc32(0L, Z_NULL, 0);

	memcpy(buf + HDR_CRC, &zero, 4);
	c = crc32(c, buf, HDR_SIZE);
	c = crc32(c, buf + HDR_SIZE, (uInt)(len - HDR_SIZE));
	crc = (uint32_t)c;
	memcpy(buf + HDR_CRC, &crc, 4);
}

static struct unwind_table *sample_table(enum unwind_arch arch)
{
	struct unwind_table *t = unwind_table__from_rows(arch, sample_rows, NR_SAMPLE);

	CHECK(t != NULL, "unwind_table__from_rows: %s", strerror(errno));
	return t;
}

/* Store the sample table for id_a (x86_64) afresh. */
static bool store_sample(void)
{
	struct unwind_table *t = sample_table(UNWIND_ARCH_X86_64);
	int err = t ? unwind_cache__store(cache, id_a, sizeof(id_a), t) : -ENOMEM;

	CHECK(err == 0, "store: %s", strerror(-err));
	unwind_table__delete(t);
	return err == 0;
}

/* Load id_a (x86_64): want is 0 for a hit, else the miss expected. *out must be NULL on any miss,
 * whatever it held before. */
static void check_load(const char *what, int want)
{
	struct unwind_table *const poison = (struct unwind_table *)1, *t = poison;
	int err = unwind_cache__load(cache, id_a, sizeof(id_a), UNWIND_ARCH_X86_64, &t);

	CHECK(err == want, "%s: got %d (%s), want %d (%s)", what, err, strerror(-err), want,
	      strerror(-want));
	if (want == 0)
		CHECK(t != NULL && t != poison, "%s: no table on a hit", what);
	else
		CHECK(t == NULL, "%s: a table on a miss", what);
	if (t != poison)
		unwind_table__delete(t);
}

static void check_mode(const char *path, mode_t want)
{
	struct stat st = {0};
	int ret = stat(path, &st);

	CHECK(ret == 0 && (st.st_mode & 07777) == want, "%s: mode %o, want %o", path,
	      (unsigned)(st.st_mode & 07777), (unsigned)want);
}

static void test_round_trip(void)
{
	struct unwind_table *in = sample_table(UNWIND_ARCH_X86_64), *out = NULL;
	const struct hp_unwind_row *rows;
	char path[PATH_MAX + 32];
	size_t nr = 0;
	int err;

	if (!in)
		return;
	CHECK(unwind_cache__load(cache, id_a, sizeof(id_a), UNWIND_ARCH_X86_64, &out) == -ENOENT,
	      "an empty cache misses");
	CHECK(out == NULL, "no table on a miss");

	err = unwind_cache__store(cache, id_a, sizeof(id_a), in);
	CHECK(err == 0, "store: %s", strerror(-err));
	CHECK(access(entry_path(id_a, sizeof(id_a), UNWIND_ARCH_X86_64), F_OK) == 0,
	      "the file is %s", entry_path(id_a, sizeof(id_a), UNWIND_ARCH_X86_64));
	/* The cache directory did not exist: the store made it and the levels below, owner-only;
	 * the table itself too. */
	check_mode(entry_path(id_a, sizeof(id_a), UNWIND_ARCH_X86_64), 0600);
	check_mode(cache, 0700);
	snprintf(path, sizeof(path), "%s/unwind", cache);
	check_mode(path, 0700);
	snprintf(path, sizeof(path), "%s/unwind/3f", cache);
	check_mode(path, 0700);

	err = unwind_cache__load(cache, id_a, sizeof(id_a), UNWIND_ARCH_X86_64, &out);
	CHECK(err == 0 && out, "load: %s", strerror(-err));
	if (out) {
		rows = unwind_table__rows(out, &nr);
		CHECK_U64(nr, NR_SAMPLE);
		CHECK(nr == NR_SAMPLE && !memcmp(rows, sample_rows, sizeof(sample_rows)),
		      "the rows differ");
		CHECK(unwind_table__arch(out) == UNWIND_ARCH_X86_64, "arch %s",
		      unwind_arch__name(unwind_table__arch(out)));
		CHECK(unwind_table__find(out, 0x1005) == &rows[2],
		      "lookups work on the loaded table");
	}
	unwind_table__delete(out);
	out = NULL;

	/* Storing again replaces the entry (and leaves no temporary file). */
	err = unwind_cache__store(cache, id_a, sizeof(id_a), in);
	CHECK(err == 0, "store again: %s", strerror(-err));
	unwind_table__delete(in);

	/* Another arch, another build-id: other entries. */
	in = sample_table(UNWIND_ARCH_ARM64);
	CHECK(unwind_cache__load(cache, id_a, sizeof(id_a), UNWIND_ARCH_ARM64, &out) == -ENOENT,
	      "another arch misses");
	CHECK(unwind_cache__load(cache, id_b, sizeof(id_b), UNWIND_ARCH_X86_64, &out) == -ENOENT,
	      "another build-id misses");
	CHECK(unwind_cache__load(cache, id_a, 16, UNWIND_ARCH_X86_64, &out) == -ENOENT,
	      "a prefix of the build-id misses");
	err = in ? unwind_cache__store(cache, id_a, sizeof(id_a), in) : -ENOMEM;
	CHECK(err == 0, "store arm64: %s", strerror(-err));
	err = unwind_cache__load(cache, id_a, sizeof(id_a), UNWIND_ARCH_ARM64, &out);
	CHECK(err == 0 && out && unwind_table__arch(out) == UNWIND_ARCH_ARM64, "load arm64: %s",
	      strerror(-err));
	unwind_table__delete(out);
	unwind_table__delete(in);
	out = NULL;

	/* A binary without CFI has an empty table: worth caching too. */
	in = unwind_table__from_rows(UNWIND_ARCH_X86_64, sample_rows, 0);
	err = in ? unwind_cache__store(cache, id_b, sizeof(id_b), in) : -ENOMEM;
	CHECK(err == 0, "store empty: %s", strerror(-err));
	err = unwind_cache__load(cache, id_b, sizeof(id_b), UNWIND_ARCH_X86_64, &out);
	CHECK(err == 0 && out, "load empty: %s", strerror(-err));
	if (out) {
		unwind_table__rows(out, &nr);
		CHECK_U64(nr, 0);
	}
	unwind_table__delete(out);
	unwind_table__delete(in);
}

/* The decoder on a stored file's bytes, without the file: what the fuzz target calls. */
static void test_decode(void)
{
	struct unwind_table *out = (struct unwind_table *)&out;
	const struct hp_unwind_row *rows;
	size_t len, nr = 0;
	uint8_t *buf;

	if (!store_sample())
		return;
	len = read_file(entry_path(id_a, sizeof(id_a), UNWIND_ARCH_X86_64), &buf);
	CHECK(len == HDR_SIZE + sizeof(sample_rows), "the stored file: %zu bytes", len);
	if (!buf)
		return;
	CHECK(unwind_cache__decode(buf, len, id_a, sizeof(id_a), UNWIND_ARCH_X86_64, &out) == 0,
	      "decode");
	rows = out ? unwind_table__rows(out, &nr) : NULL;
	CHECK(rows && nr == NR_SAMPLE && !memcmp(rows, sample_rows, sizeof(sample_rows)),
	      "the rows differ");
	unwind_table__delete(out);
	CHECK(unwind_cache__decode(buf, len - 1, id_a, sizeof(id_a), UNWIND_ARCH_X86_64, &out) ==
			      -EBADMSG &&
		      !out,
	      "a byte short");
	CHECK(unwind_cache__decode(buf, len, id_a, sizeof(id_a), UNWIND_ARCH_ARM64, &out) ==
			      -EBADMSG &&
		      !out,
	      "another arch");
	/* Arguments load() vets through the path: the decoder vets them itself. */
	CHECK(unwind_cache__decode(buf, len, id_a, UNWIND_CACHE_BUILD_ID_MAX + 1,
				   UNWIND_ARCH_X86_64, &out) == -EINVAL &&
		      !out,
	      "a build-id longer than the header holds");
	CHECK(unwind_cache__decode(buf, len, id_a, sizeof(id_a), UNWIND_ARCH_NONE, &out) ==
			      -EINVAL &&
		      !out,
	      "no arch");
	free(buf);
}

/* What is never cached. */
static void test_bad_arguments(void)
{
	struct unwind_table *t = sample_table(UNWIND_ARCH_X86_64), *none = NULL, *out = NULL;

	CHECK(unwind_cache__load(cache, id_a, 0, UNWIND_ARCH_X86_64, &out) == -EINVAL && !out,
	      "no build-id");
	CHECK(unwind_cache__load(cache, id_a, UNWIND_CACHE_BUILD_ID_MIN - 1, UNWIND_ARCH_X86_64,
				 &out) == -EINVAL,
	      "a build-id too short to trust");
	CHECK(unwind_cache__load(NULL, id_a, sizeof(id_a), UNWIND_ARCH_X86_64, &out) == -EINVAL,
	      "no directory");
	CHECK(unwind_cache__load(cache, id_a, sizeof(id_a), UNWIND_ARCH_NONE, &out) == -EINVAL,
	      "no arch");
	CHECK(unwind_cache__store(cache, id_a, 4, t) == -EINVAL, "store: short build-id");
	CHECK(unwind_cache__store(cache, id_a, UNWIND_CACHE_BUILD_ID_MAX + 1, t) == -EINVAL,
	      "store: long build-id");
	CHECK(unwind_cache__store(cache, id_a, sizeof(id_a), NULL) == -EINVAL, "store: no table");
	none = unwind_table__from_rows(UNWIND_ARCH_NONE, sample_rows, NR_SAMPLE);
	CHECK(none && unwind_cache__store(cache, id_a, sizeof(id_a), none) == -EINVAL,
	      "store: a table without an arch");
	unwind_table__delete(none);
	unwind_table__delete(t);
}

/* A copy of the stored file, damaged by edit(), written back in place: must miss with want. */
static void check_forged(const char *what, void (*edit)(uint8_t *buf, size_t *len), bool crc,
			 int want)
{
	const char *path = entry_path(id_a, sizeof(id_a), UNWIND_ARCH_X86_64);
	uint8_t *buf = NULL;
	size_t len;

	if (!store_sample())
		return;
	len = read_file(path, &buf);
	CHECK(len == HDR_SIZE + sizeof(sample_rows), "%s: stored file of %zu bytes", what, len);
	if (!buf || len != HDR_SIZE + sizeof(sample_rows)) {
		free(buf);
		return;
	}
	edit(buf, &len);
	if (crc)
		fix_crc(buf, len);
	write_file(path, buf, len);
	check_load(what, want);
	free(buf);
}

static void edit_none(uint8_t *buf, size_t *len)
{
}

static void edit_truncate_rows(uint8_t *buf, size_t *len)
{
	*len -= sizeof(struct hp_unwind_row) / 2;
}

static void edit_truncate_header(uint8_t *buf, size_t *len)
{
	*len = HDR_SIZE / 2;
}

static void edit_empty(uint8_t *buf, size_t *len)
{
	*len = 0;
}

static void edit_flip_row(uint8_t *buf, size_t *len)
{
	buf[HDR_SIZE + 3 * sizeof(struct hp_unwind_row) + 5] ^= 0x10;
}

static void edit_flip_header(uint8_t *buf, size_t *len)
{
	buf[HDR_BUILD_ID + 30] ^= 1; /* past the id's 20 bytes: only the checksum notices */
}

static void edit_magic(uint8_t *buf, size_t *len)
{
	memcpy(buf + HDR_MAGIC, "HPUNWTAX", 8);
}

static void put32(uint8_t *buf, size_t off, uint32_t v)
{
	memcpy(buf + off, &v, 4);
}

static void put64(uint8_t *buf, size_t off, uint64_t v)
{
	memcpy(buf + off, &v, 8);
}

static void edit_version(uint8_t *buf, size_t *len)
{
	put32(buf, HDR_VERSION, HP_UNWIND_TABLE_VERSION + 1);
}

static void edit_arch(uint8_t *buf, size_t *len)
{
	put32(buf, HDR_ARCH, UNWIND_ARCH_ARM64);
}

static void edit_row_size(uint8_t *buf, size_t *len)
{
	put32(buf, HDR_ROW_SIZE, 24);
}

static void edit_build_id(uint8_t *buf, size_t *len)
{
	buf[HDR_BUILD_ID + 7] ^= 0xff;
}

static void edit_build_id_len(uint8_t *buf, size_t *len)
{
	put32(buf, HDR_BUILD_ID_LEN, 16);
}

static void edit_count_more(uint8_t *buf, size_t *len)
{
	put64(buf, HDR_NR_ROWS, NR_SAMPLE + 1);
}

static void edit_count_less(uint8_t *buf, size_t *len)
{
	put64(buf, HDR_NR_ROWS, NR_SAMPLE - 1);
}

/* A count whose byte size wraps around 64 bits to the real one: the cap must catch it first. */
static void edit_count_wraps(uint8_t *buf, size_t *len)
{
	put64(buf, HDR_NR_ROWS, NR_SAMPLE + (1ULL << 60));
}

static void edit_count_huge(uint8_t *buf, size_t *len)
{
	put64(buf, HDR_NR_ROWS, UINT64_MAX);
}

static void edit_trailing(uint8_t *buf, size_t *len)
{
	*len += 1; /* read_file allocated one spare byte */
	buf[*len - 1] = 0;
}

static void edit_unsorted(uint8_t *buf, size_t *len)
{
	struct hp_unwind_row r;

	memcpy(&r, buf + HDR_SIZE + 2 * sizeof(r), sizeof(r));
	r.pc = 0x1001; /* = the previous row's */
	memcpy(buf + HDR_SIZE + 2 * sizeof(r), &r, sizeof(r));
}

static void edit_unknown_rule(uint8_t *buf, size_t *len)
{
	struct hp_unwind_row r;

	memcpy(&r, buf + HDR_SIZE, sizeof(r));
	r.cfa_rule = 99;
	memcpy(buf + HDR_SIZE, &r, sizeof(r));
}

static void test_broken_files(void)
{
	check_forged("unchanged", edit_none, false, 0);
	check_forged("the same, checksum recomputed", edit_none, true, 0);
	check_forged("truncated in the rows", edit_truncate_rows, false, -EBADMSG);
	check_forged("truncated in the rows, checksum recomputed", edit_truncate_rows, true,
		     -EBADMSG);
	check_forged("truncated in the header", edit_truncate_header, false, -EBADMSG);
	check_forged("empty", edit_empty, false, -EBADMSG);
	check_forged("a flipped bit in a row", edit_flip_row, false, -EBADMSG);
	check_forged("a flipped bit in the header", edit_flip_header, false, -EBADMSG);
	check_forged("wrong magic", edit_magic, true, -EBADMSG);
	check_forged("another version inside", edit_version, true, -EBADMSG);
	check_forged("another arch inside", edit_arch, true, -EBADMSG);
	check_forged("another row size", edit_row_size, true, -EBADMSG);
	check_forged("another build-id inside", edit_build_id, true, -EBADMSG);
	check_forged("another build-id length", edit_build_id_len, true, -EBADMSG);
	check_forged("count larger than the file", edit_count_more, true, -EBADMSG);
	check_forged("count smaller than the file", edit_count_less, true, -EBADMSG);
	check_forged("count that wraps", edit_count_wraps, true, -EBADMSG);
	check_forged("count of 2^64-1", edit_count_huge, true, -EBADMSG);
	check_forged("a trailing byte", edit_trailing, true, -EBADMSG);
	check_forged("unsorted rows", edit_unsorted, true, -EBADMSG);
	check_forged("an unknown rule", edit_unknown_rule, true, -EBADMSG);

	/* A new store replaces a bad file: what the loader does after such a miss. */
	check_forged("bad file", edit_flip_row, false, -EBADMSG);
	if (store_sample())
		check_load("stored over a bad file", 0);
}

/* Files at the entry's path that are not the cache's own. */
static void test_untrusted_files(void)
{
	char path[2 * PATH_MAX], other[2 * PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s", entry_path(id_a, sizeof(id_a), UNWIND_ARCH_X86_64));

	if (!store_sample())
		return;
	CHECK(chmod(path, 0664) == 0, "chmod: %s", strerror(errno));
	check_load("group-writable", -EPERM);
	CHECK(chmod(path, 0646) == 0, "chmod: %s", strerror(errno));
	check_load("world-writable", -EPERM);

	/* A symlink to a valid entry (another build-id's file, renamed). */
	if (!store_sample())
		return;
	snprintf(other, sizeof(other), "%s.real", path);
	CHECK(rename(path, other) == 0 && symlink(other, path) == 0, "symlink: %s",
	      strerror(errno));
	check_load("a symlink", -EBADMSG);
	unlink(path);
	unlink(other);

	/* A FIFO must not block the load. */
	CHECK(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
	check_load("a FIFO", -EBADMSG);
	unlink(path);

	CHECK(mkdir(path, 0700) == 0, "mkdir: %s", strerror(errno));
	check_load("a directory", -EBADMSG);
	rmdir(path);

	/* Another build-id's entry copied under this name. */
	{
		struct unwind_table *t = sample_table(UNWIND_ARCH_X86_64);
		uint8_t *buf = NULL;
		size_t len;

		CHECK(t && unwind_cache__store(cache, id_b, sizeof(id_b), t) == 0, "store id_b");
		unwind_table__delete(t);
		len = read_file(entry_path(id_b, sizeof(id_b), UNWIND_ARCH_X86_64), &buf);
		CHECK(len > HDR_SIZE, "read id_b");
		write_file(path, buf, len);
		free(buf);
		check_load("another build-id's file", -EBADMSG);
	}
}

/* Directories the cache cannot use: misses on load, errors on store, never a crash. */
static void test_unusable_dirs(void)
{
	char shard[PATH_MAX + 32], file_dir[PATH_MAX + 32];
	struct unwind_table *t = sample_table(UNWIND_ARCH_X86_64), *out = NULL;
	int err;

	if (!t || !store_sample())
		goto out;
	snprintf(shard, sizeof(shard), "%s/unwind/3f", cache);

	/* Permissions do not stop root, who runs these tests only by hand: run-unit.sh drops to
	 * nobody. */
	if (geteuid() != 0) {
		CHECK(chmod(shard, 0) == 0, "chmod: %s", strerror(errno));
		check_load("unreadable directory", -EACCES);
		err = unwind_cache__store(cache, id_a, sizeof(id_a), t);
		CHECK(err == -EACCES, "store into an unreadable directory: %d", err);
		CHECK(chmod(shard, 0700) == 0, "chmod back: %s", strerror(errno));
		check_load("readable again", 0);
	} else {
		fprintf(stderr, "test_unwind_cache: as root, the permission checks are skipped\n");
	}

	/* The shard is a file. */
	rm_tree(shard);
	write_file(shard, "x", 1);
	check_load("shard is a file", -ENOTDIR);
	err = unwind_cache__store(cache, id_a, sizeof(id_a), t);
	CHECK(err == -ENOTDIR, "store where the shard is a file: %d", err);
	unlink(shard);

	/* The cache directory's parent does not exist: nothing is created above it. */
	snprintf(file_dir, sizeof(file_dir), "%s/no/such/dir", tmpdir);
	err = unwind_cache__store(file_dir, id_a, sizeof(id_a), t);
	CHECK(err == -ENOENT, "store below a missing parent: %d", err);
	err = unwind_cache__load(file_dir, id_a, sizeof(id_a), UNWIND_ARCH_X86_64, &out);
	CHECK(err == -ENOENT && !out, "load below a missing parent: %d", err);

	/* A path too long for the file name. */
	{
		char *longdir = malloc(PATH_MAX + 2);

		if (longdir) {
			memset(longdir, 'a', PATH_MAX);
			longdir[0] = '/';
			longdir[PATH_MAX] = '\0';
			CHECK(unwind_cache__load(longdir, id_a, sizeof(id_a), UNWIND_ARCH_X86_64,
						 &out) == -ENAMETOOLONG,
			      "load: a directory name too long");
			CHECK(unwind_cache__store(longdir, id_a, sizeof(id_a), t) == -ENAMETOOLONG,
			      "store: a directory name too long");
			free(longdir);
		}
	}
out:
	unwind_table__delete(t);
}

/* The build-id reader against readelf's (the fixtures' .buildid files). */
static void test_build_id(void)
{
	static const char *const names[] = {"fx_pie", "fx_nopie", "libfx.so", "libfx-stripped.so",
					    "fx_twoexec"};
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char path[PATH_MAX], want[128], got[2 * UNWIND_CACHE_BUILD_ID_MAX + 1];
	struct unwind_cache_key key;
	uint8_t id[UNWIND_CACHE_BUILD_ID_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) + 1; i++) {
		bool object = i == sizeof(names) / sizeof(names[0]);
		const char *name = object ? "fx_cxx.o" : names[i];
		size_t len;
		FILE *f;
		Elf *elf;
		int fd;

		snprintf(path, sizeof(path), "%s/fixtures/%s", out, name);
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0, "%s: %s (run `make unit-fixtures` first)", path, strerror(errno));
		if (fd < 0)
			continue;
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		len = unwind_cache__build_id(elf, id, sizeof(id));
		for (size_t j = 0; j < len; j++)
			snprintf(got + 2 * j, 3, "%02x", id[j]);
		got[2 * len] = '\0';
		if (object) {
			/* The linker adds build-ids: an object file has none, so no key. */
			CHECK_U64(len, 0);
			CHECK(unwind_cache__key(elf, &key) == -ENOENT, "an object file has no key");
		} else {
			snprintf(path, sizeof(path), "%s/fixtures/%s.buildid", out, name);
			f = fopen(path, "r");
			want[0] = '\0';
			if (!f || !fgets(want, sizeof(want), f))
				CHECK(0, "%s: %s", path, strerror(errno));
			if (f)
				fclose(f);
			want[strcspn(want, "\n")] = '\0';
			CHECK(strlen(want) == 40, "%s: readelf found a sha1 build-id", name);
			CHECK_STR(got, want);
			CHECK_U64(unwind_cache__build_id(elf, id, 19), 0); /* no room: none */
			CHECK(unwind_cache__key(elf, &key) == 0 && key.build_id_len == len &&
				      !memcmp(key.build_id, id, len),
			      "%s: keyed by its build-id", name);
#if defined(__x86_64__)
			CHECK(key.arch == UNWIND_ARCH_X86_64, "%s: x86_64", name);
#elif defined(__aarch64__)
			CHECK(key.arch == UNWIND_ARCH_ARM64, "%s: arm64", name);
#endif
		}
		elf_end(elf);
		close(fd);
	}
	CHECK_U64(unwind_cache__build_id(NULL, id, sizeof(id)), 0);
	CHECK(unwind_cache__key(NULL, &key) == -ENOENT, "no ELF, no key");
}

/* What a forged ELF file holds: sections only, which is all the key reads. */
struct fake_elf {
	int class;	  /* ELFCLASS64 or ELFCLASS32 */
	uint16_t machine; /* EM_X86_64, EM_AARCH64, ... */
	size_t id_len;	  /* build-id bytes, 0 for none */
	bool other_note;  /* a Go build-id note first, in the same section */
	int debug_frame;  /* 0: none; else its section type (SHT_PROGBITS, SHT_NOBITS) */
};

static size_t put_note(uint8_t *p, uint32_t type, const char *name, const uint8_t *desc,
		       uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1, h[3] = {namesz, descsz, type};
	size_t n = 0;

	memcpy(p, h, sizeof(h));
	n += sizeof(h);
	memcpy(p + n, name, namesz);
	n += (namesz + 3) & ~3u;
	memcpy(p + n, desc, descsz);
	n += (descsz + 3) & ~3u;
	return n;
}

#define NOTE_NAME ".note.gnu.build-id"
#define DEBUG_FRAME_NAME ".debug_frame"

/* Write the ELF file that fe describes at path, with libelf; its key into *key. */
static int fake_elf_key(const char *path, const struct fake_elf *fe, struct unwind_cache_key *key)
{
	static const char shstrtab[] = "\0" NOTE_NAME "\0" DEBUG_FRAME_NAME "\0.shstrtab";
	const size_t note_name = 1, debug_frame_name = note_name + sizeof(NOTE_NAME),
		     shstrtab_name = debug_frame_name + sizeof(DEBUG_FRAME_NAME);
	static uint8_t notes[256], frame[64];
	uint8_t desc[80];
	size_t notes_len = 0;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf *e;
	int fd, ret = -EIO;

	for (size_t i = 0; i < sizeof(desc); i++)
		desc[i] = (uint8_t)(0xa0 + i);
	if (fe->other_note)
		notes_len += put_note(notes, 4, "Go", desc, 12);
	if (fe->id_len)
		notes_len += put_note(notes + notes_len, 3, "GNU", desc, (uint32_t)fe->id_len);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	e = fd >= 0 ? elf_begin(fd, ELF_C_WRITE, NULL) : NULL;
	if (!e || !gelf_newehdr(e, fe->class) || !gelf_getehdr(e, &eh))
		goto out;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_machine = fe->machine;
	eh.e_type = ET_DYN;
	eh.e_version = EV_CURRENT;

	/* 1: the notes (a section even when empty, to keep the indices fixed) */
	scn = elf_newscn(e);
	d = elf_newdata(scn);
	d->d_buf = notes;
	d->d_size = notes_len;
	d->d_type = ELF_T_BYTE;
	d->d_align = 4;
	gelf_getshdr(scn, &sh);
	sh.sh_name = note_name;
	sh.sh_type = SHT_NOTE;
	sh.sh_flags = SHF_ALLOC;
	gelf_update_shdr(scn, &sh);
	/* 2: .debug_frame */
	scn = elf_newscn(e);
	d = elf_newdata(scn);
	d->d_buf = frame;
	d->d_size = sizeof(frame);
	d->d_type = ELF_T_BYTE;
	gelf_getshdr(scn, &sh);
	/* else a section of another name: the tail of the note's, "build-id" */
	sh.sh_name = fe->debug_frame ? debug_frame_name : note_name + 10;
	sh.sh_type = fe->debug_frame ? fe->debug_frame : SHT_PROGBITS;
	gelf_update_shdr(scn, &sh);
	/* 3: the section names */
	scn = elf_newscn(e);
	d = elf_newdata(scn);
	d->d_buf = (void *)shstrtab;
	d->d_size = sizeof(shstrtab);
	d->d_type = ELF_T_BYTE;
	gelf_getshdr(scn, &sh);
	sh.sh_name = shstrtab_name;
	sh.sh_type = SHT_STRTAB;
	gelf_update_shdr(scn, &sh);
	eh.e_shstrndx = 3;
	gelf_update_ehdr(e, &eh);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto out;
	elf_end(e);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ret = unwind_cache__key(e, key);
out:
	CHECK(ret != -EIO, "%s: libelf: %s", path, elf_errmsg(-1));
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* What may be cached, on ELF files forged for each rule. */
static void test_key(void)
{
	char path[PATH_MAX];
	struct unwind_cache_key key;
	struct {
		const char *what;
		struct fake_elf fe;
		int want;
		enum unwind_arch arch;
	} cases[] = {
		{"x86_64", {ELFCLASS64, EM_X86_64, 20, false, 0}, 0, UNWIND_ARCH_X86_64},
		{"arm64", {ELFCLASS64, EM_AARCH64, 20, false, 0}, 0, UNWIND_ARCH_ARM64},
		{"after another note", {ELFCLASS64, EM_X86_64, 16, true, 0}, 0, UNWIND_ARCH_X86_64},
		{"xxhash build-id", {ELFCLASS64, EM_X86_64, 8, false, 0}, 0, UNWIND_ARCH_X86_64},
		{"largest build-id", {ELFCLASS64, EM_X86_64, 64, false, 0}, 0, UNWIND_ARCH_X86_64},
		{"no build-id", {ELFCLASS64, EM_X86_64, 0, true, 0}, -ENOENT, UNWIND_ARCH_X86_64},
		{"short build-id",
		 {ELFCLASS64, EM_X86_64, 4, false, 0},
		 -ENOENT,
		 UNWIND_ARCH_X86_64},
		{"long build-id",
		 {ELFCLASS64, EM_X86_64, 65, false, 0},
		 -ENOENT,
		 UNWIND_ARCH_X86_64},
		{"i386", {ELFCLASS32, EM_386, 20, false, 0}, -ENOENT, UNWIND_ARCH_NONE},
		{"x32", {ELFCLASS32, EM_X86_64, 20, false, 0}, -ENOENT, UNWIND_ARCH_NONE},
		{"riscv", {ELFCLASS64, EM_RISCV, 20, false, 0}, -ENOENT, UNWIND_ARCH_NONE},
		/* strip would make another table under the same build-id */
		{".debug_frame",
		 {ELFCLASS64, EM_X86_64, 20, false, SHT_PROGBITS},
		 -ENOENT,
		 UNWIND_ARCH_X86_64},
		/* a debug file's placeholder holds nothing */
		{"empty .debug_frame",
		 {ELFCLASS64, EM_X86_64, 20, false, SHT_NOBITS},
		 0,
		 UNWIND_ARCH_X86_64},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		snprintf(path, sizeof(path), "%s/elf%zu", tmpdir, i);
		ret = fake_elf_key(path, &cases[i].fe, &key);
		CHECK(ret == cases[i].want, "%s: got %d, want %d", cases[i].what, ret,
		      cases[i].want);
		CHECK(key.arch == cases[i].arch, "%s: arch %s", cases[i].what,
		      unwind_arch__name(key.arch));
		if (ret == 0) {
			bool same = key.build_id_len == cases[i].fe.id_len;

			for (size_t j = 0; same && j < key.build_id_len; j++)
				same = key.build_id[j] == (uint8_t)(0xa0 + j);
			CHECK(same, "%s: the build-id's bytes", cases[i].what);
		}
	}
}

int main(void)
{
	CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp: %s", strerror(errno));
	CHECK(elf_version(EV_CURRENT) != EV_NONE, "libelf");
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);

	test_round_trip();
	test_decode();
	test_bad_arguments();
	test_broken_files();
	test_untrusted_files();
	test_unusable_dirs();
	test_build_id();
	test_key();

	rm_tree(tmpdir);
	return check_summary("test_unwind_cache");
}

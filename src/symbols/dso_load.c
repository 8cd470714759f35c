// SPDX-License-Identifier: BSD-2-Clause
/*
 * Opening one binary: the file through the path the caller can open, with safe_open() (a
 * regular file of bounded size, resolved inside the process's root), its identity for the cache,
 * its OpenTelemetry file id, its ELF contents and, when it is stripped, its separate debug file.
 * The fd and the Elf handle are closed before it returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_read.h"
#include "base/hex.h"
#include "base/safe_open.h"
#include "symbols/dso_internal.h"

/*
 * The OpenTelemetry file id (process.executable.build_id.htlhash): the first 16 bytes, in hex, of
 * SHA-256(first 4 KiB || last 4 KiB || file length as a big-endian uint64). It names any file,
 * with or without a GNU build-id, and is cheap: two 4 KiB reads whatever the file's size. For a
 * file under 4 KiB the two windows are the whole file, twice. Nettle's SHA-256 rather than
 * OpenSSL's EVP: the first EVP digest loads OpenSSL 3's providers, 1.9 MiB of libcrypto's pages
 * resident for the agent's life, for one hash per binary.
 */
static void compute_htlhash(struct dso *d, int fd, off_t size)
{
	enum { WINDOW = 4096 };
	size_t head = size < WINDOW ? (size_t)size : WINDOW;
	uint8_t buf[WINDOW], len_be[8], digest[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;

	d->htlhash_hex[0] = '\0';
	sha256_init(&ctx);
	if (file__pread_full(fd, buf, head, 0))
		return;
	sha256_update(&ctx, head, buf);
	if (file__pread_full(fd, buf, head, size - head))
		return;
	sha256_update(&ctx, head, buf);
	for (int i = 0; i < 8; i++)
		len_be[i] = (uint8_t)((uint64_t)size >> (56 - 8 * i));
	sha256_update(&ctx, sizeof(len_be), len_be);
	sha256_digest(&ctx, sizeof(digest), digest);
	hex__encode(d->htlhash_hex, digest, 16);
}

struct dso *dso__load(uint64_t dev, uint64_t inode, const char *open_path, const char *display_path,
		      const char *debug_root)
{
	struct debug_hints hints = {0};
	struct dso *d;
	struct stat st;
	Elf *elf = NULL;
	int fd = -1, err;

	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dev = dev;
	d->inode = inode;
	d->path = strdup(display_path ? display_path : open_path ? open_path : "");
	if (!d->path)
		goto nomem;
	if (open_path && !(d->open_path = strdup(open_path)))
		goto nomem;
	if (!open_path) {
		if (dso__fail(d, "%s: no path to open", d->path) == -ENOMEM)
			goto nomem;
		return d;
	}

	/* The process chose what is there: see base/safe_open.h. */
	fd = safe_open(open_path, SAFE_OPEN_MAX_ELF_BYTES, &st);
	if (fd < 0) {
		err = -fd;
		d->denied = err == EACCES || err == EPERM;
		/* Remember which file failed, so that the next lookup does not retry it. */
		if (!safe_open__stat(open_path, &st)) {
			fid_from_stat(&d->fid, &st);
			d->have_fid = true;
		}
		if (dso__fail(d, "open %s: %s", open_path, safe_open__strerror(fd)) == -ENOMEM)
			goto nomem;
		return d;
	}
	fid_from_stat(&d->fid, &st);
	d->have_fid = true;

	compute_htlhash(d, fd, st.st_size);

	/*
	 * ELF_C_READ, not ELF_C_READ_MMAP: libelf then reads with pread(), so a binary truncated
	 * while we read it gives a read error instead of SIGBUS.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		if (dso__fail(d, "%s: not an ELF file (%s)", d->path, elf_errmsg(-1)) == -ENOMEM)
			goto nomem;
		goto out;
	}
	d->readable = true;
	err = elf_symtab__read(d, elf, st.st_size, &hints);
	if (err == -ENOMEM)
		goto nomem;
	elf_end(elf);
	elf = NULL;
	close(fd);
	fd = -1;
	debug_file__use(d, open_path, display_path, debug_root, &hints);
	return d;
out:
	elf_end(elf);
	close(fd);
	return d;

nomem:
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	dso__free(d);
	errno = ENOMEM;
	return NULL;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * MiniDebugInfo: .gnu_debugdata, an xz-compressed ELF file holding a .symtab (GDB manual,
 * "MiniDebugInfo"). The decompressed bytes live as long as the Elf handle opened on them:
 * elf_memory() reads them in place.
 */
#include <errno.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "symbols/minidebuginfo.h"

struct minidebuginfo {
	char *buf;
	size_t len;
	Elf *elf;
};

static void __attribute__((format(printf, 3, 4)))
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *lzma_why(lzma_ret ret)
{
	switch (ret) {
	case LZMA_FORMAT_ERROR:
		return "not xz data";
	case LZMA_OPTIONS_ERROR:
		return "unsupported xz options";
	case LZMA_DATA_ERROR:
		return "corrupt xz data";
	case LZMA_BUF_ERROR:
		return "truncated xz data";
	case LZMA_MEMLIMIT_ERROR:
		return "the xz decoder would need more than 32 MiB";
	case LZMA_MEM_ERROR:
		return "out of memory";
	default:
		return "xz decoder error";
	}
}

/*
 * Decompresses into a buffer grown by doubling up to MINIDEBUGINFO_MAX_BYTES: the xz stream's
 * own size fields are not trusted. Returns 0 or -errno, with *out and *out_len set on success.
 */
static int decompress(const void *xz, size_t len, char **out, size_t *out_len, char *err,
		      size_t errlen)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = 64u << 10;
	char *buf = NULL;
	lzma_ret ret;
	int rc;

	ret = lzma_stream_decoder(&s, MINIDEBUGINFO_MEMLIMIT, 0);
	if (ret != LZMA_OK) {
		set_err(err, errlen, "%s", lzma_why(ret));
		return ret == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	/* Symbol tables compress about 4:1: start there, bounded. */
	if (len < MINIDEBUGINFO_MAX_BYTES / 4 && len * 4 > cap)
		cap = len * 4;
	s.next_in = xz;
	s.avail_in = len;
	for (;;) {
		char *nb = realloc(buf, cap);

		if (!nb) {
			set_err(err, errlen, "out of memory");
			rc = -ENOMEM;
			goto fail;
		}
		buf = nb;
		s.next_out = (uint8_t *)buf + s.total_out;
		s.avail_out = cap - s.total_out;
		ret = lzma_code(&s, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			set_err(err, errlen, "%s", lzma_why(ret));
			rc = ret == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
			goto fail;
		}
		if (s.avail_out)
			continue; /* LZMA_FINISH without progress ends in LZMA_BUF_ERROR */
		if (cap >= MINIDEBUGINFO_MAX_BYTES) {
			set_err(err, errlen, "decompresses to more than %u MiB",
				MINIDEBUGINFO_MAX_BYTES >> 20);
			rc = -EFBIG;
			goto fail;
		}
		cap = cap > MINIDEBUGINFO_MAX_BYTES / 2 ? MINIDEBUGINFO_MAX_BYTES : cap * 2;
	}
	*out = buf;
	*out_len = s.total_out;
	lzma_end(&s);
	return 0;
fail:
	lzma_end(&s);
	free(buf);
	return rc;
}

struct minidebuginfo *minidebuginfo__open(const void *xz, size_t len, int machine, char *err,
					  size_t errlen)
{
	struct minidebuginfo *m;
	GElf_Ehdr eh;
	int rc;

	set_err(err, errlen, "%s", "");
	m = calloc(1, sizeof(*m));
	if (!m) {
		set_err(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	rc = decompress(xz, len, &m->buf, &m->len, err, errlen);
	if (rc)
		goto fail;
	rc = -EINVAL;
	m->elf = elf_memory(m->buf, m->len);
	if (!m->elf || elf_kind(m->elf) != ELF_K_ELF || !gelf_getehdr(m->elf, &eh)) {
		set_err(err, errlen, "does not hold an ELF file");
		goto fail;
	}
	if (eh.e_machine != machine) {
		set_err(err, errlen, "holds an ELF file for machine %u, not %d", eh.e_machine,
			machine);
		goto fail;
	}
	return m;
fail:
	minidebuginfo__close(m);
	errno = -rc;
	return NULL;
}

Elf *minidebuginfo__elf(const struct minidebuginfo *m)
{
	return m->elf;
}

static bool within(const struct minidebuginfo *m, const GElf_Shdr *sh)
{
	return sh->sh_type != SHT_NOBITS && sh->sh_offset <= m->len &&
	       sh->sh_size <= m->len - sh->sh_offset;
}

Elf_Scn *minidebuginfo__symtab(const struct minidebuginfo *m, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr strsh;

	while ((scn = elf_nextscn(m->elf, scn))) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type != SHT_SYMTAB)
			continue;
		/* libelf checks this too; a hostile file is worth the second look. */
		strscn = elf_getscn(m->elf, sh->sh_link);
		if (!within(m, sh) || !strscn || !gelf_getshdr(strscn, &strsh) ||
		    !within(m, &strsh))
			return NULL;
		return scn;
	}
	return NULL;
}

void minidebuginfo__close(struct minidebuginfo *m)
{
	if (!m)
		return;
	elf_end(m->elf);
	free(m->buf);
	free(m);
}

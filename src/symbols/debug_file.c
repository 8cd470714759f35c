// SPDX-License-Identifier: BSD-2-Clause
/*
 * Separate debug files of stripped binaries: found on this host by build-id and .gnu_debuglink
 * (checked by build-id or CRC before they are trusted), or brought by debuginfod. What the binary
 * lacks (its .symtab, its DWARF) is taken from them; addresses need no translation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/clock.h"
#include "base/file_read.h"
#include "base/log.h"
#include "base/safe_open.h"
#include "symbols/debuginfod_fetch.h"
#include "symbols/dso_internal.h"

/* .gnu_debuglink's CRC is the one of zlib's crc32(). The caller keeps size within
 * SAFE_OPEN_MAX_CRC_BYTES: this runs on the capture thread. */
static bool file_crc_matches(int fd, off_t size, uint32_t want)
{
	unsigned char buf[16384];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;

	while (off < size) {
		size_t n = size - off < (off_t)sizeof(buf) ? (size_t)(size - off) : sizeof(buf);

		if (file__pread_full(fd, buf, n, off))
			return false;
		crc = crc32(crc, buf, n);
		off += n;
	}
	return crc == want;
}

static bool same_build_id(const struct dso *a, const struct dso *b)
{
	return a->build_id_len && a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

/*
 * Reads a candidate debug file into a scratch dso (its symbols, build-id and hints). Returns it
 * when it is an ELF file whose build-id agrees with d's (when both have one) and, for a
 * .gnu_debuglink candidate (check_crc), whose CRC is the one the binary recorded; NULL otherwise,
 * out of memory included: the binary's own tables are then used, as without a debug file.
 * A candidate over SAFE_OPEN_MAX_CRC_BYTES is not read through for its CRC: it is taken only
 * when its build-id is d's, else refused (counted, with a warning).
 */
static struct dso *load_debug_file(const struct dso *d, const char *path, bool check_crc,
				   uint32_t crc, struct debug_hints *dh)
{
	struct dso *dbg = NULL;
	struct stat st;
	Elf *elf = NULL;
	bool crc_checked = false;
	int fd;

	/* A FIFO here stalled the capture loop: see base/safe_open.h. */
	fd = safe_open(path, SAFE_OPEN_MAX_ELF_BYTES, &st);
	if (fd < 0)
		return NULL;
	if (check_crc && (uint64_t)st.st_size <= SAFE_OPEN_MAX_CRC_BYTES) {
		if (!file_crc_matches(fd, st.st_size, crc)) {
			log_debug("%s: debug file %s: CRC mismatch, ignored", d->path, path);
			goto fail;
		}
		crc_checked = true;
	}
	dbg = calloc(1, sizeof(*dbg));
	if (!dbg || !(dbg->path = strdup(path)))
		goto fail;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto fail;
	dbg->readable = true;
	memset(dh, 0, sizeof(*dh));
	if (elf_symtab__read(dbg, elf, st.st_size, dh) || !dbg->readable) {
		log_debug("%s: debug file %s ignored: %s", d->path, path, dso__error(dbg));
		goto fail;
	}
	if (d->build_id_len && dbg->build_id_len && !same_build_id(d, dbg)) {
		log_debug("%s: debug file %s has another build-id, ignored", d->path, path);
		goto fail;
	}
	if (check_crc && !crc_checked && !same_build_id(d, dbg)) {
		safe_open__refused(SAFE_OPEN_CRC_SKIPPED, path,
				   "a .gnu_debuglink candidate too big to check its CRC, without "
				   "the binary's build-id");
		goto fail;
	}
	fid_from_stat(&dbg->fid, &st);
	dbg->have_fid = true;
	elf_end(elf);
	close(fd);
	return dbg;
fail:
	elf_end(elf);
	dso__free(dbg);
	close(fd);
	return NULL;
}

/*
 * A binary opened through /proc/PID/root or /proc/PID/map_files lives in that process's mount
 * namespace: its debug files are looked for there too. Writes "/proc/PID/root" (or "") to prefix
 * and returns the binary's path as that process sees it, whose directory the debuglink search
 * uses; NULL when there is none to search (a binary read through an fd).
 */
static const char *debug_search_base(const char *open_path, const char *display_path, char *prefix,
				     size_t len)
{
	const char *p = open_path + strlen("/proc/");
	size_t digits = 0;

	prefix[0] = '\0';
	if (strncmp(open_path, "/proc/", strlen("/proc/")))
		return open_path;
	/* An fd (a binary the watcher held): its directory is not /proc/self/fd, and which
	 * process's root it lives in is not known here. Only the debug root is searched. */
	if (!strncmp(open_path, "/proc/self/", strlen("/proc/self/")))
		return NULL;
	while (p[digits] >= '0' && p[digits] <= '9')
		digits++;
	if (!digits || (size_t)snprintf(prefix, len, "/proc/%.*s/root", (int)digits, p) >= len) {
		prefix[0] = '\0';
		return open_path;
	}
	p += digits;
	if (!strncmp(p, "/root/", strlen("/root/")))
		return p + strlen("/root");
	if (!strncmp(p, "/map_files/", strlen("/map_files/")) && display_path &&
	    display_path[0] == '/')
		return display_path;
	prefix[0] = '\0';
	return open_path;
}

/* Tries one candidate path, built from fmt; false when it does not fit or is not the file. */
static struct dso *__attribute__((format(printf, 6, 7)))
try_debug_file(const struct dso *d, bool check_crc, uint32_t crc, struct debug_hints *dh, char *buf,
	       const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		return NULL;
	return load_debug_file(d, buf, check_crc, crc, dh);
}

/*
 * Finds the separate debug file of a stripped binary, the way GDB and elfutils do: by build-id
 * under the debug root, then by .gnu_debuglink beside the binary, in its .debug/ directory and
 * under the debug root. Returns the scratch dso of the first that fits, or NULL.
 */
static struct dso *find_debug_file(const struct dso *d, const char *open_path,
				   const char *display_path, const char *root,
				   const struct debug_hints *h, struct debug_hints *dh)
{
	char prefix[64], dir[PATH_MAX], buf[PATH_MAX];
	const char *base, *slash;
	struct dso *dbg = NULL;

	base = debug_search_base(open_path, display_path, prefix, sizeof(prefix));
	if (root[0] && d->build_id_len > 1)
		dbg = try_debug_file(d, false, 0, dh, buf, "%s%s/.build-id/%.2s/%s.debug", prefix,
				     root, d->build_id_hex, d->build_id_hex + 2);
	if (dbg || !h->link[0] || !base)
		return dbg;
	slash = strrchr(base, '/');
	if (!slash || (size_t)(slash - base) >= sizeof(dir))
		return NULL;
	memcpy(dir, base, slash - base);
	dir[slash - base] = '\0';
	dbg = try_debug_file(d, true, h->link_crc, dh, buf, "%s%s/%s", prefix, dir, h->link);
	if (!dbg)
		dbg = try_debug_file(d, true, h->link_crc, dh, buf, "%s%s/.debug/%s", prefix, dir,
				     h->link);
	if (!dbg && root[0])
		dbg = try_debug_file(d, true, h->link_crc, dh, buf, "%s%s%s/%s", prefix, root, dir,
				     h->link);
	return dbg;
}

/*
 * Completes what d lacks (d->lacks_symtab, d->lacks_dwarf) from a debug file read into dbg: the
 * function symbols of its .symtab, and the path of its DWARF, opened on the first line lookup.
 * Addresses need no translation: a debug file keeps the binary's section addresses. dbg is
 * consumed.
 */
static void adopt_debug_file(struct dso *d, struct dso *dbg, const struct debug_hints *dh)
{
	if (d->lacks_symtab && dh->has_symtab && dbg->nsyms) {
		struct dso_sym *syms = d->syms;
		struct strpack *names = d->names;
		char *name_buf = d->name_buf;
		size_t names_bytes = d->names_bytes, names_max = d->names_max;

		d->syms = dbg->syms;
		d->names = dbg->names;
		d->name_buf = dbg->name_buf;
		d->names_bytes = dbg->names_bytes;
		d->names_max = dbg->names_max;
		d->nsyms = dbg->nsyms;
		dbg->syms = syms;
		dbg->names = names;
		dbg->name_buf = name_buf;
		dbg->names_bytes = names_bytes;
		dbg->names_max = names_max;
		d->lacks_symtab = false;
	}
	if (d->lacks_dwarf && dh->has_debug_info) {
		/* A handle opened (or tried) on the binary alone had no DWARF to give. */
		dso__dwarf_close(d);
		free(d->debug_path);
		d->debug_path = dbg->path;
		d->debug_fid = dbg->fid;
		dbg->path = NULL;
		d->lacks_dwarf = false;
	}
	dso__free(dbg);
}

void debug_file__use(struct dso *d, const char *open_path, const char *display_path,
		     const char *root, const struct debug_hints *h)
{
	struct debug_hints dh;
	struct dso *dbg;

	d->lacks_symtab = !h->has_symtab;
	d->lacks_dwarf = !h->has_debug_info;
	if (!d->readable || (h->has_symtab && h->has_debug_info) ||
	    (!d->build_id_len && !h->link[0]))
		return;
	dbg = find_debug_file(d, open_path, display_path, root, h, &dh);
	if (!dbg)
		return;
	log_debug("%s: separate debug file %s", d->path, dbg->path);
	adopt_debug_file(d, dbg, &dh);
}

/* A failed fetch is asked about again this often; the fetcher says when it really retries. */
#define FETCH_RECHECK_NS (60 * 1000000000ULL)

/*
 * Asks the fetcher about d's debug file when there may be news: a fresh dso, a fetch that ended
 * since the last ask (the generation moved), or a failure old enough to be retried. A file that
 * arrived is adopted as a local debug file would be, and only when its build-id is d's: then the
 * answer is true, and what d's lines are read from has changed.
 */
bool debug_file__poll_fetch(struct dso *d, struct debuginfod_fetch *f)
{
	char path[PATH_MAX];
	struct debug_hints dh;
	struct dso *dbg;
	uint64_t gen;

	if (!f || d->fetch == FETCH_NONE)
		return false;
	/* Read before asking: a fetch that ends meanwhile moves it again, and is not missed. */
	gen = debuginfod_fetch__generation(f);
	if (d->fetch == FETCH_PENDING && gen == d->fetch_gen)
		return false;
	if (d->fetch == FETCH_FAILED && clock__ns(CLOCK_MONOTONIC) < d->fetch_retry_ns)
		return false;
	switch (debuginfod_fetch__get(f, d->build_id, d->build_id_len, d->path, path,
				      sizeof(path))) {
	case DEBUGINFOD_PENDING:
	case DEBUGINFOD_BUSY: /* queued later: asked again when a fetch ends */
		d->fetch = FETCH_PENDING;
		d->fetch_gen = gen;
		return false;
	case DEBUGINFOD_FAILED:
		d->fetch = FETCH_FAILED;
		d->fetch_retry_ns = clock__ns(CLOCK_MONOTONIC) + FETCH_RECHECK_NS;
		return false;
	case DEBUGINFOD_READY:
		break;
	}
	dbg = load_debug_file(d, path, false, 0, &dh);
	/* load_debug_file() refuses another build-id; a file without one proves nothing. */
	if (!dbg || !dbg->build_id_len) {
		log_debug("%s: debuginfod's file %s is not its debug file, ignored", d->path, path);
		dso__free(dbg);
		debuginfod_fetch__reject(f, d->build_id, d->build_id_len);
		d->fetch = FETCH_FAILED;
		d->fetch_retry_ns = clock__ns(CLOCK_MONOTONIC) + FETCH_RECHECK_NS;
		return false;
	}
	log_debug("%s: debug file %s from debuginfod", d->path, path);
	adopt_debug_file(d, dbg, &dh);
	d->fetch = FETCH_NONE;
	return true;
}

// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbols/dso.h"
#include "symbols/ksyms.h"
#include "base/clock.h"
#include "base/log.h"
#include "symbols/perfmap.h"
#include "base/safe_open.h"
#include "symbols/go_labels_ref.h"
#include "symbols/thread_ctx_ref.h"
#include "process/proc.h"

/*
 * An address that misses a process's maps usually means the process mapped new code (dlopen,
 * exec) after our snapshot. Re-reading /proc/PID/maps is not free, so each PID is refreshed at
 * most once per REFRESH_INTERVAL misses-worth of lookups; this small direct-mapped table
 * remembers the last refresh per PID (a collision only costs an extra refresh).
 */
#define REFRESH_SLOTS 256
#define REFRESH_MIN_LOOKUPS 4096

struct refresh_slot {
	pid_t pid;
	uint64_t at_lookup;
};

/*
 * Perf maps of the processes that run JIT code. A JIT appends to its map as it compiles, so an
 * address that misses the map re-reads it, at most once per PERFMAP_MIN_LOOKUPS lookups. A map
 * that can no longer be read (the process exited) keeps its last contents. At most PERFMAP_SLOTS
 * maps and PERFMAP_BUDGET bytes are kept; the least recently used map goes first.
 */
#define PERFMAP_SLOTS 16
#define PERFMAP_MIN_LOOKUPS 1024
#define PERFMAP_BUDGET (256u << 20)

struct perfmap_slot {
	pid_t pid;		     /* 0 = free */
	struct perfmap *map;	     /* NULL while the process has no readable map */
	uint64_t loaded_at, used_at; /* in lookups */
	/* The file as it was read: a miss re-reads it only when it changed (a JIT appended), so
	 * that a map that never names the code is not read again and again. */
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/*
 * Binaries the process watcher opened that are not read yet, by identity (direct-mapped: a
 * collision reads the older one then, as if a sample had needed it). Bounded: HELD_SLOTS fds.
 */
#define HELD_SLOTS 256

struct held_binary {
	uint64_t dev, inode;
	int fd;	    /* -1: free */
	char *path; /* as the process's maps name it */
};

struct symbolizer {
	struct proc_table *procs;
	struct held_binary held[HELD_SLOTS];
	struct dso_cache *dsos;
	struct ksyms *ksyms;
	struct ksym ksym; /* the last kernel frame's symbol: its name is that frame's function */
	struct go_labels_cache *go;
	struct symbolizer_stats stats;
	struct refresh_slot refreshed[REFRESH_SLOTS];
	struct perfmap_slot perfmaps[PERFMAP_SLOTS];
	char proc_root[PATH_MAX];
	size_t max_procs, max_dsos, max_dwarf_bytes; /* the caps, for the stats */
	uint64_t lookups;
	char path[PATH_MAX];
	/* The frame's file names when they had to be joined to their compilation directory. */
	char files[FRAME_MAX_LINES][PATH_MAX];
};

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	for (size_t i = 0; i < HELD_SLOTS; i++)
		s->held[i].fd = -1;
	s->procs = proc_table__new(opts->proc_root, opts->max_procs);
	s->go = go_labels_cache__new();
	if (!s->procs || !s->go)
		goto fail;
	snprintf(s->proc_root, sizeof(s->proc_root), "%s", opts->proc_root);
	s->max_procs = opts->max_procs;
	s->max_dsos = opts->max_dsos;
	s->max_dwarf_bytes =
		opts->max_dwarf_bytes ? opts->max_dwarf_bytes : DSO_DEFAULT_DWARF_BYTES;
	s->dsos = dso_cache__new(opts->max_dsos);
	if (s->dsos && opts->max_dwarf_bytes)
		dso_cache__set_dwarf_budget(s->dsos, opts->max_dwarf_bytes, opts->max_dwarf_name);
	if (s->dsos && opts->max_symbol_bytes)
		dso_cache__set_symbol_budget(s->dsos, opts->max_symbol_bytes);
	if (s->dsos)
		dso_cache__set_fetcher(s->dsos, opts->fetch);
	if (!s->dsos)
		goto fail;
	s->ksyms = ksyms__load(opts->kallsyms_path);
	if (!s->ksyms) {
		log_warn("kernel symbols unavailable from %s: %s; kernel frames will show as "
			 "[unknown]%s",
			 opts->kallsyms_path, strerror(errno),
			 errno == EPERM ? " (addresses are hidden: run as root or with CAP_SYSLOG)"
					: "");
	}
	s->stats.kernel_symbols = s->ksyms != NULL;
	return s;
fail:
	err = errno;
	symbolizer__delete(s);
	errno = err;
	return NULL;
}

static void release_held(struct held_binary *h)
{
	if (h->fd >= 0)
		close(h->fd);
	free(h->path);
	*h = (struct held_binary){.fd = -1};
}

void symbolizer__delete(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < PERFMAP_SLOTS; i++)
		perfmap__delete(s->perfmaps[i].map);
	for (size_t i = 0; i < HELD_SLOTS; i++)
		release_held(&s->held[i]);
	ksyms__delete(s->ksyms);
	go_labels_cache__delete(s->go);
	dso_cache__delete(s->dsos);
	proc_table__delete(s->procs);
	free(s);
}

size_t symbolizer__retire_exited(struct symbolizer *s)
{
	return proc_table__retire_exited(s->procs);
}

size_t symbolizer__release_idle_dwarf(struct symbolizer *s)
{
	return dso_cache__release_idle(s->dsos);
}

int symbolizer__track(struct symbolizer *s, pid_t pid)
{
	return proc_table__get(s->procs, pid) ? 0 : -errno;
}

/* The binary behind one file mapping, read (or found in the cache) through the process. */
/* Read a held binary into the dso cache, through its fd, and let the fd go. */
static struct dso *read_held(struct symbolizer *s, struct held_binary *h)
{
	struct dso *d;

	snprintf(s->path, sizeof(s->path), "/proc/self/fd/%d", h->fd);
	d = dso_cache__get(s->dsos, h->dev, h->inode, s->path, h->path);
	release_held(h);
	return d;
}

static struct held_binary *held_slot(struct symbolizer *s, uint64_t dev, uint64_t inode)
{
	uint64_t h = (inode ^ (dev << 29)) * 0x9e3779b97f4a7c15ULL;

	return &s->held[(h >> 40) % HELD_SLOTS];
}

/*
 * The binary behind one file mapping: through the fd the watcher opened when the symbolizer holds
 * one (it is the very file mapped, and works after the process is gone), else through the
 * process's /proc entry. Once read, the dso cache keeps it by identity and the fd can go.
 */
static struct dso *mapping_dso(struct symbolizer *s, pid_t pid, const struct mapping *m)
{
	uint64_t dev = makedev(m->dev_major, m->dev_minor);
	struct held_binary *h = held_slot(s, dev, m->inode);
	struct dso *d;

	if (h->fd >= 0 && h->dev == dev && h->inode == m->inode) {
		d = read_held(s, h);
		/*
		 * The fd is closed now, and its /proc/self/fd path names whatever takes its number
		 * next: later opens (the DWARF, on the first line lookup) go through the process.
		 * Never through m->path, the path inside the process's mount namespace.
		 */
		if (d && proc_table__mapping_path(s->procs, pid, m, s->path, sizeof(s->path)) == 0)
			d = dso_cache__get(s->dsos, dev, m->inode, s->path, m->path);
		return d;
	}
	if (proc_table__mapping_path(s->procs, pid, m, s->path, sizeof(s->path)) != 0)
		return NULL;
	return dso_cache__get(s->dsos, dev, m->inode, s->path, m->path);
}

void symbolizer__adopt(struct symbolizer *s, struct proc_watch_item *it)
{
	if (it->forget) {
		proc_table__forget(s->procs, it->pid);
		return;
	}
	/*
	 * The binaries are held, not read: most libraries a process maps never get a sample, and
	 * reading their symbol tables would cost memory and time for nothing. A binary already
	 * read needs no fd (the dso cache finds it by identity). A slot taken by another binary is
	 * freed by reading that one now: its process may be gone already.
	 */
	for (size_t i = 0; i < it->nr_binaries; i++) {
		struct proc_watch_binary *b = &it->binaries[i];
		struct held_binary *h;

		if (dso_cache__has(s->dsos, b->dev, b->inode))
			continue;
		h = held_slot(s, b->dev, b->inode);
		if (h->fd >= 0 && (h->dev != b->dev || h->inode != b->inode))
			read_held(s, h);
		release_held(h);
		*h = (struct held_binary){
			.dev = b->dev, .inode = b->inode, .fd = b->fd, .path = b->path};
		b->fd = -1;
		b->path = NULL;
	}
	proc_table__adopt(s->procs, &it->proc);
}

static void set_unknown(struct frame *out, const char *where, uint64_t offset)
{
	out->function = NULL;
	snprintf(out->unknown, sizeof(out->unknown), "[unknown] %s+0x%" PRIx64, where, offset);
}

static const char *special_name(const struct mapping *m)
{
	switch (m->kind) {
	case MAPPING_HEAP:
		return "[heap]";
	case MAPPING_STACK:
		return "[stack]";
	case MAPPING_VDSO:
		return "[vdso]";
	case MAPPING_VSYSCALL:
		return "[vsyscall]";
	case MAPPING_ANON:
		return "[anon]";
	default:
		return m->path ? m->path : "[anon]";
	}
}

/*
 * The inline chain of a symbolized native frame, from DWARF. The symbol table names the real
 * function, as it does without DWARF, so that a frame reads the same with and without debug
 * info; DWARF names only the inlined levels. Anything missing leaves the symbol alone.
 */
static void add_lines(struct symbolizer *s, struct dso *d, struct frame *out)
{
	struct dso_line lines[FRAME_MAX_LINES];
	size_t n = dso__find_lines(d, out->address, lines, FRAME_MAX_LINES);

	for (size_t i = 0; i < n; i++) {
		const char *fn = i + 1 == n ? out->function : lines[i].function;
		const char *file = lines[i].file;

		/* A relative name (DWARF 5 leaves the compilation directory out) is made whole,
		 * as addr2line shows it: a bare "src/x.c" names nothing outside the build. */
		if (file && file[0] != '/' && lines[i].comp_dir &&
		    snprintf(s->files[i], sizeof(s->files[i]), "%s/%s", lines[i].comp_dir, file) <
			    (int)sizeof(s->files[i]))
			file = s->files[i];
		out->lines[i] = (struct frame_line){
			.function = fn ? fn : out->function, .file = file, .line = lines[i].line};
	}
	out->nr_lines = n;
}

/* The process's mapping for addr, re-reading its maps once in a while when addr misses them. */
static const struct mapping *find_mapping(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	struct refresh_slot *slot = &s->refreshed[(uint32_t)pid % REFRESH_SLOTS];
	struct proc *p = proc_table__get(s->procs, pid);
	const struct mapping *m;

	if (!p)
		return NULL;
	m = maps__find(&p->maps, addr);
	if (m || p->exited)
		return m;
	if (slot->pid == pid && s->lookups - slot->at_lookup < REFRESH_MIN_LOOKUPS)
		return NULL;
	slot->pid = pid;
	slot->at_lookup = s->lookups;
	if (proc_table__refresh(s->procs, pid) != 0)
		return NULL;
	p = proc_table__get(s->procs, pid);
	return p ? maps__find(&p->maps, addr) : NULL;
}

/* Replace the slot's map by a fresh read; a failed read keeps what was there. */
static void perfmap_reload(struct symbolizer *s, struct perfmap_slot *slot)
{
	struct perfmap *m;
	size_t total = 0;

	struct stat st;

	slot->loaded_at = s->lookups;
	if (perfmap__path(s->proc_root, slot->pid, s->path, sizeof(s->path)) != 0 ||
	    safe_open__stat(s->path, &st))
		return;
	if (slot->map && st.st_ino == slot->ino && st.st_size == slot->size &&
	    st.st_mtim.tv_sec == slot->mtime.tv_sec && st.st_mtim.tv_nsec == slot->mtime.tv_nsec)
		return;
	m = perfmap__load(s->path, NULL);
	if (!m)
		return;
	perfmap__delete(slot->map);
	slot->map = m;
	slot->ino = st.st_ino;
	slot->size = st.st_size;
	slot->mtime = st.st_mtim;
	for (size_t i = 0; i < PERFMAP_SLOTS; i++)
		total += perfmap__memory(s->perfmaps[i].map);
	/* Over budget: drop the least recently used other maps until under it. */
	while (total > PERFMAP_BUDGET) {
		struct perfmap_slot *lru = NULL;

		for (size_t i = 0; i < PERFMAP_SLOTS; i++) {
			struct perfmap_slot *o = &s->perfmaps[i];

			if (o != slot && o->map && (!lru || o->used_at < lru->used_at))
				lru = o;
		}
		if (!lru)
			break;
		total -= perfmap__memory(lru->map);
		perfmap__delete(lru->map);
		*lru = (struct perfmap_slot){0};
	}
}

static bool perfmap_find(struct symbolizer *s, pid_t pid, uint64_t addr, struct perfmap_sym *sym)
{
	struct perfmap_slot *slot = NULL, *victim = &s->perfmaps[0];

	for (size_t i = 0; i < PERFMAP_SLOTS && !slot; i++) {
		if (s->perfmaps[i].pid == pid)
			slot = &s->perfmaps[i];
		else if (!s->perfmaps[i].pid ||
			 (victim->pid && s->perfmaps[i].used_at < victim->used_at))
			victim = &s->perfmaps[i];
	}
	if (!slot) {
		slot = victim;
		perfmap__delete(slot->map);
		*slot = (struct perfmap_slot){.pid = pid};
		perfmap_reload(s, slot);
	}
	slot->used_at = s->lookups;
	if (perfmap__find(slot->map, addr, sym))
		return true;
	if (s->lookups - slot->loaded_at < PERFMAP_MIN_LOOKUPS)
		return false;
	perfmap_reload(s, slot);
	return perfmap__find(slot->map, addr, sym);
}

/* Anonymous executable memory is where JITs put their code. */
static bool is_jit_candidate(const struct mapping *m)
{
	return m->executable &&
	       (m->kind == MAPPING_ANON ||
		(m->kind == MAPPING_SPECIAL && m->path && !strncmp(m->path, "[anon:", 6)));
}

void symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return_address,
		      struct frame *out)
{
	struct perfmap_sym jit;
	uint64_t lookup = is_return_address && addr ? addr - 1 : addr;
	const struct mapping *m;
	struct dso_symbol sym;
	struct dso *d;
	uint64_t file_offset;

	memset(out, 0, sizeof(*out));
	out->kind = FRAME_NATIVE;
	out->address = lookup;
	s->lookups++;
	s->stats.frames_user++;

	m = find_mapping(s, pid, lookup);
	if (!m) {
		if (!proc_table__get(s->procs, pid))
			s->stats.frames_proc_gone++;
		s->stats.frames_user_unresolved++;
		set_unknown(out, "[unmapped]", lookup);
		return;
	}
	/*
	 * Mappings are described in the address space of the file, as locations are, never in the
	 * process's: an address then always lies within its mapping (OTLP asks that), pprof's
	 * address - start + offset is a true file offset, and a library mapped by many processes
	 * is one mapping. Until the ELF says where the range loads, file offsets stand in.
	 */
	file_offset = lookup - m->start + m->pgoff;
	out->has_mapping = true;
	out->mapping.start = m->pgoff;
	out->mapping.limit = m->pgoff + (m->end - m->start);
	out->mapping.offset = m->pgoff;
	out->mapping.path = m->kind == MAPPING_FILE ? m->path : special_name(m);
	out->mapping.build_id_hex = "";
	out->mapping.htlhash_hex = "";
	out->address = file_offset;

	/* JIT code has no file: the location keeps its runtime address, inside the anon range. */
	if (is_jit_candidate(m) && perfmap_find(s, pid, lookup, &jit)) {
		out->kind = jit.kind;
		out->function = jit.name;
		out->address = lookup;
		out->mapping.start = m->start;
		out->mapping.limit = m->end;
		out->mapping.offset = 0;
		return;
	}
	if (m->kind != MAPPING_FILE || !m->path) {
		s->stats.frames_user_unresolved++;
		set_unknown(out, special_name(m), file_offset);
		return;
	}
	d = mapping_dso(s, pid, m);
	if (!d) {
		s->stats.frames_user_unresolved++;
		set_unknown(out, m->path, file_offset);
		return;
	}
	out->mapping.build_id_hex = dso__build_id_hex(d);
	out->mapping.htlhash_hex = dso__htlhash_hex(d);
	out->debug_pending = dso__debug_pending(d);
	if (dso__readable(d) && dso__file_addr(d, m->start, m->pgoff, lookup, &out->address)) {
		uint64_t start;

		if (dso__file_addr(d, m->start, m->pgoff, m->start, &start)) {
			out->mapping.start = start;
			out->mapping.limit = start + (m->end - m->start);
		}
		if (dso__find_symbol(d, out->address, &sym)) {
			out->function = sym.name;
			add_lines(s, d, out);
			return;
		}
		/* Unresolved: the label names the file offset, the location keeps the address. */
	}
	s->stats.frames_user_unresolved++;
	set_unknown(out, m->path, file_offset);
}

void symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return_address,
			struct frame *out)
{
	uint64_t lookup = is_return_address && addr ? addr - 1 : addr;

	memset(out, 0, sizeof(*out));
	out->kind = FRAME_KERNEL;
	out->address = lookup;
	s->stats.frames_kernel++;
	if (s->ksyms && ksyms__find(s->ksyms, lookup, &s->ksym)) {
		out->function = s->ksym.name;
		return;
	}
	s->stats.frames_kernel_unresolved++;
	set_unknown(out, "[kernel]", lookup);
}

int symbolizer__process_info(struct symbolizer *s, pid_t pid, struct process_info *out)
{
	struct proc *p;

	/* Asked once per process and window: where an SDK's process context is kept current. */
	if (proc_table__get(s->procs, pid))
		proc_table__check_context(s->procs, pid, clock__ns(CLOCK_MONOTONIC));
	p = proc_table__get(s->procs, pid);
	memset(out, 0, sizeof(*out));
	out->container_id = "";
	out->comm = "";
	if (!p)
		return -errno;
	out->exe_path = p->exe_path;
	out->cmdline = p->cmdline;
	out->cmdline_len = p->cmdline_len;
	out->service_name = p->service_name;
	out->container_id = p->container_id;
	out->systemd_unit = p->systemd_unit;
	out->comm = p->comm;
	out->otel_ctx = p->otel_ctx;
	return 0;
}

int symbolizer__thread_ctx_ref(struct symbolizer *s, pid_t pid, struct hp_tls_ref *out, char *why,
			       size_t len)
{
	return thread_ctx_ref__resolve(s->procs, pid, out, why, len);
}

int symbolizer__go_labels_ref(struct symbolizer *s, pid_t pid, struct hp_tls_ref *out, char *why,
			      size_t len)
{
	return go_labels_ref__resolve(s->go, s->procs, pid, out, why, len);
}

const struct process_context *symbolizer__process_context(struct symbolizer *s, pid_t pid)
{
	const struct proc *p = proc_table__get(s->procs, pid);

	return p ? p->otel_ctx : NULL;
}

static bool maps_binary(const struct mapping *m, uint64_t dev, uint64_t inode)
{
	return m->kind == MAPPING_FILE && m->path && m->inode == inode &&
	       makedev(m->dev_major, m->dev_minor) == dev;
}

int symbolizer__binaries(struct symbolizer *s, pid_t pid, struct process_binary *out, size_t max)
{
	const struct proc *p;
	size_t n = 0;
	int err;

	/* A snapshot taken at exec may predate the libraries the loader maps after it. */
	err = proc_table__refresh(s->procs, pid);
	if (err)
		return err;
	p = proc_table__get(s->procs, pid);
	if (!p)
		return -errno;
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct mapping *m = &p->maps.v[i];
		uint64_t dev = makedev(m->dev_major, m->dev_minor);
		bool seen = false;

		if (m->kind != MAPPING_FILE || !m->executable || !m->path)
			continue;
		/* Each binary once, though it may map code more than once (BOLT, split text). */
		for (size_t k = i; k-- > 0 && !seen;)
			seen = maps_binary(&p->maps.v[k], dev, m->inode) && p->maps.v[k].executable;
		if (seen)
			continue;
		if (n++ >= max)
			continue;
		out[n - 1] = (struct process_binary){
			.dev = dev,
			.inode = m->inode,
			.path = m->path,
			.is_exe = p->exe_path && !strcmp(p->exe_path, m->path),
		};
	}
	return (int)n;
}

int symbolizer__find_exports(struct symbolizer *s, pid_t pid, uint64_t dev, uint64_t inode,
			     const char *const names[], size_t n, struct dso_symbol *out)
{
	const struct proc *p = proc_table__get(s->procs, pid);
	struct dso *d;

	for (size_t i = 0; i < n; i++)
		out[i] = (struct dso_symbol){0};
	if (!p)
		return -errno;
	for (size_t i = 0; i < p->maps.n; i++) {
		if (!maps_binary(&p->maps.v[i], dev, inode))
			continue;
		d = mapping_dso(s, pid, &p->maps.v[i]);
		if (!d)
			return -ENOENT;
		if (!dso__readable(d))
			return -ENOEXEC;
		return dso__find_symbols_by_name(d, names, n, out);
	}
	return -ENOENT;
}

int symbolizer__load_bias(struct symbolizer *s, pid_t pid, uint64_t dev, uint64_t inode,
			  uint64_t *bias)
{
	const struct proc *p = proc_table__get(s->procs, pid);
	struct dso *d = NULL;

	if (!p)
		return -errno;
	/* mapping_dso() reads no maps: p stays valid through the loop. */
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct mapping *m = &p->maps.v[i];

		if (!maps_binary(m, dev, inode))
			continue;
		if (!d && !(d = mapping_dso(s, pid, m)))
			return -ENOENT;
		if (dso__load_bias(d, m->start, m->pgoff, bias))
			return 0;
	}
	return -ENOENT;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	*out = s->stats;
	out->procs_cached = proc_table__size(s->procs);
	out->procs_max = s->max_procs;
	out->procs_bytes = proc_table__memory(s->procs);
	out->dsos_cached = dso_cache__size(s->dsos);
	out->dsos_max = s->max_dsos;
	out->dsos_bytes = dso_cache__memory(s->dsos);
	out->dwarf_max = s->max_dwarf_bytes;
	for (size_t i = 0; i < HELD_SLOTS; i++)
		out->binaries_held += s->held[i].fd >= 0;
	for (size_t i = 0; i < PERFMAP_SLOTS; i++) {
		out->perfmaps += s->perfmaps[i].map != NULL;
		out->perfmap_bytes += perfmap__memory(s->perfmaps[i].map);
	}
	out->ksyms = ksyms__size(s->ksyms);
	out->ksyms_bytes = ksyms__bytes(s->ksyms);
	dso_cache__dwarf_stats(s->dsos, &out->dwarf);
	out->binaries_denied = dso_cache__denied(s->dsos);
	safe_open__stats(out->files_refused);
}

// SPDX-License-Identifier: BSD-2-Clause
#include "unwind/unwind_loader.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/bpf_sync.h"
#include "base/clock.h"
#include "hostprof_abi.h"
#include "base/log.h"
#include "base/safe_open.h"
#include "process/proc.h"
#include "process/proc_mem.h"
#include "unwind/code_template.h"
#include "unwind/row_index.h"
#include "unwind/unwind_cache.h"
#include "unwind/unwind_table.h"

/* The loader reads a process's maps only while it loads it: a few snapshots are enough. */
#define LOADER_PROC_SNAPSHOTS 32
/* PT_LOAD segments remembered per binary: executables and libraries have 2 to 4. */
#define MAX_LOADS 8
/* Rows are written to the map this many at a time. */
#define WRITE_BATCH 4096

struct load_segment {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	bool exec; /* PF_X */
};

struct binary {
	uint64_t dev;
	uint64_t inode;
	uint32_t row_base;
	uint32_t row_count; /* 0: no table loaded (frame pointers only) */
	uint32_t slots;	    /* of the rows map: the rows and their index (unwind/row_index.h) */
	uint32_t refs;	    /* processes whose entry names this binary */
	uint32_t wanted;    /* slots of a table that did not fit (0: it fit, or there is none) */
	uint64_t last_used; /* loader clock */
	struct load_segment loads[MAX_LOADS];
	uint32_t nr_loads;
	/* Not a file: the rows of code copied at run time from this template (dev, inode 0). */
	const struct code_template *tmpl;
};

/* What the loader wrote for a process: the binaries it holds references on, and its ranges. */
struct loaded_proc {
	pid_t pid;
	uint32_t nr;
	struct binary **bins;	/* nr entries, NULL where the mapping has no binary entry */
	uint64_t (*ranges)[2];	/* nr [start, end) pairs */
	uint64_t next_check_ns; /* unwind_loader__stale() says no before this */
	uint64_t backoff_ns;	/* the wait after the next re-read that finds nothing new */
};

/* The rows map as written: mapped into memory when the kernel lets us (BPF_F_MMAPABLE). */
struct rows_writer {
	int fd;
	bool mappable; /* false: one batch update per WRITE_BATCH rows */
	size_t map_len;
};

struct unwind_loader {
	struct unwind_loader_opts opts;
	struct rows_writer rows;
	struct unwind_sink sink;
	struct proc_table *procs_snap;
	struct binary **bins;
	size_t nr_bins;
	struct loaded_proc *procs;
	size_t nr_procs;
	uint64_t clock;
	uint64_t rows_used;
	struct unwind_loader_stats stats;
	struct hp_unwind_proc *entry; /* scratch: one procs map value (10 KiB) */
	/* Code templates are recognised by bytes of this architecture, read by read_memory. */
	enum unwind_arch arch;
	int (*read_memory)(pid_t pid, uint64_t addr, void *buf, size_t len);
	/* Processes whose load failed (no room, unreadable): not retried before their time. */
	struct {
		pid_t pid;
		uint64_t until_ns;
	} failed[UNWIND_FAILED_SLOTS];
	unsigned int next_failed;
	bool cache_store_logged; /* a failed store is logged once: the next ones would repeat it */
};

/*
 * A mapped map takes a table with one memcpy(): the walker only reads these rows once the procs
 * entry that names them is written, by a syscall after this. Kernels or maps without the mapping
 * get batches of updates.
 */
static int bpf_write_rows(void *ctx, uint32_t base, const struct hp_unwind_row *rows, uint32_t n)
{
	const struct rows_writer *o = &((const struct unwind_loader *)ctx)->rows;
	__u32 keys[WRITE_BATCH];

	if (o->mappable) {
		/*
		 * Only the pages being written, and only while they are: the kernel maps every
		 * page of a mapped BPF array at once, and the whole rows map (16 MiB by default)
		 * would stay in our RSS, counted a second time beside the map's own memory.
		 */
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		uint64_t from = (uint64_t)base * sizeof(*rows),
			 to = from + (uint64_t)n * sizeof(*rows);
		uint64_t off = from / page * page, len = (to + page - 1) / page * page - off;
		void *mem;

		if (to > o->map_len)
			return -ERANGE;
		if (!n)
			return 0;
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, (off_t)off);
		if (mem == MAP_FAILED)
			return -errno;
		memcpy((char *)mem + (from - off), rows, (size_t)n * sizeof(*rows));
		munmap(mem, len);
		return 0;
	}

	for (uint32_t done = 0; done < n;) {
		__u32 count = n - done < WRITE_BATCH ? n - done : WRITE_BATCH;

		const __u32 want = count;

		for (__u32 i = 0; i < want; i++)
			keys[i] = base + done + i;
		if (bpf_map_update_batch(o->fd, keys, rows + done, &count, NULL)) {
			/* Kernels before 5.6 have no batch operations, and a failed batch says how
			 * many it wrote (perhaps none): the rest one at a time. */
			for (__u32 i = count; i < want; i++)
				if (bpf_map_update_elem(o->fd, &keys[i], &rows[done + i], BPF_ANY))
					return -errno;
		}
		done += want;
	}
	return 0;
}

static int bpf_write_proc(void *ctx, pid_t pid, const struct hp_unwind_proc *entry)
{
	const struct unwind_loader_opts *o = &((const struct unwind_loader *)ctx)->opts;
	__u32 key = pid;

	return bpf_map_update_elem(o->procs_fd, &key, entry, BPF_ANY) ? -errno : 0;
}

static void bpf_delete_proc(void *ctx, pid_t pid)
{
	const struct unwind_loader_opts *o = &((const struct unwind_loader *)ctx)->opts;
	__u32 key = pid;

	bpf_map_delete_elem(o->procs_fd, &key);
}

/* Can bpf_write_rows() map the rows map? Without it (no BPF_F_MMAPABLE), rows go by batches. */
static void map_rows(struct rows_writer *w, int fd, uint32_t max_rows)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *mem;

	w->fd = fd;
	w->map_len = (size_t)max_rows * sizeof(struct hp_unwind_row);
	mem = w->map_len ? mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (mem == MAP_FAILED) {
		log_debug("map 'unwind_rows' cannot be mapped (%s): tables are written by batches",
			  strerror(errno));
		return;
	}
	munmap(mem, page);
	w->mappable = true;
}

/* The architecture hostprof runs on: that of the processes it profiles. */
static enum unwind_arch host_arch(void)
{
#if defined(__x86_64__)
	return UNWIND_ARCH_X86_64;
#elif defined(__aarch64__)
	return UNWIND_ARCH_ARM64;
#else
	return UNWIND_ARCH_NONE;
#endif
}

struct unwind_loader *unwind_loader__new(const struct unwind_loader_opts *opts)
{
	struct unwind_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->opts = *opts;
	if (opts->sink) {
		l->sink = *opts->sink;
	} else {
		map_rows(&l->rows, opts->rows_fd, opts->max_rows);
		l->sink = (struct unwind_sink){l, bpf_write_rows, bpf_write_proc, bpf_delete_proc};
	}
	l->stats.rows_capacity = opts->max_rows;
	l->read_memory = opts->read_memory ? opts->read_memory : proc_mem__read;
	l->arch = opts->arch ? (enum unwind_arch)opts->arch : host_arch();
	l->bins = calloc(opts->max_binaries ? opts->max_binaries : 1, sizeof(*l->bins));
	l->procs = calloc(opts->max_procs ? opts->max_procs : 1, sizeof(*l->procs));
	l->entry = calloc(1, sizeof(*l->entry));
	l->procs_snap = proc_table__new(opts->proc_root, LOADER_PROC_SNAPSHOTS);
	if (l->procs_snap)
		proc_table__maps_only(l->procs_snap);
	if (!l->bins || !l->procs || !l->entry || !l->procs_snap) {
		unwind_loader__delete(l);
		errno = ENOMEM;
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		unwind_loader__delete(l);
		errno = EINVAL;
		return NULL;
	}
	return l;
}

static void release_proc(struct loaded_proc *p)
{
	for (uint32_t i = 0; i < p->nr; i++)
		if (p->bins[i] && p->bins[i]->refs)
			p->bins[i]->refs--;
	free(p->bins);
	free(p->ranges);
	memset(p, 0, sizeof(*p));
}

void unwind_loader__delete(struct unwind_loader *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nr_procs; i++)
		release_proc(&l->procs[i]);
	for (size_t i = 0; i < l->nr_bins; i++)
		free(l->bins[i]);
	free(l->bins);
	free(l->procs);
	free(l->entry);
	proc_table__delete(l->procs_snap);
	free(l);
}

static struct loaded_proc *find_proc(const struct unwind_loader *l, pid_t pid)
{
	for (size_t i = 0; i < l->nr_procs; i++)
		if (l->procs[i].pid == pid)
			return &l->procs[i];
	return NULL;
}

bool unwind_loader__has_process(const struct unwind_loader *l, pid_t pid)
{
	return find_proc(l, pid) != NULL;
}

/* Ranges come from /proc/PID/maps, sorted and disjoint: a binary search finds addr's. */
static bool proc_covers(const struct loaded_proc *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < p->ranges[mid][0])
			hi = mid;
		else if (addr >= p->ranges[mid][1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

bool unwind_loader__covers(const struct unwind_loader *l, pid_t pid, uint64_t addr)
{
	const struct loaded_proc *p = find_proc(l, pid);

	return p && proc_covers(p, addr);
}

/* Remember a failed load for UNWIND_RETRY_FAILED_NS (the oldest memory makes room); returns err. */
static int remember_failure(struct unwind_loader *l, pid_t pid, uint64_t now_ns, int err)
{
	unsigned int slot = l->next_failed++ % UNWIND_FAILED_SLOTS;

	l->failed[slot].pid = pid;
	l->failed[slot].until_ns = now_ns + UNWIND_RETRY_FAILED_NS;
	return err;
}

bool unwind_loader__due(const struct unwind_loader *l, pid_t pid, uint64_t now_ns)
{
	const struct loaded_proc *p = find_proc(l, pid);

	if (p)
		return now_ns >= p->next_check_ns;
	for (unsigned int i = 0; i < UNWIND_FAILED_SLOTS; i++)
		if (l->failed[i].pid == pid && now_ns < l->failed[i].until_ns)
			return false;
	return true;
}

static bool same_ranges(const struct loaded_proc *a, const struct loaded_proc *b)
{
	return a->nr == b->nr && !memcmp(a->ranges, b->ranges, a->nr * sizeof(*a->ranges));
}

/* The PT_LOAD segments of an ELF file, which turn a mapping's file offset into addresses. */
static int read_loads(const char *path, struct binary *b)
{
	size_t nphdr;
	int fd, err = 0;
	Elf *elf;

	fd = safe_open(path, SAFE_OPEN_MAX_ELF_BYTES, NULL);
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nphdr) != 0) {
		err = -ENOEXEC;
		goto out;
	}
	for (size_t i = 0; i < nphdr && b->nr_loads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		b->loads[b->nr_loads++] = (struct load_segment){.offset = ph.p_offset,
								.vaddr = ph.p_vaddr,
								.filesz = ph.p_filesz,
								.exec = ph.p_flags & PF_X};
	}
	err = b->nr_loads ? 0 : -ENOEXEC;
out:
	elf_end(elf);
	close(fd);
	return err;
}

/*
 * The bias of an executable mapping (runtime address - file address), from the executable PT_LOAD
 * segment whose file range it maps: the kernel maps a segment from its offset rounded down to a
 * page. Only executable segments count, since lld puts the read-only segment and the code in the
 * same file page (R at offset 0, R E at 0x630 with address 0x1630): matching the first would be a
 * page off.
 */
static bool mapping_bias(const struct binary *b, const struct mapping *m, uint64_t *bias)
{
	static uint64_t page_mask;

	if (!page_mask)
		page_mask = ~((uint64_t)sysconf(_SC_PAGESIZE) - 1);
	for (uint32_t i = 0; i < b->nr_loads; i++) {
		const struct load_segment *s = &b->loads[i];

		if (s->exec && m->pgoff >= (s->offset & page_mask) &&
		    m->pgoff < s->offset + s->filesz) {
			*bias = m->start - m->pgoff + s->offset - s->vaddr;
			return true;
		}
	}
	return false;
}

static int compare_base(const void *a, const void *b)
{
	const struct binary *x = *(struct binary *const *)a, *y = *(struct binary *const *)b;

	return x->row_base < y->row_base ? -1 : x->row_base > y->row_base;
}

/* First fit among the runs that loaded binaries leave free. UINT32_MAX when none is big enough. */
static uint32_t find_room(struct unwind_loader *l, uint32_t need)
{
	struct binary **sorted = calloc(l->nr_bins ? l->nr_bins : 1, sizeof(*sorted));
	uint64_t next = 0;
	uint32_t found = UINT32_MAX;
	size_t n = 0;

	if (!sorted)
		return UINT32_MAX;
	for (size_t i = 0; i < l->nr_bins; i++)
		if (l->bins[i]->row_count)
			sorted[n++] = l->bins[i];
	qsort(sorted, n, sizeof(*sorted), compare_base);
	for (size_t i = 0; i <= n && found == UINT32_MAX; i++) {
		uint64_t end = i < n ? sorted[i]->row_base : l->opts.max_rows;

		if (end >= next && end - next >= need)
			found = (uint32_t)next;
		if (i < n)
			next = (uint64_t)sorted[i]->row_base + sorted[i]->slots;
	}
	free(sorted);
	return found;
}

/* Drop the least recently used binary that no process maps. false when every one is in use. */
static bool evict_one(struct unwind_loader *l)
{
	size_t victim = SIZE_MAX;

	for (size_t i = 0; i < l->nr_bins; i++) {
		if (l->bins[i]->refs)
			continue;
		if (victim == SIZE_MAX || l->bins[i]->last_used < l->bins[victim]->last_used)
			victim = i;
	}
	if (victim == SIZE_MAX)
		return false;
	l->rows_used -= l->bins[victim]->slots;
	free(l->bins[victim]);
	l->bins[victim] = l->bins[--l->nr_bins];
	l->stats.evictions++;
	return true;
}

/*
 * The table of a binary: from the disk cache by build-id, else built (and then cached). The key
 * and the table come from one open file, so a binary replaced meanwhile cannot pair one's
 * build-id with the other's rows. A cache that fails costs a rebuild, never the table.
 */
static struct unwind_table *get_table(struct unwind_loader *l, const char *path, char *err,
				      size_t len)
{
	struct unwind_cache_key key;
	struct unwind_table *t = NULL;
	bool cacheable;
	int fd, ret, saved;
	Elf *elf;

	/* The process chose what is there: see base/safe_open.h. */
	fd = safe_open(path, SAFE_OPEN_MAX_ELF_BYTES, NULL);
	if (fd < 0) {
		snprintf(err, len, "%s", safe_open__strerror(fd));
		errno = -fd;
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* Without a build-id nothing is cached (and see unwind_cache__key() for the rest). */
	cacheable = l->opts.cache_dir && unwind_cache__key(elf, &key) == 0;
	if (cacheable) {
		ret = unwind_cache__load(l->opts.cache_dir, key.build_id, key.build_id_len,
					 key.arch, &t);
		if (ret == 0) {
			l->stats.tables_cached++;
			goto out;
		}
		if (ret != -ENOENT)
			log_debug("unwind cache: entry of %s not used (%s): rebuilding", path,
				  strerror(-ret));
	}
	t = unwind_table__build_elf(elf, NULL, err, len);
	if (!t && errno == EFBIG)
		safe_open__refused(SAFE_OPEN_SECTION_BIG, path, err);
	if (!t)
		goto out;
	l->stats.tables_built++;
	if (cacheable) {
		ret = unwind_cache__store(l->opts.cache_dir, key.build_id, key.build_id_len, t);
		if (ret && !l->cache_store_logged) {
			l->cache_store_logged = true;
			log_debug("unwind cache: cannot store the table of %s under %s: %s "
				  "(further failures are not logged)",
				  path, l->opts.cache_dir, strerror(-ret));
		}
	}
out:
	saved = errno;
	elf_end(elf);
	close(fd);
	errno = saved;
	return t;
}

/* Write nr rows at base, and their index after them. */
static int write_table(struct unwind_loader *l, uint32_t base, const struct hp_unwind_row *rows,
		       uint32_t nr, uint32_t index_slots)
{
	struct hp_unwind_row *index = calloc(index_slots, sizeof(*index));
	int ret = -ENOMEM;

	if (index) {
		row_index__build(rows, nr, index);
		ret = l->sink.write_rows(l->sink.ctx, base, rows, nr);
		if (ret == 0)
			ret = l->sink.write_rows(l->sink.ctx, base + nr, index, index_slots);
	}
	free(index);
	return ret;
}

/*
 * Put nr rows and their index into a free run of the rows map for b (what: its name in the log),
 * evicting binaries nobody maps when there is no run big enough. false when they do not fit or
 * cannot be written.
 */
static bool place_rows(struct unwind_loader *l, struct binary *b, const struct hp_unwind_row *rows,
		       size_t nr, const char *what)
{
	size_t index_slots = row_index__slots(rows, nr), slots = nr + index_slots;
	uint32_t base;
	bool evicted = false;

	if (nr == 0 || slots > l->opts.max_rows) {
		l->stats.no_room += nr != 0;
		return false;
	}
	while ((base = find_room(l, (uint32_t)slots)) == UINT32_MAX) {
		if (!evict_one(l))
			break;
		evicted = true;
	}
	/* A walk that read an entry naming the evicted rows before it went may still be reading
	 * them: let it finish before they are overwritten. */
	if (evicted && base != UINT32_MAX && !l->opts.sink)
		bpf_sync__wait_for_programs();
	if (base == UINT32_MAX) {
		l->stats.no_room++;
		b->wanted = (uint32_t)slots;
		log_debug("unwind rows map full (%u rows): %s walks with frame pointers",
			  l->opts.max_rows, what);
		return false;
	}
	if (write_table(l, base, rows, (uint32_t)nr, (uint32_t)index_slots) != 0) {
		l->stats.tables_failed++;
		return false;
	}
	b->wanted = 0;
	b->row_base = base;
	b->row_count = (uint32_t)nr;
	b->slots = (uint32_t)slots;
	l->rows_used += slots;
	return true;
}

/* Build and load the table of a binary new to the loader. A failure leaves it without rows. */
static void load_binary(struct unwind_loader *l, struct binary *b, const char *path)
{
	const struct hp_unwind_row *rows;
	struct unwind_table *t = NULL;
	char err[256] = "";
	size_t nr = 0;

	if (read_loads(path, b) != 0 || !(t = get_table(l, path, err, sizeof(err)))) {
		l->stats.tables_failed++;
		log_debug("no unwind table for %s%s%s: frame pointers only", path,
			  err[0] ? ": " : "", err);
		return;
	}
	rows = unwind_table__rows(t, &nr);
	place_rows(l, b, rows, nr, path);
	unwind_table__delete(t);
}

/* Rows held by binaries that some process maps: what eviction cannot free. */
static uint64_t rows_in_use(const struct unwind_loader *l)
{
	uint64_t n = 0;

	for (size_t i = 0; i < l->nr_bins; i++)
		if (l->bins[i]->refs)
			n += l->bins[i]->slots;
	return n;
}

static struct binary *get_binary(struct unwind_loader *l, const struct mapping *m, pid_t pid)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	char path[4096];
	struct binary *b;

	for (size_t i = 0; i < l->nr_bins; i++) {
		b = l->bins[i];
		if (b->tmpl || b->dev != dev || b->inode != m->inode)
			continue;
		b->last_used = ++l->clock;
		/* A table that did not fit is tried again once binaries nobody maps could make
		 * room for it; not before, or every new process would rebuild it in vain. */
		if (b->wanted && rows_in_use(l) + b->wanted <= l->opts.max_rows &&
		    proc_table__mapping_path(l->procs_snap, pid, m, path, sizeof(path)) == 0) {
			b->nr_loads = 0;
			b->refs++; /* not a candidate for the evictions that make its room */
			load_binary(l, b, path);
			b->refs--;
		}
		return b;
	}
	if (l->nr_bins == l->opts.max_binaries && !evict_one(l))
		return NULL;
	if (proc_table__mapping_path(l->procs_snap, pid, m, path, sizeof(path)) != 0)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->dev = dev;
	b->inode = m->inode;
	b->last_used = ++l->clock;
	load_binary(l, b, path);
	l->bins[l->nr_bins++] = b;
	return b;
}

/* The rows of a code template, loaded once for every process that runs copies of it. */
static struct binary *get_template_binary(struct unwind_loader *l, const struct code_template *t)
{
	struct binary *b;

	for (size_t i = 0; i < l->nr_bins; i++) {
		b = l->bins[i];
		if (b->tmpl != t)
			continue;
		b->last_used = ++l->clock;
		if (!b->row_count)
			place_rows(l, b, t->rows, t->nr_rows, t->name);
		return b->row_count ? b : NULL;
	}
	if (l->nr_bins == l->opts.max_binaries && !evict_one(l))
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->tmpl = t;
	b->last_used = ++l->clock;
	l->bins[l->nr_bins++] = b;
	place_rows(l, b, t->rows, t->nr_rows, t->name);
	return b->row_count ? b : NULL;
}

/*
 * An executable anonymous mapping whose code is copies of a known template (CPython's perf
 * trampolines): its binary, with out filled in; NULL for any other (JIT code the walker steps
 * through with frame pointers, as before). The probe reads the mapping's first bytes from the
 * process: bounded, and never a pointer the process chose.
 */
static struct binary *template_mapping(struct unwind_loader *l, pid_t pid, const struct mapping *m,
				       struct hp_unwind_mapping *out)
{
	uint8_t code[CODE_TEMPLATE_PROBE];
	struct code_template_match match;
	size_t len = sizeof(code);
	struct binary *b;

	if (m->end - m->start < len)
		len = (size_t)(m->end - m->start);
	if (l->read_memory(pid, m->start, code, len) != 0 ||
	    !code_template__match(l->arch, code, len, m->end - m->start, &match))
		return NULL;
	b = get_template_binary(l, match.tmpl);
	if (!b)
		return NULL;
	l->stats.template_mappings++;
	*out = (struct hp_unwind_mapping){.start = m->start,
					  .end = m->end,
					  .row_base = b->row_base,
					  .row_count = b->row_count,
					  .stride = match.stride,
					  .period = match.tmpl->period};
	return b;
}

/* Fill the procs map value of a process and the loader's record of it. */
static int build_entry(struct unwind_loader *l, pid_t pid, const struct proc *p,
		       struct loaded_proc *rec)
{
	struct hp_unwind_proc *e = l->entry;

	memset(e, 0, sizeof(*e));
	rec->bins = calloc(HP_UNWIND_MAX_MAPPINGS, sizeof(*rec->bins));
	rec->ranges = calloc(HP_UNWIND_MAX_MAPPINGS, sizeof(*rec->ranges));
	if (!rec->bins || !rec->ranges)
		return -ENOMEM;
	for (size_t i = 0; i < p->maps.n && e->nr < HP_UNWIND_MAX_MAPPINGS; i++) {
		const struct mapping *m = &p->maps.v[i];
		struct hp_unwind_mapping *out = &e->maps[e->nr];
		struct binary *b;
		uint64_t bias;

		if (!m->executable)
			continue;
		if (m->kind == MAPPING_ANON) {
			b = template_mapping(l, pid, m, out);
			if (!b)
				continue;
		} else if (m->kind == MAPPING_FILE || m->kind == MAPPING_VDSO) {
			/* The vdso has no file to read a table from: listed without one
			 * (frame-pointer steps), so that walks through clock_gettime() do not ask
			 * for re-reads. */
			b = m->kind == MAPPING_FILE ? get_binary(l, m, pid) : NULL;
			*out = (struct hp_unwind_mapping){.start = m->start, .end = m->end};
		} else {
			continue;
		}
		if (b && !b->tmpl && b->row_count && mapping_bias(b, m, &bias)) {
			out->bias = bias;
			out->row_base = b->row_base;
			out->row_count = b->row_count;
		}
		if (b)
			b->refs++;
		rec->bins[e->nr] = b;
		rec->ranges[e->nr][0] = m->start;
		rec->ranges[e->nr][1] = m->end;
		e->nr++;
	}
	rec->pid = pid;
	rec->nr = e->nr;
	/* Kept for the process's lifetime: only what it maps (a few dozen, not 256). */
	if (e->nr) {
		void *bins = realloc(rec->bins, e->nr * sizeof(*rec->bins));
		void *ranges = realloc(rec->ranges, e->nr * sizeof(*rec->ranges));

		if (bins)
			rec->bins = bins;
		if (ranges)
			rec->ranges = ranges;
	}
	return 0;
}

int unwind_loader__add_process(struct unwind_loader *l, pid_t pid)
{
	struct loaded_proc rec = {0}, *old = find_proc(l, pid);
	uint64_t start = clock__ns(CLOCK_MONOTONIC);
	const struct proc *p;
	int err;

	/* Before any /proc read: a full table stays full until processes exit. */
	if (!old && l->nr_procs == l->opts.max_procs)
		return remember_failure(l, pid, start, -ENOSPC);
	err = proc_table__refresh(l->procs_snap, pid);
	if (err && err != -ESRCH)
		return remember_failure(l, pid, start, err);
	p = proc_table__get(l->procs_snap, pid);
	if (!p || p->exited)
		return -ESRCH;
	err = build_entry(l, pid, p, &rec);
	if (!err)
		err = l->sink.write_proc(l->sink.ctx, pid, l->entry);
	if (err) {
		release_proc(&rec);
		return remember_failure(l, pid, start, err);
	}
	/* A re-read that found nothing new was for code outside any mapping (JIT): wait longer
	 * before the next one. */
	if (!old)
		rec.backoff_ns = 0; /* just exec'd, ld.so may still be mapping libraries */
	else if (!same_ranges(old, &rec))
		rec.backoff_ns = UNWIND_RECHECK_MIN_NS / 8;
	else if (old->backoff_ns * 2 < UNWIND_RECHECK_MIN_NS)
		rec.backoff_ns = UNWIND_RECHECK_MIN_NS;
	else
		rec.backoff_ns = old->backoff_ns * 2 < UNWIND_RECHECK_MAX_NS
					 ? old->backoff_ns * 2
					 : UNWIND_RECHECK_MAX_NS;
	rec.next_check_ns = start + rec.backoff_ns;
	/* The new references are taken: the old ones can go, which may free binaries. */
	if (old) {
		release_proc(old);
		*old = rec;
	} else {
		l->procs[l->nr_procs++] = rec;
	}
	l->stats.build_ns += clock__ns(CLOCK_MONOTONIC) - start;
	return 0;
}

void unwind_loader__remove_process(struct unwind_loader *l, pid_t pid)
{
	struct loaded_proc *p = find_proc(l, pid);

	if (!p)
		return;
	l->sink.delete_proc(l->sink.ctx, pid);
	release_proc(p);
	*p = l->procs[--l->nr_procs];
}

size_t unwind_loader__sweep(struct unwind_loader *l)
{
	size_t gone = 0;

	/* Backwards: removing swaps the last entry into the hole. The PIDs are those of the
	 * /proc we read (perhaps the host's, from a container), so ask it, not kill(). */
	for (size_t i = l->nr_procs; i-- > 0;) {
		char path[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%d", l->opts.proc_root, l->procs[i].pid);
		if (stat(path, &st) == 0 || errno != ENOENT)
			continue;
		unwind_loader__remove_process(l, l->procs[i].pid);
		gone++;
	}
	return gone;
}

void unwind_loader__stats(const struct unwind_loader *l, struct unwind_loader_stats *out)
{
	*out = l->stats;
	out->binaries = 0;
	for (size_t i = 0; i < l->nr_bins; i++)
		out->binaries += l->bins[i]->row_count != 0;
	out->processes = l->nr_procs;
	out->rows_used = l->rows_used;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Puts unwind tables where the BPF walker finds them (see bpf/unwind.bpf.h): each binary's rows
 * once into the shared rows map, and each process's executable mappings into the procs map.
 *
 * A table is built once per binary (device and inode; the disk cache is keyed by build-id) and
 * shared by every process that maps it. The rows map has a fixed capacity: a binary gets a
 * contiguous run of it, first fit; when none is free, the least recently used binaries that no
 * process maps any more are unloaded. A binary that still does not fit is walked with frame
 * pointers, and counted.
 */
#ifndef HOSTPROF_UNWIND_LOADER_H
#define HOSTPROF_UNWIND_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hp_unwind_proc;
struct hp_unwind_row;

/* Where tables go: the BPF maps, or memory in the unit tests. Each returns 0 or -errno. */
struct unwind_sink {
	void *ctx;
	int (*write_rows)(void *ctx, uint32_t base, const struct hp_unwind_row *rows, uint32_t n);
	int (*write_proc)(void *ctx, pid_t pid, const struct hp_unwind_proc *entry);
	void (*delete_proc)(void *ctx, pid_t pid);
};

struct unwind_loader_opts {
	int rows_fd;			/* the rows map (array of struct hp_unwind_row) */
	int procs_fd;			/* the procs map (tgid -> struct hp_unwind_proc) */
	const struct unwind_sink *sink; /* instead of the two maps, when not NULL */
	uint32_t max_rows;		/* the rows map's max_entries */
	uint32_t max_procs;		/* the procs map's max_entries */
	size_t max_binaries;		/* tables kept at once */
	const char *proc_root;		/* "/proc" */
	const char *cache_dir;		/* tables cached on disk here; NULL: no disk cache */
	/* Reads a process's memory to recognise code copied from a template
	 * (unwind/code_template.h); NULL: proc_mem__read(). The tests give their own. */
	int (*read_memory)(pid_t pid, uint64_t addr, void *buf, size_t len);
	int arch; /* enum unwind_arch of the processes; 0: the one hostprof is built for */
};

struct unwind_loader_stats {
	size_t binaries;	/* tables loaded now */
	size_t processes;	/* processes with a procs entry now */
	uint64_t rows_used;	/* of the rows map */
	uint64_t rows_capacity; /* = max_rows */
	uint64_t tables_built;	/* from .eh_frame / .debug_frame */
	uint64_t tables_cached; /* read from the disk cache instead */
	uint64_t tables_failed; /* binaries without a usable table (frame pointers only) */
	uint64_t no_room;	/* binaries that did not fit in the rows map */
	uint64_t evictions;	/* binaries unloaded to make room */
	uint64_t build_ns;	/* time spent building and loading tables */
	/* executable anonymous mappings loaded as copies of a code template (CPython's perf
	 * trampolines), counted at each load of a process */
	uint64_t template_mappings;
};

struct unwind_loader;

/* NULL + errno on failure. */
struct unwind_loader *unwind_loader__new(const struct unwind_loader_opts *opts);
void unwind_loader__delete(struct unwind_loader *l);

/*
 * Load the tables of every executable mapping of a process (building those not loaded yet) and
 * write its procs entry. Again for a known process: re-read its mappings (after exec or dlopen).
 * 0, or -errno: -ESRCH when it is gone, -ENOSPC when the procs map is full.
 */
int unwind_loader__add_process(struct unwind_loader *l, pid_t pid);
/* Forget a process (it exited): its entry goes, and its binaries may be unloaded later. */
void unwind_loader__remove_process(struct unwind_loader *l, pid_t pid);
/*
 * Forget the processes that have exited since (no proc_root/PID any more); returns how many. A
 * backstop: the kernel's exit events (HP_UNWIND_REQ_EXIT) usually come first.
 */
size_t unwind_loader__sweep(struct unwind_loader *l);
/* Has this process an entry? */
bool unwind_loader__has_process(const struct unwind_loader *l, pid_t pid);
/* Does addr lie in one of the mappings loaded for pid? (false for unknown processes) */
bool unwind_loader__covers(const struct unwind_loader *l, pid_t pid, uint64_t addr);
/*
 * Is a (re)load of this process due? For a process not loaded yet, unless its last load failed
 * less than UNWIND_RETRY_FAILED_NS ago. A loaded one is re-read
 * when its walks meet code outside its mappings (exec, dlopen, ld.so still mapping libraries),
 * but JIT code never lies in a mapping, so each process backs off: a re-read that finds the same
 * mappings doubles its wait (from UNWIND_RECHECK_MIN_NS up to UNWIND_RECHECK_MAX_NS); one that
 * finds new ones waits UNWIND_RECHECK_MIN_NS / 8, as more are likely to follow.
 */
#define UNWIND_RECHECK_MIN_NS 1000000000ULL
/* A process whose load failed (the procs map full, its maps unreadable) waits this long, and the
 * loader remembers the last UNWIND_FAILED_SLOTS such processes. */
#define UNWIND_RETRY_FAILED_NS 10000000000ULL
#define UNWIND_FAILED_SLOTS 64
#define UNWIND_RECHECK_MAX_NS 64000000000ULL
bool unwind_loader__due(const struct unwind_loader *l, pid_t pid, uint64_t now_ns);

void unwind_loader__stats(const struct unwind_loader *l, struct unwind_loader_stats *out);

#endif /* HOSTPROF_UNWIND_LOADER_H */

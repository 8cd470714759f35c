/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The process table: per PID, a snapshot of /proc/PID/maps, the process name and executable.
 * The /proc root is injectable so that parsers run on fixtures.
 */
#ifndef HOSTPROF_PROC_H
#define HOSTPROF_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum mapping_kind {
	MAPPING_FILE = 0, /* backed by a file: path is absolute as the process sees it */
	MAPPING_ANON,	  /* no path */
	MAPPING_HEAP,	  /* [heap] */
	MAPPING_STACK,	  /* [stack] */
	MAPPING_VDSO,	  /* [vdso] */
	MAPPING_VSYSCALL, /* [vsyscall] */
	MAPPING_SPECIAL,  /* any other [name] (e.g. [vvar], [anon:...]) */
};

/* One line of /proc/PID/maps. */
struct mapping {
	uint64_t start;
	uint64_t end;	/* exclusive */
	uint64_t pgoff; /* file offset of `start` */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	bool readable, writable, executable, shared;
	bool deleted; /* the path ended in " (deleted)": the suffix is stripped from `path` */
	enum mapping_kind kind;
	char *path; /* owned; NULL for anonymous mappings */
};

struct maps {
	struct mapping *v; /* sorted by start */
	size_t n;
};

/*
 * Parse the text of a /proc/PID/maps file. Lines that do not parse are skipped and counted in
 * *bad_lines (may be NULL). Returns 0 or -errno (-ENOMEM).
 */
int maps__parse(struct maps *out, FILE *f, size_t *bad_lines);
/* The mapping that contains addr, or NULL. */
const struct mapping *maps__find(const struct maps *maps, uint64_t addr);
void maps__release(struct maps *maps);

#define PROC_CMDLINE_MAX 4096
#define PROC_CONTAINER_ID_LEN 64

struct proc {
	pid_t pid;
	char comm[16];	/* from /proc/PID/comm, as a fallback when BPF did not give one */
	char *exe_path; /* readlink of /proc/PID/exe; NULL when it is not readable */
	/* argv as the kernel gives it, each argument NUL-terminated (at most PROC_CMDLINE_MAX
	 * bytes): the boundaries stay known, so that redaction (process/cmdline.h) can tell an
	 * argument from the next one. NULL if unknown. */
	char *cmdline;
	size_t cmdline_len; /* bytes of cmdline, the last NUL included */
	char *service_name; /* from the environment (see proc__service_from_environ); NULL if none
			     */
	char container_id[PROC_CONTAINER_ID_LEN + 1]; /* "" outside a container */
	char *systemd_unit; /* "nginx" for nginx.service, from the cgroup path; NULL if none */
	/* What its OpenTelemetry SDK published (process_context.h); NULL when none was found. */
	struct process_context *otel_ctx;
	uint64_t otel_ctx_checked_ns; /* CLOCK_MONOTONIC of the last look for one */
	struct maps maps;
	bool exited; /* the process was gone when it was last looked up: the snapshot stays */
};

struct proc_table;
struct process_context;

/*
 * proc_root is the directory that stands for /proc ("/proc" in production, a fixture directory in
 * tests). max_procs caps the table: beyond it, the least recently used entry is evicted.
 * Returns NULL and sets errno on failure.
 */
struct proc_table *proc_table__new(const char *proc_root, size_t max_procs);
void proc_table__delete(struct proc_table *t);

/*
 * The process with this PID, snapshotting its maps on first use. A process that has exited keeps
 * its last snapshot. Returns NULL (errno = ESRCH) when the process was never seen and is gone.
 * Other errno values: EACCES when its maps cannot be read, EINVAL for pid <= 0, ENOMEM.
 * The pointer is valid until the next call into the table.
 */
struct proc *proc_table__get(struct proc_table *t, pid_t pid);
/*
 * Re-read the maps of a known process (for example when an address misses them). 0 or -errno.
 * A process that is gone keeps its snapshot, is marked exited, and -ESRCH is returned. An unknown
 * PID is read as by proc_table__get().
 */
int proc_table__refresh(struct proc_table *t, pid_t pid);
/*
 * Keep a known process's OpenTelemetry process context current: re-read it when its header's
 * timestamp moved (one 32-byte read), and look for one published late (an SDK that starts after
 * main) by re-reading the maps, at most every PROC_CONTEXT_RESCAN_NS. Does nothing for an
 * unknown or exited process.
 */
#define PROC_CONTEXT_RESCAN_NS (30ULL * 1000000000ULL)
void proc_table__check_context(struct proc_table *t, pid_t pid, uint64_t now_ns);
size_t proc_table__size(const struct proc_table *t);
/* Bytes held by the table and its snapshots (what malloc was asked for, not its overhead). */
size_t proc_table__memory(const struct proc_table *t);
/*
 * Read a snapshot of pid into *out, as the table would, without touching the table: it reads only
 * the table's root and options, which never change, so another thread may call it while the table
 * is in use. 0 or -errno (-ESRCH when the process is gone). Release *out with proc__release(), or
 * hand it to proc_table__adopt().
 */
int proc_table__read(const struct proc_table *t, pid_t pid, struct proc *out);
void proc__release(struct proc *p);
/* Make p the table's snapshot of p->pid, replacing any; p's contents are the table's afterwards
 * (p is zeroed). 0 or -errno (then p is untouched). */
int proc_table__adopt(struct proc_table *t, struct proc *p);
/* The process's snapshot if there is one, without reading anything; NULL otherwise. */
struct proc *proc_table__peek(struct proc_table *t, pid_t pid);
/* Drop the snapshot of pid (it exec'd: its maps describe a program it no longer runs). */
void proc_table__forget(struct proc_table *t, pid_t pid);
/* Read only the maps, the name and the executable of each process, not its command line,
 * environment and cgroup: for a table that needs no identity (the unwind loader's, which reads
 * the maps of every new process). */
void proc_table__maps_only(struct proc_table *t);
/*
 * Forget the processes that were already gone at the previous call and still are: by then every
 * sample they left has been drained and symbolized (call it once per profile window, after the
 * drain). A long-running agent on a host that starts many short processes keeps only the live
 * ones and those of the last window. Returns how many were retired.
 */
size_t proc_table__retire_exited(struct proc_table *t);

/*
 * The path through which userspace can open a file mapped by this process, even inside a
 * container or after it was deleted: /proc/PID/map_files/START-END when it exists, else
 * /proc/PID/root/PATH. Writes into buf; returns 0 or -ENAMETOOLONG, or -ENOENT when map_files has
 * no entry and the mapping has no absolute file path (anonymous, [special], anon_inode:...).
 * map_files is used only when this process may follow it (CAP_SYS_ADMIN), so that the result can
 * be opened.
 */
int proc_table__mapping_path(const struct proc_table *t, pid_t pid, const struct mapping *m,
			     char *buf, size_t len);

/*
 * The container a process runs in, from the text of /proc/PID/cgroup (v1 or v2): the last path
 * component that holds a 64-hex-digit ID, in the Docker (docker-ID.scope, /docker/ID), containerd
 * (cri-containerd-ID.scope), CRI-O (crio-ID.scope) and cgroupfs-driver Kubernetes
 * (/kubepods/.../podUID/ID) forms. Writes the ID into out; 0, or -ENOENT when there is none.
 */
int proc__container_id(const char *cgroup, char out[PROC_CONTAINER_ID_LEN + 1]);

/*
 * The systemd service a process runs in, from the text of /proc/PID/cgroup: the last *.service
 * component of the unified ("0::") or the name=systemd hierarchy's path, without the suffix
 * ("nginx" for nginx.service); the per-user managers (user@UID.service) are skipped. 0, or
 * -ENOENT.
 */
int proc__systemd_unit(const char *cgroup, char *out, size_t len);

/*
 * The service name a process declares in its environment (the NUL-separated text of
 * /proc/PID/environ): OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES
 * ("k=v,k=v", values percent-decoded). 0, or -ENOENT when there is none.
 */
int proc__service_from_environ(const char *env, size_t len, char *out, size_t outlen);

#endif /* HOSTPROF_PROC_H */

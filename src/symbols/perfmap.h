/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Perf map files (/tmp/perf-PID.map): the symbols that JIT compilers write for code they generate
 * at run time (Node --perf-basic-prof, Java's jcmd PID Compiler.perfmap, Python 3.12 -X perf).
 * One "START SIZE name" line per code range, START and SIZE in hex. The file is written by the
 * profiled process, so it is untrusted: its size and number of entries are capped, and lines that
 * do not parse are skipped and counted.
 */
#ifndef HOSTPROF_PERFMAP_H
#define HOSTPROF_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "model/profile.h"

#define PERFMAP_MAX_ENTRIES (1u << 20)
#define PERFMAP_MAX_BYTES (64u << 20)
/* A line (a JIT's name for one code range): V8's names with their script URLs and the JVM's
 * signatures are well under it. A longer line is skipped without being kept. */
#define PERFMAP_MAX_LINE (16u << 10)

struct perfmap;

struct perfmap_limits {
	size_t max_entries; /* lines kept; beyond them the map is truncated */
	size_t max_bytes;   /* bytes read; beyond them the map is truncated */
	size_t max_line;    /* bytes of one line; a longer one is skipped; 0: PERFMAP_MAX_LINE */
};

struct perfmap_sym {
	uint64_t start, end; /* runtime addresses, end exclusive */
	const char *name;    /* valid until the map is deleted */
	enum frame_kind kind;
};

/* Parse a perf map from f. limits may be NULL (the PERFMAP_MAX_* defaults). NULL and errno on
 * failure (ENOMEM, or EIO when f cannot be read). */
struct perfmap *perfmap__parse(FILE *f, const struct perfmap_limits *limits);
/* Open and parse the file at path with safe_open__nofollow(): a regular file, not a symlink,
 * and a path through a process's root resolved inside it (the process that writes it must not
 * point us at another file). NULL and errno (ENOENT when there is none, EINVAL when it is not a
 * regular file). */
struct perfmap *perfmap__load(const char *path, const struct perfmap_limits *limits);
void perfmap__delete(struct perfmap *m);

/* The entry holding addr (the latest line for a start written twice). */
bool perfmap__find(const struct perfmap *m, uint64_t addr, struct perfmap_sym *out);
size_t perfmap__nr_entries(const struct perfmap *m);
size_t perfmap__bad_lines(const struct perfmap *m);
bool perfmap__truncated(const struct perfmap *m);
size_t perfmap__memory(const struct perfmap *m); /* bytes held */

/* The runtime a JIT name comes from: FRAME_JIT_V8, _JVM, _CPYTHON, else FRAME_JIT_OTHER. */
enum frame_kind perfmap__classify(const char *name);

/*
 * Where the perf map of pid is, seen from here: PROC_ROOT/PID/root/tmp/perf-NSPID.map, inside the
 * process's mount namespace and named by its PID in its own PID namespace (the last NSpid value
 * of PROC_ROOT/PID/status; pid itself when the kernel has no NSpid). 0 or -errno.
 */
int perfmap__path(const char *proc_root, pid_t pid, char *buf, size_t len);

#endif /* HOSTPROF_PERFMAP_H */

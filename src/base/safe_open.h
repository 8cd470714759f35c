/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening files that another process controls: its binaries and debug files, its perf map,
 * anything under its /proc/PID/root. Whoever runs a process chooses what those paths lead to: a
 * FIFO (an open or a read that never returns), a device (an open with side effects), a sparse
 * file of terabytes, a symlink into the host's own files. So such a file is found without
 * opening it (O_PATH), checked to be a regular file of bounded size, and only then opened,
 * non-blocking; and a path inside a process's root is resolved inside that root, symlinks and
 * ".." included, never against the host's "/".
 *
 * What is refused is counted by reason for --stats and /metrics, and logged with a rate limit.
 * The caps on what is read from such files live here too, each with why it is what it is.
 */
#ifndef HOSTPROF_SAFE_OPEN_H
#define HOSTPROF_SAFE_OPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * Caps. A real file never reaches them; a hostile one (a sparse file whose headers claim
 * gigabytes) is refused before anything is read.
 *
 * A binary or debug file: its size alone costs nothing (what is read is capped per section),
 * but no real one comes near 16 GiB (Chromium's unstripped binary with full DWARF is ~5 GiB).
 */
#define SAFE_OPEN_MAX_ELF_BYTES (16ULL << 30)
/*
 * A symbol table and its string table together (.symtab or .dynsym; Go's .gopclntab alone):
 * they are read into memory whole. Chromium's, the biggest we know, hold ~1.5M functions in
 * ~150 MiB together; 256 MiB leaves room while one hostile binary stays well under the agent's
 * MemoryMax (1 GiB) and the chart's limit (512 MiB).
 */
#define SAFE_OPEN_MAX_SYMTAB_BYTES (256ULL << 20)
/*
 * Small sections read whole to find something in them: notes (the build-id), .gnu_debuglink,
 * the section name table, .gnu_debugdata (xz, inflated under its own 64 MiB cap). Real ones are
 * bytes to a few MiB.
 */
#define SAFE_OPEN_MAX_SMALL_SECTION_BYTES (16ULL << 20)
/*
 * .eh_frame and .debug_frame, read whole to build unwind tables. Chromium's .eh_frame is ~30
 * MiB; a table bigger than 256 MiB would not fit the BPF row map anyway.
 */
#define SAFE_OPEN_MAX_CFI_BYTES (256ULL << 20)
/*
 * .gnu_debuglink names a debug file by name and CRC-32: checking the CRC reads the whole file,
 * on the capture thread. A candidate whose build-id equals the binary's needs no CRC (the
 * build-id is the stronger check); one without a build-id is CRC-checked only up to this size
 * (~20 ms at zlib's speed), else skipped, counted. Debug files without build-ids come from
 * toolchains before 2007 and are small.
 */
#define SAFE_OPEN_MAX_CRC_BYTES (64ULL << 20)

/* Why a file, or a part of one, was refused. */
enum safe_open_reason {
	SAFE_OPEN_NOT_REGULAR, /* a FIFO, device, socket or directory: -EINVAL */
	SAFE_OPEN_TOO_BIG,     /* over the caller's size cap: -EFBIG */
	SAFE_OPEN_UNSAFE_PATH, /* a symlink loop, a magic link, a path too deep: -ELOOP */
	SAFE_OPEN_SECTION_BIG, /* an ELF section over its cap: not read */
	SAFE_OPEN_LINE_LONG,   /* a line over its cap (perf maps): skipped */
	SAFE_OPEN_CRC_SKIPPED, /* a debuglink candidate too big to CRC, without build-id */
	SAFE_OPEN_REASON__COUNT,
};

/* The reason's label in /metrics ("not_regular", "too_big", ...). */
const char *safe_open__reason_name(enum safe_open_reason why);

/*
 * Open path read-only for a file a process controls: found with O_PATH (nothing is opened yet,
 * so a FIFO cannot block and a device sees no open), checked to be a regular file of at most
 * max_size bytes, then opened O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY. When the path goes
 * through a process's root (its first "/<digits>/root/" component, as in
 * /proc/PID/root/usr/lib/libc.so.6), what follows is resolved inside that root:
 * safe_open__at(). Returns the fd, filling *st (may be NULL), or -errno: -EINVAL not a regular
 * file, -EFBIG too big, -ELOOP an unsafe path, or what open() said (-ENOENT, -EACCES...). The
 * first three are counted and logged (safe_open__refused()).
 */
int safe_open(const char *path, uint64_t max_size, struct stat *st);

/* As safe_open(), but a symlink in the last component is refused (-EINVAL: not a regular
 * file): for files that a process writes for us to read, such as its perf map, and has no reason
 * to point elsewhere. */
int safe_open__nofollow(const char *path, uint64_t max_size, struct stat *st);

/* stat() of path resolved as safe_open() does (inside a process's root), without opening
 * anything. 0 or -errno. */
int safe_open__stat(const char *path, struct stat *st);

/* What an error of safe_open() means, for messages: "not a regular file" for -EINVAL,
 * "over its size cap" for -EFBIG, strerror() otherwise. */
const char *safe_open__strerror(int err);

/*
 * The same for path resolved inside the directory root_fd as if it were "/": absolute symlinks
 * and ".." stop at it, magic links (/proc/N/fd/M and the like) are refused. With openat2()
 * (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, Linux 5.6), else with safe_open__walk().
 */
int safe_open__at(int root_fd, const char *path, uint64_t max_size, struct stat *st);
/* The same, without following a symlink in the last component (see safe_open__nofollow()). */
int safe_open__at_nofollow(int root_fd, const char *path, uint64_t max_size, struct stat *st);

/*
 * The resolution of kernels without openat2(): path walked one component at a time from root_fd
 * with O_PATH | O_NOFOLLOW; a symlink is read and its target walked in its place (an absolute
 * one from root_fd again), at most 40 of them; ".." never goes above root_fd, and goes back to
 * the directory it came from, never to the parent of a directory moved meanwhile. With nofollow
 * a symlink in the last component is handed back, not followed. Returns an O_PATH fd on what
 * path names (any type), or -errno. Called by safe_open__at() on ENOSYS, and directly by tests.
 */
int safe_open__walk(int root_fd, const char *path, bool nofollow);

/* Tests: false makes safe_open__at() walk as on a kernel without openat2(). */
void safe_open__set_openat2(bool use);

/*
 * Count a refusal, and warn about it naming the file (control characters escaped) and detail,
 * at most once per reason every 10 s; the next warning says how many went unsaid. For the
 * callers' own caps (sections, lines); safe_open() calls it for what it refuses.
 */
void safe_open__refused(enum safe_open_reason why, const char *path, const char *detail);

/* The refusals counted since start, by reason: out[SAFE_OPEN_REASON__COUNT]. Process-wide. */
void safe_open__stats(uint64_t out[SAFE_OPEN_REASON__COUNT]);

#endif /* HOSTPROF_SAFE_OPEN_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a Go program keeps the running goroutine's pprof labels (pprof.Do,
 * pprof.SetGoroutineLabels, otel-profiling-go), said the way the BPF sampler reaches them: struct
 * hp_tls_ref with record HP_CTX_GO_MAP or HP_CTX_GO_SLICE (hostprof_abi.h).
 *
 * The sampler follows g -> m -> curg -> labels. What that takes, per binary:
 * - the Go version, from the build info the linker writes into .go.buildinfo (kept by -s -w);
 * - the offsets of g.m, m.curg and g.labels and the labels' shape (a map up to Go 1.23, a sorted
 *   slice from 1.24), from go_labels__layout(): a table per release read off the DWARF of each
 *   release's runtime (scripts/go_offsets.sh prints it again; the fields sit before any
 *   architecture-dependent one, so amd64 and arm64 agree);
 * - where g is: amd64 keeps it in TLS at runtime.tlsg (-8 from the thread pointer when .symtab is
 *   stripped: the runtime's is then the executable's only TLS); arm64 keeps it in x28, and in
 *   TLS at runtime.tls_g only when cgo is linked in.
 * Results are remembered per binary (device, inode, size, mtime), so that a host of short-lived
 * processes opens each executable once.
 */
#ifndef HOSTPROF_GO_LABELS_REF_H
#define HOSTPROF_GO_LABELS_REF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostprof_abi.h"

struct proc_table;

/* Go releases whose runtime layout is known. */
#define GO_LABELS_MIN_MINOR 19
#define GO_LABELS_MAX_MINOR 26

struct go_runtime_layout {
	int minor; /* Go 1.minor */
	uint16_t g_m, m_curg, g_labels;
	enum hp_ctx_record record;
};

/* The layout of Go 1.minor's runtime, or NULL when it is not known. */
const struct go_runtime_layout *go_labels__layout(int minor);

/*
 * The Go version in the contents of a .go.buildinfo section (Go 1.18 on: the version is inline);
 * its minor number in *minor and the string ("go1.22.3") in version. 0, or -EINVAL (not build
 * info), -ENOTSUP (the older, pointer-based format: Go before 1.18; or a version not "go1.N").
 */
int go_labels__version(const uint8_t *buildinfo, size_t len, int *minor, char *version,
		       size_t vlen);

struct go_labels_cache;

/* NULL with errno set. */
struct go_labels_cache *go_labels_cache__new(void);
void go_labels_cache__delete(struct go_labels_cache *c);

/*
 * How to reach the labels of process pid's goroutines, into *out. 0, or -ENOENT (not a Go
 * program), -ENOTSUP (a Go release or architecture whose layout is not known), or what opening
 * the executable gave; why says which in words.
 */
int go_labels_ref__resolve(struct go_labels_cache *c, struct proc_table *procs, pid_t pid,
			   struct hp_tls_ref *out, char *why, size_t len);

#endif /* HOSTPROF_GO_LABELS_REF_H */

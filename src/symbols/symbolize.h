/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runtime address → frame: the mapping and file address it belongs to, and its function name.
 * Runtime addresses die here: what comes out is mapping + ELF address, as pprof and OTLP want.
 */
#ifndef HOSTPROF_SYMBOLIZE_H
#define HOSTPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/safe_open.h"
#include "model/profile.h"
#include "process/proc_watch.h"
#include "symbols/dso.h"

struct symbolizer;
struct debuginfod_fetch;

struct symbolizer_opts {
	const char *proc_root;	   /* "/proc" */
	const char *kallsyms_path; /* "/proc/kallsyms" */
	size_t max_procs;
	size_t max_dsos;
	size_t max_dwarf_bytes;		/* open DWARF handles; 0: DSO_DEFAULT_DWARF_BYTES */
	const char *max_dwarf_name;	/* the setting that raises it, for warnings (static) */
	size_t max_symbol_bytes;	/* binaries' symbol tables; 0: DSO_DEFAULT_SYMBOL_BYTES */
	struct debuginfod_fetch *fetch; /* borrowed; NULL: no debug files from debuginfod */
};

struct symbolizer_stats {
	uint64_t frames_user;
	uint64_t frames_user_unresolved; /* became "[unknown] ..." */
	uint64_t frames_kernel;
	uint64_t frames_kernel_unresolved;
	uint64_t frames_proc_gone; /* of the unresolved: the process had exited before we read it */
	size_t procs_cached, procs_max, procs_bytes; /* maps snapshots */
	size_t dsos_cached, dsos_max, dsos_bytes;    /* binaries' symbol tables */
	size_t perfmaps, perfmap_bytes;		     /* JIT maps */
	size_t ksyms, ksyms_bytes;		     /* kernel symbols */
	size_t binaries_held;	      /* opened by the process watcher, not read yet (an fd each) */
	struct dso_dwarf_stats dwarf; /* DWARF handles and the tables built from them */
	size_t dwarf_max;	      /* their budget */
	bool kernel_symbols;	      /* kallsyms was readable */
	uint64_t binaries_denied;     /* could not be opened for want of permission */
	/* Files (or parts: sections, lines) a process controls that were refused, by reason:
	 * process-wide, every thread that reads them included (base/safe_open.h). */
	uint64_t files_refused[SAFE_OPEN_REASON__COUNT];
};

/* The mapping a native frame belongs to, as the profile model wants it: start and limit in the
 * file's address space (ELF virtual addresses; file offsets when the ELF could not be read). */
struct frame_mapping {
	uint64_t start, limit, offset;
	const char *path;	  /* as the process sees it; NULL for anonymous memory */
	const char *build_id_hex; /* "" when none */
	const char *htlhash_hex;  /* "" when the file could not be read */
};

/* What the process table knows of a process; strings valid until the next symbolizer call. */
struct process_context;
struct hp_tls_ref;

struct process_info {
	const char *exe_path;	  /* NULL when unknown */
	const char *cmdline;	  /* argv, NUL-separated (proc.h); NULL when unknown */
	size_t cmdline_len;	  /* its bytes, the last NUL included */
	const char *service_name; /* declared in its environment; NULL when none */
	const char *container_id; /* "" outside containers */
	const char *systemd_unit; /* "nginx" for nginx.service; NULL outside a service */
	const char *comm;	  /* the process name; "" when unknown */
	/* What its OpenTelemetry SDK published: its resource wins over all of the above */
	const struct process_context *otel_ctx;
};

/* At most this many (function, file, line) entries per frame: an inline chain deeper than that
 * keeps its innermost entries and the real function. */
#define FRAME_MAX_LINES 16

/* One level of a native frame's inline chain. */
struct frame_line {
	const char *function; /* never NULL */
	const char *file;     /* NULL when unknown */
	int64_t line;	      /* 0 when unknown */
};

struct frame {
	enum frame_kind kind;
	uint64_t address; /* native: the ELF address (or file offset when unresolvable); kernel: as
			     is */
	const char *function; /* NULL when unresolved */
	bool has_mapping;
	struct frame_mapping mapping;
	char unknown[160]; /* "[unknown] <binary>+0xoffset" when function is NULL */
	/*
	 * From DWARF, when the binary has it: innermost first; the last entry is the function the
	 * code was compiled into, named as `function` is. 0 entries when only the symbol is known.
	 */
	size_t nr_lines;
	struct frame_line lines[FRAME_MAX_LINES];
	/* The binary's debug file is being fetched (debuginfod): a later lookup of the same
	 * address may say more, so the answer is not to be cached. */
	bool debug_pending;
};

/* Returns NULL and sets errno. Kernel symbols that cannot be read are logged once and every
 * kernel frame then becomes "[unknown] [kernel]+0x...". */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__delete(struct symbolizer *s);

/* Snapshot a process's maps now (for example a target PID at start), so that its frames still
 * resolve after it exits. 0 or -errno (-ESRCH when it does not exist). */
int symbolizer__track(struct symbolizer *s, pid_t pid);

/*
 * Take what the process watcher read of a process while it lived (see proc_watch.h): its snapshot
 * replaces what was known of it, and the fds on its binaries are kept (taken out of the item) until
 * a sample needs one of them read. Or, for an exec, forget the old snapshot. The caller still
 * releases the item (proc_watch_item__release()).
 */
void symbolizer__adopt(struct symbolizer *s, struct proc_watch_item *it);

/*
 * Resolve one user address of process pid. `is_return_address` is true for every frame but the
 * leaf: a return address points after the call, so addr - 1 is looked up to stay inside the
 * calling function (and inside its line). The strings in *out are valid until the next call.
 * Never fails: an address that cannot be resolved yields an "[unknown]" frame.
 */
void symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return_address,
		      struct frame *out);
/* The same for a kernel address (as is): the strings in *out are valid until the next call. */
void symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return_address,
			struct frame *out);

/* What is known of a process (from its snapshot, also after it exited). 0, or -ESRCH. */
int symbolizer__process_info(struct symbolizer *s, pid_t pid, struct process_info *out);

/*
 * Where process pid keeps its OpenTelemetry thread context variable (symbols/thread_ctx_ref.h),
 * and the process context that names its attributes (NULL when it published none; valid until the
 * next call into the symbolizer).
 */
int symbolizer__thread_ctx_ref(struct symbolizer *s, pid_t pid, struct hp_tls_ref *out, char *why,
			       size_t len);
const struct process_context *symbolizer__process_context(struct symbolizer *s, pid_t pid);
/* Where the goroutines of Go process pid keep their pprof labels (symbols/go_labels_ref.h). */
int symbolizer__go_labels_ref(struct symbolizer *s, pid_t pid, struct hp_tls_ref *out, char *why,
			      size_t len);

/* A binary whose code a process runs: a file it maps executable. */
struct process_binary {
	uint64_t dev, inode; /* its identity, from the maps */
	const char *path;    /* as the process sees it; valid until the next symbolizer call */
	bool is_exe;	     /* the process's executable (else a library) */
};

/*
 * The binaries process pid maps executable, each once, in the order of their first mapping: its
 * maps are read again first, so that a library loaded since the last snapshot is among them.
 * Returns how many there are, of which the first max are in out (call again with room for all
 * when that is more), or -errno (-ESRCH: gone, -EACCES: maps unreadable).
 */
int symbolizer__binaries(struct symbolizer *s, pid_t pid, struct process_binary *out, size_t max);

struct dso_symbol; /* symbols/dso.h */

/*
 * Symbols of one binary process pid maps (its identity from symbolizer__binaries()), by name:
 * functions and data alike (dso__find_symbols_by_name()), read through the process (its
 * /proc/PID/root inside a container). ELF addresses: symbolizer__load_bias() says where they are
 * in the process. Returns how many names were found, or -errno: -ESRCH, -ENOENT (pid maps no
 * such binary), or what opening and reading it gave.
 */
int symbolizer__find_exports(struct symbolizer *s, pid_t pid, uint64_t dev, uint64_t inode,
			     const char *const names[], size_t n, struct dso_symbol *out);

/*
 * Where process pid loaded binary (dev, inode): runtime address - ELF address
 * (dso__load_bias()). 0, or -errno: -ESRCH, -ENOENT (no mapping of it tells).
 */
int symbolizer__load_bias(struct symbolizer *s, pid_t pid, uint64_t dev, uint64_t inode,
			  uint64_t *bias);

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);
/* Let go of the snapshots of processes gone for a whole window (see proc.h); how many. */
size_t symbolizer__retire_exited(struct symbolizer *s);
/* After a drain's frames are symbolized: let go of the DWARF handles that built nothing since
 * the drain before, keeping the line and inline tables built from them
 * (dso_cache__release_idle()); how many. */
size_t symbolizer__release_idle_dwarf(struct symbolizer *s);

#endif /* HOSTPROF_SYMBOLIZE_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The internal profile model that every encoder reads: deduplicated strings, mappings, functions,
 * locations and stacks, and samples keyed by (stack, labels). Addresses here are file addresses
 * (the symbolizer has already turned runtime addresses into mapping + ELF address).
 *
 * Index 0 of every table is a "none" entry, as in pprof and OTLP, so 0 means "absent".
 */
#ifndef HOSTPROF_PROFILE_H
#define HOSTPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum frame_kind {
	FRAME_NATIVE = 0,
	FRAME_KERNEL,
	/* Code a JIT generated, named from the process's perf map; the runtime when the map's
	 * names tell it. Appended: the values above are stable. */
	FRAME_JIT_V8,
	FRAME_JIT_JVM,
	FRAME_JIT_CPYTHON,
	FRAME_JIT_OTHER,
	/* A function of an interpreter, walked in BPF from its own frame chain (src/interp/). */
	FRAME_CPYTHON,
};

struct profile_mapping {
	uint64_t start; /* start and end in the file's address space (as locations), file offset */
	uint64_t limit;
	uint64_t offset;
	uint32_t filename; /* string index */
	uint32_t build_id; /* string index of the lowercase hex build-id; 0 when none */
	uint32_t htlhash;  /* string index of the OTel file id (process.executable.build_id.htlhash:
			    * 32 hex chars of SHA-256 over the first and last 4 KiB and the length);
			    * 0 when the file could not be read */
	bool has_functions; /* at least one location of this mapping was symbolized */
};

#define PROFILE_MAX_PROCESS_ATTRS 24

/* Thread-context attributes kept per sample (the rest are dropped, counted by the builder). */
#define PROFILE_MAX_CTX_ATTRS 8

/* A resource attribute beyond the fixed ones (k8s.*, container.name, systemd.unit, and what
 * relabel rules add): string indices of its key and value. */
struct profile_attr {
	uint32_t key, value;
};

/*
 * What is known of a process: the resource attributes of OTLP, and pprof/Pyroscope labels.
 * Keyed by pid: one entry per process seen in the profile. String indices; 0 = unknown.
 */
struct profile_process {
	uint32_t pid;
	uint32_t service_name; /* OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES)
				* from the process's environment, else the executable name */
	uint32_t exe_name;     /* basename of the executable */
	uint32_t exe_path;     /* the executable's path, as the process sees it */
	uint32_t command_line; /* argv joined by spaces */
	uint32_t container_id; /* from /proc/PID/cgroup; 0 outside containers */
	uint32_t nr_attrs;     /* more resource attributes, in this order */
	struct profile_attr attrs[PROFILE_MAX_PROCESS_ATTRS];
};

struct profile_function {
	uint32_t name;	      /* string index */
	uint32_t system_name; /* string index (the mangled name; same as name when not mangled) */
	uint32_t filename;    /* string index; 0 when unknown */
};

/*
 * One (function, line) of a location. A location whose address lies in inlined code has several:
 * innermost first, the last one the outermost (real, not inlined) function, as pprof's
 * Location.line and OTLP's Location.lines order them.
 */
struct profile_line {
	uint32_t function; /* function index (> 0) */
	int64_t line;	   /* source line in the function's filename; 0 when unknown */
};

struct profile_location {
	uint32_t mapping;  /* mapping index; 0 for kernel frames that have no mapping */
	uint64_t address;  /* file (ELF) address for native frames, the kernel address otherwise */
	uint32_t function; /* function index; 0 when unresolved (then the encoders use `label`) */
	uint32_t label;	   /* string index of "[unknown] <binary>+0xoffset" when function == 0 */
	enum frame_kind kind;
};

/* Labels that a sample carries: the process and thread it came from. */
struct profile_labels {
	uint32_t pid;
	uint32_t tid;
	uint32_t comm;	      /* string index: the process name */
	uint32_t thread_name; /* string index */
	/* Why the thread waited (off-CPU and wall profiles; OTLP thread.state): "running",
	 * "sleeping", "io", "lock", "preempted", ...; 0 for cpu samples. */
	uint32_t thread_state;
	/* What it waited on (contention profiles): a string index such as "futex_wait",
	 * "futex_lock_pi", "mutex", "spinlock", "rwsem_read", and the lock's address (the futex's
	 * user address or the kernel lock's), so that waits on one lock group together. */
	uint32_t wait_kind;
	uint64_t wait_addr;
	/* The OpenTelemetry thread context the sample ran under (OTEP 4947): its trace and span as
	 * 32 and 16 lowercase hex digits (string indices; 0: none), and the attributes its SDK
	 * attached, named by the process's key map. */
	uint32_t trace_id, span_id;
	uint32_t nr_ctx_attrs;
	struct profile_attr ctx_attrs[PROFILE_MAX_CTX_ATTRS];
};

struct profile_sample {
	uint32_t stack; /* stack index */
	struct profile_labels labels;
	int64_t value; /* in the profile's unit (for cpu: nanoseconds = count * period) */
	int64_t count; /* number of raw samples */
};

struct profile;

struct profile_desc {
	const char *sample_type; /* "cpu" */
	const char *sample_unit; /* "nanoseconds" */
	const char *period_type; /* "cpu" */
	const char *period_unit; /* "nanoseconds" */
	int64_t period;		 /* 1e9 / Hz */
	uint64_t time_nanos;	 /* wall clock start of the window */
	uint64_t duration_nanos;
};

/* Returns NULL and sets errno on failure. */
struct profile *profile__new(const struct profile_desc *desc);
void profile__delete(struct profile *p);
const struct profile_desc *profile__desc(const struct profile *p);
/* Record what is known of a process; a second call for the same pid replaces the entry.
 * 0 or -ENOMEM/-EINVAL. */
int profile__set_process(struct profile *p, const struct profile_process *proc);
/* The entry of a pid, or NULL when none was recorded. */
const struct profile_process *profile__find_process(const struct profile *p, uint32_t pid);
size_t profile__nr_processes(const struct profile *p);
/* Entries in the order they were first recorded (no zero entry), idx < nr_processes. */
const struct profile_process *profile__process_at(const struct profile *p, size_t idx);

/* Set the time window once the capture has ended (wall clock start, length). */
void profile__set_window(struct profile *p, uint64_t time_nanos, uint64_t duration_nanos);

/* Interning. Each returns an index (> 0, except the empty string which is 0), or -ENOMEM as
 * a negative value. Identical inputs return the same index.
 * An input equal to the zero entry returns 0; one that names an index outside its table returns
 * -EINVAL. A mapping's identity leaves out has_functions, which is OR-ed into the entry. */
int64_t profile__string(struct profile *p, const char *s);
int64_t profile__mapping(struct profile *p, const struct profile_mapping *m);
int64_t profile__function(struct profile *p, const struct profile_function *f);
int64_t profile__location(struct profile *p, const struct profile_location *l);
/*
 * A location with its lines (innermost first; n may be 0, as for profile__location()). The lines
 * are part of the location's identity. With n > 0, l->function must be 0 or lines[0].function:
 * the stored location's function is the innermost one, so readers that ignore lines still see
 * the function the address is in.
 */
int64_t profile__location_with_lines(struct profile *p, const struct profile_location *l,
				     const struct profile_line *lines, size_t n);
/* A stack is a list of location indices, leaf first. */
int64_t profile__stack(struct profile *p, const uint32_t *locations, size_t n);

/* Add value and count to the sample keyed by (stack, labels), creating it if new. 0 or -ENOMEM. */
int profile__add_sample(struct profile *p, uint32_t stack, const struct profile_labels *labels,
			int64_t value, int64_t count);

/*
 * Read access for encoders. Tables include the zero entry at index 0, the samples too (sample 0
 * has stack 0 and value and count 0): real samples are 1 .. profile__nr_samples() - 1.
 * Out-of-range indices return NULL. Pointers stay valid until the next change to the profile.
 */
size_t profile__nr_strings(const struct profile *p);
const char *profile__string_at(const struct profile *p, uint32_t idx);
size_t profile__nr_mappings(const struct profile *p);
const struct profile_mapping *profile__mapping_at(const struct profile *p, uint32_t idx);
size_t profile__nr_functions(const struct profile *p);
const struct profile_function *profile__function_at(const struct profile *p, uint32_t idx);
size_t profile__nr_locations(const struct profile *p);
const struct profile_location *profile__location_at(const struct profile *p, uint32_t idx);
/* A location's lines, innermost first; *n receives their number (NULL and 0 when it has none:
 * then only its function, or its label, is known). */
const struct profile_line *profile__location_lines(const struct profile *p, uint32_t idx,
						   size_t *n);
/* Location indices of a stack, leaf first; *n receives the depth (NULL and 0 for stack 0). */
const uint32_t *profile__stack_at(const struct profile *p, uint32_t idx, size_t *n);
size_t profile__nr_samples(const struct profile *p);
/*
 * Keep only the samples keep() accepts (render's --span-id, say), in their order; the tables
 * they no longer reach stay, and encoders write only what samples reach. Returns the samples
 * kept.
 */
size_t profile__keep_samples(struct profile *p,
			     bool (*keep)(const struct profile *p, const struct profile_sample *s,
					  void *ctx),
			     void *ctx);
const struct profile_sample *profile__sample_at(const struct profile *p, size_t idx);

/* The display name of a location: its function's name, else its "[unknown] ..." label
 * (else "[unknown]"). */
const char *profile__location_name(const struct profile *p, uint32_t loc_idx);

/* The index of s if interned (0 for ""), else -ENOENT: for encoders, which cannot intern. */
int64_t profile__find_string(const struct profile *p, const char *s);
/* Stacks, the zero (empty) stack included. */
size_t profile__nr_stacks(const struct profile *p);

#endif /* HOSTPROF_PROFILE_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's own metrics in the Prometheus text exposition format, version 0.0.4.
 *
 * The main loop renders the whole exposition once per tick into a struct metrics_text, reading
 * each module's stats function, and hands the finished text to httpd__publish_metrics(). Nothing
 * is shared between threads: the text is a value, built and then copied.
 *
 * Each family is declared once (metrics_text__family writes "# HELP" and "# TYPE"), and its samples
 * follow it directly, as the format requires. By convention a counter's name ends in "_total"
 * (process_cpu_seconds_total); that is documented, not enforced. Only counters and gauges are
 * supported: histograms and summaries need suffixed sample names that nothing here emits.
 *
 * The text has a hard size cap. A write that would exceed it is not made, the text is marked
 * truncated, and every later write fails with -E2BIG, so the text always ends on a whole line and
 * no family silently loses a sample in its middle while later families are still written.
 */
#ifndef HOSTPROF_METRICS_H
#define HOSTPROF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_TEXT_DEFAULT_MAX (4u << 20) /* 4 MiB */

enum metrics_type {
	METRICS_COUNTER,
	METRICS_GAUGE,
};

struct metrics_label {
	const char *name;  /* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved) */
	const char *value; /* any bytes; escaped, and invalid UTF-8 replaced by U+FFFD */
};

/*
 * Read buf, len and truncated; the other fields are private. buf is NUL-terminated (NULL while
 * nothing was written).
 */
struct metrics_text {
	char *buf;
	size_t len;
	bool truncated;

	size_t alloc;
	size_t max_bytes;
	/* Families already declared (open addressing, owned names), and the one samples go to. */
	char **families;
	size_t families_size;
	size_t nr_families;
	const char *current;
};

/* max_bytes: the cap on len; 0 means METRICS_TEXT_DEFAULT_MAX. Allocates nothing yet. */
void metrics_text__init(struct metrics_text *m, size_t max_bytes);
/* Empty the text and forget the families, keeping the buffer: one call per tick. */
void metrics_text__reset(struct metrics_text *m);
void metrics_text__release(struct metrics_text *m);

/*
 * Declare a family: "# HELP name help" (left out when help is NULL or "") and "# TYPE name type".
 * Later samples must use this name until the next family. Returns 0; -EINVAL for an invalid name
 * ([a-zA-Z_:][a-zA-Z0-9_:]*) or type; -EEXIST when the family was declared before; -E2BIG when
 * the cap is reached (now or earlier); -ENOMEM. Nothing is written on failure.
 */
int metrics_text__family(struct metrics_text *m, const char *name, enum metrics_type type,
			 const char *help);

/*
 * One sample line: name{label="value",...} value. name must be the current family's. Label names
 * must be valid and distinct. Doubles: integral values below 1e17 print as exact integers, others
 * in the shortest form that reads back to the same double; +Inf, -Inf and NaN as the format spells
 * them. Returns 0, or the errors of metrics_text__family (-EINVAL also for a name that is not the
 * current family's); nothing is written on failure.
 */
int metrics_text__sample(struct metrics_text *m, const char *name,
			 const struct metrics_label *labels, size_t nr_labels, double value);
/* The same with an exact 64-bit integer value. */
int metrics_text__sample_u64(struct metrics_text *m, const char *name,
			     const struct metrics_label *labels, size_t nr_labels, uint64_t value);

/* Shorthand: a family with one unlabelled sample. */
int metrics_text__single(struct metrics_text *m, const char *name, enum metrics_type type,
			 const char *help, double value);

/* Validation, exposed for the callers that build names from configuration. */
bool metrics__valid_metric_name(const char *name);
bool metrics__valid_label_name(const char *name);

/* The process's own facts, for the standard process_* metrics. */
struct metrics_self {
	double cpu_seconds;	   /* user + system time */
	uint64_t resident_bytes;   /* RSS */
	uint64_t virtual_bytes;	   /* address space size */
	double start_time_seconds; /* since the Unix epoch; 0 when unknown */
	uint64_t open_fds;	   /* 0 when unknown */
	uint64_t max_fds;	   /* the soft RLIMIT_NOFILE; 0 when unknown or unlimited */
	uint64_t threads;
};

/*
 * Fill *out from /proc/self. 0, or -errno when /proc/self/stat cannot be read, -EINVAL when it
 * cannot be parsed. The optional facts (start time, fds) are 0 when their files are missing.
 */
int metrics__self(struct metrics_self *out);
/* The same from <proc_root>/self/{stat,fd,limits} and <proc_root>/stat: for fixtures. */
int metrics__self_read(const char *proc_root, struct metrics_self *out);

/*
 * Write the standard families: process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_start_time_seconds, process_open_fds, process_max_fds
 * (those three only when known) and process_threads. 0 or the first error.
 */
int metrics__write_self(struct metrics_text *m, const struct metrics_self *s);

#endif /* HOSTPROF_METRICS_H */

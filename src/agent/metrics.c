// SPDX-License-Identifier: BSD-2-Clause
#include "agent/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"

#define METRICS_TEXT_MIN_ALLOC 4096
#define METRICS_FAMILIES_MIN 64

void metrics_text__init(struct metrics_text *m, size_t max_bytes)
{
	memset(m, 0, sizeof(*m));
	m->max_bytes = max_bytes ? max_bytes : METRICS_TEXT_DEFAULT_MAX;
}

static void families_clear(struct metrics_text *m)
{
	for (size_t i = 0; i < m->families_size; i++) {
		free(m->families[i]);
		m->families[i] = NULL;
	}
	m->nr_families = 0;
	m->current = NULL;
}

void metrics_text__reset(struct metrics_text *m)
{
	families_clear(m);
	m->len = 0;
	m->truncated = false;
	if (m->buf)
		m->buf[0] = '\0';
}

void metrics_text__release(struct metrics_text *m)
{
	if (!m)
		return;
	families_clear(m);
	free(m->families);
	free(m->buf);
	metrics_text__init(m, m->max_bytes);
}

/* --- names --- */

static bool name_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool name_char(unsigned char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

bool metrics__valid_metric_name(const char *name)
{
	if (!name || !(name_start(*name) || *name == ':'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!name_char(*p) && *p != ':')
			return false;
	return true;
}

bool metrics__valid_label_name(const char *name)
{
	if (!name || !name_start(*name))
		return false;
	/* "__" names are reserved for Prometheus's own labels (__name__, __address__). */
	if (name[0] == '_' && name[1] == '_')
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!name_char(*p))
			return false;
	return true;
}

/* --- the family set: open addressing over owned names --- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static char **families_slot(char **table, size_t size, const char *name)
{
	size_t i = hash_str(name) & (size - 1);

	while (table[i] && strcmp(table[i], name) != 0)
		i = (i + 1) & (size - 1);
	return &table[i];
}

static int families_grow(struct metrics_text *m)
{
	size_t size = m->families_size ? m->families_size * 2 : METRICS_FAMILIES_MIN;
	char **table = calloc(size, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < m->families_size; i++)
		if (m->families[i])
			*families_slot(table, size, m->families[i]) = m->families[i];
	free(m->families);
	m->families = table;
	m->families_size = size;
	return 0;
}

/* --- the buffer: every line is appended whole or not at all --- */

struct line {
	struct metrics_text *m;
	size_t start; /* where the line began: rolled back to on failure */
	int err;
};

static void line_begin(struct line *l, struct metrics_text *m)
{
	l->m = m;
	l->start = m->len;
	l->err = 0;
}

static int reserve(struct metrics_text *m, size_t n)
{
	size_t need, alloc;
	char *buf;

	if (n > m->max_bytes - m->len)
		return -E2BIG;
	need = m->len + n + 1; /* and the NUL */
	if (need <= m->alloc)
		return 0;
	alloc = m->alloc ? m->alloc : METRICS_TEXT_MIN_ALLOC;
	while (alloc < need)
		alloc *= 2;
	if (alloc > m->max_bytes + 1)
		alloc = m->max_bytes + 1;
	buf = realloc(m->buf, alloc);
	if (!buf)
		return -ENOMEM;
	m->buf = buf;
	m->alloc = alloc;
	return 0;
}

static void put(struct line *l, const char *s, size_t n)
{
	struct metrics_text *m = l->m;

	if (l->err)
		return;
	l->err = reserve(m, n);
	if (l->err)
		return;
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
}

static void puts_(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

/*
 * Escape for a label value (quote: backslash, quote, newline) or a HELP text (backslash,
 * newline). Prometheus rejects a scrape with invalid UTF-8, and label values come from process
 * names and paths, which are bytes: each invalid byte becomes U+FFFD.
 */
static void put_escaped(struct line *l, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), run = 0;

	for (size_t i = 0; i < n;) {
		size_t seq = utf8__seq(p + i, n - i);
		const char *esc = NULL;

		if (seq == 0)
			esc = UTF8_REPLACEMENT;
		else if (p[i] == '\\')
			esc = "\\\\";
		else if (p[i] == '\n')
			esc = "\\n";
		else if (p[i] == '"' && quote)
			esc = "\\\"";
		if (!esc) {
			run += seq;
			i += seq;
			continue;
		}
		put(l, (const char *)p + i - run, run);
		puts_(l, esc);
		run = 0;
		i += seq ? seq : 1;
	}
	put(l, (const char *)p + n - run, run);
}

static int line_end(struct line *l)
{
	struct metrics_text *m = l->m;

	if (!l->err)
		return 0;
	m->len = l->start;
	if (m->buf)
		m->buf[m->len] = '\0';
	if (l->err == -E2BIG)
		m->truncated = true;
	return l->err;
}

/* --- families and samples --- */

int metrics_text__family(struct metrics_text *m, const char *name, enum metrics_type type,
			 const char *help)
{
	const char *type_name;
	struct line l;
	char **slot;
	char *copy;
	int err;

	if (!metrics__valid_metric_name(name))
		return -EINVAL;
	switch (type) {
	case METRICS_COUNTER:
		type_name = "counter";
		break;
	case METRICS_GAUGE:
		type_name = "gauge";
		break;
	default:
		return -EINVAL;
	}
	if (m->truncated)
		return -E2BIG;
	if (m->families_size) {
		slot = families_slot(m->families, m->families_size, name);
		if (*slot)
			return -EEXIST;
	}
	/* Keep the load at most one half, so that probing stays short. */
	if ((m->nr_families + 1) * 2 > m->families_size) {
		err = families_grow(m);
		if (err)
			return err;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;

	line_begin(&l, m);
	if (help && *help) {
		puts_(&l, "# HELP ");
		puts_(&l, name);
		puts_(&l, " ");
		put_escaped(&l, help, false);
		puts_(&l, "\n");
	}
	puts_(&l, "# TYPE ");
	puts_(&l, name);
	puts_(&l, " ");
	puts_(&l, type_name);
	puts_(&l, "\n");
	err = line_end(&l);
	if (err) {
		free(copy);
		return err;
	}
	slot = families_slot(m->families, m->families_size, name);
	*slot = copy;
	m->nr_families++;
	m->current = copy;
	return 0;
}

/* Shortest text that strtod reads back as v; exact digits for integral values below 1e17. */
static void format_double(char *buf, size_t size, double v)
{
	if (isnan(v)) {
		snprintf(buf, size, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == 0) {
		snprintf(buf, size, "0"); /* also for -0 */
		return;
	}
	if (fabs(v) < 1e17 && v == trunc(v)) {
		snprintf(buf, size, "%.0f", v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static int write_sample(struct metrics_text *m, const char *name,
			const struct metrics_label *labels, size_t nr_labels, const char *value)
{
	struct line l;

	if (!metrics__valid_metric_name(name) || (nr_labels && !labels))
		return -EINVAL;
	for (size_t i = 0; i < nr_labels; i++) {
		if (!metrics__valid_label_name(labels[i].name) || !labels[i].value)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (strcmp(labels[i].name, labels[j].name) == 0)
				return -EINVAL;
	}
	if (m->truncated)
		return -E2BIG;
	/* Samples follow their own family's header: the format has no way to interleave. */
	if (!m->current || strcmp(m->current, name) != 0)
		return -EINVAL;

	line_begin(&l, m);
	puts_(&l, name);
	if (nr_labels) {
		puts_(&l, "{");
		for (size_t i = 0; i < nr_labels; i++) {
			if (i)
				puts_(&l, ",");
			puts_(&l, labels[i].name);
			puts_(&l, "=\"");
			put_escaped(&l, labels[i].value, true);
			puts_(&l, "\"");
		}
		puts_(&l, "}");
	}
	puts_(&l, " ");
	puts_(&l, value);
	puts_(&l, "\n");
	return line_end(&l);
}

int metrics_text__sample(struct metrics_text *m, const char *name,
			 const struct metrics_label *labels, size_t nr_labels, double value)
{
	char text[64];

	format_double(text, sizeof(text), value);
	return write_sample(m, name, labels, nr_labels, text);
}

int metrics_text__sample_u64(struct metrics_text *m, const char *name,
			     const struct metrics_label *labels, size_t nr_labels, uint64_t value)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64, value);
	return write_sample(m, name, labels, nr_labels, text);
}

int metrics_text__single(struct metrics_text *m, const char *name, enum metrics_type type,
			 const char *help, double value)
{
	int err = metrics_text__family(m, name, type, help);

	return err ? err : metrics_text__sample(m, name, NULL, 0, value);
}

/* --- the process's own facts --- */

/* Read a small file whole, NUL-terminated. Returns its length, or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return len;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	return 0;
}

/*
 * /proc/PID/stat: "pid (comm) state ppid ...". comm may hold spaces and parentheses, so fields
 * are counted from the last ')'. Field numbers below are proc(5)'s.
 */
enum {
	STAT_UTIME = 14,
	STAT_STIME = 15,
	STAT_THREADS = 20,
	STAT_STARTTIME = 22,
	STAT_VSIZE = 23,
	STAT_RSS = 24,
};

static int parse_stat(char *text, uint64_t *fields, int max_field)
{
	char *p = strrchr(text, ')');
	int field = 3;

	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	while (*p && *p != '\n' && field <= max_field) {
		char *end = strchr(p, ' ');

		if (field >= STAT_UTIME && parse_u64(p, &fields[field]) != 0) {
			/* Fields we do not read (priority, nice) may be negative. */
			if (field == STAT_UTIME || field == STAT_STIME || field == STAT_THREADS ||
			    field >= STAT_STARTTIME)
				return -EINVAL;
		}
		field++;
		if (!end)
			break;
		p = end + 1;
	}
	return field > max_field ? 0 : -EINVAL;
}

static uint64_t count_fds(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return 0;
	/* The directory's own descriptor is counted, as Prometheus's client libraries do. */
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static uint64_t parse_max_fds(const char *limits)
{
	const char *p = strstr(limits, "\nMax open files ");
	uint64_t soft;

	if (!p)
		return 0;
	p += strlen("\nMax open files ");
	while (*p == ' ')
		p++;
	return parse_u64(p, &soft) == 0 ? soft : 0;
}

static double parse_btime(const char *stat)
{
	const char *p = strstr(stat, "\nbtime ");
	uint64_t btime;

	if (!p)
		return 0;
	return parse_u64(p + strlen("\nbtime "), &btime) == 0 ? (double)btime : 0;
}

int metrics__self_read(const char *proc_root, struct metrics_self *out)
{
	uint64_t fields[STAT_RSS + 1] = {0};
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	char path[512], buf[4096];
	double btime;
	ssize_t n;
	int err;

	memset(out, 0, sizeof(*out));
	if (ticks <= 0 || page <= 0)
		return -EINVAL;

	snprintf(path, sizeof(path), "%s/self/stat", proc_root);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	err = parse_stat(buf, fields, STAT_RSS);
	if (err)
		return err;
	out->cpu_seconds = (double)(fields[STAT_UTIME] + fields[STAT_STIME]) / ticks;
	out->threads = fields[STAT_THREADS];
	out->virtual_bytes = fields[STAT_VSIZE];
	out->resident_bytes = fields[STAT_RSS] * (uint64_t)page;

	snprintf(path, sizeof(path), "%s/stat", proc_root);
	btime = read_small(path, buf, sizeof(buf)) > 0 ? parse_btime(buf) : 0;
	if (btime > 0)
		out->start_time_seconds = btime + (double)fields[STAT_STARTTIME] / ticks;

	snprintf(path, sizeof(path), "%s/self/fd", proc_root);
	out->open_fds = count_fds(path);

	snprintf(path, sizeof(path), "%s/self/limits", proc_root);
	if (read_small(path, buf, sizeof(buf)) > 0)
		out->max_fds = parse_max_fds(buf);
	return 0;
}

int metrics__self(struct metrics_self *out)
{
	return metrics__self_read("/proc", out);
}

int metrics__write_self(struct metrics_text *m, const struct metrics_self *s)
{
	int err;

	err = metrics_text__single(m, "process_cpu_seconds_total", METRICS_COUNTER,
				   "User and system CPU time of this process, in seconds.",
				   s->cpu_seconds);
	if (!err)
		err = metrics_text__single(m, "process_resident_memory_bytes", METRICS_GAUGE,
					   "Resident set size of this process, in bytes.",
					   (double)s->resident_bytes);
	if (!err)
		err = metrics_text__single(m, "process_virtual_memory_bytes", METRICS_GAUGE,
					   "Virtual address space of this process, in bytes.",
					   (double)s->virtual_bytes);
	if (!err && s->start_time_seconds > 0)
		err = metrics_text__single(m, "process_start_time_seconds", METRICS_GAUGE,
					   "When this process started, in seconds since the epoch.",
					   s->start_time_seconds);
	if (!err && s->open_fds)
		err = metrics_text__single(m, "process_open_fds", METRICS_GAUGE,
					   "Open file descriptors of this process.",
					   (double)s->open_fds);
	if (!err && s->max_fds)
		err = metrics_text__single(m, "process_max_fds", METRICS_GAUGE,
					   "The soft limit on open file descriptors.",
					   (double)s->max_fds);
	if (!err)
		err = metrics_text__single(m, "process_threads", METRICS_GAUGE,
					   "Threads of this process.", (double)s->threads);
	return err;
}

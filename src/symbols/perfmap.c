// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/perfmap.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/line_read.h"
#include "base/safe_open.h"
#include "base/search.h"
#include "base/vec.h"

struct pm_entry {
	uint64_t start, end;
	uint32_t name; /* offset into names */
	uint32_t line; /* line order: the later of two entries for one start wins */
	uint8_t kind;
};

struct perfmap {
	struct pm_entry *v; /* sorted by start, one entry per start */
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t bad_lines;
	size_t long_lines; /* of which over the line cap */
	bool truncated;
};

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

enum frame_kind perfmap__classify(const char *name)
{
	static const char *const v8[] = {
		"LazyCompile:", "Function:",	    "JS:",   "Builtin:", "Interpreted", "Script:",
		"Eval:",	"BytecodeHandler:", "Stub:", "RegExp:",	 "Handler:",	"Baseline:",
		"Maglev:",	"Turbofan:"};

	if (has_prefix(name, "py::"))
		return FRAME_JIT_CPYTHON;
	for (size_t i = 0; i < sizeof(v8) / sizeof(v8[0]); i++)
		if (has_prefix(name, v8[i]))
			return FRAME_JIT_V8;
	/* V8 marks a function's tier with a leading ~ (interpreted/baseline) or * (optimized). */
	if ((name[0] == '~' || name[0] == '*') && name[1])
		return FRAME_JIT_V8;
	/* JVM names: "java.lang.String::hashCode" or type signatures "Ljava/lang/String;". */
	if (strstr(name, "::") || (name[0] == 'L' && strchr(name, '/') && strchr(name, ';')))
		return FRAME_JIT_JVM;
	return FRAME_JIT_OTHER;
}

/* A hex number with an optional 0x (jcmd writes one, V8 does not), followed by a blank. */
static bool parse_hex(char **p, uint64_t *out)
{
	char *end;

	if (!isxdigit((unsigned char)**p))
		return false;
	errno = 0;
	*out = strtoull(*p, &end, 16);
	if (errno || end == *p || (*end != ' ' && *end != '\t'))
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	*p = end;
	return true;
}

static int add_line(struct perfmap *m, char *line, size_t len, uint32_t lineno)
{
	uint64_t start, size;
	char *p = line;
	size_t name_len;

	while (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (!parse_hex(&p, &start) || !parse_hex(&p, &size) || !size || start + size < start ||
	    !*p || strlen(p) != (size_t)(line + len - p)) {
		m->bad_lines++;
		return 0;
	}
	name_len = strlen(p) + 1;
	if (m->names_len + name_len > UINT32_MAX) {
		m->truncated = true;
		return 0;
	}
	if (VEC_RESERVE(m->v, m->cap, m->n + 1) ||
	    VEC_RESERVE(m->names, m->names_cap, m->names_len + name_len))
		return -ENOMEM;
	memcpy(m->names + m->names_len, p, name_len);
	m->v[m->n++] = (struct pm_entry){.start = start,
					 .end = start + size,
					 .name = (uint32_t)m->names_len,
					 .line = lineno,
					 .kind = (uint8_t)perfmap__classify(p)};
	m->names_len += name_len;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Sort, keep the last line written for each start (a JIT reuses freed code space), and give names
 * that tell no runtime the runtime that most of the map's names tell.
 */
static void finish(struct perfmap *m)
{
	size_t counts[FRAME_JIT_OTHER + 1] = {0}, out = 0;
	enum frame_kind major = FRAME_JIT_OTHER;

	/* An empty map has no array at all, and qsort's base must not be NULL even for 0. */
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	for (size_t i = 0; i < m->n; i++) {
		if (out && m->v[out - 1].start == m->v[i].start)
			out--;
		m->v[out++] = m->v[i];
	}
	m->n = out;
	for (size_t i = 0; i < m->n; i++)
		counts[m->v[i].kind]++;
	for (int k = FRAME_JIT_V8; k < FRAME_JIT_OTHER; k++)
		if (counts[k] > (major == FRAME_JIT_OTHER ? 0 : counts[major]))
			major = (enum frame_kind)k;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].kind == FRAME_JIT_OTHER)
			m->v[i].kind = (uint8_t)major;
}

struct perfmap *perfmap__parse(FILE *f, const struct perfmap_limits *limits)
{
	size_t max_entries = limits ? limits->max_entries : PERFMAP_MAX_ENTRIES;
	size_t max_bytes = limits ? limits->max_bytes : PERFMAP_MAX_BYTES;
	size_t max_line = limits && limits->max_line ? limits->max_line : PERFMAP_MAX_LINE;
	struct perfmap *m = calloc(1, sizeof(*m));
	struct line_reader *r = m ? line_reader__new(f, max_line, max_bytes) : NULL;
	uint32_t lineno = 0;
	char *line;
	ssize_t len;
	int err = 0;

	if (!r) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	for (;;) {
		len = line_reader__next(r, &line);
		if (len == -E2BIG) {
			/* Skipped unread: what a name longer than the cap would cost is not paid.
			 */
			m->bad_lines++;
			m->long_lines++;
			continue;
		}
		if (len < 0)
			break;
		if (m->n >= max_entries) {
			m->truncated = true;
			break;
		}
		err = add_line(m, line, (size_t)len, lineno++);
		if (err)
			break;
	}
	/* A line cut by the byte cap is not a line: it is dropped, not counted as bad. */
	if (len == -EFBIG)
		m->truncated = true;
	else if (len == -EIO)
		err = -EIO;
	line_reader__delete(r);
	if (err) {
		perfmap__delete(m);
		errno = -err;
		return NULL;
	}
	finish(m);
	return m;
}

struct perfmap *perfmap__load(const char *path, const struct perfmap_limits *limits)
{
	struct perfmap *m;
	FILE *f;
	int fd, err;

	/* Any size: a JIT appends for ever. What is read is capped (max_bytes), not the file. */
	fd = safe_open__nofollow(path, UINT64_MAX, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	m = perfmap__parse(f, limits);
	err = errno;
	fclose(f);
	if (m && m->long_lines) {
		char what[96];

		snprintf(what, sizeof(what), "%zu line%s over %zu bytes skipped", m->long_lines,
			 m->long_lines == 1 ? "" : "s",
			 limits && limits->max_line ? limits->max_line : (size_t)PERFMAP_MAX_LINE);
		safe_open__refused(SAFE_OPEN_LINE_LONG, path, what);
	}
	errno = err;
	return m;
}

void perfmap__delete(struct perfmap *m)
{
	if (!m)
		return;
	free(m->v);
	free(m->names);
	free(m);
}

bool perfmap__find(const struct perfmap *m, uint64_t addr, struct perfmap_sym *out)
{
	const struct pm_entry *e;
	size_t n;

	if (!m)
		return false;
	/* The last entry starting at or below addr. */
	n = SEARCH_UPPER_BOUND(m->v, m->n, start, addr);
	if (!n || addr >= m->v[n - 1].end)
		return false;
	e = &m->v[n - 1];
	out->start = e->start;
	out->end = e->end;
	out->name = m->names + e->name;
	out->kind = (enum frame_kind)e->kind;
	return true;
}

size_t perfmap__nr_entries(const struct perfmap *m)
{
	return m ? m->n : 0;
}

size_t perfmap__bad_lines(const struct perfmap *m)
{
	return m ? m->bad_lines : 0;
}

bool perfmap__truncated(const struct perfmap *m)
{
	return m && m->truncated;
}

size_t perfmap__memory(const struct perfmap *m)
{
	return m ? sizeof(*m) + m->cap * sizeof(*m->v) + m->names_cap : 0;
}

/* The process's PID in its own namespace: the last number of the NSpid line. */
static pid_t ns_pid(const char *proc_root, pid_t pid)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	pid_t found = pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (getline(&line, &cap, f) > 0) {
		char *p = line + 6, *end;
		long v;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			v = strtol(p, &end, 10);
			if (end == p)
				break;
			/* A PID is an int: a value past it is not one (and cast, would name another
			 * process's map). */
			if (v > 0 && v <= INT_MAX)
				found = (pid_t)v;
			p = end;
		}
		break;
	}
	free(line);
	fclose(f);
	return found;
}

int perfmap__path(const char *proc_root, pid_t pid, char *buf, size_t len)
{
	int n;

	if (pid <= 0)
		return -EINVAL;
	n = snprintf(buf, len, "%s/%d/root/tmp/perf-%d.map", proc_root, (int)pid,
		     (int)ns_pid(proc_root, pid));
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

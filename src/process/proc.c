// SPDX-License-Identifier: BSD-2-Clause
/*
 * The process table. Each entry is a snapshot of one process; the table is a chained hash keyed
 * by PID with an intrusive LRU list, so lookup, insertion and eviction are O(1) and the memory is
 * bounded by max_procs snapshots.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/proc.h"

#include "base/chain.h"
#include "base/clock.h"
#include "base/file_read.h"
#include "base/hex.h"
#include "base/lru.h"
#include "base/search.h"
#include "base/vec.h"
#include "process/process_context.h"

/* ------------------------------------------------------------------------------------------ */
/* /proc/PID/maps parsing */

static const char *parse_dec(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		unsigned int d = *s - '0';

		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (!digits)
		return NULL;
	*out = v;
	return s;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The kernel separates columns with one space, but be lenient: fixtures may be hand-written. */
static const char *expect_blank(const char *s)
{
	if (*s != ' ' && *s != '\t')
		return NULL;
	return skip_blanks(s);
}

static enum mapping_kind special_kind(const char *name)
{
	if (!strcmp(name, "[heap]"))
		return MAPPING_HEAP;
	/* Older kernels also printed [stack:TID] for thread stacks. */
	if (!strcmp(name, "[stack]") || !strncmp(name, "[stack:", 7))
		return MAPPING_STACK;
	if (!strcmp(name, "[vdso]"))
		return MAPPING_VDSO;
	if (!strcmp(name, "[vsyscall]"))
		return MAPPING_VSYSCALL;
	return MAPPING_SPECIAL;
}

/*
 * Parse one line (without its newline) into m. Returns 0, -EINVAL for a malformed line or -ENOMEM.
 * On success m->path is owned by m.
 */
static int parse_line(const char *line, struct mapping *m)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	uint64_t maj, min;
	const char *s = line;
	size_t len;

	memset(m, 0, sizeof(*m));
	s = hex__parse_u64(s, &m->start);
	if (!s || *s++ != '-')
		return -EINVAL;
	s = hex__parse_u64(s, &m->end);
	if (!s || m->end <= m->start)
		return -EINVAL;
	s = expect_blank(s);
	if (!s)
		return -EINVAL;

	if ((s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
	    (s[2] != 'x' && s[2] != '-') || (s[3] != 'p' && s[3] != 's'))
		return -EINVAL;
	m->readable = s[0] == 'r';
	m->writable = s[1] == 'w';
	m->executable = s[2] == 'x';
	m->shared = s[3] == 's';
	s = expect_blank(s + 4);
	if (!s)
		return -EINVAL;

	s = hex__parse_u64(s, &m->pgoff);
	if (!s || !(s = expect_blank(s)))
		return -EINVAL;
	s = hex__parse_u64(s, &maj);
	if (!s || *s++ != ':')
		return -EINVAL;
	s = hex__parse_u64(s, &min);
	if (!s || maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	m->dev_major = maj;
	m->dev_minor = min;
	s = expect_blank(s);
	if (!s)
		return -EINVAL;
	s = parse_dec(s, &m->inode);
	if (!s)
		return -EINVAL;

	/* Anonymous mappings end right after the inode (perhaps with padding). */
	if (*s != '\0' && !(s = expect_blank(s)))
		return -EINVAL;
	if (*s == '\0') {
		m->kind = MAPPING_ANON;
		return 0;
	}

	/* The path is the rest of the line: file names may contain spaces, even trailing ones. */
	len = strlen(s);
	if (s[0] == '[' && s[len - 1] == ']') {
		m->kind = special_kind(s);
	} else {
		m->kind = MAPPING_FILE;
		if (len > dlen && !strcmp(s + len - dlen, deleted)) {
			m->deleted = true;
			len -= dlen;
		}
	}
	m->path = strndup(s, len);
	if (!m->path)
		return -ENOMEM;
	return 0;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

int maps__parse(struct maps *out, FILE *f, size_t *bad_lines)
{
	struct mapping *v = NULL;
	size_t n = 0, cap = 0, bad = 0;
	bool sorted = true;
	char *line = NULL;
	size_t line_cap = 0;
	ssize_t len;
	int err = 0;

	out->v = NULL;
	out->n = 0;
	errno = 0;
	while ((len = getline(&line, &line_cap, f)) >= 0) {
		struct mapping m;

		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		/* An embedded NUL would silently cut the path short: count the line as bad. */
		if (strlen(line) != (size_t)len) {
			bad++;
			continue;
		}
		err = parse_line(line, &m);
		if (err == -EINVAL) {
			bad++;
			err = 0;
			continue;
		}
		if (err)
			goto fail;
		if (VEC_RESERVE(v, cap, n + 1)) {
			free(m.path);
			err = -ENOMEM;
			goto fail;
		}
		if (n && v[n - 1].start > m.start)
			sorted = false;
		v[n++] = m;
	}
	if (ferror(f)) {
		err = errno ? -errno : -EIO;
		goto fail;
	}
	free(line);

	/* The kernel prints maps in address order; fixtures and concatenations may not be. */
	if (!sorted)
		qsort(v, n, sizeof(*v), mapping_cmp);
	out->v = v;
	out->n = n;
	if (bad_lines)
		*bad_lines = bad;
	return 0;

fail:
	free(line);
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	if (bad_lines)
		*bad_lines = bad;
	return err;
}

const struct mapping *maps__find(const struct maps *maps, uint64_t addr)
{
	size_t n;

	if (!maps || !maps->n)
		return NULL;
	/* The last mapping whose start is <= addr. */
	n = SEARCH_UPPER_BOUND(maps->v, maps->n, start, addr);
	if (n && addr < maps->v[n - 1].end)
		return &maps->v[n - 1];
	return NULL;
}

void maps__release(struct maps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->n; i++)
		free(maps->v[i].path);
	free(maps->v);
	maps->v = NULL;
	maps->n = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The process table */

struct proc_node {
	struct proc proc;	 /* first: callers get &node->proc */
	bool gone_at_last_sweep; /* see proc_table__retire_exited() */
	struct proc_node *hnext; /* hash chain */
	struct lru_link lru;
};

struct proc_table {
	char *root;
	size_t max_procs;
	size_t n;
	struct proc_node **buckets;
	unsigned int bucket_bits; /* 1 << bucket_bits buckets */
	struct lru lru;		  /* the oldest is evicted first */
	bool maps_only;		  /* see proc_table__maps_only() */
};

/* Beyond this many buckets, chains just grow longer: the table stays usable for huge caps. */
#define PROC_MAX_BUCKET_BITS 16

static size_t bucket_of(const struct proc_table *t, pid_t pid)
{
	/* Fibonacci hashing: the top bits of the product mix every bit of the PID. */
	return ((uint32_t)pid * 2654435769u) >> (32 - t->bucket_bits);
}

struct proc_table *proc_table__new(const char *proc_root, size_t max_procs)
{
	struct proc_table *t;
	size_t len;

	if (!proc_root || !*proc_root || !max_procs) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->root = strdup(proc_root);
	if (!t->root)
		goto fail;
	/* "/proc/" and "/proc" name the same root; keep "/" itself intact. */
	len = strlen(t->root);
	while (len > 1 && t->root[len - 1] == '/')
		t->root[--len] = '\0';
	t->max_procs = max_procs;
	t->bucket_bits = 4;
	while (((size_t)1 << t->bucket_bits) < max_procs && t->bucket_bits < PROC_MAX_BUCKET_BITS)
		t->bucket_bits++;
	t->buckets = calloc((size_t)1 << t->bucket_bits, sizeof(*t->buckets));
	if (!t->buckets)
		goto fail;
	return t;

fail:
	free(t->root);
	free(t);
	errno = ENOMEM;
	return NULL;
}

static void proc_clear(struct proc *p)
{
	maps__release(&p->maps);
	free(p->exe_path);
	free(p->cmdline);
	free(p->service_name);
	free(p->systemd_unit);
	p->exe_path = p->cmdline = p->service_name = p->systemd_unit = NULL;
	p->cmdline_len = 0;
	process_context__free(p->otel_ctx);
	p->otel_ctx = NULL;
}

static struct proc_node *node_of(const struct lru_link *l)
{
	return LRU_ENTRY(l, struct proc_node, lru);
}

void proc_table__delete(struct proc_table *t)
{
	struct proc_node *node;

	if (!t)
		return;
	while ((node = node_of(lru__oldest(&t->lru)))) {
		lru__unlink(&t->lru, &node->lru);
		proc_clear(&node->proc);
		free(node);
	}
	free(t->buckets);
	free(t->root);
	free(t);
}

size_t proc_table__size(const struct proc_table *t)
{
	return t ? t->n : 0;
}

static struct proc_node *table_lookup(const struct proc_table *t, pid_t pid)
{
	struct proc_node *node;

	for (node = t->buckets[bucket_of(t, pid)]; node; node = node->hnext)
		if (node->proc.pid == pid)
			return node;
	return NULL;
}

static void table_remove(struct proc_table *t, struct proc_node *node)
{
	CHAIN_UNLINK(&t->buckets[bucket_of(t, node->proc.pid)], node, hnext);
	lru__unlink(&t->lru, &node->lru);
	t->n--;
	proc_clear(&node->proc);
	free(node);
}

/* Put a new node in the table, as the most recently used; the least recently used goes when
 * the table is full. */
static void table_link(struct proc_table *t, struct proc_node *node)
{
	if (t->n >= t->max_procs)
		table_remove(t, node_of(lru__oldest(&t->lru)));
	CHAIN_PUSH(&t->buckets[bucket_of(t, node->proc.pid)], node, hnext);
	lru__push_front(&t->lru, &node->lru);
	t->n++;
}

static int proc_path(const struct proc_table *t, pid_t pid, const char *file, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%d/%s", t->root, (int)pid, file);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

void proc_table__maps_only(struct proc_table *t)
{
	t->maps_only = true;
}

size_t proc_table__retire_exited(struct proc_table *t)
{
	struct proc_node *node, *next;
	size_t retired = 0;

	for (node = node_of(lru__newest(&t->lru)); node; node = next) {
		char path[PATH_MAX];
		struct stat st;
		bool gone = proc_path(t, node->proc.pid, "", path, sizeof(path)) == 0 &&
			    stat(path, &st) != 0 && errno == ENOENT;

		next = node_of(node->lru.older);
		if (gone && node->gone_at_last_sweep) {
			table_remove(t, node);
			retired++;
		} else {
			node->gone_at_last_sweep = gone;
		}
	}
	return retired;
}

/* A process that is gone shows as a missing directory; a race with exit may also give ESRCH. */
static int gone_to_esrch(int err)
{
	return err == -ENOENT || err == -ESRCH ? -ESRCH : err;
}

static int read_maps(const struct proc_table *t, pid_t pid, struct maps *out)
{
	char path[PATH_MAX];
	FILE *f;
	int err;

	err = proc_path(t, pid, "maps", path, sizeof(path));
	if (err)
		return err;
	f = fopen(path, "re");
	if (!f)
		return gone_to_esrch(-errno);
	err = maps__parse(out, f, NULL);
	fclose(f);
	return gone_to_esrch(err);
}

/* comm is optional: on failure the previous value stays (empty for a new process). */
static void read_comm(const struct proc_table *t, pid_t pid, char comm[16])
{
	char path[PATH_MAX], buf[16];
	ssize_t n;
	int fd;

	if (proc_path(t, pid, "comm", path, sizeof(path)))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	memcpy(comm, buf, sizeof(buf));
}

/* The exe link is unreadable for other users' processes and kernel threads: NULL then. */
static char *read_exe(const struct proc_table *t, pid_t pid)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	if (proc_path(t, pid, "exe", path, sizeof(path)))
		return NULL;
	n = readlink(path, target, sizeof(target));
	/* n == sizeof(target) means the target was truncated: better none than a wrong one. */
	if (n <= 0 || (size_t)n >= sizeof(target))
		return NULL;
	target[n] = '\0';
	return strdup(target);
}

/* ---- identity: command line, declared service, container ---- */

static bool is_hex_id(const char *s, size_t n)
{
	if (n != PROC_CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* One path component: "docker-ID.scope", "cri-containerd-ID.scope", "crio-ID.scope", or "ID". */
static bool component_id(const char *s, size_t n, char out[PROC_CONTAINER_ID_LEN + 1])
{
	static const char *const prefixes[] = {"docker-",     "cri-containerd-", "crio-",
					       "containerd-", "libpod-",	 ""};
	static const char scope[] = ".scope";

	if (n > sizeof(scope) - 1 && !memcmp(s + n - (sizeof(scope) - 1), scope, sizeof(scope) - 1))
		n -= sizeof(scope) - 1;
	/* CRI-O's monitor process lives beside the container, not in it. */
	if (n >= 12 && !memcmp(s, "crio-conmon-", 12))
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);

		if (n >= pl && !memcmp(s, prefixes[i], pl) && is_hex_id(s + pl, n - pl)) {
			memcpy(out, s + pl, PROC_CONTAINER_ID_LEN);
			out[PROC_CONTAINER_ID_LEN] = '\0';
			return true;
		}
	}
	return false;
}

int proc__container_id(const char *cgroup, char out[PROC_CONTAINER_ID_LEN + 1])
{
	const char *line = cgroup;

	out[0] = '\0';
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		/* "hierarchy-ID:controllers:path": the path follows the second colon. */
		const char *path = memchr(line, ':', end - line);

		path = path ? memchr(path + 1, ':', end - path - 1) : NULL;
		for (const char *c = end; path && c > path;) {
			const char *slash = c - 1;

			while (slash > path && *slash != '/')
				slash--;
			if (component_id(slash + 1, c - slash - 1, out))
				return 0;
			c = slash;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int proc__systemd_unit(const char *cgroup, char *out, size_t len)
{
	static const char suffix[] = ".service", systemd[] = "name=systemd";
	const char *line = cgroup;

	for (; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *path = memchr(line, ':', end - line);
		const char *controllers = path ? path + 1 : NULL;

		path = path ? memchr(path + 1, ':', end - path - 1) : NULL;
		/* The unified hierarchy ("0::/...") or systemd's own v1 one (name=systemd), named
		 * whole: "name=sys" is another hierarchy. */
		if (path &&
		    (path == controllers || ((size_t)(path - controllers) == sizeof(systemd) - 1 &&
					     !memcmp(controllers, systemd, sizeof(systemd) - 1)))) {
			const char *c = end;

			while (c > path) {
				const char *slash = c - 1;
				size_t n;

				while (slash > path && *slash != '/')
					slash--;
				n = c - slash - 1;
				if (n > sizeof(suffix) - 1 &&
				    !memcmp(c - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) &&
				    strncmp(slash + 1, "user@", 5) &&
				    n - (sizeof(suffix) - 1) < len) {
					snprintf(out, len, "%.*s", (int)(n - (sizeof(suffix) - 1)),
						 slash + 1);
					return 0;
				}
				c = slash;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

static void trim_copy(const char *s, size_t n, char *out, size_t outlen)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	/* Percent-encoded, W3C baggage style. */
	hex__percent_decode(out, outlen, s, n);
}

int proc__service_from_environ(const char *env, size_t len, char *out, size_t outlen)
{
	static const char svc[] = "OTEL_SERVICE_NAME=", attrs[] = "OTEL_RESOURCE_ATTRIBUTES=";
	const char *from_attrs = NULL, *end = env + len;
	size_t from_attrs_len = 0;

	for (const char *v = env; v < end; v += strnlen(v, end - v) + 1) {
		size_t n = strnlen(v, end - v);

		if (n > sizeof(svc) - 1 && !memcmp(v, svc, sizeof(svc) - 1)) {
			/* OTEL_SERVICE_NAME wins over OTEL_RESOURCE_ATTRIBUTES, per the SDK spec.
			 */
			trim_copy(v + sizeof(svc) - 1, n - (sizeof(svc) - 1), out, outlen);
			if (out[0])
				return 0;
		} else if (n > sizeof(attrs) - 1 && !memcmp(v, attrs, sizeof(attrs) - 1)) {
			from_attrs = v + sizeof(attrs) - 1;
			from_attrs_len = n - (sizeof(attrs) - 1);
		}
	}
	for (const char *kv = from_attrs; kv && kv < from_attrs + from_attrs_len;) {
		const char *comma = memchr(kv, ',', from_attrs + from_attrs_len - kv);
		const char *kv_end = comma ? comma : from_attrs + from_attrs_len;
		const char *eq = memchr(kv, '=', kv_end - kv);
		char key[64];

		if (eq) {
			trim_copy(kv, eq - kv, key, sizeof(key));
			if (!strcmp(key, "service.name")) {
				trim_copy(eq + 1, kv_end - eq - 1, out, outlen);
				if (out[0])
					return 0;
			}
		}
		kv = comma ? comma + 1 : NULL;
	}
	out[0] = '\0';
	return -ENOENT;
}

/* Read up to max bytes of a small /proc file; returns the length, or -errno. */
static ssize_t read_small(const struct proc_table *t, pid_t pid, const char *file, char *buf,
			  size_t max)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (proc_path(t, pid, file, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = file__read_upto(fd, buf, max);
	close(fd);
	return n;
}

/* Identity is best effort: what cannot be read (another user's environ) stays unknown. */
static void read_identity(const struct proc_table *t, struct proc *p)
{
	enum { ENV_MAX = 64 * 1024 };
	char *buf = malloc(ENV_MAX + 1);
	char service[256], unit[256];
	ssize_t n;

	if (!buf)
		return;
	n = read_small(t, p->pid, "cmdline", buf, PROC_CMDLINE_MAX - 1);
	if (n > 0) {
		while (n > 0 && buf[n - 1] == '\0')
			n--;
		buf[n] = '\0';
		free(p->cmdline);
		p->cmdline = n ? malloc(n + 1) : NULL;
		p->cmdline_len = p->cmdline ? (size_t)n + 1 : 0;
		if (p->cmdline)
			memcpy(p->cmdline, buf, n + 1);
	}
	n = read_small(t, p->pid, "environ", buf, ENV_MAX);
	if (n > 0 && proc__service_from_environ(buf, n, service, sizeof(service)) == 0) {
		free(p->service_name);
		p->service_name = strdup(service);
	}
	n = read_small(t, p->pid, "cgroup", buf, ENV_MAX);
	if (n > 0) {
		buf[n] = '\0';
		proc__container_id(buf, p->container_id);
		if (proc__systemd_unit(buf, unit, sizeof(unit)) == 0) {
			free(p->systemd_unit);
			p->systemd_unit = strdup(unit);
		}
	}
	free(buf);
}

/*
 * The process context its SDK published, if its maps name one: read again only when its
 * timestamp moved. A context that cannot be read now (being written, refused) keeps the last one.
 */
static void read_context(struct proc *p)
{
	struct process_context *c;
	uint64_t published;

	p->otel_ctx_checked_ns = clock__ns(CLOCK_MONOTONIC);
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct mapping *m = &p->maps.v[i];

		if (!process_context__is_mapping(m))
			continue;
		if (p->otel_ctx && p->otel_ctx->header_addr == m->start &&
		    process_context__published(p->pid, m->start, &published) == 0 &&
		    (published == p->otel_ctx->published_ns || !published))
			return;
		if (process_context__read(p->pid, m->start, &c) == 0) {
			process_context__free(p->otel_ctx);
			p->otel_ctx = c;
			return;
		}
	}
}

/* Read a fresh snapshot into p. On failure p is left as it was. */
static int snapshot(const struct proc_table *t, struct proc *p)
{
	struct maps maps;
	int err;

	err = read_maps(t, p->pid, &maps);
	if (err)
		return err;
	maps__release(&p->maps);
	p->maps = maps;
	read_comm(t, p->pid, p->comm);
	free(p->exe_path);
	p->exe_path = read_exe(t, p->pid);
	if (!t->maps_only) {
		read_identity(t, p);
		read_context(p);
	}
	p->exited = false;
	return 0;
}

static struct proc_node *table_insert(struct proc_table *t, pid_t pid, int *errp)
{
	struct proc_node *node;
	int err;

	node = calloc(1, sizeof(*node));
	if (!node) {
		*errp = -ENOMEM;
		return NULL;
	}
	node->proc.pid = pid;
	err = snapshot(t, &node->proc);
	if (err) {
		free(node);
		*errp = err;
		return NULL;
	}
	table_link(t, node);
	return node;
}

struct proc *proc_table__get(struct proc_table *t, pid_t pid)
{
	struct proc_node *node;
	int err = 0;

	if (!t || pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	node = table_lookup(t, pid);
	if (node) {
		lru__touch(&t->lru, &node->lru);
		return &node->proc;
	}
	node = table_insert(t, pid, &err);
	if (!node) {
		errno = -err;
		return NULL;
	}
	return &node->proc;
}

int proc_table__read(const struct proc_table *t, pid_t pid, struct proc *out)
{
	memset(out, 0, sizeof(*out));
	if (!t || pid <= 0)
		return -EINVAL;
	out->pid = pid;
	return snapshot(t, out);
}

void proc__release(struct proc *p)
{
	if (p)
		proc_clear(p);
}

int proc_table__adopt(struct proc_table *t, struct proc *p)
{
	struct proc_node *node;

	if (!t || !p || p->pid <= 0)
		return -EINVAL;
	node = table_lookup(t, p->pid);
	if (node) {
		proc_clear(&node->proc);
		lru__touch(&t->lru, &node->lru);
		node->proc = *p;
	} else {
		node = calloc(1, sizeof(*node));
		if (!node)
			return -ENOMEM;
		node->proc = *p;
		table_link(t, node);
	}
	node->gone_at_last_sweep = false;
	memset(p, 0, sizeof(*p));
	return 0;
}

static size_t str_bytes(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

size_t proc_table__memory(const struct proc_table *t)
{
	size_t bytes;

	if (!t)
		return 0;
	bytes = sizeof(*t) + ((size_t)1 << t->bucket_bits) * sizeof(*t->buckets);
	for (const struct proc_node *n = node_of(lru__newest(&t->lru)); n;
	     n = node_of(n->lru.older)) {
		const struct proc *p = &n->proc;

		bytes += sizeof(*n) + p->maps.n * sizeof(*p->maps.v) + str_bytes(p->exe_path) +
			 p->cmdline_len + str_bytes(p->service_name) + str_bytes(p->systemd_unit);
		for (size_t i = 0; i < p->maps.n; i++)
			bytes += str_bytes(p->maps.v[i].path);
	}
	return bytes;
}

struct proc *proc_table__peek(struct proc_table *t, pid_t pid)
{
	struct proc_node *node = t && pid > 0 ? table_lookup(t, pid) : NULL;

	return node ? &node->proc : NULL;
}

void proc_table__forget(struct proc_table *t, pid_t pid)
{
	struct proc_node *node = t && pid > 0 ? table_lookup(t, pid) : NULL;

	if (node)
		table_remove(t, node);
}

int proc_table__refresh(struct proc_table *t, pid_t pid)
{
	struct proc_node *node;
	int err = 0;

	if (!t || pid <= 0)
		return -EINVAL;
	node = table_lookup(t, pid);
	if (!node)
		return table_insert(t, pid, &err) ? 0 : err;
	lru__touch(&t->lru, &node->lru);
	err = snapshot(t, &node->proc);
	/* The process is gone: keep what we knew, so that its last samples still symbolize. */
	if (err == -ESRCH)
		node->proc.exited = true;
	return err;
}

void proc_table__check_context(struct proc_table *t, pid_t pid, uint64_t now_ns)
{
	struct proc_node *node = t && pid > 0 ? table_lookup(t, pid) : NULL;
	struct proc *p = node ? &node->proc : NULL;

	if (!p || p->exited || t->maps_only)
		return;
	if (p->otel_ctx) {
		/* A moved timestamp or a gone mapping: the maps are read again with the context. */
		uint64_t published;
		int err = process_context__published(pid, p->otel_ctx->header_addr, &published);

		if (!err && (published == p->otel_ctx->published_ns || !published))
			return;
		if (err == -ESRCH)
			return;
	} else if (now_ns - p->otel_ctx_checked_ns < PROC_CONTEXT_RESCAN_NS) {
		return;
	}
	proc_table__refresh(t, pid);
}

int proc_table__mapping_path(const struct proc_table *t, pid_t pid, const struct mapping *m,
			     char *buf, size_t len)
{
	char mf[PATH_MAX];
	int n;

	if (!t || !m || !buf || !len)
		return -EINVAL;
	/*
	 * map_files reaches the very inode that is mapped, even when it was deleted or lives in
	 * another mount namespace. Following it needs privileges (CAP_SYS_ADMIN or
	 * CAP_CHECKPOINT_RESTORE), and access() follows it, so an unprivileged caller falls back to
	 * the root path, which it may still be able to open.
	 */
	n = snprintf(mf, sizeof(mf), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, t->root, (int)pid,
		     m->start, m->end);
	if (n > 0 && (size_t)n < sizeof(mf) && !access(mf, F_OK)) {
		if ((size_t)n >= len)
			return -ENAMETOOLONG;
		memcpy(buf, mf, n + 1);
		return 0;
	}

	buf[0] = '\0';
	if (m->kind != MAPPING_FILE || !m->path || m->path[0] != '/')
		return -ENOENT;
	n = snprintf(buf, len, "%s/%d/root%s", t->root, (int)pid, m->path);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
#include "interp/python_code.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/chain.h"
#include "base/hash.h"
#include "base/lru.h"
#include "interp/python_lines.h"
#include "process/proc_mem.h"

/* Lines kept per code object, direct-mapped by index: a hot function runs at a few indexes. */
#define LINE_SLOTS 16
#define MIN_BUCKETS 64

struct line_slot {
	uint32_t index;
	int32_t line; /* -1: empty */
};

struct entry {
	struct entry *hnext;
	struct lru_link lru;
	pid_t pid;
	uint64_t addr, code_type;
	const struct python_layout *layout;
	uint64_t checksum;
	uint64_t checked; /* the generation in which the header was last found unchanged */
	int64_t first_line;
	size_t bytes; /* this allocation: the entry, its strings and its table */
	const char *qualname, *filename;
	const uint8_t *table;
	size_t table_len;
	struct line_slot slots[LINE_SLOTS];
	char data[]; /* qualname, filename, table */
};

struct python_code_cache {
	struct entry **buckets;
	size_t nr_buckets, max_bytes, bytes;
	uint64_t generation;
	struct lru lru;
	struct python_mem mem;
	struct python_code_stats stats;
};

static int read_proc(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	return proc_mem__read(pid, addr, buf, len);
}

static size_t bucket_of(const struct python_code_cache *c, pid_t pid, uint64_t addr)
{
	return hash_add(hash_mix64((uint64_t)(uint32_t)pid), addr) & (c->nr_buckets - 1);
}

struct python_code_cache *python_code_cache__new(size_t max_bytes)
{
	struct python_code_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nr_buckets = MIN_BUCKETS;
	c->buckets = calloc(c->nr_buckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->max_bytes = max_bytes ? max_bytes : PYTHON_CODE_CACHE_DEFAULT_BYTES;
	c->bytes = c->nr_buckets * sizeof(*c->buckets);
	c->mem.read = read_proc;
	return c;
}

void python_code_cache__set_reader(struct python_code_cache *c, const struct python_mem *m)
{
	c->mem = *m;
}

static void drop(struct python_code_cache *c, struct entry *e)
{
	CHAIN_UNLINK(&c->buckets[bucket_of(c, e->pid, e->addr)], e, hnext);
	lru__unlink(&c->lru, &e->lru);
	c->bytes -= e->bytes;
	free(e);
}

void python_code_cache__delete(struct python_code_cache *c)
{
	if (!c)
		return;
	while (lru__oldest(&c->lru))
		drop(c, LRU_ENTRY(lru__oldest(&c->lru), struct entry, lru));
	free(c->buckets);
	free(c);
}

static struct entry *find(const struct python_code_cache *c, pid_t pid, uint64_t addr)
{
	for (struct entry *e = c->buckets[bucket_of(c, pid, addr)]; e; e = e->hnext)
		if (e->pid == pid && e->addr == addr)
			return e;
	return NULL;
}

/* Twice the buckets when there are more entries than buckets; without memory, chains lengthen. */
static void grow(struct python_code_cache *c)
{
	size_t n = c->nr_buckets * 2;
	struct entry **old = c->buckets, **b;

	if (lru__count(&c->lru) <= c->nr_buckets || n > SIZE_MAX / sizeof(*b))
		return;
	b = calloc(n, sizeof(*b));
	if (!b)
		return;
	c->buckets = b;
	c->nr_buckets = n;
	for (size_t i = 0; i < n / 2; i++) {
		while (old[i]) {
			struct entry *e = old[i];

			old[i] = e->hnext;
			CHAIN_PUSH(&c->buckets[bucket_of(c, e->pid, e->addr)], e, hnext);
		}
	}
	free(old);
	c->bytes += (n / 2) * sizeof(*b);
}

/* The least recently used entries go until the bytes fit, all but keep. */
static void evict(struct python_code_cache *c, const struct entry *keep)
{
	while (c->bytes > c->max_bytes) {
		struct entry *e = LRU_ENTRY(lru__oldest(&c->lru), struct entry, lru);

		if (!e || e == keep)
			return;
		drop(c, e);
		c->stats.evictions++;
	}
}

void python_code_cache__forget_pid(struct python_code_cache *c, pid_t pid)
{
	struct lru_link *l = lru__oldest(&c->lru);

	while (l) {
		struct entry *e = LRU_ENTRY(l, struct entry, lru);

		l = l->newer;
		if (e->pid == pid)
			drop(c, e);
	}
}

void python_code_cache__expire(struct python_code_cache *c)
{
	c->generation++;
}

/* Count a failed read or check, and map it to what lookup answers. */
static int failed(struct python_code_cache *c, pid_t pid, int err)
{
	switch (err) {
	case PYTHON_CODE_NOT_CODE:
		c->stats.type_mismatches++;
		return -EINVAL;
	case -EINVAL:
	case -E2BIG:
		c->stats.invalid++;
		return -EINVAL;
	case -ENOMEM:
		return err;
	case -ESRCH:
		python_code_cache__forget_pid(c, pid);
		/* fallthrough */
	default:
		c->stats.read_failures++;
		return err;
	}
}

/* Read the strings and table the header points at into a new entry, linked in. */
static int load(struct python_code_cache *c, pid_t pid, const struct python_layout *l,
		uint64_t code_type, uint64_t addr, const struct python_code_head *h,
		struct entry **out)
{
	char *name = malloc(PYTHON_STR_MAX), *file = malloc(PYTHON_STR_MAX);
	size_t name_len, file_len, table_len = 0;
	uint8_t *table = NULL;
	struct entry *e = NULL;
	int err = -ENOMEM;

	if (!name || !file)
		goto out;
	err = python_code__read_str(&c->mem, pid, l->minor, h->name, name);
	if (!err)
		err = python_code__read_str(&c->mem, pid, l->minor, h->filename, file);
	if (!err)
		err = python_code__read_bytes(&c->mem, pid, h->table, &table, &table_len);
	if (err)
		goto out;
	name_len = strlen(name) + 1;
	file_len = strlen(file) + 1;
	err = -ENOMEM;
	e = calloc(1, sizeof(*e) + name_len + file_len + table_len);
	if (!e)
		goto out;
	e->bytes = sizeof(*e) + name_len + file_len + table_len;
	e->pid = pid;
	e->addr = addr;
	e->code_type = code_type;
	e->layout = l;
	e->checksum = h->checksum;
	e->checked = c->generation;
	e->first_line = h->first_line;
	memcpy(e->data, name, name_len);
	memcpy(e->data + name_len, file, file_len);
	if (table_len)
		memcpy(e->data + name_len + file_len, table, table_len);
	e->qualname = e->data;
	e->filename = e->data + name_len;
	e->table = (const uint8_t *)e->data + name_len + file_len;
	e->table_len = table_len;
	for (size_t i = 0; i < LINE_SLOTS; i++)
		e->slots[i].line = -1;
	CHAIN_PUSH(&c->buckets[bucket_of(c, pid, addr)], e, hnext);
	lru__push_front(&c->lru, &e->lru);
	c->bytes += e->bytes;
	grow(c);
	evict(c, e);
	*out = e;
	err = 0;
out:
	free(table);
	free(file);
	free(name);
	return err;
}

static void answer(struct entry *e, uint32_t index, int64_t line, struct python_frame_info *out)
{
	struct line_slot *s = &e->slots[index % LINE_SLOTS];

	/* Lines past 2^31 come only from lying tables: answered, not kept. */
	if (line >= 0 && line <= INT32_MAX) {
		s->index = index;
		s->line = (int32_t)line;
	}
	out->qualname = e->qualname;
	out->filename = e->filename;
	out->line = line;
	out->first_line = e->first_line;
}

int python_code__lookup(struct python_code_cache *c, pid_t pid, const struct python_layout *l,
			uint64_t code_type, uint64_t code_addr, uint32_t index,
			struct python_frame_info *out)
{
	struct entry *e = find(c, pid, code_addr);
	struct python_code_head h;
	int err;

	/* The process exec'd another interpreter since: nothing of the entry holds. */
	if (e && (e->code_type != code_type || e->layout != l)) {
		drop(c, e);
		e = NULL;
	}
	if (e) {
		const struct line_slot *s = &e->slots[index % LINE_SLOTS];

		lru__touch(&c->lru, &e->lru);
		if (e->checked == c->generation && s->line >= 0 && s->index == index) {
			c->stats.hits++;
			answer(e, index, s->line, out);
			return 0;
		}
	}
	err = python_code__read_head(&c->mem, pid, l, code_type, code_addr, &h);
	if (err) {
		/* Whatever the entry said of this address no longer holds. */
		if (e && err != -ESRCH)
			drop(c, e);
		return failed(c, pid, err);
	}
	if (e && e->checksum == h.checksum) {
		/* The same object: its kept lines hold too. */
		c->stats.checks++;
		e->checked = c->generation;
	} else {
		if (e) {
			c->stats.replaced++;
			drop(c, e);
		}
		c->stats.misses++;
		err = load(c, pid, l, code_type, code_addr, &h, &e);
		if (err)
			return failed(c, pid, err);
	}
	answer(e, index, python_lines__line(l->lines, e->table, e->table_len, e->first_line, index),
	       out);
	return 0;
}

void python_code_cache__stats(const struct python_code_cache *c, struct python_code_stats *out)
{
	*out = c->stats;
	out->entries = lru__count(&c->lru);
	out->bytes = c->bytes;
	out->max_bytes = c->max_bytes;
}

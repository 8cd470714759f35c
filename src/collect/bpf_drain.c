// SPDX-License-Identifier: BSD-2-Clause
/*
 * Draining the session's maps: the double-buffered counts and stacks of the cpu, off-CPU and lock
 * objects, read out of the set BPF no longer writes and cleared for its next turn.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/bpf_session_impl.h"
#include "collect/bpf_sync.h"
#include "base/clock.h"

/* Copy a stack trace out of a stack map; returns its depth (0 if the id is gone). */
static uint32_t read_stack(int map_fd, __s32 id, uint64_t *ips, bool *gone)
{
	uint32_t n = 0;
	__u32 key = id;

	*gone = false;
	if (id < 0)
		return 0;
	if (bpf_map_lookup_elem(map_fd, &key, ips)) {
		*gone = true;
		return 0;
	}
	while (n < HP_MAX_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* Copy a walked user stack out of a ustacks map; returns its depth (0 if it is gone). */
static uint32_t read_walked_stack(struct bpf_session *s, int map_fd, __u64 hash, uint64_t *ips,
				  bool *gone)
{
	uint32_t n;

	*gone = false;
	if (bpf_map_lookup_elem(map_fd, &hash, &s->ustack_buf)) {
		*gone = true;
		return 0;
	}
	n = s->ustack_buf.nr < USER_IPS ? s->ustack_buf.nr : USER_IPS;
	memcpy(ips, s->ustack_buf.pcs, n * sizeof(*ips));
	return n;
}

/* The user stack a key names: walked (hash) or from frame pointers (stack id). */
static uint32_t read_user_stack(struct bpf_session *s, int stacks_fd, int ustacks_fd, __s32 id,
				__u64 hash, uint64_t *ips, bool *gone)
{
	if (hash)
		return read_walked_stack(s, ustacks_fd, hash, ips, gone);
	return read_stack(stacks_fd, id, ips, gone);
}

/*
 * Up to max keys of a map into keys[], key_size bytes each. Keys are collected before any is
 * deleted: deleting while walking with get_next_key can restart the walk from the beginning on
 * hash maps.
 */
static uint32_t map_keys(int fd, void *keys, size_t key_size, uint32_t max)
{
	char *k = keys;
	const void *prev = NULL;
	uint32_t n = 0;

	while (n < max && bpf_map_get_next_key(fd, prev, k + n * key_size) == 0) {
		prev = k + n * key_size;
		n++;
	}
	return n;
}

static void map_delete_keys(int fd, const void *keys, size_t key_size, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, (const char *)keys + i * key_size);
}

/* Delete every key of a map, with room for max of them in scratch. */
static void clear_map(int fd, void *scratch, size_t key_size, uint32_t max)
{
	map_delete_keys(fd, scratch, key_size, map_keys(fd, scratch, key_size, max));
}

/* After a drain: delete the n keys read from the counts map, and empty its stack maps. */
static void clear_drained(struct bpf_session *s, int counts_fd, const void *keys, size_t key_size,
			  uint32_t n, int stacks_fd, int ustacks_fd)
{
	map_delete_keys(counts_fd, keys, key_size, n);
	clear_map(stacks_fd, s->stack_ids, sizeof(*s->stack_ids), s->max_stack_ids);
	if (s->unwinding)
		clear_map(ustacks_fd, s->ustack_keys, sizeof(*s->ustack_keys), s->max_stack_ids);
}

/* Drain and clear one buffer set of the off-CPU maps; fn NULL only clears. */
/* A wait's thread context record, from the off-CPU object's LRU of them; NULL when it has none
 * (or the LRU let it go: only when more than 4096 spans blocked since). */
static const struct hp_thread_ctx *offcpu_thread_ctx(struct bpf_session *s, __u64 key)
{
	if (!key ||
	    bpf_map_lookup_elem(bpf_map__fd(s->offcpu->maps.offcpu_tctx), &key, &s->tctx_buf))
		return NULL;
	return &s->tctx_buf;
}

static int drain_offcpu(struct bpf_session *s, uint32_t buf, drain_offcpu_fn fn, void *ctx)
{
	struct bpf_map *counts[] = {s->offcpu->maps.offcpu_counts_0,
				    s->offcpu->maps.offcpu_counts_1};
	struct bpf_map *stacks[] = {s->offcpu->maps.offcpu_stacks_0,
				    s->offcpu->maps.offcpu_stacks_1};
	int counts_fd = bpf_map__fd(counts[buf]), stacks_fd = bpf_map__fd(stacks[buf]);
	struct hp_raw_stack stack;
	uint32_t n = map_keys(counts_fd, s->offcpu_keys, sizeof(*s->offcpu_keys), s->max_offcpu);
	int ret = 0;

	for (uint32_t i = 0; i < n && fn && !ret; i++) {
		struct hp_offcpu_value value;
		struct drained_offcpu e = {.key = &s->offcpu_keys[i], .value = &value};

		if (bpf_map_lookup_elem(counts_fd, &s->offcpu_keys[i], &value))
			continue;
		if (!bpf_map_lookup_elem(stacks_fd, &s->offcpu_keys[i].stack_hash, &stack))
			e.stack = &stack;
		e.thread_ctx = offcpu_thread_ctx(s, s->offcpu_keys[i].thread_ctx);
		ret = fn(&e, ctx);
	}
	map_delete_keys(counts_fd, s->offcpu_keys, sizeof(*s->offcpu_keys), n);
	clear_map(stacks_fd, s->offcpu_hashes, sizeof(*s->offcpu_hashes), s->max_offcpu);
	return ret ? ret : (int)n;
}

/* One wait still going on at `now`, begun at its record's switch-out: its time so far. */
static int pending_wait(struct bpf_session *s, const struct hp_offcpu_start *start,
			struct hp_offcpu_key *key, struct hp_offcpu_value *value, uint64_t now,
			drain_offcpu_fn fn, void *ctx)
{
	struct drained_offcpu e = {.key = key, .value = value, .stack = &start->stack};

	key->state = start->state;
	/* Not a contention wait: the futex calls' programs count a wait when it ends, too. */
	key->futex_kind = HP_WAIT__COUNT;
	key->thread_ctx = start->thread_ctx;
	e.thread_ctx = offcpu_thread_ctx(s, start->thread_ctx);
	value->ns = now - start->ts;
	value->count = 1;
	return fn(&e, ctx);
}

/* The waits in offcpu_start's hash, keyed by thread id: the names read from /proc. */
static int drain_pending_hash(struct bpf_session *s, uint64_t now, drain_offcpu_fn fn, void *ctx)
{
	struct hp_offcpu_start start;
	__u32 tid, *prev = NULL;
	int fd = bpf_map__fd(s->offcpu->maps.offcpu_start), n = 0, ret = 0;

	while (!ret && bpf_map_get_next_key(fd, prev, &tid) == 0) {
		struct hp_offcpu_key key = {.tid = tid};
		struct hp_offcpu_value value = {0};
		char path[64], status[64];
		FILE *f;

		prev = &tid;
		if (bpf_map_lookup_elem(fd, &tid, &start) || !start.ts || start.ts > now)
			continue;
		/* The record has no pid or names: read them while the thread exists. */
		snprintf(path, sizeof(path), "/proc/%u/status", tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(status, sizeof(status), f)) {
			if (!strncmp(status, "Tgid:", 5))
				key.pid = strtoul(status + 5, NULL, 10);
			else if (!strncmp(status, "Name:", 5))
				sscanf(status + 5, " %15[^\n]", value.thread_name);
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%u/comm", key.pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(value.process_name, sizeof(value.process_name), f))
				value.process_name[strcspn(value.process_name, "\n")] = '\0';
			fclose(f);
		}
		ret = pending_wait(s, &start, &key, &value, now, fn, ctx);
		n++;
	}
	return ret ? ret : n;
}

/* What hp_offcpu_pending writes per thread off the CPU. */
struct pending_record {
	struct hp_offcpu_pending who;
	struct hp_offcpu_start start;
};
_Static_assert(sizeof(struct pending_record) ==
		       sizeof(struct hp_offcpu_pending) + sizeof(struct hp_offcpu_start),
	       "hp_offcpu_pending writes the two structs back to back");

/* The waits in task storage, listed by the hp_offcpu_pending task iterator with their names. */
static int drain_pending_listed(struct bpf_session *s, uint64_t now, drain_offcpu_fn fn, void *ctx)
{
	struct bpf_link *link;
	struct pending_record *rec;
	int fd, n = 0, ret = 0;
	FILE *f;

	fd = iter_open(s->offcpu->progs.hp_offcpu_pending, &link);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "re");
	rec = malloc(sizeof(*rec));
	if (!f || !rec) {
		ret = -errno;
		if (!f)
			close(fd);
		goto out;
	}
	while (!ret && fread(rec, sizeof(*rec), 1, f) == 1) {
		struct hp_offcpu_key key = {.pid = rec->who.pid, .tid = rec->who.tid};
		struct hp_offcpu_value value = {0};

		/* Each record against the clock its time was taken with: the run queue's. */
		now = rec->who.now;
		if (!rec->start.ts || rec->start.ts > now)
			continue;
		memcpy(value.thread_name, rec->who.thread_name, sizeof(value.thread_name));
		memcpy(value.process_name, rec->who.process_name, sizeof(value.process_name));
		ret = pending_wait(s, &rec->start, &key, &value, now, fn, ctx);
		n++;
	}
	if (!ret && ferror(f))
		ret = -EIO;
out:
	if (f)
		fclose(f);
	free(rec);
	bpf_link__destroy(link);
	return ret ? ret : n;
}

int bpf_session__drain_pending_offcpu(struct bpf_session *s, drain_offcpu_fn fn, void *ctx)
{
	uint64_t now;

	if (!s->offcpu)
		return 0;
	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
	now = clock__ns(CLOCK_MONOTONIC);
	return s->offcpu_task_storage ? drain_pending_listed(s, now, fn, ctx)
				      : drain_pending_hash(s, now, fn, ctx);
}

/* Drain and clear one buffer set of the lock maps; fn NULL only clears. */
static int drain_lock(struct bpf_session *s, uint32_t buf, drain_lock_fn fn, void *ctx)
{
	struct bpf_map *counts[] = {s->lock->maps.lock_counts_0, s->lock->maps.lock_counts_1};
	struct bpf_map *stacks[] = {s->lock->maps.lock_stacks_0, s->lock->maps.lock_stacks_1};
	struct bpf_map *ustacks[] = {s->lock->maps.lock_ustacks_0, s->lock->maps.lock_ustacks_1};
	int counts_fd = bpf_map__fd(counts[buf]), stacks_fd = bpf_map__fd(stacks[buf]);
	int ustacks_fd = bpf_map__fd(ustacks[buf]);
	uint32_t n = map_keys(counts_fd, s->lock_keys, sizeof(*s->lock_keys), s->max_keys);
	bool gone;
	int ret = 0;

	for (uint32_t i = 0; i < n && fn && !ret; i++) {
		struct hp_lock_value value;
		struct drained_lock e = {
			.key = &s->lock_keys[i],
			.value = &value,
			.user_ips = s->stack_buf,
			.kern_ips = s->stack_buf + USER_IPS,
		};

		if (bpf_map_lookup_elem(counts_fd, &s->lock_keys[i], &value))
			continue;
		e.nr_user = read_user_stack(s, stacks_fd, ustacks_fd, e.key->user_stack_id,
					    e.key->user_stack_hash, s->stack_buf, &gone);
		e.nr_kern =
			read_stack(stacks_fd, e.key->kern_stack_id, s->stack_buf + USER_IPS, &gone);
		if (e.key->thread_ctx && !bpf_map_lookup_elem(bpf_map__fd(s->lock->maps.lock_tctx),
							      &e.key->thread_ctx, &s->tctx_buf))
			e.thread_ctx = &s->tctx_buf;
		ret = fn(&e, ctx);
	}
	clear_drained(s, counts_fd, s->lock_keys, sizeof(*s->lock_keys), n, stacks_fd, ustacks_fd);
	return ret ? ret : (int)n;
}

/* What one more object's drain gave (m entries, or -errno): the first error is the one kept. */
static void add_drained(int m, int *ret, uint32_t *n)
{
	if (m < 0 && !*ret)
		*ret = m;
	else if (m > 0)
		*n += m;
}

int bpf_session__drain(struct bpf_session *s, const struct drain_fns *fns, void *ctx)
{
	struct bpf_map *stacks_maps[] = {s->skel->maps.stacks_0, s->skel->maps.stacks_1};
	struct bpf_map *counts_maps[] = {s->skel->maps.counts_0, s->skel->maps.counts_1};
	struct bpf_map *ustacks_maps[] = {s->skel->maps.ustacks_0, s->skel->maps.ustacks_1};
	struct bpf_map *tctx_maps[] = {s->skel->maps.tctx_0, s->skel->maps.tctx_1};
	uint32_t old = s->active, n;
	int counts_fd, stacks_fd, ustacks_fd, tctx_fd, ret = 0;

	s->active = !old;
	__atomic_store_n(&s->skel->bss->active_buffer, s->active, __ATOMIC_SEQ_CST);
	if (s->offcpu)
		__atomic_store_n(&s->offcpu->bss->active_buffer, s->active, __ATOMIC_SEQ_CST);
	if (s->lock)
		__atomic_store_n(&s->lock->bss->active_buffer, s->active, __ATOMIC_SEQ_CST);
	bpf_sync__wait_for_programs();

	counts_fd = bpf_map__fd(counts_maps[old]);
	stacks_fd = bpf_map__fd(stacks_maps[old]);
	ustacks_fd = bpf_map__fd(ustacks_maps[old]);
	tctx_fd = bpf_map__fd(tctx_maps[old]);
	n = map_keys(counts_fd, s->keys, sizeof(*s->keys), s->max_keys);
	for (uint32_t i = 0; i < n && ret == 0; i++) {
		struct hp_sample_value value;
		struct drained_entry e = {
			.key = &s->keys[i],
			.value = &value,
			.user_ips = s->stack_buf,
			.kern_ips = s->stack_buf + USER_IPS,
		};

		if (bpf_map_lookup_elem(counts_fd, &s->keys[i], &value))
			continue;
		e.nr_user = read_user_stack(s, stacks_fd, ustacks_fd, s->keys[i].user_stack_id,
					    s->keys[i].user_stack_hash, s->stack_buf,
					    &e.user_stack_gone);
		e.nr_kern = read_stack(stacks_fd, s->keys[i].kern_stack_id, s->stack_buf + USER_IPS,
				       &e.kern_stack_gone);
		if (s->keys[i].thread_ctx &&
		    bpf_map_lookup_elem(tctx_fd, &s->keys[i].thread_ctx, &s->tctx_buf) == 0)
			e.thread_ctx = &s->tctx_buf;
		ret = fns->cpu ? fns->cpu(&e, ctx) : 0;
	}

	clear_drained(s, counts_fd, s->keys, sizeof(*s->keys), n, stacks_fd, ustacks_fd);
	clear_map(tctx_fd, s->tctx_keys, sizeof(*s->tctx_keys), HP_TCTX_ENTRIES);
	if (s->offcpu)
		add_drained(drain_offcpu(s, old, ret ? NULL : fns->offcpu, ctx), &ret, &n);
	if (s->lock)
		add_drained(drain_lock(s, old, ret ? NULL : fns->lock, ctx), &ret, &n);
	return ret ? ret : (int)n;
}

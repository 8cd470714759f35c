// SPDX-License-Identifier: BSD-2-Clause
#include "capture/thread_ctx_link.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hex.h"
#include "base/log.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "collect/bpf_session.h"
#include "collect/collector.h"
#include "process/process_context.h"
#include "symbols/symbolize.h"

#define RETRY_NS (3ULL * 1000000000ULL)	   /* not resolved yet: look again */
#define REFRESH_NS (60ULL * 1000000000ULL) /* resolved: check again (a PID reused, an exec) */

struct tracked {
	pid_t pid;
	uint64_t next_ns;
	bool linked; /* BPF has its entry */
	bool logged; /* its failure was logged */
};

struct thread_ctx_link {
	struct bpf_session *session;
	struct symbolizer *sym;
	struct tracked *v;
	size_t n, cap;
	struct thread_ctx_link_stats stats;
};

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int thread_ctx__decode(const struct hp_thread_ctx *rec, const struct process_context *pc,
		       struct thread_ctx_fields *out)
{
	const uint8_t *a = rec->attrs;
	size_t size = rec->attrs_size < HP_THREAD_CTX_ATTRS ? rec->attrs_size : HP_THREAD_CTX_ATTRS;
	const char *keys[256] = {0};
	struct {
		const uint8_t *p;
		uint8_t len;
	} vals[256];

	memset(out, 0, sizeof(*out));
	if (rec->valid != 1)
		return -EINVAL;
	if (!all_zero(rec->trace_id, sizeof(rec->trace_id)))
		hex__encode(out->trace_id, rec->trace_id, sizeof(rec->trace_id));
	if (!all_zero(rec->span_id, sizeof(rec->span_id)))
		hex__encode(out->span_id, rec->span_id, sizeof(rec->span_id));
	/* Entries {key index, length, bytes}; the last of a key wins. */
	for (size_t off = 0; off + 2 <= size;) {
		uint8_t k = a[off], len = a[off + 1];

		if (off + 2 + len > size)
			break; /* truncated: the OTEP says stop */
		if (pc && k < pc->nr_keys && pc->key_map[k]) {
			keys[k] = pc->key_map[k];
			vals[k].p = a + off + 2;
			vals[k].len = len;
		} else {
			out->dropped++;
		}
		off += 2 + (size_t)len;
	}
	for (size_t k = 0; k < 256; k++) {
		if (!keys[k])
			continue;
		if (out->nr_attrs == PROFILE_MAX_CTX_ATTRS) {
			out->dropped++;
			continue;
		}
		out->attrs[out->nr_attrs].key = keys[k];
		utf8__replace_invalid(out->attrs[out->nr_attrs].value, (const char *)vals[k].p,
				      vals[k].len, "\xef\xbf\xbd");
		out->nr_attrs++;
	}
	return 0;
}

struct thread_ctx_link *thread_ctx_link__new(struct bpf_session *session, struct symbolizer *sym)
{
	struct thread_ctx_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->session = session;
	l->sym = sym;
	return l;
}

void thread_ctx_link__delete(struct thread_ctx_link *l)
{
	if (!l)
		return;
	free(l->v);
	free(l);
}

/* Processes remembered at most: past it, those BPF does not read are forgotten (and asked
 * again when they are sampled). */
#define MAX_TRACKED 8192

static struct tracked *find_or_add(struct thread_ctx_link *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].pid == pid)
			return &l->v[i];
	if (l->n >= MAX_TRACKED) {
		size_t kept = 0;

		for (size_t i = 0; i < l->n; i++)
			if (l->v[i].linked)
				l->v[kept++] = l->v[i];
		l->n = kept;
		if (l->n >= MAX_TRACKED)
			return NULL;
	}
	if (VEC_RESERVE(l->v, l->cap, l->n + 1))
		return NULL;
	l->v[l->n] = (struct tracked){.pid = pid};
	return &l->v[l->n++];
}

/* Does the SDK of this process say it writes a thread context in the TLS variable? */
static bool declares_tls(const struct process_context *pc)
{
	return pc && pc->thread_schema &&
	       (!strcmp(pc->thread_schema, "tls_v1") ||
		!strcmp(pc->thread_schema, "tlsdesc_v1_dev"));
}

static void look_at(struct thread_ctx_link *l, struct tracked *t, uint64_t now)
{
	struct hp_tls_ref ref;
	char why[512];
	int err;

	t->next_ns = now + RETRY_NS;
	if (!declares_tls(symbolizer__process_context(l->sym, t->pid)))
		return;
	err = symbolizer__thread_ctx_ref(l->sym, t->pid, &ref, why, sizeof(why));
	if (!err)
		err = bpf_session__set_thread_ctx(l->session, t->pid, &ref);
	if (err) {
		l->stats.failed++;
		if (!t->logged)
			log_debug("PID %d: no thread context: %s", t->pid, why);
		t->logged = true;
		if (t->linked)
			bpf_session__set_thread_ctx(l->session, t->pid, NULL);
		l->stats.processes -= t->linked;
		t->linked = false;
		return;
	}
	if (!t->linked)
		log_debug("PID %d: thread context: %s", t->pid, why);
	l->stats.processes += !t->linked;
	t->linked = true;
	t->next_ns = now + REFRESH_NS;
}

void thread_ctx_link__add(struct thread_ctx_link *l, pid_t pid)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct tracked *t = l && pid > 0 ? find_or_add(l, pid) : NULL;

	if (t && now >= t->next_ns)
		look_at(l, t, now);
}

void thread_ctx_link__scan(struct thread_ctx_link *l, const struct sample_batch *batch)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	pid_t last = 0;

	if (!l || !batch)
		return;
	for (size_t i = 0; i < batch->n; i++) {
		pid_t pid = (pid_t)batch->v[i].pid;
		struct tracked *t;

		if (!pid || pid == last)
			continue;
		last = pid;
		t = find_or_add(l, pid);
		if (t && now >= t->next_ns)
			look_at(l, t, now);
	}
}

void thread_ctx_link__stats(const struct thread_ctx_link *l, struct thread_ctx_link_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (l)
		*out = l->stats;
}

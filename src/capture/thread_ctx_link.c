// SPDX-License-Identifier: BSD-2-Clause
#include "capture/thread_ctx_link.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hex.h"
#include "base/log.h"
#include "base/utf8.h"
#include "base/pid_records.h"
#include "collect/bpf_session.h"
#include "collect/collector.h"
#include "process/process_context.h"
#include "symbols/symbolize.h"

#define RETRY_NS (3ULL * 1000000000ULL)	   /* not resolved yet: look again */
#define REFRESH_NS (60ULL * 1000000000ULL) /* resolved: check again (a PID reused, an exec) */

struct tracked {
	pid_t pid;
	uint64_t next_ns;
	uint64_t go_next_ns; /* when to look at its executable for Go labels again */
	bool linked;	     /* BPF has its entry */
	bool go;	     /* ... for its goroutine labels */
	bool logged;	     /* its failure was logged */
};

struct thread_ctx_link {
	struct bpf_session *session;
	struct symbolizer *sym;
	struct pid_records tracked; /* struct tracked */
	struct thread_ctx_link_stats stats;
	bool said_kernel; /* the kernel's limit was logged (once: it is the same for every process)
			   */
};

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* What the sampler copied of a Go string whose length was len: valid UTF-8, "..." when cut. */
static void go_string(char *out, size_t size, const char *p, size_t copied, size_t len)
{
	size_t n = utf8__replace_invalid(out, p, copied, "\xef\xbf\xbd");

	if (len > copied && n + 4 <= size)
		memcpy(out + n, "\xe2\x80\xa6", 4);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is the label's value n hex digits (and not all zero)? Then it is copied, lowercase, into out. */
static bool go_hex_id(const struct hp_go_label *l, size_t n, char *out)
{
	bool nonzero = false;

	if (l->value_len != n || n > HP_GO_LABEL_VALUE)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (hex__digit((unsigned char)l->value[i]) < 0)
			return false;
		nonzero |= l->value[i] != '0';
	}
	for (size_t i = 0; i < n && nonzero; i++)
		out[i] = (char)(l->value[i] >= 'A' && l->value[i] <= 'F' ? l->value[i] + 32
									 : l->value[i]);
	out[nonzero ? n : 0] = '\0';
	return true;
}

/*
 * The pprof labels of a goroutine (see hostprof_abi.h): span_id and trace_id in hex are the
 * link (slots 0 and 1, where the sampler puts them), the others attributes, sorted by key.
 */
static void decode_go_labels(const struct hp_thread_ctx *rec, struct thread_ctx_fields *out)
{
	size_t size = rec->attrs_size < HP_THREAD_CTX_ATTRS ? rec->attrs_size : HP_THREAD_CTX_ATTRS;
	size_t n = size / HP_GO_LABEL_SLOT;
	struct {
		const char *key;
		size_t slot;
	} order[HP_GO_LABEL_SLOTS] = {
		{0}}; /* zeroed for cppcheck, which cannot tell qsort reads nr */
	char keys[HP_GO_LABEL_SLOTS][sizeof(out->go_keys[0])];
	size_t nr = 0;

	n = n < HP_GO_LABEL_SLOTS ? n : HP_GO_LABEL_SLOTS;
	for (size_t i = 0; i < n; i++) {
		const struct hp_go_label *l =
			(const struct hp_go_label *)(rec->attrs + i * HP_GO_LABEL_SLOT);

		if (!l->key_len)
			continue; /* slot 0 or 1 with no id */
		if ((l->key_len == 7 && !memcmp(l->key, "span_id", 7) &&
		     go_hex_id(l, 16, out->span_id)) ||
		    (l->key_len == 8 && !memcmp(l->key, "trace_id", 8) &&
		     go_hex_id(l, 32, out->trace_id)))
			continue;
		go_string(keys[nr], sizeof(keys[nr]), l->key,
			  l->key_len < HP_GO_LABEL_KEY ? l->key_len : HP_GO_LABEL_KEY, l->key_len);
		order[nr].key = keys[nr];
		order[nr].slot = i;
		nr++;
	}
	qsort(order, nr, sizeof(order[0]), by_key);
	for (size_t i = 0; i < nr; i++) {
		const struct hp_go_label *l =
			(const struct hp_go_label *)(rec->attrs + order[i].slot * HP_GO_LABEL_SLOT);
		size_t a = out->nr_attrs;

		if (a == PROFILE_MAX_CTX_ATTRS) {
			out->dropped++;
			continue;
		}
		memcpy(out->go_keys[a], order[i].key, sizeof(out->go_keys[a]));
		out->attrs[a].key = out->go_keys[a];
		go_string(out->attrs[a].value, sizeof(out->attrs[a].value), l->value,
			  l->value_len < HP_GO_LABEL_VALUE ? l->value_len : HP_GO_LABEL_VALUE,
			  l->value_len);
		out->nr_attrs++;
	}
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
	if (rec->valid != 1 && rec->valid != HP_THREAD_CTX_GO_LABELS)
		return -EINVAL;
	if (!all_zero(rec->trace_id, sizeof(rec->trace_id)))
		hex__encode(out->trace_id, rec->trace_id, sizeof(rec->trace_id));
	if (!all_zero(rec->span_id, sizeof(rec->span_id)))
		hex__encode(out->span_id, rec->span_id, sizeof(rec->span_id));
	if (rec->valid == HP_THREAD_CTX_GO_LABELS) {
		decode_go_labels(rec, out);
		return 0;
	}
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

/* Processes remembered at most: past it, those BPF does not read are forgotten (and asked
 * again when they are sampled). */
#define MAX_TRACKED 8192

struct thread_ctx_link *thread_ctx_link__new(struct bpf_session *session, struct symbolizer *sym)
{
	struct thread_ctx_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->session = session;
	l->sym = sym;
	l->tracked = PID_RECORDS_INIT(sizeof(struct tracked), MAX_TRACKED);
	return l;
}

void thread_ctx_link__delete(struct thread_ctx_link *l)
{
	if (!l)
		return;
	pid_records__release(&l->tracked);
	free(l);
}

/* At the cap, only the processes BPF reads are kept. */
static bool linked(const void *record)
{
	return ((const struct tracked *)record)->linked;
}

/* Does the SDK of this process say it writes a thread context in the TLS variable? */
static bool declares_tls(const struct process_context *pc)
{
	return pc && pc->thread_schema &&
	       (!strcmp(pc->thread_schema, "tls_v1") ||
		!strcmp(pc->thread_schema, "tlsdesc_v1_dev"));
}

#define NOTHING_TO_READ 1

/*
 * Where BPF finds the thread's context: the OTEP's TLS variable when the SDK declares one (looked
 * for every few seconds until found: an SDK may publish late), else a Go program's goroutine
 * labels (its executable looked at once a minute: what a binary is does not change). 0,
 * NOTHING_TO_READ (neither: most processes), or -errno with the reason in why.
 */
static int find_ref(struct thread_ctx_link *l, struct tracked *t, uint64_t now,
		    struct hp_tls_ref *ref, char *why, size_t len)
{
	int err;

	if (declares_tls(symbolizer__process_context(l->sym, t->pid)))
		return symbolizer__thread_ctx_ref(l->sym, t->pid, ref, why, len);
	if (now < t->go_next_ns)
		return NOTHING_TO_READ;
	t->go_next_ns = now + REFRESH_NS;
	err = symbolizer__go_labels_ref(l->sym, t->pid, ref, why, len);
	return err == -ENOENT ? NOTHING_TO_READ : err;
}

static void look_at(struct thread_ctx_link *l, struct tracked *t, uint64_t now)
{
	struct hp_tls_ref ref;
	char why[512];
	int err;

	t->next_ns = now + RETRY_NS;
	err = find_ref(l, t, now, &ref, why, sizeof(why));
	if (!err && (err = bpf_session__set_thread_ctx(l->session, t->pid, &ref))) {
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 "; the sampler cannot take it: %s",
			 err == -ENOTSUP ? "g is in register x28, which BPF reads through "
					   "bpf_task_pt_regs: this kernel needs Linux 5.15"
					 : strerror(-err));
		if (err == -ENOTSUP && !l->said_kernel)
			log_info("PID %d: goroutine labels not read: %s", t->pid, why);
		l->said_kernel |= err == -ENOTSUP;
	}
	if (err) {
		if (err != NOTHING_TO_READ) {
			l->stats.failed++;
			if (!t->logged)
				log_debug("PID %d: no thread context: %s", t->pid, why);
			t->logged = true;
		}
		if (t->linked)
			bpf_session__set_thread_ctx(l->session, t->pid, NULL);
		l->stats.processes -= t->linked;
		l->stats.go_processes -= t->linked && t->go;
		t->linked = false;
		return;
	}
	if (!t->linked)
		log_debug("PID %d: thread context: %s", t->pid, why);
	l->stats.processes -= t->linked;
	l->stats.go_processes -= t->linked && t->go;
	t->go = ref.record != HP_CTX_OTEL;
	l->stats.processes++;
	l->stats.go_processes += t->go;
	t->linked = true;
	t->next_ns = now + REFRESH_NS;
}

void thread_ctx_link__add(struct thread_ctx_link *l, pid_t pid)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct tracked *t = l && pid > 0 ? pid_records__get(&l->tracked, pid, linked) : NULL;

	if (t && now >= t->next_ns)
		look_at(l, t, now);
}

void thread_ctx_link__scan(struct thread_ctx_link *l, const struct sample_batch *batch)
{
	size_t at = 0;
	pid_t pid;

	while ((pid = sample_batch__next_pid(batch, &at)) > 0)
		thread_ctx_link__add(l, pid);
}

void thread_ctx_link__stats(const struct thread_ctx_link *l, struct thread_ctx_link_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (l)
		*out = l->stats;
}

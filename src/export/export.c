// SPDX-License-Identifier: BSD-2-Clause
/*
 * The export thread. One FIFO of payloads under a byte budget, one thread that sends its head
 * through the transport, and one lock that the submitting (sampling) thread holds only to link
 * a payload in: the network is touched by the export thread alone, so submit never waits on it.
 *
 * The head stays in the queue while it is sent and while it waits for a retry, so its bytes
 * count against the budget and, between attempts, it is the first to go when the budget
 * overflows. During the send itself it is marked busy and submit drops the next oldest instead,
 * which lets the thread send without holding the lock.
 */
#include "export/export.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/lru.h"
#include "base/thread.h"
#include "export/transport.h"

#define DEFAULT_QUEUE_BYTES (64u << 20)
#define DEFAULT_INITIAL_BACKOFF_MS 1000
#define DEFAULT_MAX_BACKOFF_MS 30000
#define DEFAULT_MAX_RETRY_AFTER_MS 60000
/* How often rate-limited warnings may speak again ("... repeated N more times"). */
#define LOG_REPEAT_MS (10 * 60 * 1000)
/* Kinds of refusal (by code) that get their own rate limit; more share the last slot. */
#define REFUSAL_KINDS 8

/* A queued payload; the queue is an lru list used as a FIFO: the oldest is sent first. */
struct qent {
	struct export_payload p;
	struct lru_link link;
	bool busy; /* being sent: only the export thread may unlink it */
};

struct refusal_kind {
	bool used;
	long code;
	char key[48];
	struct log_ratelimit rl;
};

struct exporter {
	struct transport *t;
	struct exporter_opts opts;
	pthread_t thread;

	pthread_mutex_t lock;
	pthread_cond_t wake; /* the export thread sleeps on it: work, shutdown */
	/* under lock */
	struct lru queue;
	struct exporter_stats st;
	bool stopping;
	int64_t deadline; /* CLOCK_MONOTONIC ms, once stopping */
	char last_error[sizeof(((struct send_result *)0)->message)];
	struct log_ratelimit rl_full;
	struct log_ratelimit rl_oversize;

	/* the export thread's own */
	uint64_t rng;
	unsigned failures; /* consecutive retryable failures: the backoff exponent */
	int64_t next_log_flush;
	struct log_ratelimit rl_partial;
	struct refusal_kind kinds[REFUSAL_KINDS];
};

static const char *payload_what(const struct export_payload *p)
{
	return p->what ? p->what : "a profile";
}

static void entry_free(struct qent *q)
{
	if (!q)
		return;
	export_payload__release(&q->p);
	free(q);
}

/* Under lock: the oldest payload, the next to send, or NULL. */
static struct qent *queue_head(struct exporter *e)
{
	return LRU_ENTRY(lru__oldest(&e->queue), struct qent, link);
}

/* Under lock. */
static void unlink_entry(struct exporter *e, struct qent *q)
{
	lru__unlink(&e->queue, &q->link);
	e->st.queued--;
	e->st.queued_bytes -= q->p.len;
}

static void abs_timespec(int64_t mono_deadline_ms, struct timespec *ts)
{
	ts->tv_sec = mono_deadline_ms / 1000;
	ts->tv_nsec = (mono_deadline_ms % 1000) * 1000000;
}

/* xorshift64*: jitter needs no quality, only no lockstep between hosts. */
static uint64_t next_random(struct exporter *e)
{
	e->rng ^= e->rng >> 12;
	e->rng ^= e->rng << 25;
	e->rng ^= e->rng >> 27;
	return e->rng * 0x2545F4914F6CDD1DULL;
}

/* "Full jitter": uniform in [0, min(max, initial * 2^(failures-1))]. */
static int64_t backoff_ms(struct exporter *e)
{
	int64_t cap = e->opts.initial_backoff_ms;

	for (unsigned i = 1; i < e->failures && cap < e->opts.max_backoff_ms; i++)
		cap *= 2;
	if (cap > e->opts.max_backoff_ms)
		cap = e->opts.max_backoff_ms;
	return (int64_t)(next_random(e) % (uint64_t)(cap + 1));
}

/*
 * Under lock. Sleep for delay_ms, or less: a shutdown that starts during the sleep ends it at
 * once (one more try right away, the receiver may be back), and once stopping no sleep
 * outlasts the deadline.
 */
static void backoff_wait(struct exporter *e, int64_t delay_ms)
{
	bool was_stopping = e->stopping;
	int64_t until = clock__mono_ms() + delay_ms;

	for (;;) {
		int64_t limit = until;
		struct timespec ts;

		if (e->stopping) {
			if (!was_stopping)
				return;
			if (e->deadline < limit)
				limit = e->deadline;
		}
		if (clock__mono_ms() >= limit)
			return;
		abs_timespec(limit, &ts);
		pthread_cond_timedwait(&e->wake, &e->lock, &ts);
	}
}

static struct refusal_kind *refusal_kind(struct exporter *e, long code)
{
	struct refusal_kind *k = NULL;

	for (size_t i = 0; i < REFUSAL_KINDS; i++) {
		if (e->kinds[i].used && e->kinds[i].code == code)
			return &e->kinds[i];
		if (!e->kinds[i].used && !k)
			k = &e->kinds[i];
	}
	if (!k) {
		k = &e->kinds[REFUSAL_KINDS - 1];
		snprintf(k->key, sizeof(k->key), "export: refusals of other kinds");
		return k;
	}
	k->used = true;
	k->code = code;
	snprintf(k->key, sizeof(k->key), "export: refusals with code %ld", code);
	k->rl.key = k->key;
	return k;
}

/* Under lock (rl_full and rl_oversize are the submitters' too). */
static void flush_logs(struct exporter *e)
{
	log_ratelimit_flush(&e->rl_full);
	log_ratelimit_flush(&e->rl_oversize);
	log_ratelimit_flush(&e->rl_partial);
	for (size_t i = 0; i < REFUSAL_KINDS; i++)
		if (e->kinds[i].used)
			log_ratelimit_flush(&e->kinds[i].rl);
}

/* Outside the lock: say what happened to one attempt. */
static void log_attempt(struct exporter *e, const struct export_payload *p,
			const struct send_result *res, int64_t delay_ms)
{
	const char *who = transport__describe(e->t);

	switch (res->outcome) {
	case SEND_OK:
		if (e->failures)
			log_info("%s: delivering again after %u failed attempts", who, e->failures);
		if (res->rejected > 0)
			log_warn_once(&e->rl_partial,
				      "%s: the receiver rejected %" PRId64
				      " profiles of %s (partial success, not resent): %s",
				      who, res->rejected, payload_what(p),
				      res->message[0] ? res->message : "(no message)");
		else if (res->message[0])
			log_warn_once(&e->rl_partial, "%s: the receiver took %s with a warning: %s",
				      who, payload_what(p), res->message);
		break;
	case SEND_DROP:
		log_warn_once(&refusal_kind(e, res->code)->rl,
			      "%s: the receiver refused %s for good (dropped, not retried): %s",
			      who, payload_what(p), res->message);
		break;
	case SEND_RETRY:
		if (e->failures == 1)
			log_warn("%s: %s not delivered, retrying (and quiet until it works): %s",
				 who, payload_what(p), res->message);
		else
			log_debug("%s: attempt %u failed, next in %" PRId64 " ms: %s", who,
				  e->failures, delay_ms, res->message);
		break;
	}
}

static void *export_thread(void *arg)
{
	struct exporter *e = arg;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		struct send_result res;
		struct qent *q;
		int64_t delay = 0;
		int rc;

		while (!queue_head(e) && !e->stopping) {
			struct timespec ts;

			/* Wake now and then to let rate-limited warnings speak again. */
			abs_timespec(clock__mono_ms() + 60000, &ts);
			pthread_cond_timedwait(&e->wake, &e->lock, &ts);
			if (clock__mono_ms() >= e->next_log_flush) {
				flush_logs(e);
				e->next_log_flush = clock__mono_ms() + LOG_REPEAT_MS;
			}
		}
		q = queue_head(e);
		if (!q || (e->stopping && clock__mono_ms() >= e->deadline))
			break;
		q->busy = true;
		pthread_mutex_unlock(&e->lock);

		rc = transport__send(e->t, &q->p, &res);
		if (rc) {
			/* Local trouble (memory): worth another try later. */
			res.outcome = SEND_RETRY;
			res.retry_after_ms = -1;
			res.code = 0;
			snprintf(res.message, sizeof(res.message), "local error: %s",
				 strerror(-rc));
		}
		if (res.outcome == SEND_RETRY) {
			e->failures++;
			if (res.retry_after_ms > 0)
				delay = res.retry_after_ms < e->opts.max_retry_after_ms
						? res.retry_after_ms
						: e->opts.max_retry_after_ms;
			else
				delay = backoff_ms(e);
		}
		log_attempt(e, &q->p, &res, delay);
		if (res.outcome != SEND_RETRY)
			e->failures = 0;

		pthread_mutex_lock(&e->lock);
		/* Busy, so nobody unlinked it: it is still the head. */
		q->busy = false;
		switch (res.outcome) {
		case SEND_OK:
			unlink_entry(e, q);
			e->st.delivered++;
			e->st.partial_rejected += res.rejected > 0 ? (uint64_t)res.rejected : 0;
			break;
		case SEND_DROP:
			unlink_entry(e, q);
			e->st.dropped_refused++;
			snprintf(e->last_error, sizeof(e->last_error), "%s", res.message);
			break;
		case SEND_RETRY:
			e->st.retries++;
			snprintf(e->last_error, sizeof(e->last_error), "%s", res.message);
			q = NULL;
			backoff_wait(e, delay);
			break;
		}
		if (q) {
			pthread_mutex_unlock(&e->lock);
			entry_free(q);
			pthread_mutex_lock(&e->lock);
		}
		if (clock__mono_ms() >= e->next_log_flush) {
			flush_logs(e);
			e->next_log_flush = clock__mono_ms() + LOG_REPEAT_MS;
		}
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

struct exporter *exporter__new(struct transport *t, const struct exporter_opts *opts)
{
	struct exporter *e;
	int rc;

	if (!t) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (opts)
		e->opts = *opts;
	if (!e->opts.queue_max_bytes)
		e->opts.queue_max_bytes = DEFAULT_QUEUE_BYTES;
	if (e->opts.initial_backoff_ms <= 0)
		e->opts.initial_backoff_ms = DEFAULT_INITIAL_BACKOFF_MS;
	if (e->opts.max_backoff_ms <= 0)
		e->opts.max_backoff_ms = DEFAULT_MAX_BACKOFF_MS;
	if (e->opts.max_backoff_ms < e->opts.initial_backoff_ms)
		e->opts.max_backoff_ms = e->opts.initial_backoff_ms;
	if (e->opts.max_retry_after_ms <= 0)
		e->opts.max_retry_after_ms = DEFAULT_MAX_RETRY_AFTER_MS;
	e->t = t;
	e->rng = ((uint64_t)clock__mono_ms() << 20) ^ (uint64_t)(uintptr_t)e ^ (uint64_t)getpid();
	if (!e->rng)
		e->rng = 0x9E3779B97F4A7C15ULL;
	e->next_log_flush = clock__mono_ms() + LOG_REPEAT_MS;
	e->rl_full.key = "export: queue over budget, oldest profile dropped";
	e->rl_oversize.key = "export: profile larger than the whole queue budget dropped";
	e->rl_partial.key = "export: partial successes";

	pthread_mutex_init(&e->lock, NULL);
	/* Deadlines are monotonic: a clock step must not stretch or cut a backoff. */
	rc = thread__cond_init_monotonic(&e->wake);
	if (rc) {
		pthread_mutex_destroy(&e->lock);
		goto fail;
	}
	/* The export thread takes no asynchronous signals: they belong to the main thread. */
	rc = thread__start(&e->thread, export_thread, e);
	if (rc) {
		pthread_cond_destroy(&e->wake);
		pthread_mutex_destroy(&e->lock);
		goto fail;
	}
	return e;
fail:
	log_error("export: cannot start the export thread: %s", strerror(-rc));
	free(e);
	errno = -rc;
	return NULL;
}

int exporter__submit(struct exporter *e, struct export_payload *p)
{
	struct export_payload taken = *p;
	struct lru victims = {0}; /* dropped under the lock, freed after it */
	struct qent *q;

	/* Ownership moves now, whatever happens below. */
	memset(p, 0, sizeof(*p));
	q = calloc(1, sizeof(*q));
	if (!q) {
		export_payload__release(&taken);
		pthread_mutex_lock(&e->lock);
		e->st.submitted++;
		e->st.dropped_full++;
		pthread_mutex_unlock(&e->lock);
		return -ENOMEM;
	}
	q->p = taken;

	pthread_mutex_lock(&e->lock);
	e->st.submitted++;
	if (q->p.len > e->opts.queue_max_bytes) {
		e->st.dropped_full++;
		log_warn_once(&e->rl_oversize,
			      "export: dropped %s: its %zu bytes exceed the whole export queue "
			      "budget of %zu bytes (raise the queue size)",
			      payload_what(&q->p), q->p.len, e->opts.queue_max_bytes);
		pthread_mutex_unlock(&e->lock);
		entry_free(q);
		return 0;
	}
	lru__push_front(&e->queue, &q->link);
	e->st.queued++;
	e->st.queued_bytes += q->p.len;

	/* Over budget: drop the oldest, skipping only the one on the wire. */
	while (e->st.queued_bytes > e->opts.queue_max_bytes) {
		struct qent *v = queue_head(e);

		while (v && v->busy)
			v = LRU_ENTRY(v->link.newer, struct qent, link);
		if (!v || v == q)
			break; /* only the payload in flight is over: it leaves soon */
		unlink_entry(e, v);
		e->st.dropped_full++;
		log_warn_once(&e->rl_full,
			      "export: queue over its budget of %zu bytes (receiver slow or down): "
			      "dropped the oldest, %s",
			      e->opts.queue_max_bytes, payload_what(&v->p));
		lru__push_front(&victims, &v->link);
	}
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->lock);

	while ((q = LRU_ENTRY(lru__oldest(&victims), struct qent, link))) {
		lru__unlink(&victims, &q->link);
		entry_free(q);
	}
	return 0;
}

void exporter__stats(struct exporter *e, struct exporter_stats *out)
{
	pthread_mutex_lock(&e->lock);
	*out = e->st;
	pthread_mutex_unlock(&e->lock);
}

void exporter__shutdown(struct exporter *e, int64_t deadline_ms, struct exporter_stats *out)
{
	struct qent *q;

	if (!e) {
		if (out)
			memset(out, 0, sizeof(*out));
		return;
	}
	if (deadline_ms < 0)
		deadline_ms = 0;
	if (deadline_ms > INT64_MAX / 4)
		deadline_ms = INT64_MAX / 4;

	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	e->deadline = clock__mono_ms() + deadline_ms;
	/* Also cuts short a request in flight that would outlive the deadline. */
	transport__set_deadline(e->t, e->deadline);
	pthread_cond_broadcast(&e->wake);
	pthread_mutex_unlock(&e->lock);

	pthread_join(e->thread, NULL);

	/* The thread is gone: what is still queued was not delivered. */
	e->st.undelivered = e->st.queued;
	/* Errors, not warnings: they say why profiles were lost, which -q must still show. */
	if (e->st.undelivered)
		log_error("%s: %" PRIu64 " profile%s (%zu bytes) not delivered by the shutdown "
			  "deadline; last error: %s",
			  transport__describe(e->t), e->st.undelivered,
			  e->st.undelivered == 1 ? "" : "s", e->st.queued_bytes,
			  e->last_error[0] ? e->last_error
					   : "none (the deadline passed while sending)");
	else if (e->st.dropped_refused)
		log_error("%s: %" PRIu64 " profile%s refused by the receiver; the last refusal: %s",
			  transport__describe(e->t), e->st.dropped_refused,
			  e->st.dropped_refused == 1 ? "" : "s", e->last_error);
	flush_logs(e);
	/* queued and queued_bytes still say what was left, for the caller's report */
	if (out)
		*out = e->st;
	while ((q = queue_head(e))) {
		unlink_entry(e, q);
		entry_free(q);
	}
	transport__delete(e->t);
	pthread_cond_destroy(&e->wake);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

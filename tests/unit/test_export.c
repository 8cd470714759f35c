// SPDX-License-Identifier: BSD-2-Clause
/*
 * The exporter against a fake in-process transport that follows a script of outcomes, records
 * what it was given, and can be held inside send() to play a stuck receiver. Timing checks are
 * lower bounds, or upper bounds of a second or more, so that a loaded machine does not fail them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "export/export.h"
#include "base/clock.h"
#include "base/log.h"
#include "export/transport_impl.h"

#define MAX_CALLS 256
#define MAX_STEPS 16

struct step {
	enum send_outcome outcome;
	long code;
	int64_t retry_after_ms;
	int64_t rejected;
	const char *message;
	int local_error; /* send() returns this (-errno) instead */
};

struct fake {
	struct transport base; /* first */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct step steps[MAX_STEPS];
	size_t nr_steps, next_step; /* past the script: SEND_OK */
	char bodies[MAX_CALLS][32];
	int64_t at_ms[MAX_CALLS];
	size_t calls;
	bool gate_closed; /* send() waits until it opens */
	bool gate_honours_deadline;
	bool in_send;
	bool deleted;
};

static int64_t now_ms(void)
{
	return clock__mono_ms();
}

static int fake_send(struct transport *t, const struct export_payload *p, struct send_result *res)
{
	struct fake *f = (struct fake *)t;
	struct step st = {.outcome = SEND_OK, .code = 200, .retry_after_ms = -1};

	pthread_mutex_lock(&f->lock);
	if (f->calls < MAX_CALLS) {
		snprintf(f->bodies[f->calls], sizeof(f->bodies[0]), "%.*s", (int)p->len,
			 (const char *)p->body);
		f->at_ms[f->calls] = now_ms();
	}
	f->calls++;
	f->in_send = true;
	pthread_cond_broadcast(&f->cond);
	while (f->gate_closed && !(f->gate_honours_deadline && transport__past_deadline(t))) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&f->cond, &f->lock, &ts);
	}
	f->in_send = false;
	if (f->next_step < f->nr_steps)
		st = f->steps[f->next_step++];
	pthread_mutex_unlock(&f->lock);
	if (st.local_error)
		return st.local_error;
	res->outcome = st.outcome;
	res->code = st.code;
	res->retry_after_ms = st.retry_after_ms;
	res->rejected = st.rejected;
	snprintf(res->message, sizeof(res->message), "%s", st.message ? st.message : "");
	if (f->gate_honours_deadline && transport__past_deadline(t)) {
		res->outcome = SEND_RETRY;
		snprintf(res->message, sizeof(res->message), "deadline");
	}
	return 0;
}

static void fake_delete(struct transport *t)
{
	struct fake *f = (struct fake *)t;

	/* The test owns the memory: only note that the exporter let go of it. */
	pthread_mutex_lock(&f->lock);
	f->deleted = true;
	pthread_mutex_unlock(&f->lock);
}

static const char *fake_describe(const struct transport *t)
{
	(void)t;
	return "fake receiver";
}

static const struct transport_ops fake_ops = {
	.send = fake_send,
	.delete = fake_delete,
	.describe = fake_describe,
};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	transport__init(&f->base, &fake_ops);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
}

static void fake_fini(struct fake *f)
{
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
}

static void fake_script(struct fake *f, const struct step *steps, size_t n)
{
	pthread_mutex_lock(&f->lock);
	memcpy(f->steps, steps, n * sizeof(*steps));
	f->nr_steps = n;
	pthread_mutex_unlock(&f->lock);
}

static void fake_gate(struct fake *f, bool closed)
{
	pthread_mutex_lock(&f->lock);
	f->gate_closed = closed;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

static size_t fake_calls(struct fake *f)
{
	size_t n;

	pthread_mutex_lock(&f->lock);
	n = f->calls;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* Wait (at most timeout_ms) until send() has been entered `calls` times. */
static bool fake_wait_calls(struct fake *f, size_t calls, int64_t timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;

	while (fake_calls(f) < calls) {
		if (now_ms() > end)
			return false;
		usleep(5000);
	}
	return true;
}

/* A payload whose body is the text "name", padded with dots to len bytes. */
static int submit(struct exporter *e, const char *name, size_t len)
{
	struct export_payload p = {0};
	size_t n = strlen(name);

	if (len < n)
		len = n;
	p.body = malloc(len);
	memset(p.body, '.', len);
	memcpy(p.body, name, n);
	p.len = len;
	p.what = strdup(name);
	return exporter__submit(e, &p);
}

static bool body_is(const struct fake *f, size_t call, const char *name)
{
	return strncmp(f->bodies[call], name, strlen(name)) == 0 &&
	       (f->bodies[call][strlen(name)] == '.' || f->bodies[call][strlen(name)] == '\0');
}

static const struct exporter_opts fast = {
	.initial_backoff_ms = 20,
	.max_backoff_ms = 100,
};

static void test_order(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	char name[16];

	fake_init(&f);
	e = exporter__new(&f.base, NULL); /* defaults */
	CHECK(e != NULL, "exporter__new: %s", strerror(errno));
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		CHECK(submit(e, name, 100) == 0, "submit %d", i);
	}
	exporter__shutdown(e, 5000, &st);
	CHECK_U64(f.calls, 20);
	bool in_order = true;
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		in_order = in_order && body_is(&f, (size_t)i, name);
	}
	CHECK(in_order, "sent out of order");
	CHECK_U64(st.submitted, 20);
	CHECK_U64(st.delivered, 20);
	CHECK_U64(st.undelivered, 0);
	CHECK_U64(st.queued, 0);
	CHECK(f.deleted, "shutdown did not delete the transport");
	fake_fini(&f);
}

static void test_budget_drops_oldest(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	struct exporter_opts o = fast;

	fake_init(&f);
	o.queue_max_bytes = 350;
	fake_gate(&f, true);
	e = exporter__new(&f.base, &o);
	CHECK(submit(e, "p0", 100) == 0, "submit");
	CHECK(fake_wait_calls(&f, 1, 2000), "p0 never reached the transport");
	/* p0 is on the wire (busy: never dropped); 100 + 3 * 100 > 350 from p3 on. */
	for (int i = 1; i <= 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", i);
		submit(e, name, 100);
	}
	exporter__stats(e, &st);
	CHECK_U64(st.dropped_full, 3); /* p1, p2, p3 */
	CHECK_U64(st.queued, 3);       /* p0 (in flight), p4, p5 */
	CHECK_U64(st.queued_bytes, 300);

	/* Bigger than the whole budget: dropped at once, the queue untouched. */
	submit(e, "huge", 351);
	exporter__stats(e, &st);
	CHECK_U64(st.dropped_full, 4);
	CHECK_U64(st.queued, 3);

	fake_gate(&f, false);
	exporter__shutdown(e, 5000, &st);
	CHECK_U64(f.calls, 3);
	CHECK(body_is(&f, 0, "p0") && body_is(&f, 1, "p4") && body_is(&f, 2, "p5"),
	      "delivered %s %s %s", f.bodies[0], f.bodies[1], f.bodies[2]);
	CHECK_U64(st.submitted, 7);
	CHECK_U64(st.delivered, 3);
	CHECK_U64(st.dropped_full, 4);
	fake_fini(&f);
}

static void test_retry_after_then_ok(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	struct exporter_opts o = {.initial_backoff_ms = 5000, .max_backoff_ms = 5000};
	const struct step script[] = {
		{.outcome = SEND_RETRY, .code = 503, .retry_after_ms = 1000, .message = "HTTP 503"},
	};

	fake_init(&f);
	fake_script(&f, script, 1);
	e = exporter__new(&f.base, &o);
	submit(e, "once", 10);
	CHECK(fake_wait_calls(&f, 2, 5000), "no second attempt");
	exporter__shutdown(e, 5000, &st);
	CHECK_U64(f.calls, 2);
	CHECK(body_is(&f, 0, "once") && body_is(&f, 1, "once"), "bodies");
	/* Retry-After (1 s) was honoured: not sooner. */
	CHECK(f.at_ms[1] - f.at_ms[0] >= 950, "retried after %lld ms",
	      (long long)(f.at_ms[1] - f.at_ms[0]));
	CHECK(f.at_ms[1] - f.at_ms[0] < 4000, "retried after %lld ms (backoff used?)",
	      (long long)(f.at_ms[1] - f.at_ms[0]));
	CHECK_U64(st.delivered, 1);
	CHECK_U64(st.retries, 1);
	CHECK_U64(st.dropped_refused, 0);
	fake_fini(&f);
}

static void test_retry_after_capped(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	struct exporter_opts o = {.initial_backoff_ms = 10, .max_retry_after_ms = 200};
	const struct step script[] = {
		{.outcome = SEND_RETRY, .code = 429, .retry_after_ms = 3600 * 1000},
	};

	fake_init(&f);
	fake_script(&f, script, 1);
	e = exporter__new(&f.base, &o);
	submit(e, "capped", 10);
	CHECK(fake_wait_calls(&f, 2, 3000), "an hour's Retry-After was not capped");
	exporter__shutdown(e, 2000, &st);
	CHECK_U64(st.delivered, 1);
	fake_fini(&f);
}

static void test_backoff_until_ok(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	const struct step script[] = {
		{.outcome = SEND_RETRY, .message = "connection refused"},
		{.outcome = SEND_RETRY, .message = "connection refused"},
		{.local_error = -ENOMEM},
		{.outcome = SEND_RETRY, .code = 502, .message = "HTTP 502"},
	};

	fake_init(&f);
	fake_script(&f, script, 4);
	e = exporter__new(&f.base, &fast);
	submit(e, "a", 10);
	submit(e, "b", 10);
	exporter__shutdown(e, 5000, &st);
	CHECK_U64(f.calls, 6);
	CHECK(body_is(&f, 4, "a") && body_is(&f, 5, "b"), "order after retries");
	CHECK_U64(st.delivered, 2);
	CHECK_U64(st.retries, 4);
	fake_fini(&f);
}

static void test_drop_not_retried(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	const struct step script[] = {
		{.outcome = SEND_DROP, .code = 400, .message = "HTTP 400: bad profile"},
		{.outcome = SEND_DROP, .code = 400, .message = "HTTP 400: bad profile"},
		{.outcome = SEND_DROP, .code = 401, .message = "HTTP 401: no token"},
	};

	fake_init(&f);
	fake_script(&f, script, 3);
	e = exporter__new(&f.base, &fast);
	submit(e, "r1", 10);
	submit(e, "r2", 10);
	submit(e, "r3", 10);
	submit(e, "ok", 10);
	exporter__shutdown(e, 3000, &st);
	CHECK_U64(f.calls, 4); /* one attempt each */
	CHECK_U64(st.dropped_refused, 3);
	CHECK_U64(st.delivered, 1);
	CHECK_U64(st.retries, 0);
	fake_fini(&f);
}

static void test_partial_success(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	const struct step script[] = {
		{.outcome = SEND_OK, .code = 200, .rejected = 3, .message = "3 had no samples"},
		{.outcome = SEND_OK, .code = 200, .rejected = 0, .message = "just a warning"},
	};

	fake_init(&f);
	fake_script(&f, script, 2);
	e = exporter__new(&f.base, &fast);
	submit(e, "partial", 10);
	submit(e, "warned", 10);
	exporter__shutdown(e, 3000, &st);
	CHECK_U64(f.calls, 2); /* never resent */
	CHECK_U64(st.delivered, 2);
	CHECK_U64(st.partial_rejected, 3);
	CHECK_U64(st.retries, 0);
	fake_fini(&f);
}

static void test_shutdown_deadline(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	struct step script[MAX_STEPS];
	int64_t t0;

	for (size_t i = 0; i < MAX_STEPS; i++)
		script[i] =
			(struct step){.outcome = SEND_RETRY, .code = 503, .message = "HTTP 503"};
	fake_init(&f);
	fake_script(&f, script, MAX_STEPS);
	e = exporter__new(
		&f.base, &(struct exporter_opts){.initial_backoff_ms = 200, .max_backoff_ms = 400});
	submit(e, "u1", 100);
	submit(e, "u2", 100);
	submit(e, "u3", 100);
	t0 = now_ms();
	exporter__shutdown(e, 1000, &st);
	CHECK(now_ms() - t0 >= 900 && now_ms() - t0 < 3000, "shutdown took %lld ms",
	      (long long)(now_ms() - t0));
	CHECK_U64(st.undelivered, 3);
	CHECK_U64(st.queued_bytes, 300);
	CHECK_U64(st.delivered, 0);
	CHECK(f.calls >= 2, "retried within the deadline only %zu times", f.calls);
	CHECK(f.deleted, "transport not deleted");
	fake_fini(&f);
}

static void test_shutdown_interrupts_backoff(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	const struct step script[] = {
		{.outcome = SEND_RETRY, .code = 503, .retry_after_ms = 60000, .message = "busy"},
	};
	int64_t t0;

	fake_init(&f);
	fake_script(&f, script, 1);
	e = exporter__new(&f.base, NULL);
	submit(e, "late", 10);
	CHECK(fake_wait_calls(&f, 1, 2000), "no first attempt");
	usleep(100 * 1000); /* into the 60 s sleep */
	t0 = now_ms();
	exporter__shutdown(e, 10000, &st);
	/* Woken at once, tried again (the script now says OK), done. */
	CHECK(now_ms() - t0 < 2000, "shutdown waited %lld ms", (long long)(now_ms() - t0));
	CHECK_U64(f.calls, 2);
	CHECK_U64(st.delivered, 1);
	CHECK_U64(st.undelivered, 0);
	fake_fini(&f);
}

static void test_deadline_cuts_stuck_send(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	int64_t t0;

	fake_init(&f);
	f.gate_honours_deadline = true;
	fake_gate(&f, true);
	e = exporter__new(&f.base, &fast);
	submit(e, "stuck", 10);
	submit(e, "behind", 10);
	CHECK(fake_wait_calls(&f, 1, 2000), "no attempt");
	t0 = now_ms();
	exporter__shutdown(e, 500, &st);
	CHECK(now_ms() - t0 < 2500, "a stuck send held shutdown for %lld ms",
	      (long long)(now_ms() - t0));
	CHECK_U64(st.undelivered, 2);
	CHECK_U64(f.calls, 1);
	fake_fini(&f);
}

static void test_submit_never_blocks(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	int64_t t0, worst = 0;

	fake_init(&f);
	fake_gate(&f, true);
	e = exporter__new(&f.base, &fast);
	submit(e, "s0", 1000);
	CHECK(fake_wait_calls(&f, 1, 2000), "no attempt");
	/* The export thread is stuck inside send(): submitting must not care. */
	for (int i = 1; i <= 200; i++) {
		char name[8];
		int64_t t = now_ms();

		snprintf(name, sizeof(name), "s%d", i);
		CHECK(submit(e, name, 1000) == 0, "submit %d", i);
		if (now_ms() - t > worst)
			worst = now_ms() - t;
	}
	t0 = now_ms();
	exporter__stats(e, &st);
	CHECK(now_ms() - t0 < 1000, "stats blocked");
	CHECK(worst < 1000, "a submit took %lld ms", (long long)worst);
	CHECK_U64(st.queued, 201);
	CHECK_U64(fake_calls(&f), 1);
	fake_gate(&f, false);
	exporter__shutdown(e, 10000, &st);
	CHECK_U64(st.delivered, 201);
	CHECK(body_is(&f, 200, "s200"), "last one %s", f.bodies[200]);
	fake_fini(&f);
}

static void test_edges(void)
{
	struct fake f;
	struct exporter *e;
	struct exporter_stats st;
	struct export_payload p = {0};

	errno = 0;
	CHECK(exporter__new(NULL, NULL) == NULL && errno == EINVAL, "NULL transport");
	exporter__shutdown(NULL, 0, &st);
	CHECK_U64(st.submitted, 0);

	/* Ownership moves: the caller's struct is emptied. */
	fake_init(&f);
	e = exporter__new(&f.base, &fast);
	p.body = (uint8_t *)strdup("x");
	p.len = 1;
	p.query = strdup("name=a");
	CHECK(exporter__submit(e, &p) == 0, "submit");
	CHECK(p.body == NULL && p.query == NULL && p.len == 0, "payload not taken");
	export_payload__release(&p); /* harmless */
	export_payload__release(NULL);
	/* A zero deadline: no more attempts than the one that may already be running. */
	exporter__shutdown(e, 0, &st);
	CHECK_U64(st.delivered + st.undelivered, 1);
	fake_fini(&f);
}

int main(void)
{
	/* The exporter's warnings are expected here; keep the output to the failures. */
	log_set_level(LOG_ERROR);
	test_order();
	test_budget_drops_oldest();
	test_retry_after_then_ok();
	test_retry_after_capped();
	test_backoff_until_ok();
	test_drop_not_retried();
	test_partial_success();
	test_shutdown_deadline();
	test_shutdown_interrupts_backoff();
	test_deadline_cuts_stuck_send();
	test_submit_never_blocks();
	test_edges();
	return check_summary("test_export");
}

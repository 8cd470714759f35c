// SPDX-License-Identifier: BSD-2-Clause
/*
 * A service instrumented as an OpenTelemetry SDK would be: it publishes its process context
 * (OTEP 4719), then two threads serve spans and publish each as their thread context (OTEP
 * 4947), for SECONDS. With DELAY_MS the process context comes only after that long, as from an
 * SDK that starts after main.
 *
 * Usage: otel_ctx SECONDS [DELAY_MS]
 * Its resource: service.name ctx-checkout, service.version 2.4.1, service.instance.id
 * ctx-instance-7, deployment.environment.name e2e; thread keys http.route and user.id.
 *
 * Each thread loops: in_span_a() (thread 1) or in_span_b() (thread 2) with its span attached,
 * then no_span() with none; so a sample's function says which span it must carry:
 *   in_span_a: trace 0a0a...0a01, span a1a1a1a1a1a1a1a1, http.route=/checkout, user.id=u-1
 *   in_span_b: trace 0b0b...0b02, span b2b2b2b2b2b2b2b2, http.route=/cart (user.id written
 *              twice, the last one u-2b wins)
 *   no_span:   none
 * and waits 10 ms in in_span_wait() (its span attached) and in no_span_wait() (none), and in its
 * span takes three times a mutex that a third thread holds 8 ms of every 9 (in_span_lock()).
 * Built three ways (tests/e2e/workloads.mk): the variable in the executable (otel_ctx,
 * local-exec), in libotel_tls.so loaded at start (otel_ctx_lib, TLSDESC, static TLS), and in
 * libotel_tls.so loaded by dlopen (otel_ctx_dl, TLSDESC, dynamic TLS).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "otel_publish.h"
#include "workload.h"

/* The OTEP's record, byte-packed: 28 bytes, then {key index, length, bytes} entries. */
struct __attribute__((packed, aligned(8))) otel_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_size;
	uint8_t attrs[128];
};

static void (*attach)(void *record);

#if defined(OTEL_TLS_LIB)
void otel_tls_attach(void *record);
#elif !defined(OTEL_TLS_DLOPEN)
#include "otel_tls.c"
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long burn(double seconds)
{
	double until = now() + seconds;
	unsigned long acc = 1;

	while (now() < until)
		SPIN(20000, acc);
	return acc;
}

/* Three functions with the same body: noipa keeps gcc from folding them into one (-fipa-icf),
 * which would give all their samples one name. */
#ifdef __clang__
#define DISTINCT NOINLINE
#else
#define DISTINCT __attribute__((noipa))
#endif

/* burn() called last would be a jump, and the caller's frame would not be in the stack. */
#define NO_TAIL_CALL                                                                               \
	({                                                                                         \
		__asm__ volatile("" ::: "memory");                                                 \
		1UL;                                                                               \
	})

static DISTINCT unsigned long in_span_a(double s)
{
	KEEP_FRAME();
	return burn(s) + NO_TAIL_CALL;
}

static DISTINCT unsigned long in_span_b(double s)
{
	KEEP_FRAME();
	return burn(s) + NO_TAIL_CALL;
}

static DISTINCT unsigned long no_span(double s)
{
	KEEP_FRAME();
	return burn(s) + NO_TAIL_CALL;
}

/*
 * Waits, in a span and out of one: wall and off-CPU samples must say which. Through sleep_10ms(),
 * a frame of its own: a frame-pointer walk (off-CPU stacks before Linux 5.17) starts from libc's
 * nanosleep, which keeps no frame, and so loses its caller's caller, not in_span_wait.
 */
static DISTINCT void sleep_10ms(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	KEEP_FRAME();
	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

static DISTINCT void in_span_wait(void)
{
	KEEP_FRAME();
	sleep_10ms();
	__asm__ volatile("" ::: "memory");
}

static DISTINCT void no_span_wait(void)
{
	KEEP_FRAME();
	sleep_10ms();
	__asm__ volatile("" ::: "memory");
}

/*
 * A lock both threads take in their spans, which a third thread (no span) holds 8 ms of every
 * 9: every take waits, however the two workers' loops fall in or out of step, so contention
 * samples must say whose span waited.
 */
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;

static void *hold_lock(void *arg)
{
	const double *until = arg;
	struct timespec held = {0, 8 * 1000 * 1000}, free_for = {0, 1000 * 1000};

	while (now() < *until) {
		pthread_mutex_lock(&shared);
		nanosleep(&held, NULL);
		pthread_mutex_unlock(&shared);
		nanosleep(&free_for, NULL);
	}
	return NULL;
}

static DISTINCT unsigned long in_span_lock(void)
{
	unsigned long acc;

	KEEP_FRAME();
	acc = 0;
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&shared);
		acc += burn(0.001);
		pthread_mutex_unlock(&shared);
	}
	return acc + NO_TAIL_CALL;
}

static NOINLINE unsigned long ctx_work(double until)
{
	unsigned long acc = 1;

	KEEP_FRAME();
	while (now() < until)
		SPIN(100000, acc);
	return acc;
}

static void add_attr(struct otel_record *r, uint8_t key, const char *value)
{
	size_t n = strlen(value);

	r->attrs[r->attrs_size] = key;
	r->attrs[r->attrs_size + 1] = (uint8_t)n;
	memcpy(r->attrs + r->attrs_size + 2, value, n);
	r->attrs_size = (uint16_t)(r->attrs_size + 2 + n);
}

static void make_record(struct otel_record *r, uint8_t trace, uint8_t last, uint8_t span)
{
	memset(r, 0, sizeof(*r));
	memset(r->trace_id, trace, sizeof(r->trace_id));
	r->trace_id[15] = last;
	memset(r->span_id, span, sizeof(r->span_id));
	r->trace_flags = 1;
}

struct worker {
	int which;
	double until;
	unsigned long acc;
};

static void *serve(void *arg)
{
	struct worker *w = arg;
	static struct otel_record records[2];
	struct otel_record *r = &records[w->which];

	if (w->which == 0) {
		make_record(r, 0x0a, 0x01, 0xa1);
		add_attr(r, 0, "/checkout");
		add_attr(r, 1, "u-1");
	} else {
		make_record(r, 0x0b, 0x02, 0xb2);
		add_attr(r, 1, "u-2");
		add_attr(r, 0, "/cart");
		add_attr(r, 1, "u-2b");
		add_attr(r, 7, "no such key"); /* outside the key map: ignored */
	}
	r->valid = 1;
	while (now() < w->until) {
		attach(r);
		w->acc += w->which == 0 ? in_span_a(0.03) : in_span_b(0.03);
		in_span_wait();
		w->acc += in_span_lock();
		attach(NULL);
		w->acc += no_span(0.02);
		no_span_wait();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const resource[] = {"service.name",
					       "ctx-checkout",
					       "service.version",
					       "2.4.1",
					       "service.instance.id",
					       "ctx-instance-7",
					       "deployment.environment.name",
					       "e2e",
					       NULL};
	static const char *const keys[] = {"http.route", "user.id"};
	double seconds = argc > 1 ? atof(argv[1]) : 5, start = now();
	double delay = argc > 2 ? atof(argv[2]) / 1000 : 0;
	struct worker workers[2] = {{.which = 0}, {.which = 1}};
	pthread_t threads[2];
	unsigned long acc = 0;

#if defined(OTEL_TLS_DLOPEN)
	void *lib = dlopen("libotel_tls.so", RTLD_NOW);

	attach = lib ? (void (*)(void *))dlsym(lib, "otel_tls_attach") : NULL;
	if (!attach) {
		fprintf(stderr, "otel_ctx: dlopen libotel_tls.so: %s\n", dlerror());
		return 1;
	}
#else
	attach = otel_tls_attach;
#endif
	if (delay > 0)
		acc += ctx_work(start + delay);
	/* OTEL_CTX_PUBLISH=0: the same work with no context published (bench/bench_thread_ctx.sh
	 * compares the sampler's cost with and without). */
	if (getenv("OTEL_CTX_PUBLISH") && !strcmp(getenv("OTEL_CTX_PUBLISH"), "0"))
		;
	else if (otel_publish(resource, "tls_v1", keys, 2) != 0) {
		perror("otel_ctx: publish");
		return 1;
	}
	double until = start + seconds;
	pthread_t holder;

	for (int i = 0; i < 2; i++) {
		workers[i].until = until;
		pthread_create(&threads[i], NULL, serve, &workers[i]);
	}
	pthread_create(&holder, NULL, hold_lock, &until);
	pthread_detach(holder);
	for (int i = 0; i < 2; i++) {
		pthread_join(threads[i], NULL);
		acc += workers[i].acc;
	}
	return acc == 42;
}

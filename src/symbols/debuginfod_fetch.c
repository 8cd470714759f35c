// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/debuginfod_fetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/chain.h"
#include "base/clock.h"
#include "base/curl_client.h"
#include "base/hash.h"
#include "base/hex.h"
#include "base/log.h"
#include "base/lru.h"
#include "base/thread.h"

#define NSEC_PER_SEC 1000000000ULL
#define BUILD_ID_MAX 64
/* Build-ids queued at most: a host starting hundreds of binaries at once queues the rest later. */
#define QUEUE_MAX 256

enum entry_state { E_QUEUED, E_RUNNING, E_READY, E_FAILED };

struct entry {
	uint8_t id[BUILD_ID_MAX];
	size_t len;
	enum entry_state state;
	enum debuginfod_failure why; /* E_FAILED */
	char *path;		     /* E_READY: the file in the cache */
	char *what;		     /* the binary that asked first, for messages */
	uint64_t settled_ns;	     /* when it became READY or FAILED */
	struct entry *hnext;
	struct entry *qnext; /* the queue, oldest first */
	struct lru_link lru; /* by when it was last asked for */
};

struct debuginfod_fetch {
	pthread_mutex_t lock;
	pthread_cond_t work; /* something was queued, or stop */
	pthread_cond_t done; /* a fetch ended */
	pthread_t thread;
	bool started;
	atomic_bool stop;
	atomic_uint_fast64_t generation;

	debuginfod_client *client; /* the fetch thread's alone once it runs */
	uint64_t deadline_ns;	   /* of the fetch under way; the fetch thread's */
	bool timed_out;		   /* the progress callback cancelled it for the deadline */
	uint64_t timeout_ns, retry_ns;

	struct entry **buckets;
	size_t nr_buckets, nr_entries, max_entries;
	struct lru lru;
	struct entry *queue_head, *queue_tail;
	size_t queued;
	struct entry *running;

	struct debuginfod_fetch_stats stats;
	/* The first failure of each kind, until debuginfod_fetch__warn_new_failures() says it. */
	bool warned[DEBUGINFOD_FAILURE__COUNT];
	char first_what[DEBUGINFOD_FAILURE__COUNT][PATH_MAX];
	char first_id[DEBUGINFOD_FAILURE__COUNT][2 * BUILD_ID_MAX + 1];
	int first_err[DEBUGINFOD_FAILURE__COUNT];
};

/* Each kind of failure: its metric label, and what it means for a person. */
static const struct {
	const char *name, *text;
} failures[DEBUGINFOD_FAILURE__COUNT] = {
	[DEBUGINFOD_NOT_FOUND] = {"not_found", "not found on the servers"},
	[DEBUGINFOD_UNREACHABLE] = {"unreachable",
				    "server unreachable (check DEBUGINFOD_URLS and the network)"},
	[DEBUGINFOD_TIMEOUT] = {"timeout",
				"timed out (raise the debuginfod timeout for slow servers)"},
	[DEBUGINFOD_REJECTED] = {"rejected",
				 "refused: the file served is not the binary's debug file"},
	[DEBUGINFOD_OTHER] = {"other", "failed for another reason"},
};

const char *debuginfod_fetch__failure_name(enum debuginfod_failure r)
{
	return failures[r < DEBUGINFOD_FAILURE__COUNT ? r : DEBUGINFOD_OTHER].name;
}

const char *debuginfod_fetch__failure_text(enum debuginfod_failure r)
{
	return failures[r < DEBUGINFOD_FAILURE__COUNT ? r : DEBUGINFOD_OTHER].text;
}

bool debuginfod_fetch__configured(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	/* Blanks alone name no server: libdebuginfod would find nothing to ask either. */
	return urls && urls[strspn(urls, " \t\n")];
}

double debuginfod_fetch__timeout_s(double configured)
{
	const char *env = getenv(DEBUGINFOD_TIMEOUT_ENV_VAR);
	char *end;
	long v;

	if (configured > 0)
		return configured;
	if (env && *env) {
		errno = 0;
		v = strtol(env, &end, 10);
		if (!errno && !*end && v > 0 && v <= 3600)
			return (double)v;
	}
	return DEBUGINFOD_FETCH_DEFAULT_TIMEOUT_S;
}

/* ---- the table of build-ids (under f->lock) ---- */

static size_t bucket_of(const struct debuginfod_fetch *f, const uint8_t *id, size_t len)
{
	/* Build-ids are hashes already; hashing them again only spreads short ones. */
	return hash_bytes(id, len) & (f->nr_buckets - 1);
}

static struct entry *find(struct debuginfod_fetch *f, const uint8_t *id, size_t len)
{
	for (struct entry *e = f->buckets[bucket_of(f, id, len)]; e; e = e->hnext)
		if (e->len == len && !memcmp(e->id, id, len))
			return e;
	return NULL;
}

static void entry_free(struct entry *e)
{
	if (!e)
		return;
	free(e->path);
	free(e->what);
	free(e);
}

static void forget(struct debuginfod_fetch *f, struct entry *e)
{
	CHAIN_UNLINK(&f->buckets[bucket_of(f, e->id, e->len)], e, hnext);
	lru__unlink(&f->lru, &e->lru);
	f->nr_entries--;
	entry_free(e);
}

/* Make room for one more: the least recently asked settled entry goes (queued and running ones
 * stay; there are at most QUEUE_MAX + 1 of them, fewer than max_entries). */
static void make_room(struct debuginfod_fetch *f)
{
	for (struct lru_link *l = lru__oldest(&f->lru); l && f->nr_entries >= f->max_entries;
	     l = l->newer) {
		struct entry *e = LRU_ENTRY(l, struct entry, lru);

		if (e->state == E_READY || e->state == E_FAILED) {
			forget(f, e);
			return;
		}
	}
}

static void enqueue(struct debuginfod_fetch *f, struct entry *e)
{
	e->state = E_QUEUED;
	e->qnext = NULL;
	if (f->queue_tail)
		f->queue_tail->qnext = e;
	else
		f->queue_head = e;
	f->queue_tail = e;
	f->queued++;
	f->stats.pending++;
	pthread_cond_signal(&f->work);
}

enum debuginfod_state debuginfod_fetch__get(struct debuginfod_fetch *f, const uint8_t *id,
					    size_t len, const char *what, char *path, size_t plen)
{
	enum debuginfod_state st = DEBUGINFOD_PENDING;
	struct entry *e;

	if (!f || !len || len > BUILD_ID_MAX)
		return DEBUGINFOD_FAILED;
	pthread_mutex_lock(&f->lock);
	e = find(f, id, len);
	if (!e) {
		if (f->queued >= QUEUE_MAX) {
			st = DEBUGINFOD_BUSY;
			goto out;
		}
		make_room(f);
		e = calloc(1, sizeof(*e));
		if (!e || !(e->what = strdup(what ? what : ""))) {
			entry_free(e);
			st = DEBUGINFOD_BUSY; /* out of memory: maybe later */
			goto out;
		}
		memcpy(e->id, id, len);
		e->len = len;
		CHAIN_PUSH(&f->buckets[bucket_of(f, id, len)], e, hnext);
		f->nr_entries++;
		lru__push_front(&f->lru, &e->lru);
		enqueue(f, e);
		goto out;
	}
	lru__touch(&f->lru, &e->lru);
	switch (e->state) {
	case E_QUEUED:
	case E_RUNNING:
		break;
	case E_READY:
		if (snprintf(path, plen, "%s", e->path) < (int)plen)
			st = DEBUGINFOD_READY;
		else
			st = DEBUGINFOD_FAILED;
		break;
	case E_FAILED:
		if (clock__ns(CLOCK_MONOTONIC) - e->settled_ns < f->retry_ns ||
		    f->queued >= QUEUE_MAX) {
			st = DEBUGINFOD_FAILED;
			break;
		}
		enqueue(f, e);
		break;
	}
out:
	pthread_mutex_unlock(&f->lock);
	return st;
}

/* Count a failure, and keep the first of its kind for the warning. Under f->lock. */
static void count_failure(struct debuginfod_fetch *f, struct entry *e, enum debuginfod_failure why,
			  int err)
{
	e->state = E_FAILED;
	e->why = why;
	e->settled_ns = clock__ns(CLOCK_MONOTONIC);
	f->stats.failed++;
	if (!f->stats.failures[why]++) {
		snprintf(f->first_what[why], sizeof(f->first_what[why]), "%s", e->what);
		hex__encode(f->first_id[why], e->id, e->len);
		f->first_err[why] = err;
	}
}

void debuginfod_fetch__reject(struct debuginfod_fetch *f, const uint8_t *id, size_t len)
{
	struct entry *e;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	e = find(f, id, len);
	if (e && e->state == E_READY) {
		/* It was counted as fetched: now it is a failure instead. */
		f->stats.ok--;
		free(e->path);
		e->path = NULL;
		count_failure(f, e, DEBUGINFOD_REJECTED, 0);
	}
	pthread_mutex_unlock(&f->lock);
}

uint64_t debuginfod_fetch__generation(const struct debuginfod_fetch *f)
{
	return f ? atomic_load_explicit(&f->generation, memory_order_acquire) : 0;
}

uint64_t debuginfod_fetch__wait(struct debuginfod_fetch *f, uint64_t timeout_ns)
{
	uint64_t end = clock__ns(CLOCK_MONOTONIC) + timeout_ns, left;
	struct timespec ts = {.tv_sec = end / NSEC_PER_SEC, .tv_nsec = end % NSEC_PER_SEC};

	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	while (f->stats.pending && clock__ns(CLOCK_MONOTONIC) < end)
		pthread_cond_timedwait(&f->done, &f->lock, &ts);
	left = f->stats.pending;
	pthread_mutex_unlock(&f->lock);
	return left;
}

void debuginfod_fetch__stats(struct debuginfod_fetch *f, struct debuginfod_fetch_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	*out = f->stats;
	pthread_mutex_unlock(&f->lock);
}

void debuginfod_fetch__warn_new_failures(struct debuginfod_fetch *f)
{
	struct {
		bool say;
		char what[PATH_MAX], id[2 * BUILD_ID_MAX + 1];
		int err;
	} w[DEBUGINFOD_FAILURE__COUNT];

	if (!f)
		return;
	/* Copied out, so that the log is written without the lock. */
	pthread_mutex_lock(&f->lock);
	for (int i = 0; i < DEBUGINFOD_FAILURE__COUNT; i++) {
		w[i].say = f->stats.failures[i] && !f->warned[i];
		if (!w[i].say)
			continue;
		f->warned[i] = true;
		memcpy(w[i].what, f->first_what[i], sizeof(w[i].what));
		memcpy(w[i].id, f->first_id[i], sizeof(w[i].id));
		w[i].err = f->first_err[i];
	}
	pthread_mutex_unlock(&f->lock);
	for (int i = 0; i < DEBUGINFOD_FAILURE__COUNT; i++)
		if (w[i].say)
			log_warn("debuginfod: debug info of %s (build-id %s) %s%s%s%s; other "
				 "binaries with this problem are only counted",
				 w[i].what[0] ? w[i].what : "a binary", w[i].id, failures[i].text,
				 w[i].err ? " (" : "", w[i].err ? strerror(w[i].err) : "",
				 w[i].err ? ")" : "");
}

/* ---- the fetch thread ---- */

/* Called by libdebuginfod about once a second while it waits: non-zero cancels the fetch. */
static int on_progress(debuginfod_client *client, long a, long b)
{
	struct debuginfod_fetch *f = debuginfod_get_user_data(client);

	if (atomic_load(&f->stop))
		return 1;
	if (clock__ns(CLOCK_MONOTONIC) >= f->deadline_ns) {
		f->timed_out = true;
		return 1;
	}
	return 0;
}

static enum debuginfod_failure classify(int err)
{
	switch (err) {
	case ENOENT:
		return DEBUGINFOD_NOT_FOUND;
	case ECONNREFUSED:
	case ECONNRESET:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EADDRNOTAVAIL:
		return DEBUGINFOD_UNREACHABLE;
	case ETIMEDOUT:
	case ETIME:
		return DEBUGINFOD_TIMEOUT;
	default:
		return DEBUGINFOD_OTHER;
	}
}

/* One fetch, without the lock: the entry cannot go away while it is E_RUNNING. */
static void fetch_one(struct debuginfod_fetch *f, struct entry *e)
{
	char hex[2 * BUILD_ID_MAX + 1], what[PATH_MAX], *path = NULL;
	uint64_t start = clock__ns(CLOCK_MONOTONIC);
	int fd;

	hex__encode(hex, e->id, e->len);
	/* Once settled, the entry may be evicted by the next get(): the log below uses copies. */
	snprintf(what, sizeof(what), "%s", e->what);
	f->deadline_ns = start + f->timeout_ns;
	f->timed_out = false;
	fd = debuginfod_find_debuginfo(f->client, e->id, (int)e->len, &path);
	if (fd >= 0)
		close(fd); /* debug_file.c opens it again by path, and checks it is the same file */

	pthread_mutex_lock(&f->lock);
	f->running = NULL;
	f->stats.pending--;
	if (fd >= 0 && path) {
		e->state = E_READY;
		e->path = path;
		e->settled_ns = clock__ns(CLOCK_MONOTONIC);
		f->stats.ok++;
		path = NULL;
	} else if (atomic_load(&f->stop)) {
		/* Shutting down: not a failure of the server. */
		e->state = E_FAILED;
		e->why = DEBUGINFOD_OTHER;
		e->settled_ns = clock__ns(CLOCK_MONOTONIC);
	} else {
		int err = fd >= 0 ? ENOMEM : -fd;

		count_failure(f, e, f->timed_out ? DEBUGINFOD_TIMEOUT : classify(err),
			      f->timed_out ? 0 : err);
	}
	atomic_fetch_add_explicit(&f->generation, 1, memory_order_release);
	pthread_cond_broadcast(&f->done);
	pthread_mutex_unlock(&f->lock);

	if (fd >= 0 && !path)
		log_debug("debuginfod: %s: debug file of %s fetched in %.0f ms", hex, what,
			  (clock__ns(CLOCK_MONOTONIC) - start) / 1e6);
	else
		log_debug("debuginfod: %s: no debug file for %s: %s", hex, what,
			  f->timed_out ? "timed out" : strerror(fd >= 0 ? ENOMEM : -fd));
	free(path);
}

static void *fetch_thread(void *arg)
{
	struct debuginfod_fetch *f = arg;

	pthread_mutex_lock(&f->lock);
	while (!atomic_load(&f->stop)) {
		struct entry *e = f->queue_head;

		if (!e) {
			pthread_cond_wait(&f->work, &f->lock);
			continue;
		}
		f->queue_head = e->qnext;
		if (!f->queue_head)
			f->queue_tail = NULL;
		f->queued--;
		e->qnext = NULL;
		e->state = E_RUNNING;
		f->running = e;
		pthread_mutex_unlock(&f->lock);
		fetch_one(f, e);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/*
 * libdebuginfod takes its cache directory from DEBUGINFOD_CACHE_PATH only, read at every fetch.
 * It is set once, here, before the fetch thread starts, and only when the user has not set it.
 * glibc never frees the strings that setenv() replaces, and this is hostprof's only setenv():
 * threads reading the environment meanwhile (libcurl's proxy variables) see the old or the new
 * array, both valid.
 */
static void set_cache_dir(const char *cache_dir)
{
	char dir[PATH_MAX];
	const char *have = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);

	if (!cache_dir || (have && *have))
		return;
	if (snprintf(dir, sizeof(dir), "%s/debuginfod", cache_dir) >= (int)sizeof(dir))
		return;
	/* libdebuginfod makes the last level only. */
	if ((mkdir(cache_dir, 0700) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST)) {
		log_warn("debuginfod: cannot make the cache directory %s: %s; using "
			 "libdebuginfod's default",
			 dir, strerror(errno));
		return;
	}
	if (have && !strcmp(have, dir))
		return;
	if (setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, dir, 1))
		log_warn("debuginfod: cannot set the cache directory %s: %s", dir, strerror(errno));
}

struct debuginfod_fetch *debuginfod_fetch__new(const struct debuginfod_fetch_opts *o)
{
	struct debuginfod_fetch *f;
	int rc;

	if (!debuginfod_fetch__configured()) {
		errno = ENOENT;
		return NULL;
	}
	if (!o || !(o->timeout_s > 0) || !o->max_entries) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->timeout_ns = (uint64_t)(o->timeout_s * NSEC_PER_SEC);
	f->retry_ns =
		(uint64_t)((o->retry_s > 0 ? o->retry_s : DEBUGINFOD_FETCH_RETRY_S) * NSEC_PER_SEC);
	/* Queued and running entries are never evicted: there must be room beyond them. */
	f->max_entries = o->max_entries > 2 * QUEUE_MAX ? o->max_entries : 2 * QUEUE_MAX;
	f->nr_buckets = 64;
	while (f->nr_buckets < f->max_entries)
		f->nr_buckets <<= 1;
	f->buckets = calloc(f->nr_buckets, sizeof(*f->buckets));
	/*
	 * debuginfod_begin() initialises libcurl: ours first, so that it does so without OpenSSL's
	 * crypto (curl_client.h). A failure is logged there, and debuginfod_begin() then fails too.
	 */
	curl_client__global_init();
	f->client = debuginfod_begin();
	if (!f->buckets || !f->client) {
		debuginfod_fetch__delete(f);
		errno = ENOMEM;
		return NULL;
	}
	debuginfod_set_user_data(f->client, f);
	debuginfod_set_progressfn(f->client, on_progress);
	set_cache_dir(o->cache_dir);

	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->work, NULL);
	rc = thread__cond_init_monotonic(&f->done);
	if (!rc) {
		/* Signals are the main thread's: it polls the flags their handlers set. */
		rc = thread__start(&f->thread, fetch_thread, f);
		if (rc)
			pthread_cond_destroy(&f->done);
	}
	if (rc) {
		debuginfod_end(f->client);
		pthread_cond_destroy(&f->work);
		pthread_mutex_destroy(&f->lock);
		free(f->buckets);
		free(f);
		errno = -rc;
		return NULL;
	}
	f->started = true;
	log_debug("debuginfod: fetching missing debug info from %s (timeout %g s)",
		  getenv(DEBUGINFOD_URLS_ENV_VAR), o->timeout_s);
	return f;
}

void debuginfod_fetch__delete(struct debuginfod_fetch *f)
{
	if (!f)
		return;
	if (f->started) {
		pthread_mutex_lock(&f->lock);
		atomic_store(&f->stop, true);
		pthread_cond_broadcast(&f->work);
		pthread_mutex_unlock(&f->lock);
		/* A fetch under way sees stop at its next progress call, within about a second. */
		pthread_join(f->thread, NULL);
		pthread_cond_destroy(&f->done);
		pthread_cond_destroy(&f->work);
		pthread_mutex_destroy(&f->lock);
	}
	while (lru__oldest(&f->lru)) {
		struct entry *e = LRU_ENTRY(lru__oldest(&f->lru), struct entry, lru);

		lru__unlink(&f->lru, &e->lru);
		entry_free(e);
	}
	if (f->client)
		debuginfod_end(f->client);
	free(f->buckets);
	free(f);
}

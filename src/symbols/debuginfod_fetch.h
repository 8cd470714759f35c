/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Separate debug files from debuginfod servers (DEBUGINFOD_URLS), fetched by build-id on a thread
 * of their own, so that a slow or dead server never holds up sampling or symbolization. Callers
 * ask without blocking and poll for the answer; every build-id's outcome is remembered (a failure
 * for a while, then it may be asked again), so a drain never retries what just failed.
 *
 * Thread model: one fetch thread owns the libdebuginfod client. The table of build-ids and the
 * queue are shared under one mutex, held only to read or write an entry, never during a fetch.
 */
#ifndef HOSTPROF_DEBUGINFOD_FETCH_H
#define HOSTPROF_DEBUGINFOD_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEBUGINFOD_FETCH_DEFAULT_TIMEOUT_S 10.0
/* A build-id whose fetch failed is asked again after this long (libdebuginfod itself remembers a
 * "not found" for ten minutes). */
#define DEBUGINFOD_FETCH_RETRY_S 600.0

struct debuginfod_fetch;

struct debuginfod_fetch_opts {
	/* hostprof's cache directory: files go to <cache_dir>/debuginfod. NULL: libdebuginfod's
	 * default. DEBUGINFOD_CACHE_PATH, when set, wins either way. */
	const char *cache_dir;
	double timeout_s;   /* per fetch, from start to the last byte; > 0 */
	double retry_s;	    /* 0: DEBUGINFOD_FETCH_RETRY_S */
	size_t max_entries; /* build-ids remembered (least recently asked forgotten first) */
};

enum debuginfod_state {
	DEBUGINFOD_PENDING, /* queued or being fetched: ask again when the generation changes */
	DEBUGINFOD_BUSY,    /* the queue is full: not queued, ask again later */
	DEBUGINFOD_READY,   /* the file is in the cache: *path names it */
	DEBUGINFOD_FAILED,  /* not to be had now; asked again after retry_s */
};

enum debuginfod_failure {
	DEBUGINFOD_NOT_FOUND,	/* no server has it (HTTP 404) */
	DEBUGINFOD_UNREACHABLE, /* connection refused, no route, name not resolved */
	DEBUGINFOD_TIMEOUT,	/* not there within the timeout */
	DEBUGINFOD_REJECTED,	/* what came is not the binary's debug file */
	DEBUGINFOD_OTHER,
	DEBUGINFOD_FAILURE__COUNT,
};

struct debuginfod_fetch_stats {
	uint64_t ok;				      /* files fetched (or found in the cache) */
	uint64_t failed;			      /* the sum of failures[] */
	uint64_t failures[DEBUGINFOD_FAILURE__COUNT]; /* enum debuginfod_failure */
	uint64_t pending;			      /* queued or being fetched now */
};

/* true when DEBUGINFOD_URLS names at least one server: without it nothing here is used. */
bool debuginfod_fetch__configured(void);
/* The per-fetch timeout: `configured` when > 0, else DEBUGINFOD_TIMEOUT (whole seconds) when set,
 * else DEBUGINFOD_FETCH_DEFAULT_TIMEOUT_S. */
double debuginfod_fetch__timeout_s(double configured);

/* Start the fetch thread. NULL + errno (ENOENT when DEBUGINFOD_URLS is unset or empty). */
struct debuginfod_fetch *debuginfod_fetch__new(const struct debuginfod_fetch_opts *o);
/* Cancel the fetch under way (within about a second), stop the thread, free. NULL is fine. */
void debuginfod_fetch__delete(struct debuginfod_fetch *f);

/*
 * Never blocks on the network. The state of this build-id's debug file; a build-id never asked is
 * queued (what names the binary in messages). READY writes the cached file's path into path
 * (len bytes, PATH_MAX is enough). A FAILED one older than retry_s is queued again.
 */
enum debuginfod_state debuginfod_fetch__get(struct debuginfod_fetch *f, const uint8_t *id,
					    size_t len, const char *what, char *path, size_t plen);
/* The file fetched for id is not its debug file (another build-id, not ELF): counted as a
 * failure, and not offered again before retry_s. */
void debuginfod_fetch__reject(struct debuginfod_fetch *f, const uint8_t *id, size_t len);
/* Bumped whenever a fetch ends: a PENDING answer can only change after it moved. */
uint64_t debuginfod_fetch__generation(const struct debuginfod_fetch *f);
/* Wait until nothing is queued or being fetched, at most timeout_ns. Returns how many are left. */
uint64_t debuginfod_fetch__wait(struct debuginfod_fetch *f, uint64_t timeout_ns);
void debuginfod_fetch__stats(struct debuginfod_fetch *f, struct debuginfod_fetch_stats *out);
/* A short name per failure kind ("not_found", ...), for metrics labels. */
const char *debuginfod_fetch__failure_name(enum debuginfod_failure r);
/* A sentence per failure kind, for the summary. */
const char *debuginfod_fetch__failure_text(enum debuginfod_failure r);
/*
 * From the caller's thread (the fetch thread never warns: a status line may be on the terminal):
 * one warning for the first failure of each kind, naming a binary and what to check. The rest
 * are counted in the stats.
 */
void debuginfod_fetch__warn_new_failures(struct debuginfod_fetch *f);

#endif /* HOSTPROF_DEBUGINFOD_FETCH_H */

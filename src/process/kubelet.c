// SPDX-License-Identifier: BSD-2-Clause
/*
 * Pod metadata from the kubelet's /pods: the client (one thread that fetches and swaps tables;
 * lookups copy out of the current table under a mutex held only for that copy or for the swap).
 * The parser and the table are kubelet_pods.c's.
 *
 * The kubelet's port 10250 is what `kubectl proxy`-free node agents use: authorised by the
 * service account's token (RBAC: get on nodes/proxy), served with the kubelet's own certificate,
 * which is often self-signed, hence ca_file and insecure.
 */
#include "process/kubelet.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/clock.h"
#include "base/curl_client.h"
#include "base/file_read.h"
#include "base/log.h"
#include "base/log_text.h"
#include "base/thread.h"
#include "base/url.h"
#include "base/vec.h"

#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_REFRESH_MS 30000
#define MAX_TOKEN_BYTES (64 * 1024)
/* How often a failure that keeps repeating is printed again ("... repeated N more times"). */
#define LOG_REPEAT_MS (10 * 60 * 1000)
/* The first allocation for a /pods body; it doubles from there up to KUBELET_MAX_BODY. */
#define BODY_START (64 * 1024)

#ifdef HOSTPROF_VERSION
#define USER_AGENT "hostprof/" HOSTPROF_VERSION
#else
#define USER_AGENT "hostprof"
#endif

/* ---------------------------------------------------------------------------------------------
 * The client
 */

enum fail_kind {
	FAIL_NONE = 0,
	FAIL_TOKEN,
	FAIL_CONNECT,
	FAIL_TLS,
	FAIL_TIMEOUT,
	FAIL_HTTP,
	FAIL_TOO_BIG,
	FAIL_PARSE,
	FAIL_OTHER,
	FAIL_STOPPING,
};

struct fetch_result {
	enum fail_kind kind;
	long code;
	struct kubelet_table *table;
	struct kubelet_parse_report report;
	char brief[sizeof(((struct kubelet_stats *)0)->last_error)];
	char detail[512];
};

struct kubelet {
	char *url;
	char shown[256]; /* url for logs, any userinfo masked */
	char *token_file;
	char *ca_file;
	bool insecure;
	int64_t timeout_ms;
	int64_t interval_ms;
	size_t max_pods;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* read by libcurl's progress callback, outside the lock */
	atomic_bool stopping;

	/* under lock */
	struct kubelet_table *table;
	bool want_fetch;
	bool fetching;
	bool fetched_once;
	int64_t last_fetch_ms; /* CLOCK_MONOTONIC start of the last fetch */
	struct kubelet_stats st;

	/* the thread's own */
	CURL *curl;
	char errbuf[CURL_ERROR_SIZE];
	char *body;
	size_t body_len, body_cap;
	bool body_too_big;
	struct fetch_result res;
	enum fail_kind last_kind;
	long last_code;
	bool warned_dropped;
	int64_t next_log_flush;
	struct log_ratelimit rl;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct kubelet *k = userdata;
	size_t n = size * nmemb;

	if (k->body_len + n > KUBELET_MAX_BODY) {
		k->body_too_big = true;
		return 0; /* CURLE_WRITE_ERROR */
	}
	/* At least BODY_START at first: a pod list is rarely smaller, and is read in pieces. */
	if (VEC_RESERVE(k->body, k->body_cap,
			k->body_len + n + 1 > BODY_START ? k->body_len + n + 1 : BODY_START))
		return 0;
	memcpy(k->body + k->body_len, data, n);
	k->body_len += n;
	return n;
}

static int on_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	const struct kubelet *k = clientp;

	/* libcurl calls this about once a second even when nothing moves: delete() waits no
	 * longer than that for a fetch in progress. */
	return atomic_load(&k->stopping) ? 1 : 0;
}

static int setup_curl(struct kubelet *k)
{
	/* The token goes nowhere but the kubelet: no redirects (curl_client__setup()). */
	struct curl_client_opts o = {
		.insecure = k->insecure,
		.ca_file = k->ca_file,
		.user_agent = USER_AGENT,
		.timeout_ms = (long)k->timeout_ms,
		.errbuf = k->errbuf,
		.progress = on_progress,
		.progress_arg = k,
	};
	CURLcode rc;

	if (curl_client__global_init())
		return -EIO;
	k->curl = curl_easy_init();
	if (!k->curl)
		return -ENOMEM;
	rc = curl_client__setup(k->curl, &o);
#define SETOPT(opt, val)                                                                           \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(k->curl, opt, val);                                  \
	} while (0)
	SETOPT(CURLOPT_URL, k->url);
	SETOPT(CURLOPT_HTTPGET, 1L);
	SETOPT(CURLOPT_ACCEPT_ENCODING, ""); /* whatever libcurl can decode */
	SETOPT(CURLOPT_WRITEFUNCTION, on_body);
	SETOPT(CURLOPT_WRITEDATA, k);
#undef SETOPT
	if (rc != CURLE_OK) {
		log_error("kubelet %s: setting up libcurl failed: %s", k->shown,
			  curl_easy_strerror(rc));
		curl_easy_cleanup(k->curl);
		k->curl = NULL;
		return -EINVAL;
	}
	return 0;
}

/* The token file's content, trimmed, in a buffer the caller scrubs. 0 or -errno. */
static int read_token(const char *path, char *buf, size_t len)
{
	size_t n = 0, start = 0;
	ssize_t r;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* A token that fills the buffer may go on past it. */
	r = file__read_upto(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		err = (int)r;
	else if ((size_t)r + 1 >= len)
		err = -EFBIG;
	else
		n = (size_t)r;
	if (err) {
		explicit_bzero(buf, len);
		return err;
	}
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	while (start < n && isspace((unsigned char)buf[start]))
		start++;
	memmove(buf, buf + start, n - start);
	n -= start;
	buf[n] = '\0';
	/* A header value must not carry a line break: that would smuggle another header. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f) {
			explicit_bzero(buf, len);
			return -EINVAL;
		}
	return n ? 0 : -ENODATA;
}

static void fail(struct fetch_result *r, enum fail_kind kind, const char *brief, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));

static void fail(struct fetch_result *r, enum fail_kind kind, const char *brief, const char *fmt,
		 ...)
{
	va_list ap;

	r->kind = kind;
	snprintf(r->brief, sizeof(r->brief), "%s", brief);
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

static void curl_failed(struct kubelet *k, CURLcode rc, struct fetch_result *r)
{
	char why[CURL_ERROR_SIZE + 64];

	log_text__sanitize(why, sizeof(why), k->errbuf, strlen(k->errbuf));
	if (!why[0])
		snprintf(why, sizeof(why), "%s", curl_easy_strerror(rc));
	switch (rc) {
	case CURLE_ABORTED_BY_CALLBACK:
		fail(r, FAIL_STOPPING, "stopped", "stopped");
		break;
	case CURLE_WRITE_ERROR:
		if (k->body_too_big)
			fail(r, FAIL_TOO_BIG, "response too large",
			     "the response is larger than %u bytes: not read", KUBELET_MAX_BODY);
		else
			fail(r, FAIL_OTHER, "out of memory", "out of memory reading the response");
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		fail(r, FAIL_CONNECT, "cannot resolve host",
		     "%s: check kubernetes.node_name (NODE_NAME) or kubernetes.kubelet_url", why);
		break;
	case CURLE_COULDNT_CONNECT:
		fail(r, FAIL_CONNECT, "connection failed",
		     "%s: is the kubelet listening there (port 10250)?", why);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		fail(r, FAIL_TIMEOUT, "timed out", "no answer within %lld ms (%s)",
		     (long long)k->timeout_ms, why);
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
		fail(r, FAIL_TLS, "TLS verification failed",
		     "TLS verification failed (%s): set kubernetes.ca_file to the CA that signed "
		     "the kubelet's serving certificate, or kubernetes.insecure",
		     why);
		break;
	case CURLE_SSL_CACERT_BADFILE:
		fail(r, FAIL_TLS, "TLS CA file unusable",
		     "TLS verification failed: the CA file '%s' cannot be used (%s): set "
		     "kubernetes.ca_file or kubernetes.insecure",
		     k->ca_file ? k->ca_file : "(system bundle)", why);
		break;
	case CURLE_SSL_CONNECT_ERROR:
		fail(r, FAIL_TLS, "TLS handshake failed", "TLS handshake failed (%s)", why);
		break;
	default:
		fail(r, FAIL_OTHER, curl_easy_strerror(rc), "%s", why);
		break;
	}
}

/* One GET /pods. Runs on the kubelet thread without the lock. */
static void fetch(struct kubelet *k, struct fetch_result *r)
{
	struct curl_slist *headers = NULL, *h;
	char token[MAX_TOKEN_BYTES];
	char *auth = NULL, perr[160];
	long status = 0;
	CURLcode rc;
	int err;

	memset(r, 0, sizeof(*r));
	if (!k->curl && setup_curl(k)) {
		fail(r, FAIL_OTHER, "libcurl setup failed", "libcurl setup failed");
		return;
	}
	h = curl_slist_append(NULL, "Accept: application/json");
	if (!h)
		goto nomem;
	headers = h;
	/* Read at every fetch: projected service account tokens are rotated on disk. */
	if (k->token_file) {
		err = read_token(k->token_file, token, sizeof(token));
		if (err) {
			fail(r, FAIL_TOKEN, "cannot read the token file",
			     "cannot read the token file %s: %s", k->token_file,
			     err == -ENODATA  ? "it is empty"
			     : err == -EFBIG  ? "it is too large"
			     : err == -EINVAL ? "it holds control characters"
					      : strerror(-err));
			goto out;
		}
		if (asprintf(&auth, "Authorization: Bearer %s", token) < 0)
			auth = NULL;
		explicit_bzero(token, sizeof(token));
		if (!auth)
			goto nomem;
		h = curl_slist_append(headers, auth);
		explicit_bzero(auth, strlen(auth));
		if (!h)
			goto nomem;
		headers = h;
	}
	curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, headers);
	k->body_len = 0;
	k->body_too_big = false;
	k->errbuf[0] = '\0';
	rc = curl_easy_perform(k->curl);
	/* The handle must not keep pointing at the list that is freed below. */
	curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, NULL);
	if (rc != CURLE_OK) {
		curl_failed(k, rc, r);
		goto out;
	}
	curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &status);
	r->code = status;
	if (status == 401 || status == 403) {
		char b[32];

		snprintf(b, sizeof(b), "HTTP %ld", status);
		fail(r, FAIL_HTTP, b,
		     "HTTP %ld: %s; the service account needs RBAC get on nodes/proxy "
		     "(a ClusterRole bound to it)",
		     status,
		     status == 401 ? "the token was refused (check kubernetes.token_file)"
				   : "the token is not allowed to read /pods");
		goto out;
	}
	if (status < 200 || status > 299) {
		char said[160], b[32];

		log_text__sanitize(said, sizeof(said), k->body ? k->body : "",
				   k->body_len < 150 ? k->body_len : 150);
		snprintf(b, sizeof(b), "HTTP %ld", status);
		fail(r, FAIL_HTTP, b, "HTTP %ld: %s", status, said[0] ? said : "(no message)");
		goto out;
	}
	err = kubelet__parse_pods(k->body ? k->body : "", k->body_len, k->max_pods, &r->table,
				  &r->report, perr, sizeof(perr));
	if (err)
		fail(r, FAIL_PARSE, "bad /pods response", "bad /pods response (%zu bytes): %s",
		     k->body_len, perr);
	goto out;
nomem:
	fail(r, FAIL_OTHER, "out of memory", "out of memory");
out:
	for (h = headers; h; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(headers);
	free(auth);
	/* Between fetches, which may be minutes apart, the body is not worth keeping. */
	free(k->body);
	k->body = NULL;
	k->body_len = k->body_cap = 0;
}

/* One warning per kind of failure; repeats are counted and summed up later. */
static void log_result(struct kubelet *k, const struct fetch_result *r)
{
	int64_t now = clock__mono_ms();

	if (r->kind == FAIL_STOPPING)
		return;
	if (r->kind == FAIL_NONE) {
		if (k->last_kind != FAIL_NONE) {
			log_ratelimit_flush(&k->rl);
			log_info("kubelet %s: /pods fetched again (%zu pods)", k->shown,
				 r->report.pods);
		}
		if (r->report.pods_dropped && !k->warned_dropped) {
			k->warned_dropped = true;
			log_warn(
				"kubelet %s: %zu pods beyond the bound of %zu are not known (raise "
				"max_pods)",
				k->shown, r->report.pods_dropped, k->max_pods);
		}
		if (r->report.warning[0])
			log_debug("kubelet %s: %s", k->shown, r->report.warning);
		k->last_kind = FAIL_NONE;
		return;
	}
	if (r->kind != k->last_kind || r->code != k->last_code || now >= k->next_log_flush) {
		log_ratelimit_flush(&k->rl);
		k->next_log_flush = now + LOG_REPEAT_MS;
	}
	log_warn_once(&k->rl, "kubelet %s: fetching pods failed: %s (pod metadata stays as it was)",
		      k->shown, r->detail);
	k->last_kind = r->kind;
	k->last_code = r->code;
}

static void *kubelet_thread(void *arg)
{
	struct kubelet *k = arg;
	struct fetch_result *r = &k->res;

	pthread_mutex_lock(&k->lock);
	while (!atomic_load(&k->stopping)) {
		struct kubelet_table *old = NULL;
		int64_t now = clock__mono_ms(), due;

		if (!k->want_fetch) {
			pthread_cond_wait(&k->wake, &k->lock);
			continue;
		}
		due = k->fetched_once ? k->last_fetch_ms + k->interval_ms : now;
		if (now < due) {
			struct timespec ts;

			ts.tv_sec = due / 1000;
			ts.tv_nsec = (due % 1000) * 1000000;
			pthread_cond_timedwait(&k->wake, &k->lock, &ts);
			continue;
		}
		k->want_fetch = false;
		k->fetching = true;
		k->fetched_once = true;
		k->last_fetch_ms = now;
		pthread_mutex_unlock(&k->lock);

		fetch(k, r);
		log_result(k, r);

		pthread_mutex_lock(&k->lock);
		k->fetching = false;
		if (r->kind == FAIL_STOPPING)
			break;
		k->st.fetches++;
		if (r->kind == FAIL_NONE) {
			old = k->table;
			k->table = r->table;
			r->table = NULL;
			k->st.last_fetch_ok = true;
			k->st.pods = r->report.pods;
			k->st.containers = r->report.containers;
			k->st.pods_dropped = r->report.pods_dropped;
		} else {
			k->st.fetch_failures++;
			k->st.last_fetch_ok = false;
			snprintf(k->st.last_error, sizeof(k->st.last_error), "%s", r->brief);
		}
		if (old) {
			/* Freed outside the lock: lookups need not wait for it. */
			pthread_mutex_unlock(&k->lock);
			kubelet_table__delete(old);
			pthread_mutex_lock(&k->lock);
		}
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

static char *dup_or_null(const char *s, bool *failed)
{
	char *d;

	if (!s || !*s)
		return NULL;
	d = strdup(s);
	if (!d)
		*failed = true;
	return d;
}

static void free_strings(struct kubelet *k)
{
	free(k->url);
	free(k->token_file);
	free(k->ca_file);
}

struct kubelet *kubelet__new(const struct kubelet_opts *o)
{
	struct kubelet *k;
	char why[256];
	bool failed = false;
	int rc;

	if (!o || url__check_http(o->url, why, sizeof(why))) {
		if (o && o->url) {
			char masked[256], shown[256];

			url__mask(o->url, masked, sizeof(masked));
			log_text__sanitize(shown, sizeof(shown), masked, strlen(masked));
			log_error("kubelet: '%s': %s", shown, why);
		}
		errno = EINVAL;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->url = dup_or_null(o->url, &failed);
	k->token_file = dup_or_null(o->token_file, &failed);
	k->ca_file = dup_or_null(o->ca_file, &failed);
	if (failed) {
		free_strings(k);
		free(k);
		errno = ENOMEM;
		return NULL;
	}
	k->insecure = o->insecure;
	k->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	k->interval_ms = o->refresh_interval_ms > 0 ? o->refresh_interval_ms : DEFAULT_REFRESH_MS;
	k->max_pods = o->max_pods ? o->max_pods : KUBELET_DEFAULT_MAX_PODS;
	k->want_fetch = true; /* the first fetch, at once */
	k->rl.key = "kubelet: fetching pods failed";
	k->next_log_flush = clock__mono_ms() + LOG_REPEAT_MS;
	atomic_init(&k->stopping, false);
	url__mask(k->url, k->shown, sizeof(k->shown));
	if (k->insecure && !strncasecmp(k->url, "https://", 8))
		log_warn("kubelet %s: TLS certificate verification is OFF (kubernetes.insecure)",
			 k->shown);
	if (k->token_file && !strncasecmp(k->url, "http://", 7))
		log_warn("kubelet %s: plain http: the service account token is sent unencrypted",
			 k->shown);

	pthread_mutex_init(&k->lock, NULL);
	/* The refresh interval is a monotonic deadline: a clock step must not stretch it. */
	rc = thread__cond_init_monotonic(&k->wake);
	if (rc) {
		pthread_mutex_destroy(&k->lock);
	} else {
		rc = thread__start(&k->thread, kubelet_thread, k);
		if (rc) {
			pthread_cond_destroy(&k->wake);
			pthread_mutex_destroy(&k->lock);
		}
	}
	if (rc) {
		log_error("kubelet: cannot start its thread: %s", strerror(-rc));
		free_strings(k);
		free(k);
		errno = -rc;
		return NULL;
	}
	return k;
}

void kubelet__delete(struct kubelet *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	atomic_store(&k->stopping, true);
	pthread_cond_signal(&k->wake);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thread, NULL);
	log_ratelimit_flush(&k->rl);
	if (k->curl)
		curl_easy_cleanup(k->curl);
	free(k->body);
	kubelet_table__delete(k->table);
	pthread_cond_destroy(&k->wake);
	pthread_mutex_destroy(&k->lock);
	free_strings(k);
	free(k);
}

int kubelet__lookup(struct kubelet *k, const char *container_id, struct pod_meta *out)
{
	int rc;

	if (!k || !container_id || !out)
		return -EINVAL;
	/* Not an ID any runtime gives: no fetch could ever find it. */
	if (!kubelet__container_id_ok(container_id))
		return -ENOENT;
	pthread_mutex_lock(&k->lock);
	k->st.lookups++;
	rc = kubelet_table__lookup(k->table, container_id, out);
	if (rc) {
		k->st.misses++;
		/* A fetch in flight may bring it; if not, the next miss asks again. */
		if (!k->fetching && !k->want_fetch) {
			k->want_fetch = true;
			pthread_cond_signal(&k->wake);
		}
	}
	pthread_mutex_unlock(&k->lock);
	return rc;
}

void kubelet__stats(struct kubelet *k, struct kubelet_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	*out = k->st;
	out->memory_bytes = sizeof(*k) + kubelet_table__bytes(k->table);
	pthread_mutex_unlock(&k->lock);
}

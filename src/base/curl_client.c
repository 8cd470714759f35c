// SPDX-License-Identifier: BSD-2-Clause
#include "base/curl_client.h"

#include <errno.h>
#include <libssh2.h>
#include <pthread.h>

#include "base/log.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
	/*
	 * libcurl's global init runs libssh2_init(0), which initialises OpenSSL's crypto (its
	 * builtin engines and algorithm tables): ~1.7 MiB resident for the agent's life, for SSH,
	 * which curl_client__setup() never allows. libssh2 counts its inits and sets its crypto up
	 * only on the first, so initialising it first without crypto makes libcurl's call a no-op.
	 * Failure here costs only that memory: libcurl's own init decides.
	 */
	libssh2_init(LIBSSH2_INIT_NO_CRYPTO);
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int curl_client__global_init(void)
{
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc != CURLE_OK) {
		log_error("libcurl: global init failed: %s", curl_easy_strerror(curl_init_rc));
		return -EIO;
	}
	return 0;
}

CURLcode curl_client__setup(CURL *h, const struct curl_client_opts *o)
{
	CURLcode rc = CURLE_OK;

#define SETOPT(opt, val)                                                                           \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(h, opt, val);                                        \
	} while (0)

	o->errbuf[0] = '\0';
	SETOPT(CURLOPT_ERRORBUFFER, o->errbuf);
	/* libcurl's signal-based DNS timeouts are not safe with threads. */
	SETOPT(CURLOPT_NOSIGNAL, 1L);
	SETOPT(CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L);
	SETOPT(CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L);
	if (o->ca_file)
		SETOPT(CURLOPT_CAINFO, o->ca_file);
	if (o->user_agent)
		SETOPT(CURLOPT_USERAGENT, o->user_agent);
	if (o->timeout_ms > 0) {
		SETOPT(CURLOPT_TIMEOUT_MS, o->timeout_ms);
		SETOPT(CURLOPT_CONNECTTIMEOUT_MS, o->timeout_ms);
	}
#if LIBCURL_VERSION_NUM >= 0x075500
	SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
#else
	SETOPT(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* A redirect would replay our credentials (tokens, headers) to wherever it points. */
	SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
	if (o->progress) {
		SETOPT(CURLOPT_NOPROGRESS, 0L);
		SETOPT(CURLOPT_XFERINFOFUNCTION, o->progress);
		SETOPT(CURLOPT_XFERINFODATA, o->progress_arg);
	}
#undef SETOPT
	return rc;
}

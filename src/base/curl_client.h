/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libcurl as every HTTP client here uses it (the export transports, the kubelet client): one
 * curl_global_init() per process, and the options every easy handle shares, so that TLS
 * verification, the protocol allow-list and the no-redirect rule are written once.
 */
#ifndef HOSTPROF_CURL_CLIENT_H
#define HOSTPROF_CURL_CLIENT_H

#include <curl/curl.h>
#include <stdbool.h>

/*
 * curl_global_init() once per process: libcurl wants it before any other thread uses libcurl,
 * and only once. Thread-safe; later calls return the first one's result. 0 or -EIO (logged).
 * Call it before anything else that initialises libcurl (libdebuginfod's debuginfod_begin()),
 * so that libcurl's SSH backend is set up without OpenSSL's crypto.
 */
int curl_client__global_init(void);

struct curl_client_opts {
	bool insecure;		/* https without certificate verification (never the default) */
	const char *ca_file;	/* PEM bundle to verify the server with; NULL = system store */
	const char *user_agent; /* NULL: libcurl sends none */
	long timeout_ms;	/* whole transfer and connect; <= 0 = no limit */
	char *errbuf;		/* CURL_ERROR_SIZE bytes for libcurl's messages */
	/* Called about once a second even when nothing moves; non-zero aborts the transfer. */
	curl_xferinfo_callback progress;
	void *progress_arg;
};

/*
 * The shared options: errbuf, no signals, TLS verified unless o->insecure, o->ca_file,
 * o->user_agent, the timeouts, http and https only, no redirects, and the progress callback.
 * Returns libcurl's code for the first option it refused, else CURLE_OK.
 */
CURLcode curl_client__setup(CURL *h, const struct curl_client_opts *o);

#endif /* HOSTPROF_CURL_CLIENT_H */

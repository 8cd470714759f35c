// SPDX-License-Identifier: BSD-2-Clause
#include "base/curl_global.h"

#include <errno.h>
#include <pthread.h>

#include <curl/curl.h>

#include "base/log.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int curl_global__init_once(void)
{
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc != CURLE_OK) {
		log_error("libcurl: global init failed: %s", curl_easy_strerror(curl_init_rc));
		return -EIO;
	}
	return 0;
}

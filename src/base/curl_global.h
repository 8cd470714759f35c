/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * curl_global_init() once per process. libcurl wants it called before any other thread uses
 * libcurl, and only once: every libcurl user (the export transports, the kubelet client) calls
 * this before its first handle instead of calling curl_global_init() itself.
 */
#ifndef HOSTPROF_CURL_GLOBAL_H
#define HOSTPROF_CURL_GLOBAL_H

/* Thread-safe; the first call does the work, later ones return its result. 0 or -EIO (logged). */
int curl_global__init_once(void);

#endif /* HOSTPROF_CURL_GLOBAL_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every HTTP client here checks of a configured URL before using it, and how a URL is shown
 * in a log line: without the credentials a "user:password@" part may carry.
 */
#ifndef HOSTPROF_URL_H
#define HOSTPROF_URL_H

#include <stddef.h>

/*
 * http:// or https:// (any case), a non-empty host, an optional numeric port (1-65535), and no
 * whitespace, control or non-ASCII characters anywhere. 0, or -EINVAL with the reason in err
 * (which never repeats a userinfo part).
 */
int url__check_http(const char *url, char *err, size_t errlen);

/*
 * base + path with exactly one '/' between them (the base's own path is kept, trailing slashes
 * go): a malloc'ed string, or NULL when out of memory.
 */
char *url__join(const char *base, const char *path);

/* url with any "user:password@" replaced by "***@", for logs. Always NUL-terminates buf. */
void url__mask(const char *url, char *buf, size_t len);

#endif /* HOSTPROF_URL_H */

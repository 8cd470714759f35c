// SPDX-License-Identifier: BSD-2-Clause
#include "base/url.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The host of an authority (after any userinfo) ends where? NULL with err set when malformed. */
static const char *host_end(const char *host, const char *auth_end, char *err, size_t errlen)
{
	const char *end;

	if (*host != '[') {
		end = memchr(host, ':', (size_t)(auth_end - host));
		return end ? end : auth_end;
	}
	end = memchr(host, ']', (size_t)(auth_end - host));
	if (!end || end == host + 1) {
		snprintf(err, errlen, "URL has a malformed IPv6 address");
		return NULL;
	}
	end++;
	if (end < auth_end && *end != ':') {
		snprintf(err, errlen, "URL has junk after the IPv6 address");
		return NULL;
	}
	return end;
}

/* p..end is what follows the ':' of an authority. */
static int check_port(const char *p, const char *end, char *err, size_t errlen)
{
	long port = 0;

	if (p == end) {
		snprintf(err, errlen, "URL has an empty port");
		return -EINVAL;
	}
	for (; p < end; p++) {
		if (!isdigit((unsigned char)*p) || port > 65535) {
			snprintf(err, errlen, "URL has a bad port");
			return -EINVAL;
		}
		port = port * 10 + (*p - '0');
	}
	if (port < 1 || port > 65535) {
		snprintf(err, errlen, "URL port must be 1-65535");
		return -EINVAL;
	}
	return 0;
}

int url__check_http(const char *url, char *err, size_t errlen)
{
	const char *p, *auth, *auth_end, *host, *hend;

	if (!url || !*url) {
		snprintf(err, errlen, "no URL given");
		return -EINVAL;
	}
	for (p = url; *p; p++) {
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
			snprintf(err, errlen,
				 "URL has a space, control or non-ASCII character at offset %zu "
				 "(percent-encode it)",
				 (size_t)(p - url));
			return -EINVAL;
		}
	}
	if (strncasecmp(url, "http://", 7) == 0)
		auth = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		auth = url + 8;
	else {
		snprintf(err, errlen, "URL must start with http:// or https://");
		return -EINVAL;
	}
	auth_end = auth + strcspn(auth, "/?#");
	host = auth;
	for (p = auth; p < auth_end; p++)
		if (*p == '@')
			host = p + 1;
	hend = host_end(host, auth_end, err, errlen);
	if (!hend)
		return -EINVAL;
	if (hend == host) {
		snprintf(err, errlen, "URL has no host");
		return -EINVAL;
	}
	return hend < auth_end ? check_port(hend + 1, auth_end, err, errlen) : 0;
}

void url__mask(const char *url, char *buf, size_t len)
{
	const char *auth, *auth_end, *at = NULL;

	if (!len)
		return;
	if (!url) {
		snprintf(buf, len, "(none)");
		return;
	}
	auth = strstr(url, "://");
	if (!auth) {
		snprintf(buf, len, "%s", url);
		return;
	}
	auth += 3;
	auth_end = auth + strcspn(auth, "/?#");
	for (const char *p = auth; p < auth_end; p++)
		if (*p == '@')
			at = p;
	if (!at)
		snprintf(buf, len, "%s", url);
	else
		snprintf(buf, len, "%.*s***%s", (int)(auth - url), url, at);
}

char *url__join(const char *base, const char *path)
{
	size_t len = strlen(base);
	char *s;

	while (len && base[len - 1] == '/')
		len--;
	if (asprintf(&s, "%.*s%s", (int)len, base, path) < 0)
		return NULL;
	return s;
}

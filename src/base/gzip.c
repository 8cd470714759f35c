// SPDX-License-Identifier: BSD-2-Clause
#include "base/gzip.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int gzip__inflate(const uint8_t *in, size_t len, size_t max_out, uint8_t **out, size_t *out_len,
		  char *why, size_t why_len)
{
	z_stream zs = {0};
	size_t cap = len < max_out / 4 ? len * 4 + 4096 : max_out;
	uint8_t *buf;
	int zerr, err = 0;

	if (len > UINT_MAX) {
		snprintf(why, why_len, "compressed input over 4 GiB");
		return -EFBIG;
	}
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	/* 15 + 32: the window size, and detect gzip or zlib framing from the header. */
	if (inflateInit2(&zs, 15 + 32) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	zs.next_in = (uint8_t *)in;
	zs.avail_in = (unsigned)len;
	for (;;) {
		if (zs.total_out == cap) {
			uint8_t *nb;

			cap *= 2;
			if (cap > max_out) {
				snprintf(why, why_len, "decompresses to more than %zu bytes",
					 max_out);
				err = -EFBIG;
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		zs.next_out = buf + zs.total_out;
		zs.avail_out = (unsigned)(cap - zs.total_out);
		zerr = inflate(&zs, Z_NO_FLUSH);
		if (zerr == Z_STREAM_END)
			break;
		if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
			snprintf(why, why_len, "gzip data corrupt at compressed byte %lu: %s",
				 zs.total_in, zs.msg ? zs.msg : "inflate failed");
			err = -EINVAL;
			goto out;
		}
		if (zerr == Z_BUF_ERROR && zs.avail_in == 0) {
			snprintf(why, why_len, "gzip data truncated at compressed byte %lu",
				 zs.total_in);
			err = -EINVAL;
			goto out;
		}
	}
	*out = buf;
	*out_len = zs.total_out;
	buf = NULL;
out:
	free(buf);
	inflateEnd(&zs);
	return err;
}

int gzip__deflate(const void *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = {0};
	uint8_t *buf;
	int zerr = Z_STREAM_ERROR;

	*out = NULL;
	*out_len = 0;
	/* deflateBound() covers the worst case of one Z_FINISH call, whose counts are 32 bits. */
	if (len > UINT32_MAX / 2)
		return -EIO;
	/* 15 + 16: the window size, and a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	zs.avail_out = (uInt)deflateBound(&zs, (uLong)len);
	buf = malloc(zs.avail_out ? zs.avail_out : 1);
	if (buf) {
		zs.next_in = (Bytef *)in;
		zs.avail_in = (uInt)len;
		zs.next_out = buf;
		zerr = deflate(&zs, Z_FINISH);
	}
	/* total_out is a plain field: it outlives the stream's state. */
	deflateEnd(&zs);
	if (!buf)
		return -ENOMEM;
	if (zerr != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*out_len = zs.total_out;
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * Docker's config.v2.json, which the agent reads from Docker's state directory to name a
 * container. Its "Name" is chosen by whoever runs `docker run --name`, and the whole file by
 * anyone who can write there. A name found is non-empty, fits the buffer, has no control
 * characters; a failure leaves "". A buffer too small for the name says so (-E2BIG) and gives
 * the same name when it fits.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "process/docker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int name_of(const uint8_t *data, size_t size, char *out, size_t len)
{
	int err;

	memset(out, 'x', len);
	err = docker__name_from_config((const char *)data, size, out, len);
	FUZZ_ASSERT(err == 0 || err == -EINVAL || err == -ENOENT || err == -E2BIG ||
		    err == -ENOMEM);
	FUZZ_ASSERT(memchr(out, '\0', len));
	if (err) {
		FUZZ_ASSERT(out[0] == '\0');
		return err;
	}
	FUZZ_ASSERT(out[0]);
	for (const char *c = out; *c; c++)
		FUZZ_ASSERT((unsigned char)*c >= 0x20 && *c != 0x7f);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256], small[8];
	int err, err_small;

	err = name_of(data, size, name, sizeof(name));
	err_small = name_of(data, size, small, sizeof(small));
	if (err == 0)
		FUZZ_ASSERT(strlen(name) < sizeof(small) ? err_small == 0 && !strcmp(name, small)
							 : err_small == -E2BIG);
	else if (err != -E2BIG && err != -ENOMEM)
		FUZZ_ASSERT(err_small == err);
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/PID/environ, which the process writes itself: NUL-separated entries, perhaps without a
 * final NUL, of any bytes. A service name found must be non-empty and fit the buffer it was given;
 * none found leaves an empty string.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "process/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size, size_t outlen)
{
	char out[300];
	int err;

	memset(out, 'x', sizeof(out));
	err = proc__service_from_environ((const char *)data, size, out, outlen);
	FUZZ_ASSERT(err == 0 || err == -ENOENT);
	FUZZ_ASSERT(memchr(out, '\0', outlen));
	FUZZ_ASSERT(err ? out[0] == '\0' : out[0] != '\0');
	if (!err)
		FUZZ_ASSERT(memmem(data, size, "OTEL_", 5));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libFuzzer's data is an exact-size copy: ASan sees a read past the process's text. The
	 * agent's 256-byte buffer, then one that most names do not fit. */
	check(data, size, 256);
	check(data, size, size ? 1 + data[0] % 8 : 1);
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * A receiver's answer to an OTLP export (ExportProfilesServiceResponse, its partial_success), as
 * protobuf and as OTLP/JSON: the first byte's low bit says which, the rest is the body. The
 * message must come out as one printable line within its buffer; a failure must leave nothing
 * behind (0 rejected, no message), since the export is counted as delivered all the same.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "export/otlp_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const char *msg, size_t len)
{
	const char *end = memchr(msg, '\0', len);

	FUZZ_ASSERT(end);
	for (const char *c = msg; c < end; c++)
		FUZZ_ASSERT(*c >= 0x20 && *c < 0x7f);
}

static void parse(const uint8_t *body, size_t len, bool json, size_t msglen)
{
	int64_t rejected = -7;
	char msg[512];
	int err;

	memset(msg, 'x', sizeof(msg));
	err = otlp_response__parse(body, len, json, &rejected, msg, msglen);
	FUZZ_ASSERT(err == 0 || err == -EBADMSG || err == -ENOMEM);
	check_line(msg, msglen);
	if (err)
		FUZZ_ASSERT(rejected == 0 && msg[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool json;

	if (!size)
		return 0;
	json = data[0] & 1;
	/* The transports' buffer, and a tiny one that any message overflows. */
	parse(data + 1, size - 1, json, 512);
	parse(data + 1, size - 1, json, 1 + (data[0] >> 1) % 8);
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/* The collapsed-stack decoder (`hostprof render x.folded`) on arbitrary text. */
#include "formats/decode.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL;
	char err[256];
	int e = dec_folded__parse((const char *)data, size, "fuzz.folded", &p, err, sizeof(err));

	/* The contract of decode.h: a profile on success, none and a message on failure. */
	FUZZ_ASSERT(e ? p == NULL && err[0] : p != NULL);
	profile__delete(p);
	return 0;
}

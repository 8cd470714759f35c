// SPDX-License-Identifier: BSD-2-Clause
/* The pprof decoder (`hostprof render x.pb.gz`) on arbitrary bytes, gzipped or not. */
#include "formats/decode.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL;
	char err[256];
	int e = dec_pprof__parse(data, size, "fuzz.pb", &p, err, sizeof(err));

	/* The contract of decode.h: a profile on success, none and a message on failure. */
	FUZZ_ASSERT(e ? p == NULL && err[0] : p != NULL);
	profile__delete(p);
	return 0;
}

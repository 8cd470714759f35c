// SPDX-License-Identifier: BSD-2-Clause
/* The OTLP profiles decoder (`hostprof render x.otlp.pb`) on arbitrary bytes, gzipped or not. */
#include <stdlib.h>

#include "formats/decode.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile **ps = NULL;
	size_t nr = 0;
	char err[256];
	int e = dec_otlp__parse(data, size, "fuzz.otlp.pb", &ps, &nr, err, sizeof(err));

	/* The contract of decode.h: profiles on success, none and a message on failure. */
	FUZZ_ASSERT(!e || (!ps && !nr && err[0]));
	for (size_t i = 0; i < nr; i++)
		profile__delete(ps[i]);
	free(ps);
	return 0;
}

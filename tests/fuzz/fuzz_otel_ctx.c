// SPDX-License-Identifier: BSD-2-Clause
/*
 * What an OpenTelemetry SDK publishes, as a hostile process could write it: the bytes before the
 * first 0xff decode as a ProcessContext payload (OTEP 4719), the rest as a thread context record
 * (OTEP 4947, 28-byte header and attributes) against the key map that payload gave. Every string
 * kept must be valid UTF-8 of a bounded length, every attribute named by a key the map holds.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "base/utf8.h"
#include "capture/thread_ctx_link.h"
#include "process/process_context.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s)
{
	FUZZ_ASSERT(s);
	FUZZ_ASSERT(utf8__valid(s, strlen(s)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *cut = memchr(data, 0xff, size);
	size_t plen = cut ? (size_t)(cut - data) : size;
	struct process_context *c = calloc(1, sizeof(*c));
	struct thread_ctx_fields f;
	struct hp_thread_ctx rec = {0};
	int err;

	if (!c)
		return 0;
	err = process_context__decode(data, plen, c);
	FUZZ_ASSERT(err == 0 || err == -EBADMSG || err == -ENOMEM);
	FUZZ_ASSERT(c->nr_attrs <= PROCESS_CONTEXT_MAX_ATTRS &&
		    c->nr_keys <= PROCESS_CONTEXT_MAX_KEYS);
	for (size_t i = 0; i < c->nr_attrs; i++) {
		check_text(c->attrs[i].key);
		check_text(c->attrs[i].value);
		FUZZ_ASSERT(strlen(c->attrs[i].value) < 3 * PROCESS_CONTEXT_MAX_VALUE);
	}
	if (cut) {
		size_t rlen = size - plen - 1;

		memcpy(&rec, cut + 1, rlen < sizeof(rec) ? rlen : sizeof(rec));
		if (thread_ctx__decode(&rec, c, &f) == 0) {
			FUZZ_ASSERT(f.nr_attrs <= PROFILE_MAX_CTX_ATTRS);
			for (size_t i = 0; i < f.nr_attrs; i++) {
				check_text(f.attrs[i].value);
				FUZZ_ASSERT(f.attrs[i].key);
			}
			FUZZ_ASSERT(strlen(f.trace_id) == 0 || strlen(f.trace_id) == 32);
			FUZZ_ASSERT(strlen(f.span_id) == 0 || strlen(f.span_id) == 16);
		}
	}
	/* What decode filled, with or without an error, is freed the same way. */
	process_context__free(c);
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * A thread context record (OTEP 4947) as BPF copied it, decoded to the OTEP's rules: ids in hex
 * (none when all zero), entries {key index, length, bytes} where the last occurrence of a key
 * wins, a truncated entry ends the list, key indexes outside the process's key map are skipped,
 * values are made valid UTF-8, and a record whose valid byte is not 1 is ignored.
 */
#include <errno.h>
#include <string.h>

#include "capture/thread_ctx_link.h"
#include "check.h"
#include "process/process_context.h"

static void put(struct hp_thread_ctx *r, uint8_t key, const char *value, size_t n)
{
	r->attrs[r->attrs_size] = key;
	r->attrs[r->attrs_size + 1] = (uint8_t)n;
	memcpy(r->attrs + r->attrs_size + 2, value, n);
	r->attrs_size = (uint16_t)(r->attrs_size + 2 + n);
}

static const char *value_of(const struct thread_ctx_fields *f, const char *key)
{
	for (size_t i = 0; i < f->nr_attrs; i++)
		if (!strcmp(f->attrs[i].key, key))
			return f->attrs[i].value;
	return NULL;
}

int main(void)
{
	struct process_context pc = {.nr_keys = 3};
	struct hp_thread_ctx r = {0};
	struct thread_ctx_fields f;

	pc.key_map[0] = "http.route";
	pc.key_map[1] = "user.id";
	pc.key_map[2] = "tenant";
	memset(r.trace_id, 0xab, sizeof(r.trace_id));
	memset(r.span_id, 0x01, sizeof(r.span_id));
	r.valid = 1;
	put(&r, 1, "u-1", 3);
	put(&r, 0, "/cart", 5);
	put(&r, 1, "u-2", 3);	  /* the last user.id wins */
	put(&r, 9, "unknown", 7); /* no key 9 in the map */
	put(&r, 2, "bad\xff", 4); /* not UTF-8 */
	CHECK(thread_ctx__decode(&r, &pc, &f) == 0, "decode");
	CHECK_STR(f.trace_id, "abababababababababababababababab");
	CHECK_STR(f.span_id, "0101010101010101");
	CHECK(f.nr_attrs == 3, "3 attributes, got %zu", f.nr_attrs);
	CHECK_STR(value_of(&f, "http.route"), "/cart");
	CHECK_STR(value_of(&f, "user.id"), "u-2");
	CHECK_STR(value_of(&f, "tenant"), "bad\xef\xbf\xbd");
	CHECK(f.dropped == 1, "the unknown key is counted as dropped: %zu", f.dropped);

	/* A length past the end: that entry and nothing after it. */
	r.attrs_size = 0;
	put(&r, 0, "/a", 2);
	r.attrs[r.attrs_size] = 1;
	r.attrs[r.attrs_size + 1] = 200;
	r.attrs_size = (uint16_t)(r.attrs_size + 2 + 3);
	CHECK(thread_ctx__decode(&r, &pc, &f) == 0 && f.nr_attrs == 1 && !value_of(&f, "user.id"),
	      "a truncated entry ends the list (%zu attributes)", f.nr_attrs);

	/* attrs_size larger than what BPF keeps is cut, never read past. */
	r.attrs_size = 0xffff;
	CHECK(thread_ctx__decode(&r, &pc, &f) == 0, "an oversized attrs_size is bounded");

	/* No process context: ids only. */
	r.attrs_size = 0;
	put(&r, 0, "/a", 2);
	CHECK(thread_ctx__decode(&r, NULL, &f) == 0 && f.nr_attrs == 0 && f.span_id[0],
	      "without a key map the ids still count");

	memset(r.trace_id, 0, sizeof(r.trace_id));
	memset(r.span_id, 0, sizeof(r.span_id));
	CHECK(thread_ctx__decode(&r, &pc, &f) == 0 && !f.trace_id[0] && !f.span_id[0],
	      "all-zero ids are no ids");
	r.valid = 2;
	CHECK(thread_ctx__decode(&r, &pc, &f) == -EINVAL, "valid != 1 is ignored");
	return check_summary("test_thread_ctx_link");
}

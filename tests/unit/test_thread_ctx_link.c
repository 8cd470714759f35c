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

/* A slot of a Go labels record as the sampler fills it: lengths as the goroutine had them. */
static void go_slot(struct hp_thread_ctx *r, size_t slot, const char *key, const char *value)
{
	struct hp_go_label *l = (struct hp_go_label *)(r->attrs + slot * HP_GO_LABEL_SLOT);
	size_t kn = strlen(key), vn = strlen(value);

	memset(l, 0, sizeof(*l));
	l->key_len = (uint8_t)(kn < 255 ? kn : 255);
	l->value_len = (uint8_t)(vn < 255 ? vn : 255);
	memcpy(l->key, key, kn < HP_GO_LABEL_KEY ? kn : HP_GO_LABEL_KEY);
	memcpy(l->value, value, vn < HP_GO_LABEL_VALUE ? vn : HP_GO_LABEL_VALUE);
	if (slot + 1 > r->attrs_size / HP_GO_LABEL_SLOT)
		r->attrs_size = (uint16_t)((slot + 1) * HP_GO_LABEL_SLOT);
}

/*
 * Go labels (HP_THREAD_CTX_GO_LABELS): span_id and trace_id in hex are the ids (lowercased),
 * not attributes; an id that is not hex stays an attribute under its key; empty slots are
 * skipped; the others are attributes sorted by key; a key or value the sampler cut ends in "...";
 * invalid UTF-8 is replaced; no key map is needed.
 */
static void test_decode_go(void)
{
	struct hp_thread_ctx r = {.valid = HP_THREAD_CTX_GO_LABELS};
	struct thread_ctx_fields f;
	char long_value[81], long_key[31];

	memset(long_value, 'v', 80);
	long_value[80] = '\0';
	memset(long_key, 'k', 30);
	long_key[30] = '\0';
	go_slot(&r, 0, "span_id", "A1A1a1a1a1a1a1a1");
	go_slot(&r, 1, "trace_id", "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01");
	go_slot(&r, 2, "zone", "eu");
	go_slot(&r, 3, "endpoint", "/cart");
	go_slot(&r, 4, long_key, long_value);
	go_slot(&r, 5, "bad", "\xff!");
	CHECK(thread_ctx__decode(&r, NULL, &f) == 0, "a Go record decodes without a key map");
	CHECK_STR(f.span_id, "a1a1a1a1a1a1a1a1");
	CHECK_STR(f.trace_id, "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01");
	CHECK(f.nr_attrs == 4, "4 attributes, the ids not among them: %zu", f.nr_attrs);
	if (f.nr_attrs == 4) {
		CHECK_STR(f.attrs[0].key, "bad");
		CHECK_STR(f.attrs[0].value, "\xef\xbf\xbd!");
		CHECK_STR(f.attrs[1].key, "endpoint");
		CHECK_STR(f.attrs[1].value, "/cart");
		CHECK(strncmp(f.attrs[2].key, "kkkkkkkkkkkkkkkkkkkkkkkk\xe2\x80\xa6", 27) == 0 &&
			      strlen(f.attrs[2].key) == HP_GO_LABEL_KEY + 3,
		      "a cut key ends in an ellipsis: %s", f.attrs[2].key);
		CHECK(strlen(f.attrs[2].value) == HP_GO_LABEL_VALUE + 3 &&
			      !strcmp(f.attrs[2].value + HP_GO_LABEL_VALUE, "\xe2\x80\xa6"),
		      "a cut value ends in an ellipsis: %s", f.attrs[2].value);
		CHECK_STR(f.attrs[3].key, "zone");
	}

	memset(&r, 0, sizeof(r));
	r.valid = HP_THREAD_CTX_GO_LABELS;
	go_slot(&r, 0, "span_id", "not-hex-at-all!!");
	go_slot(&r, 2, "endpoint", "/x");
	r.attrs_size = 3 * HP_GO_LABEL_SLOT; /* slot 1 (trace_id) empty */
	CHECK(thread_ctx__decode(&r, NULL, &f) == 0, "decoded");
	CHECK(!f.span_id[0] && !f.trace_id[0], "no ids from a value that is not hex");
	CHECK(f.nr_attrs == 2 && !strcmp(f.attrs[0].key, "endpoint") &&
		      !strcmp(f.attrs[1].key, "span_id") &&
		      !strcmp(f.attrs[1].value, "not-hex-at-all!!"),
	      "a span_id that is not hex is kept as an attribute (%zu)", f.nr_attrs);

	memset(&r, 0, sizeof(r));
	r.valid = HP_THREAD_CTX_GO_LABELS;
	go_slot(&r, 0, "span_id", "0000000000000000");
	r.attrs_size = 0xffff; /* more than the record: cut to it */
	CHECK(thread_ctx__decode(&r, NULL, &f) == 0 && !f.span_id[0] && f.nr_attrs == 0,
	      "an all-zero span id is none; a size past the record is cut");
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
	r.valid = 3;
	CHECK(thread_ctx__decode(&r, &pc, &f) == -EINVAL, "valid neither 1 nor Go labels: ignored");
	test_decode_go();
	return check_summary("test_thread_ctx_link");
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTEP 4719 process context reader: payloads packed by protobuf-c decode into the resource
 * and the thread-context attributes; a context published in this very process (a memfd named
 * OTEL_CTX, as an SDK makes it) is found in /proc/self/maps and read by the reader protocol; a
 * header being written, another signature and a payload over the cap are refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "opentelemetry/proto/processcontext/v1development/process_context.pb-c.h"
#include "process/proc.h"
#include "process/process_context.h"

typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;
typedef Opentelemetry__Proto__Common__V1__AnyValue AnyValue;

static AnyValue str_value(const char *s)
{
	AnyValue v = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;

	v.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v.string_value = (char *)s;
	return v;
}

/* A payload as an SDK would publish it; *len its size. The caller frees it. */
static uint8_t *sample_payload(size_t *len, const char *service)
{
	Opentelemetry__Proto__Processcontext__V1development__ProcessContext pc =
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__PROCESS_CONTEXT__INIT;
	Opentelemetry__Proto__Resource__V1__Resource res =
		OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT;
	Opentelemetry__Proto__Common__V1__ArrayValue arr =
		OPENTELEMETRY__PROTO__COMMON__V1__ARRAY_VALUE__INIT;
	AnyValue vs[8], keys[2];
	KeyValue kv[8], *rattrs[4], *xattrs[2];
	AnyValue *key_ptrs[2];
	uint8_t *buf;

	for (int i = 0; i < 8; i++)
		kv[i] = (KeyValue)OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT;
	vs[0] = str_value(service);
	vs[1] = str_value("1.2.3");
	vs[2] = (AnyValue)OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
	vs[2].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
	vs[2].int_value = 42;
	vs[3] = str_value("bad\xff utf8");
	kv[0].key = "service.name", kv[0].value = &vs[0];
	kv[1].key = "service.version", kv[1].value = &vs[1];
	kv[2].key = "shard", kv[2].value = &vs[2];
	kv[3].key = "note", kv[3].value = &vs[3];
	for (int i = 0; i < 4; i++)
		rattrs[i] = &kv[i];
	res.n_attributes = 4;
	res.attributes = rattrs;

	vs[4] = str_value("tls_v1");
	keys[0] = str_value("http_route");
	keys[1] = str_value("user_id");
	key_ptrs[0] = &keys[0];
	key_ptrs[1] = &keys[1];
	arr.n_values = 2;
	arr.values = key_ptrs;
	vs[5] = (AnyValue)OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
	vs[5].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_ARRAY_VALUE;
	vs[5].array_value = &arr;
	kv[4].key = "threadlocal.schema_version", kv[4].value = &vs[4];
	kv[5].key = "threadlocal.attribute_key_map", kv[5].value = &vs[5];
	xattrs[0] = &kv[4];
	xattrs[1] = &kv[5];
	pc.resource = &res;
	pc.n_attributes = 2;
	pc.attributes = xattrs;

	*len = opentelemetry__proto__processcontext__v1development__process_context__get_packed_size(
		&pc);
	buf = malloc(*len ? *len : 1);
	if (buf)
		opentelemetry__proto__processcontext__v1development__process_context__pack(&pc,
											   buf);
	return buf;
}

static void test_decode(void)
{
	struct process_context c = {0};
	size_t len = 0;
	uint8_t *p = sample_payload(&len, "checkout");

	CHECK(p && process_context__decode(p, len, &c) == 0, "decode");
	CHECK_STR(process_context__get(&c, "service.name"), "checkout");
	CHECK_STR(process_context__get(&c, "service.version"), "1.2.3");
	CHECK_STR(process_context__get(&c, "shard"), "42");
	CHECK_STR(process_context__get(&c, "note"), "bad\xef\xbf\xbd utf8");
	CHECK_STR(c.thread_schema, "tls_v1");
	CHECK(c.nr_keys == 2, "2 thread keys, got %zu", c.nr_keys);
	if (c.nr_keys == 2) {
		CHECK_STR(c.key_map[0], "http_route");
		CHECK_STR(c.key_map[1], "user_id");
	}
	for (size_t i = 0; i < c.nr_attrs; i++) {
		free(c.attrs[i].key);
		free(c.attrs[i].value);
	}
	for (size_t i = 0; i < c.nr_keys; i++)
		free(c.key_map[i]);
	free(c.thread_schema);
	memset(&c, 0, sizeof(c));
	if (p && len > 3) {
		p[1] ^= 0x55; /* a length that runs past the end */
		CHECK(process_context__decode(p, len - 3, &c) == -EBADMSG, "a corrupt payload");
	}
	CHECK(process_context__decode((const uint8_t *)"", PROCESS_CONTEXT_MAX_PAYLOAD + 1, &c) ==
		      -EBADMSG,
	      "a payload over the cap is refused before it is read");
	free(p);
}

struct header {
	char signature[8];
	uint32_t version, payload_size;
	uint64_t published_ns, payload;
};

/* The mapping of /proc/self/maps that starts at addr, as the reader sees it. */
static bool maps_line_is_context(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	struct maps maps = {0};
	bool found = false;

	if (!f || maps__parse(&maps, f, NULL) != 0) {
		if (f)
			fclose(f);
		return false;
	}
	fclose(f);
	for (size_t i = 0; i < maps.n; i++)
		if (maps.v[i].start == addr)
			found = process_context__is_mapping(&maps.v[i]);
	maps__release(&maps);
	return found;
}

/* Publish in this process as OTEP 4719 says, then read it back through the reader protocol. */
static void test_read_own_process(void)
{
	size_t len = 0, page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *payload = sample_payload(&len, "own-process");
	int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);
	struct process_context *c = NULL;
	struct header *h;
	uint64_t ts = 0;
	int rc;

	CHECK(fd >= 0 && payload && ftruncate(fd, (off_t)page) == 0, "memfd");
	if (fd < 0 || !payload) {
		free(payload);
		return;
	}
	h = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(h != MAP_FAILED, "mmap");
	if (h == MAP_FAILED) {
		free(payload);
		return;
	}
	memcpy(h + 1, payload, len);
	memcpy(h->signature, "OTEL_CTX", 8);
	h->version = 2;
	h->payload_size = (uint32_t)len;
	h->payload = (uint64_t)(uintptr_t)(h + 1);
	CHECK(maps_line_is_context((uint64_t)(uintptr_t)h), "/memfd:OTEL_CTX is a context mapping");

	CHECK(process_context__read(getpid(), (uintptr_t)h, &c) == -EAGAIN && !c,
	      "a zero timestamp (being written) is not read");
	h->published_ns = 123456789;
	rc = process_context__read(getpid(), (uintptr_t)h, &c);
	CHECK(rc == 0 && c, "read: %d", rc);
	CHECK_STR(process_context__get(c, "service.name"), "own-process");
	CHECK(c && c->published_ns == 123456789 && c->header_addr == (uintptr_t)h,
	      "timestamp and address kept");
	CHECK(process_context__published(getpid(), (uintptr_t)h, &ts) == 0 && ts == 123456789,
	      "the timestamp alone");
	process_context__free(c);
	c = NULL;

	h->payload_size = PROCESS_CONTEXT_MAX_PAYLOAD + 1;
	CHECK(process_context__read(getpid(), (uintptr_t)h, &c) == -EBADMSG && !c,
	      "a payload size over the cap");
	h->payload_size = (uint32_t)len;
	h->version = 3;
	CHECK(process_context__read(getpid(), (uintptr_t)h, &c) == -ENOENT, "another version");
	h->version = 2;
	h->signature[0] = 'X';
	CHECK(process_context__read(getpid(), (uintptr_t)h, &c) == -ENOENT, "another signature");
	munmap(h, page);
	free(payload);
}

int main(void)
{
	test_decode();
	test_read_own_process();
	return check_summary("test_process_context");
}

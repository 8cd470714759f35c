/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An OpenTelemetry process context publisher for the e2e workloads, written to OTEP 4719's
 * publication protocol step by step (oteps/profiles/4719-process-ctx.md): memfd "OTEL_CTX" (else
 * an anonymous mapping), MADV_DONTFORK, the protobuf payload after the 32-byte header, a full
 * fence, the timestamp last, and the mapping named by prctl(PR_SET_VMA_ANON_NAME). Its protobuf
 * is encoded here by hand (string and array values only), as a small SDK might: the reader must
 * not depend on hostprof's own encoder to read it.
 */
#ifndef HOSTPROF_E2E_OTEL_PUBLISH_H
#define HOSTPROF_E2E_OTEL_PUBLISH_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

struct pb {
	uint8_t buf[4096];
	size_t len;
};

static void pb_varint(struct pb *b, uint64_t v)
{
	do {
		b->buf[b->len++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

/* A length-delimited field: tag, length, bytes. */
static void pb_bytes(struct pb *b, unsigned field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* AnyValue{string_value = 1} */
static void pb_any_string(struct pb *out, const char *s)
{
	pb_bytes(out, 1, s, strlen(s));
}

/* KeyValue{key = 1, value = 2: AnyValue{string_value}} */
static void pb_kv_string(struct pb *out, unsigned field, const char *key, const char *value)
{
	struct pb kv = {0}, any = {0};

	pb_any_string(&any, value);
	pb_bytes(&kv, 1, key, strlen(key));
	pb_bytes(&kv, 2, any.buf, any.len);
	pb_bytes(out, field, kv.buf, kv.len);
}

/* KeyValue{key, value: AnyValue{array_value = 5: ArrayValue{values = 1...}}} */
static void pb_kv_strings(struct pb *out, unsigned field, const char *key,
			  const char *const *values, size_t n)
{
	struct pb kv = {0}, any = {0}, arr = {0};

	for (size_t i = 0; i < n; i++) {
		struct pb one = {0};

		pb_any_string(&one, values[i]);
		pb_bytes(&arr, 1, one.buf, one.len);
	}
	pb_bytes(&any, 5, arr.buf, arr.len);
	pb_bytes(&kv, 1, key, strlen(key));
	pb_bytes(&kv, 2, any.buf, any.len);
	pb_bytes(out, field, kv.buf, kv.len);
}

struct otel_ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t monotonic_published_at_ns;
	uint64_t payload;
};

/*
 * Publish a ProcessContext whose resource holds the pairs of res (key, value, ..., NULL) and whose
 * attributes carry the thread-context schema and key map (schema NULL: none). 0 or -1.
 */
static int otel_publish(const char *const *res, const char *schema, const char *const *keys,
			size_t nr_keys)
{
	struct pb resource = {0}, payload = {0};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct otel_ctx_header *h;
	struct timespec ts;
	int fd;

	for (size_t i = 0; res[i] && res[i + 1]; i += 2)
		pb_kv_string(&resource, 1, res[i], res[i + 1]); /* Resource.attributes = 1 */
	pb_bytes(&payload, 1, resource.buf, resource.len);	/* ProcessContext.resource = 1 */
	if (schema) {
		pb_kv_string(&payload, 2, "threadlocal.schema_version", schema);
		pb_kv_strings(&payload, 2, "threadlocal.attribute_key_map", keys, nr_keys);
	}

	fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && ftruncate(fd, (off_t)page) == 0)
		h = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	else
		h = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd >= 0)
		close(fd);
	if (h == MAP_FAILED || sizeof(*h) + payload.len > page)
		return -1;
	madvise(h, page, MADV_DONTFORK);
	memcpy(h + 1, payload.buf, payload.len);
	memcpy(h->signature, "OTEL_CTX", 8);
	h->version = 2;
	h->payload_size = (uint32_t)payload.len;
	h->payload = (uint64_t)(uintptr_t)(h + 1);
	atomic_thread_fence(memory_order_seq_cst);
	clock_gettime(CLOCK_BOOTTIME, &ts);
	h->monotonic_published_at_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	/* Fails before 5.17 or without CONFIG_ANON_VMA_NAME; the memfd's name finds it anyway. */
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, h, page, "OTEL_CTX");
	return 0;
}

#endif /* HOSTPROF_E2E_OTEL_PUBLISH_H */

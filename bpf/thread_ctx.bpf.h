/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The OpenTelemetry thread context (OTEP 4947) of the sampled thread: which trace and span it
 * serves, and the attributes its SDK attached. Processes that publish one have an entry in
 * thread_ctx_procs (written by userspace: how to reach otel_thread_ctx_v1 from the thread's TLS
 * pointer, see struct hp_tls_ref); for all others a sample costs one failed hash lookup.
 *
 * Go programs publish no such record; what links their samples is the goroutine's pprof labels
 * (pprof.Do, otel-profiling-go), which the same entry says how to reach (record HP_CTX_GO_*): they
 * are read into a record of the same shape (HP_THREAD_CTX_GO_LABELS, hostprof_abi.h).
 *
 * The record is copied into the sample's buffer set (tctx_N) under a hash of its contents, so
 * that samples of one span share it and the counts key grows by 8 bytes only.
 */
#ifndef HOSTPROF_THREAD_CTX_BPF_H
#define HOSTPROF_THREAD_CTX_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include "common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct hp_tls_ref);
} thread_ctx_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hp_thread_ctx);
} tctx_scratch SEC(".maps");

/* Distinct contexts per buffer set; max_entries set by userspace before load. */
#define HP_TCTX_MAP(name)                                                                          \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 4096);                                                         \
		__type(key, __u64);                                                                \
		__type(value, struct hp_thread_ctx);                                               \
	} name SEC(".maps")

/* Where otel_thread_ctx_v1 lies for this thread; 0 when it cannot be known. */
static __always_inline __u64 hp_tls_var_addr(const struct hp_tls_ref *ref)
{
	__u64 tp = hp_thread_pointer(), dtv = 0, block = 0;

	if (!tp)
		return 0;
	if (ref->kind == HP_TLS_STATIC)
		return tp + ref->offset;
	if (ref->kind != HP_TLS_DTV)
		return 0;
	/* glibc's dtv_t is 16 bytes ({void *val; void *to_free}); -1 is "not allocated yet". */
	if (bpf_probe_read_user(&dtv, sizeof(dtv), (const void *)(tp + ref->dtv_offset)) || !dtv ||
	    bpf_probe_read_user(&block, sizeof(block),
				(const void *)(dtv + (__u64)ref->module * 16)) ||
	    !block || block == (__u64)-1)
		return 0;
	return block + ref->offset;
}

/* The goroutine pointer g of the current thread: in TLS (amd64, and arm64 with cgo), or in x28. */
static __always_inline __u64 hp_go_g(const struct hp_tls_ref *ref)
{
	__u64 tp, g = 0;

	if (ref->kind == HP_TLS_STATIC) {
		tp = hp_thread_pointer();
		if (!tp || bpf_probe_read_user(&g, sizeof(g), (const void *)(tp + ref->offset)))
			return 0;
		return g;
	}
#if defined(__TARGET_ARCH_arm64)
	/* The user registers are saved at kernel entry, a sample's interrupt included; reading them
	 * needs bpf_task_pt_regs (Linux 5.15). */
	if (ref->kind == HP_TLS_GO_REG &&
	    bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)) {
		struct pt_regs *regs =
			(struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

		return BPF_CORE_READ(regs, regs[28]);
	}
#endif
	return 0;
}

/* The first 8 bytes of a key, zero-padded: what "span_id" and "trace_id" compare as. */
#define HP_KEY8(a, b, c, d, e, f, g, h)                                                            \
	((__u64)(a) | (__u64)(b) << 8 | (__u64)(c) << 16 | (__u64)(d) << 24 | (__u64)(e) << 32 |   \
	 (__u64)(f) << 40 | (__u64)(g) << 48 | (__u64)(h) << 56)
#define HP_KEY_SPAN_ID HP_KEY8('s', 'p', 'a', 'n', '_', 'i', 'd', 0)
#define HP_KEY_TRACE_ID HP_KEY8('t', 'r', 'a', 'c', 'e', '_', 'i', 'd')

/*
 * One label, a Go string header pair {key ptr, key len, value ptr, value len}, into its slot:
 * span_id into slot 0 and trace_id into slot 1 (kept however many labels come before them; the
 * ids are parsed by userspace), any other into the next free one of the rest.
 */
static __always_inline void hp_go_label(struct hp_thread_ctx *c, __u32 *next, const __u64 *kv)
{
	__u64 key8 = 0;
	__u32 n, kn;
	struct hp_go_label *l;

	kn = kv[1] < HP_GO_LABEL_KEY ? kv[1] : HP_GO_LABEL_KEY;
	if (kv[1] <= 8 && bpf_probe_read_user(&key8, kv[1] & 15, (const void *)kv[0]))
		return;
	if (kv[1] == 7 && key8 == HP_KEY_SPAN_ID)
		n = 0;
	else if (kv[1] == 8 && key8 == HP_KEY_TRACE_ID)
		n = 1;
	else if (*next < HP_GO_LABEL_SLOTS)
		n = (*next)++;
	else
		return;
	l = (struct hp_go_label *)(c->attrs + (n & 7) * HP_GO_LABEL_SLOT);
	__builtin_memset(l, 0, sizeof(*l));
	if (bpf_probe_read_user(l->key, kn, (const void *)kv[0]) ||
	    bpf_probe_read_user(l->value, kv[3] < HP_GO_LABEL_VALUE ? kv[3] : HP_GO_LABEL_VALUE,
				(const void *)kv[2]))
		return;
	l->key_len = kv[1] < 255 ? kv[1] : 255;
	l->value_len = kv[3] < 255 ? kv[3] : 255;
}

/*
 * Go 1.19 to 1.23: labels -> map[string]string, a pointer to the runtime's hmap {count, flags,
 * B, noverflow, hash0, buckets, oldbuckets, ...}; a bucket is tophash[8], 8 keys and 8 values
 * (string headers), an overflow pointer. A label set has few entries: the first 4 buckets and no
 * overflow chain are read; a map that is still growing (oldbuckets set) is not read at all.
 */
#define HP_GO_BUCKET_SIZE (8 + 8 * 16 + 8 * 16 + 8)
#define HP_GO_MIN_TOPHASH 5 /* below: an empty or evacuated cell */

/* The string headers {key ptr, key len, value ptr, value len} of the labels, gathered first so
 * that one loop of one shape takes them whatever held them. */
struct hp_go_scratch {
	/* Room for 32 though at most HP_GO_LABELS_READ are read: a read of (n & 31) entries is
	 * then within bounds for every kernel's verifier, however little it knows of n. */
	__u64 kv[32][4];
	__u8 bucket[HP_GO_BUCKET_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hp_go_scratch);
} go_scratch SEC(".maps");

/* Go 1.24 on: labels -> struct { []struct{key, value string} }, sorted by key: one read. */
static __always_inline __u32 hp_go_gather_slice(struct hp_go_scratch *s, __u64 set)
{
	__u64 hdr[2];
	__u32 n;

	if (bpf_probe_read_user(hdr, sizeof(hdr), (const void *)set) || !hdr[1])
		return 0;
	n = hdr[1] < HP_GO_LABELS_READ ? hdr[1] : HP_GO_LABELS_READ;
	if (bpf_probe_read_user(s->kv, (n & 31) * sizeof(s->kv[0]), (const void *)hdr[0]))
		return 0;
	return n;
}

static __always_inline __u32 hp_go_gather_map(struct hp_go_scratch *s, __u64 set)
{
	__u64 hmap = 0, h[4];
	__u32 nb, n = 0;

	if (bpf_probe_read_user(&hmap, sizeof(hmap), (const void *)set) || !hmap ||
	    bpf_probe_read_user(h, sizeof(h), (const void *)hmap) || !h[2] || h[3])
		return 0;
	nb = 1U << (((h[1] >> 8) & 0xff) < 2 ? ((h[1] >> 8) & 0xff) : 2);
#pragma clang loop unroll(disable)
	for (__u32 b = 0; b < 4; b++) {
		if (b >= nb || bpf_probe_read_user(s->bucket, sizeof(s->bucket),
						   (const void *)(h[2] + b * HP_GO_BUCKET_SIZE)))
			break;
		for (__u32 i = 0; i < 8; i++) {
			if (s->bucket[i] < HP_GO_MIN_TOPHASH || n >= HP_GO_LABELS_READ)
				continue;
			__builtin_memcpy(&s->kv[n & 15][0], &s->bucket[8 + i * 16], 16);
			__builtin_memcpy(&s->kv[n & 15][2], &s->bucket[136 + i * 16], 16);
			n++;
		}
	}
	return n;
}

/* The labels of the goroutine the thread runs (g->m->curg), into c; false when it has none. */
static __always_inline bool hp_read_go_labels(const struct hp_tls_ref *ref, struct hp_thread_ctx *c)
{
	__u64 g = hp_go_g(ref), m = 0, curg = 0, set = 0;
	__u32 next = 2, n, zero = 0; /* slots 0 and 1 are span_id's and trace_id's */
	struct hp_go_label *l = (struct hp_go_label *)c->attrs;
	struct hp_go_scratch *s = bpf_map_lookup_elem(&go_scratch, &zero);

	if (!s || !g || bpf_probe_read_user(&m, sizeof(m), (const void *)(g + ref->go_g_m)) || !m ||
	    bpf_probe_read_user(&curg, sizeof(curg), (const void *)(m + ref->go_m_curg)) || !curg ||
	    bpf_probe_read_user(&set, sizeof(set), (const void *)(curg + ref->go_g_labels)) || !set)
		return false;
	n = ref->record == HP_CTX_GO_SLICE ? hp_go_gather_slice(s, set) : hp_go_gather_map(s, set);
	if (!n)
		return false;
	__builtin_memset(c, 0, HP_THREAD_CTX_HEADER + 2 * HP_GO_LABEL_SLOT);
	c->valid = HP_THREAD_CTX_GO_LABELS;
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < HP_GO_LABELS_READ; i++) {
		if (i >= n)
			break;
		hp_go_label(c, &next, s->kv[i]);
	}
	c->attrs_size = next * HP_GO_LABEL_SLOT;
	return next > 2 || l[0].key_len || l[1].key_len;
}

/* The OTEP 4947 record the thread's variable points at, into c; false when there is none. */
static __always_inline bool hp_read_otel_record(const struct hp_tls_ref *ref,
						struct hp_thread_ctx *c)
{
	__u64 var = hp_tls_var_addr(ref), rec = 0;
	__u32 size;

	if (!var || bpf_probe_read_user(&rec, sizeof(rec), (const void *)var) || !rec)
		return false;
	if (bpf_probe_read_user(c, HP_THREAD_CTX_HEADER, (const void *)rec) || c->valid != 1)
		return false;
	size = c->attrs_size;
	if (size > HP_THREAD_CTX_ATTRS)
		size = HP_THREAD_CTX_ATTRS;
	c->attrs_size = size;
	/* Only the entries count: the rest of attrs may hold an earlier record's bytes. */
	return !size || !bpf_probe_read_user(c->attrs, size & 1023, (const void *)(rec + 28));
}

/*
 * Read the current thread's context record into tctx_scratch and return its key, a hash of its
 * contents; 0 when the thread has none (no SDK, no span, an invalid record, a read that failed).
 * The record stays there for hp_thread_ctx_store() until the next read on this CPU: programs call
 * this before their other work (the user-stack walk), so that the verifier meets it in few states.
 */
static __always_inline __u64 hp_thread_ctx_read(__u32 tgid)
{
	const struct hp_tls_ref *ref = bpf_map_lookup_elem(&thread_ctx_procs, &tgid);
	struct hp_thread_ctx *c;
	__u64 h = 0xcbf29ce484222325ULL, w;
	__u32 zero = 0, size;

	if (!ref)
		return 0;
	c = bpf_map_lookup_elem(&tctx_scratch, &zero);
	if (!c)
		return 0;
	if (ref->record == HP_CTX_OTEL ? !hp_read_otel_record(ref, c) : !hp_read_go_labels(ref, c))
		return 0;
	size = c->attrs_size;
	if (size > HP_THREAD_CTX_ATTRS)
		return 0;
	/* FNV-1a over the header and the entries, 4 bytes at a time (attrs starts at byte 28); the
	 * last word is cut at size. */
	for (int i = 0; i < HP_THREAD_CTX_HEADER / 4; i++)
		h = (h ^ ((__u32 *)c)[i]) * 0x100000001b3ULL;
	for (__u32 i = 0; i < HP_THREAD_CTX_ATTRS / 4; i++) {
		if (i * 4 >= size)
			break;
		w = ((__u32 *)c->attrs)[i];
		if (size - i * 4 < 4)
			w &= (1U << ((size - i * 4) * 8)) - 1;
		h = (h ^ w) * 0x100000001b3ULL;
	}
	return h | 1; /* never 0, which means "none" */
}

/* Keep the record hp_thread_ctx_read() returned key h for in tctx (a map of the active buffer
 * set); the key, or 0 when there is no room (the sample is kept without its context). */
static __always_inline __u64 hp_thread_ctx_store(void *tctx, __u64 h)
{
	struct hp_thread_ctx *c;
	__u32 zero = 0;
	long err;

	if (!h || !(c = bpf_map_lookup_elem(&tctx_scratch, &zero)))
		return 0;
	err = hp_map_update(tctx, &h, c, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		hp_count_update_error((int)err, HP_LOSS_THREAD_CTX_FULL);
		return 0;
	}
	return h;
}

/*
 * hp_thread_ctx_read() in a function of its own (a BPF-to-BPF call), for the programs that walk
 * user stacks with bpf_loop and make no tail calls: its stack frame then does not add to the
 * walk's and its callbacks', which together passed the 512 bytes a call chain may use (Linux 6.1:
 * "combined stack size of 3 calls is 544", in the lock and off-CPU programs). A global function:
 * the verifier checks it once, not once per state of each place that calls it (the off-CPU
 * program calls it where a wait's stacks are taken, deep in its branches).
 */
__noinline __u64 hp_thread_ctx_read_apart(__u32 tgid)
{
	return hp_thread_ctx_read(tgid);
}

#endif /* HOSTPROF_THREAD_CTX_BPF_H */

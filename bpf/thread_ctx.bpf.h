/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The OpenTelemetry thread context (OTEP 4947) of the sampled thread: which trace and span it
 * serves, and the attributes its SDK attached. Processes that publish one have an entry in
 * thread_ctx_procs (written by userspace: how to reach otel_thread_ctx_v1 from the thread's TLS
 * pointer, see struct hp_tls_ref); for all others a sample costs one failed hash lookup.
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

/* The TLS pointer of the current task, as the thread's user code sees it. */
static __always_inline __u64 hp_thread_pointer(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(task, thread.fsbase);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(task, thread.uw.tp_value);
#else
	return 0;
#endif
}

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

/*
 * Read the current thread's context record into tctx (a map of the active buffer set) and return
 * its key; 0 when the thread has none (no SDK, no span, an invalid record, a read that failed).
 */
static __always_inline __u64 hp_read_thread_ctx(__u32 tgid, void *tctx)
{
	const struct hp_tls_ref *ref = bpf_map_lookup_elem(&thread_ctx_procs, &tgid);
	struct hp_thread_ctx *c;
	__u64 var, rec = 0, h = 0xcbf29ce484222325ULL, w;
	__u32 zero = 0, size;
	long err;

	if (!ref)
		return 0;
	var = hp_tls_var_addr(ref);
	c = bpf_map_lookup_elem(&tctx_scratch, &zero);
	if (!var || !c || bpf_probe_read_user(&rec, sizeof(rec), (const void *)var) || !rec)
		return 0;
	if (bpf_probe_read_user(c, HP_THREAD_CTX_HEADER, (const void *)rec) || c->valid != 1)
		return 0;
	size = c->attrs_size;
	if (size > HP_THREAD_CTX_ATTRS)
		size = HP_THREAD_CTX_ATTRS;
	c->attrs_size = size;
	/* Only the entries count: the rest of attrs may hold an earlier record's bytes. */
	if (size && bpf_probe_read_user(c->attrs, size & 1023, (const void *)(rec + 28)))
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
	h |= 1; /* never 0, which means "none" */
	err = hp_map_update(tctx, &h, c, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		hp_count_update_error((int)err, HP_LOSS_THREAD_CTX_FULL);
		return 0;
	}
	return h;
}

#endif /* HOSTPROF_THREAD_CTX_BPF_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a process keeps its OpenTelemetry thread context variable (OTEP 4947), said the way the
 * BPF sampler reaches it from a thread's TLS pointer (struct hp_tls_ref, hostprof_abi.h).
 *
 * otel_thread_ctx_v1 is a TLS symbol in the .dynsym of the executable or of a library. How to
 * reach it depends on how the code that writes it was linked, which the reader finds from the
 * binary's dynamic relocations against the symbol and from what ld.so wrote in their GOT slots
 * (read from the process's memory):
 *   TLSDESC (the OTEP's recommended writer, -mtls-dialect=gnu2): a 16-byte descriptor whose
 *       argument is the TLS-pointer offset when the library sits in static TLS (loaded at
 *       start: glibc's _dl_tlsdesc_return), else a pointer to {module, offset, generation}
 *       (loaded by dlopen: _dl_tlsdesc_dynamic), read through the thread's DTV;
 *   general dynamic (DTPMOD64 + DTPOFF64): the module index and offset, through the DTV;
 *   initial exec (TPOFF64): the TLS-pointer offset;
 *   local exec (an executable, no relocation at all): the offset follows from its PT_TLS
 *       segment, the executable's block being the first (x86_64: it ends at the TLS pointer;
 *       arm64: it starts after the 16-byte TCB).
 * glibc's TLS layout is assumed (the DTV pointer at tp + 8 on x86_64, tp + 0 on arm64; 16-byte
 * DTV entries); musl's differs and is not read.
 */
#ifndef HOSTPROF_THREAD_CTX_REF_H
#define HOSTPROF_THREAD_CTX_REF_H

#include <stddef.h>
#include <sys/types.h>

#include "hostprof_abi.h"

struct proc_table;

#define THREAD_CTX_SYMBOL "otel_thread_ctx_v1"

/*
 * Find the variable in the binaries process pid maps and fill *out. 0, or -errno with the reason in
 * why: -ENOENT (no binary defines it), -EAGAIN (its GOT slot is not filled yet: ld.so or dlopen
 * still at work), -ENOTSUP (a layout this reader does not know), or what opening a binary or
 * reading the process gave.
 */
int thread_ctx_ref__resolve(struct proc_table *procs, pid_t pid, struct hp_tls_ref *out, char *why,
			    size_t len);

#endif /* HOSTPROF_THREAD_CTX_REF_H */

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OpenTelemetry thread context variable (OTEP 4947), as an SDK's native library defines it:
 * otel_thread_ctx_v1, a TLS pointer exported in .dynsym, set on context attach and cleared on
 * detach. Built two ways from this file:
 *   into libotel_tls.so with -fPIC -mtls-dialect=gnu2: the TLSDESC access the OTEP recommends,
 *     loaded at start (static TLS) by otel_ctx_lib, or by dlopen (dynamic TLS) by otel_ctx_dl;
 *   into the executable otel_ctx with -DOTEL_TLS_IN_EXE: local-exec, the access the linker
 *     picks when the variable lives in the executable.
 * Only this thread ever writes its pointer, so a compiler fence is all the ordering the OTEP asks.
 */
#include <stddef.h>

__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

__attribute__((visibility("default"), noinline)) void otel_tls_attach(void *record)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	otel_thread_ctx_v1 = record;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/* What every e2e workload needs so that its profile is known in advance. */
#ifndef HOSTPROF_E2E_WORKLOAD_H
#define HOSTPROF_E2E_WORKLOAD_H

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
/* noclone: keep gcc from emitting burn_a.constprop.0, whose name the test would not find. */
#define NOINLINE __attribute__((noinline, noclone))
#endif

/*
 * gcc 12 sets up no frame in a leaf function that uses no stack, even with
 * -fno-omit-frame-pointer; a frame-pointer unwinder would then skip the caller (main) of every
 * sample. Taking the frame address forces the frame.
 */
#define KEEP_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

/*
 * The loop body is a macro, not an inline function: a DWARF-aware symbolizer would report an
 * inlined helper as the leaf frame and hide which burn function the time belongs to.
 * The empty asm makes each step opaque, so the compiler can neither vectorize the loop nor
 * replace it by a closed form.
 */
#define SPIN(n, acc)                                                                               \
	do {                                                                                       \
		unsigned long spin_i_;                                                             \
		for (spin_i_ = 0; spin_i_ < (n); spin_i_++) {                                      \
			(acc) = (acc)*6364136223846793005UL + 1442695040888963407UL;               \
			__asm__ volatile("" : "+r"(acc)::"memory");                                \
		}                                                                                  \
	} while (0)

#endif /* HOSTPROF_E2E_WORKLOAD_H */

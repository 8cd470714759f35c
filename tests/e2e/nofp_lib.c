// SPDX-License-Identifier: BSD-2-Clause
/*
 * libnofp.so: the leaf functions of nofp, built without frame pointers like most distribution
 * libraries. CPU time splits 1:2:3 between nofp_leaf_a, nofp_leaf_b and nofp_leaf_c. Each keeps a
 * small array on its stack, so that its CFA is rsp + a frame size, not rbp: a frame-pointer walk
 * from here goes astray, a walk with the .eh_frame table does not.
 */
#include "workload.h"

volatile unsigned long nofp_sink;

/* A macro, not a function: an inlined helper would be the leaf frame (see workload.h). */
#define SPIN_WITH_STACK(n, out)                                                                    \
	do {                                                                                       \
		volatile unsigned long scratch_[8];                                                \
		unsigned long acc_ = nofp_sink;                                                    \
		for (unsigned long i_ = 0; i_ < (n); i_++) {                                       \
			acc_ = acc_ * 6364136223846793005UL + 1442695040888963407UL;               \
			scratch_[i_ & 7] = acc_;                                                   \
			__asm__ volatile("" : "+r"(acc_)::"memory");                               \
		}                                                                                  \
		(out) = acc_ ^ scratch_[3];                                                        \
	} while (0)

NOINLINE unsigned long nofp_leaf_a(unsigned long unit)
{
	unsigned long r;

	SPIN_WITH_STACK(unit * 1, r);
	return r + 1;
}

NOINLINE unsigned long nofp_leaf_b(unsigned long unit)
{
	unsigned long r;

	SPIN_WITH_STACK(unit * 2, r);
	return r + 2;
}

NOINLINE unsigned long nofp_leaf_c(unsigned long unit)
{
	unsigned long r;

	SPIN_WITH_STACK(unit * 3, r);
	return r + 3;
}

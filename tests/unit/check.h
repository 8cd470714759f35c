/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A minimal test harness: every CHECK is one assertion; a test file ends with check_summary(),
 * which prints "<file>: N passed, N failed" and returns the exit status. The Makefile's unit runner
 * adds the per-file lines into one summary line.
 */
#ifndef HOSTPROF_TEST_CHECK_H
#define HOSTPROF_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_passed;
static int check_failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_STR(got, want)                                                                       \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		CHECK(g_ &&w_ &&strcmp(g_, w_) == 0, "got \"%s\", want \"%s\"",                    \
		      g_ ? g_ : "(null)", w_ ? w_ : "(null)");                                     \
	} while (0)

#define CHECK_U64(got, want)                                                                       \
	do {                                                                                       \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                              \
		CHECK(g_ == w_,                                                                    \
		      "got %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")", g_, g_, \
		      w_, w_);                                                                     \
	} while (0)

static inline int check_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif /* HOSTPROF_TEST_CHECK_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the fuzz targets share. FUZZ_ASSERT: an API contract broken by some input is a finding like
 * a crash, reported with the condition (libFuzzer then keeps the input).
 * The input as a file: The parsers under test open files by path
 * (dso_cache__get(), config_load__file()), so each input is written into one memfd that is reached
 * as /proc/self/fd/N: no directory to clean up, and nothing left behind when a target crashes.
 */
#ifndef HOSTPROF_FUZZ_H
#define HOSTPROF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_ASSERT(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: contract broken: %s\n", __FILE__, __LINE__,        \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct fuzz_input {
	int fd;
	char path[32];
};

/* Once per process: a failure here is the harness's, not the input's, so it aborts. */
static inline void fuzz_input__init(struct fuzz_input *in, const char *name)
{
	in->fd = memfd_create(name, MFD_CLOEXEC);
	if (in->fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(in->path, sizeof(in->path), "/proc/self/fd/%d", in->fd);
}

/* Replace the file's contents with data; the offset is left at 0 for readers of the fd. */
static inline void fuzz_input__write(struct fuzz_input *in, const uint8_t *data, size_t size)
{
	size_t done = 0;

	if (ftruncate(in->fd, 0)) {
		perror("ftruncate");
		abort();
	}
	while (done < size) {
		ssize_t n = pwrite(in->fd, data + done, size - done, (off_t)done);

		if (n <= 0) {
			perror("pwrite");
			abort();
		}
		done += (size_t)n;
	}
	if (lseek(in->fd, 0, SEEK_SET) < 0) {
		perror("lseek");
		abort();
	}
}

/*
 * A target that reads its input from the file defines FUZZ_INPUT_NAME (the memfd's name) before
 * including this header, and fuzz_init() for what else it sets up once; then `input` is its file.
 */
#ifdef FUZZ_INPUT_NAME
#include "base/log.h"

static struct fuzz_input input;
static void fuzz_init(void);

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Broken input is the normal case here: its warnings would drown libFuzzer's output. */
	log_set_level(LOG_ERROR);
	fuzz_input__init(&input, FUZZ_INPUT_NAME);
	fuzz_init();
	return 0;
}
#endif

#endif /* HOSTPROF_FUZZ_H */

// SPDX-License-Identifier: BSD-2-Clause
/*
 * A Python process's memory as a hostile one could lay it out, read by the code object cache
 * (interp/python_code.h) through its reader hook: the input is the memory at FUZZ_BASE, with the
 * code object at FUZZ_BASE + 64; byte 0 chooses the CPython release (3.10 + bits 0-1), bytes 1-4
 * a code unit's index. Whatever the pointers, sizes and states say, every lookup ends with an
 * answer or a known error, the answer's strings are valid UTF-8 within PYTHON_STR_MAX, and the
 * cache stays within its byte bound (all but its newest entry).
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "base/utf8.h"
#include "interp/python_code.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_BASE 0x100000000000ULL
#define FUZZ_CODE (FUZZ_BASE + 64)
#define FUZZ_PID 100
/* The code type: the seeds' ob_type. */
#define FUZZ_CODE_TYPE 0x55550000a000ULL

struct image {
	const uint8_t *data;
	size_t size;
	unsigned reads;
};

static int image_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct image *m = ctx;

	(void)pid;
	/* A process answers a bounded number of reads; so does this one. */
	if (++m->reads > 10000)
		return -EFAULT;
	if (addr < FUZZ_BASE || addr - FUZZ_BASE > m->size || len > m->size - (addr - FUZZ_BASE))
		return -EFAULT;
	memcpy(buf, m->data + (addr - FUZZ_BASE), len);
	return 0;
}

static void check_answer(int err, const struct python_frame_info *fi)
{
	FUZZ_ASSERT(err == 0 || err == -EINVAL || err == -EFAULT || err == -ENOMEM);
	if (err)
		return;
	FUZZ_ASSERT(strlen(fi->qualname) < PYTHON_STR_MAX && strlen(fi->filename) < PYTHON_STR_MAX);
	FUZZ_ASSERT(utf8__valid(fi->qualname, strlen(fi->qualname)));
	FUZZ_ASSERT(utf8__valid(fi->filename, strlen(fi->filename)));
	FUZZ_ASSERT(fi->line >= 0 && fi->first_line >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image m = {.data = data, .size = size};
	struct python_mem mem = {.read = image_read, .ctx = &m};
	const struct python_layout *l;
	struct python_code_cache *c;
	struct python_frame_info fi;
	struct python_code_stats st;
	uint32_t index;
	int err;

	if (size < 5)
		return 0;
	l = python_layout__get(10 + (data[0] & 3));
	FUZZ_ASSERT(l != NULL);
	memcpy(&index, data + 1, 4);
	c = python_code_cache__new(4096);
	if (!c)
		return 0;
	python_code_cache__set_reader(c, &mem);
	for (uint32_t i = 0; i < 3; i++) {
		err = python_code__lookup(c, FUZZ_PID, l, FUZZ_CODE_TYPE, FUZZ_CODE, index + i,
					  &fi);
		check_answer(err, &fi);
	}
	/* Again after expire: the header checked against what was kept. */
	python_code_cache__expire(c);
	err = python_code__lookup(c, FUZZ_PID, l, FUZZ_CODE_TYPE, FUZZ_CODE, index, &fi);
	check_answer(err, &fi);
	python_code_cache__stats(c, &st);
	FUZZ_ASSERT(st.entries <= 1);
	FUZZ_ASSERT(st.bytes <= st.max_bytes || st.entries == 1);
	python_code_cache__delete(c);
	return 0;
}

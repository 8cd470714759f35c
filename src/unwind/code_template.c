// SPDX-License-Identifier: BSD-2-Clause
#include "unwind/code_template.h"

#include <string.h>

/*
 * CPython's perf trampoline on x86_64 (Python/asm_trampoline.S, 3.12 and 3.13):
 *   0  48 83 ec 08   sub  $8, %rsp      keeps the stack 16-byte aligned for the call
 *   4  ff d1         call *%rcx         the evaluator: _PyEval_EvalFrameDefault
 *   6  48 83 c4 08   add  $8, %rsp      (the return address of every caller frame)
 *  10  c3            ret
 * It never touches %rbp, so the caller's frame pointer stays what it was.
 */
static const uint8_t cpython_x86_64_code[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					      0x48, 0x83, 0xc4, 0x08, 0xc3};

#define SP_ROW(at, off)                                                                            \
	{                                                                                          \
		.pc = (at), .cfa_offset = (off), .ra_offset = -8, .cfa_rule = HP_CFA_SP,           \
		.fp_rule = HP_REG_SAME, .ra_rule = HP_REG_OFFSET                                   \
	}

static const struct hp_unwind_row cpython_x86_64_rows[] = {
	SP_ROW(0, 8),
	SP_ROW(4, 16),
	SP_ROW(10, 8),
	{.pc = sizeof(cpython_x86_64_code), .cfa_rule = HP_CFA_NONE},
};

/* Python/perf_trampoline.c: each code arena is `4096 * 16` bytes, filled from its start. */
#define CPYTHON_ARENA (4096u * 16u)

static const struct code_template templates[] = {
	{.name = "cpython perf trampoline",
	 .arch = UNWIND_ARCH_X86_64,
	 .code = cpython_x86_64_code,
	 .len = sizeof(cpython_x86_64_code),
	 .period = CPYTHON_ARENA,
	 .rows = cpython_x86_64_rows,
	 .nr_rows = sizeof(cpython_x86_64_rows) / sizeof(cpython_x86_64_rows[0])},
};

const struct code_template *code_template__all(size_t *nr)
{
	*nr = sizeof(templates) / sizeof(templates[0]);
	return templates;
}

/*
 * The stride of the copies: where the template starts again after the first one. Between
 * copies there may be padding (3.13 rounds each up to 16 bytes), never more than a cache line.
 */
static uint32_t find_stride(const struct code_template *t, const uint8_t *code, size_t len)
{
	for (size_t s = t->len; s <= 64 && s + t->len <= len; s++)
		if (!memcmp(code + s, t->code, t->len))
			return (uint32_t)s;
	return 0;
}

bool code_template__match(enum unwind_arch arch, const uint8_t *code, size_t len, uint64_t map_size,
			  struct code_template_match *out)
{
	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		const struct code_template *t = &templates[i];
		uint32_t stride;

		if (t->arch != arch || len < t->len || memcmp(code, t->code, t->len))
			continue;
		stride = find_stride(t, code, len);
		/* A mapping that is not a whole number of arenas is not one of them (the period
		 * would cut a copy in two). */
		if (!stride || map_size % t->period)
			continue;
		*out = (struct code_template_match){.tmpl = t, .stride = stride};
		return true;
	}
	return false;
}

// SPDX-License-Identifier: BSD-2-Clause
/*
 * Bounded reads of .eh_frame and .debug_frame (unwind_table_impl.h): pointers in the .eh_frame
 * encodings and entry headers, each failing with the section and offset rather than reading past
 * the data.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "unwind/unwind_table_impl.h"

int cfi_fail(struct cfi_builder *b, int errnum, const char *fmt, ...)
{
	if (b->err && b->errlen) {
		int n = snprintf(b->err, b->errlen, "%s: ", b->sec_name ? b->sec_name : "elf");
		va_list ap;

		if (n < 0 || (size_t)n >= b->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(b->err + n, b->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

int cfi_rd_encoded(struct cfi_builder *b, struct rd *r, uint8_t enc, uint64_t funcbase,
		   uint64_t *out, bool *indirect)
{
	uint64_t base = 0, v = 0;
	uint64_t here = b->sec_addr + sec_off(b, r->p);
	int64_t s;

	if (indirect)
		*indirect = enc & PE_indirect;
	switch (enc & 0x70) {
	case PE_absptr:
		break;
	case PE_pcrel:
		base = here;
		break;
	case PE_textrel:
		if (!b->has_text)
			return cfi_fail(b, EINVAL, "text-relative pointer at 0x%llx without .text",
					(unsigned long long)sec_off(b, r->p));
		base = b->text_addr;
		break;
	case PE_datarel:
		if (!b->has_got)
			return cfi_fail(b, EINVAL, "data-relative pointer at 0x%llx without .got",
					(unsigned long long)sec_off(b, r->p));
		base = b->got_addr;
		break;
	case PE_funcrel:
		base = funcbase;
		break;
	case PE_aligned: {
		size_t mis = (size_t)(here % b->addr_size);

		if (mis && !rd_bytes(r, NULL, b->addr_size - mis))
			goto truncated;
		break;
	}
	default:
		return cfi_fail(b, EINVAL, "pointer encoding 0x%02x at 0x%llx", enc,
				(unsigned long long)sec_off(b, r->p));
	}
	switch (enc & 0x0f) {
	case PE_absptr:
		if (!rd_uint(r, b->addr_size, &v))
			goto truncated;
		break;
	case PE_uleb128:
		if (!rd_uleb(r, &v))
			goto truncated;
		break;
	case PE_udata2:
		if (!rd_uint(r, 2, &v))
			goto truncated;
		break;
	case PE_udata4:
		if (!rd_uint(r, 4, &v))
			goto truncated;
		break;
	case PE_udata8:
		if (!rd_uint(r, 8, &v))
			goto truncated;
		break;
	case PE_sleb128:
		if (!rd_sleb(r, &s))
			goto truncated;
		v = (uint64_t)s;
		break;
	case PE_sdata2:
		if (!rd_uint(r, 2, &v))
			goto truncated;
		v = (uint64_t)(int64_t)(int16_t)v;
		break;
	case PE_sdata4:
		if (!rd_uint(r, 4, &v))
			goto truncated;
		v = (uint64_t)(int64_t)(int32_t)v;
		break;
	case PE_sdata8:
		if (!rd_uint(r, 8, &v))
			goto truncated;
		break;
	default:
		return cfi_fail(b, EINVAL, "pointer encoding 0x%02x at 0x%llx", enc,
				(unsigned long long)sec_off(b, r->p));
	}
	v += base;
	if (b->addr_size == 4)
		v &= 0xffffffffu;
	*out = v;
	return 0;
truncated:
	return cfi_fail(b, EINVAL, "pointer at 0x%llx runs past its entry",
			(unsigned long long)sec_off(b, r->p));
}

/* One entry's header: its length (32- or 64-bit form), and the reader bounded to its body. */
int cfi_rd_entry(struct cfi_builder *b, uint64_t off, struct rd *body, bool *is64, bool *term)
{
	struct rd r = {b->sec + off, b->sec + b->sec_size};
	uint64_t len;

	*term = false;
	if (!rd_uint(&r, 4, &len))
		return cfi_fail(b, EINVAL, "entry at 0x%llx: truncated length",
				(unsigned long long)off);
	*is64 = len == 0xffffffffu;
	if (*is64) {
		if (!rd_uint(&r, 8, &len))
			return cfi_fail(b, EINVAL, "entry at 0x%llx: truncated 64-bit length",
					(unsigned long long)off);
	} else if (len >= 0xfffffff0u) {
		return cfi_fail(b, EINVAL, "entry at 0x%llx: reserved length 0x%llx",
				(unsigned long long)off, (unsigned long long)len);
	}
	if (len == 0) {
		*term = true;
		body->p = body->end = r.p;
		return 0;
	}
	if (len > (uint64_t)(r.end - r.p))
		return cfi_fail(b, EINVAL, "entry at 0x%llx: length 0x%llx runs past the section",
				(unsigned long long)off, (unsigned long long)len);
	body->p = r.p;
	body->end = r.p + len;
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
#include "interp/python_code_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "process/proc_mem.h"

/* Offsets of PyObject and PyBytesObject, the same in every release read here (LP64). */
#define OB_TYPE 8
#define BYTES_SIZE 16 /* ob_size */
#define BYTES_DATA 32 /* ob_sval, after ob_shash */
#define BYTES_HEAD 32

/* The most of a PyCodeObject's header read (its fields end before 150 bytes in 3.10 to 3.13). */
#define CODE_HEAD_MAX 512

/* User space ends below 2^56 on x86_64 (5-level paging) and arm64; objects are 8-aligned. */
#define USER_END (1ULL << 56)

static bool valid_pointer(uint64_t p)
{
	return p && p < USER_END && !(p & 7);
}

static uint64_t field_u64(const uint8_t *h, uint16_t off)
{
	uint64_t v;

	memcpy(&v, h + off, sizeof(v));
	return v;
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

/*
 * The bytes of the header to read: up to the end of the last field used, within the object
 * (code_size), or 0 when the layout does not hold them. Not the whole of code_size: from 3.11 it
 * is sizeof(PyCodeObject), past tp_basicsize, and a code object of few code units ends before it.
 */
static size_t head_len(const struct python_layout *l)
{
	size_t need = max_size(OB_TYPE + 8, (size_t)l->code_firstlineno + 4);

	need = max_size(need, (size_t)l->code_filename + 8);
	need = max_size(need, (size_t)l->code_name + 8);
	need = max_size(need, (size_t)l->code_linetable + 8);
	if (l->code_qualname != HP_PY_NO_OFFSET)
		need = max_size(need, (size_t)l->code_qualname + 8);
	return need <= l->code_size && need <= CODE_HEAD_MAX ? need : 0;
}

int python_code__read_head(const struct python_mem *m, pid_t pid, const struct python_layout *l,
			   uint64_t code_type, uint64_t addr, struct python_code_head *out)
{
	uint8_t h[CODE_HEAD_MAX];
	size_t len = head_len(l);
	uint64_t sum;
	int err;

	if (!len || !valid_pointer(addr))
		return -EINVAL;
	err = m->read(m->ctx, pid, addr, h, len);
	if (err)
		return err;
	if (field_u64(h, OB_TYPE) != code_type)
		return PYTHON_CODE_NOT_CODE;
	out->name =
		field_u64(h, l->code_qualname != HP_PY_NO_OFFSET ? l->code_qualname : l->code_name);
	out->filename = field_u64(h, l->code_filename);
	out->table = field_u64(h, l->code_linetable);
	memcpy(&out->first_line, h + l->code_firstlineno, sizeof(out->first_line));
	if (!valid_pointer(out->name) || !valid_pointer(out->filename) ||
	    !valid_pointer(out->table) || out->first_line < 0)
		return -EINVAL;
	/* The fields the answer comes from, and nothing that changes while the object lives
	 * (reference count, specialised code, caches): a live object keeps what it points at. */
	sum = hash_add(hash_mix64(code_type), out->name);
	sum = hash_add(sum, out->filename);
	sum = hash_add(sum, out->table);
	out->checksum = hash_add(sum, (uint64_t)(uint32_t)out->first_line);
	return 0;
}

int python_code__read_str(const struct python_mem *m, pid_t pid, int minor, uint64_t addr,
			  char out[PYTHON_STR_MAX])
{
	uint8_t head[64], *data;
	size_t head_size = python_unicode__head_size(minor), n;
	struct python_str_head s;
	uint64_t where;
	int err;

	out[0] = '\0';
	if (!head_size || head_size > sizeof(head) || !valid_pointer(addr))
		return -EINVAL;
	err = m->read(m->ctx, pid, addr, head, head_size);
	if (err)
		return err;
	err = python_unicode__head(minor, head, head_size, &s);
	if (err)
		return err;
	if (!s.length)
		return 0;
	where = addr + s.data_offset;
	if (!s.compact) {
		err = m->read(m->ctx, pid, where, &where, sizeof(where));
		if (err)
			return err;
		if (!where || where >= USER_END)
			return -EINVAL;
	}
	n = s.length < PYTHON_STR_MAX_CHARS ? (size_t)s.length : PYTHON_STR_MAX_CHARS;
	data = malloc(n * s.kind);
	if (!data)
		return -ENOMEM;
	err = m->read(m->ctx, pid, where, data, n * s.kind);
	if (!err)
		python_unicode__to_utf8(data, n, s.kind, s.ascii, out, PYTHON_STR_MAX);
	free(data);
	return err;
}

int python_code__read_bytes(const struct python_mem *m, pid_t pid, uint64_t addr, uint8_t **data,
			    size_t *len)
{
	uint8_t head[BYTES_HEAD];
	int64_t size;
	uint8_t *buf;
	int err;

	*data = NULL;
	*len = 0;
	if (!valid_pointer(addr))
		return -EINVAL;
	err = m->read(m->ctx, pid, addr, head, sizeof(head));
	if (err)
		return err;
	memcpy(&size, head + BYTES_SIZE, sizeof(size));
	if (size < 0)
		return -EINVAL;
	if (size > PYTHON_CODE_MAX_TABLE)
		return -E2BIG;
	if (!size)
		return 0;
	buf = malloc((size_t)size);
	if (!buf)
		return -ENOMEM;
	/* In pieces: one read is at most PROC_MEM_MAX_READ. */
	for (size_t off = 0; off < (size_t)size; off += PROC_MEM_MAX_READ) {
		size_t chunk = (size_t)size - off;

		if (chunk > PROC_MEM_MAX_READ)
			chunk = PROC_MEM_MAX_READ;
		err = m->read(m->ctx, pid, addr + BYTES_DATA + off, buf + off, chunk);
		if (err) {
			free(buf);
			return err;
		}
	}
	*data = buf;
	*len = (size_t)size;
	return 0;
}

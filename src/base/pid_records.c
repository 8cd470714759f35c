/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/pid_records.h"

#include <stdlib.h>
#include <string.h>

static pid_t pid_of(const unsigned char *record)
{
	pid_t pid;

	memcpy(&pid, record, sizeof(pid));
	return pid;
}

void *pid_records__find(const struct pid_records *r, pid_t pid)
{
	for (size_t i = 0; i < r->n; i++)
		if (pid_of(r->v + i * r->size) == pid)
			return r->v + i * r->size;
	return NULL;
}

/* Keep only the records keep() wants, in their order. */
static void compact(struct pid_records *r, bool (*keep)(const void *record))
{
	size_t kept = 0;

	for (size_t i = 0; i < r->n; i++) {
		if (!keep || !keep(r->v + i * r->size))
			continue;
		if (kept != i)
			memcpy(r->v + kept * r->size, r->v + i * r->size, r->size);
		kept++;
	}
	r->n = kept;
}

void *pid_records__get(struct pid_records *r, pid_t pid, bool (*keep)(const void *record))
{
	unsigned char *rec = pid_records__find(r, pid);

	if (rec)
		return rec;
	if (r->n >= r->max) {
		compact(r, keep);
		if (r->n >= r->max)
			return NULL;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		unsigned char *v = realloc(r->v, cap * r->size);

		if (!v)
			return NULL;
		r->v = v;
		r->cap = cap;
	}
	rec = r->v + r->n++ * r->size;
	memset(rec, 0, r->size);
	memcpy(rec, &pid, sizeof(pid));
	return rec;
}

void pid_records__remove(struct pid_records *r, void *record)
{
	unsigned char *last = r->v + (r->n - 1) * r->size;

	if (record != last)
		memcpy(record, last, r->size);
	r->n--;
}

void pid_records__release(struct pid_records *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

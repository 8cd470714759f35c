/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Records kept per process, found by PID: what the capture's links remember of each process they
 * look at (when to look again, whether BPF has its entry). A record is any struct whose first
 * member is its pid_t. Bounded: at the cap, the records a caller's keep() refuses are dropped
 * (they are made afresh when their process is met again). A linear search: the records are
 * looked up once per process per drain, not per sample.
 */
#ifndef HOSTPROF_PID_RECORDS_H
#define HOSTPROF_PID_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pid_records {
	unsigned char *v;
	size_t n, cap; /* records held, and room for */
	size_t size;   /* of one record */
	size_t max;    /* records held at most */
};

/* An empty set of records of size bytes each (their first member a pid_t), at most max. */
#define PID_RECORDS_INIT(record_size, max_records)                                                 \
	((struct pid_records){.size = (record_size), .max = (max_records)})

/* The record of pid, or NULL. */
void *pid_records__find(const struct pid_records *r, pid_t pid);
/*
 * The record of pid, appended zeroed (its pid set) when there is none. At the cap the records
 * keep() refuses are dropped first; NULL when that leaves no room, or memory runs out. Pointers
 * to records are valid until the next call that adds or removes one.
 */
void *pid_records__get(struct pid_records *r, pid_t pid, bool (*keep)(const void *record));
/* Drop a record pid_records__find() or __get() gave (the last record takes its place). */
void pid_records__remove(struct pid_records *r, void *record);
void pid_records__release(struct pid_records *r);

#endif /* HOSTPROF_PID_RECORDS_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/* Starting hostprof's background threads. */
#ifndef HOSTPROF_THREAD_H
#define HOSTPROF_THREAD_H

#include <pthread.h>

/*
 * Start fn(arg) on a new thread with every signal blocked in it: asynchronous signals (Ctrl-C,
 * SIGTERM, SIGHUP) belong to the main thread, whose handlers set the flags it polls, and must
 * not run on, or interrupt, a background thread. The caller's own mask is left as it was.
 * Returns 0, or -errno (the thread was not started).
 */
int thread__start(pthread_t *thread, void *(*fn)(void *), void *arg);

/*
 * A condition variable whose pthread_cond_timedwait() deadlines are CLOCK_MONOTONIC times, so
 * that a step of the wall clock neither stretches nor cuts a wait. 0 or -errno.
 */
int thread__cond_init_monotonic(pthread_cond_t *cond);

#endif /* HOSTPROF_THREAD_H */

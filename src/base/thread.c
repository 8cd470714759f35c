// SPDX-License-Identifier: BSD-2-Clause
#include "base/thread.h"

#include <signal.h>
#include <time.h>

int thread__start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	/* A new thread inherits the mask of the thread that creates it. */
	sigfillset(&all);
	rc = pthread_sigmask(SIG_SETMASK, &all, &old);
	if (rc)
		return -rc;
	rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

int thread__cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t ca;
	int rc;

	rc = pthread_condattr_init(&ca);
	if (rc)
		return -rc;
	rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
	return -rc;
}

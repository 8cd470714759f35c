/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * systemd's watchdog (WatchdogSec= in the unit): the capture loop pets it with WATCHDOG=1, and
 * only the loop, so that a loop stuck for longer than WatchdogSec= gets the agent killed with
 * SIGABRT and restarted (Restart=on-failure), where /healthz alone would only report it.
 *
 * libsystemd does the protocol (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID); this module decides
 * when to send: at most once per half the interval, as sd_watchdog_enabled(3) advises, so that
 * one late tick does not cost a restart.
 */
#ifndef HOSTPROF_WATCHDOG_H
#define HOSTPROF_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

struct watchdog {
	uint64_t interval_ns; /* half of WATCHDOG_USEC; 0: no watchdog asked for */
	uint64_t next_ns;     /* the next pet is due at this CLOCK_MONOTONIC time */
};

/* Read the environment systemd set (WATCHDOG_USEC for this pid). Off without it. */
void watchdog__init(struct watchdog *w);
/* From the loop on every iteration: sends WATCHDOG=1 when one is due. true when one was sent. */
bool watchdog__tick(struct watchdog *w, uint64_t now_ns);

#endif /* HOSTPROF_WATCHDOG_H */

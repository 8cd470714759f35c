// SPDX-License-Identifier: BSD-2-Clause
#include "agent/watchdog.h"

#include <errno.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "base/log.h"

void watchdog__init(struct watchdog *w)
{
	uint64_t usec = 0;
	int rc;

	w->interval_ns = 0;
	w->next_ns = 0;
	/* 0 unset or meant for another pid, > 0 set; < 0 a malformed WATCHDOG_USEC. */
	rc = sd_watchdog_enabled(0, &usec);
	if (rc < 0)
		log_warn("systemd watchdog: WATCHDOG_USEC is malformed (%s); not sending "
			 "WATCHDOG=1",
			 strerror(-rc));
	if (rc <= 0 || usec == 0)
		return;
	w->interval_ns = usec * 1000 / 2;
	log_debug("systemd watchdog: WATCHDOG=1 at most every %.1f s from the capture loop",
		  w->interval_ns / 1e9);
}

bool watchdog__tick(struct watchdog *w, uint64_t now_ns)
{
	int rc;

	if (!w->interval_ns || now_ns < w->next_ns)
		return false;
	rc = sd_notify(0, "WATCHDOG=1");
	w->next_ns = now_ns + w->interval_ns;
	if (rc < 0) {
		log_debug("systemd watchdog: sd_notify: %s", strerror(-rc));
		return false;
	}
	return rc > 0;
}

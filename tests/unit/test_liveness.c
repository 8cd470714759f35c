// SPDX-License-Identifier: BSD-2-Clause
/*
 * The agent's liveness: the healthz decision on an injected clock (boundaries, a tick from the
 * future, the one-line reason), the longest gap between ticks that /metrics shows, and systemd's
 * watchdog protocol against notify sockets this test binds itself (a path and an abstract '@'
 * name): WATCHDOG=1 arrives when due and not before, and nothing is sent without WATCHDOG_USEC or
 * when it names another pid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "agent/liveness.h"
#include "agent/watchdog.h"

#define SEC 1000000000ULL

static void test_decision(void)
{
	struct liveness l;
	char why[128] = "";

	liveness__init(&l, 10 * SEC, 100 * SEC);
	CHECK(liveness__check(&l, 100 * SEC, why, sizeof(why)), "just armed");
	CHECK(liveness__check(&l, 110 * SEC, why, sizeof(why)), "exactly at the limit");
	CHECK(!liveness__check(&l, 110 * SEC + 1, why, sizeof(why)), "one ns past the limit");
	CHECK(!liveness__check(&l, 112 * SEC + 300000000ULL, why, sizeof(why)), "12.3 s");
	CHECK_STR(why, "the capture loop has not ticked for 12.3 s (limit 10 s)");
	CHECK(!strchr(why, '\n'), "one line");

	liveness__tick(&l, 111 * SEC);
	CHECK(liveness__check(&l, 112 * SEC, why, sizeof(why)), "ticked again");
	/* Another thread's clock read before the tick landed: fresh, not 2^64 ns old. */
	CHECK(liveness__check(&l, 110 * SEC, why, sizeof(why)), "tick after the request's clock");

	liveness__set_timeout(&l, 60 * SEC);
	CHECK(liveness__check(&l, 170 * SEC, why, sizeof(why)), "a longer timeout");
	CHECK(!liveness__check(&l, 172 * SEC, why, sizeof(why)), "past the longer timeout");
	CHECK_STR(why, "the capture loop has not ticked for 61.0 s (limit 60 s)");
}

/* The longest gap: from the reset to the first tick, then between ticks; a clock that goes back
 * (another thread's reading) is no gap; a reset forgets it. */
static void test_max_gap(void)
{
	struct liveness l;

	liveness__init(&l, 10 * SEC, 100 * SEC);
	CHECK_U64(liveness__max_gap(&l), 0);
	liveness__tick(&l, 100 * SEC + 50000000ULL);
	CHECK_U64(liveness__max_gap(&l), 50000000ULL);
	liveness__tick(&l, 103 * SEC + 50000000ULL);
	CHECK_U64(liveness__max_gap(&l), 3 * SEC);
	liveness__tick(&l, 103 * SEC + 100000000ULL);
	CHECK_U64(liveness__max_gap(&l), 3 * SEC);
	liveness__tick(&l, 103 * SEC);
	CHECK_U64(liveness__max_gap(&l), 3 * SEC);
	/* A stall still going on is /healthz's to judge, not yet in the maximum. */
	CHECK(!liveness__check(&l, 120 * SEC, (char[64]){0}, 64), "a stall going on");
	CHECK_U64(liveness__max_gap(&l), 3 * SEC);
	liveness__tick(&l, 120 * SEC);
	CHECK_U64(liveness__max_gap(&l), 17 * SEC);

	liveness__reset_gap(&l, 200 * SEC);
	CHECK_U64(liveness__max_gap(&l), 0);
	liveness__tick(&l, 200 * SEC + 60000000ULL);
	CHECK_U64(liveness__max_gap(&l), 60000000ULL);
	CHECK(liveness__check(&l, 201 * SEC, (char[64]){0}, 64), "alive after the reset");
}

/* A datagram notify socket at name ('@' first: abstract), non-blocking; -1 on failure. */
static int bind_notify(const char *name)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	strncpy(sun.sun_path, name, sizeof(sun.sun_path) - 1);
	len = offsetof(struct sockaddr_un, sun_path) + strlen(name);
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	else
		len++;
	if (bind(fd, (struct sockaddr *)&sun, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The next datagram, or "" when none is waiting. */
static const char *next_message(int fd, char *buf, size_t size)
{
	ssize_t n = recv(fd, buf, size - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void watchdog_env(const char *socket, const char *usec, const char *pid)
{
	setenv("NOTIFY_SOCKET", socket, 1);
	if (usec)
		setenv("WATCHDOG_USEC", usec, 1);
	else
		unsetenv("WATCHDOG_USEC");
	if (pid)
		setenv("WATCHDOG_PID", pid, 1);
	else
		unsetenv("WATCHDOG_PID");
}

static void test_watchdog_at(const char *name)
{
	char pid[32], buf[256];
	struct watchdog w;
	int fd = bind_notify(name);

	CHECK(fd >= 0, "bind %s: %s", name, strerror(errno));
	if (fd < 0)
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	/* WatchdogSec=4: a pet at most every 2 s of the loop's clock. */
	watchdog_env(name, "4000000", pid);
	watchdog__init(&w);
	CHECK(watchdog__tick(&w, 50 * SEC), "%s: the first tick pets", name);
	CHECK_STR(next_message(fd, buf, sizeof(buf)), "WATCHDOG=1");
	CHECK(!watchdog__tick(&w, 51 * SEC), "%s: 1 s later: not due", name);
	CHECK_STR(next_message(fd, buf, sizeof(buf)), "");
	CHECK(watchdog__tick(&w, 52 * SEC), "%s: 2 s later: due", name);
	CHECK_STR(next_message(fd, buf, sizeof(buf)), "WATCHDOG=1");

	/* No WATCHDOG_USEC: the unit has no WatchdogSec=, nothing is sent. */
	watchdog_env(name, NULL, NULL);
	watchdog__init(&w);
	CHECK(!watchdog__tick(&w, 100 * SEC), "%s: no watchdog asked for", name);
	CHECK_STR(next_message(fd, buf, sizeof(buf)), "");

	/* Meant for another process (a child that inherited the environment). */
	watchdog_env(name, "4000000", "1");
	watchdog__init(&w);
	CHECK(!watchdog__tick(&w, 100 * SEC), "%s: another pid's watchdog", name);
	CHECK_STR(next_message(fd, buf, sizeof(buf)), "");

	/* A loop that never ticks never pets: the only sender is watchdog__tick(). */
	watchdog_env(name, "4000000", pid);
	watchdog__init(&w);
	CHECK_STR(next_message(fd, buf, sizeof(buf)), "");
	close(fd);
}

int main(void)
{
	char path[64], abstract[64];

	test_decision();
	test_max_gap();
	snprintf(abstract, sizeof(abstract), "@hostprof-test-notify-%d", (int)getpid());
	test_watchdog_at(abstract);
	snprintf(path, sizeof(path), "/tmp/hostprof-test-notify-%d", (int)getpid());
	unlink(path);
	test_watchdog_at(path);
	unlink(path);
	return check_summary("test_liveness");
}

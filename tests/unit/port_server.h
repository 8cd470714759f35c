/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Local test servers (tests/receiver/ scripts) print the port the kernel gave them as their first
 * line. port_server__start() runs one and reads that line; the tests then talk to 127.0.0.1:port.
 */
#ifndef HOSTPROF_TEST_PORT_SERVER_H
#define HOSTPROF_TEST_PORT_SERVER_H

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline long long port_server__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Run argv (argv[0] is looked up in PATH) with stdout to a pipe, and wait up to 10 s for its
 * first line. Returns the port, with the child in *pid; or -1 (*pid is -1, or the child's, which
 * the caller still stops with port_server__stop()).
 */
static inline int port_server__start(char *const argv[], pid_t *pid)
{
	char line[64];
	size_t got = 0;
	long long end;
	int out[2], port;

	*pid = -1;
	if (pipe(out))
		return -1;
	*pid = fork();
	if (*pid < 0) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	if (*pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	end = port_server__now_ms() + 10000;
	while (got < sizeof(line) - 1 && !memchr(line, '\n', got)) {
		struct pollfd pfd = {.fd = out[0], .events = POLLIN};
		ssize_t n;

		if (port_server__now_ms() > end || poll(&pfd, 1, 200) < 0)
			break;
		if (!(pfd.revents & (POLLIN | POLLHUP)))
			continue;
		n = read(out[0], line + got, sizeof(line) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(out[0]);
	line[got] = '\0';
	port = atoi(line);
	return port > 0 ? port : -1;
}

static inline void port_server__stop(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

#endif /* HOSTPROF_TEST_PORT_SERVER_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A real Python interpreter as a child of a unit test: its stdin and stdout are pipes, so that a
 * test reads what the script printed (addresses, versions) and lets it end by closing its stdin.
 * Shared by the tests of src/interp/ that judge what hostprof reads against what CPython says.
 */
#ifndef HOSTPROF_TEST_PYTHON_CHILD_H
#define HOSTPROF_TEST_PYTHON_CHILD_H

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct python_child {
	pid_t pid;
	int in;	   /* its stdin: closing it lets the script end */
	FILE *out; /* its stdout */
};

/* Run `python OPT ARG` (-c SCRIPT, -I FILE). 0, or -errno. */
static inline int python_child__start(struct python_child *c, const char *python, const char *opt,
				      const char *arg)
{
	int to[2], from[2];

	c->pid = -1;
	c->in = -1;
	c->out = NULL;
	if (pipe(to) || pipe(from))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(python, python, opt, arg, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = to[1];
	c->out = fdopen(from[0], "r");
	return c->out ? 0 : -errno;
}

/* Close its pipes and reap it; kill first when it may not read its stdin. */
static inline void python_child__stop(struct python_child *c, bool kill_it)
{
	if (c->in >= 0)
		close(c->in);
	c->in = -1;
	if (c->out)
		fclose(c->out);
	c->out = NULL;
	if (c->pid > 0) {
		if (kill_it)
			kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	c->pid = -1;
}

#endif /* HOSTPROF_TEST_PYTHON_CHILD_H */

// SPDX-License-Identifier: BSD-2-Clause
/*
 * syscalls: spends most of its CPU time in the kernel, so that kernel frames show up in its
 * stacks: small writes to /dev/null, getppid(), and 1 MiB reads from /dev/zero (the kernel
 * clears the user buffer).
 *
 * Usage: syscalls [SECONDS]   (0 or no argument: run until killed)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define READ_SIZE (1 << 20)

volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static void do_writes(int fd, int n)
{
	static const char buf[64] = "hostprof e2e syscalls workload";
	int i;

	for (i = 0; i < n; i++)
		sink += write(fd, buf, sizeof(buf));
}

NOINLINE static void do_getppid(int n)
{
	int i;

	for (i = 0; i < n; i++)
		sink += getppid();
}

NOINLINE static void do_reads(int fd, char *buf, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sink += read(fd, buf, READ_SIZE);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	double deadline = now() + seconds;
	int null_fd, zero_fd;
	char *buf;

	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	buf = malloc(READ_SIZE);
	if (null_fd < 0 || zero_fd < 0 || !buf) {
		perror("syscalls: setup");
		return 1;
	}
	for (;;) {
		do_writes(null_fd, 256);
		do_getppid(256);
		do_reads(zero_fd, buf, 4);
		if (seconds > 0 && now() >= deadline)
			break;
	}
	free(buf);
	close(zero_fd);
	close(null_fd);
	return 0;
}

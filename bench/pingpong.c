// SPDX-License-Identifier: BSD-2-Clause
/*
 * A context-switch-heavy load: two threads pass one byte back and forth through two pipes for
 * argv[1] seconds, each handover a switch on a 2-core machine. Prints the round trips per second.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static volatile int stop;

static void *echo(void *arg)
{
	char c;

	(void)arg;
	while (read(ping[0], &c, 1) == 1 && !stop)
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3, start, end;
	unsigned long trips = 0;
	pthread_t th;
	char c = 'x';

	if (pipe(ping) || pipe(pong) || pthread_create(&th, NULL, echo, NULL))
		return 1;
	start = now();
	end = start + seconds;
	while (now() < end) {
		for (int i = 0; i < 1000; i++) {
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				return 1;
		}
		trips += 1000;
	}
	stop = 1;
	if (write(ping[1], &c, 1) != 1)
		return 1;
	pthread_join(th, NULL);
	printf("%.0f\n", trips / (now() - start));
	return 0;
}

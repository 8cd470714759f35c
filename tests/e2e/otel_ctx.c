// SPDX-License-Identifier: BSD-2-Clause
/*
 * A service instrumented as an OpenTelemetry SDK would be (OTEP 4719): it publishes its process
 * context, then burns CPU in ctx_work() for SECONDS. With DELAY_MS it publishes only after that
 * long, as an SDK that starts after main does.
 *
 * Usage: otel_ctx SECONDS [DELAY_MS]
 * Its resource: service.name ctx-checkout, service.version 2.4.1, service.instance.id
 * ctx-instance-7, deployment.environment.name e2e. Run it with another OTEL_SERVICE_NAME to see
 * which one wins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "otel_publish.h"
#include "workload.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static NOINLINE unsigned long ctx_work(double until)
{
	unsigned long acc = 1;

	KEEP_FRAME();
	while (now() < until)
		SPIN(100000, acc);
	return acc;
}

int main(int argc, char **argv)
{
	static const char *const resource[] = {"service.name",
					       "ctx-checkout",
					       "service.version",
					       "2.4.1",
					       "service.instance.id",
					       "ctx-instance-7",
					       "deployment.environment.name",
					       "e2e",
					       NULL};
	static const char *const keys[] = {"http.route", "user.id"};
	double seconds = argc > 1 ? atof(argv[1]) : 5, start = now();
	double delay = argc > 2 ? atof(argv[2]) / 1000 : 0;
	unsigned long acc = 0;

	if (delay > 0)
		acc += ctx_work(start + delay);
	if (otel_publish(resource, "tls_v1", keys, 2) != 0) {
		perror("otel_ctx: publish");
		return 1;
	}
	acc += ctx_work(start + seconds);
	return acc == 42;
}

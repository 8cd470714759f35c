/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a unit test finds the fixtures built by tests/unit/fixtures.mk ($OUTPUT/fixtures) and
 * keeps its scratch files (a fresh directory under /tmp). Paths come from small rings of static
 * buffers, so a few may be in use at once in one expression.
 */
#ifndef HOSTPROF_TEST_FIXTURE_PATHS_H
#define HOSTPROF_TEST_FIXTURE_PATHS_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static const char *outdir;
static char tmpdir[64]; /* /tmp/NAME.XXXXXX */

/* Find $OUTPUT (default build) and make the scratch directory /tmp/NAME.XXXXXX. 0 or -errno. */
static int fixture_paths__init(const char *name)
{
	outdir = getenv("OUTPUT");
	if (!outdir || !*outdir)
		outdir = "build";
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", name);
	return mkdtemp(tmpdir) ? 0 : -errno;
}

static __attribute__((unused)) const char *fx(const char *name)
{
	static char paths[8][PATH_MAX];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, PATH_MAX, "%s/fixtures/%s", outdir, name);
	return p;
}

static __attribute__((unused)) const char *tmp(const char *name)
{
	static char paths[4][PATH_MAX];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
	return p;
}

#endif /* HOSTPROF_TEST_FIXTURE_PATHS_H */

// SPDX-License-Identifier: BSD-2-Clause
/*
 * The NSpid line of /proc/PID/status, read by perfmap__path() to name a containerised process's
 * perf map by its PID inside its own namespace. The input is the whole status file, reached
 * through a fake /proc root: ROOT/1/status is a symlink to the input's memfd. The path made must
 * be ROOT/1/root/tmp/perf-N.map with N a decimal number, whatever the file says.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#define FUZZ_INPUT_NAME "fuzz-nspid"
#include "fuzz.h"
#include "symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[PATH_MAX], pid_dir[PATH_MAX], status[PATH_MAX];

static void cleanup(void)
{
	unlink(status);
	rmdir(pid_dir);
	rmdir(root);
}

/* The fake /proc: made once, removed at exit (a crash leaves one empty directory and a link). */
static void fuzz_init(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/hostprof-fuzz-nspid.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		abort();
	snprintf(pid_dir, sizeof(pid_dir), "%s/1", root);
	snprintf(status, sizeof(status), "%s/status", pid_dir);
	if (mkdir(pid_dir, 0700) || symlink(input.path, status))
		abort();
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[PATH_MAX + 64], prefix[PATH_MAX + 32];
	const char *num;
	size_t plen;
	int err;

	fuzz_input__write(&input, data, size);
	err = perfmap__path(root, 1, path, sizeof(path));
	FUZZ_ASSERT(err == 0);
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/1/root/tmp/perf-", root);
	FUZZ_ASSERT(!strncmp(path, prefix, plen));
	num = path + plen;
	FUZZ_ASSERT(isdigit((unsigned char)*num)); /* a PID, never negative */
	while (isdigit((unsigned char)*num))
		num++;
	FUZZ_ASSERT(!strcmp(num, ".map"));
	return 0;
}

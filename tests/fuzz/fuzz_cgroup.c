// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/PID/cgroup as a process can shape it: the kernel writes the hierarchy lines, but the
 * path is made of cgroup names that a container runtime, systemd or the process itself (with a
 * delegated subtree) chose. A container ID found must be 64 hex digits that the text holds; a
 * systemd unit must fit the buffer it was given, be one path component that the text holds
 * followed by ".service", and never be a per-user manager.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "process/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_container(const char *text)
{
	char id[PROC_CONTAINER_ID_LEN + 1];
	int err;

	memset(id, 'x', sizeof(id));
	err = proc__container_id(text, id);
	FUZZ_ASSERT(err == 0 || err == -ENOENT);
	if (err) {
		FUZZ_ASSERT(id[0] == '\0');
		return;
	}
	FUZZ_ASSERT(strlen(id) == PROC_CONTAINER_ID_LEN);
	for (size_t i = 0; i < PROC_CONTAINER_ID_LEN; i++)
		FUZZ_ASSERT(isxdigit((unsigned char)id[i]));
	FUZZ_ASSERT(strstr(text, id));
}

static void check_unit(const char *text, size_t len)
{
	char out[300], with_suffix[sizeof(out) + 16];
	int err;

	memset(out, 'x', sizeof(out));
	err = proc__systemd_unit(text, out, len);
	FUZZ_ASSERT(err == 0 || err == -ENOENT);
	if (err)
		return;
	FUZZ_ASSERT(memchr(out, '\0', len));
	FUZZ_ASSERT(out[0] && !strchr(out, '/') && !strchr(out, '\n'));
	FUZZ_ASSERT(strncmp(out, "user@", 5));
	/* A component follows a '/', or the ':' before a path without one. */
	snprintf(with_suffix, sizeof(with_suffix), "%s.service", out);
	FUZZ_ASSERT(strstr(text, with_suffix));
	/* It comes from the unified hierarchy or from name=systemd's. */
	FUZZ_ASSERT(strstr(text, "::") || strstr(text, ":name=systemd:"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The parsers take the text as /proc gives it, NUL-terminated by the reader. */
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check_container(text);
	/* The agent's 256-byte buffer, and one that some names do not fit. */
	check_unit(text, 256);
	check_unit(text, size ? 1 + data[0] % 16 : 1);
	free(text);
	return 0;
}

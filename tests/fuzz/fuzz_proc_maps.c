// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/PID/maps as a process can shape it: the kernel writes the columns, but the path column is
 * whatever name the process gave the files it maps (spaces, brackets, " (deleted)", escapes).
 * Every mapping kept must be a well-formed range with a path that matches its kind, the lines
 * kept and skipped add up to at most the lines given, and every start is found again.
 */
#include <errno.h>
#include <string.h>

#define FUZZ_INPUT_NAME "fuzz-proc-maps"
#include "fuzz.h"
#include "process/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_init(void)
{
	/* Nothing beyond the input file. */
}

static size_t count_lines(const uint8_t *data, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n + (size && data[size - 1] != '\n');
}

static void check_mapping(const struct mapping *m)
{
	FUZZ_ASSERT(m->start < m->end);
	if (m->kind == MAPPING_ANON) {
		FUZZ_ASSERT(!m->path && !m->deleted);
		return;
	}
	FUZZ_ASSERT(m->path && m->path[0]);
	FUZZ_ASSERT(!strchr(m->path, '\n'));
	if (m->kind == MAPPING_FILE) {
		FUZZ_ASSERT(!(m->path[0] == '[' && m->path[strlen(m->path) - 1] == ']') ||
			    m->deleted);
	} else {
		FUZZ_ASSERT(m->path[0] == '[' && m->path[strlen(m->path) - 1] == ']');
		FUZZ_ASSERT(!m->deleted);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maps maps;
	size_t bad = 0;
	FILE *f;
	int fd, err;

	fuzz_input__write(&input, data, size);
	/* A FILE of its own over the memfd: fclose() must not close the shared fd. */
	fd = dup(input.fd);
	if (fd < 0 || !(f = fdopen(fd, "r")))
		abort();
	err = maps__parse(&maps, f, &bad);
	fclose(f);
	FUZZ_ASSERT(err == 0 || err == -ENOMEM);
	if (err)
		return 0;
	FUZZ_ASSERT(maps.n + bad <= count_lines(data, size));
	for (size_t i = 0; i < maps.n; i++) {
		const struct mapping *m = &maps.v[i], *found;

		check_mapping(m);
		if (i)
			FUZZ_ASSERT(maps.v[i - 1].start <= m->start);
		/* Overlapping ranges may answer with another mapping, never with none. */
		found = maps__find(&maps, m->start);
		FUZZ_ASSERT(found && found->start <= m->start && m->start < found->end);
		/* Its last byte too, unless a later mapping starts inside it (the kernel never
		 * overlaps them; a crafted file may). */
		found = maps__find(&maps, m->end - 1);
		if (i + 1 == maps.n || maps.v[i + 1].start >= m->end)
			FUZZ_ASSERT(found == m);
		found = maps__find(&maps, m->end);
		FUZZ_ASSERT(!found || (found->start <= m->end && m->end < found->end));
	}
	if (maps.n && maps.v[0].start)
		FUZZ_ASSERT(!maps__find(&maps, maps.v[0].start - 1));
	maps__release(&maps);
	return 0;
}

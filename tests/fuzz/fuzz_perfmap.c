// SPDX-License-Identifier: BSD-2-Clause
/*
 * The perf map parser on arbitrary text, as a JIT (or a hostile process) could write it to
 * /tmp/perf-PID.map: parsed with the default limits and with tiny ones taken from the input, then
 * looked up at every address the input names and its neighbours. A found entry must hold the
 * address, and its name must be a readable string.
 */
#include <string.h>

#define FUZZ_INPUT_NAME "fuzz-perfmap"
#include "fuzz.h"
#include "symbols/perfmap.h"

#define MAX_LOOKUPS 256

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_init(void)
{
	/* Nothing beyond the input file. */
}

static struct perfmap *parse(const struct perfmap_limits *limits)
{
	struct perfmap *m;
	FILE *f;
	int fd;

	/* A FILE of its own over the memfd: fclose() must not close the shared fd. */
	if (lseek(input.fd, 0, SEEK_SET) < 0 || (fd = dup(input.fd)) < 0)
		abort();
	f = fdopen(fd, "r");
	if (!f)
		abort();
	m = perfmap__parse(f, limits);
	fclose(f);
	return m;
}

static void find(const struct perfmap *m, uint64_t addr)
{
	struct perfmap_sym sym;

	if (!perfmap__find(m, addr, &sym))
		return;
	FUZZ_ASSERT(sym.start <= addr && addr < sym.end && sym.name);
	sink += strlen(sym.name);
	/* A name that tells no runtime takes the runtime most of the map's names tell. */
	FUZZ_ASSERT(perfmap__classify(sym.name) == sym.kind ||
		    perfmap__classify(sym.name) == FRAME_JIT_OTHER);
}

/* The first hex field of every line: the starts the parser may have kept. */
static void find_all(const struct perfmap *m, const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *save = NULL;
	size_t n = 0;

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line && n < MAX_LOOKUPS;
	     line = strtok_r(NULL, "\n", &save), n++) {
		uint64_t a = strtoull(line, NULL, 16);

		find(m, a);
		find(m, a - 1);
		find(m, a + 1);
	}
	find(m, 0);
	find(m, UINT64_MAX);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_limits tiny = {
		.max_entries = size ? data[0] % 8 : 0,
		.max_bytes = size > 1 ? data[1] * 4u : 0,
	};
	struct perfmap *m;

	fuzz_input__write(&input, data, size);
	m = parse(NULL);
	if (m) {
		find_all(m, data, size);
		sink += perfmap__nr_entries(m) + perfmap__bad_lines(m) + perfmap__memory(m);
		perfmap__delete(m);
	}
	m = parse(&tiny);
	if (m) {
		FUZZ_ASSERT(perfmap__nr_entries(m) <= tiny.max_entries);
		find_all(m, data, size);
		perfmap__delete(m);
	}
	return 0;
}

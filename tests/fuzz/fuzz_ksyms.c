// SPDX-License-Identifier: BSD-2-Clause
/*
 * A kallsyms file (the path is injectable; /proc/kallsyms in production, where module symbol
 * names come from modules anyone with CAP_SYS_MODULE loaded): loaded, then looked up at every
 * address the input names and its neighbours. A failure is one the header documents; a symbol
 * found is at or below the address, with a non-empty name without blanks or control characters
 * and, for a module's, a non-empty module name without them or a closing bracket.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define FUZZ_INPUT_NAME "fuzz-ksyms"
#include "fuzz.h"
#include "symbols/ksyms.h"

#define MAX_LOOKUPS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_init(void)
{
	/* Nothing beyond the input file. */
}

/* No blank or control character. */
static bool is_name(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

static void find(const struct ksyms *k, uint64_t addr)
{
	struct ksym s;

	if (!ksyms__find(k, addr, &s))
		return;
	FUZZ_ASSERT(s.addr && s.addr <= addr);
	FUZZ_ASSERT(s.name && s.name[0] && is_name(s.name));
	if (s.module)
		FUZZ_ASSERT(s.module[0] && is_name(s.module) && !strchr(s.module, ']'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *line, *save = NULL;
	struct ksyms *k;
	size_t n = 0;

	fuzz_input__write(&input, data, size);
	errno = 0;
	k = ksyms__load(input.path);
	if (!k) {
		FUZZ_ASSERT(errno == EPERM || errno == ENOMEM || errno == E2BIG);
		return 0;
	}
	FUZZ_ASSERT(ksyms__size(k) <= size / 5); /* "1 t x\n" is the shortest line */
	text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
		for (line = strtok_r(text, "\n", &save); line && n < MAX_LOOKUPS;
		     line = strtok_r(NULL, "\n", &save), n++) {
			uint64_t a = strtoull(line, NULL, 16);

			find(k, a);
			find(k, a - 1);
			find(k, a + 1);
		}
		free(text);
	}
	find(k, 0);
	find(k, UINT64_MAX);
	ksyms__delete(k);
	return 0;
}

// SPDX-License-Identifier: BSD-2-Clause
/* The line cache (src/symbols/line_cache.c): answers keyed by (owner, address, max), with copied
 * strings.
 */
#include <stdlib.h>
#include <string.h>

#include "symbols/line_cache.h"
#include "check.h"

/* An answer whose strings live in a buffer that is scribbled over after the put. */
static void test_copies(void)
{
	struct line_cache *lc = line_cache__new(16);
	char fn0[16], fn1[16], file[16], dir[16];
	struct dso_line in[2], out[4];
	size_t n = 99;

	CHECK(lc != NULL, "new");
	if (!lc)
		return;
	strcpy(fn0, "inner");
	strcpy(fn1, "outer");
	strcpy(file, "a.c");
	strcpy(dir, "/src");
	in[0] = (struct dso_line){.function = fn0, .file = file, .comp_dir = dir, .line = 7};
	in[1] = (struct dso_line){.function = NULL, .file = NULL, .comp_dir = NULL, .line = 0};
	in[1].function = fn1;
	CHECK(!line_cache__get(lc, 1, 0x1000, 4, out, &n), "empty cache: a miss");
	line_cache__put(lc, 1, 0x1000, 4, in, 2);
	memset(fn0, 'x', sizeof(fn0) - 1);
	memset(fn1, 'y', sizeof(fn1) - 1);
	memset(file, 'z', sizeof(file) - 1);
	CHECK(line_cache__get(lc, 1, 0x1000, 4, out, &n), "a hit after the put");
	CHECK_U64(n, 2);
	CHECK_STR(out[0].function, "inner");
	CHECK_STR(out[0].file, "a.c");
	CHECK_STR(out[0].comp_dir, "/src");
	CHECK_U64(out[0].line, 7);
	CHECK_STR(out[1].function, "outer");
	CHECK(out[1].file == NULL && out[1].comp_dir == NULL, "NULL strings stay NULL");
	/* Another owner, address or max is another question. */
	CHECK(!line_cache__get(lc, 2, 0x1000, 4, out, &n), "another owner misses");
	CHECK(!line_cache__get(lc, 1, 0x1001, 4, out, &n), "another address misses");
	CHECK(!line_cache__get(lc, 1, 0x1000, 2, out, &n), "another max misses");
	/* Owner 0 is nobody's: never stored. */
	line_cache__put(lc, 0, 0x2000, 4, in, 1);
	CHECK(!line_cache__get(lc, 0, 0x2000, 4, out, &n), "owner 0 is never cached");
	/* More entries than max is refused. */
	line_cache__put(lc, 3, 0x3000, 1, in, 2);
	CHECK(!line_cache__get(lc, 3, 0x3000, 1, out, &n), "n > max is not stored");
	line_cache__delete(lc);
}

/* "No lines here" is an answer; a colliding put replaces the older answer; memory is counted. */
static void test_empty_and_bounded(void)
{
	struct line_cache *lc = line_cache__new(3); /* rounded up to 4 slots */
	struct dso_line in = {.function = "f", .file = "f.c", .line = 1}, out[2];
	struct line_cache_stats st;
	size_t n = 99, found = 0;

	CHECK(lc != NULL, "new");
	if (!lc)
		return;
	line_cache__put(lc, 5, 0x10, 2, NULL, 0);
	CHECK(line_cache__get(lc, 5, 0x10, 2, out, &n) && n == 0, "an empty answer is a hit: %zu",
	      n);
	for (uint64_t a = 0; a < 64; a++)
		line_cache__put(lc, 7, 0x1000 + a, 2, &in, 1);
	line_cache__stats(lc, &st);
	CHECK_U64(st.slots, 4);
	CHECK(st.entries <= 4 && st.entries >= 1, "entries bounded by the slots: %zu", st.entries);
	for (uint64_t a = 0; a < 64; a++)
		found += line_cache__get(lc, 7, 0x1000 + a, 2, out, &n);
	CHECK(found == st.entries, "%zu of 64 still answered, %zu entries", found, st.entries);
	CHECK(line_cache__get(lc, 7, 0x1000 + 63, 2, out, &n) && n == 1 &&
		      !strcmp(out[0].function, "f"),
	      "the latest put is answered");
	CHECK(st.bytes >= 4 * sizeof(struct dso_line), "bytes counted: %zu", st.bytes);
	line_cache__delete(lc);
	line_cache__stats(NULL, &st);
	CHECK(st.slots == 0 && st.bytes == 0, "NULL has no stats");
	CHECK(!line_cache__get(NULL, 1, 1, 1, out, &n), "NULL cache misses");
	line_cache__put(NULL, 1, 1, 1, &in, 1);
	line_cache__delete(NULL);
}

int main(void)
{
	test_copies();
	test_empty_and_bounded();
	return check_summary("test_line_cache");
}

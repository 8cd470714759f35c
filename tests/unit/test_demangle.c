// SPDX-License-Identifier: BSD-2-Clause
/*
 * Demangling of C++ and Rust (legacy and v0) names that the compilers themselves produced
 * (tests/unit/fixtures.mk), against what binutils' `nm --demangle` prints for them.
 */
#include <stdlib.h>

#include "check.h"
#include "symbols/demangle.h"

static const char *fixtures_dir(void)
{
	static char dir[4096];
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";

	snprintf(dir, sizeof(dir), "%s/fixtures", out);
	return dir;
}

/* Checks every "mangled<TAB>readable" line of X.demangle; returns how many were checked and
 * how many matched *want_prefix (to prove the file holds the scheme it should). */
static size_t check_file(const char *name, const char *want_prefix, size_t *with_prefix)
{
	char path[8192], line[4096];
	size_t n = 0;
	FILE *f;

	*with_prefix = 0;
	snprintf(path, sizeof(path), "%s/%s", fixtures_dir(), name);
	f = fopen(path, "r");
	CHECK(f != NULL, "%s missing: run make unit-fixtures", path);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *got;

		line[strcspn(line, "\n")] = '\0';
		if (!tab)
			continue;
		*tab = '\0';
		got = demangle__name(line);
		CHECK(got && !strcmp(got, tab + 1), "%s: got \"%s\", want \"%s\"", line,
		      got ? got : "(null)", tab + 1);
		free(got);
		*with_prefix += !strncmp(line, want_prefix, strlen(want_prefix));
		n++;
	}
	fclose(f);
	return n;
}

int main(void)
{
	size_t prefixed, n;
	char *s;

	n = check_file("fx_cxx.o.demangle", "_Z", &prefixed);
	CHECK(n >= 3 && prefixed == n, "C++: %zu names, %zu mangled", n, prefixed);
	/* Rust fixtures are empty when rustc is missing. */
	n = check_file("fx_rust_legacy.o.demangle", "_ZN", &prefixed);
	if (n)
		CHECK(prefixed == n, "Rust legacy: %zu names, %zu mangled", n, prefixed);
	else
		fprintf(stderr, "note: no Rust legacy fixture (rustc missing?)\n");
	n = check_file("fx_rust_v0.o.demangle", "_R", &prefixed);
	if (n)
		CHECK(prefixed == n, "Rust v0: %zu names, %zu mangled", n, prefixed);
	else
		fprintf(stderr, "note: no Rust v0 fixture (rustc missing?)\n");

	/* Known shapes, independent of the fixtures. */
	s = demangle__name("_ZN2fx5inner3BoxIiE3getEv");
	CHECK_STR(s, "fx::inner::Box<int>::get()");
	free(s);
	/* Not mangled, or not valid: NULL, and the caller keeps the name. */
	CHECK(!demangle__name("main"), "main demangled");
	CHECK(!demangle__name("_start"), "_start demangled");
	CHECK(!demangle__name(NULL), "NULL demangled");
	CHECK(!demangle__name("_Z"), "bare _Z demangled");
	CHECK(!demangle__name("_RNvC"), "truncated v0 demangled");
	CHECK(!demangle__name("_ZN3foo"), "truncated C++ demangled");
	{
		/* Absurdly long input is refused before the demangler sees it. */
		size_t len = 100000;
		char *big = malloc(len + 1);

		if (big) {
			memcpy(big, "_ZN", 3);
			memset(big + 3, '9', len - 3);
			big[len] = '\0';
			CHECK(!demangle__name(big), "huge name demangled");
			free(big);
		}
	}
	CHECK(demangle__is_mangled("_ZN3foo3barEv") && demangle__is_mangled("_RNvC1a1b") &&
		      !demangle__is_mangled("foo") && !demangle__is_mangled("_foo"),
	      "is_mangled");
	return check_summary("test_demangle");
}

// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/demangle.h"

#include <libiberty/demangle.h>
#include <string.h>

/* Mangled names of real programs are short; one far longer is input we will not feed the
 * demangler (its recursion depends on the name). */
#define DEMANGLE_MAX_INPUT 4096

bool demangle__is_mangled(const char *name)
{
	if (!name || name[0] != '_')
		return false;
	/* "_Z" (C++ and Rust legacy), "__Z" (the Mach-O spelling, in case), "_R" (Rust v0). */
	return name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z');
}

char *demangle__name(const char *name)
{
	/*
	 * DMGL_PARAMS|DMGL_ANSI give the full signature (overloads differ only there). The style
	 * is DMGL_AUTO, not DMGL_RUST: DMGL_RUST alone would refuse C++, while auto tries Rust
	 * (legacy, whose names are also valid C++ manglings, and v0) first and then C++, and
	 * drops a legacy name's hash as rustfilt does.
	 */
	int opts = DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO;

	if (!demangle__is_mangled(name) ||
	    strnlen(name, DEMANGLE_MAX_INPUT + 1) > DEMANGLE_MAX_INPUT)
		return NULL;
	return cplus_demangle(name, opts);
}

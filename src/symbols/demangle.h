/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Readable names for mangled symbols: C++ (Itanium ABI) and Rust, both its legacy mangling
 * (_ZN...17h<hash>E) and v0 (_R...). The work is libiberty's, the demangler of binutils and GCC;
 * we never parse manglings ourselves.
 */
#ifndef HOSTPROF_DEMANGLE_H
#define HOSTPROF_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* true when name looks mangled (C++ "_Z...", Rust v0 "_R..."), so demangling is worth a try. */
bool demangle__is_mangled(const char *name);

/*
 * The readable form of name, or NULL when it is not mangled or cannot be demangled (then the
 * caller keeps name as it is). The result is malloc'd: the caller frees it.
 */
char *demangle__name(const char *name);

#endif /* HOSTPROF_DEMANGLE_H */

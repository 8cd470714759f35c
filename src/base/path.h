/* SPDX-License-Identifier: BSD-2-Clause */
/* File paths as text: the source paths DWARF and pprof give, made comparable and readable. */
#ifndef HOSTPROF_PATH_H
#define HOSTPROF_PATH_H

#include <stddef.h>

/*
 * Normalise the path s in place, by its text alone (no file system access: the path is from
 * another machine or another root): duplicate slashes become one, "." segments go, and a
 * segment followed by ".." goes with it ("./misc/../sysdeps/x.c" is "sysdeps/x.c"). A relative
 * path keeps the ".." it cannot resolve ("../sysdeps/x.c" stays); an absolute one drops them at
 * the root ("/../x" is "/x"). A path that resolves to nothing is "." (or "/"). The empty string
 * stays empty. Returns the new length.
 */
size_t path__normalize(char *s);

#endif /* HOSTPROF_PATH_H */

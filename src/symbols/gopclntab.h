/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Function names of Go binaries from their .gopclntab, the table the Go runtime itself uses for
 * tracebacks: it stays when the linker drops .symtab (go build -ldflags=-s). The names are Go's
 * own (main.main, runtime.mallocgc), readable as they are.
 */
#ifndef HOSTPROF_GOPCLNTAB_H
#define HOSTPROF_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * Called once per function, in address order: [addr, addr + size) is its code, name (name_len
 * bytes, NUL-terminated) points into the table. A negative return stops the walk and is returned.
 */
typedef int (*gopclntab_fn)(void *arg, uint64_t addr, uint64_t size, const char *name,
			    size_t name_len);

/*
 * Walks the function table of a pclntab (the contents of .gopclntab): Go 1.2-1.15, 1.16-1.17,
 * 1.18-1.19 and 1.20+ layouts, either byte order. text_addr is the address of the binary's .text
 * section (0 if unknown): the base of the function offsets of Go 1.18+ when the table's own is 0.
 * The whole table is checked before fn is first called, so a corrupt one reports nothing.
 * Returns the number of functions reported, -EINVAL with a message in err when the table is
 * corrupt or of an unknown version, or fn's negative return.
 */
int gopclntab__read(const void *data, size_t len, uint64_t text_addr, gopclntab_fn fn, void *arg,
		    char *err, size_t errlen);

#endif /* HOSTPROF_GOPCLNTAB_H */

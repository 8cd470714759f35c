/* SPDX-License-Identifier: BSD-2-Clause */
/* Kernel symbols from /proc/kallsyms (path injectable), modules included. */
#ifndef HOSTPROF_KSYMS_H
#define HOSTPROF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

struct ksym {
	const char *name;   /* owned by the table */
	const char *module; /* NULL for the core kernel, else the module name without brackets */
	uint64_t addr;
};

/*
 * Load and sort the symbols of a kallsyms file. Returns NULL and sets errno on failure; errno is
 * EPERM when every address reads as zero (kptr_restrict hides them: run as root or set
 * kernel.kptr_restrict=0).
 */
struct ksyms *ksyms__load(const char *path);
void ksyms__delete(struct ksyms *k);
/* The symbol with the greatest address <= addr, or false. */
bool ksyms__find(const struct ksyms *k, uint64_t addr, struct ksym *out);
size_t ksyms__size(const struct ksyms *k);

#endif /* HOSTPROF_KSYMS_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/* Kernel symbols from /proc/kallsyms (path injectable), modules included. */
#ifndef HOSTPROF_KSYMS_H
#define HOSTPROF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* The kernel's KSYM_NAME_LEN (since Linux 6.1): names and modules are shorter, NUL included. */
#define KSYMS_NAME_MAX 512

struct ksym {
	const char *name;   /* in buf: valid as long as this struct */
	const char *module; /* NULL for the core kernel, else the module name without brackets,
			       owned by the table */
	uint64_t addr;
	char buf[KSYMS_NAME_MAX];
};

/*
 * Load and sort the symbols of a kallsyms file (a name or module longer than the kernel prints
 * is cut to KSYMS_NAME_MAX - 1 bytes). Returns NULL and sets errno on failure; errno is
 * EPERM when every address reads as zero (kptr_restrict hides them: run as root or set
 * kernel.kptr_restrict=0).
 */
struct ksyms *ksyms__load(const char *path);
void ksyms__delete(struct ksyms *k);
/* The symbol with the greatest address <= addr, or false. */
bool ksyms__find(const struct ksyms *k, uint64_t addr, struct ksym *out);
size_t ksyms__size(const struct ksyms *k);
/* The bytes the table holds. */
size_t ksyms__bytes(const struct ksyms *k);

#endif /* HOSTPROF_KSYMS_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Encoders over the profile model, one file each (enc_<format>.c). Each writes a whole file and
 * returns 0 or -errno; on error nothing is left at `path` (writes go to a temporary file that is
 * renamed into place).
 */
#ifndef HOSTPROF_ENCODE_H
#define HOSTPROF_ENCODE_H

#include "profile.h"

/* gzipped pprof (profile.proto). Labels: pid, tid (numeric), comm, thread_name (strings). */
int enc_pprof__write(const struct profile *p, const char *path);

/*
 * Collapsed stacks, one line per distinct (process name, stack): "comm;root;...;leaf count",
 * where count is the number of raw samples. Kernel frames get the suffix "_[k]".
 */
int enc_folded__write(const struct profile *p, const char *path);

#endif /* HOSTPROF_ENCODE_H */

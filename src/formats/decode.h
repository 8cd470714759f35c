/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoders from files into the profile model, one file each (dec_<format>.c): the inputs of
 * `hostprof render`. Each builds a new profile in *out (the caller deletes it) and returns 0, or
 * returns -errno with *out NULL and a one-line message in err that names the input and the line
 * or byte offset where it went wrong. Outside input: nothing in it may crash a decoder.
 */
#ifndef HOSTPROF_DECODE_H
#define HOSTPROF_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/*
 * Kernel text lives in the upper half of the address space on the 64-bit arches we run on;
 * pprof has no other mark of a kernel frame. Folded input has no addresses, so its kernel frames
 * get this one: a pprof written from it still says "kernel".
 */
#define DECODE_KERNEL_ADDR_MIN 0xffff800000000000ULL

/*
 * Collapsed stacks, "first;second;...;leaf COUNT" per line, as enc_folded__write() and the
 * stackcollapse scripts write them. The first frame is taken as the process name (comm label)
 * and a "_[k]" suffix marks a kernel frame (at DECODE_KERNEL_ADDR_MIN; "_[j]" and "_[i]" are
 * dropped). Empty lines and
 * lines starting with '#' are skipped. The profile's sample type is (samples, count), value =
 * count. `name` is what messages call the input.
 */
int dec_folded__parse(const char *buf, size_t len, const char *name, struct profile **out,
		      char *err, size_t err_len);
int dec_folded__read(const char *path, struct profile **out, char *err, size_t err_len);

/*
 * pprof's perftools.profiles.Profile, gzipped or not (ours, Go's runtime/pprof, `go tool pprof
 * -proto`). The value is the default_sample_type, else the last sample type (cpu/nanoseconds
 * in Go's CPU profiles), the count the (samples, count) value when there is one. Labels pid,
 * tid (numeric), comm and thread_name (strings) become the sample's labels. A location with
 * mapping 0 at an upper-half (kernel) address, or in a "[kernel..." mapping, is a kernel frame.
 */
int dec_pprof__parse(const uint8_t *buf, size_t len, const char *name, struct profile **out,
		     char *err, size_t err_len);
int dec_pprof__read(const char *path, struct profile **out, char *err, size_t err_len);

/*
 * OTLP profiles: one ExportProfilesServiceRequest (.otlp.pb, gzipped or not), as enc_otlp writes
 * it. One profile per sample type in *out (a malloc'ed array of *nr profiles; the caller deletes
 * each and frees the array). Counts: value / period for cpu in nanoseconds, the value when the
 * unit is "count", else 1 per sample; a "contentions"/"count" Profile beside a contention one
 * gives that profile's counts (else it is skipped). comm = process.executable.name, else
 * service.name; thread.name/id/state and hostprof.lock.* become labels.
 */
int dec_otlp__parse(const uint8_t *buf, size_t len, const char *name, struct profile ***out,
		    size_t *nr, char *err, size_t err_len);
int dec_otlp__read(const char *path, struct profile ***out, size_t *nr, char *err, size_t err_len);

/*
 * code, after writing "name: " (unless name is NULL) and the message into err when err_len > 0:
 * how a decoder fails.
 */
int decode__fail(char *err, size_t err_len, const char *name, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The whole file in *buf (malloc'ed, NUL-terminated, the caller frees); at most max bytes. */
int decode__read_file(const char *path, size_t max, char **buf, size_t *len, char *err,
		      size_t err_len);

#endif /* HOSTPROF_DECODE_H */

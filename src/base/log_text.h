/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Text from outside (a receiver's error body, libcurl's message about a server, a kubelet's
 * answer) made fit for one log line: bounded, printable, on one line. What another program
 * says must never be able to forge log lines or send terminal escapes.
 */
#ifndef HOSTPROF_LOG_TEXT_H
#define HOSTPROF_LOG_TEXT_H

#include <stddef.h>

/*
 * Copy at most srclen bytes of src into dst as one printable ASCII line: newlines and tabs
 * become spaces, other bytes outside 0x20..0x7e become '?', runs of spaces collapse, leading and
 * trailing blanks go, and "..." marks a cut. Always NUL-terminates dst (dstlen > 0).
 */
void log_text__sanitize(char *dst, size_t dstlen, const void *src, size_t srclen);

#endif /* HOSTPROF_LOG_TEXT_H */

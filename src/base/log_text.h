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

/*
 * Copy the string src into dst with every byte that could forge a log line or drive a terminal
 * written as \xNN: C0 controls (newline and tab included), DEL, the C1 controls (U+0080..U+009F,
 * a CSI among them) and bytes that are not well-formed UTF-8; other UTF-8 stays as it is. Every
 * log line goes through it (base/log.c), so that names a process chooses (comm, argv, paths,
 * container names) print as data. Never splits an escape or a character; always NUL-terminates
 * dst (dstlen > 0). Returns the bytes written.
 */
size_t log_text__escape(char *dst, size_t dstlen, const char *src);

#endif /* HOSTPROF_LOG_TEXT_H */

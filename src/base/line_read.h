/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Lines of a file another program writes, read within bounds: getline() grows its buffer to the
 * longest line, so a file of a gigabyte without a newline costs a gigabyte. Here a line longer
 * than its cap is skipped (read through to its newline, never kept), and the whole read stops at
 * a byte budget. Memory: the cap plus a 64 KiB read buffer, whatever the file holds.
 */
#ifndef HOSTPROF_LINE_READ_H
#define HOSTPROF_LINE_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct line_reader;

/*
 * Read lines of f (borrowed) of at most max_line bytes each, newline excluded, and at most
 * max_bytes bytes in all. NULL and errno on failure.
 */
struct line_reader *line_reader__new(FILE *f, size_t max_line, uint64_t max_bytes);
void line_reader__delete(struct line_reader *r);

/*
 * The next line into *line (NUL-terminated, without its newline; it may hold NULs of its own:
 * the length says where it ends), valid until the next call. Returns its length, or:
 *   -ENODATA  the end of the file
 *   -E2BIG    a line over max_line: skipped, the next call reads the one after it
 *   -EFBIG    the byte budget ran out before the end of the file (a line cut by it is dropped)
 *   -EIO      f could not be read
 */
ssize_t line_reader__next(struct line_reader *r, char **line);

#endif /* HOSTPROF_LINE_READ_H */

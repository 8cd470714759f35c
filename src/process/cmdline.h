/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A process's command line as it may leave the host (the process.command_line attribute).
 *
 * argv is chosen by whoever starts the process and often carries secrets (--token=..., a
 * database URL with its password, PASSWORD=... for a wrapper): exporting it whole to every
 * receiver by default would publish them. So the default is off; "redacted" keeps argv[0] and
 * every argument but the values of those that look like secrets; "full" is argv as it is.
 *
 * Redaction works on argv with its boundaries (NUL-separated, as /proc/PID/cmdline gives it):
 * on text already joined by spaces, an argument "my secret" would hide half of itself.
 */
#ifndef HOSTPROF_CMDLINE_H
#define HOSTPROF_CMDLINE_H

#include <stddef.h>

#include "model/config.h"

#define CMDLINE_REDACTED_TEXT "<redacted>"

/*
 * Write argv (argv_len bytes, each argument NUL-terminated; the last NUL may be missing) into
 * out as the mode says, arguments joined by single spaces, cut to size - 1 bytes. Returns out, or
 * NULL for CMDLINE_OFF, an empty argv or size 0. In redacted mode:
 *   --name=VALUE, -name=VALUE, name=VALUE  VALUE replaced when name looks like a secret (it
 *                                           contains token, secret, passw, pwd, key, credential
 *                                           or auth, in any case)
 *   --name VALUE, -name VALUE               the next argument replaced, for such a name
 *   -p VALUE, -pVALUE, -p=VALUE             the value replaced (mysql's password flag; a
 *                                           single-dash flag such as -port is hidden too,
 *                                           and -password's next argument as well)
 *   scheme://user:PASSWORD@host             the password replaced, in any argument
 */
const char *cmdline__format(const char *argv, size_t argv_len, enum cmdline_mode mode, char *out,
			    size_t size);

#endif /* HOSTPROF_CMDLINE_H */

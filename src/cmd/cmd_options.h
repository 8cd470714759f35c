/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The option tables of `hostprof profile` (profile_options.c) and `hostprof render`
 * (cmd_render.c); the agent's is agent/agent_options.h. Each table drives its command's parsing,
 * validation and --help (base/options.h).
 */
#ifndef HOSTPROF_CMD_OPTIONS_H
#define HOSTPROF_CMD_OPTIONS_H

#include <stddef.h>

#include "base/options.h"
#include "model/config.h"

/* -o FILE, the format by the file's name (config__opt_output): the same option in both tables. */
#define CMD_OPT_OUTPUT                                                                             \
	.name = "output", .short_name = 'o', .type = OPT_CUSTOM, .flags = OPT_F_REPEAT,            \
	.parse = config__opt_output, .value_name = "FILE"

extern const struct opt_command profile_command;
extern const struct opt_command render_command;

/*
 * Parse `hostprof profile`'s argv into c (which holds config__defaults()): the options, then
 * "-- COMMAND", then the checks across options (one target), and the default output. 0;
 * OPTIONS_HELP after -h; -EINVAL with the problem in err. c points into argv.
 */
int profile_options__parse(int argc, char **argv, struct config *c, char *err, size_t len);

#endif /* HOSTPROF_CMD_OPTIONS_H */

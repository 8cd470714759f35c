/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's options, in one table (base/options.h): every configuration key ("frequency",
 * "export.otlp.endpoint") with its type, range, field in struct config, environment variable
 * (HOSTPROF_ and the key in capitals) and, for some, a flag; then the flags that only the command
 * line has (--config, --print-config, --set, -v, -q, -h), which fill a struct agent_flags.
 *
 * config_load.c reads the keys from a file, the environment and --set; cmd_agent.c parses argv
 * and prints --help with the same table.
 */
#ifndef HOSTPROF_AGENT_OPTIONS_H
#define HOSTPROF_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/options.h"

#define CONFIG_DEFAULT_FILE "/etc/hostprof/config.yaml"
#define AGENT_MAX_SETS 64
#define AGENT_MAX_OPTIONS 64

/* opt_def.target of the agent's options. */
enum agent_target {
	AGENT_TARGET_CONFIG = 0, /* struct config */
	AGENT_TARGET_FLAGS,	 /* struct agent_flags */
};

/* opt_def.tag of the keys: the shape of their value in the YAML file. */
enum agent_key_shape {
	KEY_SCALAR = 0,
	KEY_TYPES,   /* a list (or comma-separated text) of profile types */
	KEY_HEADERS, /* a map of name: value (secret values) */
	KEY_PATHS,   /* a map of name: path */
	KEY_RELABEL, /* a list of rules */
};

/* The command line, kept so that SIGHUP rebuilds the configuration with the same flags. The
 * flags that name a key are kept as KEY=VALUE settings and applied after the file and the
 * environment. */
struct agent_flags {
	const char *config_file; /* NULL: CONFIG_DEFAULT_FILE if it exists */
	bool print_config;
	int log_level; /* -1: from the config */
	struct {
		const char *key, *value;
	} sets[AGENT_MAX_SETS];
	size_t nr_sets;
};

extern const struct opt_command agent_command;

/* The key's option, or NULL when there is no such key. Its index in agent_command.defs is
 * d - agent_command.defs. */
const struct opt_def *agent_options__key(const char *key);

/*
 * Parse the agent's argv into f (argv's "--set KEY=VALUE" is cut at the '='). 0;
 * OPTIONS_HELP after -h; -EINVAL with the problem in err.
 */
int agent_options__parse(int argc, char **argv, struct agent_flags *f, char *err, size_t len);

#endif /* HOSTPROF_AGENT_OPTIONS_H */

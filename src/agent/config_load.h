/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's layered configuration: one table of keys ("export.otlp.endpoint"), read from a YAML
 * file, then the environment (HOSTPROF_<KEY>), then flags (--set KEY=VALUE and the named flags),
 * each layer overriding the one before. Every key remembers where its value came from, so that
 * --print-config can say it and the OpenTelemetry variables can beat the file.
 *
 * Errors name the key, and the file and line when it came from a file, and never quote a header
 * value (they hold tokens).
 */
#ifndef HOSTPROF_CONFIG_LOAD_H
#define HOSTPROF_CONFIG_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "agent/agent_options.h"
#include "model/config.h"

#define CONFIG_LOAD_MAX_KEYS AGENT_MAX_OPTIONS

enum config_source {
	CONFIG_SRC_DEFAULT = 0,
	CONFIG_SRC_FILE,
	CONFIG_SRC_ENV,
	CONFIG_SRC_FLAG,
};

/* Where each key's value came from (indexed like agent_command.defs). */
struct config_origin {
	unsigned char source[CONFIG_LOAD_MAX_KEYS];
	int line[CONFIG_LOAD_MAX_KEYS]; /* in the file; 0 when not from it */
	char file[256];			/* the file read, "" when none */
};

/* config__defaults() plus the agent's own: 19 Hz, a 15 s upload interval. */
void config_load__agent_defaults(struct config *c, struct config_origin *o);

/*
 * Read a YAML file into c. 0; -ENOENT when the file does not exist (err says so); -EINVAL with
 * "FILE:LINE: KEY: what is wrong" in err; -EACCES and others when it cannot be read.
 */
int config_load__file(struct config *c, struct config_origin *o, const char *path, char *err,
		      size_t len);

/* Take HOSTPROF_<KEY> variables (and NODE_NAME for kubernetes.node_name) from get_env. */
int config_load__env(struct config *c, struct config_origin *o,
		     const char *(*get_env)(const char *name), char *err, size_t len);

/* Set one scalar key from text (source says which layer). -ENOENT for an unknown key, -EINVAL
 * for a bad value; err explains. */
int config_load__set(struct config *c, struct config_origin *o, const char *key, const char *value,
		     enum config_source source, char *err, size_t len);

/* The source of a key's value, CONFIG_SRC_DEFAULT for unknown keys. */
enum config_source config_load__source(const struct config_origin *o, const char *key);

/*
 * Read the header_files (name=path) into headers (name=value): each file's content, blanks and
 * newlines trimmed. -errno with the header's name and the file in err (never the value).
 */
int config_load__read_header_files(struct config *c, char *err, size_t len);
/*
 * The same for one list (files: "name=path" each), appended to list/nr; what names the setting
 * in err ("export.otlp.header_files", "--otlp-header-file"). `hostprof profile` uses it too.
 */
int config_load__read_headers(struct config *c, const char *const *files, size_t nr_files,
			      const char **list, size_t *nr, const char *what, char *err,
			      size_t len);

/*
 * The whole configuration: agent defaults < the file (f->config_file, else CONFIG_DEFAULT_FILE
 * when it exists) < the environment (from get_env) < the flags' settings; then the header files
 * are read (not for --print-config, which shows their paths) and -v/-q applied. On error, err
 * says what and where, and *c is released.
 */
int config_load__all(const struct agent_flags *f, struct config *c, struct config_origin *o,
		     const char *(*get_env)(const char *name), char *err, size_t len);

/* The merged configuration as YAML, header values masked, each key's source in a comment. */
void config_load__print(const struct config *c, const struct config_origin *o, FILE *out);

#endif /* HOSTPROF_CONFIG_LOAD_H */

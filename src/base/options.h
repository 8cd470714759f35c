/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Declarative options: a command describes each option once, in a table of struct opt_def (its
 * flags, type, where its value is stored, range, default and help), and this engine parses argv
 * with it, validates values with messages that name the flag, writes --help, and prints values
 * back. It knows no command's options: the tables live with their commands.
 *
 * A value is stored at targets[def->target] + def->offset, so one table may fill two structs
 * (say the agent's configuration and its command-line-only settings).
 */
#ifndef HOSTPROF_OPTIONS_H
#define HOSTPROF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define OPTIONS_MAX_TARGETS 2
#define OPTIONS_HELP 1 /* options__parse(): -h/--help was given */

enum opt_type {
	OPT_DOC = 0,  /* no option: a line of help only (e.g. "-- COMMAND") */
	OPT_FLAG,     /* takes no value: stores true into a bool (or calls parse with NULL) */
	OPT_HELP,     /* takes no value: options__parse() returns OPTIONS_HELP */
	OPT_BOOL,     /* true/false, yes/no, on/off, 1/0 into a bool */
	OPT_UINT,     /* a whole number in [min, max], times scale, into a 4- or 8-byte unsigned */
	OPT_SECONDS,  /* plain seconds above 0 and at most max ("10", "0.5") into a double */
	OPT_INTERVAL, /* a duration with a unit ("15s", "500ms", "2m", "1h") in [min, max] s */
	OPT_STRING,   /* text; "" unsets (NULL) */
	OPT_ENUM,     /* one of choices: its index (or values[index]) into an int or a bool */
	OPT_ENUM_STR, /* one of choices: the choice's static string */
	OPT_CUSTOM,   /* def->parse does it */
};

/* Bits of opt_def.flags. */
#define OPT_F_URL (1U << 0)    /* printed with its credentials masked */
#define OPT_F_REPEAT (1U << 1) /* each use adds to a list: no default to check */
#define OPT_F_SECRET (1U << 2) /* the value is never printed or quoted in messages */

struct opt_ctx;
struct opt_def;

typedef int (*opt_parse_fn)(const struct opt_def *d, struct opt_ctx *ctx, const char *text,
			    char *err, size_t len);
typedef void (*opt_print_fn)(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx);

struct opt_def {
	const char *name; /* the long flag without "--"; NULL: not a flag */
	char short_name;  /* e.g. 'p' for -p; 0: none */
	const char *key;  /* the key in a config file ("export.otlp.endpoint"); NULL: none */
	enum opt_type type;
	unsigned int flags;  /* OPT_F_* */
	int target;	     /* which of opt_ctx.targets the value goes to */
	size_t offset, size; /* the field: offsetof() and sizeof() in that target */
	size_t also_offset;  /* with also_size: a second field that takes the same value */
	size_t also_size;
	size_t count_offset;	  /* a list's: where its length is (for custom parsers, printers) */
	double min, max;	  /* OPT_UINT, OPT_SECONDS (max), OPT_INTERVAL */
	unsigned long long scale; /* OPT_UINT: the stored value is the number times this (0: 1) */
	const char *const *choices; /* OPT_ENUM*: NULL-terminated */
	const int *values;	    /* OPT_ENUM: stored for each choice (NULL: the index) */
	const char *bad_choice;	    /* OPT_ENUM*: what to say after "'TEXT': " when none fits */
	opt_parse_fn parse;	    /* OPT_CUSTOM */
	opt_print_fn print;	    /* options__print_value() for OPT_CUSTOM, or to override */
	const char *dflt;	    /* the default as text, shown in --help; NULL: none said */
	const char *value_name;	    /* in --help: "--pid PID[,PID...]" */
	const char *help;	    /* NULL: not in --help; "\n" breaks a line */
	const char *section;	    /* a heading printed before this option in --help */
	int tag;		    /* free for the table's owner */
};

/* The -h/--help row of every command's table. */
#define OPT_DEF_HELP                                                                               \
	{                                                                                          \
		.name = "help", .short_name = 'h', .type = OPT_HELP, .help = "show this help"      \
	}

/* One command's options and the text around them in --help. */
struct opt_command {
	const char *prog; /* "hostprof profile": the start of every message */
	const struct opt_def *defs;
	size_t nr_defs;
	const char *usage;    /* before the options */
	const char *epilogue; /* after them */
	/* Stop at the first operand: what follows it (or "--") belongs to a command to run. */
	bool stop_at_operand;
};

/* Where values go, and how a parsed option is applied. */
struct opt_ctx {
	void *targets[OPTIONS_MAX_TARGETS];
	/* A copy of text that outlives it, for values from files or the environment; NULL: text
	 * outlives the targets (argv) and is stored as is. */
	const char *(*own)(void *own_arg, const char *text);
	void *own_arg;
	/* Called for each option in argv instead of options__set() (e.g. to apply it later). */
	int (*on_option)(struct opt_ctx *ctx, const struct opt_def *d, const char *text, char *err,
			 size_t len);
	void *arg; /* for on_option and custom parsers */
};

/*
 * Parse argv (argv[0] is the command's name). 0 with *operand the index of the first operand
 * (argc when none); OPTIONS_HELP when -h/--help was given; -EINVAL with the problem in err,
 * naming the flag ("--duration: '-1' is not a duration: ...").
 */
int options__parse(const struct opt_command *cmd, struct opt_ctx *ctx, int argc, char **argv,
		   int *operand, char *err, size_t len);
/* Print "PROG: err" and "See 'PROG --help'." to stderr. */
void options__usage_error(const struct opt_command *cmd, const char *err);

/* The exit status of a usage error. */
#define OPTIONS_EXIT_USAGE 2

/*
 * What a command does with options__parse()'s rc (err its message): -1 to go on when rc is 0;
 * else the status to exit with once it is said: 0 after --help is printed (OPTIONS_HELP), or
 * OPTIONS_EXIT_USAGE after options__usage_error().
 */
int options__exit_status(const struct opt_command *cmd, int rc, const char *err);

/* Validate text and store it as d says. 0, -EINVAL with err, -ENOMEM. */
int options__set(const struct opt_def *d, struct opt_ctx *ctx, const char *text, char *err,
		 size_t len);

/* The command's --help: usage, the options by section, the epilogue. */
void options__help(const struct opt_command *cmd, FILE *out);

/* The option's current value as a config file writes it (strings quoted, URLs' passwords and
 * secrets masked). */
void options__print_value(FILE *out, const struct opt_def *d, const struct opt_ctx *ctx);
/* s in double quotes, with \ " and newlines escaped; NULL prints "". */
void options__print_string(FILE *out, const char *s);

/* The field d names, in its target. */
void *options__field(const struct opt_def *d, const struct opt_ctx *ctx);

/* Value parsers, for custom options and other modules. Each returns 0, or -EINVAL with what is
 * wrong and what is accepted in err. */
int options__parse_count(const char *text, size_t min, size_t max, size_t *out, char *err,
			 size_t len);
int options__parse_interval(const char *text, double min_s, double max_s, double *out, char *err,
			    size_t len);
int options__parse_bool(const char *text, bool *out);

#endif /* HOSTPROF_OPTIONS_H */

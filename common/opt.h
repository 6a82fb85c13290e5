/* SPDX-License-Identifier: MIT */
/*
 * Command options declared once per command, in a table of {name, type,
 * range, default, help} that both the parser and the help read. The CLI
 * and the daemon's control commands parse with it, so every command
 * reports the same mistake in the same words and with the same status.
 */
#ifndef IBEMU_OPT_H
#define IBEMU_OPT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum ibemu_opt_type {
	IBEMU_OPT_FLAG,	    /* no value */
	IBEMU_OPT_STRING,   /* any text */
	IBEMU_OPT_UINT,	    /* decimal or 0x hex, min..max */
	IBEMU_OPT_SIZE,	    /* bytes with units (64KiB), through 'parse' */
	IBEMU_OPT_DURATION, /* virtual time with units (50us), 'parse' */
	IBEMU_OPT_FRACTION, /* a decimal number, lo..hi */
	IBEMU_OPT_ENUM,	    /* one of 'values' */
	IBEMU_OPT_NODE_PORT /* NODE or NODE:PORT, the port 0..255 */
};

struct ibemu_opt {
	const char *name; /* without the leading "--" */
	enum ibemu_opt_type type;
	const char *metavar; /* the value in usage lines: "BYTES" */
	/*
	 * The default, written as a user would write it and parsed by the
	 * same code at the start of every parse; NULL when there is none.
	 */
	const char *def;
	/* For help only: a default that depends on something else. */
	const char *def_help;
	uint64_t min, max;	   /* UINT, SIZE, DURATION (SIZE and
				       DURATION: max 0 means no limit) */
	double lo, hi;		   /* FRACTION */
	const char *const *values; /* ENUM: NULL-terminated */
	/* The accepted values in words, for help and errors, when min..max
	 * does not say it: "1ns..1s", "256, 512, 1024, 2048 or 4096". */
	const char *range_help;
	/*
	 * Converts the text (0 or -errno): required for SIZE and DURATION
	 * (the units live with the topology format), optional for UINT (a
	 * set of values) and STRING (a value checked, its text kept).
	 */
	int (*parse)(const char *text, uint64_t *out);
	uint32_t only; /* bit i: applies to variant i only; 0: to all */
	/* A FLAG that stands alone: given, it must be the command's only
	 * word, and no variant is needed ('traffic --stop'). */
	int alone;
	/* A STRING naming a file the daemon reads or writes: the CLI makes
	 * it absolute before forwarding (the daemon has another cwd). */
	int path;
	const char *help;
};

/* A command: its name for messages and its option table. */
struct ibemu_opt_cmd {
	const char *name; /* "up", "topo gen" */
	const struct ibemu_opt *opts;
	size_t nopts;
	const char *args; /* positional arguments in usage lines: "FILE" */
	unsigned max_args;
	/* The first positional argument and all that follow are not ours
	 * (a program and its arguments); so is everything after "--". */
	int stop_at_arg;
	/* Options may also be written without "--" (key=value, key value). */
	int bare_names;
	/* Names of the variants 'only' refers to (patterns, kinds), NULL
	 * terminated, and what they are called in messages ("pattern"). */
	const char *const *variants;
	const char *variant_what;
	/* The first argument must name a variant; it is not stored. */
	int variant_first;
};

/* The value of one option after a parse. */
struct ibemu_opt_val {
	int given;	 /* on the command line */
	int set;	 /* given, or it has a default */
	uint64_t u;	 /* FLAG 0/1, UINT, SIZE, DURATION, ENUM index, port */
	double f;	 /* FRACTION */
	const char *s;	 /* the text (borrowed from argv or the table) */
	size_t name_len; /* NODE_PORT: bytes of the node name in 's' */
	int has_port;	 /* NODE_PORT: a ":PORT" was given */
};

/*
 * Parses argv[1..argc-1] for command 'cmd'. Fills vals[i] for option i of
 * the table (defaults first), stores the positional arguments, in order, in
 * args[0..*nargs-1] ('args' has room for argc pointers; with stop_at_arg,
 * the foreign program and its arguments are among them) and, with
 * variant_first, the index of the variant named in *variant (else -1;
 * 'variant' may be NULL). Returns 0, or -EINVAL with one line in 'err'
 * naming the command: a missing value, an option given twice, one that
 * does not apply to the variant, a value of the wrong type or out of
 * range, an unknown option or variant, too many arguments. The strings
 * stored borrow from argv and the table.
 */
int ibemu_opt_parse(const struct ibemu_opt_cmd *cmd, int argc, char **argv,
		    struct ibemu_opt_val *vals, char **args, int *nargs,
		    int *variant, struct ibemu_buf *err);

/* Parses one value for option 'o' (as the parser does); 0 or -EINVAL with
 * the reason, prefixed with 'cmd_name', in 'err'. */
int ibemu_opt_value_parse(const char *cmd_name, const struct ibemu_opt *o,
			  const char *text, struct ibemu_opt_val *v,
			  struct ibemu_buf *err);

/* Appends "[--name NAME] [--flag] ..." for a usage line. */
void ibemu_opt_usage(const struct ibemu_opt_cmd *cmd, struct ibemu_buf *out);

/* Appends one or two lines per option: name, value, help, type, range,
 * default and the variants it applies to. */
void ibemu_opt_help(const struct ibemu_opt_cmd *cmd, struct ibemu_buf *out);

/* Index of option 'name' in cmd's table, or -1. */
int ibemu_opt_find(const struct ibemu_opt_cmd *cmd, const char *name,
		   size_t len);

#endif

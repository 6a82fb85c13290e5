/* SPDX-License-Identifier: MIT */
/*
 * The ibemu command. Commands are a table {name, options, help, handler},
 * each command's options a table of its own (common/opt.h) that the parser
 * and the help both read; the commands a daemon serves come from the
 * daemon's own table and are forwarded to it. Exit status: 0 success,
 * 1 failure (including a name that does not exist), 2 bad usage or input.
 */
#ifndef IBEMU_CLI_H
#define IBEMU_CLI_H

#include <stdint.h>

#include "opt.h"
#include "util.h"

struct ibemu_cli {
	const char *fabric; /* --fabric, or NULL */
};

struct ibemu_cli_command {
	const char *name;
	/* Arguments and options; NULL for a command with subcommands, whose
	 * usage is 'args' and whose handler prints their help. */
	const struct ibemu_opt_cmd *opts;
	const char *args;
	const char *help;
	int (*run)(struct ibemu_cli *cli, int argc, char **argv);
};

/*
 * Messages echo what files and daemons said; past this many bytes they are
 * cut (a name read from a file may be megabytes long).
 */
#define IBEMU_CLI_ECHO_MAX 4096

/*
 * Prints "ibemu: ..." on one line of stderr, control characters escaped
 * (ibemu_buf_escape()); returns 'status'.
 */
int ibemu_cli_fail(int status, const char *fmt, ...) IBEMU_PRINTF(2, 3);

/* Prints 'line' and a newline on stderr, escaped the same way. */
void ibemu_cli_eputs(const char *line);

/*
 * Parses argv against 'cmd' (ibemu_opt_parse()); 'args' has room for argc
 * pointers. Returns 0, or prints the error and returns 2.
 */
int ibemu_cli_parse(const struct ibemu_opt_cmd *cmd, int argc, char **argv,
		    struct ibemu_opt_val *vals, char **args, int *nargs,
		    int *variant);

/* Prints "usage: ibemu NAME ARGS", the help line and the options. */
void ibemu_cli_help(const char *name, const struct ibemu_opt_cmd *cmd,
		    const char *help);

/* The option tables of the commands (in the files that run them). */
extern const struct ibemu_opt_cmd ibemu_cli_up_opts;
extern const struct ibemu_opt_cmd ibemu_cli_down_opts;
extern const struct ibemu_opt_cmd ibemu_cli_status_opts;
extern const struct ibemu_opt_cmd ibemu_cli_exec_opts;
extern const struct ibemu_opt_cmd ibemu_cli_run_opts;

/*
 * Picks the fabric a command is for: --fabric, $IBEMU_FABRIC, or the only
 * one running. Returns 0 and the name in 'out', or prints why and returns
 * the exit status.
 */
int ibemu_cli_select(struct ibemu_cli *cli, char *out, size_t len);

/* The virtual time (ps) of fabric 'fabric', from its 'status'; 0 if the
 * daemon does not answer (fabric.c). */
uint64_t ibemu_cli_virtual_now(const char *fabric);

/*
 * How long the CLI waits for a daemon's answer, or for its next progress
 * line, unless $IBEMU_TIMEOUT (seconds; 0 waits forever) says otherwise.
 */
#define IBEMU_CLI_TIMEOUT_MS 10000u

/* How the line starts that 'ibemu up' appends to sm.log when the SM it
 * started ends: "ibemu: ibemu-sm (pid N) died (signal 9, Killed) at T,
 * virtual time V us" or "... exited with status N at T". */
#define IBEMU_SM_END_MARK "ibemu: ibemu-sm (pid "

/* How long 'ibemu down' waits after SIGTERM before SIGKILL, and after. */
#define IBEMU_CLI_DOWN_GRACE_MS 5000u

/* Reads $IBEMU_TIMEOUT into *ms: 0, or prints why and returns 2. */
int ibemu_cli_timeout(unsigned *ms);

/*
 * Checks a fabric name given by 'what' (an option or variable name, for
 * the message): 0, or prints why it is not one and returns 2.
 */
int ibemu_cli_check_name(const char *what, const char *name);

/* Loads a topology file: YAML by extension (.yaml/.yml), else ibnetdiscover.
 * Prints warnings; on error prints the message and returns 2. */
struct ibemu_topo;
int ibemu_cli_load(const char *path, struct ibemu_topo **out);

/* Sends argv to the selected fabric's daemon and prints the answer. */
int ibemu_cli_forward(struct ibemu_cli *cli, int argc, char **argv);

int ibemu_cli_up(struct ibemu_cli *cli, int argc, char **argv);
int ibemu_cli_down(struct ibemu_cli *cli, int argc, char **argv);
int ibemu_cli_status(struct ibemu_cli *cli, int argc, char **argv);
int ibemu_cli_topo(struct ibemu_cli *cli, int argc, char **argv);
int ibemu_cli_exec(struct ibemu_cli *cli, int argc, char **argv);
int ibemu_cli_run(struct ibemu_cli *cli, int argc, char **argv);

/*
 * What 'ibemu exec' does before it becomes the program, in the calling
 * process (exec.c): checks that fabric 'fabric' runs, binds this process
 * (by pid, which the program exec'd next keeps) to HCA 'host' (NULL:
 * $IBEMU_HOST, else the daemon's choice), and sets the environment: the
 * session socket, the host, ibemu's lib directory first in
 * LD_LIBRARY_PATH, libibemu-vtime.so preloaded unless 'wall_clock', and
 * the clocks' start, 'vstart' ps (0: the fabric's time now). Returns 0, or
 * prints why and returns the exit status. 'ibemu run' calls it in each
 * rank's child.
 */
int ibemu_cli_exec_prepare(const char *fabric, const char *host, int wall_clock,
			   uint64_t vstart);
int ibemu_cli_sm(struct ibemu_cli *cli, int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The ibemu command. Commands are a table {name, args, help, handler}; the
 * commands a daemon serves come from the daemon's own table and are
 * forwarded to it. Exit status: 0 success, 1 failure, 2 bad usage or input.
 */
#ifndef IBEMU_CLI_H
#define IBEMU_CLI_H

#include "util.h"

struct ibemu_cli {
	const char *fabric; /* --fabric, or NULL */
};

struct ibemu_cli_command {
	const char *name;
	const char *args;
	const char *help;
	int (*run)(struct ibemu_cli *cli, int argc, char **argv);
};

/* Prints "ibemu: error: ..." on stderr; returns 'status'. */
int ibemu_cli_fail(int status, const char *fmt, ...) IBEMU_PRINTF(2, 3);

/*
 * Picks the fabric a command is for: --fabric, $IBEMU_FABRIC, or the only
 * one running. Returns 0 and the name in 'out', or prints why and returns
 * the exit status.
 */
int ibemu_cli_select(struct ibemu_cli *cli, char *out, size_t len);

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

#endif

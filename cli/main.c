// SPDX-License-Identifier: MIT
/*
 * Entry point of the ibemu command: global options, the command table,
 * help generated from it, and dispatch. Commands served by a fabric daemon
 * are listed from the daemon's table and forwarded unchanged.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ctl_commands.h"

static int run_help(struct ibemu_cli *cli, int argc, char **argv);

static const struct ibemu_cli_command commands[] = {
	{"up",
	 "FILE [--name NAME] [--routes minhop|updown|none] [--sm none] "
	 "[--foreground]",
	 "start a fabric from a YAML (or ibnetdiscover) file", ibemu_cli_up},
	{"down", "", "stop the fabric and remove its socket, lock and files",
	 ibemu_cli_down},
	{"status", "[--json]",
	 "show the selected fabric, or list the running fabrics",
	 ibemu_cli_status},
	{"exec", "[--host HCA] -- COMMAND [ARGS...]",
	 "run a program as a host of the fabric (libibumad tools, OpenSM)",
	 ibemu_cli_exec},
	{"topo", "gen|import|export|check ...",
	 "generate, convert and check topology files (no daemon needed)",
	 ibemu_cli_topo},
	{"help", "[COMMAND]", "show help for ibemu or one command", run_help},
	{NULL, NULL, NULL, NULL},
};

int ibemu_cli_fail(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("ibemu: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

static void usage(FILE *f)
{
	const struct ibemu_cli_command *c;
	const struct ibemu_ctl_command *s;

	fprintf(f, "usage: ibemu [--fabric NAME] COMMAND [ARGS]\n\n"
		   "InfiniBand fabric emulator. Commands:\n");
	for (c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->help);
	fprintf(f, "\nOn a running fabric (each takes --json):\n");
	for (s = ibemu_ctl_commands; s->name; s++)
		if (s->inspect && strcmp(s->name, "status") != 0)
			fprintf(f, "  %-8s %s\n", s->name, s->help);
	fprintf(f,
		"\nThe fabric is chosen by --fabric NAME, else $IBEMU_FABRIC, "
		"else the only one\nrunning. 'ibemu help COMMAND' tells "
		"more about a command.\n");
}

static int command_help(const char *name)
{
	const struct ibemu_cli_command *c;
	const struct ibemu_ctl_command *s;

	for (c = commands; c->name; c++) {
		if (!strcmp(c->name, name)) {
			printf("usage: ibemu %s %s\n  %s\n", c->name, c->args,
			       c->help);
			if (!strcmp(name, "topo")) {
				char topo[] = "topo", help[] = "--help";
				char *args[] = {topo, help, NULL};

				return ibemu_cli_topo(NULL, 2, args);
			}
			return 0;
		}
	}
	s = ibemu_ctl_command_find(name);
	if (s) {
		printf("usage: ibemu %s %s%s\n  %s\n", s->name, s->args,
		       s->inspect ? " [--json]" : "", s->help);
		return 0;
	}
	return ibemu_cli_fail(2, "unknown command '%s' (see 'ibemu --help')",
			      name);
}

static int run_help(struct ibemu_cli *cli, int argc, char **argv)
{
	(void)cli;
	if (argc > 1)
		return command_help(argv[1]);
	usage(stdout);
	return 0;
}

/* Takes '--fabric NAME' / '--fabric=NAME' out of argv wherever it is. */
static int take_fabric_option(struct ibemu_cli *cli, int *argc, char **argv)
{
	int i, j;

	for (i = 1; i < *argc; i++) {
		int consumed = 0;

		if (!strcmp(argv[i], "--")) {
			break;
		} else if (!strcmp(argv[i], "--fabric")) {
			if (i + 1 >= *argc)
				return ibemu_cli_fail(2, "--fabric needs a "
							 "fabric name");
			cli->fabric = argv[i + 1];
			consumed = 2;
		} else if (!strncmp(argv[i], "--fabric=", 9)) {
			cli->fabric = argv[i] + 9;
			consumed = 1;
		}
		if (!consumed)
			continue;
		for (j = i; j + consumed <= *argc; j++)
			argv[j] = argv[j + consumed];
		*argc -= consumed;
		i--;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibemu_cli cli = {0};
	const struct ibemu_cli_command *c;
	int i, ret;

	ret = take_fabric_option(&cli, &argc, argv);
	if (ret)
		return ret;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ibemu %s\n", IBEMU_VERSION);
		return 0;
	}
	/* 'topo' has subcommands with their own help; after '--' the
	 * arguments are another program's ('exec'). */
	for (i = 2;
	     i < argc && strcmp(argv[1], "topo") && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return command_help(argv[1]);
	for (c = commands; c->name; c++)
		if (!strcmp(c->name, argv[1]))
			return c->run(&cli, argc - 1, argv + 1);
	if (ibemu_ctl_command_find(argv[1]))
		return ibemu_cli_forward(&cli, argc - 1, argv + 1);
	return ibemu_cli_fail(2, "unknown command '%s' (see 'ibemu --help')",
			      argv[1]);
}

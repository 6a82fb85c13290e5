// SPDX-License-Identifier: MIT
/*
 * Entry point of the ibemu command: global options, the command table,
 * help generated from it, and dispatch. Commands served by a fabric daemon
 * are listed from the daemon's table and forwarded unchanged.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl_commands.h"

static int run_help(struct ibemu_cli *cli, int argc, char **argv);

static const struct ibemu_opt_cmd help_opts = {
	.name = "help",
	.args = "[COMMAND]",
	.max_args = 1,
};

static const struct ibemu_cli_command commands[] = {
	{"up", &ibemu_cli_up_opts, NULL,
	 "start a fabric from a YAML (or ibnetdiscover) file", ibemu_cli_up},
	{"down", &ibemu_cli_down_opts, NULL,
	 "stop the fabric and remove its socket, lock and files",
	 ibemu_cli_down},
	{"status", &ibemu_cli_status_opts, NULL,
	 "show the selected fabric, or list the running fabrics",
	 ibemu_cli_status},
	{"exec", &ibemu_cli_exec_opts, NULL,
	 "run a program as a host of the fabric (libibumad tools, OpenSM)",
	 ibemu_cli_exec},
	{"run", &ibemu_cli_run_opts, NULL,
	 "launch N ranks of a program, one per HCA (MPI-style jobs)",
	 ibemu_cli_run},
	{"sm", NULL, "status|report [--json]",
	 "ibemu-sm's state and last sweep, and how its routes spread traffic",
	 ibemu_cli_sm},
	{"topo", NULL, "gen|import|export|check ...",
	 "generate, convert and check topology files (no daemon needed)",
	 ibemu_cli_topo},
	{"help", &help_opts, NULL, "show help for ibemu or one command",
	 run_help},
	{NULL, NULL, NULL, NULL, NULL},
};

void ibemu_cli_eputs(const char *line)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_buf_escape(&b, line, IBEMU_CLI_ECHO_MAX);
	fprintf(stderr, "%s\n",
		b.err	 ? "(message lost: out of memory)"
		: b.data ? b.data
			 : "");
	ibemu_buf_fini(&b);
}

int ibemu_cli_fail(int status, const char *fmt, ...)
{
	struct ibemu_buf msg;
	va_list ap;
	int n;

	/* The arguments may hold bytes of any file: escaped on the way out. */
	ibemu_buf_init(&msg);
	ibemu_buf_puts(&msg, "ibemu: ");
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		char *text = malloc((size_t)n + 1);

		if (text) {
			va_start(ap, fmt);
			vsnprintf(text, (size_t)n + 1, fmt, ap);
			va_end(ap);
			ibemu_buf_puts(&msg, text);
			free(text);
		}
	}
	ibemu_cli_eputs(msg.data ? msg.data : "ibemu: error");
	ibemu_buf_fini(&msg);
	return status;
}

int ibemu_cli_parse(const struct ibemu_opt_cmd *cmd, int argc, char **argv,
		    struct ibemu_opt_val *vals, char **args, int *nargs,
		    int *variant)
{
	struct ibemu_buf err;
	int ret;

	ibemu_buf_init(&err);
	ret = ibemu_opt_parse(cmd, argc, argv, vals, args, nargs, variant,
			      &err);
	if (ret)
		ibemu_cli_fail(2, "%s", err.data ? err.data : "bad usage");
	ibemu_buf_fini(&err);
	return ret ? 2 : 0;
}

void ibemu_cli_help(const char *name, const struct ibemu_opt_cmd *cmd,
		    const char *help)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_buf_printf(&b, "usage: ibemu %s ", name);
	ibemu_opt_usage(cmd, &b);
	ibemu_buf_printf(&b, "\n  %s\n", help);
	if (cmd->nopts) {
		ibemu_buf_puts(&b, "\noptions:\n");
		ibemu_opt_help(cmd, &b);
	}
	if (!b.err)
		fputs(b.data, stdout);
	ibemu_buf_fini(&b);
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
		if (strcmp(c->name, name))
			continue;
		if (c->opts) {
			ibemu_cli_help(c->name, c->opts, c->help);
			return 0;
		} else {
			/* Subcommands print their own help. */
			char help[] = "--help";
			char *args[] = {(char *)c->name, help, NULL};

			printf("usage: ibemu %s %s\n  %s\n", c->name, c->args,
			       c->help);
			return c->run(NULL, 2, args);
		}
	}
	s = ibemu_ctl_command_find(name);
	if (s) {
		ibemu_cli_help(s->name, s->opts, s->help);
		return 0;
	}
	return ibemu_cli_fail(2, "unknown command '%s' (see 'ibemu --help')",
			      name);
}

static int run_help(struct ibemu_cli *cli, int argc, char **argv)
{
	struct ibemu_opt_val v[1];
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int n, ret;

	(void)cli;
	if (!args)
		return ibemu_cli_fail(1, "out of memory");
	ret = ibemu_cli_parse(&help_opts, argc, argv, v, args, &n, NULL);
	if (!ret && n)
		ret = command_help(args[0]);
	else if (!ret)
		usage(stdout);
	free(args);
	return ret;
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
				return ibemu_cli_fail(2, "option '--fabric' "
							 "needs a value (a "
							 "fabric name)");
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
	/* 'topo' and 'sm' have subcommands with their own help; after '--'
	 * the arguments are another program's ('exec'). */
	for (i = 2; i < argc && strcmp(argv[1], "topo") &&
		    strcmp(argv[1], "sm") && strcmp(argv[i], "--");
	     i++)
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

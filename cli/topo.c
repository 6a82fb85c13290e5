// SPDX-License-Identifier: MIT
/*
 * 'ibemu topo': work on topology files without a daemon. gen prints the
 * YAML of a generated fabric, import turns ibnetdiscover output into YAML,
 * export does the reverse, check validates a file and sums it up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen.h"
#include "ibnd.h"
#include "yaml.h"

static int print_buf(struct ibemu_buf *b)
{
	int ret = 0;

	if (b->err)
		ret = ibemu_cli_fail(1, "out of memory");
	else if (b->len)
		fwrite(b->data, 1, b->len, stdout);
	ibemu_buf_fini(b);
	return ret;
}

static int topo_gen(int argc, char **argv)
{
	struct ibemu_gen_arg *args;
	struct ibemu_topo *t;
	struct ibemu_diag d;
	struct ibemu_buf b;
	const char *kind = argv[1];
	size_t nargs = 0, i;
	int ret = 2, j;

	if (argc < 2 || !strcmp(kind, "--help") || !strcmp(kind, "-h")) {
		ibemu_buf_init(&b);
		ibemu_buf_puts(&b,
			       "usage: ibemu topo gen KIND [--PARAM VALUE]... "
			       "[--name NAME] [--width W] [--speed S]\n\n");
		ibemu_gen_help(&b, NULL);
		print_buf(&b);
		return argc < 2 ? 2 : 0;
	}
	if (!ibemu_gen_kind_exists(kind))
		return ibemu_cli_fail(2,
				      "topo gen: unknown kind '%s' (see "
				      "'ibemu topo gen --help')",
				      kind);
	args = calloc((size_t)argc, sizeof(*args));
	if (!args || ibemu_topo_create(&t)) {
		free(args);
		return ibemu_cli_fail(1, "out of memory");
	}
	ibemu_diag_init(&d);
	if (ibemu_topo_set_name(t, kind))
		goto out;
	for (j = 2; j < argc; j++) {
		const char *key = argv[j], *value = NULL, *eq;

		if (!strncmp(key, "--", 2))
			key += 2;
		eq = strchr(key, '=');
		if (eq) {
			value = eq + 1;
		} else if (j + 1 < argc) {
			value = argv[++j];
		} else {
			ibemu_cli_fail(2, "topo gen: '%s' needs a value",
				       argv[j]);
			goto out;
		}
		if (!strcmp(key, "help")) {
			ibemu_buf_init(&b);
			ibemu_gen_help(&b, kind);
			ret = print_buf(&b);
			goto out;
		}
		if (!strncmp(key, "name", 4) && (key[4] == '=' || !key[4])) {
			if (!ibemu_name_valid(value) ||
			    ibemu_topo_set_name(t, value)) {
				ibemu_cli_fail(2,
					       "topo gen: '%s' is not a "
					       "valid fabric name",
					       value);
				goto out;
			}
		} else if (!strncmp(key, "width", 5) &&
			   (key[5] == '=' || !key[5])) {
			if (ibemu_width_parse(value, &t->defaults.width)) {
				ibemu_cli_fail(2,
					       "topo gen: bad width '%s', "
					       "expected 1x, 2x, 4x, 8x or "
					       "12x",
					       value);
				goto out;
			}
		} else if (!strncmp(key, "speed", 5) &&
			   (key[5] == '=' || !key[5])) {
			if (ibemu_speed_parse(value, &t->defaults.speed)) {
				ibemu_cli_fail(2,
					       "topo gen: bad speed '%s', "
					       "expected %s",
					       value, ibemu_speed_names());
				goto out;
			}
		} else {
			/* The generator checks its own parameters. */
			char *k = strndup(key, eq ? (size_t)(eq - key)
						  : strlen(key));

			if (!k)
				goto out;
			args[nargs].key = k;
			args[nargs].value = value;
			nargs++;
		}
	}
	if (ibemu_gen_run(t, kind, NULL, args, nargs, &d) ||
	    ibemu_topo_finalize(t, &d)) {
		fprintf(stderr, "ibemu: topo gen: %s\n",
			d.error ? d.error : "failed");
		goto out;
	}
	for (i = 0; i < d.nwarnings; i++)
		fprintf(stderr, "%s\n", d.warnings[i]);
	ibemu_buf_init(&b);
	ibemu_yaml_emit(t, &b);
	ret = print_buf(&b);
out:
	for (i = 0; i < nargs; i++)
		free((char *)args[i].key);
	free(args);
	ibemu_diag_fini(&d);
	ibemu_topo_destroy(t);
	return ret;
}

static int topo_convert(int argc, char **argv, int to_yaml)
{
	struct ibemu_topo *t;
	struct ibemu_buf b;
	int ret;

	if (argc != 2)
		return ibemu_cli_fail(2, "usage: ibemu topo %s FILE", argv[0]);
	ret = ibemu_cli_load(argv[1], &t);
	if (ret)
		return ret;
	ibemu_buf_init(&b);
	if (to_yaml)
		ibemu_yaml_emit(t, &b);
	else
		ibemu_ibnd_export(t, &b);
	ibemu_topo_destroy(t);
	return print_buf(&b);
}

static int topo_check(int argc, char **argv)
{
	struct ibemu_topo *t;
	uint32_t sw, hca;
	int ret;

	if (argc != 2)
		return ibemu_cli_fail(2, "usage: ibemu topo check FILE");
	ret = ibemu_cli_load(argv[1], &t);
	if (ret)
		return ret;
	ibemu_topo_count(t, &sw, &hca);
	printf("%s: fabric %s: %u switches, %u HCAs, %u links\n", argv[1],
	       t->name, sw, hca, t->nlinks);
	ibemu_topo_destroy(t);
	return 0;
}

static void topo_usage(FILE *f)
{
	fprintf(f,
		"usage: ibemu topo gen KIND [--PARAM VALUE]...  print the YAML "
		"of a generated fabric\n"
		"       ibemu topo import FILE                 ibnetdiscover "
		"format to YAML\n"
		"       ibemu topo export FILE                 YAML to "
		"ibnetdiscover format\n"
		"       ibemu topo check FILE                  validate a "
		"topology file\n"
		"'ibemu topo gen --help' lists the generators.\n");
}

int ibemu_cli_topo(struct ibemu_cli *cli, int argc, char **argv)
{
	(void)cli;
	if (argc < 2) {
		topo_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		topo_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "gen"))
		return topo_gen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "import"))
		return topo_convert(argc - 1, argv + 1, 1);
	if (!strcmp(argv[1], "export"))
		return topo_convert(argc - 1, argv + 1, 0);
	if (!strcmp(argv[1], "check"))
		return topo_check(argc - 1, argv + 1);
	return ibemu_cli_fail(2,
			      "topo: unknown subcommand '%s' (gen, import, "
			      "export or check)",
			      argv[1]);
}

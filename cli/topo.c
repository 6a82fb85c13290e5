// SPDX-License-Identifier: MIT
/*
 * 'ibemu topo': work on topology files without a daemon. gen prints the
 * YAML of a generated fabric, import turns ibnetdiscover output into YAML,
 * export does the reverse, check validates a file and sums it up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen.h"
#include "ibnd.h"
#include "rate.h"
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

static int parse_width(const char *text, uint64_t *out)
{
	uint8_t lanes;

	if (ibemu_width_parse(text, &lanes))
		return -EINVAL;
	*out = lanes;
	return 0;
}

static int parse_speed(const char *text, uint64_t *out)
{
	enum ibemu_speed speed;

	if (ibemu_speed_parse(text, &speed))
		return -EINVAL;
	*out = (uint64_t)speed;
	return 0;
}

enum { GEN_NAME, GEN_WIDTH, GEN_SPEED, GEN_COMMON };

/*
 * The option table of 'topo gen': the fabric-wide options, then every
 * generator parameter once, applying to the kinds that declare it. The
 * generators' table (topo/gen.c) declares the parameters; their values
 * are checked there, against the kind's range and radix.
 */
struct gen_table {
	struct ibemu_opt_cmd cmd;
	struct ibemu_opt *opts;
	const char **kinds;
};

static int gen_table_init(struct gen_table *g)
{
	const char *name, *help;
	size_t nkinds = 0, nparams = 0, i, j;
	struct ibemu_opt *o;
	int k;

	memset(g, 0, sizeof(*g));
	while (ibemu_gen_kind_name(nkinds))
		nkinds++;
	for (i = 0; i < nkinds; i++)
		for (j = 0; ibemu_gen_param_name(i, j, &help); j++)
			nparams++;
	IBEMU_BUG_ON(nkinds > 32);
	g->opts = calloc(GEN_COMMON + nparams, sizeof(*g->opts));
	g->kinds = calloc(nkinds + 1, sizeof(*g->kinds));
	if (!g->opts || !g->kinds)
		return -ENOMEM;
	g->opts[GEN_NAME] = (struct ibemu_opt){.name = "name",
					       .type = IBEMU_OPT_STRING,
					       .metavar = "NAME",
					       .def_help = "the kind",
					       .help = "the fabric's name"};
	g->opts[GEN_WIDTH] = (struct ibemu_opt){
		.name = "width",
		.type = IBEMU_OPT_STRING,
		.metavar = "W",
		.range_help = ibemu_width_names(),
		.parse = parse_width,
		.def_help = "the YAML default, defaults: width",
		.help = "the width of every link"};
	g->opts[GEN_SPEED] = (struct ibemu_opt){
		.name = "speed",
		.type = IBEMU_OPT_STRING,
		.metavar = "S",
		.range_help = ibemu_speed_names(),
		.parse = parse_speed,
		.def_help = "the YAML default, defaults: speed",
		.help = "the speed of every link"};
	g->cmd = (struct ibemu_opt_cmd){
		.name = "topo gen",
		.opts = g->opts,
		.nopts = GEN_COMMON,
		.args = "KIND",
		.bare_names = 1,
		.variants = g->kinds,
		.variant_what = "kind",
		.variant_first = 1,
	};
	for (i = 0; i < nkinds; i++) {
		g->kinds[i] = ibemu_gen_kind_name(i);
		for (j = 0; (name = ibemu_gen_param_name(i, j, &help)); j++) {
			k = ibemu_opt_find(&g->cmd, name, strlen(name));
			if (k < 0) {
				k = (int)g->cmd.nopts++;
				o = &g->opts[k];
				o->name = name;
				o->type = IBEMU_OPT_STRING;
				o->metavar = "N";
				o->def_help = "see the kind's help";
				o->help = help;
			}
			/* The fabric-wide options apply to every kind. */
			if (k >= GEN_COMMON)
				g->opts[k].only |= 1u << i;
		}
	}
	return 0;
}

static void gen_table_fini(struct gen_table *g)
{
	free(g->opts);
	free(g->kinds);
}

static void gen_help(struct gen_table *g, const char *kind)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_buf_puts(&b, "usage: ibemu topo gen ");
	ibemu_opt_usage(&g->cmd, &b);
	ibemu_buf_puts(&b, "\n  print the YAML of a generated fabric; options "
			   "may also be written KEY=VALUE\n\noptions:\n");
	/* The fabric-wide ones; each kind's are listed with their ranges. */
	g->cmd.nopts = GEN_COMMON;
	ibemu_opt_help(&g->cmd, &b);
	ibemu_buf_puts(&b, "\n");
	ibemu_gen_help(&b, kind);
	print_buf(&b);
}

static int topo_gen(int argc, char **argv)
{
	struct ibemu_opt_val *v = NULL;
	struct ibemu_gen_arg *args = NULL;
	struct ibemu_topo *t = NULL;
	struct gen_table g;
	struct ibemu_diag d;
	struct ibemu_buf b;
	size_t nargs = 0, i;
	int ret, kind, npos;

	ibemu_diag_init(&d);
	if (gen_table_init(&g))
		goto oom;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		gen_help(&g, NULL);
		gen_table_fini(&g);
		return argc < 2 ? 2 : 0;
	}
	for (i = 2; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--help") && strcmp(argv[i], "-h") &&
		    strcmp(argv[i], "help"))
			continue;
		gen_help(&g, ibemu_gen_kind_exists(argv[1]) ? argv[1] : NULL);
		gen_table_fini(&g);
		return 0;
	}
	v = calloc(g.cmd.nopts, sizeof(*v));
	args = calloc(g.cmd.nopts, sizeof(*args));
	if (!v || !args || ibemu_topo_create(&t))
		goto oom;
	ret = ibemu_cli_parse(&g.cmd, argc, argv, v, NULL, &npos, &kind);
	if (ret)
		goto out;
	ret = 2;
	if (ibemu_topo_set_name(t, v[GEN_NAME].given ? v[GEN_NAME].s
						     : g.kinds[kind]))
		goto oom;
	if (v[GEN_NAME].given &&
	    ibemu_cli_check_name("topo gen: --name", v[GEN_NAME].s))
		goto out;
	if (v[GEN_WIDTH].given)
		t->defaults.width = (uint8_t)v[GEN_WIDTH].u;
	if (v[GEN_SPEED].given)
		t->defaults.speed = (enum ibemu_speed)v[GEN_SPEED].u;
	/* The generator checks the values of its own parameters. */
	for (i = GEN_COMMON; i < g.cmd.nopts; i++) {
		if (!v[i].given)
			continue;
		args[nargs].key = g.opts[i].name;
		args[nargs].value = v[i].s;
		nargs++;
	}
	if (ibemu_gen_run(t, g.kinds[kind], NULL, args, nargs, &d) ||
	    ibemu_topo_finalize(t, &d)) {
		ibemu_cli_fail(2, "topo gen: %s",
			       d.error ? ibemu_diag_what(d.error) : "failed");
		goto out;
	}
	for (i = 0; i < d.nwarnings; i++)
		ibemu_cli_eputs(d.warnings[i]);
	ibemu_buf_init(&b);
	ibemu_yaml_emit(t, &b);
	ret = print_buf(&b);
	goto out;
oom:
	ret = ibemu_cli_fail(1, "out of memory");
out:
	free(v);
	free(args);
	gen_table_fini(&g);
	ibemu_diag_fini(&d);
	ibemu_topo_destroy(t);
	return ret;
}

/* import, export and check take one FILE and no option. */
static int one_file(const char *sub, int argc, char **argv, const char **file)
{
	char name[32], *args[2];
	struct ibemu_opt_cmd cmd = {
		.name = name, .args = "FILE", .max_args = 1};
	int n, ret;

	snprintf(name, sizeof(name), "topo %s", sub);
	ret = ibemu_cli_parse(&cmd, argc, argv, NULL, args, &n, NULL);
	if (!ret && n != 1)
		ret = ibemu_cli_fail(2, "%s: which file? usage: ibemu %s FILE",
				     name, name);
	*file = n == 1 ? args[0] : NULL;
	return ret;
}

static int topo_convert(int argc, char **argv, int to_yaml)
{
	struct ibemu_topo *t;
	struct ibemu_buf b;
	const char *file;
	int ret;

	ret = one_file(argv[0], argc, argv, &file);
	if (ret)
		return ret;
	ret = ibemu_cli_load(file, &t);
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
	const char *file;
	int ret;

	ret = one_file("check", argc, argv, &file);
	if (ret)
		return ret;
	ret = ibemu_cli_load(file, &t);
	if (ret)
		return ret;
	ibemu_topo_count(t, &sw, &hca);
	printf("%s: fabric %s: %u switches, %u HCAs, %u links\n", file, t->name,
	       sw, hca, t->nlinks);
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

// SPDX-License-Identifier: MIT
/*
 * The shared option parser (common/opt.c): every type, the defaults a
 * table declares, the errors a user meets (missing value, twice, wrong
 * variant, out of range, unknown), and the tables of the served commands
 * against what the engine and the topology take.
 */
#include <errno.h>
#include <stdarg.h>

#include "ctl_commands.h"
#include "opt.h"
#include "rate.h"
#include "traffic.h"
#include "unit.h"
#include "units.h"

static const char *const colours[] = {"red", "green", "blue", NULL};
static const char *const shapes[] = {"round", "square", NULL};

enum {
	O_FLAG,
	O_NAME,
	O_COUNT,
	O_SIZE,
	O_TIME,
	O_LOAD,
	O_COLOUR,
	O_AT,
	O_CORNERS,
	O_MTU,
	O_N
};

static const struct ibemu_opt table[] = {
	[O_FLAG] = {.name = "flag", .type = IBEMU_OPT_FLAG, .help = "a flag"},
	[O_NAME] = {.name = "name", .type = IBEMU_OPT_STRING, .help = "text"},
	[O_COUNT] = {.name = "count",
		     .type = IBEMU_OPT_UINT,
		     .min = 1,
		     .max = 100,
		     .def = "7",
		     .help = "a count"},
	[O_SIZE] = {.name = "size",
		    .type = IBEMU_OPT_SIZE,
		    .parse = ibemu_parse_size,
		    .max = 1 << 20,
		    .def = "4KiB",
		    .help = "a size"},
	[O_TIME] = {.name = "time",
		    .type = IBEMU_OPT_DURATION,
		    .parse = ibemu_parse_duration,
		    .min = 1,
		    .def = "1us",
		    .help = "a duration"},
	[O_LOAD] = {.name = "load",
		    .type = IBEMU_OPT_FRACTION,
		    .lo = 0.25,
		    .hi = 1,
		    .def = "0.5",
		    .help = "a fraction"},
	[O_COLOUR] = {.name = "colour",
		      .type = IBEMU_OPT_ENUM,
		      .values = colours,
		      .def = "green",
		      .help = "an enum"},
	[O_AT] = {.name = "at", .type = IBEMU_OPT_NODE_PORT, .help = "a port"},
	[O_CORNERS] = {.name = "corners",
		       .type = IBEMU_OPT_UINT,
		       .max = 8,
		       .only = 1u << 1,
		       .help = "square only"},
	[O_MTU] = {.name = "mtu",
		   .type = IBEMU_OPT_UINT,
		   .parse = ibemu_mtu_parse,
		   .min = IBEMU_MTU_MIN,
		   .max = IBEMU_MTU_MAX,
		   .range_help = IBEMU_MTU_NAMES,
		   .help = "an MTU"},
};

static const struct ibemu_opt_cmd cmd = {
	.name = "draw",
	.opts = table,
	.nopts = O_N,
	.args = "SHAPE [FILE]",
	.max_args = 1,
	.variants = shapes,
	.variant_what = "shape",
	.variant_first = 1,
};

struct run {
	struct ibemu_opt_val v[32]; /* room for the largest table tested */
	char *args[32];
	int nargs, variant, ret;
	struct ibemu_buf err;
};

/* Parses a NULL-terminated list of words after the command name. */
static void parse(struct run *r, const struct ibemu_opt_cmd *c, ...)
{
	char *argv[32] = {(char *)"draw"};
	int argc = 1;
	va_list ap;

	va_start(ap, c);
	while ((argv[argc] = va_arg(ap, char *)) != NULL) {
		argc++;
		IBEMU_BUG_ON(argc >= (int)IBEMU_ARRAY_SIZE(argv));
	}
	va_end(ap);
	IBEMU_BUG_ON(c->nopts > IBEMU_ARRAY_SIZE(r->v));
	ibemu_buf_reset(&r->err);
	r->ret = ibemu_opt_parse(c, argc, argv, r->v, r->args, &r->nargs,
				 &r->variant, &r->err);
}

#define EXPECT_ERROR(r, text, ...)                         \
	do {                                               \
		parse(r, &cmd, __VA_ARGS__, (char *)NULL); \
		T_EQ_INT((r)->ret, -EINVAL);               \
		T_EQ_STR((r)->err.data, text);             \
	} while (0)

static void test_defaults_and_values(void)
{
	struct run r = {0};

	ibemu_buf_init(&r.err);
	parse(&r, &cmd, "round", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_INT(r.variant, 0);
	T_EQ_INT(r.nargs, 0);
	T_EQ_INT(r.v[O_FLAG].set, 0);
	T_EQ_U64(r.v[O_COUNT].u, 7);
	T_EQ_INT(r.v[O_COUNT].given, 0);
	T_EQ_INT(r.v[O_COUNT].set, 1);
	T_EQ_U64(r.v[O_SIZE].u, 4096);
	T_EQ_U64(r.v[O_TIME].u, 1000000);
	T_TRUE(r.v[O_LOAD].f == 0.5);
	T_EQ_U64(r.v[O_COLOUR].u, 1);
	T_EQ_INT(r.v[O_NAME].set, 0);

	parse(&r, &cmd, "--flag", "square", "--name=x=y", "--count", "0x10",
	      "--size", "64KiB", "--time=50us", "--load", "1", "--colour",
	      "blue", "--at", "sw1:3", "--corners", "4", "--mtu", "2048",
	      "file", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_INT(r.variant, 1);
	T_EQ_INT(r.nargs, 1);
	T_EQ_STR(r.args[0], "file");
	T_EQ_U64(r.v[O_FLAG].u, 1);
	T_EQ_STR(r.v[O_NAME].s, "x=y");
	T_EQ_U64(r.v[O_COUNT].u, 16);
	T_EQ_INT(r.v[O_COUNT].given, 1);
	T_EQ_U64(r.v[O_SIZE].u, 65536);
	T_EQ_U64(r.v[O_TIME].u, 50000000);
	T_TRUE(r.v[O_LOAD].f == 1.0);
	T_EQ_U64(r.v[O_COLOUR].u, 2);
	T_EQ_INT(r.v[O_AT].name_len, 3);
	T_EQ_INT(r.v[O_AT].has_port, 1);
	T_EQ_U64(r.v[O_AT].u, 3);
	T_EQ_U64(r.v[O_CORNERS].u, 4);
	T_EQ_U64(r.v[O_MTU].u, 2048);

	/* After "--", words are arguments even if they look like options. */
	parse(&r, &cmd, "round", "--", "--flag", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_INT(r.nargs, 1);
	T_EQ_STR(r.args[0], "--flag");
	T_EQ_INT(r.v[O_FLAG].given, 0);
	ibemu_buf_fini(&r.err);
}

static void test_errors(void)
{
	struct run r = {0};

	ibemu_buf_init(&r.err);
	EXPECT_ERROR(&r, "draw: option '--name' needs a value", "round",
		     "--name");
	EXPECT_ERROR(&r, "draw: option '--name' needs a value", "round",
		     "--name", "--flag");
	EXPECT_ERROR(&r, "draw: option '--count' is given twice", "round",
		     "--count", "2", "--count=3");
	EXPECT_ERROR(&r, "draw: option '--flag' is given twice", "round",
		     "--flag", "--flag");
	EXPECT_ERROR(&r, "draw: option '--flag' takes no value", "round",
		     "--flag=yes");
	EXPECT_ERROR(&r,
		     "draw: unknown option '--nope' (see 'ibemu draw --help')",
		     "round", "--nope=1");
	EXPECT_ERROR(&r, "draw: unknown option '-n' (see 'ibemu draw --help')",
		     "round", "-n");
	EXPECT_ERROR(&r, "draw: unexpected argument 'b'", "round", "a", "b");
	EXPECT_ERROR(&r,
		     "draw: option '--corners' does not apply to shape "
		     "'round' (only to square)",
		     "--corners", "3", "round");
	EXPECT_ERROR(&r,
		     "draw: which shape? (round, square; see 'ibemu draw "
		     "--help')",
		     "--flag");
	EXPECT_ERROR(&r,
		     "draw: unknown shape 'oval' (expected round, square; see "
		     "'ibemu draw --help')",
		     "oval");
	/* Numbers: a sign, wrapping, the range, junk. */
	EXPECT_ERROR(&r,
		     "draw: option '--count' takes an integer (1..100), not "
		     "'-1'",
		     "round", "--count", "-1");
	EXPECT_ERROR(&r,
		     "draw: option '--count' takes an integer (1..100), not "
		     "'18446744073709551617'",
		     "round", "--count", "18446744073709551617");
	EXPECT_ERROR(&r,
		     "draw: option '--count' takes an integer (1..100), not "
		     "'101'",
		     "round", "--count", "101");
	EXPECT_ERROR(&r,
		     "draw: option '--count' takes an integer (1..100), not "
		     "' 5'",
		     "round", "--count", " 5");
	EXPECT_ERROR(&r,
		     "draw: option '--count' takes an integer (1..100), not ''",
		     "round", "--count=");
	EXPECT_ERROR(
		&r,
		"draw: option '--size' takes a size such as 4096 or 64KiB, "
		"not '2MiB'",
		"round", "--size", "2MiB");
	EXPECT_ERROR(&r,
		     "draw: option '--time' takes a duration such as 50us or "
		     "2ms, not '0us'",
		     "round", "--time", "0us");
	EXPECT_ERROR(&r,
		     "draw: option '--load' takes a number (0.25..1), not "
		     "'0.1'",
		     "round", "--load", "0.1");
	EXPECT_ERROR(&r,
		     "draw: option '--load' takes a number (0.25..1), not "
		     "'nan'",
		     "round", "--load", "nan");
	EXPECT_ERROR(&r,
		     "draw: option '--colour' takes red, green or blue, not "
		     "'pink'",
		     "round", "--colour", "pink");
	EXPECT_ERROR(&r,
		     "draw: option '--at' takes NODE or NODE:PORT (a port "
		     "0..255), not 'sw1:256'",
		     "round", "--at", "sw1:256");
	EXPECT_ERROR(&r,
		     "draw: option '--at' takes NODE or NODE:PORT (a port "
		     "0..255), not ':1'",
		     "round", "--at", ":1");
	EXPECT_ERROR(&r,
		     "draw: option '--mtu' takes an integer (256, 512, 1024, "
		     "2048 or 4096), not '1000'",
		     "round", "--mtu", "1000");
	ibemu_buf_fini(&r.err);
}

static void test_help(void)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_opt_usage(&cmd, &b);
	T_EQ_STR(b.data, "SHAPE [FILE] [--flag] [--name VALUE] [--count VALUE] "
			 "[--size VALUE] [--time VALUE] [--load VALUE] "
			 "[--colour red|green|blue] [--at VALUE] "
			 "[--corners VALUE] [--mtu VALUE]");
	ibemu_buf_reset(&b);
	ibemu_opt_help(&cmd, &b);
	T_TRUE(strstr(b.data, "(integer 1..100; default 7)\n") != NULL);
	T_TRUE(strstr(b.data, "(one of red, green or blue; default green)\n") !=
	       NULL);
	T_TRUE(strstr(b.data, "(integer 0..8; shape square only)\n") != NULL);
	T_TRUE(strstr(b.data, "(fraction 0.25..1; default 0.5)\n") != NULL);
	ibemu_buf_fini(&b);
}

/* Bare names (topo gen's key=value) and a program after the options. */
static void test_bare_and_stop(void)
{
	static const struct ibemu_opt o[] = {
		{.name = "k", .type = IBEMU_OPT_STRING, .help = "k"},
	};
	struct ibemu_opt_cmd bare = {
		.name = "gen", .opts = o, .nopts = 1, .bare_names = 1};
	struct ibemu_opt_cmd prog = {
		.name = "exec", .opts = o, .nopts = 1, .stop_at_arg = 1};
	struct run r = {0};

	ibemu_buf_init(&r.err);
	parse(&r, &bare, "k=3", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_STR(r.v[0].s, "3");
	parse(&r, &bare, "k", "4", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_STR(r.v[0].s, "4");
	parse(&r, &bare, "j=4", (char *)NULL);
	T_EQ_INT(r.ret, -EINVAL);
	T_EQ_STR(r.err.data, "gen: unexpected argument 'j=4'");
	parse(&r, &prog, "--k", "1", "ls", "--k", "-l", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_INT(r.nargs, 3);
	T_EQ_STR(r.args[0], "ls");
	T_EQ_STR(r.args[1], "--k");
	parse(&r, &prog, "--", "--k", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_INT(r.nargs, 1);
	T_EQ_INT(r.v[0].given, 0);
	ibemu_buf_fini(&r.err);
}

/* The traffic table's defaults are the ones the engine documents. */
static void test_traffic_table(void)
{
	const struct ibemu_opt_cmd *c = &ibemu__traffic_opts;
	struct ibemu_traffic_opts o;
	struct run r = {0};
	char *argv[] = {(char *)"traffic", NULL, NULL};
	enum ibemu_traffic_pattern p;
	size_t i;

	T_TRUE(c->nopts <= IBEMU_ARRAY_SIZE(r.v));
	ibemu_traffic_opts_init(&o);
	ibemu_buf_init(&r.err);
	/* --stop stands alone: no pattern needed, nothing else allowed. */
	parse(&r, c, "--stop", (char *)NULL);
	T_EQ_INT(r.ret, 0);
	T_EQ_INT(r.variant, -1);
	parse(&r, c, "uniform", "--stop", (char *)NULL);
	T_EQ_INT(r.ret, -EINVAL);
	T_EQ_STR(r.err.data, "traffic: option '--stop' stands alone: no "
			     "pattern, argument or other option with it");
	parse(&r, c, "--size", "0", "uniform", (char *)NULL);
	T_EQ_INT(r.ret, -EINVAL);
	for (i = 0; c->variants[i]; i++) {
		argv[1] = (char *)c->variants[i];
		T_EQ_INT(ibemu_traffic_pattern_parse(c->variants[i], &p), 0);
		T_TRUE(p != IBEMU_TRAFFIC_PAIRS);
		T_EQ_INT(ibemu_opt_parse(c, 2, argv, r.v, r.args, &r.nargs,
					 &r.variant, &r.err),
			 0);
	}
	for (i = 0; i < c->nopts; i++) {
		const char *n = c->opts[i].name;

		if (!strcmp(n, "size"))
			T_EQ_U64(r.v[i].u, o.msg_bytes);
		else if (!strcmp(n, "load"))
			T_TRUE(r.v[i].f == o.load);
		else if (!strcmp(n, "duration"))
			T_EQ_U64(r.v[i].u, o.duration_ps);
		else if (!strcmp(n, "seed"))
			T_EQ_U64(r.v[i].u, o.seed);
		else if (!strcmp(n, "shift"))
			T_EQ_U64(r.v[i].u, o.shift);
		else if (!strcmp(n, "sources"))
			T_EQ_U64(r.v[i].u, o.incast_sources);
		else if (!strcmp(n, "sl"))
			T_EQ_U64(r.v[i].u, o.sl);
		else if (!strcmp(n, "mtu"))
			T_EQ_INT(r.v[i].set, o.mtu != 0);
	}
	ibemu_buf_fini(&r.err);
}

static void test_mtu(void)
{
	uint64_t v = 0;
	unsigned i, n = 0;

	for (i = 0; ibemu_mtu_choices[i]; i++, n++) {
		T_TRUE(ibemu_mtu_valid(ibemu_mtu_choices[i]));
		T_EQ_U64(ibemu_mtu_choices[i], IBEMU_MTU_MIN << i);
	}
	T_EQ_INT(n, 5);
	T_EQ_U64(ibemu_mtu_choices[n - 1], IBEMU_MTU_MAX);
	T_EQ_INT(ibemu_mtu_parse("4096", &v), 0);
	T_EQ_U64(v, 4096);
	T_EQ_INT(ibemu_mtu_parse("128", &v), -EINVAL);
	T_EQ_INT(ibemu_mtu_parse("", &v), -EINVAL);
	T_EQ_INT(ibemu_mtu_parse("8192", &v), -EINVAL);
	T_TRUE(!ibemu_mtu_valid(0) && !ibemu_mtu_valid(300));
}

void ibemu_test_register_common_opt(void)
{
	static const struct ibemu_test tests[] = {
		{"defaults_and_values", test_defaults_and_values},
		{"errors", test_errors},
		{"help", test_help},
		{"bare_and_stop", test_bare_and_stop},
		{"traffic_table", test_traffic_table},
		{"mtu", test_mtu},
		{NULL, NULL},
	};

	ibemu_test_add_suite("common.opt", tests);
}

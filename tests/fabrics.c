// SPDX-License-Identifier: MIT
/*
 * Fabrics for the unit suites: generated with a kind and key/value
 * parameters, or one of the shipped topologies. Shared by the suites so
 * that each builds its fabrics the same way.
 */
#include <stdio.h>

#include "gen.h"
#include "unit.h"
#include "yaml.h"

#define MAX_GEN_ARGS 8

struct ibemu_topo *ibemu_test_gen(const char *kind, const char *const *kv)
{
	static const struct ibemu_loc cmdline = {NULL, 0, 0};
	struct ibemu_gen_arg args[MAX_GEN_ARGS];
	struct ibemu_topo *t;
	struct ibemu_diag d;
	size_t n = 0;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	for (; kv[0] && n < MAX_GEN_ARGS; kv += 2, n++) {
		args[n].key = kv[0];
		args[n].value = kv[1];
		args[n].loc = cmdline;
	}
	T_EQ_INT(ibemu_gen_run(t, kind, &cmdline, args, n, &d), 0);
	ibemu_diag_fini(&d);
	return t;
}

struct ibemu_topo *ibemu_test_load(const char *name)
{
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;
	char path[512];

	snprintf(path, sizeof(path), "%s/topologies/%s.yaml", IBEMU_TEST_SRCDIR,
		 name);
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load_file(path, &t, &d), 0);
	ibemu_diag_fini(&d);
	return t;
}

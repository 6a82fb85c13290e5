// SPDX-License-Identifier: MIT
/*
 * Fabrics for the unit suites: generated with a kind and key/value
 * parameters, or one of the shipped topologies. Shared by the suites so
 * that each builds its fabrics the same way.
 */
#include <stdio.h>

#include "engine.h"
#include "model.h"
#include "gen.h"
#include "routing.h"
#include "traffic.h"
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

void ibemu_test_fab_init(struct ibemu_test_fab *f, struct ibemu_topo *t)
{
	memset(f, 0, sizeof(*f));
	f->t = t;
	ibemu_diag_init(&f->d);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &f->r),
		 0);
	T_EQ_INT(ibemu_model_create(t, &f->e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(f->e, f->r), 0);
}

void ibemu_test_fab_fini(struct ibemu_test_fab *f)
{
	ibemu_traffic_destroy(f->tr);
	ibemu_engine_destroy(f->e);
	ibemu_routes_destroy(f->r);
	ibemu_topo_destroy(f->t);
	ibemu_diag_fini(&f->d);
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

void ibemu_test_attach_all(struct ibemu_engine *e,
			   const struct ibemu_port_ops *ops, void *ctx)
{
	const struct ibemu_topo *t = ibemu_engine_topo(e);
	uint32_t i;
	unsigned p;

	for (i = 0; i < t->nnodes; i++)
		if (t->nodes[i].type == IBEMU_NODE_HCA)
			for (p = 1; p <= t->nodes[i].nports; p++)
				T_EQ_INT(ibemu_engine_port_attach(
						 e,
						 ibemu_engine_port_index(e, i,
									 p),
						 ops, ctx),
					 0);
}

void ibemu_test_engine_up(const char *name, int routes,
			  const struct ibemu_port_ops *ops, void *ctx,
			  struct ibemu_topo **t, struct ibemu_engine **e,
			  struct ibemu_routes **r)
{
	*t = ibemu_test_load(name);
	*e = NULL;
	*r = NULL;
	T_TRUE(*t != NULL);
	T_EQ_INT(ibemu_model_create(*t, e), 0);
	if (ops)
		ibemu_test_attach_all(*e, ops, ctx);
	if (routes) {
		T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"),
						*t, r),
			 0);
		T_EQ_INT(ibemu_engine_apply_routes(*e, *r), 0);
	}
}

void ibemu_test_engine_down(struct ibemu_topo *t, struct ibemu_engine *e,
			    struct ibemu_routes *r)
{
	/* A test that leaves packets in the fabric did not look at them. */
	if (e)
		T_EQ_U64(ibemu_engine_in_flight(e), 0);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

uint32_t ibemu_test_node(const struct ibemu_topo *t, const char *name)
{
	uint32_t n = ibemu_topo_find(t, name);

	T_TRUE(n != IBEMU_NONE);
	return n;
}

uint32_t ibemu_test_port(const struct ibemu_topo *t,
			 const struct ibemu_engine *e, const char *node,
			 unsigned port)
{
	return ibemu_engine_port_index(e, ibemu_test_node(t, node), port);
}

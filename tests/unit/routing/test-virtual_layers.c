// SPDX-License-Identifier: MIT
/*
 * Unit tests of the engines that break credit loops with virtual lanes
 * (routing/dor.c, routing/dfsssp.c, routing/layers.c) and the per-VL
 * channel dependency check (routing/cdg.c): on the shipped fabrics and on
 * generated meshes and tori, every HCA pair is routed, dor's paths are as
 * short as min-hop's, each VL's dependency graph is acyclic, no more
 * layers than the fabric's VLs, and the balance quality.c measures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing.h"
#include "topo.h"
#include "unit.h"

static const uint8_t all_vl0[16];

/* The shipped fabrics, and generated ones, by name or generator. */
static struct ibemu_topo *fabric(const char *name)
{
	static const char *const mesh44[] = {"dims", "4x4", "hosts_per_switch",
					     "2", NULL};
	static const char *const mesh333[] = {"dims", "3x3x3",
					      "hosts_per_switch", "1", NULL};
	static const char *const torus55[] = {"dims", "5x5", "hosts_per_switch",
					      "1", NULL};

	if (!strcmp(name, "mesh-4x4"))
		return ibemu_test_gen("mesh", mesh44);
	if (!strcmp(name, "mesh-3x3x3"))
		return ibemu_test_gen("mesh", mesh333);
	if (!strcmp(name, "torus-5x5"))
		return ibemu_test_gen("torus", torus55);
	return ibemu_test_load(name);
}

static const char *const fabrics[] = {
	"torus-2d-4x4",	  "dragonfly-small", "fat-tree-2l-36",
	"fat-tree-3l-k8", "two-switch",	     "single-switch-8",
	"mesh-4x4",	  "mesh-3x3x3",	     "torus-5x5",
};

static struct ibemu_routes *route(const char *engine, struct ibemu_graph *g)
{
	struct ibemu_routes *r = NULL;

	T_EQ_INT(ibemu_routing_run(ibemu_routing_find(engine), g, &r), 0);
	return r;
}

/*
 * Both engines on every fabric: every HCA pair routed, every VL's CDG
 * acyclic (dor on a torus thanks to its layers), layers within the VLs;
 * dor's paths as long as min-hop's (the same hop histogram: both minimal).
 * Prints the quality figures the report quotes.
 */
static void test_fabrics(void)
{
	static const char *const engines[] = {"dor", "dfsssp"};
	struct ibemu_route_quality q, qm;
	struct ibemu_routes *r, *rm;
	struct ibemu_graph *g;
	struct ibemu_topo *t;
	unsigned i, k, h;

	for (i = 0; i < sizeof(fabrics) / sizeof(fabrics[0]); i++) {
		t = fabric(fabrics[i]);
		T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
		T_EQ_INT(g->vls, 4); /* the topologies' default */
		rm = route("minhop", g);
		T_EQ_INT(ibemu_routes_quality(g, rm, &qm), 0);
		for (k = 0; k < 2; k++) {
			r = route(engines[k], g);
			T_EQ_INT(ibemu_routes_quality(g, r, &q), 0);
			T_EQ_U64(q.unrouted, 0);
			T_EQ_INT(ibemu_routes_deadlock_free(g, r), 1);
			T_TRUE(r->nlayers >= 1 && r->nlayers <= g->vls);
			/* Minimal paths, both. */
			for (h = 0; h < IBEMU_QUALITY_HOPS; h++)
				T_EQ_U64(q.hops_hist[h], qm.hops_hist[h]);
			printf("\n  %-16s %-7s layers %u  shift max %u  a2a "
			       "max %u (even %.1f; minhop %u, %u)",
			       fabrics[i], engines[k], r->nlayers, q.shift_max,
			       q.a2a_max, q.a2a_ideal, qm.shift_max,
			       qm.a2a_max);
			ibemu_routes_destroy(r);
		}
		ibemu_routes_destroy(rm);
		ibemu_graph_destroy(g);
		ibemu_topo_destroy(t);
	}
	printf("\n");
}

/*
 * What needs layers and what does not: on a mesh dor is deadlock-free on
 * one VL (one layer, and its CDG acyclic with every SL on VL 0); on a
 * torus its rings close loops on one VL, which its layers break; the
 * trees need one layer whatever the engine.
 */
static void test_layers_needed(void)
{
	static const struct {
		const char *fabric, *engine;
		int one_vl; /* deadlock-free with every SL on VL 0 */
	} cases[] = {
		{"mesh-4x4", "dor", 1},
		{"mesh-3x3x3", "dor", 1},
		{"torus-2d-4x4", "dor", 0},
		{"torus-5x5", "dor", 0},
		{"torus-2d-4x4", "dfsssp", 0},
		{"dragonfly-small", "dfsssp", 0},
		{"fat-tree-2l-36", "dfsssp", 1},
		{"fat-tree-3l-k8", "dfsssp", 1},
	};
	struct ibemu_routes *r;
	struct ibemu_graph *g;
	struct ibemu_topo *t;
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = fabric(cases[i].fabric);
		T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
		r = route(cases[i].engine, g);
		T_EQ_INT(ibemu_routes_deadlock_free_vl(g, r, all_vl0),
			 cases[i].one_vl);
		T_EQ_INT(ibemu_routes_deadlock_free(g, r), 1);
		if (cases[i].one_vl)
			T_EQ_INT(r->nlayers, 1);
		else
			T_TRUE(r->nlayers > 1);
		ibemu_routes_destroy(r);
		ibemu_graph_destroy(g);
		ibemu_topo_destroy(t);
	}
}

/*
 * dor goes one dimension after the other: on the 4x4 mesh (switches
 * sw-X-Y numbered with Y fastest, hosts 2 per switch, ports 3/4 the first
 * dimension's minus/plus, 5/6 the second's), a path from sw-0-0 to
 * sw-3-3's first host moves along X (ports 4) three times, then along Y.
 */
static void test_dor_order(void)
{
	struct ibemu_routes *r;
	struct ibemu_graph *g;
	struct ibemu_topo *t = fabric("mesh-4x4");
	uint32_t s = ibemu_test_node(t, "sw-0-0"), dst;
	uint16_t lid;
	unsigned hop;
	uint8_t port;

	T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
	r = route("dor", g);
	dst = g->nodes[ibemu_test_node(t, "sw-3-3")].ports[1].peer_node;
	lid = ibemu_routes_lid(r, dst, 1);
	T_TRUE(lid != 0);
	for (hop = 0; hop < 6; hop++) {
		port = r->lft[s][lid];
		T_EQ_INT(port, hop < 3 ? 4 : 6);
		s = g->nodes[s].ports[port].peer_node;
	}
	T_EQ_INT(s, ibemu_test_node(t, "sw-3-3"));
	T_EQ_INT(r->lft[s][lid], 1);
	ibemu_routes_destroy(r);
	ibemu_graph_destroy(g);
	ibemu_topo_destroy(t);
}

/*
 * The SL helper: 0 for engines without layers, for LIDs out of range or
 * unowned; for dfsssp the layer of the path from the source's switch,
 * the same for every host of that switch.
 */
static void test_sl_helper(void)
{
	struct ibemu_graph *g;
	struct ibemu_routes *r;
	struct ibemu_topo *t = fabric("torus-2d-4x4");
	unsigned s, d, used[16] = {0}, n = 0, sl;

	T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
	r = route("minhop", g);
	T_EQ_INT(r->nlayers, 1);
	T_EQ_INT(ibemu_routes_sl(r, 17, 18), 0);
	ibemu_routes_destroy(r);
	r = route("dfsssp", g);
	T_EQ_INT(ibemu_routes_sl(r, 0, 18), 0);
	T_EQ_INT(ibemu_routes_sl(r, 17, r->max_lid + 1), 0);
	/* LIDs: 16 switches first, then 2 hosts per switch in order. */
	for (s = 17; s <= r->max_lid; s++) {
		for (d = 1; d <= r->max_lid; d++) {
			sl = ibemu_routes_sl(r, (uint16_t)s, (uint16_t)d);
			T_TRUE(sl < r->nlayers);
			if (!used[sl]++)
				n++;
			/* Hosts 17 and 18 share sw-0-0. */
			if (s % 2)
				T_EQ_INT(sl, ibemu_routes_sl(r, (uint16_t)s + 1,
							     (uint16_t)d));
		}
	}
	T_EQ_INT(n, r->nlayers);
	ibemu_routes_destroy(r);
	ibemu_graph_destroy(g);
	ibemu_topo_destroy(t);
}

/*
 * More layers than VLs: dfsssp fails with -ENOSPC, dor falls back to SL 0
 * everywhere (as OpenSM's dor: not deadlock-free on a torus).
 */
static void test_too_few_vls(void)
{
	struct ibemu_routes *r = NULL;
	struct ibemu_graph *g;
	struct ibemu_topo *t = fabric("torus-2d-4x4");

	T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
	g->vls = 1;
	T_EQ_INT(ibemu_routing_run(ibemu_routing_find("dfsssp"), g, &r),
		 -ENOSPC);
	T_TRUE(r == NULL);
	r = route("dor", g);
	T_EQ_INT(r->nlayers, 1);
	T_TRUE(r->sl == NULL);
	T_EQ_INT(ibemu_routes_deadlock_free(g, r), 0);
	ibemu_routes_destroy(r);
	/* A fat tree needs one layer: one VL is enough. */
	ibemu_graph_destroy(g);
	ibemu_topo_destroy(t);
	t = fabric("fat-tree-2l-36");
	T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
	g->vls = 0; /* unknown: one */
	r = route("dfsssp", g);
	T_EQ_INT(r->nlayers, 1);
	ibemu_routes_destroy(r);
	ibemu_graph_destroy(g);
	ibemu_topo_destroy(t);
}

void ibemu_test_register_routing_virtual_layers(void)
{
	static const struct ibemu_test tests[] = {
		{"fabrics", test_fabrics},
		{"layers_needed", test_layers_needed},
		{"dor_order", test_dor_order},
		{"sl_helper", test_sl_helper},
		{"too_few_vls", test_too_few_vls},
		{NULL, NULL},
	};

	ibemu_test_add_suite("routing.virtual_layers", tests);
}

// SPDX-License-Identifier: MIT
/*
 * Unit tests of routing/'s seams: the registry of engines, the graph API
 * and its checks, engines run on a graph built by hand with no topology
 * (as a subnet manager would build it), contexts that build more than
 * once, and the graph of a topology matching the hand-built one.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "routing.h"
#include "topo.h"
#include "unit.h"

static void test_registry(void)
{
	const struct ibemu_routing_engine_ops *ops;
	unsigned i;

	T_TRUE(ibemu_routing_find("minhop") != NULL);
	T_EQ_STR(ibemu_routing_find("minhop")->name, "minhop");
	T_EQ_STR(ibemu_routing_find("updown")->name, "updown");
	T_TRUE(ibemu_routing_find("none") == NULL);
	T_TRUE(ibemu_routing_find("") == NULL);
	T_TRUE(ibemu_routing_find("MINHOP") == NULL);
	/* The first engine is the default one: min-hop, as OpenSM's. */
	T_TRUE(ibemu_routing_at(0) == ibemu_routing_find("minhop"));
	for (i = 0; (ops = ibemu_routing_at(i)); i++) {
		T_TRUE(ibemu_routing_find(ops->name) == ops);
		T_TRUE(ops->help && ops->help[0]);
		T_TRUE(ops->create && ops->build && ops->destroy);
	}
	T_EQ_INT(i, 5);
	T_EQ_STR(ibemu_routing_find("ftree")->name, "ftree");
	T_EQ_STR(ibemu_routing_find("dor")->name, "dor");
	T_EQ_STR(ibemu_routing_find("dfsssp")->name, "dfsssp");
	T_TRUE(ibemu_routing_at(i + 1) == NULL);
}

static void test_graph_checks(void)
{
	struct ibemu_graph *g;
	uint32_t a = IBEMU_NONE, b = IBEMU_NONE, x = 7;

	T_EQ_INT(ibemu_graph_create(&g), 0);
	T_EQ_INT(ibemu_graph_add_node(g, IBEMU_GRAPH_SWITCH, 0, 1, &x),
		 -EINVAL);
	T_EQ_INT(ibemu_graph_add_node(g, IBEMU_GRAPH_HCA, 255, 1, &x), -EINVAL);
	T_EQ_INT(ibemu_graph_add_node(g, (enum ibemu_graph_node_type)9, 1, 1,
				      &x),
		 -EINVAL);
	T_EQ_INT(x, 7);
	T_EQ_INT(g->nnodes, 0);
	T_EQ_INT(ibemu_graph_add_node(g, IBEMU_GRAPH_SWITCH, 254, 0x10, &a), 0);
	T_EQ_INT(ibemu_graph_add_node(g, IBEMU_GRAPH_HCA, 2, 0x20, &b), 0);
	T_EQ_INT(a, 0);
	T_EQ_INT(b, 1);
	T_EQ_U64(g->nodes[b].guid, 0x20);
	T_EQ_INT(g->nodes[a].ports[254].peer_node, IBEMU_NONE);
	T_EQ_INT(ibemu_graph_connect(g, a, 0, b, 1), -EINVAL);	 /* port 0 */
	T_EQ_INT(ibemu_graph_connect(g, a, 255, b, 1), -EINVAL); /* no port */
	T_EQ_INT(ibemu_graph_connect(g, a, 1, 2, 1), -EINVAL);	 /* no node */
	T_EQ_INT(ibemu_graph_connect(g, a, 1, a, 1), -EINVAL);	 /* itself */
	T_EQ_INT(ibemu_graph_connect(g, a, 1, a, 2), 0); /* a loop back */
	T_EQ_INT(ibemu_graph_connect(g, a, 3, b, 2), 0);
	T_EQ_INT(ibemu_graph_connect(g, a, 4, b, 2), -EINVAL); /* b:2 taken */
	T_EQ_INT(g->nodes[a].ports[3].peer_node, b);
	T_EQ_INT(g->nodes[a].ports[3].peer_port, 2);
	T_EQ_INT(g->nodes[b].ports[2].peer_node, a);
	T_EQ_INT(g->nodes[b].ports[2].peer_port, 3);
	T_EQ_INT(g->nodes[a].ports[2].peer_port, 1);
	ibemu_graph_destroy(g);
	ibemu_graph_destroy(NULL);
}

/*
 * Switches s1 and s2 (nodes 0, 1; LIDs 1, 2) joined twice, on ports 3 and
 * 4 of each; h1, h2 on ports 1, 2 of s1 (LIDs 3, 4), h3, h4 on ports 1, 2
 * of s2 (LIDs 5, 6), and h5 cabled to nothing (LID 7).
 */
static struct ibemu_graph *two_switches(void)
{
	struct ibemu_graph *g;
	uint32_t n[7], i;

	T_EQ_INT(ibemu_graph_create(&g), 0);
	for (i = 0; i < 7; i++)
		T_EQ_INT(ibemu_graph_add_node(g,
					      i < 2 ? IBEMU_GRAPH_SWITCH
						    : IBEMU_GRAPH_HCA,
					      i < 2 ? 4 : 1, 0x100 + i, &n[i]),
			 0);
	T_EQ_INT(ibemu_graph_connect(g, n[0], 3, n[1], 3), 0);
	T_EQ_INT(ibemu_graph_connect(g, n[0], 4, n[1], 4), 0);
	T_EQ_INT(ibemu_graph_connect(g, n[2], 1, n[0], 1), 0);
	T_EQ_INT(ibemu_graph_connect(g, n[3], 1, n[0], 2), 0);
	T_EQ_INT(ibemu_graph_connect(g, n[4], 1, n[1], 1), 0);
	T_EQ_INT(ibemu_graph_connect(g, n[5], 1, n[1], 2), 0);
	return g;
}

/*
 * Worked out by hand from the rules in routing/README.md. s1 sends LID 2
 * (a switch LID) to port 3, the lowest of two idle ports; then LID 5 to
 * port 4 (no HCA LID on either, but port 3 has a switch LID) and LID 6 to
 * port 3 (port 4 now has an HCA LID). s2 does the same for LIDs 1, 3, 4.
 * Up/down routes equal min-hop's here: s1 is the root, every move from s2
 * to s1 is up and back down, and each route is a single hop.
 */
static const uint8_t lft_s1[8] = {255, 0, 3, 1, 2, 4, 3, 255};
static const uint8_t lft_s2[8] = {255, 3, 0, 4, 3, 1, 2, 255};

static void check_two_switches(const struct ibemu_routes *r)
{
	unsigned lid;

	T_EQ_INT(r->nnodes, 7);
	T_EQ_INT(r->max_lid, 7);
	T_EQ_INT(ibemu_routes_lid(r, 0, 0), 1);
	T_EQ_INT(ibemu_routes_lid(r, 1, 4), 2);
	T_EQ_INT(ibemu_routes_lid(r, 2, 1), 3);
	T_EQ_INT(ibemu_routes_lid(r, 6, 1), 7);
	T_EQ_INT(ibemu_routes_lid(r, 6, 0), 0);
	for (lid = 1; lid <= 7; lid++) {
		T_EQ_INT(r->lft[0][lid], lft_s1[lid]);
		T_EQ_INT(r->lft[1][lid], lft_s2[lid]);
	}
	for (lid = 2; lid < 7; lid++)
		T_TRUE(r->lft[lid] == NULL);
}

static void test_hand_built(void)
{
	struct ibemu_graph *g = two_switches();
	const struct ibemu_routing_engine_ops *ops;
	struct ibemu_routes *r;
	unsigned i;

	for (i = 0; (ops = ibemu_routing_at(i)); i++) {
		r = NULL;
		T_EQ_INT(ibemu_routing_run(ops, g, &r), 0);
		if (!r)
			continue;
		check_two_switches(r);
		ibemu_routes_destroy(r);
	}
	ibemu_graph_destroy(g);
}

/*
 * A context builds as often as asked, each time from fresh counts (as an
 * SM's sweeps would), and refuses routes made for another graph.
 */
static void test_context_rebuilds(void)
{
	const struct ibemu_routing_engine_ops *ops;
	struct ibemu_graph *g = two_switches(), *other;
	struct ibemu_routes *r1, *r2, *r3;
	uint32_t x;
	unsigned i;
	void *ctx;

	T_EQ_INT(ibemu_graph_create(&other), 0);
	T_EQ_INT(ibemu_graph_add_node(other, IBEMU_GRAPH_SWITCH, 1, 0, &x), 0);
	for (i = 0; (ops = ibemu_routing_at(i)); i++) {
		T_EQ_INT(ibemu_routes_create(g, &r1), 0);
		T_EQ_INT(ibemu_routes_create(g, &r2), 0);
		T_EQ_INT(ibemu_routes_create(other, &r3), 0);
		T_EQ_INT(ops->create(g, &ctx), 0);
		T_EQ_INT(ops->build(ctx, r1), 0);
		T_EQ_INT(ops->build(ctx, r3), -EINVAL);
		T_EQ_INT(ops->build(ctx, r2), 0);
		ops->destroy(ctx);
		check_two_switches(r1);
		check_two_switches(r2);
		ibemu_routes_destroy(r3);
		ibemu_routes_destroy(r2);
		ibemu_routes_destroy(r1);
	}
	ibemu_graph_destroy(other);
	ibemu_graph_destroy(g);
}

/* Wished LIDs: h1 (node 2) wants 100, s2 (node 1) 7, h2 (node 3) also 7
 * (taken: refused), h3 (node 4) 0xc000 (multicast: refused). */
static uint16_t want_lids(void *ctx, uint32_t node, unsigned port)
{
	static const uint16_t want[7] = {0, 7, 100, 7, 0xc000, 0, 0};

	(void)ctx;
	(void)port;
	return node < 7 ? want[node] : 0;
}

/*
 * LIDs an SM keeps (ibemu_routes_create_lids): valid wishes first, in node
 * order; the others the lowest LIDs left; holes route nowhere, and every
 * engine still routes every LID that has an owner.
 */
static void test_wished_lids(void)
{
	const struct ibemu_routing_engine_ops *ops;
	struct ibemu_graph *g = two_switches();
	struct ibemu_routes *r;
	unsigned i, lid;

	for (i = 0; (ops = ibemu_routing_at(i)); i++) {
		T_EQ_INT(ibemu_routing_run_lids(ops, g, want_lids, NULL, &r),
			 0);
		T_EQ_INT(r->max_lid, 100);
		T_EQ_INT(ibemu_routes_lid(r, 0, 0), 1);
		T_EQ_INT(ibemu_routes_lid(r, 1, 0), 7);
		T_EQ_INT(ibemu_routes_lid(r, 2, 1), 100);
		T_EQ_INT(ibemu_routes_lid(r, 3, 1), 2);
		T_EQ_INT(ibemu_routes_lid(r, 4, 1), 3);
		T_EQ_INT(ibemu_routes_lid(r, 5, 1), 4);
		T_EQ_INT(ibemu_routes_lid(r, 6, 1), 5);
		for (lid = 1; lid <= r->max_lid; lid++) {
			int owned = r->lid_node[lid] != IBEMU_NONE;

			/* h5 (node 6) has no cable: nothing reaches it. */
			if (owned && r->lid_node[lid] != 6) {
				T_TRUE(r->lft[0][lid] != IBEMU_LFT_NO_ROUTE);
				T_TRUE(r->lft[1][lid] != IBEMU_LFT_NO_ROUTE);
			} else {
				T_EQ_INT(r->lft[0][lid], IBEMU_LFT_NO_ROUTE);
			}
		}
		ibemu_routes_destroy(r);
	}
	ibemu_graph_destroy(g);
}

/*
 * The channel dependency graph (cdg.c) on the shipped fabrics: up/down is
 * deadlock-free everywhere, min-hop and ftree on the trees; min-hop (and
 * ftree, which falls back to it) on the torus and the dragonfly has a
 * cycle, as their traffic studies deadlock.
 */
static void test_deadlock_free(void)
{
	static const struct {
		const char *topo;
		int minhop, updown, ftree;
	} cases[] = {
		{"fat-tree-2l-36", 1, 1, 1},  {"fat-tree-3l-k8", 1, 1, 1},
		{"two-switch", 1, 1, 1},      {"torus-2d-4x4", 0, 1, 0},
		{"dragonfly-small", 0, 1, 0},
	};
	static const char *const engines[] = {"minhop", "updown", "ftree"};
	struct ibemu_routes *r;
	struct ibemu_graph *g;
	struct ibemu_topo *t;
	unsigned i, k;
	int want;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = ibemu_test_load(cases[i].topo);
		T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
		for (k = 0; k < 3; k++) {
			want = k == 0	? cases[i].minhop
			       : k == 1 ? cases[i].updown
					: cases[i].ftree;
			T_EQ_INT(ibemu_routing_run(
					 ibemu_routing_find(engines[k]), g, &r),
				 0);
			T_EQ_INT(ibemu_routes_deadlock_free(g, r), want);
			ibemu_routes_destroy(r);
		}
		ibemu_graph_destroy(g);
		ibemu_topo_destroy(t);
	}
}

/*
 * Route quality (quality.c) on the hand-built fabric: 4 cabled hosts,
 * 2 on each switch, two cables between the switches. All-to-all: the 8
 * crossing pairs take one hop each, spread 2 per directed cable (even);
 * the 4 pairs on one switch take none.
 */
static void test_quality(void)
{
	const struct ibemu_routing_engine_ops *ops;
	struct ibemu_graph *g = two_switches();
	struct ibemu_route_quality q;
	struct ibemu_routes *r;
	unsigned i;

	for (i = 0; (ops = ibemu_routing_at(i)); i++) {
		T_EQ_INT(ibemu_routing_run(ops, g, &r), 0);
		T_EQ_INT(ibemu_routes_quality(g, r, &q), 0);
		T_EQ_INT(q.hosts, 4);
		T_EQ_INT(q.links, 4);
		T_EQ_INT(q.a2a_max, 2);
		T_TRUE(q.a2a_ideal == 2.0);
		T_TRUE(q.a2a_mean == 2.0);
		T_EQ_INT(q.a2a_used, 4);
		T_EQ_INT(q.shift_max, 1);
		T_TRUE(q.shift_mean == 1.0);
		T_EQ_U64(q.hops_hist[0], 4);
		T_EQ_U64(q.hops_hist[1], 8);
		T_EQ_U64(q.unrouted, 0);
		ibemu_routes_destroy(r);
	}
	ibemu_graph_destroy(g);
}

/*
 * The means where routes pile up: min-hop's LFTs of the same fabric, but
 * s1 sends LID 5 (h3) by port 3 as well as LID 6, so its port 4 idles.
 * Hosts in LID order h1..h4 (LIDs 3..6). All-to-all: s1:3 carries the 4
 * routes from h1, h2 to h3, h4; s2 still splits h1 (port 4) from h2
 * (port 3), 2 routes each; 8 routes on the 3 cables used: mean 8/3, max
 * 4, ideal 8/4 = 2. Shift: k = 1 h2->h3 (s1:3), h4->h1 (s2:4); k = 2
 * h1->h3 and h2->h4 (both s1:3), h3->h1 (s2:4), h4->h2 (s2:3); k = 3
 * h1->h4 (s1:3), h3->h2 (s2:3): 8 routes on 2 + 3 + 2 (k, cable) pairs,
 * mean 8/7, max 2.
 */
static void test_quality_means(void)
{
	struct ibemu_graph *g = two_switches();
	struct ibemu_route_quality q;
	struct ibemu_routes *r;

	T_EQ_INT(ibemu_routing_run(ibemu_routing_find("minhop"), g, &r), 0);
	T_EQ_INT(r->lft[0][5], 4);
	r->lft[0][5] = 3;
	T_EQ_INT(ibemu_routes_quality(g, r, &q), 0);
	T_EQ_INT(q.a2a_max, 4);
	T_EQ_INT(q.a2a_used, 3);
	T_TRUE(fabs(q.a2a_mean - 8.0 / 3.0) < 1e-12);
	T_TRUE(q.a2a_ideal == 2.0);
	T_EQ_INT(q.shift_max, 2);
	T_TRUE(fabs(q.shift_mean - 8.0 / 7.0) < 1e-12);
	T_EQ_U64(q.hops_hist[1], 8);
	ibemu_routes_destroy(r);
	ibemu_graph_destroy(g);
}

/*
 * ftree on the shipped fat trees, in the topologies' own order: every
 * shift permutation takes each switch-to-switch cable once at most, and
 * all-to-all stays within 6% of the load spread evenly.
 */
static void test_ftree_quality(void)
{
	static const char *const trees[] = {"fat-tree-2l-36", "fat-tree-3l-k8",
					    "fat-tree-2l-1152"};
	struct ibemu_route_quality q;
	struct ibemu_routes *r;
	struct ibemu_graph *g;
	struct ibemu_topo *t;
	unsigned i;

	for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		t = ibemu_test_load(trees[i]);
		T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
		T_EQ_INT(ibemu_routing_run(ibemu_routing_find("ftree"), g, &r),
			 0);
		T_EQ_INT(ibemu_routes_quality(g, r, &q), 0);
		T_EQ_INT(q.shift_max, 1);
		T_TRUE(q.a2a_max <= 1.06 * q.a2a_ideal);
		T_EQ_U64(q.unrouted, 0);
		ibemu_routes_destroy(r);
		ibemu_graph_destroy(g);
		ibemu_topo_destroy(t);
	}
}

/* The same fabric declared as a topology routes the same way. */
static void test_from_topo(void)
{
	static const char *const names[] = {"s1", "s2", "h1", "h2",
					    "h3", "h4", "h5"};
	struct ibemu_topo *t;
	struct ibemu_graph *g;
	struct ibemu_routes *r = NULL;
	uint32_t n[7], i;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	for (i = 0; i < 7; i++)
		T_EQ_INT(ibemu_topo_add_node(
				 t, i < 2 ? IBEMU_NODE_SWITCH : IBEMU_NODE_HCA,
				 names[i], i < 2 ? 4 : 1, &n[i]),
			 0);
	T_EQ_INT(ibemu_topo_connect(t, n[0], 3, n[1], 3, NULL), 0);
	T_EQ_INT(ibemu_topo_connect(t, n[0], 4, n[1], 4, NULL), 0);
	T_EQ_INT(ibemu_topo_connect(t, n[2], 1, n[0], 1, NULL), 0);
	T_EQ_INT(ibemu_topo_connect(t, n[3], 1, n[0], 2, NULL), 0);
	T_EQ_INT(ibemu_topo_connect(t, n[4], 1, n[1], 1, NULL), 0);
	T_EQ_INT(ibemu_topo_connect(t, n[5], 1, n[1], 2, NULL), 0);
	T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
	T_EQ_INT(g->nnodes, 7);
	T_EQ_INT(g->nodes[0].type, IBEMU_GRAPH_SWITCH);
	T_EQ_INT(g->nodes[6].type, IBEMU_GRAPH_HCA);
	T_EQ_INT(g->nodes[0].nports, 4);
	T_EQ_INT(g->nodes[0].ports[0].peer_node, IBEMU_NONE);
	T_EQ_INT(g->nodes[0].ports[4].peer_node, 1);
	T_EQ_INT(g->nodes[0].ports[4].peer_port, 4);
	T_EQ_INT(g->nodes[5].ports[1].peer_node, 1);
	T_EQ_INT(g->nodes[5].ports[1].peer_port, 2);
	T_EQ_INT(g->nodes[6].ports[1].peer_node, IBEMU_NONE);
	ibemu_graph_destroy(g);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	if (r)
		check_two_switches(r);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/* Whether the LFTs lead from switch 'sw' to the port that owns 'lid'. */
static int reaches(const struct ibemu_graph *g, const struct ibemu_routes *r,
		   uint32_t sw, uint16_t lid)
{
	uint32_t cur = sw, hops;
	const struct ibemu_graph_port *gp;
	unsigned port;

	for (hops = 0; hops < 64; hops++) {
		port = r->lft[cur][lid];
		if (port == IBEMU_LFT_NO_ROUTE)
			return 0;
		if (port == 0)
			return r->lid_node[lid] == cur;
		gp = &g->nodes[cur].ports[port];
		if (gp->peer_node == IBEMU_NONE)
			return 0;
		if (g->nodes[gp->peer_node].type != IBEMU_GRAPH_SWITCH)
			return gp->peer_node == r->lid_node[lid] &&
			       gp->peer_port == r->lid_port[lid];
		cur = gp->peer_node;
	}
	return 0;
}

/*
 * LMC 2 (IBA 7.11.1): every HCA port takes 4 LIDs from a multiple of 4,
 * a switch one; every engine routes each of them from every switch to
 * the port; min-hop spreads one port's LIDs over the parallel uplinks of
 * a fat tree (the multipath LMC is for); quality counts each port once.
 */
static void test_lmc(void)
{
	static const char *const names[] = {"two-switch", "fat-tree-2l-36",
					    "torus-2d-4x4"};
	const struct ibemu_routing_engine_ops *ops;
	struct ibemu_route_quality q0, q;
	struct ibemu_routes *r, *r0;
	struct ibemu_graph *g;
	struct ibemu_topo *t;
	uint32_t n, sw, k, ports[4];
	unsigned i, e, p, distinct;
	uint16_t base;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		t = ibemu_test_load(names[i]);
		T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
		for (e = 0; (ops = ibemu_routing_at(e)); e++) {
			g->lmc = 0;
			T_EQ_INT(ibemu_routing_run(ops, g, &r0), 0);
			g->lmc = 2;
			T_EQ_INT(ibemu_routing_run(ops, g, &r), 0);
			T_EQ_INT(r->lmc, 2);
			for (n = 0; n < g->nnodes; n++) {
				if (g->nodes[n].type == IBEMU_GRAPH_SWITCH)
					continue;
				for (p = 1; p <= g->nodes[n].nports; p++) {
					base = ibemu_routes_lid(r, n, p);
					T_TRUE(base && base % 4 == 0);
					for (k = 0; k < 4; k++) {
						T_EQ_U64(r->lid_node[base + k],
							 n);
						for (sw = 0; sw < g->nnodes;
						     sw++)
							if (g->nodes[sw].type ==
							    IBEMU_GRAPH_SWITCH)
								T_TRUE(reaches(
									g, r,
									sw,
									(uint16_t)(base +
										   k)));
					}
				}
			}
			T_EQ_INT(ibemu_routes_quality(g, r0, &q0), 0);
			T_EQ_INT(ibemu_routes_quality(g, r, &q), 0);
			T_EQ_U64(q.hosts, q0.hosts);
			T_EQ_U64(q.unrouted, 0);
			ibemu_routes_destroy(r0);
			if (i == 1 && !strcmp(ops->name, "minhop")) {
				/* hca01's LIDs seen from leaf04: up to the
				 * spines by more than one uplink. */
				n = ibemu_topo_find(t, "hca01");
				sw = ibemu_topo_find(t, "leaf04");
				base = ibemu_routes_lid(r, n, 1);
				distinct = 0;
				for (k = 0; k < 4; k++) {
					ports[k] = r->lft[sw][base + k];
					distinct +=
						k == 0 || ports[k] != ports[0];
				}
				T_TRUE(distinct >= 2);
			}
			ibemu_routes_destroy(r);
		}
		ibemu_graph_destroy(g);
		ibemu_topo_destroy(t);
	}
}

void ibemu_test_register_routing_graph(void)
{
	static const struct ibemu_test tests[] = {
		{"registry", test_registry},
		{"graph_checks", test_graph_checks},
		{"hand_built", test_hand_built},
		{"context_rebuilds", test_context_rebuilds},
		{"from_topo", test_from_topo},
		{"wished_lids", test_wished_lids},
		{"deadlock_free", test_deadlock_free},
		{"quality", test_quality},
		{"quality_means", test_quality_means},
		{"ftree_quality", test_ftree_quality},
		{"lmc", test_lmc},
		{NULL, NULL},
	};

	ibemu_test_add_suite("routing.graph", tests);
}

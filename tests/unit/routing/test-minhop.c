// SPDX-License-Identifier: MIT
/*
 * Unit tests of the min-hop routes (routing/): the exact LID layout, LFTs worked out by
 * hand on small fabrics, port balancing over parallel cables and fat-tree
 * uplinks, min-hop paths without loops on fat trees and tori, unreachable
 * destinations, and the end of the unicast LID space.
 */
#include <errno.h>
#include <stdlib.h>

#include "gen.h"
#include "routing.h"
#include "topo.h"
#include "unit.h"

static uint32_t add(struct ibemu_topo *t, enum ibemu_node_type type,
		    const char *name, unsigned nports)
{
	uint32_t idx = IBEMU_NONE;

	T_EQ_INT(ibemu_topo_add_node(t, type, name, nports, &idx), 0);
	return idx;
}

static void cable(struct ibemu_topo *t, uint32_t a, unsigned ap, uint32_t b,
		  unsigned bp)
{
	T_EQ_INT(ibemu_topo_connect(t, a, ap, b, bp, NULL), 0);
}

static struct ibemu_routes *minhop(const struct ibemu_topo *t)
{
	struct ibemu_routes *r = NULL;

	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	return r;
}

/*
 * Follows the LFTs from HCA port src:sp to 'lid'. Returns the switches
 * the packet crosses, or -1 if it is dropped, loops, or reaches the wrong
 * port.
 */
static int path_switches(const struct ibemu_topo *t,
			 const struct ibemu_routes *r, uint32_t src,
			 unsigned sp, uint16_t lid)
{
	const struct ibemu_topo_port *p = &t->nodes[src].ports[sp];
	uint32_t node = p->peer_node;
	unsigned port = p->peer_port;
	int n = 0;

	while (node != IBEMU_NONE && (uint32_t)n <= t->nnodes) {
		uint8_t out;

		if (t->nodes[node].type == IBEMU_NODE_HCA)
			return node == r->lid_node[lid] &&
					       port == r->lid_port[lid]
				       ? n
				       : -1;
		n++;
		out = r->lft[node][lid];
		if (out == 0)
			return node == r->lid_node[lid] ? n : -1;
		if (out > t->nodes[node].nports)
			return -1;
		port = t->nodes[node].ports[out].peer_port;
		node = t->nodes[node].ports[out].peer_node;
	}
	return -1;
}

/*
 * Hops between switches, from a search of the test's own over the cables
 * of the topology: dist[node] for every switch, -1 when unreachable.
 */
static void switch_dist(const struct ibemu_topo *t, uint32_t from, int *dist)
{
	uint32_t *queue = malloc(t->nnodes * sizeof(*queue));
	uint32_t head = 0, tail = 0, i;
	unsigned p;

	for (i = 0; i < t->nnodes; i++)
		dist[i] = -1;
	dist[from] = 0;
	queue[tail++] = from;
	while (head < tail) {
		const struct ibemu_topo_node *n = &t->nodes[queue[head]];
		int d = dist[queue[head++]];

		for (p = 1; p <= n->nports; p++) {
			uint32_t peer = n->ports[p].peer_node;

			if (peer == IBEMU_NONE ||
			    t->nodes[peer].type != IBEMU_NODE_SWITCH ||
			    dist[peer] >= 0)
				continue;
			dist[peer] = d + 1;
			queue[tail++] = peer;
		}
	}
	free(queue);
}

/*
 * Checks that from every HCA (every 'src_step'-th) to every 'dst_step'-th
 * HCA, the LFTs lead to the destination across the fewest switches
 * possible. Returns the number of paths checked.
 */
static unsigned check_min_paths(const struct ibemu_topo *t,
				const struct ibemu_routes *r, unsigned dst_step,
				unsigned src_step)
{
	int *dist = malloc(t->nnodes * sizeof(*dist));
	unsigned lid, checked = 0, bad = 0;
	uint32_t src;

	for (lid = 1; lid <= r->max_lid; lid += dst_step) {
		uint32_t dst = r->lid_node[lid];
		uint32_t dsw;

		if (t->nodes[dst].type != IBEMU_NODE_HCA)
			continue;
		dsw = t->nodes[dst].ports[r->lid_port[lid]].peer_node;
		switch_dist(t, dsw, dist);
		for (src = 0; src < t->nnodes; src += src_step) {
			uint32_t ssw;

			if (t->nodes[src].type != IBEMU_NODE_HCA || src == dst)
				continue;
			ssw = t->nodes[src].ports[1].peer_node;
			if (path_switches(t, r, src, 1, (uint16_t)lid) !=
			    dist[ssw] + 1)
				bad++;
			checked++;
		}
	}
	T_EQ_INT(bad, 0);
	free(dist);
	return checked;
}

/* LIDs of 'kind' whose entry in switch sw's LFT is 'port'. */
static unsigned lids_on_port(const struct ibemu_topo *t,
			     const struct ibemu_routes *r, uint32_t sw,
			     unsigned port, enum ibemu_node_type kind)
{
	unsigned lid, n = 0;

	for (lid = 1; lid <= r->max_lid; lid++)
		n += r->lft[sw][lid] == port &&
		     t->nodes[r->lid_node[lid]].type == kind;
	return n;
}

/*
 * Nodes in declaration order, a switch one LID and an HCA one per port,
 * cabled or not; a switch's LID on all its ports.
 */
static void test_lid_layout(void)
{
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	uint32_t a, s1, b, s2;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	a = add(t, IBEMU_NODE_HCA, "a", 2);
	s1 = add(t, IBEMU_NODE_SWITCH, "s1", 4);
	b = add(t, IBEMU_NODE_HCA, "b", 1);
	s2 = add(t, IBEMU_NODE_SWITCH, "s2", 2);
	cable(t, a, 1, s1, 2);
	cable(t, b, 1, s2, 1);
	r = minhop(t);
	T_EQ_INT(r->max_lid, 5);
	T_EQ_INT(ibemu_routes_lid(r, a, 1), 1);
	T_EQ_INT(ibemu_routes_lid(r, a, 2), 2); /* not cabled: a LID still */
	T_EQ_INT(ibemu_routes_lid(r, a, 0), 0);
	T_EQ_INT(ibemu_routes_lid(r, a, 3), 0);
	T_EQ_INT(ibemu_routes_lid(r, s1, 0), 3);
	T_EQ_INT(ibemu_routes_lid(r, s1, 4), 3);
	T_EQ_INT(ibemu_routes_lid(r, s1, 5), 0);
	T_EQ_INT(ibemu_routes_lid(r, b, 1), 4);
	T_EQ_INT(ibemu_routes_lid(r, s2, 0), 5);
	T_EQ_INT(ibemu_routes_lid(r, s2, 2), 5);
	T_EQ_INT(ibemu_routes_lid(r, s2, 3), 0);
	T_EQ_INT(ibemu_routes_lid(r, 4, 0), 0);
	T_EQ_INT(r->port_base[a], 0);
	T_EQ_INT(r->port_base[s1], 3);
	T_EQ_INT(r->port_base[b], 8);
	T_EQ_INT(r->port_base[s2], 10);
	T_EQ_INT(r->nslots, 13);
	T_EQ_INT(r->lid_node[0], IBEMU_NONE);
	T_EQ_INT(r->lid_node[1], a);
	T_EQ_INT(r->lid_port[1], 1);
	T_EQ_INT(r->lid_node[2], a);
	T_EQ_INT(r->lid_port[2], 2);
	T_EQ_INT(r->lid_node[3], s1);
	T_EQ_INT(r->lid_port[3], 0);
	T_EQ_INT(r->lid_node[4], b);
	T_EQ_INT(r->lid_port[4], 1);
	T_EQ_INT(r->lid_node[5], s2);
	T_EQ_INT(r->lid_port[5], 0);
	T_TRUE(r->lft[a] == NULL && r->lft[b] == NULL);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/* One switch: each HCA's LID leaves by the port cabled to it. */
static void test_single_switch(void)
{
	static const uint8_t want[] = {255, 0, 3, 1, 8, 255};
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	uint32_t sw, h1, h2, h3;
	unsigned lid;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	sw = add(t, IBEMU_NODE_SWITCH, "sw", 8);
	h1 = add(t, IBEMU_NODE_HCA, "h1", 1);
	h2 = add(t, IBEMU_NODE_HCA, "h2", 1);
	h3 = add(t, IBEMU_NODE_HCA, "h3", 2);
	cable(t, h1, 1, sw, 3);
	cable(t, h2, 1, sw, 1);
	cable(t, sw, 8, h3, 1); /* h3 port 2 (LID 5) is not cabled */
	r = minhop(t);
	T_EQ_INT(r->max_lid, 5);
	for (lid = 0; lid <= r->max_lid; lid++)
		T_EQ_INT(r->lft[sw][lid], want[lid]);
	T_EQ_INT(path_switches(t, r, h1, 1, 4), 1);
	T_EQ_INT(path_switches(t, r, h3, 1, 3), 1);
	T_EQ_INT(path_switches(t, r, h2, 1, 1), 1);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * s1 and s2 joined on ports 7 and 8, four hosts on ports 1..4 of each.
 * LIDs: s1 1, s2 2, s1's hosts 3..6, s2's hosts 7..10. Each switch first
 * routes the other's LID (a switch LID) on port 7, the lower of two idle
 * ports; the remote hosts then go to port 8 (no HCA LID on either port,
 * fewer switch LIDs), 7, 8, 7: the two cables alternate.
 */
static void test_parallel_links(void)
{
	static const uint8_t want_s1[] = {255, 0, 7, 1, 2, 3, 4, 8, 7, 8, 7};
	static const uint8_t want_s2[] = {255, 7, 0, 8, 7, 8, 7, 1, 2, 3, 4};
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	uint32_t s1, s2, h[8];
	unsigned i, lid;
	char name[8];

	T_EQ_INT(ibemu_topo_create(&t), 0);
	s1 = add(t, IBEMU_NODE_SWITCH, "s1", 8);
	s2 = add(t, IBEMU_NODE_SWITCH, "s2", 8);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "h%u", i + 1);
		h[i] = add(t, IBEMU_NODE_HCA, name, 1);
		cable(t, i < 4 ? s1 : s2, i % 4 + 1, h[i], 1);
	}
	cable(t, s1, 7, s2, 7);
	cable(t, s1, 8, s2, 8);
	r = minhop(t);
	T_EQ_INT(r->max_lid, 10);
	for (lid = 0; lid <= r->max_lid; lid++) {
		T_EQ_INT(r->lft[s1][lid], want_s1[lid]);
		T_EQ_INT(r->lft[s2][lid], want_s2[lid]);
	}
	T_EQ_INT(path_switches(t, r, h[0], 1, 10), 2);
	T_EQ_INT(path_switches(t, r, h[7], 1, 3), 2);
	T_EQ_INT(path_switches(t, r, h[7], 1, 1), 2);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * fat-tree-2l, radix 8, 32 hosts: leaf01..08 (LIDs 1..8) with four
 * hosts each on ports 1..4 and one cable to each of 4 spines (LIDs 9..12)
 * on ports 5..8; hosts hold LIDs 13..44. A path crosses 1 switch within a
 * leaf and 3 otherwise.
 */
static void test_fat_tree_2l(void)
{
	static const char *const kv[] = {"radix", "8", "hosts", "32", NULL};
	const unsigned leaves = 8, spines = 4, per_leaf = 4, hosts = 32;
	struct ibemu_topo *t = ibemu_test_gen("fat-tree-2l", kv);
	struct ibemu_routes *r = minhop(t);
	uint32_t src, dst, l, s;
	unsigned p, bad = 0;

	T_EQ_INT(r->max_lid, leaves + spines + hosts);
	for (src = 0; src < t->nnodes; src++) {
		if (t->nodes[src].type != IBEMU_NODE_HCA)
			continue;
		for (dst = 0; dst < t->nnodes; dst++) {
			uint16_t lid = ibemu_routes_lid(r, dst, 1);
			int same, want;

			if (t->nodes[dst].type != IBEMU_NODE_HCA)
				continue;
			same = t->nodes[src].ports[1].peer_node ==
			       t->nodes[dst].ports[1].peer_node;
			want = same ? 1 : 3;
			if (src == dst)
				want = 1; /* out to the leaf and back */
			bad += path_switches(t, r, src, 1, lid) != want;
		}
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(check_min_paths(t, r, 1, 1), hosts * (hosts - 1));
	/*
	 * Each leaf spreads the (8 - 1) * 4 = 28 remote hosts evenly: 7 on
	 * each uplink. Its switch LIDs come first (LIDs 1..12): the 7 other
	 * leaves go to ports 5, 6, 7, 8, 5, 6, 7 and each spine to the one
	 * port cabled to it, hence 3, 3, 3 and 2 switch LIDs.
	 */
	for (l = 0; l < leaves; l++) {
		for (p = 1; p <= per_leaf; p++)
			T_EQ_INT(lids_on_port(t, r, l, p, IBEMU_NODE_HCA), 1);
		for (p = per_leaf + 1; p <= 8; p++) {
			T_EQ_INT(lids_on_port(t, r, l, p, IBEMU_NODE_HCA),
				 (leaves - 1) * per_leaf / spines);
			T_EQ_INT(lids_on_port(t, r, l, p, IBEMU_NODE_SWITCH),
				 p == 8 ? 2 : 3);
		}
		T_EQ_INT(r->lft[l][l + 1], 0);
	}
	/*
	 * A spine reaches each leaf, and its 4 hosts, by the one cable on
	 * port leaf + 1. The 3 other spines, two hops away through any
	 * leaf, come after the leaves' LIDs and go to ports 1, 2 and 3.
	 */
	for (s = leaves; s < leaves + spines; s++)
		for (p = 1; p <= 8; p++) {
			T_EQ_INT(lids_on_port(t, r, s, p, IBEMU_NODE_HCA),
				 per_leaf);
			T_EQ_INT(lids_on_port(t, r, s, p, IBEMU_NODE_SWITCH),
				 p <= spines - 1 ? 2 : 1);
		}
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/* Torus 4x4: a path crosses 1 + |dx| + |dy| switches, both taken mod 4. */
static void test_torus(void)
{
	static const char *const kv[] = {"dims", "4x4", NULL};
	struct ibemu_topo *t = ibemu_test_gen("torus", kv);
	struct ibemu_routes *r = minhop(t);
	uint32_t src, dst;
	unsigned bad = 0, paths = 0;

	T_EQ_INT(r->max_lid, 32);
	for (src = 0; src < t->nnodes; src++) {
		const struct ibemu_topo_port *sp = &t->nodes[src].ports[1];
		unsigned sx, sy;

		if (t->nodes[src].type != IBEMU_NODE_HCA)
			continue;
		T_EQ_INT(sscanf(t->nodes[sp->peer_node].name, "sw-%u-%u", &sx,
				&sy),
			 2);
		for (dst = 0; dst < t->nnodes; dst++) {
			const struct ibemu_topo_port *dp;
			unsigned dx, dy, want;

			if (t->nodes[dst].type != IBEMU_NODE_HCA || dst == src)
				continue;
			dp = &t->nodes[dst].ports[1];
			T_EQ_INT(sscanf(t->nodes[dp->peer_node].name,
					"sw-%u-%u", &dx, &dy),
				 2);
			dx = (dx + 4 - sx) % 4;
			dy = (dy + 4 - sy) % 4;
			want = 1 + (dx > 2 ? 4 - dx : dx) +
			       (dy > 2 ? 4 - dy : dy);
			bad += path_switches(t, r, src, 1,
					     ibemu_routes_lid(r, dst, 1)) !=
			       (int)want;
			paths++;
		}
	}
	T_EQ_INT(paths, 16 * 15);
	T_EQ_INT(bad, 0);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * Two islands (s1 with h1 and e, s2 with h2), HCAs c and d cabled back to
 * back, and e's second port not cabled. LIDs: s1 1, s2 2, h1 3, h2 4,
 * c 5, d 6, e 7 and 8. Nothing crosses between islands, and no switch
 * routes to c, d or e's second port.
 */
static void test_unreachable(void)
{
	static const uint8_t want_s1[] = {255, 0,   255, 1,  255,
					  255, 255, 2,	 255};
	static const uint8_t want_s2[] = {255, 255, 0,	 255, 1,
					  255, 255, 255, 255};
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	uint32_t s1, s2, h1, h2, c, d, e;
	unsigned lid;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	s1 = add(t, IBEMU_NODE_SWITCH, "s1", 4);
	s2 = add(t, IBEMU_NODE_SWITCH, "s2", 4);
	h1 = add(t, IBEMU_NODE_HCA, "h1", 1);
	h2 = add(t, IBEMU_NODE_HCA, "h2", 1);
	c = add(t, IBEMU_NODE_HCA, "c", 1);
	d = add(t, IBEMU_NODE_HCA, "d", 1);
	e = add(t, IBEMU_NODE_HCA, "e", 2);
	cable(t, s1, 1, h1, 1);
	cable(t, s2, 1, h2, 1);
	cable(t, c, 1, d, 1);
	cable(t, e, 1, s1, 2);
	r = minhop(t);
	T_EQ_INT(r->max_lid, 8);
	for (lid = 0; lid <= r->max_lid; lid++) {
		T_EQ_INT(r->lft[s1][lid], want_s1[lid]);
		T_EQ_INT(r->lft[s2][lid], want_s2[lid]);
	}
	T_EQ_INT(path_switches(t, r, h1, 1, 4), -1);
	T_EQ_INT(path_switches(t, r, h1, 1, 7), 1);
	T_EQ_INT(path_switches(t, r, e, 1, 8), -1);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * 193 HCAs of 254 ports and 129 switches need 49151 LIDs, the last
 * unicast one (IBA 4.1.3: 0xbfff); one switch more does not fit.
 */
static void test_lids_run_out(void)
{
	struct ibemu_topo *t;
	struct ibemu_graph *g;
	struct ibemu_routes *r = NULL;
	char name[16];
	unsigned i;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	for (i = 0; i < 193; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		add(t, IBEMU_NODE_HCA, name, IBEMU_MAX_PORTS);
	}
	for (i = 0; i < 129; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		add(t, IBEMU_NODE_SWITCH, name, 1);
	}
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	T_EQ_INT(r->max_lid, 0xbfff);
	T_EQ_INT(ibemu_routes_lid(r, t->nnodes - 1, 0), 0xbfff);
	T_EQ_INT(r->lft[t->nnodes - 1][0xbfff], 0);
	ibemu_routes_destroy(r);
	add(t, IBEMU_NODE_SWITCH, "one-more", 1);
	r = NULL;
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 -ERANGE);
	T_TRUE(r == NULL);
	T_EQ_INT(ibemu_graph_from_topo(t, &g), 0);
	T_EQ_INT(ibemu_routes_create(g, &r), -ERANGE);
	ibemu_graph_destroy(g);
	ibemu_topo_destroy(t);
}

/*
 * A fat-tree-3l of radix 36 with 10000 hosts (over 11000 LIDs): every
 * switch routes every HCA LID, and sampled paths are minimal.
 */
static void test_large_fat_tree(void)
{
	static const char *const kv[] = {"radix", "36", "hosts", "10000", NULL};
	struct ibemu_topo *t = ibemu_test_gen("fat-tree-3l", kv);
	struct ibemu_routes *r = minhop(t);
	unsigned lid, missing = 0;
	uint32_t n;

	T_TRUE(r->max_lid > 10000);
	for (n = 0; n < t->nnodes; n++) {
		if (!r->lft[n])
			continue;
		for (lid = 1; lid <= r->max_lid; lid++)
			missing += r->lft[n][lid] == IBEMU_LFT_NO_ROUTE;
	}
	T_EQ_INT(missing, 0);
	T_TRUE(check_min_paths(t, r, 211, 7) > 50000);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

void ibemu_test_register_routing_minhop(void)
{
	static const struct ibemu_test tests[] = {
		{"lid_layout", test_lid_layout},
		{"single_switch", test_single_switch},
		{"parallel_links", test_parallel_links},
		{"fat_tree_2l", test_fat_tree_2l},
		{"torus", test_torus},
		{"unreachable", test_unreachable},
		{"lids_run_out", test_lids_run_out},
		{"large_fat_tree", test_large_fat_tree},
		{NULL, NULL},
	};

	ibemu_test_add_suite("routing.minhop", tests);
}

// SPDX-License-Identifier: MIT
/*
 * Unit tests of the up/down routes (routing/): LFTs and paths worked out by hand
 * on rings and a torus, the same hop counts as min-hop on fat trees, routes
 * that never turn from down to up and a channel dependency graph without a
 * cycle (checked against ranks the test derives itself), one root per
 * island, and traffic that no longer deadlocks on a torus or a dragonfly.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine.h"
#include "model.h"
#include "gen.h"
#include "routing.h"
#include "topo.h"
#include "traffic.h"
#include "yaml.h"
#include "unit.h"

#define MAX_PATH 64

static struct ibemu_routes *updown(const struct ibemu_topo *t)
{
	struct ibemu_routes *r = NULL;

	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("updown"), t, &r),
		 0);
	return r;
}

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

static uint32_t node(const struct ibemu_topo *t, const char *name)
{
	uint32_t i;

	for (i = 0; i < t->nnodes; i++)
		if (!strcmp(t->nodes[i].name, name))
			return i;
	T_TRUE(!"no such node");
	return IBEMU_NONE;
}

static int is_switch(const struct ibemu_topo *t, uint32_t n)
{
	return n != IBEMU_NONE && t->nodes[n].type == IBEMU_NODE_SWITCH;
}

/*
 * Follows the LFTs from switch 'sw' to 'lid', storing the switches crossed
 * in sw_path[] and the output port taken at each in out[] (0 at the switch
 * that delivers to itself). Returns their number, or -1 if the packet is
 * dropped, loops, or reaches the wrong node or port.
 */
static int walk(const struct ibemu_topo *t, const struct ibemu_routes *r,
		uint32_t sw, uint16_t lid, uint32_t *sw_path, uint8_t *out)
{
	uint32_t n = sw;
	unsigned port = 0;
	int len = 0;

	while (n != IBEMU_NONE && len < MAX_PATH) {
		uint8_t o;

		if (!is_switch(t, n))
			return n == r->lid_node[lid] && port == r->lid_port[lid]
				       ? len
				       : -1;
		o = r->lft[n][lid];
		sw_path[len] = n;
		out[len++] = o;
		if (o == 0)
			return n == r->lid_node[lid] ? len : -1;
		if (o > t->nodes[n].nports)
			return -1;
		port = t->nodes[n].ports[o].peer_port;
		n = t->nodes[n].ports[o].peer_node;
	}
	return -1;
}

/* As walk(), from HCA port src:1 and keeping only the switch count. */
static int host_path(const struct ibemu_topo *t, const struct ibemu_routes *r,
		     uint32_t src, uint16_t lid)
{
	uint32_t path[MAX_PATH];
	uint8_t out[MAX_PATH];

	return walk(t, r, t->nodes[src].ports[1].peer_node, lid, path, out);
}

/* Hops from switch 'from' to every switch (-1: not reached). */
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

			if (!is_switch(t, peer) || dist[peer] >= 0)
				continue;
			dist[peer] = d + 1;
			queue[tail++] = peer;
		}
	}
	free(queue);
}

/*
 * The ranks of the switches, derived here from the rule in
 * routing/README.md and not from the code under test: in each island, the
 * root is the switch whose farthest switch is nearest (lowest index on a
 * tie), and a switch's rank is its hop count from the root. Writes the
 * root of each switch's island to root[] when not NULL.
 */
static void ranks(const struct ibemu_topo *t, int *rank, uint32_t *root)
{
	int *dist = malloc(t->nnodes * sizeof(*dist));
	int *ecc = malloc(t->nnodes * sizeof(*ecc));
	uint32_t s, o;

	for (s = 0; s < t->nnodes; s++) {
		ecc[s] = -1;
		if (!is_switch(t, s))
			continue;
		switch_dist(t, s, dist);
		for (o = 0; o < t->nnodes; o++)
			if (dist[o] > ecc[s])
				ecc[s] = dist[o];
	}
	for (s = 0; s < t->nnodes; s++) {
		uint32_t best = IBEMU_NONE;

		rank[s] = -1;
		if (!is_switch(t, s))
			continue;
		switch_dist(t, s, dist);
		/* Candidates in index order: strictly less keeps the lowest. */
		for (o = 0; o < t->nnodes; o++)
			if (dist[o] >= 0 &&
			    (best == IBEMU_NONE || ecc[o] < ecc[best]))
				best = o;
		switch_dist(t, best, dist);
		rank[s] = dist[s];
		if (root)
			root[s] = best;
	}
	free(ecc);
	free(dist);
}

/* Section "Up/down" of routing/README.md. */
static int is_up(const int *rank, uint32_t a, uint32_t b)
{
	return rank[b] < rank[a] || (rank[b] == rank[a] && b < a);
}

/* A channel: the cable leaving switch 'node' by 'port'. */
static uint32_t channel(uint32_t node, uint8_t port)
{
	return node * 256 + port;
}

struct cdg {
	uint32_t nch;	  /* channels: nnodes * 256 */
	uint32_t (*e)[2]; /* edges (from, to), sorted and deduplicated */
	size_t ne, cap;
	uint32_t *first; /* edges of channel c: e[first[c]] .. first[c + 1] */
	uint8_t *color;	 /* DFS: 0 new, 1 on the stack, 2 done */
};

static void cdg_add(struct cdg *g, uint32_t from, uint32_t to)
{
	if (g->ne == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->e = realloc(g->e, g->cap * sizeof(*g->e));
	}
	g->e[g->ne][0] = from;
	g->e[g->ne][1] = to;
	g->ne++;
}

static int cmp_edge(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Whether a cycle can be reached from channel c (recursive DFS). */
static int cdg_cycle_from(struct cdg *g, uint32_t c)
{
	uint32_t i;

	if (g->color[c] == 1)
		return 1;
	if (g->color[c] == 2)
		return 0;
	g->color[c] = 1;
	for (i = g->first[c]; i < g->first[c + 1]; i++)
		if (cdg_cycle_from(g, g->e[i][1]))
			return 1;
	g->color[c] = 2;
	return 0;
}

static int cdg_has_cycle(struct cdg *g)
{
	size_t i, n = 0;
	uint32_t c;
	int cycle = 0;

	qsort(g->e, g->ne, sizeof(*g->e), cmp_edge);
	for (i = 0; i < g->ne; i++)
		if (!n || cmp_edge(g->e[i], g->e[n - 1]))
			memcpy(g->e[n++], g->e[i], sizeof(*g->e));
	g->ne = n;
	g->first = calloc(g->nch + 1, sizeof(*g->first));
	g->color = calloc(g->nch, 1);
	for (i = 0; i < g->ne; i++)
		g->first[g->e[i][0] + 1]++;
	for (c = 0; c < g->nch; c++)
		g->first[c + 1] += g->first[c];
	for (c = 0; c < g->nch && !cycle; c++)
		cycle = cdg_cycle_from(g, c);
	return cycle;
}

static void cdg_fini(struct cdg *g)
{
	free(g->e);
	free(g->first);
	free(g->color);
}

struct check {
	unsigned routes;    /* switch to delivered LID: all reached */
	unsigned unrouted;  /* of those, dropped or looping */
	unsigned down_up;   /* of those, with a down move then an up move */
	unsigned longer;    /* of those, more hops than the fewest */
	unsigned hops_over; /* the extra hops, summed */
	int cycle;	    /* the channel dependency graph has a cycle */
};

/*
 * Follows every switch's route to every LID that a switch of its island
 * delivers and checks it against the ranks of ranks(): delivered, up moves
 * then down moves only; builds the channel dependency graph of all of them
 * (an edge from each cable taken to the next) and looks for a cycle.
 */
static void check_all(const struct ibemu_topo *t, const struct ibemu_routes *r,
		      struct check *c)
{
	int *rank = malloc(t->nnodes * sizeof(*rank));
	int *dist = malloc(t->nnodes * sizeof(*dist));
	uint32_t root[4096], path[MAX_PATH];
	struct cdg g = {0};
	uint8_t out[MAX_PATH];
	uint32_t s;
	unsigned lid;
	int len, i;

	T_TRUE(t->nnodes <= IBEMU_ARRAY_SIZE(root));
	memset(c, 0, sizeof(*c));
	ranks(t, rank, root);
	g.nch = t->nnodes * 256;
	for (lid = 1; lid <= r->max_lid; lid++) {
		uint32_t dn = r->lid_node[lid], dsw = dn;

		if (!is_switch(t, dn)) {
			dsw = t->nodes[dn].ports[r->lid_port[lid]].peer_node;
			if (!is_switch(t, dsw))
				continue;
		}
		switch_dist(t, dsw, dist);
		for (s = 0; s < t->nnodes; s++) {
			int went_down = 0;

			if (!is_switch(t, s) || root[s] != root[dsw])
				continue;
			c->routes++;
			len = walk(t, r, s, (uint16_t)lid, path, out);
			if (len < 0) {
				c->unrouted++;
				continue;
			}
			if (len - 1 > dist[s]) {
				c->longer++;
				c->hops_over += len - 1 - dist[s];
			}
			for (i = 0; i + 1 < len; i++) {
				int up = is_up(rank, path[i], path[i + 1]);

				if (up && went_down) {
					c->down_up++;
					break;
				}
				went_down |= !up;
				if (i + 2 < len)
					cdg_add(&g, channel(path[i], out[i]),
						channel(path[i + 1],
							out[i + 1]));
			}
		}
	}
	c->cycle = cdg_has_cycle(&g);
	cdg_fini(&g);
	free(dist);
	free(rank);
}

/* Every LFT of a and b, all LIDs. */
static int same_lfts(const struct ibemu_topo *t, const struct ibemu_routes *a,
		     const struct ibemu_routes *b)
{
	uint32_t n;

	if (a->max_lid != b->max_lid)
		return 0;
	for (n = 0; n < t->nnodes; n++)
		if (is_switch(t, n) &&
		    memcmp(a->lft[n], b->lft[n], a->max_lid + 1u))
			return 0;
	return 1;
}

/*
 * Ring of 4 (sw01..sw04, LIDs 1..4; hca01..04 on port 1, LIDs 5..8; port
 * 3 of each switch to port 2 of the next). Every switch is 2 hops from
 * the farthest, so sw01 is the root; ranks 0, 1, 2, 1. Order (rank,
 * index): sw01 sw02 sw04 sw03; a move towards an earlier one is up. Down
 * moves: sw01 -> sw02, sw01 -> sw04, sw02 -> sw03, sw04 -> sw03. So sw02
 * reaches sw04 through sw01 (up, down), never through sw03 (down, up).
 *
 * LID 1: sw02 and sw04 go up to sw01 (ports 2, 3); sw03 has two ways up
 * of 2 hops, ports 2 and 3: idle, port 2. LID 2: sw01 down port 3, sw03
 * up port 2, sw04 up to sw01 (port 3; through sw03 would be down, up).
 * LID 3: sw01 has two ways down, port 2 (sw04) carries no switch LID,
 * port 3 one: port 2; sw02, sw04 down ports 3, 2. LID 4: sw01 port 2,
 * sw02 up port 2, sw03 up port 3. Hosts 5..8 follow their switch, except
 * where the counts now differ: LID 5 at sw03 (port 2 has 2 switch LIDs,
 * port 3 one: port 3) and LID 7 at sw01 (port 3 has an HCA LID: port 2).
 */
static void test_ring4(void)
{
	static const char *const kv[] = {"switches", "4", NULL};
	static const uint8_t want[4][9] = {
		{255, 0, 3, 2, 2, 1, 3, 2, 2},
		{255, 2, 0, 3, 2, 2, 1, 3, 2},
		{255, 2, 2, 0, 3, 3, 2, 1, 3},
		{255, 3, 3, 2, 0, 3, 3, 2, 1},
	};
	struct ibemu_topo *t = ibemu_test_gen("ring", kv);
	struct ibemu_routes *r = updown(t);
	struct check c;
	unsigned s, lid;

	T_EQ_INT(r->max_lid, 8);
	for (s = 0; s < 4; s++)
		for (lid = 0; lid <= 8; lid++)
			T_EQ_INT(r->lft[s][lid], want[s][lid]);
	T_EQ_INT(host_path(t, r, node(t, "hca02"), 8), 3);
	check_all(t, r, &c);
	T_EQ_INT(c.routes, 4 * 8);
	T_EQ_INT(c.unrouted, 0);
	T_EQ_INT(c.down_up, 0);
	T_EQ_INT(c.longer, 0);
	T_EQ_INT(c.cycle, 0);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * Ring of 6, root sw01: ranks 0, 1, 2, 3, 2, 1. sw03 and sw05 are 2 hops
 * apart through sw04, but sw04 is the bottom of the ring (both moves
 * towards it are down): the route goes round the other way, 4 hops, and
 * so does the reverse. Every other route is as short as min-hop's. Min-hop
 * routes on the same ring do form a cycle of channel dependencies.
 */
static void test_ring6(void)
{
	static const char *const kv[] = {"switches", "6", NULL};
	struct ibemu_topo *t = ibemu_test_gen("ring", kv);
	struct ibemu_routes *r = updown(t), *m = NULL;
	uint32_t path[MAX_PATH], sw3 = node(t, "sw03"), sw5 = node(t, "sw05");
	uint8_t out[MAX_PATH];
	struct check c;

	T_EQ_INT(walk(t, r, sw3, ibemu_routes_lid(r, node(t, "hca05"), 1), path,
		      out),
		 5);
	T_EQ_STR(t->nodes[path[1]].name, "sw02");
	T_EQ_STR(t->nodes[path[2]].name, "sw01");
	T_EQ_STR(t->nodes[path[3]].name, "sw06");
	T_EQ_STR(t->nodes[path[4]].name, "sw05");
	T_EQ_INT(out[0], 2);
	T_EQ_INT(out[4], 1);
	T_EQ_INT(walk(t, r, sw5, ibemu_routes_lid(r, sw3, 0), path, out), 5);
	check_all(t, r, &c);
	T_EQ_INT(c.routes, 6 * 12);
	T_EQ_INT(c.unrouted, 0);
	T_EQ_INT(c.down_up, 0);
	/* sw03 and sw05 to the other's LID and host: 4 routes, 2 hops over. */
	T_EQ_INT(c.longer, 4);
	T_EQ_INT(c.hops_over, 8);
	T_EQ_INT(c.cycle, 0);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &m),
		 0);
	check_all(t, m, &c);
	T_EQ_INT(c.longer, 0);
	T_TRUE(c.down_up > 0);
	T_EQ_INT(c.cycle, 1);
	ibemu_routes_destroy(m);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * Torus 4x4, one host per switch: sw-X-Y is switch 4X + Y (LID 4X + Y + 1)
 * and its host has LID 4X + Y + 17; ports 2/3 go to x - 1 / x + 1 and 4/5
 * to y - 1 / y + 1, wrapping. Every switch is 4 hops from the farthest, so
 * sw-0-0 is the root and a rank is the torus distance from it. Ranks of
 * neighbours always differ by one, so up means towards sw-0-0, and every
 * route still has the fewest hops.
 */
static void test_torus(void)
{
	static const char *const kv[] = {"dims", "4x4", NULL};
	struct ibemu_topo *t = ibemu_test_gen("torus", kv);
	struct ibemu_routes *r = updown(t), *m = NULL;
	uint32_t path[MAX_PATH];
	uint8_t out[MAX_PATH];
	struct check c;
	int rank[32];

	T_EQ_INT(t->nnodes, 32);
	ranks(t, rank, NULL);
	T_EQ_INT(rank[node(t, "sw-0-0")], 0);
	T_EQ_INT(rank[node(t, "sw-2-2")], 4);
	T_EQ_INT(rank[node(t, "sw-3-1")], 2);
	/*
	 * sw-0-1 to sw-0-3 (rank 1 both): through sw-0-2 would go down to
	 * rank 2 and back up, so the one legal 2-hop path is through the
	 * root: y - 1 (port 4) twice, the second wrapping to y = 3.
	 */
	T_EQ_INT(walk(t, r, node(t, "sw-0-1"), 17 + 3, path, out), 3);
	T_EQ_STR(t->nodes[path[1]].name, "sw-0-0");
	T_EQ_INT(out[0], 4);
	T_EQ_INT(out[1], 4);
	T_EQ_INT(out[2], 1);
	T_EQ_INT(walk(t, r, node(t, "sw-0-3"), 17 + 1, path, out), 3);
	T_EQ_STR(t->nodes[path[1]].name, "sw-0-0");
	T_EQ_INT(out[0], 5);
	T_EQ_INT(out[1], 5);
	/* sw-2-1 to sw-2-3 (rank 3): up to sw-2-0, not down to sw-2-2. */
	T_EQ_INT(walk(t, r, node(t, "sw-2-1"), 17 + 11, path, out), 3);
	T_EQ_STR(t->nodes[path[1]].name, "sw-2-0");
	T_EQ_INT(out[0], 4);
	T_EQ_INT(out[1], 4);
	/* From the bottom, sw-2-2, to the root: 4 up moves, then port 1. */
	T_EQ_INT(walk(t, r, node(t, "sw-2-2"), 17, path, out), 5);
	T_EQ_STR(t->nodes[path[4]].name, "sw-0-0");
	T_EQ_INT(out[4], 1);
	check_all(t, r, &c);
	T_EQ_INT(c.routes, 16 * 32);
	T_EQ_INT(c.unrouted, 0);
	T_EQ_INT(c.down_up, 0);
	T_EQ_INT(c.longer, 0);
	T_EQ_INT(c.cycle, 0);
	/* Min-hop's routes on the same torus: a cycle, the deadlock. */
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &m),
		 0);
	check_all(t, m, &c);
	T_EQ_INT(c.cycle, 1);
	ibemu_routes_destroy(m);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/* Dragonfly p 2, a 4, h 2: 9 groups of 4 routers, 72 hosts. */
static void test_dragonfly(void)
{
	static const char *const kv[] = {"p", "2", "a", "4", "h", "2", NULL};
	struct ibemu_topo *t = ibemu_test_gen("dragonfly", kv);
	struct ibemu_routes *r = updown(t);
	struct check c;
	int rank[108];
	uint32_t root[108];

	T_EQ_INT(t->nnodes, 36 + 72);
	ranks(t, rank, root);
	/* Every router is 3 hops (local, global, local) from the farthest. */
	T_EQ_STR(t->nodes[root[node(t, "g09-r04")]].name, "g01-r01");
	check_all(t, r, &c);
	T_EQ_INT(c.routes, 36 * (36 + 72));
	T_EQ_INT(c.unrouted, 0);
	T_EQ_INT(c.down_up, 0);
	T_EQ_INT(c.cycle, 0);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * fat-tree-2l, radix 8, 32 hosts: leaf01..08 (nodes and LIDs 1..8 minus
 * one for nodes), spine01..04 (LIDs 9..12), leaf port 4 + s to spine s,
 * spine port l to leaf l. Leaves and spines are all 2 hops from the
 * farthest switch, so the root is leaf01 (the lowest index), not a spine:
 * ranks are leaf01 0, spines 1, other leaves 2. Every host route still
 * goes up to a spine and down, the same candidates as min-hop's, so the
 * leaves' LFTs are min-hop's exactly. Spines differ only for the other
 * spines' LIDs: through any leaf but leaf01 that would be down then up,
 * so all of them leave by port 1, where min-hop spreads them.
 */
static void test_fat_tree_2l(void)
{
	static const char *const kv[] = {"radix", "8", "hosts", "32", NULL};
	struct ibemu_topo *t = ibemu_test_gen("fat-tree-2l", kv);
	struct ibemu_routes *r = updown(t), *m = NULL;
	uint32_t src, dst, s, l;
	unsigned lid, bad = 0, pairs = 0;
	struct check c;
	int rank[44];

	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &m),
		 0);
	T_EQ_INT(r->max_lid, 44);
	ranks(t, rank, NULL);
	T_EQ_INT(rank[node(t, "leaf01")], 0);
	T_EQ_INT(rank[node(t, "spine03")], 1);
	T_EQ_INT(rank[node(t, "leaf05")], 2);
	for (src = 0; src < t->nnodes; src++) {
		if (is_switch(t, src))
			continue;
		for (dst = 0; dst < t->nnodes; dst++) {
			uint16_t dl = ibemu_routes_lid(r, dst, 1);

			if (is_switch(t, dst))
				continue;
			bad += host_path(t, r, src, dl) !=
			       host_path(t, m, src, dl);
			pairs++;
		}
	}
	T_EQ_INT(pairs, 32 * 32);
	T_EQ_INT(bad, 0);
	for (l = 0; l < 8; l++)
		T_EQ_INT(memcmp(r->lft[l], m->lft[l], 45), 0);
	for (s = 8; s < 12; s++)
		for (lid = 0; lid <= 44; lid++) {
			if (lid >= 9 && lid <= 12 && lid != s + 1)
				T_EQ_INT(r->lft[s][lid], 1);
			else
				T_EQ_INT(r->lft[s][lid], m->lft[s][lid]);
		}
	check_all(t, r, &c);
	T_EQ_INT(c.routes, 12 * 44);
	T_EQ_INT(c.unrouted, 0);
	T_EQ_INT(c.down_up, 0);
	T_EQ_INT(c.longer, 0);
	T_EQ_INT(c.cycle, 0);
	ibemu_routes_destroy(m);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * Two islands, each a square of switches with a host on each: a1..a4 and
 * b1..b4 (a1 - a2 - a3 - a4 - a1, likewise b), declared b4, a3, b1, a1,
 * a2, b2, a4, b3, so the roots are a3 and b4 (lowest index in each). An
 * HCA z is cabled to nothing. A corner goes to the other corner next to
 * it through the root; no switch routes to the other island or to z.
 */
static void test_islands(void)
{
	static const char *const order[] = {"b4", "a3", "b1", "a1",
					    "a2", "b2", "a4", "b3"};
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	uint32_t sw[8], path[MAX_PATH], root[20], z, i;
	uint8_t out[MAX_PATH];
	struct check c;
	char name[8];
	int rank[20];

	T_EQ_INT(ibemu_topo_create(&t), 0);
	for (i = 0; i < 8; i++)
		sw[i] = add(t, IBEMU_NODE_SWITCH, order[i], 4);
	for (i = 0; i < 8; i++) {
		uint32_t h;

		snprintf(name, sizeof(name), "h-%s", order[i]);
		h = add(t, IBEMU_NODE_HCA, name, 1);
		cable(t, sw[i], 1, h, 1);
	}
	z = add(t, IBEMU_NODE_HCA, "z", 1);
	for (i = 0; i < 4; i++) {
		char a[4], b[4];

		snprintf(a, sizeof(a), "a%u", i + 1);
		snprintf(b, sizeof(b), "a%u", (i + 1) % 4 + 1);
		cable(t, node(t, a), 3, node(t, b), 2);
		a[0] = b[0] = 'b';
		cable(t, node(t, a), 3, node(t, b), 2);
	}
	r = updown(t);
	T_EQ_INT(r->max_lid, 17);
	ranks(t, rank, root);
	T_EQ_STR(t->nodes[root[node(t, "a1")]].name, "a3");
	T_EQ_STR(t->nodes[root[node(t, "b2")]].name, "b4");
	/* a2 to a4: the root a3 (index 1) is between them, not a1. */
	T_EQ_INT(walk(t, r, node(t, "a2"),
		      ibemu_routes_lid(r, node(t, "a4"), 0), path, out),
		 3);
	T_EQ_STR(t->nodes[path[1]].name, "a3");
	T_EQ_INT(walk(t, r, node(t, "b1"),
		      ibemu_routes_lid(r, node(t, "h-b3"), 1), path, out),
		 3);
	T_EQ_STR(t->nodes[path[1]].name, "b4");
	T_EQ_INT(r->lft[node(t, "a1")][ibemu_routes_lid(r, node(t, "h-b1"), 1)],
		 IBEMU_LFT_NO_ROUTE);
	T_EQ_INT(r->lft[node(t, "b1")][ibemu_routes_lid(r, node(t, "a1"), 0)],
		 IBEMU_LFT_NO_ROUTE);
	for (i = 0; i < 8; i++)
		T_EQ_INT(r->lft[sw[i]][ibemu_routes_lid(r, z, 1)],
			 IBEMU_LFT_NO_ROUTE);
	check_all(t, r, &c);
	T_EQ_INT(c.routes, 2 * 4 * 8);
	T_EQ_INT(c.unrouted, 0);
	T_EQ_INT(c.down_up, 0);
	T_EQ_INT(c.cycle, 0);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * Edge cases: an empty fabric, one switch (the same LFT as min-hop's:
 * every route is one hop), switches without cables (each its own island
 * and root), and more LIDs than IBA allows.
 */
static void test_small(void)
{
	struct ibemu_topo *t;
	struct ibemu_routes *r, *m = NULL;
	uint32_t sw, s2, h, i;
	char name[16];

	T_EQ_INT(ibemu_topo_create(&t), 0);
	r = updown(t);
	T_EQ_INT(r->max_lid, 0);
	ibemu_routes_destroy(r);
	sw = add(t, IBEMU_NODE_SWITCH, "sw", 8);
	s2 = add(t, IBEMU_NODE_SWITCH, "s2", 8);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		h = add(t, IBEMU_NODE_HCA, name, 1);
		cable(t, sw, 7 - i, h, 1);
	}
	h = add(t, IBEMU_NODE_HCA, "h3", 1);
	cable(t, s2, 2, h, 1);
	r = updown(t);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &m),
		 0);
	T_TRUE(same_lfts(t, r, m));
	T_EQ_INT(r->lft[sw][4], 6);
	T_EQ_INT(r->lft[sw][6], IBEMU_LFT_NO_ROUTE);
	T_EQ_INT(r->lft[s2][6], 2);
	ibemu_routes_destroy(m);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);

	/* 193 HCAs of 254 ports and 130 switches: 49152 LIDs, one too many. */
	T_EQ_INT(ibemu_topo_create(&t), 0);
	for (i = 0; i < 193; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		add(t, IBEMU_NODE_HCA, name, IBEMU_MAX_PORTS);
	}
	for (i = 0; i < 130; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		add(t, IBEMU_NODE_SWITCH, name, 1);
	}
	r = NULL;
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("updown"), t, &r),
		 -ERANGE);
	T_TRUE(r == NULL);
	ibemu_topo_destroy(t);
}

/* The same topology gives the same routes, and so does a copy of it. */
static void test_determinism(void)
{
	static const char *const kv[] = {"dims", "4x3x2", "hosts_per_switch",
					 "2", NULL};
	struct ibemu_topo *t1 = ibemu_test_gen("torus", kv),
			  *t2 = ibemu_test_gen("torus", kv);
	struct ibemu_routes *a = updown(t1), *b = updown(t1), *c = updown(t2);

	T_TRUE(same_lfts(t1, a, b));
	T_TRUE(same_lfts(t1, a, c));
	ibemu_routes_destroy(c);
	ibemu_routes_destroy(b);
	ibemu_routes_destroy(a);
	ibemu_topo_destroy(t2);
	ibemu_topo_destroy(t1);
}

/*
 * A fat-tree-3l of radix 36 with 10000 hosts: every switch routes every
 * HCA LID, and sampled host routes cross as few switches as min-hop's.
 */
static void test_large_fat_tree(void)
{
	static const char *const kv[] = {"radix", "36", "hosts", "10000", NULL};
	struct ibemu_topo *t = ibemu_test_gen("fat-tree-3l", kv);
	struct ibemu_routes *r = updown(t), *m = NULL;
	unsigned lid, missing = 0, bad = 0, checked = 0;
	uint32_t n, src;

	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &m),
		 0);
	for (n = 0; n < t->nnodes; n++) {
		if (!r->lft[n])
			continue;
		for (lid = 1; lid <= r->max_lid; lid++)
			missing += r->lft[n][lid] == IBEMU_LFT_NO_ROUTE;
	}
	T_EQ_INT(missing, 0);
	for (lid = 1; lid <= r->max_lid; lid += 211) {
		if (is_switch(t, r->lid_node[lid]))
			continue;
		for (src = 0; src < t->nnodes; src += 7) {
			if (is_switch(t, src))
				continue;
			bad += host_path(t, r, src, (uint16_t)lid) !=
			       host_path(t, m, src, (uint16_t)lid);
			checked++;
		}
	}
	T_TRUE(checked > 50000);
	T_EQ_INT(bad, 0);
	ibemu_routes_destroy(m);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * Runs 20 us of 'pattern' (with 'shift' for a shift) at full load on
 * fabric 'topo' with the routes of 'engine'. All of it uses SL 0, so VL 0:
 * one VL. Returns what ibemu_traffic_run() does.
 */
static int study(const char *topo, enum ibemu_traffic_pattern pattern,
		 uint32_t shift, const char *engine)
{
	struct ibemu_topo *t = ibemu_test_load(topo);
	struct ibemu_traffic *tr = NULL;
	struct ibemu_routes *r = NULL;
	struct ibemu_engine *e = NULL;
	struct ibemu_traffic_opts o;
	struct ibemu_diag d;
	int ret;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find(engine), t, &r), 0);
	T_EQ_INT(ibemu_model_create(t, &e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(e, r), 0);
	ibemu_traffic_opts_init(&o);
	o.pattern = pattern;
	o.shift = shift;
	o.duration_ps = 20000000;
	ret = ibemu_traffic_create(e, t, &o, &tr, &d);
	T_EQ_INT(ret, 0);
	if (!ret)
		ret = ibemu_traffic_run(tr);
	ibemu_traffic_destroy(tr);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
	return ret;
}

/*
 * With min-hop routes, uniform traffic deadlocks on credits on the torus
 * and on the dragonfly (whether a given shift does depends on the timing of
 * the first packets, so none is asserted). With up/down routes every study
 * finishes.
 */
static void test_no_deadlock(void)
{
	static const char *const topos[] = {"torus-2d-4x4", "dragonfly-small"};
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(topos); i++) {
		T_EQ_INT(study(topos[i], IBEMU_TRAFFIC_UNIFORM, 1, "minhop"),
			 -EDEADLK);
		T_EQ_INT(study(topos[i], IBEMU_TRAFFIC_UNIFORM, 1, "updown"),
			 0);
		T_EQ_INT(study(topos[i], IBEMU_TRAFFIC_SHIFT, 1, "updown"), 0);
		T_EQ_INT(study(topos[i], IBEMU_TRAFFIC_SHIFT, 3, "updown"), 0);
	}
}

void ibemu_test_register_routing_updown(void)
{
	static const struct ibemu_test tests[] = {
		{"ring4", test_ring4},
		{"ring6", test_ring6},
		{"torus", test_torus},
		{"dragonfly", test_dragonfly},
		{"fat_tree_2l", test_fat_tree_2l},
		{"islands", test_islands},
		{"small", test_small},
		{"determinism", test_determinism},
		{"large_fat_tree", test_large_fat_tree},
		{"no_deadlock", test_no_deadlock},
		{NULL, NULL},
	};

	ibemu_test_add_suite("routing.updown", tests);
}

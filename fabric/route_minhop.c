// SPDX-License-Identifier: MIT
/*
 * Min-hop test routes with port balancing, in the manner of OpenSM's
 * default engine: for each destination LID, a breadth-first search over
 * switch-to-switch cables gives every switch its hop count, and each switch
 * forwards through the least loaded of its ports that lead one hop closer.
 * The switch graph and the port choice (route_int.h) serve up/down too.
 */
#include <errno.h>
#include <stdlib.h>

#include "route.h"
#include "route_int.h"
#include "util.h"

/* Working state of one computation. */
struct minhop {
	struct ibemu__sw_graph g;
	uint32_t *dist;	 /* hops to the current root; IBEMU_NONE: unreachable */
	uint32_t *queue; /* the switches the root reaches, nearest first */
	uint32_t nqueue;
	/*
	 * For the current root, the cables of queue[i] that lead one hop
	 * closer, in port order: g.link[cand[cand_first[i]]] and on, up to
	 * cand_first[i + 1]. Computed once per root, they serve all the LIDs
	 * behind it.
	 */
	uint32_t *cand_first;
	uint32_t *cand;
};

void ibemu__sw_graph_fini(struct ibemu__sw_graph *g)
{
	free(g->link);
	free(g->first);
	free(g->sw_index);
	free(g->sw_node);
}

/*
 * Numbers the switches and lists each one's switch-to-switch cables in
 * port order, so that scanning them visits the lowest port first.
 */
int ibemu__sw_graph_init(struct ibemu__sw_graph *g, const struct ibemu_topo *t,
			 struct ibemu_routes *r)
{
	uint32_t i, s, nlinks = 0;
	unsigned p;

	g->t = t;
	g->r = r;
	g->nsw = 0;
	g->sw_index = malloc((t->nnodes ? t->nnodes : 1) * sizeof(uint32_t));
	if (!g->sw_index)
		return -ENOMEM;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		if (n->type != IBEMU_NODE_SWITCH) {
			g->sw_index[i] = IBEMU_NONE;
			continue;
		}
		g->sw_index[i] = g->nsw++;
		for (p = 1; p <= n->nports; p++)
			nlinks += ibemu__route_is_switch(t,
							 n->ports[p].peer_node);
	}
	g->nlinks = nlinks;
	g->sw_node = malloc((g->nsw ? g->nsw : 1) * sizeof(uint32_t));
	g->first = malloc((g->nsw + 1) * sizeof(uint32_t));
	g->link = calloc(nlinks ? nlinks : 1, sizeof(*g->link));
	if (!g->sw_node || !g->first || !g->link)
		return -ENOMEM;
	nlinks = 0;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		s = g->sw_index[i];
		if (s == IBEMU_NONE)
			continue;
		g->sw_node[s] = i;
		g->first[s] = nlinks;
		for (p = 1; p <= n->nports; p++) {
			uint32_t peer = n->ports[p].peer_node;

			if (!ibemu__route_is_switch(t, peer))
				continue;
			g->link[nlinks].peer = g->sw_index[peer];
			g->link[nlinks].port = (uint8_t)p;
			nlinks++;
		}
	}
	g->first[g->nsw] = nlinks;
	return 0;
}

static void minhop_fini(struct minhop *m)
{
	free(m->cand);
	free(m->cand_first);
	free(m->queue);
	free(m->dist);
	ibemu__sw_graph_fini(&m->g);
}

static int minhop_init(struct minhop *m, const struct ibemu_topo *t,
		       struct ibemu_routes *r)
{
	uint32_t nsw;
	int ret;

	ret = ibemu__sw_graph_init(&m->g, t, r);
	if (ret)
		return ret;
	nsw = m->g.nsw;
	m->dist = malloc((nsw ? nsw : 1) * sizeof(uint32_t));
	m->queue = malloc((nsw ? nsw : 1) * sizeof(uint32_t));
	m->cand_first = malloc((nsw + 1) * sizeof(uint32_t));
	m->cand = malloc((m->g.nlinks ? m->g.nlinks : 1) * sizeof(uint32_t));
	if (!m->dist || !m->queue || !m->cand_first || !m->cand)
		return -ENOMEM;
	return 0;
}

/*
 * Hop counts of every switch to 'root', the switches it reaches in order,
 * and the cables of each that lead one hop closer to it.
 */
static void minhop_bfs(struct minhop *m, uint32_t root)
{
	const struct ibemu__sw_graph *g = &m->g;
	uint32_t i, s, l, n = 0;

	for (s = 0; s < g->nsw; s++)
		m->dist[s] = IBEMU_NONE;
	m->dist[root] = 0;
	m->queue[0] = root;
	m->nqueue = 1;
	for (i = 0; i < m->nqueue; i++) {
		s = m->queue[i];
		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			uint32_t peer = g->link[l].peer;

			if (m->dist[peer] != IBEMU_NONE)
				continue;
			m->dist[peer] = m->dist[s] + 1;
			m->queue[m->nqueue++] = peer;
		}
	}
	for (i = 0; i < m->nqueue; i++) {
		s = m->queue[i];
		m->cand_first[i] = n;
		for (l = g->first[s]; l < g->first[s + 1]; l++)
			if (m->dist[g->link[l].peer] + 1 == m->dist[s])
				m->cand[n++] = l;
	}
	m->cand_first[m->nqueue] = n;
}

/*
 * The switch a LID is delivered by, and the port it delivers through: the
 * switch itself and port 0 for a switch's LID, the switch an HCA port is
 * cabled to and the port of that cable for an HCA's. IBEMU_NONE when no
 * switch delivers it (an HCA port cabled to nothing or to another HCA).
 */
uint32_t ibemu__sw_graph_dest(const struct ibemu__sw_graph *g, uint16_t lid,
			      uint8_t *port)
{
	uint32_t node = g->r->lid_node[lid];
	const struct ibemu_topo_port *tp;

	if (g->sw_index[node] != IBEMU_NONE) {
		*port = 0;
		return g->sw_index[node];
	}
	tp = &g->t->nodes[node].ports[g->r->lid_port[lid]];
	if (!ibemu__route_is_switch(g->t, tp->peer_node))
		return IBEMU_NONE;
	*port = tp->peer_port;
	return g->sw_index[tp->peer_node];
}

/*
 * Whether cable a carries less than cable b: fewer HCA LIDs first, as
 * OpenSM does not count switch LIDs in its port balancing (they carry
 * management traffic only); then fewer switch LIDs, so those spread too.
 */
static int less_loaded(const struct ibemu__sw_link *a,
		       const struct ibemu__sw_link *b)
{
	if (a->hca_lids != b->hca_lids)
		return a->hca_lids < b->hca_lids;
	return a->sw_lids < b->sw_lids;
}

void ibemu__sw_graph_route(struct ibemu__sw_graph *g, uint32_t s, uint16_t lid,
			   const uint32_t *cand, uint32_t ncand, int to_switch)
{
	struct ibemu__sw_link *best = NULL;
	uint32_t c;

	IBEMU_BUG_ON(ncand == 0);
	for (c = 0; c < ncand; c++) {
		struct ibemu__sw_link *l = &g->link[cand[c]];

		IBEMU_BUG_ON(l < g->link + g->first[s] ||
			     l >= g->link + g->first[s + 1]);
		/* Strictly less: on a tie the lower port, seen first, stays. */
		if (!best || less_loaded(l, best))
			best = l;
	}
	g->r->lft[g->sw_node[s]][lid] = best->port;
	if (to_switch)
		best->sw_lids++;
	else
		best->hca_lids++;
}

int ibemu_routes_minhop(const struct ibemu_topo *t, struct ibemu_routes **out)
{
	struct ibemu_routes *r;
	struct minhop m = {0};
	uint32_t root, prev = IBEMU_NONE, i;
	unsigned lid;
	uint8_t port;
	int ret;

	ret = ibemu_routes_create(t, &r);
	if (ret)
		return ret;
	ret = minhop_init(&m, t, r);
	if (ret)
		goto err_init;
	/*
	 * Destinations in LID order, so the balancing, and therefore every
	 * route, depends on nothing but the topology. The hosts of a switch
	 * usually have consecutive LIDs: reuse the search while the root
	 * switch stays the same.
	 */
	for (lid = 1; lid <= r->max_lid; lid++) {
		int to_switch = ibemu__route_is_switch(t, r->lid_node[lid]);

		root = ibemu__sw_graph_dest(&m.g, (uint16_t)lid, &port);
		if (root == IBEMU_NONE)
			continue;
		if (root != prev)
			minhop_bfs(&m, root);
		prev = root;
		r->lft[m.g.sw_node[root]][lid] = port;
		/*
		 * The search reached queue[i] through one of its cables at
		 * least, so each has a candidate.
		 */
		for (i = 1; i < m.nqueue; i++)
			ibemu__sw_graph_route(&m.g, m.queue[i], (uint16_t)lid,
					      m.cand + m.cand_first[i],
					      m.cand_first[i + 1] -
						      m.cand_first[i],
					      to_switch);
	}
	minhop_fini(&m);
	*out = r;
	return 0;

err_init:
	minhop_fini(&m);
	ibemu_routes_destroy(r);
	return ret;
}

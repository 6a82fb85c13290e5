// SPDX-License-Identifier: MIT
/*
 * Min-hop routes with port balancing, in the manner of OpenSM's default
 * engine: for each destination LID, a breadth-first search over
 * switch-to-switch cables gives every switch its hop count, and each switch
 * forwards through the least loaded of its ports that lead one hop closer
 * (the choice is sw_graph.c's, shared with up/down).
 */
#include <errno.h>
#include <stdlib.h>

#include "routing_int.h"

/* The engine's context: the switch graph and the scratch of a build. */
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

static void minhop_destroy(void *ctx)
{
	struct minhop *m = ctx;

	free(m->cand);
	free(m->cand_first);
	free(m->queue);
	free(m->dist);
	ibemu__sw_graph_fini(&m->g);
	free(m);
}

static int minhop_create(const struct ibemu_graph *graph, void **ctx)
{
	struct minhop *m;
	uint32_t nsw;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	ret = ibemu__sw_graph_init(&m->g, graph);
	if (ret)
		goto err_alloc;
	nsw = m->g.nsw;
	m->dist = malloc((nsw ? nsw : 1) * sizeof(uint32_t));
	m->queue = malloc((nsw ? nsw : 1) * sizeof(uint32_t));
	m->cand_first = malloc((nsw + 1) * sizeof(uint32_t));
	m->cand = malloc((m->g.nlinks ? m->g.nlinks : 1) * sizeof(uint32_t));
	if (!m->dist || !m->queue || !m->cand_first || !m->cand) {
		ret = -ENOMEM;
		goto err_alloc;
	}
	*ctx = m;
	return 0;

err_alloc:
	minhop_destroy(m);
	return ret;
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

static int minhop_build(void *ctx, struct ibemu_routes *r)
{
	struct minhop *m = ctx;
	uint32_t root, prev = IBEMU_NONE, i;
	unsigned lid;
	uint8_t port;
	int ret;

	ret = ibemu__sw_graph_start(&m->g, r);
	if (ret)
		return ret;
	/*
	 * Destinations in LID order, so the balancing, and therefore every
	 * route, depends on nothing but the graph. The hosts of a switch
	 * usually have consecutive LIDs: reuse the search while the root
	 * switch stays the same.
	 */
	for (lid = 1; lid <= r->max_lid; lid++) {
		int to_switch;

		if (r->lid_node[lid] == IBEMU_NONE)
			continue; /* a LID nobody has */
		to_switch = ibemu__graph_is_switch(m->g.g, r->lid_node[lid]);

		root = ibemu__sw_graph_dest(&m->g, (uint16_t)lid, &port);
		if (root == IBEMU_NONE)
			continue;
		if (root != prev)
			minhop_bfs(m, root);
		prev = root;
		r->lft[m->g.sw_node[root]][lid] = port;
		/*
		 * The search reached queue[i] through one of its cables at
		 * least, so each has a candidate.
		 */
		for (i = 1; i < m->nqueue; i++)
			ibemu__sw_graph_route(&m->g, m->queue[i], (uint16_t)lid,
					      m->cand + m->cand_first[i],
					      m->cand_first[i + 1] -
						      m->cand_first[i],
					      to_switch);
	}
	return 0;
}

const struct ibemu_routing_engine_ops ibemu__routing_minhop = {
	.name = "minhop",
	.help = "min-hop with port balancing (OpenSM's default engine)",
	.create = minhop_create,
	.build = minhop_build,
	.destroy = minhop_destroy,
};

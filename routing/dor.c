// SPDX-License-Identifier: MIT
/*
 * Dimension-order routes for meshes and tori, as OpenSM's dor: min-hop
 * routes where each switch takes, among the cables one hop closer, those
 * to the neighbour of its lowest port (a consistently cabled grid numbers
 * its dimensions' ports in order, as topo/'s generators do), balancing
 * parallel cables to that neighbour. Paths then finish one dimension
 * before they start the next. A mesh's routes are deadlock-free on one VL;
 * a torus's rings close credit loops, which the virtual layers of
 * layers.c break when the fabric has the VLs.
 */
#include <errno.h>
#include <stdlib.h>

#include "routing_int.h"

struct dor {
	struct ibemu__sw_graph g;
	uint32_t *dist;	 /* hops to the current root */
	uint32_t *queue; /* switches the root reaches, nearest first */
	uint32_t nqueue;
	/* For the current root, the cables queue[i] may take, in port order:
	 * g.link[cand[cand_first[i]]] up to cand_first[i + 1]. */
	uint32_t *cand_first;
	uint32_t *cand;
};

static void dor_destroy(void *ctx)
{
	struct dor *m = ctx;

	free(m->cand);
	free(m->cand_first);
	free(m->queue);
	free(m->dist);
	ibemu__sw_graph_fini(&m->g);
	free(m);
}

static int dor_create(const struct ibemu_graph *graph, void **ctx)
{
	struct dor *m;
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
	dor_destroy(m);
	return ret;
}

/*
 * Hop counts to 'root', and for each switch the cables it may take: those
 * one hop closer that reach the same neighbour as the lowest such port.
 */
static void dor_bfs(struct dor *m, uint32_t root)
{
	const struct ibemu__sw_graph *g = &m->g;
	uint32_t i, s, l, n = 0, peer;

	for (s = 0; s < g->nsw; s++)
		m->dist[s] = IBEMU_NONE;
	m->dist[root] = 0;
	m->queue[0] = root;
	m->nqueue = 1;
	for (i = 0; i < m->nqueue; i++) {
		s = m->queue[i];
		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			peer = g->link[l].peer;
			if (m->dist[peer] != IBEMU_NONE)
				continue;
			m->dist[peer] = m->dist[s] + 1;
			m->queue[m->nqueue++] = peer;
		}
	}
	for (i = 0; i < m->nqueue; i++) {
		s = m->queue[i];
		m->cand_first[i] = n;
		peer = IBEMU_NONE;
		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			if (m->dist[g->link[l].peer] + 1 != m->dist[s])
				continue;
			/* Cables come in port order: the first one found
			 * names the neighbour, the dimension. */
			if (peer == IBEMU_NONE)
				peer = g->link[l].peer;
			if (g->link[l].peer == peer)
				m->cand[n++] = l;
		}
	}
	m->cand_first[m->nqueue] = n;
}

static int dor_build(void *ctx, struct ibemu_routes *r)
{
	struct dor *m = ctx;
	uint32_t root, prev = IBEMU_NONE, i;
	unsigned lid;
	uint8_t port;
	int ret;

	ret = ibemu__sw_graph_start(&m->g, r);
	if (ret)
		return ret;
	for (lid = 1; lid <= r->max_lid; lid++) {
		int to_switch;

		if (r->lid_node[lid] == IBEMU_NONE)
			continue;
		to_switch = ibemu__graph_is_switch(m->g.g, r->lid_node[lid]);
		root = ibemu__sw_graph_dest(&m->g, (uint16_t)lid, &port);
		if (root == IBEMU_NONE)
			continue;
		if (root != prev)
			dor_bfs(m, root);
		prev = root;
		r->lft[m->g.sw_node[root]][lid] = port;
		for (i = 1; i < m->nqueue; i++)
			ibemu__sw_graph_route(&m->g, m->queue[i], (uint16_t)lid,
					      m->cand + m->cand_first[i],
					      m->cand_first[i + 1] -
						      m->cand_first[i],
					      to_switch);
	}
	/*
	 * Layers break a torus's credit loops. Without the VLs for them the
	 * routes stay on SL 0, as OpenSM's dor, and are not deadlock-free.
	 */
	ret = ibemu__routes_layer(m->g.g, r, ibemu__graph_vls(m->g.g));
	return ret == -ENOSPC ? 0 : ret;
}

const struct ibemu_routing_engine_ops ibemu__routing_dor = {
	.name = "dor",
	.help = "dimension-order routes for meshes and tori (OpenSM's dor), "
		"a torus's credit loops broken on virtual layers",
	.create = dor_create,
	.build = dor_build,
	.destroy = dor_destroy,
};

// SPDX-License-Identifier: MIT
/*
 * Min-hop routes with port balancing, in the manner of OpenSM's default
 * engine: for each destination LID, a breadth-first search over
 * switch-to-switch cables gives every switch its hop count, and each switch
 * forwards through the least loaded of its ports that lead one hop closer
 * (the choice is sw_graph.c's, shared with up/down).
 *
 * Dimension-order routes for meshes and tori, as OpenSM's dor, are the
 * same with one more rule: among the cables one hop closer, only those to
 * the neighbour of the lowest such port (a consistently cabled grid
 * numbers its dimensions' ports in order, as topo/'s generators do), so
 * paths finish one dimension before they start the next. A mesh's routes
 * are deadlock-free on one VL; a torus's rings close credit loops, which
 * the virtual layers of layers.c break when the fabric has the VLs.
 */
#include <errno.h>
#include <stdlib.h>

#include "routing_int.h"

/* The engine's context: the switch graph and the scratch of a build. */
struct minhop {
	struct ibemu__sw_graph g;
	int dim_order;	 /* dor: one neighbour's cables only */
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

static int create(const struct ibemu_graph *graph, int dim_order, void **ctx)
{
	struct minhop *m;
	uint32_t nsw;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->dim_order = dim_order;
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

static int minhop_create(const struct ibemu_graph *graph, void **ctx)
{
	return create(graph, 0, ctx);
}

static int dor_create(const struct ibemu_graph *graph, void **ctx)
{
	return create(graph, 1, ctx);
}

/*
 * Hop counts of every switch to 'root', the switches it reaches in order,
 * and the cables of each that lead one hop closer to it (for dor, those of
 * them that reach the same neighbour as the first). One pass: when a
 * switch is taken from the queue, every switch one hop closer to the root
 * has its count already (all of them were queued before it).
 */
static void minhop_bfs(struct minhop *m, uint32_t root)
{
	const struct ibemu__sw_graph *g = &m->g;
	uint32_t i, s, l, n = 0, first, d;

	for (s = 0; s < g->nsw; s++)
		m->dist[s] = IBEMU_NONE;
	m->dist[root] = 0;
	m->queue[0] = root;
	m->nqueue = 1;
	for (i = 0; i < m->nqueue; i++) {
		s = m->queue[i];
		d = m->dist[s];
		m->cand_first[i] = n;
		first = IBEMU_NONE;
		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			uint32_t peer = g->link[l].peer;

			if (m->dist[peer] == IBEMU_NONE) {
				m->dist[peer] = d + 1;
				m->queue[m->nqueue++] = peer;
				continue;
			}
			if (m->dist[peer] + 1 != d)
				continue;
			/* Cables come in port order: the first one found
			 * names the neighbour, the dimension. */
			if (first == IBEMU_NONE)
				first = peer;
			if (!m->dim_order || peer == first)
				m->cand[n++] = l;
		}
	}
	m->cand_first[m->nqueue] = n;
}

/*
 * Routes the LIDs of 'run' at every switch the current root reaches, but
 * the root (which delivers them); the run is empty after.
 */
static void minhop_route_run(struct minhop *m, struct ibemu__sw_run *run)
{
	uint32_t i;

	/* The search reached queue[i] through one of its cables at least,
	 * so each has a candidate. */
	for (i = 1; i < m->nqueue && run->n; i++)
		ibemu__sw_graph_route_run(
			&m->g, m->queue[i], run, m->cand + m->cand_first[i],
			m->cand_first[i + 1] - m->cand_first[i]);
	run->n = 0;
}

static int minhop_build(void *ctx, struct ibemu_routes *r)
{
	struct minhop *m = ctx;
	struct ibemu__sw_run run = {.n = 0};
	uint32_t root, prev = IBEMU_NONE;
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
	 * switch stays the same, and route those LIDs as one run.
	 */
	for (lid = 1; lid <= r->max_lid; lid++) {
		if (r->lid_node[lid] == IBEMU_NONE)
			continue; /* a LID nobody has */
		root = ibemu__sw_graph_dest(&m->g, (uint16_t)lid, &port);
		if (root == IBEMU_NONE)
			continue;
		if (root != prev || run.n == IBEMU__SW_RUN_MAX)
			minhop_route_run(m, &run);
		if (root != prev)
			minhop_bfs(m, root);
		prev = root;
		r->lft[m->g.sw_node[root]][lid] = port;
		run.lid[run.n] = (uint16_t)lid;
		run.to_switch[run.n++] = (uint8_t)ibemu__graph_is_switch(
			m->g.g, r->lid_node[lid]);
	}
	minhop_route_run(m, &run);
	return 0;
}

static int dor_build(void *ctx, struct ibemu_routes *r)
{
	struct minhop *m = ctx;
	int ret = minhop_build(ctx, r);

	/*
	 * Layers break a torus's credit loops. Without the VLs for them the
	 * routes stay on SL 0, as OpenSM's dor, and are not deadlock-free.
	 */
	if (!ret)
		ret = ibemu__routes_layer(m->g.g, r, ibemu__graph_vls(m->g.g));
	return ret == -ENOSPC ? 0 : ret;
}

const struct ibemu_routing_engine_ops ibemu__routing_minhop = {
	.name = "minhop",
	.help = "min-hop with port balancing (OpenSM's default engine)",
	.create = minhop_create,
	.build = minhop_build,
	.destroy = minhop_destroy,
};

const struct ibemu_routing_engine_ops ibemu__routing_dor = {
	.name = "dor",
	.help = "dimension-order routes for meshes and tori (OpenSM's dor), "
		"a torus's credit loops broken on virtual layers",
	.create = dor_create,
	.build = dor_build,
	.destroy = minhop_destroy,
};

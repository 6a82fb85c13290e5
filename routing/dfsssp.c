// SPDX-License-Identifier: MIT
/*
 * Deadlock-free balanced shortest paths, after OpenSM's dfsssp (Domke,
 * Hoefler and Nagel): for each destination LID a shortest-path tree over
 * the switches whose choices weigh the routes every cable already carries,
 * so paths spread over the fabric as a whole rather than port by port;
 * then every path goes on a virtual layer (layers.c) so that no layer's
 * channel dependency graph has a cycle. Deadlock-free on any topology with
 * enough VLs. The rules are in routing/README.md.
 */
#include <errno.h>
#include <stdlib.h>

#include "routing_int.h"

struct dfsssp {
	struct ibemu__sw_graph g;
	uint32_t *hosts; /* per switch: HCA ports cabled to it (sources) */
	uint64_t *load;	 /* per cable end: (source, HCA LID) routes so far */
	uint32_t *dist;	 /* hops to the current destination switch */
	uint32_t *queue; /* switches it reaches, nearest first */
	uint32_t nqueue;
	uint64_t *cost; /* per switch: the load summed along its path */
	uint64_t *peak; /* per switch: the most loaded cable of its path */
	uint32_t *next; /* per switch: the cable its path leaves by */
	uint64_t *flow; /* per switch: sources whose path crosses it */
};

static void dfsssp_destroy(void *ctx)
{
	struct dfsssp *m = ctx;

	free(m->flow);
	free(m->next);
	free(m->cost);
	free(m->peak);
	free(m->queue);
	free(m->dist);
	free(m->load);
	free(m->hosts);
	ibemu__sw_graph_fini(&m->g);
	free(m);
}

static int dfsssp_create(const struct ibemu_graph *graph, void **ctx)
{
	struct dfsssp *m;
	uint32_t nsw, s;
	size_t n;
	unsigned p;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	ret = ibemu__sw_graph_init(&m->g, graph);
	if (ret)
		goto err_alloc;
	nsw = m->g.nsw;
	n = nsw ? nsw : 1;
	m->hosts = calloc(n, sizeof(*m->hosts));
	m->load = calloc(m->g.nlinks ? m->g.nlinks : 1, sizeof(*m->load));
	m->dist = malloc(n * sizeof(*m->dist));
	m->queue = malloc(n * sizeof(*m->queue));
	m->cost = malloc(n * sizeof(*m->cost));
	m->peak = malloc(n * sizeof(*m->peak));
	m->next = malloc(n * sizeof(*m->next));
	m->flow = malloc(n * sizeof(*m->flow));
	ret = -ENOMEM;
	if (!m->hosts || !m->load || !m->dist || !m->queue || !m->cost ||
	    !m->peak || !m->next || !m->flow)
		goto err_alloc;
	for (s = 0; s < nsw; s++) {
		const struct ibemu_graph_node *node =
			&graph->nodes[m->g.sw_node[s]];

		for (p = 1; p <= node->nports; p++) {
			uint32_t peer = node->ports[p].peer_node;

			m->hosts[s] += peer != IBEMU_NONE &&
				       !ibemu__graph_is_switch(graph, peer);
		}
	}
	*ctx = m;
	return 0;

err_alloc:
	dfsssp_destroy(m);
	return ret;
}

/* Hop counts to 'root' and the switches it reaches, nearest first. */
static void dfsssp_bfs(struct dfsssp *m, uint32_t root)
{
	const struct ibemu__sw_graph *g = &m->g;
	uint32_t i, s, l;

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
}

/* Min-hop's order of cables (sw_graph.c): fewer HCA LIDs, then fewer
 * switch LIDs routed out of it. */
static int fewer_lids(const struct ibemu__sw_link *a,
		      const struct ibemu__sw_link *b)
{
	if (a->hca_lids != b->hca_lids)
		return a->hca_lids < b->hca_lids;
	return a->sw_lids < b->sw_lids;
}

/*
 * The tree of 'lid' delivered by switch queue[0]: each switch, nearest
 * first, leaves by the cable one hop closer whose load plus the summed load
 * of the path beyond it is least; on a tie, the one min-hop would take
 * (fewest HCA LIDs, fewest switch LIDs, lowest port). Then, for an HCA
 * LID, every cable counts the sources whose path it carries.
 */
static void dfsssp_tree(struct dfsssp *m, uint16_t lid, int to_switch)
{
	struct ibemu__sw_graph *g = &m->g;
	uint32_t i, s, l, best;
	uint64_t c, pk, best_c, best_pk;

	m->cost[m->queue[0]] = 0;
	m->peak[m->queue[0]] = 0;
	for (i = 1; i < m->nqueue; i++) {
		s = m->queue[i];
		best = IBEMU_NONE;
		best_c = best_pk = 0;
		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			uint32_t peer = g->link[l].peer;

			if (m->dist[peer] + 1 != m->dist[s])
				continue;
			c = m->load[l] + m->cost[peer];
			pk = m->load[l] > m->peak[peer] ? m->load[l]
							: m->peak[peer];
			if (best == IBEMU_NONE || pk < best_pk ||
			    (pk == best_pk &&
			     (c < best_c ||
			      (c == best_c &&
			       fewer_lids(&g->link[l], &g->link[best]))))) {
				best = l;
				best_c = c;
				best_pk = pk;
			}
		}
		/* Found by the search through such a cable: there is one. */
		IBEMU_BUG_ON(best == IBEMU_NONE);
		m->next[s] = best;
		m->cost[s] = best_c;
		m->peak[s] = best_pk;
		if (to_switch)
			g->link[best].sw_lids++;
		else
			g->link[best].hca_lids++;
		g->r->lft[g->sw_node[s]][lid] = g->link[best].port;
	}
	if (to_switch)
		return; /* switch LIDs carry management only, as min-hop's */
	for (i = 0; i < m->nqueue; i++)
		m->flow[m->queue[i]] = m->hosts[m->queue[i]];
	for (i = m->nqueue; i-- > 1;) {
		s = m->queue[i];
		l = m->next[s];
		m->load[l] += m->flow[s];
		m->flow[g->link[l].peer] += m->flow[s];
	}
}

static int dfsssp_build(void *ctx, struct ibemu_routes *r)
{
	struct dfsssp *m = ctx;
	uint32_t root, prev = IBEMU_NONE, l;
	unsigned lid;
	uint8_t port;
	int ret;

	ret = ibemu__sw_graph_start(&m->g, r);
	if (ret)
		return ret;
	for (l = 0; l < m->g.nlinks; l++)
		m->load[l] = 0;
	/* Destinations in LID order, as min-hop: the result depends on the
	 * graph alone. */
	for (lid = 1; lid <= r->max_lid; lid++) {
		if (r->lid_node[lid] == IBEMU_NONE)
			continue;
		root = ibemu__sw_graph_dest(&m->g, (uint16_t)lid, &port);
		if (root == IBEMU_NONE)
			continue;
		if (root != prev)
			dfsssp_bfs(m, root);
		prev = root;
		r->lft[m->g.sw_node[root]][lid] = port;
		dfsssp_tree(m, (uint16_t)lid,
			    ibemu__graph_is_switch(m->g.g, r->lid_node[lid]));
	}
	return ibemu__routes_layer(m->g.g, r, ibemu__graph_vls(m->g.g));
}

const struct ibemu_routing_engine_ops ibemu__routing_dfsssp = {
	.name = "dfsssp",
	.help = "deadlock-free balanced shortest paths on virtual layers "
		"(SLs), as OpenSM's dfsssp",
	.create = dfsssp_create,
	.build = dfsssp_build,
	.destroy = dfsssp_destroy,
};

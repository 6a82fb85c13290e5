// SPDX-License-Identifier: MIT
/*
 * The routing graph of a declared topology: the bridge from topo/ to the
 * engines, and the only file of routing/ that includes topo.h. The engine
 * benchmark and the tests route topologies through it.
 */
#include <errno.h>

#include "graph.h"
#include "routing.h"
#include "topo.h"
#include "util.h"

int ibemu_graph_from_topo(const struct ibemu_topo *t, struct ibemu_graph **out)
{
	struct ibemu_graph *g;
	uint32_t i, idx;
	unsigned p;
	int ret;

	ret = ibemu_graph_create(&g);
	if (ret)
		return ret;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		ret = ibemu_graph_add_node(g,
					   n->type == IBEMU_NODE_SWITCH
						   ? IBEMU_GRAPH_SWITCH
						   : IBEMU_GRAPH_HCA,
					   n->nports, n->guid, &idx);
		if (ret)
			goto err_graph;
		IBEMU_BUG_ON(idx != i);
	}
	/* The VLs every link runs: the least of its cabled nodes'. */
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		for (p = 1; p <= n->nports; p++)
			if (n->ports[p].peer_node != IBEMU_NONE &&
			    (!g->vls || n->vls < g->vls))
				g->vls = n->vls;
	}
	/*
	 * The topology has already checked its cables; copy them end by end
	 * (each appears at both), rather than through ibemu_graph_connect().
	 */
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		for (p = 1; p <= n->nports; p++) {
			g->nodes[i].ports[p].peer_node = n->ports[p].peer_node;
			g->nodes[i].ports[p].peer_port = n->ports[p].peer_port;
		}
	}
	*out = g;
	return 0;

err_graph:
	ibemu_graph_destroy(g);
	return ret;
}

int ibemu_routing_run_topo(const struct ibemu_routing_engine_ops *ops,
			   const struct ibemu_topo *t,
			   struct ibemu_routes **out)
{
	struct ibemu_graph *g;
	int ret;

	ret = ibemu_graph_from_topo(t, &g);
	if (ret)
		return ret;
	ret = ibemu_routing_run(ops, g, out);
	ibemu_graph_destroy(g);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * The switch graph the routing engines run on, built node by node and
 * cable by cable, the way a subnet manager learns a fabric. Node indices
 * never change once given, so results can be indexed by them.
 */
#include <errno.h>
#include <stdlib.h>

#include "graph.h"
#include "util.h"

int ibemu_graph_create(struct ibemu_graph **out)
{
	struct ibemu_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	*out = g;
	return 0;
}

void ibemu_graph_destroy(struct ibemu_graph *g)
{
	uint32_t i;

	if (!g)
		return;
	for (i = 0; i < g->nnodes; i++)
		free(g->nodes[i].ports);
	free(g->nodes);
	free(g);
}

int ibemu_graph_add_node(struct ibemu_graph *g, enum ibemu_graph_node_type type,
			 unsigned nports, uint64_t guid, uint32_t *node)
{
	struct ibemu_graph_node *n;
	unsigned p;

	if ((type != IBEMU_GRAPH_SWITCH && type != IBEMU_GRAPH_HCA) ||
	    nports < 1 || nports > IBEMU_GRAPH_MAX_PORTS)
		return -EINVAL;
	if (g->nnodes == IBEMU_NONE - 1)
		return -ENOMEM;
	if (g->nnodes == g->nodes_cap) {
		uint32_t cap = g->nodes_cap ? g->nodes_cap * 2 : 16;
		struct ibemu_graph_node *nodes;

		if (cap < g->nodes_cap)
			cap = IBEMU_NONE - 1;
		nodes = realloc(g->nodes, (size_t)cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		g->nodes = nodes;
		g->nodes_cap = cap;
	}
	n = &g->nodes[g->nnodes];
	n->ports = malloc((nports + 1) * sizeof(*n->ports));
	if (!n->ports)
		return -ENOMEM;
	for (p = 0; p <= nports; p++) {
		n->ports[p].peer_node = IBEMU_NONE;
		n->ports[p].peer_port = 0;
	}
	n->type = type;
	n->nports = (uint8_t)nports;
	n->guid = guid;
	*node = g->nnodes++;
	return 0;
}

/* Port 'p' of node 'n' exists, is not port 0, and has no cable yet. */
static struct ibemu_graph_port *free_port(struct ibemu_graph *g, uint32_t n,
					  unsigned p)
{
	struct ibemu_graph_port *gp;

	if (n >= g->nnodes || p < 1 || p > g->nodes[n].nports)
		return NULL;
	gp = &g->nodes[n].ports[p];
	return gp->peer_node == IBEMU_NONE ? gp : NULL;
}

int ibemu_graph_connect(struct ibemu_graph *g, uint32_t a, unsigned pa,
			uint32_t b, unsigned pb)
{
	struct ibemu_graph_port *ea = free_port(g, a, pa);
	struct ibemu_graph_port *eb = free_port(g, b, pb);

	if (!ea || !eb || ea == eb)
		return -EINVAL;
	ea->peer_node = b;
	ea->peer_port = (uint8_t)pb;
	eb->peer_node = a;
	eb->peer_port = (uint8_t)pa;
	return 0;
}

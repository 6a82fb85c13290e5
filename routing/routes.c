// SPDX-License-Identifier: MIT
/*
 * Routes and their LID assignment, shared by every engine: nodes in the
 * graph's order, one LID per switch and one per HCA port from 1 on, so a
 * fabric always gets the same LIDs. The LFTs start empty; an engine
 * (routing.h) fills them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routes.h"
#include "util.h"

/* LIDs a node takes: one for a switch (port 0), one per port of an HCA. */
static uint32_t node_lids(const struct ibemu_graph_node *n)
{
	return n->type == IBEMU_GRAPH_SWITCH ? 1 : n->nports;
}

static void assign_lids(const struct ibemu_graph *g, struct ibemu_routes *r)
{
	uint32_t i, slot = 0;
	uint16_t lid = 0;
	unsigned p;

	for (i = 0; i < g->nnodes; i++) {
		const struct ibemu_graph_node *n = &g->nodes[i];

		r->port_base[i] = slot;
		if (n->type == IBEMU_GRAPH_SWITCH) {
			lid++;
			r->lid_node[lid] = i;
			r->lid_port[lid] = 0;
			for (p = 0; p <= n->nports; p++)
				r->port_lid[slot + p] = lid;
		} else {
			r->port_lid[slot] = 0;
			for (p = 1; p <= n->nports; p++) {
				lid++;
				r->lid_node[lid] = i;
				r->lid_port[lid] = (uint8_t)p;
				r->port_lid[slot + p] = lid;
			}
		}
		slot += n->nports + 1u;
	}
	IBEMU_BUG_ON(lid != r->max_lid);
}

int ibemu_routes_create(const struct ibemu_graph *g, struct ibemu_routes **out)
{
	struct ibemu_routes *r;
	uint64_t lids = 0, slots = 0;
	uint32_t i, nlids;

	for (i = 0; i < g->nnodes; i++) {
		lids += node_lids(&g->nodes[i]);
		slots += g->nodes[i].nports + 1u;
	}
	if (lids > IBEMU_LID_UNICAST_MAX)
		return -ERANGE;
	nlids = (uint32_t)lids + 1; /* LID 0 is reserved but indexed */

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->nnodes = g->nnodes;
	r->max_lid = (uint16_t)lids;
	r->nslots = (uint32_t)slots;
	r->port_base = calloc(g->nnodes ? g->nnodes : 1, sizeof(*r->port_base));
	r->port_lid = calloc(slots ? slots : 1, sizeof(*r->port_lid));
	r->lid_node = malloc(nlids * sizeof(*r->lid_node));
	r->lid_port = calloc(nlids, sizeof(*r->lid_port));
	r->lft = calloc(g->nnodes ? g->nnodes : 1, sizeof(*r->lft));
	if (!r->port_base || !r->port_lid || !r->lid_node || !r->lid_port ||
	    !r->lft)
		goto err_alloc;
	for (i = 0; i < nlids; i++)
		r->lid_node[i] = IBEMU_NONE;
	for (i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].type != IBEMU_GRAPH_SWITCH)
			continue;
		r->lft[i] = malloc(nlids);
		if (!r->lft[i])
			goto err_alloc;
		memset(r->lft[i], IBEMU_LFT_NO_ROUTE, nlids);
	}
	assign_lids(g, r);
	*out = r;
	return 0;

err_alloc:
	ibemu_routes_destroy(r);
	return -ENOMEM;
}

void ibemu_routes_destroy(struct ibemu_routes *r)
{
	uint32_t i;

	if (!r)
		return;
	if (r->lft)
		for (i = 0; i < r->nnodes; i++)
			free(r->lft[i]);
	free(r->lft);
	free(r->lid_port);
	free(r->lid_node);
	free(r->port_lid);
	free(r->port_base);
	free(r);
}

uint16_t ibemu_routes_lid(const struct ibemu_routes *r, uint32_t node,
			  unsigned port)
{
	uint32_t next;

	if (node >= r->nnodes)
		return 0;
	/* The slots of 'node' end where those of the next node begin. */
	next = node + 1 < r->nnodes ? r->port_base[node + 1] : r->nslots;
	if (port >= next - r->port_base[node])
		return 0;
	return r->port_lid[r->port_base[node] + port];
}

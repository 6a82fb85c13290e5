// SPDX-License-Identifier: MIT
/*
 * Routes and their LID assignment, shared by every engine: nodes in the
 * graph's order, one LID per switch and one per HCA port from 1 on, so a
 * fabric always gets the same LIDs, unless a caller (an SM with its
 * guid2lid file) asks for some LIDs itself. The LFTs start empty; an
 * engine (routing.h) fills them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routes.h"
#include "util.h"

/* LIDs a node takes: one for a switch (port 0), 2^lmc per HCA port. */
static uint32_t node_lids(const struct ibemu_graph *g,
			  const struct ibemu_graph_node *n)
{
	return n->type == IBEMU_GRAPH_SWITCH ? 1
					     : (uint32_t)n->nports << g->lmc;
}

/* Whether the block of 'count' LIDs from 'lid' is valid and free. */
static int block_free(const uint8_t *taken, uint32_t lid, uint32_t count)
{
	uint32_t i;

	if (!lid || lid % count || lid + count - 1 > IBEMU_LID_UNICAST_MAX)
		return 0;
	for (i = 0; i < count; i++)
		if (taken[lid + i])
			return 0;
	return 1;
}

/*
 * The LID of every LID-taking slot (a switch's port 0, each HCA port), in
 * node order: first the LIDs 'want' asks for that are valid and not asked
 * for already, then the lowest free LIDs for the rest. Returns the highest
 * LID given, or 0 with nothing written for -ERANGE (more ports than LIDs).
 */
static uint32_t pick_lids(const struct ibemu_graph *g, ibemu_lid_want_fn want,
			  void *ctx, uint16_t *slot_lid, uint8_t *taken)
{
	uint32_t i, slot, max = 0, next = 1, count, k;
	unsigned p, first, last;
	uint16_t w;

	for (int pass = 0; pass < 2; pass++) {
		for (i = 0, slot = 0; i < g->nnodes; i++) {
			const struct ibemu_graph_node *n = &g->nodes[i];

			first = n->type == IBEMU_GRAPH_SWITCH ? 0 : 1;
			last = n->type == IBEMU_GRAPH_SWITCH ? 0 : n->nports;
			count = n->type == IBEMU_GRAPH_SWITCH ? 1u
							      : 1u << g->lmc;
			for (p = first; p <= last; p++) {
				if (pass == 0) {
					w = want ? want(ctx, i, p) : 0;
					if (block_free(taken, w, count)) {
						memset(taken + w, 1, count);
						slot_lid[slot + p] = w;
					}
					continue;
				}
				if (slot_lid[slot + p])
					continue;
				/* The lowest free block, aligned (a switch's
				 * single LID may fill a hole before it). */
				for (k = next; k <= IBEMU_LID_UNICAST_MAX &&
					       !block_free(taken, k, count);
				     k += k % count ? count - k % count : 1)
					;
				if (k > IBEMU_LID_UNICAST_MAX)
					return 0;
				memset(taken + k, 1, count);
				slot_lid[slot + p] = (uint16_t)k;
				while (next <= IBEMU_LID_UNICAST_MAX &&
				       taken[next])
					next++;
			}
			slot += n->nports + 1u;
		}
	}
	for (i = 1; i <= IBEMU_LID_UNICAST_MAX; i++)
		if (taken[i])
			max = i;
	return max;
}

static void assign_lids(const struct ibemu_graph *g, struct ibemu_routes *r,
			const uint16_t *slot_lid)
{
	uint32_t i, slot = 0, k, count = 1u << g->lmc;
	uint16_t lid;
	unsigned p;

	for (i = 0; i < g->nnodes; i++) {
		const struct ibemu_graph_node *n = &g->nodes[i];

		r->port_base[i] = slot;
		if (n->type == IBEMU_GRAPH_SWITCH) {
			lid = slot_lid[slot];
			r->lid_node[lid] = i;
			r->lid_port[lid] = 0;
			for (p = 0; p <= n->nports; p++)
				r->port_lid[slot + p] = lid;
		} else {
			r->port_lid[slot] = 0;
			for (p = 1; p <= n->nports; p++) {
				lid = slot_lid[slot + p];
				for (k = 0; k < count; k++) {
					r->lid_node[lid + k] = i;
					r->lid_port[lid + k] = (uint8_t)p;
				}
				r->port_lid[slot + p] = lid;
			}
		}
		slot += n->nports + 1u;
	}
}

int ibemu_routes_create(const struct ibemu_graph *g, struct ibemu_routes **out)
{
	return ibemu_routes_create_lids(g, NULL, NULL, out);
}

int ibemu_routes_create_lids(const struct ibemu_graph *g,
			     ibemu_lid_want_fn want, void *ctx,
			     struct ibemu_routes **out)
{
	struct ibemu_routes *r = NULL;
	uint64_t lids = 0, slots = 0;
	uint16_t *slot_lid;
	uint8_t *taken;
	uint32_t i, nlids, max;

	for (i = 0; i < g->nnodes; i++) {
		lids += node_lids(g, &g->nodes[i]);
		slots += g->nodes[i].nports + 1u;
	}
	if (lids > IBEMU_LID_UNICAST_MAX || g->lmc > IBEMU_LMC_MAX)
		return -ERANGE;
	slot_lid = calloc(slots ? slots : 1, sizeof(*slot_lid));
	taken = calloc(IBEMU_LID_UNICAST_MAX + 1, 1);
	if (!slot_lid || !taken)
		goto err_alloc;
	max = pick_lids(g, want, ctx, slot_lid, taken);
	if (lids && !max) {
		free(slot_lid);
		free(taken);
		return -ERANGE;
	}
	nlids = max + 1; /* LID 0 is reserved but indexed */

	r = calloc(1, sizeof(*r));
	if (!r)
		goto err_alloc;
	r->nnodes = g->nnodes;
	r->nlayers = 1;
	r->lmc = g->lmc;
	r->max_lid = (uint16_t)max;
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
	assign_lids(g, r, slot_lid);
	free(slot_lid);
	free(taken);
	*out = r;
	return 0;

err_alloc:
	free(slot_lid);
	free(taken);
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
	free(r->sl);
	free(r->lid_row);
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

uint8_t ibemu_routes_sl(const struct ibemu_routes *r, uint16_t slid,
			uint16_t dlid)
{
	uint32_t row;

	if (!r->sl || slid > r->max_lid || dlid > r->max_lid)
		return 0;
	row = r->lid_row[slid];
	if (row == IBEMU_NONE)
		return 0;
	return r->sl[(size_t)row * (r->max_lid + 1u) + dlid];
}

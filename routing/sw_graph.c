// SPDX-License-Identifier: MIT
/*
 * The switch graph min-hop and up/down search: switches numbered in node
 * order with their switch-to-switch cables in port order, where each LID
 * is delivered, and the port-balancing choice both engines make among the
 * cables they allow (counts of HCA and switch LIDs per cable).
 */
#include <errno.h>
#include <stdlib.h>

#include "routing_int.h"

void ibemu__sw_graph_fini(struct ibemu__sw_graph *sg)
{
	free(sg->link);
	free(sg->first);
	free(sg->sw_index);
	free(sg->sw_node);
}

/*
 * Numbers the switches and lists each one's switch-to-switch cables in
 * port order, so that scanning them visits the lowest port first.
 */
int ibemu__sw_graph_init(struct ibemu__sw_graph *sg,
			 const struct ibemu_graph *g)
{
	uint32_t i, s, nlinks = 0;
	unsigned p;

	sg->g = g;
	sg->r = NULL;
	sg->nsw = 0;
	sg->sw_index = malloc((g->nnodes ? g->nnodes : 1) * sizeof(uint32_t));
	if (!sg->sw_index)
		return -ENOMEM;
	for (i = 0; i < g->nnodes; i++) {
		const struct ibemu_graph_node *n = &g->nodes[i];

		if (n->type != IBEMU_GRAPH_SWITCH) {
			sg->sw_index[i] = IBEMU_NONE;
			continue;
		}
		sg->sw_index[i] = sg->nsw++;
		for (p = 1; p <= n->nports; p++)
			nlinks += ibemu__graph_is_switch(g,
							 n->ports[p].peer_node);
	}
	sg->nlinks = nlinks;
	sg->sw_node = malloc((sg->nsw ? sg->nsw : 1) * sizeof(uint32_t));
	sg->first = malloc((sg->nsw + 1) * sizeof(uint32_t));
	sg->link = calloc(nlinks ? nlinks : 1, sizeof(*sg->link));
	if (!sg->sw_node || !sg->first || !sg->link)
		return -ENOMEM;
	nlinks = 0;
	for (i = 0; i < g->nnodes; i++) {
		const struct ibemu_graph_node *n = &g->nodes[i];

		s = sg->sw_index[i];
		if (s == IBEMU_NONE)
			continue;
		sg->sw_node[s] = i;
		sg->first[s] = nlinks;
		for (p = 1; p <= n->nports; p++) {
			uint32_t peer = n->ports[p].peer_node;

			if (!ibemu__graph_is_switch(g, peer))
				continue;
			sg->link[nlinks].peer = sg->sw_index[peer];
			sg->link[nlinks].port = (uint8_t)p;
			nlinks++;
		}
	}
	sg->first[sg->nsw] = nlinks;
	return 0;
}

int ibemu__sw_graph_start(struct ibemu__sw_graph *sg, struct ibemu_routes *r)
{
	uint32_t l;

	if (r->nnodes != sg->g->nnodes)
		return -EINVAL;
	sg->r = r;
	for (l = 0; l < sg->nlinks; l++) {
		sg->link[l].hca_lids = 0;
		sg->link[l].sw_lids = 0;
	}
	return 0;
}

/*
 * The switch a LID is delivered by, and the port it delivers through: the
 * switch itself and port 0 for a switch's LID, the switch an HCA port is
 * cabled to and the port of that cable for an HCA's. IBEMU_NONE when no
 * switch delivers it (an HCA port cabled to nothing or to another HCA).
 */
uint32_t ibemu__sw_graph_dest(const struct ibemu__sw_graph *sg, uint16_t lid,
			      uint8_t *port)
{
	uint32_t node = sg->r->lid_node[lid];
	const struct ibemu_graph_port *gp;

	if (sg->sw_index[node] != IBEMU_NONE) {
		*port = 0;
		return sg->sw_index[node];
	}
	gp = &sg->g->nodes[node].ports[sg->r->lid_port[lid]];
	if (!ibemu__graph_is_switch(sg->g, gp->peer_node))
		return IBEMU_NONE;
	*port = gp->peer_port;
	return sg->sw_index[gp->peer_node];
}

/*
 * A cable's load as one key: a cable carries less than another with fewer
 * HCA LIDs, as OpenSM does not count switch LIDs in its port balancing
 * (they carry management traffic only); then with fewer switch LIDs, so
 * those spread too. HCA LIDs in the high half, switch LIDs in the low: a
 * cable carries each LID once at most, and LIDs are 16 bits, so each count
 * fits its half.
 */
static inline uint32_t load_key(const struct ibemu__sw_link *l)
{
	return l->hca_lids << 16 | l->sw_lids;
}

/*
 * The least of the keys, and in *tied the candidates that have it (bit c
 * for key[c]; n <= 64).
 */
static inline uint32_t least(const uint32_t *key, uint32_t n, uint64_t *tied)
{
	uint32_t min = key[0], c;
	uint64_t mask = 0;

	for (c = 1; c < n; c++)
		min = key[c] < min ? key[c] : min;
	for (c = 0; c < n; c++)
		mask |= (uint64_t)(key[c] == min) << c;
	*tied = mask;
	return min;
}

/* The first of the least keys, by a scan: for more than 64 candidates. */
static inline uint32_t least_scan(const uint32_t *key, uint32_t n)
{
	uint32_t best = 0, c;

	for (c = 1; c < n; c++)
		if (key[c] < key[best])
			best = c;
	return best;
}

void ibemu__sw_graph_route_run(struct ibemu__sw_graph *sg, uint32_t s,
			       const struct ibemu__sw_run *run,
			       const uint32_t *cand, uint32_t ncand)
{
	/* A switch has at most 255 ports: its candidates' loads, kept here
	 * while the run is routed, and written back once. */
	uint32_t key[256];
	uint8_t *lft = sg->r->lft[sg->sw_node[s]];
	uint32_t c, i, best;
	uint64_t tied = 0;

	IBEMU_BUG_ON(ncand == 0 || ncand > 256);
	for (c = 0; c < ncand; c++) {
		const struct ibemu__sw_link *l = &sg->link[cand[c]];

		IBEMU_BUG_ON(l < sg->link + sg->first[s] ||
			     l >= sg->link + sg->first[s + 1]);
		IBEMU_BUG_ON(l->hca_lids > 0xffff || l->sw_lids > 0xffff);
		key[c] = load_key(l);
	}
	/*
	 * Each LID takes the first of the least loaded cables, which then
	 * carries more than the others tied with it: those stay the least
	 * loaded, so one scan serves as many LIDs as cables tie.
	 */
	for (i = 0; i < run->n; i++) {
		if (ncand > 64) {
			best = least_scan(key, ncand);
		} else {
			if (!tied)
				least(key, ncand, &tied);
			best = (uint32_t)__builtin_ctzll(tied);
			tied &= tied - 1;
		}
		lft[run->lid[i]] = sg->link[cand[best]].port;
		key[best] += run->to_switch[i] ? 1u : 1u << 16;
	}
	for (c = 0; c < ncand; c++) {
		struct ibemu__sw_link *l = &sg->link[cand[c]];

		l->hca_lids = key[c] >> 16;
		l->sw_lids = key[c] & 0xffff;
	}
}

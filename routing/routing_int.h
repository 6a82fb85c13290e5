/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the routing engines: the engines the registry lists,
 * and the switch graph that min-hop and up/down search, with where a LID is
 * delivered and the port-balancing choice both make (sw_graph.c; the rules
 * are in routing/README.md). Not for users of routing/.
 */
#ifndef IBEMU_ROUTING_INT_H
#define IBEMU_ROUTING_INT_H

#include <stdint.h>

#include "graph.h"
#include "routes.h"
#include "routing.h"
#include "util.h"

/* The engines, each defined in its own file and listed in registry.c. */
extern const struct ibemu_routing_engine_ops ibemu__routing_minhop;
extern const struct ibemu_routing_engine_ops ibemu__routing_updown;
extern const struct ibemu_routing_engine_ops ibemu__routing_ftree;
extern const struct ibemu_routing_engine_ops ibemu__routing_dor;
extern const struct ibemu_routing_engine_ops ibemu__routing_dfsssp;

/* One switch-to-switch cable as seen from one of its ends. */
struct ibemu__sw_link {
	uint32_t peer;	   /* switch index of the far end */
	uint32_t hca_lids; /* HCA LIDs routed out of this port so far */
	uint32_t sw_lids;  /* switch LIDs routed out of this port so far */
	uint8_t port;	   /* local port */
};

/*
 * The switches of a graph, numbered 0..nsw-1 in node order (so switch
 * indices compare as node indices do), and their cables to other switches.
 */
struct ibemu__sw_graph {
	const struct ibemu_graph *g; /* borrowed */
	struct ibemu_routes *r;	     /* borrowed during a build; LFTs filled */
	uint32_t nsw;
	uint32_t nlinks;    /* cable ends: each cable counts from both */
	uint32_t *sw_node;  /* switch index -> node */
	uint32_t *sw_index; /* node -> switch index, IBEMU_NONE for an HCA */
	/* Cables of switch s, in port order: link[first[s]] .. first[s + 1]. */
	uint32_t *first;
	struct ibemu__sw_link *link;
};

static inline int ibemu__graph_is_switch(const struct ibemu_graph *g,
					 uint32_t node)
{
	return node != IBEMU_NONE && g->nodes[node].type == IBEMU_GRAPH_SWITCH;
}

/* Whether switch 'node' has an HCA cabled to it (a leaf). */
static inline int ibemu__graph_has_hca(const struct ibemu_graph *g,
				       uint32_t node)
{
	unsigned p;

	for (p = 1; p <= g->nodes[node].nports; p++) {
		uint32_t peer = g->nodes[node].ports[p].peer_node;

		if (peer != IBEMU_NONE && !ibemu__graph_is_switch(g, peer))
			return 1;
	}
	return 0;
}

/* Builds the switch graph of 'g'. Returns 0 or -ENOMEM; call
 * ibemu__sw_graph_fini() either way. */
int ibemu__sw_graph_init(struct ibemu__sw_graph *sg,
			 const struct ibemu_graph *g);
void ibemu__sw_graph_fini(struct ibemu__sw_graph *sg);

/*
 * Starts a build of 'r': checks that 'r' is of this graph (0 or -EINVAL)
 * and sets every cable's counts back to zero, so each build balances from
 * scratch.
 */
int ibemu__sw_graph_start(struct ibemu__sw_graph *sg, struct ibemu_routes *r);

/*
 * The switch index that delivers 'lid' and, in *port, the port it delivers
 * through (0 for the switch's own LID); IBEMU_NONE if no switch does.
 */
uint32_t ibemu__sw_graph_dest(const struct ibemu__sw_graph *sg, uint16_t lid,
			      uint8_t *port);

/*
 * A run of LIDs in LID order that one destination switch delivers, routed
 * switch by switch (ibemu__sw_graph_route_run()) rather than LID by LID:
 * a switch's choices depend only on its own cables' counts, so the order
 * of switches does not matter, only the order of LIDs at each switch,
 * which a run keeps. Engines fill it while the destination stays.
 */
#define IBEMU__SW_RUN_MAX 64

struct ibemu__sw_run {
	uint32_t n;
	uint16_t lid[IBEMU__SW_RUN_MAX];
	uint8_t to_switch[IBEMU__SW_RUN_MAX];
};

/*
 * Routes every LID of 'run' at switch 's', one after the other, each
 * through the least loaded of the cables link[cand[0..ncand-1]] (given in
 * port order; at least one; the lower port on a tie): writes the LFT
 * entries and counts each LID on the cable chosen.
 */
void ibemu__sw_graph_route_run(struct ibemu__sw_graph *sg, uint32_t s,
			       const struct ibemu__sw_run *run,
			       const uint32_t *cand, uint32_t ncand);

/* The VLs an engine may put layers on: the graph's data VLs, 1..15. */
static inline unsigned ibemu__graph_vls(const struct ibemu_graph *g)
{
	return !g->vls ? 1 : g->vls > 15 ? 15 : g->vls;
}

/*
 * Gives 'r' a table of SLs (layers.c), every path on SL 0, one row per
 * switch; replaces an earlier one. 0 or -ENOMEM (then 'r' has none).
 */
int ibemu__routes_sl_alloc(const struct ibemu_graph *g, struct ibemu_routes *r);

/*
 * Puts every path of 'r' (from each switch with HCAs to each LID, through
 * the LFTs) on a virtual layer, the lowest whose channel dependency graph
 * stays acyclic with it (layers.c; rules in routing/README.md), and
 * records it as the path's SL. Returns 0 (r->nlayers set), -ENOSPC if
 * 'max_layers' do not suffice, -ELOOP for a path that loops, -EINVAL,
 * -ENOMEM; on error 'r' has no SL table (every path on SL 0).
 */
int ibemu__routes_layer(const struct ibemu_graph *g, struct ibemu_routes *r,
			unsigned max_layers);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Test routes: the LIDs and linear forwarding tables (LFTs) the daemon
 * applies until a subnet manager computes its own. LIDs are assigned in
 * declaration order; every switch gets a min-hop LFT with port balancing or
 * an up/down one (deadlock-free on any topology); fabric/README.md states
 * the rules so that every route can be predicted.
 */
#ifndef IBEMU_ROUTE_H
#define IBEMU_ROUTE_H

#include <stdint.h>

#include "topo.h"

/* IBA 4.1.3: unicast LIDs are 0x0001..0xbfff; LID 0 is reserved. */
#define IBEMU_LID_UNICAST_MAX 0xbfffu
/*
 * An LFT entry that routes nowhere: no switch has port 255, and IBA
 * 14.2.5.10 has packets to an invalid port dropped (OpenSM writes 255 too).
 */
#define IBEMU_LFT_NO_ROUTE 255u

struct ibemu_routes {
	uint32_t nnodes;  /* nodes of the topology they were computed for */
	uint16_t max_lid; /* highest LID assigned; 0 for an empty fabric */
	/* Per node: index of its port 0 in port_lid (nports + 1 slots each). */
	uint32_t *port_base;
	uint32_t nslots; /* entries of port_lid */
	/*
	 * LID of (node, port). IBA 4.1: a switch has one LID, that of its
	 * port 0, shared by all its ports, so every slot of a switch holds
	 * it; an HCA has one per port and 0 in its unused port 0 slot.
	 */
	uint16_t *port_lid;
	uint32_t *lid_node; /* [max_lid + 1]: owner node, IBEMU_NONE if none */
	uint8_t *lid_port;  /* [max_lid + 1]: its port (0 for a switch) */
	/*
	 * Per node: a switch's LFT, [max_lid + 1] output ports indexed by
	 * destination LID, IBEMU_LFT_NO_ROUTE where there is no route and 0
	 * for the switch's own LID. NULL for an HCA.
	 */
	uint8_t **lft;
};

/*
 * Assigns the LIDs of 't' and allocates every switch's LFT with no route
 * at all. Returns 0 and the routes in *out (owned by the caller, freed with
 * ibemu_routes_destroy()), -ERANGE if the fabric needs more unicast LIDs
 * than IBA allows, or -ENOMEM.
 */
int ibemu_routes_create(const struct ibemu_topo *t, struct ibemu_routes **out);

/*
 * As ibemu_routes_create(), then fills the LFTs with min-hop routes,
 * balancing destination LIDs over the ports that lead one hop closer
 * (rules in fabric/README.md). Same returns. Runs in O(LIDs x switch
 * links); reads 't' only, so calls on different routes may run in any
 * threads.
 */
int ibemu_routes_minhop(const struct ibemu_topo *t, struct ibemu_routes **out);

/*
 * As ibemu_routes_create(), then fills the LFTs with up/down (Autonet)
 * routes: cables get a direction from a ranking of the switches, and no
 * route takes an up move after a down move, so the routes cannot deadlock
 * on credits on any topology, even on one VL; among the allowed ports the
 * choice is min-hop's (rules in fabric/README.md). Routes may be longer
 * than min-hop's. Same returns, cost and threading as ibemu_routes_minhop().
 */
int ibemu_routes_updown(const struct ibemu_topo *t, struct ibemu_routes **out);

void ibemu_routes_destroy(struct ibemu_routes *r);

/* LID of port 'port' of 'node'; 0 if there is none (HCA port 0, range). */
uint16_t ibemu_routes_lid(const struct ibemu_routes *r, uint32_t node,
			  unsigned port);

#endif

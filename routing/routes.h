/* SPDX-License-Identifier: MIT */
/*
 * Routes: the LIDs of every port and the linear forwarding table (LFT) of
 * every switch of a graph, as a plain result that anyone can load (the
 * engine, an SM's LFT programming, a dump). LIDs are assigned here, in the
 * graph's node order, the same way for every engine; the engines
 * (routing.h) fill the LFTs. routing/README.md states the rules so that
 * every route can be predicted.
 */
#ifndef IBEMU_ROUTES_H
#define IBEMU_ROUTES_H

#include <stdint.h>

#include "graph.h"

/* IBA 4.1.3: unicast LIDs are 0x0001..0xbfff; LID 0 is reserved. */
#define IBEMU_LID_UNICAST_MAX 0xbfffu
/*
 * An LFT entry that routes nowhere: no switch has port 255, and IBA
 * 14.2.5.10 has packets to an invalid port dropped (OpenSM writes 255 too).
 */
#define IBEMU_LFT_NO_ROUTE 255u

struct ibemu_routes {
	uint32_t nnodes;  /* nodes of the graph they were computed for */
	uint16_t max_lid; /* highest LID assigned; 0 for an empty fabric */
	uint8_t lmc;	  /* the graph's: an HCA port has 2^lmc LIDs */
	/* Per node: index of its port 0 in port_lid (nports + 1 slots each). */
	uint32_t *port_base;
	uint32_t nslots; /* entries of port_lid */
	/*
	 * LID of (node, port). IBA 4.1: a switch has one LID, that of its
	 * port 0, shared by all its ports, so every slot of a switch holds
	 * it; an HCA has one per port (its base LID: with LMC the port also
	 * answers the 2^lmc - 1 after it) and 0 in its unused port 0 slot.
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
	/*
	 * Virtual layers, for engines that break credit loops with VLs (dor,
	 * dfsssp; routing/README.md): 'nlayers' SLs are used (1 for the
	 * other engines), SL i meant for VL i. The SL of a packet depends on
	 * the switch it enters the fabric by and its destination LID (routes
	 * are per destination, so every source on one switch shares the
	 * path): sl[lid_row[source LID] * (max_lid + 1) + destination LID].
	 * lid_row[] gives each LID the row of its switch (a switch's own, an
	 * HCA port's that of the switch it is cabled to; IBEMU_NONE for none).
	 * Both NULL when every path is on SL 0. Read them through
	 * ibemu_routes_sl().
	 */
	uint8_t nlayers;
	uint32_t nrows;
	uint32_t *lid_row;
	uint8_t *sl;
};

/*
 * Assigns the LIDs of 'g' (rules in routing/README.md) and allocates every
 * switch's LFT with no route at all. Returns 0 and the routes in *out
 * (owned by the caller, freed with ibemu_routes_destroy()), -ERANGE if the
 * graph needs more unicast LIDs than IBA allows, or -ENOMEM. Reads 'g'
 * only, so calls on one graph may run in any threads.
 */
int ibemu_routes_create(const struct ibemu_graph *g, struct ibemu_routes **out);

/*
 * The LID a caller wants for port 'port' of node 'node' (port 0 of a
 * switch), or 0 for any: an SM keeps the LIDs of its last sweep or of its
 * guid2lid file.
 */
typedef uint16_t (*ibemu_lid_want_fn)(void *ctx, uint32_t node, unsigned port);

/*
 * As ibemu_routes_create(), with the LIDs 'want' names where they are
 * valid unicast LIDs not named before (in node order); the other ports
 * get the lowest LIDs left, in node order. LIDs may then have holes:
 * lid_node is IBEMU_NONE there, and max_lid the highest LID given.
 */
int ibemu_routes_create_lids(const struct ibemu_graph *g,
			     ibemu_lid_want_fn want, void *ctx,
			     struct ibemu_routes **out);

void ibemu_routes_destroy(struct ibemu_routes *r);

/* LID of port 'port' of 'node'; 0 if there is none (HCA port 0, range). */
uint16_t ibemu_routes_lid(const struct ibemu_routes *r, uint32_t node,
			  unsigned port);

/*
 * The SL a packet from 'slid' to 'dlid' takes on these routes: its path's
 * layer, 0 for engines without layers, LIDs out of range or unowned.
 */
uint8_t ibemu_routes_sl(const struct ibemu_routes *r, uint16_t slid,
			uint16_t dlid);

#endif

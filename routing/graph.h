/* SPDX-License-Identifier: MIT */
/*
 * The graph the routing engines work on: nodes (switches and HCAs) with
 * their ports and, per port, the node and port at the far end of its cable.
 * It says nothing about where it came from: ibemu_graph_from_topo() builds
 * it from a declared topology, and a subnet manager can build the same one
 * from what its directed-route SMPs discover.
 */
#ifndef IBEMU_GRAPH_H
#define IBEMU_GRAPH_H

#include <stdint.h>

struct ibemu_topo;

/* IBA 14.2.5.3: NumPorts counts physical ports 1..254. */
#define IBEMU_GRAPH_MAX_PORTS 254u

enum ibemu_graph_node_type {
	IBEMU_GRAPH_SWITCH,
	IBEMU_GRAPH_HCA,
};

struct ibemu_graph_port {
	uint32_t peer_node; /* node at the far end; IBEMU_NONE: no cable */
	uint8_t peer_port;  /* its port there */
};

struct ibemu_graph_node {
	enum ibemu_graph_node_type type;
	uint8_t nports; /* ports 1..nports */
	uint64_t guid;	/* NodeGUID; the engines do not read it (yet) */
	/*
	 * [nports + 1], indexed by port number. Port 0 (a switch's
	 * management port) is never cabled.
	 */
	struct ibemu_graph_port *ports;
};

/*
 * Nodes are numbered 0..nnodes-1 in the order they were added. That order
 * matters: LIDs are assigned in it (routes.h), and engines break ties by
 * it, so a graph built twice in the same order routes the same way.
 */
/* IBA 14.2.5.6: PortInfo LMC is 3 bits. */
#define IBEMU_LMC_MAX 7

struct ibemu_graph {
	uint32_t nnodes;
	/*
	 * Data VLs every link can operate (the least VLCap of the cabled
	 * ports, IBA 14.2.5.6: PortInfo:VLCap, as OperationalVLs will be
	 * set), for engines that put paths on virtual layers; 0 (unknown,
	 * as ibemu_graph_create() leaves it) counts as 1.
	 */
	uint8_t vls;
	/*
	 * LID Mask Control for HCA ports (IBA 7.11.1): each takes 2^lmc
	 * consecutive LIDs, the first a multiple of 2^lmc, all routed (one
	 * path each, so a source can pick among them); a switch keeps one.
	 * 0 unless the caller sets it, at most IBEMU_LMC_MAX.
	 */
	uint8_t lmc;
	uint32_t nodes_cap;
	struct ibemu_graph_node *nodes;
};

/* An empty graph in *out, freed with ibemu_graph_destroy(); 0 or -ENOMEM. */
int ibemu_graph_create(struct ibemu_graph **out);

void ibemu_graph_destroy(struct ibemu_graph *g);

/*
 * Appends a node with 'nports' ports (1..IBEMU_GRAPH_MAX_PORTS), none cabled. Returns 0 and
 * its index in *node, -EINVAL for a bad type or port count, or -ENOMEM.
 */
int ibemu_graph_add_node(struct ibemu_graph *g, enum ibemu_graph_node_type type,
			 unsigned nports, uint64_t guid, uint32_t *node);

/*
 * Cables port 'pa' of node 'a' to port 'pb' of node 'b' (both ends are
 * recorded). Returns 0, or -EINVAL if a node or port does not exist, is
 * port 0, is already cabled, or both ends are the same port.
 */
int ibemu_graph_connect(struct ibemu_graph *g, uint32_t a, unsigned pa,
			uint32_t b, unsigned pb);

/*
 * The graph of topology 't': its nodes in the topology's order (so node
 * indices, and therefore LIDs, are the topology's), their port counts,
 * GUIDs and cables. Returns 0 and the graph in *out (the caller's, see
 * ibemu_graph_destroy()) or -ENOMEM. Defined in graph_topo.c, the only
 * file of routing/ that knows topologies.
 */
int ibemu_graph_from_topo(const struct ibemu_topo *t, struct ibemu_graph **out);

#endif

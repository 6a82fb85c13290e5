// SPDX-License-Identifier: MIT
/*
 * Programming the subnet, in OpenSM's order (osm_state_mgr): the routing
 * engine's LIDs into the PortInfo of every HCA port and switch port 0 (with
 * the SM's LID), NeighborMTU and OperationalVLs of every link as both ends
 * allow, SwitchInfo's LinearFDBTop and the LFT blocks of 64 LIDs, a port
 * of a link in Init armed by that same Set; then every Armed port goes to
 * Active (IBA 14.2.5.6: the SM arms the subnet before it activates it). Each Set
 * carries the PortInfo last read or answered, so fields the SM does not
 * manage are written back as they are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing.h"
#include "sm.h"

#define NODE_TYPE_SWITCH 2
/* HOQLife: 4.096 us x 2^value (IBA 14.2.5.6), as OpenSM sets it. */
#define HOQ_LIFE_SWITCH 0x12
#define HOQ_LIFE_LEAF	0x10
#define STATE_INIT	2 /* IBA 14.2.5.6 PortState */
#define STATE_ARMED	3
#define STATE_ACTIVE	4
#define SUBNET_TIMEOUT	18 /* 4.096 us * 2^18 = 1 s, OpenSM's default */
/* A VL's turn in the arbitration: 64 units of 64 bytes, one 4 KiB MTU. */
#define VLARB_WEIGHT 64

static uint64_t key(uint32_t node, unsigned port)
{
	return (uint64_t)node << 8 | port;
}

static int is_switch(const struct sm_node *n)
{
	return n->ni.node_type == NODE_TYPE_SWITCH;
}

/* A Set's answer: the attribute as the node now has it. */
static void on_port_set(struct sm *sm, int status,
			const struct ibemu_mad_smp *smp, void *arg,
			uint64_t arg2)
{
	struct sm_port *p = &sm->nodes[arg2 >> 8].ports[arg2 & 0xff];

	(void)arg;
	if (status || smp->hdr.status ||
	    ibemu_mad_port_info_decode(smp->data, sizeof(smp->data), &p->pi) <
		    0)
		sm->errors++;
}

static void on_set(struct sm *sm, int status, const struct ibemu_mad_smp *smp,
		   void *arg, uint64_t arg2)
{
	(void)arg;
	(void)arg2;
	if (status || smp->hdr.status)
		sm->errors++;
}

static void port_set(struct sm *sm, uint32_t n, unsigned port,
		     const struct ibemu_mad_port_info *pi)
{
	uint8_t data[IBEMU_SMP_DATA_LEN] = {0};
	const struct sm_node *node = &sm->nodes[n];
	const struct sm_port *p = &node->ports[port];
	/* An HCA's port by its own route; a switch's all by the switch's. */
	const uint8_t *path = is_switch(node) ? node->path : p->path;
	unsigned hops = is_switch(node) ? node->hops : p->hops;

	if (ibemu_mad_port_info_encode(pi, data, sizeof(data)) < 0 ||
	    sm_smp(sm, path, hops, IBEMU_MAD_METHOD_SET,
		   IBEMU_SMP_ATTR_PORT_INFO, port, data, on_port_set, NULL,
		   key(n, port)))
		sm->errors++;
}

/* The lesser of two 4-bit enumerations, 0 (unknown) counting as none. */
static uint8_t both(uint8_t a, uint8_t b)
{
	return a && b && b < a ? b : a;
}

/* LIDs, the SM's LID and the link parameters of node 'n'. */
static void program_ports(struct sm *sm, uint32_t n)
{
	struct sm_node *node = &sm->nodes[n];
	unsigned port;

	for (port = 0; port <= node->ni.num_ports; port++) {
		struct sm_port *p = &node->ports[port];
		struct ibemu_mad_port_info pi;

		if (!p->have_pi)
			continue;
		pi = p->pi;
		/* A linked port in Init is armed by the same Set (OpenSM's
		 * link setup): one SMP less per port. */
		pi.port_state = port && p->pi.port_state == STATE_INIT
					? STATE_ARMED
					: 0; /* no change */
		pi.port_phys_state = 0;
		if (!is_switch(node) || port == 0) {
			pi.lid = ibemu_routes_lid(sm->routes, node->graph,
						  is_switch(node) ? 0 : port);
			pi.master_sm_lid = sm->sm_lid;
			/* IBA 14.2.5.6: an HCA port answers 2^LMC LIDs; a
			 * switch's port 0 (base SP0) has LMC 0. */
			pi.lmc = is_switch(node) ? 0 : (uint8_t)sm->lmc;
			pi.subnet_timeout = SUBNET_TIMEOUT;
		}
		if (port && p->peer != UINT32_MAX) {
			const struct sm_port *q =
				&sm->nodes[p->peer].ports[p->peer_port];

			if (q->have_pi) {
				pi.neighbor_mtu =
					both(pi.mtu_cap, q->pi.mtu_cap);
				pi.operational_vls =
					both(pi.vl_cap, q->pi.vl_cap);
			} else {
				pi.neighbor_mtu = pi.mtu_cap;
				pi.operational_vls = pi.vl_cap;
			}
			/* IBA 18.2.5.4: how long a packet may wait at the
			 * head of an output queue; OpenSM's defaults, shorter
			 * towards a CA (leaf_head_of_queue_lifetime 0x10) than
			 * between switches (head_of_queue_lifetime 0x12). */
			if (is_switch(node))
				pi.hoq_life = is_switch(&sm->nodes[p->peer])
						      ? HOQ_LIFE_SWITCH
						      : HOQ_LIFE_LEAF;
		}
		port_set(sm, n, port, &pi);
	}
}

/* SwitchInfo's LinearFDBTop and every LFT block up to it. */
static void program_lft(struct sm *sm, uint32_t n)
{
	struct sm_node *node = &sm->nodes[n];
	const uint8_t *lft = sm->routes->lft[node->graph];
	uint8_t data[IBEMU_SMP_DATA_LEN];
	struct ibemu_mad_switch_info si = node->si;
	struct ibemu_mad_lft block;
	struct sm_lft *old = sm_lft_of(sm, node->ni.node_guid, 0);
	unsigned b, i, lid;
	uint8_t *copy;

	si.linear_fdb_top = sm->routes->max_lid;
	memset(data, 0, sizeof(data));
	if (ibemu_mad_switch_info_encode(&si, data, sizeof(data)) < 0 ||
	    sm_smp(sm, node->path, node->hops, IBEMU_MAD_METHOD_SET,
		   IBEMU_SMP_ATTR_SWITCH_INFO, 0, data, on_set, NULL, 0))
		sm->errors++;
	for (b = 0; b <= sm->routes->max_lid / IBEMU_MAD_LFT_BLOCK; b++) {
		int same = old != NULL;

		for (i = 0; i < IBEMU_MAD_LFT_BLOCK; i++) {
			lid = b * IBEMU_MAD_LFT_BLOCK + i;
			block.port[i] = lid <= sm->routes->max_lid
						? lft[lid]
						: IBEMU_LFT_NO_ROUTE;
			if (same &&
			    block.port[i] != (lid < old->len
						      ? old->port[lid]
						      : IBEMU_LFT_NO_ROUTE))
				same = 0;
		}
		/* Only the blocks that changed since the last sweep. */
		if (same)
			continue;
		sm->lft_blocks++;
		memset(data, 0, sizeof(data));
		if (ibemu_mad_lft_encode(&block, data, sizeof(data)) < 0 ||
		    sm_smp(sm, node->path, node->hops, IBEMU_MAD_METHOD_SET,
			   IBEMU_SMP_ATTR_LFT, b, data, on_set, NULL, 0))
			sm->errors++;
	}
	/* What the switch holds now, for the next sweep. */
	old = sm_lft_of(sm, node->ni.node_guid, 1);
	copy = malloc((size_t)sm->routes->max_lid + 1);
	if (!old || !copy) {
		free(copy);
		sm->errors++;
		return;
	}
	memcpy(copy, lft, (size_t)sm->routes->max_lid + 1);
	free(old->port);
	old->port = copy;
	old->len = (uint32_t)sm->routes->max_lid + 1;
}

/* Data VLs of an OperationalVLs or VLCap value (IBA 14.2.5.6). */
static unsigned data_vls(uint8_t enc)
{
	static const uint8_t vls[] = {0, 1, 2, 4, 8, 15};

	return enc < sizeof(vls) ? vls[enc] : 1;
}

/* The data VLs the link of port 'port' of node 'n' runs, as set above. */
static unsigned link_vls(const struct sm *sm, uint32_t n, unsigned port)
{
	const struct sm_port *p = &sm->nodes[n].ports[port];
	const struct sm_port *q = &sm->nodes[p->peer].ports[p->peer_port];

	return data_vls(q->have_pi ? both(p->pi.vl_cap, q->pi.vl_cap)
				   : p->pi.vl_cap);
}

static void table_set(struct sm *sm, uint32_t n, unsigned port, uint16_t attr,
		      uint32_t mod, const uint8_t *data)
{
	const struct sm_node *node = &sm->nodes[n];
	const uint8_t *path =
		is_switch(node) ? node->path : node->ports[port].path;
	unsigned hops = is_switch(node) ? node->hops : node->ports[port].hops;

	if (sm_smp(sm, path, hops, IBEMU_MAD_METHOD_SET, attr, mod, data,
		   on_set, NULL, 0))
		sm->errors++;
}

/*
 * SL2VL and VL arbitration for routes on virtual layers: the packets of
 * layer i carry SL i and must stay on VL i. IBA 14.2.5.8: a switch has a
 * table per (input port, output port), modifier bits 15-8 and 7-0; a CA
 * port one (the port the SMP enters by). SL i goes to VL i up to the
 * output link's operational VLs, the others to VL 0. IBA 14.2.5.9: the
 * low-priority table gets every data VL with the same weight and the
 * high-priority table none, as OpenSM's defaults without QoS.
 */
static void program_vl_tables(struct sm *sm, uint32_t n)
{
	struct sm_node *node = &sm->nodes[n];
	uint8_t data[IBEMU_SMP_DATA_LEN];
	struct ibemu_mad_sl2vl_table map;
	struct ibemu_mad_vlarb_table arb;
	unsigned in, out, sl, vls, i;

	for (out = 1; out <= node->ni.num_ports; out++) {
		const struct sm_port *p = &node->ports[out];

		if (!p->have_pi || p->peer == UINT32_MAX)
			continue;
		vls = link_vls(sm, n, out);
		for (sl = 0; sl < 16; sl++)
			map.vl[sl] = (uint8_t)(sl < vls ? sl : 0);
		memset(data, 0, sizeof(data));
		if (ibemu_mad_sl2vl_table_encode(&map, data, sizeof(data)) < 0)
			sm->errors++;
		if (!is_switch(node)) {
			table_set(sm, n, out, IBEMU_SMP_ATTR_SL2VL_TABLE, 0,
				  data);
		} else {
			/* From every linked port and the management port. */
			for (in = 0; in <= node->ni.num_ports; in++)
				if (in == 0 ||
				    (node->ports[in].have_pi &&
				     node->ports[in].peer != UINT32_MAX))
					table_set(sm, n, out,
						  IBEMU_SMP_ATTR_SL2VL_TABLE,
						  in << 8 | out, data);
		}
		memset(&arb, 0, sizeof(arb));
		for (i = 0; i < vls && i < IBEMU_MAD_VLARB_BLOCK; i++) {
			arb.entry[i].vl = (uint8_t)i;
			arb.entry[i].weight = VLARB_WEIGHT;
		}
		memset(data, 0, sizeof(data));
		if (ibemu_mad_vlarb_table_encode(&arb, data, sizeof(data)) < 0)
			sm->errors++;
		table_set(sm, n, out, IBEMU_SMP_ATTR_VLARB_TABLE,
			  (uint32_t)IBEMU_MAD_VLARB_LOW_0_31 << 16 |
				  (is_switch(node) ? out : 0),
			  data);
		memset(&arb, 0, sizeof(arb));
		memset(data, 0, sizeof(data));
		if (ibemu_mad_vlarb_table_encode(&arb, data, sizeof(data)) < 0)
			sm->errors++;
		table_set(sm, n, out, IBEMU_SMP_ATTR_VLARB_TABLE,
			  (uint32_t)IBEMU_MAD_VLARB_HIGH_0_31 << 16 |
				  (is_switch(node) ? out : 0),
			  data);
	}
}

/* Takes every linked port in state 'from' to state 'to'. */
static int move_ports(struct sm *sm, uint8_t from, uint8_t to)
{
	uint32_t n;
	unsigned port;

	for (n = 0; n < sm->nnodes; n++) {
		struct sm_node *node = &sm->nodes[n];

		for (port = 1; port <= node->ni.num_ports; port++) {
			struct sm_port *p = &node->ports[port];
			struct ibemu_mad_port_info pi;

			if (!p->have_pi || p->pi.port_state != from)
				continue;
			pi = p->pi;
			pi.port_state = to;
			pi.port_phys_state = 0;
			port_set(sm, n, port, &pi);
		}
	}
	return sm_smp_run(sm);
}

/*
 * The LID a port of graph node 'g' (a switch's: port 0) keeps: the one
 * guid2lid (or the last sweep) gave it, else the one it has now, as an SM
 * that takes over from another keeps the subnet's LIDs.
 */
static uint16_t wanted_lid(void *ctx, uint32_t g, unsigned port)
{
	const struct sm *sm = ctx;
	const struct sm_node *node = &sm->nodes[sm->by_graph[g]];
	const struct sm_port *p = &node->ports[is_switch(node) ? 0 : port];
	uint16_t lid = 0;

	if (sm->nguid2lid)
		lid = sm_guid2lid_find(sm, is_switch(node) ? node->ni.port_guid
							   : p->guid);
	if (!lid && p->have_pi)
		lid = p->pi.lid;
	return lid;
}

/*
 * The routing's work in virtual time, a model: SM_ROUTE_ENTRY_PS for each
 * LFT entry computed (every switch, every LID). An estimate, not a
 * measurement of any SM: it makes a heavy sweep's routing take time that
 * grows with the fabric, as it does on a host, where the MADs alone would
 * make it free.
 */
#define SM_ROUTE_ENTRY_PS 10000ull /* 10 ns */

static uint64_t routing_cost_ps(const struct sm *sm)
{
	uint64_t switches = 0;
	uint32_t n;

	for (n = 0; n < sm->nnodes; n++)
		switches += is_switch(&sm->nodes[n]);
	return switches * sm->routes->max_lid * SM_ROUTE_ENTRY_PS;
}

int sm_program(struct sm *sm)
{
	const struct ibemu_routing_engine_ops *ops =
		ibemu_routing_find(sm->routing);
	uint32_t n;
	int ret;

	if (!ops)
		return -EINVAL;
	ret = ibemu_routing_run_lids(ops, sm->graph, wanted_lid, sm,
				     &sm->routes);
	sm_sweep_mark(sm, SM_STEP_ROUTE);
	if (ret)
		return ret;
	sm_compute_ps(routing_cost_ps(sm));
	/* The SM's node is the graph's first: its port has LID 1. */
	sm->sm_lid = ibemu_routes_lid(sm->routes, sm->nodes[0].graph,
				      sm->nodes[0].in_port);
	for (n = 0; n < sm->nnodes; n++) {
		program_ports(sm, n);
		if (is_switch(&sm->nodes[n]))
			program_lft(sm, n);
		/* Only engines with layers need SLs kept on their own VLs. */
		if (sm->routes->sl)
			program_vl_tables(sm, n);
	}
	ret = sm_smp_run(sm);
	sm_sweep_mark(sm, SM_STEP_PROGRAM);
	if (!ret)
		ret = move_ports(sm, STATE_INIT, STATE_ARMED);
	if (!ret)
		ret = move_ports(sm, STATE_ARMED, STATE_ACTIVE);
	sm_sweep_mark(sm, SM_STEP_ACTIVATE);
	return ret;
}

uint8_t sm_path_sl(const struct sm *sm, uint16_t slid, uint16_t dlid)
{
	return sm->routes ? ibemu_routes_sl(sm->routes, slid, dlid) : 0;
}

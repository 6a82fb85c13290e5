/* SPDX-License-Identifier: MIT */
/*
 * Switch model internals shared by the files of switch/: the state a
 * switch owns beyond the engine's link layer (input buffers, the requests
 * each output holds, round-robin pointers, CC settings) and the VL
 * arbiter. Not for other users.
 */
#ifndef IBEMU_SWITCH_INT_H
#define IBEMU_SWITCH_INT_H

#include "node.h"
#include "switch.h"

/* One input (port, VL) whose head packet asks for an output VL. */
struct ibemu_req {
	uint8_t in_port;
	uint8_t in_vl;
};

/* A switch port's relay state: as an input and as an output. */
struct ibemu_swport {
	struct ibemu_pktq inq[IBEMU_NUM_VLS]; /* input buffers per VL */
	/* As an output: who asks for this port, per output VL. */
	struct ibemu_req *reqs[IBEMU_NUM_VLS];
	uint16_t nreqs[IBEMU_NUM_VLS];
	uint8_t rr[IBEMU_NUM_VLS]; /* input after which round-robin starts */
	struct ibemu_switch_port_cc cc;
	/* As an output, for FECN marking (cc_mark.c): blocks queued in the
	 * switch's input buffers for each of its VLs; whether a VL waited
	 * for credit since its last packet left (a victim, not a root); the
	 * eligible packets left to pass before the next marking. */
	uint32_t queued[IBEMU_NUM_VLS];
	uint8_t starved[IBEMU_NUM_VLS];
	uint16_t mark_skip[IBEMU_NUM_VLS];
};

/* A switch: the node model's state (ibemu_node_model()). */
struct ibemu_switch {
	uint16_t max_reqs; /* capacity of each output's request list */
	/* Every output's request lists, in one allocation: one per list
	 * made a large fabric's start fault in a page at every list. */
	struct ibemu_req *req_pool;
	struct ibemu_switch_cc cc;
	struct ibemu_switch_cc_log cc_log;
	struct ibemu_swport port[]; /* 0..NumPorts */
};

/* switch/cc_mark.c */
/* A packet for output VL 'vl' of port 'out' joined (+) or left (-) the
 * switch's input buffers. */
void ibemu__switch_cc_queue(struct ibemu_switch *sw, unsigned out, unsigned vl,
			    int blocks);
/* Output 'pi' (port 'out' of the switch) starts 'pkt' on data VL 'vl':
 * marks FECN as the switch's CC settings say (after dequeuing it). */
void ibemu__switch_cc_depart(struct ibemu_engine *e, struct ibemu_switch *sw,
			     uint32_t pi, struct ibemu_pkt *pkt);

/* switch/vlarb.c */
/*
 * Picks the VL to serve among those set in 'eligible' (bit per VL) by the
 * IBA 7.6.9 VL arbitration tables; -1 if none. Commit the choice with
 * ibemu_vlarb_charge() once the packet is sent.
 */
int ibemu_vlarb_pick(struct ibemu_vlarb *a, uint32_t eligible);
void ibemu_vlarb_charge(struct ibemu_vlarb *a, uint32_t bytes);

#endif

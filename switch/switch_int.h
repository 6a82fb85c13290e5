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

/* An output VL of a switch port: what its arbitration reads. */
struct ibemu_swvl {
	struct ibemu_req *reqs; /* who asks for it: [nreqs] */
	/* For FECN marking (cc_mark.c): blocks queued for it in the
	 * switch's input buffers. */
	uint32_t queued;
	uint16_t nreqs;
	uint8_t rr; /* input after which round-robin starts */
};

/*
 * A switch port's relay state: as an input and as an output. A packet
 * leaving on VL 0 (or 1, 2) reads only the first cache line of its output
 * port (ports are 64-byte aligned): a port's memory is touched at every
 * hop, and cache misses, not instructions, bound the engine on a large
 * fabric.
 */
struct ibemu_swport {
	/* Bit v: out[v].nreqs != 0. Arbitration visits only these VLs. */
	uint16_t req_vls;
	/* For FECN marking (cc_mark.c), bit v: VL v waited for credit since
	 * its last packet left (a victim, not a root). */
	uint16_t starved;
	struct ibemu_switch_port_cc cc;
	struct ibemu_swvl out[IBEMU_NUM_VLS]; /* as an output, per VL */
	struct ibemu_pktq inq[IBEMU_NUM_VLS]; /* input buffers per VL */
	/* For FECN marking: the eligible packets left to pass before the
	 * next marking. */
	uint16_t mark_skip[IBEMU_NUM_VLS];
} __attribute__((aligned(64)));

/* A switch: the node model's state (ibemu_node_model()). */
struct ibemu_switch {
	uint16_t max_reqs; /* capacity of each output's request list */
	/* Every output's request lists, in one allocation: one per list
	 * made a large fabric's start fault in a page at every list. */
	struct ibemu_req *req_pool;
	struct ibemu_switch_cc cc;
	struct ibemu_switch_cc_log cc_log;
	struct ibemu_swport port[]; /* 0..NumPorts; aligned as the struct */
};

/*
 * FECN marking's hooks on the packet path (cc_mark.c), inline: they run
 * at every hop, whether CC is configured or not.
 */

/* A packet for output VL 'vl' of port 'out' joined (+) or left (-) the
 * switch's input buffers. */
static inline void ibemu__switch_cc_queue(struct ibemu_switch *sw, unsigned out,
					  unsigned vl, int blocks)
{
	uint32_t *q = &sw->port[out].out[vl].queued;

	/* An SM may reprogram SL2VL while packets wait: never wrap. */
	if (blocks < 0 && *q < (uint32_t)-blocks)
		*q = 0;
	else
		*q += (uint32_t)blocks;
}

/* Decides whether 'pkt', leaving by output 'pi' (port 'out') after it was
 * dequeued, is marked: the body of ibemu__switch_cc_depart(). */
void ibemu__switch_cc_mark(struct ibemu_engine *e, struct ibemu_switch *sw,
			   uint32_t pi, unsigned out, struct ibemu_pkt *pkt,
			   int victim);

/* Output 'pi' (port 'out' of the switch) starts 'pkt' on its data VL:
 * dequeues it, and marks FECN as the switch's CC settings say. */
static inline void ibemu__switch_cc_depart(struct ibemu_engine *e,
					   struct ibemu_switch *sw, uint32_t pi,
					   unsigned out, struct ibemu_pkt *pkt)
{
	struct ibemu_swport *so = &sw->port[out];
	unsigned vl = pkt->vl;
	/* A victim: it waited for credit since its last packet left. */
	int victim = (so->starved >> vl) & 1;

	ibemu__switch_cc_queue(sw, out, vl, -(int)pkt->blocks);
	so->starved &= (uint16_t) ~(1u << vl);
	/*
	 * Threshold 0 is never in congestion, and only a victim marks for
	 * credit starvation: with neither, and no port setting to override
	 * the switch's, nothing can be marked (the common case: CC not
	 * configured).
	 */
	if (victim || sw->cc.threshold || so->cc.valid)
		ibemu__switch_cc_mark(e, sw, pi, out, pkt, victim);
}

/* switch/vlarb.c */
/*
 * Picks the VL to serve among those set in 'eligible' (bit per VL) by the
 * IBA 7.6.9 VL arbitration tables; -1 if none. Commit the choice with
 * ibemu_vlarb_charge() once the packet is sent.
 */
int ibemu_vlarb_pick(struct ibemu_vlarb *a, uint32_t eligible);
void ibemu_vlarb_charge(struct ibemu_vlarb *a, uint32_t bytes);

#endif

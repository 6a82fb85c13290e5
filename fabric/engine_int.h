/* SPDX-License-Identifier: MIT */
/*
 * Engine internals shared by the engine (fabric/), the switch model
 * (switch/) and the HCA port model (hca/). Not for other users.
 */
#ifndef IBEMU_ENGINE_INT_H
#define IBEMU_ENGINE_INT_H

#include "engine.h"
#include "evq.h"
#include "util.h"

enum ibemu_ev_kind {
	IBEMU_EV_HEAD,	/* a packet's header reached a switch and was routed */
	IBEMU_EV_TAIL,	/* a packet's tail reached an HCA port */
	IBEMU_EV_ARB,	/* an output port may start a packet */
	IBEMU_EV_TIMER, /* upper layer's timer */
	IBEMU_EV_AGENT, /* delayed work of a node's agents (agent/) */
	IBEMU_EV_MAD,	/* a MAD reaches a node's management, off the wire */
};

/* Phases of one instant: state updates first, then decisions. */
#define IBEMU_PHASE_UPDATE 0ull
#define IBEMU_PHASE_DECIDE 1ull

struct ibemu_pktq {
	struct ibemu_pkt *head, *tail;
};

static inline void ibemu_pktq_push(struct ibemu_pktq *q, struct ibemu_pkt *p)
{
	p->next = NULL;
	if (q->tail)
		q->tail->next = p;
	else
		q->head = p;
	q->tail = p;
}

static inline struct ibemu_pkt *ibemu_pktq_pop(struct ibemu_pktq *q)
{
	struct ibemu_pkt *p = q->head;

	if (p) {
		q->head = p->next;
		if (!q->head)
			q->tail = NULL;
		p->next = NULL;
	}
	return p;
}

/* One input (port, VL) whose head packet asks for an output VL. */
struct ibemu_req {
	uint8_t in_port;
	uint8_t in_vl;
};

/* IBA 14.2.5.9 VLArbitrationTable entry: weight in 64-byte units. */
struct ibemu_vlarb_entry {
	uint8_t vl;
	uint8_t weight;
};

#define IBEMU_VLARB_ENTRIES 64

struct ibemu_vlarb {
	struct ibemu_vlarb_entry high[IBEMU_VLARB_ENTRIES];
	struct ibemu_vlarb_entry low[IBEMU_VLARB_ENTRIES];
	uint8_t nhigh, nlow;
	uint8_t high_limit; /* LimitOfHighPriority, 4096-byte units; 255 none */
	uint8_t high_idx, low_idx;
	int32_t high_left, low_left; /* weight left in the current entry */
	uint32_t high_sent;  /* bytes of high priority since a low one */
	uint8_t picked_high; /* the last pick came from the high table */
};

/* Blocks of VL 'vl' that reach the transmitter at 'time'. */
struct ibemu_cret {
	uint64_t time;
	uint16_t blocks;
	uint8_t vl;
};

struct ibemu_eport {
	uint32_t node;
	uint32_t peer; /* global index of the cabled port, or IBEMU_NONE */
	uint8_t num;   /* port number on its node */
	uint8_t lanes;
	uint8_t speed;	    /* enum ibemu_speed */
	uint8_t data_vls;   /* VLs usable for data: 1..15 */
	uint8_t state;	    /* enum ibemu_port_state */
	uint8_t phys_state; /* enum ibemu_phys_state */
	uint64_t prop_ps;   /* propagation delay of the cable */
	uint16_t lid;	    /* HCA ports; a switch's LID is on its node */

	/* Transmitter. */
	uint64_t busy_until; /* the link is busy sending until then */
	uint64_t arb_at;     /* time of the pending ARB event, or UINT64_MAX */
	uint64_t wait_since; /* blocked on credits since, or UINT64_MAX */
	uint16_t credits[IBEMU_NUM_VLS]; /* free blocks at the peer, per VL */
	uint8_t sl2vl[16];		 /* output VL of each SL */
	struct ibemu_vlarb vlarb;
	/* Switch outputs: who asks for this port, per output VL. */
	struct ibemu_req *reqs[IBEMU_NUM_VLS];
	uint16_t nreqs[IBEMU_NUM_VLS];
	uint8_t rr[IBEMU_NUM_VLS]; /* input after which round-robin starts */

	/* Receiver. */
	uint16_t buf_blocks;		 /* input buffer per VL, in blocks */
	uint16_t in_used[IBEMU_NUM_VLS]; /* blocks held in the input buffer */
	struct ibemu_pktq inq[IBEMU_NUM_VLS]; /* switch input buffers */
	struct ibemu_pktq vl15_out;	      /* HCA: management to send */
	struct ibemu_pktq mad_out; /* HCA: GMPs to send, on data VLs */

	struct ibemu_port_counters cnt;
	/* Credits on their way back to this transmitter, in no order. */
	struct ibemu_cret *cret;
	uint32_t ncret, cret_cap;
};

struct ibemu_enode {
	enum ibemu_node_type type;
	uint8_t nports;
	uint16_t lid;	     /* switch LID (port 0) */
	uint16_t max_reqs;   /* capacity of each output's request list */
	uint32_t first_port; /* global index of its port 0 */
	uint64_t routing_latency_ps; /* switches */
	uint8_t *lft;		     /* switches: [49152] output port per LID */
};

struct ibemu_arb_now {
	uint64_t seq;
	uint32_t port;
};

struct ibemu_engine {
	const struct ibemu_topo *topo;
	uint64_t now;
	uint64_t seq;
	uint64_t events;
	struct ibemu_evq evq;
	struct ibemu_enode *nodes;
	struct ibemu_eport *ports; /* each node's ports 0..nports, in order */
	uint32_t nports;
	struct ibemu_pkt *free_pkts;
	uint64_t in_flight;
	const struct ibemu_engine_ops *ops;
	void *ctx;
	/*
	 * ARBs due at 'now', in the order they were asked for: kept out of
	 * the queue, they run after the queue's events of this instant that
	 * sort before them, exactly where the queue would have put them.
	 */
	struct ibemu_arb_now *arbs;
	size_t arbs_head, arbs_len, arbs_cap;
	struct ibemu_agents *agents; /* agent/: SMA, PMA and CC state */
};

#define IBEMU_LID_COUNT 49152u /* unicast LIDs 1..0xBFFF, and 0 */

void ibemu__engine_push(struct ibemu_engine *e, uint64_t time, uint64_t phase,
			enum ibemu_ev_kind kind, uint32_t target, void *ptr);
/* Asks port 'pi' to arbitrate at 'time' (deduplicated). */
void ibemu__engine_arb_at(struct ibemu_engine *e, uint32_t pi, uint64_t time);
/*
 * Starts 'pkt' (with pkt->vl set) on output port 'pi' at e->now, earliest
 * finish 'tail_in' (cut-through cannot end before the tail came in). Takes
 * the peer's credits, schedules the arrival, counts, returns end time.
 */
uint64_t ibemu__engine_transmit(struct ibemu_engine *e, uint32_t pi,
				struct ibemu_pkt *pkt, uint64_t tail_in);
/* Frees 'blocks' on VL 'vl' of input port 'pi' at 'when'; credits reach
 * its transmitter one cable delay later. */
void ibemu__engine_release(struct ibemu_engine *e, uint32_t pi, uint8_t vl,
			   uint16_t blocks, uint64_t when);
void ibemu__engine_wait_start(struct ibemu_engine *e, struct ibemu_eport *p);
void ibemu__engine_wait_stop(struct ibemu_engine *e, struct ibemu_eport *p);
/* Adds to p->credits the returns that have arrived by now; call before
 * reading p->credits. */
void ibemu__engine_credit_sync(struct ibemu_engine *e, struct ibemu_eport *p);

/* Calls ibemu__agent_event(e, target, ptr) at 'when' (>= now). */
void ibemu__engine_agent_at(struct ibemu_engine *e, uint64_t when,
			    uint32_t target, void *ptr);

/* fabric/smi.c */
/*
 * Sends 'm' from the agents of node 'node': a switch's leave from port 0
 * (LID-routed through its LFT, directed routes by their path), an HCA's
 * from its port 'port'. Used for traps and for responses.
 */
void ibemu__mad_emit(struct ibemu_engine *e, uint32_t node, unsigned port,
		     const struct ibemu_mad_msg *m);

/* What a switch does with a management packet whose header arrived. */
enum ibemu_smi_route {
	IBEMU_SMI_LFT,	 /* relay it by its DLID, as any packet */
	IBEMU_SMI_PORT,	 /* relay it to pkt->out_port (directed route) */
	IBEMU_SMI_TAKEN, /* the switch's management took it (or dropped it) */
};
/* Called by the relay for a packet with a MAD at input port 'pi'. */
enum ibemu_smi_route ibemu__smi_switch_head(struct ibemu_engine *e, uint32_t pi,
					    struct ibemu_pkt *pkt);
/* A packet with a MAD reached HCA port 'pi' (its tail, or loopback). */
void ibemu__smi_hca_receive(struct ibemu_engine *e, uint32_t pi,
			    struct ibemu_pkt *pkt);

/* switch/relay.c */
/* Queues 'pkt' (out_port, vl and sl set) at switch 'node''s port 0, the
 * management port, as if it had arrived there. */
void ibemu__switch_inject(struct ibemu_engine *e, uint32_t node,
			  struct ibemu_pkt *pkt);
int ibemu__switch_init(struct ibemu_engine *e, uint32_t node);
void ibemu__switch_fini(struct ibemu_engine *e, uint32_t node);
void ibemu__switch_head(struct ibemu_engine *e, uint32_t pi,
			struct ibemu_pkt *pkt);
void ibemu__switch_arbitrate(struct ibemu_engine *e, uint32_t pi);

/* switch/vlarb.c */
void ibemu_vlarb_init_default(struct ibemu_vlarb *a, unsigned data_vls);
/*
 * Picks the VL to serve among those set in 'eligible' (bit per VL) by the
 * IBA 7.6.9 VL arbitration tables; -1 if none. Commit the choice with
 * ibemu_vlarb_charge() once the packet is sent.
 */
int ibemu_vlarb_pick(struct ibemu_vlarb *a, uint32_t eligible);
void ibemu_vlarb_charge(struct ibemu_vlarb *a, uint32_t bytes);

/* hca/port.c */
void ibemu__hca_arbitrate(struct ibemu_engine *e, uint32_t pi);
void ibemu__hca_tail(struct ibemu_engine *e, uint32_t pi,
		     struct ibemu_pkt *pkt);

#endif

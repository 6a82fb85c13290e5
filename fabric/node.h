/* SPDX-License-Identifier: MIT */
/*
 * The engine as its node classes see it: the interface between the engine
 * core (fabric/: event queue, links and credits, SMI, link state machine)
 * and the node models that register with it (switch/, hca/), and through
 * which the composition layer (model/) registers them. The engine core
 * calls a class only through struct ibemu_node_ops; a class calls the
 * engine through the functions below. Agents and upper layers use
 * engine.h, never this file.
 */
#ifndef IBEMU_NODE_H
#define IBEMU_NODE_H

#include "engine.h"
#include "evq.h"
#include "util.h"

/*
 * What a node class does for the engine. Missing ops are stubs. 'pi' is a
 * global port index of a node of the class.
 */
struct ibemu_node_ops {
	/* Allocates the class's state of node 'node' (model state goes to
	 * ibemu_node_set_model()); 0 or -errno. fini frees it, even after a
	 * failed init. */
	int (*init)(struct ibemu_engine *e, uint32_t node);
	void (*fini)(struct ibemu_engine *e, uint32_t node);
	/* Receivers that relay cut-through get the header, once routed
	 * after the node's routing latency; the others get the tail. */
	void (*head)(struct ibemu_engine *e, uint32_t pi,
		     struct ibemu_pkt *pkt);
	void (*tail)(struct ibemu_engine *e, uint32_t pi,
		     struct ibemu_pkt *pkt);
	/* Output port 'pi' may start a packet now (IBEMU_EV_ARB). */
	void (*arbitrate)(struct ibemu_engine *e, uint32_t pi);
	/* Management packet 'pkt' (out_port, vl and sl set) starts at the
	 * node's port 0, as if it had arrived there; consumed. */
	void (*inject)(struct ibemu_engine *e, uint32_t node,
		       struct ibemu_pkt *pkt);
	/* The fabric is at rest (ibemu_engine_settle()): arbiters go back
	 * to their power-on position. */
	void (*settle)(struct ibemu_engine *e, uint32_t node);
	/* Whether head() (1) or tail() (0) receives packets. */
	int cut_through;
};

struct ibemu_engine_classes {
	const struct ibemu_node_ops *hca;
	const struct ibemu_node_ops *sw;
	const struct ibemu_mgmt_ops *mgmt;
};

enum ibemu_ev_kind {
	IBEMU_EV_HEAD,	/* a packet's header reached a cut-through node */
	IBEMU_EV_TAIL,	/* a packet's tail reached a port */
	IBEMU_EV_ARB,	/* an output port may start a packet */
	IBEMU_EV_TIMER, /* a port owner's timer; ptr: the cookie */
	IBEMU_EV_MGMT,	/* delayed work of the nodes' management */
	IBEMU_EV_MAD,	/* a MAD reaches a node's management, off the wire */
	IBEMU_EV_LINK,	/* a link trains; ptr: the generation */
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

/* The arbiter's position first: every packet a port sends reads it. */
struct ibemu_vlarb {
	uint8_t nhigh, nlow;
	uint8_t high_limit; /* LimitOfHighPriority, 4096-byte units; 255 none */
	uint8_t high_idx, low_idx;
	int32_t high_left, low_left; /* weight left in the current entry */
	uint32_t high_sent;  /* bytes of high priority since a low one */
	uint8_t picked_high; /* the last pick came from the high table */
	struct ibemu_vlarb_entry high[IBEMU_VLARB_ENTRIES];
	struct ibemu_vlarb_entry low[IBEMU_VLARB_ENTRIES];
};

/* Blocks of VL 'vl' that reach the transmitter at 'time'. */
struct ibemu_cret {
	uint64_t time;
	uint16_t blocks;
	uint8_t vl;
};

/*
 * A port is read at every hop, as a transmitter and as a receiver: the
 * fields every packet reads come first, in the first two cache lines
 * (ports are 64-byte aligned); the VL arbiter's tables, the queues of
 * HCAs and the counters after them.
 */
struct ibemu_eport {
	uint32_t node;
	uint32_t peer; /* global index of the cabled port, or IBEMU_NONE */
	uint8_t num;   /* port number on its node */
	uint8_t lanes;
	uint8_t speed;	     /* enum ibemu_speed */
	uint8_t data_vls;    /* VLs usable for data: 1..15 */
	uint8_t state;	     /* enum ibemu_port_state */
	uint8_t phys_state;  /* enum ibemu_phys_state */
	uint8_t lmc;	     /* HCA ports: the 2^lmc LIDs from 'lid' are its */
	uint16_t lid;	     /* HCA ports; a switch's LID is on its node */
	uint16_t buf_blocks; /* receiver: input buffer per VL, in blocks */
	uint64_t prop_ps;    /* propagation delay of the cable */

	/* Transmitter. */
	uint64_t busy_until; /* the link is busy sending until then */
	uint64_t arb_at;     /* time of the pending ARB event, or UINT64_MAX */
	uint64_t wait_since; /* blocked on credits since, or UINT64_MAX */
	/* Credits on their way back to this transmitter, in no order. */
	struct ibemu_cret *cret;
	uint32_t ncret, cret_cap;
	uint16_t credits[IBEMU_NUM_VLS]; /* free blocks at the peer, per VL */

	/* Receiver. */
	uint16_t in_used[IBEMU_NUM_VLS]; /* blocks held in the input buffer */

	uint8_t sl2vl[16]; /* output VL of each SL */
	uint32_t drop_ppm; /* injected loss of data packets; 0: none */
	struct ibemu_vlarb vlarb;
	uint64_t drop_rng;	    /* its generator's state */
	uint32_t train_gen;	    /* link training generation (link.c) */
	struct ibemu_pktq vl15_out; /* HCA: management to send */
	struct ibemu_pktq mad_out;  /* HCA: GMPs to send, on data VLs */

	/* Aligned: a packet's counters in two lines, not three. */
	_Alignas(64) struct ibemu_port_counters cnt;
} __attribute__((aligned(64)));

/*
 * Read at every hop (the peer's class and routing latency, the LFT): 32
 * bytes, two to a cache line, none across two. Its class's ops are
 * ibemu__node_ops(), its class's state e->models[] (ibemu_node_model()).
 */
struct ibemu_enode {
	enum ibemu_node_type type;
	uint8_t nports;
	uint16_t lid;	     /* switch LID (port 0) */
	uint32_t first_port; /* global index of its port 0 */
	/* Switches: output port per LID, [lft_len] entries (grown as an SM
	 * writes higher LIDs, so a small fabric pays for its LIDs only);
	 * LIDs past it have no route (255). */
	uint32_t lft_len;
	uint64_t routing_latency_ps; /* switches */
	uint8_t *lft;
};
_Static_assert(sizeof(struct ibemu_enode) == 32,
	       "struct ibemu_enode: keep it at half a cache line");

/*
 * An HCA port's owner (engine.h, struct ibemu_port_ops). Every packet the
 * port sends or receives reads lent, ctx, kind and ops.pull or
 * ops.deliver: they come first, in the first cache line of a binding
 * (engine.c aligns them).
 */
struct ibemu_port_binding {
	/*
	 * While the owner lends the port (ibemu_engine_port_borrow): the
	 * borrower, who gets the data packets and the timers; the owner
	 * keeps the MADs and the state changes.
	 */
	struct ibemu_port_binding *lent;
	void *ctx;
	uint8_t kind; /* its ops table's number (engine.c's port_kind) */
	int attached; /* 0: the stubs, nobody's */
	uint32_t gen; /* changes at every attach: stale timers are dropped */
	struct ibemu_port_ops ops; /* stubs filled */
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
	void **models;		   /* per node: its class's state */
	struct ibemu_eport *ports; /* each node's ports 0..nports, in order */
	uint32_t nports;
	struct ibemu_pkt *free_pkts;
	uint64_t in_flight;
	/* Per node, switches: the MFT, [IBEMU_MFT_CAP][positions] port
	 * masks, NULL until an SM writes an entry (engine.h). */
	uint16_t **mft;
	/* Per port, NULL for switch ports: who attached it. */
	struct ibemu_port_binding **owner;
	struct ibemu_port_binding
		*owner_none; /* the stubs: what no one's gets */
	uint32_t bind_gen;   /* the last binding generation handed out */
	/* The ops tables ever bound, numbered from 1 (0: the stubs). */
	const struct ibemu_port_ops *kinds[15];
	unsigned nkinds;
	struct ibemu_node_ops hca_ops, sw_ops; /* the classes, stubs filled */
	struct ibemu_mgmt_ops mgmt_ops;
	void *mgmt; /* the management's state */
	/* MADs to HCA ports no one owns (ibemu_engine_on_unowned_mad). */
	void (*unowned_mad)(void *ctx, uint32_t port,
			    const struct ibemu_mad_msg *m);
	void *unowned_ctx;
	/*
	 * ARBs due at 'now', in the order they were asked for: kept out of
	 * the queue, they run after the queue's events of this instant that
	 * sort before them, exactly where the queue would have put them.
	 */
	struct ibemu_arb_now *arbs;
	size_t arbs_head, arbs_len, arbs_cap;
};

#define IBEMU_LID_COUNT 49152u /* unicast LIDs 1..0xBFFF, and 0 */

void ibemu__engine_push(struct ibemu_engine *e, uint64_t time, uint64_t phase,
			enum ibemu_ev_kind kind, uint32_t target, void *ptr);
/* The port masks (one per MFT position) of MLID 'dlid' at switch 'node';
 * NULL if it has no entry there. */
static inline const uint16_t *ibemu__engine_mft(const struct ibemu_engine *e,
						uint32_t node, uint16_t dlid)
{
	unsigned npos = e->nodes[node].nports / 16u + 1u;

	if (!e->mft[node] || dlid < IBEMU_MLID_FIRST ||
	    dlid - IBEMU_MLID_FIRST >= IBEMU_MFT_CAP)
		return NULL;
	return e->mft[node] + (size_t)(dlid - IBEMU_MLID_FIRST) * npos;
}
/*
 * A copy of data packet 'pkt' (a switch replicating multicast): every
 * field, the owner that made it told (its pkt_copied op). NULL without
 * memory.
 */
struct ibemu_pkt *ibemu__engine_pkt_copy(struct ibemu_engine *e,
					 const struct ibemu_pkt *pkt);
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

/* The class of node 'n' (stubs filled). */
static inline const struct ibemu_node_ops *
ibemu__node_ops(const struct ibemu_engine *e, const struct ibemu_enode *n)
{
	return n->type == IBEMU_NODE_SWITCH ? &e->sw_ops : &e->hca_ops;
}

/* The class's state of node 'node'. */
static inline void *ibemu_node_model(const struct ibemu_engine *e,
				     uint32_t node)
{
	return e->models[node];
}

static inline void ibemu_node_set_model(struct ibemu_engine *e, uint32_t node,
					void *model)
{
	e->models[node] = model;
}

/* Who moves data on HCA port 'pi': its borrower if lent, else its owner. */
static inline struct ibemu_port_binding *
ibemu__port_data(const struct ibemu_engine *e, uint32_t pi)
{
	struct ibemu_port_binding *b = e->owner[pi];

	return b->lent ? b->lent : b;
}

/*
 * Hands 'pkt' that reached HCA port 'pi' to the port's owner, if an owner
 * of the kind that sent it (or the engine sent it: kind 0): a study's
 * packet still in flight when its study ended (the port returned to a
 * transport) is dropped as a packet to no owner is.
 */
static inline void ibemu__engine_deliver(struct ibemu_engine *e, uint32_t pi,
					 struct ibemu_pkt *pkt)
{
	struct ibemu_port_binding *b = ibemu__port_data(e, pi);

	if (pkt->kind && pkt->kind != b->kind)
		b = e->owner_none;

	b->ops.deliver(b->ctx, pi, pkt);
}

/* Asks the owner of HCA port 'pi' for a packet (struct ibemu_port_ops). */
static inline struct ibemu_pkt *ibemu__engine_pull(struct ibemu_engine *e,
						   uint32_t pi,
						   const uint16_t *credits,
						   int *blocked)
{
	struct ibemu_port_binding *b = ibemu__port_data(e, pi);
	struct ibemu_pkt *pkt = b->ops.pull(b->ctx, pi, credits, blocked);

	if (pkt)
		pkt->kind = b->kind;
	return pkt;
}

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

/* fabric/link.c: a link training event; an owner to tell of a change. */
void ibemu__link_train(struct ibemu_engine *e, uint32_t pi, uint32_t gen);
void ibemu__link_changed(struct ibemu_engine *e, uint32_t pi);

/* fabric/port.c: before an SM programs it, every data VL in the low
 * table with equal weights. */
void ibemu_vlarb_init_default(struct ibemu_vlarb *a, unsigned data_vls);

#endif

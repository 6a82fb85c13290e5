/* SPDX-License-Identifier: MIT */
/*
 * The fabric engine: a single-threaded discrete-event simulator in virtual
 * time (picoseconds). It owns the running state of every port (credits,
 * input buffers, output arbitration, PMA counters) and moves packets across
 * links and through switches. Upper layers (traffic studies today, HCA
 * transport later) inject packets at HCA ports through a pull callback and
 * receive them through a deliver callback; nothing else mutates the model.
 *
 * Events are ordered by (time, phase, sequence): at one instant every state
 * update (phase 0) happens before any arbitration decision (phase 1), so a
 * decision sees everything that arrived at that instant, whatever the order
 * of arrival (evaluate, then commit).
 */
#ifndef IBEMU_ENGINE_H
#define IBEMU_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "packet.h"
#include "topo.h"

struct ibemu_engine;

/* IBA 13.4.1: a MAD is 256 bytes. */
#define IBEMU_MAD_MSG_LEN 256

/*
 * A MAD with the addressing an HCA's QP0/QP1 sees: the LRH's LIDs and SL,
 * the source and destination QPs (0 for SMPs, 1 for the GSI), Q_Key and
 * P_Key. 'mad' is the wire image (big-endian), as libibumad passes it.
 */
struct ibemu_mad_msg {
	uint8_t mad[IBEMU_MAD_MSG_LEN];
	uint32_t src_qp;
	uint32_t dst_qp;
	uint32_t qkey;
	uint16_t slid;
	uint16_t dlid;
	uint16_t pkey;
	uint8_t sl;
};

/* IBA 14.2.5.6 PortInfo PortState (logical) and PortPhysicalState. */
enum ibemu_port_state {
	IBEMU_PORT_DOWN = 1,
	IBEMU_PORT_INIT = 2,
	IBEMU_PORT_ARMED = 3,
	IBEMU_PORT_ACTIVE = 4,
};

enum ibemu_phys_state {
	IBEMU_PHYS_SLEEP = 1,
	IBEMU_PHYS_POLLING = 2,
	IBEMU_PHYS_DISABLED = 3,
	IBEMU_PHYS_LINKUP = 5,
};

const char *ibemu_port_state_name(enum ibemu_port_state s);
const char *ibemu_phys_state_name(enum ibemu_phys_state s);

/* Counters of one port, kept at full width; PMA views saturate them. */
struct ibemu_port_counters {
	uint64_t xmit_data; /* PortXmitData: octets LRH..ICRC, / 4 */
	uint64_t rcv_data;  /* PortRcvData */
	uint64_t xmit_pkts; /* PortXmitPkts */
	uint64_t rcv_pkts;  /* PortRcvPkts */
	uint64_t
		xmit_wait; /* PortXmitWait, in ticks of IBEMU_XMIT_WAIT_TICK_PS */
	uint64_t xmit_discards;		  /* PortXmitDiscards */
	uint64_t rcv_switch_relay_errors; /* PortRcvSwitchRelayErrors */
	uint64_t vl15_dropped;		  /* VL15Dropped */
	uint64_t rcv_errors;		  /* PortRcvErrors */
	uint64_t unicast_xmit_pkts;
	uint64_t unicast_rcv_pkts;
	uint64_t busy_ps; /* time the transmitter was busy, for utilization */
	uint64_t fecn_marked;
};

/* PortXmitWait counts ticks of 1 ns (the tick is implementation-defined). */
#define IBEMU_XMIT_WAIT_TICK_PS 1000u

struct ibemu_engine_ops {
	/*
	 * HCA port 'port' (global port index) may start a packet now: return
	 * one whose VL has at least credits[vl] blocks free at the peer, or
	 * NULL. Set *blocked when something is ready but lacks credits (it
	 * counts as PortXmitWait). The engine takes the packet's ownership
	 * and sets its VL from its SL. Called only while the port is Active.
	 */
	struct ibemu_pkt *(*hca_pull)(void *ctx, uint32_t port,
				      const uint16_t *credits, int *blocked);
	/* The tail of 'pkt' reached HCA port 'port'; the callee owns it. */
	void (*hca_deliver)(void *ctx, uint32_t port, struct ibemu_pkt *pkt);
	/* A timer set with ibemu_engine_timer() fired. */
	void (*timer)(void *ctx, uint64_t cookie);
	/*
	 * A MAD reached HCA port 'port' and none of the node's own agents
	 * (SMA, PMA, CC agent) takes it: a response to a request the port
	 * sent, or a request for an agent of an attached process (the SM's
	 * SMInfo and traps, SA queries). 'm' is valid during the call only.
	 */
	void (*mad_recv)(void *ctx, uint32_t port,
			 const struct ibemu_mad_msg *m);
};

/*
 * Builds the running state of topology 't' (borrowed; it must outlive the
 * engine), with all ports logically Down and no routes. Returns 0 or -errno.
 */
int ibemu_engine_create(const struct ibemu_topo *t, struct ibemu_engine **out);
void ibemu_engine_destroy(struct ibemu_engine *e);
void ibemu_engine_set_ops(struct ibemu_engine *e,
			  const struct ibemu_engine_ops *ops, void *ctx);
/* The ops and context set last, so that a user can put them back. */
const struct ibemu_engine_ops *
ibemu_engine_get_ops(const struct ibemu_engine *e, void **ctx);

/* Current virtual time in picoseconds. */
uint64_t ibemu_engine_now(const struct ibemu_engine *e);

/*
 * Processes events in order while their time is <= 'until' and at most
 * 'max_events' of them; returns how many it processed. Virtual time ends
 * at the last event processed (or at 'until' when the queue runs dry
 * before it and 'until' is not UINT64_MAX).
 */
size_t ibemu_engine_run(struct ibemu_engine *e, uint64_t until,
			size_t max_events);
/* Time of the next pending event, or UINT64_MAX when there is none. */
uint64_t ibemu_engine_next_time(const struct ibemu_engine *e);
/* Number of pending events. */
size_t ibemu_engine_pending(const struct ibemu_engine *e);
/* Events processed since creation. */
uint64_t ibemu_engine_events(const struct ibemu_engine *e);

/* Global port index of (node, port), as used by callbacks and counters. */
uint32_t ibemu_engine_port_index(const struct ibemu_engine *e, uint32_t node,
				 unsigned port);
uint32_t ibemu_engine_nports(const struct ibemu_engine *e);
/* The inverse of ibemu_engine_port_index(). */
void ibemu_engine_port_where(const struct ibemu_engine *e, uint32_t index,
			     uint32_t *node, unsigned *port);

/*
 * Port states. A cabled port starts physically LinkUp and logically Init
 * (IBA 7.2: the link is up, no SM has configured it); an uncabled one
 * Polling and Down. Data packets (VL0-14) leave only Active ports; a
 * switch discards those routed to a port that is not Active and counts
 * PortXmitDiscards there. VL15 passes in any state but Down.
 */
enum ibemu_port_state ibemu_engine_port_state(const struct ibemu_engine *e,
					      uint32_t port);
enum ibemu_phys_state ibemu_engine_phys_state(const struct ibemu_engine *e,
					      uint32_t port);
/* Sets the logical state of a cabled port (global index): Init, Armed or
 * Active. Returns 0, or -EINVAL for an uncabled port or a bad state. */
int ibemu_engine_set_port_state(struct ibemu_engine *e, uint32_t port,
				enum ibemu_port_state state);

/* Sets switch 'node''s LFT entry for 'lid' to 'port' (255: none). */
int ibemu_engine_set_lft(struct ibemu_engine *e, uint32_t node, uint16_t lid,
			 uint8_t port);
int ibemu_engine_get_lft(const struct ibemu_engine *e, uint32_t node,
			 uint16_t lid, uint8_t *port);
/* Sets the LID of an HCA port or of a switch (port 0). */
int ibemu_engine_set_lid(struct ibemu_engine *e, uint32_t node, unsigned port,
			 uint16_t lid);

/* LID of an HCA port, or of a switch (any port); 0 if none is set. */
uint16_t ibemu_engine_get_lid(const struct ibemu_engine *e, uint32_t node,
			      unsigned port);

struct ibemu_routes;
/* Sets every LID and every switch's LFT from 'r' (fabric/route.h), then
 * brings every cabled port to Active, as an SM would. */
int ibemu_engine_apply_routes(struct ibemu_engine *e,
			      const struct ibemu_routes *r);

/*
 * Queues a management packet (consumed) on VL15 at HCA port 'port': it
 * needs no credit, goes before data, and leaves in any state but Down; a
 * full VL15 buffer on the way drops it (VL15Dropped).
 */
void ibemu_engine_send_vl15(struct ibemu_engine *e, uint32_t port,
			    struct ibemu_pkt *pkt);

/*
 * Sends MAD 'm' from HCA port 'port' (global index) as its QP0/QP1 would:
 * SMPs (classes 0x01 and 0x81) on VL15, following IBA 14.2.2 for directed
 * routes (hop count 0 and LID-routed SMPs to the port's own LID stay in
 * the node); other classes on the data VL of m->sl, once the port is
 * Active. m->slid 0 means the port's LID. Returns 0 or -EINVAL (not an
 * HCA port).
 */
int ibemu_engine_mad_send(struct ibemu_engine *e, uint32_t port,
			  const struct ibemu_mad_msg *m);

/* HCA port 'port' has something new to send: arbitrate it soon. */
void ibemu_engine_kick(struct ibemu_engine *e, uint32_t port);
/* Calls ops->timer(ctx, cookie) at virtual time 'when' (>= now). */
void ibemu_engine_timer(struct ibemu_engine *e, uint64_t when, uint64_t cookie);

struct ibemu_pkt *ibemu_engine_pkt_alloc(struct ibemu_engine *e);
void ibemu_engine_pkt_free(struct ibemu_engine *e, struct ibemu_pkt *p);

/* Counters of a port (global index), wait time up to now included. */
void ibemu_engine_counters(const struct ibemu_engine *e, uint32_t port,
			   struct ibemu_port_counters *out);
void ibemu_engine_counters_reset(struct ibemu_engine *e, uint32_t port);

/* Packets inside the fabric (in buffers or on links). */
uint64_t ibemu_engine_in_flight(const struct ibemu_engine *e);

#endif

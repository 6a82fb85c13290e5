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
	uint64_t multicast_xmit_pkts; /* PortMulticastXmitPkts */
	uint64_t multicast_rcv_pkts;  /* PortMulticastRcvPkts */
	uint64_t busy_ps; /* time the transmitter was busy, for utilization */
	/* Congestion control (IBA Annex A10): FECNs a switch port marked;
	 * at an HCA port, FECNs received, CNPs sent, BECNs received. */
	uint64_t fecn_marked;
	uint64_t fecn_rcvd, cnp_sent, becn_rcvd;
	/* PortInfo's P_KeyViolations and Q_KeyViolations (IBA 14.2.5.6),
	 * which an HCA port's owner counts (ibemu_engine_count_violation):
	 * 16 bits, stopping at their maximum. */
	uint16_t p_key_violations;
	uint16_t q_key_violations;
};

/* PortXmitWait counts ticks of 1 ns (the tick is implementation-defined). */
#define IBEMU_XMIT_WAIT_TICK_PS 1000u

/* The steps of lending a port (struct ibemu_port_ops's lend). */
enum ibemu_lend { IBEMU_LEND_ASK, IBEMU_LEND_TAKE, IBEMU_LEND_RETURN };

/*
 * What whoever attaches an HCA port provides: a traffic study, a session of
 * an attached process, later a QP transport. Each HCA port has one owner at
 * a time; an op the owner leaves NULL is filled with a stub, so the engine
 * never tests for NULL. Every op runs on the engine's thread.
 */
struct ibemu_port_ops {
	/*
	 * The port may start a packet now: return one whose SL's VL has at
	 * least credits[sl] blocks free at the peer, or NULL. Set *blocked
	 * when something is ready but lacks credits (it counts as
	 * PortXmitWait). The engine takes the packet's ownership and sets its
	 * VL from its SL. Called only while the port is Active, after a
	 * ibemu_engine_kick() of the port. Stub: nothing to send.
	 */
	struct ibemu_pkt *(*pull)(void *ctx, uint32_t port,
				  const uint16_t *credits, int *blocked);
	/* The tail of data packet 'pkt' reached the port; the callee owns
	 * it. Stub: the packet is freed. */
	void (*deliver)(void *ctx, uint32_t port, struct ibemu_pkt *pkt);
	/*
	 * A MAD reached the port and none of the node's own agents (SMA, PMA,
	 * CC agent) takes it: a response to a request the port sent, or a
	 * request for an agent of the owner (an SM's SMInfo and traps, SA
	 * queries). 'm' is valid during the call only. Stub: dropped.
	 */
	void (*mad_recv)(void *ctx, uint32_t port,
			 const struct ibemu_mad_msg *m);
	/* A timer set with ibemu_engine_timer() on this port fired. */
	void (*timer)(void *ctx, uint32_t port, uint64_t cookie);
	/*
	 * The port's logical or physical state changed (an SM's Set, the
	 * link going down or training): what a transport turns into async
	 * events (IBV_EVENT_PORT_ACTIVE, _ERR).
	 */
	void (*state_change)(void *ctx, uint32_t port,
			     enum ibemu_port_state state,
			     enum ibemu_phys_state phys);
	/*
	 * Whether the owner lends the port's data path to another
	 * (ibemu_engine_port_borrow): with IBEMU_LEND_ASK it answers 0 if it
	 * would, -EBUSY if it moves data there; with IBEMU_LEND_TAKE it
	 * answers the same and, on 0, moves no data there until
	 * IBEMU_LEND_RETURN. Stub: -EBUSY.
	 */
	int (*lend)(void *ctx, uint32_t port, enum ibemu_lend what);
	/*
	 * A switch replicated multicast packet 'orig' (one this kind of
	 * owner made) into 'copy' (the same fields): one more packet names
	 * what orig's cookie names. No context: the cookie is all there is.
	 * Stub: nothing to do.
	 */
	void (*pkt_copied)(const struct ibemu_pkt *orig,
			   struct ibemu_pkt *copy);
};

/*
 * Binds HCA port 'port' (global index) to 'ops' and 'ctx' (both borrowed
 * until ibemu_engine_port_detach(); 'ctx' names the owner and must not be
 * NULL). Returns 0, -EINVAL if it is not a port of an HCA, or -EBUSY if
 * another owner holds it. Timers the port's
 * previous owner left still queued are cancelled.
 */
int ibemu_engine_port_attach(struct ibemu_engine *e, uint32_t port,
			     const struct ibemu_port_ops *ops, void *ctx);
/* Puts the port back to the stubs (MADs to it are dropped); if its
 * owner lends it, the borrower becomes its owner. */
void ibemu_engine_port_detach(struct ibemu_engine *e, uint32_t port);
/* The owner's context of an HCA port, or NULL while it has none. */
void *ibemu_engine_port_owner(const struct ibemu_engine *e, uint32_t port);
/*
 * What gets the MADs that reach an HCA port with no owner and are not for
 * the node's agents (a CM REQ to a host where no process runs: the host's
 * kernel CM would answer it): 'fn' with 'ctx' (borrowed), or NULL to drop
 * them, as by default.
 */
void ibemu_engine_on_unowned_mad(struct ibemu_engine *e,
				 void (*fn)(void *ctx, uint32_t port,
					    const struct ibemu_mad_msg *m),
				 void *ctx);

/*
 * Whether a traffic study may use HCA port 'port': it has no owner, or its
 * owner moves no data on it and would lend it (a process that holds the
 * HCA only for MADs, such as a subnet manager). 1 or 0.
 */
int ibemu_engine_port_usable(const struct ibemu_engine *e, uint32_t port);
/*
 * Takes HCA port 'port' for 'ops' and 'ctx': as ibemu_engine_port_attach()
 * on a port with no owner; on a port whose owner lends it, the borrower
 * gets pull, deliver and timers while the owner keeps MADs and state
 * changes (both hear those). 0, -EINVAL, or -EBUSY (held, and not lent).
 */
int ibemu_engine_port_borrow(struct ibemu_engine *e, uint32_t port,
			     const struct ibemu_port_ops *ops, void *ctx);
/*
 * Ends ibemu_engine_port_borrow() by 'ctx': gives the port back to its
 * owner, or detaches it if 'ctx' holds it alone (it was free, or its
 * owner detached while lending it: the borrower then kept it).
 */
void ibemu_engine_port_unborrow(struct ibemu_engine *e, uint32_t port,
				void *ctx);

/*
 * The nodes' management (agent/'s, registered by model/): what the SMI
 * hands MADs to, and what the link state machine tells of port changes.
 * Missing ops are stubs. Every op runs on the engine's thread.
 */
struct ibemu_mgmt_ops {
	/* Creates the agents' state; 0 or -errno. fini takes NULL too. */
	int (*init)(struct ibemu_engine *e, void **state);
	void (*fini)(struct ibemu_engine *e, void *state);
	/*
	 * Request 'req' (IBEMU_MAD_MSG_LEN bytes) reached the agents of node
	 * 'node' through its port 'port'. Writes the response into 'resp'
	 * (may be 'req'); returns 1 to send it, 0 to drop the MAD silently.
	 */
	int (*process)(struct ibemu_engine *e, uint32_t node, unsigned port,
		       const uint8_t *req, uint8_t *resp);
	/* Whether a MAD that reached an HCA port is for the node's agents
	 * rather than for the port's owner. */
	int (*takes)(const uint8_t *mad);
	/* Delayed work asked for with ibemu_engine_mgmt_at(). */
	void (*event)(struct ibemu_engine *e, uint32_t target, void *ptr);
	/* Port 'pi' changed state by the link state machine (not by the
	 * Set that asked for it): a switch's PortStateChange, Trap 128. */
	void (*port_change)(struct ibemu_engine *e, uint32_t pi);
	/* Copies up to 'max' entries of port 'pi''s P_Key table (the
	 * SMA's, IBA 14.2.5.7) into 'pkeys'; returns how many it has. */
	unsigned (*pkeys)(const struct ibemu_engine *e, uint32_t pi,
			  uint16_t *pkeys, unsigned max);
};

/*
 * The node classes and the management the engine dispatches to, given by
 * a composition layer (model/) so that the engine includes nothing of the
 * node models: fabric/node.h declares them.
 */
struct ibemu_engine_classes;

/*
 * Builds the running state of topology 't' (borrowed; it must outlive the
 * engine) with the node classes of 'cls' (borrowed, static), all ports
 * logically Down and no routes. Returns 0 or -errno.
 */
int ibemu_engine_create(const struct ibemu_topo *t,
			const struct ibemu_engine_classes *cls,
			struct ibemu_engine **out);
void ibemu_engine_destroy(struct ibemu_engine *e);
/* The topology the engine was built from. */
const struct ibemu_topo *ibemu_engine_topo(const struct ibemu_engine *e);
/* The management state created by the classes' mgmt init (agent/'s). */
void *ibemu_engine_mgmt(const struct ibemu_engine *e);

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
/*
 * Moves virtual time on to 't' with no event run: nothing may be due
 * before 't'. For work scheduled outside the engine (daemon/due.c).
 */
void ibemu_engine_advance(struct ibemu_engine *e, uint64_t t);
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
/* The highest LID switch 'node''s LFT routes somewhere; 0 if none. */
uint16_t ibemu_engine_lft_top(const struct ibemu_engine *e, uint32_t node);
int ibemu_engine_get_lft(const struct ibemu_engine *e, uint32_t node,
			 uint16_t lid, uint8_t *port);
/*
 * LIDs first_lid .. first_lid + n - 1 of switch 'node''s LFT at once (an
 * SMA's LinearForwardingTable block, IBA 14.2.5.10), as n calls of
 * ibemu_engine_set_lft() or _get_lft() would: 0, or -EINVAL (not a switch,
 * or past the unicast LIDs; nothing set), -ENOMEM.
 */
int ibemu_engine_set_lft_block(struct ibemu_engine *e, uint32_t node,
			       uint32_t first_lid, const uint8_t *ports,
			       unsigned n);
int ibemu_engine_get_lft_block(const struct ibemu_engine *e, uint32_t node,
			       uint32_t first_lid, uint8_t *ports, unsigned n);
/*
 * The MulticastForwardingTable of switch 'node' (IBA 14.2.5.12): for each
 * MLID from IBEMU_MLID_FIRST up to IBEMU_MFT_CAP of them, a port mask per
 * position (ports 16 x pos .. 16 x pos + 15, bit 0 the lowest; port 0 is
 * the switch itself). Empty until an SM writes it. 0, or -EINVAL (not a
 * switch, an MLID past the cap, a position past the switch's ports),
 * -ENOMEM. Bits of ports the switch does not have are dropped.
 */
#define IBEMU_MFT_CAP 1024u
unsigned ibemu_engine_mft_positions(const struct ibemu_engine *e,
				    uint32_t node);
int ibemu_engine_set_mft(struct ibemu_engine *e, uint32_t node, uint16_t mlid,
			 unsigned pos, uint16_t mask);
int ibemu_engine_get_mft(const struct ibemu_engine *e, uint32_t node,
			 uint16_t mlid, unsigned pos, uint16_t *mask);
/* Sets the LID of an HCA port or of a switch (port 0). */
int ibemu_engine_set_lid(struct ibemu_engine *e, uint32_t node, unsigned port,
			 uint16_t lid);
/*
 * Sets the LMC of HCA port 'port' (IBA 7.11.1: it takes every DLID that
 * matches its LID but for the low 'lmc' bits); 0..7. A switch's port 0
 * has LMC 0 here (no enhanced port 0 LMC).
 */
int ibemu_engine_set_lmc(struct ibemu_engine *e, uint32_t node, unsigned port,
			 uint8_t lmc);

/* LID of an HCA port, or of a switch (any port); 0 if none is set. */
uint16_t ibemu_engine_get_lid(const struct ibemu_engine *e, uint32_t node,
			      unsigned port);

struct ibemu_routes;
/* Sets every LID and every switch's LFT from 'r' (routing/routes.h), then
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
/*
 * Calls the ops->timer(ctx, port, cookie) of HCA port 'port''s owner at
 * virtual time 'when' (>= now). A timer whose port changed owners in the
 * meantime is dropped.
 */
void ibemu_engine_timer(struct ibemu_engine *e, uint32_t port, uint64_t when,
			uint64_t cookie);

struct ibemu_pkt *ibemu_engine_pkt_alloc(struct ibemu_engine *e);
void ibemu_engine_pkt_free(struct ibemu_engine *e, struct ibemu_pkt *p);

/* Counters of a port (global index), wait time up to now included. */
void ibemu_engine_counters(const struct ibemu_engine *e, uint32_t port,
			   struct ibemu_port_counters *out);
void ibemu_engine_counters_reset(struct ibemu_engine *e, uint32_t port);

/* Counters ibemu_engine_counters_clear() can zero, as bits. */
enum ibemu_counter_bits {
	IBEMU_CNT_XMIT_DATA = 1u << 0,
	IBEMU_CNT_RCV_DATA = 1u << 1,
	IBEMU_CNT_XMIT_PKTS = 1u << 2,
	IBEMU_CNT_RCV_PKTS = 1u << 3,
	IBEMU_CNT_UNICAST_XMIT = 1u << 4,
	IBEMU_CNT_UNICAST_RCV = 1u << 5,
	IBEMU_CNT_RCV_ERRORS = 1u << 6,
	IBEMU_CNT_RELAY_ERRORS = 1u << 7,
	IBEMU_CNT_XMIT_DISCARDS = 1u << 8,
	IBEMU_CNT_VL15_DROPPED = 1u << 9,
	IBEMU_CNT_XMIT_WAIT = 1u << 10,
	IBEMU_CNT_P_KEY_VIOLATIONS = 1u << 11,
	IBEMU_CNT_Q_KEY_VIOLATIONS = 1u << 12,
	IBEMU_CNT_MULTICAST_XMIT = 1u << 13,
	IBEMU_CNT_MULTICAST_RCV = 1u << 14,
};
/* Zeroes the counters of port 'port' selected by 'what' (the bits above);
 * a wait in progress counts again from now. */
void ibemu_engine_counters_clear(struct ibemu_engine *e, uint32_t port,
				 unsigned what);
/* Counts one P_Key or Q_Key violation at port 'port' ('what':
 * IBEMU_CNT_P_KEY_VIOLATIONS or IBEMU_CNT_Q_KEY_VIOLATIONS). */
void ibemu_engine_count_violation(struct ibemu_engine *e, uint32_t port,
				  unsigned what);

/* What the engine knows of a port's link, for agents and the CLI. */
struct ibemu_port_link {
	uint32_t node;
	uint32_t peer;	    /* global index of the cabled port, or IBEMU_NONE */
	uint8_t num;	    /* port number on its node */
	uint8_t lanes;	    /* active width: 1, 2, 4, 8 or 12; 0 uncabled */
	uint8_t speed;	    /* enum ibemu_speed; 0 uncabled */
	uint8_t data_vls;   /* data VLs of the link */
	uint8_t state;	    /* enum ibemu_port_state */
	uint8_t phys_state; /* enum ibemu_phys_state */
	uint16_t buf_blocks; /* input buffer per VL, in 64-byte blocks */
};
/* Fills 'out' for port 'port' (global index); -EINVAL if out of range. */
int ibemu_engine_port_link(const struct ibemu_engine *e, uint32_t port,
			   struct ibemu_port_link *out);

/* SL to VL table of output port 'port' (IBA 7.6.6): 16 entries. */
int ibemu_engine_get_sl2vl(const struct ibemu_engine *e, uint32_t port,
			   uint8_t sl2vl[16]);
int ibemu_engine_set_sl2vl(struct ibemu_engine *e, uint32_t port,
			   const uint8_t sl2vl[16]);

/* IBA 14.2.5.9 VLArbitrationTable entry: weight in 64-byte units. */
struct ibemu_vlarb_entry {
	uint8_t vl;
	uint8_t weight;
};

#define IBEMU_VLARB_ENTRIES 64

/*
 * The VL arbitration tables of port 'port' (IBA 7.6.9): 'high' selects the
 * high-priority table; 'n' entries from 'entries' (at most
 * IBEMU_VLARB_ENTRIES) replace the first n. Get copies all of them.
 */
int ibemu_engine_get_vlarb(const struct ibemu_engine *e, uint32_t port,
			   int high, struct ibemu_vlarb_entry *entries,
			   unsigned *n);
int ibemu_engine_set_vlarb(struct ibemu_engine *e, uint32_t port, int high,
			   unsigned first, const struct ibemu_vlarb_entry *ent,
			   unsigned n);
/* LimitOfHighPriority of port 'port' (PortInfo VLHighLimit). */
uint8_t ibemu_engine_get_vl_high_limit(const struct ibemu_engine *e,
				       uint32_t port);
int ibemu_engine_set_vl_high_limit(struct ibemu_engine *e, uint32_t port,
				   uint8_t limit);

/* The link state machine (fabric/link.c). */

/*
 * Virtual time a link takes to train once both ends poll (the physical
 * layer's training, IBA vol 2; real links take milliseconds to seconds).
 */
#define IBEMU_LINK_TRAIN_PS 1000000000ull /* 1 ms */

/*
 * Puts port 'port' (global index) in PortPhysicalState 'phys': Polling,
 * Sleep or Disabled. IBA 7.2: a port that leaves LinkUp takes the logical
 * link down at both ends (the peer polls again); once both ends poll, the
 * link trains after IBEMU_LINK_TRAIN_PS and both ports come up in Init.
 * Returns 0, or -EINVAL for a bad port or state.
 */
int ibemu_engine_set_phys_state(struct ibemu_engine *e, uint32_t port,
				enum ibemu_phys_state phys);

/* Management (fabric/smi.c) as the node's agents use it. */

/* Calls the management's event op with (target, ptr) at 'when' (>= now). */
void ibemu_engine_mgmt_at(struct ibemu_engine *e, uint64_t when,
			  uint32_t target, void *ptr);
/*
 * Sends 'm' from the agents of node 'node': a switch's leave from port 0
 * (LID-routed through its LFT, directed routes by their path), an HCA's
 * from its port 'port'. Used for traps and for responses.
 */
void ibemu_engine_mgmt_emit(struct ibemu_engine *e, uint32_t node,
			    unsigned port, const struct ibemu_mad_msg *m);

/*
 * Brings the fabric to rest, so that what runs next does not depend on
 * what ran before (two identical traffic studies in a row give identical
 * reports): virtual time moves on (processing the events due meanwhile)
 * until every link is idle and every credit is back at its transmitter,
 * and the arbiters return to their power-on position. Returns 0, or -EBUSY
 * if packets are still in the fabric (then it is not at rest).
 */
int ibemu_engine_settle(struct ibemu_engine *e);

/*
 * P_Key table of port 'port' (global index) as its SMA holds it: copies
 * up to 'max' entries into 'pkeys' and returns how many the port has.
 * Without management (no agents) a port has the default table: one entry,
 * the full-member default partition 0xFFFF (IBA 10.9.1.2).
 */
unsigned ibemu_engine_pkeys(const struct ibemu_engine *e, uint32_t port,
			    uint16_t *pkeys, unsigned max);

/*
 * Fault injection: port 'port' (global index, any node) loses data packets
 * (VL0-14) it transmits, 'rate_ppm' in a million, chosen by a generator
 * seeded with 'seed' so that a run repeats exactly. A lost packet still
 * takes its time on the link (it is corrupted on the wire) and its buffer
 * space at the receiver is freed as its tail arrives, but it is delivered
 * to nobody; the transmitter counts it in PortXmitDiscards. VL15 is never
 * dropped here. A rate of 0 turns it off (the default: nothing is drawn).
 * Returns 0, or -EINVAL for a bad port or a rate above 1000000.
 */
int ibemu_engine_set_drop(struct ibemu_engine *e, uint32_t port,
			  uint32_t rate_ppm, uint64_t seed);
/* The loss rate set on port 'port', in a million; 0 for none or a bad
 * port. */
uint32_t ibemu_engine_drop_rate(const struct ibemu_engine *e, uint32_t port);

/* Packets inside the fabric (in buffers or on links). */
uint64_t ibemu_engine_in_flight(const struct ibemu_engine *e);

#endif

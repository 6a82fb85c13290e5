/* SPDX-License-Identifier: MIT */
/*
 * Agent internals shared by the files of agent/: the state a node's SMA,
 * PMA and CC agent keep beyond what the engine and the node models already
 * have (the engine keeps port states, LIDs, LFTs, SL2VL, VL arbitration and
 * counters, the models their congestion control settings; the agents reach
 * those only through engine.h, switch.h and hca.h), the request context
 * handlers work on, and the attribute tables.
 */
#ifndef IBEMU_AGENT_INT_H
#define IBEMU_AGENT_INT_H

#include <stdint.h>

#include "agent.h"
#include "engine.h"
#include "mad.h"
#include "mad_cc.h"
#include "mad_pma.h"
#include "mad_sma.h"
#include "topo.h"
#include "util.h"

/* What ibemu's devices report (IBA 14.2.5.3 NodeInfo, 14.2.5.4). */
#define IBEMU_AGENT_REVISION	      0x00000001u
#define IBEMU_AGENT_CA_PKEYS	      128  /* PartitionCap of an HCA */
#define IBEMU_AGENT_SWITCH_PKEYS      32   /* PartitionCap (port 0) */
#define IBEMU_AGENT_SWITCH_ENF_PKEYS  32   /* PartitionEnforcementCap */
#define IBEMU_AGENT_CA_GUIDS	      8	   /* GUIDCap of an HCA port */
#define IBEMU_AGENT_MFT_CAP	      1024 /* MulticastFDBCap: MLIDs */
#define IBEMU_AGENT_VLARB_CAP	      64   /* VLArbitrationHigh/LowCap */
#define IBEMU_AGENT_RESP_TIME	      8	   /* RespTimeValue: 4.096 us << 8 */
#define IBEMU_AGENT_GID_PREFIX	      0xfe80000000000000ull
#define IBEMU_AGENT_LFT_CAP	      49152u /* LinearFDBCap: LIDs 0..0xBFFF */
#define IBEMU_AGENT_UNICAST_LID_MAX   0xbfffu
#define IBEMU_AGENT_LINK_DOWN_POLLING 2 /* LinkDownDefaultState */
#define IBEMU_AGENT_LINK_DOWN_SLEEP   1

/* A trap goes out once and is repeated up to this many sends in all. */
#define IBEMU_AGENT_TRAP_SENDS 5
/*
 * The agents' trap TIDs start here. Their upper 32 bits are no hi_tid an
 * attached process's agent gets (24 bits, attach/sess_agent.c), so that a
 * TrapRepress() at an HCA port tells by its TID whose trap it answers.
 */
#define IBEMU_AGENT_TRAP_TID 0x1b3a000000000000ull

/* Kinds of delayed work (ibemu_engine_mgmt_at); the rest is a generation. */
enum ibemu_agent_work {
	IBEMU_AGENT_WORK_TRAP = 1,	 /* target: global port index */
	IBEMU_AGENT_WORK_MKEY_LEASE = 2, /* target: global port index */
	IBEMU_AGENT_WORK_KIND_BITS = 4,
};

/*
 * The trap a port's SMA sends its master SM until the SM represses it
 * (IBA 14.2.5.1, 13.4.9): a switch's Trap 128 (kept in port 0's entry), an
 * HCA port's Trap 144. One at a time: a change while one is pending is
 * told by its repeats (with the new details, the same TID).
 */
struct ibemu_agent_trap {
	uint8_t pending; /* sent, not yet repressed */
	uint8_t sends;
	uint8_t toggle;
	uint16_t number;
	uint32_t gen; /* its timer's generation */
	uint64_t tid;
	uint8_t details[IBEMU_MAD_NOTICE_DETAILS_LEN];
};

/*
 * One port's settable PortInfo components (IBA 14.2.5.6) and tables. For a
 * switch, M_Key, GIDPrefix, MasterSMLID/SL, LMC, SubnetTimeout and the
 * M_Key and CC_Key state live in port 0's entry (IBA 14.2.4: switch port 0
 * holds the switch's M_Key); external ports ignore them.
 */
struct ibemu_agent_port {
	uint32_t node; /* where the port is, as the engine numbers it */
	uint8_t num;
	uint64_t m_key;
	uint64_t gid_prefix;
	uint64_t *guids; /* GUIDCap entries ([0]: the port GUID), or NULL */
	uint16_t *pkeys; /* npkeys entries */
	uint16_t npkeys;
	uint16_t master_sm_lid;
	uint16_t m_key_lease_period; /* seconds; 0: never expires */
	uint16_t m_key_violations;
	/* P_Key and Q_Key violations: the engine's port counters, which
	 * the port's owner (a QP transport) counts. */
	uint32_t cap_mask;
	uint16_t cap_mask2;
	uint8_t guid_cap;
	uint8_t m_key_protect;
	uint8_t lmc;
	uint8_t master_sm_sl;
	uint8_t subnet_timeout;
	uint8_t link_down_default;
	uint8_t width_supported, width_enabled;
	uint8_t speed_supported, speed_enabled;
	uint8_t speed_ext_supported, speed_ext_enabled;
	uint8_t mtu_cap, neighbor_mtu;
	uint8_t vl_cap, op_vls;
	uint8_t hoq_life;
	uint8_t vl_stall_count;
	uint8_t init_type_reply;
	uint8_t part_enf_in, part_enf_out;
	uint8_t filter_raw_in, filter_raw_out;
	uint8_t mcast_pkey_trap_suppr;
	uint8_t local_phy_errors, overrun_errors;
	uint8_t sl2vl[16]; /* as the SM wrote it (see sma_tables.c) */
	uint8_t lease_running;
	uint32_t lease_gen; /* M_Key lease timer generation */
	/* CC_Key (Annex A10.4.1): per CA port, and switch port 0. */
	uint64_t cc_key;
	uint16_t cc_key_lease_period;
	uint16_t cc_key_violations;
	uint8_t cc_key_protect;
	struct ibemu_agent_trap trap;
};

/*
 * Per node: its shape (copied from the topology and the engine at init),
 * SwitchInfo state and the MFT.
 */
struct ibemu_agent_node {
	uint32_t first_port; /* global index of its port 0 */
	uint8_t nports;
	uint8_t is_switch;
	uint16_t linear_fdb_top;
	uint8_t fdb_top_set; /* an SM wrote LinearFDBTop */
	uint8_t default_port;
	uint8_t default_mcast_primary;
	uint8_t default_mcast_not_primary;
	uint8_t life_time_value;
	uint8_t port_state_change;
};

/* The management state the engine keeps for agent/ (ibemu_engine_mgmt()). */
struct ibemu_agents {
	struct ibemu_agent_node *nodes; /* one per topology node */
	struct ibemu_agent_port *ports; /* one per engine port */
	uint32_t nnodes;
	uint32_t nports;
	uint64_t next_tid; /* TransactionIDs of the agents' traps */
};

/* One request being answered. */
struct ibemu_agent_req {
	struct ibemu_engine *e;
	uint32_t node;
	unsigned port; /* the port it came in through */
	const uint8_t *req;
	uint8_t *resp;
	uint8_t method; /* IBEMU_MAD_METHOD_GET or _SET (R bit clear) */
	uint16_t attr_id;
	uint32_t attr_mod;
	int hide_mkey; /* IBA 14.2.4: a wrong key read as 0 (M_Key, CC_Key) */
};

/* Status a handler returns to drop the request without a response. */
#define IBEMU_AGENT_DROP (-1)

/* Methods an attribute takes, as bits. */
#define IBEMU_AGENT_GET		 (1u << 0)
#define IBEMU_AGENT_SET		 (1u << 1)
#define IBEMU_AGENT_TRAP_REPRESS (1u << 2)

/* Which nodes have an attribute. */
#define IBEMU_AGENT_ANY	   0
#define IBEMU_AGENT_SWITCH 1
#define IBEMU_AGENT_CA	   2

/*
 * An attribute handler: fills the response data for a Get, applies then
 * reports a Set. Returns a Status (IBEMU_MAD_STATUS_*) or IBEMU_AGENT_DROP.
 */
struct ibemu_agent_attr {
	uint16_t attr_id;
	uint8_t methods;
	uint8_t nodes;
	int (*handler)(struct ibemu_agent_req *r);
};

/* The agents' state of engine 'e' (NULL before init, after fini). */
static inline struct ibemu_agents *ibemu__agents(const struct ibemu_engine *e)
{
	return ibemu_engine_mgmt(e);
}

static inline struct ibemu_agent_port *
ibemu__agent_port(const struct ibemu_engine *e, uint32_t pi)
{
	return &ibemu__agents(e)->ports[pi];
}

static inline struct ibemu_agent_node *
ibemu__agent_node(const struct ibemu_engine *e, uint32_t node)
{
	return &ibemu__agents(e)->nodes[node];
}

static inline int ibemu__agent_is_switch(const struct ibemu_engine *e,
					 uint32_t node)
{
	return ibemu__agent_node(e, node)->is_switch;
}

/*
 * The port whose M_Key, MasterSMLID and CC_Key serve node 'node' when a MAD
 * came in through 'port': port 0 on a switch, 'port' itself on an HCA.
 */
static inline uint32_t ibemu__agent_mgmt_port(const struct ibemu_engine *e,
					      uint32_t node, unsigned port)
{
	const struct ibemu_agent_node *n = ibemu__agent_node(e, node);

	return n->first_port + (n->is_switch ? 0u : port);
}

/* agent.c */
/*
 * Looks 'r->attr_id' up in 'tab' (n entries) and runs its handler after the
 * method and node checks; returns the Status or IBEMU_AGENT_DROP.
 */
int ibemu__agent_dispatch(struct ibemu_agent_req *r,
			  const struct ibemu_agent_attr *tab, size_t n);
/* Asks for the agents' event op at now + 'delay_ps'. */
void ibemu__agent_later(struct ibemu_engine *e, uint64_t delay_ps,
			enum ibemu_agent_work kind, uint32_t target,
			uint32_t gen);

/* sma.c */
int ibemu__sma_process(struct ibemu_agent_req *r);

/* sma_port.c */
int ibemu__sma_port_info(struct ibemu_agent_req *r);
/* Mellanox's vendor-specific SMP attribute (sma_port.c). */
#define IBEMU_SMP_ATTR_MLNX_EXT_PORT_INFO 0xff90
int ibemu__sma_mlnx_ext_port_info(struct ibemu_agent_req *r);
void ibemu__sma_port_info_fill(const struct ibemu_engine *e, uint32_t pi,
			       unsigned local_port,
			       struct ibemu_mad_port_info *out);
/*
 * Sets the agents' power-on values of port 'pi' in 'a' (not yet the
 * engine's management state) from the topology and the engine.
 */
int ibemu__sma_port_init(struct ibemu_engine *e, struct ibemu_agents *a,
			 uint32_t pi);
void ibemu__sma_mkey_lease(struct ibemu_engine *e, uint32_t pi, uint32_t gen);
/*
 * IBA 14.2.4: the M_Key check of an SMP; returns 1 if it may proceed, 0 to
 * drop it (M_KeyViolations counted). Sets r->hide_mkey.
 */
int ibemu__sma_mkey_check(struct ibemu_agent_req *r);

/* sma_switch.c */
int ibemu__sma_switch_info(struct ibemu_agent_req *r);
int ibemu__sma_lft(struct ibemu_agent_req *r);
int ibemu__sma_mft(struct ibemu_agent_req *r);
/*
 * A port of switch 'node' changed link state by the link state machine
 * (IBA 14.2.5.4 PortStateChange): sets the bit, raises Trap 128. The
 * engine tells of it through the management's port_change op.
 */
void ibemu__sma_port_state_change(struct ibemu_engine *e, uint32_t node);

/* sma_trap.c */
/*
 * Raises trap 'number' with DataDetails 'details' (54 bytes) at port 'pi'
 * (a switch's port 0, an HCA port): sent to its master SM now, repeated
 * until repressed; a trap already pending takes the new details.
 */
void ibemu__sma_trap_raise(struct ibemu_engine *e, uint32_t pi, uint16_t number,
			   const uint8_t *details);
/* IBA 14.2.5.1 Trap 144: HCA port 'pi''s CapabilityMask changed. */
void ibemu__sma_cap_mask_changed(struct ibemu_engine *e, uint32_t pi);
void ibemu__sma_trap_event(struct ibemu_engine *e, uint32_t pi, uint32_t gen);
int ibemu__sma_trap_repress(struct ibemu_agent_req *r);

/* sma_tables.c */
int ibemu__sma_guid_info(struct ibemu_agent_req *r);
int ibemu__sma_pkey_table(struct ibemu_agent_req *r);
int ibemu__sma_sl2vl(struct ibemu_agent_req *r);
int ibemu__sma_vlarb(struct ibemu_agent_req *r);

/* pma.c */
int ibemu__pma_process(struct ibemu_agent_req *r);

/* cc.c */
int ibemu__cc_process(struct ibemu_agent_req *r);

#endif

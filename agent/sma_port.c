// SPDX-License-Identifier: MIT
/*
 * PortInfo (IBA 14.2.5.6) and what it drives: the logical and physical
 * port states of IBA 7.2 (an SM moves a port Init -> Armed -> Active, takes
 * a link down, disables or re-enables it; a link that goes down retrains
 * after a delay in virtual time, both ends together), LIDs, and the M_Key
 * protection of IBA 14.2.4. The engine keeps the states, LIDs, VL
 * arbitration and SL2VL, and runs the link state machine (fabric/link.c)
 * that a Set of PortState or PortPhysicalState drives; the settable
 * components it does not need live in struct ibemu_agent_port.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "rate.h"

/*
 * An MTU of topo/rate.h's set (IBEMU_MTU_MIN..IBEMU_MTU_MAX) to its
 * PortInfo encoding (IBA 14.2.5.6 MTUCap: 1 is 256 bytes, 5 is 4096).
 */
static uint8_t mtu_enc(unsigned bytes)
{
	uint8_t enc = IBEMU_MAD_MTU_256;

	_Static_assert(IBEMU_MTU_MIN == 256u && IBEMU_MTU_MAX == 4096u,
		       "MTUCap encodes 256 to 4096 bytes");
	while (enc < IBEMU_MAD_MTU_4096 && (IBEMU_MTU_MIN << (enc - 1)) < bytes)
		enc++;
	return enc;
}

/* Data VL count to VLCap/OperationalVLs (1: VL0 ... 5: VL0-14). */
static uint8_t vls_enc(unsigned vls)
{
	if (vls <= 1)
		return IBEMU_MAD_VLS_1;
	if (vls <= 2)
		return IBEMU_MAD_VLS_2;
	if (vls <= 4)
		return IBEMU_MAD_VLS_4;
	if (vls <= 8)
		return IBEMU_MAD_VLS_8;
	return IBEMU_MAD_VLS_15;
}

/*
 * The link a port trains to: its cable's width and speed, or the fabric's
 * defaults for a port without one (and a switch's port 0).
 */
static void port_link(const struct ibemu_engine *e,
		      const struct ibemu_port_link *l, unsigned *lanes,
		      enum ibemu_speed *speed)
{
	const struct ibemu_topo *t = ibemu_engine_topo(e);

	if (l->peer != IBEMU_NONE) {
		*lanes = l->lanes;
		*speed = (enum ibemu_speed)l->speed;
	} else {
		*lanes = t->defaults.width;
		*speed = t->defaults.speed;
	}
}

/* The engine's view of port 'pi', which the agents only ask for valid
 * indices. */
static struct ibemu_port_link link_of(const struct ibemu_engine *e, uint32_t pi)
{
	struct ibemu_port_link l;

	IBEMU_BUG_ON(ibemu_engine_port_link(e, pi, &l));
	return l;
}

/*
 * LinkSpeedSupported and LinkSpeedExtSupported of a port whose fastest
 * speed is 's': every slower speed too, as real ports do. FDR10 is a
 * vendor extension signalled outside PortInfo; it reads as QDR here.
 */
static void speed_caps(enum ibemu_speed s, uint8_t *sup, uint8_t *ext)
{
	static const uint8_t caps[IBEMU_SPEED_COUNT][2] = {
		[IBEMU_SPEED_SDR] = {0x1, 0x0},
		[IBEMU_SPEED_DDR] = {0x3, 0x0},
		[IBEMU_SPEED_QDR] = {0x7, 0x0},
		[IBEMU_SPEED_FDR10] = {0x7, 0x0},
		[IBEMU_SPEED_FDR] = {0x7, 0x1},
		[IBEMU_SPEED_EDR] = {0x7, 0x3},
		[IBEMU_SPEED_HDR] = {0x7, 0x7},
		[IBEMU_SPEED_NDR] = {0x7, 0xf},
		[IBEMU_SPEED_XDR] = {0x7, 0xf},
	};

	*sup = caps[s][0];
	*ext = caps[s][1];
}

/*
 * LinkSpeedActive and LinkSpeedExtActive. With an extended speed active
 * the SM reads LinkSpeedExtActive (IBA 14.2.5.6); LinkSpeedActive then
 * shows the fastest base speed. XDR has no LinkSpeedExt bit in the fields
 * ibemu encodes: it reads as NDR.
 */
static void speed_active(enum ibemu_speed s, uint8_t *act, uint8_t *ext)
{
	static const uint8_t active[IBEMU_SPEED_COUNT][2] = {
		[IBEMU_SPEED_SDR] = {IBEMU_MAD_SPEED_SDR, 0},
		[IBEMU_SPEED_DDR] = {IBEMU_MAD_SPEED_DDR, 0},
		[IBEMU_SPEED_QDR] = {IBEMU_MAD_SPEED_QDR, 0},
		[IBEMU_SPEED_FDR10] = {IBEMU_MAD_SPEED_QDR, 0},
		[IBEMU_SPEED_FDR] = {IBEMU_MAD_SPEED_QDR,
				     IBEMU_MAD_SPEED_EXT_FDR},
		[IBEMU_SPEED_EDR] = {IBEMU_MAD_SPEED_QDR,
				     IBEMU_MAD_SPEED_EXT_EDR},
		[IBEMU_SPEED_HDR] = {IBEMU_MAD_SPEED_QDR,
				     IBEMU_MAD_SPEED_EXT_HDR},
		[IBEMU_SPEED_NDR] = {IBEMU_MAD_SPEED_QDR,
				     IBEMU_MAD_SPEED_EXT_NDR},
		[IBEMU_SPEED_XDR] = {IBEMU_MAD_SPEED_QDR,
				     IBEMU_MAD_SPEED_EXT_NDR},
	};

	*act = active[s][0];
	*ext = active[s][1];
}

/* 1x and 4x always; 2x from HDR on (IBA 1.4); the cable's own width. */
static uint8_t width_caps(unsigned lanes, enum ibemu_speed s)
{
	uint8_t w = IBEMU_MAD_WIDTH_1X | IBEMU_MAD_WIDTH_4X |
		    ibemu_width_to_ib(lanes);

	if (s >= IBEMU_SPEED_HDR)
		w |= IBEMU_MAD_WIDTH_2X;
	return w;
}

int ibemu__sma_port_init(struct ibemu_engine *e, struct ibemu_agents *a,
			 uint32_t pi)
{
	struct ibemu_agent_port *ap = &a->ports[pi];
	const struct ibemu_port_link l = link_of(e, pi);
	const struct ibemu_topo *t = ibemu_engine_topo(e);
	const struct ibemu_topo_node *tn = &t->nodes[l.node];
	int sw = tn->type == IBEMU_NODE_SWITCH;
	enum ibemu_speed speed;
	unsigned lanes, i;

	ap->node = l.node;
	ap->num = l.num;
	/* An HCA has no port 0: its slot stays empty. */
	if (!sw && l.num == 0)
		return 0;
	port_link(e, &l, &lanes, &speed);
	ap->gid_prefix = IBEMU_AGENT_GID_PREFIX;
	ap->link_down_default = IBEMU_AGENT_LINK_DOWN_POLLING;
	ap->width_supported = width_caps(lanes, speed);
	ap->width_enabled = ap->width_supported;
	speed_caps(speed, &ap->speed_supported, &ap->speed_ext_supported);
	ap->speed_enabled = ap->speed_supported;
	ap->speed_ext_enabled = ap->speed_ext_supported;
	ap->mtu_cap = mtu_enc(t->defaults.mtu);
	ap->neighbor_mtu = ap->mtu_cap;
	ap->vl_cap = vls_enc(tn->vls);
	/* The engine brings cabled links up with the VLs both ends have. */
	ap->op_vls = vls_enc(l.data_vls);
	ap->hoq_life = 19;
	ap->vl_stall_count = 7;
	ap->local_phy_errors = 8;
	ap->overrun_errors = 8;
	IBEMU_BUG_ON(ibemu_engine_get_sl2vl(e, pi, ap->sl2vl));

	ap->cap_mask =
		IBEMU_MAD_CAP_SL_MAPPING | IBEMU_MAD_CAP_SYSTEM_IMAGE_GUID |
		IBEMU_MAD_CAP_EXTENDED_SPEEDS | IBEMU_MAD_CAP_CAPABILITY_MASK2;
	if (sw)
		ap->cap_mask |= IBEMU_MAD_CAP_TRAP; /* Trap 128 */
	else
		ap->cap_mask |= IBEMU_MAD_CAP_CLIENT_REREGISTRATION;
	/* CapabilityMask2 (IBA 14.2.5.6): widths and speeds past IBA 1.2. */
	if (ap->width_supported & IBEMU_MAD_WIDTH_2X)
		ap->cap_mask2 |= 1u << 4;
	if (speed >= IBEMU_SPEED_HDR)
		ap->cap_mask2 |= 1u << 5;
	if (speed >= IBEMU_SPEED_NDR)
		ap->cap_mask2 |= 1u << 10;

	/* IBA 14.2.5.5: CA ports and switch port 0 have GUIDs. */
	if (!sw || l.num == 0) {
		ap->guid_cap = sw ? 1 : IBEMU_AGENT_CA_GUIDS;
		ap->guids = calloc(ap->guid_cap, sizeof(*ap->guids));
		if (!ap->guids)
			return -ENOMEM;
		ap->guids[0] = tn->ports[l.num].guid;
	}
	/*
	 * IBA 14.2.5.7: NodeInfo PartitionCap entries for CA ports and
	 * switch port 0, SwitchInfo PartitionEnforcementCap for external
	 * ports; the default partition in entry 0.
	 */
	ap->npkeys = !sw	  ? IBEMU_AGENT_CA_PKEYS
		     : l.num == 0 ? IBEMU_AGENT_SWITCH_PKEYS
				  : IBEMU_AGENT_SWITCH_ENF_PKEYS;
	ap->pkeys = calloc(ap->npkeys, sizeof(*ap->pkeys));
	if (!ap->pkeys)
		return -ENOMEM;
	ap->pkeys[0] = 0xffff;
	for (i = 1; i < ap->npkeys; i++)
		ap->pkeys[i] = 0;
	return 0;
}

/* Whether port 'pi' is a switch's management port 0 (base, no link). */
static int is_sp0(const struct ibemu_engine *e, uint32_t pi)
{
	const struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);

	return ap->num == 0 && ibemu__agent_is_switch(e, ap->node);
}

void ibemu__sma_port_info_fill(const struct ibemu_engine *e, uint32_t pi,
			       unsigned local_port,
			       struct ibemu_mad_port_info *out)
{
	const struct ibemu_port_link l = link_of(e, pi);
	const struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);
	uint32_t mi = ibemu__agent_mgmt_port(e, l.node, l.num);
	const struct ibemu_agent_port *mp = ibemu__agent_port(e, mi);
	int own = mi == pi; /* a CA port or switch port 0 */
	enum ibemu_speed speed;
	unsigned lanes;

	memset(out, 0, sizeof(*out));
	port_link(e, &l, &lanes, &speed);
	/*
	 * IBA 14.2.5.6: on a switch the LID, LMC, M_Key and SM components
	 * belong to port 0; external ports report the switch's.
	 */
	out->m_key = own ? ap->m_key : 0;
	out->gid_prefix = mp->gid_prefix;
	out->lid = ibemu_engine_get_lid(e, l.node, l.num);
	out->master_sm_lid = mp->master_sm_lid;
	out->capability_mask = ap->cap_mask;
	out->m_key_lease_period = own ? ap->m_key_lease_period : 0;
	out->local_port_num = (uint8_t)local_port;
	out->link_width_enabled = ap->width_enabled;
	out->link_width_supported = ap->width_supported;
	out->link_width_active = ibemu_width_to_ib(lanes);
	out->link_speed_supported = ap->speed_supported;
	if (is_sp0(e, pi)) {
		/* The management port has no link: it is always up. */
		out->port_state = IBEMU_MAD_PORT_ACTIVE;
		out->port_phys_state = IBEMU_MAD_PHYS_LINKUP;
	} else {
		out->port_state = l.state;
		out->port_phys_state = l.phys_state;
	}
	out->link_down_default_state = ap->link_down_default;
	out->m_key_protect_bits = own ? ap->m_key_protect : 0;
	out->lmc = mp->lmc;
	speed_active(speed, &out->link_speed_active,
		     &out->link_speed_ext_active);
	out->link_speed_enabled = ap->speed_enabled;
	out->neighbor_mtu = ap->neighbor_mtu;
	out->master_sm_sl = mp->master_sm_sl;
	out->vl_cap = ap->vl_cap;
	out->vl_high_limit = ibemu_engine_get_vl_high_limit(e, pi);
	out->vl_arb_high_cap = IBEMU_AGENT_VLARB_CAP;
	out->vl_arb_low_cap = IBEMU_AGENT_VLARB_CAP;
	out->init_type_reply = ap->init_type_reply;
	out->mtu_cap = ap->mtu_cap;
	out->vl_stall_count = ap->vl_stall_count;
	out->hoq_life = ap->hoq_life;
	out->operational_vls = ap->op_vls;
	out->partition_enforcement_inbound = ap->part_enf_in;
	out->partition_enforcement_outbound = ap->part_enf_out;
	out->filter_raw_inbound = ap->filter_raw_in;
	out->filter_raw_outbound = ap->filter_raw_out;
	out->m_key_violations = mp->m_key_violations;
	{
		struct ibemu_port_counters c;

		ibemu_engine_counters(e, pi, &c);
		out->p_key_violations = c.p_key_violations;
		out->q_key_violations = c.q_key_violations;
	}
	out->guid_cap = ap->guid_cap;
	out->mcast_pkey_trap_suppression = ap->mcast_pkey_trap_suppr;
	out->subnet_timeout = mp->subnet_timeout;
	out->resp_time_value = IBEMU_AGENT_RESP_TIME;
	out->local_phy_errors = ap->local_phy_errors;
	out->overrun_errors = ap->overrun_errors;
	out->capability_mask2 = ap->cap_mask2;
	out->link_speed_ext_supported = ap->speed_ext_supported;
	out->link_speed_ext_enabled = ap->speed_ext_enabled;
}

void ibemu__sma_mkey_lease(struct ibemu_engine *e, uint32_t pi, uint32_t gen)
{
	struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);

	/* IBA 14.2.4: an expired lease drops the protection. */
	if (gen != ap->lease_gen || !ap->lease_running)
		return;
	ap->lease_running = 0;
	ap->m_key_protect = 0;
}

int ibemu__sma_mkey_check(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	uint32_t mi = ibemu__agent_mgmt_port(e, r->node, r->port);
	struct ibemu_agent_port *ap = ibemu__agent_port(e, mi);
	uint64_t key = ibemu_mad_bits_get(r->req, IBEMU_SMP_MKEY_OFF * 8, 64);

	/* IBA 14.2.4: a port whose M_Key is 0 checks nothing. */
	if (!ap->m_key)
		return 1;
	if (key == ap->m_key) {
		/* IBA 14.2.4: a matching M_Key stops the lease timer. */
		if (ap->lease_running) {
			ap->lease_running = 0;
			ap->lease_gen = (ap->lease_gen + 1) & 0x0fffffffu;
		}
		return 1;
	}
	/* IBA 14.2.4, table "M_Key Protection Levels". */
	if (r->method == IBEMU_MAD_METHOD_GET) {
		if (ap->m_key_protect == 0)
			return 1;
		if (ap->m_key_protect == 1) {
			r->hide_mkey = 1;
			return 1;
		}
	}
	if (ap->m_key_violations != UINT16_MAX)
		ap->m_key_violations++;
	if (ap->m_key_lease_period && !ap->lease_running) {
		ap->lease_running = 1;
		ap->lease_gen = (ap->lease_gen + 1) & 0x0fffffffu;
		ibemu__agent_later(
			e, (uint64_t)ap->m_key_lease_period * 1000000000000ull,
			IBEMU_AGENT_WORK_MKEY_LEASE, mi, ap->lease_gen);
	}
	return 0;
}

static int lid_ok(uint16_t lid)
{
	return lid && lid <= IBEMU_AGENT_UNICAST_LID_MAX;
}

/*
 * Checks a Set(PortInfo) of port 'pi' before anything changes: IBA
 * 14.2.5.6 gives each settable component its valid values, and a Set that
 * carries an invalid one changes nothing and returns INVALID_FIELD.
 */
static int port_info_check(struct ibemu_engine *e, uint32_t pi,
			   const struct ibemu_mad_port_info *in)
{
	const struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);
	int own = ibemu__agent_mgmt_port(e, ap->node, ap->num) == pi;
	uint8_t st = in->port_state, ph = in->port_phys_state;
	enum ibemu_port_state cur;

	/* A LID or SM LID that changes must be unicast (IBA 4.1.3). */
	if (own && in->lid != ibemu_engine_get_lid(e, ap->node, ap->num) &&
	    !lid_ok(in->lid))
		return -EINVAL;
	if (own && in->master_sm_lid != ap->master_sm_lid &&
	    !lid_ok(in->master_sm_lid))
		return -EINVAL;
	/* LinkWidthEnabled: 0 no change, 255 all supported, else a subset. */
	if (in->link_width_enabled && in->link_width_enabled != 255 &&
	    (in->link_width_enabled & ~ap->width_supported))
		return -EINVAL;
	/* LinkSpeedEnabled: 0 no change, 15 all supported, else a subset. */
	if (in->link_speed_enabled && in->link_speed_enabled != 15 &&
	    (in->link_speed_enabled & ~ap->speed_supported))
		return -EINVAL;
	/* LinkSpeedExtEnabled: 0, 30 (disable), 31 (all), else a subset. */
	if (in->link_speed_ext_enabled && in->link_speed_ext_enabled < 30 &&
	    (in->link_speed_ext_enabled & ~ap->speed_ext_supported))
		return -EINVAL;
	if (in->neighbor_mtu < IBEMU_MAD_MTU_256 ||
	    in->neighbor_mtu > ap->mtu_cap)
		return -EINVAL;
	/* OperationalVLs: 0 no change, else at most VLCap. */
	if (in->operational_vls > ap->vl_cap)
		return -EINVAL;
	if (in->link_down_default_state > IBEMU_AGENT_LINK_DOWN_POLLING)
		return -EINVAL;
	/* PortPhysicalState: NOP, Sleep, Polling or Disabled. */
	if (ph > IBEMU_MAD_PHYS_DISABLED)
		return -EINVAL;
	/* PortState: NOP, Down, Armed or Active; Init is not settable. */
	if (st == IBEMU_MAD_PORT_INIT || st > IBEMU_MAD_PORT_ACTIVE)
		return -EINVAL;
	/* A physical state change only goes with NOP or Down. */
	if (ph && st != IBEMU_MAD_PORT_NOP && st != IBEMU_MAD_PORT_DOWN)
		return -EINVAL;
	/* The management port has no link state to change. */
	if (is_sp0(e, pi))
		return 0;
	/* IBA 7.2: Armed only from Init, Active only from Armed. */
	cur = ibemu_engine_port_state(e, pi);
	if (st == IBEMU_MAD_PORT_ARMED && cur != IBEMU_PORT_INIT &&
	    cur != IBEMU_PORT_ARMED)
		return -EINVAL;
	if (st == IBEMU_MAD_PORT_ACTIVE && cur != IBEMU_PORT_ARMED &&
	    cur != IBEMU_PORT_ACTIVE)
		return -EINVAL;
	return 0;
}

static uint16_t counter_write(uint16_t cur, uint16_t in)
{
	/* The violation counters are cleared by writing 0; other values
	 * leave them alone (a Get-modify-Set carries the old count). */
	return in ? cur : 0;
}

/*
 * Applies the logical and physical state parts of a checked Set. The link
 * state machine (fabric/link.c) takes a port that leaves LinkUp down at
 * both ends and retrains the link once both poll. IBA 14.2.5.4: the
 * SubnSet() does not set this switch's PortStateChange; the peer's port
 * goes down by its link state machine, and the engine tells the peer's
 * agents (the port_change op).
 */
static void port_state_set(struct ibemu_engine *e, uint32_t pi, uint8_t st,
			   uint8_t ph)
{
	const struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);

	if (ph == IBEMU_MAD_PHYS_DISABLED || ph == IBEMU_MAD_PHYS_SLEEP) {
		/* IBA 7.2: the port leaves the link and stays out (a
		 * training under way is cancelled). */
		ibemu_engine_set_phys_state(e, pi, (enum ibemu_phys_state)ph);
		return;
	}
	if (ph == IBEMU_MAD_PHYS_POLLING || st == IBEMU_MAD_PORT_DOWN) {
		enum ibemu_phys_state to = IBEMU_PHYS_POLLING;

		/* Down without a physical state: LinkDownDefaultState. A
		 * port down already polls again, re-enabled. */
		if (!ph && ap->link_down_default == IBEMU_AGENT_LINK_DOWN_SLEEP)
			to = IBEMU_PHYS_SLEEP;
		ibemu_engine_set_phys_state(e, pi, to);
		return;
	}
	if (st == IBEMU_MAD_PORT_ARMED || st == IBEMU_MAD_PORT_ACTIVE)
		ibemu_engine_set_port_state(e, pi, (enum ibemu_port_state)st);
}

static void port_info_apply(struct ibemu_engine *e, uint32_t pi,
			    const struct ibemu_mad_port_info *in)
{
	struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);
	int own = ibemu__agent_mgmt_port(e, ap->node, ap->num) == pi;

	if (own) {
		ap->m_key = in->m_key;
		ap->gid_prefix = in->gid_prefix;
		if (in->lid != ibemu_engine_get_lid(e, ap->node, ap->num))
			ibemu_engine_set_lid(e, ap->node, ap->num, in->lid);
		ap->master_sm_lid = in->master_sm_lid;
		ap->m_key_lease_period = in->m_key_lease_period;
		ap->m_key_protect = in->m_key_protect_bits;
		ap->lmc = in->lmc;
		if (ap->num)
			ibemu_engine_set_lmc(e, ap->node, ap->num, in->lmc);
		ap->master_sm_sl = in->master_sm_sl;
		ap->subnet_timeout = in->subnet_timeout;
		ap->m_key_violations = counter_write(ap->m_key_violations,
						     in->m_key_violations);
	}
	if (in->link_width_enabled == 255)
		ap->width_enabled = ap->width_supported;
	else if (in->link_width_enabled)
		ap->width_enabled = in->link_width_enabled;
	if (in->link_speed_enabled == 15)
		ap->speed_enabled = ap->speed_supported;
	else if (in->link_speed_enabled)
		ap->speed_enabled = in->link_speed_enabled;
	if (in->link_speed_ext_enabled == 31)
		ap->speed_ext_enabled = ap->speed_ext_supported;
	else if (in->link_speed_ext_enabled == 30)
		ap->speed_ext_enabled = 0;
	else if (in->link_speed_ext_enabled)
		ap->speed_ext_enabled = in->link_speed_ext_enabled;
	ap->neighbor_mtu = in->neighbor_mtu;
	if (in->operational_vls)
		ap->op_vls = in->operational_vls;
	if (in->link_down_default_state)
		ap->link_down_default = in->link_down_default_state;
	/* IBA 7.6.9: LimitOfHighPriority is PortInfo's VLHighLimit. */
	ibemu_engine_set_vl_high_limit(e, pi, in->vl_high_limit);
	ap->init_type_reply = in->init_type_reply;
	ap->vl_stall_count = in->vl_stall_count;
	ap->hoq_life = in->hoq_life;
	ap->part_enf_in = in->partition_enforcement_inbound;
	ap->part_enf_out = in->partition_enforcement_outbound;
	ap->filter_raw_in = in->filter_raw_inbound;
	ap->filter_raw_out = in->filter_raw_outbound;
	/* Writing 0 clears a violation counter (as counter_write). */
	ibemu_engine_counters_clear(
		e, pi,
		(in->p_key_violations ? 0 : IBEMU_CNT_P_KEY_VIOLATIONS) |
			(in->q_key_violations ? 0
					      : IBEMU_CNT_Q_KEY_VIOLATIONS));
	ap->mcast_pkey_trap_suppr = in->mcast_pkey_trap_suppression;
	ap->local_phy_errors = in->local_phy_errors;
	ap->overrun_errors = in->overrun_errors;
	if (!is_sp0(e, pi))
		port_state_set(e, pi, in->port_state, in->port_phys_state);
}

int ibemu__sma_port_info(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	const struct ibemu_agent_node *n = ibemu__agent_node(e, r->node);
	uint8_t *data = r->resp + IBEMU_SMP_DATA_OFF;
	struct ibemu_mad_port_info pi_out, in;
	unsigned num;
	uint32_t pi;
	int status = IBEMU_MAD_STATUS_OK, rereg = 0;

	/*
	 * IBA 14.2.5.6: bits 7-0 of the modifier are the port number (on a
	 * CA, 0 means the port the SMP came in through); bit 31 says the SM
	 * knows LinkSpeedExtEnabled (SMSupportsExtendedSpeeds); the bits in
	 * between are reserved and ignored.
	 */
	num = r->attr_mod & 0xffu;
	if (num > n->nports)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (!num && !n->is_switch)
		num = r->port;
	if (!num && !n->is_switch)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	pi = n->first_port + num;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_port_info_decode(r->req + IBEMU_SMP_DATA_OFF,
					   IBEMU_SMP_DATA_LEN, &in);
		/* An SM unaware of extended speeds leaves them alone. */
		if (!(r->attr_mod & 1u << 31))
			in.link_speed_ext_enabled = 0;
		if (port_info_check(e, pi, &in))
			status = IBEMU_MAD_STATUS_INVALID_FIELD;
		else
			port_info_apply(e, pi, &in);
		/* ClientReregister is an event, not a state: echo it. */
		rereg = !status && in.client_reregister;
	}
	ibemu__sma_port_info_fill(e, pi, r->port, &pi_out);
	if (r->hide_mkey)
		pi_out.m_key = 0;
	pi_out.client_reregister = (uint8_t)rereg;
	IBEMU_BUG_ON(
		ibemu_mad_port_info_encode(&pi_out, data, IBEMU_SMP_DATA_LEN));
	return status;
}

/*
 * Mellanox's vendor attribute MLNXExtendedPortInfo (0xFF90), which OpenSM
 * and ibnetdiscover read from adapters whose DeviceID is a ConnectX-3 to
 * ConnectX-5 (0x1003-0x1017: opensm/osm_helper.c,
 * is_mlnx_ext_port_info_supported()), as a ConnectX preset's HCA reports.
 * Its LinkSpeed{Supported,Enabled,Active} (bytes 7, 11, 15) have bit 0 for
 * FDR10, set only on a port whose link is FDR10: its speed is the cable's,
 * so a Set changes nothing and is answered with what is.
 */
int ibemu__sma_mlnx_ext_port_info(struct ibemu_agent_req *r)
{
	const struct ibemu_agent_node *n = ibemu__agent_node(r->e, r->node);
	uint8_t *data = r->resp + IBEMU_SMP_DATA_OFF;
	unsigned num = r->attr_mod & 0xffu;
	struct ibemu_port_link l;
	uint8_t fdr10;

	if (num > n->nports)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (!num && !n->is_switch)
		num = r->port;
	l = link_of(r->e, n->first_port + num);
	fdr10 = l.peer != IBEMU_NONE && l.speed == IBEMU_SPEED_FDR10;
	data[7] = fdr10;
	data[11] = fdr10;
	data[15] = fdr10;
	return IBEMU_MAD_STATUS_OK;
}

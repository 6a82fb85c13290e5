// SPDX-License-Identifier: MIT
/*
 * The traps an SMA sends its master SM (IBA 14.2.5.1): a switch's Trap 128
 * (sma_switch.c raises it when a link goes down or up) and an HCA port's
 * Trap 144 (its CapabilityMask changed: an SM took or left the port).
 * Each is a LID-routed SubnTrap(Notice) from the port's LID to its
 * PortInfo:MasterSMLID on MasterSMSL, repeated every 4.096 us x
 * 2^SubnetTimeout with the same TID until a TrapRepress() with that TID
 * comes (IBA 13.4.9), five sends at most.
 */
#include <string.h>

#include "agent_int.h"

/* The Notice of port 'pi''s pending trap, from LID 'lid'. */
static void trap_notice(const struct ibemu_engine *e, uint32_t pi, uint16_t lid,
			struct ibemu_mad_notice *n)
{
	const struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);
	int sw = ibemu__agent_is_switch(e, ap->node);

	memset(n, 0, sizeof(*n));
	n->is_generic = 1;
	/* IBA 14.2.5.1: 128 is Urgent, 144 Informational. */
	n->type = ap->trap.number == IBEMU_MAD_TRAP_LINK_STATE_CHANGE
			  ? IBEMU_MAD_NOTICE_URGENT
			  : IBEMU_MAD_NOTICE_INFO;
	n->producer_type = sw ? IBEMU_MAD_NODE_SWITCH : IBEMU_MAD_NODE_CA;
	n->trap_number = ap->trap.number;
	n->issuer_lid = lid;
	n->toggle = ap->trap.toggle;
	memcpy(n->data_details, ap->trap.details, sizeof(n->data_details));
}

/*
 * Sends (or resends) port 'pi''s pending trap. Returns 0, or -1 when it
 * cannot go (the port or its SM has no LID).
 */
static int trap_send(struct ibemu_engine *e, uint32_t pi)
{
	struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);
	uint16_t lid = ibemu_engine_get_lid(e, ap->node, ap->num);
	struct ibemu_mad_notice n;
	struct ibemu_mad_smp smp;
	struct ibemu_mad_msg msg;

	if (!lid || !ap->master_sm_lid)
		return -1;
	trap_notice(e, pi, lid, &n);
	memset(&smp, 0, sizeof(smp));
	smp.hdr.base_version = IBEMU_MAD_BASE_VERSION;
	smp.hdr.mgmt_class = IBEMU_MAD_CLASS_SUBN_LID;
	smp.hdr.class_version = IBEMU_MAD_SMP_CLASS_VERSION;
	smp.hdr.method = IBEMU_MAD_METHOD_TRAP;
	smp.hdr.tid = ap->trap.tid;
	smp.hdr.attr_id = IBEMU_SMP_ATTR_NOTICE;
	smp.m_key = ap->m_key;
	IBEMU_BUG_ON(ibemu_mad_notice_encode(&n, smp.data, sizeof(smp.data)));
	memset(&msg, 0, sizeof(msg));
	IBEMU_BUG_ON(ibemu_mad_smp_encode(&smp, msg.mad, sizeof(msg.mad)));
	msg.slid = lid;
	msg.dlid = ap->master_sm_lid;
	msg.sl = ap->master_sm_sl;
	msg.pkey = 0xffff;
	ibemu_engine_mgmt_emit(e, ap->node, ap->num, &msg);
	ap->trap.sends++;
	/* IBA 14.2.5.6 SubnetTimeout: 4.096 us * 2^SubnetTimeout. */
	ibemu__agent_later(e, 4096000ull << ap->subnet_timeout,
			   IBEMU_AGENT_WORK_TRAP, pi, ap->trap.gen);
	return 0;
}

void ibemu__sma_trap_raise(struct ibemu_engine *e, uint32_t pi, uint16_t number,
			   const uint8_t *details)
{
	struct ibemu_agent_trap *t = &ibemu__agent_port(e, pi)->trap;

	t->number = number;
	memcpy(t->details, details, sizeof(t->details));
	/* One trap at a time: its repeats tell of this change too. */
	if (t->pending)
		return;
	t->pending = 1;
	t->sends = 0;
	t->toggle ^= 1;
	t->tid = ibemu__agents(e)->next_tid++;
	t->gen = (t->gen + 1) & 0x0fffffffu;
	if (trap_send(e, pi))
		t->pending = 0;
}

void ibemu__sma_cap_mask_changed(struct ibemu_engine *e, uint32_t pi)
{
	const struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);
	struct ibemu_mad_trap_local_changes lc = {
		.lid = ibemu_engine_get_lid(e, ap->node, ap->num),
		.capability_mask = ap->cap_mask,
		.capability_mask2 = ap->cap_mask2,
	};
	uint8_t data[IBEMU_MAD_NOTICE_DETAILS_LEN];

	memset(data, 0, sizeof(data));
	IBEMU_BUG_ON(
		ibemu_mad_trap_local_changes_encode(&lc, data, sizeof(data)));
	ibemu__sma_trap_raise(e, pi, IBEMU_MAD_TRAP_LOCAL_CHANGES, data);
}

void ibemu__sma_trap_event(struct ibemu_engine *e, uint32_t pi, uint32_t gen)
{
	struct ibemu_agent_trap *t = &ibemu__agent_port(e, pi)->trap;

	if (!t->pending || gen != t->gen)
		return;
	/* Given up after IBEMU_AGENT_TRAP_SENDS (a switch's PortStateChange
	 * stays set for the next light sweep). */
	if (t->sends >= IBEMU_AGENT_TRAP_SENDS || trap_send(e, pi))
		t->pending = 0;
}

int ibemu__sma_trap_repress(struct ibemu_agent_req *r)
{
	uint32_t pi = ibemu__agent_mgmt_port(r->e, r->node, r->port);
	struct ibemu_agent_trap *t = &ibemu__agent_port(r->e, pi)->trap;
	uint64_t tid = ibemu_mad_get_tid(r->req);

	/* IBA 13.4.9: the manager represses the trap it got, by TID. */
	if (t->pending && tid == t->tid) {
		t->pending = 0;
		t->gen = (t->gen + 1) & 0x0fffffffu;
	}
	return IBEMU_AGENT_DROP; /* TrapRepress() has no response */
}

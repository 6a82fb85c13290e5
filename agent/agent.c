// SPDX-License-Identifier: MIT
/*
 * The front door of a node's management agents: the engine hands every MAD
 * that reaches a node here; the common header checks of IBA 13.4 (version,
 * method, attribute; the Status codes of 13.4.7) are made once, then the
 * class's table of attributes (sma.c, pma.c, cc.c) takes over. Also the
 * agents' power-on state, their delayed work, the management ops they
 * register with the engine (ibemu_agent_ops), and the read-only views the
 * daemon and the CLI use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

static void agents_fini(struct ibemu_engine *e, void *state)
{
	struct ibemu_agents *a = state;
	uint32_t i;

	(void)e;
	if (!a)
		return;
	if (a->ports) {
		for (i = 0; i < a->nports; i++) {
			free(a->ports[i].guids);
			free(a->ports[i].pkeys);
		}
	}
	free(a->ports);
	free(a->nodes);
	free(a);
}

/*
 * The management init op: the agents' state of every node and port, with
 * the power-on values of IBA 14.2.5 (sma_port.c). The engine keeps it and
 * hands it back through ibemu_engine_mgmt().
 */
static int agents_init(struct ibemu_engine *e, void **state)
{
	const struct ibemu_topo *t = ibemu_engine_topo(e);
	struct ibemu_agents *a;
	uint32_t i;
	int ret = -ENOMEM;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->nnodes = t->nnodes;
	a->nports = ibemu_engine_nports(e);
	a->nodes = calloc(a->nnodes ? a->nnodes : 1, sizeof(*a->nodes));
	a->ports = calloc(a->nports ? a->nports : 1, sizeof(*a->ports));
	if (!a->nodes || !a->ports)
		goto err;
	for (i = 0; i < a->nnodes; i++) {
		struct ibemu_agent_node *an = &a->nodes[i];

		an->first_port = ibemu_engine_port_index(e, i, 0);
		an->nports = t->nodes[i].nports;
		an->is_switch = t->nodes[i].type == IBEMU_NODE_SWITCH;
	}
	a->next_tid = IBEMU_AGENT_TRAP_TID;
	for (i = 0; i < a->nports; i++) {
		ret = ibemu__sma_port_init(e, a, i);
		if (ret)
			goto err;
	}
	*state = a;
	return 0;

err:
	agents_fini(e, a);
	return ret;
}

/* IBA 13.4.5: methods that never get a response, whatever went wrong. */
static int method_unanswered(uint8_t method)
{
	return method == IBEMU_MAD_METHOD_SEND ||
	       method == IBEMU_MAD_METHOD_TRAP ||
	       method == IBEMU_MAD_METHOD_TRAP_REPRESS;
}

static void set_status(struct ibemu_agent_req *r, uint16_t status)
{
	/* IBA 14.2.1.2: a directed-route SMP keeps bit 15 for D. */
	if (ibemu_mad_get_mgmt_class(r->resp) == IBEMU_MAD_CLASS_SUBN_DR)
		ibemu_mad_bits_put(r->resp, 33, 15, status & 0x7fffu);
	else
		ibemu_mad_bits_put(r->resp, 32, 16, status);
}

int ibemu__agent_process(struct ibemu_engine *e, uint32_t node, unsigned port,
			 const uint8_t *req, uint8_t *resp)
{
	const struct ibemu_agents *a = ibemu__agents(e);
	uint8_t copy[IBEMU_MAD_LEN];
	struct ibemu_agent_req r;
	struct ibemu_mad_hdr h;
	int status;

	/* A switch's own MADs come in through port 0; an HCA has none. */
	if (!a || node >= a->nnodes || port > a->nodes[node].nports ||
	    (!port && !a->nodes[node].is_switch))
		return 0;
	/* The caller may answer in place: read from a copy. */
	memcpy(copy, req, IBEMU_MAD_LEN);
	memcpy(resp, copy, IBEMU_MAD_LEN);
	if (ibemu_mad_hdr_decode(copy, IBEMU_MAD_LEN, &h))
		return 0;
	/* IBA 13.4.5: nobody answers a response. */
	if (h.method & IBEMU_MAD_METHOD_RESP)
		return 0;
	r = (struct ibemu_agent_req){
		.e = e,
		.node = node,
		.port = port,
		.req = copy,
		.resp = resp,
		.method = h.method,
		.attr_id = h.attr_id,
		.attr_mod = h.attr_mod,
	};
	switch (h.mgmt_class) {
	case IBEMU_MAD_CLASS_SUBN_LID:
	case IBEMU_MAD_CLASS_SUBN_DR:
		if (h.base_version != IBEMU_MAD_BASE_VERSION ||
		    h.class_version != IBEMU_MAD_SMP_CLASS_VERSION)
			status = IBEMU_MAD_STATUS_BAD_VERSION;
		else
			status = ibemu__sma_process(&r);
		break;
	case IBEMU_MAD_CLASS_PERF:
		if (h.base_version != IBEMU_MAD_BASE_VERSION ||
		    h.class_version != IBEMU_MAD_PERF_CLASS_VERSION)
			status = IBEMU_MAD_STATUS_BAD_VERSION;
		else
			status = ibemu__pma_process(&r);
		break;
	case IBEMU_MAD_CLASS_CC:
		if (h.base_version != IBEMU_MAD_BASE_VERSION ||
		    h.class_version != IBEMU_MAD_CC_CLASS_VERSION)
			status = IBEMU_MAD_STATUS_BAD_VERSION;
		else
			status = ibemu__cc_process(&r);
		break;
	default:
		/* Not a class of the node's own agents. */
		return 0;
	}
	if (status == IBEMU_AGENT_DROP || method_unanswered(h.method))
		return 0;
	/* IBA 13.4.5: Get and Set are both answered by GetResp(). */
	ibemu_mad_set_method(
		resp, h.method == IBEMU_MAD_METHOD_SET
			      ? IBEMU_MAD_METHOD_GET_RESP
			      : (uint8_t)(h.method | IBEMU_MAD_METHOD_RESP));
	set_status(&r, (uint16_t)status);
	return 1;
}

int ibemu__agent_dispatch(struct ibemu_agent_req *r,
			  const struct ibemu_agent_attr *tab, size_t n)
{
	const struct ibemu_agent_attr *a = NULL;
	uint8_t bit;
	size_t i;

	switch (r->method) {
	case IBEMU_MAD_METHOD_GET:
		bit = IBEMU_AGENT_GET;
		break;
	case IBEMU_MAD_METHOD_SET:
		bit = IBEMU_AGENT_SET;
		break;
	case IBEMU_MAD_METHOD_TRAP_REPRESS:
		bit = IBEMU_AGENT_TRAP_REPRESS;
		break;
	default:
		return IBEMU_MAD_STATUS_METHOD_UNSUPP;
	}
	for (i = 0; i < n; i++) {
		if (tab[i].attr_id == r->attr_id) {
			a = &tab[i];
			break;
		}
	}
	/* IBA 13.4.7: an attribute this node lacks, or the wrong method. */
	if (!a || !(a->methods & bit) ||
	    (a->nodes == IBEMU_AGENT_SWITCH &&
	     !ibemu__agent_is_switch(r->e, r->node)) ||
	    (a->nodes == IBEMU_AGENT_CA &&
	     ibemu__agent_is_switch(r->e, r->node)))
		return IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP;
	return a->handler(r);
}

void ibemu__agent_later(struct ibemu_engine *e, uint64_t delay_ps,
			enum ibemu_agent_work kind, uint32_t target,
			uint32_t gen)
{
	uintptr_t work =
		(uintptr_t)kind | (uintptr_t)(gen & 0x0fffffffu)
					  << IBEMU_AGENT_WORK_KIND_BITS;

	ibemu_engine_mgmt_at(e, ibemu_engine_now(e) + delay_ps, target,
			     (void *)work);
}

/* The management event op: delayed work asked for with agent_later(). */
static void agent_event(struct ibemu_engine *e, uint32_t target, void *ptr)
{
	const struct ibemu_agents *a = ibemu__agents(e);
	uintptr_t work = (uintptr_t)ptr;
	uint32_t gen = (uint32_t)(work >> IBEMU_AGENT_WORK_KIND_BITS);

	if (!a)
		return;
	switch (work & ((1u << IBEMU_AGENT_WORK_KIND_BITS) - 1)) {
	case IBEMU_AGENT_WORK_TRAP:
		if (target < a->nports)
			ibemu__sma_trap_event(e, target, gen);
		break;
	case IBEMU_AGENT_WORK_MKEY_LEASE:
		if (target < a->nports)
			ibemu__sma_mkey_lease(e, target, gen);
		break;
	}
}

/*
 * The management port_change op: port 'pi' went down or came up by the
 * link state machine (the far end of an SM's Down, a link that trained).
 * IBA 14.2.5.4: on a switch that sets PortStateChange and raises Trap 128;
 * a CA port has nothing to tell.
 */
static void agent_port_change(struct ibemu_engine *e, uint32_t pi)
{
	const struct ibemu_agents *a = ibemu__agents(e);
	const struct ibemu_agent_port *ap;

	if (!a || pi >= a->nports)
		return;
	ap = &a->ports[pi];
	if (a->nodes[ap->node].is_switch)
		ibemu__sma_port_state_change(e, ap->node);
}

int ibemu__agent_takes(const uint8_t *mad)
{
	uint8_t mgmt_class = ibemu_mad_get_mgmt_class(mad);
	uint8_t method = ibemu_mad_get_method(mad);
	uint16_t attr = ibemu_mad_get_attr_id(mad);

	/* Responses go to whoever asked; Traps go to managers. */
	if (method & IBEMU_MAD_METHOD_RESP || method == IBEMU_MAD_METHOD_TRAP)
		return 0;
	/*
	 * A TrapRepress() answers a Trap, and goes where the Trap came from,
	 * as ib_mad routes it by TID (ib_response_mad()): the SMA's own
	 * traps, or an attached process's (an SM's Trap 144 to its master).
	 */
	if (method == IBEMU_MAD_METHOD_TRAP_REPRESS)
		return ibemu_mad_get_tid(mad) >> 32 ==
		       IBEMU_AGENT_TRAP_TID >> 32;
	switch (mgmt_class) {
	case IBEMU_MAD_CLASS_SUBN_LID:
	case IBEMU_MAD_CLASS_SUBN_DR:
		/* IBA 14.2.5.13: SMInfo is the SM's attribute, not the SMA's. */
		return attr != IBEMU_SMP_ATTR_SM_INFO;
	case IBEMU_MAD_CLASS_PERF:
	case IBEMU_MAD_CLASS_CC:
		return 1;
	}
	return 0;
}

int ibemu_agent_port_info(const struct ibemu_engine *e, uint32_t port,
			  struct ibemu_mad_port_info *out)
{
	const struct ibemu_agents *a = ibemu__agents(e);

	if (!a || port >= a->nports)
		return -EINVAL;
	ibemu__sma_port_info_fill(e, port, a->ports[port].num, out);
	return 0;
}

unsigned ibemu_agent_pkeys(const struct ibemu_engine *e, uint32_t port,
			   uint16_t *pkeys, unsigned max)
{
	const struct ibemu_agents *a = ibemu__agents(e);
	const struct ibemu_agent_port *ap;
	unsigned i;

	if (!a || port >= a->nports)
		return 0;
	ap = &a->ports[port];
	for (i = 0; i < ap->npkeys && i < max; i++)
		pkeys[i] = ap->pkeys[i];
	return ap->npkeys;
}

int ibemu_agent_set_port_cap(struct ibemu_engine *e, uint32_t port,
			     uint32_t set, uint32_t clear)
{
	struct ibemu_agents *a = ibemu__agents(e);
	struct ibemu_agent_port *ap;

	if (!a || port >= a->nports)
		return -EINVAL;
	ap = &a->ports[port];
	if (((ap->cap_mask & ~clear) | set) == ap->cap_mask)
		return 0;
	/* Trap 144 (ibemu__sma_cap_mask_changed) is not sent from here yet:
	 * OpenSM, trapped as a new SM starts, steps down before that SM is
	 * standby, and integration.opensm's handover path flakes. */
	ap->cap_mask = (ap->cap_mask & ~clear) | set;
	return 0;
}

const struct ibemu_mgmt_ops ibemu_agent_ops = {
	.init = agents_init,
	.fini = agents_fini,
	.process = ibemu__agent_process,
	.takes = ibemu__agent_takes,
	.event = agent_event,
	.port_change = agent_port_change,
	.pkeys = ibemu_agent_pkeys,
};

// SPDX-License-Identifier: MIT
/*
 * Master and standby (IBA 14.4): before it programs anything, an SM asks
 * the SMInfo of every other port that says IsSM. If one is master and
 * outranks it (a higher priority; at equal priority the lower GUID), it
 * stays standby: it programs nothing, answers SMInfo as standby, and asks
 * the master's SMInfo at every sweep; when the master no longer answers
 * as master, it sweeps and takes over.
 */
#include <errno.h>

#include "sm.h"

#define NODE_TYPE_SWITCH 2
#define STATE_MASTER	 3

struct other {
	struct ibemu_mad_sm_info info;
	int answered;
};

static void on_sm_info(struct sm *sm, int status,
		       const struct ibemu_mad_smp *smp, void *arg,
		       uint64_t arg2)
{
	struct other *o = arg;

	(void)sm;
	(void)arg2;
	if (!status && !smp->hdr.status &&
	    ibemu_mad_sm_info_decode(smp->data, sizeof(smp->data), &o->info) >=
		    0)
		o->answered = 1;
}

/* Whether SMInfo 'x' outranks this SM's (IBA 14.4.1.1). */
static int outranks(const struct sm *sm, const struct ibemu_mad_sm_info *x)
{
	uint64_t mine = sm->nodes[0].ni.port_guid;

	if (x->priority != sm->priority)
		return x->priority > sm->priority;
	return x->guid < mine;
}

static int ask(struct sm *sm, uint16_t lid, struct other *o)
{
	int ret = sm_smp_lid(sm, lid, IBEMU_MAD_METHOD_GET,
			     IBEMU_SMP_ATTR_SM_INFO, 0, on_sm_info, o, 0);

	return ret ? ret : sm_smp_run(sm);
}

int sm_find_master(struct sm *sm)
{
	uint32_t n;
	int ret;

	sm->standby = 0;
	for (n = 1; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];
		const struct sm_port *p;
		struct other o = {0};

		if (node->ni.node_type == NODE_TYPE_SWITCH)
			continue;
		p = &node->ports[node->in_port];
		if (!p->have_pi || !p->pi.lid ||
		    !(p->pi.capability_mask & IBEMU_MAD_CAP_IS_SM))
			continue;
		ret = ask(sm, p->pi.lid, &o);
		if (ret)
			return ret;
		if (o.answered && o.info.sm_state == STATE_MASTER &&
		    outranks(sm, &o.info)) {
			sm->standby = 1;
			sm->master_lid = p->pi.lid;
			sm->master_guid = o.info.guid;
			return 0;
		}
	}
	return 0;
}

int sm_master_alive(struct sm *sm)
{
	struct other o = {0};

	if (ask(sm, sm->master_lid, &o))
		return 0;
	return o.answered && o.info.sm_state == STATE_MASTER;
}

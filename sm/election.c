// SPDX-License-Identifier: MIT
/*
 * Master and standby (IBA 14.4): after a heavy sweep's discovery, an SM
 * asks the SMInfo of every other port that says IsSM. A master that
 * outranks it (a higher priority; at equal priority the lower GUID) makes
 * it standby: it programs nothing, answers SMInfo as standby, and asks the
 * master's SMInfo at every sweep; when the master no longer answers as
 * master, it sweeps and takes over. An SM in standby (or discovering) that
 * outranks it is handed the mastership, as OpenSM's state manager does
 * after its discovery: a Set(SMInfo) HANDOVER carrying this SM's SMInfo
 * (state master), by the other port's directed route; once it answers,
 * this SM is standby and polls it as its master. OpenSM sends no
 * ACKNOWLEDGE (it is optional): the answer to the Set is what counts.
 * Light sweeps ask the SMs found again, so a standby that now outranks
 * this master (or a new master) calls a heavy sweep, as in OpenSM.
 *
 * An SM that discovers (at its start, or when its master is gone) and
 * finds a master becomes standby under it whatever its rank, as OpenSM's
 * discovering state does; if the master ranks below it, it tells the
 * master by a Trap 144 at every poll, and the master's heavy sweep hands
 * over to it (sm_info_set() in smp.c takes the HANDOVER).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm.h"

#define NODE_TYPE_SWITCH 2

static void on_sm_info(struct sm *sm, int status,
		       const struct ibemu_mad_smp *smp, void *arg,
		       uint64_t arg2)
{
	struct sm_other *o = arg;

	(void)sm;
	(void)arg2;
	o->answered = !status && !smp->hdr.status &&
		      ibemu_mad_sm_info_decode(smp->data, sizeof(smp->data),
					       &o->info) >= 0;
}

/* Whether the SM 'o' answered outranks this one (IBA 14.4.1.1). */
static int outranks(const struct sm *sm, const struct sm_other *o)
{
	return o->answered &&
	       sm_outranks(o->info.priority, o->info.guid, sm->priority,
			   sm->nodes[0].ni.port_guid);
}

void sm_others_free(struct sm *sm)
{
	free(sm->others);
	sm->others = NULL;
	sm->nothers = 0;
}

/* Every other HCA port that says IsSM, by its own directed route. */
static int collect(struct sm *sm)
{
	uint64_t mine = sm->nodes[0].ni.port_guid;
	uint32_t n, k = 0;
	unsigned p;

	sm_others_free(sm);
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		if (node->ni.node_type == NODE_TYPE_SWITCH)
			continue;
		for (p = 1; p <= node->ni.num_ports; p++) {
			const struct sm_port *port = &node->ports[p];
			struct sm_other *grown;

			if (!port->have_pi || !port->guid ||
			    port->guid == mine ||
			    !(port->pi.capability_mask & IBEMU_MAD_CAP_IS_SM))
				continue;
			grown = realloc(sm->others, (k + 1) * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			sm->others = grown;
			memset(&grown[k], 0, sizeof(*grown));
			grown[k].port_guid = port->guid;
			grown[k].lid = port->pi.lid;
			memcpy(grown[k].path, port->path,
			       (size_t)port->hops + 1);
			grown[k].hops = port->hops;
			sm->nothers = ++k;
		}
	}
	return 0;
}

/* Asks every SM of sm->others its SMInfo, all at once. */
static int ask_others(struct sm *sm)
{
	uint32_t i;

	for (i = 0; i < sm->nothers; i++) {
		struct sm_other *o = &sm->others[i];

		o->answered = 0;
		if (sm_smp(sm, o->path, o->hops, IBEMU_MAD_METHOD_GET,
			   IBEMU_SMP_ATTR_SM_INFO, 0, NULL, on_sm_info, o, 0))
			return -ENOMEM;
	}
	return sm_smp_run(sm);
}

/* The highest-ranked of the SMs that answered in state 'state' (any
 * active state if 0), or NULL. */
static struct sm_other *highest(struct sm *sm, unsigned state)
{
	struct sm_other *best = NULL;
	uint32_t i;

	for (i = 0; i < sm->nothers; i++) {
		struct sm_other *o = &sm->others[i];

		if (!o->answered || o->info.sm_state == SM_STATE_NOTACTIVE ||
		    (state && o->info.sm_state != state))
			continue;
		if (!best || sm_outranks(o->info.priority, o->info.guid,
					 best->info.priority, best->info.guid))
			best = o;
	}
	return best;
}

static void become_standby(struct sm *sm, const struct sm_other *master)
{
	sm->standby = 1;
	sm->master_lid = master->lid;
	sm->master_guid = master->info.guid;
	sm->master_priority = master->info.priority;
	memcpy(sm->master_path, master->path, (size_t)master->hops + 1);
	sm->master_hops = master->hops;
}

struct handover {
	int status; /* 0: answered without error, else -errno or -EPROTO */
	struct ibemu_mad_sm_info info;
};

static void on_handover(struct sm *sm, int status,
			const struct ibemu_mad_smp *smp, void *arg,
			uint64_t arg2)
{
	struct handover *h = arg;

	(void)sm;
	(void)arg2;
	h->status = status ? status : smp->hdr.status ? -EPROTO : 0;
	if (!h->status)
		ibemu_mad_sm_info_decode(smp->data, sizeof(smp->data),
					 &h->info);
}

/*
 * IBA 14.4.1: a master that finds an SM in standby that outranks it hands
 * over: Set(SMInfo) HANDOVER with its own SMInfo, whose state must say
 * master (OpenSM refuses it otherwise). 0 once the other SM accepted.
 */
static int hand_over(struct sm *sm, const struct sm_other *to)
{
	struct ibemu_mad_sm_info mine = {
		.guid = sm->nodes[0].ni.port_guid,
		.act_count = (uint32_t)(sm->heavy_sweeps + sm->light_sweeps),
		.priority = (uint8_t)sm->priority,
		.sm_state = SM_STATE_MASTER,
		.sm_key = SM_KEY,
	};
	uint8_t data[IBEMU_SMP_DATA_LEN] = {0};
	struct handover h = {.status = -ETIMEDOUT};
	int ret;

	if (ibemu_mad_sm_info_encode(&mine, data, sizeof(data)) < 0)
		return -EINVAL;
	ret = sm_smp(sm, to->path, to->hops, IBEMU_MAD_METHOD_SET,
		     IBEMU_SMP_ATTR_SM_INFO, SM_MOD_HANDOVER, data, on_handover,
		     &h, 0);
	if (!ret)
		ret = sm_smp_run(sm);
	return ret ? ret : h.status;
}

int sm_find_master(struct sm *sm)
{
	struct sm_other *master, *best;
	int ret;

	sm->standby = 0;
	ret = collect(sm);
	if (!ret)
		ret = ask_others(sm);
	if (ret)
		return ret;
	master = highest(sm, SM_STATE_MASTER);
	if (master && (outranks(sm, master) || sm->discovering)) {
		become_standby(sm, master);
		sm_ask_handover(sm);
		return 0;
	}
	/* IBA 14.4.1: to a standby only. One still discovering finds this
	 * master, goes standby and says so (its own Trap 144, or the next
	 * light sweep's poll); the handover waits until then. */
	best = highest(sm, SM_STATE_STANDBY);
	if (!best || !outranks(sm, best))
		return 0;
	ret = hand_over(sm, best);
	if (ret) {
		/* It stays where it is; this SM stays master, and tries
		 * again at the next heavy sweep. */
		fprintf(stderr,
			"ibemu-sm: handover to the SM of port GUID 0x%016llx "
			"failed: %s\n",
			(unsigned long long)best->info.guid, strerror(-ret));
		return ret == -ENODEV ? ret : 0;
	}
	sm->handovers++;
	printf("ibemu-sm: handed mastership over to the SM of port GUID "
	       "0x%016llx (priority %u, LID %u), which outranks this one\n",
	       (unsigned long long)best->info.guid, best->info.priority,
	       best->lid);
	become_standby(sm, best);
	return 0;
}

int sm_poll_others(struct sm *sm)
{
	uint32_t i;
	int ret;

	sm->sm_outranked = 0;
	if (!sm->nothers || sm->standby)
		return 0;
	ret = ask_others(sm);
	if (ret)
		return ret;
	for (i = 0; i < sm->nothers; i++)
		if (outranks(sm, &sm->others[i]) &&
		    sm->others[i].info.sm_state != SM_STATE_NOTACTIVE)
			sm->sm_outranked = 1;
	return 0;
}

int sm_master_alive(struct sm *sm)
{
	struct sm_other o = {0};

	/* By its directed route: the new master may give LIDs anew. */
	if (sm_smp(sm, sm->master_path, sm->master_hops, IBEMU_MAD_METHOD_GET,
		   IBEMU_SMP_ATTR_SM_INFO, 0, NULL, on_sm_info, &o, 0) ||
	    sm_smp_run(sm))
		return 0;
	if (!o.answered || o.info.sm_state != SM_STATE_MASTER)
		return 0;
	sm->master_priority = o.info.priority;
	return 1;
}

int sm_master_outranks(const struct sm *sm)
{
	return sm_outranks(sm->master_priority, sm->master_guid, sm->priority,
			   sm->nodes[0].ni.port_guid);
}

void sm_ask_handover(struct sm *sm)
{
	const struct sm_node *me = &sm->nodes[0];
	const struct sm_port *port = &me->ports[me->in_port];
	int ret;

	if (sm_master_outranks(sm))
		return;
	/* As OpenSM's standby: Trap 144 to a master that ranks below it,
	 * which calls the master's heavy sweep, and its handover. */
	ret = sm_trap144(sm, sm->master_lid, port->pi.lid,
			 port->pi.capability_mask);
	if (ret)
		fprintf(stderr,
			"ibemu-sm: cannot send Trap 144 to the master "
			"(LID %u): %s\n",
			sm->master_lid, strerror(-ret));
}

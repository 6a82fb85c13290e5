// SPDX-License-Identifier: MIT
/*
 * The management interfaces of every node: MADs cross the fabric as
 * packets (SMPs on VL15, GMPs on data VLs), and at each node they reach
 * this file decides, by the rules of IBA 14.2.2 for directed routes and by
 * LID otherwise, whether to pass them on, hand them to the node's agents
 * (the management ops the engine was created with), or hand them up to the
 * owner of an HCA port. The agents' responses and traps leave through here
 * too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad.h"
#include "node.h"

#define PERMISSIVE_LID 0xffffu

/* A MAD travels in a UD packet: LRH, BTH, DETH, 256 bytes (IBA 13.4.1). */
#define MAD_HDR_BYTES (IBEMU_LRH_BYTES + IBEMU_BTH_BYTES + IBEMU_DETH_BYTES)

/* What the next step of a directed-route SMP is (IBA 14.2.2). */
enum dr_next {
	DR_DROP,
	DR_OUT,	  /* leave through the port chosen by the path */
	DR_LOCAL, /* for this node's management (agents or the SM) */
	DR_LID,	  /* LID-routed to pkt->dlid from this node */
};

/* The D bit is the top bit of a DR SMP's Status word (IBA 14.2.1.2). */
static int dr_returning(const uint8_t *mad)
{
	return ibemu_smp_get_d(mad);
}

static int is_smp(const uint8_t *mad)
{
	uint8_t mgmt_class = ibemu_mad_get_mgmt_class(mad);

	return mgmt_class == IBEMU_MAD_CLASS_SUBN_LID ||
	       mgmt_class == IBEMU_MAD_CLASS_SUBN_DR;
}

static int is_dr(const uint8_t *mad)
{
	return ibemu_mad_get_mgmt_class(mad) == IBEMU_MAD_CLASS_SUBN_DR;
}

/*
 * Whether a DR SMP is on a LID-routed stretch: before the directed part
 * (going out, hop pointer 0) or after it (going out past the last hop, or
 * coming back from a responder reached by LID, or back to a requester
 * that used a LID).
 */
static int dr_on_lid_stretch(const uint8_t *mad)
{
	unsigned ptr = ibemu_smp_get_hop_ptr(mad),
		 cnt = ibemu_smp_get_hop_cnt(mad);

	return ptr == 0 || ptr == cnt + 1;
}

/* The LID of a node's management: an HCA port's, or a switch's. */
static uint16_t mgmt_lid(const struct ibemu_engine *e, uint32_t pi)
{
	const struct ibemu_eport *p = &e->ports[pi];
	const struct ibemu_enode *n = &e->nodes[p->node];

	return n->type == IBEMU_NODE_SWITCH ? n->lid : p->lid;
}

/*
 * Whether a packet with DLID 'dlid' is for the management behind 'pi': an
 * HCA port takes its LID with the low LMC bits of any value (IBA 7.11.1).
 */
static int lid_is_mine(const struct ibemu_engine *e, uint32_t pi, uint16_t dlid)
{
	const struct ibemu_eport *p = &e->ports[pi];
	uint16_t lid = mgmt_lid(e, pi), mask = 0;

	if (e->nodes[p->node].type != IBEMU_NODE_SWITCH)
		mask = (uint16_t)((1u << p->lmc) - 1);
	return dlid == PERMISSIVE_LID ||
	       (lid && (dlid & (uint16_t)~mask) == lid);
}

/*
 * One step of IBA 14.2.2.2 (going out, C14-9) or 14.2.2.4 (returning,
 * C14-13) at node 'node', for an SMP that came in through port 'in' (0
 * when it starts at this node). Updates the hop pointer and the return
 * path; sets '*out' for DR_OUT and pkt->dlid for DR_LID.
 */
static enum dr_next dr_step(struct ibemu_engine *e, uint32_t node, unsigned in,
			    struct ibemu_pkt *pkt, uint8_t *out)
{
	uint8_t *mad = pkt->mad->mad;
	uint8_t *initial = mad + IBEMU_SMP_INITIAL_PATH_OFF;
	uint8_t *ret = mad + IBEMU_SMP_RETURN_PATH_OFF;
	int sw = e->nodes[node].type == IBEMU_NODE_SWITCH;
	unsigned ptr = ibemu_smp_get_hop_ptr(mad),
		 cnt = ibemu_smp_get_hop_cnt(mad);

	/* IBA 14.2.1.2: a path has at most 63 hops. */
	if (cnt >= IBEMU_SMP_PATH_LEN)
		return DR_DROP;
	if (!dr_returning(mad)) {
		if (ptr == 0 && cnt > 0) { /* C14-9:1: the path starts here */
			ibemu_smp_set_hop_ptr(mad, 1);
			*out = initial[1];
			return DR_OUT;
		}
		if (ptr > 0 && ptr < cnt) { /* C14-9:2: a hop on the way */
			if (!sw || !in)
				return DR_DROP;
			ret[ptr] = (uint8_t)in;
			ibemu_smp_set_hop_ptr(mad, (uint8_t)(ptr + 1));
			*out = initial[ptr + 1];
			return DR_OUT;
		}
		if (ptr == cnt) { /* C14-9:3: the end of the directed part */
			if (cnt)
				ret[ptr] = (uint8_t)in;
			ibemu_smp_set_hop_ptr(mad, (uint8_t)(ptr + 1));
			if (ibemu_smp_get_dr_dlid(mad) == PERMISSIVE_LID)
				return DR_LOCAL;
			if (!sw)
				return DR_DROP;
			pkt->dlid = ibemu_smp_get_dr_dlid(mad);
			return DR_LID;
		}
		/* C14-9:4: reached by LID after the path; C14-9:5 drops. */
		return ptr == cnt + 1 ? DR_LOCAL : DR_DROP;
	}
	if (cnt > 0 && ptr == cnt + 1) { /* C14-13:1: the way back starts */
		ibemu_smp_set_hop_ptr(mad, (uint8_t)cnt);
		*out = ret[cnt];
		return DR_OUT;
	}
	if (ptr >= 2 && ptr <= cnt) { /* C14-13:2: a hop on the way back */
		if (!sw)
			return DR_DROP;
		ibemu_smp_set_hop_ptr(mad, (uint8_t)(ptr - 1));
		*out = ret[ptr - 1];
		return DR_OUT;
	}
	if (ptr == 1) { /* C14-13:3: the start of the directed part */
		ibemu_smp_set_hop_ptr(mad, 0);
		if (ibemu_smp_get_dr_slid(mad) == PERMISSIVE_LID)
			return DR_LOCAL;
		if (!sw)
			return DR_DROP;
		pkt->dlid = ibemu_smp_get_dr_slid(mad);
		return DR_LID;
	}
	/* C14-13:4: back at the requester by LID; C14-13:5 drops. */
	return ptr == 0 ? DR_LOCAL : DR_DROP;
}

static struct ibemu_pkt *mad_pkt(struct ibemu_engine *e,
				 const struct ibemu_mad_msg *m)
{
	struct ibemu_pkt *pkt = ibemu_engine_pkt_alloc(e);

	if (!pkt)
		return NULL;
	pkt->mad = malloc(sizeof(*pkt->mad));
	if (!pkt->mad) {
		ibemu_engine_pkt_free(e, pkt);
		return NULL;
	}
	*pkt->mad = *m;
	ibemu_pkt_set_size(pkt, MAD_HDR_BYTES, IBEMU_MAD_MSG_LEN);
	pkt->slid = m->slid;
	pkt->dlid = m->dlid;
	pkt->sl = m->sl & 15;
	pkt->t_created = e->now;
	return pkt;
}

/* Queues 'pkt' on HCA port 'pi': SMPs on VL15, GMPs once Active. */
static void hca_transmit(struct ibemu_engine *e, uint32_t pi,
			 struct ibemu_pkt *pkt)
{
	struct ibemu_eport *p = &e->ports[pi];

	if (p->peer == IBEMU_NONE || p->state == IBEMU_PORT_DOWN) {
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	if (is_smp(pkt->mad->mad)) {
		ibemu_engine_send_vl15(e, pi, pkt);
		return;
	}
	/* IBA 7.2: a port sends data VLs only when Active. */
	if (p->state != IBEMU_PORT_ACTIVE) {
		p->cnt.xmit_discards++;
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	ibemu_pktq_push(&p->mad_out, pkt);
	ibemu_engine_kick(e, pi);
}

/* Sends 'pkt' from switch 'node''s management port out of 'out'. */
static void switch_transmit(struct ibemu_engine *e, uint32_t node,
			    struct ibemu_pkt *pkt, unsigned out)
{
	struct ibemu_enode *n = &e->nodes[node];

	if (out == 0 || out > n->nports) {
		e->ports[n->first_port].cnt.rcv_switch_relay_errors++;
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	pkt->out_port = (uint8_t)out;
	pkt->vl = is_smp(pkt->mad->mad)
			  ? IBEMU_VL15
			  : e->ports[n->first_port + out].sl2vl[pkt->sl];
	ibemu__node_ops(e, &e->nodes[node])->inject(e, node, pkt);
}

/* Sends 'pkt' by LID from switch 'node''s management port. */
static void switch_route(struct ibemu_engine *e, uint32_t node,
			 struct ibemu_pkt *pkt)
{
	struct ibemu_enode *n = &e->nodes[node];
	uint8_t out = pkt->dlid < n->lft_len ? n->lft[pkt->dlid] : 0xff;

	if (!pkt->slid)
		pkt->slid = n->lid;
	switch_transmit(e, node, pkt, out);
}

static void mgmt_receive(struct ibemu_engine *e, uint32_t pi,
			 struct ibemu_pkt *pkt);

/*
 * Carries out step 'next' of a DR SMP at the node behind port 'pi' (an
 * HCA port, or any port of a switch) that does not sit in an input buffer
 * any more: it starts here, or an agent produced it here.
 */
static void dr_dispatch(struct ibemu_engine *e, uint32_t pi,
			struct ibemu_pkt *pkt, enum dr_next next, uint8_t out)
{
	struct ibemu_eport *p = &e->ports[pi];
	int sw = e->nodes[p->node].type == IBEMU_NODE_SWITCH;

	switch (next) {
	case DR_DROP:
		ibemu_engine_pkt_free(e, pkt);
		return;
	case DR_LOCAL:
		/* Not on the wire: the management of this very node. */
		ibemu__engine_push(e, e->now, IBEMU_PHASE_UPDATE, IBEMU_EV_MAD,
				   pi, pkt);
		return;
	case DR_OUT:
		pkt->dlid = PERMISSIVE_LID;
		if (sw) {
			switch_transmit(e, p->node, pkt, out);
		} else if (out != p->num) {
			/* C14-9:1: an HCA sends only through its own port. */
			ibemu_engine_pkt_free(e, pkt);
		} else {
			hca_transmit(e, pi, pkt);
		}
		return;
	case DR_LID:
		if (sw)
			switch_route(e, p->node, pkt);
		else
			hca_transmit(e, pi, pkt);
		return;
	}
}

/* Sends 'pkt' from the node behind 'pi', the first step of its route. */
static void send_from(struct ibemu_engine *e, uint32_t pi,
		      struct ibemu_pkt *pkt)
{
	struct ibemu_eport *p = &e->ports[pi];
	const uint8_t *mad = pkt->mad->mad;
	enum dr_next next;
	uint8_t out = 0;

	if (is_dr(mad)) {
		unsigned ptr = ibemu_smp_get_hop_ptr(mad),
			 cnt = ibemu_smp_get_hop_cnt(mad);
		/*
		 * A LID-routed stretch first: to the node where the path
		 * starts (DrSLID set), or from a responder reached by LID
		 * back to the node where the path ended (DrDLID set).
		 */
		int by_lid = dr_returning(mad)
				     ? cnt > 0 && ptr == cnt + 1 &&
					       ibemu_smp_get_dr_dlid(mad) !=
						       PERMISSIVE_LID
				     : ptr == 0 && ibemu_smp_get_dr_slid(mad) !=
							   PERMISSIVE_LID;

		/* The step first: it sets 'out'. */
		next = by_lid && !lid_is_mine(e, pi, pkt->dlid)
			       ? DR_LID
			       : dr_step(e, p->node, 0, pkt, &out);
		dr_dispatch(e, pi, pkt, next, out);
		return;
	}
	if (pkt->dlid != PERMISSIVE_LID && lid_is_mine(e, pi, pkt->dlid)) {
		dr_dispatch(e, pi, pkt, DR_LOCAL, 0);
		return;
	}
	if (e->nodes[p->node].type == IBEMU_NODE_SWITCH)
		switch_route(e, p->node, pkt);
	else
		hca_transmit(e, pi, pkt);
}

/* The node's agents answer request 'pkt' that reached port 'pi'. */
static void answer(struct ibemu_engine *e, uint32_t pi, struct ibemu_pkt *pkt)
{
	struct ibemu_eport *p = &e->ports[pi];
	struct ibemu_mad_msg *m = pkt->mad;
	uint8_t resp[IBEMU_MAD_MSG_LEN];
	uint32_t qp;
	uint16_t req_slid = pkt->slid;

	if (!e->mgmt_ops.process(e, p->node, p->num, m->mad, resp)) {
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	memcpy(m->mad, resp, sizeof(resp));
	qp = m->src_qp;
	m->src_qp = m->dst_qp;
	m->dst_qp = qp;
	pkt->slid = mgmt_lid(e, pi);
	pkt->dlid = req_slid;
	pkt->t_created = e->now;
	if (is_dr(m->mad)) {
		unsigned cnt = ibemu_smp_get_hop_cnt(m->mad);

		/* IBA 14.2.2.3: the response keeps the path, D set. */
		ibemu_smp_set_d(m->mad, 1);
		if (!pkt->slid)
			pkt->slid = PERMISSIVE_LID;
		/* Directed at once, unless the request came by LID after
		 * its path: then back by LID to where the path ended. */
		if (!(cnt > 0 && ibemu_smp_get_hop_ptr(m->mad) == cnt + 1 &&
		      ibemu_smp_get_dr_dlid(m->mad) != PERMISSIVE_LID))
			pkt->dlid = PERMISSIVE_LID;
	}
	send_from(e, pi, pkt);
}

/* A MAD for the management behind port 'pi': agents, or the process. */
static void mgmt_receive(struct ibemu_engine *e, uint32_t pi,
			 struct ibemu_pkt *pkt)
{
	const uint8_t *mad = pkt->mad->mad;
	int response = ibemu_mad_get_r(mad);

	if (e->nodes[e->ports[pi].node].type == IBEMU_NODE_SWITCH) {
		/* No process runs on a switch: responses have no taker. */
		if (response)
			ibemu_engine_pkt_free(e, pkt);
		else
			answer(e, pi, pkt);
		return;
	}
	if (!response && e->mgmt_ops.takes(mad)) {
		answer(e, pi, pkt);
		return;
	}
	pkt->mad->slid = pkt->slid;
	pkt->mad->dlid = pkt->dlid;
	pkt->mad->sl = pkt->sl;
	if (!e->owner[pi]->attached && e->unowned_mad)
		e->unowned_mad(e->unowned_ctx, pi, pkt->mad);
	else
		e->owner[pi]->ops.mad_recv(e->owner[pi]->ctx, pi, pkt->mad);
	ibemu_engine_pkt_free(e, pkt);
}

void ibemu__smi_hca_receive(struct ibemu_engine *e, uint32_t pi,
			    struct ibemu_pkt *pkt)
{
	const uint8_t *mad = pkt->mad->mad;
	uint8_t out = 0;
	enum dr_next next;

	if (!is_dr(mad)) {
		/* An HCA takes what is addressed to its port (IBA 7.11.1). */
		if (lid_is_mine(e, pi, pkt->dlid))
			mgmt_receive(e, pi, pkt);
		else
			ibemu_engine_pkt_free(e, pkt);
		return;
	}
	if (dr_on_lid_stretch(mad) && !lid_is_mine(e, pi, pkt->dlid)) {
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	next = dr_step(e, e->ports[pi].node, e->ports[pi].num, pkt, &out);
	if (next == DR_LOCAL)
		mgmt_receive(e, pi, pkt);
	else
		dr_dispatch(e, pi, pkt, next, out);
}

enum ibemu_smi_route ibemu__smi_switch_head(struct ibemu_engine *e, uint32_t pi,
					    struct ibemu_pkt *pkt)
{
	struct ibemu_eport *in = &e->ports[pi];
	struct ibemu_enode *n = &e->nodes[in->node];
	const uint8_t *mad = pkt->mad->mad;
	uint8_t out = 0;

	if (!is_dr(mad)) {
		/* LFT entry 0 is the management port (IBA 18.2.4.3.3). */
		if (lid_is_mine(e, pi, pkt->dlid) ||
		    (pkt->dlid < n->lft_len && n->lft[pkt->dlid] == 0)) {
			mgmt_receive(e, pi, pkt);
			return IBEMU_SMI_TAKEN;
		}
		return IBEMU_SMI_LFT;
	}
	if (dr_on_lid_stretch(mad) && !lid_is_mine(e, pi, pkt->dlid))
		return IBEMU_SMI_LFT;
	switch (dr_step(e, in->node, in->num, pkt, &out)) {
	case DR_OUT:
		/* Forwarded as it came, cut through from the input. */
		pkt->dlid = PERMISSIVE_LID;
		pkt->out_port = out;
		return IBEMU_SMI_PORT;
	case DR_LID:
		pkt->slid = n->lid;
		return IBEMU_SMI_LFT;
	case DR_LOCAL:
		mgmt_receive(e, pi, pkt);
		return IBEMU_SMI_TAKEN;
	case DR_DROP:
		break;
	}
	ibemu_engine_pkt_free(e, pkt);
	return IBEMU_SMI_TAKEN;
}

int ibemu_engine_mad_send(struct ibemu_engine *e, uint32_t pi,
			  const struct ibemu_mad_msg *m)
{
	struct ibemu_pkt *pkt;

	if (pi >= e->nports || e->ports[pi].num == 0 ||
	    e->nodes[e->ports[pi].node].type == IBEMU_NODE_SWITCH)
		return -EINVAL;
	pkt = mad_pkt(e, m);
	if (!pkt)
		return -ENOMEM;
	if (!pkt->slid)
		pkt->slid = e->ports[pi].lid;
	send_from(e, pi, pkt);
	return 0;
}

void ibemu_engine_mgmt_emit(struct ibemu_engine *e, uint32_t node,
			    unsigned port, const struct ibemu_mad_msg *m)
{
	struct ibemu_pkt *pkt = mad_pkt(e, m);

	if (!pkt)
		return;
	if (e->nodes[node].type == IBEMU_NODE_SWITCH)
		port = 0;
	send_from(e, e->nodes[node].first_port + port, pkt);
}

// SPDX-License-Identifier: MIT
/*
 * HCA ports in the engine: when the link is free the port pulls the next
 * packet from its owner (a traffic study, a session, a QP transport: each
 * arbitrates among its own flows), and a packet whose tail arrives is
 * handed to the owner at once, its buffer space credited back to the
 * sender. The HCA also keeps each port's congestion control settings.
 */
#include <errno.h>
#include <stdlib.h>

#include "hca.h"
#include "node.h"

/* An HCA: the node model's state (ibemu_node_model()). */
struct ibemu_hca {
	unsigned nports;
	struct ibemu_hca_cc *cc[]; /* 1..nports; [0] unused */
};

static int hca_init(struct ibemu_engine *e, uint32_t node)
{
	unsigned nports = e->nodes[node].nports;
	struct ibemu_hca *h;

	h = calloc(1, sizeof(*h) + (nports + 1u) * sizeof(h->cc[0]));
	if (!h)
		return -ENOMEM;
	h->nports = nports;
	ibemu_node_set_model(e, node, h);
	return 0;
}

static void hca_fini(struct ibemu_engine *e, uint32_t node)
{
	struct ibemu_hca *h = ibemu_node_model(e, node);
	unsigned p;

	if (!h)
		return;
	for (p = 0; p <= h->nports; p++)
		free(h->cc[p]);
	free(h);
	ibemu_node_set_model(e, node, NULL);
}

struct ibemu_hca_cc *ibemu_hca_cc(struct ibemu_engine *e, uint32_t pi,
				  int create)
{
	const struct ibemu_eport *p;
	struct ibemu_hca *h;

	if (pi >= e->nports)
		return NULL;
	p = &e->ports[pi];
	if (e->nodes[p->node].type != IBEMU_NODE_HCA || p->num == 0)
		return NULL;
	h = ibemu_node_model(e, p->node);
	if (!h->cc[p->num] && create)
		h->cc[p->num] = calloc(1, sizeof(*h->cc[p->num]));
	return h->cc[p->num];
}

static void hca_arbitrate(struct ibemu_engine *e, uint32_t pi)
{
	struct ibemu_eport *p = &e->ports[pi];
	uint16_t by_sl[16];
	struct ibemu_pkt *pkt;
	int blocked = 0;
	unsigned sl;
	uint64_t end;

	if (p->peer == IBEMU_NONE || p->state == IBEMU_PORT_DOWN)
		return;
	if (p->busy_until > e->now) {
		ibemu__engine_arb_at(e, pi, p->busy_until);
		return;
	}
	/* Management first: VL15 needs no credit and no Active port. */
	pkt = ibemu_pktq_pop(&p->vl15_out);
	if (!pkt && p->mad_out.head && p->state == IBEMU_PORT_ACTIVE) {
		/* GMPs (QP1) go before the upper layer's data, with credit. */
		uint8_t vl = p->sl2vl[p->mad_out.head->sl & 15];

		ibemu__engine_credit_sync(e, p);
		if (p->credits[vl] < p->mad_out.head->blocks) {
			ibemu__engine_wait_start(e, p);
			return;
		}
		ibemu__engine_wait_stop(e, p);
		pkt = ibemu_pktq_pop(&p->mad_out);
		pkt->vl = vl;
	}
	if (!pkt) {
		if (p->state != IBEMU_PORT_ACTIVE)
			return;
		ibemu__engine_credit_sync(e, p);
		/* The upper layer thinks in SLs; credits are per VL. */
		for (sl = 0; sl < 16; sl++)
			by_sl[sl] = p->credits[p->sl2vl[sl]];
		pkt = ibemu__engine_pull(e, pi, by_sl, &blocked);
		if (!pkt) {
			/* Waiting counts only while something is ready. */
			if (blocked)
				ibemu__engine_wait_start(e, p);
			else
				ibemu__engine_wait_stop(e, p);
			return;
		}
		ibemu__engine_wait_stop(e, p);
		pkt->vl = p->sl2vl[pkt->sl & 15];
	}
	if (!pkt->slid)
		pkt->slid = p->lid;
	e->in_flight++;
	end = ibemu__engine_transmit(e, pi, pkt, 0);
	ibemu__engine_arb_at(e, pi, end);
}

static void hca_tail(struct ibemu_engine *e, uint32_t pi, struct ibemu_pkt *pkt)
{
	struct ibemu_eport *p = &e->ports[pi];

	if (p->state == IBEMU_PORT_DOWN) {
		/* The link went down under it: lost, its credit given back. */
		ibemu__engine_release(e, pi, pkt->vl, pkt->blocks, e->now);
		e->in_flight--;
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	p->cnt.rcv_pkts++;
	if (ibemu_lid_is_multicast(pkt->dlid))
		p->cnt.multicast_rcv_pkts++;
	else
		p->cnt.unicast_rcv_pkts++;
	p->cnt.rcv_data += (pkt->wire_bytes - IBEMU_VCRC_BYTES) / 4;
	/* The HCA consumes the packet as its tail arrives. */
	ibemu__engine_release(e, pi, pkt->vl, pkt->blocks, e->now);
	e->in_flight--;
	if (pkt->mad)
		ibemu__smi_hca_receive(e, pi, pkt);
	else
		ibemu__engine_deliver(e, pi, pkt);
}

const struct ibemu_node_ops ibemu_hca_ops = {
	.init = hca_init,
	.fini = hca_fini,
	.tail = hca_tail,
	.arbitrate = hca_arbitrate,
};

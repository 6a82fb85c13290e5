// SPDX-License-Identifier: MIT
/*
 * HCA ports in the engine: when the link is free the port pulls the next
 * packet from the upper layer (which arbitrates among its flows), and a
 * packet whose tail arrives is handed up at once, its buffer space credited
 * back to the sender.
 */
#include "engine_int.h"

void ibemu__hca_arbitrate(struct ibemu_engine *e, uint32_t pi)
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
		if (p->state != IBEMU_PORT_ACTIVE || !e->ops ||
		    !e->ops->hca_pull)
			return;
		ibemu__engine_credit_sync(e, p);
		/* The upper layer thinks in SLs; credits are per VL. */
		for (sl = 0; sl < 16; sl++)
			by_sl[sl] = p->credits[p->sl2vl[sl]];
		pkt = e->ops->hca_pull(e->ctx, pi, by_sl, &blocked);
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

void ibemu__hca_tail(struct ibemu_engine *e, uint32_t pi, struct ibemu_pkt *pkt)
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
	p->cnt.unicast_rcv_pkts++;
	p->cnt.rcv_data += (pkt->wire_bytes - IBEMU_VCRC_BYTES) / 4;
	/* The HCA consumes the packet as its tail arrives. */
	ibemu__engine_release(e, pi, pkt->vl, pkt->blocks, e->now);
	e->in_flight--;
	if (pkt->mad)
		ibemu__smi_hca_receive(e, pi, pkt);
	else if (e->ops && e->ops->hca_deliver)
		e->ops->hca_deliver(e->ctx, pi, pkt);
	else
		ibemu_engine_pkt_free(e, pkt);
}

// SPDX-License-Identifier: MIT
/*
 * Under a host model (host_model.h), what the first packet of an arriving
 * SEND waits for before its data are written: the receive WQE it fills,
 * which the HCA fetched by DMA (ibemu_host_rwqe_fetch() at the receive's
 * post). Arrivals are held in
 * order until their data are in memory (transport.c, rx_hold()); a SEND
 * held but not yet delivered has taken the receive at the head of its
 * queue, so the next one takes the one after: 'held' counts them.
 */
#include "transport_int.h"

static int is_send_start(uint8_t op)
{
	op &= 0x1f;
	return op == OP_SEND_FIRST || op == OP_SEND_ONLY ||
	       op == OP_SEND_ONLY_IMM;
}

/* The receive queue a SEND's first packet takes a receive from; NULL
 * when it is no such packet, or its queue is an XRC SRQ (named by the
 * packet's XRCETH, which the packet does not keep). */
static struct tp_rq *send_rq(const struct ibemu_tp *tp,
			     const struct ibemu_pkt *pkt)
{
	struct tp_qp *qp;

	if (!is_send_start(pkt->opcode))
		return NULL;
	qp = ibemu__tp_qp(tp, pkt->dqpn);
	if (!qp || qp->type == IBEMU_QPT_XRC_RECV)
		return NULL;
	return qp->srq ? &qp->srq->rq : &qp->rq;
}

uint64_t ibemu__tp_rx_rwqe_in(struct ibemu_tp *tp, const struct ibemu_pkt *pkt,
			      uint64_t now)
{
	struct tp_rq *rq = send_rq(tp, pkt);
	struct tp_rwqe *w;
	uint32_t i;

	if (!rq)
		return 0;
	w = rq->head;
	for (i = 0; w && i < rq->held; i++)
		w = w->next;
	rq->held++;
	if (!w || w->ready_at > now)
		return 0; /* none there: an RNR NAK, not a write */
	return w->in_hca;
}

void ibemu__tp_rx_unhold(struct ibemu_tp *tp, const struct ibemu_pkt *pkt)
{
	struct tp_rq *rq = send_rq(tp, pkt);

	if (rq && rq->held)
		rq->held--;
}

// SPDX-License-Identifier: MIT
/*
 * Congestion control in the QP transport (IBA Annex A10.3). As a
 * destination, a QP answers a data packet marked FECN: an RC responder
 * sets BECN in the response that covers it, UC and UD QPs (and an RC
 * requester, for the READ and atomic responses it receives) send a
 * Congestion Notification Packet back to the source QP. As a source, a QP
 * hands each BECN to the HCA's CC state (hca/cc.c) and spaces its data
 * packets as the Congestion Control Table says.
 */
#include <errno.h>
#include <stdlib.h>

#include "transport_int.h"
#include "util.h"

/*
 * CNPs a QP keeps queued at most. Each marked packet asks for one, and
 * CNPs leave before anything else of the QP, so the queue stays short; the
 * bound only keeps a flood of marked UD packets from growing it. A FECN
 * beyond it goes unanswered (A10.3.3 lets a CA coalesce notifications).
 */
#define CNP_QUEUE_MAX 256

/* The SL the next data packet of 'qp' leaves on. */
static unsigned qp_sl(const struct tp_qp *qp)
{
	if (qp->type == IBEMU_QPT_UD)
		return qp->cur ? qp->cur->ah.sl : 0;
	return qp->attr.ah_attr.sl;
}

static uint32_t mtu_of(const struct tp_qp *qp)
{
	return IBEMU_MTU_BYTES(qp->attr.path_mtu);
}

/* Whether 'pkt' is a data packet: a request, READ data or an atomic's
 * result; not an ACK, a NAK or a CNP (A10.3.2). */
static int is_data(const struct ibemu_pkt *pkt)
{
	if (pkt->opcode == IBEMU_OPCODE_CNP)
		return 0;
	return !tp_opcode_rc(pkt->opcode) || (pkt->opcode & 0x1f) != OP_ACK;
}

/* Whether 'pkt' is an RC response (READ data, ACK, atomic result). */
static int is_response(const struct ibemu_pkt *pkt)
{
	uint8_t op = pkt->opcode & 0x1f;

	return tp_opcode_rc(pkt->opcode) && op >= OP_READ_RESP_FIRST &&
	       op <= OP_ATOMIC_ACK;
}

uint64_t ibemu__tp_cc_wait(struct ibemu_tp *tp, struct tp_qp *qp)
{
	return ibemu_hca_cc_wait(tp->e, qp->port, qp_sl(qp), &qp->cc);
}

void ibemu__tp_cc_sent(struct ibemu_tp *tp, struct tp_qp *qp,
		       const struct ibemu_pkt *pkt)
{
	if (is_data(pkt))
		ibemu_hca_cc_sent(tp->e, qp->port, pkt->sl, &qp->cc,
				  pkt->wire_bytes);
}

void ibemu__tp_cc_arm(struct ibemu_tp *tp, uint32_t port, uint64_t when)
{
	unsigned num = port - tp->first_port + 1;
	uint64_t now = ibemu_engine_now(tp->e);

	/* One pending timer a port: an earlier one pulls, and that pull
	 * arms the next for whoever still waits. */
	if (tp->cc_at[num] >= now && tp->cc_at[num] <= when)
		return;
	tp->cc_at[num] = when;
	ibemu_engine_timer(tp->e, port, when, (uint64_t)TIMER_CC << 56);
}

/* Queues a CNP from 'qp' to QP 'dqpn' at LID 'dlid' on SL 'sl'. */
static int cnp_queue(struct ibemu_tp *tp, struct tp_qp *qp, uint32_t dqpn,
		     uint16_t dlid, uint8_t sl)
{
	struct tp_cnp *c;

	if (qp->cnp_n >= CNP_QUEUE_MAX)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return 0;
	c->dqpn = dqpn;
	c->dlid = dlid;
	c->sl = sl;
	if (qp->cnp_tail)
		qp->cnp_tail->next = c;
	else
		qp->cnp_head = c;
	qp->cnp_tail = c;
	qp->cnp_n++;
	ibemu_engine_kick(tp->e, qp->port);
	return 1;
}

/* A10.3.2: the destination of a data packet marked FECN answers it. */
static void fecn(struct ibemu_tp *tp, struct tp_qp *qp,
		 const struct ibemu_pkt *pkt, const struct tp_msg *m)
{
	int cnp = 0;

	switch (qp->type) {
	case IBEMU_QPT_RC:
	case IBEMU_QPT_XRC_SEND:
	case IBEMU_QPT_XRC_RECV:
		if (!is_response(pkt)) {
			/* The responder's next ACK or response carries
			 * the BECN, coalesced as the ACKs are. */
			qp->becn_owed = 1;
			break;
		}
		/* READ data or an atomic's result: no packet goes back
		 * that could carry it, so a CNP does (A10.3.3). */
		cnp = cnp_queue(tp, qp, qp->attr.dest_qp_num,
				qp->attr.ah_attr.dlid, pkt->sl);
		break;
	case IBEMU_QPT_UC:
		cnp = cnp_queue(tp, qp, qp->attr.dest_qp_num,
				qp->attr.ah_attr.dlid, pkt->sl);
		break;
	default:
		/* UD: the source is the request's (its DETH's SrcQP). */
		if (!m)
			return;
		cnp = cnp_queue(tp, qp, m->src_qpn, pkt->slid, pkt->sl);
		break;
	}
	ibemu_hca_cc_fecn(tp->e, qp->port, cnp);
}

/* A10.3.1: a BECN (in an ACK, a response or a CNP) reached its source. */
static void becn(struct ibemu_tp *tp, struct tp_qp *qp,
		 const struct ibemu_pkt *pkt, uint32_t remote_qpn)
{
	/* A10.4.3.5: the service type as the CongestionLog records it
	 * (2 bits, no code for XRC: its connections log as RC). */
	static const uint8_t service[] = {
		[IBEMU_QPT_RC] = 0,	  [IBEMU_QPT_UC] = 1,
		[IBEMU_QPT_UD] = 3,	  [IBEMU_QPT_XRC_SEND] = 0,
		[IBEMU_QPT_XRC_RECV] = 0,
	};
	struct ibemu_cc_event ev = {
		.local_qp = qp->qpn,
		.remote_qp = remote_qpn,
		.remote_lid = pkt->slid,
		.service_type = service[qp->type],
	};

	ibemu_hca_cc_becn(tp->e, qp->port, pkt->sl, &qp->cc, &ev);
}

int ibemu__tp_cc_recv(struct ibemu_tp *tp, struct tp_qp *qp,
		      const struct ibemu_pkt *pkt, const struct tp_msg *m)
{
	if (pkt->opcode == IBEMU_OPCODE_CNP) {
		/* The CNP names its sender in place of a DETH's SrcQP. */
		becn(tp, qp, pkt, (uint32_t)pkt->flow);
		return 1;
	}
	/* A FECN on an ACK asks nothing: only data is throttled. */
	if (pkt->fecn && is_data(pkt))
		fecn(tp, qp, pkt, m);
	if (pkt->becn && is_response(pkt))
		becn(tp, qp, pkt, qp->attr.dest_qp_num);
	return 0;
}

struct ibemu_pkt *ibemu__tp_cnp_pull(struct ibemu_tp *tp, struct tp_qp *qp,
				     const uint16_t *credits, int *blocked)
{
	struct tp_cnp *c = qp->cnp_head;
	struct ibemu_pkt *pkt;

	if (!c)
		return NULL;
	pkt = ibemu_engine_pkt_alloc(tp->e);
	if (!pkt)
		return NULL;
	/* A10.3.3: LRH and BTH only; ICRC and VCRC added. */
	ibemu_pkt_set_size(pkt, IBEMU_CNP_HDR_BYTES, 0);
	if (credits[c->sl & 15] < pkt->blocks) {
		*blocked = 1;
		ibemu_engine_pkt_free(tp->e, pkt);
		return NULL;
	}
	pkt->t_created = ibemu_engine_now(tp->e);
	pkt->dlid = c->dlid;
	pkt->sl = c->sl;
	pkt->opcode = IBEMU_OPCODE_CNP;
	pkt->dqpn = c->dqpn;
	pkt->pkey = ibemu__tp_pkey(tp, qp);
	pkt->last = 1;
	pkt->flow = qp->qpn;
	qp->cnp_head = c->next;
	if (!qp->cnp_head)
		qp->cnp_tail = NULL;
	qp->cnp_n--;
	free(c);
	return pkt;
}

void ibemu__tp_cc_reset(struct tp_qp *qp)
{
	struct tp_cnp *c;

	while ((c = qp->cnp_head)) {
		qp->cnp_head = c->next;
		free(c);
	}
	qp->cnp_tail = NULL;
	qp->cnp_n = 0;
	qp->becn_owed = 0;
}

int ibemu_tp_qp_cc_next(struct ibemu_tp *tp, uint32_t qpn,
			struct ibemu_tp_qp_cc *out)
{
	struct tp_qp *qp;

	for (; qpn < tp->qps.n; qpn++) {
		qp = tp->qps.v[qpn];
		if (!qp)
			continue;
		out->qpn = qp->qpn;
		out->port = qp->port;
		out->type = qp->type;
		out->sl = (uint8_t)qp_sl(qp);
		out->dlid =
			qp->type == IBEMU_QPT_UD ? 0 : qp->attr.ah_attr.dlid;
		out->remote_qpn =
			qp->type == IBEMU_QPT_UD ? 0 : qp->attr.dest_qp_num;
		out->mtu = mtu_of(qp);
		out->src = &qp->cc;
		return 0;
	}
	return -ENOENT;
}

// SPDX-License-Identifier: MIT
/*
 * The responder side of a QP (IBA 9.7.5 and 9.8): requests are checked in
 * PSN order (duplicates answered again, gaps NAKed once), receive WQEs
 * consumed, keys and bounds checked, and a message's data moved when its
 * last packet arrives. Responses (ACKs, READ data, atomic results) leave
 * in PSN order from one queue per QP; an ACK that has not left yet is
 * replaced by a newer one (coalescing).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_int.h"
#include "util.h"

enum resp_kind { RESP_ACK, RESP_READ, RESP_ATOMIC };

static unsigned mtu_of(const struct tp_qp *qp)
{
	return IBEMU_MTU_BYTES(qp->attr.path_mtu);
}

static void resp_free(struct ibemu_tp *tp, struct tp_resp *r)
{
	if (r->msg) {
		r->msg->inflight--;
		ibemu__tp_msg_put(tp->d, r->msg);
	}
	free(r);
}

void ibemu__tp_resp_reset(struct ibemu_tp *tp, struct tp_qp *qp)
{
	struct tp_resp *r;

	while ((r = qp->resp_head)) {
		qp->resp_head = r->next;
		resp_free(tp, r);
	}
	qp->resp_tail = NULL;
	qp->resp_n = 0;
	qp->dup_n = 0;
	qp->nak_sent = 0;
	qp->in_msg = 0;
	qp->in_bad = 0;
	ibemu__tp_cc_reset(qp);
}

static void resp_push(struct tp_qp *qp, struct tp_resp *r)
{
	r->next = NULL;
	if (qp->resp_tail)
		qp->resp_tail->next = r;
	else
		qp->resp_head = r;
	qp->resp_tail = r;
}

/*
 * Queues an ACK or NAK for PSN 'psn' with AETH syndrome 'syn'. ACKs are
 * coalesced, as ConnectX adapters do: one that has not started to leave
 * is updated in place rather than followed by another, since a later
 * ACK acknowledges everything before it. Responses keep PSN order.
 */
static void queue_ack(struct ibemu_tp *tp, struct tp_qp *qp, uint32_t psn,
		      uint8_t syn)
{
	struct tp_resp *r = qp->resp_tail;

	if (r && r->kind == RESP_ACK && !r->sent) {
		r->psn = psn;
		r->aeth = (uint32_t)syn << 24 | (qp->msn & PSN_MASK);
		return;
	}
	r = calloc(1, sizeof(*r));
	IBEMU_BUG_ON(!r);
	r->kind = RESP_ACK;
	r->psn = psn;
	r->npkts = 1;
	r->aeth = (uint32_t)syn << 24 | (qp->msn & PSN_MASK);
	resp_push(qp, r);
	ibemu_engine_kick(tp->e, qp->port);
}

static void queue_nak(struct ibemu_tp *tp, struct tp_qp *qp, uint8_t code)
{
	queue_ack(tp, qp, qp->epsn, (uint8_t)(AETH_NAK | code));
}

/*
 * Whether the region a READ's responses come from is still the one its
 * request was checked against: deregistration is a barrier (IBA 10.6.3.5),
 * so the responder reads no byte of it after, as an HCA reads each
 * response's bytes as the packet leaves.
 */
static int read_src_held(const struct ibemu_tp *tp, const struct tp_qp *qp,
			 const struct tp_msg *m)
{
	const struct tp_mr *mr;

	if (!m->len)
		return 1; /* no region: C9-88 */
	mr = ibemu__tp_mr_check(tp, m->rkey, qp->pd, m->remote_addr, m->len,
				IBEMU_ACCESS_REMOTE_READ);
	return mr && mr->handle == m->read_src.mr;
}

/*
 * The region of the READ being answered went: its next response is a
 * remote access error NAK at that response's PSN (IBA 9.7.5.2.4, class C
 * for the responder: its QP goes to Error), which completes the READ with
 * IBV_WC_REM_ACCESS_ERR at the requester.
 */
static void read_abort(struct ibemu_tp *tp, struct tp_qp *qp, uint32_t psn)
{
	struct tp_resp *nak = calloc(1, sizeof(*nak));

	IBEMU_BUG_ON(!nak);
	nak->kind = RESP_ACK;
	nak->psn = psn;
	nak->npkts = 1;
	nak->aeth = (uint32_t)(AETH_NAK | NAK_REM_ACCESS) << 24 |
		    (qp->msn & PSN_MASK);
	ibemu__tp_qp_error(tp, qp, IBEMU_EVENT_QP_ACCESS_ERR);
	resp_push(qp, nak);
}

struct ibemu_pkt *ibemu__tp_resp_pull(struct ibemu_tp *tp, struct tp_qp *qp,
				      const uint16_t *credits, int *blocked,
				      int throttled)
{
	struct tp_resp *r = qp->resp_head;
	unsigned ext = IBEMU_AETH_BYTES, payload = 0, mtu = mtu_of(qp);
	struct ibemu_pkt *pkt;
	uint8_t op = OP_ACK;

	if (!r || (throttled && r->kind != RESP_ACK))
		return NULL;
	if (r->kind == RESP_READ && !read_src_held(tp, qp, r->msg)) {
		read_abort(tp, qp, PSN_ADD(r->psn, r->sent));
		r = qp->resp_head;
	}
	if (r->kind == RESP_ATOMIC) {
		op = OP_ATOMIC_ACK;
		ext += IBEMU_ATOMICACK_BYTES;
	} else if (r->kind == RESP_READ) {
		uint32_t left = r->len - r->sent * mtu;

		payload = left > mtu ? mtu : left;
		if (r->npkts == 1)
			op = OP_READ_RESP_ONLY;
		else if (r->sent == 0)
			op = OP_READ_RESP_FIRST;
		else if (r->sent + 1 < r->npkts)
			op = OP_READ_RESP_MIDDLE;
		else
			op = OP_READ_RESP_LAST;
		if (op == OP_READ_RESP_MIDDLE)
			ext = 0; /* IBA 9.2: no AETH in the middle */
	}
	pkt = ibemu_engine_pkt_alloc(tp->e);
	if (!pkt)
		return NULL;
	ibemu_pkt_set_size(pkt, tp_hdr(ext), payload);
	if (credits[qp->attr.ah_attr.sl & 15] < pkt->blocks) {
		*blocked = 1;
		ibemu_engine_pkt_free(tp->e, pkt);
		return NULL;
	}
	pkt->t_created = ibemu_engine_now(tp->e);
	pkt->dlid = qp->attr.ah_attr.dlid;
	pkt->sl = qp->attr.ah_attr.sl;
	pkt->opcode = OP_RC | op;
	pkt->psn = PSN_ADD(r->psn, r->sent);
	pkt->dqpn = qp->attr.dest_qp_num;
	pkt->pkey = ibemu__tp_pkey(tp, qp);
	pkt->aeth = r->aeth;
	/* AtomicAckETH: the value found travels by value (8 bytes). */
	if (r->kind == RESP_ATOMIC)
		pkt->flow = r->orig;
	pkt->last = r->sent + 1 == r->npkts;
	/* A10.3.2: the BECN of a marked request rides the next response. */
	if (qp->becn_owed) {
		pkt->becn = 1;
		qp->becn_owed = 0;
	}
	if (r->msg) {
		pkt->cookie = (uint64_t)(uintptr_t)r->msg;
		r->msg->inflight++;
	}
	if (++r->sent >= r->npkts) {
		qp->resp_head = r->next;
		if (!qp->resp_head)
			qp->resp_tail = NULL;
		if (r->dup)
			qp->dup_n--;
		else if (r->kind != RESP_ACK)
			qp->resp_n--;
		resp_free(tp, r);
	}
	return pkt;
}

/*
 * Moves message 'm''s data (the requester's scatter list or its inline
 * bytes) into 'dst' (this transport's memory, 'ndst' pieces), 'len' bytes
 * in all: the one copy of the message. 0 or the upper layer's error.
 */
static int land(struct ibemu_tp *tp, const struct tp_msg *m,
		const struct tp_seg *dst, uint32_t ndst, uint64_t len)
{
	uint64_t soff = 0, doff = 0, n;
	uint32_t si = 0, di = 0;
	struct ibemu_tp_mem s, d;
	int ret;

	/* Its requester failed it (a region it names went): its bytes are
	 * not read after (ibemu__tp_req_mr_gone). */
	if (m->status)
		return -EREMOTEIO;
	if (m->is_inline) {
		for (di = 0; di < ndst && len; di++) {
			n = dst[di].len < len ? dst[di].len : len;
			d = (struct ibemu_tp_mem){tp->ctx, dst[di].mr,
						  dst[di].addr};
			ret = tp->ops.write(tp->ctx, &d, m->inline_buf + soff,
					    n);
			if (ret)
				return ret;
			soff += n;
			len -= n;
		}
		return 0;
	}
	while (len && si < m->nsge && di < ndst) {
		if (soff == m->seg[si].len) {
			si++;
			soff = 0;
			continue;
		}
		if (doff == dst[di].len) {
			di++;
			doff = 0;
			continue;
		}
		n = m->seg[si].len - soff;
		if (dst[di].len - doff < n)
			n = dst[di].len - doff;
		if (len < n)
			n = len;
		s = (struct ibemu_tp_mem){m->tp->ctx, m->seg[si].mr,
					  m->seg[si].addr + soff};
		d = (struct ibemu_tp_mem){tp->ctx, dst[di].mr,
					  dst[di].addr + doff};
		ret = tp->ops.copy(tp->ctx, &d, &s, n);
		if (ret)
			return ret;
		soff += n;
		doff += n;
		len -= n;
	}
	return 0;
}

/*
 * Lands 'len' bytes of 'm' in receive WQE 'w', after 'skip' bytes (a UD
 * receive's GRH space). Returns 0, or the completion status: local
 * protection error for a bad lkey (IBA 10.7.3.1), local length error when
 * it does not fit; or -EREMOTEIO if the sender's region went (its WQE
 * failed then, ibemu__tp_req_mr_gone: on an HCA the message never came).
 */
static int land_recv(struct ibemu_tp *tp, struct tp_qp *qp,
		     const struct tp_msg *m, const struct tp_rwqe *w,
		     uint64_t skip, uint64_t len)
{
	struct tp_seg seg[IBEMU_TP_MAX_SGE];
	const struct tp_mr *mr;
	uint32_t i, n = 0;
	int ret;

	if (skip + len > w->cap)
		return IBEMU_WC_LOC_LEN_ERR;
	for (i = 0; i < w->nsge && i < IBEMU_TP_MAX_SGE; i++) {
		const struct ibemu_tp_sge *s = &w->sge[i];
		uint64_t at = s->addr, l = s->length;

		if (!l)
			continue;
		mr = ibemu__tp_mr_check(tp, s->lkey, qp->pd, s->addr, l,
					IBEMU_ACCESS_LOCAL_WRITE);
		if (!mr)
			return IBEMU_WC_LOC_PROT_ERR;
		if (skip >= l) {
			skip -= l;
			continue;
		}
		at += skip;
		l -= skip;
		skip = 0;
		seg[n++] = (struct tp_seg){mr->handle, at, (uint32_t)l};
	}
	ret = len ? land(tp, m, seg, n, len) : 0;
	if (ret == -EREMOTEIO)
		return ret;
	return ret ? IBEMU_WC_LOC_PROT_ERR : 0;
}

static int has_imm(uint8_t op)
{
	return op == OP_SEND_LAST_IMM || op == OP_SEND_ONLY_IMM ||
	       op == OP_WRITE_LAST_IMM || op == OP_WRITE_ONLY_IMM;
}

static int is_first(uint8_t op)
{
	return op == OP_SEND_FIRST || op == OP_SEND_ONLY ||
	       op == OP_SEND_ONLY_IMM || op == OP_WRITE_FIRST ||
	       op == OP_WRITE_ONLY || op == OP_WRITE_ONLY_IMM;
}

static int is_last(uint8_t op)
{
	return op != OP_SEND_FIRST && op != OP_SEND_MIDDLE &&
	       op != OP_WRITE_FIRST && op != OP_WRITE_MIDDLE;
}

static int is_send(uint8_t op)
{
	return op <= OP_SEND_ONLY_IMM;
}

/* Payload of the packet with PSN 'psn' of 'm' (the wire has it padded). */
static uint32_t payload_of(const struct tp_qp *qp, const struct tp_msg *m,
			   uint32_t psn)
{
	uint32_t k = (uint32_t)psn_diff(psn, m->first_psn), mtu = mtu_of(qp);
	uint32_t left = m->len - k * mtu;

	return left > mtu ? mtu : left;
}

/* What an RDMA of DMA length 0 is granted: no MR, no bytes (handle 0). */
static const struct tp_mr no_mr;

/*
 * Checks the RETH of 'm' against the MRs: remote access with 'access'.
 * Returns the MR, &no_mr for a READ or WRITE of length 0, NULL if denied.
 */
static const struct tp_mr *reth_check(struct ibemu_tp *tp, struct tp_qp *qp,
				      const struct tp_msg *m, uint32_t access)
{
	/* IBA 10.6.3.3 (C10-?): the QP must allow it too. */
	if ((qp->attr.qp_access_flags & access) != access)
		return NULL;
	/* IBA C9-88: the R_Key of a READ or WRITE of DMA length 0 (with
	 * immediate data or not) is not validated; nothing moves. */
	if (!m->len && m->opcode < IBEMU_WR_ATOMIC_CMP_AND_SWP)
		return &no_mr;
	return ibemu__tp_mr_check(
		tp, m->rkey, qp->pd, m->remote_addr,
		m->opcode >= IBEMU_WR_ATOMIC_CMP_AND_SWP ? 8 : m->len, access);
}

/* Whether the region a WRITE under way lands in is still registered. */
static int write_target_held(const struct ibemu_tp *tp, const struct tp_qp *qp,
			     const struct tp_msg *m)
{
	const struct tp_mr *mr;

	if (!m->len)
		return 1; /* no region: C9-88 */
	mr = ibemu__tp_mr_check(tp, m->rkey, qp->pd, m->remote_addr, m->len,
				IBEMU_ACCESS_REMOTE_WRITE);
	return mr && mr->handle == qp->in_target.mr;
}

/* Completes the receive of a message (IBA 10.7.3.2). */
static void recv_done(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_rwqe *w,
		      const struct ibemu_pkt *pkt, const struct tp_msg *m,
		      int status, uint32_t byte_len)
{
	uint8_t op = pkt->opcode & 0x1f;
	struct ibemu_tp_cqe c = {
		.status = (uint32_t)status,
		.opcode = is_send(op) ? IBEMU_WC_RECV
				      : IBEMU_WC_RECV_RDMA_WITH_IMM,
		.byte_len = byte_len,
		.src_qp = m->src_qpn,
		.slid = pkt->slid,
		.sl = pkt->sl,
		.pkey_index = qp->attr.pkey_index,
		.solicited = pkt->se,
	};

	if (has_imm(op)) {
		c.imm_data = m->imm;
		c.wc_flags |= IBEMU_WC_WITH_IMM;
	}
	ibemu__tp_recv_complete(tp, qp, w, &c);
}

/* A responder error of class B or C (IBA 9.9.3.1): NAK, QP to Error. */
static void resp_fatal(struct ibemu_tp *tp, struct tp_qp *qp, uint8_t code,
		       int event)
{
	struct tp_resp *ack;

	queue_nak(tp, qp, code);
	/* The NAK must still leave: keep it across the flush. */
	ack = qp->resp_tail;
	if (qp->resp_head == ack) {
		qp->resp_head = qp->resp_tail = NULL;
	} else {
		struct tp_resp *r = qp->resp_head;

		while (r->next != ack)
			r = r->next;
		r->next = NULL;
		qp->resp_tail = r;
	}
	ibemu__tp_qp_error(tp, qp, event);
	resp_push(qp, ack);
}

/* An RC request in PSN order. */
static void rc_request(struct ibemu_tp *tp, struct tp_qp *qp,
		       struct ibemu_pkt *pkt, struct tp_msg *m)
{
	uint8_t op = pkt->opcode & 0x1f;
	const struct tp_mr *mr;
	struct tp_resp *r;
	uint32_t n;
	int st;

	qp->nak_sent = 0;
	if (op == OP_READ_REQ || op == OP_CMP_SWAP || op == OP_FETCH_ADD) {
		if (qp->in_msg) {
			resp_fatal(tp, qp, NAK_INV_REQ, IBEMU_EVENT_QP_REQ_ERR);
			return;
		}
		mr = reth_check(tp, qp, m,
				op == OP_READ_REQ ? IBEMU_ACCESS_REMOTE_READ
						  : IBEMU_ACCESS_REMOTE_ATOMIC);
		if (!mr) {
			resp_fatal(tp, qp, NAK_REM_ACCESS,
				   IBEMU_EVENT_QP_ACCESS_ERR);
			return;
		}
		/* IBA ch. 9 RC: at most max_dest_rd_atomic at once. */
		if (qp->resp_n >= qp->attr.max_dest_rd_atomic) {
			resp_fatal(tp, qp, NAK_INV_REQ, IBEMU_EVENT_QP_REQ_ERR);
			return;
		}
		r = calloc(1, sizeof(*r));
		IBEMU_BUG_ON(!r);
		r->msg = m;
		m->inflight++;
		r->psn = pkt->psn;
		if (op == OP_READ_REQ) {
			r->kind = RESP_READ;
			r->len = m->len;
			r->npkts = m->npsn;
			m->read_src = (struct ibemu_tp_mem){tp->ctx, mr->handle,
							    m->remote_addr};
			n = m->npsn;
		} else {
			struct ibemu_tp_mem at = {tp->ctx, mr->handle,
						  m->remote_addr};

			if (m->remote_addr & 7) {
				resp_free(tp, r);
				resp_fatal(tp, qp, NAK_INV_REQ,
					   IBEMU_EVENT_QP_REQ_ERR);
				return;
			}
			r->kind = RESP_ATOMIC;
			r->npkts = 1;
			if (tp->ops.atomic(tp->ctx, &at, m->opcode,
					   m->compare_add, m->swap, &r->orig)) {
				resp_free(tp, r);
				resp_fatal(tp, qp, NAK_REM_OP,
					   IBEMU_EVENT_QP_FATAL);
				return;
			}
			if (qp->replay_n) {
				struct tp_replay *c =
					&qp->replay[qp->replay_next];

				c->psn = pkt->psn;
				c->orig = r->orig;
				c->valid = 1;
				qp->replay_next =
					(qp->replay_next + 1) % qp->replay_n;
			}
			n = 1;
		}
		qp->msn++;
		r->aeth = (uint32_t)AETH_ACK << 24 | (qp->msn & PSN_MASK);
		qp->resp_n++;
		resp_push(qp, r);
		qp->epsn = PSN_ADD(qp->epsn, n);
		ibemu_engine_kick(tp->e, qp->port);
		return;
	}
	if (is_first(op)) {
		if (qp->in_msg) {
			resp_fatal(tp, qp, NAK_INV_REQ, IBEMU_EVENT_QP_REQ_ERR);
			return;
		}
		if (!is_send(op)) {
			mr = reth_check(tp, qp, m, IBEMU_ACCESS_REMOTE_WRITE);
			if (!mr) {
				resp_fatal(tp, qp, NAK_REM_ACCESS,
					   IBEMU_EVENT_QP_ACCESS_ERR);
				return;
			}
			qp->in_target = (struct ibemu_tp_mem){
				tp->ctx, mr->handle, m->remote_addr};
			qp->in_target_len = m->len;
		}
	} else if (!qp->in_msg || is_send(op) != is_send(qp->in_op)) {
		resp_fatal(tp, qp, NAK_INV_REQ, IBEMU_EVENT_QP_REQ_ERR);
		return;
	} else if (!is_send(op) && !write_target_held(tp, qp, m)) {
		/* IBA 10.6.3.5: the region went while the WRITE was under
		 * way; its next packet meets a remote access error. */
		resp_fatal(tp, qp, NAK_REM_ACCESS, IBEMU_EVENT_QP_ACCESS_ERR);
		return;
	}
	/* A receive WQE for a SEND as it begins, for a WRITE with
	 * immediate at its last packet; none: RNR NAK (IBA 9.7.5.2.8). */
	if ((is_send(op) && is_first(op)) || (!is_send(op) && has_imm(op))) {
		if (!qp->in_rwqe)
			qp->in_rwqe = ibemu__tp_rq_take(tp, qp);
		if (!qp->in_rwqe) {
			queue_ack(tp, qp, pkt->psn,
				  (uint8_t)(AETH_RNR | qp->attr.min_rnr_timer));
			return;
		}
	}
	if (is_first(op)) {
		qp->in_op = op;
		qp->in_len = 0;
	}
	qp->in_msg = !is_last(op);
	qp->in_len += payload_of(qp, m, pkt->psn);
	qp->epsn = PSN_ADD(qp->epsn, 1);
	if (is_send(op) && qp->in_len > qp->in_rwqe->cap) {
		struct tp_rwqe *w = qp->in_rwqe;

		qp->in_rwqe = NULL;
		recv_done(tp, qp, w, pkt, m, IBEMU_WC_LOC_LEN_ERR, 0);
		resp_fatal(tp, qp, NAK_INV_REQ, IBEMU_EVENT_QP_REQ_ERR);
		return;
	}
	if (!is_last(op)) {
		if (pkt->ack_req)
			queue_ack(tp, qp, pkt->psn, AETH_ACK);
		return;
	}
	/* The last packet: the data is the responder's now. */
	if (is_send(op)) {
		struct tp_rwqe *w = qp->in_rwqe;

		qp->in_rwqe = NULL;
		st = land_recv(tp, qp, m, w, 0, m->len);
		if (st == -EREMOTEIO) {
			qp->in_rwqe = w; /* it serves the next message */
			return;
		}
		recv_done(tp, qp, w, pkt, m, st, st ? 0 : m->len);
		if (st) {
			/* The NAK names this packet, not the next PSN. */
			qp->epsn = pkt->psn;
			resp_fatal(tp, qp, NAK_REM_OP, IBEMU_EVENT_QP_FATAL);
			return;
		}
	} else {
		struct tp_seg t = {qp->in_target.mr, qp->in_target.addr,
				   (uint32_t)qp->in_target_len};

		st = m->len ? land(tp, m, &t, 1, m->len) : 0;
		if (st == -EREMOTEIO) {
			/* The requester's own region went: it failed the
			 * WQE with a local protection error when it did
			 * (ibemu__tp_req_mr_gone), and on an HCA the rest of
			 * the message would never have come. */
			return;
		}
		if (st) {
			qp->epsn = pkt->psn; /* the NAK names this packet */
			resp_fatal(tp, qp, NAK_REM_ACCESS,
				   IBEMU_EVENT_QP_ACCESS_ERR);
			return;
		}
		if (has_imm(op)) {
			struct tp_rwqe *w = qp->in_rwqe;

			qp->in_rwqe = NULL;
			recv_done(tp, qp, w, pkt, m, IBEMU_WC_SUCCESS, m->len);
		}
	}
	qp->msn++;
	if (pkt->ack_req)
		queue_ack(tp, qp, pkt->psn, AETH_ACK);
}

/* A request the responder has executed already (IBA C9-105). */
static void rc_duplicate(struct ibemu_tp *tp, struct tp_qp *qp,
			 struct ibemu_pkt *pkt, struct tp_msg *m)
{
	uint8_t op = pkt->opcode & 0x1f;
	struct tp_resp *r;
	uint32_t i, k;

	if (op == OP_READ_REQ) {
		/* Executed again, from the PSN asked for. */
		const struct tp_mr *mr =
			reth_check(tp, qp, m, IBEMU_ACCESS_REMOTE_READ);

		/* Duplicates reuse the resources of the requests they
		 * repeat (IBA ch. 9 RC); a bounded number is queued. */
		if (!mr || qp->dup_n >= qp->attr.max_dest_rd_atomic)
			return;
		k = (uint32_t)psn_diff(pkt->psn, m->first_psn);
		if (k >= m->npsn)
			return;
		r = calloc(1, sizeof(*r));
		IBEMU_BUG_ON(!r);
		r->msg = m;
		m->inflight++;
		r->kind = RESP_READ;
		m->read_src = (struct ibemu_tp_mem){tp->ctx, mr->handle,
						    m->remote_addr};
		r->psn = m->first_psn;
		r->sent = k;
		r->len = m->len;
		r->npkts = m->npsn;
		r->aeth = (uint32_t)AETH_ACK << 24 | (qp->msn & PSN_MASK);
		r->dup = 1;
		qp->dup_n++;
		resp_push(qp, r);
		ibemu_engine_kick(tp->e, qp->port);
		return;
	}
	if (op == OP_CMP_SWAP || op == OP_FETCH_ADD) {
		/* Never executed twice: the replay cache answers. */
		for (i = 0; i < qp->replay_n &&
			    qp->dup_n < qp->attr.max_dest_rd_atomic;
		     i++) {
			struct tp_replay *c = &qp->replay[i];

			if (!c->valid || c->psn != pkt->psn)
				continue;
			r = calloc(1, sizeof(*r));
			IBEMU_BUG_ON(!r);
			r->msg = m;
			m->inflight++;
			r->kind = RESP_ATOMIC;
			r->psn = pkt->psn;
			r->npkts = 1;
			r->orig = c->orig;
			r->aeth =
				(uint32_t)AETH_ACK << 24 | (qp->msn & PSN_MASK);
			qp->resp_n++;
			resp_push(qp, r);
			ibemu_engine_kick(tp->e, qp->port);
			return;
		}
		return;
	}
	/* SEND or WRITE: acknowledge again what has arrived. */
	queue_ack(tp, qp, PSN_ADD(qp->epsn, (uint32_t)-1), AETH_ACK);
}

static void rc_recv(struct ibemu_tp *tp, struct tp_qp *qp,
		    struct ibemu_pkt *pkt, struct tp_msg *m)
{
	int32_t d = psn_diff(pkt->psn, qp->epsn);

	if (d < 0) {
		rc_duplicate(tp, qp, pkt, m);
		return;
	}
	if (d > 0) {
		/* IBA ch. 9 RC: one NAK per gap, until the PSN comes. */
		if (!qp->nak_sent) {
			qp->nak_sent = 1;
			queue_nak(tp, qp, NAK_PSN_SEQ);
		}
		return;
	}
	rc_request(tp, qp, pkt, m);
}

/* UC (IBA ch. 9 UC): no acknowledgements; a gap drops the message under
 * way, and the responder picks up at the next first packet. */
static void uc_recv(struct ibemu_tp *tp, struct tp_qp *qp,
		    struct ibemu_pkt *pkt, struct tp_msg *m)
{
	uint8_t op = pkt->opcode & 0x1f;
	const struct tp_mr *mr;
	int st;

	if (pkt->psn != qp->epsn || !is_first(op) == !qp->in_msg) {
		/* A lost packet: abandon the message; its receive WQE
		 * (kept in in_rwqe) serves the next one. */
		qp->in_msg = 0;
		qp->epsn = PSN_ADD(pkt->psn, 1);
		if (!is_first(op))
			return;
		qp->epsn = pkt->psn;
	}
	qp->epsn = PSN_ADD(qp->epsn, 1);
	if (is_first(op)) {
		qp->in_bad = 0;
		qp->in_op = op;
		qp->in_len = 0;
		if (!is_send(op)) {
			mr = reth_check(tp, qp, m, IBEMU_ACCESS_REMOTE_WRITE);
			if (!mr)
				qp->in_bad = 1; /* dropped silently */
			else
				qp->in_target = (struct ibemu_tp_mem){
					tp->ctx, mr->handle, m->remote_addr};
		}
	}
	if (qp->in_bad)
		return;
	if ((is_send(op) && is_first(op)) || (!is_send(op) && has_imm(op))) {
		if (!qp->in_rwqe)
			qp->in_rwqe = ibemu__tp_rq_take(tp, qp);
		if (!qp->in_rwqe) {
			qp->in_bad = 1; /* no receive: the message is lost */
			qp->in_msg = !is_last(op);
			return;
		}
	}
	qp->in_msg = !is_last(op);
	qp->in_len += payload_of(qp, m, pkt->psn);
	if (!is_last(op))
		return;
	if (is_send(op)) {
		struct tp_rwqe *w = qp->in_rwqe;

		qp->in_rwqe = NULL;
		st = land_recv(tp, qp, m, w, 0, m->len);
		if (st == -EREMOTEIO) {
			qp->in_rwqe =
				w; /* lost, as a dropped message: the receive serves the next */
			return;
		}
		recv_done(tp, qp, w, pkt, m, st, st ? 0 : m->len);
		if (st)
			ibemu__tp_qp_error(tp, qp, IBEMU_EVENT_QP_FATAL);
		return;
	}
	{
		struct tp_seg t = {qp->in_target.mr, qp->in_target.addr,
				   m->len};

		if (m->len && land(tp, m, &t, 1, m->len))
			return;
	}
	if (has_imm(op)) {
		struct tp_rwqe *w = qp->in_rwqe;

		qp->in_rwqe = NULL;
		recv_done(tp, qp, w, pkt, m, IBEMU_WC_SUCCESS, m->len);
	}
}

/* UD (IBA ch. 9 UD): one packet a message, Q_Key checked, the first 40
 * bytes of the receive buffer left for a GRH that is not there. */
static void ud_recv(struct ibemu_tp *tp, struct tp_qp *qp,
		    struct ibemu_pkt *pkt, struct tp_msg *m)
{
	uint8_t op = pkt->opcode & 0x1f;
	struct tp_rwqe *w;
	int st;

	if (op != OP_SEND_ONLY && op != OP_SEND_ONLY_IMM)
		return;
	/* IBA 10.2.5 (C10-15): a Q_Key mismatch drops it silently and
	 * counts in the port's Q_KeyViolations. */
	if (m->qkey != qp->attr.qkey) {
		ibemu_engine_count_violation(tp->e, qp->port,
					     IBEMU_CNT_Q_KEY_VIOLATIONS);
		return;
	}
	w = ibemu__tp_rq_take(tp, qp);
	if (!w)
		return; /* no receive WQE: dropped (IBA ch. 9 UD) */
	st = land_recv(tp, qp, m, w, IBEMU_TP_UD_GRH_BYTES, m->len);
	if (st == -EREMOTEIO)
		st = IBEMU_WC_LOC_PROT_ERR; /* the WQE is taken already */
	recv_done(tp, qp, w, pkt, m, st,
		  st ? 0 : m->len + IBEMU_TP_UD_GRH_BYTES);
}

void ibemu__tp_resp_recv(struct ibemu_tp *tp, struct tp_qp *qp,
			 struct ibemu_pkt *pkt)
{
	struct tp_msg *m = (struct tp_msg *)(uintptr_t)pkt->cookie;
	uint8_t prefix = qp->type == IBEMU_QPT_RC   ? OP_RC
			 : qp->type == IBEMU_QPT_UC ? OP_UC
						    : OP_UD;

	/* Only a QP ready to receive takes requests of its own type. */
	if (!m || (pkt->opcode & 0xe0) != prefix ||
	    (qp->state != IBEMU_QPS_RTR && qp->state != IBEMU_QPS_RTS &&
	     qp->state != IBEMU_QPS_SQD && qp->state != IBEMU_QPS_SQE))
		return;
	switch (qp->type) {
	case IBEMU_QPT_RC:
		rc_recv(tp, qp, pkt, m);
		break;
	case IBEMU_QPT_UC:
		uc_recv(tp, qp, pkt, m);
		break;
	default:
		ud_recv(tp, qp, pkt, m);
		break;
	}
}

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

/* What the next packet of response 'r' is (IBA 9.2 Table 33): its
 * opcode, extended header bytes and payload. */
struct resp_desc {
	uint8_t opcode;
	unsigned ext, payload;
};

static void resp_describe(const struct tp_qp *qp, const struct tp_resp *r,
			  struct resp_desc *d)
{
	unsigned mtu = mtu_of(qp);
	uint32_t left;

	d->opcode = OP_ACK;
	d->ext = IBEMU_AETH_BYTES;
	d->payload = 0;
	if (r->kind == RESP_ATOMIC) {
		d->opcode = OP_ATOMIC_ACK;
		d->ext += IBEMU_ATOMICACK_BYTES;
		return;
	}
	if (r->kind != RESP_READ)
		return;
	left = r->len - r->sent * mtu;
	d->payload = left > mtu ? mtu : left;
	if (r->npkts == 1)
		d->opcode = OP_READ_RESP_ONLY;
	else if (r->sent == 0)
		d->opcode = OP_READ_RESP_FIRST;
	else if (r->sent + 1 < r->npkts)
		d->opcode = OP_READ_RESP_MIDDLE;
	else
		d->opcode = OP_READ_RESP_LAST;
	if (d->opcode == OP_READ_RESP_MIDDLE)
		d->ext = 0; /* IBA 9.2: no AETH in the middle */
}

/* The packet's headers: LRH, BTH, AETH, AtomicAckETH (IBA 9.2, 9.3). */
static void resp_build(struct ibemu_tp *tp, struct tp_qp *qp,
		       const struct tp_resp *r, uint8_t opcode,
		       struct ibemu_pkt *pkt)
{
	pkt->t_created = ibemu_engine_now(tp->e);
	pkt->dlid = qp->attr.ah_attr.dlid;
	pkt->sl = qp->attr.ah_attr.sl;
	pkt->opcode = tp_prefix(qp) | opcode;
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
}

/* A packet of response 'r' left; once its last has, it is done. */
static void resp_sent(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_resp *r)
{
	if (++r->sent < r->npkts)
		return;
	qp->resp_head = r->next;
	if (!qp->resp_head)
		qp->resp_tail = NULL;
	if (r->dup)
		qp->dup_n--;
	else if (r->kind != RESP_ACK)
		qp->resp_n--;
	resp_free(tp, r);
}

/* Under a host model, when response 'r''s next packet has its bytes from
 * host memory (READ data, an atomic's operand); 0 when it needs none. */
static uint64_t resp_ready_at(const struct ibemu_tp *tp, const struct tp_qp *qp,
			      const struct tp_resp *r)
{
	uint64_t upto = 8;

	if (!tp->hm || !r->data_at)
		return 0;
	if (r->kind == RESP_READ) {
		upto = (uint64_t)(r->sent + 1) * mtu_of(qp);
		if (upto > r->len)
			upto = r->len;
	}
	return ibemu_host_read_ready(tp->hm, r->data_at, 0, upto);
}

/* Reads response 'r''s bytes from host memory (a host model's DMA read,
 * from now) and pulls again when its first packet may leave. */
static void resp_fetch(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_resp *r)
{
	uint64_t t;

	if (!tp->hm)
		return;
	r->data_at = ibemu_host_read(tp->hm, &tp->hs, ibemu_engine_now(tp->e),
				     0, r->kind == RESP_READ ? r->len : 8);
	t = resp_ready_at(tp, qp, r);
	ibemu_engine_timer(tp->e, qp->port, t,
			   (uint64_t)TIMER_KICK << 56 | qp->qpn);
}

/* The responder's next packet, in PSN order: the response at the head of
 * the queue, its next packet described, credited, built, sent. */
struct ibemu_pkt *ibemu__tp_resp_pull(struct ibemu_tp *tp, struct tp_qp *qp,
				      const uint16_t *credits, int *blocked,
				      int throttled)
{
	struct tp_resp *r = qp->resp_head;
	struct ibemu_pkt *pkt;
	struct resp_desc d;

	if (!r || (throttled && r->kind != RESP_ACK))
		return NULL;
	if (r->kind == RESP_READ && !read_src_held(tp, qp, r->msg)) {
		read_abort(tp, qp, PSN_ADD(r->psn, r->sent));
		r = qp->resp_head;
	}
	if (resp_ready_at(tp, qp, r) > ibemu_engine_now(tp->e))
		return NULL; /* resp_fetch() or the last packet pulls again */
	resp_describe(qp, r, &d);
	pkt = ibemu_engine_pkt_alloc(tp->e);
	if (!pkt)
		return NULL;
	ibemu_pkt_set_size(pkt, tp_hdr(d.ext), d.payload);
	if (credits[qp->attr.ah_attr.sl & 15] < pkt->blocks) {
		*blocked = 1;
		ibemu_engine_pkt_free(tp->e, pkt);
		return NULL;
	}
	resp_build(tp, qp, r, d.opcode, pkt);
	if (tp->hm && r->data_at && r->sent + 1 < r->npkts) {
		uint64_t t;

		r->sent++;
		t = resp_ready_at(tp, qp, r);
		r->sent--;
		if (t > ibemu_engine_now(tp->e))
			ibemu_engine_timer(tp->e, qp->port, t,
					   (uint64_t)TIMER_KICK << 56 |
						   qp->qpn);
	}
	resp_sent(tp, qp, r);
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

/*
 * What a request opcode (IBA 9.2 Table 33, the transport bits off) is to
 * the responder, looked up once a packet. Opcodes that are no request
 * count as ending a message, as nothing sends them to a responder.
 */
enum {
	OPF_FIRST = 1 << 0,	/* FIRST or ONLY: begins a message */
	OPF_LAST = 1 << 1,	/* LAST or ONLY, READ, atomic: ends one */
	OPF_SEND = 1 << 2,	/* a SEND packet */
	OPF_IMM = 1 << 3,	/* carries ImmDt */
	OPF_RD_ATOMIC = 1 << 4, /* a READ request or an atomic */
};

static const uint8_t op_flags[32] = {
	[OP_SEND_FIRST] = OPF_SEND | OPF_FIRST,
	[OP_SEND_MIDDLE] = OPF_SEND,
	[OP_SEND_LAST] = OPF_SEND | OPF_LAST,
	[OP_SEND_LAST_IMM] = OPF_SEND | OPF_LAST | OPF_IMM,
	[OP_SEND_ONLY] = OPF_SEND | OPF_FIRST | OPF_LAST,
	[OP_SEND_ONLY_IMM] = OPF_SEND | OPF_FIRST | OPF_LAST | OPF_IMM,
	[OP_WRITE_FIRST] = OPF_FIRST,
	[OP_WRITE_MIDDLE] = 0,
	[OP_WRITE_LAST] = OPF_LAST,
	[OP_WRITE_LAST_IMM] = OPF_LAST | OPF_IMM,
	[OP_WRITE_ONLY] = OPF_FIRST | OPF_LAST,
	[OP_WRITE_ONLY_IMM] = OPF_FIRST | OPF_LAST | OPF_IMM,
	[OP_READ_REQ] = OPF_RD_ATOMIC | OPF_LAST,
	[OP_READ_RESP_FIRST... OP_ATOMIC_ACK] = OPF_LAST,
	[OP_CMP_SWAP] = OPF_RD_ATOMIC | OPF_LAST,
	[OP_FETCH_ADD] = OPF_RD_ATOMIC | OPF_LAST,
	[OP_FETCH_ADD + 1 ... 31] = OPF_LAST,
};

static int has_imm(uint8_t op)
{
	return op_flags[op & 31] & OPF_IMM;
}

static int is_first(uint8_t op)
{
	return op_flags[op & 31] & OPF_FIRST;
}

static int is_last(uint8_t op)
{
	return op_flags[op & 31] & OPF_LAST;
}

static int is_send(uint8_t op)
{
	return op_flags[op & 31] & OPF_SEND;
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
	/* IBA 10.6.3.3: the QP must allow it too. */
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

/*
 * What an RC responder does with a request (IBA 9.7.5), one step a
 * function: its PSN first (9.7.1), then whether its opcode may follow the
 * packet before, the R_Key and its region, the resources it takes, its
 * length; then it is executed, its message completed and acknowledged.
 * A step that fails leads to the NAK that reports it. This is the layout
 * of the kernel's soft RoCE responder (rxe_resp.c). Each step returns the
 * next one; rc_recv runs them until RESP_DONE.
 */
enum resp_step {
	RESP_CHECK_PSN,
	RESP_CHECK_OPCODE_SEQUENCE,
	RESP_CHECK_RKEY,
	RESP_CHECK_RESOURCES,
	RESP_CHECK_LENGTH,
	RESP_EXECUTE,
	RESP_COMPLETE,
	RESP_ACKNOWLEDGE,
	RESP_DUPLICATE,
	RESP_ERR_LENGTH,
	RESP_NAK_SEQUENCE,
	RESP_NAK_RNR,
	RESP_NAK_INVALID_REQUEST,
	RESP_NAK_REMOTE_ACCESS,
	RESP_NAK_REMOTE_OPERATIONAL,
	RESP_DONE,
};

/* An RC request on its way through the steps. */
struct rc_req {
	struct ibemu_pkt *pkt;
	struct tp_msg *m;
	const struct tp_mr *mr; /* READ, atomic: what RESP_CHECK_RKEY found */
	uint32_t len;		/* SEND, WRITE: the message's bytes so far */
	uint8_t op;		/* BTH OpCode without the transport bits */
	uint8_t f;		/* op_flags[op] */
};

/* IBA 9.7.1: the expected PSN is executed; one behind it (half the PSN
 * space) is a duplicate, one ahead means packets were lost. */
static enum resp_step check_psn(struct tp_qp *qp, const struct rc_req *in)
{
	int32_t d = psn_diff(in->pkt->psn, qp->epsn);

	if (d < 0)
		return RESP_DUPLICATE;
	if (d > 0)
		return RESP_NAK_SEQUENCE;
	qp->nak_sent = 0;
	return RESP_CHECK_OPCODE_SEQUENCE;
}

/* IBA 9.7.5 (and 9.9.3.1, class C): a message's packets come first,
 * middle..., last, of one kind; a new message only after the last. */
static enum resp_step check_opcode_sequence(struct ibemu_tp *tp,
					    struct tp_qp *qp,
					    const struct rc_req *in)
{
	if (in->f & (OPF_RD_ATOMIC | OPF_FIRST)) {
		if (qp->in_msg)
			return RESP_NAK_INVALID_REQUEST;
	} else if (!qp->in_msg || (in->f & OPF_SEND) != is_send(qp->in_op)) {
		return RESP_NAK_INVALID_REQUEST;
	}
	/* XRC (Annex A14): the SRQ its XRCETH names must be one of the
	 * receive QP's domain; it takes the request (and its PD checks
	 * the keys). One that is not is an Invalid Request. */
	if (qp->type == IBEMU_QPT_XRC_RECV &&
	    ibemu__tp_xrc_target(tp, qp, in->m->xrc_srqn))
		return RESP_NAK_INVALID_REQUEST;
	return RESP_CHECK_RKEY;
}

/*
 * IBA 10.6.3 and 9.7.5.2.4: a READ, an atomic or the first packet of a
 * WRITE names a region its R_Key must grant; the rest of a WRITE lands in
 * the region its first packet was granted while it is still registered
 * (deregistration is a barrier, 10.6.3.5). An atomic's address must be
 * 8-byte aligned (an Invalid Request otherwise).
 */
static enum resp_step check_rkey(struct ibemu_tp *tp, struct tp_qp *qp,
				 struct rc_req *in)
{
	const struct tp_msg *m = in->m;

	if (in->f & OPF_SEND)
		return RESP_CHECK_RESOURCES;
	if (in->f & OPF_RD_ATOMIC) {
		in->mr = reth_check(tp, qp, m,
				    in->op == OP_READ_REQ
					    ? IBEMU_ACCESS_REMOTE_READ
					    : IBEMU_ACCESS_REMOTE_ATOMIC);
		if (!in->mr)
			return RESP_NAK_REMOTE_ACCESS;
		if (in->op != OP_READ_REQ && (m->remote_addr & 7))
			return RESP_NAK_INVALID_REQUEST;
		return RESP_CHECK_RESOURCES;
	}
	if (in->f & OPF_FIRST) {
		const struct tp_mr *mr =
			reth_check(tp, qp, m, IBEMU_ACCESS_REMOTE_WRITE);

		if (!mr)
			return RESP_NAK_REMOTE_ACCESS;
		qp->in_target = (struct ibemu_tp_mem){tp->ctx, mr->handle,
						      m->remote_addr};
		qp->in_target_len = m->len;
	} else if (!write_target_held(tp, qp, m)) {
		return RESP_NAK_REMOTE_ACCESS;
	}
	return RESP_CHECK_RESOURCES;
}

/*
 * IBA ch. 9 RC: at most max_dest_rd_atomic READs and atomics at once (an
 * Invalid Request beyond); a SEND takes a receive WQE as it begins, a
 * WRITE with immediate at its last packet, and without one the request
 * is answered by an RNR NAK (IBA 9.7.5.2.8).
 */
static enum resp_step check_resources(struct ibemu_tp *tp, struct tp_qp *qp,
				      const struct rc_req *in)
{
	uint8_t f = in->f;

	if (f & OPF_RD_ATOMIC) {
		if (qp->resp_n >= qp->attr.max_dest_rd_atomic)
			return RESP_NAK_INVALID_REQUEST;
		return RESP_EXECUTE;
	}
	if ((f & OPF_SEND) ? (f & OPF_FIRST) : (f & OPF_IMM)) {
		if (!qp->in_rwqe)
			qp->in_rwqe = ibemu__tp_rq_take(tp, qp);
		if (!qp->in_rwqe)
			return RESP_NAK_RNR;
	}
	return RESP_CHECK_LENGTH;
}

/* A SEND's bytes so far fit its receive WQE (IBA 10.7.3.2: a local
 * length error for the receive, an Invalid Request for the sender). */
static enum resp_step check_length(const struct tp_qp *qp, struct rc_req *in)
{
	in->len = (in->f & OPF_FIRST) ? 0 : qp->in_len;
	in->len += payload_of(qp, in->m, in->pkt->psn);
	if ((in->f & OPF_SEND) && in->len > qp->in_rwqe->cap)
		return RESP_ERR_LENGTH;
	return RESP_EXECUTE;
}

/* A READ or atomic response to queue for request 'm' (a reference). */
static struct tp_resp *resp_new(struct tp_msg *m, uint8_t kind, uint32_t psn)
{
	struct tp_resp *r = calloc(1, sizeof(*r));

	IBEMU_BUG_ON(!r);
	r->msg = m;
	m->inflight++;
	r->kind = kind;
	r->psn = psn;
	r->npkts = 1;
	return r;
}

/* A READ or atomic executed: a message done, 'npsn' PSNs taken; its
 * response leaves in PSN order, with an AETH naming the new MSN. */
static enum resp_step respond(struct ibemu_tp *tp, struct tp_qp *qp,
			      struct tp_resp *r, uint32_t npsn)
{
	qp->msn++;
	r->aeth = (uint32_t)AETH_ACK << 24 | (qp->msn & PSN_MASK);
	qp->resp_n++;
	resp_push(qp, r);
	qp->epsn = PSN_ADD(qp->epsn, npsn);
	ibemu_engine_kick(tp->e, qp->port);
	return RESP_DONE;
}

/* A READ: its responses take one PSN each, their bytes read as each
 * leaves (ibemu__tp_resp_pull). */
static enum resp_step execute_read(struct ibemu_tp *tp, struct tp_qp *qp,
				   const struct rc_req *in)
{
	struct tp_msg *m = in->m;
	struct tp_resp *r = resp_new(m, RESP_READ, in->pkt->psn);

	r->len = m->len;
	r->npkts = m->npsn;
	m->read_src =
		(struct ibemu_tp_mem){tp->ctx, in->mr->handle, m->remote_addr};
	resp_fetch(tp, qp, r);
	return respond(tp, qp, r, m->npsn);
}

/* An atomic, executed once; its result kept in the replay cache for a
 * duplicate of it (IBA 9.7.5.1.5.3). */
static enum resp_step execute_atomic(struct ibemu_tp *tp, struct tp_qp *qp,
				     const struct rc_req *in)
{
	struct tp_msg *m = in->m;
	struct ibemu_tp_mem at = {tp->ctx, in->mr->handle, m->remote_addr};
	struct tp_resp *r;
	uint64_t orig;

	if (tp->ops.atomic(tp->ctx, &at, m->opcode, m->compare_add, m->swap,
			   &orig))
		return RESP_NAK_REMOTE_OPERATIONAL;
	r = resp_new(m, RESP_ATOMIC, in->pkt->psn);
	r->orig = orig;
	resp_fetch(tp, qp, r);
	if (qp->replay_n) {
		struct tp_replay *c = &qp->replay[qp->replay_next];

		c->psn = in->pkt->psn;
		c->orig = orig;
		c->valid = 1;
		qp->replay_next = (qp->replay_next + 1) % qp->replay_n;
	}
	return respond(tp, qp, r, 1);
}

/* A packet of a SEND or WRITE taken: its PSN done, its bytes counted;
 * the message's data moves when its last packet is in. */
static enum resp_step execute(struct ibemu_tp *tp, struct tp_qp *qp,
			      const struct rc_req *in)
{
	if (in->op == OP_READ_REQ)
		return execute_read(tp, qp, in);
	if (in->f & OPF_RD_ATOMIC)
		return execute_atomic(tp, qp, in);
	if (in->f & OPF_FIRST)
		qp->in_op = in->op;
	qp->in_msg = !(in->f & OPF_LAST);
	qp->in_len = in->len;
	qp->epsn = PSN_ADD(qp->epsn, 1);
	return qp->in_msg ? RESP_ACKNOWLEDGE : RESP_COMPLETE;
}

/*
 * The last packet of a SEND or WRITE: the data is the responder's now and
 * lands, the receive it took completes (IBA 10.7.3.2). If the requester's
 * own region went (-EREMOTEIO: its WQE failed then, ibemu__tp_req_mr_gone),
 * the message never came, and its receive serves the next one.
 */
static enum resp_step complete(struct ibemu_tp *tp, struct tp_qp *qp,
			       const struct rc_req *in)
{
	const struct tp_msg *m = in->m;
	struct tp_rwqe *w = qp->in_rwqe;
	int st;

	if (in->f & OPF_SEND) {
		qp->in_rwqe = NULL;
		st = land_recv(tp, qp, m, w, 0, m->len);
		if (st == -EREMOTEIO) {
			qp->in_rwqe = w;
			return RESP_DONE;
		}
		recv_done(tp, qp, w, in->pkt, m, st, st ? 0 : m->len);
		if (st)
			return RESP_NAK_REMOTE_OPERATIONAL;
	} else {
		struct tp_seg t = {qp->in_target.mr, qp->in_target.addr,
				   (uint32_t)qp->in_target_len};

		st = m->len ? land(tp, m, &t, 1, m->len) : 0;
		if (st == -EREMOTEIO)
			return RESP_DONE;
		if (st)
			return RESP_NAK_REMOTE_ACCESS;
		if (in->f & OPF_IMM) {
			qp->in_rwqe = NULL;
			recv_done(tp, qp, w, in->pkt, m, IBEMU_WC_SUCCESS,
				  m->len);
		}
	}
	qp->msn++;
	return RESP_ACKNOWLEDGE;
}

/* IBA 9.7.4.1.5: the requester asked for an ACK (coalesced, queue_ack). */
static enum resp_step acknowledge(struct ibemu_tp *tp, struct tp_qp *qp,
				  const struct rc_req *in)
{
	if (in->pkt->ack_req)
		queue_ack(tp, qp, in->pkt->psn, AETH_ACK);
	return RESP_DONE;
}

/* A duplicate READ is executed again from the PSN asked for; duplicates
 * reuse the resources of the requests they repeat (IBA ch. 9 RC), and a
 * bounded number is queued. */
static void duplicate_read(struct ibemu_tp *tp, struct tp_qp *qp,
			   const struct rc_req *in)
{
	struct tp_msg *m = in->m;
	const struct tp_mr *mr =
		reth_check(tp, qp, m, IBEMU_ACCESS_REMOTE_READ);
	struct tp_resp *r;
	uint32_t k;

	if (!mr || qp->dup_n >= qp->attr.max_dest_rd_atomic)
		return;
	k = (uint32_t)psn_diff(in->pkt->psn, m->first_psn);
	if (k >= m->npsn)
		return;
	r = resp_new(m, RESP_READ, m->first_psn);
	m->read_src =
		(struct ibemu_tp_mem){tp->ctx, mr->handle, m->remote_addr};
	r->sent = k;
	r->len = m->len;
	r->npkts = m->npsn;
	r->aeth = (uint32_t)AETH_ACK << 24 | (qp->msn & PSN_MASK);
	r->dup = 1;
	qp->dup_n++;
	resp_fetch(tp, qp, r);
	resp_push(qp, r);
	ibemu_engine_kick(tp->e, qp->port);
}

/* A duplicate atomic is never executed twice: the replay cache answers
 * (IBA 9.7.5.1.5.3), or nothing if its entry is gone. */
static void duplicate_atomic(struct ibemu_tp *tp, struct tp_qp *qp,
			     const struct rc_req *in)
{
	struct tp_resp *r;
	uint32_t i;

	for (i = 0; i < qp->replay_n && qp->dup_n < qp->attr.max_dest_rd_atomic;
	     i++) {
		struct tp_replay *c = &qp->replay[i];

		if (!c->valid || c->psn != in->pkt->psn)
			continue;
		r = resp_new(in->m, RESP_ATOMIC, in->pkt->psn);
		r->orig = c->orig;
		r->aeth = (uint32_t)AETH_ACK << 24 | (qp->msn & PSN_MASK);
		qp->resp_n++;
		resp_push(qp, r);
		ibemu_engine_kick(tp->e, qp->port);
		return;
	}
}

/* A request the responder has executed already (IBA C9-105): answered
 * again, a SEND or WRITE by acknowledging what has arrived. */
static enum resp_step duplicate(struct ibemu_tp *tp, struct tp_qp *qp,
				const struct rc_req *in)
{
	if (in->op == OP_READ_REQ)
		duplicate_read(tp, qp, in);
	else if (in->op == OP_CMP_SWAP || in->op == OP_FETCH_ADD)
		duplicate_atomic(tp, qp, in);
	else
		queue_ack(tp, qp, PSN_ADD(qp->epsn, (uint32_t)-1), AETH_ACK);
	return RESP_DONE;
}

/* A SEND longer than its receive: the receive completes with a local
 * length error (IBA 10.7.3.2) before the NAK. */
static enum resp_step err_length(struct ibemu_tp *tp, struct tp_qp *qp,
				 const struct rc_req *in)
{
	struct tp_rwqe *w = qp->in_rwqe;

	qp->in_rwqe = NULL;
	recv_done(tp, qp, w, in->pkt, in->m, IBEMU_WC_LOC_LEN_ERR, 0);
	return RESP_NAK_INVALID_REQUEST;
}

/* IBA ch. 9 RC: one PSN sequence error NAK per gap, until the PSN the
 * responder expects comes. */
static enum resp_step nak_sequence(struct ibemu_tp *tp, struct tp_qp *qp)
{
	if (!qp->nak_sent) {
		qp->nak_sent = 1;
		queue_nak(tp, qp, NAK_PSN_SEQ);
	}
	return RESP_DONE;
}

/* IBA 9.7.5.2.8: no receive WQE; the request is to be sent again after
 * min_rnr_timer. Its PSN is not taken. */
static enum resp_step nak_rnr(struct ibemu_tp *tp, struct tp_qp *qp,
			      const struct rc_req *in)
{
	queue_ack(tp, qp, in->pkt->psn,
		  (uint8_t)(AETH_RNR | qp->attr.min_rnr_timer));
	return RESP_DONE;
}

/* A class C error (IBA 9.9.3.1): a NAK naming the request's PSN, the QP
 * to Error with 'event'. */
static enum resp_step nak_fatal(struct ibemu_tp *tp, struct tp_qp *qp,
				const struct rc_req *in, uint8_t code,
				int event)
{
	qp->epsn = in->pkt->psn;
	resp_fatal(tp, qp, code, event);
	return RESP_DONE;
}

static enum resp_step resp_run(struct ibemu_tp *tp, struct tp_qp *qp,
			       struct rc_req *in, enum resp_step s)
{
	switch (s) {
	case RESP_CHECK_PSN:
		return check_psn(qp, in);
	case RESP_CHECK_OPCODE_SEQUENCE:
		return check_opcode_sequence(tp, qp, in);
	case RESP_CHECK_RKEY:
		return check_rkey(tp, qp, in);
	case RESP_CHECK_RESOURCES:
		return check_resources(tp, qp, in);
	case RESP_CHECK_LENGTH:
		return check_length(qp, in);
	case RESP_EXECUTE:
		return execute(tp, qp, in);
	case RESP_COMPLETE:
		return complete(tp, qp, in);
	case RESP_ACKNOWLEDGE:
		return acknowledge(tp, qp, in);
	case RESP_DUPLICATE:
		return duplicate(tp, qp, in);
	case RESP_ERR_LENGTH:
		return err_length(tp, qp, in);
	case RESP_NAK_SEQUENCE:
		return nak_sequence(tp, qp);
	case RESP_NAK_RNR:
		return nak_rnr(tp, qp, in);
	case RESP_NAK_INVALID_REQUEST:
		return nak_fatal(tp, qp, in, NAK_INV_REQ,
				 IBEMU_EVENT_QP_REQ_ERR);
	case RESP_NAK_REMOTE_ACCESS:
		return nak_fatal(tp, qp, in, NAK_REM_ACCESS,
				 IBEMU_EVENT_QP_ACCESS_ERR);
	case RESP_NAK_REMOTE_OPERATIONAL:
		return nak_fatal(tp, qp, in, NAK_REM_OP, IBEMU_EVENT_QP_FATAL);
	case RESP_DONE:
		break;
	}
	return RESP_DONE;
}

static void rc_recv(struct ibemu_tp *tp, struct tp_qp *qp,
		    struct ibemu_pkt *pkt, struct tp_msg *m)
{
	uint8_t op = pkt->opcode & 0x1f;
	struct rc_req in = {pkt, m, NULL, 0, op, op_flags[op]};
	enum resp_step s = RESP_CHECK_PSN;

	while (s != RESP_DONE)
		s = resp_run(tp, qp, &in, s);
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
	uint8_t prefix = tp_prefix(qp);

	/* Only a QP ready to receive takes requests of its own type. */
	if (!m || (pkt->opcode & 0xe0) != prefix ||
	    (qp->state != IBEMU_QPS_RTR && qp->state != IBEMU_QPS_RTS &&
	     qp->state != IBEMU_QPS_SQD && qp->state != IBEMU_QPS_SQE))
		return;
	switch (qp->type) {
	case IBEMU_QPT_RC:
	case IBEMU_QPT_XRC_RECV:
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

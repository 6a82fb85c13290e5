// SPDX-License-Identifier: MIT
/*
 * The requester side of a QP (IBA 9.7.4 to 9.7.6): work requests become
 * packets at the path MTU with their PSNs, built only when the port pulls
 * one and the next hop has credit for it; acknowledgements complete them
 * in order; NAKs, RNR NAKs and the retransmission timer rewind to the PSN
 * to resend from (go-back-N). UC and UD requests complete as their last
 * packet leaves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_int.h"
#include "util.h"

/* IBA 9.7.5.2.8 Table 45: RNR NAK timer field to time, in microseconds
 * x 100 (0 is the longest, 655.36 ms). */
static const uint32_t rnr_us100[32] = {
	65536000, 1,	2,    3,     4,	    6,	   8,	  12,
	16,	  24,	32,   48,    64,    96,	   128,	  192,
	256,	  384,	512,  768,   1024,  1536,  2048,  3072,
	4096,	  6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

static uint64_t rnr_ps(unsigned t)
{
	return (uint64_t)rnr_us100[t & 31] * 10000000ull;
}

static uint64_t ack_timeout_ps(const struct tp_qp *qp)
{
	if (!qp->attr.timeout)
		return UINT64_MAX; /* IBA 9.7.6.1.3: 0 means infinite */
	return IBEMU_TP_ACK_TIMEOUT_UNIT_PS << qp->attr.timeout;
}

static int is_rd_atomic(const struct tp_msg *m)
{
	return m->opcode >= IBEMU_WR_RDMA_READ;
}

static unsigned mtu_of(const struct tp_qp *qp)
{
	return IBEMU_MTU_BYTES(qp->attr.path_mtu);
}

/* PSN of the last packet of 'm'. */
static uint32_t last_psn(const struct tp_msg *m)
{
	return PSN_ADD(m->first_psn, m->npsn - 1);
}

/* What the next packet of a message is, before it is built. */
struct pkt_desc {
	uint8_t opcode;
	uint8_t last;
	uint16_t hdr;
	uint32_t payload;
	uint32_t psn;
};

/* Opcode within the transport's group for packet 'k' of 'n'. */
static uint8_t seg_opcode(unsigned first, unsigned k, unsigned n, int imm)
{
	/* first, middle, last, last+imm, only, only+imm: in this order
	 * for SEND (0x00) and WRITE (0x06) alike. */
	if (n == 1)
		return (uint8_t)(first + 4 + (imm ? 1 : 0));
	if (k == 0)
		return (uint8_t)first;
	if (k + 1 < n)
		return (uint8_t)(first + 1);
	return (uint8_t)(first + 2 + (imm ? 1 : 0));
}

static void describe(const struct tp_qp *qp, const struct tp_msg *m,
		     struct pkt_desc *d)
{
	unsigned mtu = mtu_of(qp), k = m->sent, ext = 0;
	uint8_t op, prefix = tp_prefix(qp);
	int imm = m->opcode == IBEMU_WR_SEND_WITH_IMM ||
		  m->opcode == IBEMU_WR_RDMA_WRITE_WITH_IMM;

	d->psn = PSN_ADD(m->first_psn, k);
	d->payload = 0;
	d->last = 1;
	switch (m->opcode) {
	case IBEMU_WR_SEND:
	case IBEMU_WR_SEND_WITH_IMM:
	case IBEMU_WR_RDMA_WRITE:
	case IBEMU_WR_RDMA_WRITE_WITH_IMM:
		d->payload = m->len - k * mtu;
		if (d->payload > mtu)
			d->payload = mtu;
		d->last = k + 1 == m->npsn;
		op = seg_opcode(m->opcode <= IBEMU_WR_RDMA_WRITE_WITH_IMM
					? OP_WRITE_FIRST
					: OP_SEND_FIRST,
				k, m->npsn, imm);
		if (op == OP_WRITE_FIRST || op == OP_WRITE_ONLY ||
		    op == OP_WRITE_ONLY_IMM)
			ext += IBEMU_RETH_BYTES;
		if (op == OP_SEND_LAST_IMM || op == OP_SEND_ONLY_IMM ||
		    op == OP_WRITE_LAST_IMM || op == OP_WRITE_ONLY_IMM)
			ext += IBEMU_IMMDT_BYTES;
		if (qp->type == IBEMU_QPT_UD)
			ext += IBEMU_DETH_BYTES;
		/* IBA 8.3.1: a multicast packet carries a GRH (the MGID its
		 * DGID). */
		if (qp->type == IBEMU_QPT_UD &&
		    ibemu_lid_is_multicast(m->ah.dlid))
			ext += IBEMU_GRH_BYTES;
		break;
	case IBEMU_WR_RDMA_READ:
		/* A re-request asks only for what has not come back. */
		d->psn = PSN_ADD(m->first_psn, m->rd_got);
		op = OP_READ_REQ;
		ext = IBEMU_RETH_BYTES;
		break;
	default:
		op = m->opcode == IBEMU_WR_ATOMIC_CMP_AND_SWP ? OP_CMP_SWAP
							      : OP_FETCH_ADD;
		ext = IBEMU_ATOMICETH_BYTES;
		break;
	}
	/* Annex A14: every XRC request names its SRQ. */
	if (qp->type == IBEMU_QPT_XRC_SEND)
		ext += XRCETH_BYTES;
	d->opcode = prefix | op;
	d->hdr = (uint16_t)tp_hdr(ext);
}

/* Local checks of a WQE as it starts (IBA 10.7.3.1, 11.4.1.1): keys,
 * lengths; returns 0 or the completion status. */
static int start_check(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_msg *m)
{
	uint32_t access = is_rd_atomic(m) ? IBEMU_ACCESS_LOCAL_WRITE : 0;
	const struct tp_mr *mr;
	uint32_t i;

	if (m->status)
		return m->status;
	if (qp->type == IBEMU_QPT_UD && m->len > mtu_of(qp))
		return IBEMU_WC_LOC_LEN_ERR;
	if (m->opcode >= IBEMU_WR_ATOMIC_CMP_AND_SWP && m->len != 8)
		return IBEMU_WC_LOC_LEN_ERR;
	for (i = 0; i < m->nsge; i++) {
		const struct ibemu_tp_sge *s = &m->sge[i];

		if (!s->length)
			continue;
		mr = ibemu__tp_mr_check(tp, s->lkey, qp->pd, s->addr, s->length,
					access);
		if (!mr)
			return IBEMU_WC_LOC_PROT_ERR;
		m->seg[i].mr = mr->handle;
		m->seg[i].addr = s->addr;
		m->seg[i].len = s->length;
	}
	return 0;
}

/* A local error of the WQE at the head: RC QPs go to Error, UC and UD
 * to SQ Error (IBA 10.3.1), flushing what follows. */
static void local_error(struct ibemu_tp *tp, struct tp_qp *qp, int status)
{
	ibemu__tp_send_complete(tp, qp, qp->sq_head, status);
	if (ibemu_tp_type_rc(qp->type)) {
		ibemu__tp_qp_error(tp, qp, IBEMU_EVENT_QP_REQ_ERR);
		return;
	}
	qp->state = IBEMU_QPS_SQE;
	while (qp->sq_head)
		ibemu__tp_send_complete(tp, qp, qp->sq_head,
					IBEMU_WC_WR_FLUSH_ERR);
}

static void fatal(struct ibemu_tp *tp, struct tp_qp *qp, int status)
{
	ibemu__tp_send_complete(tp, qp, qp->sq_head, status);
	ibemu__tp_qp_error(tp, qp, 0);
}

/* Whether started WQE 'm' needs its own buffers no more. */
static int data_moved(const struct tp_msg *m)
{
	if (is_rd_atomic(m))
		return m->done;
	return m->sent >= m->npsn && !m->inflight;
}

void ibemu__tp_req_mr_gone(struct ibemu_tp *tp, struct tp_qp *qp,
			   uint64_t handle)
{
	struct tp_msg *m;
	uint32_t i;

	for (m = qp->sq_head; m && m->started; m = m->next) {
		if (m->status || m->is_inline || data_moved(m))
			continue;
		for (i = 0; i < m->nsge; i++)
			if (m->seg[i].len && m->seg[i].mr == handle)
				m->status = IBEMU_WC_LOC_PROT_ERR;
	}
	m = qp->sq_head;
	if (m && m->started && m->status)
		fatal(tp, qp, m->status);
}

uint64_t ibemu__tp_tx_ready(const struct ibemu_tp *tp, const struct tp_qp *qp,
			    const struct tp_msg *m)
{
	uint64_t floor = m->posted + IBEMU_TP_DOORBELL_PS, upto = 0, t;

	if (!tp->hm)
		return floor;
	if (!m->planned)
		return UINT64_MAX; /* ibemu__tp_plan() pulls once it is */
	if (!is_rd_atomic(m)) {
		upto = (uint64_t)(m->sent + 1) * mtu_of(qp);
		if (upto > m->len)
			upto = m->len;
	}
	t = ibemu_host_send_ready(tp->hm, &m->hsend, upto);
	/* Never before the doorbell delay: it is the lookahead of the time
	 * rule (docs/design.md section 3), which the presets respect. */
	return t > floor ? t : floor;
}

int ibemu__tp_req_ready(const struct ibemu_tp *tp, const struct tp_qp *qp)
{
	const struct tp_msg *m = qp->cur;
	uint64_t now = ibemu_engine_now(tp->e);

	if (!m || (qp->state != IBEMU_QPS_RTS && qp->state != IBEMU_QPS_SQD))
		return 0;
	if (qp->rnr_at > now || ibemu__tp_tx_ready(tp, qp, m) > now)
		return 0;
	if (m->started)
		return 1;
	/* SQD starts nothing new (IBA ch. 10, QP state SQD: drain). */
	if (qp->state == IBEMU_QPS_SQD)
		return 0;
	if (is_rd_atomic(m) && qp->rd_out >= qp->attr.max_rd_atomic)
		return 0; /* IBA ch. 9 RC: max_rd_atomic outstanding */
	if (m->fence && qp->rd_out)
		return 0; /* IBA 10.8.3.3: fence waits for READ/atomics */
	return 1;
}

static void arm_rto(struct ibemu_tp *tp, struct tp_qp *qp)
{
	uint64_t to = ack_timeout_ps(qp);

	if (to == UINT64_MAX) {
		qp->rto_at = UINT64_MAX;
		return;
	}
	qp->rto_at = ibemu_engine_now(tp->e) + to;
	ibemu__tp_timer_at(tp, qp, qp->rto_at);
}

/*
 * Whether 'm', the WQE to send from, may go on: a WQE starts when it is
 * the next to send (its local checks, then the PSNs it takes: one a
 * packet, one a READ response); an error completes in order, once the
 * WQE is the oldest. A WQE under way that one of its regions left
 * (ibemu__tp_req_mr_gone) fails so.
 */
static int start_wqe(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_msg *m)
{
	unsigned mtu = mtu_of(qp);
	int st;

	if (m->started) {
		if (m->status && m == qp->sq_head)
			fatal(tp, qp, m->status);
		return !m->status;
	}
	st = start_check(tp, qp, m);
	if (st) {
		if (m == qp->sq_head)
			local_error(tp, qp, st);
		return 0;
	}
	m->first_psn = qp->npsn;
	m->npsn = 1;
	if (m->opcode <= IBEMU_WR_RDMA_READ && m->len > mtu &&
	    qp->type != IBEMU_QPT_UD)
		m->npsn = (m->len + mtu - 1) / mtu;
	qp->npsn = PSN_ADD(qp->npsn, m->npsn);
	m->started = 1;
	m->sent = 0;
	if (is_rd_atomic(m))
		qp->rd_out++;
	return 1;
}

/* A packet of the size 'd' says, if the next hop has credit for it on
 * the WQE's SL (the port pulls again when it has). */
static struct ibemu_pkt *credited_pkt(struct ibemu_tp *tp,
				      const struct tp_msg *m,
				      const struct pkt_desc *d,
				      const uint16_t *credits, int *blocked)
{
	struct ibemu_pkt *pkt = ibemu_engine_pkt_alloc(tp->e);

	if (!pkt)
		return NULL;
	ibemu_pkt_set_size(pkt, d->hdr, d->payload);
	if (credits[m->ah.sl & 15] < pkt->blocks) {
		*blocked = 1;
		ibemu_engine_pkt_free(tp->e, pkt);
		return NULL;
	}
	return pkt;
}

/* The packet's headers: LRH, BTH (IBA 9.2) and what names the message. */
static void build(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_msg *m,
		  const struct pkt_desc *d, struct ibemu_pkt *pkt)
{
	pkt->t_created = ibemu_engine_now(tp->e);
	pkt->dlid = m->ah.dlid;
	pkt->sl = m->ah.sl;
	pkt->opcode = d->opcode;
	pkt->psn = d->psn;
	pkt->dqpn = m->remote_qpn;
	pkt->pkey = ibemu__tp_pkey(tp, qp);
	pkt->last = d->last;
	/* IBA 9.2.3: SE in the last packet of a SEND or a WRITE with
	 * immediate the requester asked to be solicited. */
	pkt->se = d->last && m->solicited &&
		  (m->opcode == IBEMU_WR_SEND ||
		   m->opcode == IBEMU_WR_SEND_WITH_IMM ||
		   m->opcode == IBEMU_WR_RDMA_WRITE_WITH_IMM);
	/* IBA 9.7.4.1.5: AckReq on the last packet of every request; the
	 * responder coalesces (transport_resp.c). */
	pkt->ack_req = d->last && ibemu_tp_type_rc(qp->type);
	pkt->cookie = (uint64_t)(uintptr_t)m;
}

/*
 * Takes UC or UD message 'm''s bytes from the requester's memory as its
 * last packet leaves: it completes then, and the program may reuse its
 * buffer at once (Open MPI's UD connection manager sends every message
 * from one buffer), while the bytes land only when the packet arrives.
 * They are kept as inline data are. 0, or the completion status.
 */
static int take_payload(struct ibemu_tp *tp, struct tp_msg *m)
{
	struct ibemu_tp_mem src;
	uint64_t off = 0, n;
	uint8_t *buf;
	uint32_t i;

	if (m->is_inline)
		return 0;
	buf = malloc(m->len ? m->len : 1);
	if (!buf)
		return IBEMU_WC_LOC_QP_OP_ERR;
	for (i = 0; i < m->nsge && off < m->len; i++) {
		n = m->seg[i].len < m->len - off ? m->seg[i].len : m->len - off;
		src = (struct ibemu_tp_mem){tp->ctx, m->seg[i].mr,
					    m->seg[i].addr};
		if (n && tp->ops.read(tp->ctx, &src, buf + off, n)) {
			free(buf);
			return IBEMU_WC_LOC_PROT_ERR;
		}
		off += n;
	}
	m->inline_buf = buf;
	m->is_inline = 1;
	return 0;
}

/* A packet of 'm' left: once its last has, the next WQE is sent from;
 * UC and UD complete it then, their bytes taken. RC waits for the
 * acknowledgement, under the Local ACK Timeout (IBA 9.7.6.1.3). */
static void sent(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_msg *m)
{
	int status;

	m->inflight++;
	if (m->opcode == IBEMU_WR_RDMA_READ)
		m->sent = m->npsn; /* one request for every response */
	else
		m->sent++;
	if (m->sent >= m->npsn) {
		qp->cur = m->next;
		if (!ibemu_tp_type_rc(qp->type)) {
			status = take_payload(tp, m);
			if (status) {
				/* Nothing lands: the responder drops it. */
				m->status = (uint8_t)status;
				local_error(tp, qp, status);
				return;
			}
			ibemu__tp_send_complete(tp, qp, m, IBEMU_WC_SUCCESS);
		}
	}
	if (ibemu_tp_type_rc(qp->type) && qp->rto_at == UINT64_MAX)
		arm_rto(tp, qp);
}

/* The requester's next packet (IBA 9.7.4.1): the WQE to send from, which
 * may have to start; its next packet described, credited, built, sent. */
struct ibemu_pkt *ibemu__tp_req_pull(struct ibemu_tp *tp, struct tp_qp *qp,
				     const uint16_t *credits, int *blocked)
{
	struct tp_msg *m;
	struct pkt_desc d;
	struct ibemu_pkt *pkt;

	/* A READ or atomic answered already is not sent again while it
	 * waits for the WQEs before it. */
	while (qp->cur && qp->cur->started && qp->cur->done)
		qp->cur = qp->cur->next;
	if (!ibemu__tp_req_ready(tp, qp))
		return NULL;
	m = qp->cur;
	if (!start_wqe(tp, qp, m))
		return NULL;
	describe(qp, m, &d);
	pkt = credited_pkt(tp, m, &d, credits, blocked);
	if (!pkt)
		return NULL;
	build(tp, qp, m, &d, pkt);
	sent(tp, qp, m);
	/* Its next packet's bytes may still be on their way from host
	 * memory: pull again when they are in. */
	if (tp->hm && qp->cur == m && m->sent < m->npsn) {
		uint64_t t = ibemu__tp_tx_ready(tp, qp, m);

		if (t > ibemu_engine_now(tp->e))
			ibemu_engine_timer(tp->e, qp->port, t,
					   (uint64_t)TIMER_KICK << 56 |
						   qp->qpn);
	}
	return pkt;
}

/* Sends again from 'm' on (go-back-N, IBA ch. 9 RC retry). */
static void rewind_to(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_msg *m)
{
	struct tp_msg *w;

	for (w = m; w && w->started; w = w->next)
		w->sent = 0;
	qp->cur = m;
	ibemu_engine_kick(tp->e, qp->port);
}

/*
 * Everything up to PSN 'psn' has been received by the responder: complete
 * the WQEs it covers, in order. A READ or atomic it covers whose response
 * has not come is a lost response: resend it (IBA 9.7.5.1.2, coalesced ACKs).
 */
static void ack_upto(struct ibemu_tp *tp, struct tp_qp *qp, uint32_t psn)
{
	struct tp_msg *m;
	int progress = 0;

	/* Acknowledgements are cumulative: one for a later PSN that came
	 * while an earlier READ waited for its data still counts. */
	if (psn_diff(psn, qp->acked) > 0)
		qp->acked = psn;
	psn = qp->acked;

	while ((m = qp->sq_head) && m->started) {
		if (m->status) {
			/* It failed while under way (its READ data, or a
			 * region it names went): it completes so, in order. */
			fatal(tp, qp, m->status);
			return;
		}
		if (psn_diff(psn, last_psn(m)) < 0)
			break;
		if (is_rd_atomic(m) && !m->done) {
			rewind_to(tp, qp, m);
			break;
		}
		ibemu__tp_send_complete(tp, qp, m, IBEMU_WC_SUCCESS);
		progress = 1;
	}
	if (progress) {
		/* IBA 9.7.6.1.2: progress restarts the retry counts. */
		qp->retry_left = qp->attr.retry_cnt;
		qp->rnr_left = qp->attr.rnr_retry;
		/* A READ or atomic done may let the next one start. */
		ibemu_engine_kick(tp->e, qp->port);
		if (qp->sq_head && qp->sq_head->started)
			arm_rto(tp, qp);
		else
			qp->rto_at = UINT64_MAX;
		ibemu__tp_req_timer(tp, qp);
	}
}

/* The WQE whose PSNs hold 'psn', or NULL. */
static struct tp_msg *msg_of_psn(struct tp_qp *qp, uint32_t psn)
{
	struct tp_msg *m;

	for (m = qp->sq_head; m && m->started; m = m->next)
		if (psn_diff(psn, m->first_psn) >= 0 &&
		    psn_diff(psn, last_psn(m)) <= 0)
			return m;
	return NULL;
}

/* The AETH syndrome's NAK codes (IBA ch. 9) to completion statuses. */
static int nak_status(unsigned code)
{
	switch (code) {
	case NAK_INV_REQ:
		return IBEMU_WC_REM_INV_REQ_ERR;
	case NAK_REM_ACCESS:
		return IBEMU_WC_REM_ACCESS_ERR;
	default:
		return IBEMU_WC_REM_OP_ERR;
	}
}

/* The data of a READ's last response is the requester's now: it moves
 * from the responder's memory into the WQE's scatter list. */
static int read_land(struct ibemu_tp *tp, struct tp_msg *m)
{
	struct ibemu_tp_mem src = m->read_src, dst;
	uint32_t i;
	int ret;

	for (i = 0; i < m->nsge; i++) {
		if (!m->seg[i].len)
			continue;
		dst.ctx = tp->ctx;
		dst.mr = m->seg[i].mr;
		dst.addr = m->seg[i].addr;
		ret = tp->ops.copy(tp->ctx, &dst, &src, m->seg[i].len);
		if (ret)
			return ret;
		src.addr += m->seg[i].len;
	}
	return 0;
}

/*
 * What the requester does with a response (IBA 9.7.6), one step a
 * function, as the completer of the kernel's soft RoCE (rxe_comp.c) is
 * laid out: a response outside the PSNs outstanding is dropped; READ
 * data and atomic results land in the WQE that asked for them; an ACK
 * completes the WQEs it covers; a NAK acknowledges what comes before it
 * and then says why the rest must be sent again (RNR, PSN sequence error)
 * or fails. Each step returns the next; ibemu__tp_req_recv runs them
 * until COMP_DONE.
 */
enum comp_step {
	COMP_CHECK_PSN,
	COMP_CHECK_OPCODE,
	COMP_READ_RESPONSE,
	COMP_ATOMIC_RESPONSE,
	COMP_CHECK_SYNDROME,
	COMP_ACKNOWLEDGED,
	COMP_DATA_FAILED,
	COMP_NAK,
	COMP_RNR_RETRY,
	COMP_SEQUENCE_RETRY,
	COMP_REMOTE_ERROR,
	COMP_DONE,
};

/* A response on its way through the steps. */
struct comp_resp {
	struct ibemu_pkt *pkt;
	struct tp_msg *m;  /* the request it answers (its cookie) */
	struct tp_msg *at; /* a NAK: the WQE its PSN falls in */
	uint8_t op;	   /* BTH OpCode without the transport bits */
	uint8_t syn;	   /* AETH Syndrome */
};

/* IBA 9.7.6: only an RC QP that sends takes responses, and only those
 * whose PSN an outstanding request holds (one before: an ACK of what
 * came before it); the rest are stale or duplicates. */
static enum comp_step check_psn(const struct tp_qp *qp,
				const struct comp_resp *in)
{
	const struct tp_msg *head = qp->sq_head;
	uint32_t psn = in->pkt->psn;

	if (!ibemu_tp_type_rc(qp->type) ||
	    (qp->state != IBEMU_QPS_RTS && qp->state != IBEMU_QPS_SQD))
		return COMP_DONE;
	if (!head || !head->started || psn_diff(psn, head->first_psn) < -1 ||
	    psn_diff(psn, qp->npsn) >= 0)
		return COMP_DONE;
	return COMP_CHECK_OPCODE;
}

/* IBA 9.2 Table 33: READ responses, an atomic's ACK, or an ACK/NAK. */
static enum comp_step check_opcode(const struct comp_resp *in)
{
	switch (in->op) {
	case OP_READ_RESP_FIRST:
	case OP_READ_RESP_MIDDLE:
	case OP_READ_RESP_LAST:
	case OP_READ_RESP_ONLY:
		return COMP_READ_RESPONSE;
	case OP_ATOMIC_ACK:
		return COMP_ATOMIC_RESPONSE;
	case OP_ACK:
		return COMP_CHECK_SYNDROME;
	default:
		return COMP_DONE;
	}
}

/*
 * READ responses are taken in order or not at all (a gap waits for the
 * timer); the last one's data lands. Each but a middle one carries an
 * AETH that acknowledges, a duplicate's too.
 */
static enum comp_step read_response(struct ibemu_tp *tp, struct tp_qp *qp,
				    const struct comp_resp *in)
{
	struct tp_msg *m = in->m;
	enum comp_step next =
		in->op == OP_READ_RESP_MIDDLE ? COMP_DONE : COMP_ACKNOWLEDGED;
	int ret;

	if (!m || m->qp != qp)
		return COMP_DONE;
	if (m->done)
		return next;
	if (in->pkt->psn != PSN_ADD(m->first_psn, m->rd_got))
		return COMP_DONE;
	m->rd_got++;
	if (in->op != OP_READ_RESP_LAST && in->op != OP_READ_RESP_ONLY)
		return next;
	ret = read_land(tp, m);
	m->done = 1;
	if (ret) {
		/* The responder's region went after the response left
		 * (deregistration is a barrier: its bytes are not read
		 * after), or ours. */
		m->status = ret == -EREMOTEIO ? IBEMU_WC_REM_ACCESS_ERR
					      : IBEMU_WC_LOC_PROT_ERR;
		return COMP_DATA_FAILED;
	}
	return next;
}

/* An atomic's ACK (AtomicAckETH): the value the responder found lands
 * in the WQE's buffer; a duplicate only acknowledges. */
static enum comp_step atomic_response(struct ibemu_tp *tp, struct tp_qp *qp,
				      const struct comp_resp *in)
{
	struct tp_msg *m = in->m;

	if (!m || m->qp != qp || in->pkt->psn != m->first_psn)
		return COMP_DONE;
	if (m->done)
		return COMP_ACKNOWLEDGED;
	m->done = 1;
	m->orig = in->pkt->flow;
	if (m->seg[0].len) {
		struct ibemu_tp_mem dst = {tp->ctx, m->seg[0].mr,
					   m->seg[0].addr};

		if (tp->ops.write(tp->ctx, &dst, &m->orig, 8)) {
			m->status = IBEMU_WC_LOC_PROT_ERR;
			return COMP_DATA_FAILED;
		}
	}
	return COMP_ACKNOWLEDGED;
}

/* IBA 9.3.5 Table 42: the AETH of an ACK says ACK, RNR NAK or NAK. */
static enum comp_step check_syndrome(const struct comp_resp *in)
{
	if ((in->syn & 0xe0) == AETH_ACK)
		return COMP_ACKNOWLEDGED;
	return COMP_NAK;
}

/* Acknowledgements are cumulative (IBA 9.7.5.1.2): everything up to the
 * response's PSN is done. */
static enum comp_step acknowledged(struct ibemu_tp *tp, struct tp_qp *qp,
				   const struct comp_resp *in)
{
	ack_upto(tp, qp, in->pkt->psn);
	return COMP_DONE;
}

/* The data of a READ or atomic could not land: what came before it
 * completes, then it fails with its status, in order. */
static enum comp_step data_failed(struct ibemu_tp *tp, struct tp_qp *qp,
				  const struct comp_resp *in)
{
	struct tp_msg *m = in->m;

	ack_upto(tp, qp, PSN_ADD(m->first_psn, (uint32_t)-1));
	if (qp->sq_head == m)
		fatal(tp, qp, m->status);
	return COMP_DONE;
}

/* A NAK (IBA 9.7.5.2): what comes before its PSN was received; the WQE
 * its PSN falls in is sent again or fails, by its code. */
static enum comp_step nak(struct ibemu_tp *tp, struct tp_qp *qp,
			  struct comp_resp *in)
{
	uint32_t psn = in->pkt->psn;

	ack_upto(tp, qp, PSN_ADD(psn, (uint32_t)-1));
	if (qp->state == IBEMU_QPS_ERR)
		return COMP_DONE;
	in->at = msg_of_psn(qp, psn);
	if (!in->at)
		return COMP_DONE;
	if ((in->syn & 0xe0) == AETH_RNR)
		return COMP_RNR_RETRY;
	if ((in->syn & 0x1f) == NAK_PSN_SEQ)
		return COMP_SEQUENCE_RETRY;
	return COMP_REMOTE_ERROR;
}

/* IBA 9.7.5.2.8: wait the responder's time, then send again from the
 * WQE NAKed, rnr_retry times (7: for ever). */
static enum comp_step rnr_retry(struct ibemu_tp *tp, struct tp_qp *qp,
				const struct comp_resp *in)
{
	if (qp->attr.rnr_retry != 7) {
		if (!qp->rnr_left) {
			if (in->at == qp->sq_head)
				fatal(tp, qp, IBEMU_WC_RNR_RETRY_EXC_ERR);
			return COMP_DONE;
		}
		qp->rnr_left--;
	}
	qp->rnr_at = ibemu_engine_now(tp->e) + rnr_ps(in->syn & 0x1f);
	ibemu__tp_timer_at(tp, qp, qp->rnr_at);
	rewind_to(tp, qp, in->at);
	arm_rto(tp, qp);
	return COMP_DONE;
}

/*
 * IBA ch. 9 RC (and as rxe does): a PSN sequence error counts against
 * the retry count as a timeout does; then the requester sends again from
 * the PSN the responder expects (a READ: from what has not come back).
 */
static enum comp_step sequence_retry(struct ibemu_tp *tp, struct tp_qp *qp,
				     const struct comp_resp *in)
{
	struct tp_msg *at = in->at, *m;

	if (!qp->retry_left) {
		if (at == qp->sq_head)
			fatal(tp, qp, IBEMU_WC_RETRY_EXC_ERR);
		return COMP_DONE;
	}
	qp->retry_left--;
	at->sent = (uint32_t)psn_diff(in->pkt->psn, at->first_psn);
	if (at->opcode == IBEMU_WR_RDMA_READ)
		at->sent = 0;
	for (m = at->next; m && m->started; m = m->next)
		m->sent = 0;
	qp->cur = at;
	ibemu_engine_kick(tp->e, qp->port);
	return COMP_DONE;
}

/* IBA 9.9.3.1: a remote error (Invalid Request, Remote Access, Remote
 * Operational) fails the WQE NAKed once it is the oldest. */
static enum comp_step remote_error(struct ibemu_tp *tp, struct tp_qp *qp,
				   const struct comp_resp *in)
{
	if (in->at == qp->sq_head)
		fatal(tp, qp, nak_status(in->syn & 0x1f));
	return COMP_DONE;
}

static enum comp_step comp_run(struct ibemu_tp *tp, struct tp_qp *qp,
			       struct comp_resp *in, enum comp_step s)
{
	switch (s) {
	case COMP_CHECK_PSN:
		return check_psn(qp, in);
	case COMP_CHECK_OPCODE:
		return check_opcode(in);
	case COMP_READ_RESPONSE:
		return read_response(tp, qp, in);
	case COMP_ATOMIC_RESPONSE:
		return atomic_response(tp, qp, in);
	case COMP_CHECK_SYNDROME:
		return check_syndrome(in);
	case COMP_ACKNOWLEDGED:
		return acknowledged(tp, qp, in);
	case COMP_DATA_FAILED:
		return data_failed(tp, qp, in);
	case COMP_NAK:
		return nak(tp, qp, in);
	case COMP_RNR_RETRY:
		return rnr_retry(tp, qp, in);
	case COMP_SEQUENCE_RETRY:
		return sequence_retry(tp, qp, in);
	case COMP_REMOTE_ERROR:
		return remote_error(tp, qp, in);
	case COMP_DONE:
		break;
	}
	return COMP_DONE;
}

void ibemu__tp_req_recv(struct ibemu_tp *tp, struct tp_qp *qp,
			struct ibemu_pkt *pkt)
{
	struct comp_resp in = {
		.pkt = pkt,
		.m = (struct tp_msg *)(uintptr_t)pkt->cookie,
		.op = pkt->opcode & 0x1f,
		.syn = AETH_SYN(pkt->aeth),
	};
	enum comp_step s = COMP_CHECK_PSN;

	while (s != COMP_DONE)
		s = comp_run(tp, qp, &in, s);
}

void ibemu__tp_req_timer(struct ibemu_tp *tp, struct tp_qp *qp)
{
	uint64_t now = ibemu_engine_now(tp->e), next = UINT64_MAX;

	if (qp->rnr_at && qp->rnr_at <= now) {
		qp->rnr_at = 0;
		ibemu_engine_kick(tp->e, qp->port);
	}
	if (qp->rto_at <= now) {
		qp->rto_at = UINT64_MAX;
		if (qp->sq_head && qp->sq_head->started &&
		    (qp->state == IBEMU_QPS_RTS ||
		     qp->state == IBEMU_QPS_SQD)) {
			/* IBA 9.7.6.1.3: the Local ACK Timeout expired. */
			if (qp->sq_head->status) {
				fatal(tp, qp, qp->sq_head->status);
				return;
			}
			if (!qp->retry_left) {
				fatal(tp, qp, IBEMU_WC_RETRY_EXC_ERR);
				return;
			}
			qp->retry_left--;
			rewind_to(tp, qp, qp->sq_head);
			arm_rto(tp, qp);
		}
	}
	if (qp->rnr_at && qp->rnr_at < next)
		next = qp->rnr_at;
	if (qp->rto_at < next)
		next = qp->rto_at;
	if (next != UINT64_MAX)
		ibemu__tp_timer_at(tp, qp, next);
	/* IBA 11.6.3.1: SQ Drained once nothing started is outstanding. */
	if (qp->state == IBEMU_QPS_SQD && !qp->sq_drained_sent &&
	    (!qp->sq_head || !qp->sq_head->started)) {
		qp->sq_drained_sent = 1;
		if (qp->sqd_notify)
			tp->ops.async(tp->ctx, IBEMU_EVENT_SQ_DRAINED, qp->qpn);
	}
}

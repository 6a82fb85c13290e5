// SPDX-License-Identifier: MIT
/*
 * Queue pairs: creation, the state machine of IBA 10.3.1 with the
 * attribute masks each transition requires and allows (the table of the
 * kernel's ib_modify_qp_is_ok(), for RC, UC and UD), posting work
 * requests, completions, and the error state that flushes every
 * outstanding work request (IBA 10.3.1.2, 11.4.2.1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_int.h"
#include "util.h"

#define M(x) IBEMU_QP_##x

/* Attributes a transition requires and allows, per type (RC, UC, UD). */
struct qp_trans {
	uint8_t valid;
	uint32_t req[3];
	uint32_t opt[3];
};

enum { T_RC, T_UC, T_UD };

#define RC_PATH_OPT (M(ALT_PATH) | M(ACCESS_FLAGS) | M(PATH_MIG_STATE))

static const struct qp_trans qp_table[7][7] = {
	[IBEMU_QPS_RESET] =
		{
			[IBEMU_QPS_RESET] = {.valid = 1},
			[IBEMU_QPS_ERR] = {.valid = 1},
			[IBEMU_QPS_INIT] =
				{
					.valid = 1,
					.req =
						{
							[T_RC] =
								M(PKEY_INDEX) |
								M(PORT) |
								M(ACCESS_FLAGS),
							[T_UC] =
								M(PKEY_INDEX) |
								M(PORT) |
								M(ACCESS_FLAGS),
							[T_UD] = M(PKEY_INDEX) |
								 M(PORT) |
								 M(QKEY),
						},
				},
		},
	[IBEMU_QPS_INIT] =
		{
			[IBEMU_QPS_RESET] = {.valid = 1},
			[IBEMU_QPS_ERR] = {.valid = 1},
			[IBEMU_QPS_INIT] =
				{
					.valid = 1,
					.opt =
						{
							[T_RC] =
								M(PKEY_INDEX) |
								M(PORT) |
								M(ACCESS_FLAGS),
							[T_UC] =
								M(PKEY_INDEX) |
								M(PORT) |
								M(ACCESS_FLAGS),
							[T_UD] = M(PKEY_INDEX) |
								 M(PORT) |
								 M(QKEY),
						},
				},
			[IBEMU_QPS_RTR] =
				{
					.valid = 1,
					.req =
						{
							[T_RC] =
								M(AV) |
								M(PATH_MTU) |
								M(DEST_QPN) |
								M(RQ_PSN) |
								M(MAX_DEST_RD_ATOMIC) |
								M(MIN_RNR_TIMER),
							[T_UC] = M(AV) |
								 M(PATH_MTU) |
								 M(DEST_QPN) |
								 M(RQ_PSN),
						},
					.opt =
						{
							[T_RC] =
								M(ALT_PATH) |
								M(ACCESS_FLAGS) |
								M(PKEY_INDEX),
							[T_UC] =
								M(ALT_PATH) |
								M(ACCESS_FLAGS) |
								M(PKEY_INDEX),
							[T_UD] = M(PKEY_INDEX) |
								 M(QKEY),
						},
				},
		},
	[IBEMU_QPS_RTR] =
		{
			[IBEMU_QPS_RESET] = {.valid = 1},
			[IBEMU_QPS_ERR] = {.valid = 1},
			[IBEMU_QPS_RTS] =
				{
					.valid = 1,
					.req =
						{
							[T_RC] =
								M(TIMEOUT) |
								M(RETRY_CNT) |
								M(RNR_RETRY) |
								M(SQ_PSN) |
								M(MAX_QP_RD_ATOMIC),
							[T_UC] = M(SQ_PSN),
							[T_UD] = M(SQ_PSN),
						},
					.opt =
						{
							[T_RC] =
								M(CUR_STATE) |
								RC_PATH_OPT |
								M(MIN_RNR_TIMER),
							[T_UC] = M(CUR_STATE) |
								 RC_PATH_OPT,
							[T_UD] = M(CUR_STATE) |
								 M(QKEY),
						},
				},
		},
	[IBEMU_QPS_RTS] =
		{
			[IBEMU_QPS_RESET] = {.valid = 1},
			[IBEMU_QPS_ERR] = {.valid = 1},
			[IBEMU_QPS_RTS] =
				{
					.valid = 1,
					.opt =
						{
							[T_RC] =
								M(CUR_STATE) |
								RC_PATH_OPT |
								M(MIN_RNR_TIMER),
							[T_UC] = M(CUR_STATE) |
								 RC_PATH_OPT,
							[T_UD] = M(CUR_STATE) |
								 M(QKEY),
						},
				},
			[IBEMU_QPS_SQD] =
				{
					.valid = 1,
					.opt =
						{
							[T_RC] = M(
								EN_SQD_ASYNC_NOTIFY),
							[T_UC] = M(
								EN_SQD_ASYNC_NOTIFY),
							[T_UD] = M(
								EN_SQD_ASYNC_NOTIFY),
						},
				},
		},
	[IBEMU_QPS_SQD] =
		{
			[IBEMU_QPS_RESET] = {.valid = 1},
			[IBEMU_QPS_ERR] = {.valid = 1},
			[IBEMU_QPS_RTS] =
				{
					.valid = 1,
					.opt =
						{
							[T_RC] =
								M(CUR_STATE) |
								RC_PATH_OPT |
								M(MIN_RNR_TIMER),
							[T_UC] = M(CUR_STATE) |
								 RC_PATH_OPT,
							[T_UD] = M(CUR_STATE) |
								 M(QKEY),
						},
				},
			[IBEMU_QPS_SQD] =
				{
					.valid = 1,
					.opt =
						{
							[T_RC] =
								M(PORT) |
								M(AV) |
								M(TIMEOUT) |
								M(RETRY_CNT) |
								M(RNR_RETRY) |
								M(
									MAX_QP_RD_ATOMIC) |
								M(MAX_DEST_RD_ATOMIC) | M(ALT_PATH) |
								M(ACCESS_FLAGS) |
								M(PKEY_INDEX) | M(MIN_RNR_TIMER) |
								M(PATH_MIG_STATE),
							[T_UC] =
								M(AV) | M(ALT_PATH) |
								M(ACCESS_FLAGS) |
								M(PKEY_INDEX) | M(PATH_MIG_STATE),
							[T_UD] =
								M(PKEY_INDEX) | M(QKEY),
						},
				},
		},
	[IBEMU_QPS_SQE] =
		{
			[IBEMU_QPS_RESET] = {.valid = 1},
			[IBEMU_QPS_ERR] = {.valid = 1},
			[IBEMU_QPS_RTS] =
				{
					.valid = 1,
					.opt =
						{
							[T_UC] = M(CUR_STATE) |
								 M(ACCESS_FLAGS),
							[T_UD] = M(CUR_STATE) |
								 M(QKEY),
						},
				},
		},
	[IBEMU_QPS_ERR] =
		{
			[IBEMU_QPS_RESET] = {.valid = 1},
			[IBEMU_QPS_ERR] = {.valid = 1},
		},
};

/*
 * The attributes an XRC side never takes, in any transition: the table
 * is RC's without them (ib_modify_qp_is_ok()). The send side has no
 * responder (MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER); the receive side sends
 * no requests (RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC).
 */
static uint32_t xrc_never(unsigned type)
{
	if (type == IBEMU_QPT_XRC_SEND)
		return M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER);
	if (type == IBEMU_QPT_XRC_RECV)
		return M(RETRY_CNT) | M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC);
	return 0;
}

/* Whether 'mask' takes a QP of 'type' from 'cur' to 'next'. */
static int modify_ok(unsigned cur, unsigned next, unsigned type, uint32_t mask)
{
	const struct qp_trans *t;
	unsigned ti = ibemu_tp_type_rc(type) ? T_RC : type - IBEMU_QPT_RC;
	uint32_t req, opt;

	if (cur > IBEMU_QPS_ERR || next > IBEMU_QPS_ERR)
		return 0;
	if ((mask & M(CUR_STATE)) && cur != IBEMU_QPS_RTR &&
	    cur != IBEMU_QPS_RTS && cur != IBEMU_QPS_SQD &&
	    cur != IBEMU_QPS_SQE)
		return 0;
	t = &qp_table[cur][next];
	if (!t->valid)
		return 0;
	/* SQE exists only for the unreliable types (IBA 10.3.1). */
	if (cur == IBEMU_QPS_SQE && ibemu_tp_type_rc(type))
		return 0;
	req = t->req[ti] & ~xrc_never(type);
	opt = t->opt[ti] & ~xrc_never(type);
	if ((mask & req) != req)
		return 0;
	return !(mask & ~(req | opt | M(STATE)));
}

/* Completions and queues. */

void ibemu__tp_send_complete(struct ibemu_tp *tp, struct tp_qp *qp,
			     struct tp_msg *m, int status)
{
	static const uint8_t wc_op[] = {
		[IBEMU_WR_RDMA_WRITE] = IBEMU_WC_RDMA_WRITE,
		[IBEMU_WR_RDMA_WRITE_WITH_IMM] = IBEMU_WC_RDMA_WRITE,
		[IBEMU_WR_SEND] = IBEMU_WC_SEND,
		[IBEMU_WR_SEND_WITH_IMM] = IBEMU_WC_SEND,
		[IBEMU_WR_RDMA_READ] = IBEMU_WC_RDMA_READ,
		[IBEMU_WR_ATOMIC_CMP_AND_SWP] = IBEMU_WC_COMP_SWAP,
		[IBEMU_WR_ATOMIC_FETCH_AND_ADD] = IBEMU_WC_FETCH_ADD,
	};

	IBEMU_BUG_ON(qp->sq_head != m);
	if (qp->plan_next == m) /* flushed before its plan */
		qp->plan_next = m->next;
	qp->sq_head = m->next;
	if (!qp->sq_head)
		qp->sq_tail = NULL;
	qp->sq_n--;
	if (qp->cur == m)
		qp->cur = m->next;
	if (m->started && (m->opcode == IBEMU_WR_RDMA_READ ||
			   m->opcode >= IBEMU_WR_ATOMIC_CMP_AND_SWP))
		qp->rd_out--;
	/* IBA 10.7.3.1: an unsignaled WR that fails still completes. */
	if (m->signaled || status != IBEMU_WC_SUCCESS) {
		struct ibemu_tp_cqe c = {
			.wr_id = m->wr_id,
			.status = (uint32_t)status,
			.opcode = wc_op[m->opcode],
			.qp_num = qp->qpn,
		};

		if (status == IBEMU_WC_SUCCESS &&
		    m->opcode != IBEMU_WR_RDMA_WRITE &&
		    m->opcode != IBEMU_WR_RDMA_WRITE_WITH_IMM &&
		    m->opcode != IBEMU_WR_SEND &&
		    m->opcode != IBEMU_WR_SEND_WITH_IMM)
			c.byte_len = m->len;
		ibemu__tp_cqe(tp, qp->scq, &c);
	}
	m->req_done = 1;
	m->qp = NULL;
	ibemu__tp_msg_put(tp->d, m);
}

void ibemu__tp_recv_complete(struct ibemu_tp *tp, struct tp_qp *qp,
			     struct tp_rwqe *w, const struct ibemu_tp_cqe *c)
{
	struct ibemu_tp_cqe out = *c;

	out.wr_id = w->wr_id;
	out.qp_num = qp->qpn;
	/* An XRC receive completes on its SRQ's CQ (Annex A14); an SRQ
	 * destroyed meanwhile took its CQ with it. */
	if (qp->type != IBEMU_QPT_XRC_RECV)
		ibemu__tp_cqe(tp, qp->rcq, &out);
	else if (qp->srq)
		ibemu__tp_cqe(tp, qp->srq->cq, &out);
	free(w);
}

static struct tp_rwqe *rq_pop(struct tp_rq *q)
{
	struct tp_rwqe *w = q->head;

	if (w) {
		q->head = w->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
	}
	return w;
}

struct tp_rwqe *ibemu__tp_rq_take(struct ibemu_tp *tp, struct tp_qp *qp)
{
	struct tp_srq *s = qp->srq;
	const struct tp_rq *q = s ? &s->rq : &qp->rq;
	struct tp_rwqe *w;

	/* A receive posted later in virtual time is not there yet. */
	if (q->head && q->head->ready_at > ibemu_engine_now(tp->e))
		return NULL;
	if (!s)
		return rq_pop(&qp->rq);
	w = rq_pop(&s->rq);
	/* IBA 10.2.9.2: below the limit the SRQ raises its event once. */
	if (w && s->limit && s->rq.n < s->limit) {
		s->limit = 0;
		tp->ops.async(tp->ctx, IBEMU_EVENT_SRQ_LIMIT_REACHED, s->id);
	}
	return w;
}

static void flush_recv(struct ibemu_tp *tp, struct tp_qp *qp)
{
	struct ibemu_tp_cqe c = {
		.status = IBEMU_WC_WR_FLUSH_ERR,
		.opcode = IBEMU_WC_RECV,
	};
	struct tp_rwqe *w;

	if (qp->in_rwqe) {
		w = qp->in_rwqe;
		qp->in_rwqe = NULL;
		ibemu__tp_recv_complete(tp, qp, w, &c);
	}
	while ((w = rq_pop(&qp->rq)))
		ibemu__tp_recv_complete(tp, qp, w, &c);
}

static void flush_send(struct ibemu_tp *tp, struct tp_qp *qp)
{
	while (qp->sq_head)
		ibemu__tp_send_complete(tp, qp, qp->sq_head,
					IBEMU_WC_WR_FLUSH_ERR);
}

void ibemu__tp_qp_error(struct ibemu_tp *tp, struct tp_qp *qp, int event)
{
	int was = qp->state;

	qp->state = IBEMU_QPS_ERR;
	ibemu__tp_resp_reset(tp, qp);
	flush_send(tp, qp);
	flush_recv(tp, qp);
	qp->rto_at = UINT64_MAX;
	qp->rnr_at = 0;
	if (event)
		tp->ops.async(tp->ctx, (enum ibemu_event_type)event, qp->qpn);
	/* IBA 11.6.3.1: a QP on an SRQ that enters Error has taken its
	 * last WQE from the SRQ. */
	if (qp->srq && qp->type != IBEMU_QPT_XRC_RECV && was != IBEMU_QPS_ERR)
		tp->ops.async(tp->ctx, IBEMU_EVENT_QP_LAST_WQE_REACHED,
			      qp->qpn);
}

/* Back to RESET: every WQE discarded without completion (IBA 10.3.1). */
static void qp_reset(struct ibemu_tp *tp, struct tp_qp *qp)
{
	struct tp_rwqe *w;
	struct tp_msg *m;

	ibemu__tp_resp_reset(tp, qp);
	while ((m = qp->sq_head)) {
		qp->sq_head = m->next;
		m->req_done = 1;
		m->qp = NULL;
		ibemu__tp_msg_put(tp->d, m);
	}
	qp->sq_tail = NULL;
	qp->sq_n = 0;
	qp->cur = NULL;
	qp->plan_next = NULL;
	qp->rd_out = 0;
	if (qp->in_rwqe) {
		free(qp->in_rwqe);
		qp->in_rwqe = NULL;
	}
	while ((w = rq_pop(&qp->rq)))
		free(w);
	qp->rto_at = UINT64_MAX;
	qp->rnr_at = 0;
	qp->state = IBEMU_QPS_RESET;
}

/* Creation and destruction. */

/*
 * What each type needs: a PD and both CQs (RC, UC, UD); a PD and a send
 * CQ (XRC send: no receive queue); an XRC domain and nothing else (XRC
 * receive: the SRQs it delivers into have their PD and CQ).
 */
static int qp_init_ok(struct ibemu_tp *tp, const struct ibemu_tp_qp_init *init)
{
	int pd = ibemu__tp_table_get(&tp->pds, init->pd) != NULL;
	int scq = ibemu__tp_table_get(&tp->cqs, init->send_cq) != NULL;
	int rcq = ibemu__tp_table_get(&tp->cqs, init->recv_cq) != NULL;
	int xrcd = ibemu__tp_table_get(&tp->xrcds, init->xrcd) != NULL;

	switch (init->qp_type) {
	case IBEMU_QPT_RC:
	case IBEMU_QPT_UC:
	case IBEMU_QPT_UD:
		return pd && scq && rcq && !init->xrcd;
	case IBEMU_QPT_XRC_SEND:
		return pd && scq && !init->recv_cq && !init->srq &&
		       !init->xrcd && !init->max_recv_wr;
	case IBEMU_QPT_XRC_RECV:
		return xrcd && !init->pd && !init->send_cq && !init->recv_cq &&
		       !init->srq && !init->max_send_wr && !init->max_recv_wr;
	}
	return 0;
}

/* The users a QP counts on its PD, CQs, SRQ or domain: +1 or -1. */
static void qp_use(struct ibemu_tp *tp, const struct tp_qp *qp, int d)
{
	struct tp_pd *pd = ibemu__tp_table_get(&tp->pds, qp->pd);
	struct tp_cq *scq = ibemu__tp_table_get(&tp->cqs, qp->scq);
	struct tp_cq *rcq = ibemu__tp_table_get(&tp->cqs, qp->rcq);
	struct tp_xrcd *x = ibemu__tp_table_get(&tp->xrcds, qp->xrcd);

	if (qp->type == IBEMU_QPT_XRC_RECV) {
		if (x)
			x->users += (uint32_t)d;
		return; /* its PD is its SRQ's of the moment */
	}
	if (pd)
		pd->users += (uint32_t)d;
	if (scq)
		scq->users += (uint32_t)d;
	if (rcq)
		rcq->users += (uint32_t)d;
	if (qp->srq)
		qp->srq->users += (uint32_t)d;
}

int ibemu_tp_qp_create(struct ibemu_tp *tp, const struct ibemu_tp_qp_init *init,
		       uint32_t *qpn)
{
	struct tp_srq *srq = NULL;
	struct tp_qp *qp;
	int ret;

	if (init->srq) {
		srq = ibemu__tp_table_get(&tp->srqs, init->srq);
		/* An XRC SRQ takes requests of XRC QPs only. */
		if (!srq || srq->xrcd)
			return -EINVAL;
	}
	/* A QP starts on port 1: none while a traffic study has it. */
	if (!ibemu__tp_port_free(tp, tp->first_port))
		return -EBUSY;
	if (!qp_init_ok(tp, init) || init->max_send_wr > IBEMU_TP_MAX_WR ||
	    init->max_recv_wr > IBEMU_TP_MAX_WR ||
	    init->max_send_sge > IBEMU_TP_MAX_SGE ||
	    init->max_recv_sge > IBEMU_TP_MAX_SGE ||
	    init->max_inline_data > IBEMU_TP_MAX_INLINE)
		return -EINVAL;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	ret = ibemu__tp_table_add(&tp->qps, 2, qp, qpn);
	if (ret || *qpn > PSN_MASK) {
		if (!ret)
			ibemu__tp_table_del(&tp->qps, *qpn);
		free(qp);
		return ret ? ret : -ENOMEM;
	}
	qp->qpn = *qpn;
	qp->type = init->qp_type;
	qp->state = IBEMU_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_all;
	qp->pd = init->pd;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;
	qp->srq = srq;
	qp->xrcd = init->xrcd;
	qp->opens = 1;
	qp->max_send_wr = init->max_send_wr;
	qp->max_send_sge = init->max_send_sge;
	qp->max_inline = init->max_inline_data;
	qp->uctx = init->uctx;
	qp->rq.max = init->max_recv_wr;
	qp->rq.max_sge = init->max_recv_sge;
	qp->port = tp->first_port;
	qp->rto_at = UINT64_MAX;
	qp->timer_at = UINT64_MAX;
	qp->attr.port_num = 1;
	qp->attr.path_mtu = 5;
	qp_use(tp, qp, 1);
	return 0;
}

int ibemu_tp_qp_destroy(struct ibemu_tp *tp, uint32_t qpn)
{
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);

	if (!qp)
		return -EINVAL;
	qp_use(tp, qp, -1);
	/* An XRC receive QP lives while a handle on it does. */
	if (qp->opens > 1) {
		qp->opens--;
		return 0;
	}
	qp_reset(tp, qp);
	ibemu__tp_mcast_qp_gone(tp, qpn);
	free(qp->replay);
	ibemu__tp_table_del(&tp->qps, qpn);
	free(qp);
	return 0;
}

/* The values of 'a' that 'mask' sets, checked. */
static int attr_check(const struct ibemu_tp *tp, const struct tp_qp *qp,
		      const struct ibemu_tp_qp_attr *a, uint32_t mask)
{
	if ((mask & M(PORT)) && (a->port_num < 1 || a->port_num > tp->nports))
		return 0;
	if ((mask & M(PKEY_INDEX)) && a->pkey_index >= 128)
		return 0;
	if ((mask & M(PATH_MTU)) && (a->path_mtu < 1 || a->path_mtu > 5))
		return 0;
	if ((mask & M(TIMEOUT)) && a->timeout > 31)
		return 0;
	if ((mask & M(RETRY_CNT)) && a->retry_cnt > 7)
		return 0;
	if ((mask & M(RNR_RETRY)) && a->rnr_retry > 7)
		return 0;
	if ((mask & M(MIN_RNR_TIMER)) && a->min_rnr_timer > 31)
		return 0;
	if ((mask & M(MAX_QP_RD_ATOMIC)) &&
	    a->max_rd_atomic > IBEMU_TP_MAX_RD_ATOMIC)
		return 0;
	if ((mask & M(MAX_DEST_RD_ATOMIC)) &&
	    a->max_dest_rd_atomic > IBEMU_TP_MAX_RD_ATOMIC)
		return 0;
	if ((mask & M(DEST_QPN)) && a->dest_qp_num > PSN_MASK)
		return 0;
	if ((mask & M(ACCESS_FLAGS)) && (a->qp_access_flags & ~0xfu))
		return 0;
	if ((mask & M(AV)) && (a->ah_attr.sl > 15 || !a->ah_attr.dlid))
		return 0;
	if ((mask & M(CUR_STATE)) && a->cur_qp_state != qp->state)
		return 0;
	return 1;
}

int ibemu_tp_qp_modify(struct ibemu_tp *tp, uint32_t qpn,
		       const struct ibemu_tp_qp_attr *a, uint32_t mask)
{
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);
	struct ibemu_tp_qp_attr *q;
	unsigned next;

	if (!qp)
		return -EINVAL;
	next = (mask & M(STATE)) ? a->qp_state : qp->state;
	if (!modify_ok(qp->state, next, qp->type, mask) ||
	    !attr_check(tp, qp, a, mask))
		return -EINVAL;
	if ((mask & M(PORT)) &&
	    !ibemu__tp_port_free(tp, tp->first_port + a->port_num - 1))
		return -EBUSY;
	q = &qp->attr;
	if (mask & M(PORT)) {
		q->port_num = a->port_num;
		qp->port = tp->first_port + a->port_num - 1;
	}
	if (mask & M(PKEY_INDEX))
		q->pkey_index = a->pkey_index;
	if (mask & M(QKEY))
		q->qkey = a->qkey;
	if (mask & M(ACCESS_FLAGS))
		q->qp_access_flags = a->qp_access_flags;
	if (mask & M(AV))
		q->ah_attr = a->ah_attr;
	if (mask & M(PATH_MTU))
		q->path_mtu = a->path_mtu;
	if (mask & M(DEST_QPN))
		q->dest_qp_num = a->dest_qp_num;
	if (mask & M(RQ_PSN))
		q->rq_psn = a->rq_psn & PSN_MASK;
	if (mask & M(SQ_PSN))
		q->sq_psn = a->sq_psn & PSN_MASK;
	if (mask & M(TIMEOUT))
		q->timeout = a->timeout;
	if (mask & M(RETRY_CNT))
		q->retry_cnt = a->retry_cnt;
	if (mask & M(RNR_RETRY))
		q->rnr_retry = a->rnr_retry;
	if (mask & M(MIN_RNR_TIMER))
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & M(MAX_QP_RD_ATOMIC))
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & M(EN_SQD_ASYNC_NOTIFY))
		qp->sqd_notify = a->en_sqd_async_notify;
	if (mask & M(MAX_DEST_RD_ATOMIC)) {
		struct tp_replay *r = NULL;

		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
		if (a->max_dest_rd_atomic) {
			r = calloc(a->max_dest_rd_atomic, sizeof(*r));
			if (!r)
				return -ENOMEM;
		}
		free(qp->replay);
		qp->replay = r;
		qp->replay_n = a->max_dest_rd_atomic;
		qp->replay_next = 0;
	}
	if (!(mask & M(STATE)))
		return 0;
	switch (next) {
	case IBEMU_QPS_RESET:
		qp_reset(tp, qp);
		break;
	case IBEMU_QPS_RTR:
		if (qp->state == IBEMU_QPS_INIT) {
			qp->epsn = q->rq_psn;
			qp->msn = 0;
		}
		qp->state = IBEMU_QPS_RTR;
		break;
	case IBEMU_QPS_RTS:
		if (qp->state == IBEMU_QPS_RTR) {
			qp->npsn = q->sq_psn;
			qp->acked = PSN_ADD(q->sq_psn, PSN_MASK);
			qp->retry_left = q->retry_cnt;
			qp->rnr_left = q->rnr_retry;
		}
		qp->state = IBEMU_QPS_RTS;
		qp->sq_drained_sent = 0;
		ibemu_engine_kick(tp->e, qp->port);
		break;
	case IBEMU_QPS_SQD:
		qp->state = IBEMU_QPS_SQD;
		qp->sq_drained_sent = 0;
		/* Drained at once if nothing is in flight. */
		ibemu__tp_req_timer(tp, qp);
		break;
	case IBEMU_QPS_ERR:
		if (qp->state != IBEMU_QPS_ERR)
			ibemu__tp_qp_error(tp, qp, 0);
		break;
	default:
		qp->state = (uint8_t)next;
		break;
	}
	return 0;
}

int ibemu_tp_qp_query(struct ibemu_tp *tp, uint32_t qpn,
		      struct ibemu_tp_qp_attr *out)
{
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);

	if (!qp)
		return -EINVAL;
	*out = qp->attr;
	out->qp_state = qp->state;
	out->cur_qp_state = qp->state;
	out->en_sqd_async_notify = qp->sqd_notify;
	out->sq_draining = qp->state == IBEMU_QPS_SQD && qp->sq_head &&
			   qp->sq_head->started;
	return 0;
}

/* Posting. */

static int wr_allowed(unsigned type, unsigned opcode)
{
	if (type == IBEMU_QPT_XRC_RECV)
		return 0; /* no send queue */
	switch (opcode) {
	case IBEMU_WR_SEND:
	case IBEMU_WR_SEND_WITH_IMM:
		return 1;
	case IBEMU_WR_RDMA_WRITE:
	case IBEMU_WR_RDMA_WRITE_WITH_IMM:
		return type != IBEMU_QPT_UD;
	case IBEMU_WR_RDMA_READ:
	case IBEMU_WR_ATOMIC_CMP_AND_SWP:
	case IBEMU_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBEMU_QPT_RC || type == IBEMU_QPT_XRC_SEND;
	}
	return 0;
}

int ibemu_tp_post_send(struct ibemu_tp *tp, uint32_t qpn,
		       const struct ibemu_tp_send_wr *wr)
{
	return ibemu_tp_post_send_at(tp, qpn, wr, ibemu_engine_now(tp->e));
}

int ibemu_tp_post_send_at(struct ibemu_tp *tp, uint32_t qpn,
			  const struct ibemu_tp_send_wr *wr, uint64_t at)
{
	uint64_t now = ibemu_engine_now(tp->e);
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);
	uint64_t len = 0;
	struct tp_msg *m;
	uint32_t i;
	int inl;

	if (!qp || qp->state < IBEMU_QPS_RTS ||
	    !wr_allowed(qp->type, wr->opcode) || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	inl = (wr->send_flags & IBEMU_SEND_INLINE) &&
	      wr->opcode <= IBEMU_WR_SEND_WITH_IMM;
	if (inl && (wr->inline_len > qp->max_inline ||
		    (wr->inline_len && !wr->inline_data)))
		return -EINVAL;
	if (qp->sq_n >= qp->max_send_wr)
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (inl) {
		m->inline_buf = malloc(wr->inline_len ? wr->inline_len : 1);
		if (!m->inline_buf)
			goto err_mem;
		memcpy(m->inline_buf, wr->inline_data, wr->inline_len);
		len = wr->inline_len;
	} else if (wr->num_sge) {
		m->sge = malloc(wr->num_sge * sizeof(*m->sge));
		m->seg = calloc(wr->num_sge, sizeof(*m->seg));
		if (!m->sge || !m->seg)
			goto err_mem;
		memcpy(m->sge, wr->sg_list, wr->num_sge * sizeof(*m->sge));
		m->nsge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
	}
	m->tp = tp;
	m->qp = qp;
	m->wr_id = wr->wr_id;
	/* At its stamp, unless that is so late that its doorbell delay
	 * would already be over: then now (the engine cannot go back). */
	m->posted = at + IBEMU_TP_DOORBELL_PS >= now ? at : now;
	m->opcode = wr->opcode;
	m->signaled = qp->sq_sig_all || (wr->send_flags & IBEMU_SEND_SIGNALED);
	m->fence = !!(wr->send_flags & IBEMU_SEND_FENCE);
	m->solicited = !!(wr->send_flags & IBEMU_SEND_SOLICITED);
	m->is_inline = (uint8_t)inl;
	/* Too long for a message: a local length error when it starts. */
	m->len = len > IBEMU_TP_MAX_MSG ? IBEMU_TP_MAX_MSG : (uint32_t)len;
	if (len > IBEMU_TP_MAX_MSG)
		m->status = IBEMU_WC_LOC_LEN_ERR;
	m->imm = wr->imm_data;
	m->src_qpn = qp->qpn;
	m->xrc_srqn = wr->xrc_srqn & PSN_MASK;
	switch (wr->opcode) {
	case IBEMU_WR_ATOMIC_CMP_AND_SWP:
	case IBEMU_WR_ATOMIC_FETCH_AND_ADD:
		m->remote_addr = wr->wr.atomic.remote_addr;
		m->rkey = wr->wr.atomic.rkey;
		m->compare_add = wr->wr.atomic.compare_add;
		m->swap = wr->wr.atomic.swap;
		break;
	case IBEMU_WR_RDMA_WRITE:
	case IBEMU_WR_RDMA_WRITE_WITH_IMM:
	case IBEMU_WR_RDMA_READ:
		m->remote_addr = wr->wr.rdma.remote_addr;
		m->rkey = wr->wr.rdma.rkey;
		break;
	default:
		break;
	}
	if (qp->type == IBEMU_QPT_UD) {
		m->ah = wr->wr.ud.ah;
		m->remote_qpn = wr->wr.ud.remote_qpn;
		/* IBA 10.2.5: a Q_Key with the high bit set means the
		 * QP's own. */
		m->qkey = (wr->wr.ud.remote_qkey & IBEMU_TP_QKEY_PRIVILEGED)
				  ? qp->attr.qkey
				  : wr->wr.ud.remote_qkey;
	} else {
		m->ah = qp->attr.ah_attr;
		m->remote_qpn = qp->attr.dest_qp_num;
	}
	/* Into the domain's list and the send queue. */
	m->dom_next = tp->d->msgs;
	if (m->dom_next)
		m->dom_next->dom_prev = m;
	tp->d->msgs = m;
	if (qp->sq_tail)
		qp->sq_tail->next = m;
	else
		qp->sq_head = m;
	qp->sq_tail = m;
	qp->sq_n++;
	if (!qp->cur)
		qp->cur = m;
	if (qp->state == IBEMU_QPS_ERR || qp->state == IBEMU_QPS_SQE) {
		/* IBA 10.8.3.3: work posted in Error completes flushed. */
		flush_send(tp, qp);
		return 0;
	}
	/* The host interface is planned once the doorbell delay is over
	 * (ibemu__tp_plan()); without one, the HCA sees the work then. */
	if (tp->hm) {
		if (!qp->plan_next)
			qp->plan_next = m;
		ibemu_engine_timer(tp->e, qp->port,
				   m->posted + IBEMU_TP_DOORBELL_PS,
				   (uint64_t)TIMER_PLAN << 56 | qp->qpn);
		return 0;
	}
	qp->ready_at = ibemu__tp_tx_ready(tp, qp, m);
	ibemu_engine_timer(tp->e, qp->port, qp->ready_at,
			   (uint64_t)TIMER_KICK << 56 | qp->qpn);
	return 0;

err_mem:
	free(m->inline_buf);
	free(m->sge);
	free(m->seg);
	free(m);
	return -ENOMEM;
}

/*
 * The host side of the QP's WQEs whose doorbell delay is over (doorbell,
 * WQE and payload fetch: host_model.h), in post order, and a pull when
 * each may leave. Planned at the engine's time, when the doorbell delay
 * (the time rule's lookahead) is over and before any of their DMA starts,
 * they take the PCIe link in the engine's order, as a responder's reads
 * do, which are planned as their requests arrive: planned when the daemon
 * took the post, their order against those reads was the wall clock's.
 * Buffers are taken as aligned (address 0): the times depend on nothing
 * else.
 */
void ibemu__tp_plan(struct ibemu_tp *tp, struct tp_qp *qp)
{
	uint64_t now = ibemu_engine_now(tp->e);
	struct tp_msg *m;

	while ((m = qp->plan_next) && m->posted + IBEMU_TP_DOORBELL_PS <= now) {
		ibemu_host_send_plan(
			tp->hm, &tp->hs, &qp->msg_free, m->posted, 0, m->len,
			m->is_inline,
			m->opcode != IBEMU_WR_RDMA_READ &&
				m->opcode != IBEMU_WR_ATOMIC_CMP_AND_SWP &&
				m->opcode != IBEMU_WR_ATOMIC_FETCH_AND_ADD,
			&m->hsend);
		m->planned = 1;
		qp->plan_next = m->next;
		qp->ready_at = ibemu__tp_tx_ready(tp, qp, m);
		ibemu_engine_timer(tp->e, qp->port, qp->ready_at,
				   (uint64_t)TIMER_KICK << 56 | qp->qpn);
	}
}

/* When a receive posted at 'at' is there for arriving packets. */
static uint64_t recv_ready(const struct ibemu_tp *tp, uint64_t at)
{
	uint64_t now = ibemu_engine_now(tp->e);

	if (at == IBEMU_TP_AT_ONCE)
		return 0;
	return at + IBEMU_TP_DOORBELL_PS >= now ? at + IBEMU_TP_DOORBELL_PS
						: now;
}

static int post_rq(struct ibemu_tp *tp, struct tp_qp *qp, struct tp_rq *q,
		   const struct ibemu_tp_recv_wr *wr, uint64_t at)
{
	uint64_t ready_at = recv_ready(tp, at);
	struct tp_rwqe *w;
	uint32_t i;

	if (wr->num_sge > q->max_sge)
		return -EINVAL;
	if (q->n >= q->max)
		return -ENOMEM;
	w = malloc(sizeof(*w) + wr->num_sge * sizeof(w->sge[0]));
	if (!w)
		return -ENOMEM;
	w->next = NULL;
	w->wr_id = wr->wr_id;
	w->nsge = wr->num_sge;
	w->cap = 0;
	/* Never before a receive posted earlier: the queue is in order. */
	w->ready_at = q->tail && q->tail->ready_at > ready_at
			      ? q->tail->ready_at
			      : ready_at;
	/* The host model's receive WQE fetch: read as soon as the HCA can
	 * see it (host_model.h), counted from the post's own time, not from
	 * how far the engine had run when the daemon took it; a post with no
	 * time (the time rule off) is taken as fetched. */
	w->in_hca = 0;
	if (tp->hm && at != IBEMU_TP_AT_ONCE)
		w->in_hca = ibemu_host_rwqe_fetch(
			tp->hm, at + IBEMU_TP_DOORBELL_PS, w->nsge);
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i] = wr->sg_list[i];
		w->cap += wr->sg_list[i].length;
	}
	if (q->tail)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
	q->n++;
	if (qp && qp->state == IBEMU_QPS_ERR)
		flush_recv(tp, qp);
	return 0;
}

int ibemu_tp_post_recv_at(struct ibemu_tp *tp, uint32_t qpn,
			  const struct ibemu_tp_recv_wr *wr, uint64_t at)
{
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);

	if (!qp || qp->srq || qp->state == IBEMU_QPS_RESET ||
	    qp->type == IBEMU_QPT_XRC_SEND || qp->type == IBEMU_QPT_XRC_RECV)
		return -EINVAL;
	return post_rq(tp, qp, &qp->rq, wr, at);
}

int ibemu_tp_post_recv(struct ibemu_tp *tp, uint32_t qpn,
		       const struct ibemu_tp_recv_wr *wr)
{
	return ibemu_tp_post_recv_at(tp, qpn, wr, IBEMU_TP_AT_ONCE);
}

int ibemu_tp_srq_post_recv_at(struct ibemu_tp *tp, uint32_t srq,
			      const struct ibemu_tp_recv_wr *wr, uint64_t at)
{
	struct tp_srq *s = ibemu__tp_table_get(&tp->srqs, srq);

	if (!s)
		return -EINVAL;
	return post_rq(tp, NULL, &s->rq, wr, at);
}

int ibemu_tp_srq_post_recv(struct ibemu_tp *tp, uint32_t srq,
			   const struct ibemu_tp_recv_wr *wr)
{
	return ibemu_tp_srq_post_recv_at(tp, srq, wr, IBEMU_TP_AT_ONCE);
}

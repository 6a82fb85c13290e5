// SPDX-License-Identifier: MIT
/*
 * Queue pairs and shared receive queues. Each lives in the transport of
 * the HCA in the daemon (created, modified and queried by calls on the
 * verbs stream); its work queues are rings in memory shared with the
 * daemon, so ibv_post_send() and ibv_post_recv() write work requests and
 * bump a producer index, and make a system call only to wake a daemon
 * that sleeps. What a provider checks before posting (queue full, too
 * many SGEs, inline data too long, an opcode the QP type lacks, a QP that
 * cannot send yet) is checked here; the daemon checks everything again.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_int.h"

static struct ibemu_verbs_context *ctx_of(struct ibv_context *c)
{
	return ibemu__verbs_ctx(c);
}

static int qp_caps_ok(const struct ibemu_verbs_limits *l,
		      const struct ibv_qp_cap *cap, int has_srq)
{
	return cap->max_send_wr <= l->max_qp_wr &&
	       cap->max_send_sge <= l->max_sge &&
	       cap->max_inline_data <= l->max_inline &&
	       (has_srq || (cap->max_recv_wr <= l->max_qp_wr &&
			    cap->max_recv_sge <= l->max_sge));
}

struct ibemu_verbs_qp *ibemu__verbs_qp_create(struct ibv_pd *pd,
					      struct ibv_qp_init_attr *attr)
{
	struct ibv_context *context = pd->context;
	struct ibemu_verbs_context *ctx = ctx_of(context);
	struct ibemu_verbs_qp_req r;
	struct ibemu_verbs_qp *qp;
	int fds[2] = {-1, -1}, ret;
	/* An XRC send QP has no receive side: its receive CQ, SRQ and
	 * receive capabilities are ignored, as the kernel ignores them. */
	int xrc = attr->qp_type == IBV_QPT_XRC_SEND;

	if (xrc) {
		attr->recv_cq = NULL;
		attr->srq = NULL;
		attr->cap.max_recv_wr = attr->cap.max_recv_sge = 0;
	} else if (attr->qp_type == IBV_QPT_XRC_RECV) {
		return ibemu__verbs_null(EINVAL); /* needs its domain: _ex */
	} else if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
		   attr->qp_type != IBV_QPT_UD) {
		return ibemu__verbs_null(EOPNOTSUPP);
	}
	if (!attr->send_cq || (!xrc && !attr->recv_cq) ||
	    attr->send_cq->context != context ||
	    (!xrc && attr->recv_cq->context != context) ||
	    (attr->srq && attr->srq->context != context) ||
	    !qp_caps_ok(ctx->dev->lim, &attr->cap, !!attr->srq))
		return ibemu__verbs_null(EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return ibemu__verbs_null(ENOMEM);
	memset(&r, 0, sizeof(r));
	r.qp_type = attr->qp_type;
	r.sq_sig_all = !!attr->sq_sig_all;
	r.pd = pd->handle;
	r.send_cq = attr->send_cq->handle;
	r.recv_cq = xrc ? 0 : attr->recv_cq->handle;
	r.srq = attr->srq ? attr->srq->handle : 0;
	r.max_send_wr = attr->cap.max_send_wr ? attr->cap.max_send_wr : 1;
	r.max_recv_wr = attr->srq ? 0 : attr->cap.max_recv_wr;
	r.max_send_sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
	r.max_recv_sge = attr->srq ? 0 : attr->cap.max_recv_sge;
	/* As providers do, the QP takes as much inline data as the HCA
	 * allows, whatever was asked (ibv_query_qp tells). */
	r.max_inline_data = ctx->dev->lim->max_inline;
	r.sq_entries = ibemu__verbs_pow2(r.max_send_wr);
	fds[0] = ibemu__verbs_ring_create(&qp->sq, r.sq_entries,
					  sizeof(struct ibemu_verbs_swqe));
	if (fds[0] < 0) {
		ret = -fds[0];
		goto err_free;
	}
	if (!attr->srq && !xrc) {
		r.rq_entries =
			ibemu__verbs_pow2(r.max_recv_wr ? r.max_recv_wr : 1);
		fds[1] = ibemu__verbs_ring_create(
			&qp->rq, r.rq_entries, sizeof(struct ibemu_verbs_rwqe));
		if (fds[1] < 0) {
			ret = -fds[1];
			goto err_sq;
		}
	}
	ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_QP_CREATE, &r, sizeof(r),
				fds, attr->srq || xrc ? 1 : 2);
	if (ret)
		goto err_rq;
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	qp->cap.max_send_wr = r.max_send_wr;
	qp->cap.max_recv_wr = r.max_recv_wr;
	qp->sq.cap = r.max_send_wr;
	qp->rq.cap = r.max_recv_wr;
	qp->cap.max_send_sge = r.max_send_sge;
	qp->cap.max_recv_sge = r.max_recv_sge;
	qp->cap.max_inline_data = r.max_inline_data;
	qp->sq_sig_all = attr->sq_sig_all;
	attr->cap = qp->cap;
	qp->qp.context = context;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.srq = attr->srq;
	qp->qp.handle = r.qpn;
	qp->qp.qp_num = r.qpn;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	pthread_mutex_init(&qp->sq_lock, NULL);
	pthread_mutex_init(&qp->rq_lock, NULL);
	pthread_mutex_lock(&context->mutex);
	qp->next = ctx->qps;
	ctx->qps = qp;
	pthread_mutex_unlock(&context->mutex);
	ibemu__verbs_pd_use(pd, 1);
	return qp;

err_rq:
	if (fds[1] >= 0) {
		close(fds[1]);
		ibemu__verbs_ring_destroy(&qp->rq);
	}
err_sq:
	close(fds[0]);
	ibemu__verbs_ring_destroy(&qp->sq);
err_free:
	free(qp);
	return ibemu__verbs_null(ret);
}

VERBS_EXPORT struct ibv_qp *ibemu__ibv_create_qp(struct ibv_pd *pd,
						 struct ibv_qp_init_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_create_qp, ibv_create_qp, "IBVERBS_1.1");
struct ibv_qp *ibemu__ibv_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr)
{
	struct ibemu_verbs_qp *qp = ibemu__verbs_qp_create(pd, attr);

	return qp ? &qp->qp : NULL;
}

VERBS_EXPORT int ibemu__ibv_query_qp(struct ibv_qp *qp,
				     struct ibv_qp_attr *attr, int attr_mask,
				     struct ibv_qp_init_attr *init_attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_qp, ibv_query_qp, "IBVERBS_1.1");
int ibemu__ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibemu_verbs_qp *q = (struct ibemu_verbs_qp *)qp;
	struct ibemu_verbs_qp_attr r = {.qpn = qp->qp_num};
	int ret;

	ret = ibemu__verbs_call(ctx_of(qp->context), IBEMU_SESS_VERBS_QP_QUERY,
				&r, sizeof(r), NULL, 0);
	if (ret)
		return ret;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)r.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)r.qp_state;
	attr->path_mtu = (enum ibv_mtu)r.path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qkey = r.qkey;
	attr->rq_psn = r.rq_psn;
	attr->sq_psn = r.sq_psn;
	attr->dest_qp_num = r.dest_qp_num;
	attr->qp_access_flags = r.qp_access_flags;
	attr->cap = q->cap;
	attr->ah_attr.dlid = r.dlid;
	attr->ah_attr.sl = r.sl;
	attr->ah_attr.src_path_bits = r.src_path_bits;
	attr->ah_attr.port_num = r.ah_port_num;
	attr->pkey_index = r.pkey_index;
	attr->en_sqd_async_notify = r.en_sqd_async_notify;
	attr->sq_draining = r.sq_draining;
	attr->max_rd_atomic = r.max_rd_atomic;
	attr->max_dest_rd_atomic = r.max_dest_rd_atomic;
	attr->min_rnr_timer = r.min_rnr_timer;
	attr->port_num = r.port_num;
	attr->timeout = r.timeout;
	attr->retry_cnt = r.retry_cnt;
	attr->rnr_retry = r.rnr_retry;
	qp->state = attr->qp_state;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = q->cap;
	init_attr->qp_type = qp->qp_type;
	init_attr->sq_sig_all = q->sq_sig_all;
	return 0;
}

/* What a modify costs: by the transition it makes (cost.h). */
static enum ibemu_verbs_cost modify_cost(const struct ibv_qp *qp,
					 const struct ibv_qp_attr *attr,
					 int attr_mask)
{
	if (!(attr_mask & IBV_QP_STATE))
		return IBEMU_VCOST_QP_MODIFY;
	if (attr->qp_state == IBV_QPS_INIT && qp->state == IBV_QPS_RESET)
		return IBEMU_VCOST_QP_TO_INIT;
	if (attr->qp_state == IBV_QPS_RTR && qp->state == IBV_QPS_INIT)
		return IBEMU_VCOST_QP_TO_RTR;
	if (attr->qp_state == IBV_QPS_RTS && qp->state == IBV_QPS_RTR)
		return IBEMU_VCOST_QP_TO_RTS;
	return IBEMU_VCOST_QP_MODIFY;
}

/* The attribute bits the daemon's transport knows. */
#define QP_MASK_KNOWN ((1 << 21) - 1)

VERBS_EXPORT int ibemu__ibv_modify_qp(struct ibv_qp *qp,
				      struct ibv_qp_attr *attr, int attr_mask);
VERBS_SYMVER_DEFAULT(ibemu__ibv_modify_qp, ibv_modify_qp, "IBVERBS_1.1");
int ibemu__ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask)
{
	struct ibemu_verbs_qp_attr r;
	int ret;

	if (attr_mask & ~QP_MASK_KNOWN)
		return EINVAL;
	memset(&r, 0, sizeof(r));
	r.qpn = qp->qp_num;
	r.mask = (uint32_t)attr_mask;
	r.qp_state = (uint8_t)attr->qp_state;
	r.cur_qp_state = (uint8_t)attr->cur_qp_state;
	r.path_mtu = (uint8_t)attr->path_mtu;
	r.en_sqd_async_notify = attr->en_sqd_async_notify;
	r.port_num = attr->port_num;
	r.timeout = attr->timeout;
	r.retry_cnt = attr->retry_cnt;
	r.rnr_retry = attr->rnr_retry;
	r.min_rnr_timer = attr->min_rnr_timer;
	r.max_rd_atomic = attr->max_rd_atomic;
	r.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	r.pkey_index = attr->pkey_index;
	r.qkey = attr->qkey;
	r.rq_psn = attr->rq_psn;
	r.sq_psn = attr->sq_psn;
	r.dest_qp_num = attr->dest_qp_num;
	r.qp_access_flags = attr->qp_access_flags;
	r.dlid = attr->ah_attr.dlid;
	r.sl = attr->ah_attr.sl;
	r.src_path_bits = attr->ah_attr.src_path_bits;
	r.ah_port_num = attr->ah_attr.port_num;
	ibemu__verbs_charge(ctx_of(qp->context),
			    modify_cost(qp, attr, attr_mask), 0);
	ret = ibemu__verbs_call(ctx_of(qp->context), IBEMU_SESS_VERBS_QP_MODIFY,
				&r, sizeof(r), NULL, 0);
	if (ret)
		return ret;
	if (attr_mask & IBV_QP_STATE) {
		struct ibemu_verbs_qp *q = (struct ibemu_verbs_qp *)qp;

		qp->state = attr->qp_state;
		if (attr->qp_state == IBV_QPS_RESET && q->sq.hdr) {
			/* The daemon emptied the queues. */
			q->sq.idx = q->sq.hdr->prod;
			if (q->rq.hdr)
				q->rq.idx = q->rq.hdr->prod;
		}
	}
	return 0;
}

VERBS_EXPORT int ibemu__ibv_destroy_qp(struct ibv_qp *qp);
VERBS_SYMVER_DEFAULT(ibemu__ibv_destroy_qp, ibv_destroy_qp, "IBVERBS_1.1");
int ibemu__ibv_destroy_qp(struct ibv_qp *qp)
{
	struct ibemu_verbs_qp *q = (struct ibemu_verbs_qp *)qp, **pp;
	struct ibemu_verbs_context *ctx = ctx_of(qp->context);
	struct ibemu_verbs_obj o = {.id = qp->qp_num};
	int ret;

	ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_QP_DESTROY, &o, sizeof(o),
				NULL, 0);
	if (ret)
		return ret;
	pthread_mutex_lock(&qp->context->mutex);
	for (pp = &ctx->qps; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	pthread_mutex_unlock(&qp->context->mutex);
	if (qp->pd) /* an XRC receive QP has none */
		ibemu__verbs_pd_use(qp->pd, -1);
	ibemu__verbs_ring_destroy(&q->sq);
	ibemu__verbs_ring_destroy(&q->rq);
	pthread_mutex_destroy(&q->sq_lock);
	pthread_mutex_destroy(&q->rq_lock);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	free(q->build);
	free(q);
	return 0;
}

/* --- posting -------------------------------------------------------- */

/*
 * Whether work queue 'r' holds as many requests as it was created for:
 * posted and not yet retired by the HCA (the daemon moves 'cons' at the
 * queue's completions). A provider refuses the post then (ENOMEM).
 */
int ibemu__verbs_ring_full(const struct ibemu_verbs_ring *r)
{
	return r->idx - __atomic_load_n(&r->hdr->cons, __ATOMIC_ACQUIRE) >=
	       r->cap;
}

void *ibemu__verbs_ring_slot(const struct ibemu_verbs_ring *r)
{
	return r->ents + (size_t)(r->idx & (r->size - 1)) * r->esz;
}

int ibemu__verbs_swqe_fill(struct ibemu_verbs_qp *q, struct ibemu_verbs_swqe *w,
			   const struct ibv_send_wr *wr)
{
	uint32_t i, len = 0;

	if ((unsigned)wr->num_sge > q->cap.max_send_sge || wr->num_sge < 0)
		return EINVAL;
	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		if (q->qp.qp_type == IBV_QPT_UD)
			return EINVAL;
		break;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (q->qp.qp_type != IBV_QPT_RC &&
		    q->qp.qp_type != IBV_QPT_XRC_SEND)
			return EINVAL;
		break;
	default:
		return EINVAL;
	}
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					  IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	w->imm_data = be32toh(wr->imm_data);
	w->inline_len = 0;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    wr->opcode != IBV_WR_RDMA_READ &&
	    wr->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) {
		/* The bytes are taken now, as the HCA copies them at post. */
		for (i = 0; i < (uint32_t)wr->num_sge; i++) {
			if (wr->sg_list[i].length >
			    q->cap.max_inline_data - len)
				return EINVAL;
			/* An empty SGE may name address 0 (UB for memcpy). */
			if (!wr->sg_list[i].length)
				continue;
			memcpy(w->data + len,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->inline_len = len;
		w->num_sge = 0;
	} else {
		w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
		for (i = 0; i < (uint32_t)wr->num_sge; i++) {
			w->sge[i].addr = wr->sg_list[i].addr;
			w->sge[i].length = wr->sg_list[i].length;
			w->sge[i].lkey = wr->sg_list[i].lkey;
		}
		w->num_sge = (uint32_t)wr->num_sge;
	}
	if (q->qp.qp_type == IBV_QPT_UD) {
		const struct ibemu_verbs_ah *ah =
			(const struct ibemu_verbs_ah *)wr->wr.ud.ah;

		if (!ah || ah->ah.context != q->qp.context)
			return EINVAL;
		w->dlid = ah->attr.dlid;
		w->sl = ah->attr.sl;
		w->src_path_bits = ah->attr.src_path_bits;
		w->port_num = ah->attr.port_num;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	} else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	/* XRC (IBA Annex A14): every request names the SRQ that takes it. */
	if (q->qp.qp_type == IBV_QPT_XRC_SEND)
		w->remote_qpn = wr->qp_type.xrc.remote_srqn;
	return 0;
}

/* The number of work requests in list 'wr'. */
static uint64_t send_list_len(const struct ibv_send_wr *wr)
{
	uint64_t n = 0;

	for (; wr; wr = wr->next)
		n++;
	return n;
}

static uint64_t recv_list_len(const struct ibv_recv_wr *wr)
{
	uint64_t n = 0;

	for (; wr; wr = wr->next)
		n++;
	return n;
}

int ibemu__verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	struct ibemu_verbs_qp *q = (struct ibemu_verbs_qp *)qp;
	int ret = 0, posted = 0;
	uint64_t stamp;

	ibemu__verbs_running(ctx_of(qp->context));
	/* The doorbell rings once the list is written: every WQE of it
	 * enters at the clock after the whole post's cost. */
	ibemu__verbs_charge(ctx_of(qp->context), IBEMU_VCOST_POST_SEND,
			    send_list_len(wr));
	stamp = ibemu__verbs_clock();
	if (ibemu__verbs_gone(ctx_of(qp->context))) {
		*bad_wr = wr;
		return EIO;
	}
	/* IBA 10.8.2: sends are posted to a QP in RTS or later; an XRC
	 * receive QP has no send queue. */
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR || !q->sq.hdr) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_mutex_lock(&q->sq_lock);
	for (; wr; wr = wr->next) {
		if (ibemu__verbs_ring_full(&q->sq)) {
			ret = ENOMEM;
			break;
		}
		ret = ibemu__verbs_swqe_fill(q, ibemu__verbs_ring_slot(&q->sq),
					     wr);
		if (ret)
			break;
		((struct ibemu_verbs_swqe *)ibemu__verbs_ring_slot(&q->sq))
			->stamp_ps = stamp;
		q->sq.idx++;
		__atomic_store_n(&q->sq.hdr->prod, q->sq.idx, __ATOMIC_RELEASE);
		posted = 1;
	}
	pthread_mutex_unlock(&q->sq_lock);
	if (ret)
		*bad_wr = wr;
	if (posted) {
		ibemu__verbs_posted(ctx_of(qp->context));
		ibemu__verbs_kick(ctx_of(qp->context));
	}
	return ret;
}

/* Posts receive list 'wr' to ring 'r' (lock held); 0 or an errno. */
static int rq_post(struct ibemu_verbs_ring *r, uint32_t max_sge,
		   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	uint64_t stamp = ibemu__verbs_clock();
	struct ibemu_verbs_rwqe *w;
	int i;

	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			*bad_wr = wr;
			return EINVAL;
		}
		if (ibemu__verbs_ring_full(r)) {
			*bad_wr = wr;
			return ENOMEM;
		}
		w = ibemu__verbs_ring_slot(r);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->stamp_ps = stamp;
		for (i = 0; i < wr->num_sge; i++) {
			w->sge[i].addr = wr->sg_list[i].addr;
			w->sge[i].length = wr->sg_list[i].length;
			w->sge[i].lkey = wr->sg_list[i].lkey;
		}
		r->idx++;
		__atomic_store_n(&r->hdr->prod, r->idx, __ATOMIC_RELEASE);
	}
	return 0;
}

int ibemu__verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct ibemu_verbs_qp *q = (struct ibemu_verbs_qp *)qp;
	uint32_t start;
	int ret;

	ibemu__verbs_running(ctx_of(qp->context));
	ibemu__verbs_charge(ctx_of(qp->context), IBEMU_VCOST_POST_RECV,
			    recv_list_len(wr));
	if (ibemu__verbs_gone(ctx_of(qp->context))) {
		*bad_wr = wr;
		return EIO;
	}
	if (qp->srq || !q->rq.hdr || qp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_mutex_lock(&q->rq_lock);
	start = q->rq.idx;
	ret = rq_post(&q->rq, q->cap.max_recv_sge, wr, bad_wr);
	if (q->rq.idx != start)
		ibemu__verbs_posted(ctx_of(qp->context));
	pthread_mutex_unlock(&q->rq_lock);
	/* No kick: a receive only matters to a packet, and the daemon takes
	 * every ring's work before its engine runs. */
	return ret;
}

int ibemu__verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	struct ibemu_verbs_srq *s = (struct ibemu_verbs_srq *)srq;
	uint32_t start;
	int ret;

	ibemu__verbs_running(ctx_of(srq->context));
	ibemu__verbs_charge(ctx_of(srq->context), IBEMU_VCOST_POST_RECV,
			    recv_list_len(wr));
	if (ibemu__verbs_gone(ctx_of(srq->context))) {
		*bad_wr = wr;
		return EIO;
	}
	pthread_mutex_lock(&s->lock);
	start = s->ring.idx;
	ret = rq_post(&s->ring, s->max_sge, wr, bad_wr);
	if (s->ring.idx != start)
		ibemu__verbs_posted(ctx_of(srq->context));
	pthread_mutex_unlock(&s->lock);
	return ret; /* no kick, as ibv_post_recv */
}

VERBS_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					    enum ibv_wr_opcode op,
					    uint32_t flags)
{
	return 0; /* no guarantee: the documented answer of a device
		     that gives none */
}

/* Enhanced Connection Establishment (RoCE vendor options): none. */
VERBS_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return EOPNOTSUPP;
}

/* --- shared receive queues ------------------------------------------ */

VERBS_EXPORT struct ibv_srq *
ibemu__ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_create_srq, ibv_create_srq, "IBVERBS_1.1");
struct ibv_srq *ibemu__ibv_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	return ibemu__verbs_srq_create(pd, attr, NULL, NULL);
}

struct ibv_srq *ibemu__verbs_srq_create(struct ibv_pd *pd,
					struct ibv_srq_init_attr *attr,
					struct ibemu_verbs_xrcd *xrcd,
					struct ibv_cq *cq)
{
	struct ibv_context *context = pd->context;
	struct ibemu_verbs_context *ctx = ctx_of(context);
	struct ibemu_verbs_xsrq_req r;
	struct ibemu_verbs_srq *s;
	int fd, ret;

	if (!attr->attr.max_wr ||
	    attr->attr.max_wr > ctx->dev->lim->max_srq_wr ||
	    attr->attr.max_sge > ctx->dev->lim->max_srq_sge ||
	    attr->attr.srq_limit > attr->attr.max_wr)
		return ibemu__verbs_null(EINVAL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ibemu__verbs_null(ENOMEM);
	memset(&r, 0, sizeof(r));
	r.srq.pd = pd->handle;
	r.srq.max_wr = attr->attr.max_wr;
	r.srq.max_sge = attr->attr.max_sge ? attr->attr.max_sge : 1;
	r.srq.srq_limit = attr->attr.srq_limit;
	r.srq.entries = ibemu__verbs_pow2(r.srq.max_wr);
	fd = ibemu__verbs_ring_create(&s->ring, r.srq.entries,
				      sizeof(struct ibemu_verbs_rwqe));
	if (fd < 0) {
		free(s);
		return ibemu__verbs_null(-fd);
	}
	if (xrcd) {
		r.xrcd = xrcd->handle;
		r.cq = cq->handle;
		ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_XSRQ_CREATE, &r,
					sizeof(r), &fd, 1);
	} else {
		ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_SRQ_CREATE,
					&r.srq, sizeof(r.srq), &fd, 1);
	}
	close(fd);
	if (ret) {
		ibemu__verbs_ring_destroy(&s->ring);
		free(s);
		return ibemu__verbs_null(ret);
	}
	s->max_wr = r.srq.max_wr;
	s->max_sge = r.srq.max_sge;
	s->ring.cap = r.srq.max_wr;
	attr->attr.max_wr = r.srq.max_wr;
	attr->attr.max_sge = r.srq.max_sge;
	s->srq.context = context;
	s->srq.srq_context = attr->srq_context;
	s->srq.pd = pd;
	s->srq.handle = r.srq.id;
	s->xrcd = xrcd;
	s->cq = cq;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_lock(&context->mutex);
	s->next = ctx->srqs;
	ctx->srqs = s;
	pthread_mutex_unlock(&context->mutex);
	ibemu__verbs_pd_use(pd, 1);
	return &s->srq;
}

VERBS_EXPORT int ibemu__ibv_modify_srq(struct ibv_srq *srq,
				       struct ibv_srq_attr *attr,
				       int attr_mask);
VERBS_SYMVER_DEFAULT(ibemu__ibv_modify_srq, ibv_modify_srq, "IBVERBS_1.1");
int ibemu__ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask)
{
	struct ibemu_verbs_obj o = {.id = srq->handle};

	/* Resizing (IBV_SRQ_MAX_WR) is not supported, as on many HCAs. */
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EINVAL;
	if (!(attr_mask & IBV_SRQ_LIMIT))
		return 0;
	o.arg = attr->srq_limit;
	return ibemu__verbs_call(ctx_of(srq->context),
				 IBEMU_SESS_VERBS_SRQ_MODIFY, &o, sizeof(o),
				 NULL, 0);
}

VERBS_EXPORT int ibemu__ibv_query_srq(struct ibv_srq *srq,
				      struct ibv_srq_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_srq, ibv_query_srq, "IBVERBS_1.1");
int ibemu__ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibemu_verbs_srq_req r = {.id = srq->handle};
	int ret;

	ret = ibemu__verbs_call(ctx_of(srq->context),
				IBEMU_SESS_VERBS_SRQ_QUERY, &r, sizeof(r), NULL,
				0);
	if (ret)
		return ret;
	attr->max_wr = r.max_wr;
	attr->max_sge = r.max_sge;
	attr->srq_limit = r.srq_limit;
	return 0;
}

VERBS_EXPORT int ibemu__ibv_destroy_srq(struct ibv_srq *srq);
VERBS_SYMVER_DEFAULT(ibemu__ibv_destroy_srq, ibv_destroy_srq, "IBVERBS_1.1");
int ibemu__ibv_destroy_srq(struct ibv_srq *srq)
{
	struct ibemu_verbs_srq *s = (struct ibemu_verbs_srq *)srq, **pp;
	struct ibemu_verbs_context *ctx = ctx_of(srq->context);
	struct ibemu_verbs_obj o = {.id = srq->handle};
	int ret;

	ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_SRQ_DESTROY, &o,
				sizeof(o), NULL, 0);
	if (ret)
		return ret;
	pthread_mutex_lock(&srq->context->mutex);
	for (pp = &ctx->srqs; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&srq->context->mutex);
	ibemu__verbs_pd_use(srq->pd, -1);
	ibemu__verbs_ring_destroy(&s->ring);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	free(s);
	return 0;
}

VERBS_EXPORT int ibemu__ibv_attach_mcast(struct ibv_qp *qp,
					 const union ibv_gid *gid,
					 uint16_t lid);
VERBS_SYMVER_DEFAULT(ibemu__ibv_attach_mcast, ibv_attach_mcast, "IBVERBS_1.1");
/*
 * ibv_attach_mcast / ibv_detach_mcast: a call on the stream; the daemon
 * checks them as the kernel's ib_attach_mcast() does (a UD QP, a multicast
 * GID and LID: EINVAL otherwise) and the limits ibv_query_device reports
 * (ENOMEM). Positive errno, as rdma-core's.
 */
static int mcast_call(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid,
		      uint16_t type)
{
	struct ibemu_verbs_mcast r = {.qpn = qp->qp_num, .lid = lid};

	if (!gid)
		return EINVAL;
	memcpy(r.gid, gid->raw, sizeof(r.gid));
	return ibemu__verbs_call(ctx_of(qp->context), type, &r, sizeof(r), NULL,
				 0);
}

int ibemu__ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid)
{
	return mcast_call(qp, gid, lid, IBEMU_SESS_VERBS_MCAST_ATTACH);
}

VERBS_EXPORT int ibemu__ibv_detach_mcast(struct ibv_qp *qp,
					 const union ibv_gid *gid,
					 uint16_t lid);
VERBS_SYMVER_DEFAULT(ibemu__ibv_detach_mcast, ibv_detach_mcast, "IBVERBS_1.1");
int ibemu__ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid)
{
	return mcast_call(qp, gid, lid, IBEMU_SESS_VERBS_MCAST_DETACH);
}

/* Device memory (ibv_alloc_dm) does not exist, so none can be imported. */
VERBS_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					  uint32_t dm_handle)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
}

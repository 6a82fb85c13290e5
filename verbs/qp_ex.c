// SPDX-License-Identifier: MIT
/*
 * Extended QPs: ibv_create_qp_ex() and the work request builders of
 * struct ibv_qp_ex (ibv_wr_post(3): ibv_wr_start, ibv_wr_send,
 * ibv_wr_set_sge, ..., ibv_wr_complete). A request is built in a staging
 * area and written into the send ring with the same checks as
 * ibv_post_send() when the next one starts; ibv_wr_complete() publishes
 * them all at once, stamped with the process's clock, or, if any failed,
 * none of them (its errno), and ibv_wr_abort() drops them. The send queue
 * stays locked from ibv_wr_start() to the end, as mlx5's does.
 */
#include <stdlib.h>
#include <string.h>

#include "verbs_int.h"

/* The builders ibemu has (ibv_create_qp_ex(3)'s send_ops_flags). */
#define QP_EX_SEND_OPS                                              \
	((uint64_t)IBV_QP_EX_WITH_RDMA_WRITE |                      \
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND | \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |  \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                        \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct ibemu_verbs_qp *qp_of(struct ibv_qp_ex *qpx)
{
	return (struct ibemu_verbs_qp *)qpx;
}

/* Writes the request under construction into the ring, if there is one. */
static void flush(struct ibemu_verbs_qp *q)
{
	struct ibemu_verbs_wr_build *b = q->build;
	int ret;

	if (!b->open)
		return;
	b->open = 0;
	if (b->err)
		return;
	if (ibemu__verbs_ring_full(&q->sq)) {
		b->err = ENOMEM;
		return;
	}
	ret = ibemu__verbs_swqe_fill(q, ibemu__verbs_ring_slot(&q->sq), &b->wr);
	if (ret) {
		b->err = ret;
		return;
	}
	q->sq.idx++;
}

/* Starts request 'opcode' with the wr_id and flags the program set. */
static struct ibv_send_wr *begin(struct ibv_qp_ex *qpx,
				 enum ibv_wr_opcode opcode)
{
	struct ibemu_verbs_qp *q = qp_of(qpx);
	struct ibemu_verbs_wr_build *b = q->build;

	flush(q);
	memset(&b->wr, 0, sizeof(b->wr));
	b->wr.wr_id = qpx->wr_id;
	b->wr.send_flags = qpx->wr_flags;
	b->wr.opcode = opcode;
	b->wr.sg_list = b->sge;
	b->open = 1;
	return &b->wr;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	begin(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	begin(qpx, IBV_WR_SEND_WITH_IMM)->imm_data = imm_data;
}

static void rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
		 uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct ibv_send_wr *wr = begin(qpx, opcode);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
	wr->imm_data = imm_data;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr)
{
	rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			 uint64_t remote_addr)
{
	rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
		   uint32_t rkey, uint64_t remote_addr, uint64_t compare_add,
		   uint64_t swap)
{
	struct ibv_send_wr *wr = begin(qpx, opcode);

	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = remote_addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
	       swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

/* The setters apply to the request begun last; without one, EINVAL. */
static struct ibemu_verbs_wr_build *current(struct ibv_qp_ex *qpx)
{
	struct ibemu_verbs_wr_build *b = qp_of(qpx)->build;

	if (!b->open && !b->err)
		b->err = EINVAL;
	return b->open ? b : NULL;
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibemu_verbs_wr_build *b = current(qpx);

	if (!b)
		return;
	b->wr.wr.ud.ah = ah;
	b->wr.wr.ud.remote_qpn = remote_qpn;
	b->wr.wr.ud.remote_qkey = remote_qkey;
}

/* XRC send QPs: the SRQ the request under construction names. */
static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct ibemu_verbs_wr_build *b = current(qpx);

	if (b)
		b->wr.qp_type.xrc.remote_srqn = remote_srqn;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct ibemu_verbs_wr_build *b = current(qpx);

	if (!b)
		return;
	if (num_sge > IBEMU_VERBS_MAX_SGE) {
		b->err = b->err ? b->err : EINVAL;
		return;
	}
	memcpy(b->sge, sg_list, num_sge * sizeof(*sg_list));
	b->wr.num_sge = (int)num_sge;
	b->wr.send_flags &= ~(unsigned)IBV_SEND_INLINE;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = {.addr = addr, .length = length, .lkey = lkey};

	wr_set_sge_list(qpx, 1, &sge);
}

/* The bytes are copied now: the program may reuse its buffers at once. */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct ibemu_verbs_wr_build *b = current(qpx);
	size_t i, len = 0;

	if (!b)
		return;
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > sizeof(b->inline_data) - len) {
			b->err = b->err ? b->err : EINVAL;
			return;
		}
		if (buf_list[i].length) /* an empty one may be NULL */
			memcpy(b->inline_data + len, buf_list[i].addr,
			       buf_list[i].length);
		len += buf_list[i].length;
	}
	b->sge[0].addr = (uintptr_t)b->inline_data;
	b->sge[0].length = (uint32_t)len;
	b->sge[0].lkey = 0;
	b->wr.num_sge = 1;
	b->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = {.addr = addr, .length = length};

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct ibemu_verbs_qp *q = qp_of(qpx);

	pthread_mutex_lock(&q->sq_lock);
	q->build->start = q->sq.idx;
	q->build->open = 0;
	q->build->err = 0;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct ibemu_verbs_qp *q = qp_of(qpx);

	q->sq.idx = q->build->start;
	q->build->open = 0;
	pthread_mutex_unlock(&q->sq_lock);
}

/* IBA 10.8.2 as in ibv_post_send(): sends go to a QP in RTS or later. */
static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct ibemu_verbs_qp *q = qp_of(qpx);
	struct ibemu_verbs_wr_build *b = q->build;
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(q->qp.context);
	uint64_t stamp;
	uint32_t i;
	int err;

	ibemu__verbs_running(ctx);
	flush(q);
	ibemu__verbs_charge(ctx, IBEMU_VCOST_POST_SEND, q->sq.idx - b->start);
	stamp = ibemu__verbs_clock();
	err = b->err;
	if (!err && ibemu__verbs_gone(ctx))
		err = EIO;
	if (!err && (q->qp.state == IBV_QPS_RESET ||
		     q->qp.state == IBV_QPS_INIT || q->qp.state == IBV_QPS_RTR))
		err = EINVAL;
	if (err) {
		wr_abort(qpx);
		return err;
	}
	for (i = b->start; i != q->sq.idx; i++)
		((struct ibemu_verbs_swqe *)(q->sq.ents +
					     (size_t)(i & (q->sq.size - 1)) *
						     q->sq.esz))
			->stamp_ps = stamp;
	__atomic_store_n(&q->sq.hdr->prod, q->sq.idx, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&q->sq_lock);
	if (q->sq.idx != b->start) {
		ibemu__verbs_posted(ctx);
		ibemu__verbs_kick(ctx);
	}
	return 0;
}

static void set_builders(struct ibv_qp_ex *qpx)
{
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
}

/*
 * The create_qp_ex op (ibv_create_qp_ex() calls ibv_create_qp() itself
 * when only a PD is given). An XRC receive QP takes its domain instead
 * (xrc.c). RSS and TSO QPs and creation flags are EOPNOTSUPP, as are
 * builders ibemu lacks (memory windows, invalidation, TSO, atomic write).
 */
struct ibv_qp *ibemu__verbs_create_qp_ex(struct ibv_context *context,
					 struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp_init_attr base = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
	};
	struct ibemu_verbs_wr_build *b = NULL;
	int with_ops = !!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	struct ibemu_verbs_qp *q;

	if (attr->comp_mask & ~known)
		return ibemu__verbs_null(EOPNOTSUPP);
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return ibemu__verbs_xrc_recv_qp_create(context, attr);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context)
		return ibemu__verbs_null(EINVAL);
	if (((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) &&
	     attr->max_tso_header) ||
	    (with_ops && (attr->send_ops_flags & ~QP_EX_SEND_OPS)))
		return ibemu__verbs_null(EOPNOTSUPP);
	if (with_ops) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return ibemu__verbs_null(ENOMEM);
	}
	q = ibemu__verbs_qp_create(attr->pd, &base);
	if (!q) {
		free(b);
		return NULL;
	}
	attr->cap = base.cap;
	if (with_ops) {
		q->build = b;
		q->qp_ex.comp_mask = 0;
		set_builders(&q->qp_ex);
	}
	return &q->qp;
}

VERBS_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct ibemu_verbs_qp *q = (struct ibemu_verbs_qp *)qp;

	return q->build ? &q->qp_ex : NULL;
}

// SPDX-License-Identifier: MIT
/*
 * XRC, the Extended Reliable Connected transport (IBA Annex A14), as
 * rdma-core exposes it: XRC domains (ibv_open_xrcd, shared by the
 * processes of one HCA that open the same file, as the kernel shares
 * them by inode: the daemon gets the file's descriptor), XRC SRQs
 * (ibv_create_srq_ex with IBV_SRQT_XRC, ibv_get_srq_num), XRC receive QPs
 * made in a domain (ibv_create_qp_ex with IBV_QPT_XRC_RECV) or opened
 * there by another process (ibv_open_qp). XRC send QPs are made by
 * qp.c's ibv_create_qp (as ibv_create_qp_ex calls it with a PD alone) and
 * post with wr.qp_type.xrc.remote_srqn (qp.c) or ibv_wr_set_xrc_srqn
 * (qp_ex.c). The checks are rdma-core's ibv_cmd_* and the kernel's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_int.h"

struct ibv_xrcd *ibemu__verbs_open_xrcd(struct ibv_context *context,
					struct ibv_xrcd_init_attr *attr)
{
	struct ibemu_verbs_xrcd_req r = {0};
	struct ibemu_verbs_xrcd *x;
	int fd, ret;

	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED)
		return ibemu__verbs_null(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS))
		return ibemu__verbs_null(EINVAL);
	fd = attr->fd;
	/* The kernel's fdget(): a descriptor that is not open. */
	if (fd != -1 && (fd < 0 || fcntl(fd, F_GETFD) < 0))
		return ibemu__verbs_null(EBADF);
	x = calloc(1, sizeof(*x));
	if (!x)
		return ibemu__verbs_null(ENOMEM);
	r.oflags = (uint32_t)attr->oflags;
	r.has_fd = fd != -1;
	ret = ibemu__verbs_call(ibemu__verbs_ctx(context),
				IBEMU_SESS_VERBS_XRCD_OPEN, &r, sizeof(r), &fd,
				r.has_fd ? 1 : 0);
	if (ret) {
		free(x);
		return ibemu__verbs_null(ret);
	}
	x->xrcd.context = context;
	x->handle = r.handle;
	return &x->xrcd;
}

int ibemu__verbs_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct ibemu_verbs_xrcd *x = (struct ibemu_verbs_xrcd *)xrcd;
	struct ibemu_verbs_obj o = {.id = x->handle};
	int ret;

	/* The daemon answers EBUSY while an object made through this open
	 * lives (ib_destroy_usecnt()); it counts them itself. */
	ret = ibemu__verbs_call(ibemu__verbs_ctx(xrcd->context),
				IBEMU_SESS_VERBS_XRCD_CLOSE, &o, sizeof(o),
				NULL, 0);
	if (ret)
		return ret;
	free(x);
	return 0;
}

struct ibv_srq *ibemu__verbs_create_srq_ex(struct ibv_context *context,
					   struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	/* ibv_srq_init_attr_ex begins as ibv_srq_init_attr does. */
	struct ibv_srq_init_attr *base = (struct ibv_srq_init_attr *)attr;
	int xrc = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
		  attr->srq_type == IBV_SRQT_XRC;

	if (attr->comp_mask & ~known)
		return ibemu__verbs_null(EOPNOTSUPP);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type != IBV_SRQT_BASIC && !xrc)
		return ibemu__verbs_null(EOPNOTSUPP); /* tag matching */
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context)
		return ibemu__verbs_null(EINVAL);
	if (!xrc)
		return ibemu__verbs_srq_create(attr->pd, base, NULL, NULL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	    attr->xrcd->context != context ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq ||
	    attr->cq->context != context)
		return ibemu__verbs_null(EINVAL);
	return ibemu__verbs_srq_create(attr->pd, base,
				       (struct ibemu_verbs_xrcd *)attr->xrcd,
				       attr->cq);
}

/* The SRQ number a request's XRCETH names: the SRQ's id on the HCA. */
int ibemu__verbs_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = srq->handle;
	return 0;
}

/* A QP without rings in domain 'x', for number 'qpn', on the lists. */
static struct ibv_qp *recv_qp_add(struct ibv_context *context,
				  struct ibemu_verbs_xrcd *x, uint32_t qpn,
				  void *qp_context)
{
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibemu_verbs_qp *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->qp.context = context;
	q->qp.qp_context = qp_context;
	q->qp.handle = qpn;
	q->qp.qp_num = qpn;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_type = IBV_QPT_XRC_RECV;
	q->xrcd = x;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	pthread_mutex_init(&q->sq_lock, NULL);
	pthread_mutex_init(&q->rq_lock, NULL);
	pthread_mutex_lock(&context->mutex);
	q->next = ctx->qps;
	ctx->qps = q;
	pthread_mutex_unlock(&context->mutex);
	return &q->qp;
}

/* Takes back a QP the daemon made or opened, when the library cannot. */
static void *recv_qp_undo(struct ibv_context *context, uint32_t qpn)
{
	struct ibemu_verbs_obj o = {.id = qpn};

	ibemu__verbs_call(ibemu__verbs_ctx(context),
			  IBEMU_SESS_VERBS_QP_DESTROY, &o, sizeof(o), NULL, 0);
	return ibemu__verbs_null(ENOMEM);
}

/*
 * ibv_create_qp_ex() of an XRC receive QP: its domain alone; the CQs,
 * SRQ, PD and capabilities are ignored, as the kernel ignores them for
 * IB_QPT_XRC_TGT (its receives go to the SRQs requests name).
 */
struct ibv_qp *ibemu__verbs_xrc_recv_qp_create(struct ibv_context *context,
					       struct ibv_qp_init_attr_ex *attr)
{
	struct ibemu_verbs_qp_req r = {0};
	struct ibv_qp *qp;
	int ret;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
	    attr->xrcd->context != context)
		return ibemu__verbs_null(EINVAL);
	if (((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return ibemu__verbs_null(EOPNOTSUPP);
	r.qp_type = IBV_QPT_XRC_RECV;
	r.pd = ((struct ibemu_verbs_xrcd *)attr->xrcd)->handle;
	ret = ibemu__verbs_call(ibemu__verbs_ctx(context),
				IBEMU_SESS_VERBS_QP_CREATE, &r, sizeof(r), NULL,
				0);
	if (ret)
		return ibemu__verbs_null(ret);
	qp = recv_qp_add(context, (struct ibemu_verbs_xrcd *)attr->xrcd, r.qpn,
			 attr->qp_context);
	if (!qp)
		return recv_qp_undo(context, r.qpn);
	memset(&attr->cap, 0, sizeof(attr->cap));
	return qp;
}

struct ibv_qp *ibemu__verbs_open_qp(struct ibv_context *context,
				    struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			      IBV_QP_OPEN_ATTR_TYPE;
	struct ibemu_verbs_qp_open r = {0};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct ibv_qp *qp;
	int ret;

	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED)
		return ibemu__verbs_null(EOPNOTSUPP);
	if ((attr->comp_mask & need) != need || !attr->xrcd ||
	    attr->xrcd->context != context)
		return ibemu__verbs_null(EINVAL);
	r.qpn = attr->qp_num;
	r.xrcd = ((struct ibemu_verbs_xrcd *)attr->xrcd)->handle;
	r.qp_type = (uint32_t)attr->qp_type;
	ret = ibemu__verbs_call(ibemu__verbs_ctx(context),
				IBEMU_SESS_VERBS_QP_OPEN, &r, sizeof(r), NULL,
				0);
	if (ret)
		return ibemu__verbs_null(ret);
	qp = recv_qp_add(context, (struct ibemu_verbs_xrcd *)attr->xrcd, r.qpn,
			 (attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT)
				 ? attr->qp_context
				 : NULL);
	if (!qp)
		return recv_qp_undo(context, r.qpn);
	/* Its state is the one its maker gave it. */
	if (!ibv_query_qp(qp, &qa, IBV_QP_STATE, &init))
		qp->state = qa.qp_state;
	return qp;
}

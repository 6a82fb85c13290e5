// SPDX-License-Identifier: MIT
/*
 * QPs and SRQs made for an id, on its device and PD (the device's own PD
 * when none is given), and moved as rdma-core moves them: a connected QP
 * to INIT (the CM takes it to RTR and RTS when it connects), a UD QP to
 * RTS with rdma_cm's Q_Key.
 */
#include <errno.h>
#include <string.h>

#include "rdmacm_int.h"

static int qp_modify(struct rdma_cm_id *id, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = state;
	if (rdma_init_qp_attr(id, &attr, &mask))
		return errno;
	ret = ibv_modify_qp(id->qp, &attr, mask);
	return ret;
}

static int qp_init(struct rdma_cm_id *id)
{
	int ret = qp_modify(id, IBV_QPS_INIT);

	if (ret || id->qp->qp_type != IBV_QPT_UD)
		return ret;
	ret = qp_modify(id, IBV_QPS_RTR);
	return ret ? ret : qp_modify(id, IBV_QPS_RTS);
}

static void cqs_destroy(struct rdma_cm_id *id)
{
	if (id->recv_cq && id->recv_cq != id->send_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq_channel && id->recv_cq_channel != id->send_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->recv_cq = id->send_cq = NULL;
	id->recv_cq_channel = id->send_cq_channel = NULL;
}

/* A CQ with its completion channel for each queue the program gave none,
 * sized by the queue, as rdma-core's ucma_create_cqs(). */
static int cqs_create(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *a)
{
	if (!a->recv_cq) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->recv_cq_channel)
			goto err;
		id->recv_cq = ibv_create_cq(
			id->verbs,
			(int)a->cap.max_recv_wr ? (int)a->cap.max_recv_wr : 1,
			id, id->recv_cq_channel, 0);
		if (!id->recv_cq)
			goto err;
		a->recv_cq = id->recv_cq;
	}
	if (!a->send_cq) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->send_cq_channel)
			goto err;
		id->send_cq = ibv_create_cq(
			id->verbs,
			(int)a->cap.max_send_wr ? (int)a->cap.max_send_wr : 1,
			id, id->send_cq_channel, 0);
		if (!id->send_cq)
			goto err;
		a->send_cq = id->send_cq;
	}
	return 0;
err:
	cqs_destroy(id);
	return -1;
}

RDMACM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct rdmacm_id *priv = rdmacm_id_of(id);
	struct ibv_qp *qp;
	int ret;

	if (!id->verbs || !attr)
		return rdmacm_err(EINVAL);
	if (id->qp)
		return rdmacm_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd ? id->pd : rdmacm__device_pd(priv->dev);
		if (!attr->pd)
			return -1;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (attr->pd->context != id->verbs)
		return rdmacm_err(EINVAL);
	if (!attr->srq && id->srq)
		attr->srq = id->srq;
	if ((!attr->send_cq || !attr->recv_cq) && cqs_create(id, attr))
		return -1;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp) {
		cqs_destroy(id);
		return -1;
	}
	id->qp = qp;
	id->qp_type = qp->qp_type;
	ret = qp_init(id);
	if (ret) {
		ibv_destroy_qp(qp);
		id->qp = NULL;
		cqs_destroy(id);
		return rdmacm_err(ret);
	}
	id->pd = attr->pd;
	return 0;
}

RDMACM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
				 struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex attr;
	int ret;

	if (!qp_init_attr)
		return rdmacm_err(EINVAL);
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, qp_init_attr, sizeof(*qp_init_attr));
	attr.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0;
	attr.pd = pd;
	ret = rdma_create_qp_ex(id, &attr);
	if (ret)
		return ret;
	memcpy(qp_init_attr, &attr, sizeof(*qp_init_attr));
	return 0;
}

RDMACM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id->qp)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	cqs_destroy(id);
}

RDMACM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				     struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr sattr;
	struct ibv_pd *pd;

	if (!id->verbs || !attr || id->srq)
		return rdmacm_err(EINVAL);
	pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd
		     ? attr->pd
		     : (id->pd ? id->pd
			       : rdmacm__device_pd(rdmacm_id_of(id)->dev));
	if (!pd)
		return -1;
	memset(&sattr, 0, sizeof(sattr));
	sattr.srq_context = attr->srq_context;
	sattr.attr = attr->attr;
	id->srq = ibv_create_srq(pd, &sattr);
	if (!id->srq)
		return -1;
	id->pd = pd;
	return 0;
}

RDMACM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
				  struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;

	if (!attr)
		return rdmacm_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = pd ? IBV_SRQ_INIT_ATTR_PD : 0;
	ex.pd = pd;
	return rdma_create_srq_ex(id, &ex);
}

RDMACM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (!id->srq)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

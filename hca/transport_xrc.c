// SPDX-License-Identifier: MIT
/*
 * XRC, the Extended Reliable Connected transport (IBA Annex A14): XRC
 * domains, XRC SRQs in them, and the receive side of an XRC connection
 * (the XRC receive QP, or "target"), which has no receive queue of its
 * own: each request names, in its XRCETH, the XRC SRQ of the same domain
 * that takes it, and that SRQ's CQ gets the completion. Everything else
 * of an XRC QP (PSNs, ACKs, NAKs, retries) is RC's, in the other files.
 */
#include <errno.h>
#include <stdlib.h>

#include "transport_int.h"

static struct tp_xrcd *xrcd_of(const struct ibemu_tp *tp, uint32_t id)
{
	return ibemu__tp_table_get(&tp->xrcds, id);
}

/* The domain named by a file's key, if one is open. */
static uint32_t xrcd_find(const struct ibemu_tp *tp, uint64_t dev, uint64_t ino)
{
	uint32_t i;

	for (i = 1; i < tp->xrcds.n; i++) {
		const struct tp_xrcd *x = tp->xrcds.v[i];

		if (x && x->key_dev == dev && x->key_ino == ino)
			return i;
	}
	return 0;
}

int ibemu_tp_xrcd_open(struct ibemu_tp *tp, uint64_t key_dev, uint64_t key_ino,
		       int create, int excl, uint32_t *xrcd)
{
	int anon = !key_dev && !key_ino;
	uint32_t id = anon ? 0 : xrcd_find(tp, key_dev, key_ino);
	struct tp_xrcd *x;
	int ret;

	/* ib_uverbs_open_xrcd(): a domain opened by its file. */
	if (id) {
		if (excl)
			return -EINVAL;
		xrcd_of(tp, id)->opens++;
		*xrcd = id;
		return 0;
	}
	if (!anon && !create)
		return -EAGAIN;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	ret = ibemu__tp_table_add(&tp->xrcds, 1, x, xrcd);
	if (ret) {
		free(x);
		return ret;
	}
	x->key_dev = key_dev;
	x->key_ino = key_ino;
	x->opens = 1;
	return 0;
}

int ibemu_tp_xrcd_close(struct ibemu_tp *tp, uint32_t xrcd)
{
	struct tp_xrcd *x = xrcd_of(tp, xrcd);

	if (!x)
		return -EINVAL;
	if (x->opens > 1) {
		x->opens--;
		return 0;
	}
	if (x->users)
		return -EBUSY;
	ibemu__tp_table_del(&tp->xrcds, xrcd);
	free(x);
	return 0;
}

void ibemu__tp_xrcd_fini(struct ibemu_tp *tp)
{
	uint32_t i;

	for (i = 0; i < tp->xrcds.n; i++)
		free(tp->xrcds.v[i]);
	free(tp->xrcds.v);
}

int ibemu_tp_xrc_srq_create(struct ibemu_tp *tp, uint32_t pd, uint32_t xrcd,
			    uint32_t cq, const struct ibemu_tp_srq_attr *attr,
			    void *uctx, uint32_t *srq)
{
	struct tp_xrcd *x = xrcd_of(tp, xrcd);
	struct tp_cq *c = ibemu__tp_table_get(&tp->cqs, cq);
	struct tp_srq *s;
	int ret;

	if (!x || !c)
		return -EINVAL;
	ret = ibemu_tp_srq_create(tp, pd, attr, srq);
	if (ret)
		return ret;
	s = ibemu__tp_table_get(&tp->srqs, *srq);
	s->xrcd = xrcd;
	s->cq = cq;
	s->uctx = uctx;
	x->users++;
	c->users++;
	return 0;
}

int ibemu_tp_srq_xrcd(struct ibemu_tp *tp, uint32_t srq, uint32_t *xrcd)
{
	const struct tp_srq *s = ibemu__tp_table_get(&tp->srqs, srq);

	if (!s)
		return -EINVAL;
	*xrcd = s->xrcd;
	return 0;
}

void ibemu__tp_xrc_srq_gone(struct ibemu_tp *tp, const struct tp_srq *s)
{
	struct tp_xrcd *x = xrcd_of(tp, s->xrcd);
	struct tp_cq *c = ibemu__tp_table_get(&tp->cqs, s->cq);
	uint32_t i;

	if (x)
		x->users--;
	if (c)
		c->users--;
	for (i = 0; i < tp->qps.n; i++) {
		struct tp_qp *qp = tp->qps.v[i];

		if (qp && qp->srq == s && qp->type == IBEMU_QPT_XRC_RECV) {
			qp->srq = NULL;
			qp->pd = 0;
		}
	}
}

int ibemu_tp_xrc_qp_open(struct ibemu_tp *tp, uint32_t qpn, uint32_t xrcd)
{
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);

	if (!qp || qp->type != IBEMU_QPT_XRC_RECV || qp->xrcd != xrcd)
		return -EINVAL;
	qp->opens++;
	xrcd_of(tp, xrcd)->users++;
	return 0;
}

int ibemu__tp_xrc_target(struct ibemu_tp *tp, struct tp_qp *qp, uint32_t srqn)
{
	struct tp_srq *s = ibemu__tp_table_get(&tp->srqs, srqn);

	if (!s || !s->xrcd || s->xrcd != qp->xrcd)
		return -EINVAL;
	qp->srq = s;
	qp->pd = s->pd;
	return 0;
}

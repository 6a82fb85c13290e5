// SPDX-License-Identifier: MIT
/*
 * Verbs streams: the control calls of an ibv_context of an attached
 * process (PD, MR, CQ, QP, SRQ), passed to the transport of the process's
 * HCA after every id, length and key is checked against the stream's own
 * objects. Work requests do not come this way: they arrive through the
 * rings (sess_verbs_ring.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sess_verbs_int.h"

/* --- object sets ---------------------------------------------------- */

static int u32_find(const uint32_t *a, uint32_t n, uint32_t x)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i] == x)
			return (int)i;
	return -1;
}

static int u32_add(uint32_t **a, uint32_t *n, uint32_t *cap, uint32_t x)
{
	if (ibemu_array_grow((void **)a, cap, *n + 1, sizeof(**a)))
		return -ENOMEM;
	(*a)[(*n)++] = x;
	return 0;
}

static void u32_del(uint32_t *a, uint32_t *n, int i)
{
	a[i] = a[--*n];
}

static int ptr_add(void ***a, uint32_t *n, uint32_t *cap, void *p)
{
	if (ibemu_array_grow((void **)a, cap, *n + 1, sizeof(**a)))
		return -ENOMEM;
	(*a)[(*n)++] = p;
	return 0;
}

/* What each object costs (sess_limits.h). The stream's socket is the
 * context's, with its page and async eventfd. */
static const struct ibemu_sess_cost context_cost = {
	.n = {[IBEMU_RES_CONTEXT] = 1,
	      [IBEMU_RES_MAP] = 1,
	      [IBEMU_RES_FD] = 2}};
static const struct ibemu_sess_cost pd_cost = {.n = {[IBEMU_RES_PD] = 1}};

static struct ibemu_sess_cost mr_cost(int mapped)
{
	return (struct ibemu_sess_cost){
		.n = {[IBEMU_RES_MR] = 1, [IBEMU_RES_MAP] = !!mapped}};
}

static struct ibemu_sess_cost cq_cost(int channel)
{
	return (struct ibemu_sess_cost){.n = {[IBEMU_RES_CQ] = 1,
					      [IBEMU_RES_MAP] = 1,
					      [IBEMU_RES_CHANNEL] = !!channel,
					      [IBEMU_RES_FD] = !!channel}};
}

/* A QP and the rings it maps: 2 (own receive queue), 1 (an SRQ's, or
 * an XRC send QP's none), 0 (an XRC receive QP). */
static struct ibemu_sess_cost qp_cost(unsigned rings)
{
	return (struct ibemu_sess_cost){
		.n = {[IBEMU_RES_QP] = 1, [IBEMU_RES_MAP] = rings}};
}

/* The rings a QP of this request maps. */
static unsigned qp_rings(const struct ibemu_verbs_qp_req *r)
{
	if (r->qp_type == IBEMU_QPT_XRC_RECV)
		return 0;
	return r->qp_type == IBEMU_QPT_XRC_SEND || r->srq ? 1 : 2;
}

static const struct ibemu_sess_cost srq_cost = {
	.n = {[IBEMU_RES_SRQ] = 1, [IBEMU_RES_MAP] = 1}};

struct vcq *ibemu__vs_cq_find(struct ibemu_sess_verbs *v, uint32_t id, int *at)
{
	uint32_t i;

	for (i = 0; i < v->ncqs; i++) {
		if (v->cqs[i]->id == id) {
			if (at)
				*at = (int)i;
			return v->cqs[i];
		}
	}
	return NULL;
}

struct vqp *ibemu__vs_qp_find(struct ibemu_sess_verbs *v, uint32_t qpn, int *at)
{
	uint32_t i;

	for (i = 0; i < v->nqps; i++) {
		if (v->qps[i]->qpn == qpn) {
			if (at)
				*at = (int)i;
			return v->qps[i];
		}
	}
	return NULL;
}

struct vsrq *ibemu__vs_srq_find(struct ibemu_sess_verbs *v, uint32_t id,
				int *at)
{
	uint32_t i;

	for (i = 0; i < v->nsrqs; i++) {
		if (v->srqs[i]->id == id) {
			if (at)
				*at = (int)i;
			return v->srqs[i];
		}
	}
	return NULL;
}

/* --- opening a stream, and creating its objects ---------------------- */

static void close_fds(int *fds, int nfds)
{
	int i;

	for (i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void reply(struct ibemu_sess_conn *c, uint16_t type, int ret,
		  const void *payload, size_t len)
{
	if (ret) {
		const char *why = strerror(-ret);

		ibemu__sess_send_msg(c->fd, IBEMU_SESS_ERROR, ret, why,
				     strlen(why));
		return;
	}
	ibemu__sess_send_msg(c->fd, type, 0, payload, len);
}

void ibemu__sess_verbs_open(struct ibemu_sess_conn *c, uint32_t node,
			    const struct ibemu_verbs_open *o, int *fds,
			    int nfds)
{
	struct ibemu_sess_server *s = c->s;
	struct ibemu_sess_verbs *v;
	char why[300];
	uint64_t probe;
	int seals, held, err = -EPERM;

	if (nfds != 2) {
		snprintf(why, sizeof(why),
			 "VERBS_OPEN takes 2 fds (context page, async "
			 "eventfd), got %d",
			 nfds);
		goto err_fds;
	}
	if (ibemu__vs_vm_read(c->pid, o->probe_addr, &probe, sizeof(probe)) ||
	    probe != o->probe) {
		snprintf(why, sizeof(why),
			 "the daemon cannot access the memory of process %ld "
			 "(process_vm_readv: %s); the kernel's Yama LSM "
			 "forbids it unless the process allows it (the "
			 "library calls prctl(PR_SET_PTRACER)) or "
			 "/proc/sys/kernel/yama/ptrace_scope is 0 or 1",
			 (long)c->pid, strerror(errno));
		goto err_fds;
	}
	v = calloc(1, sizeof(*v));
	if (v) {
		v->c = c;
		v->proc = ibemu__sess_proc_get(s, c->pid);
	}
	if (!v || !v->proc) {
		free(v);
		snprintf(why, sizeof(why), "out of memory");
		goto err_fds;
	}
	held = ibemu__vs_hold_why(v, &context_cost, "a verbs context", why,
				  sizeof(why));
	if (held) {
		err = held;
		goto err_free;
	}
	seals = fcntl(fds[0], F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		snprintf(why, sizeof(why),
			 "the context page is not a memfd sealed against "
			 "shrinking");
		goto err_free;
	}
	v->page = mmap(NULL, IBEMU_VERBS_PAGE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fds[0], 0);
	if (v->page == MAP_FAILED) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot map the context page: %s",
			 strerror(errno));
		goto err_free;
	}
	{
		struct stat st;

		if (fstat(fds[0], &st) || st.st_size < IBEMU_VERBS_PAGE) {
			munmap(v->page, IBEMU_VERBS_PAGE);
			snprintf(why, sizeof(why),
				 "the context page is too small");
			goto err_free;
		}
	}
	close(fds[0]);
	/* The process's clock starts at the fabric's time. */
	v->page->rule = ibemu__vs_rule_on(s->d);
	v->page->handed = 0;
	v->page->handing = 0;
	v->page->wait_seq = 0;
	v->page->clock_ps = ibemu_engine_now(s->d->engine);
	v->async_fd = fds[1];
	v->hca = s->hcas[node];
	v->next = v->hca->verbs;
	v->hca->verbs = v;
	c->kind = IBEMU_SESS_CONN_VERBS;
	c->verbs = v;
	c->node = node;
	ibemu__sess_bind_streams(s, c->pid, 1);
	if (ibemu__sess_send_msg(c->fd, IBEMU_SESS_VERBS_OPEN, 0, o,
				 sizeof(*o))) {
		ibemu__sess_conn_close(c, "it left before its context opened");
		return;
	}
	ibemu_daemon_log(s->d, "process %ld opened a verbs context on %s",
			 (long)c->pid, s->d->topo->nodes[node].name);
	return;

err_free:
	ibemu__vs_unhold(v, &v->held); /* what it took, if anything */
	ibemu__sess_proc_put(s, v->proc);
	free(v);
err_fds:
	close_fds(fds, nfds);
	ibemu_daemon_log_limited(s->d, &s->d->refusals,
				 "verbs client (pid %ld) refused: %s",
				 (long)c->pid, why);
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_ERROR, err, why, strlen(why));
	ibemu__sess_conn_close(c, NULL);
}

/* The limits of the process's HCA, by its hca_model (proto/verbs_proto.h):
 * what the library reported and refuses beyond, refused here too. */
static const struct ibemu_verbs_limits *vs_limits(struct ibemu_sess_verbs *v)
{
	return ibemu__sess_hca_limits(v->hca->s, v->hca->node);
}

static int pd_owned(struct ibemu_sess_verbs *v, uint32_t pd)
{
	return u32_find(v->pds, v->npds, pd) >= 0;
}

/* MR_REG, with the memfd of the region's shared pages if it has some. */
static int do_mr_reg(struct ibemu_sess_verbs *v, struct ibemu_verbs_mr_req *m,
		     int *fds, int nfds)
{
	const struct ibemu_sess_cost cost = mr_cost(m->shm_len != 0);
	struct vmr_key *grown;
	uint64_t handle;
	int ret;

	if (!pd_owned(v, m->pd) || nfds != (m->shm_len ? 1 : 0))
		ret = -EINVAL;
	else if (!m->len || m->len > IBEMU_VERBS_MAX_MR_SIZE ||
		 m->addr + m->len < m->addr)
		ret = -EINVAL;
	else
		ret = ibemu__vs_hold(v, &cost, "a memory region");
	if (!ret) {
		ret = ibemu__vs_mr_add(v, m, nfds ? fds[0] : -1, &handle);
		if (ret)
			ibemu__vs_unhold(v, &cost);
	}
	close_fds(fds, nfds); /* mapped, or refused */
	if (ret)
		return ret;
	if (v->nmrs == v->mrs_cap) {
		grown = realloc(v->mrs, (v->mrs_cap * 2 + 8) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			goto err;
		}
		v->mrs = grown;
		v->mrs_cap = v->mrs_cap * 2 + 8;
	}
	ret = ibemu_tp_mr_reg(v->hca->tp, m->pd, m->addr, m->len,
			      m->access & 0xf, handle, &m->lkey, &m->rkey);
	if (ret)
		goto err;
	v->mrs[v->nmrs++] =
		(struct vmr_key){m->lkey, handle, !!m->shm_len,
				 !!(m->access & (IBEMU_ACCESS_REMOTE_WRITE |
						 IBEMU_ACCESS_REMOTE_ATOMIC))};
	return 0;

err:
	ibemu__vs_mr_drop(v, handle);
	ibemu__vs_unhold(v, &cost);
	return ret;
}

/* MR_DEREG of the region of key 'lkey'. */
static int do_mr_dereg(struct ibemu_sess_verbs *v, uint32_t lkey)
{
	struct ibemu_sess_cost cost;
	uint32_t i;
	int ret;

	for (i = 0; i < v->nmrs && v->mrs[i].lkey != lkey; i++)
		;
	if (i == v->nmrs)
		return -EINVAL;
	ret = ibemu_tp_mr_dereg(v->hca->tp, lkey);
	if (ret)
		return ret;
	ibemu__vs_mr_drop(v, v->mrs[i].handle);
	cost = mr_cost(v->mrs[i].mapped);
	ibemu__vs_unhold(v, &cost);
	v->mrs[i] = v->mrs[--v->nmrs];
	return 0;
}

/* What a CQ the transport no longer has held in the daemon. */
static void cq_release(struct ibemu_sess_verbs *v, struct vcq *q)
{
	const struct ibemu_sess_cost cost = cq_cost(q->chan_fd >= 0);

	ibemu__vs_unhold(v, &cost);
	ibemu__vs_ring_unmap(&q->ring);
	if (q->chan_fd >= 0)
		close(q->chan_fd);
	free(q);
}

static void cq_free(struct ibemu_sess_verbs *v, struct vcq *q)
{
	ibemu_tp_cq_destroy(v->hca->tp, q->id);
	cq_release(v, q);
}

static int do_cq_create(struct ibemu_sess_verbs *v,
			struct ibemu_verbs_cq_req *r, int *fds, int nfds)
{
	const struct ibemu_sess_cost cost = cq_cost(r->channel != 0);
	struct vcq *q;
	int ret;

	if (nfds != 1 + !!r->channel) {
		close_fds(fds, nfds);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	ret = q ? ibemu__vs_hold(v, &cost, "a completion queue") : -ENOMEM;
	if (ret) {
		free(q);
		close_fds(fds, nfds);
		return ret;
	}
	q->chan_fd = r->channel ? fds[1] : -1;
	ret = ibemu__vs_ring_map(&q->ring, fds[0], r->entries,
				 sizeof(struct ibemu_verbs_cqe),
				 2 * vs_limits(v)->max_cqe);
	if (ret)
		goto err;
	ret = ibemu_tp_cq_create(v->hca->tp, &q->id);
	if (ret)
		goto err_unmap;
	ret = ptr_add((void ***)&v->cqs, &v->ncqs, &v->cqs_cap, q);
	if (ret) {
		cq_free(v, q);
		return ret;
	}
	r->id = q->id;
	return 0;

err_unmap:
	ibemu__vs_ring_unmap(&q->ring);
err:
	if (q->chan_fd >= 0)
		close(q->chan_fd);
	free(q);
	ibemu__vs_unhold(v, &cost);
	return ret;
}

static void qp_free(struct ibemu_sess_verbs *v, struct vqp *q)
{
	const struct ibemu_sess_cost cost = qp_cost(!!q->sq.hdr + !!q->rq.hdr);

	ibemu__vs_unhold(v, &cost);
	ibemu__vs_xrcd_use(v, q->xrcd, -1);
	ibemu_tp_qp_destroy(v->hca->tp, q->qpn);
	ibemu__vs_ring_unmap(&q->sq);
	ibemu__vs_ring_unmap(&q->rq);
	free(q);
}

/*
 * Whether QP request 'r' names only objects of stream 'v' and rings as
 * large as it claims. An XRC send QP has no receive side; an XRC receive
 * QP has nothing but the domain open its 'pd' names (verbs_proto.h); the
 * transport checks the rest of each type's rules.
 */
static int qp_req_ok(struct ibemu_sess_verbs *v,
		     const struct ibemu_verbs_qp_req *r, int nfds)
{
	if (nfds != (int)qp_rings(r) ||
	    r->max_send_wr > vs_limits(v)->max_qp_wr ||
	    r->max_recv_wr > vs_limits(v)->max_qp_wr)
		return 0;
	switch (r->qp_type) {
	case IBEMU_QPT_XRC_RECV:
		return ibemu__vs_xrcd_find(v, r->pd) && !r->send_cq &&
		       !r->recv_cq && !r->srq && !r->max_send_wr &&
		       !r->max_recv_wr && !r->sq_entries && !r->rq_entries;
	case IBEMU_QPT_XRC_SEND:
		return pd_owned(v, r->pd) &&
		       ibemu__vs_cq_find(v, r->send_cq, NULL) && !r->recv_cq &&
		       !r->srq && !r->max_recv_wr && !r->rq_entries &&
		       r->sq_entries >= r->max_send_wr;
	case IBEMU_QPT_RC:
	case IBEMU_QPT_UC:
	case IBEMU_QPT_UD:
		break;
	default:
		return 0;
	}
	return pd_owned(v, r->pd) && ibemu__vs_cq_find(v, r->send_cq, NULL) &&
	       ibemu__vs_cq_find(v, r->recv_cq, NULL) &&
	       (!r->srq || ibemu__vs_srq_find(v, r->srq, NULL)) &&
	       r->sq_entries >= r->max_send_wr &&
	       (r->srq || r->rq_entries >= r->max_recv_wr);
}

static int do_qp_create(struct ibemu_sess_verbs *v,
			struct ibemu_verbs_qp_req *r, int *fds, int nfds)
{
	const struct ibemu_sess_cost cost = qp_cost(qp_rings(r));
	struct ibemu_tp_qp_init init;
	unsigned rings = qp_rings(r);
	struct vqp *q;
	int ret;

	if (!qp_req_ok(v, r, nfds)) {
		close_fds(fds, nfds);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	ret = q ? ibemu__vs_hold(v, &cost, "a queue pair") : -ENOMEM;
	if (ret) {
		free(q);
		close_fds(fds, nfds);
		return ret;
	}
	q->srq = r->srq;
	ret = rings ? ibemu__vs_ring_map(&q->sq, fds[0], r->sq_entries,
					 sizeof(struct ibemu_verbs_swqe),
					 2 * vs_limits(v)->max_qp_wr)
		    : 0;
	if (rings == 2) {
		int ret2 = ibemu__vs_ring_map(&q->rq, fds[1], r->rq_entries,
					      sizeof(struct ibemu_verbs_rwqe),
					      2 * vs_limits(v)->max_qp_wr);

		ret = ret ? ret : ret2;
	}
	if (ret)
		goto err;
	memset(&init, 0, sizeof(init));
	init.qp_type = (uint8_t)r->qp_type;
	init.sq_sig_all = !!r->sq_sig_all;
	init.pd = r->pd;
	if (r->qp_type == IBEMU_QPT_XRC_RECV) {
		init.pd = 0;
		init.xrcd = ibemu__vs_xrcd_find(v, r->pd)->xrcd;
		q->xrcd = r->pd;
	}
	init.send_cq = r->send_cq;
	init.recv_cq = r->recv_cq;
	init.srq = r->srq;
	init.max_send_wr = r->max_send_wr;
	init.max_recv_wr = r->max_recv_wr;
	init.max_send_sge = r->max_send_sge;
	init.max_recv_sge = r->max_recv_sge;
	init.max_inline_data = r->max_inline_data;
	init.uctx = q;
	q->max_send_wr = r->max_send_wr;
	q->max_recv_wr = r->max_recv_wr;
	ret = ibemu_tp_qp_create(v->hca->tp, &init, &q->qpn);
	if (ret)
		goto err;
	ibemu__vs_xrcd_use(v, q->xrcd, 1);
	ret = ptr_add((void ***)&v->qps, &v->nqps, &v->qps_cap, q);
	if (ret) {
		qp_free(v, q);
		return ret;
	}
	r->qpn = q->qpn;
	return 0;

err:
	ibemu__vs_ring_unmap(&q->sq);
	ibemu__vs_ring_unmap(&q->rq);
	free(q);
	ibemu__vs_unhold(v, &cost);
	return ret;
}

static void attr_from(struct ibemu_tp_qp_attr *a,
		      const struct ibemu_verbs_qp_attr *r)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = r->qp_state;
	a->cur_qp_state = r->cur_qp_state;
	a->path_mtu = r->path_mtu;
	a->en_sqd_async_notify = r->en_sqd_async_notify;
	a->port_num = r->port_num;
	a->timeout = r->timeout;
	a->retry_cnt = r->retry_cnt;
	a->rnr_retry = r->rnr_retry;
	a->min_rnr_timer = r->min_rnr_timer;
	a->max_rd_atomic = r->max_rd_atomic;
	a->max_dest_rd_atomic = r->max_dest_rd_atomic;
	a->pkey_index = r->pkey_index;
	a->qkey = r->qkey;
	a->rq_psn = r->rq_psn;
	a->sq_psn = r->sq_psn;
	a->dest_qp_num = r->dest_qp_num;
	a->qp_access_flags = r->qp_access_flags;
	a->ah_attr.dlid = r->dlid;
	a->ah_attr.sl = r->sl;
	a->ah_attr.src_path_bits = r->src_path_bits;
	a->ah_attr.port_num = r->ah_port_num;
}

static void attr_to(struct ibemu_verbs_qp_attr *r,
		    const struct ibemu_tp_qp_attr *a)
{
	r->qp_state = a->qp_state;
	r->cur_qp_state = a->cur_qp_state;
	r->path_mtu = a->path_mtu;
	r->en_sqd_async_notify = a->en_sqd_async_notify;
	r->sq_draining = a->sq_draining;
	r->port_num = a->port_num;
	r->timeout = a->timeout;
	r->retry_cnt = a->retry_cnt;
	r->rnr_retry = a->rnr_retry;
	r->min_rnr_timer = a->min_rnr_timer;
	r->max_rd_atomic = a->max_rd_atomic;
	r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	r->pkey_index = a->pkey_index;
	r->qkey = a->qkey;
	r->rq_psn = a->rq_psn;
	r->sq_psn = a->sq_psn;
	r->dest_qp_num = a->dest_qp_num;
	r->qp_access_flags = a->qp_access_flags;
	r->dlid = a->ah_attr.dlid;
	r->sl = a->ah_attr.sl;
	r->src_path_bits = a->ah_attr.src_path_bits;
	r->ah_port_num = a->ah_attr.port_num;
}

static void srq_release(struct ibemu_sess_verbs *v, struct vsrq *q)
{
	ibemu__vs_unhold(v, &srq_cost);
	ibemu__vs_xrcd_use(v, q->xrcd, -1);
	ibemu__vs_ring_unmap(&q->ring);
	free(q);
}

static void srq_free(struct ibemu_sess_verbs *v, struct vsrq *q)
{
	ibemu_tp_srq_destroy(v->hca->tp, q->id);
	srq_release(v, q);
}

/*
 * SRQ_CREATE, and XSRQ_CREATE when 'x' is not NULL: an XRC SRQ in the
 * domain of open x->xrcd, completing on CQ x->cq of the same stream.
 */
static int do_srq_create(struct ibemu_sess_verbs *v,
			 struct ibemu_verbs_srq_req *r,
			 const struct ibemu_verbs_xsrq_req *x, int *fds,
			 int nfds)
{
	const struct vxrcd *vx = x ? ibemu__vs_xrcd_find(v, x->xrcd) : NULL;
	struct ibemu_tp_srq_attr a = {
		.max_wr = r->max_wr,
		.max_sge = r->max_sge,
		.srq_limit = r->srq_limit,
	};
	struct vsrq *q;
	int ret;

	if (nfds != 1 || !pd_owned(v, r->pd) || r->entries < r->max_wr ||
	    r->max_wr > vs_limits(v)->max_srq_wr ||
	    (x && (!vx || !ibemu__vs_cq_find(v, x->cq, NULL)))) {
		close_fds(fds, nfds);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	ret = q ? ibemu__vs_hold(v, &srq_cost, "a shared receive queue")
		: -ENOMEM;
	if (ret) {
		free(q);
		close_fds(fds, nfds);
		return ret;
	}
	ret = ibemu__vs_ring_map(&q->ring, fds[0], r->entries,
				 sizeof(struct ibemu_verbs_rwqe),
				 2 * vs_limits(v)->max_srq_wr);
	if (ret)
		goto err;
	q->max_wr = r->max_wr;
	ret = vx ? ibemu_tp_xrc_srq_create(v->hca->tp, r->pd, vx->xrcd, x->cq,
					   &a, q, &q->id)
		 : ibemu_tp_srq_create(v->hca->tp, r->pd, &a, &q->id);
	if (ret)
		goto err_unmap;
	if (vx) {
		q->xrcd = x->xrcd;
		ibemu__vs_xrcd_use(v, q->xrcd, 1);
	}
	ret = ptr_add((void ***)&v->srqs, &v->nsrqs, &v->srqs_cap, q);
	if (ret) {
		srq_free(v, q);
		return ret;
	}
	r->id = q->id;
	return 0;

err_unmap:
	ibemu__vs_ring_unmap(&q->ring);
err:
	free(q);
	ibemu__vs_unhold(v, &srq_cost);
	return ret;
}

/*
 * Before a QP goes under the time rule: payload moves when a message's
 * last packet arrives, and a UC or UD send completes as it leaves, so a
 * program may destroy its QP and exit while its last message is on the
 * wire (the engine waited for it meanwhile). The fabric first carries
 * what is in flight, up to IBEMU_SESS_CARRY_PS of virtual time: this
 * bends the rule, at teardown only.
 */
#define IBEMU_SESS_CARRY_PS 100000000ull /* 100 us */

static void carry_sent(struct ibemu_daemon *d)
{
	struct ibemu_engine *e = d->engine;

	if (d->engine_held || ibemu_engine_next_time(e) == UINT64_MAX)
		return;
	ibemu_engine_run(e, ibemu_engine_now(e) + IBEMU_SESS_CARRY_PS, 1000000);
	d->rule.mid_run = 0;
	ibemu__sess_flush(d);
}

/* --- the calls of a stream, one function each ------------------------ */

/* A call's payload, copied out of the message (replies carry it back). */
union verbs_payload {
	struct ibemu_verbs_obj obj;
	struct ibemu_verbs_mr_req mr;
	struct ibemu_verbs_cq_req cq;
	struct ibemu_verbs_qp_req qp;
	struct ibemu_verbs_qp_attr qa;
	struct ibemu_verbs_srq_req srq;
	struct ibemu_verbs_xrcd_req xrcd;
	struct ibemu_verbs_xsrq_req xsrq;
	struct ibemu_verbs_qp_open qpo;
	struct ibemu_verbs_mcast mc;
};

static int pd_alloc(struct ibemu_sess_verbs *v, union verbs_payload *u,
		    int *fds, int nfds)
{
	struct ibemu_tp *tp = v->hca->tp;
	int ret;

	(void)fds;
	(void)nfds;
	ret = ibemu__vs_hold(v, &pd_cost, "a protection domain");
	if (ret)
		return ret;
	ret = ibemu_tp_pd_alloc(tp, &u->obj.id);
	if (!ret) {
		ret = u32_add(&v->pds, &v->npds, &v->pds_cap, u->obj.id);
		if (ret)
			ibemu_tp_pd_free(tp, u->obj.id);
	}
	if (ret)
		ibemu__vs_unhold(v, &pd_cost);
	return ret;
}

static int pd_free(struct ibemu_sess_verbs *v, union verbs_payload *u, int *fds,
		   int nfds)
{
	int at = u32_find(v->pds, v->npds, u->obj.id), ret;

	(void)fds;
	(void)nfds;
	ret = at < 0 ? -EINVAL : ibemu_tp_pd_free(v->hca->tp, u->obj.id);
	if (!ret) {
		u32_del(v->pds, &v->npds, at);
		ibemu__vs_unhold(v, &pd_cost);
	}
	return ret;
}

static int mr_reg(struct ibemu_sess_verbs *v, union verbs_payload *u, int *fds,
		  int nfds)
{
	return do_mr_reg(v, &u->mr, fds, nfds);
}

static int mr_dereg(struct ibemu_sess_verbs *v, union verbs_payload *u,
		    int *fds, int nfds)
{
	int ret = do_mr_dereg(v, u->obj.id);

	(void)fds;
	(void)nfds;
	/* Work under way in the region may have failed. */
	ibemu_daemon_pump(vs_daemon(v));
	return ret;
}

static int cq_create(struct ibemu_sess_verbs *v, union verbs_payload *u,
		     int *fds, int nfds)
{
	return do_cq_create(v, &u->cq, fds, nfds);
}

/* A CQ still used by a QP stays (the transport's -EBUSY). */
static int cq_destroy(struct ibemu_sess_verbs *v, union verbs_payload *u,
		      int *fds, int nfds)
{
	struct vcq *q;
	int at, ret;

	(void)fds;
	(void)nfds;
	q = ibemu__vs_cq_find(v, u->obj.id, &at);
	ret = q ? ibemu_tp_cq_destroy(v->hca->tp, u->obj.id) : -EINVAL;
	if (!ret) {
		v->cqs[at] = v->cqs[--v->ncqs];
		cq_release(v, q);
	}
	return ret;
}

static int qp_create(struct ibemu_sess_verbs *v, union verbs_payload *u,
		     int *fds, int nfds)
{
	return do_qp_create(v, &u->qp, fds, nfds);
}

/* A QP back in Reset: its queues start empty (IBA 10.3.1). */
static void qp_rings_reset(struct vqp *q)
{
	q->error = 0;
	if (!q->sq.hdr)
		return; /* an XRC receive QP has none */
	q->sq.idx = __atomic_load_n(&q->sq.hdr->prod, __ATOMIC_ACQUIRE);
	__atomic_store_n(&q->sq.hdr->cons, q->sq.idx, __ATOMIC_RELEASE);
	__atomic_store_n(&q->sq.hdr->error, 0, __ATOMIC_RELEASE);
	if (q->rq.hdr) {
		q->rq.idx = __atomic_load_n(&q->rq.hdr->prod, __ATOMIC_ACQUIRE);
		__atomic_store_n(&q->rq.hdr->cons, q->rq.idx, __ATOMIC_RELEASE);
		__atomic_store_n(&q->rq.hdr->error, 0, __ATOMIC_RELEASE);
	}
}

static int qp_modify(struct ibemu_sess_verbs *v, union verbs_payload *u,
		     int *fds, int nfds)
{
	struct vqp *q = ibemu__vs_qp_find(v, u->qa.qpn, NULL);
	struct ibemu_tp_qp_attr qa;
	int ret;

	(void)fds;
	(void)nfds;
	if (!q)
		return -EINVAL;
	attr_from(&qa, &u->qa);
	ret = ibemu_tp_qp_modify(v->hca->tp, u->qa.qpn, &qa, u->qa.mask);
	if (!ret && qa.qp_state == IBEMU_QPS_RESET &&
	    (u->qa.mask & IBEMU_QP_STATE))
		qp_rings_reset(q);
	ibemu_daemon_pump(vs_daemon(v)); /* a flush may have completed */
	return ret;
}

static int qp_query(struct ibemu_sess_verbs *v, union verbs_payload *u,
		    int *fds, int nfds)
{
	struct ibemu_tp_qp_attr qa;
	int ret;

	(void)fds;
	(void)nfds;
	if (!ibemu__vs_qp_find(v, u->qa.qpn, NULL))
		return -EINVAL;
	ret = ibemu_tp_qp_query(v->hca->tp, u->qa.qpn, &qa);
	if (!ret)
		attr_to(&u->qa, &qa);
	return ret;
}

static int qp_destroy(struct ibemu_sess_verbs *v, union verbs_payload *u,
		      int *fds, int nfds)
{
	struct vqp *q;
	int at;

	(void)fds;
	(void)nfds;
	q = ibemu__vs_qp_find(v, u->obj.id, &at);
	if (!q)
		return -EINVAL;
	if (ibemu__vs_rule_on(vs_daemon(v)))
		carry_sent(vs_daemon(v));
	v->qps[at] = v->qps[--v->nqps];
	qp_free(v, q);
	return 0;
}

static int srq_create(struct ibemu_sess_verbs *v, union verbs_payload *u,
		      int *fds, int nfds)
{
	return do_srq_create(v, &u->srq, NULL, fds, nfds);
}

static int srq_modify(struct ibemu_sess_verbs *v, union verbs_payload *u,
		      int *fds, int nfds)
{
	(void)fds;
	(void)nfds;
	return ibemu__vs_srq_find(v, u->obj.id, NULL)
		       ? ibemu_tp_srq_modify(v->hca->tp, u->obj.id, u->obj.arg)
		       : -EINVAL;
}

static int srq_query(struct ibemu_sess_verbs *v, union verbs_payload *u,
		     int *fds, int nfds)
{
	struct ibemu_tp_srq_attr sa;
	int ret;

	(void)fds;
	(void)nfds;
	ret = ibemu__vs_srq_find(v, u->srq.id, NULL)
		      ? ibemu_tp_srq_query(v->hca->tp, u->srq.id, &sa)
		      : -EINVAL;
	if (!ret) {
		u->srq.max_wr = sa.max_wr;
		u->srq.max_sge = sa.max_sge;
		u->srq.srq_limit = sa.srq_limit;
	}
	return ret;
}

/* An SRQ still used by a QP stays (the transport's -EBUSY). */
static int srq_destroy(struct ibemu_sess_verbs *v, union verbs_payload *u,
		       int *fds, int nfds)
{
	struct vsrq *q;
	int at, ret;

	(void)fds;
	(void)nfds;
	q = ibemu__vs_srq_find(v, u->obj.id, &at);
	ret = q ? ibemu_tp_srq_destroy(v->hca->tp, u->obj.id) : -EINVAL;
	if (!ret) {
		v->srqs[at] = v->srqs[--v->nsrqs];
		srq_release(v, q);
	}
	return ret;
}

/* --- XRC (IBA Annex A14; domains in sess_verbs_xrc.c) --- */

static int xrcd_open(struct ibemu_sess_verbs *v, union verbs_payload *u,
		     int *fds, int nfds)
{
	return ibemu__vs_xrcd_open(v, &u->xrcd, fds, nfds);
}

static int xrcd_close(struct ibemu_sess_verbs *v, union verbs_payload *u,
		      int *fds, int nfds)
{
	(void)fds;
	(void)nfds;
	return ibemu__vs_xrcd_close(v, u->obj.id);
}

static int xsrq_create(struct ibemu_sess_verbs *v, union verbs_payload *u,
		       int *fds, int nfds)
{
	return do_srq_create(v, &u->xsrq.srq, &u->xsrq, fds, nfds);
}

/* ibv_open_qp(): a handle, without rings, on an XRC receive QP of a
 * domain the stream opened (made by any process on the HCA). */
static int qp_open(struct ibemu_sess_verbs *v, union verbs_payload *u, int *fds,
		   int nfds)
{
	const struct ibemu_sess_cost cost = qp_cost(0);
	const struct vxrcd *vx = ibemu__vs_xrcd_find(v, u->qpo.xrcd);
	struct vqp *q;
	int ret;

	(void)fds;
	(void)nfds;
	if (!vx || u->qpo.qp_type != IBEMU_QPT_XRC_RECV)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	ret = q ? ibemu__vs_hold(v, &cost, "a queue pair") : -ENOMEM;
	if (ret) {
		free(q);
		return ret;
	}
	ret = ibemu_tp_xrc_qp_open(v->hca->tp, u->qpo.qpn, vx->xrcd);
	if (ret) {
		free(q);
		ibemu__vs_unhold(v, &cost);
		return ret;
	}
	q->qpn = u->qpo.qpn;
	q->xrcd = u->qpo.xrcd;
	ibemu__vs_xrcd_use(v, q->xrcd, 1);
	ret = ptr_add((void ***)&v->qps, &v->nqps, &v->qps_cap, q);
	if (ret)
		qp_free(v, q);
	return ret;
}

static int mcast_attach(struct ibemu_sess_verbs *v, union verbs_payload *u,
			int *fds, int nfds)
{
	(void)fds;
	(void)nfds;
	return ibemu__vs_mcast_attach(v, &u->mc);
}

static int mcast_detach(struct ibemu_sess_verbs *v, union verbs_payload *u,
			int *fds, int nfds)
{
	(void)fds;
	(void)nfds;
	return ibemu__vs_mcast_detach(v, &u->mc);
}

/*
 * The calls of a verbs stream: the payload each takes (and its reply
 * carries back), whether it may carry fds (the creates and MR_REG), and
 * what serves it: 0 or -errno, which the reply carries as an ERROR.
 */
struct verbs_call {
	size_t size;
	int takes_fds;
	int (*serve)(struct ibemu_sess_verbs *v, union verbs_payload *u,
		     int *fds, int nfds);
};

#define CALL(type, payload, fds, fn) \
	[IBEMU_SESS_VERBS_##type] = {sizeof(struct payload), fds, fn}

static const struct verbs_call verbs_calls[IBEMU_SESS_NTYPES] = {
	CALL(PD_ALLOC, ibemu_verbs_obj, 0, pd_alloc),
	CALL(PD_FREE, ibemu_verbs_obj, 0, pd_free),
	CALL(MR_REG, ibemu_verbs_mr_req, 1, mr_reg),
	CALL(MR_DEREG, ibemu_verbs_obj, 0, mr_dereg),
	CALL(CQ_CREATE, ibemu_verbs_cq_req, 1, cq_create),
	CALL(CQ_DESTROY, ibemu_verbs_obj, 0, cq_destroy),
	CALL(QP_CREATE, ibemu_verbs_qp_req, 1, qp_create),
	CALL(QP_MODIFY, ibemu_verbs_qp_attr, 0, qp_modify),
	CALL(QP_QUERY, ibemu_verbs_qp_attr, 0, qp_query),
	CALL(QP_DESTROY, ibemu_verbs_obj, 0, qp_destroy),
	CALL(SRQ_CREATE, ibemu_verbs_srq_req, 1, srq_create),
	CALL(SRQ_MODIFY, ibemu_verbs_obj, 0, srq_modify),
	CALL(SRQ_QUERY, ibemu_verbs_srq_req, 0, srq_query),
	CALL(SRQ_DESTROY, ibemu_verbs_obj, 0, srq_destroy),
	CALL(XRCD_OPEN, ibemu_verbs_xrcd_req, 1, xrcd_open),
	CALL(XRCD_CLOSE, ibemu_verbs_obj, 0, xrcd_close),
	CALL(XSRQ_CREATE, ibemu_verbs_xsrq_req, 1, xsrq_create),
	CALL(QP_OPEN, ibemu_verbs_qp_open, 0, qp_open),
	CALL(MCAST_ATTACH, ibemu_verbs_mcast, 0, mcast_attach),
	CALL(MCAST_DETACH, ibemu_verbs_mcast, 0, mcast_detach),
};

void ibemu__sess_verbs_call(struct ibemu_sess_conn *c,
			    const struct ibemu_sess_hdr *h, const void *payload,
			    int *fds, int nfds)
{
	const struct verbs_call *call =
		h->type < IBEMU_SESS_NTYPES ? &verbs_calls[h->type] : NULL;
	union verbs_payload u;
	int ret;

	if (!call || !call->serve || h->len != call->size) {
		close_fds(fds, nfds);
		ibemu__sess_conn_close(c, "a verbs call it does not know, or "
					  "of the wrong size");
		return;
	}
	if (nfds && !call->takes_fds) {
		close_fds(fds, nfds);
		reply(c, h->type, -EINVAL, NULL, 0);
		return;
	}
	memcpy(&u, payload, h->len);
	ret = call->serve(c->verbs, &u, fds, nfds);
	reply(c, h->type, ret, &u, h->len);
}

void ibemu__sess_verbs_close(struct ibemu_sess_conn *c)
{
	struct ibemu_sess_verbs *v = c->verbs, **pp;
	struct ibemu_tp *tp = v->hca->tp;
	uint32_t i;

	/* Children first: QPs, then SRQs and CQs, MRs, PDs. Its RC peers
	 * find the QPs gone and retry until their retry count runs out. */
	/* Each is off its array before it goes: the transport's callbacks
	 * during a destroy must not find it. */
	while (v->nqps)
		qp_free(v, v->qps[--v->nqps]);
	while (v->nsrqs)
		srq_free(v, v->srqs[--v->nsrqs]);
	while (v->ncqs)
		cq_free(v, v->cqs[--v->ncqs]);
	ibemu__vs_xrcd_close_all(v);
	for (i = 0; i < v->nmrs; i++) {
		ibemu_tp_mr_dereg(tp, v->mrs[i].lkey);
		ibemu__vs_mr_drop(v, v->mrs[i].handle);
	}
	ibemu__vs_mem_close(v);
	ibemu__vs_rule_close(v);
	for (i = 0; i < v->npds; i++)
		ibemu_tp_pd_free(tp, v->pds[i]);
	for (pp = &v->hca->verbs; *pp; pp = &(*pp)->next) {
		if (*pp == v) {
			*pp = v->next;
			break;
		}
	}
	munmap(v->page, IBEMU_VERBS_PAGE);
	close(v->async_fd);
	ibemu__vs_unhold(v, &v->held); /* the context, PDs and MRs */
	ibemu__sess_proc_put(c->s, v->proc);
	free(v->qps);
	free(v->srqs);
	free(v->cqs);
	free(v->mrs);
	free(v->pds);
	free(v);
	c->verbs = NULL;
	ibemu_daemon_pump(c->s->d);
}

pid_t ibemu__sess_qp_pid(const struct ibemu_daemon *d, uint32_t node,
			 uint32_t qpn)
{
	struct ibemu_sess_hca *h = d->sess ? d->sess->hcas[node] : NULL;
	struct ibemu_sess_verbs *v;

	for (v = h ? h->verbs : NULL; v; v = v->next)
		if (ibemu__vs_qp_find(v, qpn, NULL))
			return v->c->pid;
	return 0;
}

struct ibemu_tp *ibemu__sess_hca_tp(const struct ibemu_daemon *d, uint32_t node)
{
	struct ibemu_sess_hca *h = d->sess ? d->sess->hcas[node] : NULL;

	return h ? h->tp : NULL;
}

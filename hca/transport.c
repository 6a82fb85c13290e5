// SPDX-License-Identifier: MIT
/*
 * The QP transport of one HCA: its objects (PDs, MRs, CQ ids, SRQs, the QP
 * table) and its ports. It attaches every port of its node to the engine
 * (struct ibemu_port_ops): the engine pulls packets from it when a link is
 * free, hands it packets whose tail arrived and fires its timers; the
 * queue pairs (transport_qp.c) do the rest with the requester
 * (transport_req.c) and the responder (transport_resp.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_int.h"
#include "util.h"

/* Stubs of the upper ops. */

static void stub_cqe(void *ctx, uint32_t cq, const struct ibemu_tp_cqe *c)
{
	(void)ctx;
	(void)cq;
	(void)c;
}

static void stub_async(void *ctx, enum ibemu_event_type event, uint32_t id)
{
	(void)ctx;
	(void)event;
	(void)id;
}

static void stub_mad_recv(void *ctx, uint32_t port,
			  const struct ibemu_mad_msg *m)
{
	(void)ctx;
	(void)port;
	(void)m;
}

static int stub_copy(void *ctx, const struct ibemu_tp_mem *dst,
		     const struct ibemu_tp_mem *src, uint64_t len)
{
	(void)ctx;
	(void)dst;
	(void)src;
	(void)len;
	return -EOPNOTSUPP;
}

static int stub_read(void *ctx, const struct ibemu_tp_mem *src, void *buf,
		     uint64_t len)
{
	(void)ctx;
	(void)src;
	(void)buf;
	(void)len;
	return -EOPNOTSUPP;
}

static int stub_write(void *ctx, const struct ibemu_tp_mem *dst,
		      const void *buf, uint64_t len)
{
	(void)ctx;
	(void)dst;
	(void)buf;
	(void)len;
	return -EOPNOTSUPP;
}

static int stub_atomic(void *ctx, const struct ibemu_tp_mem *m, int opcode,
		       uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	(void)ctx;
	(void)m;
	(void)opcode;
	(void)compare_add;
	(void)swap;
	(void)orig;
	return -EOPNOTSUPP;
}

/* Tables of objects by id: a slot array, free slots NULL. */

void *ibemu__tp_table_get(const struct tp_table *t, uint32_t id)
{
	return id < t->n ? t->v[id] : NULL;
}

int ibemu__tp_table_add(struct tp_table *t, uint32_t first, void *p,
			uint32_t *id)
{
	uint32_t i;

	for (i = first; i < t->n; i++)
		if (!t->v[i])
			break;
	if (i >= t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;
		void **v;

		while (cap <= i)
			cap *= 2;
		v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + t->cap, 0, (cap - t->cap) * sizeof(*v));
		t->v = v;
		t->cap = cap;
	}
	t->v[i] = p;
	if (i >= t->n)
		t->n = i + 1;
	*id = i;
	return 0;
}

void ibemu__tp_table_del(struct tp_table *t, uint32_t id)
{
	if (id < t->n)
		t->v[id] = NULL;
}

static void table_fini(struct tp_table *t)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

struct tp_qp *ibemu__tp_qp(const struct ibemu_tp *tp, uint32_t qpn)
{
	return ibemu__tp_table_get(&tp->qps, qpn);
}

/* The domain and its message records. */

int ibemu_tp_domain_create(struct ibemu_engine *e, struct ibemu_tp_domain **out)
{
	struct ibemu_tp_domain *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->e = e;
	*out = d;
	return 0;
}

static void msg_free(struct ibemu_tp_domain *d, struct tp_msg *m)
{
	if (m->dom_prev)
		m->dom_prev->dom_next = m->dom_next;
	else
		d->msgs = m->dom_next;
	if (m->dom_next)
		m->dom_next->dom_prev = m->dom_prev;
	free(m->inline_buf);
	free(m->sge);
	free(m->seg);
	free(m);
}

void ibemu_tp_domain_destroy(struct ibemu_tp_domain *d)
{
	if (!d)
		return;
	while (d->msgs)
		msg_free(d, d->msgs);
	free(d);
}

/* Frees 'm' once neither its requester nor a packet needs it. */
void ibemu__tp_msg_put(struct ibemu_tp_domain *d, struct tp_msg *m)
{
	if (m->req_done && !m->inflight)
		msg_free(d, m);
}

/* Ports. */

static struct ibemu_pkt *tp_pull(void *ctx, uint32_t port,
				 const uint16_t *credits, int *blocked)
{
	struct ibemu_tp *tp = ctx;
	unsigned num = port - tp->first_port + 1;
	uint32_t n = tp->qps.n, i, k;
	uint64_t wait = 0, wake = UINT64_MAX;
	struct ibemu_pkt *pkt;
	struct tp_qp *qp;
	int cc;

	if (!n)
		return NULL;
	/* Nothing is throttled until a CC manager configures the port
	 * (A10.4.3.8): then one lookup a pull is all it costs. */
	cc = ibemu_hca_cc(tp->e, port, 0) != NULL;
	/* Round robin over the QPs of the port; a QP's CNPs, then its
	 * responses (ACKs, READ data), go before its own requests. A QP
	 * whose congestion control delay runs sends no data until then. */
	for (i = 0; i < n; i++) {
		k = (tp->rr[num] + i) % n;
		qp = tp->qps.v[k];
		if (!qp || qp->port != port)
			continue;
		if (cc) {
			wait = ibemu__tp_cc_wait(tp, qp);
			if (wait && wait < wake)
				wake = wait;
		}
		pkt = qp->cnp_head
			      ? ibemu__tp_cnp_pull(tp, qp, credits, blocked)
			      : NULL;
		if (!pkt)
			pkt = ibemu__tp_resp_pull(tp, qp, credits, blocked,
						  wait != 0);
		if (!pkt && !wait)
			pkt = ibemu__tp_req_pull(tp, qp, credits, blocked);
		if (pkt) {
			if (cc)
				ibemu__tp_cc_sent(tp, qp, pkt);
			tp->rr[num] = (k + 1) % n;
			return pkt;
		}
	}
	/* The port pulls again when the first throttled QP may send. */
	if (wake != UINT64_MAX)
		ibemu__tp_cc_arm(tp, port, wake);
	return NULL;
}

static int is_response(uint8_t opcode)
{
	uint8_t op = opcode & 0x1f;

	return tp_opcode_rc(opcode) && op >= OP_READ_RESP_FIRST &&
	       op <= OP_ATOMIC_ACK;
}

/* Hands 'pkt' to the QP it names (pkt->dqpn), if it may take it. */
static void deliver_to_qp(struct ibemu_tp *tp, uint32_t port,
			  struct ibemu_pkt *pkt)
{
	struct tp_msg *m = (struct tp_msg *)(uintptr_t)pkt->cookie;
	struct tp_qp *qp = ibemu__tp_qp(tp, pkt->dqpn);

	/* IBA 9.6.1.1, 10.9.3: a packet whose P_Key does not match the
	 * one of the QP it names is dropped silently and counted in the
	 * port's P_KeyViolations. */
	if (qp && qp->port == port &&
	    !ibemu__tp_pkey_match(ibemu__tp_pkey(tp, qp), pkt->pkey)) {
		ibemu_engine_count_violation(tp->e, port,
					     IBEMU_CNT_P_KEY_VIOLATIONS);
		qp = NULL;
	}
	/* Congestion notifications first (A10.3): a CNP carries nothing
	 * else, a FECN is answered whatever becomes of the packet. */
	if (qp && qp->port == port &&
	    (pkt->fecn || pkt->becn || pkt->opcode == IBEMU_OPCODE_CNP) &&
	    ibemu__tp_cc_recv(tp, qp, pkt, m))
		qp = NULL;
	/* A request whose requester is gone (its QP destroyed) names no
	 * data any more: as if it never arrived; but a UD message's bytes
	 * were taken as it left (take_payload), so it lands as the packet
	 * on the wire would (a sender that exits right after its UD sends
	 * completed, as multicast senders do). */
	if (qp && qp->port == port &&
	    (!m || m->tp || is_response(pkt->opcode) ||
	     ((pkt->opcode & 0xe0) == OP_UD && m->is_inline))) {
		if (is_response(pkt->opcode))
			ibemu__tp_req_recv(tp, qp, pkt);
		else
			ibemu__tp_resp_recv(tp, qp, pkt);
	}
}

static void deliver_now(struct ibemu_tp *tp, uint32_t port,
			struct ibemu_pkt *pkt)
{
	struct tp_msg *m = (struct tp_msg *)(uintptr_t)pkt->cookie;

	/* IBA 10.5: a multicast packet goes to every QP of the port
	 * attached to its group (none: dropped), a copy each. */
	if (ibemu_lid_is_multicast(pkt->dlid))
		ibemu__tp_mcast_deliver(tp, port, pkt, deliver_to_qp);
	else
		deliver_to_qp(tp, port, pkt);
	if (m) {
		IBEMU_BUG_ON(!m->inflight);
		m->inflight--;
		ibemu__tp_msg_put(tp->d, m);
	}
	ibemu_engine_pkt_free(tp->e, pkt);
}

/* Whether an arrival ends with a CQE written: the last packet of a SEND
 * or of a WRITE with immediate, a READ's last response, an atomic's
 * answer, an ACK (the requester's completion). */
static int ends_with_cqe(const struct ibemu_pkt *pkt)
{
	switch (pkt->opcode & 0x1f) {
	case OP_SEND_LAST:
	case OP_SEND_LAST_IMM:
	case OP_SEND_ONLY:
	case OP_SEND_ONLY_IMM:
	case OP_WRITE_LAST_IMM:
	case OP_WRITE_ONLY_IMM:
	case OP_READ_RESP_LAST:
	case OP_READ_RESP_ONLY:
	case OP_ATOMIC_ACK:
	case OP_ACK:
		return pkt->opcode != IBEMU_OPCODE_CNP;
	default:
		return 0;
	}
}

static uint32_t pkt_payload(const struct ibemu_pkt *pkt)
{
	uint32_t around = pkt->hdr_bytes + IBEMU_ICRC_BYTES + IBEMU_VCRC_BYTES;

	return pkt->wire_bytes > around ? pkt->wire_bytes - around : 0;
}

/*
 * Under a host model an arrival acts once its payload and CQE are in
 * host memory (ibemu_host_recv()): held until then, in arrival order,
 * one engine timer for the head of the line.
 */
static void rx_hold(struct ibemu_tp *tp, uint32_t port, struct ibemu_pkt *pkt)
{
	uint64_t now = ibemu_engine_now(tp->e), t;

	/* Host buffers are taken as aligned (address 0): where a program's
	 * allocator put them differs from run to run, virtual time may not. */
	t = ibemu_host_recv(tp->hm, &tp->hs, now,
			    ibemu__tp_rx_rwqe_in(tp, pkt, now), 0,
			    pkt_payload(pkt), ends_with_cqe(pkt));

	if (t < tp->rx_last)
		t = tp->rx_last;
	tp->rx_last = t;
	pkt->t_tail = t;
	pkt->out_port = (uint8_t)(port - tp->first_port + 1);
	pkt->next = NULL;
	if (tp->rx_tail) {
		tp->rx_tail->next = pkt;
	} else {
		tp->rx_head = pkt;
		ibemu_engine_timer(tp->e, tp->first_port, t,
				   (uint64_t)TIMER_RX << 56);
	}
	tp->rx_tail = pkt;
}

static void rx_release(struct ibemu_tp *tp)
{
	uint64_t now = ibemu_engine_now(tp->e);
	struct ibemu_pkt *pkt;

	while ((pkt = tp->rx_head) && pkt->t_tail <= now) {
		tp->rx_head = pkt->next;
		if (!tp->rx_head)
			tp->rx_tail = NULL;
		pkt->next = NULL;
		ibemu__tp_rx_unhold(tp, pkt);
		deliver_now(tp, tp->first_port + pkt->out_port - 1, pkt);
	}
	if (tp->rx_head)
		ibemu_engine_timer(tp->e, tp->first_port, tp->rx_head->t_tail,
				   (uint64_t)TIMER_RX << 56);
}

/* Held arrivals of a transport going away: as if they never came. */
static void rx_drop(struct ibemu_tp *tp)
{
	struct ibemu_pkt *pkt;
	struct tp_msg *m;

	while ((pkt = tp->rx_head)) {
		tp->rx_head = pkt->next;
		ibemu__tp_rx_unhold(tp, pkt);
		m = (struct tp_msg *)(uintptr_t)pkt->cookie;
		if (m) {
			m->inflight--;
			ibemu__tp_msg_put(tp->d, m);
		}
		ibemu_engine_pkt_free(tp->e, pkt);
	}
	tp->rx_tail = NULL;
}

static void tp_deliver(void *ctx, uint32_t port, struct ibemu_pkt *pkt)
{
	struct ibemu_tp *tp = ctx;

	if (tp->hm)
		rx_hold(tp, port, pkt);
	else
		deliver_now(tp, port, pkt);
}

static void tp_mad_recv(void *ctx, uint32_t port, const struct ibemu_mad_msg *m)
{
	struct ibemu_tp *tp = ctx;

	tp->ops.mad_recv(tp->ctx, port - tp->first_port + 1, m);
}

void ibemu__tp_timer_at(struct ibemu_tp *tp, struct tp_qp *qp, uint64_t when)
{
	/* One engine timer per QP at a time: an earlier one re-arms. */
	if (qp->timer_at <= when)
		return;
	qp->timer_at = when;
	ibemu_engine_timer(tp->e, qp->port, when,
			   (uint64_t)TIMER_RTO << 56 | qp->qpn);
}

static void tp_timer(void *ctx, uint32_t port, uint64_t cookie)
{
	struct ibemu_tp *tp = ctx;
	struct tp_qp *qp;
	unsigned num;

	switch (cookie >> 56) {
	case TIMER_KICK:
		ibemu_engine_kick(tp->e, port);
		break;
	case TIMER_CC:
		/* A throttled QP may send: pull again (A10.3.1). */
		num = port - tp->first_port + 1;
		if (tp->cc_at[num] == ibemu_engine_now(tp->e))
			tp->cc_at[num] = UINT64_MAX;
		ibemu_engine_kick(tp->e, port);
		break;
	case TIMER_RX:
		rx_release(tp);
		break;
	case TIMER_PLAN:
		qp = ibemu__tp_qp(tp, (uint32_t)(cookie & PSN_MASK));
		if (qp)
			ibemu__tp_plan(tp, qp);
		break;
	case TIMER_RTO:
		qp = ibemu__tp_qp(tp, (uint32_t)(cookie & PSN_MASK));
		/* A timer superseded by an earlier one, or of a QP gone. */
		if (!qp || qp->timer_at != ibemu_engine_now(tp->e))
			break;
		qp->timer_at = UINT64_MAX;
		ibemu__tp_req_timer(tp, qp);
		break;
	}
}

static void tp_state_change(void *ctx, uint32_t port,
			    enum ibemu_port_state state,
			    enum ibemu_phys_state phys)
{
	struct ibemu_tp *tp = ctx;
	unsigned num = port - tp->first_port + 1;

	(void)phys;
	/*
	 * IBA 11.6.3: port events, as ibv_get_async_event gives them, once
	 * per change of the logical state (a physical change within Down is
	 * none). As mlx5 reports them: Active is PORT_ACTIVE, Down and Init
	 * are PORT_ERR, Armed is no event.
	 */
	if (num >= IBEMU_ARRAY_SIZE(tp->told) || tp->told[num] == state)
		return;
	tp->told[num] = state;
	if (state == IBEMU_PORT_ACTIVE)
		tp->ops.async(tp->ctx, IBEMU_EVENT_PORT_ACTIVE, num);
	else if (state != IBEMU_PORT_ARMED)
		tp->ops.async(tp->ctx, IBEMU_EVENT_PORT_ERR, num);
}

/*
 * A port no QP uses carries only the process's MADs (a subnet manager's
 * HCA): its data path is lent to a traffic study that asks, and QPs keep
 * off it until it comes back (ibemu__tp_port_free()).
 */
static int tp_lend(void *ctx, uint32_t port, enum ibemu_lend what)
{
	struct ibemu_tp *tp = ctx;
	unsigned num = port - tp->first_port + 1;
	struct tp_qp *qp;
	uint32_t i;

	if (what == IBEMU_LEND_RETURN) {
		tp->lent &= (uint8_t) ~(1u << num);
		return 0;
	}
	for (i = 0; i < tp->qps.n; i++) {
		qp = tp->qps.v[i];
		if (qp && qp->port == port)
			return -EBUSY;
	}
	if (what == IBEMU_LEND_TAKE)
		tp->lent |= (uint8_t)(1u << num);
	return 0;
}

int ibemu__tp_port_free(const struct ibemu_tp *tp, uint32_t port)
{
	return !(tp->lent & (1u << (port - tp->first_port + 1)));
}

/* A switch copied a packet of ours: one more names its message. */
static void tp_pkt_copied(const struct ibemu_pkt *orig, struct ibemu_pkt *copy)
{
	struct tp_msg *m = (struct tp_msg *)(uintptr_t)orig->cookie;

	(void)copy;
	if (m)
		m->inflight++;
}

static const struct ibemu_port_ops tp_port_ops = {
	.pull = tp_pull,
	.deliver = tp_deliver,
	.mad_recv = tp_mad_recv,
	.timer = tp_timer,
	.state_change = tp_state_change,
	.lend = tp_lend,
	.pkt_copied = tp_pkt_copied,
};

int ibemu_tp_create(struct ibemu_tp_domain *d, uint32_t node,
		    const struct ibemu_tp_ops *ops, void *ctx,
		    struct ibemu_tp **out)
{
	const struct ibemu_topo *t = ibemu_engine_topo(d->e);
	struct ibemu_tp *tp;
	unsigned p;
	int ret;

	if (node >= t->nnodes || t->nodes[node].type != IBEMU_NODE_HCA ||
	    t->nodes[node].nports >= IBEMU_ARRAY_SIZE(tp->rr))
		return -EINVAL;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	tp->d = d;
	tp->e = d->e;
	tp->node = node;
	tp->nports = t->nodes[node].nports;
	tp->first_port = ibemu_engine_port_index(d->e, node, 1);
	tp->hm = ibemu_host_model_get(ibemu_topo_hca_kind(t, node));
	if (tp->hm) {
		ibemu_host_model_tune(tp->hm, &t->hca_tuning, &tp->hm_tuned);
		tp->hm = &tp->hm_tuned;
	}
	tp->ops = *ops;
	tp->ctx = ctx;
	if (!tp->ops.cqe)
		tp->ops.cqe = stub_cqe;
	if (!tp->ops.async)
		tp->ops.async = stub_async;
	if (!tp->ops.mad_recv)
		tp->ops.mad_recv = stub_mad_recv;
	if (!tp->ops.copy)
		tp->ops.copy = stub_copy;
	if (!tp->ops.read)
		tp->ops.read = stub_read;
	if (!tp->ops.write)
		tp->ops.write = stub_write;
	if (!tp->ops.atomic)
		tp->ops.atomic = stub_atomic;
	for (p = 0; p < IBEMU_ARRAY_SIZE(tp->cc_at); p++)
		tp->cc_at[p] = UINT64_MAX;
	for (p = 1; p <= tp->nports; p++) {
		tp->told[p] =
			ibemu_engine_port_state(d->e, tp->first_port + p - 1);
		ret = ibemu_engine_port_attach(d->e, tp->first_port + p - 1,
					       &tp_port_ops, tp);
		if (ret)
			goto err_attach;
	}
	*out = tp;
	return 0;

err_attach:
	while (--p >= 1)
		ibemu_engine_port_detach(d->e, tp->first_port + p - 1);
	free(tp);
	return ret;
}

void ibemu_tp_destroy(struct ibemu_tp *tp)
{
	struct tp_msg *m;
	uint32_t i;
	unsigned p;

	if (!tp)
		return;
	for (p = 1; p <= tp->nports; p++)
		ibemu_engine_port_detach(tp->e, tp->first_port + p - 1);
	rx_drop(tp);
	/* Completed sends whose packets are still on the wire. */
	for (m = tp->d->msgs; m; m = m->dom_next)
		if (m->tp == tp)
			m->tp = NULL;
	for (i = 0; i < tp->qps.n; i++)
		if (tp->qps.v[i]) {
			struct tp_qp *qp = tp->qps.v[i];

			qp->opens = 1; /* every handle goes with it */
			ibemu_tp_qp_destroy(tp, i);
		}
	for (i = 0; i < tp->srqs.n; i++)
		if (tp->srqs.v[i]) {
			struct tp_srq *s = tp->srqs.v[i];

			s->users = 0;
			ibemu_tp_srq_destroy(tp, i);
		}
	table_fini(&tp->qps);
	table_fini(&tp->srqs);
	table_fini(&tp->mrs);
	table_fini(&tp->cqs);
	table_fini(&tp->pds);
	ibemu__tp_xrcd_fini(tp);
	free(tp->mc);
	free(tp);
}

struct ibemu_engine *ibemu_tp_engine(const struct ibemu_tp *tp)
{
	return tp->e;
}

uint32_t ibemu_tp_node(const struct ibemu_tp *tp)
{
	return tp->node;
}

void ibemu__tp_cqe(struct ibemu_tp *tp, uint32_t cq,
		   const struct ibemu_tp_cqe *c)
{
	const struct tp_qp *qp = ibemu__tp_qp(tp, c->qp_num);
	struct ibemu_tp_cqe out = *c;

	if (qp && qp->type == IBEMU_QPT_XRC_RECV) {
		out.srq_uctx = qp->srq ? qp->srq->uctx : NULL;
		out.rq_queued = qp->srq ? qp->srq->rq.n : 0;
	} else if (qp) {
		out.qp_uctx = qp->uctx;
		out.sq_queued = qp->sq_n;
		out.rq_queued = qp->srq ? qp->srq->rq.n : qp->rq.n;
	}
	tp->ops.cqe(tp->ctx, cq, &out);
}

/* P_Keys (IBA 10.9.3): the base (15 bits) must match and at least one
 * of the two be a full member. */

int ibemu__tp_pkey_match(uint16_t a, uint16_t b)
{
	if (!(a & 0x7fff) || (a & 0x7fff) != (b & 0x7fff))
		return 0;
	return (a | b) & 0x8000 ? 1 : 0;
}

/* The P_Key a QP sends with: its P_Key index into its port's table. */
uint16_t ibemu__tp_pkey(const struct ibemu_tp *tp, const struct tp_qp *qp)
{
	uint16_t keys[128];
	unsigned n, at = qp->attr.pkey_index;

	/* Copies the entries up to the QP's only: this runs per packet. */
	if (at >= IBEMU_ARRAY_SIZE(keys))
		return 0xffff;
	n = ibemu_engine_pkeys(tp->e, qp->port, keys, at + 1);
	return at < n ? keys[at] : 0xffff;
}

/* Protection domains. */

int ibemu_tp_pd_alloc(struct ibemu_tp *tp, uint32_t *pd)
{
	struct tp_pd *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	ret = ibemu__tp_table_add(&tp->pds, 1, p, pd);
	if (ret)
		free(p);
	return ret;
}

int ibemu_tp_pd_free(struct ibemu_tp *tp, uint32_t pd)
{
	struct tp_pd *p = ibemu__tp_table_get(&tp->pds, pd);

	if (!p)
		return -EINVAL;
	if (p->users)
		return -EBUSY;
	ibemu__tp_table_del(&tp->pds, pd);
	free(p);
	return 0;
}

/* Memory regions: key = slot << 8 | a tag that changes at every
 * registration, so a stale key does not name the slot's next MR. */

int ibemu_tp_mr_reg(struct ibemu_tp *tp, uint32_t pd, uint64_t addr,
		    uint64_t len, uint32_t access, uint64_t handle,
		    uint32_t *lkey, uint32_t *rkey)
{
	struct tp_pd *p = ibemu__tp_table_get(&tp->pds, pd);
	struct tp_mr *mr;
	uint32_t id;
	int ret;

	if (!p || addr + len < addr || (access & ~0xfu))
		return -EINVAL;
	/* IBA 10.6.3.1: remote write and atomic need local write. */
	if ((access &
	     (IBEMU_ACCESS_REMOTE_WRITE | IBEMU_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBEMU_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	ret = ibemu__tp_table_add(&tp->mrs, 1, mr, &id);
	if (ret || id > 0xffffff) {
		if (!ret)
			ibemu__tp_table_del(&tp->mrs, id);
		free(mr);
		return ret ? ret : -ENOMEM;
	}
	mr->pd = pd;
	mr->access = access;
	mr->addr = addr;
	mr->len = len;
	mr->handle = handle;
	mr->key = id << 8 | tp->key_tag++;
	p->users++;
	*lkey = mr->key;
	*rkey = mr->key;
	return 0;
}

static struct tp_mr *mr_of_key(const struct ibemu_tp *tp, uint32_t key)
{
	struct tp_mr *mr = ibemu__tp_table_get(&tp->mrs, key >> 8);

	return mr && mr->key == key ? mr : NULL;
}

int ibemu_tp_mr_dereg(struct ibemu_tp *tp, uint32_t lkey)
{
	struct tp_mr *mr = mr_of_key(tp, lkey);
	struct tp_pd *p;
	uint32_t i;

	if (!mr)
		return -EINVAL;
	p = ibemu__tp_table_get(&tp->pds, mr->pd);
	p->users--;
	ibemu__tp_table_del(&tp->mrs, lkey >> 8);
	/* A barrier: the work under way that names it fails now. */
	for (i = 0; i < tp->qps.n; i++) {
		struct tp_qp *qp = tp->qps.v[i];

		if (qp && qp->pd == mr->pd)
			ibemu__tp_req_mr_gone(tp, qp, mr->handle);
	}
	free(mr);
	return 0;
}

const struct tp_mr *ibemu__tp_mr_check(const struct ibemu_tp *tp, uint32_t key,
				       uint32_t pd, uint64_t addr, uint64_t len,
				       uint32_t access)
{
	const struct tp_mr *mr = mr_of_key(tp, key);

	if (!mr || mr->pd != pd || (mr->access & access) != access)
		return NULL;
	if (addr < mr->addr || addr + len < addr ||
	    addr + len > mr->addr + mr->len)
		return NULL;
	return mr;
}

/* Completion queue ids. */

int ibemu_tp_cq_create(struct ibemu_tp *tp, uint32_t *cq)
{
	struct tp_cq *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	ret = ibemu__tp_table_add(&tp->cqs, 1, c, cq);
	if (ret)
		free(c);
	return ret;
}

int ibemu_tp_cq_destroy(struct ibemu_tp *tp, uint32_t cq)
{
	struct tp_cq *c = ibemu__tp_table_get(&tp->cqs, cq);

	if (!c)
		return -EINVAL;
	if (c->users)
		return -EBUSY;
	ibemu__tp_table_del(&tp->cqs, cq);
	free(c);
	return 0;
}

/* Shared receive queues. */

int ibemu_tp_srq_create(struct ibemu_tp *tp, uint32_t pd,
			const struct ibemu_tp_srq_attr *attr, uint32_t *srq)
{
	struct tp_pd *p = ibemu__tp_table_get(&tp->pds, pd);
	struct tp_srq *s;
	int ret;

	if (!p || !attr->max_wr || attr->max_wr > IBEMU_TP_MAX_WR ||
	    attr->max_sge > IBEMU_TP_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = ibemu__tp_table_add(&tp->srqs, 1, s, srq);
	if (ret) {
		free(s);
		return ret;
	}
	s->id = *srq;
	s->pd = pd;
	s->limit = attr->srq_limit;
	s->rq.max = attr->max_wr;
	s->rq.max_sge = attr->max_sge ? attr->max_sge : 1;
	p->users++;
	return 0;
}

int ibemu_tp_srq_modify(struct ibemu_tp *tp, uint32_t srq, uint32_t limit)
{
	struct tp_srq *s = ibemu__tp_table_get(&tp->srqs, srq);

	if (!s || limit > s->rq.max)
		return -EINVAL;
	s->limit = limit;
	return 0;
}

int ibemu_tp_srq_query(struct ibemu_tp *tp, uint32_t srq,
		       struct ibemu_tp_srq_attr *out)
{
	struct tp_srq *s = ibemu__tp_table_get(&tp->srqs, srq);

	if (!s)
		return -EINVAL;
	out->max_wr = s->rq.max;
	out->max_sge = s->rq.max_sge;
	out->srq_limit = s->limit;
	return 0;
}

int ibemu_tp_srq_destroy(struct ibemu_tp *tp, uint32_t srq)
{
	struct tp_srq *s = ibemu__tp_table_get(&tp->srqs, srq);
	struct tp_rwqe *w;
	struct tp_pd *p;

	if (!s)
		return -EINVAL;
	if (s->users)
		return -EBUSY;
	if (s->xrcd)
		ibemu__tp_xrc_srq_gone(tp, s);
	while ((w = s->rq.head)) {
		s->rq.head = w->next;
		free(w);
	}
	p = ibemu__tp_table_get(&tp->pds, s->pd);
	if (p)
		p->users--;
	ibemu__tp_table_del(&tp->srqs, srq);
	free(s);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The transport's upper layer for verbs streams (struct ibemu_tp_ops):
 * completions written into the CQ rings and published, async events, MADs
 * for umad processes, and the payload moved between processes with
 * process_vm_readv/writev, once per message.
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

/* --- the transport's upper ops -------------------------------------- */

static struct ibemu_sess_verbs *cq_owner(struct ibemu_sess_hca *h, uint32_t id,
					 struct vcq **out)
{
	struct ibemu_sess_verbs *v;

	for (v = h->verbs; v; v = v->next)
		if ((*out = ibemu__vs_cq_find(v, id, NULL)))
			return v;
	return NULL;
}

/*
 * Makes the completions written into CQ 'q' since the last time visible
 * (the producer index), raises the event of an armed CQ and counts the
 * hand-off. Under the time rule this waits until the engine stops
 * (ibemu__sess_flush), so that the process finds every completion of one
 * virtual time together, whenever it looks.
 */
static void cq_publish(struct ibemu_sess_verbs *v, struct vcq *q)
{
	const struct ibemu_verbs_cqe *ce;
	uint32_t i, arm, fire = 0;
	uint64_t one = 1;
	ssize_t n;
	int was;

	if (q->published == q->ring.idx || q->error)
		return;
	was = ibemu__vs_handoff_begin(v);
	__atomic_store_n(&q->ring.hdr->prod, q->ring.idx, __ATOMIC_SEQ_CST);
	/*
	 * The producer index before the read of 'arm', against the process's
	 * store of 'arm' before its poll reads the index (Dekker's protocol,
	 * as for 'sleeps'): without the fence both can miss, the process
	 * blocking for an event the daemon never raises.
	 *
	 * IBA 11.4.2.2: an armed CQ raises one event; one armed for
	 * solicited completions only at a receive whose message had SE
	 * set, or at an error completion.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	arm = __atomic_load_n(&q->ring.hdr->arm, __ATOMIC_SEQ_CST);
	for (i = q->published; arm && i != q->ring.idx && !fire; i++) {
		ce = ibemu__vs_ring_ent(&q->ring, i);
		fire = arm == 1 || ce->solicited || ce->status;
	}
	ce = ibemu__vs_ring_ent(&q->ring, q->published);
	q->published = q->ring.idx;
	if (fire &&
	    __atomic_compare_exchange_n(&q->ring.hdr->arm, &arm, 0, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&q->ring.hdr->events, 1, __ATOMIC_RELEASE);
		if (q->chan_fd >= 0) {
			n = write(q->chan_fd, &one, sizeof(one));
			(void)n;
		}
	}
	ibemu__vs_handoff(v, was, ce->time_ps);
}

static void tp_cqe_cb(void *ctx, uint32_t cq, const struct ibemu_tp_cqe *e)
{
	struct ibemu_sess_hca *h = ctx;
	struct ibemu_daemon *d = h->s->d;
	struct ibemu_sess_verbs *v;
	struct ibemu_verbs_cqe *out;
	struct vcq *q;
	uint32_t cons;

	v = cq_owner(h, cq, &q);
	if (!v || q->error)
		return;
	cons = __atomic_load_n(&q->ring.hdr->cons, __ATOMIC_ACQUIRE);
	if (q->ring.idx - cons > q->ring.size) {
		ibemu__vs_cq_fail(v, q, "consumer index past the producer");
		return;
	}
	if (q->ring.idx - cons == q->ring.size) {
		/* IBA 11.4.2.1: an overrun CQ goes into error. */
		ibemu__vs_cq_fail(v, q, "completion queue overrun");
		return;
	}
	out = ibemu__vs_ring_ent(&q->ring, q->ring.idx);
	memset(out, 0, sizeof(*out));
	out->wr_id = e->wr_id;
	out->status = e->status;
	out->opcode = e->opcode;
	out->byte_len = e->byte_len;
	out->imm_data = e->imm_data;
	out->qp_num = e->qp_num;
	out->src_qp = e->src_qp;
	out->wc_flags = e->wc_flags;
	out->pkey_index = e->pkey_index;
	out->slid = e->slid;
	out->sl = e->sl;
	out->dlid_path_bits = e->dlid_path_bits;
	out->solicited = e->solicited;
	out->time_ps = ibemu_engine_now(d->engine);
	q->ring.idx++;
	if (e->qp_uctx)
		ibemu__vs_retire(v, e->qp_uctx, e);
	if (e->srq_uctx) {
		/* An XRC SRQ: its CQ is of its own stream (XSRQ_CREATE). */
		struct vsrq *s = e->srq_uctx;

		__atomic_store_n(&s->ring.hdr->cons, s->ring.idx - e->rq_queued,
				 __ATOMIC_RELEASE);
	}
	if (!ibemu__vs_rule_on(d)) {
		cq_publish(v, q);
		return;
	}
	h->s->verbs_dirty = 1;
	/* The process resumes at this time. */
	ibemu_rule_completion(&d->rule, out->time_ps);
}

void ibemu__sess_flush(struct ibemu_daemon *d)
{
	struct ibemu_sess_server *s = d->sess;
	struct ibemu_sess_conn *c;
	uint32_t i;

	if (!s || d->rule.mid_run)
		return;
	ibemu__sess_streams_flush(s);
	if (!s->verbs_dirty)
		return;
	s->verbs_dirty = 0;
	for (c = s->conns; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && c->verbs)
			for (i = 0; i < c->verbs->ncqs; i++)
				cq_publish(c->verbs, c->verbs->cqs[i]);
}

static void tp_async_cb(void *ctx, enum ibemu_event_type event, uint32_t id)
{
	struct ibemu_sess_hca *h = ctx;
	struct ibemu_sess_verbs *v;

	if (event == IBEMU_EVENT_PORT_ACTIVE || event == IBEMU_EVENT_PORT_ERR)
		ibemu__sess_sysfs_update(h->s, h->node, 1);
	for (v = h->verbs; v; v = v->next) {
		switch (event) {
		case IBEMU_EVENT_PORT_ACTIVE:
		case IBEMU_EVENT_PORT_ERR:
			ibemu__vs_async_raise(v, event, id);
			break;
		case IBEMU_EVENT_SRQ_LIMIT_REACHED:
			if (ibemu__vs_srq_find(v, id, NULL))
				ibemu__vs_async_raise(v, event, id);
			break;
		default:
			if (ibemu__vs_qp_find(v, id, NULL))
				ibemu__vs_async_raise(v, event, id);
		}
	}
}

static void tp_mad_recv_cb(void *ctx, uint32_t port,
			   const struct ibemu_mad_msg *m)
{
	struct ibemu_sess_hca *h = ctx;
	struct ibemu_engine *e = h->s->d->engine;

	ibemu__sess_mad_recv(h->s->d, ibemu_engine_port_index(e, h->node, port),
			     m);
}

const struct ibemu_tp_ops ibemu__sess_tp_ops = {
	.cqe = tp_cqe_cb,
	.async = tp_async_cb,
	.mad_recv = tp_mad_recv_cb,
	.copy = ibemu__vs_copy,
	.read = ibemu__vs_read,
	.write = ibemu__vs_write,
	.atomic = ibemu__vs_atomic,
};

// SPDX-License-Identifier: MIT
/*
 * The rings a verbs stream shares with its process (proto/verbs_proto.h):
 * mapping them from the process's memfds, draining the send and receive
 * queues into the transport with every index, length and key checked, and
 * what a ring the process corrupted costs it (its own QP or CQ in error,
 * nothing else).
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

/* --- rings ---------------------------------------------------------- */

static int is_pow2(uint32_t n)
{
	return n && !(n & (n - 1));
}

/*
 * Maps ring memfd 'fd' (consumed) of 'n' entries of 'esz' bytes. The memfd
 * must be sealed against shrinking: a process that could truncate it would
 * make the daemon fault on its next read.
 */
int ibemu__vs_ring_map(struct vring *r, int fd, uint32_t n, uint32_t esz,
		       uint32_t max)
{
	size_t bytes = IBEMU_VERBS_RING_BYTES(n, esz);
	struct stat st;
	int seals, ret = 0;

	memset(r, 0, sizeof(*r));
	if (!is_pow2(n) || n > max) {
		ret = -EINVAL;
		goto out;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) ||
	    (uint64_t)st.st_size < bytes) {
		ret = -EINVAL;
		goto out;
	}
	r->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		ret = -ENOMEM;
		goto out;
	}
	r->bytes = bytes;
	r->hdr = r->map;
	r->ents = (uint8_t *)r->map + sizeof(*r->hdr);
	r->size = n;
	r->esz = esz;
	r->idx = 0;
out:
	close(fd);
	return ret;
}

void ibemu__vs_ring_unmap(struct vring *r)
{
	if (r->map)
		munmap(r->map, r->bytes);
	r->map = NULL;
}

void *ibemu__vs_ring_ent(const struct vring *r, uint32_t i)
{
	return r->ents + (size_t)(i & (r->size - 1)) * r->esz;
}

/* --- async events and errors ---------------------------------------- */

void ibemu__vs_async_raise(struct ibemu_sess_verbs *v, uint32_t event,
			   uint32_t id)
{
	struct ibemu_verbs_ring_hdr *h = &v->page->async_hdr;
	uint32_t prod = h->prod,
		 cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);
	uint64_t one = 1;
	ssize_t n;

	/* A full ring (a process that never reads) loses the event. */
	uint64_t now = ibemu_engine_now(vs_daemon(v)->engine);
	int was;

	if (prod - cons >= IBEMU_VERBS_ASYNC_ENTRIES)
		return;
	was = ibemu__vs_handoff_begin(v);
	v->page->async[prod % IBEMU_VERBS_ASYNC_ENTRIES] =
		(struct ibemu_verbs_async){
			.event = event, .id = id, .time_ps = now};
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	n = write(v->async_fd, &one, sizeof(one));
	(void)n;
	ibemu__vs_handoff(v, was, now);
}

/* What the process wrote into its rings that no HCA would take. */
static void garbage(struct ibemu_sess_verbs *v, const char *what, uint32_t id,
		    const char *why)
{
	struct ibemu_sess_conn *c = v->c;

	ibemu_daemon_log_limited(vs_daemon(v), &v->garbage_log,
				 "process %ld: %s %u in error: %s",
				 (long)c->pid, what, id, why);
}

static void qp_fail(struct ibemu_sess_verbs *v, struct vqp *q, const char *why)
{
	struct ibemu_tp_qp_attr a = {.qp_state = IBEMU_QPS_ERR};

	if (q->error)
		return;
	q->error = 1;
	if (q->sq.hdr)
		__atomic_store_n(&q->sq.hdr->error, 1, __ATOMIC_RELEASE);
	if (q->rq.hdr)
		__atomic_store_n(&q->rq.hdr->error, 1, __ATOMIC_RELEASE);
	garbage(v, "QP", q->qpn, why);
	/* IBA 11.6.2: a QP that fails on its own goes to Error (its
	 * outstanding work flushes) and raises a catastrophic error. */
	ibemu_tp_qp_modify(v->hca->tp, q->qpn, &a, IBEMU_QP_STATE);
	ibemu__vs_async_raise(v, IBEMU_EVENT_QP_FATAL, q->qpn);
	ibemu_daemon_pump(vs_daemon(v));
}

void ibemu__vs_cq_fail(struct ibemu_sess_verbs *v, struct vcq *q,
		       const char *why)
{
	if (q->error)
		return;
	q->error = 1;
	__atomic_store_n(&q->ring.hdr->error, 1, __ATOMIC_RELEASE);
	garbage(v, "CQ", q->id, why);
	ibemu__vs_async_raise(v, EVENT_CQ_ERR, q->id);
}

/* --- draining the work queues --------------------------------------- */

/* New entries in queue 'r': how many, or -1 if its producer index lies. */
static int64_t ring_avail(const struct vring *r)
{
	uint32_t prod = __atomic_load_n(&r->hdr->prod, __ATOMIC_ACQUIRE);

	if (prod - r->idx > r->size)
		return -1;
	return prod - r->idx;
}

static int sges_copy(struct ibemu_tp_sge *out, const struct ibemu_verbs_sge *in,
		     uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		out[i].addr = in[i].addr;
		out[i].length = in[i].length;
		out[i].lkey = in[i].lkey;
	}
	return 0;
}

/*
 * The transport refused a WQE: beyond the queue's capacity (-ENOMEM: the
 * library never posts so many), or one the QP cannot take.
 */
static void refused(struct ibemu_sess_verbs *v, struct vqp *q, int ret,
		    const char *queue, uint32_t cap)
{
	char why[96];

	if (ret == -ENOMEM)
		snprintf(why, sizeof(why),
			 "more work requests than the QP was created for "
			 "(max_%s_wr %u)",
			 queue, cap);
	else
		snprintf(why, sizeof(why), "a %s WQE the QP cannot take",
			 queue);
	qp_fail(v, q, why);
}

/*
 * Hands send queue 'q''s new WQEs to the transport, at most '*budget'
 * (counted down). Returns 1 if it handed anything.
 */
static int sq_drain(struct ibemu_sess_verbs *v, struct vqp *q, uint32_t *budget)
{
	struct ibemu_tp_sge sg[IBEMU_VERBS_WQE_SGES];
	struct ibemu_verbs_swqe w;
	struct ibemu_tp_send_wr wr;
	int64_t n;
	int ret, did = 0;

	if (q->error || !q->sq.hdr)
		return 0;
	n = ring_avail(&q->sq);
	if (n < 0) {
		qp_fail(v, q, "send queue producer index past the ring");
		return 0;
	}
	for (; n > 0 && *budget; n--, --*budget) {
		/* Copied out first: the process may change it meanwhile. */
		memcpy(&w, ibemu__vs_ring_ent(&q->sq, q->sq.idx), sizeof(w));
		if (w.opcode > IBEMU_WR_ATOMIC_FETCH_AND_ADD) {
			qp_fail(v, q, "send WQE with an unknown opcode");
			return did;
		}
		if (w.stamp_ps > IBEMU_VERBS_MAX_STAMP_PS) {
			qp_fail(v, q, "send WQE stamped past any virtual time");
			return did;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = w.wr_id;
		wr.opcode = (uint8_t)w.opcode;
		wr.send_flags = w.send_flags;
		wr.imm_data = w.imm_data;
		wr.xrc_srqn = w.remote_qpn; /* XRC send QPs (verbs_proto.h) */
		if (w.send_flags & IBEMU_SEND_INLINE) {
			if (w.inline_len > IBEMU_VERBS_MAX_INLINE) {
				qp_fail(v, q, "inline data longer than 256");
				return did;
			}
			wr.inline_data = w.data;
			wr.inline_len = w.inline_len;
		} else {
			if (w.num_sge > IBEMU_VERBS_WQE_SGES) {
				qp_fail(v, q, "send WQE with too many SGEs");
				return did;
			}
			sges_copy(sg, w.sge, w.num_sge);
			wr.sg_list = sg;
			wr.num_sge = w.num_sge;
		}
		if (w.opcode == IBEMU_WR_ATOMIC_CMP_AND_SWP ||
		    w.opcode == IBEMU_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = w.remote_addr;
			wr.wr.atomic.rkey = w.rkey;
			wr.wr.atomic.compare_add = w.compare_add;
			wr.wr.atomic.swap = w.swap;
		} else if (w.opcode == IBEMU_WR_SEND ||
			   w.opcode == IBEMU_WR_SEND_WITH_IMM) {
			wr.wr.ud.ah.dlid = w.dlid;
			wr.wr.ud.ah.sl = w.sl;
			wr.wr.ud.ah.src_path_bits = w.src_path_bits;
			wr.wr.ud.ah.port_num = w.port_num;
			wr.wr.ud.remote_qpn = w.remote_qpn;
			wr.wr.ud.remote_qkey = w.remote_qkey;
		} else {
			wr.wr.rdma.remote_addr = w.remote_addr;
			wr.wr.rdma.rkey = w.rkey;
		}
		ret = ibemu__vs_rule_on(vs_daemon(v))
			      ? ibemu_tp_post_send_at(v->hca->tp, q->qpn, &wr,
						      w.stamp_ps)
			      : ibemu_tp_post_send(v->hca->tp, q->qpn, &wr);
		if (ret) {
			refused(v, q, ret, "send", q->max_send_wr);
			return did;
		}
		did = 1;
		q->sq.idx++;
	}
	return did;
}

/*
 * Drains receive ring 'r' into QP 'qpn' (srq 0) or SRQ 'srq', at most
 * '*budget' WQEs (counted down). Returns 1 if it handed anything to the
 * transport, 0 if nothing, -ENOMEM if the queue holds more than it was
 * created for, -EINVAL if the ring is garbage.
 */
static int rq_drain(struct ibemu_sess_verbs *v, struct vring *r, uint32_t qpn,
		    uint32_t srq, uint32_t *budget)
{
	struct ibemu_tp_sge sg[IBEMU_VERBS_WQE_SGES];
	struct ibemu_verbs_rwqe w;
	struct ibemu_tp_recv_wr wr;
	int64_t n = ring_avail(r);
	int ret, did = 0;
	uint64_t at;

	if (n < 0)
		return -EINVAL;
	for (; n > 0 && *budget; n--, --*budget) {
		memcpy(&w, ibemu__vs_ring_ent(r, r->idx), sizeof(w));
		if (w.num_sge > IBEMU_VERBS_WQE_SGES ||
		    w.stamp_ps > IBEMU_VERBS_MAX_STAMP_PS)
			return -EINVAL;
		sges_copy(sg, w.sge, w.num_sge);
		wr.wr_id = w.wr_id;
		wr.sg_list = sg;
		wr.num_sge = w.num_sge;
		at = ibemu__vs_rule_on(vs_daemon(v)) ? w.stamp_ps
						     : IBEMU_TP_AT_ONCE;
		ret = srq ? ibemu_tp_srq_post_recv_at(v->hca->tp, srq, &wr, at)
			  : ibemu_tp_post_recv_at(v->hca->tp, qpn, &wr, at);
		if (ret)
			return ret == -ENOMEM ? -ENOMEM : -EINVAL;
		did = 1;
		r->idx++;
	}
	return did;
}

/*
 * Drains every queue of stream 'v', at most '*budget' WQEs (counted
 * down); returns 1 if any work was taken.
 */
static int verbs_drain(struct ibemu_sess_verbs *v, uint32_t *budget)
{
	uint64_t posts = __atomic_load_n(&v->page->posts, __ATOMIC_ACQUIRE);
	uint32_t i;
	int did = 0, ret;

	/* Nothing posted since a look that took everything: a process that
	 * holds thousands of idle QPs costs nothing per turn. */
	if (posts == v->posts_seen && !v->drain_left)
		return 0;

	for (i = 0; i < v->nsrqs && *budget; i++) {
		struct vsrq *q = v->srqs[i];
		char why[96];

		if (q->error)
			continue;
		ret = rq_drain(v, &q->ring, 0, q->id, budget);
		if (ret < 0) {
			q->error = 1;
			__atomic_store_n(&q->ring.hdr->error, 1,
					 __ATOMIC_RELEASE);
			if (ret == -ENOMEM)
				snprintf(why, sizeof(why),
					 "more work requests than the SRQ "
					 "was created for (max_wr %u)",
					 q->max_wr);
			else
				snprintf(why, sizeof(why),
					 "bad receive WQE or index");
			garbage(v, "SRQ", q->id, why);
			ibemu__vs_async_raise(v, IBEMU_EVENT_SRQ_ERR, q->id);
		}
		did |= ret > 0;
	}
	for (i = 0; i < v->nqps && *budget; i++) {
		struct vqp *q = v->qps[i];

		if (q->rq.hdr && !q->error) {
			ret = rq_drain(v, &q->rq, q->qpn, 0, budget);
			if (ret == -ENOMEM)
				refused(v, q, ret, "recv", q->max_recv_wr);
			else if (ret < 0)
				qp_fail(v, q, "bad receive WQE or index");
			did |= ret > 0;
		}
		did |= sq_drain(v, q, budget);
	}
	/* The posts bumped before 'posts' was read are all taken, unless
	 * the budget ran out (a ring may hold more). */
	v->drain_left = !*budget;
	if (!v->drain_left)
		v->posts_seen = posts;
	return did;
}

/*
 * Completion 'e' of QP 'q' (of stream 'v') retired work: the ring slots
 * of what the transport no longer holds are free for the library again
 * ('cons' is what was handed over minus what is still queued).
 */
void ibemu__vs_retire(struct ibemu_sess_verbs *v, struct vqp *q,
		      const struct ibemu_tp_cqe *e)
{
	struct vsrq *s;

	if (q->sq.hdr)
		__atomic_store_n(&q->sq.hdr->cons, q->sq.idx - e->sq_queued,
				 __ATOMIC_RELEASE);
	if (q->rq.hdr)
		__atomic_store_n(&q->rq.hdr->cons, q->rq.idx - e->rq_queued,
				 __ATOMIC_RELEASE);
	else if ((s = ibemu__vs_srq_find(v, q->srq, NULL)))
		__atomic_store_n(&s->ring.hdr->cons, s->ring.idx - e->rq_queued,
				 __ATOMIC_RELEASE);
}

/* Whether a queue of 'v' has work the daemon has not taken. */
int ibemu__vs_verbs_pending(struct ibemu_sess_verbs *v)
{
	uint32_t i;

	if (__atomic_load_n(&v->page->posts, __ATOMIC_ACQUIRE) ==
		    v->posts_seen &&
	    !v->drain_left)
		return 0;

	for (i = 0; i < v->nqps; i++) {
		struct vqp *q = v->qps[i];

		if (q->error)
			continue;
		if ((q->sq.hdr && ring_avail(&q->sq) != 0) ||
		    (q->rq.hdr && ring_avail(&q->rq) != 0))
			return 1;
	}
	for (i = 0; i < v->nsrqs; i++)
		if (!v->srqs[i]->error && ring_avail(&v->srqs[i]->ring) != 0)
			return 1;
	return 0;
}

int ibemu__sess_drain(struct ibemu_daemon *d)
{
	uint32_t budget = IBEMU_SESS_DRAIN_BUDGET;
	struct ibemu_sess_conn *c;
	int did = 0;

	for (c = d->sess ? d->sess->conns : NULL; c && budget; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && !c->closing)
			did |= verbs_drain(c->verbs, &budget);
	if (!budget)
		did |= IBEMU_DAEMON_DRAIN_MORE;
	return did;
}

// SPDX-License-Identifier: MIT
/*
 * Verbs streams: what an ibv_context of an attached process is in the
 * daemon. Control calls (PD, MR, CQ, QP, SRQ) arrive on the stream and go
 * to the transport of the process's HCA after every id, length and key is
 * checked against the stream's own objects; work requests arrive through
 * rings in memory shared with the process (proto/verbs_proto.h), drained
 * whenever the loop turns, and completions go back the same way. Payload
 * moves between processes with process_vm_readv/writev, once per message.
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

#include "sess.h"

/* enum ibv_event_type's IBV_EVENT_CQ_ERR (transport.h has no CQ events:
 * the rings are the daemon's). */
#define EVENT_CQ_ERR 0

/* A ring mapped from a process's memfd. */
struct vring {
	void *map;
	size_t bytes;
	struct ibemu_verbs_ring_hdr *hdr;
	uint8_t *ents;
	uint32_t size; /* entries: the daemon's copy, never re-read */
	uint32_t esz;
	uint32_t idx; /* the daemon's index: cons of a queue, prod of a CQ */
};

struct vcq {
	uint32_t id;
	int chan_fd; /* the completion channel's eventfd, or -1 */
	int error;
	uint32_t published; /* the producer index the process may see */
	struct vring ring;
};

struct vqp {
	uint32_t qpn;
	uint32_t srq; /* 0: own receive queue */
	int error;
	struct vring sq, rq;
};

struct vsrq {
	uint32_t id;
	int error;
	struct vring ring;
};

struct ibemu_sess_verbs {
	struct ibemu_sess_conn *c; /* borrowed: the stream owns this */
	struct ibemu_sess_hca *hca;
	struct ibemu_sess_verbs *next; /* on hca->verbs */
	struct ibemu_verbs_page *page;
	int async_fd;
	uint32_t *pds, npds, pds_cap;
	uint32_t *mrs, nmrs, mrs_cap; /* lkeys */
	struct vcq **cqs;
	uint32_t ncqs, cqs_cap;
	struct vqp **qps;
	uint32_t nqps, qps_cap;
	struct vsrq **srqs;
	uint32_t nsrqs, srqs_cap;
	struct ibemu_log_limit garbage_log;
	/* The time rule: hand-offs so far (the page's 'handed'), the
	 * earliest clock the process can have since the last one that
	 * resumed it, and what the grace period watches. */
	uint64_t handed;
	uint64_t hand_ps;
	uint64_t idle_mark, idle_since_ms, idle_cpu;
	int idle_known, idle_cpu_known;
};

static struct ibemu_daemon *daemon_of(struct ibemu_sess_verbs *v)
{
	return v->c->s->d;
}

/* --- the time rule -------------------------------------------------- */

static int rule_on(const struct ibemu_daemon *d)
{
	return d->clock == IBEMU_CLOCK_QUIESCE;
}

/* Whether the process said it waits, having seen every hand-off. */
static int is_waiting(const struct ibemu_sess_verbs *v)
{
	return __atomic_load_n(&v->page->wait_seq, __ATOMIC_SEQ_CST) ==
	       v->handed + 1;
}

/*
 * A hand-off begins: bumps 'handing' before anything becomes visible to
 * the process, so that it never claims to wait on a count older than
 * what it saw. Returns whether the process waited.
 */
static int handoff_begin(struct ibemu_sess_verbs *v)
{
	int was = is_waiting(v);

	__atomic_store_n(&v->page->handing, v->handed + 1, __ATOMIC_SEQ_CST);
	return was;
}

/*
 * Something at virtual time 't' became visible to the process: it runs
 * from now on, with a clock of at least 't' if it was waiting. The engine
 * may still run until 't' plus the doorbell delay.
 */
static void handoff(struct ibemu_sess_verbs *v, int was_waiting, uint64_t t)
{
	struct ibemu_daemon *d = daemon_of(v);

	if (was_waiting && t > v->hand_ps)
		v->hand_ps = t;
	v->handed++;
	__atomic_store_n(&v->page->handed, v->handed, __ATOMIC_SEQ_CST);
	if (t + IBEMU_TP_DOORBELL_PS < d->run_cap)
		d->run_cap = t + IBEMU_TP_DOORBELL_PS;
}

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

static struct vcq *cq_find(struct ibemu_sess_verbs *v, uint32_t id, int *at)
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

static struct vqp *qp_find(struct ibemu_sess_verbs *v, uint32_t qpn, int *at)
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

static struct vsrq *srq_find(struct ibemu_sess_verbs *v, uint32_t id, int *at)
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
static int ring_map(struct vring *r, int fd, uint32_t n, uint32_t esz,
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

static void ring_unmap(struct vring *r)
{
	if (r->map)
		munmap(r->map, r->bytes);
	r->map = NULL;
}

static void *ring_ent(const struct vring *r, uint32_t i)
{
	return r->ents + (size_t)(i & (r->size - 1)) * r->esz;
}

/* --- async events and errors ---------------------------------------- */

static void async_raise(struct ibemu_sess_verbs *v, uint32_t event, uint32_t id)
{
	struct ibemu_verbs_ring_hdr *h = &v->page->async_hdr;
	uint32_t prod = h->prod,
		 cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);
	uint64_t one = 1;
	ssize_t n;

	/* A full ring (a process that never reads) loses the event. */
	uint64_t now = ibemu_engine_now(daemon_of(v)->engine);
	int was;

	if (prod - cons >= IBEMU_VERBS_ASYNC_ENTRIES)
		return;
	was = handoff_begin(v);
	v->page->async[prod % IBEMU_VERBS_ASYNC_ENTRIES] =
		(struct ibemu_verbs_async){
			.event = event, .id = id, .time_ps = now};
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	n = write(v->async_fd, &one, sizeof(one));
	(void)n;
	handoff(v, was, now);
}

/* What the process wrote into its rings that no HCA would take. */
static void garbage(struct ibemu_sess_verbs *v, const char *what, uint32_t id,
		    const char *why)
{
	struct ibemu_sess_conn *c = v->c;

	ibemu_daemon_log_limited(daemon_of(v), &v->garbage_log,
				 "process %ld: %s %u in error: %s",
				 (long)c->pid, what, id, why);
}

static void qp_fail(struct ibemu_sess_verbs *v, struct vqp *q, const char *why)
{
	struct ibemu_tp_qp_attr a = {.qp_state = IBEMU_QPS_ERR};

	if (q->error)
		return;
	q->error = 1;
	__atomic_store_n(&q->sq.hdr->error, 1, __ATOMIC_RELEASE);
	if (q->rq.hdr)
		__atomic_store_n(&q->rq.hdr->error, 1, __ATOMIC_RELEASE);
	garbage(v, "QP", q->qpn, why);
	/* IBA 11.6.2: a QP that fails on its own goes to Error (its
	 * outstanding work flushes) and raises a catastrophic error. */
	ibemu_tp_qp_modify(v->hca->tp, q->qpn, &a, IBEMU_QP_STATE);
	async_raise(v, IBEMU_EVENT_QP_FATAL, q->qpn);
	ibemu_daemon_pump(daemon_of(v));
}

static void cq_fail(struct ibemu_sess_verbs *v, struct vcq *q, const char *why)
{
	if (q->error)
		return;
	q->error = 1;
	__atomic_store_n(&q->ring.hdr->error, 1, __ATOMIC_RELEASE);
	garbage(v, "CQ", q->id, why);
	async_raise(v, EVENT_CQ_ERR, q->id);
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

/* Returns 1 if it handed anything to the transport. */
static int sq_drain(struct ibemu_sess_verbs *v, struct vqp *q)
{
	struct ibemu_tp_sge sg[IBEMU_VERBS_WQE_SGES];
	struct ibemu_verbs_swqe w;
	struct ibemu_tp_send_wr wr;
	int64_t n;
	int ret, did = 0;

	if (q->error)
		return 0;
	n = ring_avail(&q->sq);
	if (n < 0) {
		qp_fail(v, q, "send queue producer index past the ring");
		return 0;
	}
	while (n-- > 0) {
		/* Copied out first: the process may change it meanwhile. */
		memcpy(&w, ring_ent(&q->sq, q->sq.idx), sizeof(w));
		if (w.opcode > IBEMU_WR_ATOMIC_FETCH_AND_ADD) {
			qp_fail(v, q, "send WQE with an unknown opcode");
			return did;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = w.wr_id;
		wr.opcode = (uint8_t)w.opcode;
		wr.send_flags = w.send_flags;
		wr.imm_data = w.imm_data;
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
		ret = rule_on(daemon_of(v))
			      ? ibemu_tp_post_send_at(v->hca->tp, q->qpn, &wr,
						      w.stamp_ps)
			      : ibemu_tp_post_send(v->hca->tp, q->qpn, &wr);
		if (ret == -ENOMEM)
			break; /* the queue is full: later */
		if (ret) {
			qp_fail(v, q, "send WQE the QP cannot take");
			return did;
		}
		did = 1;
		q->sq.idx++;
		__atomic_store_n(&q->sq.hdr->cons, q->sq.idx, __ATOMIC_RELEASE);
	}
	return did;
}

/*
 * Drains receive ring 'r' into QP 'q' (srq NULL) or SRQ 'srq'. Returns 1
 * if it handed anything to the transport, -1 if the ring is garbage.
 */
static int rq_drain(struct ibemu_sess_verbs *v, struct vring *r, uint32_t qpn,
		    uint32_t srq)
{
	struct ibemu_tp_sge sg[IBEMU_VERBS_WQE_SGES];
	struct ibemu_verbs_rwqe w;
	struct ibemu_tp_recv_wr wr;
	int64_t n = ring_avail(r);
	int ret, did = 0;
	uint64_t at;

	if (n < 0)
		return -1;
	while (n-- > 0) {
		memcpy(&w, ring_ent(r, r->idx), sizeof(w));
		if (w.num_sge > IBEMU_VERBS_WQE_SGES)
			return -1;
		sges_copy(sg, w.sge, w.num_sge);
		wr.wr_id = w.wr_id;
		wr.sg_list = sg;
		wr.num_sge = w.num_sge;
		at = rule_on(daemon_of(v)) ? w.stamp_ps : IBEMU_TP_AT_ONCE;
		ret = srq ? ibemu_tp_srq_post_recv_at(v->hca->tp, srq, &wr, at)
			  : ibemu_tp_post_recv_at(v->hca->tp, qpn, &wr, at);
		if (ret == -ENOMEM)
			break;
		if (ret)
			return -1;
		did = 1;
		r->idx++;
		__atomic_store_n(&r->hdr->cons, r->idx, __ATOMIC_RELEASE);
	}
	return did;
}

/* Drains every queue of stream 'v'; returns 1 if any work was taken. */
static int verbs_drain(struct ibemu_sess_verbs *v)
{
	uint32_t i;
	int did = 0, ret;

	for (i = 0; i < v->nsrqs; i++) {
		struct vsrq *q = v->srqs[i];

		if (q->error)
			continue;
		ret = rq_drain(v, &q->ring, 0, q->id);
		if (ret < 0) {
			q->error = 1;
			__atomic_store_n(&q->ring.hdr->error, 1,
					 __ATOMIC_RELEASE);
			garbage(v, "SRQ", q->id, "bad receive WQE or index");
		}
		did |= ret > 0;
	}
	for (i = 0; i < v->nqps; i++) {
		struct vqp *q = v->qps[i];

		if (!q->srq && !q->error) {
			ret = rq_drain(v, &q->rq, q->qpn, 0);
			if (ret < 0)
				qp_fail(v, q, "bad receive WQE or index");
			did |= ret > 0;
		}
		did |= sq_drain(v, q);
	}
	return did;
}

/* Whether a queue of 'v' has work the daemon has not taken. */
static int verbs_pending(struct ibemu_sess_verbs *v)
{
	uint32_t i;

	for (i = 0; i < v->nqps; i++) {
		struct vqp *q = v->qps[i];

		if (q->error)
			continue;
		if (ring_avail(&q->sq) != 0 ||
		    (!q->srq && ring_avail(&q->rq) != 0))
			return 1;
	}
	for (i = 0; i < v->nsrqs; i++)
		if (!v->srqs[i]->error && ring_avail(&v->srqs[i]->ring) != 0)
			return 1;
	return 0;
}

int ibemu__sess_drain(struct ibemu_daemon *d)
{
	struct ibemu_sess_conn *c;
	int did = 0;

	for (c = d->sess ? d->sess->conns : NULL; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && !c->closing)
			did |= verbs_drain(c->verbs);
	return did;
}

static int drain_all(struct ibemu_sess_server *s)
{
	int did = ibemu__sess_drain(s->d);

	if (did)
		ibemu_daemon_pump(s->d);
	return did;
}

static void set_sleeps(struct ibemu_sess_server *s, uint32_t val)
{
	struct ibemu_sess_conn *c;

	for (c = s->conns; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && !c->closing)
			__atomic_store_n(&c->verbs->page->sleeps, val,
					 __ATOMIC_SEQ_CST);
}

/*
 * Before the loop may block: take what the rings hold, then publish that
 * the daemon sleeps and look once more (a post that raced with the flag
 * saw it clear and did not kick; the seq_cst store and loads order the two
 * sides as Dekker's protocol does).
 */
/*
 * Under the time rule: whether a process went waiting since the engine
 * last stopped (the horizon moved up), and if so, the engine runs again.
 * Returns 1 then.
 */
static int rule_pump(struct ibemu_sess_server *s)
{
	struct ibemu_daemon *d = s->d;
	pid_t presumed = 0;
	uint64_t h;

	if (!rule_on(d) || !ibemu_engine_pending(d->engine))
		return 0;
	h = ibemu__sess_horizon(d, &presumed);
	if (h <= d->last_horizon)
		return 0;
	d->last_horizon = h;
	ibemu_daemon_pump(d);
	return 1;
}

/*
 * Before the loop may block: take what the rings hold, make what the
 * engine wrote visible, then publish that the daemon sleeps and look once
 * more (a post, or a process going waiting, that raced with the flag saw
 * it clear and did not kick; the seq_cst stores and loads order the two
 * sides as Dekker's protocol does).
 */
static void prepare_cb(uv_prepare_t *h)
{
	struct ibemu_sess_server *s = h->data;
	struct ibemu_sess_conn *c;
	int again;

	drain_all(s);
	ibemu__sess_flush(s->d);
	rule_pump(s);
	if (uv_is_active((uv_handle_t *)&s->d->pump_idle))
		return; /* the loop will not block */
	do {
		set_sleeps(s, 1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		again = 0;
		for (c = s->conns; c; c = c->next)
			if (c->kind == IBEMU_SESS_CONN_VERBS && !c->closing &&
			    verbs_pending(c->verbs))
				again = 1;
		if (again) {
			set_sleeps(s, 0);
			drain_all(s);
		} else if (rule_pump(s)) {
			set_sleeps(s, 0);
			again = 1;
		}
		ibemu__sess_flush(s->d);
		if (again && uv_is_active((uv_handle_t *)&s->d->pump_idle))
			return;
	} while (again);
}

static void check_cb(uv_check_t *h)
{
	set_sleeps(h->data, 0);
}

void ibemu__sess_verbs_start(struct ibemu_sess_server *s)
{
	uv_prepare_init(&s->d->loop, &s->verbs_prepare);
	uv_check_init(&s->d->loop, &s->verbs_check);
	s->verbs_prepare.data = s;
	s->verbs_check.data = s;
	uv_prepare_start(&s->verbs_prepare, prepare_cb);
	uv_check_start(&s->verbs_check, check_cb);
}

void ibemu__sess_verbs_stop(struct ibemu_sess_server *s)
{
	uv_close((uv_handle_t *)&s->verbs_prepare, NULL);
	uv_close((uv_handle_t *)&s->verbs_check, NULL);
}

/* --- the transport's upper ops -------------------------------------- */

static struct ibemu_sess_verbs *cq_owner(struct ibemu_sess_hca *h, uint32_t id,
					 struct vcq **out)
{
	struct ibemu_sess_verbs *v;

	for (v = h->verbs; v; v = v->next)
		if ((*out = cq_find(v, id, NULL)))
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
	was = handoff_begin(v);
	__atomic_store_n(&q->ring.hdr->prod, q->ring.idx, __ATOMIC_SEQ_CST);
	/*
	 * The producer index before the read of 'arm', against the process's
	 * store of 'arm' before its poll reads the index (Dekker's protocol,
	 * as for 'sleeps'): without the fence both can miss, the process
	 * blocking for an event the daemon never raises.
	 *
	 * IBA 11.4.2.2: an armed CQ raises one event. The transport does
	 * not say which receives were solicited, so a CQ armed for
	 * solicited completions fires on any receive or error completion.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	arm = __atomic_load_n(&q->ring.hdr->arm, __ATOMIC_SEQ_CST);
	for (i = q->published; arm && i != q->ring.idx && !fire; i++) {
		ce = ring_ent(&q->ring, i);
		fire = arm == 1 || ce->opcode >= IBEMU_WC_RECV || ce->status;
	}
	ce = ring_ent(&q->ring, q->published);
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
	handoff(v, was, ce->time_ps);
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
		cq_fail(v, q, "consumer index past the producer");
		return;
	}
	if (q->ring.idx - cons == q->ring.size) {
		/* IBA 11.4.2.1: an overrun CQ goes into error. */
		cq_fail(v, q, "completion queue overrun");
		return;
	}
	out = ring_ent(&q->ring, q->ring.idx);
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
	out->time_ps = ibemu_engine_now(d->engine);
	q->ring.idx++;
	if (!rule_on(d)) {
		cq_publish(v, q);
		return;
	}
	h->s->verbs_dirty = 1;
	/* The process resumes at this time: the run stops a doorbell
	 * delay later, whatever it was allowed before. */
	if (out->time_ps + IBEMU_TP_DOORBELL_PS < d->run_cap)
		d->run_cap = out->time_ps + IBEMU_TP_DOORBELL_PS;
}

void ibemu__sess_flush(struct ibemu_daemon *d)
{
	struct ibemu_sess_server *s = d->sess;
	struct ibemu_sess_conn *c;
	uint32_t i;

	if (!s || !s->verbs_dirty || d->mid_run)
		return;
	s->verbs_dirty = 0;
	for (c = s->conns; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && c->verbs)
			for (i = 0; i < c->verbs->ncqs; i++)
				cq_publish(c->verbs, c->verbs->cqs[i]);
}

/*
 * CPU time (clock ticks, all threads) process 'pid' has used, or 0; its
 * main thread's state ('R' running, 'S' sleeping...) in *state.
 */
static uint64_t cpu_ticks(pid_t pid, char *state)
{
	unsigned long long ut = 0, st = 0;
	char path[64], line[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	/* After the name: state, then 10 fields, then utime and stime. */
	*state = 'R';
	if (!p || sscanf(p + 1,
			 " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
			 "%llu",
			 state, &ut, &st) != 3)
		return 0;
	return ut + st;
}

/*
 * The grace period: a running process that has made no verbs call and
 * been handed nothing for IBEMU_GRACE_MS of wall time, twice over, counts
 * as waiting if it used the CPU meanwhile (it spins, on memory an RDMA
 * WRITE fills) or sleeps in the kernel (in anything but verbs: a socket,
 * pause()). One runnable but not scheduled (a loaded host) does not: it
 * still runs, as far as the rule knows.
 */
static int grace_over(struct ibemu_sess_verbs *v, uint64_t now_ms)
{
	uint64_t mark, cpu;
	char state;

	mark = __atomic_load_n(&v->page->calls, __ATOMIC_RELAXED) +
	       __atomic_load_n(&v->page->wait_seq, __ATOMIC_RELAXED) +
	       v->handed;
	if (!v->idle_known || mark != v->idle_mark) {
		v->idle_known = 1;
		v->idle_cpu_known = 0;
		v->idle_mark = mark;
		v->idle_since_ms = now_ms;
		return 0;
	}
	if (now_ms - v->idle_since_ms < IBEMU_GRACE_MS)
		return 0;
	cpu = cpu_ticks(v->c->pid, &state);
	if (v->idle_cpu_known && (cpu > v->idle_cpu || state != 'R'))
		return 1;
	v->idle_cpu_known = 1;
	v->idle_cpu = cpu;
	v->idle_since_ms = now_ms;
	return 0;
}

uint64_t ibemu__sess_horizon(struct ibemu_daemon *d, pid_t *presumed)
{
	struct ibemu_sess_server *s = d->sess;
	uint64_t h = UINT64_MAX, clk, now_ms = uv_now(&d->loop);
	struct ibemu_sess_verbs *v;
	struct ibemu_sess_conn *c;

	for (c = s ? s->conns : NULL; c; c = c->next) {
		if (c->kind != IBEMU_SESS_CONN_VERBS || c->closing || !c->verbs)
			continue;
		v = c->verbs;
		if (is_waiting(v)) {
			v->idle_known = 0;
			continue;
		}
		if (grace_over(v, now_ms)) {
			*presumed = c->pid;
			continue;
		}
		clk = __atomic_load_n(&v->page->clock_ps, __ATOMIC_ACQUIRE);
		if (clk < v->hand_ps)
			clk = v->hand_ps;
		if (clk + IBEMU_TP_DOORBELL_PS < h)
			h = clk + IBEMU_TP_DOORBELL_PS;
	}
	return h;
}

static void tp_async_cb(void *ctx, enum ibemu_event_type event, uint32_t id)
{
	struct ibemu_sess_hca *h = ctx;
	struct ibemu_sess_verbs *v;

	for (v = h->verbs; v; v = v->next) {
		switch (event) {
		case IBEMU_EVENT_PORT_ACTIVE:
		case IBEMU_EVENT_PORT_ERR:
			async_raise(v, event, id);
			break;
		case IBEMU_EVENT_SRQ_LIMIT_REACHED:
			if (srq_find(v, id, NULL))
				async_raise(v, event, id);
			break;
		default:
			if (qp_find(v, id, NULL))
				async_raise(v, event, id);
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

/* Registered memory's handle (ibemu_tp_mem.mr) is its process's pid. */
static int vm_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr,
			       .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

static int vm_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {.iov_base = (void *)buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr,
			       .iov_len = len};
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * Through the daemon's buffer: a read from one process and a write to the
 * other per MiB (the shared-mapping fast path of DESIGN.md section 6 will
 * make it one copy).
 */
static int tp_copy_cb(void *ctx, const struct ibemu_tp_mem *dst,
		      const struct ibemu_tp_mem *src, uint64_t len)
{
	struct ibemu_sess_hca *h = ctx;
	uint8_t *buf = h->s->copy_buf;
	uint64_t off = 0;
	size_t chunk;
	int ret;

	while (off < len) {
		chunk = len - off < IBEMU_SESS_COPY_CHUNK
				? (size_t)(len - off)
				: IBEMU_SESS_COPY_CHUNK;
		ret = vm_read((pid_t)src->mr, src->addr + off, buf, chunk);
		if (!ret)
			ret = vm_write((pid_t)dst->mr, dst->addr + off, buf,
				       chunk);
		if (ret)
			return ret;
		off += chunk;
	}
	return 0;
}

static int tp_write_cb(void *ctx, const struct ibemu_tp_mem *dst,
		       const void *buf, uint64_t len)
{
	(void)ctx;
	return vm_write((pid_t)dst->mr, dst->addr, buf, (size_t)len);
}

/*
 * Atomic with respect to the other operations of emulated HCAs (they all
 * run on this thread), not to the process's own CPU accesses: as on real
 * HCAs, whose atomics are not atomic with the host's.
 */
static int tp_atomic_cb(void *ctx, const struct ibemu_tp_mem *m, int opcode,
			uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	uint64_t v;
	int ret = vm_read((pid_t)m->mr, m->addr, &v, sizeof(v));

	(void)ctx;
	if (ret)
		return ret;
	*orig = v;
	if (opcode == IBEMU_WR_ATOMIC_FETCH_AND_ADD)
		v += compare_add;
	else if (v == compare_add)
		v = swap;
	else
		return 0;
	return vm_write((pid_t)m->mr, m->addr, &v, sizeof(v));
}

const struct ibemu_tp_ops ibemu__sess_tp_ops = {
	.cqe = tp_cqe_cb,
	.async = tp_async_cb,
	.mad_recv = tp_mad_recv_cb,
	.copy = tp_copy_cb,
	.write = tp_write_cb,
	.atomic = tp_atomic_cb,
};

/* --- calls ---------------------------------------------------------- */

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
	int seals;

	if (nfds != 2) {
		snprintf(why, sizeof(why),
			 "VERBS_OPEN takes 2 fds (context page, async "
			 "eventfd), got %d",
			 nfds);
		goto err_fds;
	}
	if (vm_read(c->pid, o->probe_addr, &probe, sizeof(probe)) ||
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
	if (!v) {
		snprintf(why, sizeof(why), "out of memory");
		goto err_fds;
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
	v->page->rule = rule_on(s->d);
	v->page->handed = 0;
	v->page->handing = 0;
	v->page->wait_seq = 0;
	v->page->clock_ps = ibemu_engine_now(s->d->engine);
	v->async_fd = fds[1];
	v->c = c;
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
	free(v);
err_fds:
	close_fds(fds, nfds);
	ibemu_daemon_log_limited(s->d, &s->d->refusals,
				 "verbs client (pid %ld) refused: %s",
				 (long)c->pid, why);
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_ERROR, -EPERM, why, strlen(why));
	ibemu__sess_conn_close(c, NULL);
}

static int pd_owned(struct ibemu_sess_verbs *v, uint32_t pd)
{
	return u32_find(v->pds, v->npds, pd) >= 0;
}

static int do_mr_reg(struct ibemu_sess_verbs *v, struct ibemu_verbs_mr_req *m)
{
	int ret;

	if (!pd_owned(v, m->pd))
		return -EINVAL;
	if (!m->len || m->len > IBEMU_VERBS_MAX_MR_SIZE ||
	    m->addr + m->len < m->addr)
		return -EINVAL;
	if (v->nmrs >= IBEMU_VERBS_MAX_MR)
		return -ENOMEM;
	ret = ibemu_tp_mr_reg(v->hca->tp, m->pd, m->addr, m->len,
			      m->access & 0xf, (uint64_t)v->c->pid, &m->lkey,
			      &m->rkey);
	if (ret)
		return ret;
	ret = u32_add(&v->mrs, &v->nmrs, &v->mrs_cap, m->lkey);
	if (ret)
		ibemu_tp_mr_dereg(v->hca->tp, m->lkey);
	return ret;
}

static void cq_free(struct ibemu_sess_verbs *v, struct vcq *q)
{
	ibemu_tp_cq_destroy(v->hca->tp, q->id);
	ring_unmap(&q->ring);
	if (q->chan_fd >= 0)
		close(q->chan_fd);
	free(q);
}

static int do_cq_create(struct ibemu_sess_verbs *v,
			struct ibemu_verbs_cq_req *r, int *fds, int nfds)
{
	struct vcq *q;
	int ret;

	if (nfds != 1 + !!r->channel) {
		close_fds(fds, nfds);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	if (!q || v->ncqs >= IBEMU_VERBS_MAX_CQ) {
		free(q);
		close_fds(fds, nfds);
		return -ENOMEM;
	}
	q->chan_fd = r->channel ? fds[1] : -1;
	ret = ring_map(&q->ring, fds[0], r->entries,
		       sizeof(struct ibemu_verbs_cqe), 2 * IBEMU_VERBS_MAX_CQE);
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
	ring_unmap(&q->ring);
err:
	if (q->chan_fd >= 0)
		close(q->chan_fd);
	free(q);
	return ret;
}

static void qp_free(struct ibemu_sess_verbs *v, struct vqp *q)
{
	ibemu_tp_qp_destroy(v->hca->tp, q->qpn);
	ring_unmap(&q->sq);
	ring_unmap(&q->rq);
	free(q);
}

static int do_qp_create(struct ibemu_sess_verbs *v,
			struct ibemu_verbs_qp_req *r, int *fds, int nfds)
{
	struct ibemu_tp_qp_init init;
	struct vqp *q;
	int ret;

	if (nfds != 1 + !r->srq || !pd_owned(v, r->pd) ||
	    !cq_find(v, r->send_cq, NULL) || !cq_find(v, r->recv_cq, NULL) ||
	    (r->srq && !srq_find(v, r->srq, NULL)) ||
	    r->sq_entries < r->max_send_wr ||
	    (!r->srq && r->rq_entries < r->max_recv_wr)) {
		close_fds(fds, nfds);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	if (!q || v->nqps >= IBEMU_VERBS_MAX_QP) {
		free(q);
		close_fds(fds, nfds);
		return -ENOMEM;
	}
	q->srq = r->srq;
	ret = ring_map(&q->sq, fds[0], r->sq_entries,
		       sizeof(struct ibemu_verbs_swqe),
		       2 * IBEMU_VERBS_MAX_QP_WR);
	if (!r->srq) {
		int ret2 = ring_map(&q->rq, fds[1], r->rq_entries,
				    sizeof(struct ibemu_verbs_rwqe),
				    2 * IBEMU_VERBS_MAX_QP_WR);

		ret = ret ? ret : ret2;
	}
	if (ret)
		goto err;
	memset(&init, 0, sizeof(init));
	init.qp_type = (uint8_t)r->qp_type;
	init.sq_sig_all = !!r->sq_sig_all;
	init.pd = r->pd;
	init.send_cq = r->send_cq;
	init.recv_cq = r->recv_cq;
	init.srq = r->srq;
	init.max_send_wr = r->max_send_wr;
	init.max_recv_wr = r->max_recv_wr;
	init.max_send_sge = r->max_send_sge;
	init.max_recv_sge = r->max_recv_sge;
	init.max_inline_data = r->max_inline_data;
	ret = ibemu_tp_qp_create(v->hca->tp, &init, &q->qpn);
	if (ret)
		goto err;
	ret = ptr_add((void ***)&v->qps, &v->nqps, &v->qps_cap, q);
	if (ret) {
		qp_free(v, q);
		return ret;
	}
	r->qpn = q->qpn;
	return 0;

err:
	ring_unmap(&q->sq);
	ring_unmap(&q->rq);
	free(q);
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

static void srq_free(struct ibemu_sess_verbs *v, struct vsrq *q)
{
	ibemu_tp_srq_destroy(v->hca->tp, q->id);
	ring_unmap(&q->ring);
	free(q);
}

static int do_srq_create(struct ibemu_sess_verbs *v,
			 struct ibemu_verbs_srq_req *r, int *fds, int nfds)
{
	struct ibemu_tp_srq_attr a = {
		.max_wr = r->max_wr,
		.max_sge = r->max_sge,
		.srq_limit = r->srq_limit,
	};
	struct vsrq *q;
	int ret;

	if (nfds != 1 || !pd_owned(v, r->pd) || r->entries < r->max_wr) {
		close_fds(fds, nfds);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	if (!q || v->nsrqs >= IBEMU_VERBS_MAX_SRQ) {
		free(q);
		close_fds(fds, nfds);
		return -ENOMEM;
	}
	ret = ring_map(&q->ring, fds[0], r->entries,
		       sizeof(struct ibemu_verbs_rwqe),
		       2 * IBEMU_VERBS_MAX_SRQ_WR);
	if (ret)
		goto err;
	ret = ibemu_tp_srq_create(v->hca->tp, r->pd, &a, &q->id);
	if (ret)
		goto err_unmap;
	ret = ptr_add((void ***)&v->srqs, &v->nsrqs, &v->srqs_cap, q);
	if (ret) {
		srq_free(v, q);
		return ret;
	}
	r->id = q->id;
	return 0;

err_unmap:
	ring_unmap(&q->ring);
err:
	free(q);
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

	if (d->job || ibemu_engine_next_time(e) == UINT64_MAX)
		return;
	ibemu_engine_run(e, ibemu_engine_now(e) + IBEMU_SESS_CARRY_PS, 1000000);
	ibemu__link_activate(d);
	d->mid_run = 0;
	ibemu__sess_flush(d);
}

void ibemu__sess_verbs_call(struct ibemu_sess_conn *c,
			    const struct ibemu_sess_hdr *h, const void *payload,
			    int *fds, int nfds)
{
	struct ibemu_sess_verbs *v = c->verbs;
	struct ibemu_tp *tp = v->hca->tp;
	union {
		struct ibemu_verbs_obj obj;
		struct ibemu_verbs_mr_req mr;
		struct ibemu_verbs_cq_req cq;
		struct ibemu_verbs_qp_req qp;
		struct ibemu_verbs_qp_attr qa;
		struct ibemu_verbs_srq_req srq;
	} u;
	static const size_t sizes[IBEMU_SESS_NTYPES] = {
		[IBEMU_SESS_VERBS_PD_ALLOC] = sizeof(struct ibemu_verbs_obj),
		[IBEMU_SESS_VERBS_PD_FREE] = sizeof(struct ibemu_verbs_obj),
		[IBEMU_SESS_VERBS_MR_REG] = sizeof(struct ibemu_verbs_mr_req),
		[IBEMU_SESS_VERBS_MR_DEREG] = sizeof(struct ibemu_verbs_obj),
		[IBEMU_SESS_VERBS_CQ_CREATE] =
			sizeof(struct ibemu_verbs_cq_req),
		[IBEMU_SESS_VERBS_CQ_DESTROY] = sizeof(struct ibemu_verbs_obj),
		[IBEMU_SESS_VERBS_QP_CREATE] =
			sizeof(struct ibemu_verbs_qp_req),
		[IBEMU_SESS_VERBS_QP_MODIFY] =
			sizeof(struct ibemu_verbs_qp_attr),
		[IBEMU_SESS_VERBS_QP_QUERY] =
			sizeof(struct ibemu_verbs_qp_attr),
		[IBEMU_SESS_VERBS_QP_DESTROY] = sizeof(struct ibemu_verbs_obj),
		[IBEMU_SESS_VERBS_SRQ_CREATE] =
			sizeof(struct ibemu_verbs_srq_req),
		[IBEMU_SESS_VERBS_SRQ_MODIFY] = sizeof(struct ibemu_verbs_obj),
		[IBEMU_SESS_VERBS_SRQ_QUERY] =
			sizeof(struct ibemu_verbs_srq_req),
		[IBEMU_SESS_VERBS_SRQ_DESTROY] = sizeof(struct ibemu_verbs_obj),
	};
	struct ibemu_tp_qp_attr qa;
	struct ibemu_tp_srq_attr sa;
	int ret = 0, at;
	void *p;

	if (h->type >= IBEMU_SESS_NTYPES || !sizes[h->type] ||
	    h->len != sizes[h->type]) {
		close_fds(fds, nfds);
		ibemu__sess_conn_close(c, "a verbs call it does not know, or "
					  "of the wrong size");
		return;
	}
	memcpy(&u, payload, h->len);
	/* Only the creates carry fds. */
	if (h->type != IBEMU_SESS_VERBS_CQ_CREATE &&
	    h->type != IBEMU_SESS_VERBS_QP_CREATE &&
	    h->type != IBEMU_SESS_VERBS_SRQ_CREATE && nfds) {
		close_fds(fds, nfds);
		reply(c, h->type, -EINVAL, NULL, 0);
		return;
	}
	switch (h->type) {
	case IBEMU_SESS_VERBS_PD_ALLOC:
		if (v->npds >= IBEMU_VERBS_MAX_PD) {
			ret = -ENOMEM;
			break;
		}
		ret = ibemu_tp_pd_alloc(tp, &u.obj.id);
		if (!ret) {
			ret = u32_add(&v->pds, &v->npds, &v->pds_cap, u.obj.id);
			if (ret)
				ibemu_tp_pd_free(tp, u.obj.id);
		}
		break;
	case IBEMU_SESS_VERBS_PD_FREE:
		at = u32_find(v->pds, v->npds, u.obj.id);
		ret = at < 0 ? -EINVAL : ibemu_tp_pd_free(tp, u.obj.id);
		if (!ret)
			u32_del(v->pds, &v->npds, at);
		break;
	case IBEMU_SESS_VERBS_MR_REG:
		ret = do_mr_reg(v, &u.mr);
		break;
	case IBEMU_SESS_VERBS_MR_DEREG:
		at = u32_find(v->mrs, v->nmrs, u.obj.id);
		ret = at < 0 ? -EINVAL : ibemu_tp_mr_dereg(tp, u.obj.id);
		if (!ret)
			u32_del(v->mrs, &v->nmrs, at);
		break;
	case IBEMU_SESS_VERBS_CQ_CREATE:
		ret = do_cq_create(v, &u.cq, fds, nfds);
		break;
	case IBEMU_SESS_VERBS_CQ_DESTROY:
		p = cq_find(v, u.obj.id, &at);
		ret = p ? ibemu_tp_cq_destroy(tp, u.obj.id) : -EINVAL;
		if (!ret) {
			struct vcq *q = p;

			ring_unmap(&q->ring);
			if (q->chan_fd >= 0)
				close(q->chan_fd);
			free(q);
			v->cqs[at] = v->cqs[--v->ncqs];
		}
		break;
	case IBEMU_SESS_VERBS_QP_CREATE:
		ret = do_qp_create(v, &u.qp, fds, nfds);
		break;
	case IBEMU_SESS_VERBS_QP_MODIFY:
		p = qp_find(v, u.qa.qpn, NULL);
		if (!p) {
			ret = -EINVAL;
			break;
		}
		attr_from(&qa, &u.qa);
		ret = ibemu_tp_qp_modify(tp, u.qa.qpn, &qa, u.qa.mask);
		if (!ret && qa.qp_state == IBEMU_QPS_RESET &&
		    (u.qa.mask & IBEMU_QP_STATE)) {
			/* A reset QP's queues start empty. */
			struct vqp *q = p;

			q->error = 0;
			q->sq.idx = __atomic_load_n(&q->sq.hdr->prod,
						    __ATOMIC_ACQUIRE);
			__atomic_store_n(&q->sq.hdr->cons, q->sq.idx,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&q->sq.hdr->error, 0,
					 __ATOMIC_RELEASE);
			if (q->rq.hdr) {
				q->rq.idx = __atomic_load_n(&q->rq.hdr->prod,
							    __ATOMIC_ACQUIRE);
				__atomic_store_n(&q->rq.hdr->cons, q->rq.idx,
						 __ATOMIC_RELEASE);
				__atomic_store_n(&q->rq.hdr->error, 0,
						 __ATOMIC_RELEASE);
			}
		}
		ibemu_daemon_pump(c->s->d); /* a flush may have completed */
		break;
	case IBEMU_SESS_VERBS_QP_QUERY:
		if (!qp_find(v, u.qa.qpn, NULL)) {
			ret = -EINVAL;
			break;
		}
		ret = ibemu_tp_qp_query(tp, u.qa.qpn, &qa);
		if (!ret)
			attr_to(&u.qa, &qa);
		break;
	case IBEMU_SESS_VERBS_QP_DESTROY:
		p = qp_find(v, u.obj.id, &at);
		if (!p) {
			ret = -EINVAL;
			break;
		}
		if (rule_on(c->s->d))
			carry_sent(c->s->d);
		v->qps[at] = v->qps[--v->nqps];
		qp_free(v, p);
		break;
	case IBEMU_SESS_VERBS_SRQ_CREATE:
		ret = do_srq_create(v, &u.srq, fds, nfds);
		break;
	case IBEMU_SESS_VERBS_SRQ_MODIFY:
		ret = srq_find(v, u.obj.id, NULL)
			      ? ibemu_tp_srq_modify(tp, u.obj.id, u.obj.arg)
			      : -EINVAL;
		break;
	case IBEMU_SESS_VERBS_SRQ_QUERY:
		ret = srq_find(v, u.srq.id, NULL)
			      ? ibemu_tp_srq_query(tp, u.srq.id, &sa)
			      : -EINVAL;
		if (!ret) {
			u.srq.max_wr = sa.max_wr;
			u.srq.max_sge = sa.max_sge;
			u.srq.srq_limit = sa.srq_limit;
		}
		break;
	case IBEMU_SESS_VERBS_SRQ_DESTROY:
		p = srq_find(v, u.obj.id, &at);
		if (!p) {
			ret = -EINVAL;
			break;
		}
		ret = ibemu_tp_srq_destroy(tp, u.obj.id);
		if (!ret) {
			struct vsrq *q = p;

			ring_unmap(&q->ring);
			free(q);
			v->srqs[at] = v->srqs[--v->nsrqs];
		}
		break;
	}
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
	for (i = 0; i < v->nmrs; i++)
		ibemu_tp_mr_dereg(tp, v->mrs[i]);
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
	free(v->qps);
	free(v->srqs);
	free(v->cqs);
	free(v->mrs);
	free(v->pds);
	free(v);
	c->verbs = NULL;
	ibemu_daemon_pump(c->s->d);
}

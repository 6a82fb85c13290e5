// SPDX-License-Identifier: MIT
/*
 * The QP transport (hca/transport*.c) on the two-switch fabric with test
 * routes: the numbers shared with libibverbs, the QP state machine and
 * its attribute masks, UD with its Q_Key and GRH space, RC SEND, WRITE,
 * READ and atomics with completion times worked out from the link rates,
 * RNR NAKs, access errors and flushes, retransmission under seeded
 * drops, UC loss and a 1 MiB WRITE seen in the switches' counters.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>

#include "engine.h"
#include "transport.h"
#include "unit.h"

/* The transport's numbers are libibverbs's. */
#define SAME(a, b) _Static_assert((int)(a) == (int)(b), #a)
SAME(IBEMU_WC_SUCCESS, IBV_WC_SUCCESS);
SAME(IBEMU_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
SAME(IBEMU_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
SAME(IBEMU_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
SAME(IBEMU_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
SAME(IBEMU_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
SAME(IBEMU_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR);
SAME(IBEMU_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
SAME(IBEMU_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
SAME(IBEMU_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR);
SAME(IBEMU_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);
SAME(IBEMU_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
SAME(IBEMU_WC_WITH_IMM, IBV_WC_WITH_IMM);
SAME(IBEMU_WC_GRH, IBV_WC_GRH);
SAME(IBEMU_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
SAME(IBEMU_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);
SAME(IBEMU_SEND_INLINE, IBV_SEND_INLINE);
SAME(IBEMU_SEND_SIGNALED, IBV_SEND_SIGNALED);
SAME(IBEMU_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC);
SAME(IBEMU_QPS_ERR, IBV_QPS_ERR);
SAME(IBEMU_QPS_SQE, IBV_QPS_SQE);
SAME(IBEMU_QPT_UD, IBV_QPT_UD);
SAME(IBEMU_QPT_RC, IBV_QPT_RC);
SAME(IBEMU_QPT_XRC_SEND, IBV_QPT_XRC_SEND);
SAME(IBEMU_QPT_XRC_RECV, IBV_QPT_XRC_RECV);
SAME(IBEMU_QP_DEST_QPN, IBV_QP_DEST_QPN);
SAME(IBEMU_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
SAME(IBEMU_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
SAME(IBEMU_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_LIMIT_REACHED);
SAME(IBEMU_EVENT_PORT_ERR, IBV_EVENT_PORT_ERR);
SAME(IBEMU_EVENT_QP_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);

#define BUF   (2u << 20)
#define NCQE  1024
#define NHOST 4

/* One HCA with its transport, a PD, a CQ and a registered buffer. */
struct host {
	struct ibemu_tp *tp;
	struct ibemu_engine *e;
	uint32_t node, pd, cq, key;
	uint16_t lid;
	uint8_t *buf;
	struct ibemu_tp_cqe cqe[NCQE];
	uint64_t cqe_t[NCQE];
	unsigned ncqe;
	int events[32];
	uint32_t event_id[32];
	unsigned nevents;
};

struct fx {
	struct ibemu_topo *t;
	struct ibemu_engine *e;
	struct ibemu_routes *r;
	struct ibemu_tp_domain *d;
	struct host h[NHOST];
};

static void on_cqe(void *ctx, uint32_t cq, const struct ibemu_tp_cqe *c)
{
	struct host *h = ctx;

	(void)cq;
	T_TRUE(h->ncqe < NCQE);
	if (h->ncqe >= NCQE)
		return;
	h->cqe_t[h->ncqe] = ibemu_engine_now(h->e);
	h->cqe[h->ncqe++] = *c;
}

static void on_async(void *ctx, enum ibemu_event_type ev, uint32_t id)
{
	struct host *h = ctx;

	if (h->nevents < 32) {
		h->event_id[h->nevents] = id;
		h->events[h->nevents++] = ev;
	}
}

static unsigned ncopies; /* copies made, for the barrier tests */

static int on_copy(void *ctx, const struct ibemu_tp_mem *dst,
		   const struct ibemu_tp_mem *src, uint64_t len)
{
	(void)ctx;
	ncopies++;
	memcpy((void *)(uintptr_t)dst->addr, (void *)(uintptr_t)src->addr, len);
	return 0;
}

static int on_read(void *ctx, const struct ibemu_tp_mem *src, void *buf,
		   uint64_t len)
{
	(void)ctx;
	memcpy(buf, (void *)(uintptr_t)src->addr, len);
	return 0;
}

static int on_write(void *ctx, const struct ibemu_tp_mem *dst, const void *buf,
		    uint64_t len)
{
	(void)ctx;
	memcpy((void *)(uintptr_t)dst->addr, buf, len);
	return 0;
}

static int on_atomic(void *ctx, const struct ibemu_tp_mem *m, int opcode,
		     uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	uint64_t *p = (uint64_t *)(uintptr_t)m->addr;

	(void)ctx;
	*orig = *p;
	if (opcode == IBEMU_WR_ATOMIC_FETCH_AND_ADD)
		*p += compare_add;
	else if (*p == compare_add)
		*p = swap;
	return 0;
}

static const struct ibemu_tp_ops host_ops = {
	.cqe = on_cqe,
	.async = on_async,
	.copy = on_copy,
	.read = on_read,
	.write = on_write,
	.atomic = on_atomic,
};

static void fx_up(struct fx *f)
{
	static const char *const names[NHOST] = {"hca1", "hca2", "hca3",
						 "hca4"};
	unsigned i;

	memset(f, 0, sizeof(*f));
	ibemu_test_engine_up("two-switch", 1, NULL, NULL, &f->t, &f->e, &f->r);
	/* The exact times below are a wire HCA's (hca_model: wire): the
	 * host interface's own are pinned in test-host-model.c. */
	for (i = 0; i < f->t->nnodes; i++)
		f->t->nodes[i].hca_model = IBEMU_HCA_WIRE;
	T_EQ_INT(ibemu_tp_domain_create(f->e, &f->d), 0);
	for (i = 0; i < NHOST; i++) {
		struct host *h = &f->h[i];
		uint32_t rkey;

		h->e = f->e;
		h->node = ibemu_test_node(f->t, names[i]);
		h->lid = ibemu_engine_get_lid(f->e, h->node, 1);
		T_EQ_INT(ibemu_tp_create(f->d, h->node, &host_ops, h, &h->tp),
			 0);
		T_EQ_INT(ibemu_tp_pd_alloc(h->tp, &h->pd), 0);
		T_EQ_INT(ibemu_tp_cq_create(h->tp, &h->cq), 0);
		h->buf = calloc(1, BUF);
		T_EQ_INT(ibemu_tp_mr_reg(h->tp, h->pd, (uintptr_t)h->buf, BUF,
					 0xf, 100 + i, &h->key, &rkey),
			 0);
		T_EQ_U64(h->key, rkey);
	}
}

static void fx_down(struct fx *f)
{
	unsigned i;

	ibemu_engine_run(f->e, UINT64_MAX, 100000000);
	for (i = 0; i < NHOST; i++) {
		ibemu_tp_destroy(f->h[i].tp);
		free(f->h[i].buf);
	}
	ibemu_tp_domain_destroy(f->d);
	ibemu_test_engine_down(f->t, f->e, f->r);
}

static void run(struct fx *f)
{
	ibemu_engine_run(f->e, UINT64_MAX, 100000000);
}

static uint32_t qp_new(struct host *h, uint8_t type)
{
	struct ibemu_tp_qp_init in = {
		.qp_type = type,
		.pd = h->pd,
		.send_cq = h->cq,
		.recv_cq = h->cq,
		.max_send_wr = 1024,
		.max_recv_wr = 1024,
		.max_send_sge = 4,
		.max_recv_sge = 4,
		.max_inline_data = 64,
	};
	uint32_t qpn = 0;

	T_EQ_INT(ibemu_tp_qp_create(h->tp, &in, &qpn), 0);
	return qpn;
}

/* Timing knobs of an RC or UC connection. */
struct conn_opts {
	uint8_t timeout, retry, rnr_retry, min_rnr;
	uint8_t mtu;
};

static const struct conn_opts defaults = {14, 7, 7, 1, 5};

/* Takes 'qpn' of 'a' to RTS connected to 'rq' of 'b'. */
static void qp_connect(struct host *a, uint32_t qpn, struct host *b,
		       uint32_t rq, const struct conn_opts *o)
{
	struct ibemu_tp_qp_attr at = {0};
	struct ibemu_tp_qp_attr q;
	uint32_t mask = IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX | IBEMU_QP_PORT |
			IBEMU_QP_ACCESS_FLAGS;
	int rc;

	T_EQ_INT(ibemu_tp_qp_query(a->tp, qpn, &q), 0);
	rc = ibemu_tp_qp_modify(a->tp, qpn, &q, 0) == 0;
	T_TRUE(rc);
	at.qp_state = IBEMU_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = 0xe;
	T_EQ_INT(ibemu_tp_qp_modify(a->tp, qpn, &at, mask), 0);
	at.qp_state = IBEMU_QPS_RTR;
	at.path_mtu = o->mtu;
	at.dest_qp_num = rq;
	at.rq_psn = 1000 + rq;
	at.ah_attr.dlid = b->lid;
	at.ah_attr.port_num = 1;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = o->min_rnr;
	T_EQ_INT(ibemu_tp_qp_query(a->tp, qpn, &q), 0);
	mask = IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
	       IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN;
	if (q.qp_state == IBEMU_QPS_INIT) {
		struct ibemu_tp_qp_init dummy;

		(void)dummy;
	}
	T_EQ_INT(ibemu_tp_qp_modify(a->tp, qpn, &at,
				    mask | IBEMU_QP_MAX_DEST_RD_ATOMIC |
					    IBEMU_QP_MIN_RNR_TIMER),
		 0);
	at.qp_state = IBEMU_QPS_RTS;
	at.sq_psn = 1000 + qpn;
	at.timeout = o->timeout;
	at.retry_cnt = o->retry;
	at.rnr_retry = o->rnr_retry;
	at.max_rd_atomic = 4;
	T_EQ_INT(ibemu_tp_qp_modify(
			 a->tp, qpn, &at,
			 IBEMU_QP_STATE | IBEMU_QP_TIMEOUT |
				 IBEMU_QP_RETRY_CNT | IBEMU_QP_RNR_RETRY |
				 IBEMU_QP_SQ_PSN | IBEMU_QP_MAX_QP_RD_ATOMIC),
		 0);
}

/* A UC pair needs fewer attributes. */
static void uc_connect(struct host *a, uint32_t qpn, struct host *b,
		       uint32_t rq)
{
	struct ibemu_tp_qp_attr at = {0};

	at.qp_state = IBEMU_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = IBEMU_ACCESS_REMOTE_WRITE;
	T_EQ_INT(ibemu_tp_qp_modify(a->tp, qpn, &at,
				    IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					    IBEMU_QP_PORT |
					    IBEMU_QP_ACCESS_FLAGS),
		 0);
	at.qp_state = IBEMU_QPS_RTR;
	at.path_mtu = 5;
	at.dest_qp_num = rq;
	at.rq_psn = 7;
	at.ah_attr.dlid = b->lid;
	T_EQ_INT(ibemu_tp_qp_modify(
			 a->tp, qpn, &at,
			 IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
				 IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN),
		 0);
	at.qp_state = IBEMU_QPS_RTS;
	at.sq_psn = 7;
	T_EQ_INT(ibemu_tp_qp_modify(a->tp, qpn, &at,
				    IBEMU_QP_STATE | IBEMU_QP_SQ_PSN),
		 0);
}

/* Connected RC pair: sets *qa on 'a' and *qb on 'b'. */
static void rc_pair(struct host *a, struct host *b, const struct conn_opts *o,
		    uint32_t *qa, uint32_t *qb)
{
	*qa = qp_new(a, IBEMU_QPT_RC);
	*qb = qp_new(b, IBEMU_QPT_RC);
	qp_connect(a, *qa, b, *qb, o);
	qp_connect(b, *qb, a, *qa, o);
}

static void post_recv(struct host *h, uint32_t qpn, uint64_t id, uint64_t off,
		      uint32_t len)
{
	struct ibemu_tp_sge s = {(uintptr_t)h->buf + off, len, h->key};
	struct ibemu_tp_recv_wr wr = {id, &s, 1};

	T_EQ_INT(ibemu_tp_post_recv(h->tp, qpn, &wr), 0);
}

/* Posts one WR with one SGE of 'len' bytes at 'off' of a's buffer. */
static int post(struct host *a, uint32_t qpn, uint64_t id, uint8_t opcode,
		uint64_t off, uint32_t len, struct host *b, uint64_t roff)
{
	struct ibemu_tp_sge s = {(uintptr_t)a->buf + off, len, a->key};
	struct ibemu_tp_send_wr wr = {0};

	wr.wr_id = id;
	wr.opcode = opcode;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.imm_data = 0x1234;
	if (b) {
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf + roff;
		wr.wr.rdma.rkey = b->key;
	}
	return ibemu_tp_post_send(a->tp, qpn, &wr);
}

static void fill(struct host *h, uint64_t off, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		h->buf[off + i] = (uint8_t)(seed + i * 7);
}

/* The state machine: legal paths, illegal transitions, bad masks. */
static void test_state_machine(void)
{
	struct ibemu_tp_qp_attr at = {0}, q;
	const uint32_t init_rc = IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
				 IBEMU_QP_PORT | IBEMU_QP_ACCESS_FLAGS;
	struct fx f;
	uint32_t qp, ud;

	fx_up(&f);
	qp = qp_new(&f.h[0], IBEMU_QPT_RC);
	ud = qp_new(&f.h[0], IBEMU_QPT_UD);
	at.port_num = 1;
	/* RESET -> RTR, RTS, SQD, SQE: not in the table. */
	for (at.qp_state = IBEMU_QPS_RTR; at.qp_state <= IBEMU_QPS_SQE;
	     at.qp_state++)
		T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, init_rc),
			 -EINVAL);
	/* RESET -> INIT: a required attribute missing, one not allowed. */
	at.qp_state = IBEMU_QPS_INIT;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    init_rc & ~IBEMU_QP_ACCESS_FLAGS),
		 -EINVAL);
	T_EQ_INT(
		ibemu_tp_qp_modify(f.h[0].tp, qp, &at, init_rc | IBEMU_QP_QKEY),
		-EINVAL);
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, ud, &at, init_rc), -EINVAL);
	/* Current state given where it is not allowed. */
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    init_rc | IBEMU_QP_CUR_STATE),
		 -EINVAL);
	/* A bad value. */
	at.port_num = 2;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, init_rc), -EINVAL);
	at.port_num = 1;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, init_rc), 0);
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, ud, &at,
				    IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					    IBEMU_QP_PORT | IBEMU_QP_QKEY),
		 0);
	/* Posting a send before RTS is refused; a receive is fine. */
	T_EQ_INT(post(&f.h[0], qp, 1, IBEMU_WR_SEND, 0, 8, NULL, 0), -EINVAL);
	post_recv(&f.h[0], qp, 1, 0, 64);
	/* INIT -> RTS skips RTR. */
	at.qp_state = IBEMU_QPS_RTS;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    IBEMU_QP_STATE | IBEMU_QP_SQ_PSN),
		 -EINVAL);
	/* INIT -> RTR for RC needs max_dest_rd_atomic and min_rnr_timer. */
	at.qp_state = IBEMU_QPS_RTR;
	at.path_mtu = 5;
	at.ah_attr.dlid = f.h[1].lid;
	T_EQ_INT(ibemu_tp_qp_modify(
			 f.h[0].tp, qp, &at,
			 IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
				 IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN),
		 -EINVAL);
	T_EQ_INT(ibemu_tp_qp_modify(
			 f.h[0].tp, qp, &at,
			 IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
				 IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN |
				 IBEMU_QP_MAX_DEST_RD_ATOMIC |
				 IBEMU_QP_MIN_RNR_TIMER | IBEMU_QP_SQ_PSN),
		 -EINVAL);
	at.path_mtu = 6;
	T_EQ_INT(ibemu_tp_qp_modify(
			 f.h[0].tp, qp, &at,
			 IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
				 IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN |
				 IBEMU_QP_MAX_DEST_RD_ATOMIC |
				 IBEMU_QP_MIN_RNR_TIMER),
		 -EINVAL);
	at.path_mtu = 5;
	T_EQ_INT(ibemu_tp_qp_modify(
			 f.h[0].tp, qp, &at,
			 IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
				 IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN |
				 IBEMU_QP_MAX_DEST_RD_ATOMIC |
				 IBEMU_QP_MIN_RNR_TIMER),
		 0);
	/* RTR -> RTS for RC needs the timeout and retry counts. */
	at.qp_state = IBEMU_QPS_RTS;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    IBEMU_QP_STATE | IBEMU_QP_SQ_PSN),
		 -EINVAL);
	T_EQ_INT(ibemu_tp_qp_modify(
			 f.h[0].tp, qp, &at,
			 IBEMU_QP_STATE | IBEMU_QP_SQ_PSN | IBEMU_QP_TIMEOUT |
				 IBEMU_QP_RETRY_CNT | IBEMU_QP_RNR_RETRY |
				 IBEMU_QP_MAX_QP_RD_ATOMIC),
		 0);
	/* RTS -> SQE: only errors get there; RTS -> RTR is no path. */
	at.qp_state = IBEMU_QPS_SQE;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, IBEMU_QP_STATE),
		 -EINVAL);
	at.qp_state = IBEMU_QPS_RTR;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, IBEMU_QP_STATE),
		 -EINVAL);
	/* RTS -> RTS with the current state right, then wrong. */
	at.qp_state = IBEMU_QPS_RTS;
	at.cur_qp_state = IBEMU_QPS_RTS;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    IBEMU_QP_STATE | IBEMU_QP_CUR_STATE |
					    IBEMU_QP_MIN_RNR_TIMER),
		 0);
	at.cur_qp_state = IBEMU_QPS_RTR;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    IBEMU_QP_STATE | IBEMU_QP_CUR_STATE),
		 -EINVAL);
	/* RTS -> SQD -> RTS; SQD -> SQD may change the path. */
	at.qp_state = IBEMU_QPS_SQD;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    IBEMU_QP_STATE |
					    IBEMU_QP_EN_SQD_ASYNC_NOTIFY),
		 0);
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    IBEMU_QP_STATE | IBEMU_QP_TIMEOUT),
		 0);
	at.qp_state = IBEMU_QPS_RTS;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, IBEMU_QP_STATE), 0);
	/* Any state -> ERR, then ERR -> only RESET or ERR. */
	at.qp_state = IBEMU_QPS_ERR;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, IBEMU_QP_STATE), 0);
	/* The receive posted in INIT was flushed. */
	T_EQ_INT(f.h[0].ncqe, 1);
	T_EQ_INT(f.h[0].cqe[0].status, IBEMU_WC_WR_FLUSH_ERR);
	T_EQ_INT(f.h[0].cqe[0].opcode, IBEMU_WC_RECV);
	at.qp_state = IBEMU_QPS_INIT;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, init_rc), -EINVAL);
	at.qp_state = IBEMU_QPS_RESET;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at,
				    IBEMU_QP_STATE | IBEMU_QP_QKEY),
		 -EINVAL);
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, qp, &at, IBEMU_QP_STATE), 0);
	T_EQ_INT(ibemu_tp_qp_query(f.h[0].tp, qp, &q), 0);
	T_EQ_INT(q.qp_state, IBEMU_QPS_RESET);
	/* UD: INIT -> RTR needs nothing more; RTR -> RTS only the SQ PSN. */
	at.qp_state = IBEMU_QPS_RTR;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, ud, &at,
				    IBEMU_QP_STATE | IBEMU_QP_AV),
		 -EINVAL);
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, ud, &at, IBEMU_QP_STATE), 0);
	at.qp_state = IBEMU_QPS_RTS;
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, ud, &at,
				    IBEMU_QP_STATE | IBEMU_QP_SQ_PSN |
					    IBEMU_QP_TIMEOUT),
		 -EINVAL);
	T_EQ_INT(ibemu_tp_qp_modify(f.h[0].tp, ud, &at,
				    IBEMU_QP_STATE | IBEMU_QP_SQ_PSN),
		 0);
	/* Objects in use are not destroyed. */
	T_EQ_INT(ibemu_tp_pd_free(f.h[0].tp, f.h[0].pd), -EBUSY);
	T_EQ_INT(ibemu_tp_cq_destroy(f.h[0].tp, f.h[0].cq), -EBUSY);
	T_EQ_INT(ibemu_tp_qp_destroy(f.h[0].tp, ud), 0);
	T_EQ_INT(ibemu_tp_qp_destroy(f.h[0].tp, ud), -EINVAL);
	fx_down(&f);
}

/* UD between leaves: GRH space, Q_Key checks, the QP's own Q_Key. */
static void ud_init(struct host *h, uint32_t qpn, uint32_t qkey)
{
	struct ibemu_tp_qp_attr at = {0};

	at.qp_state = IBEMU_QPS_INIT;
	at.port_num = 1;
	at.qkey = qkey;
	T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at,
				    IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					    IBEMU_QP_PORT | IBEMU_QP_QKEY),
		 0);
	at.qp_state = IBEMU_QPS_RTR;
	T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at, IBEMU_QP_STATE), 0);
	at.qp_state = IBEMU_QPS_RTS;
	T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at,
				    IBEMU_QP_STATE | IBEMU_QP_SQ_PSN),
		 0);
}

static int ud_send(struct host *a, uint32_t qpn, struct host *b, uint32_t rqpn,
		   uint32_t qkey, uint32_t len)
{
	struct ibemu_tp_sge s = {(uintptr_t)a->buf, len, a->key};
	struct ibemu_tp_send_wr wr = {0};

	wr.wr_id = 77;
	wr.opcode = IBEMU_WR_SEND_WITH_IMM;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.imm_data = 99;
	wr.wr.ud.ah.dlid = b->lid;
	wr.wr.ud.ah.sl = 0;
	wr.wr.ud.remote_qpn = rqpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibemu_tp_post_send(a->tp, qpn, &wr);
}

/* The P_Key and Q_Key violations counted at host 'h''s port. */
static struct ibemu_port_counters violations(const struct host *h)
{
	struct ibemu_port_counters c;

	ibemu_engine_counters(h->e, ibemu_engine_port_index(h->e, h->node, 1),
			      &c);
	return c;
}

/*
 * A packet whose P_Key does not match the receiving QP's is dropped and
 * counted in P_KeyViolations (IBA 10.9.3): QP 'qb' takes P_Key index 1,
 * an empty (invalid) entry of the default table, which matches nothing;
 * QP 'qc' of the same port, at index 0, receives the same SEND.
 */
static void test_pkey_violation(void)
{
	struct ibemu_tp_qp_attr at = {0};
	struct host *a, *b;
	uint32_t qa, qb, qc;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[2];
	qa = qp_new(a, IBEMU_QPT_UD);
	qb = qp_new(b, IBEMU_QPT_UD);
	qc = qp_new(b, IBEMU_QPT_UD);
	ud_init(a, qa, 0x11111111);
	ud_init(b, qc, 0x22222222);
	at.qp_state = IBEMU_QPS_INIT;
	at.port_num = 1;
	at.pkey_index = 1;
	at.qkey = 0x22222222;
	T_EQ_INT(ibemu_tp_qp_modify(b->tp, qb, &at,
				    IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					    IBEMU_QP_PORT | IBEMU_QP_QKEY),
		 0);
	at.qp_state = IBEMU_QPS_RTR;
	T_EQ_INT(ibemu_tp_qp_modify(b->tp, qb, &at, IBEMU_QP_STATE), 0);
	post_recv(b, qb, 5, 0, 40 + 64);
	post_recv(b, qc, 6, 4096, 40 + 64);
	T_EQ_INT(ud_send(a, qa, b, qb, 0x22222222, 64), 0);
	run(&f);
	T_EQ_INT(b->ncqe, 0);
	T_EQ_INT(violations(b).p_key_violations, 1);
	T_EQ_INT(ud_send(a, qa, b, qc, 0x22222222, 64), 0);
	run(&f);
	T_EQ_INT(b->ncqe, 1);
	T_EQ_INT(b->cqe[0].wr_id, 6);
	T_EQ_INT(b->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(violations(b).p_key_violations, 1);
	T_EQ_INT(violations(a).p_key_violations, 0);
	fx_down(&f);
}

static void test_ud(void)
{
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[2];
	qa = qp_new(a, IBEMU_QPT_UD);
	qb = qp_new(b, IBEMU_QPT_UD);
	ud_init(a, qa, 0x11111111);
	ud_init(b, qb, 0x22222222);
	fill(a, 0, 256, 3);
	post_recv(b, qb, 5, 0, 40 + 256);
	T_EQ_INT(ud_send(a, qa, b, qb, 0x22222222, 256), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(b->ncqe, 1);
	T_EQ_INT(b->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(b->cqe[0].byte_len, 40 + 256);
	T_EQ_INT(b->cqe[0].src_qp, qa);
	T_EQ_INT(b->cqe[0].slid, a->lid);
	T_EQ_INT(b->cqe[0].wc_flags, IBEMU_WC_WITH_IMM);
	T_EQ_INT(b->cqe[0].imm_data, 99);
	/* The payload starts after the GRH space, left untouched. */
	T_TRUE(!memcmp(b->buf + 40, a->buf, 256));
	T_EQ_INT(b->buf[0], 0);
	/* A wrong Q_Key is dropped; the QP's own (high bit) is not
	 * the receiver's either. */
	post_recv(b, qb, 6, 4096, 40 + 256);
	T_EQ_INT(ud_send(a, qa, b, qb, 0x22222223, 64), 0);
	T_EQ_INT(ud_send(a, qa, b, qb, 0x80000000, 64), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 3);
	T_EQ_INT(b->ncqe, 1);
	/* Both counted in the receiving port's Q_KeyViolations. */
	T_EQ_INT(violations(b).q_key_violations, 2);
	T_EQ_INT(violations(b).p_key_violations, 0);
	/* Beyond the MTU: a local length error, the QP in SQE. */
	T_EQ_INT(ud_send(a, qa, b, qb, 0x22222222, 4097), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 4);
	T_EQ_INT(a->cqe[3].status, IBEMU_WC_LOC_LEN_ERR);
	{
		struct ibemu_tp_qp_attr q;

		T_EQ_INT(ibemu_tp_qp_query(a->tp, qa, &q), 0);
		T_EQ_INT(q.qp_state, IBEMU_QPS_SQE);
		q.qp_state = IBEMU_QPS_RTS;
		T_EQ_INT(ibemu_tp_qp_modify(a->tp, qa, &q, IBEMU_QP_STATE), 0);
	}
	/* A receive too small for GRH space and payload. */
	T_EQ_INT(ud_send(a, qa, b, qb, 0x22222222, 64), 0);
	run(&f);
	T_EQ_INT(b->ncqe, 2);
	T_EQ_INT(b->cqe[1].wr_id, 6);
	T_EQ_INT(b->cqe[1].status, IBEMU_WC_SUCCESS);
	post_recv(b, qb, 7, 8192, 40 + 8);
	T_EQ_INT(ud_send(a, qa, b, qb, 0x22222222, 64), 0);
	run(&f);
	T_EQ_INT(b->ncqe, 3);
	T_EQ_INT(b->cqe[2].status, IBEMU_WC_LOC_LEN_ERR);
	fx_down(&f);
}

/*
 * 4x HDR moves a byte in 40 ps; host cables are 2 m (10 ns), the cables
 * between the switches 5 m (25 ns); an HDR switch routes in 130 ns and
 * cuts through once the header (LRH to the last transport header) is in.
 * A packet's tail reaches the far HCA after the cables, each switch's
 * routing and header time, and its own serialization once.
 */
static uint64_t path_ps(unsigned nsw, unsigned hdr, unsigned wire)
{
	uint64_t props = nsw == 1 ? 2 * 10000 : 2 * 10000 + 25000;

	return props + nsw * (130000 + hdr * 40ull) + wire * 40ull;
}

static void send_recv(unsigned dst, unsigned nsw)
{
	struct host *a, *b;
	uint32_t qa, qb;
	uint64_t data, ack;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[dst];
	rc_pair(a, b, &defaults, &qa, &qb);
	fill(a, 0, 8, 1);
	post_recv(b, qb, 42, 64, 64);
	T_EQ_INT(post(a, qa, 7, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	run(&f);
	T_EQ_INT(b->ncqe, 1);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_U64(b->cqe[0].wr_id, 42);
	T_EQ_INT(b->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(b->cqe[0].opcode, IBEMU_WC_RECV);
	T_EQ_INT(b->cqe[0].byte_len, 8);
	T_EQ_INT(b->cqe[0].src_qp, qa);
	T_TRUE(!memcmp(b->buf + 64, a->buf, 8));
	T_EQ_U64(a->cqe[0].wr_id, 7);
	T_EQ_INT(a->cqe[0].opcode, IBEMU_WC_SEND);
	/* SEND_ONLY: LRH 8 + BTH 12 + 8 + ICRC 4 + VCRC 2 = 34 bytes; the
	 * ACK: LRH + BTH + AETH 4 + ICRC + VCRC = 30 bytes, header 24. */
	data = IBEMU_TP_DOORBELL_PS + path_ps(nsw, 20, 34);
	ack = data + path_ps(nsw, 24, 30);
	T_EQ_U64(b->cqe_t[0], data);
	T_EQ_U64(a->cqe_t[0], ack);
	fx_down(&f);
}

static void test_send_one_switch(void)
{
	send_recv(1, 1);
}

static void test_send_two_switches(void)
{
	send_recv(2, 2);
}

static void test_write(void)
{
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	rc_pair(a, b, &defaults, &qa, &qb);
	fill(a, 0, 8, 9);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_RDMA_WRITE, 0, 8, b, 512), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(a->cqe[0].opcode, IBEMU_WC_RDMA_WRITE);
	T_EQ_INT(b->ncqe, 0);
	T_TRUE(!memcmp(b->buf + 512, a->buf, 8));
	/* WRITE_ONLY carries a RETH: 36 bytes of header, 50 on the wire;
	 * the half round trip of an 8-byte WRITE across one switch. */
	T_EQ_U64(a->cqe_t[0], IBEMU_TP_DOORBELL_PS + path_ps(1, 36, 50) +
				      path_ps(1, 24, 30));
	/* With immediate: a receive completes, no data in its buffer. */
	fill(a, 100, 3000, 4);
	post_recv(b, qb, 9, 0, 0);
	T_EQ_INT(post(a, qa, 2, IBEMU_WR_RDMA_WRITE_WITH_IMM, 100, 3000, b,
		      10000),
		 0);
	run(&f);
	T_EQ_INT(b->ncqe, 1);
	T_EQ_INT(b->cqe[0].opcode, IBEMU_WC_RECV_RDMA_WITH_IMM);
	T_EQ_INT(b->cqe[0].wc_flags, IBEMU_WC_WITH_IMM);
	T_EQ_INT(b->cqe[0].imm_data, 0x1234);
	T_EQ_INT(b->cqe[0].byte_len, 3000);
	T_TRUE(!memcmp(b->buf + 10000, a->buf + 100, 3000));
	T_EQ_INT(a->ncqe, 2);
	fx_down(&f);
}

/*
 * Posts a zero-length RDMA 'opcode' with no gather list, remote address 0
 * and R_Key 0 on a fresh RC pair of hosts 0 and 1 (one switch); b posts a
 * receive with no scatter list first. Returns a's only completion and its
 * time in *t.
 */
static struct ibemu_tp_cqe zero_rdma(uint8_t opcode, struct ibemu_tp_cqe *rc,
				     uint64_t *t)
{
	struct ibemu_tp_recv_wr rwr = {9, NULL, 0};
	struct ibemu_tp_send_wr wr = {0};
	struct ibemu_tp_cqe c = {0};
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	rc_pair(a, b, &defaults, &qa, &qb);
	T_EQ_INT(ibemu_tp_post_recv(b->tp, qb, &rwr), 0);
	wr.wr_id = 1;
	wr.opcode = opcode;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.imm_data = 0x77;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	if (a->ncqe) {
		c = a->cqe[0];
		*t = a->cqe_t[0];
	}
	memset(rc, 0, sizeof(*rc));
	if (b->ncqe)
		*rc = b->cqe[0];
	T_EQ_INT(b->ncqe, opcode == IBEMU_WR_RDMA_WRITE_WITH_IMM);
	T_EQ_INT(b->nevents, 0);
	fx_down(&f);
	return c;
}

/*
 * IBA 9.7.4.1 (C9-88): an RDMA WRITE or READ of DMA length 0 checks no
 * R_Key and moves nothing, and an empty gather list needs no L_Key (UCX
 * flushes its RC endpoints so). A request (36 bytes of header with its
 * RETH, 42 on the wire) and its answer (an ACK or a READ response with
 * no payload: 24 and 30) cross one switch each way.
 */
static void test_zero_length_rdma(void)
{
	uint64_t rtt =
		IBEMU_TP_DOORBELL_PS + path_ps(1, 36, 42) + path_ps(1, 24, 30);
	struct ibemu_tp_cqe c, r;
	uint64_t t = 0;

	c = zero_rdma(IBEMU_WR_RDMA_WRITE, &r, &t);
	T_EQ_INT(c.status, IBEMU_WC_SUCCESS);
	T_EQ_INT(c.opcode, IBEMU_WC_RDMA_WRITE);
	T_EQ_U64(t, rtt);
	c = zero_rdma(IBEMU_WR_RDMA_READ, &r, &t);
	T_EQ_INT(c.status, IBEMU_WC_SUCCESS);
	T_EQ_INT(c.opcode, IBEMU_WC_RDMA_READ);
	T_EQ_INT(c.byte_len, 0);
	T_EQ_U64(t, rtt);
	/* With immediate it takes a receive, which completes empty. */
	c = zero_rdma(IBEMU_WR_RDMA_WRITE_WITH_IMM, &r, &t);
	T_EQ_INT(c.status, IBEMU_WC_SUCCESS);
	T_EQ_U64(t, IBEMU_TP_DOORBELL_PS + path_ps(1, 40, 46) +
			    path_ps(1, 24, 30));
	T_EQ_INT(r.status, IBEMU_WC_SUCCESS);
	T_EQ_INT(r.opcode, IBEMU_WC_RECV_RDMA_WITH_IMM);
	T_EQ_INT(r.byte_len, 0);
	T_EQ_INT(r.imm_data, 0x77);
	T_EQ_U64(r.wr_id, 9);
}

static void test_read_atomics(void)
{
	struct ibemu_tp_sge s;
	struct ibemu_tp_send_wr wr = {0};
	struct host *a, *b;
	uint64_t v;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[3];
	rc_pair(a, b, &defaults, &qa, &qb);
	fill(b, 4096, 10000, 5);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_RDMA_READ, 0, 10000, b, 4096), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(a->cqe[0].opcode, IBEMU_WC_RDMA_READ);
	T_EQ_INT(a->cqe[0].byte_len, 10000);
	T_TRUE(!memcmp(a->buf, b->buf + 4096, 10000));
	/* Fetch-and-add, then compare-and-swap that hits and one that
	 * misses. */
	v = 40;
	memcpy(b->buf + 64, &v, 8);
	s = (struct ibemu_tp_sge){(uintptr_t)a->buf + 256, 8, a->key};
	wr.opcode = IBEMU_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = (uintptr_t)b->buf + 64;
	wr.wr.atomic.rkey = b->key;
	wr.wr.atomic.compare_add = 2;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	run(&f);
	memcpy(&v, a->buf + 256, 8);
	T_EQ_U64(v, 40);
	memcpy(&v, b->buf + 64, 8);
	T_EQ_U64(v, 42);
	wr.opcode = IBEMU_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 7;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 9;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 4);
	T_EQ_INT(a->cqe[2].opcode, IBEMU_WC_COMP_SWAP);
	T_EQ_INT(a->cqe[3].status, IBEMU_WC_SUCCESS);
	memcpy(&v, b->buf + 64, 8);
	T_EQ_U64(v, 7);
	memcpy(&v, a->buf + 256, 8);
	T_EQ_U64(v, 7); /* the second found 7 and did not swap */
	fx_down(&f);
}

static void test_rnr(void)
{
	struct conn_opts o = defaults;
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	o.min_rnr = 1; /* 10 us */
	rc_pair(a, b, &o, &qa, &qb);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_SEND, 0, 100, NULL, 0), 0);
	/* RNR NAKs every 10 us until a receive is posted at 25 us. */
	ibemu_engine_run(f.e, 25000000, 100000000);
	T_EQ_INT(a->ncqe, 0);
	post_recv(b, qb, 3, 0, 128);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(b->ncqe, 1);
	T_TRUE(b->cqe_t[0] > 25000000 && b->cqe_t[0] < 35000000);
	fx_down(&f);

	/* rnr_retry 2: three tries, then RNR_RETRY_EXC_ERR. */
	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	o.rnr_retry = 2;
	rc_pair(a, b, &o, &qa, &qb);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_SEND, 0, 100, NULL, 0), 0);
	T_EQ_INT(post(a, qa, 2, IBEMU_WR_SEND, 0, 100, NULL, 0), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 2);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_RNR_RETRY_EXC_ERR);
	T_EQ_INT(a->cqe[1].status, IBEMU_WC_WR_FLUSH_ERR);
	/* Three tries of a 100-byte SEND (126 bytes on the wire), each
	 * answered by an RNR NAK, with two waits of 10 us between. */
	T_EQ_U64(a->cqe_t[0],
		 IBEMU_TP_DOORBELL_PS +
			 3 * (path_ps(1, 20, 126) + path_ps(1, 24, 30)) +
			 2 * 10000000ull);
	fx_down(&f);
}

static void test_bad_rkey(void)
{
	struct ibemu_tp_qp_attr q;
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[2];
	rc_pair(a, b, &defaults, &qa, &qb);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_RDMA_WRITE, 0, 8, b, 0), 0);
	/* Out of the region's bounds, then a key that does not exist. */
	T_EQ_INT(post(a, qa, 2, IBEMU_WR_RDMA_WRITE, 0, 64, b, BUF - 8), 0);
	T_EQ_INT(post(a, qa, 3, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	T_EQ_INT(post(a, qa, 4, IBEMU_WR_RDMA_READ, 0, 8, b, 0), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 4);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(a->cqe[1].status, IBEMU_WC_REM_ACCESS_ERR);
	T_EQ_U64(a->cqe[1].wr_id, 2);
	T_EQ_INT(a->cqe[2].status, IBEMU_WC_WR_FLUSH_ERR);
	T_EQ_INT(a->cqe[3].status, IBEMU_WC_WR_FLUSH_ERR);
	T_EQ_INT(ibemu_tp_qp_query(a->tp, qa, &q), 0);
	T_EQ_INT(q.qp_state, IBEMU_QPS_ERR);
	/* The responder went to Error too, with an access error event. */
	T_EQ_INT(ibemu_tp_qp_query(b->tp, qb, &q), 0);
	T_EQ_INT(q.qp_state, IBEMU_QPS_ERR);
	T_EQ_INT(b->nevents, 1);
	T_EQ_INT(b->events[0], IBEMU_EVENT_QP_ACCESS_ERR);
	/* Work posted in Error completes flushed. */
	T_EQ_INT(post(a, qa, 5, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	T_EQ_INT(a->ncqe, 5);
	T_EQ_INT(a->cqe[4].status, IBEMU_WC_WR_FLUSH_ERR);
	/* A local key that is wrong: a local protection error. */
	rc_pair(a, b, &defaults, &qa, &qb);
	{
		struct ibemu_tp_sge s = {(uintptr_t)a->buf, 8, a->key + 1};
		struct ibemu_tp_send_wr wr = {0};

		wr.opcode = IBEMU_WR_SEND;
		wr.sg_list = &s;
		wr.num_sge = 1;
		T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	}
	run(&f);
	T_EQ_INT(a->ncqe, 6);
	T_EQ_INT(a->cqe[5].status, IBEMU_WC_LOC_PROT_ERR);
	fx_down(&f);
}

/*
 * A SEND longer than the receive it lands in: the receive completes with a
 * local length error, the responder goes to Error with an Invalid Request
 * NAK (IBA 9.9.3.1, class C), and the requester's WQE fails with a remote
 * invalid request error, whether the first or the last packet overflows.
 */
static void send_too_long(uint32_t len, uint32_t cap)
{
	struct ibemu_tp_qp_attr q;
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	rc_pair(a, b, &defaults, &qa, &qb);
	post_recv(b, qb, 9, 0, cap);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_SEND, 0, len, NULL, 0), 0);
	T_EQ_INT(post(a, qa, 2, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	run(&f);
	T_EQ_INT(b->ncqe, 1);
	T_EQ_U64(b->cqe[0].wr_id, 9);
	T_EQ_INT(b->cqe[0].status, IBEMU_WC_LOC_LEN_ERR);
	T_EQ_INT(b->nevents, 1);
	T_EQ_INT(b->events[0], IBEMU_EVENT_QP_REQ_ERR);
	T_EQ_INT(a->ncqe, 2);
	T_EQ_U64(a->cqe[0].wr_id, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_REM_INV_REQ_ERR);
	T_EQ_INT(a->cqe[1].status, IBEMU_WC_WR_FLUSH_ERR);
	T_EQ_INT(ibemu_tp_qp_query(a->tp, qa, &q), 0);
	T_EQ_INT(q.qp_state, IBEMU_QPS_ERR);
	if (len == 64) {
		/* The SEND (90 bytes on the wire) and the NAK (30). */
		T_EQ_U64(a->cqe_t[0], IBEMU_TP_DOORBELL_PS +
					      path_ps(1, 20, 90) +
					      path_ps(1, 24, 30));
	}
	fx_down(&f);
}

static void test_send_too_long(void)
{
	send_too_long(64, 8);	   /* its only packet overflows */
	send_too_long(8192, 6000); /* its last packet */
	send_too_long(8192, 100);  /* its first packet */
}

/* Sequence numbers in 64-byte messages, checked at the receiver. */
static void test_drops(void)
{
	struct conn_opts o = defaults;
	struct ibemu_port_counters c;
	struct host *a, *b;
	uint32_t qa, qb, i, n = 200;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[2];
	o.timeout = 1; /* 8.192 us */
	o.retry = 7;
	rc_pair(a, b, &o, &qa, &qb);
	/* 5% of the data packets lost leaving hca1 and leaving sw2 to
	 * hca3 (so ACKs and requests both suffer). */
	T_EQ_INT(ibemu_engine_set_drop(
			 f.e, ibemu_test_port(f.t, f.e, "hca1", 1), 50000, 1),
		 0);
	T_EQ_INT(ibemu_engine_set_drop(f.e, ibemu_test_port(f.t, f.e, "sw2", 1),
				       50000, 2),
		 0);
	T_EQ_INT(ibemu_engine_set_drop(
			 f.e, ibemu_test_port(f.t, f.e, "hca3", 1), 50000, 3),
		 0);
	for (i = 0; i < n; i++) {
		post_recv(b, qb, i, (uint64_t)i * 8192, 8192);
		memcpy(a->buf + (uint64_t)i * 8192, &i, 4);
		T_EQ_INT(post(a, qa, i,
			      i % 3 ? IBEMU_WR_SEND : IBEMU_WR_SEND_WITH_IMM,
			      (uint64_t)i * 8192, i % 5 ? 64 : 8000, NULL, 0),
			 0);
	}
	run(&f);
	T_EQ_INT(a->ncqe, n);
	T_EQ_INT(b->ncqe, n);
	for (i = 0; i < n && i < a->ncqe && i < b->ncqe; i++) {
		uint32_t got;

		T_EQ_INT(a->cqe[i].status, IBEMU_WC_SUCCESS);
		T_EQ_INT(b->cqe[i].status, IBEMU_WC_SUCCESS);
		T_EQ_U64(a->cqe[i].wr_id, i);
		T_EQ_U64(b->cqe[i].wr_id, i);
		T_EQ_INT(b->cqe[i].byte_len, i % 5 ? 64 : 8000);
		memcpy(&got, b->buf + (uint64_t)i * 8192, 4);
		T_EQ_U64(got, i);
	}
	ibemu_engine_counters(f.e, ibemu_test_port(f.t, f.e, "hca1", 1), &c);
	T_TRUE(c.xmit_discards > 0);
	fx_down(&f);
}

/* READs and atomics under loss: READs executed again, each atomic once
 * (duplicates answered from the replay cache). */
static void test_drops_read_atomic(void)
{
	struct conn_opts o = defaults;
	struct ibemu_tp_send_wr wr = {0};
	struct ibemu_tp_sge s;
	struct host *a, *b;
	uint32_t qa, qb, i, n = 60;
	uint64_t v = 0;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[3];
	o.timeout = 1;
	rc_pair(a, b, &o, &qa, &qb);
	T_EQ_INT(ibemu_engine_set_drop(
			 f.e, ibemu_test_port(f.t, f.e, "hca4", 1), 100000, 5),
		 0);
	T_EQ_INT(ibemu_engine_set_drop(
			 f.e, ibemu_test_port(f.t, f.e, "hca1", 1), 100000, 6),
		 0);
	fill(b, 65536, 65536, 8);
	memcpy(b->buf, &v, 8);
	for (i = 0; i < n; i++) {
		if (i % 3 == 0) {
			T_EQ_INT(post(a, qa, i, IBEMU_WR_RDMA_READ,
				      65536 + (uint64_t)i * 1024, 1024, b,
				      65536 + (uint64_t)i * 1024),
				 0);
			continue;
		}
		s = (struct ibemu_tp_sge){(uintptr_t)a->buf + i * 8, 8, a->key};
		wr.wr_id = i;
		wr.opcode = IBEMU_WR_ATOMIC_FETCH_AND_ADD;
		wr.send_flags = IBEMU_SEND_SIGNALED;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.wr.atomic.remote_addr = (uintptr_t)b->buf;
		wr.wr.atomic.rkey = b->key;
		wr.wr.atomic.compare_add = 1;
		T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	}
	run(&f);
	T_EQ_INT(a->ncqe, n);
	for (i = 0; i < a->ncqe; i++) {
		T_EQ_INT(a->cqe[i].status, IBEMU_WC_SUCCESS);
		T_EQ_U64(a->cqe[i].wr_id, i);
	}
	memcpy(&v, b->buf, 8);
	T_EQ_U64(v, n - n / 3);
	for (i = 0; i < n; i += 3)
		T_TRUE(!memcmp(a->buf + 65536 + i * 1024,
			       b->buf + 65536 + i * 1024, 1024));
	fx_down(&f);
}

/* The peer's port goes down: retry exceeded after the timeouts. */
static void test_retry_exceeded(void)
{
	struct conn_opts o = defaults;
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	o.timeout = 4; /* 65.536 us */
	o.retry = 3;
	rc_pair(a, b, &o, &qa, &qb);
	T_EQ_INT(ibemu_engine_set_phys_state(
			 f.e, ibemu_test_port(f.t, f.e, "hca2", 1),
			 IBEMU_PHYS_DISABLED),
		 0);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	T_EQ_INT(post(a, qa, 2, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 2);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_RETRY_EXC_ERR);
	T_EQ_INT(a->cqe[1].status, IBEMU_WC_WR_FLUSH_ERR);
	/* Sent at 300 ns, then four timeouts of 65.536 us each. */
	T_EQ_U64(a->cqe_t[0], IBEMU_TP_DOORBELL_PS + 4 * 65536000ull);
	T_TRUE(b->nevents >= 1);
	T_EQ_INT(b->events[0], IBEMU_EVENT_PORT_ERR);
	fx_down(&f);
}

/*
 * A sequence-error NAK counts against retry_cnt as a timeout does: with
 * retry_cnt 0 the first lost packet in the middle of a 64 KiB SEND ends
 * the QP at the NAK, long before the 67 ms Local ACK Timeout.
 */
static void test_seq_nak_retry(void)
{
	struct conn_opts o = defaults;
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[2];
	o.timeout = 14; /* 67.1 ms */
	o.retry = 0;
	rc_pair(a, b, &o, &qa, &qb);
	T_EQ_INT(ibemu_engine_set_drop(
			 f.e, ibemu_test_port(f.t, f.e, "hca1", 1), 200000, 1),
		 0);
	post_recv(b, qb, 1, 0, 65536);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_SEND, 0, 65536, NULL, 0), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_RETRY_EXC_ERR);
	T_TRUE(a->cqe_t[0] < 1000000000ull);
	fx_down(&f);
}

/* A signaled SEND of 64 bytes stamped 'at' (IBEMU_TP_AT_ONCE: none). */
static void send_at(struct host *a, uint32_t qpn, uint64_t id, uint64_t at)
{
	struct ibemu_tp_sge s = {(uintptr_t)a->buf, 64, a->key};
	struct ibemu_tp_send_wr wr = {0};

	wr.wr_id = id;
	wr.opcode = IBEMU_WR_SEND;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	T_EQ_INT(at == IBEMU_TP_AT_ONCE
			 ? ibemu_tp_post_send(a->tp, qpn, &wr)
			 : ibemu_tp_post_send_at(a->tp, qpn, &wr, at),
		 0);
}

/*
 * Work stamped with a poster's clock (the time rule): a SEND stamped 5 us
 * ahead of the engine arrives exactly 5 us later than one posted at the
 * engine's time; a receive stamped 20 us ahead is not there for a SEND
 * arriving before that (RNR NAK, retried after min_rnr_timer) and takes
 * it once it is.
 */
static void test_stamped_posts(void)
{
	struct conn_opts o = defaults;
	struct ibemu_tp_sge s;
	struct ibemu_tp_recv_wr rwr;
	uint64_t t0, lat, stamp;
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[2];
	rc_pair(a, b, &o, &qa, &qb);
	run(&f);
	post_recv(b, qb, 1, 0, 64);
	t0 = ibemu_engine_now(f.e);
	send_at(a, qa, 1, IBEMU_TP_AT_ONCE);
	run(&f);
	T_EQ_INT(b->ncqe, 1);
	lat = b->cqe_t[0] - t0;
	T_TRUE(lat > IBEMU_TP_DOORBELL_PS);
	/* The same SEND, stamped 5 us ahead of the engine. */
	post_recv(b, qb, 2, 0, 64);
	t0 = ibemu_engine_now(f.e);
	send_at(a, qa, 2, t0 + 5000000);
	run(&f);
	T_EQ_INT(b->ncqe, 2);
	T_EQ_U64(b->cqe_t[1], t0 + 5000000 + lat);
	/* A receive stamped 20 us ahead: the SEND now is too early. */
	t0 = ibemu_engine_now(f.e);
	stamp = t0 + 20000000;
	s = (struct ibemu_tp_sge){(uintptr_t)b->buf, 64, b->key};
	rwr = (struct ibemu_tp_recv_wr){3, &s, 1};
	T_EQ_INT(ibemu_tp_post_recv_at(b->tp, qb, &rwr, stamp), 0);
	send_at(a, qa, 3, IBEMU_TP_AT_ONCE);
	run(&f);
	T_EQ_INT(b->ncqe, 3);
	T_EQ_INT(b->cqe[2].status, IBEMU_WC_SUCCESS);
	T_TRUE(b->cqe_t[2] > stamp + IBEMU_TP_DOORBELL_PS);
	T_EQ_INT(a->ncqe, 3);
	T_EQ_INT(a->cqe[2].status, IBEMU_WC_SUCCESS);
	fx_down(&f);
}

/* UC: a lost packet loses its message only. */
static void test_uc_loss(void)
{
	struct host *a, *b;
	uint32_t qa, qb, i, n = 40;
	unsigned lost = 0, k = 0;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	qa = qp_new(a, IBEMU_QPT_UC);
	qb = qp_new(b, IBEMU_QPT_UC);
	uc_connect(a, qa, b, qb);
	uc_connect(b, qb, a, qa);
	T_EQ_INT(ibemu_engine_set_drop(
			 f.e, ibemu_test_port(f.t, f.e, "hca1", 1), 100000, 9),
		 0);
	for (i = 0; i < n; i++) {
		post_recv(b, qb, i, (uint64_t)i * 16384, 16384);
		memcpy(a->buf + (uint64_t)i * 16384, &i, 4);
		T_EQ_INT(post(a, qa, i, IBEMU_WR_SEND, (uint64_t)i * 16384,
			      10000, NULL, 0),
			 0);
	}
	run(&f);
	/* Every send completes; the receiver misses some messages whole,
	 * and reuses their receive WQEs for the next ones. */
	T_EQ_INT(a->ncqe, n);
	T_TRUE(b->ncqe < n && b->ncqe > 0);
	for (i = 0; i < b->ncqe; i++) {
		uint32_t got;

		T_EQ_INT(b->cqe[i].status, IBEMU_WC_SUCCESS);
		T_EQ_INT(b->cqe[i].byte_len, 10000);
		memcpy(&got, b->buf + b->cqe[i].wr_id * 16384, 4);
		T_TRUE(got >= k);
		lost += got - k;
		k = got + 1;
	}
	T_TRUE(lost > 0);
	fx_down(&f);
}

/*
 * A UC or UD send completes as its last packet leaves: the buffer is the
 * program's again then, and what it writes there is not what arrives.
 * 4 KiB across both switches: the send completes a path's time before
 * the receive.
 */
static void reuse_at_completion(uint8_t type)
{
	uint32_t qa, qb, off = type == IBEMU_QPT_UD ? 40 : 0;
	struct host *a, *b;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[3];
	qa = qp_new(a, type);
	qb = qp_new(b, type);
	if (type == IBEMU_QPT_UD) {
		ud_init(a, qa, 0x11111111);
		ud_init(b, qb, 0x11111111);
	} else {
		uc_connect(a, qa, b, qb);
		uc_connect(b, qb, a, qa);
	}
	post_recv(b, qb, 5, 0, off + 4096);
	fill(a, 0, 4096, 3);
	memcpy(a->buf + 8192, a->buf, 4096);
	if (type == IBEMU_QPT_UD)
		T_EQ_INT(ud_send(a, qa, b, qb, 0x11111111, 4096), 0);
	else
		T_EQ_INT(post(a, qa, 77, IBEMU_WR_SEND, 0, 4096, NULL, 0), 0);
	while (!a->ncqe && ibemu_engine_run(f.e, UINT64_MAX, 1))
		;
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(b->ncqe, 0);
	memset(a->buf, 0xee, 4096);
	run(&f);
	T_EQ_INT(b->ncqe, 1);
	T_EQ_INT(b->cqe[0].status, IBEMU_WC_SUCCESS);
	T_TRUE(!memcmp(b->buf + off, a->buf + 8192, 4096));
	fx_down(&f);
}

static void test_ud_reuse_at_completion(void)
{
	reuse_at_completion(IBEMU_QPT_UD);
}

static void test_uc_reuse_at_completion(void)
{
	reuse_at_completion(IBEMU_QPT_UC);
}

/* 1 MiB WRITE across both switches: 256 packets, counted on the way. */
static void test_large_write(void)
{
	struct ibemu_port_counters c1, c2, c3;
	uint32_t sw_out1, sw_out2, sw_in, qa, qb;
	struct host *a, *b;
	uint64_t t, pkts;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[2];
	rc_pair(a, b, &defaults, &qa, &qb);
	fill(a, 0, 1u << 20, 11);
	sw_in = ibemu_test_port(f.t, f.e, "sw1", 1);
	sw_out1 = ibemu_test_port(f.t, f.e, "sw1", 7);
	sw_out2 = ibemu_test_port(f.t, f.e, "sw1", 8);
	ibemu_engine_counters_reset(f.e, sw_out1);
	ibemu_engine_counters_reset(f.e, sw_out2);
	ibemu_engine_counters_reset(f.e, sw_in);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_RDMA_WRITE, 0, 1u << 20, b, 0), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_SUCCESS);
	T_TRUE(!memcmp(a->buf, b->buf, 1u << 20));
	ibemu_engine_counters(f.e, sw_out1, &c1);
	ibemu_engine_counters(f.e, sw_out2, &c2);
	ibemu_engine_counters(f.e, sw_in, &c3);
	/* The 256 packets leave sw1 on one of its uplinks; the ACK comes
	 * back through sw1's port 1. */
	pkts = c1.xmit_pkts + c2.xmit_pkts;
	T_EQ_U64(pkts, 256);
	T_EQ_U64(c3.rcv_pkts, 256);
	/* First packet: RETH, 36 + 4096 + 6 bytes; the other 255: 20 +
	 * 4096 + 6. Each switch starts the second packet only when the
	 * first has left (its longer header routed later), so the rest
	 * follow the first one's tail back to back. */
	t = IBEMU_TP_DOORBELL_PS + path_ps(2, 36, 4138) + 255 * 4122ull * 40 +
	    path_ps(2, 24, 30);
	T_EQ_U64(a->cqe_t[0], t);
	fx_down(&f);
}

static void test_srq(void)
{
	struct ibemu_tp_srq_attr sa = {8, 1, 0};
	struct ibemu_tp_qp_init in = {0};
	struct ibemu_tp_qp_attr at = {0};
	struct ibemu_tp_recv_wr wr;
	struct ibemu_tp_sge s;
	struct host *a, *b;
	uint32_t srq, qa, qb, i;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	T_EQ_INT(ibemu_tp_srq_create(b->tp, b->pd, &sa, &srq), 0);
	in = (struct ibemu_tp_qp_init){
		.qp_type = IBEMU_QPT_RC,
		.pd = b->pd,
		.send_cq = b->cq,
		.recv_cq = b->cq,
		.srq = srq,
		.max_send_wr = 16,
		.max_send_sge = 1,
	};
	T_EQ_INT(ibemu_tp_qp_create(b->tp, &in, &qb), 0);
	qa = qp_new(a, IBEMU_QPT_RC);
	qp_connect(a, qa, b, qb, &defaults);
	qp_connect(b, qb, a, qa, &defaults);
	for (i = 0; i < 4; i++) {
		s = (struct ibemu_tp_sge){(uintptr_t)b->buf + i * 64, 64,
					  b->key};
		wr = (struct ibemu_tp_recv_wr){i, &s, 1};
		T_EQ_INT(ibemu_tp_srq_post_recv(b->tp, srq, &wr), 0);
	}
	T_EQ_INT(ibemu_tp_post_recv(b->tp, qb, &wr), -EINVAL);
	T_EQ_INT(ibemu_tp_srq_modify(b->tp, srq, 3), 0);
	T_EQ_INT(post(a, qa, 1, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	T_EQ_INT(post(a, qa, 2, IBEMU_WR_SEND, 0, 8, NULL, 0), 0);
	run(&f);
	T_EQ_INT(b->ncqe, 2);
	T_EQ_INT(b->nevents, 1);
	T_EQ_INT(b->events[0], IBEMU_EVENT_SRQ_LIMIT_REACHED);
	T_EQ_U64(b->event_id[0], srq);
	T_EQ_INT(ibemu_tp_srq_destroy(b->tp, srq), -EBUSY);
	at.qp_state = IBEMU_QPS_ERR;
	T_EQ_INT(ibemu_tp_qp_modify(b->tp, qb, &at, IBEMU_QP_STATE), 0);
	T_EQ_INT(b->nevents, 2);
	T_EQ_INT(b->events[1], IBEMU_EVENT_QP_LAST_WQE_REACHED);
	fx_down(&f);
}

/*
 * Takes XRC QP 'qpn' of 'h' to RTS towards 'dqpn' at 'dlid' with the
 * masks of its side (ib_modify_qp_is_ok()): the send side takes no
 * responder attributes, the receive side no requester ones.
 */
static void xrc_connect(struct host *h, uint32_t qpn, int recv, uint16_t dlid,
			uint32_t dqpn)
{
	const uint32_t rd =
		IBEMU_QP_MAX_DEST_RD_ATOMIC | IBEMU_QP_MIN_RNR_TIMER;
	const uint32_t rq = IBEMU_QP_RETRY_CNT | IBEMU_QP_RNR_RETRY |
			    IBEMU_QP_MAX_QP_RD_ATOMIC;
	uint32_t mask = IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
			IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN;
	struct ibemu_tp_qp_attr at = {.qp_state = IBEMU_QPS_INIT,
				      .port_num = 1,
				      .qp_access_flags = 0xe};

	T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at,
				    IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					    IBEMU_QP_PORT |
					    IBEMU_QP_ACCESS_FLAGS),
		 0);
	at = (struct ibemu_tp_qp_attr){
		.qp_state = IBEMU_QPS_RTR,
		.path_mtu = 5,
		.dest_qp_num = dqpn,
		.rq_psn = 9,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {.dlid = dlid, .port_num = 1}};
	/* The other side's attributes are refused. */
	T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at, mask | (recv ? 0 : rd)),
		 -EINVAL);
	T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at, mask | (recv ? rd : 0)),
		 0);
	at = (struct ibemu_tp_qp_attr){.qp_state = IBEMU_QPS_RTS,
				       .timeout = 14,
				       .retry_cnt = 7,
				       .rnr_retry = 7,
				       .sq_psn = 9,
				       .max_rd_atomic = 4};
	mask = IBEMU_QP_STATE | IBEMU_QP_TIMEOUT | IBEMU_QP_SQ_PSN;
	T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at, mask | rq),
		 (recv ? -EINVAL : 0));
	if (recv)
		T_EQ_INT(ibemu_tp_qp_modify(h->tp, qpn, &at, mask), 0);
}

/* Posts an XRC SEND of 8 bytes naming SRQ 'srqn'. */
static void xrc_send(struct host *a, uint32_t qpn, uint64_t id, uint32_t srqn)
{
	struct ibemu_tp_sge s = {(uintptr_t)a->buf, 8, a->key};
	struct ibemu_tp_send_wr wr = {.wr_id = id,
				      .opcode = IBEMU_WR_SEND,
				      .send_flags = IBEMU_SEND_SIGNALED,
				      .sg_list = &s,
				      .num_sge = 1,
				      .xrc_srqn = srqn};

	T_EQ_INT(ibemu_tp_post_send(a->tp, qpn, &wr), 0);
}

/*
 * XRC (IBA Annex A14): domains by key, an XRC SRQ whose CQ gets the
 * receive of the receive QP a request reached, XRCETH's 4 bytes on the
 * wire (not in the ACK), and an SRQ number the domain lacks: NAK Invalid
 * Request, the receive QP to Error.
 */
static void test_xrc(void)
{
	struct ibemu_tp_srq_attr sa = {8, 1, 0};
	struct ibemu_tp_qp_init in = {0};
	struct ibemu_tp_qp_attr q;
	uint32_t x, x2, x3, cq2, srq, ini, tgt;
	struct ibemu_tp_sge s;
	struct ibemu_tp_recv_wr wr;
	struct host *a, *b;
	uint64_t data;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	/* Domains: one per key, shared by every open of it. */
	T_EQ_INT(ibemu_tp_xrcd_open(b->tp, 5, 6, 0, 0, &x), -EAGAIN);
	T_EQ_INT(ibemu_tp_xrcd_open(b->tp, 5, 6, 1, 1, &x), 0);
	T_EQ_INT(ibemu_tp_xrcd_open(b->tp, 5, 6, 1, 1, &x2), -EINVAL);
	T_EQ_INT(ibemu_tp_xrcd_open(b->tp, 5, 6, 0, 0, &x2), 0);
	T_EQ_INT(x2, x);
	T_EQ_INT(ibemu_tp_xrcd_open(b->tp, 0, 0, 0, 0, &x3), 0);
	T_TRUE(x3 != x);
	T_EQ_INT(ibemu_tp_cq_create(b->tp, &cq2), 0);
	T_EQ_INT(ibemu_tp_xrc_srq_create(b->tp, b->pd, x, cq2, &sa, NULL, &srq),
		 0);
	in = (struct ibemu_tp_qp_init){.qp_type = IBEMU_QPT_XRC_RECV,
				       .xrcd = x};
	T_EQ_INT(ibemu_tp_qp_create(b->tp, &in, &tgt), 0);
	/* A receive QP has no PD, CQs nor queues; a send QP no receive
	 * side; a basic QP cannot take an XRC SRQ. */
	in.pd = b->pd;
	T_EQ_INT(ibemu_tp_qp_create(b->tp, &in, &ini), -EINVAL);
	in = (struct ibemu_tp_qp_init){.qp_type = IBEMU_QPT_XRC_SEND,
				       .pd = a->pd,
				       .send_cq = a->cq,
				       .recv_cq = a->cq,
				       .max_send_wr = 16,
				       .max_send_sge = 1};
	T_EQ_INT(ibemu_tp_qp_create(a->tp, &in, &ini), -EINVAL);
	in.recv_cq = 0;
	T_EQ_INT(ibemu_tp_qp_create(a->tp, &in, &ini), 0);
	in = (struct ibemu_tp_qp_init){.qp_type = IBEMU_QPT_RC,
				       .pd = b->pd,
				       .send_cq = b->cq,
				       .recv_cq = b->cq,
				       .srq = srq};
	T_EQ_INT(ibemu_tp_qp_create(b->tp, &in, &x3), -EINVAL);
	xrc_connect(a, ini, 0, b->lid, tgt);
	xrc_connect(b, tgt, 1, a->lid, ini);
	/* Only the domain's last open frees it, and not while used. */
	T_EQ_INT(ibemu_tp_xrcd_close(b->tp, x), 0);
	T_EQ_INT(ibemu_tp_xrcd_close(b->tp, x), -EBUSY);
	s = (struct ibemu_tp_sge){(uintptr_t)b->buf + 64, 64, b->key};
	wr = (struct ibemu_tp_recv_wr){42, &s, 1};
	T_EQ_INT(ibemu_tp_srq_post_recv(b->tp, srq, &wr), 0);
	fill(a, 0, 8, 3);
	xrc_send(a, ini, 7, srq);
	run(&f);
	T_EQ_INT(b->ncqe, 1);
	T_EQ_U64(b->cqe[0].wr_id, 42);
	T_EQ_INT(b->cqe[0].status, IBEMU_WC_SUCCESS);
	T_EQ_INT(b->cqe[0].qp_num, tgt);
	T_EQ_INT(b->cqe[0].src_qp, ini);
	T_EQ_INT(b->cqe[0].byte_len, 8);
	T_TRUE(!memcmp(b->buf + 64, a->buf, 8));
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_SUCCESS);
	/* SEND_ONLY with XRCETH: 34 + 4 bytes, header 24; the ACK has none
	 * (30 bytes, header 24). */
	data = IBEMU_TP_DOORBELL_PS + path_ps(1, 24, 38);
	T_EQ_U64(b->cqe_t[0], data);
	T_EQ_U64(a->cqe_t[0], data + path_ps(1, 24, 30));
	/* An SRQ number the domain does not have. */
	xrc_send(a, ini, 8, srq + 1);
	run(&f);
	T_EQ_INT(a->ncqe, 2);
	T_EQ_INT(a->cqe[1].status, IBEMU_WC_REM_INV_REQ_ERR);
	T_EQ_INT(ibemu_tp_qp_query(b->tp, tgt, &q), 0);
	T_EQ_INT(q.qp_state, IBEMU_QPS_ERR);
	T_EQ_INT(b->ncqe, 1);
	/* Teardown: the domain goes with its last user. */
	T_EQ_INT(ibemu_tp_cq_destroy(b->tp, cq2), -EBUSY);
	T_EQ_INT(ibemu_tp_qp_destroy(b->tp, tgt), 0);
	T_EQ_INT(ibemu_tp_xrcd_close(b->tp, x), -EBUSY);
	T_EQ_INT(ibemu_tp_srq_destroy(b->tp, srq), 0);
	T_EQ_INT(ibemu_tp_cq_destroy(b->tp, cq2), 0);
	T_EQ_INT(ibemu_tp_xrcd_close(b->tp, x), 0);
	T_EQ_INT(ibemu_tp_xrcd_open(b->tp, 5, 6, 0, 0, &x), -EAGAIN);
	fx_down(&f);
}

/* Inline data, several SGEs and an unsignaled WR. */
static void test_inline_sgl(void)
{
	struct ibemu_tp_sge s[3];
	struct ibemu_tp_send_wr wr = {0};
	struct host *a, *b;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[1];
	rc_pair(a, b, &defaults, &qa, &qb);
	post_recv(b, qb, 1, 0, 64);
	wr.wr_id = 5;
	wr.opcode = IBEMU_WR_SEND;
	wr.send_flags = IBEMU_SEND_INLINE; /* unsignaled */
	wr.inline_data = "inline bytes";
	wr.inline_len = 12;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	wr.inline_len = 65;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), -EINVAL);
	fill(a, 1000, 300, 2);
	s[0] = (struct ibemu_tp_sge){(uintptr_t)a->buf + 1000, 100, a->key};
	s[1] = (struct ibemu_tp_sge){(uintptr_t)a->buf + 1100, 0, 0};
	s[2] = (struct ibemu_tp_sge){(uintptr_t)a->buf + 1100, 200, a->key};
	post_recv(b, qb, 2, 4096, 1000);
	wr.wr_id = 6;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = s;
	wr.num_sge = 3;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	run(&f);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_U64(a->cqe[0].wr_id, 6);
	T_EQ_INT(b->ncqe, 2);
	T_TRUE(!memcmp(b->buf, "inline bytes", 12));
	T_TRUE(!memcmp(b->buf + 4096, a->buf + 1000, 300));
	T_EQ_INT(b->cqe[1].byte_len, 300);
	fx_down(&f);
}

/*
 * Deregistration is a barrier (IBA 10.6.3.5): a 1 MiB READ from, or WRITE
 * into, b's region, or a WRITE from a's own region ('local'), has the
 * region deregistered 20 us into its 42 us: no byte moves after, and it
 * fails at once (a round trip later for the remote cases, at the dereg
 * for the local one) with the status an HCA gives.
 */
static void dereg_mid(uint8_t opcode, int local, int want)
{
	struct ibemu_tp_sge s;
	struct ibemu_tp_send_wr wr = {0};
	uint32_t qa, qb, key, rkey;
	struct host *a, *b, *owner;
	uint64_t t;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[3];
	owner = local ? a : b;
	rc_pair(a, b, &defaults, &qa, &qb);
	if (opcode == IBEMU_WR_SEND)
		post_recv(b, qb, 9, 0, 1u << 20);
	T_EQ_INT(ibemu_tp_mr_reg(owner->tp, owner->pd,
				 (uintptr_t)owner->buf + (1u << 20), 1u << 20,
				 0xf, 200, &key, &rkey),
		 0);
	s = (struct ibemu_tp_sge){(uintptr_t)a->buf + (local ? 1u << 20 : 0),
				  1u << 20, local ? key : a->key};
	wr.wr_id = 1;
	wr.opcode = opcode;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + (local ? 0 : 1u << 20);
	wr.wr.rdma.rkey = local ? b->key : key;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	ibemu_engine_run(f.e, ibemu_engine_now(f.e) + 20000000, 100000000);
	T_EQ_INT(a->ncqe, 0);
	ncopies = 0;
	t = ibemu_engine_now(f.e);
	T_EQ_INT(ibemu_tp_mr_dereg(owner->tp, key), 0);
	run(&f);
	T_EQ_INT(ncopies, 0);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, want);
	if (local)
		T_EQ_U64(a->cqe_t[0], t);
	else
		T_TRUE(a->cqe_t[0] - t < 2000000); /* 2 us */
	if (opcode == IBEMU_WR_SEND) {
		struct ibemu_tp_qp_attr q;

		/* The responder saw a message that never ended: its receive
		 * and its state are as they were. */
		T_EQ_INT(b->ncqe, 0);
		T_EQ_INT(ibemu_tp_qp_query(b->tp, qb, &q), 0);
		T_EQ_INT(q.qp_state, IBEMU_QPS_RTS);
	}
	fx_down(&f);
}

static void test_dereg_read(void)
{
	dereg_mid(IBEMU_WR_RDMA_READ, 0, IBEMU_WC_REM_ACCESS_ERR);
}

static void test_dereg_write(void)
{
	dereg_mid(IBEMU_WR_RDMA_WRITE, 0, IBEMU_WC_REM_ACCESS_ERR);
}

static void test_dereg_local(void)
{
	dereg_mid(IBEMU_WR_RDMA_WRITE, 1, IBEMU_WC_LOC_PROT_ERR);
	dereg_mid(IBEMU_WR_SEND, 1, IBEMU_WC_LOC_PROT_ERR);
}

/*
 * A one-packet SEND whose source is deregistered while the packet is on
 * the wire: an HCA read its bytes as it left, but here they move when it
 * arrives, so the WQE fails (a local protection error at the dereg) and
 * the responder lands nothing: no copy, its receive stays, its QP in RTS.
 */
static void test_dereg_on_the_wire(void)
{
	struct ibemu_tp_qp_attr q;
	uint32_t qa, qb, key, rkey;
	struct ibemu_tp_sge s;
	struct ibemu_tp_send_wr wr = {0};
	struct host *a, *b;
	uint64_t t;
	struct fx f;

	fx_up(&f);
	a = &f.h[0];
	b = &f.h[3];
	rc_pair(a, b, &defaults, &qa, &qb);
	post_recv(b, qb, 9, 0, 4096);
	T_EQ_INT(ibemu_tp_mr_reg(a->tp, a->pd, (uintptr_t)a->buf + 8192, 4096,
				 0xf, 300, &key, &rkey),
		 0);
	s = (struct ibemu_tp_sge){(uintptr_t)a->buf + 8192, 4096, key};
	wr.wr_id = 1;
	wr.opcode = IBEMU_WR_SEND;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qa, &wr), 0);
	/* The doorbell (300 ns) and 4 KiB on the first link; the path
	 * through two switches takes longer. */
	ibemu_engine_run(f.e, ibemu_engine_now(f.e) + 600000, 100000000);
	T_EQ_INT(b->ncqe, 0);
	ncopies = 0;
	t = ibemu_engine_now(f.e);
	T_EQ_INT(ibemu_tp_mr_dereg(a->tp, key), 0);
	run(&f);
	T_EQ_INT(ncopies, 0);
	T_EQ_INT(a->ncqe, 1);
	T_EQ_INT(a->cqe[0].status, IBEMU_WC_LOC_PROT_ERR);
	T_EQ_U64(a->cqe_t[0], t);
	T_EQ_INT(b->ncqe, 0);
	T_EQ_INT(ibemu_tp_qp_query(b->tp, qb, &q), 0);
	T_EQ_INT(q.qp_state, IBEMU_QPS_RTS);
	fx_down(&f);
}

void ibemu_test_register_hca_transport(void)
{
	static const struct ibemu_test tests[] = {
		{"state_machine", test_state_machine},
		{"ud", test_ud},
		{"pkey_violation", test_pkey_violation},
		{"send_one_switch", test_send_one_switch},
		{"send_two_switches", test_send_two_switches},
		{"write", test_write},
		{"read_atomics", test_read_atomics},
		{"zero_length_rdma", test_zero_length_rdma},
		{"rnr", test_rnr},
		{"bad_rkey", test_bad_rkey},
		{"send_too_long", test_send_too_long},
		{"drops", test_drops},
		{"drops_read_atomic", test_drops_read_atomic},
		{"retry_exceeded", test_retry_exceeded},
		{"seq_nak_retry", test_seq_nak_retry},
		{"stamped_posts", test_stamped_posts},
		{"uc_loss", test_uc_loss},
		{"ud_reuse_at_completion", test_ud_reuse_at_completion},
		{"uc_reuse_at_completion", test_uc_reuse_at_completion},
		{"large_write", test_large_write},
		{"srq", test_srq},
		{"xrc", test_xrc},
		{"inline_sgl", test_inline_sgl},
		{"dereg_read", test_dereg_read},
		{"dereg_write", test_dereg_write},
		{"dereg_local", test_dereg_local},
		{"dereg_on_the_wire", test_dereg_on_the_wire},
		{NULL, NULL},
	};

	ibemu_test_add_suite("hca.transport", tests);
}

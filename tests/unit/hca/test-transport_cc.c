// SPDX-License-Identifier: MIT
/*
 * Congestion control in the QP transport (IBA Annex A10.3) on the
 * two-switch fabric: the destination answers a FECN with a BECN in the
 * RC ACK (one for a coalesced run of packets) or READ response, or with a
 * CNP (UC, UD, READ responses), the source's CCTI rises by CCTI_Increase
 * per BECN up to CCTI_Limit and falls by one per CCTI_Timer, and a source
 * whose CCTI indexes a delay spaces its packets by exactly that delay.
 * Packets are marked FECN by a test hook at the destination's port, so
 * the results do not depend on the switches' marking.
 */
#include <stdlib.h>

#include "engine.h"
#include "hca.h"
#include "node.h"
#include "transport.h"
#include "unit.h"

#define BUF  (1u << 20)
#define NLOG 256

/* 4x HDR: a byte takes 40 ps on the wire. */
#define BYTE_PS 40ull
/* A10.4.3.8: CCTI_Timer counts 1.024 us. */
#define TIMER_UNIT_PS 1024000ull

struct host {
	struct ibemu_tp *tp;
	uint32_t node, port, pd, cq, key;
	uint16_t lid;
	uint8_t *buf;
	unsigned ncqe;
};

/* A packet as it reached an HCA port. */
struct seen {
	uint64_t t;
	uint32_t port, dqpn, wire;
	uint8_t opcode, fecn, becn;
};

/*
 * The hook between the engine and the transports: it logs every packet
 * reaching a host and marks FECN on every packet reaching a port 'mark'
 * says (what a congested switch would do; ACKs and CNPs too, which the
 * transport must ignore), then hands them on.
 */
static struct {
	struct ibemu_engine *e;
	void (*deliver[2])(void *ctx, uint32_t port, struct ibemu_pkt *pkt);
	uint32_t port[2];
	int mark[2];
	struct seen log[NLOG];
	unsigned n;
} hook;

static void hook_deliver(void *ctx, uint32_t port, struct ibemu_pkt *pkt)
{
	unsigned i = port == hook.port[0] ? 0 : 1;

	if (hook.mark[i])
		pkt->fecn = 1;
	if (hook.n < NLOG)
		hook.log[hook.n++] = (struct seen){
			.t = ibemu_engine_now(hook.e),
			.port = port,
			.dqpn = pkt->dqpn,
			.wire = pkt->wire_bytes,
			.opcode = pkt->opcode,
			.fecn = pkt->fecn,
			.becn = pkt->becn,
		};
	hook.deliver[i](ctx, port, pkt);
}

struct fx {
	struct ibemu_topo *t;
	struct ibemu_engine *e;
	struct ibemu_routes *r;
	struct ibemu_tp_domain *d;
	struct host a, b; /* hca1 and hca3: two switches apart */
};

static void on_cqe(void *ctx, uint32_t cq, const struct ibemu_tp_cqe *c)
{
	struct host *h = ctx;

	(void)cq;
	T_EQ_INT(c->status, IBEMU_WC_SUCCESS);
	h->ncqe++;
}

static int on_copy(void *ctx, const struct ibemu_tp_mem *dst,
		   const struct ibemu_tp_mem *src, uint64_t len)
{
	(void)ctx;
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

static const struct ibemu_tp_ops host_ops = {
	.cqe = on_cqe,
	.copy = on_copy,
	.read = on_read,
	.write = on_write,
};

static void host_up(struct fx *f, struct host *h, const char *name, unsigned i)
{
	uint32_t rkey;

	h->node = ibemu_test_node(f->t, name);
	h->port = ibemu_engine_port_index(f->e, h->node, 1);
	h->lid = ibemu_engine_get_lid(f->e, h->node, 1);
	T_EQ_INT(ibemu_tp_create(f->d, h->node, &host_ops, h, &h->tp), 0);
	T_EQ_INT(ibemu_tp_pd_alloc(h->tp, &h->pd), 0);
	T_EQ_INT(ibemu_tp_cq_create(h->tp, &h->cq), 0);
	h->buf = calloc(1, BUF);
	T_EQ_INT(ibemu_tp_mr_reg(h->tp, h->pd, (uintptr_t)h->buf, BUF, 0xf,
				 100 + i, &h->key, &rkey),
		 0);
	/* Hook the port's deliveries (the engine's binding, node.h). */
	hook.port[i] = h->port;
	hook.deliver[i] = f->e->owner[h->port]->ops.deliver;
	f->e->owner[h->port]->ops.deliver = hook_deliver;
}

static void fx_up(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	memset(&hook, 0, sizeof(hook));
	ibemu_test_engine_up("two-switch", 1, NULL, NULL, &f->t, &f->e, &f->r);
	T_EQ_INT(ibemu_tp_domain_create(f->e, &f->d), 0);
	hook.e = f->e;
	host_up(f, &f->a, "hca1", 0);
	host_up(f, &f->b, "hca3", 1);
}

static void fx_down(struct fx *f)
{
	ibemu_engine_run(f->e, UINT64_MAX, 100000000);
	ibemu_tp_destroy(f->a.tp);
	ibemu_tp_destroy(f->b.tp);
	free(f->a.buf);
	free(f->b.buf);
	ibemu_tp_domain_destroy(f->d);
	ibemu_test_engine_down(f->t, f->e, f->r);
}

static void run(struct fx *f)
{
	ibemu_engine_run(f->e, UINT64_MAX, 100000000);
}

/*
 * Configures host 'h''s port as a CC manager would: control per QP, on
 * SL 0 the given CCTI_Increase and CCTI_Timer, CCTI_Limit 'limit', and
 * the table entry 'at' a delay of (packet time x 'mult') >> 'shift'.
 */
static struct ibemu_hca_cc *cc_set(struct fx *f, struct host *h, unsigned inc,
				   unsigned timer, unsigned limit, unsigned at,
				   unsigned mult, unsigned shift)
{
	struct ibemu_hca_cc *cc = ibemu_hca_cc(f->e, h->port, 1);

	T_TRUE(cc != NULL);
	cc->port_control = 0;
	cc->control_map = 1;
	cc->sl[0].ccti_increase = (uint8_t)inc;
	cc->sl[0].ccti_timer = (uint16_t)timer;
	cc->ccti_limit = (uint16_t)limit;
	cc->cct[at].multiplier = (uint16_t)mult;
	cc->cct[at].shift = (uint8_t)shift;
	return cc;
}

static uint32_t qp_new(struct host *h, uint8_t type)
{
	struct ibemu_tp_qp_init in = {
		.qp_type = type,
		.pd = h->pd,
		.send_cq = h->cq,
		.recv_cq = h->cq,
		.max_send_wr = 64,
		.max_recv_wr = 64,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	uint32_t qpn = 0;

	T_EQ_INT(ibemu_tp_qp_create(h->tp, &in, &qpn), 0);
	return qpn;
}

/* Takes 'qpn' of 'a' to RTS, connected to 'rq' of 'b' (RC, UC) or
 * with Q_Key 7 (UD). */
static void qp_up(struct host *a, uint32_t qpn, uint8_t type, struct host *b,
		  uint32_t rq)
{
	struct ibemu_tp_qp_attr at = {0};
	uint32_t mask = IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX | IBEMU_QP_PORT;

	at.qp_state = IBEMU_QPS_INIT;
	at.port_num = 1;
	at.qkey = 7;
	at.qp_access_flags = IBEMU_ACCESS_REMOTE_WRITE;
	mask |= type == IBEMU_QPT_UD ? IBEMU_QP_QKEY : IBEMU_QP_ACCESS_FLAGS;
	T_EQ_INT(ibemu_tp_qp_modify(a->tp, qpn, &at, mask), 0);
	at.qp_state = IBEMU_QPS_RTR;
	at.path_mtu = 5;
	at.dest_qp_num = rq;
	at.ah_attr.dlid = b->lid;
	at.ah_attr.port_num = 1;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 1;
	mask = IBEMU_QP_STATE;
	if (type != IBEMU_QPT_UD)
		mask |= IBEMU_QP_AV | IBEMU_QP_PATH_MTU | IBEMU_QP_DEST_QPN |
			IBEMU_QP_RQ_PSN;
	if (type == IBEMU_QPT_RC)
		mask |= IBEMU_QP_MAX_DEST_RD_ATOMIC | IBEMU_QP_MIN_RNR_TIMER;
	T_EQ_INT(ibemu_tp_qp_modify(a->tp, qpn, &at, mask), 0);
	at.qp_state = IBEMU_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 1;
	mask = IBEMU_QP_STATE | IBEMU_QP_SQ_PSN;
	if (type == IBEMU_QPT_RC)
		mask |= IBEMU_QP_TIMEOUT | IBEMU_QP_RETRY_CNT |
			IBEMU_QP_RNR_RETRY | IBEMU_QP_MAX_QP_RD_ATOMIC;
	T_EQ_INT(ibemu_tp_qp_modify(a->tp, qpn, &at, mask), 0);
}

/* A QP of 'type' on each host, each connected to the other, in RTS. */
static void pair(struct fx *f, uint8_t type, uint32_t *qa, uint32_t *qb)
{
	*qa = qp_new(&f->a, type);
	*qb = qp_new(&f->b, type);
	qp_up(&f->a, *qa, type, &f->b, *qb);
	qp_up(&f->b, *qb, type, &f->a, *qa);
}

static void post_recv(struct host *h, uint32_t qpn)
{
	struct ibemu_tp_sge s = {(uintptr_t)h->buf, 4096 + 40, h->key};
	struct ibemu_tp_recv_wr wr = {1, &s, 1};

	T_EQ_INT(ibemu_tp_post_recv(h->tp, qpn, &wr), 0);
}

/* Posts a SEND (or a WRITE) of 'len' bytes; UD to 'rqpn' of 'b'. */
static void post(struct host *a, uint32_t qpn, uint8_t opcode, uint32_t len,
		 struct host *b, uint32_t rqpn)
{
	struct ibemu_tp_sge s = {(uintptr_t)a->buf, len, a->key};
	struct ibemu_tp_send_wr wr = {0};

	wr.wr_id = 1;
	wr.opcode = opcode;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.ud.ah.dlid = b->lid;
	wr.wr.ud.remote_qpn = rqpn;
	wr.wr.ud.remote_qkey = 7;
	if (opcode == IBEMU_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
		wr.wr.rdma.rkey = b->key;
	}
	T_EQ_INT(ibemu_tp_post_send(a->tp, qpn, &wr), 0);
}

static struct ibemu_port_counters counters(struct fx *f, struct host *h)
{
	struct ibemu_port_counters c;

	ibemu_engine_counters(f->e, h->port, &c);
	return c;
}

/* The CCTI of QP 'qpn' of 'h' now. */
static unsigned ccti(struct fx *f, struct host *h, uint32_t qpn)
{
	struct ibemu_tp_qp_cc q;

	T_EQ_INT(ibemu_tp_qp_cc_next(h->tp, qpn, &q), 0);
	T_EQ_INT(q.qpn, qpn);
	return ibemu_hca_cc_ccti(f->e, h->port, q.sl, q.src);
}

/*
 * RC: every ACK of a marked SEND carries BECN (A10.3.2); each raises the
 * requester's CCTI by CCTI_Increase (2) up to CCTI_Limit (5). Then a
 * CCTI_Timer of 10 units takes one off per 10.24 us, down to CCTI_Min.
 */
static void test_rc_becn(void)
{
	static const unsigned want[] = {2, 4, 5, 5};
	struct ibemu_hca_cc *cc;
	uint64_t t0;
	uint32_t qa, qb;
	unsigned i, k;
	struct fx f;

	fx_up(&f);
	cc = cc_set(&f, &f.a, 2, 0, 5, 0, 0, 0);
	pair(&f, IBEMU_QPT_RC, &qa, &qb);
	hook.mark[0] = hook.mark[1] = 1;
	for (i = 0; i < 4; i++) {
		post_recv(&f.b, qb);
		post(&f.a, qa, IBEMU_WR_SEND, 64, &f.b, 0);
		run(&f);
		T_EQ_INT(ccti(&f, &f.a, qa), want[i]);
	}
	T_EQ_INT(f.a.ncqe, 4);
	T_EQ_INT(f.b.ncqe, 4);
	/* Four SENDs reached b marked, four ACKs came back with BECN. */
	for (i = 0, k = 0; i < hook.n; i++) {
		if (hook.log[i].port == f.a.port) {
			T_EQ_INT(hook.log[i].opcode, 0x11);
			T_EQ_INT(hook.log[i].becn, 1);
			k++;
		} else {
			T_EQ_INT(hook.log[i].fecn, 1);
		}
	}
	T_EQ_INT(k, 4);
	T_EQ_U64(counters(&f, &f.b).fecn_rcvd, 4);
	T_EQ_U64(counters(&f, &f.b).cnp_sent, 0);
	T_EQ_U64(counters(&f, &f.a).becn_rcvd, 4);
	/* The ACKs came marked too: a FECN on an ACK asks nothing. */
	T_EQ_U64(counters(&f, &f.a).fecn_rcvd, 0);
	T_EQ_U64(counters(&f, &f.b).becn_rcvd, 0);
	/*
	 * A10.3.1.2: a zero CCTI_Timer never expires; set, it counts from
	 * when the CCTI was last read (the run ended after the requester's
	 * retransmission timer, long after the last BECN).
	 */
	cc->sl[0].ccti_timer = 10;
	cc->sl[0].ccti_min = 1;
	t0 = ibemu_engine_now(f.e);
	ibemu_engine_run(f.e, t0 + 10 * TIMER_UNIT_PS - 1, 100);
	T_EQ_INT(ccti(&f, &f.a, qa), 5);
	ibemu_engine_run(f.e, t0 + 10 * TIMER_UNIT_PS, 100);
	T_EQ_INT(ccti(&f, &f.a, qa), 4);
	ibemu_engine_run(f.e, t0 + 30 * TIMER_UNIT_PS, 100);
	T_EQ_INT(ccti(&f, &f.a, qa), 2);
	ibemu_engine_run(f.e, t0 + 100 * TIMER_UNIT_PS, 100);
	T_EQ_INT(ccti(&f, &f.a, qa), 1);
	fx_down(&f);
}

/*
 * A 4-packet RC WRITE marked in full: the responder acknowledges only its
 * last packet (AckReq), and that one ACK carries the BECN of all four.
 */
static void test_rc_coalesced(void)
{
	uint32_t qa, qb, i, acks = 0;
	struct fx f;

	fx_up(&f);
	cc_set(&f, &f.a, 1, 0, 10, 0, 0, 0);
	pair(&f, IBEMU_QPT_RC, &qa, &qb);
	hook.mark[1] = 1;
	post(&f.a, qa, IBEMU_WR_RDMA_WRITE, 4 * 4096, &f.b, 0);
	run(&f);
	T_EQ_INT(f.a.ncqe, 1);
	for (i = 0; i < hook.n; i++) {
		if (hook.log[i].port != f.a.port)
			continue;
		T_EQ_INT(hook.log[i].becn, 1);
		acks++;
	}
	T_EQ_INT(acks, 1);
	T_EQ_U64(counters(&f, &f.b).fecn_rcvd, 4);
	T_EQ_U64(counters(&f, &f.a).becn_rcvd, 1);
	T_EQ_INT(ccti(&f, &f.a, qa), 1);
	fx_down(&f);
}

/*
 * UD and UC: the destination sends a CNP (opcode 0x80, LRH and BTH: 26
 * bytes on the wire) to the source QP, whose CCTI rises. A FECN on the
 * CNP itself asks nothing back.
 */
static void cnp(uint8_t type)
{
	uint32_t qa, qb, i, ncnp = 0;
	struct fx f;

	fx_up(&f);
	cc_set(&f, &f.a, 3, 0, 10, 0, 0, 0);
	pair(&f, type, &qa, &qb);
	hook.mark[0] = hook.mark[1] = 1;
	post_recv(&f.b, qb);
	post_recv(&f.b, qb);
	post(&f.a, qa, IBEMU_WR_SEND, 64, &f.b, qb);
	post(&f.a, qa, IBEMU_WR_SEND, 64, &f.b, qb);
	run(&f);
	T_EQ_INT(f.b.ncqe, 2);
	for (i = 0; i < hook.n; i++) {
		if (hook.log[i].port != f.a.port)
			continue;
		T_EQ_INT(hook.log[i].opcode, IBEMU_OPCODE_CNP);
		T_EQ_INT(hook.log[i].dqpn, qa);
		T_EQ_INT(hook.log[i].wire, 26);
		ncnp++;
	}
	T_EQ_INT(ncnp, 2);
	T_EQ_INT(ccti(&f, &f.a, qa), 6);
	T_EQ_U64(counters(&f, &f.b).fecn_rcvd, 2);
	T_EQ_U64(counters(&f, &f.b).cnp_sent, 2);
	T_EQ_U64(counters(&f, &f.a).becn_rcvd, 2);
	/* The CNPs came marked too: nothing went back for them. */
	T_EQ_U64(counters(&f, &f.a).fecn_rcvd, 0);
	T_EQ_U64(counters(&f, &f.a).cnp_sent, 0);
	T_EQ_U64(counters(&f, &f.b).becn_rcvd, 0);
	T_EQ_INT(hook.n, 4);
	fx_down(&f);
}

static void test_ud_cnp(void)
{
	cnp(IBEMU_QPT_UD);
}

static void test_uc_cnp(void)
{
	cnp(IBEMU_QPT_UC);
}

/*
 * A10.3.1: a source at CCTI 1 whose table entry holds multiplier 3 and
 * shift 1 waits 1.5 packet times after each data packet: the packets of a
 * 4-packet WRITE reach the responder spaced by the delay after the one
 * before and their own time on the wire (cut-through: the path adds the
 * same to each, but for the header time: the RETH makes the first
 * packet's 16 bytes longer, which each switch takes before it routes).
 * Without CC configured, they come back to back.
 */
static void write_gaps(int throttle, uint64_t *gap)
{
	uint64_t first = 0;
	unsigned i, k = 0;
	uint32_t qa, qb;
	struct fx f;

	fx_up(&f);
	pair(&f, IBEMU_QPT_UC, &qa, &qb);
	if (throttle) {
		/* One marked SEND takes the source to CCTI 1. */
		cc_set(&f, &f.a, 1, 0, 1, 1, 3, 1);
		hook.mark[1] = 1;
		post_recv(&f.b, qb);
		post(&f.a, qa, IBEMU_WR_SEND, 64, &f.b, qb);
		run(&f);
		T_EQ_INT(ccti(&f, &f.a, qa), 1);
		hook.mark[1] = 0;
	}
	hook.n = 0;
	post(&f.a, qa, IBEMU_WR_RDMA_WRITE, 4 * 4096, &f.b, qb);
	run(&f);
	for (i = 0; i < hook.n; i++) {
		if (hook.log[i].port != f.b.port)
			continue;
		if (k)
			gap[k - 1] = hook.log[i].t - first;
		first = hook.log[i].t;
		k++;
	}
	T_EQ_INT(k, 4);
	fx_down(&f);
}

static void test_spacing(void)
{
	/* WRITE_FIRST: LRH, BTH, RETH, 4096, ICRC, VCRC = 4138 bytes;
	 * MIDDLE and LAST: 4122. */
	uint64_t first = 4138 * BYTE_PS, mid = 4122 * BYTE_PS, gap[3];

	write_gaps(0, gap);
	T_EQ_U64(gap[0], mid);
	T_EQ_U64(gap[1], mid);
	T_EQ_U64(gap[2], mid);
	write_gaps(1, gap);
	T_EQ_U64(gap[0], first * 3 / 2 + mid - 2 * 16 * BYTE_PS);
	T_EQ_U64(gap[1], mid * 3 / 2 + mid);
	T_EQ_U64(gap[2], mid * 3 / 2 + mid);
}

/* Posts an RDMA READ of 'len' bytes of b's buffer into a's. */
static void post_read(struct host *a, uint32_t qpn, uint32_t len,
		      struct host *b)
{
	struct ibemu_tp_sge s = {(uintptr_t)a->buf, len, a->key};
	struct ibemu_tp_send_wr wr = {0};

	wr.wr_id = 2;
	wr.opcode = IBEMU_WR_RDMA_READ;
	wr.send_flags = IBEMU_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
	wr.wr.rdma.rkey = b->key;
	T_EQ_INT(ibemu_tp_post_send(a->tp, qpn, &wr), 0);
}

/*
 * RDMA READ, both ways marked: the responder's first READ response
 * carries the BECN of the marked request; each marked response makes the
 * requester send a CNP to the responder's QP, the source of READ data
 * (A10.3.3). Then, unmarked, the responder at CCTI 4, whose entry holds a
 * delay of one packet time, spaces its responses by that delay.
 */
static void test_read(void)
{
	/* READ_RESP_FIRST and LAST carry an AETH: 4126 bytes, MIDDLE 4122. */
	uint64_t edge = 4126 * BYTE_PS, mid = 4122 * BYTE_PS,
		 aeth = 4 * BYTE_PS;
	uint64_t t[4];
	uint32_t qa, qb;
	unsigned i, k;
	struct fx f;

	fx_up(&f);
	cc_set(&f, &f.a, 1, 0, 10, 0, 0, 0);
	cc_set(&f, &f.b, 1, 0, 10, 4, 1, 0);
	pair(&f, IBEMU_QPT_RC, &qa, &qb);
	{
		struct ibemu_tp_qp_attr at = {0};

		at.qp_access_flags = IBEMU_ACCESS_REMOTE_READ;
		T_EQ_INT(ibemu_tp_qp_modify(f.b.tp, qb, &at,
					    IBEMU_QP_ACCESS_FLAGS),
			 0);
	}
	hook.mark[0] = hook.mark[1] = 1;
	post_read(&f.a, qa, 4 * 4096, &f.b);
	run(&f);
	T_EQ_INT(f.a.ncqe, 1);
	T_EQ_INT(ccti(&f, &f.a, qa), 1);
	T_EQ_INT(ccti(&f, &f.b, qb), 4);
	T_EQ_U64(counters(&f, &f.b).fecn_rcvd, 1);
	T_EQ_U64(counters(&f, &f.b).cnp_sent, 0);
	T_EQ_U64(counters(&f, &f.b).becn_rcvd, 4);
	T_EQ_U64(counters(&f, &f.a).fecn_rcvd, 4);
	T_EQ_U64(counters(&f, &f.a).cnp_sent, 4);
	T_EQ_U64(counters(&f, &f.a).becn_rcvd, 1);
	for (i = 0, k = 0; i < hook.n; i++)
		if (hook.log[i].port == f.a.port && hook.log[i].becn)
			k++;
	T_EQ_INT(k, 1);

	hook.mark[0] = hook.mark[1] = 0;
	hook.n = 0;
	post_read(&f.a, qa, 4 * 4096, &f.b);
	run(&f);
	for (i = 0, k = 0; i < hook.n && k < 4; i++)
		if (hook.log[i].port == f.a.port)
			t[k++] = hook.log[i].t;
	T_EQ_INT(k, 4);
	/* Tails: each the delay and the next packet's time apart, the
	 * header times (two switches) shifting them by the AETH's 4 bytes. */
	T_EQ_U64(t[1] - t[0], edge + mid - 2 * aeth);
	T_EQ_U64(t[2] - t[1], mid + mid);
	T_EQ_U64(t[3] - t[2], mid + edge + 2 * aeth);
	T_EQ_INT(ccti(&f, &f.b, qb), 4);
	fx_down(&f);
}

/*
 * Port_Control bit 0 (A10.4.3.8): control per SL. Two QPs on SL 0 share
 * one CCTI: a BECN to either raises both.
 */
static void test_per_sl(void)
{
	struct ibemu_hca_cc *cc;
	uint32_t qa, qa2, qb;
	struct fx f;

	fx_up(&f);
	cc = cc_set(&f, &f.a, 4, 0, 20, 0, 0, 0);
	cc->port_control = 1;
	qa = qp_new(&f.a, IBEMU_QPT_UD);
	qa2 = qp_new(&f.a, IBEMU_QPT_UD);
	qb = qp_new(&f.b, IBEMU_QPT_UD);
	qp_up(&f.a, qa, IBEMU_QPT_UD, &f.b, 0);
	qp_up(&f.a, qa2, IBEMU_QPT_UD, &f.b, 0);
	qp_up(&f.b, qb, IBEMU_QPT_UD, &f.a, 0);
	hook.mark[1] = 1;
	post_recv(&f.b, qb);
	post(&f.a, qa, IBEMU_WR_SEND, 64, &f.b, qb);
	run(&f);
	T_EQ_INT(ccti(&f, &f.a, qa), 4);
	T_EQ_INT(ccti(&f, &f.a, qa2), 4);
	T_EQ_INT(cc->sl_src[0].ccti, 4);
	T_EQ_U64(cc->sl_src[0].becns, 1);
	fx_down(&f);
}

void ibemu_test_register_hca_transport_cc(void)
{
	static const struct ibemu_test tests[] = {
		{"rc_becn", test_rc_becn}, {"rc_coalesced", test_rc_coalesced},
		{"ud_cnp", test_ud_cnp},   {"uc_cnp", test_uc_cnp},
		{"spacing", test_spacing}, {"read", test_read},
		{"per_sl", test_per_sl},   {NULL, NULL},
	};

	ibemu_test_add_suite("hca.transport_cc", tests);
}

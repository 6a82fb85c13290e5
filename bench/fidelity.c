// SPDX-License-Identifier: MIT
/*
 * bench-fidelity: ibemu's virtual-time equivalents of perftest's
 * ib_send_lat, ib_write_lat, ib_read_lat, ib_write_bw, ib_read_bw,
 * ib_send_bw and of an HCA's message rate, for each HCA preset
 * (hca/host_model.h), next to the published figures that
 * docs/hca-model.md cites, with the ratio and whether the targets
 * are met. The QP transport is driven directly, two HCAs cabled back to
 * back (no daemon); a program's CPU costs are charged as the verbs library
 * charges them (verbs/cost.h), so the figures are what perftest would
 * print under 'ibemu exec'. Virtual time: the same on any machine.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "diag.h"
#include "engine.h"
#include "model.h"
#include "packet.h"
#include "rate.h"
#include "routing.h"
#include "topo.h"
#include "transport.h"
#include "yaml.h"

#define MTU_ENUM   5 /* IBV_MTU_4096 */
#define BUF_BYTES  (2u << 20)
#define MAX_INLINE 188 /* perftest's default inline size on mlx5 */
#define WINDOW	   128 /* perftest's default tx depth */
#define RECVS	   512

struct host {
	struct ibemu_tp *tp;
	uint32_t node, pd, cq, key, qpn, udqpn;
	uint16_t lid;
	uint8_t *buf;
	int ud; /* SENDs go on the UD QP (ud_lat) */
	uint64_t landed, sends, recvs, reads, errors;
	uint64_t t_landed, t_send, t_recv, t_read; /* of the last one */
};

struct bench {
	struct ibemu_topo *t;
	struct ibemu_engine *e;
	struct ibemu_tp_domain *d;
	struct host h[2];
	uint64_t post_ps, poll_ps; /* a program's CPU costs (cost.h) */
};

static void on_cqe(void *ctx, uint32_t cq, const struct ibemu_tp_cqe *c)
{
	struct host *h = ctx;
	uint64_t now = ibemu_engine_now(ibemu_tp_engine(h->tp));

	(void)cq;
	if (c->status != IBEMU_WC_SUCCESS) {
		h->errors++;
	} else if (c->opcode == IBEMU_WC_RECV) {
		h->recvs++;
		h->t_recv = now;
	} else if (c->opcode == IBEMU_WC_RDMA_READ) {
		h->reads++;
		h->t_read = now;
	} else {
		h->sends++;
		h->t_send = now;
	}
}

static void landed(struct host *h)
{
	h->landed++;
	h->t_landed = ibemu_engine_now(ibemu_tp_engine(h->tp));
}

static int on_copy(void *ctx, const struct ibemu_tp_mem *dst,
		   const struct ibemu_tp_mem *src, uint64_t len)
{
	(void)ctx;
	memmove((void *)(uintptr_t)dst->addr, (void *)(uintptr_t)src->addr,
		len);
	landed(dst->ctx);
	return 0;
}

static int on_write(void *ctx, const struct ibemu_tp_mem *dst, const void *buf,
		    uint64_t len)
{
	(void)ctx;
	memmove((void *)(uintptr_t)dst->addr, buf, len);
	landed(dst->ctx);
	return 0;
}

static int on_read(void *ctx, const struct ibemu_tp_mem *src, void *buf,
		   uint64_t len)
{
	(void)ctx;
	memmove(buf, (void *)(uintptr_t)src->addr, len);
	return 0;
}

static const struct ibemu_tp_ops host_ops = {
	.cqe = on_cqe,
	.copy = on_copy,
	.write = on_write,
	.read = on_read,
};

static int qp_connect(struct host *a, const struct host *b)
{
	struct ibemu_tp_qp_attr at = {0};
	int ret;

	at.qp_state = IBEMU_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags =
		IBEMU_ACCESS_REMOTE_WRITE | IBEMU_ACCESS_REMOTE_READ;
	ret = ibemu_tp_qp_modify(a->tp, a->qpn, &at,
				 IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					 IBEMU_QP_PORT | IBEMU_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	at.qp_state = IBEMU_QPS_RTR;
	at.path_mtu = MTU_ENUM;
	at.dest_qp_num = b->qpn;
	at.ah_attr.dlid = b->lid;
	at.ah_attr.port_num = 1;
	at.max_dest_rd_atomic = 16;
	at.min_rnr_timer = 12;
	ret = ibemu_tp_qp_modify(
		a->tp, a->qpn, &at,
		IBEMU_QP_STATE | IBEMU_QP_AV | IBEMU_QP_PATH_MTU |
			IBEMU_QP_DEST_QPN | IBEMU_QP_RQ_PSN |
			IBEMU_QP_MAX_DEST_RD_ATOMIC | IBEMU_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	at.qp_state = IBEMU_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 16;
	return ibemu_tp_qp_modify(a->tp, a->qpn, &at,
				  IBEMU_QP_STATE | IBEMU_QP_TIMEOUT |
					  IBEMU_QP_RETRY_CNT |
					  IBEMU_QP_RNR_RETRY | IBEMU_QP_SQ_PSN |
					  IBEMU_QP_MAX_QP_RD_ATOMIC);
}

/* Receives on the RC QP, or on the UD QP while 'ud' is set (room for the
 * 40-byte GRH space and an MTU). */
static int post_recvs(struct host *h, unsigned n)
{
	struct ibemu_tp_sge s = {(uintptr_t)h->buf, BUF_BYTES / 2, h->key};
	struct ibemu_tp_recv_wr wr = {.wr_id = 1, .sg_list = &s, .num_sge = 1};
	int ret = 0;

	while (n-- && !ret)
		ret = ibemu_tp_post_recv(h->tp, h->ud ? h->udqpn : h->qpn, &wr);
	return ret;
}

#define QKEY 0x11111111u

static int ud_up(struct host *h)
{
	struct ibemu_tp_qp_attr at = {0};
	int ret;

	at.qp_state = IBEMU_QPS_INIT;
	at.port_num = 1;
	at.qkey = QKEY;
	ret = ibemu_tp_qp_modify(h->tp, h->udqpn, &at,
				 IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					 IBEMU_QP_PORT | IBEMU_QP_QKEY);
	at.qp_state = IBEMU_QPS_RTR;
	if (!ret)
		ret = ibemu_tp_qp_modify(h->tp, h->udqpn, &at, IBEMU_QP_STATE);
	at.qp_state = IBEMU_QPS_RTS;
	if (!ret)
		ret = ibemu_tp_qp_modify(h->tp, h->udqpn, &at,
					 IBEMU_QP_STATE | IBEMU_QP_SQ_PSN);
	h->ud = 1;
	if (!ret)
		ret = post_recvs(h, RECVS);
	h->ud = 0;
	return ret;
}

static int host_up(struct bench *b, struct host *h, const char *name)
{
	struct ibemu_tp_qp_init in = {
		.qp_type = IBEMU_QPT_RC,
		.max_send_wr = 4096,
		.max_recv_wr = RECVS,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.max_inline_data = MAX_INLINE,
	};
	uint32_t rkey;
	int ret;

	h->node = ibemu_topo_find(b->t, name);
	h->lid = ibemu_engine_get_lid(b->e, h->node, 1);
	h->buf = calloc(1, BUF_BYTES);
	if (!h->buf)
		return -ENOMEM;
	ret = ibemu_tp_create(b->d, h->node, &host_ops, h, &h->tp);
	if (!ret)
		ret = ibemu_tp_pd_alloc(h->tp, &h->pd);
	if (!ret)
		ret = ibemu_tp_cq_create(h->tp, &h->cq);
	if (!ret)
		ret = ibemu_tp_mr_reg(
			h->tp, h->pd, (uintptr_t)h->buf, BUF_BYTES,
			IBEMU_ACCESS_LOCAL_WRITE | IBEMU_ACCESS_REMOTE_WRITE |
				IBEMU_ACCESS_REMOTE_READ,
			h == &b->h[0] ? 0 : 1, &h->key, &rkey);
	in.pd = h->pd;
	in.send_cq = in.recv_cq = h->cq;
	if (!ret)
		ret = ibemu_tp_qp_create(h->tp, &in, &h->qpn);
	in.qp_type = IBEMU_QPT_UD;
	if (!ret)
		ret = ibemu_tp_qp_create(h->tp, &in, &h->udqpn);
	if (!ret)
		ret = ud_up(h);
	return ret;
}

/* hca_tuning: for every preset, a YAML flow mapping's body (--tuning). */
static const char *tuning;

static int bench_up(struct bench *b, const char *preset, const char *speed)
{
	struct ibemu_routes *r = NULL;
	struct ibemu_diag diag;
	char yaml[1024];
	int ret, n;

	memset(b, 0, sizeof(*b));
	b->post_ps = ibemu_verbs_costs[IBEMU_VCOST_POST_SEND].unit_ps;
	b->poll_ps = ibemu_verbs_costs[IBEMU_VCOST_POLL_HIT].ps;
	n = snprintf(yaml, sizeof(yaml),
		     "name: bench-fidelity\n"
		     "defaults: {width: 4x, speed: %s, cable_length: 50cm,"
		     " hca_model: %s}\n"
		     "hca_tuning: {%s}\n"
		     "hcas: [{name: hca1}, {name: hca2}]\n"
		     "links: [[hca1:1, hca2:1]]\n",
		     speed, preset, tuning ? tuning : "");
	if (n < 0 || (size_t)n >= sizeof(yaml)) {
		fprintf(stderr, "bench-fidelity: --tuning is too long\n");
		return -EINVAL;
	}
	ibemu_diag_init(&diag);
	ret = ibemu_yaml_load("bench-fidelity.yaml", yaml, (size_t)n, &b->t,
			      &diag);
	if (ret)
		fprintf(stderr, "bench-fidelity: %s\n",
			diag.error ? ibemu_diag_what(diag.error) : "bad YAML");
	ibemu_diag_fini(&diag);
	if (ret)
		return ret;
	ret = ibemu_model_create(b->t, &b->e);
	if (!ret)
		ret = ibemu_routing_run_topo(ibemu_routing_find("minhop"), b->t,
					     &r);
	if (!ret)
		ret = ibemu_engine_apply_routes(b->e, r);
	ibemu_routes_destroy(r);
	if (!ret)
		ret = ibemu_tp_domain_create(b->e, &b->d);
	if (!ret)
		ret = host_up(b, &b->h[0], "hca1");
	if (!ret)
		ret = host_up(b, &b->h[1], "hca2");
	if (!ret)
		ret = qp_connect(&b->h[0], &b->h[1]);
	if (!ret)
		ret = qp_connect(&b->h[1], &b->h[0]);
	if (!ret)
		ret = post_recvs(&b->h[0], RECVS);
	if (!ret)
		ret = post_recvs(&b->h[1], RECVS);
	return ret;
}

static void bench_down(struct bench *b)
{
	unsigned i;

	if (b->e)
		ibemu_engine_run(b->e, UINT64_MAX, SIZE_MAX);
	for (i = 0; i < 2; i++) {
		if (b->h[i].tp)
			ibemu_tp_destroy(b->h[i].tp);
		free(b->h[i].buf);
	}
	if (b->d)
		ibemu_tp_domain_destroy(b->d);
	ibemu_engine_destroy(b->e);
	ibemu_topo_destroy(b->t);
}

/* Posts one 'op' of 'len' bytes from a to b, stamped 'at' (the program's
 * clock after its post). Inline up to MAX_INLINE, as perftest does. */
static int post(struct host *a, const struct host *b, uint8_t op, uint32_t len,
		int signaled, uint64_t at)
{
	struct ibemu_tp_sge s = {(uintptr_t)a->buf, len, a->key};
	struct ibemu_tp_send_wr wr = {0};

	wr.opcode = op;
	wr.send_flags = signaled ? IBEMU_SEND_SIGNALED : 0;
	if (op != IBEMU_WR_RDMA_READ && len <= MAX_INLINE) {
		wr.send_flags |= IBEMU_SEND_INLINE;
		wr.inline_data = a->buf;
		wr.inline_len = len;
	} else {
		wr.sg_list = &s;
		wr.num_sge = 1;
	}
	if (a->ud) {
		wr.wr.ud.ah.dlid = b->lid;
		wr.wr.ud.ah.port_num = 1;
		wr.wr.ud.remote_qpn = b->udqpn;
		wr.wr.ud.remote_qkey = QKEY;
		return ibemu_tp_post_send_at(a->tp, a->udqpn, &wr, at);
	}
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + BUF_BYTES / 2;
	wr.wr.rdma.rkey = b->key;
	return ibemu_tp_post_send_at(a->tp, a->qpn, &wr, at);
}

static size_t step(struct bench *b)
{
	return ibemu_engine_run(b->e, UINT64_MAX, 1);
}

/* How many messages host 'h' has seen (SEND: receive completions;
 * WRITE: landings in the memory it polls), and when the last came. */
static uint64_t seen(const struct host *h, int send)
{
	return send ? h->recvs : h->landed;
}

static uint64_t seen_at(const struct host *h, int send)
{
	return send ? h->t_recv : h->t_landed;
}

/*
 * ib_write_lat and ib_send_lat: each side answers the other's message as
 * soon as it sees it, its post stamped after the post's CPU cost (and,
 * for a SEND, the poll's that found the receive). Half the round trip,
 * in ps, as perftest reports it; 0 on failure.
 */
static uint64_t pingpong_lat(struct bench *b, uint8_t op, uint32_t len,
			     unsigned iters)
{
	struct host *a = &b->h[0], *z = &b->h[1];
	int send = op == IBEMU_WR_SEND;
	uint64_t cost = b->post_ps + (send ? b->poll_ps : 0);
	uint64_t t0 = ibemu_engine_now(b->e), t_end = t0;
	uint64_t a0 = seen(a, send), z0 = seen(z, send);
	unsigned done = 0;

	if (post(a, z, op, len, 0, t0 + b->post_ps))
		return 0;
	while (done < iters) {
		if (!step(b) || a->errors || z->errors)
			return 0;
		if (seen(z, send) > z0) {
			z0++;
			if ((send && post_recvs(z, 1)) ||
			    post(z, a, op, len, 0, seen_at(z, send) + cost))
				return 0;
		}
		if (seen(a, send) > a0) {
			a0++;
			t_end = seen_at(a, send);
			if (send && post_recvs(a, 1))
				return 0;
			if (++done < iters &&
			    post(a, z, op, len, 0, t_end + cost))
				return 0;
		}
	}
	return (t_end + (send ? b->poll_ps : 0) - t0) / (2ull * iters);
}

/* ib_read_lat: a READ, its completion polled, the next posted. The whole
 * operation, in ps (perftest does not halve it); 0 on failure. */
static uint64_t read_lat(struct bench *b, uint32_t len, unsigned iters)
{
	struct host *a = &b->h[0], *z = &b->h[1];
	uint64_t t0 = ibemu_engine_now(b->e), r0 = a->reads;
	unsigned done = 0;

	if (post(a, z, IBEMU_WR_RDMA_READ, len, 1, t0 + b->post_ps))
		return 0;
	while (done < iters) {
		if (!step(b) || a->errors || z->errors)
			return 0;
		if (a->reads > r0) {
			r0++;
			if (++done < iters &&
			    post(a, z, IBEMU_WR_RDMA_READ, len, 1,
				 a->t_read + b->poll_ps + b->post_ps))
				return 0;
		}
	}
	return (a->t_read + b->poll_ps - t0) / iters;
}

/*
 * ib_write_bw, ib_read_bw, ib_send_bw: a window of WINDOW signaled
 * messages in flight, refilled as completions are polled, each post
 * charged its CPU cost; 'n' messages in all. Payload Gb/s from the first
 * post to the last completion; -1 on failure.
 */
static double bw(struct bench *b, uint8_t op, uint32_t len, unsigned n)
{
	struct host *a = &b->h[0], *z = &b->h[1];
	int rd = op == IBEMU_WR_RDMA_READ, send = op == IBEMU_WR_SEND;
	uint64_t t0 = ibemu_engine_now(b->e), clock = t0;
	uint64_t c0 = rd ? a->reads : a->sends, r0 = z->recvs;
	unsigned posted = 0;
	uint64_t done = 0;

	while (done < n) {
		while (posted < n && posted - done < WINDOW) {
			clock += b->post_ps;
			if (post(a, z, op, len, 1, clock))
				return -1;
			posted++;
		}
		if (!step(b) || a->errors || z->errors)
			return -1;
		if (send && z->recvs > r0) {
			r0 = z->recvs;
			if (post_recvs(z, 1))
				return -1;
		}
		if ((rd ? a->reads : a->sends) - c0 > done) {
			done = (rd ? a->reads : a->sends) - c0;
			if (ibemu_engine_now(b->e) + b->poll_ps > clock)
				clock = ibemu_engine_now(b->e) + b->poll_ps;
		}
	}
	return (double)len * 8.0 * n /
	       (double)((rd ? a->t_read : a->t_send) - t0) * 1e3;
}

/*
 * ib_write_bw -b (and what osu_bibw measures at large sizes): both hosts
 * stream 'n' WRITEs of 'len' bytes to each other at once, each with its
 * own window and CPU clock, over the same link and PCIe links. Payload
 * Gb/s of both directions together, from the first post to the last
 * completion; -1 on failure.
 */
static double bibw(struct bench *b, uint32_t len, unsigned n)
{
	uint64_t t0 = ibemu_engine_now(b->e), clock[2] = {t0, t0}, c0[2];
	uint64_t done[2] = {0, 0}, last = t0;
	unsigned posted[2] = {0, 0}, i;

	for (i = 0; i < 2; i++)
		c0[i] = b->h[i].sends;
	while (done[0] < n || done[1] < n) {
		for (i = 0; i < 2; i++) {
			struct host *h = &b->h[i], *peer = &b->h[1 - i];

			while (posted[i] < n && posted[i] - done[i] < WINDOW) {
				clock[i] += b->post_ps;
				if (post(h, peer, IBEMU_WR_RDMA_WRITE, len, 1,
					 clock[i]))
					return -1;
				posted[i]++;
			}
		}
		if (!step(b) || b->h[0].errors || b->h[1].errors)
			return -1;
		for (i = 0; i < 2; i++) {
			uint64_t now = ibemu_engine_now(b->e);

			if (b->h[i].sends - c0[i] == done[i])
				continue;
			done[i] = b->h[i].sends - c0[i];
			if (now + b->poll_ps > clock[i])
				clock[i] = now + b->poll_ps;
			if (b->h[i].t_send > last)
				last = b->h[i].t_send;
		}
	}
	return (double)len * 8.0 * 2 * n / (double)(last - t0) * 1e3;
}

/* The HCA's message rate: 'n' 8-byte inline WRITEs posted at once (a post
 * list, no CPU cost between them), in millions a second. */
static double msg_rate(struct bench *b, unsigned n)
{
	struct host *a = &b->h[0], *z = &b->h[1];
	uint64_t t0 = ibemu_engine_now(b->e), l0 = z->landed, first = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		if (post(a, z, IBEMU_WR_RDMA_WRITE, 8, i + 1 == n, t0))
			return -1;
	while (z->landed - l0 < n) {
		if (!step(b) || a->errors || z->errors)
			return -1;
		if (!first && z->landed > l0)
			first = z->t_landed;
	}
	/* The steady rate: from the first landing to the last, so the
	 * first message's latency is not counted as a gap. */
	return (double)(n - 1) / (double)(z->t_landed - first) * 1e6;
}

/*
 * The published figures (docs/hca-model.md says where each comes from):
 * 0 where none was found.
 */
struct published {
	uint32_t bytes;
	double send_lat_us;
	double ud_send_lat_us; /* 0: none */
};

/* Potter, RWTH Aachen master's thesis (2018), ib_send_lat RC, ConnectX-4
 * EDR back to back (0.5 m copper), MTU 4096, inline below 188 bytes. */
static const struct published cx4_send_lat[] = {
	{32, 0.83, 0.86},
	{1024, 1.61, 1.45},
	{4096, 2.28, 2.22},
	{32768, 4.57, 0},
};

/* A published ib_read_bw row: messages a second (perftest's MsgRate). */
struct published_rate {
	uint32_t bytes;
	double mpps;
};

/* openucx/ucx issue 8851: ib_read_bw -a, ConnectX-6 HDR (MCX653106A-HDAT)
 * back to back over fiber, PCIe Gen4 x16, MTU 4096, RC, one QP, TX depth
 * 128, 16 outstanding reads, CQ moderation 100; MsgRate column. */
static const struct published_rate cx6_read_rate[] = {
	{2, 2.450225},	{4, 2.546339},	{8, 2.556366},	 {16, 2.552526},
	{32, 2.550328}, {64, 2.545853}, {128, 2.539960}, {256, 1.6035},
};

/* The same issue: "ib_read_bw test bandwidth is 23GB/s", read as perftest
 * prints it (MB = 2^20 bytes): 23 x 2^30 bytes/s, in Gb/s. */
#define CX6_READ_BW_GBPS (23.0 * 1073741824.0 * 8 / 1e9)

/* open-mpi/ompi issue 3216: osu_bibw (OSU 5.1, Open MPI 2.1.0 over UCX)
 * between two nodes with ConnectX-5 on InfiniBand, 24602.42 MB/s (10^6
 * bytes) at 1 MiB: both directions of an EDR link, in Gb/s. */
#define CX5_BIBW_GBPS (24602.42 * 8 / 1e3)

struct preset_run {
	const char *preset, *speed;
	const struct published *lat;
	unsigned nlat;
	/* Published message rate, millions/s (0: none); a range's upper
	 * end in msg_rate_hi_m (0: a single figure). */
	double msg_rate_m, msg_rate_hi_m;
	const struct published_rate *read_rate;
	unsigned nread_rate;
	double read_bw_gbps; /* published large-message ib_read_bw; 0: none */
	double bibw_gbps;    /* published 1 MiB bidirectional; 0: none */
};

static const struct preset_run runs[] = {
	{"connectx-4", "EDR", cx4_send_lat, 4, 150, 0, NULL, 0, 0, 0},
	{"connectx-5", "EDR", NULL, 0, 0, 0, NULL, 0, 0, CX5_BIBW_GBPS},
	{"connectx-6", "HDR", NULL, 0, 215, 0, cx6_read_rate, 8,
	 CX6_READ_BW_GBPS, 0},
	/* The ConnectX-7 datasheet: "330-370 million messages per second". */
	{"connectx-7", "NDR", NULL, 0, 330, 370, NULL, 0, 0, 0},
};

static int met_count, target_count;

static const char *verdict(double ratio, double tol)
{
	target_count++;
	if (ratio >= 1 - tol && ratio <= 1 + tol) {
		met_count++;
		return "met";
	}
	return "MISSED";
}

/* Payload Gb/s the link carries at most for messages of 'len' bytes
 * (IBA 9.2: LRH, BTH, RETH on the first packet, ICRC, VCRC). */
static double link_limit_gbps(const struct bench *b, uint32_t len)
{
	const struct ibemu_topo_link *l = &b->t->links[0];
	uint64_t rate = ibemu_link_data_rate_bps(l->width, l->speed);
	uint32_t mtu = IBEMU_MTU_BYTES(MTU_ENUM), left = len, first = 1;
	uint64_t wire = 0;

	do {
		uint32_t p = left > mtu ? mtu : left;

		wire += IBEMU_LRH_BYTES + IBEMU_BTH_BYTES +
			(first ? IBEMU_RETH_BYTES : 0) + p + IBEMU_ICRC_BYTES +
			IBEMU_VCRC_BYTES;
		left -= p;
		first = 0;
	} while (left);
	return (double)len * (double)rate / (double)wire / 1e9;
}

static int run_preset(const struct preset_run *pr, unsigned iters,
		      uint32_t max_len)
{
	struct bench b;
	uint32_t len;
	unsigned i;
	int ret;

	ret = bench_up(&b, pr->preset, pr->speed);
	if (ret) {
		fprintf(stderr, "bench-fidelity: %s: cannot build: %s\n",
			pr->preset, strerror(-ret));
		bench_down(&b);
		return 1;
	}
	printf("\n== hca_model: %s, 4x %s back to back, 0.5 m, MTU 4096, "
	       "inline up to %u B\n",
	       pr->preset, pr->speed, MAX_INLINE);
	if (tuning)
		printf("   hca_tuning: {%s}: the published figures below were "
		       "measured on other hosts\n",
		       tuning);
	printf("%9s %10s %10s %10s %10s %10s %10s %10s %10s\n", "BYTES",
	       "SEND_LAT", "UD_LAT", "WRITE_LAT", "READ_LAT", "WRITE_BW",
	       "READ_BW", "SEND_BW", "LINK_BW");
	printf("%9s %10s %10s %10s %10s %10s %10s %10s %10s\n", "", "us", "us",
	       "us", "us", "Gb/s", "Gb/s", "Gb/s", "Gb/s");
	for (len = 2; len <= max_len; len *= 2) {
		unsigned n = (unsigned)((64ull << 20) / len);
		uint64_t sl, ul = 0, wl, rl;
		double wb, rb, sb;
		char uds[16] = "-";

		if (n > 2000)
			n = 2000;
		if (n < 2 * WINDOW)
			n = 2 * WINDOW;
		sl = pingpong_lat(&b, IBEMU_WR_SEND, len, iters);
		/* UD: one packet, at most an MTU. */
		if (len <= IBEMU_MTU_BYTES(MTU_ENUM)) {
			b.h[0].ud = b.h[1].ud = 1;
			ul = pingpong_lat(&b, IBEMU_WR_SEND, len, iters);
			b.h[0].ud = b.h[1].ud = 0;
			if (!ul)
				sl = 0;
			snprintf(uds, sizeof(uds), "%.3f", ul / 1e6);
		}
		wl = pingpong_lat(&b, IBEMU_WR_RDMA_WRITE, len, iters);
		rl = read_lat(&b, len, iters);
		wb = bw(&b, IBEMU_WR_RDMA_WRITE, len, n);
		rb = bw(&b, IBEMU_WR_RDMA_READ, len, n);
		sb = len <= BUF_BYTES / 2 ? bw(&b, IBEMU_WR_SEND, len, n) : 0;
		if (!sl || !wl || !rl || wb < 0 || rb < 0 || sb < 0) {
			fprintf(stderr, "bench-fidelity: %s: %u bytes failed\n",
				pr->preset, len);
			bench_down(&b);
			return 1;
		}
		printf("%9u %10.3f %10s %10.3f %10.3f %10.2f %10.2f %10.2f "
		       "%10.2f\n",
		       len, sl / 1e6, uds, wl / 1e6, rl / 1e6, wb, rb, sb,
		       link_limit_gbps(&b, len));
		for (i = 0; i < pr->nlat; i++)
			if (pr->lat[i].bytes == len)
				printf("%9s published ib_send_lat %.2f us: "
				       "ratio %.3f, target within 10%%: %s\n",
				       "", pr->lat[i].send_lat_us,
				       sl / 1e6 / pr->lat[i].send_lat_us,
				       verdict(sl / 1e6 /
						       pr->lat[i].send_lat_us,
					       0.10));
		for (i = 0; i < pr->nlat; i++)
			if (pr->lat[i].bytes == len &&
			    pr->lat[i].ud_send_lat_us)
				printf("%9s published ib_send_lat UD %.2f us: "
				       "ratio %.3f, target within 10%%: %s\n",
				       "", pr->lat[i].ud_send_lat_us,
				       ul / 1e6 / pr->lat[i].ud_send_lat_us,
				       verdict(ul / 1e6 /
						       pr->lat[i]
							       .ud_send_lat_us,
					       0.10));
		for (i = 0; i < pr->nread_rate; i++)
			if (pr->read_rate[i].bytes == len) {
				double mpps = rb * 1e3 / (len * 8.0);

				printf("%9s ib_read_bw %.3f M/s, published "
				       "%.3f M/s: ratio %.3f, target within "
				       "10%%: %s\n",
				       "", mpps, pr->read_rate[i].mpps,
				       mpps / pr->read_rate[i].mpps,
				       verdict(mpps / pr->read_rate[i].mpps,
					       0.10));
			}
		if (len == (1u << 20) || len == max_len) {
			double lim = link_limit_gbps(&b, len);

			printf("%9s ib_write_bw against the link's limit: "
			       "ratio %.3f, target within 3%%: %s\n",
			       "", wb / lim, verdict(wb / lim, 0.03));
			if (pr->read_bw_gbps > 0)
				printf("%9s ib_read_bw, published %.2f Gb/s: "
				       "ratio %.3f, target within 3%%: %s\n",
				       "", pr->read_bw_gbps,
				       rb / pr->read_bw_gbps,
				       verdict(rb / pr->read_bw_gbps, 0.03));
		}
	}
	{
		double bi = bibw(&b, max_len, 2 * WINDOW);
		double lim = 2 * link_limit_gbps(&b, max_len);

		if (bi < 0) {
			fprintf(stderr,
				"bench-fidelity: %s: bidirectional "
				"bandwidth failed\n",
				pr->preset);
			bench_down(&b);
			return 1;
		}
		printf("bidirectional ib_write_bw at %u B: %.2f Gb/s, the "
		       "link's limit %.2f",
		       max_len, bi, lim);
		if (pr->bibw_gbps > 0 && max_len == 1u << 20)
			printf("; published (osu_bibw) %.2f Gb/s: ratio "
			       "%.3f, target within 3%%: %s\n",
			       pr->bibw_gbps, bi / pr->bibw_gbps,
			       verdict(bi / pr->bibw_gbps, 0.03));
		else
			printf("\n");
	}
	{
		double mr = msg_rate(&b, 4000);

		printf("message rate (8-byte inline WRITEs, a post list): "
		       "%.1f M/s",
		       mr);
		if (pr->msg_rate_hi_m > 0) {
			double lo = mr / pr->msg_rate_m;
			double hi = mr / pr->msg_rate_hi_m;

			printf("; published %.0f-%.0f M/s: ratios %.3f and "
			       "%.3f, target within 15%% of both: %s\n",
			       pr->msg_rate_m, pr->msg_rate_hi_m, lo, hi,
			       verdict(lo <= 1.15 && hi >= 0.85 ? 1 : 0, 0.15));
		} else if (pr->msg_rate_m > 0) {
			printf("; published %.0f M/s: ratio %.3f, target "
			       "within 15%%: %s\n",
			       pr->msg_rate_m, mr / pr->msg_rate_m,
			       verdict(mr / pr->msg_rate_m, 0.15));
		} else {
			printf("; no published figure found\n");
		}
	}
	bench_down(&b);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-fidelity [--quick] [--preset NAME] "
		   "[--tuning 'KEY: VALUE, ...']\n"
		   "  virtual-time perftest equivalents per HCA preset, next "
		   "to published figures;\n"
		   "  --tuning: a topology's hca_tuning: keys, applied to "
		   "every preset (topologies/README.md)\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"quick", no_argument, NULL, 'q'},
		{"preset", required_argument, NULL, 'p'},
		{"tuning", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *only = NULL;
	unsigned iters = 20, i;
	uint32_t max_len = 1u << 20;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, "qp:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			iters = 4;
			max_len = 64u << 10;
			break;
		case 'p':
			only = optarg;
			break;
		case 't':
			tuning = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	printf("bench-fidelity: virtual time; latencies include the CPU "
	       "costs of verbs/cost.h\n(a post %.1f us, a poll that finds "
	       "work %.1f us), as perftest under ibemu prints them\n",
	       ibemu_verbs_costs[IBEMU_VCOST_POST_SEND].unit_ps / 1e6,
	       ibemu_verbs_costs[IBEMU_VCOST_POLL_HIT].ps / 1e6);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		if (!only || !strcmp(only, runs[i].preset))
			ret |= run_preset(&runs[i], iters, max_len);
	printf("\ntargets met: %d of %d\n", met_count, target_count);
	return ret;
}

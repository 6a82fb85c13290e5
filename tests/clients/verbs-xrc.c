// SPDX-License-Identifier: MIT
/*
 * XRC (IBA Annex A14) through the real API, linked against the system
 * libibverbs. Modes:
 *
 *   verbs-xrc self FILE    one process: ibv_open_xrcd's errors, an XRC
 *       send QP connected to an XRC receive QP of its own HCA (through
 *       the leaf switch), SENDs into an XRC SRQ named by number
 *       (wr.qp_type.xrc.remote_srqn and ibv_wr_set_xrc_srqn), an RDMA
 *       WRITE, the SRQ's CQ getting the receive; a SEND naming an SRQ
 *       that does not exist, and one of another domain: a NAK (Invalid
 *       Request) within a round trip, never a retry timeout;
 *       ibv_close_xrcd with objects alive (EBUSY).
 *   verbs-xrc target FILE  with 'peer' on the same HCA: opens the
 *       domain of FILE, makes an XRC SRQ and receive QP, prints
 *       "tgt=QPN srqn=N", reads "peer=SRQN" on stdin and sends a checked
 *       message into the peer's SRQ through its receive QP; then reads
 *       "again" and sends into its own SRQ (the peer's handles gone).
 *   verbs-xrc peer FILE QPN  opens the same file's domain without
 *       O_CREAT (it exists only because 'target' opened it), opens QP
 *       QPN (ibv_open_qp), makes an XRC SRQ of its own, prints
 *       "peer=SRQN", takes the target's message, checks EBUSY on close.
 *   verbs-xrc other FILE   on another HCA: the file names no domain
 *       there (EAGAIN without O_CREAT).
 *
 * Prints key=value lines and "FAIL: ..." for every broken rule; returns
 * the number of failures.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ibemu.h"
#include "verbs-check.h"

#define BUF 65536

struct xrc {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint16_t lid;
};

static uint64_t now_ps(void)
{
	return ibemu_now_ps ? ibemu_now_ps() : 0;
}

static struct ibv_context *open_first(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l && l[0] ? ibv_open_device(l[0]) : NULL;

	if (l)
		ibv_free_device_list(l);
	return c;
}

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xsrq_new(struct xrc *x, struct ibv_xrcd *xrcd,
				struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = {.max_wr = 16, .max_sge = 1},
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.pd = x->pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(x->ctx, &a);
}

static struct ibv_qp *recv_qp_new(struct xrc *x, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(x->ctx, &a);
}

static struct ibv_qp *send_qp_new(struct xrc *x, int with_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = x->scq,
		.cap = {.max_send_wr = 16, .max_send_sge = 1},
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = x->pd,
	};

	if (with_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND;
	}
	return ibv_create_qp_ex(x->ctx, &a);
}

/* INIT, RTR, RTS with the masks ibv_xsrq_pingpong gives each side. */
static int modify(struct ibv_qp *qp, int recv, uint16_t lid, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = recv ? IBV_ACCESS_REMOTE_WRITE : 0,
	};
	int ret = ibv_modify_qp(qp, &a,
				IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS);

	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR,
				 .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = dqpn,
				 .rq_psn = 7,
				 .min_rnr_timer = 12,
				 .ah_attr = {.dlid = lid, .port_num = 1}};
	ret = ibv_modify_qp(
		qp, &a,
		IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN |
			(recv ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER
			      : 0));
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS,
				 .timeout = 14,
				 .retry_cnt = 7,
				 .rnr_retry = 7,
				 .sq_psn = 7};
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
				     (recv ? 0
					   : IBV_QP_RETRY_CNT |
						      IBV_QP_RNR_RETRY |
						      IBV_QP_MAX_QP_RD_ATOMIC));
}

/* One completion of 'cq' within about 10 s of wall time. */
static int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 10000000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (i > 1000)
			usleep(1);
	}
	return 0;
}

static void post_srq_recv(struct xrc *x, struct ibv_srq *srq, uint64_t id,
			  uint32_t off)
{
	struct ibv_sge sge = {(uintptr_t)x->buf + off, 4096, x->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	CHECK_RET(ibv_post_srq_recv(srq, &wr, &bad), 0);
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t srqn,
		struct xrc *x, uint32_t off, uint32_t len, uint64_t id)
{
	struct ibv_sge sge = {(uintptr_t)x->buf + off, len, x->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)x->buf + 32768;
		wr.wr.rdma.rkey = x->mr->rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static void fill(uint8_t *p, uint32_t len, unsigned seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

static int setup(struct xrc *x)
{
	struct ibv_port_attr pa;

	x->ctx = open_first();
	if (!x->ctx)
		return -1;
	x->pd = ibv_alloc_pd(x->ctx);
	x->scq = ibv_create_cq(x->ctx, 64, NULL, NULL, 0);
	x->rcq = ibv_create_cq(x->ctx, 64, NULL, NULL, 0);
	x->buf = aligned_alloc(4096, BUF);
	CHECK(x->pd && x->scq && x->rcq && x->buf, "setup");
	if (!x->pd || !x->scq || !x->rcq || !x->buf)
		return -1;
	memset(x->buf, 0, BUF);
	x->mr = ibv_reg_mr(x->pd, x->buf, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK_RET(ibv_query_port(x->ctx, 1, &pa), 0);
	x->lid = pa.lid;
	return x->mr ? 0 : -1;
}

/* ibv_open_xrcd's own errors, as rdma-core and the kernel give them. */
static void check_open_errors(struct xrc *x, const char *file)
{
	struct ibv_xrcd_init_attr a = {.comp_mask = IBV_XRCD_INIT_ATTR_FD,
				       .fd = -1};
	struct ibv_xrcd *d;
	int fd = open(file, O_RDONLY | O_CREAT, 0600);

	CHECK_NULL_ERRNO(ibv_open_xrcd(x->ctx, &a), EINVAL);
	a.comp_mask = IBV_XRCD_INIT_ATTR_RESERVED;
	CHECK_NULL_ERRNO(ibv_open_xrcd(x->ctx, &a), EOPNOTSUPP);
	CHECK_NULL_ERRNO(xrcd_open(x->ctx, 1000, O_CREAT), EBADF);
	/* No domain of that file yet: O_CREAT makes one. */
	CHECK_NULL_ERRNO(xrcd_open(x->ctx, fd, 0), EAGAIN);
	d = xrcd_open(x->ctx, fd, O_CREAT | O_EXCL);
	CHECK(d, "open O_CREAT|O_EXCL: errno %d", errno);
	CHECK_NULL_ERRNO(xrcd_open(x->ctx, fd, O_CREAT | O_EXCL), EINVAL);
	if (d)
		CHECK_RET(ibv_close_xrcd(d), 0);
	/* The last close freed it. */
	CHECK_NULL_ERRNO(xrcd_open(x->ctx, fd, 0), EAGAIN);
	close(fd);
}

/* A send QP connected to a receive QP of domain 'd' on this HCA. */
static void pair_new(struct xrc *x, struct ibv_xrcd *d, struct ibv_qp **snd,
		     struct ibv_qp **rcv, int with_ops)
{
	*rcv = recv_qp_new(x, d);
	*snd = send_qp_new(x, with_ops);
	CHECK(*rcv && *snd, "XRC QPs: errno %d", errno);
	if (!*rcv || !*snd)
		return;
	CHECK_RET(modify(*rcv, 1, x->lid, (*snd)->qp_num), 0);
	CHECK_RET(modify(*snd, 0, x->lid, (*rcv)->qp_num), 0);
}

/* A SEND of 'len' bytes naming 'srqn', which does exist and takes it. */
static void check_send(struct xrc *x, struct ibv_qp *snd, struct ibv_qp *rcv,
		       uint32_t srqn, uint32_t len, unsigned seed)
{
	struct ibv_wc wc;
	uint64_t t0;

	fill(x->buf, len, seed);
	memset(x->buf + 8192, 0, len);
	post_srq_recv(x, x->srq, 77, 8192);
	t0 = now_ps();
	CHECK_RET(post(snd, IBV_WR_SEND, srqn, x, 0, len, 1), 0);
	CHECK(poll1(x->scq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_SEND,
	      "send completion: status %d", wc.status);
	printf("send_%u_ps=%" PRIu64 "\n", len, now_ps() - t0);
	CHECK(poll1(x->rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_RECV && wc.wr_id == 77 &&
		      wc.byte_len == len && wc.qp_num == rcv->qp_num &&
		      wc.src_qp == snd->qp_num,
	      "receive on the SRQ's CQ: status %d wr_id %" PRIu64
	      " len %u qp %u (want %u) src %u",
	      wc.status, wc.wr_id, wc.byte_len, wc.qp_num, rcv->qp_num,
	      wc.src_qp);
	CHECK(!memcmp(x->buf, x->buf + 8192, len), "received bytes differ");
}

/* The ibv_wr_* builders with ibv_wr_set_xrc_srqn. */
static void check_builders(struct xrc *x, struct ibv_qp *snd, uint32_t srqn)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(snd);
	struct ibv_wc wc;

	CHECK(qx, "ibv_qp_to_qp_ex");
	if (!qx)
		return;
	fill(x->buf, 300, 9);
	post_srq_recv(x, x->srq, 78, 8192);
	ibv_wr_start(qx);
	qx->wr_id = 5;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_xrc_srqn(qx, srqn);
	ibv_wr_set_sge(qx, x->mr->lkey, (uintptr_t)x->buf, 300);
	CHECK_RET(ibv_wr_complete(qx), 0);
	CHECK(poll1(x->scq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == 5,
	      "builder send: status %d", wc.status);
	CHECK(poll1(x->rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == 78 && wc.byte_len == 300,
	      "builder receive: status %d len %u", wc.status, wc.byte_len);
	CHECK(!memcmp(x->buf, x->buf + 8192, 300), "builder bytes differ");
}

/*
 * A request naming SRQ 'srqn' that the receive QP's domain lacks: the
 * responder NAKs it (Invalid Request) and goes to Error; the requester
 * completes with IBV_WC_REM_INV_REQ_ERR a round trip later.
 */
static void check_bad_srqn(struct xrc *x, struct ibv_qp *snd,
			   struct ibv_qp *rcv, uint32_t srqn, const char *what)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	uint64_t t0 = now_ps();

	CHECK_RET(post(snd, IBV_WR_SEND, srqn, x, 0, 64, 9), 0);
	CHECK(poll1(x->scq, &wc) == 1 && wc.status == IBV_WC_REM_INV_REQ_ERR &&
		      wc.wr_id == 9,
	      "%s: status %d, want IBV_WC_REM_INV_REQ_ERR", what, wc.status);
	printf("%s_ps=%" PRIu64 "\n", what, now_ps() - t0);
	CHECK_RET(ibv_query_qp(rcv, &qa, IBV_QP_STATE, &init), 0);
	CHECK(qa.qp_state == IBV_QPS_ERR, "%s: receive QP state %d", what,
	      qa.qp_state);
}

static int run_self(const char *file)
{
	struct ibv_qp *snd, *rcv, *snd2, *rcv2, *snd3, *rcv3;
	struct ibv_xrcd *d2;
	struct ibv_srq *other;
	struct xrc x = {0};
	uint32_t srqn = 0, other_n = 0;
	struct ibv_wc wc;
	int fd;

	if (setup(&x))
		return failures + 1;
	check_open_errors(&x, file);
	fd = open(file, O_RDONLY | O_CREAT, 0600);
	x.xrcd = xrcd_open(x.ctx, fd, O_CREAT);
	CHECK(x.xrcd, "open_xrcd: errno %d", errno);
	if (!x.xrcd)
		return failures;
	x.srq = xsrq_new(&x, x.xrcd, x.rcq);
	CHECK(x.srq, "XRC SRQ: errno %d", errno);
	if (!x.srq)
		return failures;
	CHECK_RET(ibv_get_srq_num(x.srq, &srqn), 0);
	printf("srqn=%u\n", srqn);
	pair_new(&x, x.xrcd, &snd, &rcv, 1);
	if (!snd || !rcv)
		return failures;
	/* The send side has no receive queue, the receive side no send
	 * queue. */
	{
		struct ibv_recv_wr rw = {0}, *rbad;
		struct ibv_send_wr sw = {.opcode = IBV_WR_SEND}, *sbad;

		CHECK_RET(ibv_post_recv(snd, &rw, &rbad), EINVAL);
		CHECK_RET(ibv_post_send(rcv, &sw, &sbad), EINVAL);
	}
	check_send(&x, snd, rcv, srqn, 8, 1);
	check_send(&x, snd, rcv, srqn, 4000, 2); /* 4 packets at MTU 1024 */
	check_builders(&x, snd, srqn);
	/* An RDMA WRITE names an SRQ too; its region is of the SRQ's PD. */
	fill(x.buf, 2048, 5);
	CHECK_RET(post(snd, IBV_WR_RDMA_WRITE, srqn, &x, 0, 2048, 3), 0);
	CHECK(poll1(x.scq, &wc) == 1 && wc.status == IBV_WC_SUCCESS,
	      "write: status %d", wc.status);
	CHECK(!memcmp(x.buf, x.buf + 32768, 2048), "written bytes differ");
	/* Objects alive: the domain stays. */
	CHECK_RET(ibv_close_xrcd(x.xrcd), EBUSY);
	/* An SRQ number nobody has, and an SRQ of another domain. */
	check_bad_srqn(&x, snd, rcv, srqn + 1000, "nak_missing");
	d2 = xrcd_open(x.ctx, -1, 0);
	CHECK(d2, "anonymous domain: errno %d", errno);
	other = d2 ? xsrq_new(&x, d2, x.rcq) : NULL;
	CHECK(other, "SRQ of the other domain: errno %d", errno);
	if (other)
		CHECK_RET(ibv_get_srq_num(other, &other_n), 0);
	pair_new(&x, x.xrcd, &snd2, &rcv2, 0);
	if (snd2 && rcv2 && other)
		check_bad_srqn(&x, snd2, rcv2, other_n, "nak_domain");
	/* A fresh pair still delivers into the right domain's SRQ. */
	pair_new(&x, x.xrcd, &snd3, &rcv3, 0);
	if (snd3 && rcv3)
		check_send(&x, snd3, rcv3, srqn, 100, 3);
	/* Teardown: the domain closes once nothing of it is left. */
	CHECK_RET(ibv_destroy_qp(snd), 0);
	CHECK_RET(ibv_destroy_qp(snd2), 0);
	CHECK_RET(ibv_destroy_qp(snd3), 0);
	CHECK_RET(ibv_destroy_qp(rcv), 0);
	CHECK_RET(ibv_destroy_qp(rcv2), 0);
	CHECK_RET(ibv_close_xrcd(x.xrcd), EBUSY); /* rcv3, the SRQ */
	CHECK_RET(ibv_destroy_qp(rcv3), 0);
	CHECK_RET(ibv_destroy_srq(x.srq), 0);
	CHECK_RET(ibv_destroy_srq(other), 0);
	CHECK_RET(ibv_close_xrcd(d2), 0);
	CHECK_RET(ibv_close_xrcd(x.xrcd), 0);
	CHECK_NULL_ERRNO(xrcd_open(x.ctx, fd, 0), EAGAIN);
	close(fd);
	CHECK_RET(ibv_dereg_mr(x.mr), 0);
	CHECK_RET(ibv_destroy_cq(x.scq), 0);
	CHECK_RET(ibv_destroy_cq(x.rcq), 0);
	CHECK_RET(ibv_dealloc_pd(x.pd), 0);
	CHECK_RET(ibv_close_device(x.ctx), 0);
	printf("self done failures=%d\n", failures);
	return failures;
}

/* A line "key=N" from stdin; 0 if none. */
static uint32_t read_key(const char *key)
{
	char line[128];
	size_t n = strlen(key);

	while (fgets(line, sizeof(line), stdin))
		if (!strncmp(line, key, n) && line[n] == '=')
			return (uint32_t)strtoul(line + n + 1, NULL, 0);
	return 0;
}

static int run_target(const char *file)
{
	struct xrc x = {0};
	struct ibv_qp *snd, *rcv;
	uint32_t srqn = 0, peer;
	struct ibv_wc wc;
	int fd;

	if (setup(&x))
		return failures + 1;
	fd = open(file, O_RDONLY | O_CREAT, 0600);
	x.xrcd = xrcd_open(x.ctx, fd, O_CREAT);
	x.srq = x.xrcd ? xsrq_new(&x, x.xrcd, x.rcq) : NULL;
	CHECK(x.srq, "target: domain and SRQ: errno %d", errno);
	if (!x.srq)
		return failures;
	CHECK_RET(ibv_get_srq_num(x.srq, &srqn), 0);
	pair_new(&x, x.xrcd, &snd, &rcv, 0);
	if (!snd || !rcv)
		return failures;
	printf("tgt=%u srqn=%u\n", rcv->qp_num, srqn);
	fflush(stdout);
	peer = read_key("peer");
	CHECK(peer, "no peer SRQ number");
	/* Into the peer process's SRQ, through this process's QPs. */
	fill(x.buf, 1500, 11);
	CHECK_RET(post(snd, IBV_WR_SEND, peer, &x, 0, 1500, 4), 0);
	CHECK(poll1(x.scq, &wc) == 1 && wc.status == IBV_WC_SUCCESS,
	      "send to the peer's SRQ: status %d", wc.status);
	printf("sent\n");
	fflush(stdout);
	read_key("again");
	/* The peer closed its handle on the receive QP: it lives on. */
	check_send(&x, snd, rcv, srqn, 64, 12);
	CHECK_RET(ibv_close_device(x.ctx), 0);
	printf("target done failures=%d\n", failures);
	return failures;
}

static int run_peer(const char *file, uint32_t tgt)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct xrc x = {0};
	struct ibv_qp *qp;
	uint32_t srqn = 0;
	struct ibv_wc wc;
	int fd;

	if (setup(&x))
		return failures + 1;
	fd = open(file, O_RDONLY);
	/* Without O_CREAT: the target process's domain, by the file. */
	x.xrcd = xrcd_open(x.ctx, fd, 0);
	CHECK(x.xrcd, "peer: the file's domain: errno %d", errno);
	if (!x.xrcd)
		return failures;
	oa.xrcd = x.xrcd;
	qp = ibv_open_qp(x.ctx, &oa);
	CHECK(qp && qp->qp_num == tgt && qp->qp_type == IBV_QPT_XRC_RECV &&
		      qp->state == IBV_QPS_RTS,
	      "ibv_open_qp: errno %d", errno);
	oa.qp_num = tgt + 100;
	CHECK_NULL_ERRNO(ibv_open_qp(x.ctx, &oa), EINVAL);
	x.srq = xsrq_new(&x, x.xrcd, x.rcq);
	CHECK(x.srq, "peer SRQ: errno %d", errno);
	if (!x.srq || !qp)
		return failures;
	CHECK_RET(ibv_get_srq_num(x.srq, &srqn), 0);
	memset(x.buf + 8192, 0, 1500);
	post_srq_recv(&x, x.srq, 55, 8192);
	printf("peer=%u\n", srqn);
	fflush(stdout);
	CHECK(poll1(x.rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == 55 && wc.byte_len == 1500 && wc.qp_num == tgt,
	      "peer receive: status %d len %u qp %u", wc.status, wc.byte_len,
	      wc.qp_num);
	fill(x.buf, 1500, 11);
	CHECK(!memcmp(x.buf, x.buf + 8192, 1500), "peer bytes differ");
	CHECK_RET(ibv_close_xrcd(x.xrcd), EBUSY);
	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_close_xrcd(x.xrcd), EBUSY); /* the SRQ */
	CHECK_RET(ibv_destroy_srq(x.srq), 0);
	CHECK_RET(ibv_close_xrcd(x.xrcd), 0);
	CHECK_RET(ibv_close_device(x.ctx), 0);
	close(fd);
	printf("peer done failures=%d\n", failures);
	return failures;
}

static int run_other(const char *file)
{
	struct ibv_context *ctx = open_first();
	int fd = open(file, O_RDONLY);

	CHECK(ctx && fd >= 0, "other: open");
	if (ctx)
		CHECK_NULL_ERRNO(xrcd_open(ctx, fd, 0), EAGAIN);
	if (ctx)
		ibv_close_device(ctx);
	printf("other done failures=%d\n", failures);
	return failures;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "self"))
		return run_self(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "target"))
		return run_target(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "peer"))
		return run_peer(argv[2], (uint32_t)strtoul(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "other"))
		return run_other(argv[2]);
	fprintf(stderr, "usage: verbs-xrc self|target|other FILE | "
			"peer FILE QPN\n");
	return 2;
}

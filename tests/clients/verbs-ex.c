// SPDX-License-Identifier: MIT
/*
 * The extended verbs through the real API, linked against the system
 * libibverbs: an extended CQ (ibv_create_cq_ex, start/next/end_poll, the
 * read_* accessors, completion timestamps in the HCA's clock) and the
 * work request builders of an extended QP (ibv_wr_start ...
 * ibv_wr_complete) on an RC QP connected to itself through its leaf
 * switch: SEND with immediate, inline data lists, RDMA WRITE and READ,
 * both atomics, a batch with an error (nothing posted), ibv_wr_abort.
 * Prints key=value lines for tests/integration/test_verbs.py and returns
 * the number of broken rules.
 */
#include <endian.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs-check.h"

struct ex {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	uint8_t *buf; /* 64 KiB: source halves and destination halves */
};

/* One completion of the extended CQ, for up to 5 s; 0 if none came. */
struct got {
	uint64_t wr_id, ts;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, flags;
	uint32_t imm;
};

static int poll_ex(struct ibv_cq_ex *cq, struct got *g)
{
	struct ibv_poll_cq_attr attr = {0};
	int i, ret;

	for (i = 0; i < 5000000; i++) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			if (i > 1000)
				usleep(1);
			continue;
		}
		if (ret)
			return 0;
		g->wr_id = cq->wr_id;
		g->status = cq->status;
		g->opcode = ibv_wc_read_opcode(cq);
		g->byte_len = ibv_wc_read_byte_len(cq);
		g->qp_num = ibv_wc_read_qp_num(cq);
		g->flags = ibv_wc_read_wc_flags(cq);
		g->imm = (g->flags & IBV_WC_WITH_IMM)
				 ? be32toh(ibv_wc_read_imm_data(cq))
				 : 0;
		g->ts = ibv_wc_read_completion_ts(cq);
		/* One at a time: the next stays for the next call. */
		ibv_end_poll(cq);
		return 1;
	}
	return 0;
}

static void post_recv(struct ex *x, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)x->buf + off, len, x->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	CHECK_RET(ibv_post_recv(x->qp, &wr, &bad), 0);
}

/* Takes 'n' completions, in any order, into 'g' indexed by wr_id. */
static void take(struct ex *x, struct got *g, unsigned n)
{
	struct got one;

	while (n--) {
		if (!poll_ex(x->cq, &one)) {
			CHECK(0, "a completion did not come");
			return;
		}
		CHECK(one.status == IBV_WC_SUCCESS, "wr %" PRIu64 ": %s",
		      one.wr_id, ibv_wc_status_str(one.status));
		if (one.wr_id < 16)
			g[one.wr_id] = one;
	}
}

/* SEND with immediate from an inline list, received by a posted RECV. */
static void check_send(struct ex *x, struct got *g)
{
	struct ibv_data_buf parts[2] = {{x->buf, 10}, {x->buf + 100, 6}};

	memcpy(x->buf, "ibemu-cq_", 10);
	memcpy(x->buf + 100, "ex-ok", 6);
	post_recv(x, 1, 32768, 64);
	ibv_wr_start(x->qpx);
	x->qpx->wr_id = 2;
	x->qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ibv_wr_send_imm(x->qpx, htobe32(0x1234));
	ibv_wr_set_inline_data_list(x->qpx, 2, parts);
	/* The program's bytes may change once the call returned. */
	x->buf[0] = 'X';
	CHECK_RET(ibv_wr_complete(x->qpx), 0);
	take(x, g, 2);
	CHECK(g[1].opcode == IBV_WC_RECV && g[1].byte_len == 16 &&
		      g[1].imm == 0x1234 && g[1].qp_num == x->qp->qp_num,
	      "RECV: opcode %d len %u imm %x qp %u", g[1].opcode, g[1].byte_len,
	      g[1].imm, g[1].qp_num);
	CHECK(!memcmp(x->buf + 32768, "ibemu-cq_\0ex-ok", 16),
	      "the SEND's bytes: '%.16s'", (char *)x->buf + 32768);
	CHECK(g[2].opcode == IBV_WC_SEND, "SEND opcode %d", g[2].opcode);
	/* The receive completes at the SEND's arrival, the SEND at its ACK's. */
	CHECK(g[1].ts > 0 && g[2].ts > g[1].ts,
	      "timestamps: recv %" PRIu64 " send %" PRIu64, g[1].ts, g[2].ts);
	printf("send_imm=ok\nrecv_ts_ns=%" PRIu64 "\n", g[1].ts);
}

/* WRITE, READ and both atomics in one batch. */
static void check_rdma(struct ex *x, struct got *g)
{
	uint64_t *word = (uint64_t *)(x->buf + 60000);
	uint64_t *fetched = (uint64_t *)(x->buf + 60008);
	uint64_t *swapped = (uint64_t *)(x->buf + 60016);
	uint64_t remote = (uintptr_t)x->buf;
	int i;

	for (i = 0; i < 4096; i++)
		x->buf[1024 + i] = (uint8_t)(i * 3 + 1);
	*word = 40;
	ibv_wr_start(x->qpx);
	x->qpx->wr_flags = IBV_SEND_SIGNALED;
	x->qpx->wr_id = 3;
	ibv_wr_rdma_write(x->qpx, x->mr->rkey, remote + 40000);
	ibv_wr_set_sge(x->qpx, x->mr->lkey, remote + 1024, 4096);
	x->qpx->wr_id = 4;
	ibv_wr_rdma_read(x->qpx, x->mr->rkey, remote + 1024);
	ibv_wr_set_sge(x->qpx, x->mr->lkey, remote + 50000, 2048);
	x->qpx->wr_id = 5;
	x->qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_atomic_fetch_add(x->qpx, x->mr->rkey, remote + 60000, 2);
	ibv_wr_set_sge(x->qpx, x->mr->lkey, remote + 60008, 8);
	x->qpx->wr_id = 6;
	ibv_wr_atomic_cmp_swp(x->qpx, x->mr->rkey, remote + 60000, 42, 7);
	ibv_wr_set_sge(x->qpx, x->mr->lkey, remote + 60016, 8);
	CHECK_RET(ibv_wr_complete(x->qpx), 0);
	take(x, g, 4);
	CHECK(!memcmp(x->buf + 1024, x->buf + 40000, 4096),
	      "the WRITE's bytes did not arrive");
	CHECK(!memcmp(x->buf + 1024, x->buf + 50000, 2048),
	      "the READ's bytes did not arrive");
	CHECK(*fetched == 40 && *swapped == 42 && *word == 7,
	      "atomics: fetched %" PRIu64 " swapped %" PRIu64 " word %" PRIu64,
	      *fetched, *swapped, *word);
	CHECK(g[3].opcode == IBV_WC_RDMA_WRITE &&
		      g[4].opcode == IBV_WC_RDMA_READ &&
		      g[4].byte_len == 2048 &&
		      g[5].opcode == IBV_WC_FETCH_ADD &&
		      g[6].opcode == IBV_WC_COMP_SWAP,
	      "opcodes %d %d %d %d", g[3].opcode, g[4].opcode, g[5].opcode,
	      g[6].opcode);
	printf("rdma_atomics=ok\n");
}

/* A batch with one bad request posts nothing; an aborted one neither. */
static void check_errors(struct ex *x)
{
	struct ibv_sge many[3];
	struct ibv_poll_cq_attr attr = {0};
	int i;

	for (i = 0; i < 3; i++)
		many[i] = (struct ibv_sge){(uintptr_t)x->buf, 8, x->mr->lkey};
	ibv_wr_start(x->qpx);
	x->qpx->wr_id = 7;
	x->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x->qpx, x->mr->rkey, (uintptr_t)x->buf + 40000);
	ibv_wr_set_sge(x->qpx, x->mr->lkey, (uintptr_t)x->buf, 8);
	ibv_wr_rdma_write(x->qpx, x->mr->rkey, (uintptr_t)x->buf + 40000);
	ibv_wr_set_sge_list(x->qpx, 3, many); /* more than max_send_sge */
	CHECK_RET(ibv_wr_complete(x->qpx), EINVAL);
	ibv_wr_start(x->qpx);
	ibv_wr_rdma_write(x->qpx, x->mr->rkey, (uintptr_t)x->buf + 40000);
	ibv_wr_set_sge(x->qpx, x->mr->lkey, (uintptr_t)x->buf, 8);
	ibv_wr_abort(x->qpx);
	usleep(20000);
	CHECK_RET(ibv_start_poll(x->cq, &attr), ENOENT);
	printf("batch_errors=ok\n");
}

/* Polls 'n' completions of 'cq' (any status) within 5 s; how many came. */
static int drain(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc;
	int got = 0, i;

	for (i = 0; got < n && i < 5000000; i++) {
		got += ibv_poll_cq(cq, 1, &wc) == 1;
		if (i > 1000)
			usleep(1);
	}
	return got;
}

/* Whether the channel has an event within 'ms' (non-blocking reads). */
static int event_within(struct ibv_comp_channel *ch, struct ibv_cq *cq, int ms)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int i;

	for (i = 0; i < ms; i++) {
		if (!ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
			ibv_ack_cq_events(ev_cq, 1);
			return ev_cq == cq;
		}
		usleep(1000);
	}
	return 0;
}

/*
 * A CQ armed for solicited completions only (ibv_req_notify_cq(cq, 1))
 * raises no event at a receive whose SEND was not solicited, and one at a
 * receive whose SEND was (IBA 11.4.2.2, BTH SE); armed for any completion
 * and then for solicited ones, it stays armed for any.
 */
static void check_solicited(struct ex *x, uint16_t lid)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(x->ctx);
	struct ibv_cq *cq = ch ? ibv_create_cq(x->ctx, 16, NULL, ch, 0) : NULL;
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	struct ibv_qp *qp = cq ? ibv_create_qp(x->pd, &qa) : NULL;
	struct ibv_sge sge = {(uintptr_t)x->buf, 64, x->mr->lkey};
	struct ibv_recv_wr rwr = {.sg_list = &sge, .num_sge = 1}, *bad_r;
	struct ibv_send_wr swr = {.sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *bad_s;
	int quiet, loud;

	CHECK(qp && !loopback_connect(qp, lid, IBV_MTU_1024, 1),
	      "solicited: QP: errno %d", errno);
	if (!qp)
		return;
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	CHECK_RET(ibv_post_recv(qp, &rwr, &bad_r), 0);
	CHECK_RET(ibv_post_recv(qp, &rwr, &bad_r), 0);
	CHECK_RET(ibv_req_notify_cq(cq, 1), 0);
	CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
	CHECK(drain(cq, 2) == 2, "solicited: the plain SEND did not complete");
	quiet = !event_within(ch, cq, 20);
	swr.send_flags |= IBV_SEND_SOLICITED;
	CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
	CHECK(drain(cq, 2) == 2, "solicited: the SEND did not complete");
	loud = event_within(ch, cq, 1000);
	CHECK(quiet && loud,
	      "solicited only: event at a plain receive %d, "
	      "at a solicited one %d",
	      !quiet, loud);
	/* Any, then solicited only: still any. */
	CHECK_RET(ibv_post_recv(qp, &rwr, &bad_r), 0);
	CHECK_RET(ibv_req_notify_cq(cq, 0), 0);
	CHECK_RET(ibv_req_notify_cq(cq, 1), 0);
	swr.send_flags &= ~IBV_SEND_SOLICITED;
	CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
	CHECK(drain(cq, 2) == 2, "solicited: the third SEND did not complete");
	loud = loud && event_within(ch, cq, 1000);
	CHECK(loud, "armed for any, then solicited only: no event at a plain "
		    "receive");
	printf("solicited_only=%s\n", quiet && loud ? "ok" : "wrong");
	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	CHECK_RET(ibv_destroy_comp_channel(ch), 0);
}

/* What the extended objects refuse, with rdma-core's errno values. */
static void check_refusals(struct ex *x)
{
	struct ibv_cq_init_attr_ex cx = {.cqe = 8,
					 .wc_flags = IBV_WC_EX_WITH_FLOW_TAG};
	struct ibv_qp_init_attr_ex qx = {
		.qp_type = IBV_QPT_RC,
		.send_cq = ibv_cq_ex_to_cq(x->cq),
		.recv_cq = ibv_cq_ex_to_cq(x->cq),
		.cap = {.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.comp_mask =
			IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = x->pd,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW,
	};
	struct ibv_qp *plain;

	CHECK_NULL_ERRNO(ibv_create_cq_ex(x->ctx, &cx), EOPNOTSUPP);
	CHECK_NULL_ERRNO(ibv_create_qp_ex(x->ctx, &qx), EOPNOTSUPP);
	/* A QP made without send ops has no builders. */
	qx.comp_mask = IBV_QP_INIT_ATTR_PD;
	plain = ibv_create_qp_ex(x->ctx, &qx);
	CHECK(plain && !ibv_qp_to_qp_ex(plain), "plain QP %p", (void *)plain);
	if (plain)
		CHECK_RET(ibv_destroy_qp(plain), 0);
	printf("refusals=ok\n");
}

static int setup(struct ex *x, uint16_t *lid)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_values_ex now = {.comp_mask = IBV_VALUES_MASK_RAW_CLOCK};
	struct ibv_cq_init_attr_ex cx = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_qp_init_attr_ex qx = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 2,
			.max_recv_sge = 1,
			.max_inline_data = 64},
		.comp_mask =
			IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags =
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};

	x->ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	ibv_free_device_list(list);
	if (!x->ctx)
		return -1;
	CHECK_RET(ibv_query_device_ex(x->ctx, NULL, &dx), 0);
	CHECK(dx.completion_timestamp_mask && dx.hca_core_clock == 1000000,
	      "timestamp mask %" PRIx64 " core clock %" PRIu64 " kHz",
	      dx.completion_timestamp_mask, dx.hca_core_clock);
	CHECK_RET(ibv_query_rt_values_ex(x->ctx, &now), 0);
	CHECK(now.comp_mask == IBV_VALUES_MASK_RAW_CLOCK, "rt values mask %x",
	      now.comp_mask);
	CHECK_RET(ibv_query_port(x->ctx, 1, &pa), 0);
	x->pd = ibv_alloc_pd(x->ctx);
	x->buf = calloc(1, 65536);
	x->mr = x->pd && x->buf ? ibv_reg_mr(x->pd, x->buf, 65536,
					     IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC)
				: NULL;
	x->cq = ibv_create_cq_ex(x->ctx, &cx);
	CHECK(x->mr && x->cq, "MR %p CQ %p: errno %d", (void *)x->mr,
	      (void *)x->cq, errno);
	if (!x->mr || !x->cq)
		return -1;
	qx.send_cq = qx.recv_cq = ibv_cq_ex_to_cq(x->cq);
	qx.pd = x->pd;
	x->qp = ibv_create_qp_ex(x->ctx, &qx);
	x->qpx = x->qp ? ibv_qp_to_qp_ex(x->qp) : NULL;
	CHECK(x->qpx, "ibv_create_qp_ex: errno %d", errno);
	if (!x->qpx)
		return -1;
	/* Nothing goes out of a QP that is not ready to send. */
	ibv_wr_start(x->qpx);
	ibv_wr_send(x->qpx);
	ibv_wr_set_sge(x->qpx, x->mr->lkey, (uintptr_t)x->buf, 8);
	CHECK_RET(ibv_wr_complete(x->qpx), EINVAL);
	CHECK_RET(loopback_connect(x->qp, pa.lid, IBV_MTU_1024, 4), 0);
	*lid = pa.lid;
	return 0;
}

int main(void)
{
	struct ex x = {0};
	struct got g[16];
	uint16_t lid = 0;

	memset(g, 0, sizeof(g));
	if (setup(&x, &lid)) {
		printf("FAIL: setup: %s\nfailures=%d\n", strerror(errno),
		       failures + 1);
		return 1;
	}
	check_send(&x, g);
	check_rdma(&x, g);
	check_errors(&x);
	check_refusals(&x);
	check_solicited(&x, lid);
	CHECK_RET(ibv_destroy_qp(x.qp), 0);
	CHECK_RET(ibv_destroy_cq(ibv_cq_ex_to_cq(x.cq)), 0);
	CHECK_RET(ibv_dereg_mr(x.mr), 0);
	CHECK_RET(ibv_dealloc_pd(x.pd), 0);
	CHECK_RET(ibv_close_device(x.ctx), 0);
	free(x.buf);
	printf("failures=%d\n", failures);
	return failures > 100 ? 100 : failures;
}

// SPDX-License-Identifier: MIT
/*
 * run-probe: a rank of 'ibemu run' that uses the bootstrap (ibemu.h) as
 * an MPI library would. It opens its HCA, puts its LID and the QPN of
 * the RC QP that receives from its left neighbour, fences, reads every
 * rank's address, connects a QP to its right neighbour and a ring of
 * SENDs goes round: each rank sends a checked message to the right,
 * receives the left's, then a barrier. It prints its view (every rank's
 * LID and QPN), the message it got and its virtual clock at each step,
 * so two runs on fresh fabrics can be compared byte for byte.
 *
 *   run-probe [--exit-rank R --exit-code C] [--segv-rank R] [--sleep-rank R]
 *             [--no-verbs] [--pingpong N] [--compute-us US]
 *
 * The options make one rank fail on purpose after the fence (exit with
 * C, a SIGSEGV, or sleep for ever), for the crash tests. --no-verbs only
 * exchanges and syncs (no HCA opened). --pingpong N: after the ring,
 * ranks 0 and 1 make N round trips while the others wait in the last
 * barrier (which must let the fabric run). --compute-us US: each rank
 * declares US microseconds of computation after the fence. Exit status 0, or the checks that
 * failed.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibemu.h"
#include "verbs-check.h"

/* A rank's address: its LID, the QP that receives from its left
 * neighbour and the one that sends to its right. */
struct addr {
	uint32_t lid;
	uint32_t rx_qpn;
	uint32_t tx_qpn;
};

#define MSG_LEN 64

static uint64_t now(void)
{
	return ibemu_now_ps ? ibemu_now_ps() : 0;
}

struct ring {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *to_right, *from_left;
	struct ibv_mr *mr;
	/* Page-aligned: a registration costs per page (verbs/cost.h), and a
	 * buffer on the stack spans one or two as the environment's size
	 * moves it. */
	char *buf;
};

static int ring_open(struct ring *r)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};

	if (!list || !list[0])
		return -1;
	r->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!r->ctx)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->cq = r->pd ? ibv_create_cq(r->ctx, 8, NULL, NULL, 0) : NULL;
	if (!r->cq)
		return -1;
	qa.send_cq = qa.recv_cq = r->cq;
	r->to_right = ibv_create_qp(r->pd, &qa);
	r->from_left = ibv_create_qp(r->pd, &qa);
	if (posix_memalign((void **)&r->buf, 4096, 2 * MSG_LEN))
		return -1;
	r->mr = ibv_reg_mr(r->pd, r->buf, 2 * MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	return r->to_right && r->from_left && r->mr ? 0 : -1;
}

static void ring_close(struct ring *r)
{
	ibv_dereg_mr(r->mr);
	ibv_destroy_qp(r->to_right);
	ibv_destroy_qp(r->from_left);
	ibv_destroy_cq(r->cq);
	ibv_dealloc_pd(r->pd);
	ibv_close_device(r->ctx);
	free(r->buf);
}

/* Waits for one completion; returns its status, or -1. */
static int ring_wait(struct ring *r, struct ibv_wc *wc)
{
	int n;

	while (!(n = ibv_poll_cq(r->cq, 1, wc)))
		;
	return n < 0 ? -1 : (int)wc->status;
}

/* Sends to the right, receives from the left; prints what came. */
static void ring_pass(struct ring *r, int rank, int size)
{
	struct ibv_sge rs = {.addr = (uintptr_t)r->buf + MSG_LEN,
			     .length = MSG_LEN,
			     .lkey = r->mr->lkey};
	struct ibv_sge ss = {.addr = (uintptr_t)r->buf,
			     .length = MSG_LEN,
			     .lkey = r->mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 2, .sg_list = &rs, .num_sge = 1},
			   *bad_r;
	struct ibv_send_wr sw = {.wr_id = 1,
				 .sg_list = &ss,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad_s;
	char want[MSG_LEN];
	struct ibv_wc wc;
	int i, got_send = 0, got_recv = 0;

	snprintf(r->buf, MSG_LEN, "from rank %d", rank);
	snprintf(want, sizeof(want), "from rank %d", (rank + size - 1) % size);
	CHECK_RET(ibv_post_recv(r->from_left, &rw, &bad_r), 0);
	/* Everyone's receive is posted before anyone sends. */
	CHECK_RET(ibemu_barrier(), 0);
	CHECK_RET(ibv_post_send(r->to_right, &sw, &bad_s), 0);
	for (i = 0; i < 2; i++) {
		CHECK_RET(ring_wait(r, &wc), IBV_WC_SUCCESS);
		got_send += wc.wr_id == 1;
		got_recv += wc.wr_id == 2;
	}
	CHECK(got_send == 1 && got_recv == 1, "completions %d send %d recv",
	      got_send, got_recv);
	CHECK(!strcmp(r->buf + MSG_LEN, want), "got '%.64s', want '%s'",
	      r->buf + MSG_LEN, want);
	printf("got '%.64s' at %" PRIu64 " ps\n", r->buf + MSG_LEN, now());
}

/*
 * Ranks 0 and 1 exchange 'n' round trips of one SEND each way over the
 * QP between them (rank 0's to its right, rank 1's from its left), while
 * the others wait in the barrier after it: the fabric must run on.
 */
static void pingpong(struct ring *r, int rank, int n)
{
	struct ibv_qp *qp = rank == 0 ? r->to_right : r->from_left;
	struct ibv_sge rs = {.addr = (uintptr_t)r->buf + MSG_LEN,
			     .length = MSG_LEN,
			     .lkey = r->mr->lkey};
	struct ibv_sge ss = {.addr = (uintptr_t)r->buf,
			     .length = MSG_LEN,
			     .lkey = r->mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 2, .sg_list = &rs, .num_sge = 1},
			   *bad_r;
	struct ibv_send_wr sw = {.wr_id = 1,
				 .sg_list = &ss,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad_s;
	struct ibv_wc wc;
	int i, k;

	if (rank > 1)
		return;
	for (i = 0; i < n; i++) {
		CHECK_RET(ibv_post_recv(qp, &rw, &bad_r), 0);
		if (rank == 0)
			CHECK_RET(ibv_post_send(qp, &sw, &bad_s), 0);
		else
			CHECK_RET(ring_wait(r, &wc), IBV_WC_SUCCESS);
		if (rank == 1)
			CHECK_RET(ibv_post_send(qp, &sw, &bad_s), 0);
		for (k = rank == 0 ? 0 : 1; k < 2; k++)
			CHECK_RET(ring_wait(r, &wc), IBV_WC_SUCCESS);
	}
	printf("pingpong of %d done at %" PRIu64 " ps\n", n, now());
}

static int opt_int(int argc, char **argv, const char *name)
{
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return atoi(argv[i + 1]);
	return -1;
}

static int opt_flag(int argc, char **argv, const char *name)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

/* The failure asked for this rank, if any, after the fence. */
static void fail_on_purpose(int argc, char **argv, int rank)
{
	if (opt_int(argc, argv, "--exit-rank") == rank) {
		printf("exiting with %d on purpose\n",
		       opt_int(argc, argv, "--exit-code"));
		fflush(stdout);
		exit(opt_int(argc, argv, "--exit-code"));
	}
	if (opt_int(argc, argv, "--segv-rank") == rank) {
		fflush(stdout);
		/* Killed by it, even under a sanitizer that catches it. */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (opt_int(argc, argv, "--sleep-rank") == rank) {
		printf("sleeping\n");
		fflush(stdout);
		for (;;)
			pause();
	}
}

int main(int argc, char **argv)
{
	int verbs = !opt_flag(argc, argv, "--no-verbs");
	struct ring r = {0};
	struct ibv_port_attr pa;
	struct addr me = {0}, a;
	int rank, size, i;
	ssize_t n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ibemu_init || ibemu_init()) {
		printf("ibemu_init: %s\n",
		       ibemu_init ? strerror(errno) : "not ibemu's libibverbs");
		return 2;
	}
	rank = ibemu_rank();
	size = ibemu_size();
	printf("rank %d of %d on %s, clock %" PRIu64 " ps\n", rank, size,
	       ibemu_host(), now());
	if (verbs) {
		CHECK(!ring_open(&r), "ring_open: %s", strerror(errno));
		if (failures)
			return failures;
		CHECK_RET(ibv_query_port(r.ctx, 1, &pa), 0);
		me.lid = pa.lid;
		me.rx_qpn = r.from_left->qp_num;
		me.tx_qpn = r.to_right->qp_num;
	} else {
		me.lid = (uint32_t)rank * 7;
		me.rx_qpn = (uint32_t)rank + 100;
		me.tx_qpn = (uint32_t)rank + 200;
	}
	CHECK_RET(ibemu_kv_put("addr", &me, sizeof(me)), 0);
	/* Not visible before the fence, to anyone. */
	errno = 0;
	n = ibemu_kv_get(rank, "addr", &a, sizeof(a));
	CHECK(n == -1 && errno == ENOENT, "get before fence: %zd errno %d", n,
	      errno);
	CHECK_RET(ibemu_kv_fence(), 0);
	printf("fence done at %" PRIu64 " ps\n", now());
	if (opt_int(argc, argv, "--compute-us") > 0 && ibemu_compute_ps)
		ibemu_compute_ps((uint64_t)opt_int(argc, argv, "--compute-us") *
				 1000000);
	fail_on_purpose(argc, argv, rank);
	for (i = 0; i < size; i++) {
		n = ibemu_kv_get(i, "addr", &a, sizeof(a));
		CHECK(n == (ssize_t)sizeof(a), "get rank %d: %zd (%s)", i, n,
		      strerror(errno));
		printf("view: rank %d lid %u qpns %u %u\n", i, a.lid, a.rx_qpn,
		       a.tx_qpn);
	}
	if (verbs) {
		CHECK_RET(
			ibemu_kv_get((rank + 1) % size, "addr", &a, sizeof(a)),
			(int)sizeof(a));
		CHECK_RET(qp_connect(r.to_right, (uint16_t)a.lid, a.rx_qpn,
				     IBV_MTU_1024, 1),
			  0);
		CHECK_RET(ibemu_kv_get((rank + size - 1) % size, "addr", &a,
				       sizeof(a)),
			  (int)sizeof(a));
		CHECK_RET(qp_connect(r.from_left, (uint16_t)a.lid, a.tx_qpn,
				     IBV_MTU_1024, 1),
			  0);
		ring_pass(&r, rank, size);
		if (opt_int(argc, argv, "--pingpong") > 0 && size > 1)
			pingpong(&r, rank, opt_int(argc, argv, "--pingpong"));
	}
	CHECK_RET(ibemu_barrier(), 0);
	printf("barrier done at %" PRIu64 " ps\n", now());
	if (verbs)
		ring_close(&r);
	ibemu_finalize();
	return failures;
}

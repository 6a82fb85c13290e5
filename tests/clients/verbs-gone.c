// SPDX-License-Identifier: MIT
/*
 * Verbs programs for tests/integration/test_gone.py, linked against the
 * system libibverbs (under 'ibemu exec' they load ibemu's):
 *
 * 'verbs-gone fatal': opens the device, makes a PD, MR, CQ on a channel and
 * an RC QP connected to itself, prints "ready" and waits for a line on
 * stdin, sent once the test has stopped or killed the daemon and started
 * another under the same fabric name. The context must then learn that its
 * daemon is gone as rdma-core's does on a device removal: the async fd polls
 * readable, ibv_get_async_event() returns IBV_EVENT_DEVICE_FATAL, and every
 * later call fails with EIO (or ENODEV) instead of reaching the new daemon;
 * destroying objects succeeds, as rdma-core treats EIO from a destroy.
 *
 * 'verbs-gone zero OUT IN': one end of an RC connection (OUT gets
 * "lid qpn", IN is read when it appears) that posts an RDMA WRITE, an RDMA
 * READ and an RDMA WRITE with immediate, each of length 0 with no gather
 * list, remote address 0 and R_Key 0 (IBA C9-88), and takes the peer's
 * WRITE with immediate in a receive without a scatter list.
 *
 * Each broken rule prints "FAIL: ..."; the exit status counts them.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs-check.h"

static void hung(int sig)
{
	static const char msg[] = "FAIL: a verb hung on a gone daemon\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(98);
	_exit(99);
}

/* A verb that failed because the device is gone. */
static int gone_err(int err)
{
	return err == EIO || err == ENODEV;
}

#define CHECK_GONE(expr)                                                    \
	do {                                                                \
		int r_ = (expr);                                            \
		CHECK(gone_err(r_), "%s: got %d (%s), want EIO", #expr, r_, \
		      strerror(r_));                                        \
	} while (0)

#define CHECK_GONE_NULL(expr)                                               \
	do {                                                                \
		void *p_;                                                   \
		errno = 0;                                                  \
		p_ = (void *)(expr);                                        \
		CHECK(!p_ && gone_err(errno),                               \
		      "%s: got %p errno %d (%s), want NULL and EIO", #expr, \
		      p_, errno, strerror(errno));                          \
	} while (0)

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};

	return ibv_create_qp(pd, &qa);
}

/* The checks once the daemon that the context opened is gone. */
static void check_gone(struct ibv_context *ctx, struct ibv_pd *pd,
		       struct ibv_mr *mr, struct ibv_cq *cq,
		       struct ibv_comp_channel *ch, struct ibv_qp *qp)
{
	struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
	struct ibv_send_wr swr = {.opcode = IBV_WR_SEND}, *bad_s;
	struct ibv_recv_wr rwr = {.wr_id = 1}, *bad_r;
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_ERR};
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	struct ibv_cq *got;
	void *cq_ctx;
	char buf[64];

	CHECK(poll(&p, 1, 10000) == 1 && (p.revents & POLLIN),
	      "the async fd does not poll readable");
	CHECK_RET(ibv_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_DEVICE_FATAL, "async event %s",
	      ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	printf("event=%s\n", ev.event_type == IBV_EVENT_DEVICE_FATAL
				     ? "DEVICE_FATAL"
				     : ibv_event_type_str(ev.event_type));
	CHECK_GONE(ibv_post_send(qp, &swr, &bad_s));
	CHECK_GONE(ibv_post_recv(qp, &rwr, &bad_r));
	CHECK_GONE(ibv_query_port(ctx, 1, &pa));
	CHECK_GONE(ibv_modify_qp(qp, &qa, IBV_QP_STATE));
	CHECK_GONE_NULL(ibv_create_cq(ctx, 4, NULL, NULL, 0));
	CHECK_GONE_NULL(ibv_alloc_pd(ctx));
	CHECK_GONE_NULL(
		ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	CHECK_GONE_NULL(rc_qp(pd, cq));
	errno = 0;
	CHECK(ibv_get_async_event(ctx, &ev) == -1 && gone_err(errno),
	      "a second ibv_get_async_event: errno %d", errno);
	errno = 0;
	CHECK(ibv_get_cq_event(ch, &got, &cq_ctx) == -1 && gone_err(errno),
	      "ibv_get_cq_event: errno %d", errno);
	/* What the CQ holds stays readable: here nothing. */
	CHECK_RET(ibv_poll_cq(cq, 1, &(struct ibv_wc){0}), 0);
	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	CHECK_RET(ibv_destroy_comp_channel(ch), 0);
	CHECK_RET(ibv_dereg_mr(mr), 0);
	CHECK_RET(ibv_dealloc_pd(pd), 0);
	CHECK_RET(ibv_close_device(ctx), 0);
}

static int fatal(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx =
		list && list[0] ? ibv_open_device(list[0]) : NULL;
	static char buf[4096];
	struct ibv_comp_channel *ch;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char line[16];

	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 100;
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)
		: NULL;
	ch = ibv_create_comp_channel(ctx);
	cq = ch ? ibv_create_cq(ctx, 16, NULL, ch, 0) : NULL;
	qp = mr && cq ? rc_qp(pd, cq) : NULL;
	if (!qp || loopback_connect(qp, pa.lid, IBV_MTU_2048, 1) ||
	    ibv_req_notify_cq(cq, 0))
		return 101;
	printf("ready lid=%u state=%s\n", pa.lid, ibv_port_state_str(pa.state));
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 102;
	signal(SIGALRM, hung);
	alarm(30);
	check_gone(ctx, pd, mr, cq, ch, qp);
	ibv_free_device_list(list);
	printf("done\n");
	return failures > 90 ? 90 : failures;
}

/* Polls 'cq' for one completion for up to 10 s; 1 if it got one. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 10000000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n == 1;
		if (i > 1000)
			usleep(1);
	}
	return 0;
}

/* Writes 'text' to 'path' whole (through a rename), and reads the peer's. */
static void put(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		exit(110);
	fputs(text, f);
	fclose(f);
	rename(tmp, path);
}

static FILE *await(const char *path)
{
	FILE *f;

	while (!(f = fopen(path, "r")))
		usleep(10000);
	return f;
}

static const enum ibv_wr_opcode zero_ops[] = {
	IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_READ,
	IBV_WR_RDMA_WRITE_WITH_IMM,
};

static const enum ibv_wc_opcode zero_wcs[] = {
	IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ,
	IBV_WC_RDMA_WRITE,
};

static int zero(const char *out, const char *in)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx =
		list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_recv_wr rwr = {.wr_id = 100}, *bad_r;
	struct ibv_send_wr wr, *bad_s;
	struct ibv_port_attr pa;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr qa;
	unsigned lid, qpn, i;
	char text[64], done[4096];
	FILE *f;

	signal(SIGALRM, hung);
	alarm(60);
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 100;
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qa = (struct ibv_qp_init_attr){
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	qp = pd && scq && rcq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp)
		return 101;
	snprintf(text, sizeof(text), "%u %u\n", pa.lid, qp->qp_num);
	put(out, text);
	f = await(in);
	if (fscanf(f, "%u %u", &lid, &qpn) != 2)
		return 102;
	fclose(f);
	/* The same attributes as a loopback, towards the peer. */
	if (loopback_connect(qp, (uint16_t)lid, IBV_MTU_2048, 1))
		return 103;
	CHECK_RET(ibv_post_recv(qp, &rwr, &bad_r), 0);
	for (i = 0; i < 3; i++) {
		wr = (struct ibv_send_wr){.wr_id = i,
					  .opcode = zero_ops[i],
					  .send_flags = IBV_SEND_SIGNALED,
					  .imm_data = htobe32(0x5a),
					  .wr.rdma = {0, 0}};
		CHECK_RET(ibv_post_send(qp, &wr, &bad_s), 0);
	}
	/* The peer's connect may follow ours: its RTR comes before the
	 * first of our requests it answers (rnr_retry 7, timeout 14). */
	for (i = 0; i < 3; i++) {
		CHECK(poll_one(scq, &wc), "send %u did not complete", i);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == i &&
			      wc.opcode == zero_wcs[i],
		      "send %u: %s wr_id %llu opcode %d", i,
		      ibv_wc_status_str(wc.status),
		      (unsigned long long)wc.wr_id, wc.opcode);
		printf("send%u=%s\n", i, ibv_wc_status_str(wc.status));
	}
	CHECK(poll_one(rcq, &wc), "the receive did not complete");
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 100 &&
		      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      wc.byte_len == 0 && (wc.wc_flags & IBV_WC_WITH_IMM) &&
		      be32toh(wc.imm_data) == 0x5a,
	      "receive: %s opcode %d byte_len %u imm 0x%x",
	      ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
	      be32toh(wc.imm_data));
	printf("recv=%s byte_len=%u\n", ibv_wc_status_str(wc.status),
	       wc.byte_len);
	fflush(stdout);
	/* Both ends done before either QP goes: its ACKs may be in flight. */
	snprintf(done, sizeof(done), "%s.done", out);
	put(done, "done\n");
	snprintf(done, sizeof(done), "%s.done", in);
	fclose(await(done));
	ibv_destroy_qp(qp);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures > 90 ? 90 : failures;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "fatal"))
		return fatal();
	if (argc == 4 && !strcmp(argv[1], "zero"))
		return zero(argv[2], argv[3]);
	fprintf(stderr, "usage: verbs-gone fatal | zero OUT IN\n");
	return 2;
}

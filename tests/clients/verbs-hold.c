// SPDX-License-Identifier: MIT
/*
 * Holds virtual time on purpose, for 'ibemu status' (test_time.py): posts
 * an RDMA WRITE of 16 MiB (some 700 us of virtual time on an HDR link) on
 * an RC QP connected to itself, prints "posted", then keeps running for
 * SECONDS of wall time, a receive posted every millisecond and never a
 * wait, so the quiescence rule waits for it with the WRITE's packets
 * pending (and no grace: it makes calls). Each receive moves its clock by
 * its cost (verbs/cost.h, 0.1 us): 3 s of them move it 300 us, less than
 * the WRITE takes, so it holds time throughout. Then it takes the WRITE's
 * completion and exits 0. Linked against the system libibverbs; it needs
 * ibemu's (ibemu exec).
 *
 * usage: verbs-hold SECONDS
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs-check.h"

#define NRECV	    8192
#define WRITE_BYTES (16u << 20)

/* By the system call: under `ibemu exec` clock_gettime is virtual
 * (vtime/), and this program holds time for a span of wall time. */
static double wall_s(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 4,
			.max_recv_wr = NRECV,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	struct timespec ms = {0, 1000 * 1000};
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	struct ibv_recv_wr rwr = {0}, *rbad;
	struct ibv_send_wr swr = {0}, *sbad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	double end;
	char *buf;
	int n = 0;

	if (argc != 2)
		return 2 + failures; /* verbs-check.h's count, unused here */
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 1;
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, 2 * WRITE_BYTES);
	mr = pd && buf ? ibv_reg_mr(pd, buf, 2 * WRITE_BYTES,
				    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE)
		       : NULL;
	cq = ibv_create_cq(ctx, NRECV + 8, NULL, NULL, 0);
	qa.send_cq = qa.recv_cq = cq;
	qp = mr && cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp || loopback_connect(qp, pa.lid, IBV_MTU_1024, 1))
		return 1;
	sge = (struct ibv_sge){(uintptr_t)buf, WRITE_BYTES, mr->lkey};
	swr = (struct ibv_send_wr){
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {(uintptr_t)buf + WRITE_BYTES, mr->rkey}};
	if (ibv_post_send(qp, &swr, &sbad))
		return 1;
	printf("posted\n");
	fflush(stdout);
	sge.length = 4096;
	rwr = (struct ibv_recv_wr){.sg_list = &sge, .num_sge = 1};
	for (end = wall_s() + atof(argv[1]); wall_s() < end && n < NRECV; n++) {
		if (ibv_post_recv(qp, &rwr, &rbad))
			return 1;
		nanosleep(&ms, NULL);
	}
	while (ibv_poll_cq(cq, 1, &wc) == 0)
		;
	printf("done %d\n", wc.status);
	return wc.status != IBV_WC_SUCCESS;
}

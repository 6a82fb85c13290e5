// SPDX-License-Identifier: MIT
/*
 * bench-rdmacm-kv: the reference of bench/rdmacm.py. Two ranks under
 * 'ibemu run -n 2' connect N RC QP pairs by hand, as MPI libraries do
 * through PMI: each rank creates its N QPs, publishes their numbers, PSNs
 * and its LID through the bootstrap's key-value store (ibemu.h), fences,
 * reads the peer's and moves every QP to RTS. It prints the wall time and
 * the virtual time that took, for the same N that cmtime connects through
 * rdma_cm.
 *
 *   ibemu run -n 2 --hosts A,B -- build/bench/bench-rdmacm-kv [-c N]
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ibemu.h"

#define PER_KEY 64 /* QPs per value: 64 x 12 bytes < IBEMU_KV_VAL_MAX */

struct qp_end {
	uint32_t qpn, psn, lid;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-rdmacm-kv: %s: %s\n", what, strerror(err));
	exit(1);
}

/* The host's clock, through the system call: under 'ibemu run' the
 * program's clock_gettime() reads virtual time (vtime/). */
static double wall_s(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void to_rts(struct ibv_qp *qp, const struct qp_end *peer,
		   uint32_t my_psn)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("modify to INIT", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = (uint16_t)peer->lid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS", errno);
}

static void publish(const struct qp_end *mine, int n)
{
	char key[32];
	int i;

	for (i = 0; i < n; i += PER_KEY) {
		int k = n - i < PER_KEY ? n - i : PER_KEY;

		snprintf(key, sizeof(key), "qps.%d", i / PER_KEY);
		if (ibemu_kv_put(key, &mine[i], (size_t)k * sizeof(*mine)))
			die("kv_put", errno);
	}
	if (ibemu_kv_fence())
		die("kv_fence", errno);
}

static void fetch(int rank, struct qp_end *peer, int n)
{
	char key[32];
	int i;

	for (i = 0; i < n; i += PER_KEY) {
		int k = n - i < PER_KEY ? n - i : PER_KEY;

		snprintf(key, sizeof(key), "qps.%d", i / PER_KEY);
		if (ibemu_kv_get(rank, key, &peer[i],
				 (size_t)k * sizeof(*peer)) < 0)
			die("kv_get", errno);
	}
}

int main(int argc, char **argv)
{
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	struct qp_end *mine, *peer;
	struct ibv_qp **qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	double w0, w1;
	uint64_t v0 = 0, v1 = 0;
	int n = 100, opt, i, rank;

	while ((opt = getopt(argc, argv, "c:")) != -1) {
		if (opt != 'c' || (n = atoi(optarg)) <= 0) {
			fprintf(stderr, "usage: bench-rdmacm-kv [-c N]\n");
			return 2;
		}
	}
	if (!ibemu_init || ibemu_init() || ibemu_size() != 2) {
		fprintf(stderr, "bench-rdmacm-kv: run me with "
				"'ibemu run -n 2'\n");
		return 2;
	}
	rank = ibemu_rank();
	devs = ibv_get_device_list(NULL);
	if (!devs || !devs[0])
		die("no HCA", ENODEV);
	ctx = ibv_open_device(devs[0]);
	if (!ctx || ibv_query_port(ctx, 1, &port))
		die("open", errno);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qp = calloc((size_t)n, sizeof(*qp));
	mine = calloc((size_t)n, sizeof(*mine));
	peer = calloc((size_t)n, sizeof(*peer));
	if (!pd || !cq || !qp || !mine || !peer)
		die("resources", errno ? errno : ENOMEM);
	if (ibemu_barrier())
		die("barrier", errno);
	/* as cmtime's "full connect": from the first QP made to the last in
	 * RTS */
	w0 = wall_s();
	if (ibemu_now_ps)
		v0 = ibemu_now_ps();
	for (i = 0; i < n; i++) {
		struct ibv_qp_init_attr ia = {.send_cq = cq,
					      .recv_cq = cq,
					      .qp_type = IBV_QPT_RC,
					      .cap = {.max_send_wr = 1,
						      .max_recv_wr = 1,
						      .max_send_sge = 1,
						      .max_recv_sge = 1}};

		qp[i] = ibv_create_qp(pd, &ia);
		if (!qp[i])
			die("create QP", errno);
		mine[i].qpn = qp[i]->qp_num;
		mine[i].psn = (uint32_t)(i * 7919) & 0xffffff;
		mine[i].lid = port.lid;
	}
	publish(mine, n);
	fetch(1 - rank, peer, n);
	for (i = 0; i < n; i++)
		to_rts(qp[i], &peer[i], mine[i].psn);
	if (ibemu_barrier())
		die("barrier", errno);
	w1 = wall_s();
	if (ibemu_now_ps)
		v1 = ibemu_now_ps();
	if (rank == 1)
		printf("connections=%d wall_s=%.6f virtual_us=%.3f\n", n,
		       w1 - w0, (double)(v1 - v0) / 1e6);
	for (i = 0; i < n; i++)
		ibv_destroy_qp(qp[i]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	free(qp);
	free(mine);
	free(peer);
	ibemu_finalize();
	return 0;
}

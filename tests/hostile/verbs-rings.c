// SPDX-License-Identifier: MIT
/*
 * A careless verbs program, linked against the system libibverbs and run
 * under 'ibemu exec' (tests/integration/test_hostile_rings.py): it posts
 * more work requests than its QP was created for, then makes no verbs
 * call for a while, as a program that forgot to poll does. A provider
 * refuses the post beyond the QP's capacity with ENOMEM; the daemon must
 * stay idle and answering whatever the process does.
 *
 *   verbs-rings send N   RC QP of max_send_wr 100 (connected to itself),
 *                        N unsignaled RDMA WRITEs of 0 bytes
 *   verbs-rings recv N   UD QP of max_recv_wr 100, N receives
 *   verbs-rings srq N    SRQ of max_wr 100, N receives
 *
 * It prints "posted=K err=E" (the posts accepted, the errno of the first
 * refused one or 0), sleeps HOLD_MS without a verbs call, then prints
 * "alive" and exits 0 (1 when it could not set itself up).
 *
 *   verbs-rings churn N  creates and destroys, N times over, a PD, an MR,
 *                        a CQ with a completion channel, an SRQ and a QP
 *                        on it: more than one process may hold at once,
 *                        so the daemon must give each back; prints
 *                        "churned=K err=E"
 *   verbs-rings hog      takes all the daemon lets one process have:
 *                        contexts, CQs with a completion channel each,
 *                        QPs, then more CQs, each until refused; prints
 *                        "NAME=COUNT err=ERRNO" for each, then "holding",
 *                        and holds them until its standard input ends
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../clients/verbs-check.h"

#define CAP	100
#define HOLD_MS 1500

static int post_sends(struct ibv_qp *qp, int n, int *err)
{
	struct ibv_send_wr wr, *bad;
	int i;

	for (i = 0; i < n; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i;
		wr.opcode = IBV_WR_RDMA_WRITE;
		*err = ibv_post_send(qp, &wr, &bad);
		if (*err)
			break;
	}
	return i;
}

static int post_recvs(struct ibv_qp *qp, struct ibv_srq *srq, int n, int *err)
{
	struct ibv_recv_wr wr, *bad;
	int i;

	for (i = 0; i < n; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i;
		*err = srq ? ibv_post_srq_recv(srq, &wr, &bad)
			   : ibv_post_recv(qp, &wr, &bad);
		if (*err)
			break;
	}
	return i;
}

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			    struct ibv_srq *srq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = CAP,
			.max_recv_wr = srq ? 0 : CAP,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	if (!qp || ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					 IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	return qp;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint16_t lid)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = CAP,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	if (!qp || loopback_connect(qp, lid, IBV_MTU_2048, 1))
		return NULL;
	return qp;
}

/* Prints how many 'make' made before it failed, and its errno. */
#define TAKE_ALL(name, make)                                 \
	do {                                                 \
		unsigned n_ = 0;                             \
		errno = 0;                                   \
		while ((make))                               \
			n_++;                                \
		printf("%s=%u err=%d\n", (name), n_, errno); \
		fflush(stdout);                              \
	} while (0)

static struct ibv_cq *channel_cq(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq;
	int err;

	if (!ch)
		return NULL;
	cq = ibv_create_cq(ctx, 1, NULL, ch, 0);
	if (!cq) {
		err = errno;
		ibv_destroy_comp_channel(ch);
		errno = err;
	}
	return cq;
}

static struct ibv_qp *small_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};

	return ibv_create_qp(pd, &qa);
}

/* One round of churn: 0, or the errno of the call that failed. */
static int churn_once(struct ibv_context *ctx, struct ibv_cq *scq, void *buf)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_comp_channel *ch = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	int err = 0;

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return errno;
	if (!(mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE)) ||
	    !(ch = ibv_create_comp_channel(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 4, NULL, ch, 0)) ||
	    !(srq = ibv_create_srq(pd, &sa)))
		err = errno;
	if (!err) {
		struct ibv_qp_init_attr qa = {
			.send_cq = scq,
			.recv_cq = cq,
			.srq = srq,
			.qp_type = IBV_QPT_RC,
			.cap = {.max_send_wr = 1, .max_send_sge = 1}};

		qp = ibv_create_qp(pd, &qa);
		if (!qp)
			err = errno;
	}
	if ((qp && ibv_destroy_qp(qp)) || (srq && ibv_destroy_srq(srq)) ||
	    (cq && ibv_destroy_cq(cq)) ||
	    (ch && ibv_destroy_comp_channel(ch)) || (mr && ibv_dereg_mr(mr)) ||
	    ibv_dealloc_pd(pd))
		err = err ? err : EIO;
	return err;
}

static int churn(struct ibv_context *ctx, struct ibv_cq *cq, int n)
{
	static char buf[4096];
	int i, err = 0;

	for (i = 0; i < n && !err; i++)
		err = churn_once(ctx, cq, buf);
	printf("churned=%d err=%d\n", err ? i - 1 : i, err);
	return 0;
}

static int hog(struct ibv_device *dev, struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);

	if (!pd || !cq) {
		perror("verbs-rings: hog");
		return 1;
	}
	TAKE_ALL("contexts", ibv_open_device(dev));
	TAKE_ALL("channels", channel_cq(ctx));
	TAKE_ALL("qps", small_qp(pd, cq));
	TAKE_ALL("cqs", ibv_create_cq(ctx, 1, NULL, NULL, 0));
	printf("holding\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = CAP, .max_sge = 1}};
	struct ibv_device **list;
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int n, posted, err = 0;

	if (argc != 3 && !(argc == 2 && !strcmp(argv[1], "hog"))) {
		fprintf(stderr,
			"usage: verbs-rings send|recv|srq|churn N | hog\n");
		return 2;
	}
	n = argc == 3 ? atoi(argv[2]) : 0;
	list = ibv_get_device_list(NULL);
	if (!list || !list[0] || !(ctx = ibv_open_device(list[0])) ||
	    ibv_query_port(ctx, 1, &pa) || !(pd = ibv_alloc_pd(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 4 * CAP, NULL, NULL, 0))) {
		perror("verbs-rings: setting up");
		return 1;
	}
	if (!strcmp(argv[1], "hog"))
		return hog(list[0], ctx);
	if (!strcmp(argv[1], "churn"))
		return churn(ctx, cq, n);
	if (!strcmp(argv[1], "srq") && !(srq = ibv_create_srq(pd, &sa))) {
		perror("verbs-rings: ibv_create_srq");
		return 1;
	}
	qp = !strcmp(argv[1], "send") ? rc_qp(pd, cq, pa.lid)
				      : ud_qp(pd, cq, srq);
	if (!qp) {
		perror("verbs-rings: the QP");
		return 1;
	}
	posted = !strcmp(argv[1], "send") ? post_sends(qp, n, &err)
					  : post_recvs(qp, srq, n, &err);
	printf("posted=%d err=%d\n", posted, err);
	fflush(stdout);
	/* No verbs call for a while: a program that forgot to poll. */
	usleep(HOLD_MS * 1000);
	printf("alive\n");
	return failures;
}

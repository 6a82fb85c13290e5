// SPDX-License-Identifier: MIT
/*
 * What the verbs test programs (verbs-client.c, verbs-ex.c, verbs-mem.c)
 * share: the checks (each broken rule prints "FAIL: line N: ..." with
 * what it got and what it wanted, and counts in 'failures', which the
 * program returns) and an RC QP connected to itself.
 */
#ifndef IBEMU_TESTS_VERBS_CHECK_H
#define IBEMU_TESTS_VERBS_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static int failures;

#define CHECK(cond, ...)                                     \
	do {                                                 \
		if (!(cond)) {                               \
			printf("FAIL: line %d: ", __LINE__); \
			printf(__VA_ARGS__);                 \
			printf("\n");                        \
			failures++;                          \
		}                                            \
	} while (0)

/* A constructor that must fail with errno 'want'. */
#define CHECK_NULL_ERRNO(expr, want)                             \
	do {                                                     \
		void *p_;                                        \
		errno = 0;                                       \
		p_ = (void *)(expr);                             \
		CHECK(!p_ && errno == (want),                    \
		      "%s: got %p errno %d (%s), "               \
		      "want NULL errno %d (%s)",                 \
		      #expr, p_, errno, strerror(errno), (want), \
		      strerror(want));                           \
	} while (0)

/* A call that must return 'want'. */
#define CHECK_RET(expr, want)                                         \
	do {                                                          \
		int r_ = (expr);                                      \
		CHECK(r_ == (want), "%s: got %d, want %d", #expr, r_, \
		      (int)(want));                                   \
	} while (0)

/*
 * RESET -> INIT -> RTR -> RTS of RC QP 'qp' towards QP 'dqpn' at LID
 * 'lid' of port 1, with remote write, read and atomic access; 0 or an
 * errno.
 */
static inline int qp_connect(struct ibv_qp *qp, uint16_t lid, uint32_t dqpn,
			     enum ibv_mtu mtu, uint8_t rd_atomic)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR,
				 .path_mtu = mtu,
				 .dest_qp_num = dqpn,
				 .rq_psn = 1,
				 .max_dest_rd_atomic = rd_atomic,
				 .min_rnr_timer = 12,
				 .ah_attr = {.dlid = lid, .port_num = 1}};
	ret = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS,
				 .timeout = 14,
				 .retry_cnt = 7,
				 .rnr_retry = 7,
				 .sq_psn = 1,
				 .max_rd_atomic = rd_atomic};
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The same towards itself (LID 'lid': through the leaf switch and back). */
static inline int loopback_connect(struct ibv_qp *qp, uint16_t lid,
				   enum ibv_mtu mtu, uint8_t rd_atomic)
{
	return qp_connect(qp, lid, qp->qp_num, mtu, rd_atomic);
}

#endif

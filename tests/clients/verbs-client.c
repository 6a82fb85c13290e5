// SPDX-License-Identifier: MIT
/*
 * A verbs program linked against the system libibverbs, as real programs
 * are: run under 'ibemu exec' it loads ibemu's library instead and checks
 * the rules of the local objects (PD, MR, CQ, completion channel, AH) with
 * their errno values, then prints what it read of the device and port as
 * key=value lines for tests/integration/test_verbs.py. Each broken rule
 * prints "FAIL: ..." with what it got and what it wanted; the exit status
 * is the number of them (capped), 0 when all hold.
 *
 * It also runs QPs: the state machine's errors, a loopback RC SEND and
 * WRITE, a bad lkey; and, as 'verbs-client peer OUT IN victim|writer', one
 * end of an RC connection for the SIGKILL test (see peer()); and, as
 * 'verbs-client threads N', N threads posting and polling at once on their
 * own QPs and CQs of one context (see threads()); and, as 'verbs-client
 * late-recv', a receive posted after an RNR NAK (see late_recv()); and,
 * as 'verbs-client reuse-buffer ud|uc', UC or UD sends from one buffer
 * written again at each completion (see reuse_buffer()).
 *
 * usage: verbs-client [peer OUT IN victim|writer | threads N | late-recv |
 *                      reuse-buffer ud|uc]
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs-check.h"

#define NMRS	   8
#define NTHREADS   4
#define PER_THREAD 64

static uint32_t keys[NMRS + NTHREADS * PER_THREAD];
static unsigned nkeys;
static pthread_mutex_t keys_lock = PTHREAD_MUTEX_INITIALIZER;

static void key_add(uint32_t k)
{
	pthread_mutex_lock(&keys_lock);
	keys[nkeys++] = k;
	pthread_mutex_unlock(&keys_lock);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct reg_job {
	struct ibv_pd *pd;
	char *buf;
	int ok;
};

/* Registers and deregisters from several threads at once. */
static void *reg_thread(void *arg)
{
	struct reg_job *j = arg;
	struct ibv_mr *mrs[PER_THREAD];
	int i;

	j->ok = 1;
	for (i = 0; i < PER_THREAD; i++) {
		mrs[i] = ibv_reg_mr(j->pd, j->buf + i, 64,
				    IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[i]) {
			j->ok = 0;
			return NULL;
		}
		key_add(mrs[i]->lkey);
	}
	for (i = 0; i < PER_THREAD; i++)
		if (ibv_dereg_mr(mrs[i]))
			j->ok = 0;
	return NULL;
}

static void check_mrs(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2;
	struct ibv_mr *mr[NMRS], *m;
	struct reg_job jobs[NTHREADS];
	pthread_t th[NTHREADS];
	char stack_buf[4096];
	char *heap = malloc(1 << 20);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *map, *hole;
	unsigned i, dup = 0;
	int n = 0;

	CHECK(pd, "ibv_alloc_pd: errno %d", errno);
	if (!pd || !heap)
		return;
	/* Four mapped pages, then a hole where the fifth was. */
	map = mmap(NULL, 5 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hole = map + 4 * page;
	munmap(hole, page);

	/* Any user memory: malloc, stack, mmap, with every access. */
	mr[n++] = ibv_reg_mr(pd, heap, 1 << 20,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC);
	mr[n++] = ibv_reg_mr(pd, stack_buf, sizeof(stack_buf),
			     IBV_ACCESS_LOCAL_WRITE);
	mr[n++] = ibv_reg_mr(pd, map, 4 * page,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	mr[n++] = ibv_reg_mr(pd, map + 1, 10, 0); /* unaligned, read-only */
	mr[n++] = ibv_reg_mr_iova(pd, heap, 4096, 0x10000,
				  IBV_ACCESS_LOCAL_WRITE);
	mr[n++] = ibv_reg_mr_iova2(pd, heap, 4096, 0,
				   IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_RELAXED_ORDERING);
	for (i = 0; i < (unsigned)n; i++) {
		CHECK(mr[i], "ibv_reg_mr #%u: errno %d", i, errno);
		if (!mr[i])
			continue;
		CHECK(mr[i]->pd == pd && mr[i]->context == ctx,
		      "MR #%u: pd %p context %p", i, (void *)mr[i]->pd,
		      (void *)mr[i]->context);
		CHECK(mr[i]->lkey == mr[i]->rkey, "MR #%u: lkey %#x rkey %#x",
		      i, mr[i]->lkey, mr[i]->rkey);
		key_add(mr[i]->lkey);
	}
	if (mr[0])
		CHECK(mr[0]->addr == heap && mr[0]->length == 1 << 20,
		      "MR addr %p length %zu", mr[0]->addr, mr[0]->length);

	/* ib_check_mr_access(): remote write or atomic needs local write. */
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, heap, 64, IBV_ACCESS_REMOTE_WRITE),
			 EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, heap, 64, IBV_ACCESS_REMOTE_ATOMIC),
			 EINVAL);
	CHECK_NULL_ERRNO(
		ibv_reg_mr(pd, heap, 64,
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
		EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, heap, 64, 1 << 15), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, heap, 0, IBV_ACCESS_LOCAL_WRITE),
			 EINVAL);
	/* Memory that is not mapped cannot be pinned. */
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, hole, page, IBV_ACCESS_LOCAL_WRITE),
			 EFAULT);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, map, 5 * page, IBV_ACCESS_LOCAL_WRITE),
			 EFAULT);

	/* Keys are unique among the context's regions, across threads. */
	for (i = 0; i < NTHREADS; i++) {
		jobs[i].pd = pd;
		jobs[i].buf = heap + i * 4096;
		pthread_create(&th[i], NULL, reg_thread, &jobs[i]);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		CHECK(jobs[i].ok, "thread %u: ibv_reg_mr/dereg failed", i);
	}
	qsort(keys, nkeys, sizeof(keys[0]), cmp_u32);
	for (i = 1; i < nkeys; i++)
		dup += keys[i] == keys[i - 1];
	CHECK(dup == 0, "%u duplicate keys among %u", dup, nkeys);
	printf("mr_keys=%u\nmr_key_dups=%u\n", nkeys, dup);

	/* A PD in use cannot go (EBUSY), an unused one can. */
	CHECK_RET(ibv_dealloc_pd(pd), EBUSY);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd2, "second ibv_alloc_pd: errno %d", errno);
	if (pd2) {
		m = ibv_reg_mr(pd2, heap, 64, 0);
		CHECK(m, "ibv_reg_mr on pd2: errno %d", errno);
		if (m) {
			CHECK_RET(ibv_dealloc_pd(pd2), EBUSY);
			CHECK_RET(ibv_dereg_mr(m), 0);
		}
		CHECK_RET(ibv_dealloc_pd(pd2), 0);
	}
	for (i = 0; i < (unsigned)n; i++)
		if (mr[i])
			CHECK_RET(ibv_dereg_mr(mr[i]), 0);
	CHECK_RET(ibv_dealloc_pd(pd), 0);
	munmap(map, 4 * page);
	free(heap);
}

static void check_cqs(struct ibv_context *ctx, const struct ibv_device_attr *a)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct pollfd pfd;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_wc wc[4];
	void *ev_ctx;
	int flags, tag = 42;

	CHECK(ch, "ibv_create_comp_channel: errno %d", errno);
	if (!ch)
		return;
	CHECK(fcntl(ch->fd, F_GETFD) >= 0, "channel fd %d is not open", ch->fd);
	CHECK_NULL_ERRNO(ibv_create_cq(ctx, 0, NULL, ch, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_create_cq(ctx, a->max_cqe + 1, NULL, ch, 0),
			 EINVAL);
	CHECK_NULL_ERRNO(
		ibv_create_cq(ctx, 16, NULL, ch, ctx->num_comp_vectors),
		EINVAL);
	cq = ibv_create_cq(ctx, 100, &tag, ch, 0);
	CHECK(cq, "ibv_create_cq: errno %d", errno);
	if (!cq)
		return;
	CHECK(cq->cqe >= 100 && cq->cq_context == &tag && cq->channel == ch,
	      "CQ cqe %d context %p channel %p", cq->cqe, cq->cq_context,
	      (void *)cq->channel);
	printf("cq_cqe=%d\n", cq->cqe);
	/* A channel a CQ uses cannot go. */
	CHECK_RET(ibv_destroy_comp_channel(ch), EBUSY);
	CHECK_RET(ibv_req_notify_cq(cq, 0), 0);
	CHECK_RET(ibv_req_notify_cq(cq, 1), 0);
	CHECK_RET(ibv_poll_cq(cq, 4, wc), 0);
	CHECK_RET(ibv_resize_cq(cq, 200), 0);
	CHECK(cq->cqe >= 200, "resized CQ has %d entries", cq->cqe);
	/* Nothing completed: the fd is not readable, and a non-blocking
	 * read of an event fails with EAGAIN. */
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	CHECK_RET(poll(&pfd, 1, 0), 0);
	flags = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
	errno = 0;
	CHECK_RET(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
	CHECK(errno == EAGAIN, "ibv_get_cq_event: errno %d, want EAGAIN",
	      errno);
	ibv_ack_cq_events(cq, 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	CHECK_RET(ibv_destroy_comp_channel(ch), 0);

	/* A CQ without a channel. */
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	CHECK(cq, "ibv_create_cq without channel: errno %d", errno);
	if (cq)
		CHECK_RET(ibv_destroy_cq(cq), 0);
	printf("comp_channel=ok\n");
}

static void check_ahs(struct ibv_context *ctx, const struct ibv_port_attr *pa)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_ah_attr attr = {
		.dlid = pa->lid ? pa->lid : 1,
		.sl = 0,
		.port_num = 1,
	};
	struct ibv_ah *ah;

	if (!pd)
		return;
	ah = ibv_create_ah(pd, &attr);
	CHECK(ah, "ibv_create_ah: errno %d", errno);
	if (ah) {
		CHECK_RET(ibv_dealloc_pd(pd), EBUSY);
		CHECK_RET(ibv_destroy_ah(ah), 0);
	}
	attr.port_num = 2;
	CHECK_NULL_ERRNO(ibv_create_ah(pd, &attr), EINVAL);
	attr.port_num = 1;
	attr.sl = 16;
	CHECK_NULL_ERRNO(ibv_create_ah(pd, &attr), EINVAL);
	attr.sl = 0;
	attr.is_global = 1;
	attr.grh.sgid_index = (uint8_t)pa->gid_tbl_len;
	CHECK_NULL_ERRNO(ibv_create_ah(pd, &attr), EINVAL);
	attr.grh.sgid_index = 0;
	ah = ibv_create_ah(pd, &attr);
	CHECK(ah, "ibv_create_ah with GRH: errno %d", errno);
	if (ah)
		CHECK_RET(ibv_destroy_ah(ah), 0);
	CHECK_RET(ibv_dealloc_pd(pd), 0);
}

/* What waits for the transport fails as documented, without crashing. */
static void check_unsupported(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq_init_attr_ex cx = {.cqe = 16,
					 .wc_flags = IBV_WC_EX_WITH_CVLAN};

	if (!pd)
		return;
	CHECK_NULL_ERRNO(ibv_create_cq_ex(ctx, &cx), EOPNOTSUPP);
	CHECK_NULL_ERRNO(ibv_alloc_mw(pd, IBV_MW_TYPE_1), EOPNOTSUPP);
	CHECK_NULL_ERRNO(ibv_alloc_td(ctx, &(struct ibv_td_init_attr){0}),
			 EOPNOTSUPP);
	CHECK_RET(ibv_dealloc_pd(pd), 0);
	printf("cq_ex_cvlan=EOPNOTSUPP\n");
}

/* Polls 'cq' for one completion for up to 5 s; 1 if it got one. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 5000000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n == 1;
		if (i > 1000)
			usleep(1);
	}
	return 0;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 2,
			.max_recv_sge = 2},
	};

	return ibv_create_qp(pd, &qa);
}

/* RNR settings: min_rnr_timer at RTR, rnr_retry at RTS (late_recv's). */
static uint8_t min_rnr_timer = 12, rnr_retry = 7;

/* RESET -> INIT -> RTR -> RTS towards (dlid, dqpn); 0 or an errno. */
static int rc_connect(struct ibv_qp *qp, uint16_t dlid, uint32_t dqpn,
		      uint8_t timeout, uint8_t retry)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_2048;
	a.dest_qp_num = dqpn;
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = min_rnr_timer;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr_retry;
	a.sq_psn = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * Queue pairs through the real API: the state machine's errors, a
 * loopback RC SEND and RDMA WRITE (the QP connected to itself, through
 * the leaf switch and back), a completion event, a bad lkey, an SRQ.
 */
static void check_qps(struct ibv_context *ctx, const struct ibv_port_attr *pa)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ch ? ibv_create_cq(ctx, 64, NULL, ch, 0) : NULL;
	static char src[8192], dst[8192];
	struct ibv_mr *smr, *dmr;
	struct ibv_qp *qp;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sge;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_wc wc;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr sia = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_srq_attr sattr;
	int i;

	CHECK(pd && cq, "PD %p CQ %p: errno %d", (void *)pd, (void *)cq, errno);
	if (!pd || !cq)
		return;
	smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, sizeof(dst),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(smr && dmr, "ibv_reg_mr: errno %d", errno);
	qp = rc_qp(pd, cq);
	CHECK(qp, "ibv_create_qp: errno %d", errno);
	if (!qp || !smr || !dmr)
		return;
	CHECK(qp->qp_num >= 2 && qp->state == IBV_QPS_RESET,
	      "QP number %u state %d", qp->qp_num, qp->state);
	CHECK_RET(ibv_query_qp(qp, &a, IBV_QP_CAP, &ia), 0);
	CHECK(ia.cap.max_send_wr >= 16 && ia.cap.max_inline_data > 0,
	      "caps: send_wr %u inline %u", ia.cap.max_send_wr,
	      ia.cap.max_inline_data);
	/* IBA 10.3.1: RESET goes to INIT only, with its attributes. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	a.qp_state = IBV_QPS_INIT;
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	/* Nothing is sent from RESET. */
	sge = (struct ibv_sge){(uintptr_t)src, 64, smr->lkey};
	swr = (struct ibv_send_wr){.wr_id = 1,
				   .sg_list = &sge,
				   .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED};
	CHECK_RET(ibv_post_send(qp, &swr, &bad_s), EINVAL);
	CHECK_RET(rc_connect(qp, pa->lid, qp->qp_num, 14, 7), 0);
	CHECK_RET(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	CHECK(a.qp_state == IBV_QPS_RTS, "state %d after connect", a.qp_state);
	/* RTS cannot go back to RTR. */
	a.qp_state = IBV_QPS_RTR;
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);

	/* A SEND to itself, with a completion event for the receive. */
	for (i = 0; i < 4096; i++)
		src[i] = (char)(i * 7 + 1);
	memset(dst, 0, sizeof(dst));
	sge = (struct ibv_sge){(uintptr_t)dst, 4096, dmr->lkey};
	rwr = (struct ibv_recv_wr){.wr_id = 2, .sg_list = &sge, .num_sge = 1};
	CHECK_RET(ibv_post_recv(qp, &rwr, &bad_r), 0);
	CHECK_RET(ibv_req_notify_cq(cq, 0), 0);
	{
		struct ibv_sge s2 = {(uintptr_t)src, 4096, smr->lkey};

		swr.sg_list = &s2;
		CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
	}
	CHECK_RET(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	CHECK(ev_cq == cq, "event for CQ %p, want %p", (void *)ev_cq,
	      (void *)cq);
	ibv_ack_cq_events(cq, 1);
	for (i = 0; i < 2; i++) {
		CHECK(poll_one(cq, &wc), "no completion %d for the SEND", i);
		CHECK(wc.status == IBV_WC_SUCCESS, "SEND wr %llu: status %s",
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status));
		if (wc.wr_id == 2)
			CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == 4096,
			      "receive opcode %d len %u", wc.opcode,
			      wc.byte_len);
	}
	CHECK(!memcmp(src, dst, 4096), "the SEND's bytes did not arrive");
	printf("loopback_send=ok\n");

	/* An RDMA WRITE with inline data, to itself. */
	{
		struct ibv_sge s2 = {(uintptr_t)src + 100, 32, 0};

		swr = (struct ibv_send_wr){
			.wr_id = 3,
			.sg_list = &s2,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
			.wr.rdma = {(uintptr_t)dst + 5000, dmr->rkey}};
		CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
		CHECK(poll_one(cq, &wc) && wc.status == IBV_WC_SUCCESS &&
			      wc.wr_id == 3,
		      "RDMA WRITE: status %d wr_id %llu", wc.status,
		      (unsigned long long)wc.wr_id);
		CHECK(!memcmp(src + 100, dst + 5000, 32),
		      "the WRITE's bytes did not arrive");
	}

	/* A bad lkey: a local protection error, then the QP flushes. */
	{
		struct ibv_sge s2 = {(uintptr_t)src, 64, smr->lkey ^ 0x5a5a00};

		swr = (struct ibv_send_wr){.wr_id = 4,
					   .sg_list = &s2,
					   .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED};
		CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
		CHECK(poll_one(cq, &wc) && wc.wr_id == 4 &&
			      wc.status == IBV_WC_LOC_PROT_ERR,
		      "bad lkey: wr_id %llu status %s",
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status));
		printf("bad_lkey=%s\n", ibv_wc_status_str(wc.status));
	}
	CHECK_RET(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	CHECK(a.qp_state == IBV_QPS_ERR, "state %d after a bad lkey",
	      a.qp_state);
	/* A CQ and a PD in use cannot go. */
	CHECK_RET(ibv_destroy_cq(cq), EBUSY);
	CHECK_RET(ibv_dealloc_pd(pd), EBUSY);
	CHECK_RET(ibv_destroy_qp(qp), 0);

	srq = ibv_create_srq(pd, &sia);
	CHECK(srq, "ibv_create_srq: errno %d", errno);
	if (srq) {
		CHECK_RET(ibv_query_srq(srq, &sattr), 0);
		CHECK(sattr.max_wr >= 8, "SRQ max_wr %u", sattr.max_wr);
		sge = (struct ibv_sge){(uintptr_t)dst, 64, dmr->lkey};
		rwr = (struct ibv_recv_wr){
			.wr_id = 9, .sg_list = &sge, .num_sge = 1};
		CHECK_RET(ibv_post_srq_recv(srq, &rwr, &bad_r), 0);
		CHECK_RET(ibv_destroy_srq(srq), 0);
	}
	CHECK_RET(ibv_dereg_mr(smr), 0);
	CHECK_RET(ibv_dereg_mr(dmr), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	CHECK_RET(ibv_destroy_comp_channel(ch), 0);
	CHECK_RET(ibv_dealloc_pd(pd), 0);
	printf("qp=ok\n");
}

/*
 * A CQ armed while it holds a completion the program cannot know of (it
 * came after its last look: no event taken, no poll) raises its event at
 * once (verbs/README.md; Open MPI's udcm arms after answering what it
 * polled, and relies on it): a loopback SEND whose receive completes
 * on a CQ of a channel and whose send completes on another; the send's
 * completion comes after the receive's, so the receive waits unpolled
 * when the CQ is armed. Armed again with nothing left, there is no event.
 */
static void check_arm_pending(struct ibv_context *ctx,
			      const struct ibv_port_attr *pa)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *rcq = ch ? ibv_create_cq(ctx, 8, NULL, ch, 0) : NULL;
	struct ibv_cq *scq = ibv_create_cq(ctx, 8, NULL, NULL, 0), *ev_cq;
	struct ibv_qp_init_attr qa = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	static char buf[64];
	struct ibv_mr *mr =
		pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)
		   : NULL;
	struct ibv_qp *qp = mr && rcq && scq ? ibv_create_qp(pd, &qa) : NULL;
	struct ibv_sge sge = {(uintptr_t)buf, 32, mr ? mr->lkey : 0};
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1};
	struct ibv_send_wr swr = {.wr_id = 2,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad_s;
	struct ibv_recv_wr *bad_r;
	struct ibv_wc wc;
	void *ev_ctx;

	CHECK(qp, "arm_pending setup: errno %d", errno);
	if (!qp)
		return;
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	CHECK_RET(rc_connect(qp, pa->lid, qp->qp_num, 14, 7), 0);
	CHECK_RET(ibv_post_recv(qp, &rwr, &bad_r), 0);
	CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
	CHECK(poll_one(scq, &wc) && wc.wr_id == 2 &&
		      wc.status == IBV_WC_SUCCESS,
	      "arm_pending SEND: wr_id %llu status %d",
	      (unsigned long long)wc.wr_id, wc.status);
	CHECK_RET(ibv_req_notify_cq(rcq, 0), 0);
	CHECK_RET(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	CHECK(ev_cq == rcq, "arm_pending: event for CQ %p, want %p",
	      (void *)ev_cq, (void *)rcq);
	ibv_ack_cq_events(rcq, 1);
	CHECK(poll_one(rcq, &wc) && wc.wr_id == 1 &&
		      wc.status == IBV_WC_SUCCESS,
	      "arm_pending RECV: wr_id %llu status %d",
	      (unsigned long long)wc.wr_id, wc.status);
	CHECK_RET(ibv_req_notify_cq(rcq, 0), 0);
	errno = 0;
	CHECK_RET(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
	CHECK(errno == EAGAIN, "arm_pending, empty CQ: errno %d", errno);
	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_dereg_mr(mr), 0);
	CHECK_RET(ibv_destroy_cq(rcq), 0);
	CHECK_RET(ibv_destroy_cq(scq), 0);
	CHECK_RET(ibv_destroy_comp_channel(ch), 0);
	CHECK_RET(ibv_dealloc_pd(pd), 0);
	printf("arm_pending=ok\n");
}

/*
 * 'peer OUT IN victim|writer': two processes connect an RC QP through
 * files (OUT gets "lid qpn addr rkey", IN is read when it appears). The
 * victim waits to be killed; the writer RDMA-WRITEs 64 KiB to it in a loop
 * until a completion fails, and prints that completion's status.
 */
static int peer(const char *out, const char *in, int writer)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx =
		list && list[0] ? ibv_open_device(list[0]) : NULL;
	static char buf[65536];
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	unsigned lid, qpn, rkey;
	unsigned long long addr, n = 0;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	FILE *f;
	char tmp[4096];

	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	qp = pd && cq && mr ? rc_qp(pd, cq) : NULL;
	if (!qp)
		return 3;
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (!f)
		return 4;
	fprintf(f, "%u %u %llu %u\n", pa.lid, qp->qp_num,
		(unsigned long long)(uintptr_t)buf, mr->rkey);
	fclose(f);
	rename(tmp, out);
	while (!(f = fopen(in, "r")))
		usleep(10000);
	if (fscanf(f, "%u %u %llu %u", &lid, &qpn, &addr, &rkey) != 4)
		return 5;
	fclose(f);
	/* 4.096 us x 2^10 = 4 ms per try, 3 retries. */
	if (rc_connect(qp, (uint16_t)lid, qpn, 10, 3))
		return 6;
	if (!writer) {
		printf("victim=ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	for (;;) {
		sge = (struct ibv_sge){(uintptr_t)buf, sizeof(buf), mr->lkey};
		wr = (struct ibv_send_wr){.wr_id = n,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED,
					  .wr.rdma = {addr, rkey}};
		if (ibv_post_send(qp, &wr, &bad))
			return 7;
		while (ibv_poll_cq(cq, 1, &wc) == 0)
			usleep(10);
		if (wc.status != IBV_WC_SUCCESS)
			break;
		if (++n == 1) {
			printf("writes=started\n");
			fflush(stdout);
		}
	}
	printf("writes=%llu\nstatus=%s\n", n, ibv_wc_status_str(wc.status));
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

/*
 * 'threads N': N threads post and poll at once on one context, each on its
 * own RC QP pair (QP a connected to QP b through the port's own LID, the
 * leaf switch and back) with its own two CQs. Each thread keeps up to
 * T_DEPTH iterations in flight; an iteration is a RECV on b and a SEND of
 * a varying size from a, and every fourth one an RDMA WRITE from a into
 * b's memory as well. Every completion's status, opcode, wr_id order and
 * byte count is checked, and the bytes that arrived.
 */
#define T_ITERS	  200
#define T_DEPTH	  8
#define T_SLOT	  8192
#define T_WSLOT	  4096
#define T_MAX_THR 16

struct t_pair {
	int id;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	char *buf; /* src, dst, wsrc, wdst: T_DEPTH slots each */
	uint32_t max_inline;
	pthread_barrier_t *start;
	unsigned sends, writes, recvs, inl;
	unsigned long long bytes;
	int bad;
};

#define TFAIL(p, ...)                                                      \
	do {                                                               \
		char m_[256];                                              \
		snprintf(m_, sizeof(m_), __VA_ARGS__);                     \
		printf("FAIL: thread %d line %d: %s\n", (p)->id, __LINE__, \
		       m_);                                                \
		(p)->bad++;                                                \
	} while (0)

static char *t_src(struct t_pair *p, unsigned i)
{
	return p->buf + (i % T_DEPTH) * T_SLOT;
}

static char *t_dst(struct t_pair *p, unsigned i)
{
	return p->buf + (T_DEPTH + i % T_DEPTH) * T_SLOT;
}

static char *t_wsrc(struct t_pair *p, unsigned i)
{
	return p->buf + 2 * T_DEPTH * T_SLOT + (i % T_DEPTH) * T_WSLOT;
}

static char *t_wdst(struct t_pair *p, unsigned i)
{
	return p->buf + 2 * T_DEPTH * T_SLOT +
	       (T_DEPTH + i % T_DEPTH) * T_WSLOT;
}

/* Sizes from 1 byte to four MTUs, different in each thread. */
static uint32_t t_send_len(const struct t_pair *p, unsigned i)
{
	return 1 + (i * 1237u + (unsigned)p->id * 311u) % T_SLOT;
}

static uint32_t t_write_len(const struct t_pair *p, unsigned i)
{
	return 1 + (i * 53u + (unsigned)p->id * 17u) % T_WSLOT;
}

static int t_has_write(unsigned i)
{
	return i % 4 == 3;
}

static void t_fill(char *b, uint32_t len, const struct t_pair *p, unsigned i,
		   unsigned salt)
{
	uint32_t k;

	for (k = 0; k < len; k++)
		b[k] = (char)(p->id * 31 + i * 7 + salt + k * 13);
}

/* Posts iteration i: the RECV, the SEND and perhaps the WRITE. */
static int t_post(struct t_pair *p, unsigned i)
{
	struct ibv_sge rs = {(uintptr_t)t_dst(p, i), T_SLOT, p->mr->lkey};
	struct ibv_sge ss = {(uintptr_t)t_src(p, i), t_send_len(p, i),
			     p->mr->lkey};
	struct ibv_sge ws = {(uintptr_t)t_wsrc(p, i), t_write_len(p, i),
			     p->mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = i, .sg_list = &rs, .num_sge = 1};
	struct ibv_send_wr swr[2], *bad_s;
	struct ibv_recv_wr *bad_r;
	int ret;

	t_fill(t_src(p, i), ss.length, p, i, 0);
	memset(t_dst(p, i), 0, T_SLOT);
	memset(&swr, 0, sizeof(swr));
	swr[0].wr_id = (uint64_t)i << 1;
	swr[0].sg_list = &ss;
	swr[0].num_sge = 1;
	swr[0].opcode = IBV_WR_SEND;
	swr[0].send_flags = IBV_SEND_SIGNALED;
	if (ss.length <= p->max_inline && i % 2) {
		swr[0].send_flags |= IBV_SEND_INLINE;
		p->inl++;
	}
	if (t_has_write(i)) {
		t_fill(t_wsrc(p, i), ws.length, p, i, 101);
		memset(t_wdst(p, i), 0, T_WSLOT);
		swr[0].next = &swr[1];
		swr[1].wr_id = ((uint64_t)i << 1) | 1;
		swr[1].sg_list = &ws;
		swr[1].num_sge = 1;
		swr[1].opcode = IBV_WR_RDMA_WRITE;
		swr[1].send_flags = IBV_SEND_SIGNALED;
		swr[1].wr.rdma.remote_addr = (uintptr_t)t_wdst(p, i);
		swr[1].wr.rdma.rkey = p->mr->rkey;
	}
	ret = ibv_post_recv(p->b, &rwr, &bad_r);
	if (ret) {
		TFAIL(p, "ibv_post_recv %u: %d", i, ret);
		return ret;
	}
	ret = ibv_post_send(p->a, swr, &bad_s);
	if (ret)
		TFAIL(p, "ibv_post_send %u: %d", i, ret);
	return ret;
}

static double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *t_run(void *arg)
{
	struct t_pair *p = arg;
	unsigned posted = 0, rdone = 0, sdone = 0, wphase = 0;
	double deadline;
	struct ibv_wc wc[16];
	int n, k, idle;

	pthread_barrier_wait(p->start);
	deadline = t_now() + 60;
	while ((rdone < T_ITERS || sdone < T_ITERS) && !p->bad) {
		while (posted < T_ITERS &&
		       posted - (rdone < sdone ? rdone : sdone) < T_DEPTH) {
			if (t_post(p, posted))
				return NULL;
			posted++;
		}
		idle = 1;
		n = ibv_poll_cq(p->scq, 16, wc);
		if (n < 0)
			TFAIL(p, "ibv_poll_cq (send): %d", n);
		for (k = 0; k < n; k++) {
			uint64_t want = ((uint64_t)sdone << 1) | wphase;

			idle = 0;
			if (wc[k].status != IBV_WC_SUCCESS ||
			    wc[k].wr_id != want) {
				TFAIL(p,
				      "send CQ: wr_id %llu status %s, want "
				      "wr_id %llu success",
				      (unsigned long long)wc[k].wr_id,
				      ibv_wc_status_str(wc[k].status),
				      (unsigned long long)want);
				break;
			}
			if (!wphase) {
				if (wc[k].opcode != IBV_WC_SEND)
					TFAIL(p, "SEND %u: opcode %d", sdone,
					      wc[k].opcode);
				p->sends++;
				if (t_has_write(sdone)) {
					wphase = 1;
					continue;
				}
			} else {
				uint32_t len = t_write_len(p, sdone);

				if (wc[k].opcode != IBV_WC_RDMA_WRITE)
					TFAIL(p, "WRITE %u: opcode %d", sdone,
					      wc[k].opcode);
				if (memcmp(t_wsrc(p, sdone), t_wdst(p, sdone),
					   len))
					TFAIL(p, "WRITE %u: %u bytes differ",
					      sdone, len);
				p->writes++;
				p->bytes += len;
				wphase = 0;
			}
			sdone++;
		}
		n = ibv_poll_cq(p->rcq, 16, wc);
		if (n < 0)
			TFAIL(p, "ibv_poll_cq (recv): %d", n);
		for (k = 0; k < n; k++) {
			uint32_t len = t_send_len(p, rdone);

			idle = 0;
			if (wc[k].status != IBV_WC_SUCCESS ||
			    wc[k].wr_id != rdone ||
			    wc[k].opcode != IBV_WC_RECV ||
			    wc[k].byte_len != len) {
				TFAIL(p,
				      "recv CQ: wr_id %llu status %s opcode "
				      "%d len %u, want %u success RECV %u",
				      (unsigned long long)wc[k].wr_id,
				      ibv_wc_status_str(wc[k].status),
				      wc[k].opcode, wc[k].byte_len, rdone, len);
				break;
			}
			if (memcmp(t_src(p, rdone), t_dst(p, rdone), len))
				TFAIL(p, "RECV %u: %u bytes differ", rdone,
				      len);
			p->recvs++;
			p->bytes += len;
			rdone++;
		}
		if (idle && t_now() > deadline) {
			TFAIL(p, "timed out: %u posted, %u sent, %u received",
			      posted, sdone, rdone);
			break;
		}
	}
	return NULL;
}

static int t_setup(struct ibv_context *ctx, struct ibv_pd *pd, uint16_t lid,
		   struct t_pair *p)
{
	size_t len = 2 * T_DEPTH * (T_SLOT + T_WSLOT);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 2 * T_DEPTH,
			.max_recv_wr = T_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 64},
	};

	p->pd = pd;
	p->buf = calloc(1, len);
	p->scq = ibv_create_cq(ctx, 4 * T_DEPTH, NULL, NULL, 0);
	p->rcq = ibv_create_cq(ctx, 4 * T_DEPTH, NULL, NULL, 0);
	if (!p->buf || !p->scq || !p->rcq)
		return -1;
	p->mr = ibv_reg_mr(pd, p->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	qa.send_cq = qa.recv_cq = p->scq;
	p->a = ibv_create_qp(pd, &qa);
	p->max_inline = qa.cap.max_inline_data;
	qa.send_cq = qa.recv_cq = p->rcq;
	p->b = ibv_create_qp(pd, &qa);
	if (!p->mr || !p->a || !p->b)
		return -1;
	if (rc_connect(p->a, lid, p->b->qp_num, 14, 7) ||
	    rc_connect(p->b, lid, p->a->qp_num, 14, 7))
		return -1;
	return 0;
}

static void t_teardown(struct t_pair *p)
{
	if (p->a)
		CHECK_RET(ibv_destroy_qp(p->a), 0);
	if (p->b)
		CHECK_RET(ibv_destroy_qp(p->b), 0);
	if (p->mr)
		CHECK_RET(ibv_dereg_mr(p->mr), 0);
	if (p->scq)
		CHECK_RET(ibv_destroy_cq(p->scq), 0);
	if (p->rcq)
		CHECK_RET(ibv_destroy_cq(p->rcq), 0);
	free(p->buf);
}

/* Frees what threads() and late_recv() opened (each may be NULL). */
static void ctx_close(struct ibv_pd *pd, struct ibv_context *ctx,
		      struct ibv_device **list)
{
	if (pd)
		CHECK_RET(ibv_dealloc_pd(pd), 0);
	if (ctx)
		CHECK_RET(ibv_close_device(ctx), 0);
	if (list)
		ibv_free_device_list(list);
}

static int threads(int nthr)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx =
		list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct t_pair pairs[T_MAX_THR];
	pthread_t th[T_MAX_THR];
	pthread_barrier_t start;
	struct ibv_port_attr pa;
	struct ibv_pd *pd = NULL;
	unsigned sends = 0, writes = 0, recvs = 0, inl = 0;
	unsigned long long bytes = 0;
	int i, ok = 0;

	if (nthr < 1 || nthr > T_MAX_THR) {
		printf("FAIL: threads %d: want 1 to %d\n", nthr, T_MAX_THR);
		return 1;
	}
	memset(pairs, 0, sizeof(pairs));
	CHECK(ctx, "ibv_open_device: errno %d", errno);
	if (ctx) {
		CHECK_RET(ibv_query_port(ctx, 1, &pa), 0);
		pd = ibv_alloc_pd(ctx);
		CHECK(pd, "ibv_alloc_pd: errno %d", errno);
	}
	for (i = 0; pd && i < nthr; i++) {
		pairs[i].id = i;
		pairs[i].start = &start;
		if (t_setup(ctx, pd, pa.lid, &pairs[i])) {
			CHECK(0, "pair %d: setup failed: errno %d", i, errno);
			break;
		}
	}
	if (pd && i == nthr) {
		pthread_barrier_init(&start, NULL, (unsigned)nthr);
		for (i = 0; i < nthr; i++)
			pthread_create(&th[i], NULL, t_run, &pairs[i]);
		for (i = 0; i < nthr; i++) {
			pthread_join(th[i], NULL);
			ok += !pairs[i].bad && pairs[i].recvs == T_ITERS &&
			      pairs[i].sends == T_ITERS;
			failures += pairs[i].bad;
			sends += pairs[i].sends;
			writes += pairs[i].writes;
			recvs += pairs[i].recvs;
			inl += pairs[i].inl;
			bytes += pairs[i].bytes;
		}
		pthread_barrier_destroy(&start);
	}
	for (i = 0; i < nthr; i++)
		t_teardown(&pairs[i]);
	ctx_close(pd, ctx, list);
	printf("threads_ok=%d\nsends=%u\nwrites=%u\nrecvs=%u\ninline=%u\n"
	       "bytes=%llu\nfailures=%d\n",
	       ok, sends, writes, recvs, inl, bytes, failures);
	return failures > 100 ? 100 : failures;
}

/*
 * 'late-recv': a SEND to itself finds no receive (an RNR NAK), the
 * receive is posted 50 ms later, while the daemon sleeps until the RNR
 * timer (491 ms on a free clock: min_rnr_timer 31), and the one retry the
 * QP allows (rnr_retry 1) must find it. A receive wakes nobody: the
 * daemon takes it before its engine runs again. Prints late_recv=STATUS.
 */
static int late_recv(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx =
		list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq ? rc_qp(pd, cq) : NULL;
	static char buf[64];
	struct ibv_mr *mr =
		qp ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)
		   : NULL;
	struct ibv_sge sge = {(uintptr_t)buf, 8, mr ? mr->lkey : 0};
	struct ibv_send_wr swr = {.wr_id = 1,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *bad_s;
	struct ibv_recv_wr rwr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1},
			   *bad_r;
	struct ibv_port_attr pa;
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};
	int got = 0;

	CHECK(mr, "setup: errno %d", errno);
	if (mr) {
		CHECK_RET(ibv_query_port(ctx, 1, &pa), 0);
		min_rnr_timer = 31; /* 491.52 ms */
		rnr_retry = 1;
		/* A Local ACK Timeout (4.3 s) longer than the RNR timer. */
		CHECK_RET(rc_connect(qp, pa.lid, qp->qp_num, 20, 7), 0);
		CHECK_RET(ibv_post_send(qp, &swr, &bad_s), 0);
		usleep(50000);
		CHECK_RET(ibv_post_recv(qp, &rwr, &bad_r), 0);
		while (got < 2 && poll_one(cq, &wc) && wc.status == 0)
			got++;
	}
	printf("late_recv=%s\n",
	       got == 2 ? "ok" : ibv_wc_status_str(wc.status));
	if (mr)
		CHECK_RET(ibv_dereg_mr(mr), 0);
	if (qp)
		CHECK_RET(ibv_destroy_qp(qp), 0);
	if (cq)
		CHECK_RET(ibv_destroy_cq(cq), 0);
	ctx_close(pd, ctx, list);
	printf("failures=%d\n", failures);
	return failures > 100 ? 100 : failures;
}

/* --- reuse-buffer ---------------------------------------------------- */

#define REUSE_MSGS 8
#define REUSE_LEN  4096
#define GRH_LEN	   40

/* UD QP 'qp' (Q_Key 0x11111111) to RTS; 0 or an errno. */
static int ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
	int ret;

	ret = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR};
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = 1};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* UC QP 'qp' connected to itself at LID 'lid'; 0 or an errno. */
static int uc_loopback(struct ibv_qp *qp, uint16_t lid)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	int ret;

	ret = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR,
				 .path_mtu = IBV_MTU_4096,
				 .dest_qp_num = qp->qp_num,
				 .rq_psn = 3,
				 .ah_attr = {.dlid = lid, .port_num = 1}};
	ret = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = 3};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static struct ibv_qp *reuse_qp(struct ibv_pd *pd, struct ibv_cq *scq,
			       struct ibv_cq *rcq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = type,
		.cap = {.max_send_wr = REUSE_MSGS,
			.max_recv_wr = REUSE_MSGS,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};

	return ibv_create_qp(pd, &qa);
}

/*
 * Sends REUSE_MSGS messages of REUSE_LEN bytes from one buffer, as Open
 * MPI's UD connection manager does: each is sent once the one before has
 * completed, its bytes written over the ones before. A UC or UD send
 * completes as its last packet leaves, so the buffer is the program's
 * again then, though the packet has not arrived: each receive must hold
 * the bytes sent into it. 'verbs-client reuse-buffer ud|uc' prints
 * reuse_buffer=ok or the first receive that holds other bytes.
 */
static int reuse_buffer(const char *type)
{
	int ud = !strcmp(type, "ud");
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx =
		list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *scq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_cq *rcq = scq ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	enum ibv_qp_type qt = ud ? IBV_QPT_UD : IBV_QPT_UC;
	struct ibv_qp *sqp = rcq ? reuse_qp(pd, scq, rcq, qt) : NULL;
	struct ibv_qp *rqp = sqp && ud ? reuse_qp(pd, scq, rcq, qt) : sqp;
	static uint8_t sbuf[REUSE_LEN], rbuf[REUSE_MSGS][GRH_LEN + REUSE_LEN];
	struct ibv_mr *smr = rqp ? ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0) : NULL;
	struct ibv_mr *rmr =
		smr ? ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE)
		    : NULL;
	struct ibv_ah *ah = NULL;
	struct ibv_port_attr pa;
	struct ibv_wc wc;
	char result[64] = "ok";
	unsigned i, j, off = ud ? GRH_LEN : 0;

	CHECK(rmr, "setup: errno %d", errno);
	if (!rmr)
		goto out;
	CHECK_RET(ibv_query_port(ctx, 1, &pa), 0);
	if (ud) {
		CHECK_RET(ud_ready(sqp), 0);
		CHECK_RET(ud_ready(rqp), 0);
		ah = ibv_create_ah(pd, &(struct ibv_ah_attr){.dlid = pa.lid,
							     .port_num = 1});
		CHECK(ah, "ibv_create_ah: errno %d", errno);
	} else {
		CHECK_RET(uc_loopback(sqp, pa.lid), 0);
	}
	for (i = 0; i < REUSE_MSGS; i++) {
		/* A UD receive starts with the GRH's 40 bytes. */
		struct ibv_sge sge = {(uintptr_t)rbuf[i], off + REUSE_LEN,
				      rmr->lkey};
		struct ibv_recv_wr rwr = {.wr_id = i,
					  .sg_list = &sge,
					  .num_sge = 1},
				   *bad;

		CHECK_RET(ibv_post_recv(rqp, &rwr, &bad), 0);
	}
	for (i = 0; i < REUSE_MSGS && !failures; i++) {
		struct ibv_sge sge = {(uintptr_t)sbuf, REUSE_LEN, smr->lkey};
		struct ibv_send_wr swr = {.wr_id = 100 + i,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED},
				   *bad;

		if (ud) {
			swr.wr.ud.ah = ah;
			swr.wr.ud.remote_qpn = rqp->qp_num;
			swr.wr.ud.remote_qkey = 0x11111111;
		}
		memset(sbuf, 'A' + i, sizeof(sbuf));
		CHECK_RET(ibv_post_send(sqp, &swr, &bad), 0);
		CHECK(poll_one(scq, &wc) && wc.status == IBV_WC_SUCCESS &&
			      wc.wr_id == 100 + i,
		      "send %u: status %d wr_id %" PRIu64, i, wc.status,
		      wc.wr_id);
	}
	for (i = 0; i < REUSE_MSGS && !failures; i++) {
		CHECK(poll_one(rcq, &wc) && wc.status == IBV_WC_SUCCESS &&
			      wc.wr_id == i && wc.byte_len == off + REUSE_LEN,
		      "receive %u: status %d wr_id %" PRIu64 " byte_len %u", i,
		      wc.status, wc.wr_id, wc.byte_len);
		for (j = 0; j < REUSE_LEN; j++)
			if (rbuf[i][off + j] != 'A' + i)
				break;
		if (j < REUSE_LEN && !strcmp(result, "ok"))
			snprintf(result, sizeof(result),
				 "receive %u holds '%c' at %u, want '%c'", i,
				 rbuf[i][off + j], j, 'A' + i);
	}
	if (failures && !strcmp(result, "ok"))
		snprintf(result, sizeof(result), "failed");
out:
	printf("reuse_buffer=%s\n", result);
	if (ah)
		CHECK_RET(ibv_destroy_ah(ah), 0);
	if (rmr)
		CHECK_RET(ibv_dereg_mr(rmr), 0);
	if (smr)
		CHECK_RET(ibv_dereg_mr(smr), 0);
	if (rqp && rqp != sqp)
		CHECK_RET(ibv_destroy_qp(rqp), 0);
	if (sqp)
		CHECK_RET(ibv_destroy_qp(sqp), 0);
	if (rcq)
		CHECK_RET(ibv_destroy_cq(rcq), 0);
	if (scq)
		CHECK_RET(ibv_destroy_cq(scq), 0);
	ctx_close(pd, ctx, list);
	printf("failures=%d\n", failures);
	return failures > 100 ? 100 : failures;
}

static void print_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	struct ibv_device_attr_ex ax;

	CHECK_RET(ibv_query_device(ctx, a), 0);
	CHECK_RET(ibv_query_device_ex(ctx, NULL, &ax), 0);
	CHECK(ax.orig_attr.node_guid == a->node_guid &&
		      ax.orig_attr.max_qp == a->max_qp,
	      "ibv_query_device_ex differs from ibv_query_device");
	printf("node_guid=%016" PRIx64 "\n", be64toh(a->node_guid));
	printf("sys_image_guid=%016" PRIx64 "\n", be64toh(a->sys_image_guid));
	printf("vendor_id=%#x\nvendor_part_id=%u\n", a->vendor_id,
	       a->vendor_part_id);
	printf("max_qp=%d\nmax_qp_wr=%d\nmax_sge=%d\nmax_cq=%d\nmax_cqe=%d\n",
	       a->max_qp, a->max_qp_wr, a->max_sge, a->max_cq, a->max_cqe);
	printf("max_mr_size=%" PRIu64 "\nmax_pd=%d\nmax_qp_rd_atom=%d\n",
	       (uint64_t)a->max_mr_size, a->max_pd, a->max_qp_rd_atom);
	printf("max_qp_init_rd_atom=%d\nmax_srq=%d\natomic_cap=%d\n",
	       a->max_qp_init_rd_atom, a->max_srq, a->atomic_cap);
	printf("max_pkeys=%u\nphys_port_cnt=%u\n", a->max_pkeys,
	       a->phys_port_cnt);
}

static void print_port(struct ibv_context *ctx, struct ibv_port_attr *pa)
{
	struct ibv_gid_entry entries[4], e;
	union ibv_gid gid;
	__be16 pkey;
	ssize_t n;

	CHECK_RET(ibv_query_port(ctx, 1, pa), 0);
	printf("port_state=%s\nlid=%u\nsm_lid=%u\nlmc=%u\n",
	       ibv_port_state_str(pa->state), pa->lid, pa->sm_lid, pa->lmc);
	printf("active_width=%u\nactive_speed=%u\nactive_mtu=%d\n",
	       pa->active_width, pa->active_speed, pa->active_mtu);
	printf("gid_tbl_len=%d\npkey_tbl_len=%u\nlink_layer=%u\n",
	       pa->gid_tbl_len, pa->pkey_tbl_len, pa->link_layer);
	errno = 0;
	CHECK(ibv_query_port(ctx, 2, pa) == EINVAL,
	      "ibv_query_port of port 2 does not fail with EINVAL");
	CHECK_RET(ibv_query_port(ctx, 1, pa), 0);

	CHECK_RET(ibv_query_gid(ctx, 1, 0, &gid), 0);
	printf("gid0=%016" PRIx64 ":%016" PRIx64 "\n",
	       be64toh(gid.global.subnet_prefix),
	       be64toh(gid.global.interface_id));
	CHECK_RET(ibv_query_gid(ctx, 1, pa->gid_tbl_len, &gid), -1);
	CHECK_RET(ibv_query_gid_ex(ctx, 1, 0, &e, 0), 0);
	CHECK(e.gid_type == IBV_GID_TYPE_IB && e.gid_index == 0,
	      "gid entry type %u index %u", e.gid_type, e.gid_index);
	n = ibv_query_gid_table(ctx, entries, 4, 0);
	CHECK(n == 1, "ibv_query_gid_table: %zd entries, want 1", n);
	CHECK_RET(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	printf("pkey0=%#06x\n", be16toh(pkey));
	CHECK_RET(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)), 0);
	CHECK_RET(ibv_query_pkey(ctx, 1, pa->pkey_tbl_len, &pkey), -1);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr pa;
	int num = -1;

	if (argc == 5 && !strcmp(argv[1], "peer"))
		return peer(argv[2], argv[3], !strcmp(argv[4], "writer"));
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "late-recv"))
		return late_recv();
	if (argc == 3 && !strcmp(argv[1], "reuse-buffer"))
		return reuse_buffer(argv[2]);
	list = ibv_get_device_list(&num);
	if (!list) {
		printf("FAIL: ibv_get_device_list: %s\n", strerror(errno));
		return 1;
	}
	printf("num_devices=%d\n", num);
	if (num == 0) {
		ibv_free_device_list(list);
		return 0;
	}
	printf("device=%s\nguid=%016" PRIx64 "\n", ibv_get_device_name(list[0]),
	       be64toh(ibv_get_device_guid(list[0])));
	printf("node_type=%s\ntransport=%d\n",
	       ibv_node_type_str(list[0]->node_type), list[0]->transport_type);
	ctx = ibv_open_device(list[0]);
	/* The device stays valid for its context after the list goes. */
	ibv_free_device_list(list);
	if (!ctx) {
		printf("FAIL: ibv_open_device: %s\n", strerror(errno));
		return 1;
	}
	print_device(ctx, &attr);
	print_port(ctx, &pa);
	printf("device_name_after_free=%s\n", ibv_get_device_name(ctx->device));
	check_mrs(ctx);
	check_cqs(ctx, &attr);
	check_ahs(ctx, &pa);
	check_unsupported(ctx);
	check_qps(ctx, &pa);
	check_arm_pending(ctx, &pa);
	printf("wc_status=%s\nevent=%s\n",
	       ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
	       ibv_event_type_str(IBV_EVENT_PORT_ACTIVE));
	CHECK_RET(ibv_close_device(ctx), 0);
	printf("failures=%d\n", failures);
	return failures > 100 ? 100 : failures;
}

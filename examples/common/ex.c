// SPDX-License-Identifier: MIT
/*
 * ex.c: the verbs examples' shared steps: open the HCA, register the
 * buffer, connect RC QPs through the bootstrap's key-value store, post
 * and wait, time, fill and check. Plain libibverbs and the bootstrap of
 * ibemu.h: under 'ibemu run' both come from ibemu's libibverbs.so.1; on a
 * real cluster, the system's libibverbs and examples/shim.
 */
#include "ex.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *prog_name = "example";

void ex_fail(const struct ex *e, const char *fmt, ...)
{
	va_list ap;

	if (e && e->rank >= 0)
		fprintf(stderr, "%s: rank %d: ", prog_name, e->rank);
	else
		fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

uint64_t ex_now_ps(void)
{
	struct timespec ts;

	if (ibemu_now_ps)
		return ibemu_now_ps();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000000ull +
	       (uint64_t)ts.tv_nsec * 1000;
}

static void join_job(struct ex *e)
{
	if (!ibemu_init)
		ex_fail(e, "no bootstrap: run under 'ibemu run', or link "
			   "examples/shim on a cluster");
	if (ibemu_init())
		ex_fail(e, "ibemu_init: %s%s", strerror(errno),
			errno == ENOENT ? " (not under 'ibemu run')" : "");
	e->rank = ibemu_rank();
	e->size = ibemu_size();
}

static struct ibv_device *pick_device(struct ex *e, struct ibv_device **l)
{
	const char *want = getenv("EX_DEVICE");
	int i;

	for (i = 0; l && l[i]; i++)
		if (!want || !strcmp(ibv_get_device_name(l[i]), want))
			return l[i];
	ex_fail(e, "no RDMA device%s%s", want ? " named " : "",
		want ? want : "");
}

static void open_device(struct ex *e)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device_attr dev;

	e->ctx = ibv_open_device(pick_device(e, list));
	ibv_free_device_list(list);
	if (!e->ctx)
		ex_fail(e, "ibv_open_device: %s", strerror(errno));
	if (ibv_query_device(e->ctx, &dev))
		ex_fail(e, "ibv_query_device failed");
	if (ibv_query_port(e->ctx, 1, &e->port))
		ex_fail(e, "ibv_query_port failed");
	if (e->port.state != IBV_PORT_ACTIVE)
		ex_fail(e, "port 1 is not Active (no subnet manager?)");
	e->rd_atomic = dev.max_qp_rd_atom < 16 ? dev.max_qp_rd_atom : 16;
	if (e->rd_atomic < 1)
		e->rd_atomic = 1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, dev.max_cqe < 4096 ? dev.max_cqe : 4096,
			      NULL, NULL, 0);
	if (!e->pd || !e->cq)
		ex_fail(e, "ibv_alloc_pd/ibv_create_cq: %s", strerror(errno));
}

void ex_open(struct ex *e, const char *prog)
{
	memset(e, 0, sizeof(*e));
	prog_name = prog;
	e->rank = -1;
	join_job(e);
	open_device(e);
}

void ex_register(struct ex *e, size_t len, int remote)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		ex_fail(e, "out of memory (%zu bytes)", len);
	e->buf = p;
	e->len = len;
	e->remote_access = remote;
	memset(e->buf, 0, len);
	e->mr = ibv_reg_mr(e->pd, e->buf, len ? len : 1,
			   IBV_ACCESS_LOCAL_WRITE | remote);
	if (!e->mr)
		ex_fail(e, "ibv_reg_mr of %zu bytes: %s", len, strerror(errno));
}

static struct ibv_qp *create_qp(struct ex *e, int sq, int rq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = {.max_send_wr = (uint32_t)sq,
			.max_recv_wr = (uint32_t)rq,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &init);

	if (!qp)
		ex_fail(e, "ibv_create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		ex_fail(e, "ibv_modify_qp to INIT failed");
	return qp;
}

/* RTR then RTS, towards what 'r' published (IBA 10.3.1: the RC states). */
static void connect_qp(struct ex *e, struct ibv_qp *qp,
		       const struct ex_remote *r, uint32_t my_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = e->port.active_mtu,
		.dest_qp_num = r->qpn,
		.rq_psn = r->psn,
		.max_dest_rd_atomic = (uint8_t)e->rd_atomic,
		.min_rnr_timer = 1,
		.ah_attr = {.dlid = (uint16_t)r->lid, .port_num = 1},
	};

	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		ex_fail(e, "ibv_modify_qp to RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7; /* retry forever: a receive may be posted late */
	a.sq_psn = my_psn;
	a.max_rd_atomic = (uint8_t)e->rd_atomic;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		ex_fail(e, "ibv_modify_qp to RTS failed");
}

/* The key under which 'from' publishes its end of the QP towards 'to'. */
static void qp_key(char *key, size_t cap, int from, int to)
{
	snprintf(key, cap, "ex.qp.%d.%d", from, to);
}

static uint32_t psn_of(int from, int to)
{
	return (uint32_t)(from * 65536 + to * 7 + 1) & 0xffffff;
}

void ex_connect(struct ex *e, int sq, int rq)
{
	char key[IBEMU_KV_KEY_MAX];
	struct ex_remote mine;
	int p;

	e->qp = calloc((size_t)e->size, sizeof(*e->qp));
	e->remote = calloc((size_t)e->size, sizeof(*e->remote));
	if (!e->qp || !e->remote)
		ex_fail(e, "out of memory");
	for (p = 0; p < e->size; p++) {
		if (p == e->rank)
			continue;
		e->qp[p] = create_qp(e, sq, rq);
		mine = (struct ex_remote){.qpn = e->qp[p]->qp_num,
					  .psn = psn_of(e->rank, p),
					  .rkey = e->mr->rkey,
					  .lid = e->port.lid,
					  .addr = (uintptr_t)e->buf};
		qp_key(key, sizeof(key), e->rank, p);
		if (ibemu_kv_put(key, &mine, sizeof(mine)))
			ex_fail(e, "ibemu_kv_put: %s", strerror(errno));
	}
	if (ibemu_kv_fence())
		ex_fail(e, "ibemu_kv_fence: %s", strerror(errno));
	for (p = 0; p < e->size; p++) {
		if (p == e->rank)
			continue;
		qp_key(key, sizeof(key), p, e->rank);
		if (ibemu_kv_get(p, key, &e->remote[p], sizeof(e->remote[p])) !=
		    (ssize_t)sizeof(e->remote[p]))
			ex_fail(e, "ibemu_kv_get(%d, %s): %s", p, key,
				strerror(errno));
		connect_qp(e, e->qp[p], &e->remote[p], psn_of(e->rank, p));
	}
	/* Every QP is ready before anyone sends. */
	ex_barrier(e);
}

void ex_close(struct ex *e)
{
	int p;

	for (p = 0; e->qp && p < e->size; p++)
		if (e->qp[p] && ibv_destroy_qp(e->qp[p]))
			ex_fail(e, "ibv_destroy_qp failed");
	if (ibv_dereg_mr(e->mr) || ibv_destroy_cq(e->cq) ||
	    ibv_dealloc_pd(e->pd) || ibv_close_device(e->ctx))
		ex_fail(e, "releasing the verbs resources failed");
	free(e->qp);
	free(e->remote);
	free(e->buf);
	if (ibemu_finalize)
		ibemu_finalize();
}

void ex_post_recv(struct ex *e, int peer, size_t off, size_t len,
		  uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(e->buf + off),
			      .length = (uint32_t)len,
			      .lkey = e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(e->qp[peer], &wr, &bad))
		ex_fail(e, "ibv_post_recv to rank %d failed", peer);
}

void ex_post(struct ex *e, int peer, enum ibv_wr_opcode opcode, size_t off,
	     size_t len, size_t roff, uint64_t wr_id, int signaled)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(e->buf + off),
			      .length = (uint32_t)len,
			      .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.imm_data = htobe32((uint32_t)wr_id),
		.wr.rdma = {.remote_addr = e->remote[peer].addr + roff,
			    .rkey = e->remote[peer].rkey},
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(e->qp[peer], &wr, &bad))
		ex_fail(e, "ibv_post_send to rank %d failed", peer);
}

void ex_wait(struct ex *e, int n, struct ibv_wc *wc)
{
	struct ibv_wc one;
	int got = 0, k;

	while (got < n) {
		k = ibv_poll_cq(e->cq, 1, wc ? &wc[got] : &one);
		if (k < 0)
			ex_fail(e, "ibv_poll_cq failed");
		if (!k)
			continue;
		if ((wc ? wc[got] : one).status != IBV_WC_SUCCESS)
			ex_fail(e, "completion in error: %s (wr_id %llu)",
				ibv_wc_status_str((wc ? wc[got] : one).status),
				(unsigned long long)(wc ? wc[got] : one).wr_id);
		got++;
	}
}

static int all_done(const unsigned char *done, const uint64_t *ids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!done[ids[i]])
			return 0;
	return 1;
}

void ex_wait_ids(struct ex *e, unsigned char *done, size_t ndone,
		 const uint64_t *ids, int n)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] >= ndone)
			ex_fail(e, "wr_id %llu out of range",
				(unsigned long long)ids[i]);
	while (!all_done(done, ids, n)) {
		ex_wait(e, 1, &wc);
		if (wc.wr_id >= ndone)
			ex_fail(e, "completion of unknown wr_id %llu",
				(unsigned long long)wc.wr_id);
		done[wc.wr_id] = 1;
	}
}

void ex_barrier(struct ex *e)
{
	if (ibemu_barrier())
		ex_fail(e, "ibemu_barrier: %s", strerror(errno));
}

/*
 * $EX_PATTERN_SEED changes the bytes a rank sends and expects: given to
 * one rank only, it shows that the checks catch data that is not what
 * the sender meant (integration.examples).
 */
static unsigned int pattern_seed(void)
{
	static int seed = -1;
	const char *env;

	if (seed < 0) {
		env = getenv("EX_PATTERN_SEED");
		seed = env ? atoi(env) & 0xff : 0;
	}
	return (unsigned int)seed;
}

unsigned char ex_pattern(int from, int to, size_t i, int round)
{
	return (unsigned char)(from * 31 + to * 17 + i * 7 + (i >> 8) +
			       round * 3 + 1 + pattern_seed());
}

void ex_fill(unsigned char *p, size_t len, int from, int to, int round)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = ex_pattern(from, to, i, round);
}

void ex_check(const struct ex *e, const unsigned char *p, size_t len, int from,
	      int to, int round, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != ex_pattern(from, to, i, round))
			ex_fail(e,
				"%s: wrong data from rank %d (%zu bytes, round "
				"%d): byte %zu is 0x%02x, not 0x%02x",
				what, from, len, round, i, p[i],
				ex_pattern(from, to, i, round));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct ex_times ex_times_of(uint64_t *ps, int n)
{
	struct ex_times t = {0, 0, 0};

	if (n <= 0)
		return t;
	qsort(ps, (size_t)n, sizeof(*ps), cmp_u64);
	t.min = ps[0] / 1e6;
	t.typical = ps[n / 2] / 1e6;
	t.max = ps[n - 1] / 1e6;
	return t;
}

int ex_parse_sizes(const char *arg, size_t *min, size_t *max)
{
	char *end;

	*min = strtoull(arg, &end, 0);
	if (*end == ':')
		*max = strtoull(end + 1, &end, 0);
	else
		*max = *min;
	return *end || !*min || *min > *max ? -1 : 0;
}

int ex_sweep_opt(int c, const char *arg, size_t *min, size_t *max, int *iters,
		 int *skip)
{
	switch (c) {
	case 's':
		return ex_parse_sizes(arg, min, max);
	case 'n':
		*iters = atoi(arg);
		return *iters < 1 ? -1 : 0;
	case 'x':
		*skip = atoi(arg);
		return *skip < 0 ? -1 : 0;
	default:
		return -1;
	}
}

// SPDX-License-Identifier: MIT
/*
 * UD multicast through the real API, linked against the system libibverbs
 * and libibumad. Each process joins the group of MGID (a SubnAdm
 * Set(MCMemberRecord) to the SM, FullMember, through libibumad) and learns
 * its MLID; then:
 *
 *   verbs-mcast recv MGID N     attaches its UD QP (ibv_attach_mcast),
 *       and a second UD QP that it detaches again at once; prints
 *       "ready mlid=M ready_ps=T", takes N messages on the first and checks every
 *       byte, prints "got=N bad=0 first_ns=T last_ns=T detached_got=K"
 *       (the completions' timestamps)
 *       (K: what the second QP got, which saw every packet the first
 *       did reach the HCA), detaches and leaves (SubnAdm Delete).
 *   verbs-mcast send MGID N SIZE [START_PS]  sends N messages of SIZE
 *       bytes to the group (an AH with the MLID and a GRH with the MGID,
 *       remote QPN 0xFFFFFF) from virtual time START_PS (its receivers'
 *       "ready_ps") on, prints "sent=N post_ps=T".
 *   verbs-mcast errors MGID     ibv_attach_mcast's and ibv_detach_mcast's
 *       errors (non-UD QP, GID or LID not multicast, a group the QP is
 *       not in) and the limit of QPs per group ibv_query_device reports.
 *
 * Prints key=value and "FAIL: ..." lines; returns the number of failures.
 */
#include <endian.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/verbs.h>

#include "ibemu.h"
#include "verbs-check.h"

#define QKEY	0x11110000u
#define MAX_MSG 4096
#define GRH	40

/* SubnAdm (IBA 15.2.5.17): MCMemberRecord and its ComponentMask bits. */
#define SA_CLASS	 0x03
#define SA_ATTR_MCMEMBER 0x0038
#define SA_METHOD_SET	 0x02
#define SA_METHOD_DELETE 0x15
#define SA_QKEY		 0x80010000u
#define SA_DATA		 56
#define MC_COMP_JOIN                                                           \
	((1ull << 0) | (1ull << 1) | (1ull << 2) | (1ull << 6) | (1ull << 7) | \
	 (1ull << 12) | (1ull << 13) | (1ull << 16))
#define MC_COMP_LEAVE ((1ull << 0) | (1ull << 1) | (1ull << 16))

struct mc {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx; /* cq, read with completion timestamps */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid mgid, port_gid;
	uint16_t mlid;
	int umad_fd, agent;
	struct ibv_port_attr pa;
};

static uint64_t now_ps(void)
{
	return ibemu_now_ps ? ibemu_now_ps() : 0;
}

static int parse_gid(const char *s, union ibv_gid *g)
{
	unsigned i, v;

	if (strlen(s) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		g->raw[i] = (uint8_t)v;
	}
	return 0;
}

static struct ibv_qp *ud_qp(struct mc *m)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = m->cq,
		.recv_cq = m->cq,
		.qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY};
	struct ibv_qp *qp = ibv_create_qp(m->pd, &ia);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

static int setup(struct mc *m, const char *mgid)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	if (!list || !list[0] || parse_gid(mgid, &m->mgid))
		return -1;
	m->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!m->ctx || ibv_query_port(m->ctx, 1, &m->pa) ||
	    ibv_query_gid(m->ctx, 1, 0, &m->port_gid))
		return -1;
	m->pd = ibv_alloc_pd(m->ctx);
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};

	m->cqx = m->pd ? ibv_create_cq_ex(m->ctx, &ca) : NULL;
	m->cq = m->cqx ? ibv_cq_ex_to_cq(m->cqx) : NULL;
	m->buf = calloc(64, MAX_MSG + GRH);
	if (!m->cq || !m->buf)
		return -1;
	m->mr = ibv_reg_mr(m->pd, m->buf, 64 * (MAX_MSG + GRH),
			   IBV_ACCESS_LOCAL_WRITE);
	m->qp = m->mr ? ud_qp(m) : NULL;
	if (!m->qp || umad_init() < 0)
		return -1;
	m->umad_fd = umad_open_port(ibv_get_device_name(m->ctx->device), 1);
	if (m->umad_fd < 0)
		return -1;
	m->agent = umad_register(m->umad_fd, SA_CLASS, 2, 0, NULL);
	return m->agent < 0 ? -1 : 0;
}

static void put_be(uint8_t *p, unsigned n, uint64_t v)
{
	while (n--) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

/* A SubnAdm Set (join) or Delete (leave) of this port in the group; the
 * MLID of the answer in m->mlid. 0, or -1. */
static int sa_member(struct mc *m, uint8_t method, uint64_t comp)
{
	static uint32_t tid = 1;
	uint8_t *umad = calloc(1, umad_size() + 256), *mad, *rec;
	int len = 256, ret = -1;

	if (!umad)
		return -1;
	mad = umad_get_mad(umad);
	mad[0] = 1; /* BaseVersion */
	mad[1] = SA_CLASS;
	mad[2] = 2;
	mad[3] = method;
	put_be(mad + 8, 8, ((uint64_t)getpid() << 32) | tid++);
	put_be(mad + 16, 2, SA_ATTR_MCMEMBER);
	put_be(mad + 48, 8, comp);
	rec = mad + SA_DATA;
	memcpy(rec, m->mgid.raw, 16);
	memcpy(rec + 16, m->port_gid.raw, 16);
	put_be(rec + 32, 4, QKEY);
	put_be(rec + 40, 2, 0xffff); /* P_Key */
	rec[48] = 1;		     /* JoinState: FullMember */
	umad_set_addr(umad, m->pa.sm_lid, 1, m->pa.sm_sl, SA_QKEY);
	if (umad_send(m->umad_fd, m->agent, umad, 256, 1000, 3) < 0 ||
	    umad_recv(m->umad_fd, umad, &len, -1) < 0 || umad_status(umad))
		goto out;
	if (mad[4] || mad[5]) { /* MAD status */
		printf("sa_status=%u\n", (unsigned)(mad[4] << 8 | mad[5]));
		goto out;
	}
	m->mlid = (uint16_t)(rec[36] << 8 | rec[37]);
	ret = 0;
out:
	free(umad);
	return ret;
}

static void post_recvs(struct mc *m, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)(m->buf +
					    (i % 64) * (MAX_MSG + GRH)),
			.length = MAX_MSG + GRH,
			.lkey = m->mr->lkey,
		};
		struct ibv_recv_wr wr = {.wr_id = i,
					 .sg_list = &sge,
					 .num_sge = 1},
				   *bad;

		CHECK(!ibv_post_recv(m->qp, &wr, &bad), "post_recv %u", i);
	}
}

/* Byte j of message i. */
static uint8_t pattern(unsigned i, unsigned j)
{
	return (uint8_t)(i * 31u + j * 7u + 1u);
}

static int do_recv(struct mc *m, unsigned n)
{
	unsigned got = 0, bad = 0, j;
	uint64_t first = 0, last = 0;
	struct ibv_wc wc;

	struct ibv_qp *main_qp = m->qp, *dq;
	struct ibv_cq *main_cq = m->cq;
	int dgot = 0;

	CHECK(n <= 64, "at most 64 messages");
	/* The detached QP: its own CQ, receives posted, attached and
	 * detached before anything is sent. */
	m->cq = ibv_create_cq(m->ctx, 256, NULL, NULL, 0);
	dq = m->cq ? ud_qp(m) : NULL;
	CHECK(dq, "second QP");
	if (!dq)
		return 1;
	m->qp = dq;
	post_recvs(m, 8);
	CHECK(!ibv_attach_mcast(dq, &m->mgid, m->mlid), "attach");
	CHECK(!ibv_detach_mcast(dq, &m->mgid, m->mlid), "detach");
	m->qp = main_qp;
	m->cq = main_cq;
	post_recvs(m, n);
	CHECK(!ibv_attach_mcast(m->qp, &m->mgid, m->mlid), "attach");
	printf("ready mlid=%u ready_ps=%" PRIu64 "\n", m->mlid, now_ps());
	fflush(stdout);
	/* The completions' timestamps: virtual time (ns), the same on every
	 * run, whenever this process happened to poll. */
	while (got < n) {
		struct ibv_poll_cq_attr pa = {0};
		const uint8_t *p;
		unsigned idx, len;
		uint64_t ts;

		if (ibv_start_poll(m->cqx, &pa))
			continue;
		if (m->cqx->status != IBV_WC_SUCCESS) {
			CHECK(0, "status %d", m->cqx->status);
			ibv_end_poll(m->cqx);
			break;
		}
		p = m->buf + (m->cqx->wr_id % 64) * (MAX_MSG + GRH) + GRH;
		len = ibv_wc_read_byte_len(m->cqx);
		ts = ibv_wc_read_completion_ts(m->cqx);
		ibv_end_poll(m->cqx);
		idx = p[0] | p[1] << 8;
		for (j = 2; j < len - GRH; j++)
			bad += p[j] != pattern(idx, j);
		CHECK(idx == got, "message %u came as %u", idx, got);
		if (!got)
			first = ts;
		last = ts;
		got++;
	}
	while (ibv_poll_cq(dq->recv_cq, 1, &wc) > 0)
		dgot++;
	printf("got=%u bad=%u first_ns=%" PRIu64 " last_ns=%" PRIu64
	       " detached_got=%d\n",
	       got, bad, first, last, dgot);
	CHECK(!bad, "%u bytes differ", bad);
	CHECK(!ibv_detach_mcast(m->qp, &m->mgid, m->mlid), "detach");
	CHECK(!sa_member(m, SA_METHOD_DELETE, MC_COMP_LEAVE), "leave");
	return 0;
}

static int do_send(struct mc *m, unsigned n, unsigned size, uint64_t start)
{
	struct ibv_ah_attr aa = {
		.dlid = m->mlid,
		.is_global = 1,
		.grh = {.dgid = m->mgid, .hop_limit = 1},
		.port_num = 1,
	};
	struct ibv_ah *ah = ibv_create_ah(m->pd, &aa);
	unsigned i, j, done = 0;
	uint64_t post = 0;
	struct ibv_wc wc;

	CHECK(ah, "create_ah: %s", strerror(errno));
	if (!ah || size < 2 || size > MAX_MSG)
		return 1;
	/* Not before 'start' (the receivers' receives are posted then, and
	 * the SM has programmed the switches), and at least 100 us after
	 * the join was answered: the SM programs the switches after. On a
	 * whole nanosecond: the receivers' timestamps count nanoseconds, so
	 * the times from the post they give are exact only then (the post's
	 * time changes from run to run, with when the processes started). */
	if (ibemu_compute_ps) {
		uint64_t at = now_ps() + 100000000ull;

		at = start > at ? start : at;
		at = (at + 999) / 1000 * 1000;
		ibemu_compute_ps(at - now_ps());
	}
	post = now_ps();
	for (i = 0; i < n; i++) {
		uint8_t *p = m->buf + (i % 64) * (MAX_MSG + GRH);
		struct ibv_sge sge = {.addr = (uintptr_t)p,
				      .length = size,
				      .lkey = m->mr->lkey};
		struct ibv_send_wr wr =
					   {
						   .wr_id = i,
						   .sg_list = &sge,
						   .num_sge = 1,
						   .opcode = IBV_WR_SEND,
						   .send_flags =
							   IBV_SEND_SIGNALED,
						   .wr.ud = {.ah = ah,
							     .remote_qpn =
								     0xffffff,
							     .remote_qkey =
								     QKEY},
					   },
				   *bad;

		p[0] = (uint8_t)i;
		p[1] = (uint8_t)(i >> 8);
		for (j = 2; j < size; j++)
			p[j] = pattern(i, j);
		/* At most 32 outstanding: the buffers are reused by 64. */
		while (i - done >= 32) {
			int k = ibv_poll_cq(m->cq, 1, &wc);

			if (k > 0) {
				CHECK(wc.status == IBV_WC_SUCCESS,
				      "send status %d", wc.status);
				done++;
			}
		}
		CHECK(!ibv_post_send(m->qp, &wr, &bad), "post_send %u", i);
	}
	while (done < n) {
		int k = ibv_poll_cq(m->cq, 1, &wc);

		if (k > 0) {
			CHECK(wc.status == IBV_WC_SUCCESS, "send status %d",
			      wc.status);
			done++;
		}
	}
	printf("sent=%u post_ps=%" PRIu64 "\n", n, post);
	ibv_destroy_ah(ah);
	return 0;
}

static int do_errors(struct mc *m)
{
	struct ibv_qp_init_attr ia = {.send_cq = m->cq,
				      .recv_cq = m->cq,
				      .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 1,
					      .max_recv_wr = 1,
					      .max_send_sge = 1,
					      .max_recv_sge = 1}};
	struct ibv_qp *rc = ibv_create_qp(m->pd, &ia), *qps[1024];
	union ibv_gid unicast = m->port_gid;
	struct ibv_device_attr da;
	unsigned i, n = 0;
	int ret;

	CHECK(!ibv_query_device(m->ctx, &da), "query_device");
	printf("max_mcast_grp=%d max_mcast_qp_attach=%d "
	       "max_total_mcast_qp_attach=%d\n",
	       da.max_mcast_grp, da.max_mcast_qp_attach,
	       da.max_total_mcast_qp_attach);
	CHECK(rc, "rc qp");
	ret = ibv_attach_mcast(rc, &m->mgid, m->mlid);
	CHECK(ret == EINVAL, "attach of an RC QP: %d", ret);
	ret = ibv_attach_mcast(m->qp, &unicast, m->mlid);
	CHECK(ret == EINVAL, "attach to a unicast GID: %d", ret);
	ret = ibv_attach_mcast(m->qp, &m->mgid, m->pa.lid);
	CHECK(ret == EINVAL, "attach to a unicast LID: %d", ret);
	ret = ibv_attach_mcast(m->qp, &m->mgid, 0xffff);
	CHECK(ret == EINVAL, "attach to the permissive LID: %d", ret);
	ret = ibv_detach_mcast(m->qp, &m->mgid, m->mlid);
	CHECK(ret == EINVAL, "detach from a group it is not in: %d", ret);
	CHECK(!ibv_attach_mcast(m->qp, &m->mgid, m->mlid), "attach");
	CHECK(!ibv_attach_mcast(m->qp, &m->mgid, m->mlid), "attach again");
	CHECK(!ibv_detach_mcast(m->qp, &m->mgid, m->mlid), "detach");
	ret = ibv_detach_mcast(m->qp, &m->mgid, m->mlid);
	CHECK(ret == EINVAL, "detach twice: %d", ret);
	/* max_mcast_qp_attach QPs in one group, and no more. */
	for (i = 0; i < (unsigned)da.max_mcast_qp_attach + 1 && i < 1024; i++) {
		qps[i] = ud_qp(m);
		if (!qps[i])
			break;
		n++;
		ret = ibv_attach_mcast(qps[i], &m->mgid, m->mlid);
		if (i < (unsigned)da.max_mcast_qp_attach)
			CHECK(!ret, "attach QP %u: %d", i, ret);
		else
			CHECK(ret == ENOMEM, "attach past the limit: %d", ret);
	}
	CHECK(n == (unsigned)da.max_mcast_qp_attach + 1, "made %u QPs", n);
	/* Destroying a QP leaves its groups: there is room again. */
	CHECK(!ibv_destroy_qp(qps[0]), "destroy");
	ret = ibv_attach_mcast(qps[n - 1], &m->mgid, m->mlid);
	CHECK(!ret, "attach after a destroy: %d", ret);
	for (i = 1; i < n; i++)
		ibv_destroy_qp(qps[i]);
	ibv_destroy_qp(rc);
	return 0;
}

int main(int argc, char **argv)
{
	struct mc m = {0};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || setup(&m, argv[2])) {
		printf("FAIL: usage or setup (%s)\n", strerror(errno));
		return 1;
	}
	if (sa_member(&m, SA_METHOD_SET, MC_COMP_JOIN)) {
		printf("FAIL: join\n");
		return 1;
	}
	printf("mlid=%u\n", m.mlid);
	if (!strcmp(argv[1], "recv") && argc == 4)
		do_recv(&m, (unsigned)atoi(argv[3]));
	else if (!strcmp(argv[1], "send") && argc >= 5)
		do_send(&m, (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
			argc > 5 ? strtoull(argv[5], NULL, 0) : 0);
	else if (!strcmp(argv[1], "errors"))
		do_errors(&m);
	else
		CHECK(0, "unknown mode %s", argv[1]);
	printf("failures=%d\n", failures);
	return failures;
}

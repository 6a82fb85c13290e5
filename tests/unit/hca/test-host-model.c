// SPDX-License-Identifier: MIT
/*
 * The HCA's host interface (hca/host_model.h, docs/hca-model.md): each
 * component of a message's latency pinned in picoseconds for each preset
 * (doorbell, WQE fetch, payload DMA read, DMA write, CQE write, receive
 * WQE fetch, message rate), the PCIe arithmetic by generation, how PCIe
 * cuts a DMA (MPS, MRRS, RCB), pipelining and the sharing of the link; and, through the QP transport, a WRITE from one HCA to another
 * through one switch whose landing lies exactly those components after
 * the same WRITE on 'wire' (whose wire and switch time it shares).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "engine.h"
#include "host_model.h"
#include "model.h"
#include "routing.h"
#include "topo.h"
#include "transport.h"
#include "unit.h"
#include "yaml.h"

static const enum ibemu_hca_kind kinds[4] = {IBEMU_HCA_CX4, IBEMU_HCA_CX5,
					     IBEMU_HCA_CX6, IBEMU_HCA_CX7};

/* Per preset, in the order of 'kinds'. */
struct pinned {
	uint64_t doorbell, mrd, wqe_fetch, read_4k, write_4k, cqe, msg, qp;
};

/*
 * Gen3 x16 moves a byte in 1040/16384 ns (8 GT/s, 128b/130b); Gen4 in
 * half that, Gen5 in a quarter. A DMA read's first request is one 26-byte
 * MRd TLP, then the round trip (250 ns). A 64-byte WQE comes back in one
 * 86-byte completion (22 bytes of TLP). 4 KiB read at MPS 256 come in 16
 * completions (4448 bytes), at MPS 512 in 8 (4272 bytes); written in 16
 * MWr TLPs of 26 bytes' overhead (4512 bytes) or 8 (4304 bytes); a CQE is
 * one 90-byte MWr. connectx-4's message rate is 150 M/s, connectx-7's
 * 350 (the middle of its datasheet's 330-370), the others' 215;
 * connectx-6's QP fetches WQEs at 2.55 M/s, the others' are not bound.
 */
static const struct pinned pins[4] = {
	{150000, 1651, 1651 + 250000 + 5459, 282344, 286407, 5713, 6667, 0},
	{150000, 1651, 1651 + 250000 + 5459, 282344, 286407, 5713, 4651, 0},
	{150000, 826, 826 + 250000 + 2730, 135586, 136602, 2857, 4651, 392157},
	{150000, 413, 413 + 250000 + 1365, 67793, 68301, 1429, 2857, 0},
};

static void test_presets(void)
{
	static const unsigned gens[4] = {3, 3, 4, 5};
	static const unsigned mps[4] = {256, 256, 512, 512};
	static const unsigned mrrs[4] = {512, 1024, 512, 512};
	unsigned i;

	T_TRUE(ibemu_host_model_get(IBEMU_HCA_WIRE) == NULL);
	for (i = 0; i < 4; i++) {
		const struct ibemu_host_model *m =
			ibemu_host_model_get(kinds[i]);

		T_TRUE(m != NULL);
		if (!m)
			continue;
		T_EQ_STR(m->name, ibemu_hca_kind_name(kinds[i]));
		T_EQ_INT(m->pcie_width, 16);
		T_EQ_INT(m->pcie_gen, gens[i]);
		T_EQ_INT(m->mps, mps[i]);
		T_EQ_INT(m->mrrs, mrrs[i]);
		T_EQ_INT(m->rcb, 64);
		T_EQ_U64(ibemu_pcie_read_bytes(m, 0, 64), 86);
		T_EQ_U64(ibemu_pcie_read_bytes(m, 0, 4096),
			 4096 + 4096 / mps[i] * 22);
		T_EQ_U64(ibemu_pcie_write_bytes(m, 0, 4096),
			 4096 + 4096 / mps[i] * 26);
		T_EQ_U64(ibemu_pcie_write_bytes(m, 0, 64), 90);
		T_EQ_U64(ibemu_pcie_req_bytes(m, 0, 4096), 4096 / mrrs[i] * 26);
		/* The time rule's lookahead (docs/design.md 3): a post never
		 * reaches the wire sooner than wire's doorbell would. */
		T_TRUE(m->mmio_ps + m->tx_proc_ps >= IBEMU_TP_DOORBELL_PS);
		/* So does hca_tuning's least doorbell (topo/yaml_keys.c). */
		T_TRUE(150000 + m->tx_proc_ps >= IBEMU_TP_DOORBELL_PS);
	}
}

/* Each component of a message's latency, per preset, in picoseconds. */
static void test_components(void)
{
	unsigned i;

	for (i = 0; i < 4; i++) {
		const struct ibemu_host_model *m =
			ibemu_host_model_get(kinds[i]);
		const struct pinned *p = &pins[i];
		struct ibemu_host_state hs = {0};
		struct ibemu_host_send s;
		uint64_t qp_free = 0, t0 = 1000000;

		/* Inline: the doorbell carries the WQE (BlueFlame). */
		ibemu_host_send_plan(m, &hs, &qp_free, t0, 0, 32, 1, 1, &s);
		T_EQ_U64(s.doorbell - t0, p->doorbell);
		T_EQ_U64(s.wqe, s.doorbell);
		T_EQ_U64(s.data, 0);
		T_EQ_U64(ibemu_host_send_ready(m, &s, 32) - t0,
			 p->doorbell + 150000);

		/* Not inline, 4 KiB: WQE fetch, then the payload's read,
		 * whose last completion is in when the packet may leave. */
		memset(&hs, 0, sizeof(hs));
		qp_free = 0;
		ibemu_host_send_plan(m, &hs, &qp_free, t0, 0, 4096, 0, 1, &s);
		T_EQ_U64(s.wqe - s.doorbell, p->wqe_fetch);
		T_EQ_U64(s.data - s.wqe, p->mrd + 250000);
		T_EQ_U64(ibemu_host_send_ready(m, &s, 4096) - s.data,
			 p->read_4k + 150000);
		T_EQ_U64(hs.h2d_free, s.data + p->read_4k);

		/* The responder: its pipeline, the data written, the CQE
		 * after them, each seen 100 ns after it leaves the HCA. */
		memset(&hs, 0, sizeof(hs));
		T_EQ_U64(ibemu_host_recv(m, &hs, t0, 0, 0, 4096, 0) - t0,
			 100000 + p->write_4k + 100000);
		memset(&hs, 0, sizeof(hs));
		T_EQ_U64(ibemu_host_recv(m, &hs, t0, 0, 0, 4096, 1) - t0,
			 100000 + p->write_4k + p->cqe + 100000);
		memset(&hs, 0, sizeof(hs));
		T_EQ_U64(ibemu_host_recv(m, &hs, t0, 0, 0, 0, 1) - t0,
			 100000 + p->cqe + 100000);

		/* The receive WQE fetch (16 bytes, one 38-byte completion):
		 * a SEND's data wait for it, the CQE after them. */
		memset(&hs, 0, sizeof(hs));
		T_EQ_U64(ibemu_host_rwqe_fetch(m, t0, 1) - t0,
			 p->mrd + 250000 + ibemu_pcie_ps(m, 38));
		T_EQ_U64(ibemu_host_recv(m, &hs, t0, t0 + 400000, 0, 0, 1) - t0,
			 400000 + p->cqe + 100000);

		/* Message rate: the next message's turn. */
		memset(&hs, 0, sizeof(hs));
		qp_free = 0;
		ibemu_host_send_plan(m, &hs, &qp_free, t0, 0, 8, 1, 1, &s);
		ibemu_host_send_plan(m, &hs, &qp_free, t0, 0, 8, 1, 1, &s);
		T_EQ_U64(s.start - s.doorbell, p->msg);

		/* The QP's rate: two READs (fetched WQEs, no payload) posted
		 * together on one QP; an inline WQE after them is not held. */
		memset(&hs, 0, sizeof(hs));
		qp_free = 0;
		ibemu_host_send_plan(m, &hs, &qp_free, t0, 0, 8, 0, 0, &s);
		ibemu_host_send_plan(m, &hs, &qp_free, t0, 0, 8, 0, 0, &s);
		T_EQ_U64(s.start - s.doorbell, p->qp > p->msg ? p->qp : p->msg);
		ibemu_host_send_plan(m, &hs, &qp_free, t0, 0, 8, 1, 1, &s);
		T_EQ_U64(s.start - s.doorbell,
			 (p->qp > p->msg ? p->qp : p->msg) + p->msg);
	}
}

/* A 64 KiB message's packets leave as their bytes come in, one 4 KiB
 * packet's completions apart; a second message's payload streams behind
 * the first's, its WQE fetched meanwhile. */
static void test_pipelining(void)
{
	const struct ibemu_host_model *m = ibemu_host_model_get(IBEMU_HCA_CX5);
	struct ibemu_host_state hs = {0};
	struct ibemu_host_send a, b;
	uint64_t qp_free = 0, k;

	ibemu_host_send_plan(m, &hs, &qp_free, 0, 0, 65536, 0, 1, &a);
	for (k = 1; k <= 16; k++)
		T_EQ_U64(ibemu_host_send_ready(m, &a, k * 4096),
			 a.data + ibemu_pcie_ps(m, k * 4448) + 150000);
	T_EQ_U64(hs.h2d_free, a.data + ibemu_pcie_ps(m, 16 * 4448));
	ibemu_host_send_plan(m, &hs, &qp_free, 200000, 0, 4096, 0, 1, &b);
	T_EQ_U64(b.wqe, 200000 + 150000 + 1651 + 250000 + 5459);
	T_EQ_U64(b.data, a.data + ibemu_pcie_ps(m, 16 * 4448) + 5459);
}

/* A responder's READ data: read from when it is asked. */
static void test_read(void)
{
	const struct ibemu_host_model *m = ibemu_host_model_get(IBEMU_HCA_CX6);
	struct ibemu_host_state hs = {0};
	uint64_t data = ibemu_host_read(m, &hs, 1000, 0, 4096);

	T_EQ_U64(data, 1000 + 826 + 250000);
	T_EQ_U64(ibemu_host_read_ready(m, data, 0, 4096),
		 data + 135586 + 150000);
}

/*
 * How PCIe cuts a DMA (connectx-5: MPS 256, MRRS 1024, RCB 64;
 * connectx-6: MPS 512, MRRS 512): writes at MPS-aligned addresses, read
 * requests at MRRS-aligned ones, completions on RCB boundaries.
 */
static void test_tlp_cuts(void)
{
	typedef uint64_t (*cut_fn)(const struct ibemu_host_model *, uint64_t,
				   uint64_t);
	static const struct {
		cut_fn fn;
		enum ibemu_hca_kind kind;
		uint64_t addr, len, want;
	} cases[] = {
		{ibemu_pcie_write_tlps, IBEMU_HCA_CX5, 0, 0, 0},
		{ibemu_pcie_write_tlps, IBEMU_HCA_CX5, 0, 4096, 16},
		{ibemu_pcie_write_tlps, IBEMU_HCA_CX5, 100, 256, 2},
		{ibemu_pcie_write_bytes, IBEMU_HCA_CX5, 100, 256, 256 + 2 * 26},
		{ibemu_pcie_read_reqs, IBEMU_HCA_CX5, 0, 4096, 4},
		{ibemu_pcie_read_reqs, IBEMU_HCA_CX5, 1000, 100, 2},
		{ibemu_pcie_req_bytes, IBEMU_HCA_CX5, 0, 4096, 4 * 26},
		{ibemu_pcie_read_cpls, IBEMU_HCA_CX5, 0, 1024, 4},
		/* [32, 1024) in completions ending at 256, 512, 768, 1024;
		 * then [1024, 1056), a second request, in one. */
		{ibemu_pcie_read_cpls, IBEMU_HCA_CX5, 32, 1024, 5},
		/* [96, 352): the first completion stops at 320, the last RCB
		 * boundary within 256 bytes. */
		{ibemu_pcie_read_cpls, IBEMU_HCA_CX5, 96, 256, 2},
		{ibemu_pcie_read_bytes, IBEMU_HCA_CX5, 96, 256, 256 + 2 * 22},
		{ibemu_pcie_read_cpls, IBEMU_HCA_CX6, 0, 4096, 8},
		{ibemu_pcie_read_cpls, IBEMU_HCA_CX6, 64, 512, 2},
		{ibemu_pcie_read_cpls, IBEMU_HCA_CX6, 0, 0, 0},
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		T_EQ_U64(cases[i].fn(ibemu_host_model_get(cases[i].kind),
				     cases[i].addr, cases[i].len),
			 cases[i].want);
}

/*
 * A read's requests share the device-to-host direction with the writes:
 * a write while a read streams in takes 26 bytes' more for every aligned
 * request's completions (1024 + 4 x 22 bytes at connectx-5), one after it
 * does not.
 */
static void test_request_share(void)
{
	const struct ibemu_host_model *m = ibemu_host_model_get(IBEMU_HCA_CX5);
	struct ibemu_host_state hs = {0};
	uint64_t w = 286407, taxed = w + (w * 26 + 1111) / 1112;

	ibemu_host_read(m, &hs, 0, 0, 65536);
	T_EQ_U64(ibemu_host_recv(m, &hs, 300000, 0, 0, 4096, 0),
		 300000 + 100000 + taxed + 100000);
	T_EQ_U64(ibemu_host_recv(m, &hs, hs.rd_until, 0, 0, 4096, 0),
		 hs.rd_until + 100000 + w + 100000);
}

/* Two HCAs on one 4x EDR switch, 'model' on both, and whatever else
 * 'extra' says (hca_tuning:). */
static const char fabric_fmt[] =
	"defaults: {width: 4x, speed: EDR, cable_length: 2m, hca_model: %s}\n"
	"%s"
	"switches: [{name: sw, ports: 4}]\n"
	"hcas: [{name: h1}, {name: h2}]\n"
	"links: [[sw:1, h1:1], [sw:2, h2:1]]\n";

static uint64_t landed_at;
/* Every landing's time, in order (the order test). */
static uint64_t landings[8];
static unsigned nlandings;

static int on_copy(void *ctx, const struct ibemu_tp_mem *dst,
		   const struct ibemu_tp_mem *src, uint64_t len)
{
	(void)dst;
	(void)src;
	(void)len;
	landed_at = ibemu_engine_now(ctx);
	if (nlandings < IBEMU_ARRAY_SIZE(landings))
		landings[nlandings++] = landed_at;
	return 0;
}

/* h1 and h2 of fabric_fmt, an RC QP on each connected to the other. */
struct pair {
	struct ibemu_tp *tp[2];
	uint32_t key[2], qpn[2];
	struct ibemu_tp_domain *d;
	struct ibemu_engine *e;
	struct ibemu_topo *t;
};

static _Alignas(4096) uint8_t pair_buf[2][8192];

static void pair_create_with(struct pair *p, const char *model,
			     const char *extra)
{
	static const struct ibemu_tp_ops ops = {.copy = on_copy};
	struct ibemu_tp_qp_init in = {
		.qp_type = IBEMU_QPT_RC,
		.max_send_wr = 4,
		.max_recv_wr = 4,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	struct ibemu_tp_qp_attr at = {0};
	uint32_t pd[2], cq[2], rkey, node[2];
	struct ibemu_routes *r = NULL;
	struct ibemu_diag diag;
	char yaml[512];
	unsigned i;
	int n;

	memset(p, 0, sizeof(*p));
	n = snprintf(yaml, sizeof(yaml), fabric_fmt, model, extra);
	ibemu_diag_init(&diag);
	T_EQ_INT(ibemu_yaml_load("hm.yaml", yaml, (size_t)n, &p->t, &diag), 0);
	ibemu_diag_fini(&diag);
	T_EQ_INT(ibemu_model_create(p->t, &p->e), 0);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), p->t, &r),
		 0);
	T_EQ_INT(ibemu_engine_apply_routes(p->e, r), 0);
	ibemu_routes_destroy(r);
	T_EQ_INT(ibemu_tp_domain_create(p->e, &p->d), 0);
	for (i = 0; i < 2; i++) {
		node[i] = ibemu_topo_find(p->t, i ? "h2" : "h1");
		T_EQ_INT(ibemu_tp_create(p->d, node[i], &ops, p->e, &p->tp[i]),
			 0);
		T_EQ_INT(ibemu_tp_pd_alloc(p->tp[i], &pd[i]), 0);
		T_EQ_INT(ibemu_tp_cq_create(p->tp[i], &cq[i]), 0);
		T_EQ_INT(ibemu_tp_mr_reg(p->tp[i], pd[i],
					 (uintptr_t)pair_buf[i],
					 sizeof(pair_buf[i]),
					 IBEMU_ACCESS_LOCAL_WRITE |
						 IBEMU_ACCESS_REMOTE_WRITE |
						 IBEMU_ACCESS_REMOTE_READ,
					 i, &p->key[i], &rkey),
			 0);
		in.pd = pd[i];
		in.send_cq = in.recv_cq = cq[i];
		T_EQ_INT(ibemu_tp_qp_create(p->tp[i], &in, &p->qpn[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		memset(&at, 0, sizeof(at));
		at.qp_state = IBEMU_QPS_INIT;
		at.port_num = 1;
		at.qp_access_flags =
			IBEMU_ACCESS_REMOTE_WRITE | IBEMU_ACCESS_REMOTE_READ;
		T_EQ_INT(ibemu_tp_qp_modify(
				 p->tp[i], p->qpn[i], &at,
				 IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX |
					 IBEMU_QP_PORT | IBEMU_QP_ACCESS_FLAGS),
			 0);
		at.qp_state = IBEMU_QPS_RTR;
		at.path_mtu = 5;
		at.dest_qp_num = p->qpn[!i];
		at.ah_attr.dlid = ibemu_engine_get_lid(p->e, node[!i], 1);
		at.ah_attr.port_num = 1;
		at.max_dest_rd_atomic = 1;
		T_EQ_INT(ibemu_tp_qp_modify(
				 p->tp[i], p->qpn[i], &at,
				 IBEMU_QP_STATE | IBEMU_QP_AV |
					 IBEMU_QP_PATH_MTU | IBEMU_QP_DEST_QPN |
					 IBEMU_QP_RQ_PSN |
					 IBEMU_QP_MAX_DEST_RD_ATOMIC |
					 IBEMU_QP_MIN_RNR_TIMER),
			 0);
		at.qp_state = IBEMU_QPS_RTS;
		at.timeout = 14;
		at.retry_cnt = 7;
		at.max_rd_atomic = 1;
		T_EQ_INT(ibemu_tp_qp_modify(p->tp[i], p->qpn[i], &at,
					    IBEMU_QP_STATE | IBEMU_QP_TIMEOUT |
						    IBEMU_QP_RETRY_CNT |
						    IBEMU_QP_RNR_RETRY |
						    IBEMU_QP_SQ_PSN |
						    IBEMU_QP_MAX_QP_RD_ATOMIC),
			 0);
	}
	landed_at = 0;
	nlandings = 0;
}

static void pair_create(struct pair *p, const char *model)
{
	pair_create_with(p, model, "");
}

static void pair_destroy(struct pair *p)
{
	unsigned i;

	for (i = 0; i < 2; i++)
		ibemu_tp_destroy(p->tp[i]);
	ibemu_tp_domain_destroy(p->d);
	ibemu_engine_destroy(p->e);
	ibemu_topo_destroy(p->t);
}

/* Posts a 4 KiB 'opcode' (WRITE, SEND or READ) on side 'i' to the other
 * side's buffer, stamped 'at'. */
static void pair_post(struct pair *p, unsigned i, uint8_t opcode, uint64_t at)
{
	struct ibemu_tp_sge sge = {(uintptr_t)pair_buf[i], 4096, p->key[i]};
	struct ibemu_tp_send_wr wr = {0};

	wr.opcode = opcode;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)pair_buf[!i];
	wr.wr.rdma.rkey = p->key[!i];
	T_EQ_INT(ibemu_tp_post_send_at(p->tp[i], p->qpn[i], &wr, at), 0);
}

/* When a 4 KiB WRITE, or SEND ('recv_at': when its receive is posted),
 * not inline, posted at time 0 on 'model' (and 'extra') lands. */
static uint64_t lands_with(const char *model, const char *extra, uint8_t opcode,
			   uint64_t recv_at)
{
	struct pair p;

	pair_create_with(&p, model, extra);
	if (opcode == IBEMU_WR_SEND) {
		struct ibemu_tp_sge rsge = {(uintptr_t)pair_buf[1], 4096,
					    p.key[1]};
		struct ibemu_tp_recv_wr rwr = {1, &rsge, 1};

		T_EQ_INT(
			ibemu_tp_post_recv_at(p.tp[1], p.qpn[1], &rwr, recv_at),
			0);
	}
	pair_post(&p, 0, opcode, ibemu_engine_now(p.e));
	T_EQ_U64(ibemu_engine_now(p.e), 0);
	ibemu_engine_run(p.e, UINT64_MAX, SIZE_MAX);
	pair_destroy(&p);
	return landed_at;
}

static uint64_t lands(const char *model, uint8_t opcode, uint64_t recv_at)
{
	return lands_with(model, "", opcode, recv_at);
}

/*
 * Through the transport: the same WRITE lands on connectx-5 exactly the
 * host interface's components later than on wire (which has only its
 * 300 ns doorbell): doorbell 150 ns, WQE fetch, payload read (its first
 * request, a round trip and 4 KiB of completions), send pipeline 150 ns;
 * at the responder
 * its pipeline 100 ns, 4 KiB written, 100 ns to memory. The wire and
 * switch time in between is the same.
 */
static void test_through_transport(void)
{
	uint64_t wire = lands("wire", IBEMU_WR_RDMA_WRITE, 0);
	uint64_t cx5 = lands("connectx-5", IBEMU_WR_RDMA_WRITE, 0);
	uint64_t tx = 150000 + (1651 + 250000 + 5459) + 1651 + 250000 + 282344 +
		      150000;
	uint64_t rx = 100000 + 286407 + 100000;

	T_TRUE(wire > IBEMU_TP_DOORBELL_PS);
	T_EQ_U64(cx5 - wire, tx + rx - IBEMU_TP_DOORBELL_PS);
}

/*
 * hca_tuning: through the transport. The same WRITE on connectx-5 with the
 * host's side changed (doorbell 250 ns, DMA reads 600 ns, writes 300 ns,
 * MPS 512 and MRRS 4096) lands the tuned components later than on wire:
 * each is the model's arithmetic with the tuned values, the preset's
 * pipelines and PCIe link unchanged.
 */
static void test_tuning_through_transport(void)
{
	struct ibemu_hca_tuning tn = {250000, 600000, 300000, 512, 4096};
	struct ibemu_host_model m;
	uint64_t wire = lands("wire", IBEMU_WR_RDMA_WRITE, 0);
	uint64_t tuned = lands_with("connectx-5",
				    "hca_tuning: {doorbell: 250ns, dma_read: "
				    "600ns, dma_write: 300ns, max_payload: "
				    "512, max_read_request: 4KiB}\n",
				    IBEMU_WR_RDMA_WRITE, 0);
	uint64_t mrd, tx, rx;

	ibemu_host_model_tune(ibemu_host_model_get(IBEMU_HCA_CX5), &tn, &m);
	T_EQ_U64(m.mmio_ps, 250000);
	T_EQ_U64(m.rd_rtt_ps, 600000);
	T_EQ_U64(m.wr_ps, 300000);
	T_EQ_INT(m.mps, 512);
	T_EQ_INT(m.mrrs, 4096);
	T_EQ_U64(m.tx_proc_ps, 150000);
	T_EQ_INT(m.pcie_gen, 3);
	/* 4 KiB in 8 completions of 512 bytes, and 8 MWr TLPs. */
	T_EQ_U64(ibemu_pcie_read_bytes(&m, 0, 4096), 4096 + 8 * 22);
	T_EQ_U64(ibemu_pcie_write_bytes(&m, 0, 4096), 4096 + 8 * 26);
	mrd = ibemu_pcie_ps(&m, 26);
	tx = 250000 + (mrd + 600000 + ibemu_pcie_ps(&m, 64 + 22)) + mrd +
	     600000 + ibemu_pcie_ps(&m, 4096 + 8 * 22) + 150000;
	rx = 100000 + ibemu_pcie_ps(&m, 4096 + 8 * 26) + 300000;
	T_EQ_U64(tuned - wire, tx + rx - IBEMU_TP_DOORBELL_PS);
	/* Untouched fields keep the preset's. */
	memset(&tn, 0, sizeof(tn));
	tn.dma_write_ps = 1;
	ibemu_host_model_tune(ibemu_host_model_get(IBEMU_HCA_CX6), &tn, &m);
	T_EQ_U64(m.mmio_ps, 150000);
	T_EQ_U64(m.rd_rtt_ps, 250000);
	T_EQ_U64(m.wr_ps, 1);
	T_EQ_INT(m.mps, 512);
	T_EQ_INT(m.mrrs, 512);
	T_EQ_U64(m.qp_msg_ps, 392157);
}

/*
 * The receive WQE fetch through the transport: a SEND whose receive was
 * posted long before lands as a WRITE does, plus its CQE (the fetch was
 * done by then); one whose receive the HCA sees only as the SEND arrives
 * waits for the receive's DMA read (its request, the round trip, one
 * 38-byte completion) before its data are written.
 */
static void test_rwqe_through_transport(void)
{
	uint64_t tx = 150000 + (1651 + 250000 + 5459) + 1651 + 250000 + 282344 +
		      150000;
	uint64_t rx = 100000 + 286407 + 5713 + 100000;
	uint64_t wire = lands("wire", IBEMU_WR_SEND, 0);
	uint64_t early = lands("connectx-5", IBEMU_WR_SEND, 0);
	/* The SEND's tail reaches the responder (wire acts at the tail). */
	uint64_t arrive = wire - IBEMU_TP_DOORBELL_PS + tx;
	uint64_t late = lands("connectx-5", IBEMU_WR_SEND,
			      arrive - IBEMU_TP_DOORBELL_PS);

	T_EQ_U64(early, arrive + rx);
	T_EQ_U64(late,
		 arrive + (1651 + 250000 + 2413) + 286407 + 5713 + 100000);
}

/*
 * The time rule lets the engine run up to a doorbell delay past a running
 * process's clock, so the daemon may take a post stamped S before or after
 * the engine has handled what arrives between S and S + 300 ns, by the
 * wall clock. h1 READs 4 KiB from h2 at 0 while h2 posts a 4 KiB WRITE
 * to h1 stamped S: h2's DMA reads for the WRITE and for the READ's
 * response share its PCIe link. Taken before the engine ran, or with the
 * engine run to S + 300 ns first, the post gives the same landings, for
 * every S around the READ request's arrival at h2.
 */
static void test_post_order(void)
{
	uint64_t early[8], s;
	unsigned n, tried = 0;
	struct pair p;

	for (s = 0; s < 3000000; s += 25000) {
		pair_create(&p, "connectx-5");
		pair_post(&p, 0, IBEMU_WR_RDMA_READ, 0);
		pair_post(&p, 1, IBEMU_WR_RDMA_WRITE, s);
		ibemu_engine_run(p.e, UINT64_MAX, SIZE_MAX);
		n = nlandings;
		memcpy(early, landings, sizeof(early));
		pair_destroy(&p);

		pair_create(&p, "connectx-5");
		pair_post(&p, 0, IBEMU_WR_RDMA_READ, 0);
		ibemu_engine_run(p.e, s + IBEMU_TP_DOORBELL_PS - 1, SIZE_MAX);
		pair_post(&p, 1, IBEMU_WR_RDMA_WRITE, s);
		ibemu_engine_run(p.e, UINT64_MAX, SIZE_MAX);
		T_EQ_INT(nlandings, 2);
		T_EQ_INT(n, 2);
		T_EQ_U64(landings[0], early[0]);
		T_EQ_U64(landings[1], early[1]);
		tried++;
		pair_destroy(&p);
	}
	T_EQ_INT(tried, 120);
}

void ibemu_test_register_hca_host_model(void)
{
	static const struct ibemu_test tests[] = {
		{"presets", test_presets},
		{"components", test_components},
		{"pipelining", test_pipelining},
		{"read", test_read},
		{"tlp_cuts", test_tlp_cuts},
		{"request_share", test_request_share},
		{"through_transport", test_through_transport},
		{"rwqe_through_transport", test_rwqe_through_transport},
		{"tuning_through_transport", test_tuning_through_transport},
		{"post_order", test_post_order},
		{NULL, NULL},
	};

	ibemu_test_add_suite("hca.host_model", tests);
}

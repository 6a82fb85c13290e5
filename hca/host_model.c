// SPDX-License-Identifier: MIT
/*
 * The host interface of an HCA: the presets (every figure's source is in
 * docs/hca-model.md) and the arithmetic of doorbells, DMA over PCIe, CQE
 * writes and message rates that the QP transport asks at each post and
 * each arrival (host_model.h).
 */
#include <stddef.h>

#include "host_model.h"

#define NS 1000ull

/*
 * PCIe Base Specification: transfer rate per lane and line encoding by
 * generation (2.5 and 5 GT/s with 8b/10b; 8, 16 and 32 GT/s with
 * 128b/130b).
 */
static const struct {
	uint64_t mts; /* megatransfers per second per lane */
	unsigned enc_num, enc_den;
	unsigned framing; /* bytes a TLP takes in physical-layer framing */
} pcie_gens[] = {
	[1] = {2500, 8, 10, 2},	    [2] = {5000, 8, 10, 2},
	[3] = {8000, 128, 130, 4},  [4] = {16000, 128, 130, 4},
	[5] = {32000, 128, 130, 4},
};

/* Data link layer: a 2-byte sequence number and a 4-byte LCRC a TLP. */
#define DLL_BYTES 6
/* Transaction layer headers: 4 DW with a 64-bit address (MWr, MRd),
 * 3 DW for a completion (CplD). No ECRC. */
#define HDR_ADDR64 16
#define HDR_CPL	   12

/* ibv_devinfo -v of mlx5 adapters (docs/hca-model.md). */
#define MLX5_LIMITS                                                         \
	{                                                                   \
		.max_qp = 262144, .max_qp_wr = 32768, .max_sge = 30,        \
		.max_cq = 16777216, .max_cqe = 4194303, .max_mr = 16777216, \
		.max_inline = 256,                                          \
	}

/*
 * The presets. The PCIe link is the adapter's (its user manual); MPS and
 * MRRS are a typical server's; the latencies are fitted to the published
 * latencies of docs/hca-model.md and are the same for every generation
 * where no source tells them apart; the message rate is the vendor's.
 */
static const struct ibemu_host_model presets[] = {
	{
		.kind = IBEMU_HCA_CX4,
		.name = "connectx-4",
		.pcie_gen = 3,
		.pcie_width = 16,
		.mps = 256,
		.mrrs = 512,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.cqe_bytes = 64,
		.hca_msg_ps = 4651,
		.qp_msg_ps = 0,
		.lim = MLX5_LIMITS,
	},
	{
		.kind = IBEMU_HCA_CX5,
		.name = "connectx-5",
		.pcie_gen = 3,
		.pcie_width = 16,
		.mps = 256,
		.mrrs = 512,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.cqe_bytes = 64,
		.hca_msg_ps = 4651,
		.qp_msg_ps = 0,
		.lim = MLX5_LIMITS,
	},
	{
		.kind = IBEMU_HCA_CX6,
		.name = "connectx-6",
		.pcie_gen = 4,
		.pcie_width = 16,
		.mps = 256,
		.mrrs = 512,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.cqe_bytes = 64,
		.hca_msg_ps = 4651,
		.qp_msg_ps = 0,
		.lim = MLX5_LIMITS,
	},
	{
		.kind = IBEMU_HCA_CX7,
		.name = "connectx-7",
		.pcie_gen = 5,
		.pcie_width = 16,
		.mps = 256,
		.mrrs = 512,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.cqe_bytes = 64,
		.hca_msg_ps = 4651,
		.qp_msg_ps = 0,
		.lim = MLX5_LIMITS,
	},
};

const struct ibemu_host_model *ibemu_host_model_get(enum ibemu_hca_kind kind)
{
	size_t i;

	for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (presets[i].kind == kind)
			return &presets[i];
	return NULL;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint64_t ibemu_pcie_ps(const struct ibemu_host_model *m, uint64_t bytes)
{
	uint64_t num = bytes * 8 * pcie_gens[m->pcie_gen].enc_den * 1000000ull;
	uint64_t den = (uint64_t)pcie_gens[m->pcie_gen].enc_num *
		       pcie_gens[m->pcie_gen].mts * m->pcie_width;

	return div_up(num, den);
}

static unsigned tlp_overhead(const struct ibemu_host_model *m, unsigned hdr)
{
	return pcie_gens[m->pcie_gen].framing + DLL_BYTES + hdr;
}

uint64_t ibemu_pcie_write_bytes(const struct ibemu_host_model *m, uint64_t len)
{
	return len + div_up(len, m->mps) * tlp_overhead(m, HDR_ADDR64);
}

/* Completions come at most MPS bytes each (the completer splits a read at
 * MPS; the Read Completion Boundary may split it further: not modelled). */
uint64_t ibemu_pcie_read_bytes(const struct ibemu_host_model *m, uint64_t len)
{
	return len + div_up(len, m->mps) * tlp_overhead(m, HDR_CPL);
}

uint64_t ibemu_pcie_req_bytes(const struct ibemu_host_model *m, uint64_t len)
{
	return div_up(len, m->mrrs) * tlp_overhead(m, HDR_ADDR64);
}

/*
 * A read of 'len' bytes asked at 'at': its completions stream in from a
 * round trip later, behind whatever the host-to-device direction carries
 * already. Returns when the first completion starts to come in. The read
 * requests (ibemu_pcie_req_bytes(), a few percent of the other direction)
 * are not charged: a post stamped ahead of the engine plans its reads
 * then, and would hold back the data and CQE writes of arrivals before it.
 */
static uint64_t dma_read(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at, uint64_t len)
{
	uint64_t data;

	data = max64(at + m->rd_rtt_ps, hs->h2d_free);
	hs->h2d_free = data + ibemu_pcie_ps(m, ibemu_pcie_read_bytes(m, len));
	return data;
}

void ibemu_host_send_plan(const struct ibemu_host_model *m,
			  struct ibemu_host_state *hs, uint64_t *qp_free,
			  uint64_t posted, uint32_t len, int inl,
			  int fetch_payload, struct ibemu_host_send *out)
{
	uint64_t wqe;

	out->doorbell = posted + m->mmio_ps;
	out->start = max64(out->doorbell, max64(hs->msg_free, *qp_free));
	hs->msg_free = out->start + m->hca_msg_ps;
	*qp_free = out->start + m->qp_msg_ps;
	/* BlueFlame: an inline WQE is written with its doorbell (mlx5
	 * copies it into the BlueFlame register); others are fetched. */
	if (inl) {
		out->wqe = out->start;
	} else {
		/* A WQE is fetched as soon as its doorbell rings, ahead of the
		 * payloads before it (the HCA reads the queue up to the
		 * producer index it was given): its completion, a few bytes,
		 * does not wait behind their data, though it takes its share
		 * of the link. */
		wqe = ibemu_pcie_ps(m, ibemu_pcie_read_bytes(m, m->wqe_bytes));
		out->wqe = out->start + m->rd_rtt_ps + wqe;
		hs->h2d_free =
			max64(hs->h2d_free, out->start + m->rd_rtt_ps) + wqe;
	}
	out->data = 0;
	if (!inl && fetch_payload && len)
		out->data = dma_read(m, hs, out->wqe, len);
	out->tx_proc = m->tx_proc_ps;
}

uint64_t ibemu_host_send_ready(const struct ibemu_host_model *m,
			       const struct ibemu_host_send *s, uint64_t upto)
{
	if (!s->data)
		return s->wqe + s->tx_proc;
	return ibemu_host_read_ready(m, s->data, upto);
}

uint64_t ibemu_host_read(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at, uint32_t len)
{
	return dma_read(m, hs, at, len ? len : 1);
}

uint64_t ibemu_host_read_ready(const struct ibemu_host_model *m, uint64_t data,
			       uint64_t upto)
{
	return data + ibemu_pcie_ps(m, ibemu_pcie_read_bytes(m, upto)) +
	       m->tx_proc_ps;
}

uint64_t ibemu_host_recv(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at,
			 uint32_t payload, int cqe)
{
	uint64_t t = at + m->rx_proc_ps, done = t;

	if (payload) {
		hs->d2h_free =
			max64(hs->d2h_free, t) +
			ibemu_pcie_ps(m, ibemu_pcie_write_bytes(m, payload));
		done = hs->d2h_free + m->wr_ps;
	}
	/* The CQE is written after the data (PCIe keeps posted writes in
	 * order), so it is seen no earlier. */
	if (cqe) {
		hs->d2h_free =
			max64(hs->d2h_free, t) +
			ibemu_pcie_ps(m,
				      ibemu_pcie_write_bytes(m, m->cqe_bytes));
		done = hs->d2h_free + m->wr_ps;
	}
	return done;
}

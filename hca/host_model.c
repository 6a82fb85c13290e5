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
 * MRRS are those lspci shows on a server with that adapter where one was
 * found (ConnectX-5, -6), else a common setting; the RCB is the root
 * port's 64 bytes; the latencies are fitted to the published latencies
 * of docs/hca-model.md and are the same for every generation where no
 * source tells them apart; the message rates are the vendor's (the middle
 * of ConnectX-7's published range).
 */
static const struct ibemu_host_model presets[] = {
	{
		.kind = IBEMU_HCA_CX4,
		.name = "connectx-4",
		.pcie_gen = 3,
		.pcie_width = 16,
		.mps = 256,
		.mrrs = 512,
		.rcb = 64,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.rwqe_sge_bytes = 16,
		.cqe_bytes = 64,
		.hca_msg_ps = 6667,
		.qp_msg_ps = 0,
		.lim = MLX5_LIMITS,
	},
	{
		.kind = IBEMU_HCA_CX5,
		.name = "connectx-5",
		.pcie_gen = 3,
		.pcie_width = 16,
		.mps = 256,
		.mrrs = 1024,
		.rcb = 64,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.rwqe_sge_bytes = 16,
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
		.mps = 512,
		.mrrs = 512,
		.rcb = 64,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.rwqe_sge_bytes = 16,
		.cqe_bytes = 64,
		.hca_msg_ps = 4651,
		.qp_msg_ps = 392157, /* 2.55 M/s */
		.lim = MLX5_LIMITS,
	},
	{
		.kind = IBEMU_HCA_CX7,
		.name = "connectx-7",
		.pcie_gen = 5,
		.pcie_width = 16,
		.mps = 512,
		.mrrs = 512,
		.rcb = 64,
		.mmio_ps = 150 * NS,
		.rd_rtt_ps = 250 * NS,
		.wr_ps = 100 * NS,
		.tx_proc_ps = 150 * NS,
		.rx_proc_ps = 100 * NS,
		.wqe_bytes = 64,
		.rwqe_sge_bytes = 16,
		.cqe_bytes = 64,
		.hca_msg_ps = 2857, /* 350 M/s */
		.qp_msg_ps = 0,
		.lim = MLX5_LIMITS,
	},
};

void ibemu_host_model_tune(const struct ibemu_host_model *preset,
			   const struct ibemu_hca_tuning *tn,
			   struct ibemu_host_model *out)
{
	*out = *preset;
	if (tn->doorbell_ps)
		out->mmio_ps = tn->doorbell_ps;
	if (tn->dma_read_ps)
		out->rd_rtt_ps = tn->dma_read_ps;
	if (tn->dma_write_ps)
		out->wr_ps = tn->dma_write_ps;
	if (tn->max_payload)
		out->mps = tn->max_payload;
	if (tn->max_read_request)
		out->mrrs = tn->max_read_request;
}

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

static uint64_t align_down(uint64_t a, uint64_t unit)
{
	return a / unit * unit;
}

/* Pieces of [addr, addr + len) cut at multiples of 'unit'. */
static uint64_t cut_pieces(uint64_t addr, uint64_t len, uint64_t unit)
{
	if (!len)
		return 0;
	return (addr + len - 1) / unit - addr / unit + 1;
}

uint64_t ibemu_pcie_write_tlps(const struct ibemu_host_model *m, uint64_t addr,
			       uint64_t len)
{
	return cut_pieces(addr, len, m->mps);
}

uint64_t ibemu_pcie_read_reqs(const struct ibemu_host_model *m, uint64_t addr,
			      uint64_t len)
{
	return cut_pieces(addr, len, m->mrrs);
}

/*
 * The completions of one read request of 'len' bytes at 'addr': the first
 * ends at the last RCB boundary within MPS of its start (or at the end);
 * the others start RCB-aligned and so carry MPS bytes (a multiple of the
 * RCB), the last the rest.
 */
static uint64_t req_cpls(const struct ibemu_host_model *m, uint64_t addr,
			 uint64_t len)
{
	uint64_t stop = align_down(addr + m->mps, m->rcb);

	if (!len)
		return 0;
	if (stop >= addr + len)
		return 1;
	return 1 + div_up(addr + len - stop, m->mps);
}

uint64_t ibemu_pcie_read_cpls(const struct ibemu_host_model *m, uint64_t addr,
			      uint64_t len)
{
	uint64_t end = addr + len, first_end, whole, n;

	if (!len)
		return 0;
	first_end = align_down(addr, m->mrrs) + m->mrrs;
	if (first_end >= end)
		return req_cpls(m, addr, len);
	n = req_cpls(m, addr, first_end - addr);
	whole = align_down(end - first_end, m->mrrs); /* aligned requests */
	n += whole / m->mrrs * req_cpls(m, 0, m->mrrs);
	return n + req_cpls(m, first_end + whole, end - first_end - whole);
}

uint64_t ibemu_pcie_write_bytes(const struct ibemu_host_model *m, uint64_t addr,
				uint64_t len)
{
	return len + ibemu_pcie_write_tlps(m, addr, len) *
			     tlp_overhead(m, HDR_ADDR64);
}

uint64_t ibemu_pcie_read_bytes(const struct ibemu_host_model *m, uint64_t addr,
			       uint64_t len)
{
	return len +
	       ibemu_pcie_read_cpls(m, addr, len) * tlp_overhead(m, HDR_CPL);
}

uint64_t ibemu_pcie_req_bytes(const struct ibemu_host_model *m, uint64_t addr,
			      uint64_t len)
{
	return ibemu_pcie_read_reqs(m, addr, len) * tlp_overhead(m, HDR_ADDR64);
}

/* One MRd TLP on the device-to-host direction: a read's first request
 * leaves this long after it is asked. */
static uint64_t mrd_ps(const struct ibemu_host_model *m)
{
	return ibemu_pcie_ps(m, tlp_overhead(m, HDR_ADDR64));
}

/*
 * The read requests' share of the device-to-host direction. They are
 * interleaved with the writes while reads are under way: a write planned
 * while the reads planned last stream in is slowed by the requests' bytes
 * against the completions' (an aligned MRRS request: 26 bytes against
 * MRRS plus its completions' overheads). Only the latest stretch of reads
 * is remembered. Every read is planned at the engine's time (a send's once
 * its doorbell delay is over), as the writes are, so the share depends on
 * nothing else.
 */
static void note_reads(struct ibemu_host_state *hs, uint64_t from,
		       uint64_t until)
{
	if (from > hs->rd_until)
		hs->rd_from = from;
	if (until > hs->rd_until)
		hs->rd_until = until;
}

static uint64_t req_taxed(const struct ibemu_host_model *m,
			  const struct ibemu_host_state *hs, uint64_t start,
			  uint64_t ps)
{
	if (start >= hs->rd_until || start + ps <= hs->rd_from)
		return ps;
	return ps + div_up(ps * tlp_overhead(m, HDR_ADDR64),
			   ibemu_pcie_read_bytes(m, 0, m->mrrs));
}

/* A write of 'ps' on the device-to-host direction from 't': when it has
 * left the HCA. */
static uint64_t d2h_write(const struct ibemu_host_model *m,
			  struct ibemu_host_state *hs, uint64_t t, uint64_t ps)
{
	uint64_t start = max64(hs->d2h_free, t);

	hs->d2h_free = start + req_taxed(m, hs, start, ps);
	return hs->d2h_free;
}

/*
 * A read of 'len' bytes at 'addr' asked at 'at': its first request goes
 * out, its completions stream in from a round trip later, behind whatever
 * the host-to-device direction carries already. Returns when the first
 * completion starts to come in.
 */
static uint64_t dma_read(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at,
			 uint64_t addr, uint64_t len)
{
	uint64_t data;

	data = max64(at + mrd_ps(m) + m->rd_rtt_ps, hs->h2d_free);
	hs->h2d_free =
		data + ibemu_pcie_ps(m, ibemu_pcie_read_bytes(m, addr, len));
	return data;
}

void ibemu_host_send_plan(const struct ibemu_host_model *m,
			  struct ibemu_host_state *hs, uint64_t *qp_free,
			  uint64_t posted, uint64_t addr, uint32_t len, int inl,
			  int fetch_payload, struct ibemu_host_send *out)
{
	uint64_t wqe, asked;

	out->doorbell = posted + m->mmio_ps;
	/* The QP's rate binds the WQEs the HCA fetches (its one published
	 * figure was measured so); an inline WQE comes with its doorbell. */
	out->start =
		max64(out->doorbell, max64(hs->msg_free, inl ? 0 : *qp_free));
	hs->msg_free = out->start + m->hca_msg_ps;
	if (!inl)
		*qp_free = out->start + m->qp_msg_ps;
	out->addr = addr;
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
		wqe = ibemu_pcie_ps(m,
				    ibemu_pcie_read_bytes(m, 0, m->wqe_bytes));
		asked = out->start + mrd_ps(m) + m->rd_rtt_ps;
		out->wqe = asked + wqe;
		hs->h2d_free = max64(hs->h2d_free, asked) + wqe;
	}
	out->data = 0;
	if (!inl && fetch_payload && len) {
		out->data = dma_read(m, hs, out->wqe, addr, len);
		note_reads(hs, out->wqe, hs->h2d_free);
	}
	out->tx_proc = m->tx_proc_ps;
}

uint64_t ibemu_host_send_ready(const struct ibemu_host_model *m,
			       const struct ibemu_host_send *s, uint64_t upto)
{
	if (!s->data)
		return s->wqe + s->tx_proc;
	return ibemu_host_read_ready(m, s->data, s->addr, upto);
}

uint64_t ibemu_host_read(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at,
			 uint64_t addr, uint32_t len)
{
	uint64_t data = dma_read(m, hs, at, addr, len ? len : 1);

	/* Asked at the engine's time, as the writes are: its requests'
	 * share of the other direction depends on nothing else. */
	note_reads(hs, at, hs->h2d_free);
	return data;
}

uint64_t ibemu_host_read_ready(const struct ibemu_host_model *m, uint64_t data,
			       uint64_t addr, uint64_t upto)
{
	return data + ibemu_pcie_ps(m, ibemu_pcie_read_bytes(m, addr, upto)) +
	       m->tx_proc_ps;
}

uint64_t ibemu_host_rwqe_fetch(const struct ibemu_host_model *m, uint64_t at,
			       uint32_t nsge)
{
	uint64_t len = (uint64_t)(nsge ? nsge : 1) * m->rwqe_sge_bytes;

	return at + mrd_ps(m) + m->rd_rtt_ps +
	       ibemu_pcie_ps(m, ibemu_pcie_read_bytes(m, 0, len));
}

uint64_t ibemu_host_recv(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at,
			 uint64_t rwqe_in, uint64_t addr, uint32_t payload,
			 int cqe)
{
	uint64_t t = max64(at + m->rx_proc_ps, rwqe_in), done = t, ps;

	if (payload) {
		ps = ibemu_pcie_ps(m, ibemu_pcie_write_bytes(m, addr, payload));
		done = d2h_write(m, hs, t, ps) + m->wr_ps;
	}
	/* The CQE is written after the data (PCIe keeps posted writes in
	 * order), so it is seen no earlier. */
	if (cqe) {
		ps = ibemu_pcie_ps(m,
				   ibemu_pcie_write_bytes(m, 0, m->cqe_bytes));
		done = d2h_write(m, hs, t, ps) + m->wr_ps;
	}
	return done;
}

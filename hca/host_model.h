/* SPDX-License-Identifier: MIT */
/*
 * The host interface of an HCA (docs/hca-model.md): what happens between
 * a program's post and the first byte on the wire, and between the last
 * byte in and the data and completion in host memory. A doorbell is an
 * MMIO write; a WQE that did not come with it (BlueFlame carries inline
 * ones) is fetched by a DMA read; the payload is read from host memory by
 * DMA at the requester and written by DMA at the responder, over a PCIe
 * link of some generation and width whose two directions every transfer
 * of the HCA shares; CQEs are DMA writes. Packets leave as their bytes
 * arrive (a large message's first packet goes while later ones are still
 * being read). Message rates are bounded per QP and per HCA.
 *
 * Everything is virtual time in integer picoseconds and depends only on
 * the order of the calls: deterministic. The presets and the source of
 * each figure are in docs/hca-model.md.
 */
#ifndef IBEMU_HOST_MODEL_H
#define IBEMU_HOST_MODEL_H

#include <stdint.h>

#include "hca_kind.h"

/* IBA-visible limits of a preset (what ibv_query_device reports). */
struct ibemu_host_limits {
	uint32_t max_qp, max_qp_wr, max_sge, max_cq, max_cqe, max_mr;
	uint32_t max_inline;
};

struct ibemu_host_model {
	enum ibemu_hca_kind kind;
	const char *name;
	/* The PCIe link (PCIe Base Specification). */
	unsigned pcie_gen;   /* 1..5 */
	unsigned pcie_width; /* lanes */
	unsigned mps;	     /* Max_Payload_Size, bytes */
	unsigned mrrs;	     /* Max_Read_Request_Size, bytes */
	unsigned rcb;	     /* the root port's Read Completion Boundary */
	/* Latencies, picoseconds. */
	uint64_t mmio_ps;    /* doorbell: the CPU's store reaching the HCA */
	uint64_t rd_rtt_ps;  /* DMA read: request out to its data coming in */
	uint64_t wr_ps;	     /* DMA write: leaving the HCA to in memory */
	uint64_t tx_proc_ps; /* send pipeline: WQE and data in to the wire */
	uint64_t rx_proc_ps; /* receive pipeline: packet in to DMA out */
	unsigned wqe_bytes;  /* a send WQE as fetched */
	unsigned rwqe_sge_bytes; /* a receive WQE: bytes per scatter entry */
	unsigned cqe_bytes;
	/* Message rates: the least time between two messages' starts, of the
	 * HCA's, and of one QP's WQEs fetched by DMA (not inline ones). */
	uint64_t hca_msg_ps;
	uint64_t qp_msg_ps;
	struct ibemu_host_limits lim;
};

/* The preset of 'kind' (IBEMU_HCA_AUTO resolved by the caller); NULL for
 * IBEMU_HCA_WIRE, which has no host interface. */
const struct ibemu_host_model *ibemu_host_model_get(enum ibemu_hca_kind kind);

/*
 * 'preset' with what a topology's hca_tuning: changes in it (0 fields
 * leave the preset's value), into 'out'. The doorbell and the send
 * pipeline together never fall below the time rule's lookahead
 * (IBEMU_TP_DOORBELL_PS): the YAML's bounds keep them there.
 */
void ibemu_host_model_tune(const struct ibemu_host_model *preset,
			   const struct ibemu_hca_tuning *tn,
			   struct ibemu_host_model *out);

/* PCIe arithmetic. Time to move 'bytes' (TLP bytes, overheads included)
 * over one direction of the link, rounded up. */
uint64_t ibemu_pcie_ps(const struct ibemu_host_model *m, uint64_t bytes);
/*
 * How a DMA of 'len' bytes at host address 'addr' is cut into TLPs (only
 * the address's low bits matter; 0 where it is not known):
 * - writes: MWr TLPs of at most MPS bytes, cut at MPS-aligned addresses
 *   (so none crosses a 4 KiB boundary);
 * - reads: MRd requests of at most MRRS bytes, cut at MRRS-aligned
 *   addresses; each answered by completions of at most MPS bytes that end
 *   on RCB-aligned addresses (the completer's rule), the first of a
 *   request up to the last RCB boundary within MPS of its start.
 */
uint64_t ibemu_pcie_write_tlps(const struct ibemu_host_model *m, uint64_t addr,
			       uint64_t len);
uint64_t ibemu_pcie_read_reqs(const struct ibemu_host_model *m, uint64_t addr,
			      uint64_t len);
uint64_t ibemu_pcie_read_cpls(const struct ibemu_host_model *m, uint64_t addr,
			      uint64_t len);
/* Link bytes of a DMA write of 'len' bytes at 'addr' (MWr TLPs). */
uint64_t ibemu_pcie_write_bytes(const struct ibemu_host_model *m, uint64_t addr,
				uint64_t len);
/* Link bytes of the completions that return 'len' bytes read at 'addr'. */
uint64_t ibemu_pcie_read_bytes(const struct ibemu_host_model *m, uint64_t addr,
			       uint64_t len);
/* Link bytes of the read requests (MRd) for 'len' bytes at 'addr'. */
uint64_t ibemu_pcie_req_bytes(const struct ibemu_host_model *m, uint64_t addr,
			      uint64_t len);

/* What one HCA's PCIe link and message engine are busy until. */
struct ibemu_host_state {
	uint64_t h2d_free; /* host to device: read completions */
	uint64_t d2h_free; /* device to host: writes, read requests */
	uint64_t msg_free; /* the next message may start */
	/* The latest stretch of DMA reads, whose requests share the
	 * device-to-host direction with writes (host_model.c). */
	uint64_t rd_from, rd_until;
};

/* The requester's side of one send WQE, as planned once its doorbell
 * delay is over (the transport plans in the engine's order). */
struct ibemu_host_send {
	uint64_t doorbell; /* the HCA has the doorbell */
	uint64_t start;	   /* its turn under the message rates */
	uint64_t wqe;	   /* the WQE is in the HCA */
	uint64_t data;	   /* its payload's first completion comes in;
			      0: no payload to read (inline, READ, atomic) */
	uint64_t addr;	   /* its payload's host address */
	uint64_t tx_proc;  /* copied from the model */
};

/*
 * Plans a send WQE of 'len' payload bytes at host address 'addr' posted
 * at 'posted' ('inl': its data came inline, and with it the WQE by
 * BlueFlame; 'fetch_payload' 0 for a READ or atomic request, which
 * carries none), reserving the PCIe link in 'hs' and the message slot of
 * its QP ('qp_free').
 */
void ibemu_host_send_plan(const struct ibemu_host_model *m,
			  struct ibemu_host_state *hs, uint64_t *qp_free,
			  uint64_t posted, uint64_t addr, uint32_t len, int inl,
			  int fetch_payload, struct ibemu_host_send *out);
/* When the packet that ends at payload byte 'upto' may leave. */
uint64_t ibemu_host_send_ready(const struct ibemu_host_model *m,
			       const struct ibemu_host_send *s, uint64_t upto);

/*
 * A responder's DMA read of 'len' bytes at 'addr' (READ response data, an
 * atomic's operand) asked at 'at': when its first completion comes in.
 * Reserves the link. The packet ending at byte 'upto' may leave at
 * ibemu_host_read_ready().
 */
uint64_t ibemu_host_read(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at,
			 uint64_t addr, uint32_t len);
uint64_t ibemu_host_read_ready(const struct ibemu_host_model *m, uint64_t data,
			       uint64_t addr, uint64_t upto);

/*
 * The receive WQE fetch: a receive of 'nsge' scatter entries that the HCA
 * can see from 'at' is read from host memory by DMA then (the HCA reads
 * its receive queues ahead); returns when it is in the HCA. A SEND's data
 * are not written before the receive they fill is in
 * (ibemu_host_recv()'s 'rwqe_in'). Its few bytes are not charged to the
 * link: a receive is posted when the daemon takes the post, which the wall
 * clock orders against the engine's transfers.
 */
uint64_t ibemu_host_rwqe_fetch(const struct ibemu_host_model *m, uint64_t at,
			       uint32_t nsge);

/*
 * A packet whose tail arrived at 'at', carrying 'payload' bytes for host
 * memory at 'addr' and completing a work request ('cqe': a CQE follows its
 * data), its data written no sooner than 'rwqe_in' (the receive WQE it
 * fills is in the HCA; 0: none): when its data and CQE are in host
 * memory, the moment the transport acts on it. Reserves the link.
 */
uint64_t ibemu_host_recv(const struct ibemu_host_model *m,
			 struct ibemu_host_state *hs, uint64_t at,
			 uint64_t rwqe_in, uint64_t addr, uint32_t payload,
			 int cqe);

#endif

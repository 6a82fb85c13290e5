/* SPDX-License-Identifier: MIT */
/*
 * Packets as they cross the fabric. Only what the model needs is kept: the
 * routing fields of the LRH, the size on the wire (headers from the spec,
 * payload padded to 4 bytes) and the upper layer's bookkeeping. Payload
 * bytes never travel through the engine, except a MAD's: the nodes' agents
 * must read it.
 */
#ifndef IBEMU_PACKET_H
#define IBEMU_PACKET_H

#include <stdint.h>

/* Header and trailer sizes in bytes (IBA vol 1, 5.1 and 9.2 to 9.3). */
#define IBEMU_LRH_BYTES	      8
#define IBEMU_GRH_BYTES	      40
#define IBEMU_BTH_BYTES	      12
#define IBEMU_RETH_BYTES      16
#define IBEMU_AETH_BYTES      4
#define IBEMU_DETH_BYTES      8
#define IBEMU_ATOMICETH_BYTES 28
#define IBEMU_ATOMICACK_BYTES 8
#define IBEMU_IMMDT_BYTES     4
#define IBEMU_ICRC_BYTES      4
#define IBEMU_VCRC_BYTES      2

/* IBA 7.9.4: flow control counts buffer space in blocks of 64 bytes. */
#define IBEMU_CREDIT_BYTES 64
#define IBEMU_NUM_VLS	   16 /* VL0..VL14 data, VL15 management */
#define IBEMU_VL15	   15

/* IBA 4.1: LIDs 0xC000..0xFFFE are multicast; 0xFFFF is permissive. */
#define IBEMU_MLID_FIRST     0xc000u
#define IBEMU_LID_PERMISSIVE 0xffffu

static inline int ibemu_lid_is_multicast(uint16_t lid)
{
	return lid >= IBEMU_MLID_FIRST && lid != IBEMU_LID_PERMISSIVE;
}

struct ibemu_mad_msg;

struct ibemu_pkt {
	struct ibemu_pkt *next; /* in the one queue that holds it */
	uint64_t t_created;	/* when the upper layer made it */
	uint64_t t_tail;	/* when its tail reaches the current receiver */
	uint64_t flow;		/* upper layer's */
	uint64_t cookie;	/* upper layer's */
	uint32_t wire_bytes;	/* LRH through VCRC */
	uint16_t hdr_bytes;	/* LRH through the last transport header */
	uint16_t blocks;	/* credits the packet needs: wire bytes / 64 */
	uint16_t slid;
	uint16_t dlid;
	uint8_t sl;
	uint8_t vl;    /* VL on the link it is crossing */
	uint8_t in_vl; /* VL of the input buffer holding it */
	uint8_t in_port;
	uint8_t out_port;
	uint8_t fecn : 1;
	uint8_t becn : 1;
	uint8_t last : 1;    /* last packet of its message */
	uint8_t ack_req : 1; /* BTH AckReq (hca/transport) */
	uint8_t lost : 1;    /* dropped by fault injection (engine) */
	uint8_t se : 1;	     /* BTH SE: solicited event (hca/transport) */
	/*
	 * The BTH and AETH fields the QP transport (hca/transport*.c) acts
	 * on, by value: 12 bytes. The other headers (RETH, DETH, ImmDt,
	 * AtomicETH) are counted in the size but their contents stay with
	 * the request, which 'cookie' names, so the struct stays small.
	 */
	uint8_t opcode; /* BTH OpCode */
	/* A multicast packet held by a switch (switch/relay.c): copies
	 * still to leave, when the last tail of those sent leaves, and the
	 * outputs it goes to (a port mask per MFT position, owned). */
	uint8_t mc_left;
	uint64_t mc_end;
	uint16_t *mc_out;
	/* The kind of owner that made it (engine.c: a study's packets mean
	 * nothing to a QP transport); set by the engine when it pulls it. */
	uint8_t kind;
	uint16_t pkey; /* BTH P_Key */
	uint32_t psn;  /* BTH PSN (24 bits) */
	uint32_t dqpn; /* BTH DestQP (24 bits) */
	uint32_t aeth; /* AETH: Syndrome << 24 | MSN */
	/* A management packet's MAD, owned by the packet (fabric/smi.c). */
	struct ibemu_mad_msg *mad;
};

/*
 * Sets the sizes of 'p' carrying 'payload' bytes after 'hdr_bytes' of
 * headers (LRH + BTH + extended headers): the payload is padded to a
 * multiple of 4 (BTH PadCnt), ICRC and VCRC are added.
 */
static inline void ibemu_pkt_set_size(struct ibemu_pkt *p, unsigned hdr_bytes,
				      unsigned payload)
{
	unsigned padded = (payload + 3u) & ~3u;

	p->hdr_bytes = (uint16_t)hdr_bytes;
	p->wire_bytes =
		hdr_bytes + padded + IBEMU_ICRC_BYTES + IBEMU_VCRC_BYTES;
	p->blocks = (uint16_t)((p->wire_bytes + IBEMU_CREDIT_BYTES - 1) /
			       IBEMU_CREDIT_BYTES);
}

#endif

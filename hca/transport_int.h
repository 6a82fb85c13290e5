/* SPDX-License-Identifier: MIT */
/*
 * The transport's own structures, shared by its files: transport.c
 * (objects and ports), transport_qp.c (QP state machine, posting, flush),
 * transport_req.c (the requester) and transport_resp.c (the responder).
 */
#ifndef IBEMU_TRANSPORT_INT_H
#define IBEMU_TRANSPORT_INT_H

#include "hca.h"
#include "host_model.h"
#include "transport.h"

/* IBA 9.2 Table 33: BTH OpCode, the transport in the top 3 bits. */
#define OP_RC  0x00
#define OP_UC  0x20
#define OP_UD  0x60
#define OP_XRC 0xa0 /* IBA Annex A14: the XRC opcodes */
/* XRCETH (IBA Annex A14): the XRC SRQ number, in every XRC request. */
#define XRCETH_BYTES 4
enum tp_opcode {
	OP_SEND_FIRST = 0x00,
	OP_SEND_MIDDLE = 0x01,
	OP_SEND_LAST = 0x02,
	OP_SEND_LAST_IMM = 0x03,
	OP_SEND_ONLY = 0x04,
	OP_SEND_ONLY_IMM = 0x05,
	OP_WRITE_FIRST = 0x06,
	OP_WRITE_MIDDLE = 0x07,
	OP_WRITE_LAST = 0x08,
	OP_WRITE_LAST_IMM = 0x09,
	OP_WRITE_ONLY = 0x0a,
	OP_WRITE_ONLY_IMM = 0x0b,
	OP_READ_REQ = 0x0c,
	OP_READ_RESP_FIRST = 0x0d,
	OP_READ_RESP_MIDDLE = 0x0e,
	OP_READ_RESP_LAST = 0x0f,
	OP_READ_RESP_ONLY = 0x10,
	OP_ACK = 0x11,
	OP_ATOMIC_ACK = 0x12,
	OP_CMP_SWAP = 0x13,
	OP_FETCH_ADD = 0x14,
};

/* IBA 9.3.5 Table 42: AETH Syndrome. */
#define AETH_ACK	0x00 /* 000xxxxx: credit count (not modelled) */
#define AETH_RNR	0x20 /* 001ttttt: RNR NAK, the timer in 5 bits */
#define AETH_NAK	0x60 /* 011ccccc: NAK code below */
#define NAK_PSN_SEQ	0
#define NAK_INV_REQ	1
#define NAK_REM_ACCESS	2
#define NAK_REM_OP	3
#define AETH_SYN(aeth)	((uint8_t)((aeth) >> 24))
#define AETH_MSN(aeth)	((aeth)&0xffffffu)
#define PSN_MASK	0xffffffu
#define PSN_ADD(psn, n) (((psn) + (n)) & PSN_MASK)

/* a - b in PSN space (IBA 9.7.1: half the space ahead, half behind). */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* Kinds of timers, in the top byte of a timer cookie (QPN below). */
enum tp_timer {
	TIMER_KICK = 1, /* a doorbell's delay has passed */
	TIMER_RTO = 2,	/* the QP's retransmission or RNR timer */
	TIMER_CC = 3,	/* a throttled QP of the port may send again */
	TIMER_RX = 4,	/* held arrivals are in host memory (host_model.h) */
	TIMER_PLAN = 5, /* a WQE's host side may be planned (host model) */
};

struct tp_seg {
	uint64_t mr; /* the upper layer's handle */
	uint64_t addr;
	uint32_t len;
};

/*
 * A send work request and the message it becomes. Packets name it in
 * their cookie; it lives until the requester is done with it and no
 * packet naming it is left on the wire (packets the fabric loses keep it
 * until the domain goes).
 */
struct tp_msg {
	struct tp_msg *next;		    /* in its QP's send queue */
	struct tp_msg *dom_prev, *dom_next; /* in the domain's list */
	struct ibemu_tp *tp;		    /* the requester; NULL once gone */
	struct tp_qp *qp;
	uint64_t wr_id;
	uint64_t posted;   /* virtual time of the post */
	uint32_t inflight; /* packets naming it still on the wire */
	uint8_t opcode;	   /* enum ibemu_wr_opcode */
	uint8_t signaled;
	uint8_t solicited; /* BTH SE on its last packet (IBA 9.2.3) */
	uint8_t fence;
	uint8_t is_inline;
	uint8_t started;  /* its first packet was built */
	uint8_t planned;  /* 'hsend' is planned (host model) */
	uint8_t done;	  /* READ/atomic: the response came back */
	uint8_t req_done; /* the requester no longer needs it */
	uint8_t status;	  /* a local error found when it started */
	uint32_t len;
	uint32_t imm;
	uint32_t first_psn, npsn; /* PSNs it takes (READ: one a response) */
	uint32_t sent;		  /* packets built since the last rewind */
	uint32_t rd_got;	  /* READ: responses received in order */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add, swap;
	uint64_t orig; /* atomic: the value the responder found */
	struct ibemu_tp_ah ah;
	uint32_t remote_qpn, qkey, src_qpn;
	uint32_t xrc_srqn;	      /* XRC: the XRCETH it carries */
	struct ibemu_tp_mem read_src; /* READ: set by the responder */
	uint8_t *inline_buf;
	uint32_t nsge;
	struct ibemu_tp_sge *sge;     /* as posted */
	struct tp_seg *seg;	      /* resolved when it starts */
	struct ibemu_host_send hsend; /* its host side (once planned) */
};

struct tp_rwqe {
	struct tp_rwqe *next;
	uint64_t wr_id;
	uint32_t nsge;
	uint64_t cap;	   /* bytes it holds */
	uint64_t ready_at; /* packets arriving before this do not see it */
	uint64_t in_hca;   /* host model: its DMA fetch is in (0: none) */
	struct ibemu_tp_sge sge[];
};

struct tp_rq {
	struct tp_rwqe *head, *tail;
	uint32_t n, max, max_sge;
	uint32_t held; /* SENDs held for their host memory (rx_host.c) */
};

struct tp_pd {
	uint32_t users;
};

struct tp_mr {
	uint32_t pd;
	uint32_t access;
	uint32_t key;
	uint64_t addr, len, handle;
};

struct tp_cq {
	uint32_t users;
};

struct tp_srq {
	uint32_t id, pd, users;
	uint32_t limit;
	struct tp_rq rq;
	uint32_t xrcd, cq; /* an XRC SRQ's domain and CQ; 0: a basic SRQ */
	void *uctx;	   /* XRC: given back in its CQEs */
};

/* An XRC domain (transport_xrc.c). */
struct tp_xrcd {
	uint64_t key_dev, key_ino; /* {0, 0}: anonymous */
	uint32_t opens;		   /* opens not closed */
	uint32_t users;		   /* XRC SRQs and receive QPs in it */
};

/* A response the responder owes: an ACK or NAK, READ data, or an
 * atomic's result. */
struct tp_resp {
	struct tp_resp *next;
	struct tp_msg *msg; /* the request (a reference), NULL for ACKs */
	uint32_t psn;	    /* first PSN */
	uint32_t npkts, sent;
	uint32_t len;	  /* READ: bytes */
	uint32_t aeth;	  /* Syndrome << 24 | MSN */
	uint8_t kind;	  /* enum resp_kind (transport_resp.c) */
	uint8_t dup;	  /* answers a duplicate request */
	uint64_t orig;	  /* atomic: the value found */
	uint64_t data_at; /* READ, atomic: its host data come in (0: now) */
};

/* A Congestion Notification Packet the QP owes a source (A10.3.3). */
struct tp_cnp {
	struct tp_cnp *next;
	uint32_t dqpn;
	uint16_t dlid;
	uint8_t sl;
};

/* Replay cache entry of an executed atomic (IBA 9.7.5.1.5.3). */
struct tp_replay {
	uint32_t psn;
	uint8_t valid;
	uint64_t orig;
};

struct tp_qp {
	uint32_t qpn;
	uint8_t type;
	uint8_t state;
	uint8_t sq_sig_all;
	uint8_t sqd_notify, sq_drained_sent;
	uint32_t pd, scq, rcq;
	/* Its SRQ; an XRC receive QP's is the one the request under way
	 * names (XRCETH), found in its domain 'xrcd'. */
	struct tp_srq *srq;
	uint32_t xrcd;
	uint32_t opens; /* XRC receive QP: handles on it (ibv_open_qp) */
	uint32_t max_send_wr, max_send_sge, max_inline;
	void *uctx; /* the layer above's (ibemu_tp_qp_init) */
	struct ibemu_tp_qp_attr attr;
	uint32_t port; /* global port index, from attr.port_num */

	/* Requester. */
	struct tp_msg *sq_head, *sq_tail; /* posted and not completed */
	uint32_t sq_n;
	struct tp_msg *cur; /* the next to (re)send from; NULL: none */
	uint32_t npsn;	    /* PSN of the next new message */
	uint32_t rd_out;    /* READ/atomics started, not completed */
	uint32_t acked;	    /* highest PSN acknowledged */
	uint8_t retry_left, rnr_left;
	uint64_t ready_at; /* doorbell: nothing leaves before */
	uint64_t rto_at;   /* retransmit deadline; UINT64_MAX: none */
	uint64_t rnr_at;   /* RNR wait ends; 0: not waiting */
	uint64_t timer_at; /* the pending engine timer; UINT64_MAX: none */
	uint64_t msg_free; /* its next message may start (host_model.h) */
	struct tp_msg *plan_next; /* the first WQE not planned; NULL: none */

	/* Responder. */
	struct tp_rq rq;
	uint32_t epsn, msn;
	uint8_t nak_sent;
	uint8_t in_msg; /* a multi-packet request is under way */
	uint8_t in_op;	/* its first opcode */
	uint8_t in_bad; /* UC: drop the rest of this message */
	uint32_t in_len;
	struct tp_rwqe *in_rwqe;       /* SEND: the receive it fills */
	struct ibemu_tp_mem in_target; /* WRITE: checked at the first */
	uint64_t in_target_len;
	uint8_t ack_pending; /* an ACK waits to leave (coalesced) */
	uint32_t ack_psn, ack_aeth;
	struct tp_resp *resp_head, *resp_tail;
	uint32_t resp_n;	  /* READ/atomic responses queued */
	uint32_t dup_n;		  /* answers to duplicates queued */
	struct tp_replay *replay; /* max_dest_rd_atomic entries, a ring */
	uint32_t replay_n, replay_next;

	/* Congestion control (IBA Annex A10, transport_cc.c). */
	struct ibemu_cc_src cc; /* as a source, when controlled per QP */
	uint8_t becn_owed;	/* RC: the next response carries a BECN */
	uint32_t cnp_n;		/* CNPs queued */
	struct tp_cnp *cnp_head, *cnp_tail;
};

struct tp_table {
	void **v;
	uint32_t n; /* slots used (ids below n may be free) */
	uint32_t cap;
};

struct ibemu_tp_domain {
	struct ibemu_engine *e;
	struct tp_msg *msgs; /* every record alive */
};

/* A UD QP attached to a multicast group (transport_mcast.c). */
struct tp_mcast {
	uint8_t gid[16];
	uint16_t mlid;
	uint32_t qpn;
};

struct ibemu_tp {
	struct ibemu_tp_domain *d;
	struct ibemu_engine *e;
	uint32_t node;
	unsigned nports;
	uint32_t first_port; /* global index of port 1 */
	struct ibemu_tp_ops ops;
	void *ctx;
	struct tp_table pds, mrs, cqs, srqs, qps, xrcds;
	uint32_t rr[8]; /* round robin position per port (by number) */
	/* The pending TIMER_CC of each port (by number); UINT64_MAX: none. */
	uint64_t cc_at[8];
	/* The logical state last told to the process, per port. */
	enum ibemu_port_state told[8];
	uint8_t key_tag;
	/* Ports lent to a traffic study (bit per port number): no QP may
	 * use them until they come back (tp_lend). */
	uint8_t lent;
	/*
	 * The host interface (host_model.h); NULL for 'wire', where work
	 * leaves IBEMU_TP_DOORBELL_PS after its post and arrivals act at
	 * their tail. Otherwise arrivals wait, in order, until their data
	 * and CQE are in host memory: held in a list through pkt->next,
	 * with that time in pkt->t_tail and their port number in
	 * pkt->out_port (both unused once a packet has arrived).
	 */
	const struct ibemu_host_model *hm; /* &hm_tuned, or NULL */
	struct ibemu_host_model hm_tuned;  /* the preset, hca_tuning: applied */
	struct ibemu_host_state hs;
	struct ibemu_pkt *rx_head, *rx_tail;
	uint64_t rx_last; /* release time of the last held arrival */
	/* Multicast attachments, in the order they were made. */
	struct tp_mcast *mc;
	unsigned nmc, mc_cap;
};

/* transport.c */
/* Whether global port 'port' of 'tp' is its own (not lent to a study). */
int ibemu__tp_port_free(const struct ibemu_tp *tp, uint32_t port);
void *ibemu__tp_table_get(const struct tp_table *t, uint32_t id);
int ibemu__tp_table_add(struct tp_table *t, uint32_t first, void *p,
			uint32_t *id);
void ibemu__tp_table_del(struct tp_table *t, uint32_t id);
struct tp_qp *ibemu__tp_qp(const struct ibemu_tp *tp, uint32_t qpn);

/* Under a host model, an arrival about to be held (transport_rx_host.c):
 * when the receive WQE its data fill is in the HCA (0: none); and its
 * leaving the hold. */
uint64_t ibemu__tp_rx_rwqe_in(struct ibemu_tp *tp, const struct ibemu_pkt *pkt,
			      uint64_t now);
void ibemu__tp_rx_unhold(struct ibemu_tp *tp, const struct ibemu_pkt *pkt);
/* The MR of key 'key' if [addr, addr + len) lies in it, PD 'pd' owns it
 * and it allows 'access' (0 for local reads); else NULL. */
const struct tp_mr *ibemu__tp_mr_check(const struct ibemu_tp *tp, uint32_t key,
				       uint32_t pd, uint64_t addr, uint64_t len,
				       uint32_t access);
/* Whether P_Keys 'a' and 'b' match (IBA 10.9.3). */
int ibemu__tp_pkey_match(uint16_t a, uint16_t b);
uint16_t ibemu__tp_pkey(const struct ibemu_tp *tp, const struct tp_qp *qp);
void ibemu__tp_msg_put(struct ibemu_tp_domain *d, struct tp_msg *m);
void ibemu__tp_cqe(struct ibemu_tp *tp, uint32_t cq,
		   const struct ibemu_tp_cqe *c);
void ibemu__tp_timer_at(struct ibemu_tp *tp, struct tp_qp *qp, uint64_t when);

/* transport_mcast.c */
/* QP 'qpn' is destroyed: it leaves every group. */
void ibemu__tp_mcast_qp_gone(struct ibemu_tp *tp, uint32_t qpn);
/* Hands multicast 'pkt', arrived at global port 'port', to 'to_qp' once
 * per QP attached to its MLID (pkt->dqpn set to it each time). */
void ibemu__tp_mcast_deliver(struct ibemu_tp *tp, uint32_t port,
			     struct ibemu_pkt *pkt,
			     void (*to_qp)(struct ibemu_tp *tp, uint32_t port,
					   struct ibemu_pkt *pkt));

/* transport_qp.c */
/* Moves 'qp' to ERR: flushes both queues, raises 'event' (0: none). */
void ibemu__tp_qp_error(struct ibemu_tp *tp, struct tp_qp *qp, int event);
/* Completes the oldest send WQE 'm' with 'status' and frees it. */
void ibemu__tp_send_complete(struct ibemu_tp *tp, struct tp_qp *qp,
			     struct tp_msg *m, int status);
/* Takes the next receive WQE of 'qp' (its RQ or SRQ), or NULL. */
struct tp_rwqe *ibemu__tp_rq_take(struct ibemu_tp *tp, struct tp_qp *qp);
void ibemu__tp_recv_complete(struct ibemu_tp *tp, struct tp_qp *qp,
			     struct tp_rwqe *w, const struct ibemu_tp_cqe *c);

/* transport_qp.c: plans the host side of the QP's WQEs whose doorbell
 * delay is over (TIMER_PLAN). */
void ibemu__tp_plan(struct ibemu_tp *tp, struct tp_qp *qp);

/* transport_req.c */
/* When the next packet of send WQE 'm' may leave: its doorbell delay, or
 * under a host model its WQE and the bytes of that packet in the HCA. */
uint64_t ibemu__tp_tx_ready(const struct ibemu_tp *tp, const struct tp_qp *qp,
			    const struct tp_msg *m);
struct ibemu_pkt *ibemu__tp_req_pull(struct ibemu_tp *tp, struct tp_qp *qp,
				     const uint16_t *credits, int *blocked);
void ibemu__tp_req_recv(struct ibemu_tp *tp, struct tp_qp *qp,
			struct ibemu_pkt *pkt);
void ibemu__tp_req_timer(struct ibemu_tp *tp, struct tp_qp *qp);
/*
 * Region 'handle' of 'tp' was deregistered: a WQE of 'qp' under way whose
 * own buffers are in it fails with a local protection error (IBA
 * 10.6.3.5: what an HCA's next DMA there meets), unless its data has moved
 * already (a READ landed, every packet of a SEND or WRITE arrived).
 */
void ibemu__tp_req_mr_gone(struct ibemu_tp *tp, struct tp_qp *qp,
			   uint64_t handle);
/* Whether the requester of 'qp' has a packet to build now. */
int ibemu__tp_req_ready(const struct ibemu_tp *tp, const struct tp_qp *qp);

/* transport_resp.c */
/* 'throttled': congestion control holds the QP's data back (READ and
 * atomic responses wait; ACKs and NAKs still leave). */
struct ibemu_pkt *ibemu__tp_resp_pull(struct ibemu_tp *tp, struct tp_qp *qp,
				      const uint16_t *credits, int *blocked,
				      int throttled);
void ibemu__tp_resp_recv(struct ibemu_tp *tp, struct tp_qp *qp,
			 struct ibemu_pkt *pkt);
void ibemu__tp_resp_reset(struct ibemu_tp *tp, struct tp_qp *qp);

/* transport_cc.c */
/* The time before which congestion control holds the data packets of
 * 'qp' back (its port is configured), or 0 if it may send now. */
uint64_t ibemu__tp_cc_wait(struct ibemu_tp *tp, struct tp_qp *qp);
/* 'qp' hands its port 'pkt': a data packet starts its source's delay. */
void ibemu__tp_cc_sent(struct ibemu_tp *tp, struct tp_qp *qp,
		       const struct ibemu_pkt *pkt);
/* Port 'port' must pull again at 'when' (a throttled QP may send). */
void ibemu__tp_cc_arm(struct ibemu_tp *tp, uint32_t port, uint64_t when);
/*
 * A packet marked FECN or BECN, or a CNP, reached 'qp' (its port and
 * P_Key checked): answers the FECN, takes the BECN. Returns 1 if the
 * packet was a CNP, which nothing else handles.
 */
int ibemu__tp_cc_recv(struct ibemu_tp *tp, struct tp_qp *qp,
		      const struct ibemu_pkt *pkt, const struct tp_msg *m);
/* The next CNP 'qp' owes, or NULL. */
struct ibemu_pkt *ibemu__tp_cnp_pull(struct ibemu_tp *tp, struct tp_qp *qp,
				     const uint16_t *credits, int *blocked);
/* Forgets what 'qp' owes as a destination (reset, error). */
void ibemu__tp_cc_reset(struct tp_qp *qp);

/* transport_xrc.c */
/* BTH OpCode's transport bits for the packets of 'qp' (IBA 9.2). */
static inline uint8_t tp_prefix(const struct tp_qp *qp)
{
	switch (qp->type) {
	case IBEMU_QPT_RC:
		return OP_RC;
	case IBEMU_QPT_UC:
		return OP_UC;
	case IBEMU_QPT_UD:
		return OP_UD;
	default:
		return OP_XRC;
	}
}

/* Whether BTH OpCode 'opcode' is of a reliable connected transport. */
static inline int tp_opcode_rc(uint8_t opcode)
{
	return (opcode & 0xe0) == OP_RC || (opcode & 0xe0) == OP_XRC;
}

/*
 * XRC receive QP 'qp' takes a request naming XRC SRQ 'srqn' (Annex A14):
 * the SRQ becomes the QP's for it (its receives, its PD for every key
 * check). 0, or -EINVAL if the SRQ does not exist or is not in the QP's
 * domain.
 */
int ibemu__tp_xrc_target(struct ibemu_tp *tp, struct tp_qp *qp, uint32_t srqn);
/* XRC SRQ 's' goes: the receive QPs that delivered into it forget it. */
void ibemu__tp_xrc_srq_gone(struct ibemu_tp *tp, const struct tp_srq *s);
void ibemu__tp_xrcd_fini(struct ibemu_tp *tp);

/* Wire sizes: LRH + BTH + 'ext' extended headers + payload (packet.h). */
static inline unsigned tp_hdr(unsigned ext)
{
	return IBEMU_LRH_BYTES + IBEMU_BTH_BYTES + ext;
}

#endif

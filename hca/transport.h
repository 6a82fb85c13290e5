/* SPDX-License-Identifier: MIT */
/*
 * The QP transport of one HCA (IBA chapters 9 and 10): protection domains,
 * memory regions, completion queue ids, shared receive queues and queue
 * pairs of type RC, UC and UD, over the engine's packets. It owns the ports
 * of its HCA node (struct ibemu_port_ops) and knows nothing of processes:
 * what lies above (the daemon's sessions, the unit tests) comes in through
 * the calls below and goes out through struct ibemu_tp_ops. Payload bytes
 * never travel with the packets: a message's data moves once, through the
 * upper layer's ops, when the destination would have it (the last packet
 * of a SEND or WRITE reaching the responder, the last READ response
 * reaching the requester).
 *
 * Numbers (states, opcodes, statuses, masks, flags, events) are those of
 * libibverbs, so the daemon passes them through unchanged; the unit tests
 * check each against <infiniband/verbs.h>. Every call runs on the engine's
 * thread; all return 0 or -errno unless said otherwise.
 */
#ifndef IBEMU_TRANSPORT_H
#define IBEMU_TRANSPORT_H

#include <stdint.h>

#include "engine.h"

/*
 * The modelled doorbell-to-wire delay of an HCA: work posted at virtual
 * time T starts no earlier than T + this (the lookahead of docs/design.md §3;
 * ConnectX adapters take a few hundred nanoseconds from a doorbell to the
 * first byte on the wire).
 */
#define IBEMU_TP_DOORBELL_PS 300000ull

/* IBA 9.7.6.1.3: the Local ACK Timeout is 4.096 us x 2^timeout. */
#define IBEMU_TP_ACK_TIMEOUT_UNIT_PS 4096000ull

/* Limits the transport advertises (what ibv_query_device reports). */
#define IBEMU_TP_MAX_SGE	 32
#define IBEMU_TP_MAX_INLINE	 512
#define IBEMU_TP_MAX_WR		 32768
#define IBEMU_TP_MAX_RD_ATOMIC	 16
#define IBEMU_TP_MAX_MSG	 (1u << 31)
#define IBEMU_TP_UD_GRH_BYTES	 40 /* reserved at the start of a UD receive */
#define IBEMU_TP_QKEY_PRIVILEGED 0x80000000u
/* Multicast (ibv_device_attr): groups of an HCA, QPs per group, and
 * attachments of an HCA in all. */
#define IBEMU_TP_MAX_MCAST_GRP		   1024u
#define IBEMU_TP_MAX_MCAST_QP_ATTACH	   240u
#define IBEMU_TP_MAX_TOTAL_MCAST_QP_ATTACH 4096u

/* enum ibv_wc_status. */
enum ibemu_wc_status {
	IBEMU_WC_SUCCESS = 0,
	IBEMU_WC_LOC_LEN_ERR = 1,
	IBEMU_WC_LOC_QP_OP_ERR = 2,
	IBEMU_WC_LOC_EEC_OP_ERR = 3,
	IBEMU_WC_LOC_PROT_ERR = 4,
	IBEMU_WC_WR_FLUSH_ERR = 5,
	IBEMU_WC_MW_BIND_ERR = 6,
	IBEMU_WC_BAD_RESP_ERR = 7,
	IBEMU_WC_LOC_ACCESS_ERR = 8,
	IBEMU_WC_REM_INV_REQ_ERR = 9,
	IBEMU_WC_REM_ACCESS_ERR = 10,
	IBEMU_WC_REM_OP_ERR = 11,
	IBEMU_WC_RETRY_EXC_ERR = 12,
	IBEMU_WC_RNR_RETRY_EXC_ERR = 13,
	IBEMU_WC_LOC_RDD_VIOL_ERR = 14,
	IBEMU_WC_REM_INV_RD_REQ_ERR = 15,
	IBEMU_WC_REM_ABORT_ERR = 16,
	IBEMU_WC_INV_EECN_ERR = 17,
	IBEMU_WC_INV_EEC_STATE_ERR = 18,
	IBEMU_WC_FATAL_ERR = 19,
	IBEMU_WC_RESP_TIMEOUT_ERR = 20,
	IBEMU_WC_GENERAL_ERR = 21,
};

/* enum ibv_wc_opcode. */
enum ibemu_wc_opcode {
	IBEMU_WC_SEND = 0,
	IBEMU_WC_RDMA_WRITE = 1,
	IBEMU_WC_RDMA_READ = 2,
	IBEMU_WC_COMP_SWAP = 3,
	IBEMU_WC_FETCH_ADD = 4,
	IBEMU_WC_RECV = 128,
	IBEMU_WC_RECV_RDMA_WITH_IMM = 129,
};

/* enum ibv_wc_flags. */
#define IBEMU_WC_GRH	  (1u << 0)
#define IBEMU_WC_WITH_IMM (1u << 1)

/* enum ibv_wr_opcode. */
enum ibemu_wr_opcode {
	IBEMU_WR_RDMA_WRITE = 0,
	IBEMU_WR_RDMA_WRITE_WITH_IMM = 1,
	IBEMU_WR_SEND = 2,
	IBEMU_WR_SEND_WITH_IMM = 3,
	IBEMU_WR_RDMA_READ = 4,
	IBEMU_WR_ATOMIC_CMP_AND_SWP = 5,
	IBEMU_WR_ATOMIC_FETCH_AND_ADD = 6,
};

/* enum ibv_send_flags. */
#define IBEMU_SEND_FENCE     (1u << 0)
#define IBEMU_SEND_SIGNALED  (1u << 1)
#define IBEMU_SEND_SOLICITED (1u << 2)
#define IBEMU_SEND_INLINE    (1u << 3)

/* enum ibv_access_flags (those the transport checks). */
#define IBEMU_ACCESS_LOCAL_WRITE   (1u << 0)
#define IBEMU_ACCESS_REMOTE_WRITE  (1u << 1)
#define IBEMU_ACCESS_REMOTE_READ   (1u << 2)
#define IBEMU_ACCESS_REMOTE_ATOMIC (1u << 3)

/* enum ibv_qp_state. */
enum ibemu_qp_state {
	IBEMU_QPS_RESET = 0,
	IBEMU_QPS_INIT = 1,
	IBEMU_QPS_RTR = 2,
	IBEMU_QPS_RTS = 3,
	IBEMU_QPS_SQD = 4,
	IBEMU_QPS_SQE = 5,
	IBEMU_QPS_ERR = 6,
};

/* enum ibv_qp_type (those modelled). */
enum ibemu_qp_type {
	IBEMU_QPT_RC = 2,
	IBEMU_QPT_UC = 3,
	IBEMU_QPT_UD = 4,
	/* XRC (IBA Annex A14): the send side, and the receive side that
	 * lives in an XRC domain and delivers into its XRC SRQs. */
	IBEMU_QPT_XRC_SEND = 9,
	IBEMU_QPT_XRC_RECV = 10,
};

/* Whether QPs of 'type' are reliable connected: RC and both XRC sides
 * follow IBA ch. 9's RC rules (PSNs, ACKs, retries). */
static inline int ibemu_tp_type_rc(unsigned type)
{
	return type == IBEMU_QPT_RC || type == IBEMU_QPT_XRC_SEND ||
	       type == IBEMU_QPT_XRC_RECV;
}

/* enum ibv_qp_attr_mask. */
enum ibemu_qp_attr_mask {
	IBEMU_QP_STATE = 1 << 0,
	IBEMU_QP_CUR_STATE = 1 << 1,
	IBEMU_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	IBEMU_QP_ACCESS_FLAGS = 1 << 3,
	IBEMU_QP_PKEY_INDEX = 1 << 4,
	IBEMU_QP_PORT = 1 << 5,
	IBEMU_QP_QKEY = 1 << 6,
	IBEMU_QP_AV = 1 << 7,
	IBEMU_QP_PATH_MTU = 1 << 8,
	IBEMU_QP_TIMEOUT = 1 << 9,
	IBEMU_QP_RETRY_CNT = 1 << 10,
	IBEMU_QP_RNR_RETRY = 1 << 11,
	IBEMU_QP_RQ_PSN = 1 << 12,
	IBEMU_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	IBEMU_QP_ALT_PATH = 1 << 14,
	IBEMU_QP_MIN_RNR_TIMER = 1 << 15,
	IBEMU_QP_SQ_PSN = 1 << 16,
	IBEMU_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	IBEMU_QP_PATH_MIG_STATE = 1 << 18,
	IBEMU_QP_CAP = 1 << 19,
	IBEMU_QP_DEST_QPN = 1 << 20,
};

/* enum ibv_event_type (those the transport raises). */
enum ibemu_event_type {
	IBEMU_EVENT_QP_FATAL = 1,
	IBEMU_EVENT_QP_REQ_ERR = 2,
	IBEMU_EVENT_QP_ACCESS_ERR = 3,
	IBEMU_EVENT_COMM_EST = 4,
	IBEMU_EVENT_SQ_DRAINED = 5,
	IBEMU_EVENT_PORT_ACTIVE = 9,
	IBEMU_EVENT_PORT_ERR = 10,
	IBEMU_EVENT_SRQ_LIMIT_REACHED = 15,
	IBEMU_EVENT_QP_LAST_WQE_REACHED = 16,
};

/* enum ibv_mtu: 1 = 256 ... 5 = 4096 bytes. */
#define IBEMU_MTU_BYTES(m) (128u << (m))

/* An address vector (ibv_ah_attr without a GRH: none is used). */
struct ibemu_tp_ah {
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t port_num; /* the HCA's port, 1-based */
};

/* ibv_qp_attr, the fields the transport uses. */
struct ibemu_tp_qp_attr {
	uint8_t qp_state; /* enum ibemu_qp_state */
	uint8_t cur_qp_state;
	uint8_t path_mtu; /* enum ibv_mtu */
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining; /* query only */
	uint8_t port_num;
	uint8_t timeout;       /* 0: infinite, else 4.096 us x 2^timeout */
	uint8_t retry_cnt;     /* 0..7 */
	uint8_t rnr_retry;     /* 0..7; 7: infinite */
	uint8_t min_rnr_timer; /* IBA 9.7.5.2.8 encoding, 0..31 */
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint16_t pkey_index;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags; /* IBEMU_ACCESS_* */
	struct ibemu_tp_ah ah_attr;
};

/* ibv_qp_init_attr. Ids are those the create calls returned. */
struct ibemu_tp_qp_init {
	uint8_t qp_type; /* enum ibemu_qp_type */
	uint8_t sq_sig_all;
	uint32_t pd;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t srq;  /* 0: none */
	uint32_t xrcd; /* IBEMU_QPT_XRC_RECV: its XRC domain (no PD, CQs) */
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	void *uctx; /* the layer above's, given back in the QP's CQEs */
};

/* ibv_srq_attr. */
struct ibemu_tp_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit; /* 0: not armed */
};

struct ibemu_tp_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* One send work request (ibv_send_wr without the list link). */
struct ibemu_tp_send_wr {
	uint64_t wr_id;
	uint8_t opcode; /* enum ibemu_wr_opcode */
	uint32_t send_flags;
	const struct ibemu_tp_sge *sg_list; /* num_sge, copied at post */
	uint32_t num_sge;
	/* With IBEMU_SEND_INLINE: the bytes themselves, copied at post
	 * (the upper layer takes them from the process as it posts). */
	const void *inline_data;
	uint32_t inline_len;
	uint32_t imm_data; /* host order, as the receiver's CQE gives it */
	uint32_t xrc_srqn; /* IBEMU_QPT_XRC_SEND: XRCETH, the target SRQ */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
			uint64_t compare_add;
			uint64_t swap;
		} atomic;
		struct {
			struct ibemu_tp_ah ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey; /* high bit set: the QP's own */
		} ud;
	} wr;
};

struct ibemu_tp_recv_wr {
	uint64_t wr_id;
	const struct ibemu_tp_sge *sg_list; /* num_sge, copied at post */
	uint32_t num_sge;
};

/* A work completion (ibv_wc). */
struct ibemu_tp_cqe {
	uint64_t wr_id;
	uint32_t status; /* enum ibemu_wc_status */
	uint32_t opcode; /* enum ibemu_wc_opcode */
	uint32_t byte_len;
	uint32_t imm_data; /* host order */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags; /* IBEMU_WC_GRH, IBEMU_WC_WITH_IMM */
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	/* A receive whose message had SE set: it satisfies a CQ armed for
	 * solicited completions (IBA 11.4.2.2). */
	uint8_t solicited;
	/*
	 * The QP's 'uctx' (ibemu_tp_qp_init), and the work requests its
	 * queues hold once this completion is out (rq_queued: its SRQ's,
	 * when it has one): a layer that mirrors the queues in rings learns
	 * which slots are free again, as a provider does from its CQEs.
	 */
	void *qp_uctx;
	uint32_t sq_queued, rq_queued;
	/* A receive of an XRC SRQ: that SRQ's 'uctx' (its rq_queued are
	 * then the SRQ's, and qp_uctx is NULL: the XRC receive QP has no
	 * queue of its own). */
	void *srq_uctx;
};

/*
 * A place in registered memory, as the upper layer knows it: 'ctx' is the
 * upper context of the transport whose region it is (the caller's own, or
 * a peer's), 'mr' the handle the upper layer gave ibemu_tp_mr_reg(), 'addr'
 * an address inside the region (already checked against its bounds).
 */
struct ibemu_tp_mem {
	void *ctx;
	uint64_t mr;
	uint64_t addr;
};

/*
 * What the layer above provides. Missing ops are stubs (memory ops then
 * fail with -EOPNOTSUPP, which the transport reports as the error a
 * failed DMA gives), so the transport never tests for NULL. 'ctx' is the
 * one given to ibemu_tp_create(). Each op runs on the engine's thread.
 */
struct ibemu_tp_ops {
	/* A completion for CQ 'cq'; 'c' is valid during the call only. */
	void (*cqe)(void *ctx, uint32_t cq, const struct ibemu_tp_cqe *c);
	/* An affiliated or port event: 'id' is the QP number, the SRQ id or
	 * the port number (1-based), by the event. */
	void (*async)(void *ctx, enum ibemu_event_type event, uint32_t id);
	/* A MAD for the port's owner (engine.h's mad_recv), passed on. */
	void (*mad_recv)(void *ctx, uint32_t port,
			 const struct ibemu_mad_msg *m);
	/* Copies 'len' bytes from 'src' (maybe another transport's memory)
	 * to 'dst' (this transport's). 0, -EREMOTEIO if 'src' could not be
	 * read (its region was deregistered: a handle outlives its region in
	 * queued work, and reaches nothing then), other -errno for 'dst'. */
	int (*copy)(void *ctx, const struct ibemu_tp_mem *dst,
		    const struct ibemu_tp_mem *src, uint64_t len);
	/* Reads 'len' bytes of 'src' (this transport's memory) into 'buf':
	 * a UC or UD message's bytes, taken as its last packet leaves. 0, or
	 * -EREMOTEIO if 'src' could not be read (its region is gone). */
	int (*read)(void *ctx, const struct ibemu_tp_mem *src, void *buf,
		    uint64_t len);
	/* Writes 'len' bytes of 'buf' (inline data) to 'dst'. 0 or -errno
	 * (as for every op, a region that is gone fails). */
	int (*write)(void *ctx, const struct ibemu_tp_mem *dst, const void *buf,
		     uint64_t len);
	/* Executes an 8-byte atomic on 'm' (IBEMU_WR_ATOMIC_*), storing the
	 * value it found in *orig. */
	int (*atomic)(void *ctx, const struct ibemu_tp_mem *m, int opcode,
		      uint64_t compare_add, uint64_t swap, uint64_t *orig);
};

struct ibemu_tp_domain;
struct ibemu_tp;

/*
 * The transports of one engine share a domain: it owns the in-flight
 * message records that packets name (a record outlives its QP while a
 * packet naming it is still on the wire). Destroy it after its transports.
 */
int ibemu_tp_domain_create(struct ibemu_engine *e,
			   struct ibemu_tp_domain **out);
void ibemu_tp_domain_destroy(struct ibemu_tp_domain *d);

/*
 * Creates the transport of HCA node 'node' and attaches every port of the
 * node to it; 'ops' and 'ctx' are borrowed for its life. -EINVAL if 'node'
 * is not an HCA, -EBUSY if another owner holds one of its ports.
 */
int ibemu_tp_create(struct ibemu_tp_domain *d, uint32_t node,
		    const struct ibemu_tp_ops *ops, void *ctx,
		    struct ibemu_tp **out);
/* Detaches the ports and frees every object (no completions). */
void ibemu_tp_destroy(struct ibemu_tp *tp);

/* Protection domains: ids from 1; free fails with -EBUSY while used. */
int ibemu_tp_pd_alloc(struct ibemu_tp *tp, uint32_t *pd);
int ibemu_tp_pd_free(struct ibemu_tp *tp, uint32_t pd);

/*
 * Registers [addr, addr + len) of PD 'pd' with IBEMU_ACCESS_* 'access';
 * 'handle' is the upper layer's name for it (given back in struct
 * ibemu_tp_mem). Sets the keys (lkey == rkey here). Remote write or atomic
 * access without local write is -EINVAL (IBA 10.6.3.1).
 */
int ibemu_tp_mr_reg(struct ibemu_tp *tp, uint32_t pd, uint64_t addr,
		    uint64_t len, uint32_t access, uint64_t handle,
		    uint32_t *lkey, uint32_t *rkey);
int ibemu_tp_mr_dereg(struct ibemu_tp *tp, uint32_t lkey);

/* Completion queue ids (the rings live above); -EBUSY while used. */
int ibemu_tp_cq_create(struct ibemu_tp *tp, uint32_t *cq);
int ibemu_tp_cq_destroy(struct ibemu_tp *tp, uint32_t cq);

/* Shared receive queues (IBA 10.2.9). modify sets the limit (arms it). */
int ibemu_tp_srq_create(struct ibemu_tp *tp, uint32_t pd,
			const struct ibemu_tp_srq_attr *attr, uint32_t *srq);
int ibemu_tp_srq_modify(struct ibemu_tp *tp, uint32_t srq, uint32_t limit);
int ibemu_tp_srq_query(struct ibemu_tp *tp, uint32_t srq,
		       struct ibemu_tp_srq_attr *out);
int ibemu_tp_srq_destroy(struct ibemu_tp *tp, uint32_t srq);
int ibemu_tp_srq_post_recv(struct ibemu_tp *tp, uint32_t srq,
			   const struct ibemu_tp_recv_wr *wr);

/*
 * XRC domains (IBA Annex A14; transport_xrc.c). A domain is named by
 * 'key' (the upper layer's: a file's device and inode, as the kernel
 * shares a domain among the processes that open one file); key {0, 0}
 * opens a new domain no one else can open. Opening an existing domain
 * with 'excl' is -EINVAL; a missing one without 'create' is -EAGAIN (the
 * kernel's answers). Each open is closed once; a close that would free a
 * domain still holding XRC SRQs or XRC receive QPs is -EBUSY.
 */
int ibemu_tp_xrcd_open(struct ibemu_tp *tp, uint64_t key_dev, uint64_t key_ino,
		       int create, int excl, uint32_t *xrcd);
int ibemu_tp_xrcd_close(struct ibemu_tp *tp, uint32_t xrcd);
/*
 * An XRC SRQ in domain 'xrcd' whose receives complete on CQ 'cq'; its id
 * is its SRQ number (what XRCETH names). 'uctx' comes back in its CQEs
 * (srq_uctx). It is destroyed with ibemu_tp_srq_destroy().
 */
int ibemu_tp_xrc_srq_create(struct ibemu_tp *tp, uint32_t pd, uint32_t xrcd,
			    uint32_t cq, const struct ibemu_tp_srq_attr *attr,
			    void *uctx, uint32_t *srq);
/* The XRC domain of SRQ 'srq' (0: a basic SRQ); -EINVAL if none. */
int ibemu_tp_srq_xrcd(struct ibemu_tp *tp, uint32_t srq, uint32_t *xrcd);
/*
 * ibv_open_qp(): one more handle on XRC receive QP 'qpn' of domain
 * 'xrcd' (-EINVAL if it is not one). ibemu_tp_qp_destroy() on such a QP
 * drops a handle; the last one destroys it.
 */
int ibemu_tp_xrc_qp_open(struct ibemu_tp *tp, uint32_t qpn, uint32_t xrcd);

/*
 * Queue pairs. create sets *qpn (from 2: QP0 and QP1 are the ports' MAD
 * agents). modify follows IBA 10.3.1 and the kernel's
 * ib_modify_qp_is_ok(): a transition not in the table, a missing required
 * attribute or one it does not allow is -EINVAL, as is a bad value.
 * While a traffic study has a port (lent: no QP used it), a QP cannot be
 * created on it nor moved to it: -EBUSY. Moving to ERR completes every outstanding work request with
 * IBEMU_WC_WR_FLUSH_ERR.
 */
int ibemu_tp_qp_create(struct ibemu_tp *tp, const struct ibemu_tp_qp_init *init,
		       uint32_t *qpn);
int ibemu_tp_qp_modify(struct ibemu_tp *tp, uint32_t qpn,
		       const struct ibemu_tp_qp_attr *attr, uint32_t mask);
int ibemu_tp_qp_query(struct ibemu_tp *tp, uint32_t qpn,
		      struct ibemu_tp_qp_attr *out);
int ibemu_tp_qp_destroy(struct ibemu_tp *tp, uint32_t qpn);
/*
 * ibv_attach_mcast / ibv_detach_mcast (transport_mcast.c): UD QP 'qpn'
 * joins (leaves) the group of multicast GID 'gid' (16 bytes) and MLID
 * 'mlid'; a destroyed QP leaves its groups. 0, or -EINVAL (no such QP,
 * not UD, a GID or LID that is not multicast, detaching from a group it
 * is not in), -ENOMEM (past the IBEMU_TP_MAX_*MCAST* limits). Attaching
 * twice is no error, as the kernel's uverbs says.
 */
int ibemu_tp_mcast_attach(struct ibemu_tp *tp, uint32_t qpn, const uint8_t *gid,
			  uint16_t mlid);
int ibemu_tp_mcast_detach(struct ibemu_tp *tp, uint32_t qpn, const uint8_t *gid,
			  uint16_t mlid);

/*
 * Posts one work request at the engine's current time; it reaches the
 * wire IBEMU_TP_DOORBELL_PS later at the earliest. -EINVAL for a QP that
 * cannot post (RESET, INIT, RTR for sends; RESET for receives), too many
 * SGEs, inline data too long or an opcode the QP type lacks; -ENOMEM when
 * the queue is full. Errors of the request itself (keys, lengths) come as
 * error completions.
 */
int ibemu_tp_post_send(struct ibemu_tp *tp, uint32_t qpn,
		       const struct ibemu_tp_send_wr *wr);
int ibemu_tp_post_recv(struct ibemu_tp *tp, uint32_t qpn,
		       const struct ibemu_tp_recv_wr *wr);

/*
 * The same, for work stamped with the poster's virtual clock 'at' (the
 * time rule of docs/design.md §3: a process's clock may lie behind the
 * engine, which runs ahead by up to the doorbell delay). A send reaches
 * the wire no earlier than at + IBEMU_TP_DOORBELL_PS; a receive is there
 * for packets that arrive from at + IBEMU_TP_DOORBELL_PS on (a receive
 * doorbell takes as long as a send's), never before one posted earlier on
 * the same queue. Work stamped so late that this moment is past enters at
 * the engine's time (a send then still waits its doorbell delay). The
 * calls without a stamp post a send at the engine's time and a receive
 * there at once (IBEMU_TP_AT_ONCE).
 */
#define IBEMU_TP_AT_ONCE UINT64_MAX
int ibemu_tp_post_send_at(struct ibemu_tp *tp, uint32_t qpn,
			  const struct ibemu_tp_send_wr *wr, uint64_t at);
int ibemu_tp_post_recv_at(struct ibemu_tp *tp, uint32_t qpn,
			  const struct ibemu_tp_recv_wr *wr, uint64_t at);
int ibemu_tp_srq_post_recv_at(struct ibemu_tp *tp, uint32_t srq,
			      const struct ibemu_tp_recv_wr *wr, uint64_t at);

/*
 * Congestion control of the QPs as sources (IBA Annex A10.3.1), for those
 * who show it: the first QP numbered 'qpn' or above, with its port
 * (global index), the SL its data leaves on and its own source state
 * (borrowed: valid while the QP lives; read it through
 * ibemu_hca_cc_ccti(), which picks the port's SL state when control is
 * per SL). -ENOENT when no QP is left.
 */
struct ibemu_cc_src;
struct ibemu_tp_qp_cc {
	uint32_t qpn;
	uint32_t port;
	uint8_t type; /* enum ibemu_qp_type */
	uint8_t sl;
	uint16_t dlid; /* RC, UC: the remote LID; UD: 0 */
	uint32_t remote_qpn;
	uint32_t mtu; /* path MTU, bytes */
	struct ibemu_cc_src *src;
};
int ibemu_tp_qp_cc_next(struct ibemu_tp *tp, uint32_t qpn,
			struct ibemu_tp_qp_cc *out);

/* The engine the transport runs on, and its node. */
struct ibemu_engine *ibemu_tp_engine(const struct ibemu_tp *tp);
uint32_t ibemu_tp_node(const struct ibemu_tp *tp);

#endif

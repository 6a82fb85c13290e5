/* SPDX-License-Identifier: MIT */
/*
 * What an emulated HCA can hold, for the verbs library and the daemon
 * alike: the library reports these numbers in ibv_query_device() and
 * refuses what exceeds them (EINVAL, as a provider does), and the daemon,
 * which owns the QP transport, will refuse the same when a process asks
 * for more, so that a program tuned on ibemu sees the same limits on both
 * sides. They are of the order of a ConnectX HCA's where a program may
 * size itself from them (work requests, scatter/gather entries, RDMA READ
 * depth) and smaller where they only bound the daemon's memory (QPs, CQs,
 * MRs per process).
 *
 * A wire definition of proto/: libc headers only. Changing a number changes
 * what programs see; a smaller one may break programs that ran before.
 */
#ifndef IBEMU_VERBS_PROTO_H
#define IBEMU_VERBS_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "sess_proto.h"

/*
 * Multicast (ibv_device_attr's max_mcast_grp, max_mcast_qp_attach,
 * max_total_mcast_qp_attach): per HCA, as the daemon enforces them
 * (hca/transport.h's IBEMU_TP_MAX_*MCAST*).
 */
#define IBEMU_VERBS_MAX_MCAST_GRP	      1024u
#define IBEMU_VERBS_MAX_MCAST_QP_ATTACH	      240u
#define IBEMU_VERBS_MAX_TOTAL_MCAST_QP_ATTACH 4096u

/* Objects of one process (one ibv_context). */
#define IBEMU_VERBS_MAX_QP   4096u
#define IBEMU_VERBS_MAX_CQ   4096u
#define IBEMU_VERBS_MAX_SRQ  1024u
#define IBEMU_VERBS_MAX_PD   4096u
#define IBEMU_VERBS_MAX_MR   65536u
#define IBEMU_VERBS_MAX_AH   65536u
#define IBEMU_VERBS_MAX_XRCD 1024u /* XRC domain opens */
/*
 * The limits above hold for a process over all its contexts (the daemon
 * enforces them, attach/sess_limits.c), with these that ibv_device_attr
 * has no field for: contexts, CQs with a completion channel, mappings of
 * its rings and memory, and file descriptors the daemon holds for it.
 */
#define IBEMU_VERBS_MAX_CONTEXTS 16u
#define IBEMU_VERBS_MAX_CHANNELS 1024u
#define IBEMU_VERBS_MAX_MAPS	 16384u
#define IBEMU_VERBS_MAX_FDS \
	(IBEMU_VERBS_MAX_CHANNELS + 2 * IBEMU_VERBS_MAX_CONTEXTS)

/* Work queues: work requests per queue, scatter/gather entries per WR. */
#define IBEMU_VERBS_MAX_QP_WR	16384u
#define IBEMU_VERBS_MAX_SGE	30u
#define IBEMU_VERBS_MAX_SGE_RD	30u
#define IBEMU_VERBS_MAX_SRQ_WR	16384u
#define IBEMU_VERBS_MAX_SRQ_SGE 30u
#define IBEMU_VERBS_MAX_INLINE	256u
/*
 * The latest virtual time a WQE may be stamped with: 2^62 ps, about 53
 * days. Anything later is garbage (the daemon fails the QP): time plus a
 * delay must never wrap around 2^64.
 */
#define IBEMU_VERBS_MAX_STAMP_PS (1ull << 62)
/* Completion queue entries (a CQ holds up to this many). */
#define IBEMU_VERBS_MAX_CQE 65535u

/*
 * IBA 9.4.4 and 11.2.1: outstanding RDMA READ and atomic operations a QP
 * may have as responder (max_dest_rd_atomic) and initiate (max_rd_atomic).
 */
#define IBEMU_VERBS_MAX_QP_RD_ATOM	16u
#define IBEMU_VERBS_MAX_QP_INIT_RD_ATOM 16u

/* A registered region and a message (IBA: up to 2^31 bytes). */
#define IBEMU_VERBS_MAX_MR_SIZE (1ull << 40)
#define IBEMU_VERBS_MAX_MSG_SZ	(1u << 30)

/*
 * What ibv_query_device() reports of an HCA and what the library and the
 * daemon hold a work queue or CQ to, by its host interface (CA_QUERY's
 * hca_gen). A wire HCA has ibemu's own numbers above; a ConnectX preset
 * the adapter's, as `ibv_devinfo -v` prints them on real mlx5 adapters
 * (docs/hca-model.md, "Device limits", gives the sources). Object counts
 * (max_qp, max_cq, max_mr, max_pd, max_srq, max_ah) are the device's; a
 * process is still held to IBEMU_VERBS_MAX_* of them, the host's memory
 * the emulator has (ENOMEM beyond, as a host out of memory fails).
 */
struct ibemu_verbs_limits {
	uint32_t max_qp, max_cq, max_srq, max_pd, max_mr, max_ah;
	uint32_t max_qp_wr, max_sge, max_sge_rd, max_srq_wr, max_srq_sge;
	uint32_t max_cqe, max_inline, max_qp_rd_atom, max_qp_init_rd_atom;
	uint32_t max_res_rd_atom;
};

/* The mlx5 adapters' (ConnectX-4 to 7) work queue and CQ limits. */
#define IBEMU_VERBS_MLX5_QP_WR	32768u
#define IBEMU_VERBS_MLX5_SRQ_WR 32767u
#define IBEMU_VERBS_MLX5_CQE	4194303u
/* The largest of any kind's, what the rings are sized against. */
#define IBEMU_VERBS_ANY_QP_WR IBEMU_VERBS_MLX5_QP_WR

static inline const struct ibemu_verbs_limits *
ibemu_verbs_limits_of(uint32_t hca_gen)
{
	static const struct ibemu_verbs_limits wire = {
		.max_qp = IBEMU_VERBS_MAX_QP,
		.max_cq = IBEMU_VERBS_MAX_CQ,
		.max_srq = IBEMU_VERBS_MAX_SRQ,
		.max_pd = IBEMU_VERBS_MAX_PD,
		.max_mr = IBEMU_VERBS_MAX_MR,
		.max_ah = IBEMU_VERBS_MAX_AH,
		.max_qp_wr = IBEMU_VERBS_MAX_QP_WR,
		.max_sge = IBEMU_VERBS_MAX_SGE,
		.max_sge_rd = IBEMU_VERBS_MAX_SGE_RD,
		.max_srq_wr = IBEMU_VERBS_MAX_SRQ_WR,
		.max_srq_sge = IBEMU_VERBS_MAX_SRQ_SGE,
		.max_cqe = IBEMU_VERBS_MAX_CQE,
		.max_inline = IBEMU_VERBS_MAX_INLINE,
		.max_qp_rd_atom = IBEMU_VERBS_MAX_QP_RD_ATOM,
		.max_qp_init_rd_atom = IBEMU_VERBS_MAX_QP_INIT_RD_ATOM,
		.max_res_rd_atom =
			IBEMU_VERBS_MAX_QP * IBEMU_VERBS_MAX_QP_RD_ATOM,
	};
	/* ConnectX-5 (vendor_part_id 4119) and ConnectX-6 (4123); the same
	 * figures taken for ConnectX-4 and 7. max_srq_sge stays 30 (the
	 * adapters say 31): a receive WQE holds 30 entries here. */
	static const struct ibemu_verbs_limits mlx5 = {
		.max_qp = 262144,
		.max_cq = 16777216,
		.max_srq = 8388608,
		.max_pd = 16777216,
		.max_mr = 16777216,
		.max_ah = 2147483647,
		.max_qp_wr = IBEMU_VERBS_MLX5_QP_WR,
		.max_sge = 30,
		.max_sge_rd = 30,
		.max_srq_wr = IBEMU_VERBS_MLX5_SRQ_WR,
		.max_srq_sge = IBEMU_VERBS_MAX_SRQ_SGE,
		.max_cqe = IBEMU_VERBS_MLX5_CQE,
		.max_inline = IBEMU_VERBS_MAX_INLINE,
		.max_qp_rd_atom = 16,
		.max_qp_init_rd_atom = 16,
		.max_res_rd_atom = 4194304,
	};

	return hca_gen ? &mlx5 : &wire;
}

/* Pages a region may be made of: any multiple of 4 KiB. */
#define IBEMU_VERBS_PAGE_SIZE_CAP 0xfffffffffffff000ull

/*
 * Local CA ACK Delay (IBA 9.7.6.1.3, exponent: 4.096 us * 2^n): how long
 * the HCA may take to acknowledge, which peers add to their timeouts.
 */
#define IBEMU_VERBS_LOCAL_CA_ACK_DELAY 16u

/* Completion vectors: one event source per process for now. */
#define IBEMU_VERBS_COMP_VECTORS 1u

/*
 * --- The verbs stream and its shared rings ----------------------------
 *
 * ibv_open_device() opens a verbs stream on sess.sock (IBEMU_SESS_VERBS_OPEN
 * in sess_proto.h); the calls below are request/reply on it, one at a time,
 * the reply being the same type or ERROR. Object ids are those of the
 * HCA's transport (hca/transport.h); the daemon checks that each one it is
 * given belongs to the calling stream, so a wrong one is an errno, never
 * another process's object.
 *
 * The fast path is shared memory: the library creates one memfd per queue
 * (send queue, receive queue, SRQ, CQ) and one per context (its page: the
 * doorbell flag, the async event ring and the seam of the time rule), and
 * passes it with SCM_RIGHTS in the call that creates the object; both map
 * it. A send that finds the daemon asleep (the page's 'sleeps') kicks it
 * with a VERBS_KICK message on the stream (no reply). A ring is a header of three cache lines (the producer's index, the
 * consumer's index, fixed fields) and then 2^n fixed-size entries. The
 * indices run freely (uint32, wrapping); entry i is at i & (size - 1). The
 * daemon never trusts what it reads there: it keeps its own copy of the
 * size and of the index it owns, copies an entry out before checking it,
 * and a producer index more than 'size' ahead puts that queue, and only
 * it, into error.
 */
#define IBEMU_VERBS_CACHE_LINE 64u

struct ibemu_verbs_ring_hdr {
	uint32_t prod; /* written by the producer only */
	uint8_t pad0[IBEMU_VERBS_CACHE_LINE - 4];
	uint32_t cons; /* written by the consumer only */
	uint8_t pad1[IBEMU_VERBS_CACHE_LINE - 4];
	/*
	 * CQs only: 'arm' is set by ibv_req_notify_cq (1: next completion,
	 * 2: next solicited one) and cleared by the daemon when it raises
	 * the event, after which it adds one to 'events' and writes the
	 * completion channel's eventfd. 'error' is set by the daemon when the
	 * queue went into error (then nothing more is consumed or written).
	 */
	uint32_t arm;
	uint32_t events;
	uint32_t error;
	uint32_t size; /* entries, a power of two: informative */
	uint8_t pad2[IBEMU_VERBS_CACHE_LINE - 16];
};
_Static_assert(sizeof(struct ibemu_verbs_ring_hdr) ==
		       3 * IBEMU_VERBS_CACHE_LINE,
	       "a ring header is three cache lines");

/* Bytes of a ring of 'n' entries of 'sz' bytes. */
#define IBEMU_VERBS_RING_BYTES(n, sz) \
	(sizeof(struct ibemu_verbs_ring_hdr) + (size_t)(n) * (sz))

struct ibemu_verbs_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};
_Static_assert(sizeof(struct ibemu_verbs_sge) == 16, "sge is 16 bytes");

/* SGEs (or bytes of inline data) a send WQE has room for. */
#define IBEMU_VERBS_WQE_SGES 30u

/* A send work request in the SQ ring (ibv_send_wr, flattened). */
struct ibemu_verbs_swqe {
	uint64_t wr_id;
	uint32_t opcode; /* enum ibv_wr_opcode */
	uint32_t send_flags;
	uint32_t num_sge;    /* sge[] entries, or 0 with IBV_SEND_INLINE */
	uint32_t inline_len; /* bytes in data[] with IBV_SEND_INLINE */
	uint32_t imm_data;   /* host order */
	uint32_t rkey;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	/* UD: the address handle's vector and the destination. XRC send
	 * QPs: remote_qpn is the XRC SRQ number the request names. */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t port_num;
	uint8_t reserved[3];
	/* The process's virtual clock when it posted (the time rule). */
	uint64_t stamp_ps;
	union {
		struct ibemu_verbs_sge sge[IBEMU_VERBS_WQE_SGES];
		uint8_t data[IBEMU_VERBS_WQE_SGES *
			     sizeof(struct ibemu_verbs_sge)];
	};
};
_Static_assert(sizeof(struct ibemu_verbs_swqe) == 80 + 480,
	       "send WQE is 560 bytes");
_Static_assert(IBEMU_VERBS_MAX_INLINE <= IBEMU_VERBS_WQE_SGES * 16,
	       "inline data fits a send WQE");
_Static_assert(IBEMU_VERBS_MAX_SGE <= IBEMU_VERBS_WQE_SGES,
	       "the SGEs fit a send WQE");

/* A receive work request in an RQ or SRQ ring. */
struct ibemu_verbs_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t reserved;
	uint64_t stamp_ps; /* the process's virtual clock when it posted */
	struct ibemu_verbs_sge sge[IBEMU_VERBS_WQE_SGES];
};
_Static_assert(sizeof(struct ibemu_verbs_rwqe) == 504,
	       "receive WQE is 504 bytes");

/* A completion in a CQ ring (ibv_wc). */
struct ibemu_verbs_cqe {
	uint64_t wr_id;
	uint32_t status; /* enum ibv_wc_status */
	uint32_t opcode; /* enum ibv_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* host order */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint8_t solicited; /* the message had BTH SE (IBA 11.4.2.2) */
	uint8_t reserved;
	uint64_t time_ps; /* virtual time of the completion */
	uint8_t reserved2[8];
};
_Static_assert(sizeof(struct ibemu_verbs_cqe) == 64, "CQE is 64 bytes");

/* An async event in the context page's ring. */
struct ibemu_verbs_async {
	uint32_t event;	  /* enum ibv_event_type */
	uint32_t id;	  /* QP number, SRQ id, CQ id or port, by the event */
	uint64_t time_ps; /* virtual time of the event */
};
_Static_assert(sizeof(struct ibemu_verbs_async) == 16, "async is 16 bytes");

#define IBEMU_VERBS_ASYNC_ENTRIES 128u

/*
 * The context page (one memfd per open context, IBEMU_VERBS_PAGE bytes).
 * 'sleeps' is set by the daemon when its loop is about to block in the
 * kernel, and cleared when it wakes: a library that has just bumped a
 * send queue's producer index takes it (an atomic exchange to 0) and, if
 * it was set, writes a VERBS_KICK on its stream, so a post costs no system
 * call while the daemon runs, and one kick serves a sleep. Receive queues
 * and SRQs never kick: the daemon drains every ring before its engine
 * runs. The async ring
 * has its own header, with the same rules as the queues.
 *
 * The time rule (docs/design.md §3, 'rule' set by the daemon unless it
 * runs with --clock free): the daemon counts in 'handed' every completion
 * and async event it makes visible to the process: it bumps 'handing'
 * before it moves the ring's producer index (or writes an eventfd) and
 * 'handed' after. The library publishes its state: a process that finds
 * nothing to do (an empty CQ, a channel or async fd about to block, in
 * every thread that takes part in the context: verbs/waiting.c)
 * stores 'wait_seq' = 1 + the 'handed' it read before it looked, if
 * 'handing' read after it looked is the same (else a hand-off was under
 * way and it looks again); any other call stores 0 (running). The daemon counts the
 * process as waiting while 'wait_seq' == 1 + its own 'handed': a hand-off
 * after the process looked makes it running again, without a message.
 * 'clock_ps' is the process's virtual clock (the time of the completion
 * that last resumed it plus declared compute time), which bounds how far
 * the engine may run while it runs; 'calls' changes at every post and
 * every poll that returns work (the grace period watches it). A process
 * that goes from running to waiting kicks the daemon only if 'sleeps' is
 * set, as a post does.
 */
struct ibemu_verbs_page {
	uint32_t sleeps; /* set by the daemon, cleared by either */
	uint8_t pad0[IBEMU_VERBS_CACHE_LINE - 4];
	/* Written by the process. */
	uint64_t clock_ps;
	uint64_t wait_seq;
	uint64_t calls;
	/* 1 from a poll that took work until the next call: the process
	 * took a completion last (memory polling, docs/design.md §3). */
	uint32_t took;
	/* 1 while the thread that made the context wait spins in polls
	 * (a CQ): it sees a hand-off by itself, so the daemon may hand it
	 * the passing of time (a tick, sess_verbs_rule.c); 0 when it
	 * blocks (a completion channel, the async fd), as an older library
	 * leaves this word. */
	uint32_t spins;
	/* 1 + the 'handed' of the last hand-off before which the process
	 * took a thread asleep on a lock or a condition for one that
	 * waits: not deterministic (verbs/waiting.c). */
	uint64_t asleep_seq;
	/* Bumped after each post's producer index moves (send, receive,
	 * SRQ): the daemon looks at a context's rings only when it moved
	 * since its last full look, not at every QP on every turn. */
	uint64_t posts;
	/* The process's empty polls so far, stored every 64th: whether a
	 * wait that 'spins' still spins, and whether it spun enough for
	 * the next tick (attach/sess_verbs_rule.c). */
	uint64_t spin_polls;
	/* The 'handed' of the last hand-off the process's clock took in
	 * before a call or a read of its virtual clock (vtime/): it saw the
	 * time a tick handed it, and may be handed the next. */
	uint64_t observed;
	/* Written by the daemon. */
	uint64_t handed;
	uint64_t handing; /* one ahead of 'handed' during a hand-off */
	uint32_t rule;	  /* 1: the quiescence rule holds; 0: --clock free */
	uint32_t pad_rule;
	/* The virtual time of the last RDMA WRITE or atomic handed to the
	 * process while it was presumed to poll memory, stored before the
	 * bytes land: its clock is at least this from its next call on. */
	uint64_t land_ps;
	uint8_t pad2[IBEMU_VERBS_CACHE_LINE - 32];
	struct ibemu_verbs_ring_hdr async_hdr;
	struct ibemu_verbs_async async[IBEMU_VERBS_ASYNC_ENTRIES];
};
#define IBEMU_VERBS_PAGE 4096u
/*
 * A spinning wait earns its next tick (a second of virtual time the
 * daemon hands it) by a call or a read of its clock after it took in the
 * last ('observed'), or else by this many empty polls: the fabric waits
 * at the tick's time until it is earned, so a program sees every tick,
 * one at a time, however the host schedules it. A multiple of the 64
 * polls between stores of 'spin_polls'; the library kicks a sleeping
 * daemon at each multiple, and when 'observed' moves.
 */
#define IBEMU_VERBS_TICK_POLLS 4096u
_Static_assert(IBEMU_VERBS_TICK_POLLS % 64 == 0,
	       "a tick is earned at a store of spin_polls");
/* Where raw clients (tests/integration/test_hostile_rings.py) find it. */
_Static_assert(offsetof(struct ibemu_verbs_page, spins) == 92,
	       "spins fills the hole before asleep_seq");
_Static_assert(offsetof(struct ibemu_verbs_page, posts) == 104,
	       "posts is at byte 104 of the page");
_Static_assert(offsetof(struct ibemu_verbs_page, spin_polls) == 112,
	       "spin_polls is at byte 112 of the page");
_Static_assert(offsetof(struct ibemu_verbs_page, handed) ==
		       2 * IBEMU_VERBS_CACHE_LINE,
	       "the daemon's words start the page's third cache line");
_Static_assert(sizeof(struct ibemu_verbs_page) <= IBEMU_VERBS_PAGE,
	       "the context page is one page");

/* --- calls on a verbs stream (payloads; replies carry the same) --- */

/*
 * VERBS_OPEN, with two fds (the context page's memfd, sealed against
 * shrinking as every ring's memfd must be, and the async eventfd the
 * daemon writes). 'probe_addr' is the
 * address of a uint64 holding 'probe' in the process: the daemon reads it
 * with process_vm_readv() to prove that it can reach the process's memory
 * (or says why not).
 */
struct ibemu_verbs_open {
	struct ibemu_sess_bind bind;
	uint64_t probe_addr;
	uint64_t probe;
};
_Static_assert(sizeof(struct ibemu_verbs_open) == 88, "open is 88 bytes");

/*
 * PD_ALLOC (-> id), PD_FREE, MR_DEREG (id: the lkey), CQ_DESTROY,
 * QP_DESTROY, SRQ_DESTROY, SRQ_MODIFY (arg: the limit).
 */
struct ibemu_verbs_obj {
	uint32_t id;
	uint32_t arg;
};
_Static_assert(sizeof(struct ibemu_verbs_obj) == 8, "obj is 8 bytes");

/* MCAST_ATTACH, MCAST_DETACH: ibv_attach_mcast(qp, gid, lid). */
struct ibemu_verbs_mcast {
	uint32_t qpn;
	uint16_t lid;
	uint16_t reserved;
	uint8_t gid[16]; /* as the program gave it (network order) */
};
_Static_assert(sizeof(struct ibemu_verbs_mcast) == 24, "mcast is 24 bytes");

/*
 * MR_REG. When 'shm_len' is not 0 the message carries a memfd (sealed
 * against shrinking) whose bytes from 'shm_off' are the process's memory
 * at [shm_addr, shm_addr + shm_len): pages of the region the library moved
 * onto shared memory (verbs/mr_share.c), which the daemon maps to move
 * payload with memcpy. All three are page multiples; the window may cover
 * only part of the region.
 */
struct ibemu_verbs_mr_req {
	uint64_t addr;
	uint64_t len;
	uint32_t pd;
	uint32_t access;
	uint32_t lkey; /* reply */
	uint32_t rkey; /* reply */
	uint64_t shm_addr;
	uint64_t shm_len;
	uint64_t shm_off;
};
_Static_assert(sizeof(struct ibemu_verbs_mr_req) == 56,
	       "mr request is 56 bytes");

/* CQ_CREATE, with the ring's memfd and, if 'channel', the channel's fd. */
struct ibemu_verbs_cq_req {
	uint32_t entries; /* ring size: a power of two */
	uint32_t channel;
	uint32_t id; /* reply */
	uint32_t reserved;
};
_Static_assert(sizeof(struct ibemu_verbs_cq_req) == 16, "cq is 16 bytes");

/*
 * QP_CREATE, with the SQ ring's memfd, then the RQ's unless 'srq'. The
 * ring sizes are powers of two at least max_send_wr and max_recv_wr.
 * IBV_QPT_XRC_SEND: the SQ's memfd only, no recv_cq, srq nor receive
 * sizes. IBV_QPT_XRC_RECV: no memfd, 'pd' is the XRC domain's handle
 * (XRCD_OPEN), and every other field is 0.
 */
struct ibemu_verbs_qp_req {
	uint32_t qp_type; /* enum ibv_qp_type */
	uint32_t sq_sig_all;
	uint32_t pd;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t srq; /* 0: none */
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t sq_entries;
	uint32_t rq_entries;
	uint32_t qpn; /* reply */
};
_Static_assert(sizeof(struct ibemu_verbs_qp_req) == 56, "qp is 56 bytes");

/* QP_MODIFY and QP_QUERY (reply): ibv_qp_attr's fields the HCA uses. */
struct ibemu_verbs_qp_attr {
	uint32_t qpn;
	uint32_t mask; /* enum ibv_qp_attr_mask */
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint16_t pkey_index;
	uint16_t dlid;
	uint8_t qp_state;
	uint8_t cur_qp_state;
	uint8_t path_mtu;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t ah_port_num;
	uint8_t reserved;
};
_Static_assert(sizeof(struct ibemu_verbs_qp_attr) == 48, "qp attr is 48 bytes");

/* SRQ_CREATE (with the ring's memfd) and SRQ_QUERY (by id). */
struct ibemu_verbs_srq_req {
	uint32_t pd;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t entries; /* ring size: a power of two */
	uint32_t id;	  /* reply */
};
_Static_assert(sizeof(struct ibemu_verbs_srq_req) == 24, "srq is 24 bytes");

/*
 * XRCD_OPEN (ibv_open_xrcd): with the file's descriptor when 'has_fd' (a
 * domain is shared by the contexts of one HCA that open the same file,
 * as the kernel shares it by inode), without one for a domain of its
 * own. 'oflags': O_CREAT and O_EXCL. 'handle' (reply) names this open
 * (XRCD_CLOSE, XSRQ_CREATE, QP_CREATE of IBV_QPT_XRC_RECV, QP_OPEN);
 * 'xrcd' (reply) is the domain's number on the HCA, the same for every
 * open of one file.
 */
struct ibemu_verbs_xrcd_req {
	uint32_t oflags;
	uint32_t has_fd;
	uint32_t handle; /* reply */
	uint32_t xrcd;	 /* reply */
};
_Static_assert(sizeof(struct ibemu_verbs_xrcd_req) == 16, "xrcd is 16 bytes");

/* XSRQ_CREATE (ibv_create_srq_ex, IBV_SRQT_XRC), with the ring's memfd:
 * the reply's 'id' is also its SRQ number (ibv_get_srq_num). */
struct ibemu_verbs_xsrq_req {
	struct ibemu_verbs_srq_req srq;
	uint32_t xrcd; /* the handle of an open */
	uint32_t cq;
};
_Static_assert(sizeof(struct ibemu_verbs_xsrq_req) == 32, "xsrq is 32 bytes");

/* QP_OPEN (ibv_open_qp): a handle on XRC receive QP 'qpn' of the domain
 * open 'xrcd' names. */
struct ibemu_verbs_qp_open {
	uint32_t qpn;
	uint32_t xrcd;
	uint32_t qp_type; /* IBV_QPT_XRC_RECV: the only one */
	uint32_t reserved;
};
_Static_assert(sizeof(struct ibemu_verbs_qp_open) == 16, "qp open is 16 bytes");

#endif

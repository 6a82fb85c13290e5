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

#include <stdint.h>

/* Objects of one process (one ibv_context). */
#define IBEMU_VERBS_MAX_QP  4096u
#define IBEMU_VERBS_MAX_CQ  4096u
#define IBEMU_VERBS_MAX_SRQ 1024u
#define IBEMU_VERBS_MAX_PD  4096u
#define IBEMU_VERBS_MAX_MR  65536u
#define IBEMU_VERBS_MAX_AH  65536u

/* Work queues: work requests per queue, scatter/gather entries per WR. */
#define IBEMU_VERBS_MAX_QP_WR	16384u
#define IBEMU_VERBS_MAX_SGE	30u
#define IBEMU_VERBS_MAX_SGE_RD	30u
#define IBEMU_VERBS_MAX_SRQ_WR	16384u
#define IBEMU_VERBS_MAX_SRQ_SGE 30u
#define IBEMU_VERBS_MAX_INLINE	256u
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

/* Pages a region may be made of: any multiple of 4 KiB. */
#define IBEMU_VERBS_PAGE_SIZE_CAP 0xfffffffffffff000ull

/*
 * Local CA ACK Delay (IBA 9.7.6.1.3, exponent: 4.096 us * 2^n): how long
 * the HCA may take to acknowledge, which peers add to their timeouts.
 */
#define IBEMU_VERBS_LOCAL_CA_ACK_DELAY 16u

/* Completion vectors: one event source per process for now. */
#define IBEMU_VERBS_COMP_VECTORS 1u

#endif

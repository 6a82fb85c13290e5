/* SPDX-License-Identifier: MIT */
/*
 * What each libibverbs call costs the calling process in virtual time
 * (docs/design.md §3, "No call holds time still"): one table, read by the
 * library (cost.c charges it to the process's clock) and by the test
 * clients that check it. A program that keeps calling moves its clock,
 * and with it the fabric, forward; one that waits moves nothing.
 *
 * The figures model a ConnectX-class (mlx5) HCA under a Linux kernel.
 * Where no published per-call measurement exists, the figure is an
 * estimate and its comment says from what: the data path from the
 * well-known orders of magnitude (a post is a WQE write plus an MMIO
 * doorbell, a poll a cache-line read), the control path from what the
 * call does in the kernel (a system call, a firmware command).
 * KRCORE (Wei et al., USENIX ATC 2022, section 2) measures that setting
 * up one RC connection through verbs takes "several or tens of
 * milliseconds", most of it in QP creation and the three modify calls;
 * Mietke et al. (Euro-Par 2006) find memory registration linear in the
 * pages pinned above a fixed cost. docs/verbs.md prints this table.
 */
#ifndef IBEMU_VERBS_COST_H
#define IBEMU_VERBS_COST_H

#include <stdint.h>

enum ibemu_verbs_cost {
	IBEMU_VCOST_POST_SEND,
	IBEMU_VCOST_POST_RECV,
	IBEMU_VCOST_POLL_HIT,
	IBEMU_VCOST_POLL_MISS,
	IBEMU_VCOST_REQ_NOTIFY,
	IBEMU_VCOST_GET_EVENT,
	IBEMU_VCOST_QUERY_DEVICE,
	IBEMU_VCOST_QUERY_PORT,
	IBEMU_VCOST_QUERY_GID,
	IBEMU_VCOST_QUERY_PKEY,
	IBEMU_VCOST_OPEN_DEVICE,
	IBEMU_VCOST_CLOSE_DEVICE,
	IBEMU_VCOST_PD_ALLOC,
	IBEMU_VCOST_PD_FREE,
	IBEMU_VCOST_MR_REG,
	IBEMU_VCOST_MR_DEREG,
	IBEMU_VCOST_CQ_CREATE,
	IBEMU_VCOST_CQ_DESTROY,
	IBEMU_VCOST_CHANNEL_CREATE,
	IBEMU_VCOST_CHANNEL_DESTROY,
	IBEMU_VCOST_QP_CREATE,
	IBEMU_VCOST_QP_DESTROY,
	IBEMU_VCOST_QP_TO_INIT,
	IBEMU_VCOST_QP_TO_RTR,
	IBEMU_VCOST_QP_TO_RTS,
	IBEMU_VCOST_QP_MODIFY,
	IBEMU_VCOST_QP_QUERY,
	IBEMU_VCOST_SRQ_CREATE,
	IBEMU_VCOST_SRQ_DESTROY,
	IBEMU_VCOST_SRQ_MODIFY,
	IBEMU_VCOST_SRQ_QUERY,
	IBEMU_VCOST_AH_CREATE,
	IBEMU_VCOST_AH_DESTROY,
	IBEMU_VCOST_KV_PUT,
	IBEMU_VCOST_KV_GET,
	IBEMU_VCOST_COUNT,
};

/* One row: a fixed part, and a part per unit (WQE, page) where it has one. */
struct ibemu_verbs_cost_row {
	const char *call;
	uint64_t ps;
	uint64_t unit_ps;
};

#define IBEMU_NS 1000ull
#define IBEMU_US 1000000ull

static const struct ibemu_verbs_cost_row ibemu_verbs_costs[] = {
	/* Estimate: a WQE written to the send queue and, per post list,
	 * one MMIO doorbell (BlueFlame); perftest's ib_send_lat shows about
	 * 0.1-0.3 us of CPU per post on ConnectX-4/5. All per WQE. */
	[IBEMU_VCOST_POST_SEND] = {"ibv_post_send", 0, 200 * IBEMU_NS},
	/* Estimate: a receive WQE and a doorbell record write (no MMIO). */
	[IBEMU_VCOST_POST_RECV] = {"ibv_post_recv", 0, 100 * IBEMU_NS},
	/* Estimate: CQEs read from host memory, consumer index updated. */
	[IBEMU_VCOST_POLL_HIT] = {"ibv_poll_cq (hit)", 100 * IBEMU_NS, 0},
	/* 0 by the rule, not by measurement: an empty poll is a wait, and
	 * the time spent waiting ends at the completion that resumes the
	 * process. A cost here would make the clock count empty polls,
	 * whose number is a matter of wall time. */
	[IBEMU_VCOST_POLL_MISS] = {"ibv_poll_cq (miss)", 0, 0},
	/* 0 by the rule: arming a CQ (a doorbell record write, tens of
	 * ns) begins a wait, and the wait absorbs it; charged, it would make
	 * the clock of a process whose threads wait and wake at once depend
	 * on how they interleave. */
	[IBEMU_VCOST_REQ_NOTIFY] = {"ibv_req_notify_cq", 0, 0},
	/* Estimate: the read() of the channel's fd that returns the event
	 * (a system call), charged once the process wakes. */
	[IBEMU_VCOST_GET_EVENT] = {"ibv_get_cq_event, ibv_get_async_event",
				   1 * IBEMU_US, 0},
	/* Estimate: a uverbs ioctl answered from the driver's cached caps. */
	[IBEMU_VCOST_QUERY_DEVICE] = {"ibv_query_device", 2 * IBEMU_US, 0},
	/* Estimate: a uverbs ioctl answered from the port's cached
	 * PortInfo; 1 us a call, so that a loop of 1,000 queries spans a
	 * link retraining (1 ms). */
	[IBEMU_VCOST_QUERY_PORT] = {"ibv_query_port", 1 * IBEMU_US, 0},
	/* Estimate: rdma-core reads the GID and P_Key tables from sysfs
	 * (an open, a read and a close). */
	[IBEMU_VCOST_QUERY_GID] = {"ibv_query_gid", 2 * IBEMU_US, 0},
	[IBEMU_VCOST_QUERY_PKEY] = {"ibv_query_pkey", 2 * IBEMU_US, 0},
	/* Estimate: open of the uverbs device, context and UAR allocation
	 * by firmware command, UAR pages mapped. */
	[IBEMU_VCOST_OPEN_DEVICE] = {"ibv_open_device", 200 * IBEMU_US, 0},
	[IBEMU_VCOST_CLOSE_DEVICE] = {"ibv_close_device", 100 * IBEMU_US, 0},
	/* Estimate: one system call and one firmware command each. */
	[IBEMU_VCOST_PD_ALLOC] = {"ibv_alloc_pd", 5 * IBEMU_US, 0},
	[IBEMU_VCOST_PD_FREE] = {"ibv_dealloc_pd", 5 * IBEMU_US, 0},
	/* Mietke et al. (Euro-Par 2006): a fixed cost (the firmware's
	 * MKey) plus one per page pinned and translated; the figures are
	 * estimates for a current kernel (pin_user_pages, 4 KiB pages). */
	[IBEMU_VCOST_MR_REG] = {"ibv_reg_mr (+ per 4 KiB page)", 30 * IBEMU_US,
				250 * IBEMU_NS},
	[IBEMU_VCOST_MR_DEREG] = {"ibv_dereg_mr", 20 * IBEMU_US, 0},
	/* Estimate: the buffer allocated and registered, a firmware
	 * CREATE_CQ / DESTROY_CQ. */
	[IBEMU_VCOST_CQ_CREATE] = {"ibv_create_cq", 50 * IBEMU_US, 0},
	[IBEMU_VCOST_CQ_DESTROY] = {"ibv_destroy_cq", 30 * IBEMU_US, 0},
	/* Estimate: an fd from the kernel, no firmware command. */
	[IBEMU_VCOST_CHANNEL_CREATE] = {"ibv_create_comp_channel", 5 * IBEMU_US,
					0},
	[IBEMU_VCOST_CHANNEL_DESTROY] = {"ibv_destroy_comp_channel",
					 5 * IBEMU_US, 0},
	/* KRCORE: a verbs RC connection takes milliseconds, most of it
	 * QP creation and its transitions; these estimates sum to 0.33 ms
	 * for create + INIT + RTR + RTS, the lower end. */
	[IBEMU_VCOST_QP_CREATE] = {"ibv_create_qp", 150 * IBEMU_US, 0},
	[IBEMU_VCOST_QP_DESTROY] = {"ibv_destroy_qp", 100 * IBEMU_US, 0},
	[IBEMU_VCOST_QP_TO_INIT] = {"ibv_modify_qp to INIT", 30 * IBEMU_US, 0},
	[IBEMU_VCOST_QP_TO_RTR] = {"ibv_modify_qp to RTR", 100 * IBEMU_US, 0},
	[IBEMU_VCOST_QP_TO_RTS] = {"ibv_modify_qp to RTS", 50 * IBEMU_US, 0},
	/* Estimate: any other modify (to ERR, RESET, SQD; attributes only). */
	[IBEMU_VCOST_QP_MODIFY] = {"ibv_modify_qp (other)", 30 * IBEMU_US, 0},
	/* Estimate: a firmware QUERY_QP. */
	[IBEMU_VCOST_QP_QUERY] = {"ibv_query_qp", 5 * IBEMU_US, 0},
	/* Estimate: as a CQ and a QP's receive side. */
	[IBEMU_VCOST_SRQ_CREATE] = {"ibv_create_srq", 100 * IBEMU_US, 0},
	[IBEMU_VCOST_SRQ_DESTROY] = {"ibv_destroy_srq", 50 * IBEMU_US, 0},
	[IBEMU_VCOST_SRQ_MODIFY] = {"ibv_modify_srq", 10 * IBEMU_US, 0},
	[IBEMU_VCOST_SRQ_QUERY] = {"ibv_query_srq", 5 * IBEMU_US, 0},
	/* Estimate: mlx5 builds an IB address vector in user space. */
	[IBEMU_VCOST_AH_CREATE] = {"ibv_create_ah", 1 * IBEMU_US, 0},
	[IBEMU_VCOST_AH_DESTROY] = {"ibv_destroy_ah", 1 * IBEMU_US, 0},
	/* The bootstrap of 'ibemu run' (ibemu.h). Estimate: a put or a get
	 * is a request to the local PMI server (PMIx_Put, PMIx_Get of a
	 * value already fetched) over a Unix socket, a round trip of a few
	 * microseconds; the fence and the barrier are collectives, costed
	 * by the daemon (proto/sess_proto.h, IBEMU_SESS_SYNC_*). */
	[IBEMU_VCOST_KV_PUT] = {"ibemu_kv_put", 2 * IBEMU_US, 0},
	[IBEMU_VCOST_KV_GET] = {"ibemu_kv_get", 2 * IBEMU_US, 0},
};
_Static_assert(sizeof(ibemu_verbs_costs) / sizeof(ibemu_verbs_costs[0]) ==
		       IBEMU_VCOST_COUNT,
	       "one row per cost");

/* The cost of call 'c' with 'units' WQEs or pages, in picoseconds. */
static inline uint64_t ibemu_verbs_cost_ps(enum ibemu_verbs_cost c,
					   uint64_t units)
{
	return ibemu_verbs_costs[c].ps + units * ibemu_verbs_costs[c].unit_ps;
}

#endif

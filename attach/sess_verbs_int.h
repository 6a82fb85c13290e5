// SPDX-License-Identifier: MIT
/*
 * Verbs streams inside the daemon: what an ibv_context of an attached
 * process is, shared by the files that serve it. sess_verbs.c answers the
 * control calls of the stream (PD, MR, CQ, QP, SRQ), sess_verbs_ring.c
 * reads the work rings the process shares with the daemon,
 * sess_verbs_tp.c is the transport's upper layer (completions, async
 * events, payload) and sess_verbs_rule.c the quiescence time rule and the
 * loop's doorbell protocol.
 */
#ifndef IBEMU_DAEMON_SESS_VERBS_INT_H
#define IBEMU_DAEMON_SESS_VERBS_INT_H

#include "sess.h"

/* enum ibv_event_type's IBV_EVENT_CQ_ERR (transport.h has no CQ events:
 * the rings are the daemon's). */
#define EVENT_CQ_ERR 0
/* ... and IBV_EVENT_SRQ_ERR: an SRQ whose ring is garbage. */
#define IBEMU_EVENT_SRQ_ERR 14

/* A ring mapped from a process's memfd. */
struct vring {
	void *map;
	size_t bytes;
	struct ibemu_verbs_ring_hdr *hdr;
	uint8_t *ents;
	uint32_t size; /* entries: the daemon's copy, never re-read */
	uint32_t esz;
	uint32_t idx; /* the daemon's index: cons of a queue, prod of a CQ */
};

struct vcq {
	uint32_t id;
	int chan_fd; /* the completion channel's eventfd, or -1 */
	int error;
	uint32_t published; /* the producer index the process may see */
	struct vring ring;
};

/*
 * A QP's rings hold at most what it was created for: 'cons' of a ring
 * header counts the work requests the transport retired (updated at each
 * of the QP's completions, as a provider frees slots from its CQEs), and
 * the library posts no more than max_*_wr beyond it.
 */
struct vqp {
	uint32_t qpn;
	uint32_t srq; /* 0: own receive queue */
	/* An XRC receive QP: the handle of the domain open it counts on
	 * (it has no rings); 0 for every other QP. An XRC send QP has its
	 * send queue only (rq unmapped). */
	uint32_t xrcd;
	uint32_t max_send_wr, max_recv_wr;
	int error;
	struct vring sq, rq;
};

struct vsrq {
	uint32_t id;
	uint32_t xrcd; /* an XRC SRQ: its domain open's handle; else 0 */
	uint32_t max_wr;
	int error;
	struct vring ring;
};

/* An XRC domain the stream opened (sess_verbs_xrc.c): 'handle' names
 * this open, 'xrcd' the domain in the transport; 'objs' counts the XRC
 * SRQs and receive QPs made or opened through it. */
struct vxrcd {
	uint32_t handle;
	uint32_t xrcd;
	uint32_t objs;
};

/* A region of a stream: its key in the transport, its handle in
 * sess_verbs_mem.c. */
struct vmr_key {
	uint32_t lkey;
	uint64_t handle;
	int mapped; /* it has a window of shared pages (a mapping) */
	int remote; /* registered for remote writes or atomics */
};

struct ibemu_sess_verbs {
	struct ibemu_sess_conn *c; /* borrowed: the stream owns this */
	struct ibemu_sess_hca *hca;
	struct ibemu_sess_verbs *next; /* on hca->verbs */
	struct ibemu_verbs_page *page;
	int async_fd;
	uint32_t *pds, npds, pds_cap;
	struct vmr_key *mrs; /* its regions */
	uint32_t nmrs, mrs_cap;
	struct ibemu_vs_files *files; /* its regions' files (sess_verbs_mem) */
	int pidfd, pidfd_tried;	      /* the process (pidfd_open), or -1 */
	struct vcq **cqs;
	uint32_t ncqs, cqs_cap;
	struct vqp **qps;
	uint32_t nqps, qps_cap;
	struct vsrq **srqs;
	uint32_t nsrqs, srqs_cap;
	struct vxrcd *xrcds;
	uint32_t nxrcds, xrcds_cap, xrcd_next;
	struct ibemu_log_limit garbage_log;
	struct ibemu_sess_proc *proc; /* its process's share (sess_limits) */
	struct ibemu_sess_cost held;  /* what this context holds of it */
	/* The time rule's view of its process (clock/rule.h), and its main
	 * thread's task clock for memory polling (sess_verbs_rule.c): a
	 * perf_event fd, -1 if none could be opened. */
	struct ibemu_rule_proc rule;
	int cpu_fd, cpu_fd_tried;
	/* The page's 'posts' at the last look that took every ring's work,
	 * and whether a look since stopped at the turn's budget. */
	uint64_t posts_seen;
	int drain_left;
	/* Time passing for a process that spins in verbs with nothing to
	 * take (sess_verbs_rule.c): the hand-off armed for its wait
	 * 'tick_seq' from clock 'tick_from', the page's spin_polls when it
	 * was armed and the
	 * 'handed' of the last tick given (it is earned by the page's
	 * 'observed' reaching that, or IBEMU_VERBS_TICK_POLLS more polls),
	 * whether the fabric waits at its time until it is earned, whether
	 * it came due while the process had stopped polling, and whether
	 * the log said so. */
	struct ibemu_due tick;
	uint64_t tick_seq, tick_from, tick_polls, tick_handed;
	int tick_held, tick_stalled, tick_logged;
	/* The page's spin_polls as last seen, and when it last moved (wall
	 * ms): whether the process still polls. */
	uint64_t polls_mark, polls_mark_ms;
};

static inline struct ibemu_daemon *vs_daemon(struct ibemu_sess_verbs *v)
{
	return v->c->s->d;
}

/* The topology name of the HCA stream 'v' is bound to. */
static inline const char *ibemu__vs_host(const struct ibemu_sess_verbs *v)
{
	return v->c->s->d->topo->nodes[v->c->node].name;
}

static inline int ibemu__vs_rule_on(const struct ibemu_daemon *d)
{
	return ibemu_rule_on(&d->rule);
}

/* sess_verbs.c: the stream's objects */
struct vcq *ibemu__vs_cq_find(struct ibemu_sess_verbs *v, uint32_t id, int *at);
struct vqp *ibemu__vs_qp_find(struct ibemu_sess_verbs *v, uint32_t qpn,
			      int *at);
struct vsrq *ibemu__vs_srq_find(struct ibemu_sess_verbs *v, uint32_t id,
				int *at);

/* sess_mcast.c: MCAST_ATTACH, MCAST_DETACH; 0 or -errno. */
int ibemu__vs_mcast_attach(struct ibemu_sess_verbs *v,
			   const struct ibemu_verbs_mcast *r);
int ibemu__vs_mcast_detach(struct ibemu_sess_verbs *v,
			   const struct ibemu_verbs_mcast *r);

/* sess_verbs_xrc.c: XRC domains */
/* XRCD_OPEN, with the file's fd (closed here) when r->has_fd. */
int ibemu__vs_xrcd_open(struct ibemu_sess_verbs *v,
			struct ibemu_verbs_xrcd_req *r, int *fds, int nfds);
/* XRCD_CLOSE: -EBUSY while an XRC SRQ or QP made through it lives. */
int ibemu__vs_xrcd_close(struct ibemu_sess_verbs *v, uint32_t handle);
struct vxrcd *ibemu__vs_xrcd_find(struct ibemu_sess_verbs *v, uint32_t handle);
/* One object more (+1) or less (-1) made through open 'handle'. */
void ibemu__vs_xrcd_use(struct ibemu_sess_verbs *v, uint32_t handle, int d);
/* The stream closes: its opens go (after its objects). */
void ibemu__vs_xrcd_close_all(struct ibemu_sess_verbs *v);

/* sess_verbs_ring.c: rings, errors, draining */
int ibemu__vs_ring_map(struct vring *r, int fd, uint32_t n, uint32_t esz,
		       uint32_t max);
void ibemu__vs_ring_unmap(struct vring *r);
void *ibemu__vs_ring_ent(const struct vring *r, uint32_t i);
void ibemu__vs_async_raise(struct ibemu_sess_verbs *v, uint32_t event,
			   uint32_t id);
void ibemu__vs_cq_fail(struct ibemu_sess_verbs *v, struct vcq *q,
		       const char *why);
int ibemu__vs_verbs_pending(struct ibemu_sess_verbs *v);
/* Completion 'e' of QP 'q' of 'v' retired work: free its ring slots. */
void ibemu__vs_retire(struct ibemu_sess_verbs *v, struct vqp *q,
		      const struct ibemu_tp_cqe *e);

/* sess_verbs_rule.c: hand-offs to the process (docs/design.md §3) */
int ibemu__vs_handoff_begin(struct ibemu_sess_verbs *v);
/*
 * An RDMA WRITE or atomic is about to land in the memory of process
 * 'pid' on HCA 'h': a stream presumed to poll memory gets it as a
 * completion (docs/design.md §3). Called before the bytes land.
 */
void ibemu__vs_mem_landing(struct ibemu_sess_hca *h, pid_t pid);
/* Memory polling's timer, with the doorbell's hooks. */
void ibemu__vs_mempoll_start(struct ibemu_sess_server *s);
void ibemu__vs_mempoll_stop(struct ibemu_sess_server *s);
/* Lets go of what the rule holds of stream 'v' (its task clock). */
void ibemu__vs_rule_close(struct ibemu_sess_verbs *v);
void ibemu__vs_handoff(struct ibemu_sess_verbs *v, int was_waiting, uint64_t t);

/* sess_verbs_mem.c: payload between processes */
/* Reads 'len' bytes at 'addr' of process 'pid'; 0 or -EFAULT. */
int ibemu__vs_vm_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* What the regions of one stream may hold of file and shared mappings:
 * files open (each once), and pieces of regions in them. */
#define IBEMU_SESS_FILES_MAX  64
#define IBEMU_SESS_PIECES_MAX 65536
/*
 * The handle of a region stream 'v' registers, for ibemu_tp_mr_reg():
 * with the memfd 'fd' of its shared pages mapped, or -1 for none, and the
 * files of its shared file mappings held. 0, -EINVAL for a memfd that is
 * not as m->shm_* says (logged), -EFAULT for memory the process has not
 * mapped with the access the region needs, or -ENOMEM (memory, or past
 * the bounds above, as the kernel's RLIMIT_MEMLOCK gives).
 */
int ibemu__vs_mr_add(struct ibemu_sess_verbs *v,
		     const struct ibemu_verbs_mr_req *m, int fd,
		     uint64_t *handle);
/* Lets go of what the regions of stream 'v' left (its pidfd); they are
 * all gone. */
void ibemu__vs_mem_close(struct ibemu_sess_verbs *v);
/* The region of stream 'v' is gone: its mapping and files too; queued
 * work that names it reaches nothing (its accesses fail). */
void ibemu__vs_mr_drop(struct ibemu_sess_verbs *v, uint64_t handle);
/* The transport's copy, read, write and atomic ops: an access to a region
 * that is gone fails, copy's and read's with -EREMOTEIO if it is the
 * source's. */
int ibemu__vs_copy(void *ctx, const struct ibemu_tp_mem *dst,
		   const struct ibemu_tp_mem *src, uint64_t len);
int ibemu__vs_read(void *ctx, const struct ibemu_tp_mem *src, void *buf,
		   uint64_t len);
int ibemu__vs_write(void *ctx, const struct ibemu_tp_mem *dst, const void *buf,
		    uint64_t len);
/* Copies into a process's memory in address order: once its last byte
 * is seen, so is every byte before it (sess_verbs_land.c). */
void ibemu__vs_land(void *dst, const void *src, size_t len);
int ibemu__vs_atomic(void *ctx, const struct ibemu_tp_mem *m, int opcode,
		     uint64_t compare_add, uint64_t swap, uint64_t *orig);

#endif

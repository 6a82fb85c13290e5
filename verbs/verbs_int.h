/* SPDX-License-Identifier: MIT */
/*
 * Inside ibemu's libibverbs.so.1: the objects behind the public structs
 * (each embeds the struct programs see as its first member, as rdma-core's
 * providers do), the session client they are queried through
 * (verbs_sess.c), and the macros that export the API with rdma-core's
 * symbol versions (libibverbs.map).
 */
#ifndef IBEMU_VERBS_INT_H
#define IBEMU_VERBS_INT_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "cost.h"
#include "sess_proto.h"
#include "verbs_proto.h"

/* The library is built with -fvisibility=hidden; the API is exported. */
#define VERBS_EXPORT __attribute__((visibility("default")))

/*
 * A name defined in two versions: 'impl' is exported as 'name@@node' (the
 * default, what the linker binds new programs to) or 'name@node' (kept
 * for programs linked long ago). The implementation itself must be
 * VERBS_EXPORT for the alias to be; the map keeps its own name local.
 */
#define VERBS_SYMVER_DEFAULT(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@@" node)
#define VERBS_SYMVER_COMPAT(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@" node)

/* verbs.h turns these names into inline wrappers; the library defines the
 * functions the wrappers call. */
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* The process's HCA, as ibv_get_device_list() returns it. */
struct ibemu_verbs_device {
	struct ibv_device dev; /* first: programs hold &dev */
	int refs;	       /* the list's and each open context's */
	uint64_t node_guid;    /* host order */
	uint64_t sys_guid;
	uint32_t vendor_id;
	uint16_t device_id;
	uint16_t partition_cap;
	unsigned nports;
	/* By the HCA's hca_model (CA_QUERY's hca_gen): what
	 * ibv_query_device() reports and the create calls hold to. */
	const struct ibemu_verbs_limits *lim;
};

/*
 * An open device. Object counts and the key counter are under
 * context.mutex (ibv_context's own, which rdma-core also takes for the
 * completion channels' reference counts).
 */
struct ibemu_verbs_context {
	struct verbs_context vctx; /* first; ends with the ibv_context */
	struct ibemu_verbs_device *dev;
	unsigned npds, nmrs, ncqs, nahs;
	/* Its regions open to remote writes or atomics (context.mutex;
	 * read without it): a process with some may poll its memory. */
	unsigned remote_mrs;
	/* The verbs stream: calls under sess_lock, one at a time. */
	int sess_fd;
	pthread_mutex_t sess_lock;
	struct ibemu_verbs_page *page; /* shared with the daemon */
	uint64_t probe;		       /* the daemon reads it at open */
	/*
	 * The daemon that the stream reaches is gone (it closed the stream:
	 * it stopped, or was killed): every verb fails with EIO, as after a
	 * device removal, and the async fd gives IBV_EVENT_DEVICE_FATAL once.
	 * async_fd is an epoll set of the eventfd the daemon counts async
	 * events in (async_efd) and of the stream's hang-up.
	 */
	int gone, fatal_taken;
	int async_efd;
	uint32_t empty_polls; /* since the last look at the stream */
	/* The 'handed' its clock last took in (waiting.c): what a call or a
	 * clock read after it stores in the page's 'observed'. */
	uint64_t caught_handed;
	/* The process's count of clock reads when it last took one in. */
	uint64_t reads_at_catch;
	/* For async events: QPs, SRQs and CQs by number (context.mutex). */
	struct ibemu_verbs_qp *qps;
	struct ibemu_verbs_srq *srqs;
	struct ibemu_verbs_cq *cqs;
	pthread_mutex_t async_lock;
	/* The threads that take part in it (waiting.c): a list under its
	 * lock, and counts any thread may read. */
	struct ibemu_verbs_user *users;
	uint32_t nusers, nrunning;
	/* On the list of open contexts (device.c, under its lock). */
	struct ibemu_verbs_context *next_open;
};

/* A ring shared with the daemon (proto/verbs_proto.h). */
struct ibemu_verbs_ring {
	void *map;
	size_t bytes;
	struct ibemu_verbs_ring_hdr *hdr;
	uint8_t *ents;
	uint32_t size;
	uint32_t esz;
	uint32_t idx; /* ours: prod of a work queue, cons of a CQ */
	/* A work queue's capacity (max_*_wr): the header's 'cons' counts
	 * what the HCA retired, and no more than this is outstanding. */
	uint32_t cap;
};

/*
 * The work request ibv_wr_*() builds (qp_ex.c): it is checked and written
 * into the send ring, as ibv_post_send() would, when the next one starts
 * or at ibv_wr_complete(). Its gather list and inline bytes are copies:
 * the program may reuse its own as soon as each call returns.
 */
struct ibemu_verbs_wr_build {
	struct ibv_send_wr wr;
	struct ibv_sge sge[IBEMU_VERBS_MAX_SGE];
	uint8_t inline_data[IBEMU_VERBS_MAX_INLINE];
	uint32_t start; /* the ring's producer index at ibv_wr_start */
	int open;	/* 'wr' holds a request not yet written */
	int err;	/* the first error since ibv_wr_start, or 0 */
};

struct ibemu_verbs_qp {
	union { /* an ibv_qp_ex begins with its ibv_qp */
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex; /* ibv_create_qp_ex (qp_ex.c) */
	};
	struct ibemu_verbs_qp *next; /* on the context's list */
	pthread_mutex_t sq_lock, rq_lock;
	struct ibemu_verbs_ring sq, rq;
	struct ibv_qp_cap cap;
	int sq_sig_all;
	struct ibemu_verbs_wr_build *build; /* with send ops only */
	struct ibemu_verbs_xrcd *xrcd;	    /* an XRC receive QP's */
};

struct ibemu_verbs_srq {
	struct ibv_srq srq;
	struct ibemu_verbs_srq *next;
	pthread_mutex_t lock;
	struct ibemu_verbs_ring ring;
	uint32_t max_wr, max_sge;
	/* An XRC SRQ (xrc.c): its domain, CQ and number; else NULL. */
	struct ibemu_verbs_xrcd *xrcd;
	struct ibv_cq *cq;
};

/* An open XRC domain (xrc.c): 'handle' names the open on the stream;
 * the daemon counts what was made through it (EBUSY at close). */
struct ibemu_verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t handle;
};

struct ibemu_verbs_pd {
	struct ibv_pd pd;
	unsigned users; /* MRs, AHs (and later QPs) on it */
};

struct ibemu_verbs_mr {
	struct ibv_mr mr;
	unsigned access;
};

struct ibemu_verbs_ah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
};

struct ibemu_verbs_cq;

/*
 * A completion channel: 'fd' is an eventfd in semaphore mode that the
 * daemon writes once per event it raises on one of the channel's CQs
 * ('cqs'); the CQ's ring header counts its events, so a reader finds which
 * CQ it was. A CQ destroyed with an event unread leaves a count with no
 * event behind it, which a reader skips.
 */
struct ibemu_verbs_channel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	struct ibemu_verbs_cq *cqs; /* linked by next_on_channel */
};

struct ibemu_verbs_cq {
	union {			  /* an ibv_cq_ex begins as an ibv_cq does */
		struct ibv_cq cq; /* mutex, cond, comp_events_completed */
		struct ibv_cq_ex cq_ex; /* ibv_create_cq_ex (cq_ex.c) */
	};
	struct ibemu_verbs_cq *next_on_channel;
	struct ibemu_verbs_cq *next; /* on the context's list */
	pthread_mutex_t poll_lock;
	struct ibemu_verbs_ring ring;
	uint32_t events_taken; /* of ring.hdr->events, by get_cq_event */
	uint32_t events_read;  /* by ibv_get_cq_event */
	/* What the program knows of the ring when it arms it (cq.c,
	 * arm_pending): the producer index when it last took an event of
	 * this CQ, and whether it polled the CQ since (atomic). */
	uint32_t event_prod;
	uint32_t polled;
	/* Extended polling: the entry start_poll/next_poll is at. */
	const struct ibemu_verbs_cqe *cur;
};

static inline struct ibemu_verbs_context *
ibemu__verbs_ctx(struct ibv_context *context)
{
	return (struct ibemu_verbs_context *)((char *)context -
					      offsetof(struct verbs_context,
						       context));
}

/* Returns NULL with errno set to 'err' (the verbs convention). */
static inline void *ibemu__verbs_null(int err)
{
	errno = err;
	return NULL;
}

/* verbs_sess.c */
/*
 * CA_QUERY: the HCA this process is bound to, in *out (free() it). Returns
 * 0 or -errno: -ENODEV outside 'ibemu exec'; other failures are explained
 * on stderr once.
 */
int ibemu__verbs_ca_query(struct ibemu_sess_ca **out);
/*
 * PORT_QUERY on the stream of 'ctx': port 'port' of its HCA; 0 or -errno
 * (-EINVAL: no port; -EIO: the daemon is gone).
 */
int ibemu__verbs_port_query(struct ibemu_verbs_context *ctx, unsigned port,
			    struct ibemu_sess_port_attr *out);

/* device.c */
/* Drops a reference to 'dev', freeing it with the last one. */
void ibemu__verbs_device_put(struct ibemu_verbs_device *dev);
/*
 * Calls 'fn' on every open context of the process, under the lock of the
 * list (a context cannot close meanwhile; 'fn' must not open or close
 * one). The bootstrap (bootstrap.c) tells them all when it waits.
 */
void ibemu__verbs_each_context(void (*fn)(struct ibemu_verbs_context *ctx,
					  void *arg),
			       void *arg);

/* query.c */
/* Fills 'attr' from what the device list said of the HCA. */
void ibemu__verbs_device_attr(struct ibemu_verbs_context *ctx,
			      struct ibv_device_attr *attr);
int ibemu__verbs_query_port(struct ibv_context *context, uint8_t port_num,
			    struct ibv_port_attr *attr, size_t len);
int ibemu__verbs_query_device_ex(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size);

/* ops.c */
/* Fills the context's ops tables: what ibemu does, stubs for the rest. */
void ibemu__verbs_ops_init(struct ibemu_verbs_context *ctx);

/* cq.c */
int ibemu__verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
/* A CQ as ibv_create_cq() makes it (cq.c); NULL with errno set. */
struct ibemu_verbs_cq *ibemu__verbs_cq_create(struct ibv_context *context,
					      int cqe, void *cq_context,
					      struct ibv_comp_channel *channel,
					      int comp_vector);
/*
 * mr_share.c: moves the pages of [addr, addr + len) onto shared memory if
 * it can (docs/design.md §6) and describes them in m->shm_*; the memfd
 * to send with the registration (the library keeps it), or -1. A move
 * copies the pages (tens of milliseconds for tens of MiB on a loaded
 * host): 'ctx' is told it still calls after each MiB, so the daemon does
 * not take the silence for a wait (the grace period).
 */
int ibemu__verbs_mr_share(struct ibemu_verbs_context *ctx, uint64_t addr,
			  uint64_t len, struct ibemu_verbs_mr_req *m);
/* cq_ex.c: ibv_create_cq_ex and the clock its timestamps count (kHz:
 * one tick a nanosecond of virtual time) */
#define IBEMU_VERBS_CORE_CLOCK_KHZ 1000000ull
struct ibv_cq_ex *ibemu__verbs_create_cq_ex(struct ibv_context *context,
					    struct ibv_cq_init_attr_ex *attr);
int ibemu__verbs_query_rt_values(struct ibv_context *context,
				 struct ibv_values_ex *values);
int ibemu__verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* verbs_sess.c: the verbs stream */
/*
 * Opens the verbs stream of 'ctx' on HCA 'host'; 0 or a positive errno
 * (what went wrong said on stderr).
 */
int ibemu__verbs_stream_open(struct ibemu_verbs_context *ctx, const char *host);
/*
 * A call on the stream: request 'type' with 'len' bytes of 'msg' and
 * 'nfds' fds; the reply (same length) overwrites 'msg'. Returns 0 or a
 * positive errno (the daemon's, or EIO when the stream broke).
 */
int ibemu__verbs_call(struct ibemu_verbs_context *ctx, uint16_t type, void *msg,
		      size_t len, const int *fds, int nfds);
/* Wakes the daemon if it published that it sleeps (after a post). */
void ibemu__verbs_kick(struct ibemu_verbs_context *ctx);
/* Work was posted to a ring of 'ctx' (its producer index stored): the
 * page's count tells the daemon to look at its rings. */
void ibemu__verbs_posted(struct ibemu_verbs_context *ctx);
/*
 * Whether the daemon of 'ctx' is gone: what the library noticed so far
 * (a load, for the post paths), or after a look at the stream (a system
 * call, for paths that make one anyway or rarely).
 */
static inline int ibemu__verbs_gone(struct ibemu_verbs_context *ctx)
{
	return __atomic_load_n(&ctx->gone, __ATOMIC_RELAXED);
}
int ibemu__verbs_stream_gone(struct ibemu_verbs_context *ctx);
/* An empty poll of a CQ of 'ctx': looks at the stream now and then. */
void ibemu__verbs_empty_poll(struct ibemu_verbs_context *ctx);
/*
 * Creates a sealed memfd holding a ring of 'n' entries of 'esz' bytes,
 * maps it into 'r' and returns the fd (to pass, then close) or -errno.
 */
int ibemu__verbs_ring_create(struct ibemu_verbs_ring *r, uint32_t n,
			     uint32_t esz);
void ibemu__verbs_ring_destroy(struct ibemu_verbs_ring *r);
/* The smallest power of two >= n (at least 1). */
uint32_t ibemu__verbs_pow2(uint32_t n);

/* qp.c: the posting verbs of the ops table. */
int ibemu__verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
/* A QP as ibv_create_qp() makes it; NULL with errno set. */
struct ibemu_verbs_qp *ibemu__verbs_qp_create(struct ibv_pd *pd,
					      struct ibv_qp_init_attr *attr);
/* Whether the work ring is full; its slot at the producer index. */
int ibemu__verbs_ring_full(const struct ibemu_verbs_ring *r);
void *ibemu__verbs_ring_slot(const struct ibemu_verbs_ring *r);
/* Fills send WQE 'w' from 'wr'; 0 or the errno a provider gives. */
int ibemu__verbs_swqe_fill(struct ibemu_verbs_qp *q, struct ibemu_verbs_swqe *w,
			   const struct ibv_send_wr *wr);
/* qp.c: an SRQ as ibv_create_srq() makes it, in XRC domain 'xrcd'
 * with CQ 'cq' if 'xrcd' is not NULL; NULL with errno set. */
struct ibv_srq *ibemu__verbs_srq_create(struct ibv_pd *pd,
					struct ibv_srq_init_attr *attr,
					struct ibemu_verbs_xrcd *xrcd,
					struct ibv_cq *cq);
/* xrc.c: XRC domains, SRQs and receive QPs (the ops of ops.c). */
struct ibv_qp *
ibemu__verbs_xrc_recv_qp_create(struct ibv_context *context,
				struct ibv_qp_init_attr_ex *attr);
struct ibv_xrcd *ibemu__verbs_open_xrcd(struct ibv_context *context,
					struct ibv_xrcd_init_attr *attr);
int ibemu__verbs_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_srq *ibemu__verbs_create_srq_ex(struct ibv_context *context,
					   struct ibv_srq_init_attr_ex *attr);
int ibemu__verbs_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_qp *ibemu__verbs_open_qp(struct ibv_context *context,
				    struct ibv_qp_open_attr *attr);
/* qp_ex.c: the create_qp_ex op */
struct ibv_qp *ibemu__verbs_create_qp_ex(struct ibv_context *context,
					 struct ibv_qp_init_attr_ex *attr);
int ibemu__verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr);
int ibemu__verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr);

/* clock.c: the process's virtual clock */
uint64_t ibemu__verbs_clock(void);
/* Moves the clock to 't' if behind it, and publishes it in 'ctx'. */
void ibemu__verbs_clock_at_least(struct ibemu_verbs_context *ctx, uint64_t t);
/* Publishes the clock in 'ctx''s page (if it changed). */
void ibemu__verbs_clock_publish(struct ibemu_verbs_context *ctx);
/* Moves the clock to at least 't' and publishes it on every context. */
void ibemu__verbs_clock_raise(uint64_t t);
/*
 * Moves the clock forward by what call 'c' costs with 'units' WQEs or
 * pages (cost.h), and publishes it in 'ctx' (NULL: a call without a
 * context, published at the next call).
 */
void ibemu__verbs_charge(struct ibemu_verbs_context *ctx,
			 enum ibemu_verbs_cost c, uint64_t units);
/*
 * A call that the library answers alone (no message to the daemon):
 * charged, counted as a call, and the daemon woken if it sleeps.
 */
void ibemu__verbs_charge_local(struct ibemu_verbs_context *ctx,
			       enum ibemu_verbs_cost c);
/*
 * Hand-off 'handed' of 'ctx' seen (read before): the clock at least at
 * the page's 'land_ps', the time of the last RDMA WRITE or atomic that
 * the daemon handed to the process while it polled memory
 * (docs/design.md §3) or of the last tick (attach/sess_verbs_rule.c); at
 * every call, before any stamp, and at a wait's first sight of a
 * hand-off.
 */
void ibemu__verbs_clock_caught(struct ibemu_verbs_context *ctx,
			       uint64_t handed);
/*
 * A call ('by_call'), or an empty poll after which the program may have
 * read its virtual clock: if it did (ibemu_now_ps() ran since the clock
 * took in its last hand-off), the page's 'observed' says what the clock
 * has taken in, and the daemon is woken if that is news (a tick it holds
 * may be due).
 */
void ibemu__verbs_clock_observed(struct ibemu_verbs_context *ctx, int by_call);

/*
 * waiting.c: whether the process waits, per thread (the time rule's page
 * fields). Every function is a no-op under --clock free.
 */
/* What a thread waits on: where work for it would show. */
enum ibemu_verbs_wait {
	IBEMU_VERBS_WAIT_NOTHING, /* it was destroyed */
	IBEMU_VERBS_WAIT_CQ,	  /* an empty poll of a CQ */
	IBEMU_VERBS_WAIT_CHANNEL, /* ibv_get_cq_event on a channel */
	IBEMU_VERBS_WAIT_ASYNC,	  /* ibv_get_async_event */
	IBEMU_VERBS_WAIT_OUTSIDE, /* ibemu_outside_wait(): another library's */
	IBEMU_VERBS_WAIT_ASLEEP,  /* presumed: asleep in the kernel */
};
/*
 * A post, a poll that returns work, a waiting call woken: the calling
 * thread takes part in 'ctx' (from its first such call) and runs. It is
 * called before the thread takes what a hand-off gave it.
 */
void ibemu__verbs_running(struct ibemu_verbs_context *ctx);
/*
 * A control call (a call on the stream): the thread runs if it takes
 * part; one that does not changes nothing, unless no thread takes part.
 */
void ibemu__verbs_calling(struct ibemu_verbs_context *ctx);
/*
 * A poll takes work (under the rule, before the clock moves to it): the
 * page says the process took a completion last.
 */
void ibemu__verbs_took(struct ibemu_verbs_context *ctx);
/*
 * After a poll that took work, once the clock moved: a process with
 * regions open to remote writes may spin on its memory next, which the
 * daemon must start timing at once (a kick, if it sleeps).
 */
void ibemu__verbs_took_kick(struct ibemu_verbs_context *ctx);
/* The daemon's hand-off count, read before looking for work. */
uint64_t ibemu__verbs_handed(struct ibemu_verbs_context *ctx);
/*
 * Nothing found on 'on' after hand-off 'seen': the calling thread waits,
 * and the context with it if every thread that takes part waits (kicking
 * the daemon, if it sleeps, when this is news). Returns 0 if a hand-off
 * was under way meanwhile (look again), else 1.
 */
int ibemu__verbs_waiting(struct ibemu_verbs_context *ctx, uint64_t seen,
			 enum ibemu_verbs_wait kind, void *on);
/* The calling thread took an event from 'channel' (ibv_get_cq_event). */
void ibemu__verbs_took_event(struct ibemu_verbs_context *ctx, void *channel);
/*
 * The calling thread armed a CQ of 'channel' with nothing left on it to
 * poll, after hand-off 'seen': if it takes its events from that channel,
 * it waits on it, as in ibv_get_cq_event. A thread that waits for events
 * in its own event loop (epoll on the channel's fd: Open MPI's udcm) makes
 * no call between the arm and the wake-up, and would otherwise run, as far
 * as the rule knows, until the grace period. Returns as
 * ibemu__verbs_waiting.
 */
int ibemu__verbs_armed(struct ibemu_verbs_context *ctx, uint64_t seen,
		       void *channel);
/*
 * After an empty poll: under the time rule the CPU is given away. Waiting
 * costs nothing in virtual time, and nothing arrives until the daemon
 * runs, which may share this CPU with the process (and with other ranks
 * that poll); a busy poll would keep it off the CPU for whole time slices.
 */
void ibemu__verbs_poll_idle(struct ibemu_verbs_context *ctx);
/*
 * Around a call that waits for the daemon's answer (a control call): the
 * thread is not taken for one asleep on something else meanwhile.
 */
void ibemu__verbs_call_enter(void);
void ibemu__verbs_call_leave(void);

/* asleep.c: what the last look at a thread found. */
struct ibemu_verbs_nap {
	uint64_t run_ns, slices; /* its schedstat then */
	uint64_t since_ns;	 /* the host's monotonic clock */
	int known;
};
/*
 * Whether thread 'tid' of this process has slept in the kernel (a lock,
 * a socket: not runnable, and not scheduled once) for at least 'need_ns'
 * by the looks recorded in 'nap', which this one updates.
 */
int ibemu__verbs_thread_asleep(pid_t tid, struct ibemu_verbs_nap *nap,
			       uint64_t now_ns, uint64_t need_ns);

/* What 'ibemu run --plot' draws of the process (trace.c). */
enum ibemu_verbs_trace {
	IBEMU_VERBS_TRACE_WAIT,	   /* the clock leapt to a completion */
	IBEMU_VERBS_TRACE_COMPUTE, /* ibemu_compute_ps() */
	IBEMU_VERBS_TRACE_SEND,	   /* ibv_post_send */
	IBEMU_VERBS_TRACE_RECV,	   /* a poll that took completions */
};
void ibemu__verbs_trace(enum ibemu_verbs_trace kind, uint64_t from_ps,
			uint64_t to_ps);
/* CQ or channel 'on' is being destroyed: no thread waits on it any more. */
void ibemu__verbs_users_forget(struct ibemu_verbs_context *ctx, void *on);
/* The context closes: its threads' records are let go. */
void ibemu__verbs_users_detach(struct ibemu_verbs_context *ctx);

/* pd.c */
/* A user of 'pd' more (+1) or less (-1): MRs, AHs, QPs keep it alive. */
void ibemu__verbs_pd_use(struct ibv_pd *pd, int delta);

/* misc.c: $SYSFS_PATH, else /sys (exported, as rdma-core's driver.h has
 * it). */
const char *ibv_get_sysfs_path(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Inside the session server (sess_server.c and its helpers): the
 * connections of attached processes, the pid-to-HCA bindings, and the MAD
 * agents a port stream registers, as the kernel's ib_umad keeps them per
 * open umad file. Private to attach/sess_*.c.
 */
#ifndef IBEMU_SESS_H
#define IBEMU_SESS_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "attach.h"
#include "sess_limits.h"
#include "sess_proto.h"
#include "transport.h"
#include "verbs_proto.h"

/*
 * What the library promises a process (proto/verbs_proto.h, reported by
 * ibv_query_device) must be what the transport can carry: one source for
 * the device's limits, checked against the other at build time.
 */
_Static_assert(IBEMU_VERBS_MAX_SGE <= IBEMU_TP_MAX_SGE &&
		       IBEMU_VERBS_MAX_SGE_RD <= IBEMU_TP_MAX_SGE &&
		       IBEMU_VERBS_MAX_SRQ_SGE <= IBEMU_TP_MAX_SGE,
	       "scatter/gather entries");
_Static_assert(IBEMU_VERBS_MAX_QP_WR <= IBEMU_TP_MAX_WR &&
		       IBEMU_VERBS_MAX_SRQ_WR <= IBEMU_TP_MAX_WR &&
		       IBEMU_VERBS_ANY_QP_WR <= IBEMU_TP_MAX_WR &&
		       IBEMU_VERBS_MLX5_SRQ_WR <= IBEMU_TP_MAX_WR,
	       "work requests per queue");
_Static_assert(IBEMU_VERBS_MAX_INLINE <= IBEMU_TP_MAX_INLINE, "inline data");
_Static_assert(IBEMU_VERBS_MAX_QP_RD_ATOM <= IBEMU_TP_MAX_RD_ATOMIC &&
		       IBEMU_VERBS_MAX_QP_INIT_RD_ATOM <=
			       IBEMU_TP_MAX_RD_ATOMIC,
	       "outstanding READs and atomics");
_Static_assert(IBEMU_VERBS_MAX_MSG_SZ <= IBEMU_TP_MAX_MSG, "message size");

/* ib_umad's IB_UMAD_MAX_AGENTS, libibumad's UMAD_CA_MAX_AGENTS. */
#define IBEMU_SESS_MAX_AGENTS 32u
/* RECV messages a stream may hold while its process does not read, and
 * their bytes (reassembled RMPP transfers are up to 256 KiB each). */
#define IBEMU_SESS_QUEUE_MAX   1024u
#define IBEMU_SESS_QUEUE_BYTES (16u << 20)
/* IBA 13.4.2: ClassVersion indexes the kernel's tables below 8. */
#define IBEMU_SESS_MAX_CLASS_VERSION 8u

/* A process attached to one HCA, by pid. */
struct ibemu_sess_binding {
	pid_t pid;
	uint64_t start_time; /* /proc/PID/stat starttime: tells a reused pid */
	uint32_t node;	     /* the HCA, topology index */
	uint32_t streams;    /* open port streams of this process */
};

/* A request sent with a timeout, waiting for its response. */
struct ibemu_sess_send {
	struct ibemu_due due; /* its timeout, in virtual time */
	struct ibemu_sess_agent *agent;
	struct ibemu_sess_send *next;
	uint64_t tid; /* as sent, hi_tid included */
	uint32_t timeout_ms;
	uint32_t retries; /* resends left */
	struct ibemu_sess_addr addr;
	struct ibemu_mad_msg msg; /* kept for resends and the timeout report */
};

/* A MAD agent registered on a port stream (ib_umad_reg_agent2). */
struct ibemu_sess_agent {
	struct ibemu_sess_conn *stream; /* borrowed: the stream owns it */
	uint32_t id;			/* index in the stream's agents[] */
	uint32_t hi_tid;		/* upper TID bits of its requests */
	uint64_t method_mask[2];	/* request methods it takes */
	uint32_t flags;
	uint32_t oui;
	uint8_t mgmt_class; /* 0: sends only */
	uint8_t class_version;
	uint8_t rmpp_version;
	struct ibemu_sess_send *sends; /* outstanding requests, owned */
	struct ibemu_sess_rmpp *rmpps; /* reassemblies in progress, owned */
	uint32_t nrmpps;
	/* A CM agent (class 0x07, sess_cm.c): its connections and the
	 * service IDs it listens on, owned. */
	struct ibemu_sess_cm_conn *cm_conns;
	uint32_t cm_nconns;
	struct ibemu_sess_cm_service *cm_listens;
};

/* A SEND stamped for later than the engine's time: its message, copied. */
struct ibemu_sess_later {
	struct ibemu_sess_later *next;
	uint64_t at_ps;
	uint8_t msg[]; /* a struct ibemu_sess_mad and its MAD */
};

/* A RECV message the stream's socket had no room for yet. */
struct ibemu_sess_out {
	struct ibemu_sess_out *next;
	size_t len;
	uint8_t msg[];
};

/* Why a port stream's process makes the daemon log, one limiter each. */
enum ibemu_sess_log_reason {
	IBEMU_SESS_LOG_NO_AGENT,   /* SEND as an agent not registered */
	IBEMU_SESS_LOG_BAD_LENGTH, /* SEND the kernel would refuse */
	IBEMU_SESS_LOG_BAD_PKEY,   /* SEND with a P_Key index of no P_Key */
	IBEMU_SESS_LOG_DUP_TID,	   /* request with an outstanding TID */
	IBEMU_SESS_LOG_SEND_FAIL,  /* the engine did not take it */
	IBEMU_SESS_LOG_BAD_CM,	   /* a CM MAD sess_cm.c refuses */
	IBEMU_SESS_LOG_NREASONS
};

enum ibemu_sess_kind {
	IBEMU_SESS_CONN_NEW,	/* nothing received yet */
	IBEMU_SESS_CONN_CALL,	/* answered; closes */
	IBEMU_SESS_CONN_STREAM, /* a port stream (OPEN) */
	IBEMU_SESS_CONN_VERBS,	/* a verbs stream (VERBS_OPEN) */
	IBEMU_SESS_CONN_JOB,	/* a job stream (JOB_JOIN, sess_job.c) */
};

struct ibemu_sess_job;

struct ibemu_sess_verbs;

/*
 * A bound HCA: its transport owns the HCA's ports in the engine (MADs for
 * them come up through its mad_recv op), shared by the verbs streams of
 * every process bound to it. Created with the first binding to the HCA,
 * destroyed with the last.
 */
struct ibemu_sess_hca {
	struct ibemu_sess_server *s;
	uint32_t node;
	struct ibemu_tp *tp;
	struct ibemu_sess_verbs *verbs; /* its verbs streams (borrowed) */
};

struct ibemu_sess_conn {
	uv_poll_t poll; /* first: the handle's address is the conn's */
	struct ibemu_sess_server *s;
	struct ibemu_sess_conn *next;
	int fd;
	pid_t pid; /* SO_PEERCRED */
	enum ibemu_sess_kind kind;
	int closing;
	int events; /* UV_READABLE, plus UV_WRITABLE while out_head */
	/* Verbs streams only (sess_verbs.c), owned. */
	struct ibemu_sess_verbs *verbs;
	/* Job streams only (sess_job.c): the job (shared by its ranks'
	 * streams, freed with the last) and this stream's rank. */
	struct ibemu_sess_job *job;
	uint32_t rank;
	/* Its process waits in a job collective: the time rule counts it
	 * as waiting, whatever its streams say (any kind of stream). */
	int job_held;
	/* Port streams only. */
	uint64_t session;
	uint32_t node;	     /* HCA, topology index */
	unsigned port;	     /* port number on it */
	uint32_t port_index; /* engine's global port index */
	struct ibemu_sess_agent *agents[IBEMU_SESS_MAX_AGENTS];
	struct ibemu_sess_out *out_head, *out_tail;
	struct ibemu_sess_conn *flush_next; /* on the server's flush list */
	int flush_listed;
	uint32_t out_len;
	size_t out_bytes;
	uint64_t out_dropped;
	uint64_t out_dropped_logged_ms;
	int packs; /* it sent a PACK: its RECVs go packed (sess_umad_pack) */
	/* What its process does wrong, logged a few times then once a
	 * second (ibemu_daemon_log_limited()). */
	struct ibemu_log_limit log_limits[IBEMU_SESS_LOG_NREASONS];
	/* The time rule of a port stream (sess_umad_rule.c). */
	struct ibemu_sess_umad_time {
		struct ibemu_rule_proc rule;
		int in_rule;	   /* it waited once: it counts from now on */
		uint64_t wait_seq; /* 1 + what it had seen at its last WAIT */
		uint64_t wait_id;
		uint64_t calls;		  /* messages it sent */
		uint64_t clock_ps;	  /* its last MAD's entry: its clock */
		uint64_t last_ps;	  /* its last MAD's time, in or out */
		struct ibemu_due timeout; /* of its wait (lazy) */
		struct ibemu_sess_later *later_head, *later_tail;
		struct ibemu_due later; /* the first one's time */
	} time;
};

/*
 * The daemon's poll of the verbs rings before its loop sleeps
 * (sess_verbs_bell.c): how long it polls, the pause after a poll was
 * descheduled, when the loop last went to sleep, and whether a CPU is
 * free for polling (the runnable threads of /proc/loadavg, read at most
 * once a millisecond, against the CPUs this process may use).
 */
struct ibemu_sess_spin {
	uint64_t ns, backoff_ns, off_until, slept_at;
	uint64_t load_at;
	int load_fd; /* /proc/loadavg, or -1 */
	int ncpus, spare;
};

struct ibemu_sess_server {
	struct ibemu_daemon *d;
	struct ibemu_listener listener;
	char sock_path[IBEMU_PATH_MAX];
	/* issm/HOST.PORT files: held open, they set IsSM (sess_issm.c). */
	char issm_dir[IBEMU_PATH_MAX];
	int issm_fd; /* inotify on issm_dir, or -1 */
	uv_poll_t issm_poll;
	uint16_t *issm_opens; /* per global port index */
	struct ibemu_sess_conn *conns;
	struct ibemu_sess_binding *binds;
	uint32_t nbinds, binds_cap;
	uint32_t next_hi_tid;
	uint64_t unclaimed; /* MADs for this fabric's ports nobody took */
	int sysfs_failed;   /* a sysfs tree could not be written (logged) */
	uint64_t unclaimed_logged_ms;
	uint64_t rmpp_dropped; /* RMPP segments and transfers dropped */
	uint64_t rmpp_dropped_logged_ms;
	/* What one read takes: READ_BATCH (sess_server.c) slots of
	 * IBEMU_SESS_STREAM_MAX_MSG bytes, a call's message in the first. */
	uint8_t *rbuf;
	/* Port streams whose RECVs wait to go out together (sess_server.c),
	 * and the idle handle that sends them on the loop's next turn. */
	struct ibemu_sess_conn *flush_head;
	uv_idle_t flush_idle;
	/* Verbs: the transports' domain and the bound HCAs (by node). */
	struct ibemu_tp_domain *tpd;
	struct ibemu_sess_hca **hcas; /* topo->nnodes entries */
	uv_prepare_t verbs_prepare;   /* drains rings before the loop sleeps */
	uv_check_t verbs_check;	      /* says the loop is awake again */
	uv_idle_t verbs_spin; /* keeps the loop awake while work comes */
	struct ibemu_sess_spin spin;
	/* Memory polling's timer (sess_verbs_rule.c): a timerfd, since its
	 * delays are microseconds and libuv's timers count milliseconds. */
	uv_poll_t mempoll;
	int mempoll_fd;	     /* -1: none */
	uint64_t mempoll_at; /* the wall ns it is armed for, or 0 */
	/* A look at the horizon armed a tick (sess_verbs_rule.c): the
	 * engine must run to it, though nothing else is pending. */
	int tick_armed;
	/* At that look, some process counted as waiting by presumption
	 * alone (its grace period, memory polling): no tick is given. */
	int presumed_any;
	int task_clock_told;	    /* logged that perf's is refused */
	uint8_t *copy_buf;	    /* IBEMU_SESS_COPY_CHUNK bytes */
	struct ibemu_sess_mrs *mrs; /* registered regions (sess_verbs_mem) */
	int verbs_dirty;	    /* completions written, not yet published */
	/* What attached processes hold (sess_limits.c). */
	struct ibemu_sess_proc *procs;
	struct ibemu_sess_cost held_all, limits_all;
	/* The jobs of 'ibemu run' whose ranks are attached (sess_job.c). */
	struct ibemu_sess_job *jobs;
	uint64_t job_ranks, job_bytes; /* their ranks, their values' bytes */
};

/* Bytes a copy between two processes moves per step (sess_verbs_mem.c). */
#define IBEMU_SESS_COPY_CHUNK (1u << 20)

/* sess_issm.c */
/* Creates issm/ and watches it; 0 or -errno (the fabric runs without). */
int ibemu__sess_issm_start(struct ibemu_sess_server *s);
/* Removes issm/ and closes its watch; then frees 's'. */
void ibemu__sess_issm_stop(struct ibemu_sess_server *s);

/* sess_server.c */
/* Frees the server once its handles are closed. */
void ibemu__sess_server_free(struct ibemu_sess_server *s);
/* Closes a connection: frees its agents, requests and queued MADs. */
void ibemu__sess_conn_close(struct ibemu_sess_conn *c, const char *why);
/*
 * Hands a RECV to stream 'c' for agent 'agent_id': queued, and sent with
 * the others on the loop's next turn (at most IBEMU_SESS_QUEUE_MAX wait,
 * then they are dropped).
 */
void ibemu__sess_deliver(struct ibemu_sess_conn *c, uint32_t agent_id,
			 uint32_t status, const struct ibemu_sess_addr *addr,
			 const uint8_t *mad, uint32_t len);
/*
 * Checks one message received on 'c' ('n' bytes at 'buf', which is aligned
 * for the payload structs; at most IBEMU_SESS_MAX_MSG bytes, or
 * IBEMU_SESS_STREAM_MAX_MSG on a port stream) and hands it to its handler.
 * 'fds' are the descriptors that came with it, owned by the callee: each
 * is kept or closed. The connection may be closing on return (c->closing),
 * and then takes no more messages. Takes no socket read, so the fuzzer
 * drives it directly.
 */
void ibemu__sess_conn_handle(struct ibemu_sess_conn *c, const uint8_t *buf,
			     size_t n, int *fds, int nfds);
/* Finds the port stream of process 'pid' named 'session', or NULL. */
struct ibemu_sess_conn *ibemu__sess_stream_find(struct ibemu_sess_server *s,
						uint64_t session, pid_t pid);

/* Sends one message (header and payload) without blocking; 0 or -errno. */
int ibemu__sess_send_msg(int fd, uint16_t type, int32_t status,
			 const void *payload, size_t len);

/* sess_verbs_tp.c */
/* The transport ops of a bound HCA ('ctx' is its struct ibemu_sess_hca). */
extern const struct ibemu_tp_ops ibemu__sess_tp_ops;

/* sess_verbs.c (sess_verbs_int.h: the files of verbs streams) */
/*
 * VERBS_OPEN on new connection 'c' for HCA 'node' (bound): maps the
 * context page and takes the fds (owned from here on, closed on failure).
 * Replies, or sends ERROR and closes.
 */
void ibemu__sess_verbs_open(struct ibemu_sess_conn *c, uint32_t node,
			    const struct ibemu_verbs_open *o, int *fds,
			    int nfds);
/* A call on verbs stream 'c'; 'fds' are owned by the callee. */
void ibemu__sess_verbs_call(struct ibemu_sess_conn *c,
			    const struct ibemu_sess_hdr *h, const void *payload,
			    int *fds, int nfds);
/* Destroys every object of verbs stream 'c' and frees its state. */
void ibemu__sess_verbs_close(struct ibemu_sess_conn *c);
/* sess_verbs_mem.c: unmaps every registered region, at the server's end. */
void ibemu__sess_verbs_mrs_free(struct ibemu_sess_server *s);
/* sess_verbs_rule.c */
/* Starts and stops the loop hooks that drain the rings. */
void ibemu__sess_verbs_start(struct ibemu_sess_server *s);
void ibemu__sess_verbs_stop(struct ibemu_sess_server *s);

/* sess_bind.c */
/*
 * Binds process 'pid' to an HCA: 'host' by name, or for an empty 'host'
 * the HCA it is bound to, else the first HCA no live process is bound to.
 * Returns 0 and the node in *node, or -errno with 'why' filled.
 */
int ibemu__sess_bind(struct ibemu_sess_server *s, pid_t pid, const char *host,
		     uint32_t *node, char *why, size_t whylen);
/* A port stream of 'pid' opened (+1) or closed (-1). */
void ibemu__sess_bind_streams(struct ibemu_sess_server *s, pid_t pid,
			      int delta);
/* Forgets the bindings of processes that are gone and hold no stream,
 * giving their HCAs' ports back. */
void ibemu__sess_bind_prune(struct ibemu_sess_server *s);
void ibemu__sess_bind_fini(struct ibemu_sess_server *s);

/* sess_ca.c */
/*
 * Fills the CA_QUERY reply for HCA 'node' into 'buf' (at most 'cap'
 * bytes); returns its length.
 */
size_t ibemu__sess_ca_fill(struct ibemu_sess_server *s, uint32_t node,
			   void *buf, size_t cap);
/* HCA 'node''s CA_QUERY hca_gen (0 wire, 4-7 a ConnectX preset) and the
 * limits its verbs objects are held to (proto/verbs_proto.h). */
uint32_t ibemu__sess_hca_gen(struct ibemu_sess_server *s, uint32_t node);
const struct ibemu_verbs_limits *
ibemu__sess_hca_limits(struct ibemu_sess_server *s, uint32_t node);
/*
 * Fills the PORT_QUERY reply for port 'port' of HCA 'node'; 0, or -EINVAL
 * when the HCA has no such port.
 */
int ibemu__sess_port_attr_fill(struct ibemu_sess_server *s, uint32_t node,
			       unsigned port, struct ibemu_sess_port_attr *out);
/* sess_addr.c */
/*
 * Answers ADDR_QUERY 'q' in place (proto/sess_proto.h); 0, or -ENOENT when
 * no HCA port has that address, GUID or name, -EINVAL for a bad request.
 */
int ibemu__sess_addr_query(struct ibemu_sess_server *s,
			   struct ibemu_sess_addr_query *q);
/* The port OPEN port 0 stands for, as libibumad picks one; 0 if none. */
unsigned ibemu__sess_ca_best_port(struct ibemu_sess_server *s, uint32_t node);

/* sess_sysfs.c: the bound HCA's sysfs tree under the runtime directory. */
void ibemu__sess_sysfs_update(struct ibemu_sess_server *s, uint32_t node,
			      int full);
/* Removes every HCA's tree (the server stops). */
void ibemu__sess_sysfs_remove(struct ibemu_sess_server *s);
/* P_Key at 'index' of global port 'port'; 0 when the index is unused. */
uint16_t ibemu__sess_pkey(struct ibemu_sess_server *s, uint32_t port,
			  uint16_t index);
/* Index of 'pkey' (membership bit ignored) in the port's table, else 0. */
uint16_t ibemu__sess_pkey_index(struct ibemu_sess_server *s, uint32_t port,
				uint16_t pkey);

/*
 * Hands a TICK to stream 'c': the timeout of its wait 'wait_id' passed at
 * virtual time 'vt_ps' (queued as a RECV is).
 */
void ibemu__sess_deliver_tick(struct ibemu_sess_conn *c, uint64_t wait_id,
			      uint64_t vt_ps);

/* sess_umad_rule.c: the time rule on port streams. */
/* Sets up (at OPEN, the clock at the engine's time) and tears down. */
void ibemu__su_init(struct ibemu_sess_conn *c);
void ibemu__su_close(struct ibemu_sess_conn *c);
/* A WAIT from the process ('w' checked for size). */
void ibemu__su_wait(struct ibemu_sess_conn *c, const struct ibemu_sess_wait *w);
/* A SEND from the process, checked: enters now, or at its stamp. */
void ibemu__su_send(struct ibemu_sess_conn *c, const struct ibemu_sess_mad *m);
/* A RECV is handed over now: counted; returns its time for the process. */
uint64_t ibemu__su_handoff(struct ibemu_sess_conn *c);
/* Whether the process waits under the rule. */
int ibemu__su_waiting(const struct ibemu_sess_conn *c);
/* What the rule reads of the stream; -ENOENT until it first waited. */
int ibemu__su_words(const struct ibemu_sess_conn *c,
		    struct ibemu_rule_words *w);
/* Sends the RECVs and TICKs queued on every stream (the end of a run),
 * but those of streams that take PACKs: the loop's idle turn sends them. */
void ibemu__sess_streams_flush(struct ibemu_sess_server *s);

/* sess_umad_pack.c: PACKs on port streams (sess_proto.h). */
/* A PACK from the process: checked whole, then each message in turn. */
void ibemu__su_unpack(struct ibemu_sess_conn *c, const struct ibemu_sess_hdr *h,
		      const uint8_t *payload);
/*
 * The next message to send of queue 'o': iov[] (room for 'max_iov') gets
 * it alone (*niov 1), or a PACK of the RECVs that start the queue, 'ph'
 * its header (*niov is 1 + their number). Returns the queued messages it
 * takes.
 */
struct iovec;
unsigned ibemu__su_pack_out(const struct ibemu_sess_conn *c,
			    const struct ibemu_sess_out *o,
			    struct ibemu_sess_hdr *ph, struct iovec *iov,
			    unsigned max_iov, unsigned *niov);

/* sess_job.c: job streams, the bootstrap of 'ibemu run'. */
/* A message on new or job connection 'c' (JOB_JOIN starts one). */
void ibemu__sess_job_msg(struct ibemu_sess_conn *c,
			 const struct ibemu_sess_hdr *h, const void *payload);
/* Job stream 'c' closes: it leaves its job (freed with its last rank). */
void ibemu__sess_job_leave(struct ibemu_sess_conn *c);

/* sess_agent.c */
/* REGISTER and UNREGISTER on stream 'c'; 0 or -errno, 'why' filled. */
int ibemu__sess_register(struct ibemu_sess_conn *c,
			 struct ibemu_sess_register *r, char *why,
			 size_t whylen);
int ibemu__sess_unregister(struct ibemu_sess_conn *c, uint32_t id, char *why,
			   size_t whylen);
/* Frees every agent of stream 'c' and cancels their requests. */
void ibemu__sess_agents_free(struct ibemu_sess_conn *c);
/* Ends outstanding request 'send' (its answer came): no resend, no
 * timeout report. */
void ibemu__sess_send_end(struct ibemu_sess_send *send);
/* Its timeout counts 'timeout_ms' afresh from now (an MRA came). */
void ibemu__sess_send_rearm(struct ibemu_sess_send *send, uint32_t timeout_ms);

/* sess_cm.c: the CM protocol's routing (class 0x07). */
/* What routes a CM MAD: its attribute and IDs (host order). */
struct ibemu_sess_cm_key {
	uint16_t attr;
	uint8_t mraed, timeout; /* MRA: message MRAed, service timeout */
	uint32_t local_id;	/* Local Comm ID, or SIDR request ID */
	uint32_t remote_id;	/* Remote Comm ID */
	uint32_t qpn;		/* REQ, REP: the sender's QPN */
	uint64_t service_id;	/* REQ, SIDR_REQ */
};
/* Parses and checks the CM MAD of 'len' bytes; 0 or -EINVAL. */
int ibemu__sess_cm_parse(const uint8_t *mad, size_t len,
			 struct ibemu_sess_cm_key *k);
int ibemu__sess_cm_is_agent(const struct ibemu_sess_agent *a);
/* A CM MAD agent 'a' of stream 'c' sends: 0 (send it) or -errno (drop). */
int ibemu__sess_cm_sent(struct ibemu_sess_conn *c, struct ibemu_sess_agent *a,
			const struct ibemu_mad_msg *msg);
/* The agent a CM MAD reaching global port 'port' goes to, or NULL with
 * the reason in *why (the daemon answered for a missing listener). */
struct ibemu_sess_agent *ibemu__sess_cm_route(struct ibemu_daemon *d,
					      uint32_t port,
					      const struct ibemu_mad_msg *m,
					      const char **why);
/* CM_LISTEN of process 'pid'; 0 or -errno. */
int ibemu__sess_cm_listen(struct ibemu_sess_server *s, pid_t pid,
			  const struct ibemu_sess_cm_listen *req);
/* Agent 'a' goes: its peers are told, its tables freed. */
void ibemu__sess_cm_agent_gone(struct ibemu_sess_agent *a);
/* A SEND on stream 'c' ('m' and its 'm->len' MAD bytes, checked). */
void ibemu__sess_send(struct ibemu_sess_conn *c,
		      const struct ibemu_sess_mad *m);

/* sess_rmpp.c */
/*
 * ib_mad_kernel_rmpp_agent(): the daemon segments and reassembles for
 * agent 'a' (registered with an RMPP version, without user RMPP).
 */
int ibemu__sess_rmpp_agent(const struct ibemu_sess_agent *a);
/*
 * Sends MAD 'mad' ('len' bytes) from global port 'port' as the RMPP DATA
 * segments ib_mad would send for a write() of it: each a 256-byte MAD
 * addressed as 'tmpl', with the class headers of 'tmpl->mad' (TID as it
 * leaves) and the next part of the data of 'mad'. Returns 0 or the -errno
 * of the engine.
 */
int ibemu__sess_rmpp_send(struct ibemu_engine *e, uint32_t port,
			  const struct ibemu_mad_msg *tmpl, const uint8_t *mad,
			  uint32_t len);
/*
 * Takes RMPP-active segment 'm' for agent 'a' (which reassembles). Returns
 * 1 when it completes a transfer: the whole MAD in *out (malloc'd, the
 * caller frees it) and its length in *len; 0 when the segment is kept for
 * later or dropped (logged, at most once a second).
 */
int ibemu__sess_rmpp_recv(struct ibemu_sess_agent *a,
			  const struct ibemu_mad_msg *m, uint8_t **out,
			  uint32_t *len);
/* Frees the reassemblies of agent 'a' (ib_cancel_rmpp_recvs). */
void ibemu__sess_rmpp_cancel(struct ibemu_sess_agent *a);

#endif

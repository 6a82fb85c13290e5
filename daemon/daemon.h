/* SPDX-License-Identifier: MIT */
/*
 * The fabric daemon: one process per running fabric, one libuv loop. It owns
 * the fabric (the declared topology, the engine built from it, its traffic
 * jobs), serves the control and session sockets, and
 * cleans up after itself on 'ibemu down', SIGTERM, SIGINT, SIGHUP or
 * SIGQUIT, or when its start fails, through one close path for its
 * handles. SIGUSR1 logs a status line. A daemon whose control socket
 * disappears (its runtime directory was removed) can no longer be reached
 * and stops by itself.
 */
#ifndef IBEMU_DAEMON_H
#define IBEMU_DAEMON_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "buf.h"
#include "engine.h"
#include "routing.h"
#include "runtime.h"
#include "topo.h"

struct ibemu_ctl_conn;

/*
 * The log is bounded twice: repeated lines of one kind from one client go
 * through a limiter (IBEMU_LOG_BURST lines, then one a second, each saying
 * how many were suppressed), and the file itself is rotated past
 * IBEMU_LOG_MAX_BYTES (daemon.log becomes daemon.log.1, replacing the one
 * before), so a detached daemon's logs never take more than twice that.
 */
#define IBEMU_LOG_BURST	    5u
#define IBEMU_LOG_MAX_BYTES (8u << 20)

/* One limiter per client and reason; zeroed memory is a fresh one. */
struct ibemu_log_limit {
	uint64_t refill_ms; /* uv_now() of the last refill */
	uint32_t tokens;    /* lines that may be written now */
	int primed;
	uint64_t suppressed; /* since the last line written */
	uint64_t suppressed_total;
};

/*
 * How virtual time relates to the attached processes (DESIGN.md section
 * 3; 'ibemu up --clock'). QUIESCE: time advances only while every verbs
 * process waits, their work stamped with their own clocks (deterministic).
 * FREE: the engine runs whenever it has events (fastest, not
 * deterministic).
 */
enum ibemu_daemon_clock {
	IBEMU_CLOCK_QUIESCE = 0,
	IBEMU_CLOCK_FREE = 1,
};

/*
 * Wall-clock milliseconds a verbs process may run without any verbs call
 * (a program spinning on memory that an RDMA WRITE fills) before it is
 * counted as waiting; if virtual time then advances, the run is marked
 * non-deterministic.
 */
#define IBEMU_GRACE_MS 10u

/*
 * The daemon's listening sockets (listener.c): owner-only Unix sockets
 * whose connections are accepted by hand, so that a daemon out of file
 * descriptors refuses new clients with a reason instead of spinning.
 */
struct ibemu_listener;

struct ibemu_listener_ops {
	/* A connection of any user arrived; the callee owns 'fd'. */
	void (*accept)(struct ibemu_listener *l, int fd);
	/*
	 * The daemon has no fd left: tell the client on 'fd' (borrowed,
	 * closed on return) 'why', in the server's protocol, without
	 * blocking.
	 */
	void (*refuse)(struct ibemu_listener *l, int fd, const char *why);
};

struct ibemu_listener {
	uv_poll_t poll;	  /* first: the handle's address is the listener's */
	uv_timer_t pause; /* accepting resumes when it fires */
	struct ibemu_daemon *d;
	const struct ibemu_listener_ops *ops; /* set by the owner */
	const char *what;		      /* "control", "session": logs */
	void *data;			      /* the owner's */
	int fd;
	int open_handles;
	void (*closed)(struct ibemu_listener *l);
	struct ibemu_log_limit full_log;
};

/* Opens the fd the daemon keeps in reserve (/dev/null): the fd or -1. */
int ibemu__reserve_fd_open(void);

/*
 * Binds 'path' (replacing a socket left there), mode 0600, as a socket of
 * 'type' (SOCK_STREAM, SOCK_SEQPACKET) and starts accepting. 'l' is the
 * caller's, with ops, what and data set. Returns 0 or -errno (nothing to
 * close then).
 */
int ibemu__listener_start(struct ibemu_daemon *d, struct ibemu_listener *l,
			  const char *path, int type);
/*
 * Stops accepting and closes the socket (not its path); 'closed' (may be
 * NULL) is called once its handles are closed, when 'l' may be freed.
 */
void ibemu__listener_stop(struct ibemu_listener *l,
			  void (*closed)(struct ibemu_listener *l));

struct ibemu_daemon {
	uv_loop_t loop;
	struct ibemu_listener server; /* ctl.sock */
	uv_signal_t sigterm;
	uv_signal_t sigint;
	uv_signal_t sighup;	/* stops, as SIGTERM does */
	uv_signal_t sigquit;	/* stops, as SIGTERM does */
	uv_signal_t sigusr1;	/* logs a status line */
	uv_timer_t watch_timer; /* checks that ctl.sock is still ours */
	dev_t sock_dev;		/* of ctl.sock once bound */
	ino_t sock_ino;
	/* The runtime directory was removed or replaced: leave its paths
	 * alone on the way out, they may be another daemon's by now. */
	int orphaned;
	struct ibemu_topo *topo; /* owned */
	struct ibemu_runtime_paths paths;
	int lock_fd;
	uint64_t started_ms; /* uv_now() at start, for uptime */
	time_t started_at;
	struct ibemu_ctl_conn *conns; /* open control connections */
	struct ibemu_engine *engine;  /* the running fabric */
	struct ibemu_job *job;	      /* the long request being served */
	/* Counters at the last 'ibemu counters', for rates over the interval. */
	struct ibemu_port_counters *snap;
	uint64_t snap_time;
	/* 'ibemu cc' (ctl_cc.c): the study running (its job's), and the
	 * congestion control state of the flows of the last one (owned). */
	struct ibemu_traffic *cc_study;
	struct ibemu_cc_flow *cc_flows;
	size_t cc_nflows;
	uv_idle_t job_idle;  /* runs the job between requests */
	uv_idle_t pump_idle; /* runs the engine for MADs (ibemu_daemon_pump) */
	uv_timer_t pace_timer; /* holds virtual time back to the wall clock */
	uint64_t pace_until;   /* the event pace_timer waits for */
	/* The time rule (--clock). */
	enum ibemu_daemon_clock clock;
	uv_timer_t grace_timer; /* looks again at processes that run long */
	uint64_t run_cap; /* a run stops before this (hand-offs lower it) */
	uint64_t last_horizon; /* the bound the rule gave at the last look */
	int nondet;	       /* the grace period let time advance */
	/* The running verbs process virtual time waits for, while the
	 * engine has events past the horizon it bounds ('ibemu status'). */
	struct {
		pid_t pid; /* 0: time is not held */
		uint32_t node;
		uint64_t since_ms;     /* uv_now() */
		struct timespec since; /* CLOCK_REALTIME */
	} held;
	int mid_run;			/* a run stopped at its batch limit */
	struct ibemu_sess_server *sess; /* attached processes */
	int stopping;
	/* An fd kept open on /dev/null, given up to accept and refuse a
	 * client when the daemon runs out of descriptors (listener.c). */
	int reserve_fd;
	/* Detached: the log file's size, to rotate it (IBEMU_LOG_MAX_BYTES). */
	int log_rotates;
	uint64_t log_bytes;
	/* Servers' refusals, which come from ever new connections. */
	struct ibemu_log_limit refusals;
};

struct ibemu_daemon_opts {
	int foreground; /* stay attached to the terminal, log to stderr */
	enum ibemu_daemon_clock clock;
};

/* "quiesce" or "free". */
const char *ibemu_daemon_clock_name(enum ibemu_daemon_clock c);

/*
 * Starts the daemon for 't' (consumed in every case) and returns when it
 * has stopped. Unless opts->foreground, the caller's process forks: the
 * child runs the daemon detached, the call returns in the parent once the
 * daemon listens (0) or has failed (-errno, 'why' says why). In the
 * foreground the call returns when the daemon stops.
 */
int ibemu_daemon_start(struct ibemu_topo *t,
		       const struct ibemu_daemon_opts *opts, char *why,
		       size_t whylen);

/* Begins an orderly stop: closes every handle; the loop then ends. */
void ibemu_daemon_stop(struct ibemu_daemon *d);

/* Writes a timestamped line to the daemon's log. */
void ibemu_daemon_log(struct ibemu_daemon *d, const char *fmt, ...)
	IBEMU_PRINTF(2, 3);
/*
 * As ibemu_daemon_log(), through limiter 'l': the first IBEMU_LOG_BURST
 * lines, then one a second; a line written after some were suppressed
 * says how many. Call from the loop's thread (it reads uv_now()).
 */
void ibemu_daemon_log_limited(struct ibemu_daemon *d, struct ibemu_log_limit *l,
			      const char *fmt, ...) IBEMU_PRINTF(3, 4);

/*
 * Whether the peer of the accepted socket 'fd' may use the fabric (it
 * runs as the daemon's uid). If not, 'why' says so, for the peer to read
 * before the socket is closed, and the refusal is logged (limited).
 */
int ibemu_daemon_peer_allowed(struct ibemu_daemon *d, int fd, const char *sock,
			      char *why, size_t whylen);

/*
 * Runs the engine in the loop's idle time until it has no event left (or
 * a traffic study takes it over). Call after feeding the engine input.
 */
void ibemu_daemon_pump(struct ibemu_daemon *d);
/*
 * The handles that drive the engine (the pump, the pace and grace timers):
 * set up on the daemon's loop, and closed, in one place for the daemon and
 * for the fuzz targets that build a daemon without forking one.
 */
void ibemu__daemon_pump_init(struct ibemu_daemon *d);
void ibemu__daemon_pump_close(struct ibemu_daemon *d);

/* The session server (sess_server.c): attached processes, sess.sock. */
int ibemu__sess_server_start(struct ibemu_daemon *d);
void ibemu__sess_server_stop(struct ibemu_daemon *d);
/* Whether any process has a port stream open. */
int ibemu__sess_attached(const struct ibemu_daemon *d);
/* Whether any process has a umad port stream open (verbs ones aside). */
int ibemu__sess_umad_attached(const struct ibemu_daemon *d);
/*
 * The HCA port whose issm device a process holds (a subnet manager runs
 * there, sess_issm.c): its global index, or IBEMU_NONE. The lowest if
 * several do (a master and its standbys).
 */
uint32_t ibemu__sess_sm_port(const struct ibemu_daemon *d);
/*
 * The time rule (sess_verbs_rule.c): the virtual time before which the engine
 * may run, given the verbs processes that run now (UINT64_MAX when every
 * one waits). A process counted as waiting only because it ran past the
 * grace period sets *presumed to its pid.
 */
uint64_t ibemu__sess_horizon(struct ibemu_daemon *d, pid_t *presumed);
/*
 * The running verbs stream whose clock gives 'horizon' (the least bound,
 * as ibemu__sess_horizon() found it): its process in *pid and its HCA's
 * node in *node. Returns 0, or -ENOENT if none does.
 */
int ibemu__sess_holder(struct ibemu_daemon *d, uint64_t horizon, pid_t *pid,
		       uint32_t *node);
/*
 * Hands the work in the verbs rings to the transports (sess_verbs_ring.c;
 * no pump); 1 if there was any. Under the rule, called after the horizon was read: a
 * process that posted before it said it waits has its work taken first.
 */
int ibemu__sess_drain(struct ibemu_daemon *d);
/* Makes the completions written during a run visible (sess_verbs_tp.c). */
void ibemu__sess_flush(struct ibemu_daemon *d);
/* The engine's mad_recv callback: a MAD for an attached process. */
void ibemu__sess_mad_recv(struct ibemu_daemon *d, uint32_t port,
			  const struct ibemu_mad_msg *m);

/* The control server (ctl_server.c). */
int ibemu__ctl_server_start(struct ibemu_daemon *d);
void ibemu__ctl_server_stop(struct ibemu_daemon *d);
void ibemu__ctl_jobs_init(struct ibemu_daemon *d);
void ibemu__ctl_jobs_fini(struct ibemu_daemon *d);

/* Runs one control command (ctl_commands.c); returns the exit status. */
struct ibemu_ctl_call;
int ibemu__ctl_dispatch(struct ibemu_ctl_call *call);
/* Served commands that have a file of their own. */
int ibemu__serve_counters(struct ibemu_ctl_call *call);
int ibemu__serve_traffic(struct ibemu_ctl_call *call);
int ibemu__serve_route(struct ibemu_ctl_call *call);
int ibemu__serve_link(struct ibemu_ctl_call *call);
/*
 * ctl_cc.c: 'ibemu cc'. A study's job tells when it starts and before it
 * is destroyed (the flows' state is kept until the next study);
 * ibemu__cc_fini() frees what is kept.
 */
int ibemu__serve_cc(struct ibemu_ctl_call *call);
struct ibemu_traffic;
void ibemu__cc_study_start(struct ibemu_daemon *d, struct ibemu_traffic *tr);
void ibemu__cc_study_end(struct ibemu_daemon *d);
void ibemu__cc_fini(struct ibemu_daemon *d);
/* ctl_node.c: 'ibemu node down|up NODE'. */
int ibemu__serve_node(struct ibemu_ctl_call *call);
/*
 * Whether data from HCA port (src, sp) reaches HCA port (dst, dp) through
 * the LFTs (ctl_route.c): NULL if it does, else why not, with the node and
 * port where it stops in *at_node and *at_port.
 */
const char *ibemu__route_stop(const struct ibemu_daemon *d, uint32_t src,
			      unsigned sp, uint32_t dst, unsigned dp,
			      uint32_t *at_node, unsigned *at_port);

#endif

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
#include "rule.h"
#include "runtime.h"
#include "topo.h"

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

struct ibemu_daemon;
struct ibemu_ctl;
struct ibemu_sess_server;

/*
 * Work the servers above the engine schedule in virtual time (due.c): a
 * MAD a process stamped for later, the timeout of a MAD it sent, the end
 * of a process's wait in umad_recv(), a fault the CLI set for a time. The
 * pump fires each one when virtual time reaches it, before the engine's
 * events of that time, in the order they were armed, and paces long leaps
 * to them as it paces the engine's own events.
 */
struct ibemu_due {
	uint64_t at_ps;
	struct ibemu_due *prev, *next; /* the daemon's list, by time */
	void (*fire)(struct ibemu_daemon *d, struct ibemu_due *due);
	int armed;
	/* Its owner blocks on it under the time rule (a CM request's
	 * retransmission, attach/sess_cm.c): virtual time leaps to it at
	 * once, not at the wall clock's pace (leap_ok() in daemon.c), while
	 * no process is only presumed to wait (its grace period). */
	int leaps;
};

/*
 * The servers above the daemon, given to ibemu_daemon_start() by its
 * caller (the CLI gives the control server of ctl/ with the service of
 * attached processes of attach/): started once the daemon's loop is set
 * up, stopped first on a stop, freed after its loop has ended.
 */
struct ibemu_daemon_servers {
	/* 0, or -errno with the reason in 'why' (the daemon does not start). */
	int (*start)(struct ibemu_daemon *d, char *why, size_t whylen);
	void (*stop)(struct ibemu_daemon *d);
	void (*fini)(struct ibemu_daemon *d);
	/* What they are doing, for SIGUSR1's status line. */
	const char *(*doing)(struct ibemu_daemon *d);
};

/*
 * The attached processes as the pump sees them, set by the service of
 * attached processes (attach/) when it starts; without it no process is
 * ever attached. attach/attach.h says what each op does.
 */
struct ibemu_daemon_attached_ops {
	int (*any)(const struct ibemu_daemon *d);
	uint64_t (*horizon)(struct ibemu_daemon *d, pid_t *presumed);
	int (*holder)(struct ibemu_daemon *d, uint64_t horizon, pid_t *pid,
		      uint32_t *node);
	int (*drain)(struct ibemu_daemon *d);
	void (*flush)(struct ibemu_daemon *d);
};
/* Until a service attaches processes: none is. */
extern const struct ibemu_daemon_attached_ops ibemu__daemon_none_attached;
/* What ops.drain() returns: nothing taken (0), or TOOK, with MORE if
 * work was left in a ring (the engine must wait for it). */
#define IBEMU_DAEMON_DRAIN_TOOK 1
#define IBEMU_DAEMON_DRAIN_MORE 2

struct ibemu_daemon {
	uv_loop_t loop;
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
	struct ibemu_engine *engine; /* the running fabric */
	/* A job runs the engine itself (a traffic study): the pump stays off. */
	int engine_held;
	/* The servers above, and what each keeps (ctl/, attach/). */
	const struct ibemu_daemon_servers *servers;
	struct ibemu_ctl *ctl;
	const struct ibemu_daemon_attached_ops *attached;
	uv_idle_t pump_idle; /* runs the engine for MADs (ibemu_daemon_pump) */
	/* Armed ibemu_due items, by time. */
	struct ibemu_due *due_head, *due_tail;
	int pumping; /* a pump step runs: ibemu_daemon_pump() adds nothing */
	uv_timer_t pace_timer; /* --clock free: holds virtual time back */
	uint64_t pace_until;   /* the event pace_timer waits for */
	/* A long leap waits on the wall clock (leap_ok() in daemon.c). */
	uv_timer_t leap_timer;
	uint64_t leap_to, leap_from, leap_since_ms;
	/* The time rule (--clock, clock/rule.h), and the timer that looks
	 * again at processes that run long. */
	struct ibemu_rule rule;
	uv_timer_t grace_timer;
	/* The running verbs process virtual time waits for, while the
	 * engine has events past the horizon it bounds ('ibemu status'). */
	struct {
		pid_t pid; /* 0: time is not held */
		uint32_t node;
		uint64_t since_ms;     /* uv_now() */
		struct timespec since; /* CLOCK_REALTIME */
	} held;
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
	enum ibemu_clock clock;
};

/*
 * Starts the daemon for 't' (consumed in every case), with 'servers'
 * (borrowed, static), and returns when it has stopped. Unless opts->foreground, the caller's process forks: the
 * child runs the daemon detached, the call returns in the parent once the
 * daemon listens (0) or has failed (-errno, 'why' says why). In the
 * foreground the call returns when the daemon stops.
 */
int ibemu_daemon_start(struct ibemu_topo *t,
		       const struct ibemu_daemon_opts *opts,
		       const struct ibemu_daemon_servers *servers, char *why,
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
 * Arms 'due' (the caller's, with 'fire' set; re-armed if it
 * was) at virtual time 'at_ps', or the engine's time if that has passed.
 * 'fire' is called once, from the pump, with the engine at that time; it
 * may arm and cancel items. Cancel before freeing an armed item.
 */
void ibemu_due_arm(struct ibemu_daemon *d, struct ibemu_due *due,
		   uint64_t at_ps);
void ibemu_due_cancel(struct ibemu_daemon *d, struct ibemu_due *due);
/* The time of the first armed item, UINT64_MAX if none. */
uint64_t ibemu__due_next(const struct ibemu_daemon *d);
/* Moves the engine to the first item's time and fires it (the pump). */
void ibemu__due_fire_first(struct ibemu_daemon *d);

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

#endif

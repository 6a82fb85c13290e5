/* SPDX-License-Identifier: MIT */
/*
 * The fabric daemon: one process per running fabric, one libuv loop. It owns
 * the fabric (the declared topology, the engine built from it, its test
 * routes and traffic jobs), serves the control and session sockets, and
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
 * Routes the daemon applies until a subnet manager exists: the engine at
 * that place in routing/'s registry (ibemu_routing_at()), or none. Values
 * come from ibemu_daemon_routes_parse(), so a new engine needs no new name.
 */
enum ibemu_daemon_routes {
	IBEMU_ROUTES_MINHOP = 0,  /* the registry's first engine: the default */
	IBEMU_ROUTES_NONE = 0xff, /* no LIDs, no LFTs, ports left in Init */
};

struct ibemu_daemon {
	uv_loop_t loop;
	uv_pipe_t server;
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
	struct ibemu_routes *routes;  /* test routes, until an SM exists */
	enum ibemu_daemon_routes routing;
	struct ibemu_job *job; /* the long request being served */
	/* Counters at the last 'ibemu counters', for rates over the interval. */
	struct ibemu_port_counters *snap;
	uint64_t snap_time;
	uv_idle_t job_idle;  /* runs the job between requests */
	uv_idle_t pump_idle; /* runs the engine for MADs (ibemu_daemon_pump) */
	uv_timer_t pace_timer; /* holds virtual time back to the wall clock */
	uint64_t pace_until;   /* the event pace_timer waits for */
	struct ibemu_sess_server *sess; /* attached processes */
	int stopping;
};

struct ibemu_daemon_opts {
	int foreground; /* stay attached to the terminal, log to stderr */
	enum ibemu_daemon_routes routes;
};

/* An engine's name (ibemu_routing_find()) or "none": 0 or -EINVAL. */
int ibemu_daemon_routes_parse(const char *s, enum ibemu_daemon_routes *out);
const char *ibemu_daemon_routes_name(enum ibemu_daemon_routes r);

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
 * Runs the engine in the loop's idle time until it has no event left (or
 * a traffic study takes it over). Call after feeding the engine input.
 */
void ibemu_daemon_pump(struct ibemu_daemon *d);

/* The session server (sess_server.c): attached processes, sess.sock. */
int ibemu__sess_server_start(struct ibemu_daemon *d);
void ibemu__sess_server_stop(struct ibemu_daemon *d);
/* Whether any process has a port stream open. */
int ibemu__sess_attached(const struct ibemu_daemon *d);
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

#endif

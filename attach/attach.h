/* SPDX-License-Identifier: MIT */
/*
 * The service of attached processes (attach/): the session server on
 * sess.sock, through which processes attach to HCAs with ibemu's
 * libibumad and libibverbs. What the daemon's other parts use of it.
 */
#ifndef IBEMU_ATTACH_H
#define IBEMU_ATTACH_H

#include <stdint.h>
#include <sys/types.h>

#include "daemon.h"

struct ibemu_mad_msg;

/* The session server (sess_server.c): attached processes, sess.sock. */
int ibemu__sess_server_start(struct ibemu_daemon *d);
void ibemu__sess_server_stop(struct ibemu_daemon *d);
/* Whether any process has a port stream open. */
int ibemu__sess_attached(const struct ibemu_daemon *d);
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
 * no pump), at most IBEMU_SESS_DRAIN_BUDGET work requests a call, so that
 * one process's rings cannot hold the loop. Returns 0 if there was
 * nothing, else IBEMU_DAEMON_DRAIN_TOOK, with IBEMU_DAEMON_DRAIN_MORE if the
 * budget ran out first (the engine must then wait for the rest: a WQE
 * left in a ring is one the process posted before the engine's time).
 * Under the rule, called after the horizon was read: a process that posted
 * before it said it waits has its work taken first.
 */
#define IBEMU_SESS_DRAIN_BUDGET 4096u
int ibemu__sess_drain(struct ibemu_daemon *d);
/* Makes the completions written during a run visible (sess_verbs_tp.c). */
void ibemu__sess_flush(struct ibemu_daemon *d);
/* Forgets the bindings of processes that are gone and hold no stream,
 * giving their HCAs' ports back (sess_bind.c). */
void ibemu__sess_prune(struct ibemu_daemon *d);
/* The QP transport of HCA 'node' while processes are bound to it, or
 * NULL (sess_bind.c). */
struct ibemu_tp *ibemu__sess_hca_tp(const struct ibemu_daemon *d,
				    uint32_t node);
/* The process whose verbs context owns QP 'qpn' of HCA 'node', or 0. */
pid_t ibemu__sess_qp_pid(const struct ibemu_daemon *d, uint32_t node,
			 uint32_t qpn);
/* The engine's mad_recv callback: a MAD for an attached process. */
void ibemu__sess_mad_recv(struct ibemu_daemon *d, uint32_t port,
			  const struct ibemu_mad_msg *m);

#endif

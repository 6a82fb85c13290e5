// SPDX-License-Identifier: MIT
/*
 * What attached processes may hold in the daemon through their verbs
 * contexts (sess_limits.c): each object costs the daemon memory, mappings
 * of the process's rings (vm.max_map_count bounds them all, 65,530 by
 * default) and file descriptors (its RLIMIT_NOFILE), so one process gets
 * a share, and all of them together leave room for the CLI, the SM and
 * the daemon's own needs. Shown by ibv_query_device where it has a field
 * (proto/verbs_proto.h) and in docs/security.md.
 */
#ifndef IBEMU_DAEMON_SESS_LIMITS_H
#define IBEMU_DAEMON_SESS_LIMITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon.h"

enum ibemu_sess_res {
	IBEMU_RES_CONTEXT,
	IBEMU_RES_PD,
	IBEMU_RES_MR,
	IBEMU_RES_CQ,
	IBEMU_RES_QP,
	IBEMU_RES_SRQ,
	IBEMU_RES_CHANNEL, /* a CQ's completion channel eventfd */
	IBEMU_RES_MAP,	   /* a mapping of the process's memory */
	IBEMU_RES_FD,	   /* a file descriptor the daemon holds for it */
	IBEMU_RES_N
};

/* What one verbs object costs, by resource. */
struct ibemu_sess_cost {
	uint32_t n[IBEMU_RES_N];
};

/* What one process holds, through all its verbs contexts. */
struct ibemu_sess_proc {
	struct ibemu_sess_proc *next;
	pid_t pid;
	uint32_t streams; /* its verbs contexts: the references */
	struct ibemu_sess_cost held;
	struct ibemu_log_limit refused_log[IBEMU_RES_N]; /* one per limit */
};

struct ibemu_sess_server;
struct ibemu_sess_verbs;

/* The limits of one process, and of all together (the fd total is set
 * from RLIMIT_NOFILE by ibemu__sess_limits_init). */
extern const struct ibemu_sess_cost ibemu__sess_proc_limits;
void ibemu__sess_limits_init(struct ibemu_sess_server *s);

/* Stream 'v' of process 'pid' starts and ends being counted. */
struct ibemu_sess_proc *ibemu__sess_proc_get(struct ibemu_sess_server *s,
					     pid_t pid);
void ibemu__sess_proc_put(struct ibemu_sess_server *s,
			  struct ibemu_sess_proc *p);

/*
 * Stream 'v' takes what 'cost' counts: 0, or the errno a kernel driver
 * gives at such a limit (-ENOMEM, -EMFILE for contexts and fds), after a
 * log line naming the process and the limit. 'what' names the object.
 */
int ibemu__vs_hold(struct ibemu_sess_verbs *v,
		   const struct ibemu_sess_cost *cost, const char *what);
/* The same, for a context about to open: 'why' gets the reason. */
int ibemu__vs_hold_why(struct ibemu_sess_verbs *v,
		       const struct ibemu_sess_cost *cost, const char *what,
		       char *why, size_t whylen);
/* ... and gives it back. */
void ibemu__vs_unhold(struct ibemu_sess_verbs *v,
		      const struct ibemu_sess_cost *cost);

#endif

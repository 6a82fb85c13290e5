// SPDX-License-Identifier: MIT
/*
 * Per-process limits of the verbs objects attached processes hold in the
 * daemon, and the limits of all of them together (sess_limits.h). A
 * process that reached a limit gets the errno a kernel driver gives there
 * and one log line (through its stream's limiter) that names it and the
 * limit; nothing else changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "sess_verbs_int.h"

/*
 * One process: the device's limits of proto/verbs_proto.h, over all its
 * contexts; mappings enough for all of those objects with their rings;
 * fds enough for a context per thread of a large program, each with its
 * own completion channels.
 */
const struct ibemu_sess_cost ibemu__sess_proc_limits = {
	.n = {
		[IBEMU_RES_CONTEXT] = IBEMU_VERBS_MAX_CONTEXTS,
		[IBEMU_RES_PD] = IBEMU_VERBS_MAX_PD,
		[IBEMU_RES_MR] = IBEMU_VERBS_MAX_MR,
		[IBEMU_RES_CQ] = IBEMU_VERBS_MAX_CQ,
		[IBEMU_RES_QP] = IBEMU_VERBS_MAX_QP,
		[IBEMU_RES_SRQ] = IBEMU_VERBS_MAX_SRQ,
		[IBEMU_RES_CHANNEL] = IBEMU_VERBS_MAX_CHANNELS,
		[IBEMU_RES_MAP] = IBEMU_VERBS_MAX_MAPS,
		[IBEMU_RES_FD] = IBEMU_VERBS_MAX_FDS,
	}};

/*
 * All processes together. vm.max_map_count is 65,530 by default: 49,152
 * leaves the daemon 16,000 of its own (its heap, libraries, the
 * transports' buffers). Of its fds, FDS_SPARE stay for control
 * clients (the CLI), umad processes (the SM) and the log.
 */
#define ALL_CONTEXTS 1024u
#define ALL_MAPS     49152u
#define FDS_SPARE    512u

static const char *const res_name[IBEMU_RES_N] = {
	[IBEMU_RES_CONTEXT] = "verbs contexts",
	[IBEMU_RES_PD] = "protection domains",
	[IBEMU_RES_MR] = "memory regions",
	[IBEMU_RES_CQ] = "completion queues",
	[IBEMU_RES_QP] = "queue pairs",
	[IBEMU_RES_SRQ] = "shared receive queues",
	[IBEMU_RES_CHANNEL] = "completion channels",
	[IBEMU_RES_MAP] = "mappings of process memory",
	[IBEMU_RES_FD] = "file descriptors",
};

void ibemu__sess_limits_init(struct ibemu_sess_server *s)
{
	struct rlimit rl = {0};
	uint64_t fds;
	unsigned i;

	for (i = 0; i < IBEMU_RES_N; i++)
		s->limits_all.n[i] = UINT32_MAX;
	s->limits_all.n[IBEMU_RES_CONTEXT] = ALL_CONTEXTS;
	s->limits_all.n[IBEMU_RES_MAP] = ALL_MAPS;
	getrlimit(RLIMIT_NOFILE, &rl);
	fds = rl.rlim_cur == RLIM_INFINITY ? UINT32_MAX : rl.rlim_cur;
	s->limits_all.n[IBEMU_RES_FD] = fds > 2 * FDS_SPARE
						? (uint32_t)(fds - FDS_SPARE)
						: (uint32_t)(fds / 2);
}

struct ibemu_sess_proc *ibemu__sess_proc_get(struct ibemu_sess_server *s,
					     pid_t pid)
{
	struct ibemu_sess_proc *p;

	for (p = s->procs; p; p = p->next)
		if (p->pid == pid)
			break;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->pid = pid;
		p->next = s->procs;
		s->procs = p;
	}
	p->streams++;
	return p;
}

void ibemu__sess_proc_put(struct ibemu_sess_server *s,
			  struct ibemu_sess_proc *p)
{
	struct ibemu_sess_proc **pp;

	if (--p->streams)
		return;
	for (pp = &s->procs; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	free(p);
}

/* The errno a kernel gives at the limit of 'r'. */
static int res_errno(enum ibemu_sess_res r)
{
	return r == IBEMU_RES_CONTEXT || r == IBEMU_RES_CHANNEL ||
			       r == IBEMU_RES_FD
		       ? -EMFILE
		       : -ENOMEM;
}

/*
 * Whether 'v' may take 'cost': 0, or the errno of the first limit it
 * would pass ('*which' says which; 'why' the reason).
 */
static int may_hold(struct ibemu_sess_verbs *v,
		    const struct ibemu_sess_cost *cost, const char *what,
		    char *why, size_t whylen, unsigned *which)
{
	struct ibemu_sess_server *s = v->c->s;
	struct ibemu_sess_proc *p = v->proc;
	unsigned i;

	for (i = 0; i < IBEMU_RES_N; i++) {
		*which = i;
		if (!cost->n[i])
			continue;
		if ((uint64_t)p->held.n[i] + cost->n[i] >
		    ibemu__sess_proc_limits.n[i]) {
			snprintf(why, whylen,
				 "%s refused: the process is at its limit "
				 "of %u %s",
				 what, ibemu__sess_proc_limits.n[i],
				 res_name[i]);
			return res_errno(i);
		}
		if ((uint64_t)s->held_all.n[i] + cost->n[i] >
		    s->limits_all.n[i]) {
			snprintf(why, whylen,
				 "%s refused: attached processes hold %u %s, "
				 "the limit for all of them",
				 what, s->held_all.n[i], res_name[i]);
			return res_errno(i);
		}
	}
	return 0;
}

int ibemu__vs_hold_why(struct ibemu_sess_verbs *v,
		       const struct ibemu_sess_cost *cost, const char *what,
		       char *why, size_t whylen)
{
	struct ibemu_sess_server *s = v->c->s;
	unsigned i;
	int ret = may_hold(v, cost, what, why, whylen, &i);

	if (ret)
		return ret;
	for (i = 0; i < IBEMU_RES_N; i++) {
		v->held.n[i] += cost->n[i];
		v->proc->held.n[i] += cost->n[i];
		s->held_all.n[i] += cost->n[i];
	}
	return 0;
}

int ibemu__vs_hold(struct ibemu_sess_verbs *v,
		   const struct ibemu_sess_cost *cost, const char *what)
{
	char why[200];
	unsigned i;
	int ret = may_hold(v, cost, what, why, sizeof(why), &i);

	if (ret) {
		ibemu_daemon_log_limited(v->c->s->d, &v->proc->refused_log[i],
					 "process %ld (%s): %s",
					 (long)v->proc->pid, ibemu__vs_host(v),
					 why);
		return ret;
	}
	return ibemu__vs_hold_why(v, cost, what, why, sizeof(why));
}

void ibemu__vs_unhold(struct ibemu_sess_verbs *v,
		      const struct ibemu_sess_cost *cost)
{
	/* A copy: 'cost' may be v->held itself (all of it goes back). */
	const struct ibemu_sess_cost c = *cost;
	struct ibemu_sess_server *s = v->c->s;
	unsigned i;

	for (i = 0; i < IBEMU_RES_N; i++) {
		v->held.n[i] -= c.n[i];
		v->proc->held.n[i] -= c.n[i];
		s->held_all.n[i] -= c.n[i];
	}
}

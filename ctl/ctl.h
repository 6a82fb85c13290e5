/* SPDX-License-Identifier: MIT */
/*
 * The control server (ctl/): ctl.sock, the commands the CLI sends, each
 * served by the file that owns its state, and the long requests (a
 * traffic study) that run as jobs between other requests.
 */
#ifndef IBEMU_CTL_H
#define IBEMU_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

/* The servers a daemon runs: this one and the session server. */
extern const struct ibemu_daemon_servers ibemu_ctl_servers;

/* What the control server keeps (d->ctl). */
struct ibemu_ctl {
	struct ibemu_listener server; /* ctl.sock */
	struct ibemu_ctl_conn *conns; /* open control connections */
	struct ibemu_job *job;	      /* the long request being served */
	uv_idle_t job_idle;	      /* runs the job between requests */
	/* Counters at the last 'ibemu counters', for rates over the
	 * interval. */
	struct ibemu_port_counters *snap;
	uint64_t snap_time;
	/* 'ibemu cc' (ctl_cc.c): the study running (its job's), and the
	 * congestion control state of the flows of the last one (owned). */
	struct ibemu_traffic *cc_study;
	struct ibemu_cc_flow *cc_flows;
	size_t cc_nflows;
	/* Faults waiting for their virtual time (ctl_at.c), owned. */
	struct ibemu_ctl_fault *faults;
};

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
/*
 * ctl_at.c: '--at T' of 'ibemu link' and 'ibemu node': T (text, in
 * microseconds of virtual time, or +US from now) read, and the cables of
 * node 'node_or_port' (whole_node) or of global port 'node_or_port'
 * taken down or brought up then. Returns the exit status ('what' names
 * the command in an error). fini drops what has not happened yet.
 */
int ibemu__ctl_at(struct ibemu_ctl_call *call, const char *what,
		  const char *text, int up, int whole_node,
		  uint32_t node_or_port);
void ibemu__ctl_at_fini(struct ibemu_daemon *d);
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

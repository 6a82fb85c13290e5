// SPDX-License-Identifier: MIT
/*
 * The daemon's part of the CM protocol (IBA vol 1 ch. 12): what the
 * kernel's single ib_cm does for all the processes of a host, where each
 * attached process runs its own CM in librdmacm (rdmacm/cm.c) on a MAD
 * agent of class 0x07. Several processes may hold such an agent on one
 * HCA port; the daemon routes the CM MADs that reach the port:
 *
 * - REQ and SIDR_REQ by service ID, to the agent that listens on it
 *   (CM_LISTEN, a session call); none: the daemon answers as ib_cm does,
 *   REJ reason 8 (invalid service ID) or SIDR_REP status 1;
 * - the others by the Comm ID the receiver chose (their Remote Comm ID),
 *   SIDR_REP by its request ID: the daemon learns them from what each
 *   agent sends; an ID another agent of the port uses is refused;
 * - the timers as ib_cm's MAD sends: a REP or REJ ends the REQ's
 *   retransmission, an MRA stretches it to its service timeout, RTU ends
 *   the REP's, DREP the DREQ's, SIDR_REP the SIDR_REQ's (all in virtual
 *   time, sess_agent.c);
 * - a process that is gone (its agent freed): each connection it had
 *   gets what ib_cm's cm_destroy_id() sends, DREQ once established, REJ
 *   before (reason 1, timeout, for a REQ it sent; 28 for one it got).
 *
 * Every field is checked: a MAD that is not a CM message of version 2
 * (mad/mad_cm.h) is dropped, as is a SEND that would take another
 * process's Comm ID.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad_cm.h"
#include "sess.h"

/* IBA 13.5.4 QP1's Q_Key. */
#define GSI_QKEY 0x80010000u
/* The most connections a CM agent keeps (a process's ids). */
#define CONNS_MAX 65536u

enum conn_state {
	CONN_REQ_SENT, /* active: REQ out, no answer yet */
	CONN_REQ_RCVD, /* passive: REQ in, not answered */
	CONN_REP,      /* REP sent or received: tear down with DREQ */
	CONN_DREQ,     /* DREQ sent or received */
	CONN_SIDR,     /* a SIDR_REQ out, by its request ID */
};

struct ibemu_sess_cm_conn {
	struct ibemu_sess_cm_conn *next;
	enum conn_state state;
	uint32_t local_id;  /* the agent's Comm ID (0: not sent yet) */
	uint32_t remote_id; /* the peer's (0: not known yet) */
	uint32_t remote_qpn;
	uint16_t remote_lid;
	uint16_t pkey;
	uint8_t sl;
};

struct ibemu_sess_cm_service {
	struct ibemu_sess_cm_service *next;
	uint64_t service_id;
};

int ibemu__sess_cm_is_agent(const struct ibemu_sess_agent *a)
{
	return a->mgmt_class == IBEMU_MAD_CLASS_CM;
}

/* --- what a CM MAD says ---------------------------------------------- */

int ibemu__sess_cm_parse(const uint8_t *mad, size_t len,
			 struct ibemu_sess_cm_key *k)
{
	int ret = ibemu_cm_check(mad, len);

	memset(k, 0, sizeof(*k));
	if (ret)
		return ret;
	k->attr = ibemu_mad_get_attr_id(mad);
	/* The Local and Remote Comm IDs are the message's first 8 bytes in
	 * all but REQ and the SIDR pair (tables 107-113). */
	switch (k->attr) {
	case IBEMU_CM_ATTR_REQ:
		k->local_id =
			(uint32_t)ibemu_cm_get(mad, IBEMU_CM_REQ_LOCAL_COMM_ID);
		k->service_id = ibemu_cm_get(mad, IBEMU_CM_REQ_SERVICE_ID);
		k->qpn = (uint32_t)ibemu_cm_get(mad, IBEMU_CM_REQ_LOCAL_QPN);
		break;
	case IBEMU_CM_ATTR_SIDR_REQ:
	case IBEMU_CM_ATTR_SIDR_REP:
		k->local_id = (uint32_t)ibemu_cm_get(
			mad, IBEMU_CM_SIDR_REQ_REQUEST_ID);
		if (k->attr == IBEMU_CM_ATTR_SIDR_REQ)
			k->service_id =
				ibemu_cm_get(mad, IBEMU_CM_SIDR_REQ_SERVICE_ID);
		break;
	default:
		k->local_id =
			(uint32_t)ibemu_cm_get(mad, IBEMU_CM_REP_LOCAL_COMM_ID);
		k->remote_id = (uint32_t)ibemu_cm_get(
			mad, IBEMU_CM_REP_REMOTE_COMM_ID);
		if (k->attr == IBEMU_CM_ATTR_REP)
			k->qpn = (uint32_t)ibemu_cm_get(mad,
							IBEMU_CM_REP_LOCAL_QPN);
		if (k->attr == IBEMU_CM_ATTR_MRA) {
			k->mraed = (uint8_t)ibemu_cm_get(
				mad, IBEMU_CM_MRA_MESSAGE_MRAED);
			k->timeout = (uint8_t)ibemu_cm_get(
				mad, IBEMU_CM_MRA_SERVICE_TIMEOUT);
		}
		break;
	}
	/* A Comm ID of 0 names nothing (ib_cm never hands it out). */
	if (!k->local_id && k->attr != IBEMU_CM_ATTR_REJ)
		return -EINVAL;
	return 0;
}

/* --- the agents' tables ---------------------------------------------- */

#define for_each_cm_agent(s, port, c, a, id)                                 \
	for ((c) = (s)->conns; (c); (c) = (c)->next)                         \
		if ((c)->kind == IBEMU_SESS_CONN_STREAM &&                   \
		    (c)->port_index == (port) && !(c)->closing)              \
			for ((id) = 0; (id) < IBEMU_SESS_MAX_AGENTS; (id)++) \
				if (((a) = (c)->agents[(id)]) &&             \
				    ibemu__sess_cm_is_agent(a))

static struct ibemu_sess_cm_conn *conn_by_local(struct ibemu_sess_agent *a,
						uint32_t local_id)
{
	struct ibemu_sess_cm_conn *cc;

	for (cc = a->cm_conns; cc; cc = cc->next)
		if (cc->local_id == local_id)
			return cc;
	return NULL;
}

/* The agent of port 'port' whose connection has Comm ID 'local_id'. */
static struct ibemu_sess_agent *agent_by_local(struct ibemu_sess_server *s,
					       uint32_t port, uint32_t local_id,
					       struct ibemu_sess_cm_conn **out)
{
	struct ibemu_sess_conn *c;
	struct ibemu_sess_agent *a;
	uint32_t id;

	for_each_cm_agent(s, port, c, a, id)
	{
		*out = conn_by_local(a, local_id);
		if (*out)
			return a;
	}
	return NULL;
}

static struct ibemu_sess_agent *agent_by_service(struct ibemu_sess_server *s,
						 uint32_t port, uint64_t sid)
{
	struct ibemu_sess_cm_service *l;
	struct ibemu_sess_conn *c;
	struct ibemu_sess_agent *a;
	uint32_t id;

	for_each_cm_agent(s, port, c, a, id)
	{
		for (l = a->cm_listens; l; l = l->next)
			if (l->service_id == sid)
				return a;
	}
	return NULL;
}

static void conn_unlink(struct ibemu_sess_agent *a,
			struct ibemu_sess_cm_conn *cc)
{
	struct ibemu_sess_cm_conn **pp;

	for (pp = &a->cm_conns; *pp; pp = &(*pp)->next) {
		if (*pp == cc) {
			*pp = cc->next;
			a->cm_nconns--;
			free(cc);
			return;
		}
	}
}

static struct ibemu_sess_cm_conn *conn_add(struct ibemu_sess_agent *a)
{
	struct ibemu_sess_cm_conn *cc;

	if (a->cm_nconns >= CONNS_MAX)
		return NULL;
	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return NULL;
	cc->next = a->cm_conns;
	a->cm_conns = cc;
	a->cm_nconns++;
	return cc;
}

/* A passive connection not answered yet, by the peer's Comm ID. */
static struct ibemu_sess_cm_conn *conn_by_remote(struct ibemu_sess_agent *a,
						 uint32_t remote_id,
						 uint16_t remote_lid)
{
	struct ibemu_sess_cm_conn *cc;

	for (cc = a->cm_conns; cc; cc = cc->next)
		if (cc->remote_id == remote_id && cc->remote_lid == remote_lid)
			return cc;
	return NULL;
}

/* --- the CM's timers: its outstanding sends (sess_agent.c) ---------- */

static struct ibemu_sess_send *cm_send_find(struct ibemu_sess_agent *a,
					    uint16_t attr, uint32_t local_id)
{
	struct ibemu_sess_send *send;
	struct ibemu_sess_cm_key k;

	for (send = a->sends; send; send = send->next)
		if (!ibemu__sess_cm_parse(send->msg.mad, IBEMU_MAD_LEN, &k) &&
		    k.attr == attr && k.local_id == local_id)
			return send;
	return NULL;
}

static void cm_send_end(struct ibemu_sess_agent *a, uint16_t attr,
			uint32_t local_id)
{
	struct ibemu_sess_send *send = cm_send_find(a, attr, local_id);

	if (send)
		ibemu__sess_send_end(send);
}

/*
 * An MRA's service timeout (IBA 12.7.27: 4.096 us * 2^t) in ms, as ib_cm's
 * cm_convert_to_ms() rounds it.
 */
static uint32_t mra_timeout_ms(uint8_t t)
{
	return 1u << (t > 8 ? (t & 31) - 8 : 0);
}

/* --- sending ------------------------------------------------------- */

/* The daemon's own CM MAD from port 'port' (REJ, SIDR_REP, DREQ, DREP). */
static void cm_send_own(struct ibemu_daemon *d, uint32_t port,
			const uint8_t *mad, uint16_t dlid, uint8_t sl,
			uint16_t pkey)
{
	struct ibemu_mad_msg msg;

	memset(&msg, 0, sizeof(msg));
	memcpy(msg.mad, mad, IBEMU_MAD_LEN);
	msg.dlid = dlid;
	msg.sl = sl;
	msg.src_qp = 1;
	msg.dst_qp = 1;
	msg.qkey = GSI_QKEY;
	msg.pkey = pkey;
	ibemu_engine_mad_send(d->engine, port, &msg);
}

/* ib_cm's cm_issue_rej()/SIDR_REP for a REQ nobody listens for. */
static void answer_no_listener(struct ibemu_daemon *d, uint32_t port,
			       const struct ibemu_mad_msg *m,
			       const struct ibemu_sess_cm_key *k)
{
	uint8_t mad[IBEMU_MAD_LEN];

	if (k->attr == IBEMU_CM_ATTR_SIDR_REQ) {
		ibemu_cm_init(mad, IBEMU_CM_ATTR_SIDR_REP,
			      ibemu_mad_get_tid(m->mad));
		ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_REQUEST_ID, k->local_id);
		ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_STATUS,
			     IBEMU_CM_SIDR_UNSUPPORTED);
		ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_SERVICE_ID, k->service_id);
	} else {
		ibemu_cm_init(mad, IBEMU_CM_ATTR_REJ,
			      ibemu_mad_get_tid(m->mad));
		ibemu_cm_set(mad, IBEMU_CM_REJ_REMOTE_COMM_ID, k->local_id);
		ibemu_cm_set(mad, IBEMU_CM_REJ_MESSAGE_REJECTED,
			     IBEMU_CM_MSG_REQ);
		ibemu_cm_set(mad, IBEMU_CM_REJ_REASON,
			     IBEMU_CM_REJ_INVALID_SERVICE_ID);
	}
	cm_send_own(d, port, mad, m->slid, m->sl, m->pkey);
}

/* ib_cm's cm_issue_drep(): a DREQ for a connection nobody has. */
static void answer_drep(struct ibemu_daemon *d, uint32_t port,
			const struct ibemu_mad_msg *m,
			const struct ibemu_sess_cm_key *k)
{
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_DREP, ibemu_mad_get_tid(m->mad));
	ibemu_cm_set(mad, IBEMU_CM_DREP_LOCAL_COMM_ID, k->remote_id);
	ibemu_cm_set(mad, IBEMU_CM_DREP_REMOTE_COMM_ID, k->local_id);
	cm_send_own(d, port, mad, m->slid, m->sl, m->pkey);
}

/*
 * What an agent sends: checked and learnt. Returns 0 (send it), or -errno
 * (drop it: not a CM message, or a Comm ID another agent has).
 */
int ibemu__sess_cm_sent(struct ibemu_sess_conn *c, struct ibemu_sess_agent *a,
			const struct ibemu_mad_msg *msg)
{
	struct ibemu_sess_cm_conn *cc = NULL;
	struct ibemu_sess_agent *other;
	struct ibemu_sess_cm_key k;
	int ret;

	ret = ibemu__sess_cm_parse(msg->mad, IBEMU_MAD_LEN, &k);
	if (ret)
		return ret;
	if (k.attr == IBEMU_CM_ATTR_REJ && !k.local_id)
		return 0; /* a REJ before any Comm ID: nothing to learn */
	other = agent_by_local(c->s, c->port_index, k.local_id, &cc);
	if (other && other != a)
		return -EADDRINUSE;
	switch (k.attr) {
	case IBEMU_CM_ATTR_REQ:
	case IBEMU_CM_ATTR_SIDR_REQ:
		if (!cc) {
			cc = conn_add(a);
			if (!cc)
				return -ENOMEM;
			cc->local_id = k.local_id;
		}
		cc->state =
			k.attr == IBEMU_CM_ATTR_REQ ? CONN_REQ_SENT : CONN_SIDR;
		cc->remote_lid = msg->dlid;
		cc->sl = msg->sl;
		cc->pkey = msg->pkey;
		return 0;
	case IBEMU_CM_ATTR_SIDR_REP:
		return 0;
	default:
		break;
	}
	/* A passive side's first answer names its Comm ID. */
	if (!cc) {
		cc = conn_by_remote(a, k.remote_id, msg->dlid);
		if (!cc)
			return 0; /* e.g. a DREP for a connection it forgot */
		cc->local_id = k.local_id;
	}
	switch (k.attr) {
	case IBEMU_CM_ATTR_REP:
		cc->state = CONN_REP;
		break;
	case IBEMU_CM_ATTR_REJ:
	case IBEMU_CM_ATTR_DREP:
		cm_send_end(a, IBEMU_CM_ATTR_REP, k.local_id);
		cm_send_end(a, IBEMU_CM_ATTR_DREQ, k.local_id);
		conn_unlink(a, cc);
		break;
	case IBEMU_CM_ATTR_DREQ:
		cc->state = CONN_DREQ;
		break;
	default:
		break;
	}
	return 0;
}

/* --- receiving ----------------------------------------------------- */

/* Learns what a MAD handed to agent 'a' says; ends the timers it ends. */
static void learn_recv(struct ibemu_sess_agent *a,
		       struct ibemu_sess_cm_conn *cc,
		       const struct ibemu_mad_msg *m,
		       const struct ibemu_sess_cm_key *k)
{
	struct ibemu_sess_send *send;

	switch (k->attr) {
	case IBEMU_CM_ATTR_REQ:
		if (conn_by_remote(a, k->local_id, m->slid))
			return; /* a REQ sent again */
		cc = conn_add(a);
		if (!cc)
			return;
		cc->state = CONN_REQ_RCVD;
		cc->remote_id = k->local_id;
		cc->remote_qpn = k->qpn;
		cc->remote_lid = m->slid;
		cc->sl = m->sl;
		cc->pkey = m->pkey;
		return;
	case IBEMU_CM_ATTR_REP:
		cm_send_end(a, IBEMU_CM_ATTR_REQ, cc->local_id);
		cc->remote_id = k->local_id;
		cc->remote_qpn = k->qpn;
		cc->state = CONN_REP;
		return;
	case IBEMU_CM_ATTR_MRA:
		send = cm_send_find(a,
				    k->mraed == IBEMU_CM_MSG_REP
					    ? IBEMU_CM_ATTR_REP
					    : IBEMU_CM_ATTR_REQ,
				    cc->local_id);
		if (send)
			ibemu__sess_send_rearm(send,
					       mra_timeout_ms(k->timeout));
		return;
	case IBEMU_CM_ATTR_RTU:
		cm_send_end(a, IBEMU_CM_ATTR_REP, cc->local_id);
		return;
	case IBEMU_CM_ATTR_REJ:
		cm_send_end(a, IBEMU_CM_ATTR_REQ, cc->local_id);
		cm_send_end(a, IBEMU_CM_ATTR_REP, cc->local_id);
		conn_unlink(a, cc);
		return;
	case IBEMU_CM_ATTR_DREQ:
		cc->state = CONN_DREQ;
		return;
	case IBEMU_CM_ATTR_DREP:
		cm_send_end(a, IBEMU_CM_ATTR_DREQ, cc->local_id);
		conn_unlink(a, cc);
		return;
	case IBEMU_CM_ATTR_SIDR_REP:
		cm_send_end(a, IBEMU_CM_ATTR_SIDR_REQ, cc->local_id);
		conn_unlink(a, cc);
		return;
	default:
		return;
	}
}

struct ibemu_sess_agent *ibemu__sess_cm_route(struct ibemu_daemon *d,
					      uint32_t port,
					      const struct ibemu_mad_msg *m,
					      const char **why)
{
	struct ibemu_sess_server *s = d->sess;
	struct ibemu_sess_cm_conn *cc = NULL;
	struct ibemu_sess_agent *a;
	struct ibemu_sess_cm_key k;
	uint32_t key;

	if (ibemu__sess_cm_parse(m->mad, IBEMU_MAD_MSG_LEN, &k)) {
		*why = "not a CM message of class version 2";
		return NULL;
	}
	if (k.attr == IBEMU_CM_ATTR_REQ || k.attr == IBEMU_CM_ATTR_SIDR_REQ) {
		a = agent_by_service(s, port, k.service_id);
		if (!a) {
			answer_no_listener(d, port, m, &k);
			*why = "no listener for its service ID (answered)";
			return NULL;
		}
		learn_recv(a, NULL, m, &k);
		return a;
	}
	key = k.attr == IBEMU_CM_ATTR_SIDR_REP ? k.local_id : k.remote_id;
	a = key ? agent_by_local(s, port, key, &cc) : NULL;
	if (!a) {
		if (k.attr == IBEMU_CM_ATTR_DREQ)
			answer_drep(d, port, m, &k);
		*why = "its Comm ID is nobody's";
		return NULL;
	}
	learn_recv(a, cc, m, &k);
	return a;
}

/* --- listening ----------------------------------------------------- */

static struct ibemu_sess_agent *cm_agent_of(struct ibemu_sess_server *s,
					    pid_t pid, unsigned port)
{
	struct ibemu_sess_conn *c;
	uint32_t id;

	for (c = s->conns; c; c = c->next) {
		if (c->kind != IBEMU_SESS_CONN_STREAM || c->pid != pid ||
		    c->port != port || c->closing)
			continue;
		for (id = 0; id < IBEMU_SESS_MAX_AGENTS; id++)
			if (c->agents[id] &&
			    ibemu__sess_cm_is_agent(c->agents[id]))
				return c->agents[id];
	}
	return NULL;
}

/* The most service IDs one agent listens on. */
#define LISTENS_MAX 4096u

int ibemu__sess_cm_listen(struct ibemu_sess_server *s, pid_t pid,
			  const struct ibemu_sess_cm_listen *req)
{
	struct ibemu_sess_agent *a = cm_agent_of(s, pid, req->port), *other;
	struct ibemu_sess_cm_service *l, **pp;
	unsigned n = 0;

	if (!a)
		return -ENOENT;
	if (req->listen > 1)
		return -EINVAL;
	for (pp = &a->cm_listens; *pp; pp = &(*pp)->next, n++) {
		if ((*pp)->service_id != req->service_id)
			continue;
		if (!req->listen) {
			l = *pp;
			*pp = l->next;
			free(l);
		}
		return 0;
	}
	if (!req->listen)
		return 0;
	other = agent_by_service(s, a->stream->port_index, req->service_id);
	if (other)
		return -EADDRINUSE;
	if (n >= LISTENS_MAX)
		return -ENOMEM;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->service_id = req->service_id;
	l->next = a->cm_listens;
	a->cm_listens = l;
	return 0;
}

/* --- a process gone ------------------------------------------------ */

/* ib_cm's cm_destroy_id(): what the peer of connection 'cc' is told. */
static void say_gone(struct ibemu_sess_agent *a, struct ibemu_sess_cm_conn *cc)
{
	struct ibemu_sess_conn *c = a->stream;
	uint8_t mad[IBEMU_MAD_LEN];
	uint64_t tid = (uint64_t)a->hi_tid << 32 | cc->local_id;

	switch (cc->state) {
	case CONN_REP:
		ibemu_cm_init(mad, IBEMU_CM_ATTR_DREQ, tid);
		ibemu_cm_set(mad, IBEMU_CM_DREQ_LOCAL_COMM_ID, cc->local_id);
		ibemu_cm_set(mad, IBEMU_CM_DREQ_REMOTE_COMM_ID, cc->remote_id);
		ibemu_cm_set(mad, IBEMU_CM_DREQ_REMOTE_QPN, cc->remote_qpn);
		break;
	case CONN_REQ_SENT:
	case CONN_REQ_RCVD:
		ibemu_cm_init(mad, IBEMU_CM_ATTR_REJ, tid);
		ibemu_cm_set(mad, IBEMU_CM_REJ_LOCAL_COMM_ID, cc->local_id);
		ibemu_cm_set(mad, IBEMU_CM_REJ_REMOTE_COMM_ID, cc->remote_id);
		ibemu_cm_set(mad, IBEMU_CM_REJ_MESSAGE_REJECTED,
			     IBEMU_CM_MSG_REQ);
		ibemu_cm_set(mad, IBEMU_CM_REJ_REASON,
			     cc->state == CONN_REQ_SENT
				     ? IBEMU_CM_REJ_TIMEOUT
				     : IBEMU_CM_REJ_CONSUMER_DEFINED);
		break;
	default:
		return;
	}
	cm_send_own(c->s->d, c->port_index, mad, cc->remote_lid, cc->sl,
		    cc->pkey);
}

void ibemu__sess_cm_agent_gone(struct ibemu_sess_agent *a)
{
	struct ibemu_sess_cm_service *l;
	struct ibemu_sess_cm_conn *cc;
	int said = 0;

	while ((cc = a->cm_conns)) {
		if (cc->state != CONN_SIDR && cc->state != CONN_DREQ) {
			say_gone(a, cc);
			said = 1;
		}
		a->cm_conns = cc->next;
		free(cc);
	}
	a->cm_nconns = 0;
	while ((l = a->cm_listens)) {
		a->cm_listens = l->next;
		free(l);
	}
	if (said)
		ibemu_daemon_pump(a->stream->s->d);
}

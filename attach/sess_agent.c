// SPDX-License-Identifier: MIT
/*
 * MAD agents of attached processes, kept as the kernel's ib_umad and
 * ib_mad keep them (drivers/infiniband/core/user_mad.c, mad.c): agents per
 * port stream, requests routed to the agent registered for their class,
 * version and method, responses to the agent whose hi_tid is in the upper
 * TID bits, requests with a timeout resent and finally returned with
 * status ETIMEDOUT. The engine carries the MADs (ibemu_engine_mad_send and
 * its mad_recv callback); timeouts count virtual time from the MAD's entry
 * (docs/design.md §3), so a loaded host never makes a request time out.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mad.h"
#include "mad_cm.h"
#include "sess.h"

/* ib_mad's MAX_MGMT_CLASS: classes above are refused, but DR SMPs. */
#define CLASS_LIMIT 0x50
/* ib_user_mad IB_USER_MAD_USER_RMPP. */
#define REG_FLAGS_CAP 0x1u

static int is_smp(uint8_t mgmt_class)
{
	return mgmt_class == IBEMU_MAD_CLASS_SUBN_LID ||
	       mgmt_class == IBEMU_MAD_CLASS_SUBN_DR;
}

/*
 * ib_response_mad(): the R bit, TrapRepress (which answers a Trap), and
 * Baseboard Management's response bit in the attribute modifier.
 */
static int is_response(const uint8_t *mad)
{
	return ibemu_mad_get_r(mad) ||
	       ibemu_mad_get_method(mad) == IBEMU_MAD_METHOD_TRAP_REPRESS ||
	       (ibemu_mad_get_mgmt_class(mad) == IBEMU_MAD_CLASS_BM &&
		(ibemu_mad_get_attr_mod(mad) & 1));
}

static int method_taken(const struct ibemu_sess_agent *a, uint8_t method)
{
	return method < 128 &&
	       (a->method_mask[method / 64] >> (method % 64)) & 1;
}

/* Once a second at most: what no agent took. */
static void unclaimed(struct ibemu_sess_server *s, uint32_t port,
		      const uint8_t *mad, const char *why)
{
	uint64_t now = uv_now(&s->d->loop);
	uint32_t node;
	unsigned p;

	s->unclaimed++;
	if (s->unclaimed_logged_ms && now - s->unclaimed_logged_ms < 1000)
		return;
	s->unclaimed_logged_ms = now;
	ibemu_engine_port_where(s->d->engine, port, &node, &p);
	ibemu_daemon_log(s->d,
			 "dropped a MAD at %s port %u (class 0x%02x method "
			 "0x%02x attribute 0x%04x): %s; %llu dropped so far",
			 s->d->topo->nodes[node].name, p,
			 ibemu_mad_get_mgmt_class(mad),
			 ibemu_mad_get_method(mad), ibemu_mad_get_attr_id(mad),
			 why, (unsigned long long)s->unclaimed);
}

/* --- outstanding requests ------------------------------------------- */

#define PS_PER_MS 1000000000ull

/* Unlinks 'send' from its agent and frees it, its timeout cancelled. */
static void send_free(struct ibemu_sess_send *send)
{
	struct ibemu_sess_send **pp;

	for (pp = &send->agent->sends; *pp; pp = &(*pp)->next) {
		if (*pp == send) {
			*pp = send->next;
			break;
		}
	}
	ibemu_due_cancel(send->agent->stream->s->d, &send->due);
	free(send);
}

static void send_timeout_arm(struct ibemu_daemon *d,
			     struct ibemu_sess_send *send)
{
	ibemu_due_arm(d, &send->due,
		      ibemu_engine_now(d->engine) +
			      (uint64_t)send->timeout_ms * PS_PER_MS);
}

static void send_timeout_cb(struct ibemu_daemon *d, struct ibemu_due *due)
{
	struct ibemu_sess_send *send =
		(struct ibemu_sess_send *)((char *)due -
					   offsetof(struct ibemu_sess_send,
						    due));
	struct ibemu_sess_agent *a = send->agent;
	struct ibemu_sess_conn *c = a->stream;

	if (send->retries) {
		send->retries--;
		/* Rearm first: the answer may come back during the send. */
		send_timeout_arm(d, send);
		ibemu_engine_mad_send(d->engine, c->port_index, &send->msg);
		return;
	}
	/*
	 * ib_umad's send_handler: a request nobody answered comes back to its
	 * agent with status ETIMEDOUT and only its MAD header (IB_MGMT_MAD_HDR
	 * bytes), the TID as it was sent.
	 */
	ibemu__sess_deliver(c, a->id, ETIMEDOUT, &send->addr, send->msg.mad,
			    IBEMU_MAD_HDR_LEN);
	send_free(send);
}

void ibemu__sess_send_end(struct ibemu_sess_send *send)
{
	send_free(send);
}

void ibemu__sess_send_rearm(struct ibemu_sess_send *send, uint32_t timeout_ms)
{
	struct ibemu_daemon *d = send->agent->stream->s->d;

	send->timeout_ms = timeout_ms;
	ibemu_due_cancel(d, &send->due);
	send_timeout_arm(d, send);
}

static struct ibemu_sess_send *send_find(struct ibemu_sess_agent *a,
					 uint64_t tid, uint8_t mgmt_class)
{
	struct ibemu_sess_send *send;

	for (send = a->sends; send; send = send->next)
		if (send->tid == tid &&
		    ibemu_mad_get_mgmt_class(send->msg.mad) == mgmt_class)
			return send;
	return NULL;
}

/* --- registration --------------------------------------------------- */

static void agent_free(struct ibemu_sess_conn *c, uint32_t id)
{
	struct ibemu_sess_agent *a = c->agents[id];

	/* A CM agent's peers hear of its end first (sess_cm.c). */
	if (ibemu__sess_cm_is_agent(a))
		ibemu__sess_cm_agent_gone(a);
	/* ib_unregister_mad_agent cancels the agent's sends: they are not
	 * reported (the kernel flushes them); and its reassemblies. */
	while (a->sends)
		send_free(a->sends);
	ibemu__sess_rmpp_cancel(a);
	c->agents[id] = NULL;
	free(a);
}

void ibemu__sess_agents_free(struct ibemu_sess_conn *c)
{
	uint32_t id;

	for (id = 0; id < IBEMU_SESS_MAX_AGENTS; id++)
		if (c->agents[id])
			agent_free(c, id);
}

/* Calls 'fn' on every agent of the streams of global port 'port'. */
#define for_each_port_agent(s, port, c, a, id)                               \
	for ((c) = (s)->conns; (c); (c) = (c)->next)                         \
		if ((c)->kind == IBEMU_SESS_CONN_STREAM &&                   \
		    (c)->port_index == (port))                               \
			for ((id) = 0; (id) < IBEMU_SESS_MAX_AGENTS; (id)++) \
				if (((a) = (c)->agents[(id)]))

static int hi_tid_used(struct ibemu_sess_server *s, uint32_t hi_tid)
{
	struct ibemu_sess_conn *c;
	uint32_t id;

	for (c = s->conns; c; c = c->next)
		for (id = 0; id < IBEMU_SESS_MAX_AGENTS; id++)
			if (c->agents[id] && c->agents[id]->hi_tid == hi_tid)
				return 1;
	return 0;
}

/*
 * ib_mad hands out hi_tids cyclically from 24 bits (mlx4 uses the top
 * byte of the 32): unique among live agents of the daemon.
 */
static uint32_t hi_tid_alloc(struct ibemu_sess_server *s)
{
	uint32_t v;

	do {
		v = s->next_hi_tid;
		s->next_hi_tid = v >= 0xffffff ? 1 : v + 1;
	} while (hi_tid_used(s, v));
	return v;
}

/*
 * ib_mad's method_in_use(): another agent on this HCA port already takes
 * one of these request methods of this class and version (and OUI).
 */
static const struct ibemu_sess_agent *
method_conflict(struct ibemu_sess_conn *c, const struct ibemu_sess_register *r)
{
	struct ibemu_sess_conn *o;
	struct ibemu_sess_agent *a;
	uint32_t id;

	for_each_port_agent(c->s, c->port_index, o, a, id)
	{
		if (a->mgmt_class != r->mgmt_class ||
		    a->class_version != r->class_version)
			continue;
		if (ibemu_mad_class_is_vendor2(r->mgmt_class) &&
		    a->oui != r->oui)
			continue;
		/* Each process runs its own CM on the port: sess_cm.c
		 * routes class 0x07 among them, as ib_cm does among ids. */
		if (r->mgmt_class == IBEMU_MAD_CLASS_CM)
			continue;
		if ((a->method_mask[0] & r->method_mask[0]) ||
		    (a->method_mask[1] & r->method_mask[1]))
			return a;
	}
	return NULL;
}

/* The checks of ib_register_mad_agent, in its order. */
static int register_check(struct ibemu_sess_conn *c,
			  const struct ibemu_sess_register *r, char *why,
			  size_t whylen)
{
	const struct ibemu_sess_agent *a;

	if (r->mgmt_class && (r->oui & 0xff000000)) {
		snprintf(why, whylen, "OUI 0x%08x is wider than 24 bits",
			 r->oui);
		return -EINVAL;
	}
	if (r->rmpp_version && r->rmpp_version != IBEMU_RMPP_VERSION) {
		snprintf(why, whylen, "RMPP version %u; only 1 exists",
			 r->rmpp_version);
		return -EINVAL;
	}
	if (!r->mgmt_class) {
		/* An agent that only sends: no class, nothing to route. */
		if (r->flags & REG_FLAGS_CAP) {
			snprintf(why, whylen, "user RMPP needs a class");
			return -EINVAL;
		}
		return 0;
	}
	if (r->class_version >= IBEMU_SESS_MAX_CLASS_VERSION) {
		snprintf(why, whylen, "class version %u; at most %u",
			 r->class_version, IBEMU_SESS_MAX_CLASS_VERSION - 1);
		return -EINVAL;
	}
	if (r->mgmt_class >= CLASS_LIMIT &&
	    r->mgmt_class != IBEMU_MAD_CLASS_SUBN_DR) {
		snprintf(why, whylen, "management class 0x%02x is invalid",
			 r->mgmt_class);
		return -EINVAL;
	}
	if (ibemu_mad_class_is_vendor2(r->mgmt_class) && !r->oui) {
		snprintf(why, whylen, "vendor class 0x%02x needs an OUI",
			 r->mgmt_class);
		return -EINVAL;
	}
	if (r->rmpp_version && !ibemu_mad_class_has_rmpp(r->mgmt_class)) {
		snprintf(why, whylen, "class 0x%02x does not use RMPP",
			 r->mgmt_class);
		return -EINVAL;
	}
	a = method_conflict(c, r);
	if (a) {
		snprintf(why, whylen,
			 "a method of class 0x%02x version %u is taken by "
			 "agent %u of process %ld on this port",
			 r->mgmt_class, r->class_version, a->id,
			 (long)a->stream->pid);
		return -EINVAL;
	}
	return 0;
}

int ibemu__sess_register(struct ibemu_sess_conn *c,
			 struct ibemu_sess_register *r, char *why,
			 size_t whylen)
{
	struct ibemu_sess_agent *a;
	uint32_t id;
	int ret;

	/* ib_umad_reg_agent2: the flags, then the first free slot. */
	if (r->flags & ~REG_FLAGS_CAP) {
		snprintf(why, whylen,
			 "registration flags 0x%x; supported: 0x%x", r->flags,
			 REG_FLAGS_CAP);
		return -EINVAL;
	}
	for (id = 0; id < IBEMU_SESS_MAX_AGENTS; id++)
		if (!c->agents[id])
			break;
	if (id == IBEMU_SESS_MAX_AGENTS) {
		snprintf(why, whylen, "the port stream has %u agents already",
			 IBEMU_SESS_MAX_AGENTS);
		return -ENOMEM;
	}
	ret = register_check(c, r, why, whylen);
	if (ret)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	a->stream = c;
	a->id = id;
	a->hi_tid = hi_tid_alloc(c->s);
	if (r->mgmt_class) {
		a->method_mask[0] = r->method_mask[0];
		a->method_mask[1] = r->method_mask[1];
	}
	a->flags = r->flags;
	a->oui = r->oui;
	a->mgmt_class = r->mgmt_class;
	a->class_version = r->class_version;
	a->rmpp_version = r->rmpp_version;
	c->agents[id] = a;
	r->agent_id = id;
	return 0;
}

int ibemu__sess_unregister(struct ibemu_sess_conn *c, uint32_t id, char *why,
			   size_t whylen)
{
	/* ib_umad_unreg_agent: -EINVAL for an id out of range or unused. */
	if (id >= IBEMU_SESS_MAX_AGENTS || !c->agents[id]) {
		snprintf(why, whylen, "no agent %u on this port stream", id);
		return -EINVAL;
	}
	agent_free(c, id);
	return 0;
}

/* --- sending -------------------------------------------------------- */

static int send_track(struct ibemu_sess_conn *c, struct ibemu_sess_agent *a,
		      const struct ibemu_sess_mad *m,
		      const struct ibemu_mad_msg *msg, uint64_t tid, int rmpp)
{
	struct ibemu_sess_send *send;

	/* ib_umad's is_duplicate(): one request per TID and class. */
	if (send_find(a, tid, ibemu_mad_get_mgmt_class(msg->mad)))
		return -EINVAL;
	send = calloc(1, sizeof(*send));
	if (!send)
		return -ENOMEM;
	send->due.fire = send_timeout_cb;
	/* A CM request's process blocks on its answer (rdma_connect): its
	 * retransmissions (minutes of virtual time with an MRA) leap. */
	send->due.leaps =
		ibemu_mad_get_mgmt_class(msg->mad) == IBEMU_MAD_CLASS_CM;
	send->agent = a;
	send->tid = tid;
	send->timeout_ms = m->timeout_ms;
	/*
	 * ib_retry_rmpp(): an RMPP transfer whose segments were all
	 * acknowledged is not sent again; its request times out.
	 */
	send->retries = rmpp ? 0 : m->retries;
	send->addr = m->addr;
	send->msg = *msg;
	send->next = a->sends;
	a->sends = send;
	send_timeout_arm(c->s->d, send);
	return 0;
}

/*
 * ib_umad_write and ib_create_send_mad: a MAD is RMPP-active when its
 * agent reassembles, its class uses RMPP and its Active flag is set; only
 * such a MAD may be longer than 256 bytes. Returns 1 (RMPP-active), 0, or
 * -EINVAL.
 */
static int send_kind(const struct ibemu_sess_agent *a,
		     const struct ibemu_sess_mad *m)
{
	if (ibemu__sess_rmpp_agent(a) && ibemu_rmpp_is_active(m->mad))
		return 1;
	return m->len > IBEMU_MAD_MSG_LEN ? -EINVAL : 0;
}

/*
 * The MAD of SEND 'm' (its first 256 bytes) addressed as the port's QP0
 * or QP1 sends it; 0, or -EINVAL for a P_Key index that names no P_Key.
 */
static int send_msg_fill(struct ibemu_sess_conn *c,
			 const struct ibemu_sess_agent *a,
			 const struct ibemu_sess_mad *m,
			 struct ibemu_mad_msg *msg)
{
	memset(msg, 0, sizeof(*msg));
	memcpy(msg->mad, m->mad,
	       m->len < IBEMU_MAD_MSG_LEN ? m->len : IBEMU_MAD_MSG_LEN);
	/*
	 * ib_umad_write copies the MAD header and, for an agent that
	 * reassembles, what follows the RMPP header: the kernel writes that
	 * header itself (zeros unless the MAD is RMPP-active).
	 */
	if (ibemu__sess_rmpp_agent(a) &&
	    ibemu_mad_class_has_rmpp(ibemu_mad_get_mgmt_class(msg->mad)))
		memset(msg->mad + IBEMU_RMPP_HDR_OFF, 0, IBEMU_RMPP_HDR_LEN);
	msg->slid = 0; /* the port's LID */
	msg->dlid = m->addr.lid;
	msg->sl = m->addr.sl & 0xf;
	msg->dst_qp = m->addr.qpn;
	msg->src_qp = is_smp(ibemu_mad_get_mgmt_class(msg->mad)) ? 0 : 1;
	msg->qkey = m->addr.qkey;
	msg->pkey = ibemu__sess_pkey(c->s, c->port_index, m->addr.pkey_index);
	if (!msg->pkey && !is_smp(ibemu_mad_get_mgmt_class(msg->mad)))
		return -EINVAL;
	return 0;
}

void ibemu__sess_send(struct ibemu_sess_conn *c, const struct ibemu_sess_mad *m)
{
	struct ibemu_daemon *d = c->s->d;
	struct ibemu_sess_agent *a = c->agents[m->agent_id];
	struct ibemu_mad_msg msg;
	uint64_t tid;
	int ret, rmpp;

	if (!a) {
		/* Not a protocol error: an UNREGISTER (on another connection)
		 * may overtake SENDs still queued on the stream. */
		ibemu_daemon_log_limited(
			d, &c->log_limits[IBEMU_SESS_LOG_NO_AGENT],
			"process %ld sent a MAD as agent %u, which "
			"it has not registered; dropped",
			(long)c->pid, m->agent_id);
		return;
	}
	rmpp = send_kind(a, m);
	if (rmpp < 0) {
		ibemu_daemon_log_limited(
			d, &c->log_limits[IBEMU_SESS_LOG_BAD_LENGTH],
			"process %ld sent a MAD of %u bytes (class "
			"0x%02x) as agent %u, which is not an "
			"RMPP-active MAD of an agent with RMPP; the "
			"kernel refuses it (EINVAL), dropped",
			(long)c->pid, m->len, ibemu_mad_get_mgmt_class(m->mad),
			a->id);
		return;
	}
	if (send_msg_fill(c, a, m, &msg)) {
		/* The kernel fails such a send: the index names no P_Key. */
		ibemu_daemon_log_limited(
			d, &c->log_limits[IBEMU_SESS_LOG_BAD_PKEY],
			"process %ld sent a MAD with P_Key index "
			"%u, which names no P_Key; dropped",
			(long)c->pid, m->addr.pkey_index);
		return;
	}
	if (ibemu_mad_get_mgmt_class(msg.mad) == IBEMU_MAD_CLASS_CM &&
	    ibemu__sess_cm_is_agent(a)) {
		ret = ibemu__sess_cm_sent(c, a, &msg);
		if (ret) {
			ibemu_daemon_log_limited(
				d, &c->log_limits[IBEMU_SESS_LOG_BAD_CM],
				"process %ld sent a CM MAD (attribute 0x%04x) "
				"that %s; dropped",
				(long)c->pid, ibemu_mad_get_attr_id(msg.mad),
				ret == -EADDRINUSE
					? "takes a Comm ID another process "
					  "on the port uses"
					: "is malformed or too many");
			return;
		}
	}
	if (!is_response(msg.mad)) {
		/*
		 * ib_umad_write: the upper 32 TID bits of a request become the
		 * agent's hi_tid, so that its response finds the agent.
		 */
		tid = (uint64_t)a->hi_tid << 32 |
		      (ibemu_mad_get_tid(msg.mad) & 0xffffffff);
		ibemu_mad_set_tid(msg.mad, tid);
		if (m->timeout_ms) {
			ret = send_track(c, a, m, &msg, tid, rmpp);
			if (ret) {
				ibemu_daemon_log_limited(
					d,
					&c->log_limits[IBEMU_SESS_LOG_DUP_TID],
					"process %ld sent a request with the "
					"TID of one outstanding; dropped",
					(long)c->pid);
				return;
			}
		}
	}
	if (rmpp)
		ret = ibemu__sess_rmpp_send(d->engine, c->port_index, &msg,
					    m->mad, m->len);
	else
		ret = ibemu_engine_mad_send(d->engine, c->port_index, &msg);
	if (ret)
		ibemu_daemon_log_limited(
			d, &c->log_limits[IBEMU_SESS_LOG_SEND_FAIL],
			"cannot send a MAD from %s port %u: %s",
			d->topo->nodes[c->node].name, c->port, strerror(-ret));
	ibemu_daemon_pump(d);
}

/* --- receiving ------------------------------------------------------ */

/* ib_mad's find_mad_agent() for a request: class, version, method, OUI. */
static struct ibemu_sess_agent *request_agent(struct ibemu_sess_server *s,
					      uint32_t port, const uint8_t *mad)
{
	struct ibemu_sess_conn *c;
	struct ibemu_sess_agent *a;
	uint32_t id;

	uint8_t mgmt_class = ibemu_mad_get_mgmt_class(mad);
	uint8_t class_version = ibemu_mad_get_class_version(mad);
	uint8_t method = ibemu_mad_get_method(mad) & ~IBEMU_MAD_METHOD_RESP;

	if (class_version >= IBEMU_SESS_MAX_CLASS_VERSION)
		return NULL;
	for_each_port_agent(s, port, c, a, id)
	{
		if (a->mgmt_class != mgmt_class ||
		    a->class_version != class_version)
			continue;
		if (ibemu_mad_class_is_vendor2(mgmt_class) &&
		    a->oui != ibemu_vendor_get_oui(mad))
			continue;
		if (method_taken(a, method))
			return a;
	}
	return NULL;
}

static struct ibemu_sess_agent *response_agent(struct ibemu_sess_server *s,
					       uint32_t port, uint32_t hi_tid)
{
	struct ibemu_sess_conn *c;
	struct ibemu_sess_agent *a;
	uint32_t id;

	for_each_port_agent(s, port, c, a, id)
	{
		if (a->hi_tid == hi_tid)
			return a;
	}
	return NULL;
}

/*
 * ib_mad_complete_recv: a response completes its request; one that
 * matches none (late, or sent without a timeout) is dropped, but for an
 * agent that does RMPP itself (or not at all), which gets every segment of
 * an RMPP-active response. Returns whether agent 'a' takes 'mad'.
 */
static int response_taken(struct ibemu_sess_server *s, uint32_t port,
			  struct ibemu_sess_agent *a, const uint8_t *mad)
{
	struct ibemu_sess_send *send = send_find(a, ibemu_mad_get_tid(mad),
						 ibemu_mad_get_mgmt_class(mad));

	if (send) {
		send_free(send);
		return 1;
	}
	if (!ibemu__sess_rmpp_agent(a) && ibemu_rmpp_is_active(mad))
		return 1;
	unclaimed(s, port, mad, "a response to no outstanding request");
	return 0;
}

void ibemu__sess_mad_recv(struct ibemu_daemon *d, uint32_t port,
			  const struct ibemu_mad_msg *m)
{
	struct ibemu_sess_server *s = d->sess;
	struct ibemu_sess_agent *a;
	struct ibemu_sess_addr addr;
	const uint8_t *mad = m->mad;
	uint32_t len = IBEMU_MAD_MSG_LEN;
	uint8_t *whole = NULL;
	int response;

	if (!s)
		return;
	response = is_response(mad);
	if (ibemu_mad_get_mgmt_class(mad) == IBEMU_MAD_CLASS_CM && !response) {
		const char *why = NULL;

		a = ibemu__sess_cm_route(d, port, m, &why);
		if (!a) {
			unclaimed(s, port, mad, why);
			return;
		}
	} else if (response)
		a = response_agent(s, port,
				   (uint32_t)(ibemu_mad_get_tid(mad) >> 32));
	else
		a = request_agent(s, port, mad);
	if (!a) {
		unclaimed(s, port, mad,
			  response ? "a response for no agent"
				   : "no agent registered for it");
		return;
	}
	/*
	 * ib_mad_complete_recv: the segments of an RMPP transfer become one
	 * MAD (IBA 13.6) before it may complete a request.
	 */
	if (ibemu__sess_rmpp_agent(a) && ibemu_rmpp_is_active(mad)) {
		if (!ibemu__sess_rmpp_recv(a, m, &whole, &len))
			return;
		mad = whole;
	}
	if (response && !response_taken(s, port, a, mad))
		goto out;
	/* The sender, as ib_umad's recv_handler reports it. */
	memset(&addr, 0, sizeof(addr));
	addr.qpn = m->src_qp;
	addr.qkey = m->qkey;
	addr.lid = m->slid;
	addr.sl = m->sl;
	addr.pkey_index = ibemu__sess_pkey_index(s, port, m->pkey);
	ibemu__sess_deliver(a->stream, a->id, 0, &addr, mad, len);
out:
	free(whole);
}

// SPDX-License-Identifier: MIT
/*
 * The session socket, sess.sock: where attached processes (the
 * libibumad-compatible library) reach the daemon. It is SOCK_SEQPACKET, so
 * its connections are watched with uv_poll on their raw fds (libuv's pipes
 * are stream-only). Every message is checked before anything reads it: a
 * client that breaks the protocol gets an ERROR (calls) or is disconnected
 * (port streams, which carry nothing but MADs), never more.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "mad.h"
#include "mad_cm.h"
#include "sess.h"

/* Messages handled per readable event: one busy client cannot starve the
 * others (libuv comes back while more are waiting). */
#define READS_PER_EVENT 64
/*
 * Messages one recvmmsg takes off a port stream. An SM keeps dozens of
 * SENDs in flight and the daemon, busy with the last one, finds the next
 * ones waiting: one system call for several (a call costs about 2 us
 * here, as much as handling an SMP). Each slot holds the largest stream
 * message; its pages are touched only as far as messages fill them.
 */
#define READ_BATCH 16

/* --- sending -------------------------------------------------------- */

int ibemu__sess_send_msg(int fd, uint16_t type, int32_t status,
			 const void *payload, size_t len)
{
	struct ibemu_sess_hdr h = {
		.magic = IBEMU_SESS_MAGIC,
		.version = IBEMU_SESS_VERSION,
		.type = type,
		.len = (uint32_t)len,
		.status = status,
	};
	struct iovec iov[2] = {
		{.iov_base = &h, .iov_len = sizeof(h)},
		{.iov_base = (void *)payload, .iov_len = len},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	ssize_t n;

	do
		n = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

static void conn_cb(uv_poll_t *h, int status, int events);
static void flush_unlist(struct ibemu_sess_conn *c);

/* Frees the first 'n' messages of the stream's queue: they went. */
static void out_drop(struct ibemu_sess_conn *c, unsigned n)
{
	struct ibemu_sess_out *o;

	while (n-- > 0) {
		o = c->out_head;
		c->out_head = o->next;
		if (!c->out_head)
			c->out_tail = NULL;
		c->out_len--;
		c->out_bytes -= o->len;
		free(o);
	}
}

static void conn_watch(struct ibemu_sess_conn *c, int events)
{
	if (c->events == events)
		return;
	c->events = events;
	uv_poll_start(&c->poll, events, conn_cb);
}

static void conn_close_cb(uv_handle_t *h)
{
	struct ibemu_sess_conn *c = (struct ibemu_sess_conn *)h;
	struct ibemu_sess_out *o, *next;

	close(c->fd);
	for (o = c->out_head; o; o = next) {
		next = o->next;
		free(o);
	}
	free(c);
}

void ibemu__sess_conn_close(struct ibemu_sess_conn *c, const char *why)
{
	struct ibemu_sess_server *s = c->s;
	struct ibemu_sess_conn **pp;

	if (c->closing)
		return;
	c->closing = 1;
	flush_unlist(c);
	for (pp = &s->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->kind == IBEMU_SESS_CONN_STREAM) {
		uint64_t quiet = 0;
		char tail[80] = "";
		unsigned i;

		ibemu__sess_agents_free(c);
		ibemu__su_close(c);
		ibemu__sess_bind_streams(s, c->pid, -1);
		for (i = 0; i < IBEMU_SESS_LOG_NREASONS; i++)
			quiet += c->log_limits[i].suppressed_total;
		if (quiet)
			snprintf(tail, sizeof(tail),
				 " (%llu log lines about it were suppressed)",
				 (unsigned long long)quiet);
		ibemu_daemon_log(
			s->d, "process %ld detached from %s port %u%s%s%s",
			(long)c->pid, s->d->topo->nodes[c->node].name, c->port,
			why ? ": " : "", why ? why : "", tail);
	}
	if (c->kind == IBEMU_SESS_CONN_JOB)
		ibemu__sess_job_leave(c);
	if (c->kind == IBEMU_SESS_CONN_VERBS) {
		ibemu__sess_verbs_close(c);
		ibemu__sess_bind_streams(s, c->pid, -1);
		ibemu_daemon_log(
			s->d, "process %ld closed its verbs context on %s%s%s",
			(long)c->pid, s->d->topo->nodes[c->node].name,
			why ? ": " : "", why ? why : "");
	}
	uv_poll_stop(&c->poll);
	uv_close((uv_handle_t *)&c->poll, conn_close_cb);
}

/*
 * A call gets ERROR with 'status' and the message, a stream (which carries
 * only MADs) is dropped; either way the daemon logs why and closes.
 */
static void proto_error(struct ibemu_sess_conn *c, int status, const char *fmt,
			...) IBEMU_PRINTF(3, 4);

static void proto_error(struct ibemu_sess_conn *c, int status, const char *fmt,
			...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->kind != IBEMU_SESS_CONN_STREAM &&
	    c->kind != IBEMU_SESS_CONN_VERBS) {
		/* Each is a new connection: one limiter for them all. */
		ibemu_daemon_log_limited(c->s->d, &c->s->d->refusals,
					 "session client (pid %ld) refused: %s",
					 (long)c->pid, msg);
		ibemu__sess_send_msg(c->fd, IBEMU_SESS_ERROR, status, msg,
				     strlen(msg));
		ibemu__sess_conn_close(c, NULL);
		return;
	}
	ibemu__sess_conn_close(c, msg);
}

/* Answers a call and closes it: the reply stays readable after close. */
static void call_reply(struct ibemu_sess_conn *c, uint16_t type,
		       const void *payload, size_t len)
{
	c->kind = IBEMU_SESS_CONN_CALL;
	ibemu__sess_send_msg(c->fd, type, 0, payload, len);
	ibemu__sess_conn_close(c, NULL);
}

static void call_error(struct ibemu_sess_conn *c, int status, const char *why)
{
	c->kind = IBEMU_SESS_CONN_CALL;
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_ERROR, status, why, strlen(why));
	ibemu__sess_conn_close(c, NULL);
}

/* Messages sent by one sendmmsg at most, and their iovecs (a PACK takes
 * one for its header and one for each RECV in it). */
#define FLUSH_BATCH 64
#define FLUSH_IOVS  1024

/* Sends what the stream has queued; 1 if all went, 0 if the socket is full. */
static int out_flush(struct ibemu_sess_conn *c)
{
	struct mmsghdr mm[FLUSH_BATCH];
	struct iovec iov[FLUSH_IOVS];
	struct ibemu_sess_hdr ph[FLUSH_BATCH];
	unsigned taken[FLUSH_BATCH], used, niov;
	struct ibemu_sess_out *o;
	int k, n, i;

	while (c->out_head) {
		memset(mm, 0, sizeof(mm));
		used = 0;
		for (k = 0, o = c->out_head; o && k < FLUSH_BATCH; k++) {
			if (FLUSH_IOVS - used < 3)
				break;
			taken[k] = ibemu__su_pack_out(c, o, &ph[k], iov + used,
						      FLUSH_IOVS - used, &niov);
			mm[k].msg_hdr.msg_iov = iov + used;
			mm[k].msg_hdr.msg_iovlen = niov;
			used += niov;
			for (i = 0; i < (int)taken[k]; i++)
				o = o->next;
		}
		n = sendmmsg(c->fd, mm, (unsigned)k,
			     MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == ENOBUFS))
			return 0;
		/* Sent, or the process is gone (its EOF closes the stream):
		 * either way the messages are done with. */
		if (n <= 0)
			n = k;
		for (i = 0; i < n; i++)
			out_drop(c, taken[i]);
	}
	return 1;
}

/*
 * RECVs are queued as the engine hands them over and sent together on the
 * loop's next turn: one system call for many MADs (a sweep of a large
 * subnet has hundreds of thousands; a call costs microseconds). While
 * something waits the idle handle keeps the loop from blocking. The end
 * of a run ('runs_end') sends them too, but for streams that take PACKs:
 * theirs wait for the idle handle, which packs what the loop's turn
 * handed them over all its runs (a run under the time rule often stops
 * after one MAD). When the process reads them does not matter to virtual
 * time: it counts as running from the hand-off on.
 */
static void streams_flush(struct ibemu_sess_server *s, int runs_end)
{
	struct ibemu_sess_conn *c, *keep = NULL;

	/* Mid-run, a process must not see part of what the run hands it. */
	if (s->d->rule.mid_run)
		return;
	while ((c = s->flush_head)) {
		s->flush_head = c->flush_next;
		if (runs_end && c->packs) {
			c->flush_next = keep;
			keep = c;
			continue;
		}
		c->flush_next = NULL;
		c->flush_listed = 0;
		if (!c->closing && !(c->events & UV_WRITABLE) && !out_flush(c))
			conn_watch(c, UV_READABLE | UV_WRITABLE);
	}
	s->flush_head = keep;
}

void ibemu__sess_streams_flush(struct ibemu_sess_server *s)
{
	streams_flush(s, 1);
}

static void flush_idle_cb(uv_idle_t *h)
{
	struct ibemu_sess_server *s = h->data;

	streams_flush(s, 0);
	if (!s->flush_head)
		uv_idle_stop(h);
}

static void flush_list(struct ibemu_sess_conn *c)
{
	struct ibemu_sess_server *s = c->s;

	if (c->flush_listed)
		return;
	c->flush_listed = 1;
	c->flush_next = s->flush_head;
	s->flush_head = c;
	uv_idle_start(&s->flush_idle, flush_idle_cb);
}

static void flush_unlist(struct ibemu_sess_conn *c)
{
	struct ibemu_sess_conn **pp;

	if (!c->flush_listed)
		return;
	for (pp = &c->s->flush_head; *pp; pp = &(*pp)->flush_next) {
		if (*pp == c) {
			*pp = c->flush_next;
			break;
		}
	}
	c->flush_listed = 0;
}

static void out_dropped(struct ibemu_sess_conn *c)
{
	struct ibemu_sess_server *s = c->s;
	uint64_t now = uv_now(&s->d->loop);

	c->out_dropped++;
	if (c->out_dropped_logged_ms && now - c->out_dropped_logged_ms < 1000)
		return;
	c->out_dropped_logged_ms = now;
	ibemu_daemon_log(s->d,
			 "process %ld does not read its MADs (%u waiting at %s "
			 "port %u): %llu dropped",
			 (long)c->pid, c->out_len,
			 s->d->topo->nodes[c->node].name, c->port,
			 (unsigned long long)c->out_dropped);
}

/* Queues message 'head' and 'data' for stream 'c', sent with the others. */
static void out_queue(struct ibemu_sess_conn *c, const void *head, size_t hlen,
		      const void *data, size_t len)
{
	struct ibemu_sess_out *o;
	size_t total = hlen + len;

	IBEMU_BUG_ON(c->kind != IBEMU_SESS_CONN_STREAM || c->closing);
	if (c->out_len >= IBEMU_SESS_QUEUE_MAX ||
	    c->out_bytes + total > IBEMU_SESS_QUEUE_BYTES) {
		out_dropped(c);
		return;
	}
	o = malloc(sizeof(*o) + total);
	if (!o) {
		out_dropped(c);
		return;
	}
	o->next = NULL;
	o->len = total;
	memcpy(o->msg, head, hlen);
	if (len)
		memcpy(o->msg + hlen, data, len);
	if (c->out_tail)
		c->out_tail->next = o;
	else
		c->out_head = o;
	c->out_tail = o;
	c->out_len++;
	c->out_bytes += total;
	/* A full socket: the writable callback sends the rest. */
	if (!(c->events & UV_WRITABLE))
		flush_list(c);
}

void ibemu__sess_deliver(struct ibemu_sess_conn *c, uint32_t agent_id,
			 uint32_t status, const struct ibemu_sess_addr *addr,
			 const uint8_t *mad, uint32_t len)
{
	struct {
		struct ibemu_sess_hdr h;
		struct ibemu_sess_mad m;
	} head;

	IBEMU_BUG_ON(len > IBEMU_SESS_MAD_MAX);
	memset(&head, 0, sizeof(head));
	head.h.magic = IBEMU_SESS_MAGIC;
	head.h.version = IBEMU_SESS_VERSION;
	head.h.type = IBEMU_SESS_RECV;
	head.h.len = (uint32_t)(sizeof(head.m) + len);
	head.m.agent_id = agent_id;
	head.m.status = status;
	head.m.addr = *addr;
	head.m.len = len;
	head.m.vt_ps = ibemu__su_handoff(c);
	out_queue(c, &head, sizeof(head), mad, len);
}

void ibemu__sess_deliver_tick(struct ibemu_sess_conn *c, uint64_t wait_id,
			      uint64_t vt_ps)
{
	struct {
		struct ibemu_sess_hdr h;
		struct ibemu_sess_tick t;
	} msg;

	memset(&msg, 0, sizeof(msg));
	msg.h.magic = IBEMU_SESS_MAGIC;
	msg.h.version = IBEMU_SESS_VERSION;
	msg.h.type = IBEMU_SESS_TICK;
	msg.h.len = sizeof(msg.t);
	msg.t.wait_id = wait_id;
	msg.t.vt_ps = vt_ps;
	out_queue(c, &msg, sizeof(msg), NULL, 0);
}

/* --- requests ------------------------------------------------------- */

struct ibemu_sess_conn *ibemu__sess_stream_find(struct ibemu_sess_server *s,
						uint64_t session, pid_t pid)
{
	struct ibemu_sess_conn *c;

	for (c = s->conns; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_STREAM &&
		    c->session == session && c->pid == pid)
			return c;
	return NULL;
}

static const char *const type_names[] = {
	[IBEMU_SESS_ERROR] = "ERROR",
	[IBEMU_SESS_CA_QUERY] = "CA_QUERY",
	[IBEMU_SESS_REGISTER] = "REGISTER",
	[IBEMU_SESS_UNREGISTER] = "UNREGISTER",
	[IBEMU_SESS_OPEN] = "OPEN",
	[IBEMU_SESS_SEND] = "SEND",
	[IBEMU_SESS_RECV] = "RECV",
	[IBEMU_SESS_PORT_QUERY] = "PORT_QUERY",
	[IBEMU_SESS_ADDR_QUERY] = "ADDR_QUERY",
	[IBEMU_SESS_CM_LISTEN] = "CM_LISTEN",
};

static int payload_is(struct ibemu_sess_conn *c, const struct ibemu_sess_hdr *h,
		      size_t want)
{
	if (h->len == want)
		return 1;
	proto_error(c, -EPROTO, "%s with %u payload bytes; it takes %zu",
		    type_names[h->type], h->len, want);
	return 0;
}

/* Reads a CA_QUERY or OPEN request and binds its process to an HCA. */
static int bind_request(struct ibemu_sess_conn *c,
			const struct ibemu_sess_hdr *h, const void *payload,
			struct ibemu_sess_bind *b, uint32_t *node)
{
	char why[256];
	int ret;

	if (!payload_is(c, h, sizeof(*b)))
		return -EPROTO;
	memcpy(b, payload, sizeof(*b));
	if (!memchr(b->host, '\0', sizeof(b->host))) {
		proto_error(c, -EINVAL, "host name is not NUL-terminated");
		return -EINVAL;
	}
	ret = ibemu__sess_bind(c->s, c->pid, b->host, node, why, sizeof(why));
	if (ret)
		call_error(c, ret, why);
	return ret;
}

static void handle_ca_query(struct ibemu_sess_conn *c,
			    const struct ibemu_sess_hdr *h, const void *payload)
{
	union {
		struct ibemu_sess_ca ca;
		uint8_t bytes[IBEMU_SESS_MAX_MSG -
			      sizeof(struct ibemu_sess_hdr)];
	} reply;
	struct ibemu_sess_bind b;
	uint32_t node;
	size_t len;

	if (bind_request(c, h, payload, &b, &node))
		return;
	ibemu__sess_sysfs_update(c->s, node, 0);
	len = ibemu__sess_ca_fill(c->s, node, &reply, sizeof(reply));
	call_reply(c, IBEMU_SESS_CA_QUERY, &reply, len);
}

/* rdma_cm's address lookup: binds nothing (sess_addr.c). */
static void handle_addr_query(struct ibemu_sess_conn *c,
			      const struct ibemu_sess_hdr *h,
			      const void *payload)
{
	struct ibemu_sess_addr_query q;
	int ret;

	if (!payload_is(c, h, sizeof(q)))
		return;
	memcpy(&q, payload, sizeof(q));
	ret = ibemu__sess_addr_query(c->s, &q);
	if (ret) {
		call_error(c, ret,
			   ret == -ENOENT ? "no HCA port has that address"
					  : "malformed ADDR_QUERY");
		return;
	}
	call_reply(c, IBEMU_SESS_ADDR_QUERY, &q, sizeof(q));
}

/* rdma_listen: a service ID for the caller's CM agent (sess_cm.c). */
static void handle_cm_listen(struct ibemu_sess_conn *c,
			     const struct ibemu_sess_hdr *h,
			     const void *payload)
{
	struct ibemu_sess_cm_listen q;
	int ret;

	if (!payload_is(c, h, sizeof(q)))
		return;
	memcpy(&q, payload, sizeof(q));
	ret = ibemu__sess_cm_listen(c->s, c->pid, &q);
	if (ret) {
		call_error(c, ret,
			   ret == -ENOENT	? "no CM agent of this process "
						  "on that port"
			   : ret == -EADDRINUSE ? "another process listens on "
						  "that service ID there"
						: "malformed CM_LISTEN");
		return;
	}
	call_reply(c, IBEMU_SESS_CM_LISTEN, &q, sizeof(q));
}

static void handle_port_query(struct ibemu_sess_conn *c,
			      const struct ibemu_sess_hdr *h,
			      const void *payload)
{
	struct ibemu_sess_port_attr reply;
	struct ibemu_sess_bind b;
	char why[128];
	uint32_t node;

	if (bind_request(c, h, payload, &b, &node))
		return;
	if (ibemu__sess_port_attr_fill(c->s, node, b.port, &reply)) {
		snprintf(why, sizeof(why), "%s has no port %u",
			 c->s->d->topo->nodes[node].name, b.port);
		call_error(c, -EINVAL, why);
		return;
	}
	call_reply(c, IBEMU_SESS_PORT_QUERY, &reply, sizeof(reply));
}

/*
 * PORT_QUERY on a verbs stream: a port of the stream's HCA. A context asks
 * its own daemon, so a daemon started since under the fabric's name never
 * answers for this one (the library sees the stream hang up instead).
 */
static void handle_verbs_port_query(struct ibemu_sess_conn *c,
				    const struct ibemu_sess_hdr *h,
				    const void *payload)
{
	struct ibemu_sess_port_attr reply;
	struct ibemu_sess_bind b;
	char why[128];
	int n;

	if (!payload_is(c, h, sizeof(b)))
		return;
	memcpy(&b, payload, sizeof(b));
	if (ibemu__sess_port_attr_fill(c->s, c->node, b.port, &reply)) {
		n = snprintf(why, sizeof(why), "%s has no port %u",
			     c->s->d->topo->nodes[c->node].name, b.port);
		ibemu__sess_send_msg(c->fd, IBEMU_SESS_ERROR, -EINVAL, why,
				     (size_t)n < sizeof(why) ? (size_t)n
							     : sizeof(why) - 1);
		return;
	}
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_PORT_QUERY, 0, &reply,
			     sizeof(reply));
}

static uint64_t session_new(struct ibemu_sess_server *s)
{
	uint64_t v;
	struct ibemu_sess_conn *c;

	for (;;) {
		/* Unguessable, though only this user can connect anyway. */
		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			v = ((uint64_t)rand() << 32) ^ (uint64_t)rand() ^
			    uv_hrtime();
		if (!v)
			continue;
		for (c = s->conns; c; c = c->next)
			if (c->kind == IBEMU_SESS_CONN_STREAM &&
			    c->session == v)
				break;
		if (!c)
			return v;
	}
}

static void handle_open(struct ibemu_sess_conn *c,
			const struct ibemu_sess_hdr *h, const void *payload)
{
	struct ibemu_sess_server *s = c->s;
	const struct ibemu_topo_node *n;
	struct ibemu_sess_opened reply;
	struct ibemu_sess_bind b;
	char why[256];
	uint32_t node;
	unsigned port;

	if (bind_request(c, h, payload, &b, &node))
		return;
	n = &s->d->topo->nodes[node];
	port = b.port ? b.port : ibemu__sess_ca_best_port(s, node);
	if (!port || port > n->nports) {
		snprintf(why, sizeof(why), "HCA %s has no port %u (ports 1-%u)",
			 n->name, b.port, n->nports);
		call_error(c, -EINVAL, why);
		return;
	}
	c->kind = IBEMU_SESS_CONN_STREAM;
	c->session = session_new(s);
	c->node = node;
	c->port = port;
	c->port_index = ibemu_engine_port_index(s->d->engine, node, port);
	ibemu__su_init(c);
	ibemu__sess_bind_streams(s, c->pid, 1);
	memset(&reply, 0, sizeof(reply));
	snprintf(reply.host, sizeof(reply.host), "%s", n->name);
	reply.session = c->session;
	reply.port = port;
	reply.now_ps = c->time.clock_ps;
	if (ibemu__sess_send_msg(c->fd, IBEMU_SESS_OPEN, 0, &reply,
				 sizeof(reply))) {
		ibemu__sess_conn_close(c, "it left before its port opened");
		return;
	}
	ibemu_daemon_log(s->d, "process %ld attached to %s port %u",
			 (long)c->pid, n->name, port);
}

/* REGISTER and UNREGISTER name a port stream of the caller's process. */
static struct ibemu_sess_conn *stream_of(struct ibemu_sess_conn *c,
					 uint64_t session)
{
	struct ibemu_sess_conn *stream;
	char why[128];

	stream = ibemu__sess_stream_find(c->s, session, c->pid);
	if (!stream) {
		snprintf(why, sizeof(why),
			 "process %ld has no port stream with session "
			 "0x%016llx",
			 (long)c->pid, (unsigned long long)session);
		call_error(c, -ENOENT, why);
	}
	return stream;
}

static void handle_register(struct ibemu_sess_conn *c,
			    const struct ibemu_sess_hdr *h, const void *payload)
{
	struct ibemu_sess_register r;
	struct ibemu_sess_conn *stream;
	char why[256];
	int ret;

	if (!payload_is(c, h, sizeof(r)))
		return;
	memcpy(&r, payload, sizeof(r));
	stream = stream_of(c, r.session);
	if (!stream)
		return;
	ret = ibemu__sess_register(stream, &r, why, sizeof(why));
	if (ret)
		call_error(c, ret, why);
	else
		call_reply(c, IBEMU_SESS_REGISTER, &r, sizeof(r));
}

static void handle_unregister(struct ibemu_sess_conn *c,
			      const struct ibemu_sess_hdr *h,
			      const void *payload)
{
	struct ibemu_sess_unregister u;
	struct ibemu_sess_conn *stream;
	char why[128];
	int ret;

	if (!payload_is(c, h, sizeof(u)))
		return;
	memcpy(&u, payload, sizeof(u));
	stream = stream_of(c, u.session);
	if (!stream)
		return;
	ret = ibemu__sess_unregister(stream, u.agent_id, why, sizeof(why));
	if (ret)
		call_error(c, ret, why);
	else
		call_reply(c, IBEMU_SESS_UNREGISTER, NULL, 0);
}

static void handle_send(struct ibemu_sess_conn *c,
			const struct ibemu_sess_hdr *h, const void *payload)
{
	const struct ibemu_sess_mad *m = payload;

	if (h->len < sizeof(*m)) {
		proto_error(c, -EPROTO,
			    "SEND of %u bytes, shorter than its "
			    "header",
			    h->len);
		return;
	}
	/* ib_umad_write wants at least the MAD and RMPP headers. */
	if (m->len != h->len - sizeof(*m) || m->len < IBEMU_RMPP_HDR_END ||
	    m->len > IBEMU_SESS_MAD_MAX) {
		proto_error(c, -EPROTO, "SEND with a MAD of %u bytes in %u",
			    m->len, h->len);
		return;
	}
	if (m->agent_id >= IBEMU_SESS_MAX_AGENTS) {
		proto_error(c, -EINVAL, "SEND as agent %u (agents are 0-%u)",
			    m->agent_id, IBEMU_SESS_MAX_AGENTS - 1);
		return;
	}
	ibemu__su_send(c, m);
}

static void close_fds(int *fds, int nfds)
{
	int i;

	for (i = 0; i < nfds; i++)
		close(fds[i]);
}

static void handle_verbs_open(struct ibemu_sess_conn *c,
			      const struct ibemu_sess_hdr *h,
			      const void *payload, int *fds, int nfds)
{
	struct ibemu_sess_hdr bh = *h;
	struct ibemu_verbs_open o;
	uint32_t node;

	if (h->len != sizeof(o)) {
		close_fds(fds, nfds);
		proto_error(c, -EPROTO,
			    "VERBS_OPEN with %u payload bytes; it takes %zu",
			    h->len, sizeof(o));
		return;
	}
	memcpy(&o, payload, sizeof(o));
	bh.len = sizeof(o.bind);
	if (bind_request(c, &bh, &o.bind, &o.bind, &node)) {
		close_fds(fds, nfds);
		return;
	}
	ibemu__sess_verbs_open(c, node, &o, fds, nfds);
}

void ibemu__sess_conn_handle(struct ibemu_sess_conn *c, const uint8_t *buf,
			     size_t n, int *fds, int nfds)
{
	struct ibemu_sess_hdr h;
	const void *payload = buf + sizeof(h);

	if (n < sizeof(h)) {
		close_fds(fds, nfds);
		proto_error(c, -EPROTO,
			    "message of %zu bytes, shorter than the header", n);
		return;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != IBEMU_SESS_MAGIC) {
		close_fds(fds, nfds);
		proto_error(c, -EPROTO,
			    "not an ibemu session client (bad magic 0x%08x)",
			    h.magic);
		return;
	}
	if (h.version != IBEMU_SESS_VERSION) {
		close_fds(fds, nfds);
		proto_error(c, -EPROTONOSUPPORT,
			    "session protocol version mismatch: the daemon "
			    "speaks version %u, the client %u; use the "
			    "client libraries of the ibemu that started this "
			    "fabric",
			    IBEMU_SESS_VERSION, h.version);
		return;
	}
	if (h.len != n - sizeof(h)) {
		close_fds(fds, nfds);
		proto_error(c, -EPROTO,
			    "header announces %u payload bytes, the message "
			    "has %zu",
			    h.len, n - sizeof(h));
		return;
	}
	if (c->kind == IBEMU_SESS_CONN_VERBS) {
		if (h.type == IBEMU_SESS_VERBS_KICK && !h.len && !nfds)
			return; /* prepare_cb drains the rings */
		/* Every call moved the caller's clock by its cost (verbs/
		 * cost.h): the engine first runs as far as that lets it, so
		 * what the call sees is the fabric at that time. */
		ibemu_daemon_pump(c->s->d);
		if (h.type == IBEMU_SESS_PORT_QUERY && !nfds) {
			handle_verbs_port_query(c, &h, payload);
			return;
		}
		ibemu__sess_verbs_call(c, &h, payload, fds, nfds);
		return;
	}
	if (h.type == IBEMU_SESS_VERBS_OPEN && c->kind == IBEMU_SESS_CONN_NEW) {
		handle_verbs_open(c, &h, payload, fds, nfds);
		return;
	}
	close_fds(fds, nfds);
	if (c->kind == IBEMU_SESS_CONN_JOB ||
	    (c->kind == IBEMU_SESS_CONN_NEW && h.type == IBEMU_SESS_JOB_JOIN)) {
		ibemu__sess_job_msg(c, &h, payload);
		return;
	}
	if (c->kind == IBEMU_SESS_CONN_STREAM) {
		if (h.type == IBEMU_SESS_SEND)
			handle_send(c, &h, payload);
		else if (h.type == IBEMU_SESS_PACK)
			ibemu__su_unpack(c, &h, payload);
		else if (h.type == IBEMU_SESS_WAIT &&
			 h.len == sizeof(struct ibemu_sess_wait))
			ibemu__su_wait(c, payload);
		else
			proto_error(c, -EPROTO,
				    "message type %u of %u bytes on a port "
				    "stream, which takes only SEND, WAIT and "
				    "PACK "
				    "(%zu bytes)",
				    h.type, h.len,
				    sizeof(struct ibemu_sess_wait));
		return;
	}
	switch (h.type) {
	case IBEMU_SESS_CA_QUERY:
		handle_ca_query(c, &h, payload);
		break;
	case IBEMU_SESS_PORT_QUERY:
		handle_port_query(c, &h, payload);
		break;
	case IBEMU_SESS_ADDR_QUERY:
		handle_addr_query(c, &h, payload);
		break;
	case IBEMU_SESS_CM_LISTEN:
		handle_cm_listen(c, &h, payload);
		break;
	case IBEMU_SESS_OPEN:
		handle_open(c, &h, payload);
		break;
	case IBEMU_SESS_REGISTER:
		handle_register(c, &h, payload);
		break;
	case IBEMU_SESS_UNREGISTER:
		handle_unregister(c, &h, payload);
		break;
	default:
		proto_error(c, -EPROTO,
			    "unexpected message type %u: a connection starts "
			    "with CA_QUERY, PORT_QUERY, ADDR_QUERY, CM_LISTEN, "
			    "OPEN, "
			    "REGISTER, UNREGISTER, VERBS_OPEN or JOB_JOIN",
			    h.type);
	}
}

/* File descriptors one message may carry (a QP's two rings). */
#define MAX_FDS 4

/* The fds of the control messages of 'mh' into fds[]; returns how many. */
static int fds_of(struct msghdr *mh, int *fds)
{
	struct cmsghdr *cm;
	int n = 0, i, k, fd;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < k; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(fd));
			if (n < MAX_FDS)
				fds[n++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

/*
 * Reads a port stream: up to READ_BATCH SENDs per system call, handled in
 * order. A stream carries no file descriptors: without a control buffer
 * the kernel closes any a client attaches, so none can leak here.
 */
static void stream_read(struct ibemu_sess_conn *c)
{
	struct mmsghdr mm[READ_BATCH];
	struct iovec iov[READ_BATCH];
	uint8_t *buf = c->s->rbuf;
	size_t max = IBEMU_SESS_STREAM_MAX_MSG, len;
	int done = 0, i, n;

	while (done < READS_PER_EVENT && !c->closing) {
		memset(mm, 0, sizeof(mm));
		for (i = 0; i < READ_BATCH; i++) {
			iov[i].iov_base = buf + (size_t)i * max;
			iov[i].iov_len = max;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		/* MSG_TRUNC: the length of the whole message, even one
		 * larger than its slot. */
		n = recvmmsg(c->fd, mm, READ_BATCH, MSG_DONTWAIT | MSG_TRUNC,
			     NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			ibemu__sess_conn_close(c, strerror(errno));
			return;
		}
		for (i = 0; i < n && !c->closing; i++, done++) {
			len = mm[i].msg_len;
			if (!len) {
				ibemu__sess_conn_close(c, NULL); /* EOF */
				return;
			}
			if (len > max ||
			    (mm[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				proto_error(c, -EMSGSIZE,
					    "message of %zu bytes; at most %zu",
					    len, max);
				return;
			}
			ibemu__sess_conn_handle(c, buf + (size_t)i * max, len,
						NULL, 0);
		}
		if (n < READ_BATCH)
			return; /* the socket is empty */
	}
}

static void conn_read(struct ibemu_sess_conn *c)
{
	/* The server's buffer, malloc'd: aligned for the payload structs,
	 * which begin 16 bytes in. */
	uint8_t *buf = c->s->rbuf;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr mh;
	int fds[MAX_FDS], nfds;
	size_t max;
	ssize_t n;
	int i;

	if (c->kind == IBEMU_SESS_CONN_STREAM) {
		stream_read(c);
		return;
	}
	for (i = 0; i < READS_PER_EVENT && !c->closing; i++) {
		/* Only a port stream carries MADs of RMPP transfers. */
		max = IBEMU_SESS_MAX_MSG;
		iov.iov_base = buf;
		iov.iov_len = max;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		/* MSG_TRUNC: the length of the whole message, even one
		 * larger than the buffer. */
		n = recvmsg(c->fd, &mh,
			    MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			ibemu__sess_conn_close(c, strerror(errno));
			return;
		}
		nfds = fds_of(&mh, fds);
		if (n == 0) {
			close_fds(fds, nfds);
			ibemu__sess_conn_close(c, NULL); /* EOF */
			return;
		}
		if ((size_t)n > max) {
			close_fds(fds, nfds);
			proto_error(c, -EMSGSIZE,
				    "message of %zd bytes; at most %zu", n,
				    max);
			return;
		}
		if (mh.msg_flags & MSG_CTRUNC) {
			/* More fds than any message carries, or fds the
			 * kernel could not install: the daemon is out. */
			close_fds(fds, nfds);
			if (nfds < MAX_FDS)
				proto_error(c, -EMFILE,
					    "the daemon could not take the "
					    "file descriptors sent with a "
					    "message: it has too many open "
					    "files");
			else
				proto_error(c, -EMSGSIZE,
					    "a message with more than %d fds",
					    MAX_FDS);
			return;
		}
		ibemu__sess_conn_handle(c, buf, (size_t)n, fds, nfds);
	}
}

static void conn_cb(uv_poll_t *h, int status, int events)
{
	struct ibemu_sess_conn *c = (struct ibemu_sess_conn *)h;

	if (status < 0) {
		/* libuv reports POLLERR as UV_EBADF; the socket knows better:
		 * a process that exits with MADs unread resets the stream. */
		int err = 0;
		socklen_t len = sizeof(err);

		if (status == UV_EBADF &&
		    !getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) && err)
			ibemu__sess_conn_close(c, strerror(err));
		else
			ibemu__sess_conn_close(c, uv_strerror(status));
		return;
	}
	if ((events & UV_WRITABLE) && out_flush(c))
		conn_watch(c, UV_READABLE);
	if (!c->closing && (events & UV_READABLE))
		conn_read(c);
}

/* --- the listening socket ------------------------------------------- */

static void accept_cb(struct ibemu_listener *l, int fd)
{
	struct ibemu_sess_server *s = l->data;
	int sndbuf = IBEMU_SESS_STREAM_MAX_MSG;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char why[256] = "permission denied";
	struct ibemu_sess_conn *c;

	if (!ibemu_daemon_peer_allowed(s->d, fd, "session", why, sizeof(why)) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		/* Its first call reads this ERROR (-EACCES) in its place. */
		ibemu__sess_send_msg(fd, IBEMU_SESS_ERROR, -EACCES, why,
				     strlen(why));
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || uv_poll_init(&s->d->loop, &c->poll, fd)) {
		free(c);
		close(fd);
		return;
	}
	/* A RECV of the largest MAD must fit the send buffer (sess_proto.h). */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	c->s = s;
	c->fd = fd;
	c->pid = cred.pid;
	c->kind = IBEMU_SESS_CONN_NEW;
	c->next = s->conns;
	s->conns = c;
	conn_watch(c, UV_READABLE);
}

/* Out of fds: the client's first call gets this ERROR in its place. */
static void refuse_cb(struct ibemu_listener *l, int fd, const char *why)
{
	(void)l;
	ibemu__sess_send_msg(fd, IBEMU_SESS_ERROR, -EMFILE, why, strlen(why));
}

static const struct ibemu_listener_ops sess_listener_ops = {
	.accept = accept_cb,
	.refuse = refuse_cb,
};

static int path_join(char *out, const char *dir, const char *file)
{
	int n = snprintf(out, IBEMU_PATH_MAX, "%s/%s", dir, file);

	return n < 0 || n >= IBEMU_PATH_MAX ? -ENAMETOOLONG : 0;
}

/* What the daemon's pump asks of the attached processes (attach.h). */
static const struct ibemu_daemon_attached_ops attached_ops = {
	.any = ibemu__sess_attached,
	.horizon = ibemu__sess_horizon,
	.holder = ibemu__sess_holder,
	.drain = ibemu__sess_drain,
	.flush = ibemu__sess_flush,
};

/*
 * A MAD at an HCA port where no process runs: a host's kernel CM would
 * still answer a connection request there (REJ "invalid service ID", as
 * for a port nobody listens on: sess_cm.c); the rest is dropped, as the
 * engine does.
 */
static void unowned_mad(void *ctx, uint32_t port, const struct ibemu_mad_msg *m)
{
	struct ibemu_daemon *d = ctx;

	if (ibemu_mad_get_mgmt_class(m->mad) == IBEMU_MAD_CLASS_CM &&
	    !ibemu_mad_get_r(m->mad))
		ibemu__sess_mad_recv(d, port, m);
}

int ibemu__sess_server_start(struct ibemu_daemon *d)
{
	struct ibemu_sess_server *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		goto err_log;
	}
	s->d = d;
	s->next_hi_tid = 1;
	s->issm_fd = -1;
	ibemu__sess_limits_init(s);
	s->rbuf = malloc((size_t)READ_BATCH * IBEMU_SESS_STREAM_MAX_MSG);
	s->copy_buf = malloc(IBEMU_SESS_COPY_CHUNK);
	if (!s->rbuf || !s->copy_buf) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = path_join(s->sock_path, d->paths.dir, IBEMU_SESS_SOCKET);
	if (ret)
		goto err_free;
	s->listener.ops = &sess_listener_ops;
	s->listener.what = "session";
	s->listener.data = s;
	ret = ibemu__listener_start(d, &s->listener, s->sock_path,
				    SOCK_SEQPACKET);
	if (ret)
		goto err_free;
	d->sess = s;
	d->attached = &attached_ops;
	ibemu_engine_on_unowned_mad(d->engine, unowned_mad, d);
	uv_idle_init(&d->loop, &s->flush_idle);
	s->flush_idle.data = s;
	ibemu__sess_verbs_start(s);
	ret = ibemu__sess_issm_start(s);
	if (ret)
		ibemu_daemon_log(d,
				 "cannot watch %s/issm: %s; SMs will not set "
				 "IsSM",
				 d->paths.dir, strerror(-ret));
	return 0;

err_free:
	free(s->copy_buf);
	free(s->rbuf);
	free(s);
err_log:
	ibemu_daemon_log(d,
			 "cannot listen on %s/%s: %s; no process can attach "
			 "to this fabric",
			 d->paths.dir, IBEMU_SESS_SOCKET, strerror(-ret));
	return ret;
}

int ibemu__sess_attached(const struct ibemu_daemon *d)
{
	const struct ibemu_sess_conn *c;

	for (c = d->sess ? d->sess->conns : NULL; c; c = c->next)
		if ((c->kind == IBEMU_SESS_CONN_STREAM ||
		     c->kind == IBEMU_SESS_CONN_VERBS) &&
		    !c->closing)
			return 1;
	return 0;
}

void ibemu__sess_server_free(struct ibemu_sess_server *s)
{
	ibemu__sess_sysfs_remove(s);
	ibemu__sess_bind_fini(s);
	ibemu__sess_verbs_mrs_free(s);
	free(s->copy_buf);
	free(s->rbuf);
	free(s);
}

static void server_closed_cb(struct ibemu_listener *l)
{
	struct ibemu_sess_server *s = l->data;

	if (s->issm_fd >= 0)
		ibemu__sess_issm_stop(s); /* frees 's' when done */
	else
		ibemu__sess_server_free(s);
}

void ibemu__sess_server_stop(struct ibemu_daemon *d)
{
	struct ibemu_sess_server *s = d->sess;

	if (!s)
		return;
	ibemu_engine_on_unowned_mad(d->engine, NULL, NULL);
	d->sess = NULL;
	d->attached = &ibemu__daemon_none_attached;
	while (s->conns)
		ibemu__sess_conn_close(s->conns, "the fabric stops");
	uv_close((uv_handle_t *)&s->flush_idle, NULL);
	ibemu__sess_verbs_stop(s);
	if (!d->orphaned) /* else the path may be another daemon's */
		unlink(s->sock_path);
	ibemu__listener_stop(&s->listener, server_closed_cb);
}

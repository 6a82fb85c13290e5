// SPDX-License-Identifier: MIT
/*
 * rsockets' control path (rsocket_int.h gives the protocol): the sockets'
 * table, creating, binding, listening, accepting, connecting (blocking or
 * not: a non-blocking rconnect answers EINPROGRESS and rpoll drives it),
 * shutting down and closing, names, options and rfcntl. A socket's handle
 * is the fd of its rdma_cm event channel, a real fd no other socket has.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rsocket.h>

#include "rdmacm_int.h"
#include "rsocket_int.h"

/* Resolution timeouts rdma-core's rsockets use (ms). */
#define RSOCK_RESOLVE_MS 2000

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rsock **table;
static size_t table_len;

struct rsock *rsock__find(int fd)
{
	struct rsock *rs = NULL;

	pthread_mutex_lock(&table_lock);
	if (fd >= 0 && (size_t)fd < table_len)
		rs = table[fd];
	pthread_mutex_unlock(&table_lock);
	if (!rs)
		errno = ENOTSOCK;
	return rs;
}

static int table_put(int fd, struct rsock *rs)
{
	pthread_mutex_lock(&table_lock);
	if ((size_t)fd >= table_len) {
		size_t len = (size_t)fd * 2 + 16;
		struct rsock **t = realloc(table, len * sizeof(*t));

		if (!t) {
			pthread_mutex_unlock(&table_lock);
			return ENOMEM;
		}
		memset(t + table_len, 0, (len - table_len) * sizeof(*t));
		table = t;
		table_len = len;
	}
	table[fd] = rs;
	pthread_mutex_unlock(&table_lock);
	return 0;
}

static void table_drop(int fd)
{
	pthread_mutex_lock(&table_lock);
	if (fd >= 0 && (size_t)fd < table_len)
		table[fd] = NULL;
	pthread_mutex_unlock(&table_lock);
}

/* A socket with its channel (non-blocking: rsockets wait by poll) and,
 * unless 'id' is given (an accepted connection), a new id. */
static struct rsock *rsock_new(int domain, struct rdma_cm_id *id)
{
	struct rsock *rs = calloc(1, sizeof(*rs));
	int flags;

	if (!rs)
		return NULL;
	pthread_mutex_init(&rs->lock, NULL);
	rs->domain = domain;
	rs->rx_slots = rs->tx_slots = RSOCK_SLOTS;
	rs->inline_size = 64;
	rs->ch = rdma_create_event_channel();
	if (!rs->ch)
		goto err;
	flags = fcntl(rs->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(rs->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		goto err;
	if (id) {
		if (rdma_migrate_id(id, rs->ch))
			goto err;
		rs->id = id;
	} else if (rdma_create_id(rs->ch, &rs->id, rs, RDMA_PS_TCP)) {
		goto err;
	}
	rs->fd = rs->ch->fd;
	if (table_put(rs->fd, rs)) {
		errno = ENOMEM;
		goto err;
	}
	return rs;
err:
	if (rs->id && !id)
		rdma_destroy_id(rs->id);
	if (rs->ch)
		rdma_destroy_event_channel(rs->ch);
	free(rs);
	return NULL;
}

static void rsock_free(struct rsock *rs)
{
	table_drop(rs->fd);
	rsock__conn_destroy(rs);
	if (rs->id)
		rdma_destroy_id(rs->id);
	rdma_destroy_event_channel(rs->ch);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}

/* Blocks until the socket's channel has an event (the CM's thread puts
 * them there). */
static void channel_wait(struct rsock *rs)
{
	struct pollfd p = {.fd = rs->ch->fd, .events = POLLIN};

	poll(&p, 1, -1);
}

static void hello_fill(const struct rsock *rs, struct rsock_hello *h)
{
	h->magic = htobe32(RSOCK_MAGIC);
	h->version = htobe32(RSOCK_VERSION);
	h->slots = htobe32(rs->rx_slots);
	h->slot_size = htobe32(RSOCK_SLOT);
}

/* The peer's receive slots from its hello, or 0 if it is not ours. */
static uint32_t hello_slots(const void *data, uint8_t len)
{
	struct rsock_hello h;

	if (!data || len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (be32toh(h.magic) != RSOCK_MAGIC ||
	    be32toh(h.version) != RSOCK_VERSION ||
	    be32toh(h.slot_size) != RSOCK_SLOT)
		return 0;
	return be32toh(h.slots) > RSOCK_SLOTS_MAX ? RSOCK_SLOTS_MAX
						  : be32toh(h.slots);
}

static void conn_param_fill(struct rdma_conn_param *p, struct rsock_hello *h)
{
	memset(p, 0, sizeof(*p));
	p->private_data = h;
	p->private_data_len = sizeof(*h);
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static void connect_fail(struct rsock *rs, int err)
{
	rs->state = RSOCK_FAILED;
	rs->err = err;
}

/* The errno a failed connection event gives the socket, as TCP's. */
static int event_errno(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return ev->status == -ETIMEDOUT ? ETIMEDOUT : ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status == -ETIMEDOUT ? ETIMEDOUT : EHOSTUNREACH;
	default:
		return ECONNABORTED;
	}
}

static void route_resolved(struct rsock *rs)
{
	struct rdma_conn_param param;
	struct rsock_hello h;
	int ret;

	ret = rsock__conn_create(rs, 0);
	if (ret) {
		connect_fail(rs, ret);
		return;
	}
	hello_fill(rs, &h);
	conn_param_fill(&param, &h);
	if (rdma_connect(rs->id, &param))
		connect_fail(rs, errno);
}

static void established(struct rsock *rs, const struct rdma_cm_event *ev)
{
	uint32_t slots = hello_slots(ev->param.conn.private_data,
				     ev->param.conn.private_data_len);

	if (!slots) {
		/* the peer is no rsocket of ours */
		rdma_disconnect(rs->id);
		connect_fail(rs, ECONNREFUSED);
		return;
	}
	rs->credits = slots;
	rs->state = RSOCK_CONNECTED;
}

static void event_take(struct rsock *rs, const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(rs->id, RSOCK_RESOLVE_MS))
			connect_fail(rs, errno);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		route_resolved(rs);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (rs->state == RSOCK_CONNECTING)
			established(rs, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* the peer went without FIN (it was killed): reads end */
		rs->peer_fin = 1;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rs->broken = 1;
		rs->peer_fin = 1;
		break;
	default:
		if (rs->state == RSOCK_CONNECTING)
			connect_fail(rs, event_errno(ev));
		break;
	}
}

int rsock__connect_drive(struct rsock *rs, int block)
{
	struct rdma_cm_event *ev;

	for (;;) {
		if (rdma_get_cm_event(rs->ch, &ev)) {
			if (errno != EAGAIN || !block ||
			    rs->state != RSOCK_CONNECTING)
				return 0;
			channel_wait(rs);
			continue;
		}
		event_take(rs, ev);
		rdma_ack_cm_event(ev);
	}
}

/* --- the API ---------------------------------------------------------- */

RDMACM_EXPORT int rsocket(int domain, int type, int protocol)
{
	int nonblock = type & SOCK_NONBLOCK;
	struct rsock *rs;

	type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain != AF_INET && domain != AF_INET6 && domain != AF_IB)
		return rdmacm_err(EAFNOSUPPORT);
	/* datagram rsockets (UD) are not provided: docs/usage.md */
	if (type != SOCK_STREAM)
		return rdmacm_err(ESOCKTNOSUPPORT);
	if (protocol && protocol != IPPROTO_TCP)
		return rdmacm_err(EPROTONOSUPPORT);
	if (rdmacm__init())
		return rdmacm_err(ENODEV);
	rs = rsock_new(domain, NULL);
	if (!rs)
		return -1;
	rs->nonblock = !!nonblock;
	return rs->fd;
}

RDMACM_EXPORT int rbind(int socket, const struct sockaddr *addr,
			socklen_t addrlen)
{
	struct rsock *rs = rsock__find(socket);

	if (!rs)
		return -1;
	if (rs->state != RSOCK_NEW)
		return rdmacm_err(EINVAL);
	if (rdma_bind_addr(rs->id, (struct sockaddr *)addr))
		return -1;
	rs->state = RSOCK_BOUND;
	return 0;
}

RDMACM_EXPORT int rlisten(int socket, int backlog)
{
	struct rsock *rs = rsock__find(socket);

	if (!rs)
		return -1;
	if (rs->state != RSOCK_BOUND && rs->state != RSOCK_NEW)
		return rdmacm_err(EINVAL);
	if (rdma_listen(rs->id, backlog))
		return -1;
	rs->state = RSOCK_LISTENING;
	return 0;
}

/* The accepted connection of request 'ev' (acked by the caller), or NULL
 * with the request rejected. */
static struct rsock *accept_one(struct rsock *lrs, struct rdma_cm_event *ev)
{
	uint32_t slots = hello_slots(ev->param.conn.private_data,
				     ev->param.conn.private_data_len);
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param param;
	struct rsock_hello h;
	struct rsock *rs;

	rdma_ack_cm_event(ev);
	if (!slots) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		errno = ECONNABORTED;
		return NULL;
	}
	rs = rsock_new(lrs->domain, id);
	if (!rs) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return NULL;
	}
	rs->rx_slots = lrs->rx_slots;
	rs->tx_slots = lrs->tx_slots;
	rs->inline_size = lrs->inline_size;
	rs->nodelay = lrs->nodelay;
	rs->keepalive = lrs->keepalive;
	rs->state = RSOCK_CONNECTING;
	errno = rsock__conn_create(rs, slots);
	if (errno)
		goto err;
	hello_fill(rs, &h);
	conn_param_fill(&param, &h);
	if (rdma_accept(id, &param))
		goto err;
	/* RTU gives ESTABLISHED; the hello came with the request */
	while (rs->state == RSOCK_CONNECTING) {
		struct rdma_cm_event *e;

		if (rdma_get_cm_event(rs->ch, &e)) {
			if (errno != EAGAIN)
				goto err;
			channel_wait(rs);
			continue;
		}
		if (e->event == RDMA_CM_EVENT_ESTABLISHED) {
			rs->credits = slots;
			rs->state = RSOCK_CONNECTED;
		} else {
			event_take(rs, e);
		}
		rdma_ack_cm_event(e);
	}
	if (rs->state == RSOCK_CONNECTED)
		return rs;
	errno = rs->err ? rs->err : ECONNABORTED;
err : {
	int e = errno;

	rsock_free(rs);
	errno = e;
}
	return NULL;
}

RDMACM_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *lrs = rsock__find(socket), *rs;
	struct rdma_cm_event *ev;

	if (!lrs)
		return -1;
	if (lrs->state != RSOCK_LISTENING)
		return rdmacm_err(EINVAL);
	for (;;) {
		if (rdma_get_cm_event(lrs->ch, &ev)) {
			if (errno != EAGAIN)
				return -1;
			if (lrs->nonblock)
				return rdmacm_err(EAGAIN);
			channel_wait(lrs);
			continue;
		}
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			continue;
		}
		rs = accept_one(lrs, ev);
		if (!rs)
			return -1;
		break;
	}
	if (addr && addrlen)
		rgetpeername(rs->fd, addr, addrlen);
	return rs->fd;
}

RDMACM_EXPORT int rconnect(int socket, const struct sockaddr *addr,
			   socklen_t addrlen)
{
	struct rsock *rs = rsock__find(socket);
	struct sockaddr *src = NULL;

	if (!rs)
		return -1;
	if (rs->state == RSOCK_CONNECTING)
		return rdmacm_err(EALREADY);
	if (rs->state == RSOCK_CONNECTED)
		return rdmacm_err(EISCONN);
	if (rs->state != RSOCK_NEW && rs->state != RSOCK_BOUND)
		return rdmacm_err(EINVAL);
	if (rs->state == RSOCK_BOUND)
		src = rdma_get_local_addr(rs->id);
	rs->err = 0;
	if (rdma_resolve_addr(rs->id, src, (struct sockaddr *)addr,
			      RSOCK_RESOLVE_MS))
		return -1;
	rs->state = RSOCK_CONNECTING;
	pthread_mutex_lock(&rs->lock);
	rsock__connect_drive(rs, !rs->nonblock);
	pthread_mutex_unlock(&rs->lock);
	if (rs->state == RSOCK_CONNECTED)
		return 0;
	if (rs->state == RSOCK_FAILED)
		return rdmacm_err(rs->err);
	return rdmacm_err(EINPROGRESS);
}

RDMACM_EXPORT int rshutdown(int socket, int how)
{
	struct rsock *rs = rsock__find(socket);
	int ret = 0;

	if (!rs)
		return -1;
	if (rs->state != RSOCK_CONNECTED)
		return rdmacm_err(ENOTCONN);
	pthread_mutex_lock(&rs->lock);
	if (how == SHUT_RD || how == SHUT_RDWR)
		rs->shut_rd = 1;
	if (how == SHUT_WR || how == SHUT_RDWR)
		ret = rsock__conn_finish(rs);
	pthread_mutex_unlock(&rs->lock);
	return ret ? rdmacm_err(ret) : 0;
}

/* Rejects the requests a closing listener never accepted. */
static void listener_drain(struct rsock *rs)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(rs->ch, &ev)) {
		struct rdma_cm_id *id = ev->id;
		int req = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;

		rdma_ack_cm_event(ev);
		if (req) {
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
		}
	}
}

RDMACM_EXPORT int rclose(int socket)
{
	struct rsock *rs = rsock__find(socket);

	if (!rs)
		return -1;
	if (rs->state == RSOCK_LISTENING)
		listener_drain(rs);
	if (rs->state == RSOCK_CONNECTED) {
		rsock__conn_finish(rs);
		rdma_disconnect(rs->id);
		rsock__connect_drive(rs, 0);
	}
	rsock_free(rs);
	return 0;
}

static int name_copy(const struct sockaddr *sa, struct sockaddr *addr,
		     socklen_t *addrlen)
{
	size_t len = rdmacm__addr_len(sa);

	if (!addr || !addrlen)
		return rdmacm_err(EFAULT);
	memcpy(addr, sa, len < *addrlen ? len : *addrlen);
	*addrlen = (socklen_t)len;
	return 0;
}

RDMACM_EXPORT int rgetpeername(int socket, struct sockaddr *addr,
			       socklen_t *addrlen)
{
	struct rsock *rs = rsock__find(socket);

	if (!rs)
		return -1;
	if (rs->state != RSOCK_CONNECTED)
		return rdmacm_err(ENOTCONN);
	return name_copy(rdma_get_peer_addr(rs->id), addr, addrlen);
}

RDMACM_EXPORT int rgetsockname(int socket, struct sockaddr *addr,
			       socklen_t *addrlen)
{
	struct rsock *rs = rsock__find(socket);

	if (!rs)
		return -1;
	return name_copy(rdma_get_local_addr(rs->id), addr, addrlen);
}

/* --- options ------------------------------------------------------------ */

static uint32_t slots_of_bytes(int bytes)
{
	uint32_t n = bytes > 0 ? (uint32_t)bytes / RSOCK_SLOT : 0;

	if (n < 2)
		n = 2;
	return n > RSOCK_SLOTS_MAX ? RSOCK_SLOTS_MAX : n;
}

static int int_of(const void *optval, socklen_t optlen, int *v)
{
	if (!optval || optlen < sizeof(int))
		return rdmacm_err(EINVAL);
	memcpy(v, optval, sizeof(*v));
	return 0;
}

RDMACM_EXPORT int rsetsockopt(int socket, int level, int optname,
			      const void *optval, socklen_t optlen)
{
	struct rsock *rs = rsock__find(socket);
	int v = 0;

	if (!rs)
		return -1;
	if (level == SOL_RDMA && optname == RDMA_ROUTE)
		return 0; /* routes come from the SA: the given one is unused */
	if (int_of(optval, optlen, &v))
		return -1;
	switch (level) {
	case SOL_SOCKET:
		switch (optname) {
		case SO_REUSEADDR:
			rs->reuseaddr = !!v;
			return 0;
		case SO_KEEPALIVE:
			rs->keepalive = !!v;
			return 0;
		case SO_RCVBUF:
			rs->rx_slots = slots_of_bytes(v);
			return 0;
		case SO_SNDBUF:
			rs->tx_slots = slots_of_bytes(v);
			return 0;
		case SO_LINGER:
		case SO_OOBINLINE:
			return 0;
		}
		break;
	case IPPROTO_TCP:
		switch (optname) {
		case TCP_NODELAY:
			rs->nodelay = !!v;
			return 0;
		case TCP_KEEPIDLE:
			if (v <= 0)
				return rdmacm_err(EINVAL);
			rs->keepidle = v;
			return 0;
		case TCP_MAXSEG:
			return 0;
		}
		break;
	case IPPROTO_IPV6:
		if (optname == IPV6_V6ONLY)
			return rdma_set_option(rs->id, RDMA_OPTION_ID,
					       RDMA_OPTION_ID_AFONLY, &v,
					       sizeof(v));
		break;
	case SOL_RDMA:
		switch (optname) {
		case RDMA_SQSIZE:
			rs->tx_slots = v < 2 ? 2
				       : v > (int)RSOCK_SLOTS_MAX
					       ? RSOCK_SLOTS_MAX
					       : (uint32_t)v;
			return 0;
		case RDMA_RQSIZE:
			rs->rx_slots = v < 2 ? 2
				       : v > (int)RSOCK_SLOTS_MAX
					       ? RSOCK_SLOTS_MAX
					       : (uint32_t)v;
			return 0;
		case RDMA_INLINE:
			rs->inline_size = v < 0 ? 0 : (uint32_t)v;
			return 0;
		case RDMA_IOMAPSIZE:
			return 0;
		}
		break;
	}
	return rdmacm_err(ENOTSUP);
}

static int int_out(int v, void *optval, socklen_t *optlen)
{
	if (!optval || !optlen || *optlen < sizeof(int))
		return rdmacm_err(EINVAL);
	memcpy(optval, &v, sizeof(v));
	*optlen = sizeof(v);
	return 0;
}

RDMACM_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval,
			      socklen_t *optlen)
{
	struct rsock *rs = rsock__find(socket);
	int err;

	if (!rs)
		return -1;
	switch (level) {
	case SOL_SOCKET:
		switch (optname) {
		case SO_ERROR:
			err = rs->err;
			rs->err = 0;
			return int_out(err, optval, optlen);
		case SO_REUSEADDR:
			return int_out(rs->reuseaddr, optval, optlen);
		case SO_KEEPALIVE:
			return int_out(rs->keepalive, optval, optlen);
		case SO_RCVBUF:
			return int_out((int)(rs->rx_slots * RSOCK_SLOT), optval,
				       optlen);
		case SO_SNDBUF:
			return int_out((int)(rs->tx_slots * RSOCK_SLOT), optval,
				       optlen);
		}
		break;
	case IPPROTO_TCP:
		switch (optname) {
		case TCP_NODELAY:
			return int_out(rs->nodelay, optval, optlen);
		case TCP_KEEPIDLE:
			return int_out(rs->keepidle ? rs->keepidle : 7200,
				       optval, optlen);
		case TCP_MAXSEG:
			return int_out((int)RSOCK_SLOT, optval, optlen);
		}
		break;
	case SOL_RDMA:
		switch (optname) {
		case RDMA_SQSIZE:
			return int_out((int)rs->tx_slots, optval, optlen);
		case RDMA_RQSIZE:
			return int_out((int)rs->rx_slots, optval, optlen);
		case RDMA_INLINE:
			return int_out((int)rs->inline_size, optval, optlen);
		}
		break;
	}
	return rdmacm_err(ENOTSUP);
}

RDMACM_EXPORT int rfcntl(int socket, int cmd, ...)
{
	struct rsock *rs = rsock__find(socket);
	va_list ap;
	int arg;

	if (!rs)
		return -1;
	switch (cmd) {
	case F_GETFL:
		return O_RDWR | (rs->nonblock ? O_NONBLOCK : 0);
	case F_SETFL:
		va_start(ap, cmd);
		arg = va_arg(ap, int);
		va_end(ap);
		rs->nonblock = !!(arg & O_NONBLOCK);
		return 0;
	default:
		return rdmacm_err(ENOTSUP);
	}
}

/* Direct placement into a mapped window (riomap) is not provided: its
 * three calls fail, as rdma-core's do on a socket with no iomap space. */
RDMACM_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot,
			   int flags, off_t offset)
{
	return rsock__find(socket) ? (off_t)rdmacm_err(ENOMEM) : -1;
}

RDMACM_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	return rsock__find(socket) ? rdmacm_err(EINVAL) : -1;
}

RDMACM_EXPORT size_t riowrite(int socket, const void *buf, size_t count,
			      off_t offset, int flags)
{
	if (rsock__find(socket))
		errno = EINVAL;
	return (size_t)-1;
}

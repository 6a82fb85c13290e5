// SPDX-License-Identifier: MIT
/*
 * rdma_cm ids and what this library resolves for them: binding to one of
 * the process's HCA ports, address resolution (the destination's port in
 * the fabric, found by ADDR_QUERY) and route resolution (an SA PathRecord
 * query, route.c). Each call does its work before it returns and queues
 * the event it raises on the id's channel, so the program sees the
 * kernel's event sequence. The CM protocol (connect, listen) is stubs.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/ib.h>

#include "rdmacm_int.h"

/* Ports given to ids bound to port 0: one sequence per process, so that
 * a run's ports are the same each time (the kernel picks at random). */
static pthread_mutex_t port_lock = PTHREAD_MUTEX_INITIALIZER;
static uint16_t next_port = 40000;

static uint16_t ephemeral_port(void)
{
	uint16_t p;

	pthread_mutex_lock(&port_lock);
	p = next_port++;
	if (next_port < 40000)
		next_port = 40000;
	pthread_mutex_unlock(&port_lock);
	return htons(p);
}

static int ps_valid(enum rdma_port_space ps)
{
	return ps == RDMA_PS_TCP || ps == RDMA_PS_UDP || ps == RDMA_PS_IB ||
	       ps == RDMA_PS_IPOIB;
}

RDMACM_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
				 struct rdma_cm_id **out, void *context,
				 enum rdma_port_space ps)
{
	struct rdmacm_channel *c = NULL;
	struct rdmacm_id *id;
	int ret = rdmacm__init();

	if (ret)
		return rdmacm_err(-ret);
	if (!out || !ps_valid(ps))
		return rdmacm_err(EINVAL);
	if (!channel) {
		c = rdmacm__channel_create(1);
		if (!c)
			return -1;
		channel = &c->ch;
	}
	id = calloc(1, sizeof(*id));
	if (!id) {
		if (c)
			rdma_destroy_event_channel(&c->ch);
		return rdmacm_err(ENOMEM);
	}
	pthread_mutex_init(&id->lock, NULL);
	id->sync = c != NULL;
	id->id.channel = channel;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD
								  : IBV_QPT_RC;
	*out = &id->id;
	return 0;
}

RDMACM_EXPORT int rdma_destroy_id(struct rdma_cm_id *cm_id)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct rdmacm_channel *c = rdmacm_channel_of(cm_id->channel);
	int now;

	rdmacm__cm_forget(id);
	if (cm_id->event) {
		rdma_ack_cm_event(cm_id->event);
		cm_id->event = NULL;
	}
	rdmacm__mcast_leave_all(id);
	if (c->internal)
		rdma_destroy_event_channel(&c->ch);
	/* rdma-core waits for the acks of the id's events; the id is freed
	 * at the last one instead, so a forgotten ack hangs nothing. */
	pthread_mutex_lock(&id->lock);
	id->destroyed = 1;
	now = !id->unacked;
	pthread_mutex_unlock(&id->lock);
	free(id->ep_qp_attr);
	id->ep_qp_attr = NULL;
	if (now) {
		pthread_mutex_destroy(&id->lock);
		free(cm_id->route.path_rec);
		free(id);
	}
	return 0;
}

/* The id takes port 'w' of the process's HCA as its source. */
static void id_bind(struct rdmacm_id *id, const struct sockaddr *addr,
		    const struct rdmacm_where *w)
{
	struct rdma_cm_id *c = &id->id;
	uint16_t port_be = 0;

	if (addr->sa_family == AF_INET)
		port_be = ((const struct sockaddr_in *)addr)->sin_port;
	else if (addr->sa_family == AF_INET6)
		port_be = ((const struct sockaddr_in6 *)addr)->sin6_port;
	else if (addr->sa_family == AF_IB)
		port_be = htons((uint16_t)be64toh(
			((const struct sockaddr_ib *)addr)->sib_sid));
	if (!port_be)
		port_be = ephemeral_port();
	id->dev = rdmacm__device();
	c->verbs = id->dev->verbs;
	c->port_num = (uint8_t)w->port;
	rdmacm__addr_fill(&c->route.addr.src_storage, addr->sa_family, w,
			  port_be);
	c->route.addr.addr.ibaddr.sgid = w->gid;
	c->route.addr.addr.ibaddr.pkey = htons(0xffff);
}

/* Whether 'w' is a port of this process's HCA. */
static int ours(const struct rdmacm_where *w)
{
	struct rdmacm_device *dev = rdmacm__device();

	return dev && !strcmp(w->host, ibv_get_device_name(dev->verbs->device));
}

/* The process's HCA port 1, the source of an id that is not bound to
 * one (every port of an HCA is in the one subnet). */
static int local_port1(struct rdmacm_where *w)
{
	struct rdmacm_device *dev = rdmacm__device();

	if (!dev)
		return -ENODEV;
	return rdmacm__host_lookup(ibv_get_device_name(dev->verbs->device), w);
}

RDMACM_EXPORT int rdma_bind_addr(struct rdma_cm_id *cm_id,
				 struct sockaddr *addr)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct rdmacm_where w;
	size_t len;
	int ret;

	if (!addr || !(len = rdmacm__addr_len(addr)))
		return rdmacm_err(addr ? EAFNOSUPPORT : EINVAL);
	if (cm_id->route.addr.src_addr.sa_family)
		return rdmacm_err(EINVAL); /* bound already, as the kernel */
	if (rdmacm__addr_any(addr)) {
		/* A wildcard binds no device (rdma-core: verbs NULL). */
		memcpy(&cm_id->route.addr.src_storage, addr, len);
		if (addr->sa_family == AF_INET &&
		    !((struct sockaddr_in *)addr)->sin_port)
			cm_id->route.addr.src_sin.sin_port = ephemeral_port();
		return 0;
	}
	ret = rdmacm__addr_lookup(addr, &w);
	if (ret == -ENOENT || (!ret && !ours(&w)))
		return rdmacm_err(EADDRNOTAVAIL);
	if (ret)
		return rdmacm_err(-ret);
	id_bind(id, addr, &w);
	return 0;
}

/* Queues the event, and for a synchronous id takes it back (its result). */
static int raise_event(struct rdmacm_id *id, enum rdma_cm_event_type type,
		       int status)
{
	int ret = rdmacm__event_queue(id, type, status);

	if (ret)
		return rdmacm_err(-ret);
	return id->sync ? rdmacm__sync_complete(id) : 0;
}

RDMACM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *cm_id,
				    struct sockaddr *src_addr,
				    struct sockaddr *dst_addr, int timeout_ms)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct rdmacm_where dst, src;
	int ret, family;

	(void)timeout_ms;
	if (!dst_addr || !rdmacm__addr_len(dst_addr))
		return rdmacm_err(dst_addr ? EAFNOSUPPORT : EINVAL);
	if (src_addr && rdma_bind_addr(cm_id, src_addr) && errno != EINVAL)
		return -1;
	family = dst_addr->sa_family;
	memcpy(&cm_id->route.addr.dst_storage, dst_addr,
	       rdmacm__addr_len(dst_addr));
	memset(&dst, 0, sizeof(dst));
	/* A group: the source port resolves it (mcast.c). */
	ret = rdmacm__mcast_mgid(cm_id, dst_addr, &dst.gid)
		      ? 0
		      : rdmacm__addr_lookup(dst_addr, &dst);
	if (ret == -ENOENT || ret == -EAFNOSUPPORT)
		/* No HCA has it: the kernel finds no route to the host. */
		return raise_event(id, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH);
	if (ret)
		return rdmacm_err(-ret);
	if (!cm_id->verbs) {
		uint16_t port_be = cm_id->route.addr.src_sin.sin_port;
		struct sockaddr_storage ss;

		/* Unbound or wildcard: the source is our port 1. */
		ret = local_port1(&src);
		if (ret)
			return rdmacm_err(-ret);
		rdmacm__addr_fill(&ss, family, &src, port_be);
		memset(&cm_id->route.addr.src_storage, 0,
		       sizeof(cm_id->route.addr.src_storage));
		id_bind(id, (struct sockaddr *)&ss, &src);
	}
	cm_id->route.addr.addr.ibaddr.dgid = dst.gid;
	id->addr_resolved = 1;
	return raise_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
}

RDMACM_EXPORT int rdma_resolve_route(struct rdma_cm_id *cm_id, int timeout_ms)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct ibv_sa_path_rec *path;
	int ret;

	if (!id->addr_resolved)
		return rdmacm_err(EINVAL);
	path = calloc(1, sizeof(*path));
	if (!path)
		return rdmacm_err(ENOMEM);
	ret = rdmacm__path_query(id, timeout_ms > 0 ? timeout_ms : 2000, path);
	if (ret) {
		free(path);
		return raise_event(id, RDMA_CM_EVENT_ROUTE_ERROR, ret);
	}
	free(cm_id->route.path_rec);
	cm_id->route.path_rec = path;
	cm_id->route.num_paths = 1;
	return raise_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
}

static uint16_t addr_port(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)sa)->sin_port;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	case AF_IB:
		return htons((uint16_t)be64toh(
			((const struct sockaddr_ib *)sa)->sib_sid));
	}
	return 0;
}

RDMACM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return addr_port(&id->route.addr.src_addr);
}

RDMACM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return addr_port(&id->route.addr.dst_addr);
}

RDMACM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
				  void *optval, size_t optlen)
{
	(void)id;
	if (!optval)
		return rdmacm_err(EINVAL);
	switch (level) {
	case RDMA_OPTION_ID:
		/* TOS, REUSEADDR, AFONLY, ACK_TIMEOUT: taken; they change
		 * nothing before the CM protocol exists. */
		if (optname == RDMA_OPTION_ID_TOS ||
		    optname == RDMA_OPTION_ID_REUSEADDR ||
		    optname == RDMA_OPTION_ID_AFONLY ||
		    optname == RDMA_OPTION_ID_ACK_TIMEOUT)
			return optlen ? 0 : rdmacm_err(EINVAL);
		break;
	case RDMA_OPTION_IB:
		break;
	}
	return rdmacm_err(ENOSYS);
}

RDMACM_EXPORT int rdma_create_ep(struct rdma_cm_id **out,
				 struct rdma_addrinfo *res, struct ibv_pd *pd,
				 struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	int ret;

	if (!out || !res)
		return rdmacm_err(EINVAL);
	ret = rdma_create_id(NULL, &cm_id, NULL, res->ai_port_space);
	if (ret)
		return ret;
	if (res->ai_flags & RAI_PASSIVE)
		ret = rdma_bind_addr(cm_id, res->ai_src_addr);
	else
		ret = rdma_resolve_addr(cm_id, res->ai_src_addr,
					res->ai_dst_addr, 2000);
	if (!ret && !(res->ai_flags & RAI_PASSIVE))
		ret = rdma_resolve_route(cm_id, 2000);
	/* A passive endpoint's QPs come with its connection requests:
	 * rdma_get_request() makes them from a copy, as rdma-core's. */
	if (!ret && qp_init_attr && (res->ai_flags & RAI_PASSIVE)) {
		struct rdmacm_id *id = rdmacm_id_of(cm_id);

		id->ep_qp_attr = malloc(sizeof(*qp_init_attr));
		if (!id->ep_qp_attr) {
			ret = rdmacm_err(ENOMEM);
		} else {
			*id->ep_qp_attr = *qp_init_attr;
			id->ep_qp_attr->qp_type = res->ai_qp_type;
			id->ep_pd = pd;
		}
	}
	if (!ret && qp_init_attr && !(res->ai_flags & RAI_PASSIVE)) {
		qp_init_attr->qp_type = res->ai_qp_type;
		ret = rdma_create_qp(cm_id, pd, qp_init_attr);
	}
	if (ret) {
		int e = errno;

		rdma_destroy_id(cm_id);
		errno = e;
		return ret;
	}
	cm_id->qp_type = res->ai_qp_type;
	*out = cm_id;
	return 0;
}

RDMACM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

// SPDX-License-Identifier: MIT
/*
 * Fabric addresses (topologies/README.md, "IP addresses"): every HCA port
 * has an IPv4 address in 127.0.0.0/8, which the daemon looks up
 * (ADDR_QUERY, proto/sess_proto.h) with the port's LID and GID. rdma_cm
 * accepts it as AF_INET, as the IPv4-mapped AF_INET6 ::ffff:a.b.c.d and as
 * AF_IB (the port's GID); rdma_getaddrinfo() also resolves the topology's
 * host names. Nothing here touches the host's network.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/ib.h>

#include "rdmacm_int.h"
#include "sess_proto.h"
#include "sessc.h"

static struct ibemu_sessc sessc = IBEMU_SESSC_INIT("librdmacm", NULL);

static int query(struct ibemu_sess_addr_query *q, struct rdmacm_where *w)
{
	struct ibemu_sessc_refusal r;
	size_t got = 0;
	int ret;

	ibemu_sessc_refusal_clear(&r);
	ret = ibemu_sessc_call(&sessc, IBEMU_SESS_ADDR_QUERY, q, sizeof(*q), q,
			       sizeof(*q), &got, &r);
	if (ret)
		return ret;
	if (got != sizeof(*q))
		return -EPROTO;
	memset(w, 0, sizeof(*w));
	snprintf(w->host, sizeof(w->host), "%.*s", (int)sizeof(q->host) - 1,
		 q->host);
	w->port = q->port;
	w->lid = q->lid;
	w->ip = q->ip;
	w->gid.global.subnet_prefix = htobe64(q->gid_prefix);
	w->gid.global.interface_id = htobe64(q->port_guid);
	return 0;
}

/* The IPv4 address (host order) in an IPv4-mapped IPv6 one, else 0. */
static uint32_t mapped_ip(const struct in6_addr *a)
{
	if (!IN6_IS_ADDR_V4MAPPED(a))
		return 0;
	return ntohl(a->s6_addr32[3]);
}

/* 127.0.0.1 or ::1, which no HCA port has: as the kernel's rdma_cm binds
 * a loopback address (cma_bind_loopback), the process's own HCA port. */
static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_LOOPBACK);
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(
		       &((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static int own_port(struct rdmacm_where *w)
{
	struct rdmacm_device *dev = rdmacm__device();

	if (!dev)
		return -ENODEV;
	return rdmacm__host_lookup(ibv_get_device_name(dev->verbs->device), w);
}

int rdmacm__addr_lookup(const struct sockaddr *sa, struct rdmacm_where *w)
{
	struct ibemu_sess_addr_query q;

	memset(&q, 0, sizeof(q));
	switch (sa->sa_family) {
	case AF_INET:
		q.ip = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		break;
	case AF_INET6: {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)sa)->sin6_addr;

		q.ip = mapped_ip(a);
		/* Else a GID written as IPv6 (fe80::GUID): its GUID. */
		if (!q.ip && IN6_IS_ADDR_LOOPBACK(a))
			q.ip = INADDR_LOOPBACK;
		else if (!q.ip)
			memcpy(&q.port_guid, &a->s6_addr[8], 8);
		q.port_guid = be64toh(q.port_guid);
		break;
	}
	case AF_IB:
		q.port_guid = be64toh(((const struct sockaddr_ib *)sa)
					      ->sib_addr.sib_interface_id);
		break;
	default:
		return -EAFNOSUPPORT;
	}
	if (!q.ip && !q.port_guid)
		return -ENOENT;
	if (is_loopback(sa))
		return own_port(w);
	return query(&q, w);
}

int rdmacm__host_lookup(const char *name, struct rdmacm_where *w)
{
	struct ibemu_sess_addr_query q;

	memset(&q, 0, sizeof(q));
	if (strlen(name) >= sizeof(q.host))
		return -ENOENT;
	strcpy(q.host, name);
	return query(&q, w);
}

int rdmacm__addr_any(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	case AF_INET6:
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	case AF_IB:
		return !((const struct sockaddr_ib *)sa)
				->sib_addr.sib_interface_id;
	}
	return 0;
}

size_t rdmacm__addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	}
	return 0;
}

void rdmacm__addr_fill(struct sockaddr_storage *out, int family,
		       const struct rdmacm_where *w, uint16_t port_be)
{
	memset(out, 0, sizeof(*out));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = port_be;
		s6->sin6_addr.s6_addr16[5] = 0xffff;
		s6->sin6_addr.s6_addr32[3] = htonl(w->ip);
	} else if (family == AF_IB) {
		struct sockaddr_ib *ib = (struct sockaddr_ib *)out;

		ib->sib_family = AF_IB;
		ib->sib_pkey = htobe16(0xffff);
		memcpy(&ib->sib_addr, &w->gid, sizeof(w->gid));
		ib->sib_sid =
			htobe64((uint64_t)RDMA_PS_TCP << 16 | ntohs(port_be));
		ib->sib_sid_mask = htobe64(~0ull);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)out;

		s4->sin_family = AF_INET;
		s4->sin_port = port_be;
		s4->sin_addr.s_addr = htonl(w->ip);
	}
}

/* --- rdma_getaddrinfo ------------------------------------------------ */

static int copy_addr(const struct sockaddr *sa, struct sockaddr **out,
		     socklen_t *len)
{
	size_t n = rdmacm__addr_len(sa);

	*out = malloc(sizeof(struct sockaddr_storage));
	if (!*out)
		return EAI_MEMORY;
	memset(*out, 0, sizeof(struct sockaddr_storage));
	memcpy(*out, sa, n);
	*len = (socklen_t)n;
	return 0;
}

/* The service as a port number (network order); -1 if it is none. */
static int service_port(const char *service)
{
	char *end;
	long v;

	if (!service)
		return 0;
	v = strtol(service, &end, 10);
	if (*service && !*end && v >= 0 && v <= 65535)
		return htons((uint16_t)v);
	return -1;
}

/*
 * 'node' as a socket address: a fabric host name becomes its port 1's
 * address; else a numeric IPv4 or IPv6 address, or "localhost" (no DNS:
 * another name the fabric does not have is EAI_NONAME). NULL: the wildcard of 'family'.
 */
static int node_addr(const char *node, int family, int port_be,
		     struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct rdmacm_where w;

	memset(ss, 0, sizeof(*ss));
	if (node && inet_pton(AF_INET, node, &s4->sin_addr) == 1 &&
	    family != AF_INET6) {
		s4->sin_family = AF_INET;
		s4->sin_port = (uint16_t)port_be;
		return 0;
	}
	if (node && inet_pton(AF_INET6, node, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = (uint16_t)port_be;
		return 0;
	}
	if (node && !strcmp(node, "localhost")) {
		/* the one name of the host's own that needs no lookup */
		node = family == AF_INET6 ? "::1" : "127.0.0.1";
		return node_addr(node, family, port_be, ss);
	}
	if (node && !rdmacm__host_lookup(node, &w)) {
		rdmacm__addr_fill(ss, family == AF_INET6 ? AF_INET6 : AF_INET,
				  &w, (uint16_t)port_be);
		return 0;
	}
	if (node)
		return EAI_NONAME;
	if (family == AF_INET6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = (uint16_t)port_be;
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = (uint16_t)port_be;
	}
	return 0;
}

/*
 * Neither node nor service: the hints' own addresses, flags and types, as
 * rdma-core answers (libfabric's verbs provider asks so for its domains).
 */
static int hints_only(const struct rdma_addrinfo *hints,
		      struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *ai = calloc(1, sizeof(*ai));
	int ret = 0;

	if (!ai)
		return rdmacm_err(ENOMEM);
	ai->ai_flags = hints->ai_flags;
	ai->ai_family = hints->ai_family;
	ai->ai_qp_type = hints->ai_qp_type;
	ai->ai_port_space = hints->ai_port_space;
	if (hints->ai_dst_addr && hints->ai_dst_len)
		ret = copy_addr(hints->ai_dst_addr, &ai->ai_dst_addr,
				&ai->ai_dst_len);
	if (!ret && hints->ai_src_addr && hints->ai_src_len)
		ret = copy_addr(hints->ai_src_addr, &ai->ai_src_addr,
				&ai->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(ai);
		return ret;
	}
	*res = ai;
	return 0;
}

RDMACM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				   const struct rdma_addrinfo *hints,
				   struct rdma_addrinfo **res)
{
	struct sockaddr_storage ss;
	struct rdma_addrinfo *ai;
	int family = hints ? hints->ai_family : 0;
	int passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int port_be = service_port(service), ret;

	if (!res || (!node && !service && !hints))
		return rdmacm_err(EINVAL);
	if (!node && !service)
		return hints_only(hints, res);
	if (port_be < 0)
		return EAI_SERVICE;
	if (hints && (hints->ai_flags & RAI_FAMILY) && family == AF_IB)
		family = AF_IB;
	ret = node_addr(node, family == AF_IB ? 0 : family, port_be, &ss);
	if (ret)
		return ret;
	ai = calloc(1, sizeof(*ai));
	if (!ai)
		return EAI_MEMORY;
	ai->ai_flags = hints ? hints->ai_flags : 0;
	ai->ai_family = ss.ss_family;
	ai->ai_qp_type =
		hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	ai->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space
							  : RDMA_PS_TCP;
	if (passive)
		ret = copy_addr((struct sockaddr *)&ss, &ai->ai_src_addr,
				&ai->ai_src_len);
	else
		ret = copy_addr((struct sockaddr *)&ss, &ai->ai_dst_addr,
				&ai->ai_dst_len);
	if (!ret && !passive && hints && hints->ai_src_addr)
		ret = copy_addr(hints->ai_src_addr, &ai->ai_src_addr,
				&ai->ai_src_len);
	if (!ret && node) {
		ai->ai_dst_canonname = passive ? NULL : strdup(node);
		ai->ai_src_canonname = passive ? strdup(node) : NULL;
	}
	if (ret) {
		rdma_freeaddrinfo(ai);
		return ret;
	}
	*res = ai;
	return 0;
}

RDMACM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}

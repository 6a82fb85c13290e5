// SPDX-License-Identifier: MIT
/*
 * ADDR_QUERY: the fabric's addresses for rdma_cm (rdmacm/). Each HCA port
 * has an IPv4 address (topo.h's plan or the YAML's ip:); librdmacm asks
 * which port has an address, a port GUID (AF_IB) or a host name, and gets
 * the port's LID and GID as its SMA holds them at that moment.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sess.h"

/* Finds the HCA port 'q' names; 0 and node/port, or -ENOENT. */
static int addr_find(const struct ibemu_topo *t,
		     const struct ibemu_sess_addr_query *q, uint32_t *node,
		     unsigned *port)
{
	uint32_t i;
	unsigned p;

	if (!q->ip && !q->port_guid) {
		i = ibemu_topo_find(t, q->host);
		p = q->port ? q->port : 1;
		if (i == IBEMU_NONE || t->nodes[i].type != IBEMU_NODE_HCA ||
		    p > t->nodes[i].nports)
			return -ENOENT;
		*node = i;
		*port = p;
		return 0;
	}
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		if (n->type != IBEMU_NODE_HCA)
			continue;
		for (p = 1; p <= n->nports; p++) {
			if (q->ip ? ibemu_topo_port_ip(n, p) != q->ip
				  : n->ports[p].guid != q->port_guid)
				continue;
			*node = i;
			*port = p;
			return 0;
		}
	}
	return -ENOENT;
}

int ibemu__sess_addr_query(struct ibemu_sess_server *s,
			   struct ibemu_sess_addr_query *q)
{
	const struct ibemu_topo *t = s->d->topo;
	struct ibemu_sess_port_attr attr;
	uint32_t node;
	unsigned port;
	int ret;

	if (!memchr(q->host, '\0', sizeof(q->host)))
		return -EINVAL;
	ret = addr_find(t, q, &node, &port);
	if (ret)
		return ret;
	ret = ibemu__sess_port_attr_fill(s, node, port, &attr);
	if (ret)
		return ret;
	memset(q, 0, sizeof(*q));
	snprintf(q->host, sizeof(q->host), "%s", t->nodes[node].name);
	q->port_guid = attr.port_guid;
	q->gid_prefix = attr.gid_prefix;
	q->ip = ibemu_topo_port_ip(&t->nodes[node], port);
	q->port = port;
	q->lid = attr.lid;
	q->nports = t->nodes[node].nports;
	return 0;
}

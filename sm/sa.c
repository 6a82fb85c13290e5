// SPDX-License-Identifier: MIT
/*
 * Subnet Administration (IBA 15): a GS agent of class SA on the SM's
 * port. A request is dispatched by attribute to the record builders of
 * sa_*.c, which append the records that match its ComponentMask; the
 * answer is a GetResp of one record, or a GetTableResp of them all written
 * whole as one RMPP-active MAD, which the umad stack segments (IBA 13.6).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "sa.h"

#define QP1_QKEY	     0x80010000u /* IBA 15.2.1.1: the GSI's Q_Key */
#define SA_RESP_TIME	     18		 /* ClassPortInfo RespTimeValue */
#define DEFAULT_GID_PREFIX   0xfe80000000000000ull
#define NODE_TYPE_SWITCH     2
#define SA_CPI_LEN	     72 /* IBA 13.4.8.1 ClassPortInfo */
#define SA_ATTR_CLASS_PORT_I IBEMU_MAD_ATTR_CLASS_PORT_INFO

int sm_sa_open(struct sm *sm)
{
	long mask[16 / sizeof(long)] = {0};
	const uint8_t methods[] = {IBEMU_MAD_METHOD_GET, IBEMU_MAD_METHOD_SET,
				   SA_METHOD_GET_TABLE, SA_METHOD_DELETE};
	unsigned i;

	for (i = 0; i < sizeof(methods); i++)
		mask[methods[i] / (8 * sizeof(long))] |=
			1L << (methods[i] % (8 * sizeof(long)));
	/* RMPP version 1: the stack segments what the SA writes whole. */
	sm->sa_agent = umad_register(sm->fd, IBEMU_MAD_CLASS_SA,
				     SA_CLASS_VERSION, 1, mask);
	return sm->sa_agent < 0 ? sm->sa_agent : 0;
}

void sm_sa_close(struct sm *sm)
{
	if (sm->sa_agent >= 0)
		umad_unregister(sm->fd, sm->sa_agent);
	sm->sa_agent = -1;
	sm_mcast_free(sm);
	sm_service_free(sm);
}

uint64_t sa_bits(const uint8_t *p, unsigned off, unsigned width)
{
	uint64_t v = 0;
	unsigned i;

	for (i = off; i < off + width; i++)
		v = v << 1 | (uint64_t)(p[i / 8] >> (7 - i % 8) & 1);
	return v;
}

void sa_set_bits(uint8_t *p, unsigned off, unsigned width, uint64_t v)
{
	unsigned i;

	for (i = off + width; i-- > off; v >>= 1) {
		uint8_t bit = (uint8_t)(1u << (7 - i % 8));

		p[i / 8] =
			(uint8_t)((v & 1) ? p[i / 8] | bit : p[i / 8] & ~bit);
	}
}

/* Whether bits [off, off + width) of 'a' and 'b' are equal. */
static int bits_equal(const uint8_t *a, const uint8_t *b, unsigned off,
		      unsigned width)
{
	unsigned chunk;

	if (off % 8 == 0 && width % 8 == 0)
		return !memcmp(a + off / 8, b + off / 8, width / 8);
	for (; width; off += chunk, width -= chunk) {
		chunk = width < 64 ? width : 64;
		if (sa_bits(a, off, chunk) != sa_bits(b, off, chunk))
			return 0;
	}
	return 1;
}

int sa_match(const struct sa_fields *f, uint64_t mask, const uint8_t *rec,
	     const uint8_t *req)
{
	unsigned i, off = 0;

	for (i = 0; i < f->n; off += f->width[i], i++)
		if ((mask >> i & 1) && !bits_equal(rec, req, off, f->width[i]))
			return 0;
	return 1;
}

static size_t padded(size_t size)
{
	return (size + 7) & ~(size_t)7;
}

int sa_add(struct sa_req *req, const uint8_t *rec)
{
	size_t step = padded(req->rec_size);

	if (req->len + step > req->cap) {
		size_t cap = req->cap ? 2 * req->cap : 16 * step;
		uint8_t *grown;

		while (cap < req->len + step)
			cap *= 2;
		grown = realloc(req->buf, cap);
		if (!grown) {
			req->status = SA_STATUS_NO_RESOURCES;
			return -ENOMEM;
		}
		req->buf = grown;
		req->cap = cap;
	}
	memset(req->buf + req->len, 0, step);
	memcpy(req->buf + req->len, rec, req->rec_size);
	req->len += step;
	req->nrec++;
	return 0;
}

int sa_add_if(struct sa_req *req, const struct sa_fields *f, const uint8_t *rec)
{
	if (!sa_match(f, req->comp_mask, rec, req->rec))
		return 0;
	return sa_add(req, rec);
}

int sa_lid_port(const struct sm *sm, uint16_t lid, uint32_t *node,
		unsigned *port)
{
	const struct ibemu_routes *r = sm->routes;

	if (!r || !lid || lid > r->max_lid || r->lid_node[lid] >= r->nnodes)
		return -ENOENT;
	*node = sm->by_graph[r->lid_node[lid]];
	*port = r->lid_port[lid];
	return 0;
}

/* The port GUID of 'port' of 'node' (port 0 of a switch), or 0. */
static uint64_t port_guid(const struct sm_node *node, unsigned port)
{
	if (node->ni.node_type == NODE_TYPE_SWITCH)
		return node->ni.port_guid;
	if (port == node->in_port)
		return node->ni.port_guid;
	return port <= node->ni.num_ports ? node->ports[port].guid : 0;
}

int sa_port_gid(const struct sm *sm, uint16_t lid, uint8_t gid[16])
{
	const struct sm_node *node;
	uint64_t prefix;
	uint32_t n;
	unsigned port;

	if (sa_lid_port(sm, lid, &n, &port))
		return -ENOENT;
	node = &sm->nodes[n];
	prefix =
		node->ports[port].have_pi ? node->ports[port].pi.gid_prefix : 0;
	ibemu__mad_set_be(gid, 8, prefix ? prefix : DEFAULT_GID_PREFIX);
	ibemu__mad_set_be(gid + 8, 8, port_guid(node, port));
	return 0;
}

uint16_t sa_gid_lid(const struct sm *sm, const uint8_t gid[16])
{
	uint64_t guid = ibemu__mad_get_be(gid + 8, 8);
	uint32_t n;
	unsigned port;

	if (!sm->routes || !guid)
		return 0;
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		if (node->ni.node_type == NODE_TYPE_SWITCH) {
			if (node->ni.port_guid == guid)
				return ibemu_routes_lid(sm->routes, node->graph,
							0);
			continue;
		}
		for (port = 1; port <= node->ni.num_ports; port++)
			if (port_guid(node, port) == guid)
				return ibemu_routes_lid(sm->routes, node->graph,
							port);
	}
	return 0;
}

/* IBA 13.4.8.1: ClassPortInfo of the SA (what saquery may ask first). */
static void class_port_info(struct sa_req *req)
{
	uint8_t rec[SA_CPI_LEN] = {0};

	if (req->method != IBEMU_MAD_METHOD_GET) {
		req->status = IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP;
		return;
	}
	rec[0] = IBEMU_MAD_BASE_VERSION;
	rec[1] = SA_CLASS_VERSION;
	sa_set_bits(rec, 59, 5, SA_RESP_TIME); /* after CapabilityMask2 */
	req->rec_size = SA_CPI_LEN;
	sa_add(req, rec);
}

/* Sends 'len' bytes of 'mad' back to where request 'from' came from. */
static void send_back(struct sm *sm, const struct ib_user_mad *from,
		      const uint8_t *mad, size_t len)
{
	struct ib_user_mad *out = calloc(1, sizeof(*out) + len);

	if (!out)
		return;
	memcpy(umad_get_mad(out), mad, len);
	umad_set_addr(out, be16toh(from->addr.lid), be32toh(from->addr.qpn),
		      from->addr.sl, QP1_QKEY);
	umad_set_pkey(out, from->addr.pkey_index);
	if (umad_send(sm->fd, sm->sa_agent, out, (int)len, 0, 0) < 0)
		sm->sa_dropped++;
	free(out);
}

/*
 * The answer (IBA 15.2.1.1): the request's header with the R bit (a Set
 * answered by GetResp), SM_Key 0 (C15-0.1.5), AttributeOffset the padded
 * record in 8-byte words; an error keeps the request's data.
 */
static void respond(struct sm *sm, const struct ib_user_mad *from,
		    struct sa_req *req)
{
	uint8_t one[IBEMU_MAD_LEN];
	uint8_t method = req->method == IBEMU_MAD_METHOD_SET
				 ? IBEMU_MAD_METHOD_GET_RESP
				 : (uint8_t)(req->method | 0x80);
	uint8_t *mad = one;
	size_t len = IBEMU_MAD_LEN;
	int table = req->method == SA_METHOD_GET_TABLE;

	if (!req->status && !table && req->nrec != 1)
		req->status = req->nrec ? SA_STATUS_TOO_MANY_RECORDS
					: SA_STATUS_NO_RECORDS;
	memcpy(one, req->mad, IBEMU_MAD_LEN);
	if (req->status) {
		ibemu_mad_set_status(one, req->status);
		ibemu_mad_set_method(one, method);
		memset(one + IBEMU_RMPP_HDR_OFF, 0, IBEMU_RMPP_HDR_LEN);
		ibemu_sa_set_sm_key(one, 0);
		if (table)
			ibemu_sa_set_attr_offset(one, 0);
		send_back(sm, from, one, len);
		return;
	}
	if (table) {
		len = IBEMU_SA_DATA_OFF + req->len;
		mad = malloc(len);
		if (!mad) {
			req->status = SA_STATUS_NO_RESOURCES;
			respond(sm, from, req);
			return;
		}
		memcpy(mad, req->mad, IBEMU_SA_DATA_OFF);
	}
	ibemu_mad_set_status(mad, 0);
	ibemu_mad_set_method(mad, method);
	memset(mad + IBEMU_RMPP_HDR_OFF, 0, IBEMU_RMPP_HDR_LEN);
	if (table) {
		ibemu_rmpp_set_version(mad, IBEMU_RMPP_VERSION);
		ibemu_rmpp_set_type(mad, IBEMU_RMPP_TYPE_DATA);
		ibemu_rmpp_set_flags(mad, IBEMU_RMPP_FLAG_ACTIVE);
	}
	ibemu_sa_set_sm_key(mad, 0);
	ibemu_sa_set_attr_offset(
		mad, req->nrec ? (uint16_t)(padded(req->rec_size) / 8) : 0);
	if (!table) {
		memset(mad + IBEMU_SA_DATA_OFF, 0, IBEMU_SA_DATA_LEN);
		memcpy(mad + IBEMU_SA_DATA_OFF, req->buf,
		       req->rec_size < IBEMU_SA_DATA_LEN ? req->rec_size
							 : IBEMU_SA_DATA_LEN);
	} else if (req->len) { /* an empty table has no buffer */
		memcpy(mad + IBEMU_SA_DATA_OFF, req->buf, req->len);
	}
	send_back(sm, from, mad, len);
	if (mad != one)
		free(mad);
}

/* The methods each attribute takes: Get and GetTable, Set and Delete. */
struct sa_handler {
	uint16_t attr;
	int writable; /* Set and Delete too */
	void (*fn)(struct sm *sm, struct sa_req *req);
};

static const struct sa_handler handlers[] = {
	{SA_ATTR_NODE_RECORD, 0, sa_node_records},
	{SA_ATTR_PORT_INFO_RECORD, 0, sa_port_info_records},
	{SA_ATTR_SWITCH_INFO_RECORD, 0, sa_switch_info_records},
	{SA_ATTR_SM_INFO_RECORD, 0, sa_sm_info_records},
	{SA_ATTR_LINK_RECORD, 0, sa_link_records},
	{SA_ATTR_PATH_RECORD, 0, sa_path_records},
	{SA_ATTR_MCMEMBER_RECORD, 1, sa_mcmember_records},
	{SA_ATTR_SERVICE_RECORD, 1, sa_service_records},
};

static void dispatch(struct sm *sm, struct sa_req *req)
{
	unsigned i;

	if (req->attr == SA_ATTR_CLASS_PORT_I) {
		class_port_info(req);
		return;
	}
	for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
		if (handlers[i].attr != req->attr)
			continue;
		if (!handlers[i].writable &&
		    req->method != IBEMU_MAD_METHOD_GET &&
		    req->method != SA_METHOD_GET_TABLE) {
			req->status = IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP;
			return;
		}
		handlers[i].fn(sm, req);
		return;
	}
	req->status = IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP;
}

void sm_sa_recv(struct sm *sm, const void *umad_buf, const uint8_t *mad,
		size_t len)
{
	const struct ib_user_mad *from = umad_buf;
	uint8_t copy[IBEMU_MAD_LEN] = {0};
	struct sa_req req = {0};
	uint8_t method;

	/* Too short to answer, an answer itself, or not SA: dropped. */
	if (len < IBEMU_SA_DATA_OFF ||
	    ibemu_mad_get_mgmt_class(mad) != IBEMU_MAD_CLASS_SA ||
	    ibemu_mad_get_r(mad)) {
		sm->sa_dropped++;
		return;
	}
	/* IBA 14.4.1: only the master answers; a standby stays silent. */
	if (sm->standby)
		return;
	sm->sa_requests++;
	memcpy(copy, mad, len < sizeof(copy) ? len : sizeof(copy));
	method = ibemu_mad_get_method(copy);
	req.mad = copy;
	req.method = method;
	req.attr = ibemu_mad_get_attr_id(copy);
	req.attr_mod = ibemu_mad_get_attr_mod(copy);
	req.comp_mask = ibemu_sa_get_comp_mask(copy);
	req.sm_key = ibemu_sa_get_sm_key(copy);
	req.rec = copy + IBEMU_SA_DATA_OFF;
	req.rec_len = IBEMU_SA_DATA_LEN;
	req.slid = be16toh(from->addr.lid);
	if (ibemu_mad_get_base_version(copy) != IBEMU_MAD_BASE_VERSION ||
	    ibemu_mad_get_class_version(copy) != SA_CLASS_VERSION)
		req.status = IBEMU_MAD_STATUS_BAD_VERSION;
	else if (method != IBEMU_MAD_METHOD_GET &&
		 method != IBEMU_MAD_METHOD_SET &&
		 method != SA_METHOD_GET_TABLE && method != SA_METHOD_DELETE)
		req.status = IBEMU_MAD_STATUS_METHOD_UNSUPP;
	else if (sm->sweeping || !sm->routes)
		req.status = IBEMU_MAD_STATUS_BUSY; /* its subnet is changing */
	else
		dispatch(sm, &req);
	if (sm->verbose)
		printf("SA method 0x%02x attr 0x%04x mask 0x%llx from LID %u: "
		       "%u records, status 0x%04x\n",
		       method, req.attr, (unsigned long long)req.comp_mask,
		       req.slid, req.nrec, req.status);
	respond(sm, from, &req);
	free(req.buf);
}

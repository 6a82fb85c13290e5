// SPDX-License-Identifier: MIT
/*
 * What an attached process sees of its HCA, as a real host reads it from
 * sysfs (/sys/class/infiniband/DEV): GUIDs from the topology, and per port
 * what Get(PortInfo) and the P_KeyTable of the node's SMA say (agent/), with
 * the rate sysfs prints. The CA_QUERY and PORT_QUERY replies are built
 * here.
 */
#include <errno.h>
#include <string.h>

#include "agent.h"
#include "sess.h"

/*
 * Nominal lane rate in tenths of Gb/s, as the kernel's sysfs 'rate' prints
 * it ("100 Gb/sec (4X EDR)"): the marketing figure, not the data rate.
 */
static const uint16_t lane_rate_tenths[IBEMU_SPEED_COUNT] = {
	[IBEMU_SPEED_SDR] = 25,	  [IBEMU_SPEED_DDR] = 50,
	[IBEMU_SPEED_QDR] = 100,  [IBEMU_SPEED_FDR10] = 100,
	[IBEMU_SPEED_FDR] = 140,  [IBEMU_SPEED_EDR] = 250,
	[IBEMU_SPEED_HDR] = 500,  [IBEMU_SPEED_NDR] = 1000,
	[IBEMU_SPEED_XDR] = 2000,
};

/* Gb/s of port 'p' of 'n', truncated as libibumad reads "2.5" as 2. */
static uint32_t port_rate(const struct ibemu_topo *t,
			  const struct ibemu_topo_node *n, unsigned p)
{
	unsigned lanes = t->defaults.width;
	enum ibemu_speed speed = t->defaults.speed;
	uint32_t link = n->ports[p].link;

	if (link != IBEMU_NONE) {
		lanes = t->links[link].width;
		speed = t->links[link].speed;
	}
	return lanes * lane_rate_tenths[speed] / 10;
}

static void port_fill(struct ibemu_sess_server *s, uint32_t node, unsigned p,
		      struct ibemu_sess_port *out)
{
	const struct ibemu_topo *t = s->d->topo;
	const struct ibemu_topo_node *n = &t->nodes[node];
	struct ibemu_engine *e = s->d->engine;
	uint32_t idx = ibemu_engine_port_index(e, node, p);
	struct ibemu_mad_port_info pi;
	unsigned npkeys;

	memset(out, 0, sizeof(*out));
	memset(&pi, 0, sizeof(pi));
	/* A port the SMA cannot describe reads as Down, like sysfs would. */
	if (ibemu_agent_port_info(e, idx, &pi)) {
		pi.port_state = IBEMU_PORT_DOWN;
		pi.port_phys_state = ibemu_engine_phys_state(e, idx);
	}
	out->port_guid = n->ports[p].guid;
	out->gid_prefix = pi.gid_prefix;
	out->capability_mask = pi.capability_mask;
	out->rate = port_rate(t, n, p);
	out->lid = pi.lid;
	out->sm_lid = pi.master_sm_lid;
	out->port_num = (uint8_t)p;
	out->lmc = pi.lmc;
	out->sm_sl = pi.master_sm_sl;
	out->state = pi.port_state;
	out->phys_state = pi.port_phys_state;
	npkeys = ibemu_agent_pkeys(e, idx, out->pkeys, IBEMU_SESS_PKEYS);
	out->npkeys = (uint8_t)(npkeys < IBEMU_SESS_PKEYS ? npkeys
							  : IBEMU_SESS_PKEYS);
}

uint32_t ibemu__sess_hca_gen(struct ibemu_sess_server *s, uint32_t node)
{
	static const uint32_t gen[IBEMU_HCA_KIND_COUNT] = {
		[IBEMU_HCA_CX4] = 4,
		[IBEMU_HCA_CX5] = 5,
		[IBEMU_HCA_CX6] = 6,
		[IBEMU_HCA_CX7] = 7,
	};

	return gen[ibemu_topo_hca_kind(s->d->topo, node)];
}

const struct ibemu_verbs_limits *
ibemu__sess_hca_limits(struct ibemu_sess_server *s, uint32_t node)
{
	return ibemu_verbs_limits_of(ibemu__sess_hca_gen(s, node));
}

size_t ibemu__sess_ca_fill(struct ibemu_sess_server *s, uint32_t node,
			   void *buf, size_t cap)
{
	const struct ibemu_topo_node *n = &s->d->topo->nodes[node];
	struct ibemu_sess_ca *ca = buf;
	unsigned p, nports = n->nports;

	/* umad_ca_t has room for ports 1-9; a wider HCA shows its first 9. */
	if (nports > IBEMU_SESS_MAX_PORTS)
		nports = IBEMU_SESS_MAX_PORTS;
	IBEMU_BUG_ON(cap < sizeof(*ca) + nports * sizeof(ca->ports[0]));
	memset(ca, 0, sizeof(*ca));
	snprintf(ca->host, sizeof(ca->host), "%s", n->name);
	ca->node_guid = n->guid;
	ca->system_guid = n->sysimage_guid ? n->sysimage_guid : n->guid;
	ca->node_type = IBEMU_NODE_HCA;
	ca->nports = nports;
	ca->vendor_id = n->vendor_id & 0xffffffu;
	ca->device_id = n->device_id;
	ca->hca_gen = ibemu__sess_hca_gen(s, node);
	ca->partition_cap =
		nports ? (uint16_t)ibemu_agent_pkeys(
				 s->d->engine,
				 ibemu_engine_port_index(s->d->engine, node, 1),
				 NULL, 0)
		       : 0;
	for (p = 1; p <= nports; p++)
		port_fill(s, node, p, &ca->ports[p - 1]);
	return sizeof(*ca) + nports * sizeof(ca->ports[0]);
}

int ibemu__sess_port_attr_fill(struct ibemu_sess_server *s, uint32_t node,
			       unsigned p, struct ibemu_sess_port_attr *out)
{
	const struct ibemu_topo *t = s->d->topo;
	const struct ibemu_topo_node *n = &t->nodes[node];
	struct ibemu_engine *e = s->d->engine;
	struct ibemu_mad_port_info pi;
	uint32_t idx, link;
	unsigned npkeys;

	if (p < 1 || p > n->nports)
		return -EINVAL;
	idx = ibemu_engine_port_index(e, node, p);
	memset(out, 0, sizeof(*out));
	memset(&pi, 0, sizeof(pi));
	if (ibemu_agent_port_info(e, idx, &pi)) {
		pi.port_state = IBEMU_PORT_DOWN;
		pi.port_phys_state = ibemu_engine_phys_state(e, idx);
	}
	out->port_guid = n->ports[p].guid;
	out->gid_prefix = pi.gid_prefix;
	out->capability_mask = pi.capability_mask;
	out->capability_mask2 = pi.capability_mask2;
	out->lid = pi.lid;
	out->sm_lid = pi.master_sm_lid;
	out->p_key_violations = pi.p_key_violations;
	out->q_key_violations = pi.q_key_violations;
	out->port_num = (uint8_t)p;
	out->state = pi.port_state;
	out->phys_state = pi.port_phys_state;
	out->lmc = pi.lmc;
	out->sm_sl = pi.master_sm_sl;
	out->subnet_timeout = pi.subnet_timeout;
	out->init_type_reply = pi.init_type_reply;
	out->link_width_active = pi.link_width_active;
	out->link_speed_active = pi.link_speed_active;
	out->link_speed_ext_active = pi.link_speed_ext_active;
	link = n->ports[p].link;
	out->fdr10_active =
		(link != IBEMU_NONE ? t->links[link].speed
				    : t->defaults.speed) == IBEMU_SPEED_FDR10;
	out->mtu_cap = pi.mtu_cap;
	out->neighbor_mtu = pi.neighbor_mtu;
	out->vl_cap = pi.vl_cap;
	out->guid_cap = pi.guid_cap;
	npkeys = ibemu_agent_pkeys(e, idx, out->pkeys, IBEMU_SESS_PORT_PKEYS);
	out->npkeys = (uint16_t)(npkeys < IBEMU_SESS_PORT_PKEYS
					 ? npkeys
					 : IBEMU_SESS_PORT_PKEYS);
	return 0;
}

/*
 * libibumad's choice for port 0 (rdma-core resolve_ca_port): the first
 * Active port, else the first whose link is up, else the first that is not
 * Disabled.
 */
unsigned ibemu__sess_ca_best_port(struct ibemu_sess_server *s, uint32_t node)
{
	const struct ibemu_topo_node *n = &s->d->topo->nodes[node];
	struct ibemu_engine *e = s->d->engine;
	unsigned p, up = 0, enabled = 0;
	uint32_t idx;

	for (p = 1; p <= n->nports && p <= IBEMU_SESS_MAX_PORTS; p++) {
		idx = ibemu_engine_port_index(e, node, p);
		if (ibemu_engine_port_state(e, idx) == IBEMU_PORT_ACTIVE)
			return p;
		if (!up && ibemu_engine_phys_state(e, idx) == IBEMU_PHYS_LINKUP)
			up = p;
		if (!enabled &&
		    ibemu_engine_phys_state(e, idx) != IBEMU_PHYS_DISABLED)
			enabled = p;
	}
	return up ? up : enabled;
}

uint16_t ibemu__sess_pkey(struct ibemu_sess_server *s, uint32_t port,
			  uint16_t index)
{
	uint16_t pkeys[IBEMU_SESS_PKEYS];
	unsigned n;

	n = ibemu_agent_pkeys(s->d->engine, port, pkeys, IBEMU_SESS_PKEYS);
	if (n > IBEMU_SESS_PKEYS)
		n = IBEMU_SESS_PKEYS;
	return index < n ? pkeys[index] : 0;
}

uint16_t ibemu__sess_pkey_index(struct ibemu_sess_server *s, uint32_t port,
				uint16_t pkey)
{
	uint16_t pkeys[IBEMU_SESS_PKEYS];
	unsigned i, n;

	n = ibemu_agent_pkeys(s->d->engine, port, pkeys, IBEMU_SESS_PKEYS);
	if (n > IBEMU_SESS_PKEYS)
		n = IBEMU_SESS_PKEYS;
	/* IBA 10.9.3: the low 15 bits name the partition, bit 15 the kind
	 * of membership. */
	for (i = 0; i < n; i++)
		if (pkeys[i] && (pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return (uint16_t)i;
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * PathRecords (IBA 15.2.5.16): the path between two LIDs as the SM's LFTs
 * route it, walked hop by hop from the source: MTU the least every link
 * carries, rate the slowest link's, SL from sm_path_sl(). Every path is
 * reversible (the routes join every pair both ways); one per pair (LMC 0).
 */
#include <errno.h>
#include <string.h>

#include "sa.h"

#define NODE_TYPE_SWITCH 2
#define SUBNET_TIMEOUT	 18   /* PacketLifeTime: as program.c's */
#define SEL_EXACT	 0x80 /* selector 2 in the top two bits */
#define P_KEY_DEFAULT	 0xffff

/* PathRecord ComponentMask bits (IBA 15.2.5.16, in field order). */
enum {
	PR_SERVICE_ID_MSB,
	PR_SERVICE_ID_LSB,
	PR_DGID,
	PR_SGID,
	PR_DLID,
	PR_SLID,
	PR_RAW_TRAFFIC,
	PR_RESERVED,
	PR_FLOW_LABEL,
	PR_HOP_LIMIT,
	PR_TCLASS,
	PR_REVERSIBLE,
	PR_NUMB_PATH,
	PR_P_KEY,
	PR_QOS_CLASS,
	PR_SL,
	PR_MTU_SELECTOR,
	PR_MTU,
	PR_RATE_SELECTOR,
	PR_RATE,
	PR_PLT_SELECTOR,
	PR_PLT,
};

/* Byte offsets in the record. */
#define PR_OFF_SERVICE_ID 0
#define PR_OFF_DGID	  8
#define PR_OFF_SGID	  24
#define PR_OFF_DLID	  40
#define PR_OFF_SLID	  42
#define PR_OFF_TCLASS	  48
#define PR_OFF_NUMB_PATH  49
#define PR_OFF_P_KEY	  50
#define PR_OFF_SL	  52
#define PR_OFF_MTU	  54
#define PR_OFF_RATE	  55
#define PR_OFF_PLT	  56

/*
 * PathRecord rates (IBA 15.2.5.16 Table 227, extended as OpenSM's
 * ib_types.h lists them) in tenths of Gb/s, indexed by the enumeration.
 */
static const unsigned rate_gbps10[] = {
	[2] = 25,    [3] = 100,	  [4] = 300,	[5] = 50,    [6] = 200,
	[7] = 400,   [8] = 600,	  [9] = 800,	[10] = 1200, [11] = 140,
	[12] = 560,  [13] = 1120, [14] = 1680,	[15] = 250,  [16] = 1000,
	[17] = 2000, [18] = 3000, [19] = 280,	[20] = 500,  [21] = 4000,
	[22] = 6000, [23] = 8000, [24] = 12000,
};
#define NRATES (sizeof(rate_gbps10) / sizeof(rate_gbps10[0]))

/* A port's data rate in tenths of Gb/s (IBA 14.2.5.6), 0 if unknown. */
static unsigned port_rate(const struct ibemu_mad_port_info *pi)
{
	unsigned lanes, lane;

	switch (pi->link_width_active) {
	case 1:
		lanes = 1;
		break;
	case 2:
		lanes = 4;
		break;
	case 4:
		lanes = 8;
		break;
	case 8:
		lanes = 12;
		break;
	case 16:
		lanes = 2;
		break;
	default:
		return 0;
	}
	switch (pi->link_speed_ext_active) {
	case 1:
		lane = 140;
		break;
	case 2:
		lane = 250;
		break;
	case 4:
		lane = 500;
		break;
	case 8:
		lane = 1000;
		break;
	default:
		switch (pi->link_speed_active) {
		case 1:
			lane = 25;
			break;
		case 2:
			lane = 50;
			break;
		case 4:
			lane = 100;
			break;
		default:
			return 0;
		}
	}
	return lanes * lane;
}

/* The PathRecord rate enumeration of 'gbps10', or the fastest below it. */
static uint8_t rate_enum(unsigned gbps10)
{
	unsigned i, best = 2;

	for (i = 2; i < NRATES; i++)
		if (rate_gbps10[i] <= gbps10 &&
		    rate_gbps10[i] > rate_gbps10[best])
			best = i;
	return (uint8_t)best;
}

/* The MTU a port carries: NeighborMTU as programmed, else MTUCap. */
static uint8_t port_mtu(const struct sm_port *p)
{
	return p->pi.neighbor_mtu ? p->pi.neighbor_mtu : p->pi.mtu_cap;
}

/* Takes link 'port' of node '*n' into account and moves to its peer. */
static int cross(const struct sm *sm, uint32_t *n, unsigned *port, uint8_t *mtu,
		 unsigned *rate)
{
	const struct sm_node *node = &sm->nodes[*n];
	const struct sm_port *p, *q;

	if (!*port || *port > node->ni.num_ports)
		return -ENOENT;
	p = &node->ports[*port];
	if (p->peer >= sm->nnodes)
		return -ENOENT;
	q = &sm->nodes[p->peer].ports[p->peer_port];
	if (port_mtu(p) < *mtu)
		*mtu = port_mtu(p);
	if (q->have_pi && port_mtu(q) < *mtu)
		*mtu = port_mtu(q);
	if (port_rate(&p->pi) && port_rate(&p->pi) < *rate)
		*rate = port_rate(&p->pi);
	*n = p->peer;
	*port = p->peer_port;
	return 0;
}

int sa_path_props(const struct sm *sm, uint16_t slid, uint16_t dlid,
		  uint8_t *mtu, uint8_t *rate, unsigned *hops)
{
	uint32_t n, dn;
	unsigned port, dport, h = 0, r = ~0u;
	uint8_t m = 0xf;

	if (sa_lid_port(sm, slid, &n, &port) ||
	    sa_lid_port(sm, dlid, &dn, &dport))
		return -ENOENT;
	if (n == dn && port == dport) {
		/* Loopback: the port's own link, or a switch's port 0. */
		const struct sm_port *p = &sm->nodes[n].ports[port];

		m = port_mtu(p);
		r = port_rate(&p->pi);
	} else {
		if (sm->nodes[n].ni.node_type != NODE_TYPE_SWITCH &&
		    cross(sm, &n, &port, &m, &r))
			return -ENOENT;
		while (n != dn) {
			const struct sm_node *node = &sm->nodes[n];

			if (node->ni.node_type != NODE_TYPE_SWITCH ||
			    ++h > SM_MAX_HOPS)
				return -ENOENT;
			port = sm->routes->lft[node->graph][dlid];
			if (cross(sm, &n, &port, &m, &r))
				return -ENOENT;
		}
		if (sm->nodes[n].ni.node_type != NODE_TYPE_SWITCH &&
		    port != dport)
			return -ENOENT;
	}
	*mtu = m && m != 0xf ? m : 1;
	*rate = rate_enum(r == ~0u ? 0 : r);
	*hops = h;
	return 0;
}

/* Whether 'have' satisfies 'want' under selector 'sel' (IBA 15.2.5.16). */
static int selected(uint8_t sel, uint8_t have, uint8_t want, int is_rate)
{
	unsigned h = is_rate ? rate_gbps10[have % NRATES] : have;
	unsigned w = is_rate ? rate_gbps10[want % NRATES] : want;

	switch (sel) {
	case 0:
		return h > w;
	case 1:
		return h < w;
	case 2:
		return h == w;
	default:
		return 1; /* the largest available: this one */
	}
}

/* MTU, rate or PacketLifeTime against the request's, as the mask says. */
static int field_ok(const struct sa_req *req, const uint8_t *rec,
		    unsigned sel_bit, unsigned off, int is_rate)
{
	uint8_t want = req->rec[off];

	if (!(req->comp_mask >> (sel_bit + 1) & 1))
		return 1;
	return selected((req->comp_mask >> sel_bit & 1) ? want >> 6 : 2,
			rec[off] & 0x3f, want & 0x3f, is_rate);
}

static int mask_has(const struct sa_req *req, unsigned bit)
{
	return (int)(req->comp_mask >> bit & 1);
}

/* Builds the record of 'slid' to 'dlid'; 1 if it matches the request. */
static int path_record(const struct sm *sm, const struct sa_req *req,
		       uint16_t slid, uint16_t dlid, uint8_t *rec)
{
	uint8_t mtu, rate, sl;
	unsigned hops;
	uint16_t pkey;

	if (sa_path_props(sm, slid, dlid, &mtu, &rate, &hops))
		return 0;
	sl = sm_path_sl(sm, slid, dlid);
	memset(rec, 0, SA_PATH_RECORD_LEN);
	if (mask_has(req, PR_SERVICE_ID_MSB) ||
	    mask_has(req, PR_SERVICE_ID_LSB))
		memcpy(rec + PR_OFF_SERVICE_ID, req->rec + PR_OFF_SERVICE_ID,
		       8);
	sa_port_gid(sm, dlid, rec + PR_OFF_DGID);
	sa_port_gid(sm, slid, rec + PR_OFF_SGID);
	ibemu__mad_set_be(rec + PR_OFF_DLID, 2, dlid);
	ibemu__mad_set_be(rec + PR_OFF_SLID, 2, slid);
	/* HopLimit 0: within the subnet (IBA 15.2.5.16, no router). */
	rec[PR_OFF_NUMB_PATH] = 0x80; /* Reversible, NumbPath 0 */
	ibemu__mad_set_be(rec + PR_OFF_P_KEY, 2, P_KEY_DEFAULT);
	ibemu__mad_set_be(rec + PR_OFF_SL, 2, sl & 0xf);
	rec[PR_OFF_MTU] = (uint8_t)(SEL_EXACT | mtu);
	rec[PR_OFF_RATE] = (uint8_t)(SEL_EXACT | rate);
	/* IBA 15.2.5.16: a loopback path's PacketLifeTime is 0. */
	rec[PR_OFF_PLT] =
		(uint8_t)(SEL_EXACT | (slid == dlid ? 0 : SUBNET_TIMEOUT));
	/* What the endpoints and the exact fields ask for. */
	if (mask_has(req, PR_DGID) &&
	    memcmp(rec + PR_OFF_DGID, req->rec + PR_OFF_DGID, 16))
		return 0;
	if (mask_has(req, PR_SGID) &&
	    memcmp(rec + PR_OFF_SGID, req->rec + PR_OFF_SGID, 16))
		return 0;
	pkey = (uint16_t)ibemu__mad_get_be(req->rec + PR_OFF_P_KEY, 2);
	if (mask_has(req, PR_P_KEY) && (pkey & 0x7fff) != 0x7fff)
		return 0;
	if (mask_has(req, PR_SL) && (req->rec[PR_OFF_SL + 1] & 0xf) != sl)
		return 0;
	return field_ok(req, rec, PR_MTU_SELECTOR, PR_OFF_MTU, 0) &&
	       field_ok(req, rec, PR_RATE_SELECTOR, PR_OFF_RATE, 1) &&
	       field_ok(req, rec, PR_PLT_SELECTOR, PR_OFF_PLT, 0);
}

/* The LID a GID (SGID or DGID) field of the request names; 0: none. */
static int endpoint(const struct sm *sm, const struct sa_req *req,
		    unsigned lid_bit, unsigned lid_off, unsigned gid_bit,
		    unsigned gid_off, uint16_t *lid)
{
	*lid = 0;
	if (mask_has(req, lid_bit))
		*lid = (uint16_t)ibemu__mad_get_be(req->rec + lid_off, 2);
	else if (mask_has(req, gid_bit) &&
		 !(*lid = sa_gid_lid(sm, req->rec + gid_off)))
		return -ENOENT;
	return 0;
}

void sa_path_records(struct sm *sm, struct sa_req *req)
{
	uint8_t rec[SA_PATH_RECORD_LEN];
	uint16_t s, d, s0, s1, d0, d1, max = sm->routes->max_lid;

	req->rec_size = SA_PATH_RECORD_LEN;
	if (endpoint(sm, req, PR_SLID, PR_OFF_SLID, PR_SGID, PR_OFF_SGID,
		     &s0) ||
	    endpoint(sm, req, PR_DLID, PR_OFF_DLID, PR_DGID, PR_OFF_DGID,
		     &d0)) {
		req->status = SA_STATUS_INVALID_GID;
		return;
	}
	s1 = s0 ? s0 : max;
	d1 = d0 ? d0 : max;
	for (s = s0 ? s0 : 1; s && s <= s1; s++)
		for (d = d0 ? d0 : 1; d && d <= d1; d++)
			if (path_record(sm, req, s, d, rec) && sa_add(req, rec))
				return;
}

// SPDX-License-Identifier: MIT
/*
 * Multicast groups (IBA 15.2.5.17 MCMemberRecord): a join (Set) creates a
 * group or adds a port to it, a leave (Delete) takes it out, Get and
 * GetTable query them. On every change the group's spanning tree over the
 * switches that join its members is written into the switches'
 * MulticastForwardingTables (IBA 14.2.5.12) by directed-route SMPs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa.h"

#define NODE_TYPE_SWITCH 2
#define MLID_FIRST	 0xc000 /* IBA 4.1.3: multicast LIDs */
#define SEL_EXACT	 0x80
#define MFT_PORTS	 16 /* ports per MFT position */

struct sm_mcmember {
	uint8_t gid[16];
	uint8_t join_state; /* IBA 15.2.5.17: Full, Non, SendOnlyNon, ... */
	uint8_t proxy;
};

struct sm_mcgroup {
	uint8_t mgid[16];
	uint16_t mlid;
	uint32_t qkey;
	uint16_t pkey;
	uint8_t mtu, rate, tclass, sl, hop, life;
	uint32_t flow;
	struct sm_mcmember *members;
	unsigned nmembers;
};

/* MCMemberRecord ComponentMask bits (in field order) and offsets. */
enum {
	MC_MGID,
	MC_PORT_GID,
	MC_QKEY,
	MC_MLID,
	MC_MTU_SEL,
	MC_MTU,
	MC_TCLASS,
	MC_PKEY,
	MC_RATE_SEL,
	MC_RATE,
	MC_LIFE_SEL,
	MC_LIFE,
	MC_SL,
	MC_FLOW,
	MC_HOP,
	MC_SCOPE,
	MC_JOIN_STATE,
	MC_PROXY,
};
static const uint16_t mc_widths[] = {128, 128, 32, 16, 2,  6, 8, 16, 2,
				     6,	  2,   6,  4,  20, 8, 4, 4,  1};
static const struct sa_fields mc_fields = {mc_widths, 18};
/* The fields of the group, not of one member. */
#define MC_GROUP_MASK                                      \
	(~((1ull << MC_PORT_GID) | (1ull << MC_SCOPE) |    \
	   (1ull << MC_JOIN_STATE) | (1ull << MC_PROXY)) & \
	 ((1ull << 18) - 1))

#define MC_OFF_PORT_GID 16
#define MC_OFF_QKEY	32
#define MC_OFF_MLID	36
#define MC_OFF_MTU	38
#define MC_OFF_TCLASS	39
#define MC_OFF_PKEY	40
#define MC_OFF_RATE	42
#define MC_OFF_LIFE	43
#define MC_OFF_SFH	44 /* SL 4, FlowLabel 20, HopLimit 8 */
#define MC_OFF_STATE	48 /* Scope 4, JoinState 4 */
#define MC_OFF_PROXY	49

static void mc_record(const struct sm_mcgroup *g, const uint8_t *gid,
		      uint8_t join_state, uint8_t proxy, uint8_t *rec)
{
	memset(rec, 0, SA_MCMEMBER_RECORD_LEN);
	memcpy(rec, g->mgid, 16);
	if (gid)
		memcpy(rec + MC_OFF_PORT_GID, gid, 16);
	ibemu__mad_set_be(rec + MC_OFF_QKEY, 4, g->qkey);
	ibemu__mad_set_be(rec + MC_OFF_MLID, 2, g->mlid);
	rec[MC_OFF_MTU] = (uint8_t)(SEL_EXACT | g->mtu);
	rec[MC_OFF_TCLASS] = g->tclass;
	ibemu__mad_set_be(rec + MC_OFF_PKEY, 2, g->pkey);
	rec[MC_OFF_RATE] = (uint8_t)(SEL_EXACT | g->rate);
	rec[MC_OFF_LIFE] = (uint8_t)(SEL_EXACT | g->life);
	ibemu__mad_set_be(rec + MC_OFF_SFH, 4,
			  (uint32_t)g->sl << 28 | (g->flow & 0xfffff) << 8 |
				  g->hop);
	/* IBA 4.1.1: the scope is the low nibble of the MGID's byte 1. */
	rec[MC_OFF_STATE] =
		(uint8_t)((g->mgid[1] & 0xf) << 4 | (join_state & 0xf));
	rec[MC_OFF_PROXY] = (uint8_t)(proxy ? 0x80 : 0);
}

static struct sm_mcgroup *group_find(struct sm *sm, const uint8_t *mgid)
{
	uint32_t i;

	for (i = 0; i < sm->nmcgroups; i++)
		if (!memcmp(sm->mcgroups[i].mgid, mgid, 16))
			return &sm->mcgroups[i];
	return NULL;
}

static struct sm_mcmember *member_find(struct sm_mcgroup *g, const uint8_t *gid)
{
	unsigned i;

	for (i = 0; i < g->nmembers; i++)
		if (!memcmp(g->members[i].gid, gid, 16))
			return &g->members[i];
	return NULL;
}

/* --- MFTs ----------------------------------------------------------- */

/* Set the bit of 'port' in the masks of switch node 'n' (per port). */
static void mask_port(uint8_t *masks, const struct sm *sm, uint32_t n,
		      unsigned port)
{
	(void)sm;
	masks[(size_t)n * 256 + port] = 1;
}

/*
 * The ports of every switch that group 'g' floods: a breadth-first tree
 * over the switches from the switch of its first member, pruned to the
 * branches that lead to a member; each switch sends on its tree links and
 * to its member HCAs (a packet never goes back the port it came in by).
 */
static int group_tree(const struct sm *sm, const struct sm_mcgroup *g,
		      uint8_t *masks)
{
	uint32_t *parent, *queue, *order, head = 0, tail = 0, n, i;
	uint8_t *parent_port, *needed;
	unsigned port, k;
	int ret = -ENOMEM;

	parent = malloc(sm->nnodes * sizeof(*parent));
	queue = malloc(sm->nnodes * sizeof(*queue));
	parent_port = calloc(sm->nnodes, 1);
	needed = calloc(sm->nnodes, 1);
	order = queue;
	if (!parent || !queue || !parent_port || !needed)
		goto out;
	for (n = 0; n < sm->nnodes; n++)
		parent[n] = UINT32_MAX;
	/* The switches the members hang on (or are). */
	for (k = 0; k < g->nmembers; k++) {
		uint16_t lid = sa_gid_lid(sm, g->members[k].gid);
		uint32_t mn;
		const struct sm_port *p;

		if (sa_lid_port(sm, lid, &mn, &port))
			continue;
		if (sm->nodes[mn].ni.node_type == NODE_TYPE_SWITCH) {
			needed[mn] = 1;
			mask_port(masks, sm, mn, 0);
			continue;
		}
		p = &sm->nodes[mn].ports[port];
		if (p->peer >= sm->nnodes)
			continue;
		needed[p->peer] = 1;
		mask_port(masks, sm, p->peer, p->peer_port);
	}
	for (n = 0; n < sm->nnodes && !needed[n]; n++)
		;
	if (n == sm->nnodes) {
		ret = 0;
		goto out;
	}
	parent[n] = n;
	queue[tail++] = n;
	while (head < tail) {
		const struct sm_node *node = &sm->nodes[queue[head++]];
		uint32_t from = queue[head - 1];

		for (port = 1; port <= node->ni.num_ports; port++) {
			const struct sm_port *p = &node->ports[port];

			if (p->peer >= sm->nnodes ||
			    sm->nodes[p->peer].ni.node_type !=
				    NODE_TYPE_SWITCH ||
			    parent[p->peer] != UINT32_MAX ||
			    p->pi.port_state != 4 /* Active */)
				continue;
			parent[p->peer] = from;
			parent_port[p->peer] = p->peer_port;
			queue[tail++] = p->peer;
		}
	}
	/* From the leaves up: a switch on a member's way keeps its link. */
	for (i = tail; i-- > 1;) {
		uint32_t s = order[i], up = parent[s];
		const struct sm_port *p;

		if (!needed[s])
			continue;
		needed[up] = 1;
		p = &sm->nodes[s].ports[parent_port[s]];
		mask_port(masks, sm, s, parent_port[s]);
		mask_port(masks, sm, up, p->peer_port);
	}
	ret = 0;
out:
	free(parent);
	free(queue);
	free(parent_port);
	free(needed);
	return ret;
}

static void on_mft_set(struct sm *sm, int status,
		       const struct ibemu_mad_smp *smp, void *arg,
		       uint64_t arg2)
{
	(void)arg;
	(void)arg2;
	if (status || smp->hdr.status)
		sm->errors++;
}

/* Writes MFT block 'block' (32 MLIDs) of every switch, every position. */
static void program_block(struct sm *sm, unsigned block)
{
	size_t per_entry = (size_t)sm->nnodes * 256;
	uint8_t *masks = calloc(IBEMU_MAD_MFT_BLOCK, per_entry);
	struct ibemu_mad_mft mft;
	uint8_t data[IBEMU_SMP_DATA_LEN];
	unsigned e, pos, bit;
	uint32_t i, n;

	if (!masks) {
		sm->errors++;
		return;
	}
	for (i = 0; i < sm->nmcgroups; i++) {
		const struct sm_mcgroup *g = &sm->mcgroups[i];

		if ((unsigned)(g->mlid - MLID_FIRST) / IBEMU_MAD_MFT_BLOCK !=
		    block)
			continue;
		e = (g->mlid - MLID_FIRST) % IBEMU_MAD_MFT_BLOCK;
		if (group_tree(sm, g, masks + e * per_entry))
			sm->errors++;
	}
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		if (node->ni.node_type != NODE_TYPE_SWITCH)
			continue;
		for (pos = 0; pos * MFT_PORTS <= node->ni.num_ports; pos++) {
			memset(&mft, 0, sizeof(mft));
			for (e = 0; e < IBEMU_MAD_MFT_BLOCK; e++)
				for (bit = 0; bit < MFT_PORTS; bit++)
					if (masks[e * per_entry + n * 256 +
						  pos * MFT_PORTS + bit])
						mft.port_mask[e] |=
							(uint16_t)(1u << bit);
			memset(data, 0, sizeof(data));
			if (ibemu_mad_mft_encode(&mft, data, sizeof(data)) <
				    0 ||
			    sm_smp(sm, node->path, node->hops,
				   IBEMU_MAD_METHOD_SET, IBEMU_SMP_ATTR_MFT,
				   (uint32_t)pos << 28 | block, data,
				   on_mft_set, NULL, 0))
				sm->errors++;
		}
	}
	free(masks);
}

void sm_mcast_program(struct sm *sm)
{
	uint64_t done[512 / 64] = {0}; /* blocks written: MLIDs 0xc000+ */
	uint32_t i;
	unsigned block;

	for (i = 0; i < sm->nmcgroups; i++) {
		block = (sm->mcgroups[i].mlid - MLID_FIRST) /
			IBEMU_MAD_MFT_BLOCK;
		if (done[block / 64] >> (block % 64) & 1)
			continue;
		done[block / 64] |= 1ull << (block % 64);
		program_block(sm, block);
	}
}

/* --- join, leave, query --------------------------------------------- */

/* The lowest MLID no group has, below every switch's MulticastFDBCap. */
static uint16_t free_mlid(const struct sm *sm)
{
	unsigned cap = 0x4000, mlid;
	uint32_t i, n;

	for (n = 0; n < sm->nnodes; n++)
		if (sm->nodes[n].ni.node_type == NODE_TYPE_SWITCH &&
		    sm->nodes[n].si.multicast_fdb_cap < cap)
			cap = sm->nodes[n].si.multicast_fdb_cap;
	for (mlid = MLID_FIRST; mlid < MLID_FIRST + cap; mlid++) {
		for (i = 0; i < sm->nmcgroups; i++)
			if (sm->mcgroups[i].mlid == mlid)
				break;
		if (i == sm->nmcgroups)
			return (uint16_t)mlid;
	}
	return 0;
}

/* The least MTU and rate of every active link: what every member has. */
static void subnet_mtu_rate(const struct sm *sm, uint8_t *mtu, uint8_t *rate)
{
	uint16_t lid, lo = 0;
	unsigned hops;
	uint8_t m, r;

	*mtu = 5;
	*rate = 0;
	/* The paths from the SM's port cover every link's type here. */
	for (lid = 1; lid <= sm->routes->max_lid; lid++) {
		if (sa_path_props(sm, sm->sm_lid, lid, &m, &r, &hops))
			continue;
		if (m < *mtu)
			*mtu = m;
		if (!lo || r < *rate)
			*rate = r;
		lo = lid;
	}
	if (!*rate)
		*rate = 3; /* 10 Gb/s */
}

static int mask_has(const struct sa_req *req, unsigned bit)
{
	return (int)(req->comp_mask >> bit & 1);
}

static struct sm_mcgroup *group_create(struct sm *sm, struct sa_req *req)
{
	const uint64_t needs = 1ull << MC_QKEY | 1ull << MC_PKEY |
			       1ull << MC_SL | 1ull << MC_FLOW |
			       1ull << MC_TCLASS;
	const uint8_t *r = req->rec;
	struct sm_mcgroup *grown, *g;
	uint32_t sfh;
	uint16_t mlid;
	static const uint8_t zero[16];

	/* IBA 15.2.5.17 o15-0.2.3: what a creating join must give. */
	if ((req->comp_mask & needs) != needs) {
		req->status = SA_STATUS_INSUF_COMPS;
		return NULL;
	}
	if (!(r[MC_OFF_STATE] & 1)) { /* only a FullMember creates */
		req->status = SA_STATUS_REQ_INVALID;
		return NULL;
	}
	mlid = free_mlid(sm);
	grown = realloc(sm->mcgroups, (sm->nmcgroups + 1) * sizeof(*grown));
	if (!mlid || !grown) {
		if (grown)
			sm->mcgroups = grown;
		req->status = SA_STATUS_NO_RESOURCES;
		return NULL;
	}
	sm->mcgroups = grown;
	g = &sm->mcgroups[sm->nmcgroups];
	memset(g, 0, sizeof(*g));
	if (mask_has(req, MC_MGID) && memcmp(r, zero, 16)) {
		memcpy(g->mgid, r, 16);
	} else {
		/* The SA names it (IBA 15.2.5.17.2): link-local scope. */
		g->mgid[0] = 0xff;
		g->mgid[1] = 0x12;
		g->mgid[2] = 0xa0;
		g->mgid[3] = 0x1b;
		ibemu__mad_set_be(g->mgid + 12, 2, mlid);
	}
	g->mlid = mlid;
	g->qkey = (uint32_t)ibemu__mad_get_be(r + MC_OFF_QKEY, 4);
	g->pkey = (uint16_t)ibemu__mad_get_be(r + MC_OFF_PKEY, 2);
	g->tclass = r[MC_OFF_TCLASS];
	sfh = (uint32_t)ibemu__mad_get_be(r + MC_OFF_SFH, 4);
	g->sl = (uint8_t)(sfh >> 28);
	g->flow = sfh >> 8 & 0xfffff;
	g->hop = (uint8_t)sfh;
	subnet_mtu_rate(sm, &g->mtu, &g->rate);
	/* An exact MTU or rate asked for is what the group gets, if every
	 * link carries it. */
	if (mask_has(req, MC_MTU) && (r[MC_OFF_MTU] & 0x3f) <= g->mtu &&
	    (!mask_has(req, MC_MTU_SEL) || r[MC_OFF_MTU] >> 6 == 2))
		g->mtu = r[MC_OFF_MTU] & 0x3f;
	if (mask_has(req, MC_RATE) &&
	    (!mask_has(req, MC_RATE_SEL) || r[MC_OFF_RATE] >> 6 == 2))
		g->rate = r[MC_OFF_RATE] & 0x3f;
	/* PacketLifeTime as asked, else 0 (as OpenSM gives it). */
	if (mask_has(req, MC_LIFE))
		g->life = r[MC_OFF_LIFE] & 0x3f;
	sm->nmcgroups++;
	return g;
}

static void join(struct sm *sm, struct sa_req *req)
{
	const uint8_t *r = req->rec;
	const uint8_t *gid = r + MC_OFF_PORT_GID;
	uint8_t state = r[MC_OFF_STATE] & 0xf, rec[SA_MCMEMBER_RECORD_LEN];
	struct sm_mcgroup *g = NULL;
	struct sm_mcmember *m, *grown;

	if (!mask_has(req, MC_PORT_GID) || !mask_has(req, MC_JOIN_STATE)) {
		req->status = SA_STATUS_INSUF_COMPS;
		return;
	}
	if (!state) {
		req->status = SA_STATUS_REQ_INVALID;
		return;
	}
	if (!sa_gid_lid(sm, gid)) {
		req->status = SA_STATUS_INVALID_GID;
		return;
	}
	if (mask_has(req, MC_MGID))
		g = group_find(sm, r);
	if (g && ((mask_has(req, MC_QKEY) &&
		   g->qkey != ibemu__mad_get_be(r + MC_OFF_QKEY, 4)) ||
		  (mask_has(req, MC_PKEY) &&
		   g->pkey != ibemu__mad_get_be(r + MC_OFF_PKEY, 2)))) {
		req->status = SA_STATUS_REQ_INVALID;
		return;
	}
	if (!g && !(g = group_create(sm, req)))
		return;
	m = member_find(g, gid);
	if (!m) {
		grown = realloc(g->members, (g->nmembers + 1) * sizeof(*grown));
		if (!grown) {
			req->status = SA_STATUS_NO_RESOURCES;
			return;
		}
		g->members = grown;
		m = &g->members[g->nmembers++];
		memset(m, 0, sizeof(*m));
		memcpy(m->gid, gid, 16);
		m->proxy = mask_has(req, MC_PROXY) && r[MC_OFF_PROXY] >> 7;
	}
	m->join_state |= state;
	program_block(sm, (g->mlid - MLID_FIRST) / IBEMU_MAD_MFT_BLOCK);
	req->rec_size = SA_MCMEMBER_RECORD_LEN;
	mc_record(g, gid, m->join_state, m->proxy, rec);
	sa_add(req, rec);
}

static void leave(struct sm *sm, struct sa_req *req)
{
	const uint8_t *r = req->rec;
	const uint8_t *gid = r + MC_OFF_PORT_GID;
	uint8_t state = r[MC_OFF_STATE] & 0xf, rec[SA_MCMEMBER_RECORD_LEN];
	struct sm_mcgroup *g;
	struct sm_mcmember *m;
	unsigned block;

	if (!mask_has(req, MC_MGID) || !mask_has(req, MC_PORT_GID) ||
	    !mask_has(req, MC_JOIN_STATE)) {
		req->status = SA_STATUS_INSUF_COMPS;
		return;
	}
	g = group_find(sm, r);
	m = g ? member_find(g, gid) : NULL;
	if (!m || !(m->join_state & state)) {
		req->status = SA_STATUS_REQ_INVALID;
		return;
	}
	req->rec_size = SA_MCMEMBER_RECORD_LEN;
	mc_record(g, gid, state, m->proxy, rec);
	sa_add(req, rec);
	m->join_state &= (uint8_t)~state;
	if (!m->join_state)
		*m = g->members[--g->nmembers];
	block = (g->mlid - MLID_FIRST) / IBEMU_MAD_MFT_BLOCK;
	/* The last member gone, the group is (IBA 15.2.5.17.3). */
	if (!g->nmembers) {
		free(g->members);
		*g = sm->mcgroups[--sm->nmcgroups];
	}
	program_block(sm, block);
}

/*
 * As OpenSM: a query that names a PortGID gets that member's record; a
 * trusted one (SM_Key) that does not gets every member's; an untrusted
 * one gets each group once, with no PortGID and JoinState 0.
 */
static void query(struct sm *sm, struct sa_req *req)
{
	uint8_t rec[SA_MCMEMBER_RECORD_LEN];
	uint64_t group_mask = req->comp_mask & MC_GROUP_MASK;
	uint64_t member_mask = req->comp_mask & ~MC_GROUP_MASK;
	struct sa_fields f = mc_fields;
	uint32_t i;
	unsigned k;

	req->rec_size = SA_MCMEMBER_RECORD_LEN;
	for (i = 0; i < sm->nmcgroups; i++) {
		struct sm_mcgroup *g = &sm->mcgroups[i];

		mc_record(g, NULL, 0, 0, rec);
		if (!sa_match(&f, group_mask, rec, req->rec))
			continue;
		if (!mask_has(req, MC_PORT_GID) && !req->sm_key) {
			rec[MC_OFF_STATE] = 0; /* nor the scope, as OpenSM */
			if (sa_add(req, rec))
				return;
			continue;
		}
		for (k = 0; k < g->nmembers; k++) {
			const struct sm_mcmember *m = &g->members[k];

			mc_record(g, m->gid, m->join_state, m->proxy, rec);
			if (sa_match(&f, member_mask, rec, req->rec) &&
			    sa_add(req, rec))
				return;
		}
	}
}

void sa_mcmember_records(struct sm *sm, struct sa_req *req)
{
	req->rec_size = SA_MCMEMBER_RECORD_LEN;
	switch (req->method) {
	case IBEMU_MAD_METHOD_SET:
		join(sm, req);
		break;
	case SA_METHOD_DELETE:
		leave(sm, req);
		break;
	default:
		query(sm, req);
	}
}

void sm_mcast_free(struct sm *sm)
{
	uint32_t i;

	for (i = 0; i < sm->nmcgroups; i++)
		free(sm->mcgroups[i].members);
	free(sm->mcgroups);
	sm->mcgroups = NULL;
	sm->nmcgroups = 0;
}

// SPDX-License-Identifier: MIT
/*
 * Min-hop test routes with port balancing, in the manner of OpenSM's
 * default engine: for each destination LID, a breadth-first search over
 * switch-to-switch cables gives every switch its hop count to the switch
 * the LID sits on, and each switch forwards through the least loaded of its
 * ports that lead one hop closer. fabric/README.md states the exact rule.
 */
#include <errno.h>
#include <stdlib.h>

#include "route.h"
#include "util.h"

/* One switch-to-switch cable as seen from one of its ends. */
struct sw_link {
	uint32_t peer;	   /* switch index of the far end */
	uint32_t hca_lids; /* HCA LIDs routed out of this port so far */
	uint32_t sw_lids;  /* switch LIDs routed out of this port so far */
	uint8_t port;	   /* local port */
};

/* Working state of one computation; switches are numbered 0..nsw-1. */
struct minhop {
	const struct ibemu_topo *t;
	struct ibemu_routes *r;
	uint32_t nsw;
	uint32_t *sw_node;  /* switch index -> node */
	uint32_t *sw_index; /* node -> switch index, IBEMU_NONE for an HCA */
	/* Cables of switch s: link[first[s]] .. link[first[s + 1] - 1]. */
	uint32_t *first;
	struct sw_link *link;
	uint32_t *dist;	 /* hops to the current root; IBEMU_NONE: unreachable */
	uint32_t *queue; /* the switches the root reaches, nearest first */
	uint32_t nqueue;
	/*
	 * For the current root, the cables of queue[i] that lead one hop
	 * closer, in port order: link[cand[cand_first[i]]] and on, up to
	 * cand_first[i + 1]. Computed once per root, they serve all the LIDs
	 * behind it.
	 */
	uint32_t *cand_first;
	uint32_t *cand;
};

static int is_switch(const struct ibemu_topo *t, uint32_t node)
{
	return node != IBEMU_NONE && t->nodes[node].type == IBEMU_NODE_SWITCH;
}

static void minhop_fini(struct minhop *m)
{
	free(m->cand);
	free(m->cand_first);
	free(m->queue);
	free(m->dist);
	free(m->link);
	free(m->first);
	free(m->sw_index);
	free(m->sw_node);
}

/*
 * Numbers the switches and lists each one's switch-to-switch cables in
 * port order, so that scanning them visits the lowest port first.
 */
static int minhop_init(struct minhop *m, const struct ibemu_topo *t,
		       struct ibemu_routes *r)
{
	uint32_t i, s, nlinks = 0;
	unsigned p;

	m->t = t;
	m->r = r;
	m->nsw = 0;
	m->sw_index = malloc((t->nnodes ? t->nnodes : 1) * sizeof(uint32_t));
	if (!m->sw_index)
		return -ENOMEM;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		if (n->type != IBEMU_NODE_SWITCH) {
			m->sw_index[i] = IBEMU_NONE;
			continue;
		}
		m->sw_index[i] = m->nsw++;
		for (p = 1; p <= n->nports; p++)
			nlinks += is_switch(t, n->ports[p].peer_node);
	}
	m->sw_node = malloc((m->nsw ? m->nsw : 1) * sizeof(uint32_t));
	m->first = malloc((m->nsw + 1) * sizeof(uint32_t));
	m->link = calloc(nlinks ? nlinks : 1, sizeof(*m->link));
	m->dist = malloc((m->nsw ? m->nsw : 1) * sizeof(uint32_t));
	m->queue = malloc((m->nsw ? m->nsw : 1) * sizeof(uint32_t));
	m->cand_first = malloc((m->nsw + 1) * sizeof(uint32_t));
	m->cand = malloc((nlinks ? nlinks : 1) * sizeof(uint32_t));
	if (!m->sw_node || !m->first || !m->link || !m->dist || !m->queue ||
	    !m->cand_first || !m->cand)
		return -ENOMEM;
	nlinks = 0;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		s = m->sw_index[i];
		if (s == IBEMU_NONE)
			continue;
		m->sw_node[s] = i;
		m->first[s] = nlinks;
		for (p = 1; p <= n->nports; p++) {
			uint32_t peer = n->ports[p].peer_node;

			if (!is_switch(t, peer))
				continue;
			m->link[nlinks].peer = m->sw_index[peer];
			m->link[nlinks].port = (uint8_t)p;
			nlinks++;
		}
	}
	m->first[m->nsw] = nlinks;
	return 0;
}

/*
 * Hop counts of every switch to 'root', the switches it reaches in order,
 * and the cables of each that lead one hop closer to it.
 */
static void minhop_bfs(struct minhop *m, uint32_t root)
{
	uint32_t i, s, l, n = 0;

	for (s = 0; s < m->nsw; s++)
		m->dist[s] = IBEMU_NONE;
	m->dist[root] = 0;
	m->queue[0] = root;
	m->nqueue = 1;
	for (i = 0; i < m->nqueue; i++) {
		s = m->queue[i];
		for (l = m->first[s]; l < m->first[s + 1]; l++) {
			uint32_t peer = m->link[l].peer;

			if (m->dist[peer] != IBEMU_NONE)
				continue;
			m->dist[peer] = m->dist[s] + 1;
			m->queue[m->nqueue++] = peer;
		}
	}
	for (i = 0; i < m->nqueue; i++) {
		s = m->queue[i];
		m->cand_first[i] = n;
		for (l = m->first[s]; l < m->first[s + 1]; l++)
			if (m->dist[m->link[l].peer] + 1 == m->dist[s])
				m->cand[n++] = l;
	}
	m->cand_first[m->nqueue] = n;
}

/*
 * The switch a LID is delivered by, and the port it delivers through: the
 * switch itself and port 0 for a switch's LID, the switch an HCA port is
 * cabled to and the port of that cable for an HCA's. IBEMU_NONE when no
 * switch delivers it (an HCA port cabled to nothing or to another HCA).
 */
static uint32_t minhop_root(const struct minhop *m, uint16_t lid, uint8_t *port)
{
	uint32_t node = m->r->lid_node[lid];
	const struct ibemu_topo_port *tp;

	if (m->sw_index[node] != IBEMU_NONE) {
		*port = 0;
		return m->sw_index[node];
	}
	tp = &m->t->nodes[node].ports[m->r->lid_port[lid]];
	if (!is_switch(m->t, tp->peer_node))
		return IBEMU_NONE;
	*port = tp->peer_port;
	return m->sw_index[tp->peer_node];
}

/*
 * Whether cable a carries less than cable b: fewer HCA LIDs first, as
 * OpenSM does not count switch LIDs in its port balancing (they carry
 * management traffic only); then fewer switch LIDs, so those spread too.
 */
static int less_loaded(const struct sw_link *a, const struct sw_link *b)
{
	if (a->hca_lids != b->hca_lids)
		return a->hca_lids < b->hca_lids;
	return a->sw_lids < b->sw_lids;
}

/*
 * Sets the LFT entry for 'lid' of switch queue[i] and counts the LID on
 * the port chosen.
 */
static void minhop_route(struct minhop *m, uint32_t i, uint16_t lid,
			 int to_switch)
{
	struct sw_link *best = NULL;
	uint32_t c;

	/* The search reached queue[i] through one of these cables at least. */
	IBEMU_BUG_ON(m->cand_first[i] == m->cand_first[i + 1]);
	for (c = m->cand_first[i]; c < m->cand_first[i + 1]; c++) {
		struct sw_link *l = &m->link[m->cand[c]];

		/* Strictly less: on a tie the lower port, seen first, stays. */
		if (!best || less_loaded(l, best))
			best = l;
	}
	m->r->lft[m->sw_node[m->queue[i]]][lid] = best->port;
	if (to_switch)
		best->sw_lids++;
	else
		best->hca_lids++;
}

int ibemu_routes_minhop(const struct ibemu_topo *t, struct ibemu_routes **out)
{
	struct ibemu_routes *r;
	struct minhop m = {0};
	uint32_t root, prev = IBEMU_NONE, i;
	unsigned lid;
	uint8_t port;
	int ret;

	ret = ibemu_routes_create(t, &r);
	if (ret)
		return ret;
	ret = minhop_init(&m, t, r);
	if (ret)
		goto err_init;
	/*
	 * Destinations in LID order, so the balancing, and therefore every
	 * route, depends on nothing but the topology. The hosts of a switch
	 * usually have consecutive LIDs: reuse the search while the root
	 * switch stays the same.
	 */
	for (lid = 1; lid <= r->max_lid; lid++) {
		int to_switch = is_switch(t, r->lid_node[lid]);

		root = minhop_root(&m, (uint16_t)lid, &port);
		if (root == IBEMU_NONE)
			continue;
		if (root != prev)
			minhop_bfs(&m, root);
		prev = root;
		r->lft[m.sw_node[root]][lid] = port;
		for (i = 1; i < m.nqueue; i++)
			minhop_route(&m, i, (uint16_t)lid, to_switch);
	}
	minhop_fini(&m);
	*out = r;
	return 0;

err_init:
	minhop_fini(&m);
	ibemu_routes_destroy(r);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * The channel dependency graph of a set of routes (Dally and Seitz): a
 * channel is a directed switch-to-switch cable, and a packet that holds
 * one channel while it waits for the next makes the second depend on the
 * first. Credit flow control can deadlock exactly when that graph has a
 * cycle. A VL has buffers of its own, so each VL has its own channels: a
 * path runs on the VL its SL maps to (routes.h: the SL of its layer, 0
 * for engines without layers). Only the hops routes really take count:
 * for each destination LID, the paths from every switch that has HCAs
 * (where packets enter) are followed through the LFTs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing_int.h"

struct cdg {
	const struct ibemu_graph *g;
	const struct ibemu_routes *r;
	uint32_t *chan_base; /* per node: index of its port 0's channel */
	uint32_t nchan;	     /* of one VL; VL v's are v * nchan and on */
	uint64_t *deps; /* (from << 32 | to), sorted and unique at the end */
	size_t ndeps, deps_cap;
	/* Per node, for the destination being followed: bit v, followed
	 * on VL v already. */
	uint16_t *seen;
};

static int dep_add(struct cdg *c, uint32_t from, uint32_t to)
{
	uint64_t *grown;

	if (c->ndeps == c->deps_cap) {
		c->deps_cap = c->deps_cap * 2 + 1024;
		grown = realloc(c->deps, c->deps_cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		c->deps = grown;
	}
	c->deps[c->ndeps++] = (uint64_t)from << 32 | to;
	return 0;
}

/*
 * Follows the route to 'lid' from switch 's' on, until it leaves the
 * switches or meets a switch already followed for this LID, recording
 * each pair of consecutive channels.
 */
static int follow(struct cdg *c, uint32_t s, uint16_t lid, unsigned vl)
{
	uint32_t prev = IBEMU_NONE, t, base = vl * c->nchan;
	uint16_t bit = (uint16_t)(1u << vl);
	uint8_t port;
	int ret;

	for (;;) {
		port = c->r->lft[s][lid];
		if (port == 0 || port == IBEMU_LFT_NO_ROUTE ||
		    port > c->g->nodes[s].nports)
			return 0;
		t = c->g->nodes[s].ports[port].peer_node;
		if (t == IBEMU_NONE || !ibemu__graph_is_switch(c->g, t))
			return 0;
		if (prev != IBEMU_NONE) {
			ret = dep_add(c, prev, base + c->chan_base[s] + port);
			if (ret)
				return ret;
		}
		prev = base + c->chan_base[s] + port;
		if (c->seen[t] & bit)
			break;
		c->seen[t] |= bit;
		s = t;
	}
	/* The rest of the way from 't' is recorded already; its first hop
	 * still depends on the one that brought us. */
	port = c->r->lft[t][lid];
	if (port && port != IBEMU_LFT_NO_ROUTE &&
	    port <= c->g->nodes[t].nports &&
	    c->g->nodes[t].ports[port].peer_node != IBEMU_NONE &&
	    ibemu__graph_is_switch(c->g, c->g->nodes[t].ports[port].peer_node))
		return dep_add(c, prev, base + c->chan_base[t] + port);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether the graph of 'c->deps' (sorted, unique) over 'nchan' channels
 * has a cycle. */
static int cyclic(const struct cdg *c, uint32_t nchan)
{
	size_t *first = calloc((size_t)nchan + 1, sizeof(*first));
	uint32_t *stack = malloc(((size_t)nchan + 1) * sizeof(*stack));
	size_t *next = malloc(((size_t)nchan + 1) * sizeof(*next));
	uint8_t *color =
		calloc((size_t)nchan + 1, 1); /* 0 new, 1 open, 2 done */
	uint32_t v, w, top, root;
	size_t i;
	int ret = 0;

	if (!first || !stack || !next || !color) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->ndeps; i++)
		first[(c->deps[i] >> 32) + 1]++;
	for (v = 0; v < nchan; v++)
		first[v + 1] += first[v];
	for (root = 0; root < nchan && !ret; root++) {
		if (color[root])
			continue;
		top = 0;
		stack[top++] = root;
		color[root] = 1;
		next[root] = first[root];
		while (top && !ret) {
			v = stack[top - 1];
			if (next[v] == first[v + 1]) {
				color[v] = 2;
				top--;
				continue;
			}
			w = (uint32_t)c->deps[next[v]++];
			if (color[w] == 1)
				ret = 1; /* back to a channel on the stack */
			else if (!color[w]) {
				color[w] = 1;
				next[w] = first[w];
				stack[top++] = w;
			}
		}
	}
out:
	free(first);
	free(stack);
	free(next);
	free(color);
	return ret;
}

int ibemu_routes_deadlock_free_vl(const struct ibemu_graph *g,
				  const struct ibemu_routes *r,
				  const uint8_t sl2vl[16])
{
	struct cdg c = {.g = g, .r = r};
	uint32_t n, lid;
	unsigned vl, sl;
	size_t i, k;
	int ret = 0;

	if (r->nnodes != g->nnodes)
		return -EINVAL;
	for (sl = 0; sl < 16; sl++)
		if (sl2vl[sl] > 15)
			return -EINVAL;
	c.chan_base = calloc(g->nnodes ? g->nnodes : 1, sizeof(*c.chan_base));
	c.seen = calloc(g->nnodes ? g->nnodes : 1, sizeof(*c.seen));
	if (!c.chan_base || !c.seen) {
		ret = -ENOMEM;
		goto out;
	}
	for (n = 0; n < g->nnodes; n++) {
		c.chan_base[n] = c.nchan;
		c.nchan += g->nodes[n].nports + 1u;
	}
	for (lid = 1; lid <= r->max_lid && !ret; lid++) {
		if (r->lid_node[lid] == IBEMU_NONE)
			continue;
		memset(c.seen, 0, g->nnodes * sizeof(*c.seen));
		for (n = 0; n < g->nnodes && !ret; n++) {
			if (!ibemu__graph_is_switch(g, n) ||
			    !ibemu__graph_has_hca(g, n))
				continue;
			/* The SL of the packets that enter here for 'lid'. */
			sl = ibemu_routes_sl(r, r->port_lid[r->port_base[n]],
					     (uint16_t)lid);
			vl = sl2vl[sl & 15];
			if (c.seen[n] & (1u << vl))
				continue;
			c.seen[n] |= (uint16_t)(1u << vl);
			ret = follow(&c, n, (uint16_t)lid, vl);
		}
	}
	if (ret)
		goto out;
	if (c.ndeps)
		qsort(c.deps, c.ndeps, sizeof(*c.deps), cmp_u64);
	for (i = 0, k = 0; i < c.ndeps; i++)
		if (!k || c.deps[i] != c.deps[k - 1])
			c.deps[k++] = c.deps[i];
	c.ndeps = k;
	ret = cyclic(&c, 16 * c.nchan);
	ret = ret < 0 ? ret : !ret;
out:
	free(c.chan_base);
	free(c.seen);
	free(c.deps);
	return ret;
}

int ibemu_routes_deadlock_free(const struct ibemu_graph *g,
			       const struct ibemu_routes *r)
{
	static const uint8_t identity[16] = {0, 1, 2,  3,  4,  5,  6,  7,
					     8, 9, 10, 11, 12, 13, 14, 15};

	return ibemu_routes_deadlock_free_vl(g, r, identity);
}

// SPDX-License-Identifier: MIT
/*
 * Up/down routes (Autonet): every cable gets a direction from a
 * breadth-first ranking of the switches, and no route turns from a down
 * move to an up move. The channel dependency graph is then acyclic, so
 * routes on one VL cannot deadlock on credits on any topology (tori and
 * dragonflies included). The port choice is min-hop's (sw_graph.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "routing_int.h"

/*
 * The engine's context, switches as numbered by the switch graph: the
 * ranking, which depends on the graph alone and is made once in create,
 * and the scratch of a build.
 */
struct updown {
	struct ibemu__sw_graph g;
	/*
	 * Island k (switches joined by cables) is ord[isl_first[k]] up to
	 * isl_first[k + 1], sorted by (rank, switch index): its root first.
	 * A move from a to b is up exactly when pos[b] < pos[a].
	 */
	uint32_t nisl;
	uint32_t *isl_first;
	uint32_t *isl_of; /* switch -> island */
	uint32_t *ord;
	uint32_t *pos; /* switch -> its place in ord */
	/* Scratch of the searches: hops, and the switches found in order. */
	uint32_t *hops;
	uint32_t *queue;
	/*
	 * For the current destination switch: down[s], the fewest hops from
	 * s to it with down moves only (IBEMU_NONE: there is no such path),
	 * and dist[s], the hops of the route from s: down[s] if there is a
	 * path down, else one more than the least dist[] of the switches
	 * one up move away.
	 */
	uint32_t *down;
	uint32_t *dist;
	/*
	 * The cables switch ord[i] may take towards the current destination,
	 * in port order: g.link[cand[cand_first[i]]] and on, up to
	 * cand_first[i + 1]; computed once, they serve all its LIDs.
	 */
	uint32_t *cand_first;
	uint32_t *cand;
};

static void updown_destroy(void *ctx)
{
	struct updown *u = ctx;

	free(u->cand);
	free(u->cand_first);
	free(u->dist);
	free(u->down);
	free(u->queue);
	free(u->hops);
	free(u->pos);
	free(u->ord);
	free(u->isl_of);
	free(u->isl_first);
	ibemu__sw_graph_fini(&u->g);
	free(u);
}

/*
 * Breadth-first search from 'from' into queue[]; hops[] of what it finds.
 * Gives up, returning IBEMU_NONE, as soon as a switch lies more than
 * 'limit' hops away; otherwise returns the greatest hop count found. Leaves
 * hops[] of the switches in queue[0..*nfound) set for the caller to read
 * and to reset.
 */
static uint32_t updown_bfs(struct updown *u, uint32_t from, uint32_t limit,
			   uint32_t *nfound)
{
	const struct ibemu__sw_graph *g = &u->g;
	uint32_t i, l, n = 1, far = 0;

	u->hops[from] = 0;
	u->queue[0] = from;
	for (i = 0; i < n; i++) {
		uint32_t s = u->queue[i];

		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			uint32_t peer = g->link[l].peer;

			if (u->hops[peer] != IBEMU_NONE)
				continue;
			u->hops[peer] = u->hops[s] + 1;
			u->queue[n++] = peer;
			far = u->hops[peer];
			if (far > limit) {
				*nfound = n;
				return IBEMU_NONE;
			}
		}
	}
	*nfound = n;
	return far;
}

static void updown_reset(struct updown *u, uint32_t nfound)
{
	uint32_t i;

	for (i = 0; i < nfound; i++)
		u->hops[u->queue[i]] = IBEMU_NONE;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Ranks the island whose switches are ord[f..f + size): its root is the
 * switch whose farthest switch is nearest (the lowest index on a tie); a
 * switch's rank is its hop count from the root. Then sorts the island by
 * (rank, index).
 */
static void updown_rank_island(struct updown *u, uint32_t f, uint32_t size)
{
	uint32_t i, j, n, root = IBEMU_NONE, best = IBEMU_NONE;

	/*
	 * One search per switch, O(switches x cables) in all like the
	 * routing itself; each stops once it goes farther than the best.
	 */
	for (i = f; i < f + size; i++) {
		uint32_t s = u->ord[i];
		uint32_t far = updown_bfs(u, s, best, &n);

		updown_reset(u, n);
		if (far == IBEMU_NONE)
			continue;
		if (far < best || (far == best && s < root)) {
			best = far;
			root = s;
		}
	}
	updown_bfs(u, root, IBEMU_NONE, &n);
	IBEMU_BUG_ON(n != size);
	for (i = 0; i < n; i = j) {
		uint32_t rank = u->hops[u->queue[i]];

		j = i + 1;
		while (j < n && u->hops[u->queue[j]] == rank)
			j++;
		qsort(u->queue + i, j - i, sizeof(uint32_t), cmp_u32);
	}
	for (i = 0; i < n; i++) {
		u->ord[f + i] = u->queue[i];
		u->pos[u->queue[i]] = f + i;
	}
	updown_reset(u, n);
}

/* Finds the islands, ranks each and orders its switches. */
static void updown_rank(struct updown *u)
{
	const struct ibemu__sw_graph *g = &u->g;
	uint32_t s, i, n, f = 0;

	for (s = 0; s < g->nsw; s++)
		u->isl_of[s] = IBEMU_NONE;
	u->nisl = 0;
	for (s = 0; s < g->nsw; s++) {
		if (u->isl_of[s] != IBEMU_NONE)
			continue;
		updown_bfs(u, s, IBEMU_NONE, &n);
		for (i = 0; i < n; i++) {
			u->ord[f + i] = u->queue[i];
			u->isl_of[u->queue[i]] = u->nisl;
		}
		updown_reset(u, n);
		u->isl_first[u->nisl++] = f;
		f += n;
	}
	u->isl_first[u->nisl] = f;
	for (i = 0; i < u->nisl; i++)
		updown_rank_island(u, u->isl_first[i],
				   u->isl_first[i + 1] - u->isl_first[i]);
}

/*
 * Whether switch s may forward through a cable to 'peer', once down[] and
 * dist[] are known. A switch with a path of down moves takes it, whether
 * the packet came to it up or down: that keeps every route up*down*.
 */
static int takes(const struct updown *u, uint32_t s, uint32_t peer)
{
	if (u->down[s] != IBEMU_NONE)
		return u->pos[peer] > u->pos[s] &&
		       u->down[peer] != IBEMU_NONE &&
		       u->down[peer] + 1 == u->down[s];
	return u->pos[peer] < u->pos[s] && u->dist[peer] + 1 == u->dist[s];
}

/*
 * For destination switch 'dst': the hop counts down[] and dist[] over its
 * island, and the cables each switch of the island may take.
 */
static void updown_search(struct updown *u, uint32_t dst)
{
	const struct ibemu__sw_graph *g = &u->g;
	uint32_t k = u->isl_of[dst], f = u->isl_first[k];
	uint32_t end = u->isl_first[k + 1], i, l, n = 0;

	/*
	 * A down move goes to a later switch of ord[], so paths of down
	 * moves only are found by going through ord[] backwards...
	 */
	for (i = end; i-- > f;) {
		uint32_t s = u->ord[i];

		u->down[s] = s == dst ? 0 : IBEMU_NONE;
		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			uint32_t peer = g->link[l].peer;

			if (u->pos[peer] > i && u->down[peer] != IBEMU_NONE &&
			    u->down[peer] + 1 < u->down[s])
				u->down[s] = u->down[peer] + 1;
		}
	}
	/* ... and up moves, to earlier switches, by going forwards. */
	for (i = f; i < end; i++) {
		uint32_t s = u->ord[i];

		u->dist[s] = u->down[s];
		if (u->down[s] != IBEMU_NONE)
			continue;
		for (l = g->first[s]; l < g->first[s + 1]; l++) {
			uint32_t peer = g->link[l].peer;

			if (u->pos[peer] < i && u->dist[peer] + 1 < u->dist[s])
				u->dist[s] = u->dist[peer] + 1;
		}
		/*
		 * The root has a path down to every switch of its island,
		 * and every other switch a neighbour one rank nearer the root.
		 */
		IBEMU_BUG_ON(u->dist[s] == IBEMU_NONE);
	}
	for (i = f; i < end; i++) {
		uint32_t s = u->ord[i];

		u->cand_first[i] = n;
		if (s == dst)
			continue;
		for (l = g->first[s]; l < g->first[s + 1]; l++)
			if (takes(u, s, g->link[l].peer))
				u->cand[n++] = l;
	}
	u->cand_first[end] = n;
}

static int updown_create(const struct ibemu_graph *graph, void **ctx)
{
	struct updown *u;
	size_t n;
	int ret;

	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	ret = ibemu__sw_graph_init(&u->g, graph);
	if (ret)
		goto err_alloc;
	n = u->g.nsw ? u->g.nsw : 1;
	u->isl_first = malloc((n + 1) * sizeof(uint32_t));
	u->isl_of = malloc(n * sizeof(uint32_t));
	u->ord = malloc(n * sizeof(uint32_t));
	u->pos = malloc(n * sizeof(uint32_t));
	u->hops = malloc(n * sizeof(uint32_t));
	u->queue = malloc(n * sizeof(uint32_t));
	u->down = malloc(n * sizeof(uint32_t));
	u->dist = malloc(n * sizeof(uint32_t));
	u->cand_first = malloc((n + 1) * sizeof(uint32_t));
	u->cand = malloc((u->g.nlinks ? u->g.nlinks : 1) * sizeof(uint32_t));
	if (!u->isl_first || !u->isl_of || !u->ord || !u->pos || !u->hops ||
	    !u->queue || !u->down || !u->dist || !u->cand_first || !u->cand) {
		ret = -ENOMEM;
		goto err_alloc;
	}
	for (n = 0; n < u->g.nsw; n++)
		u->hops[n] = IBEMU_NONE;
	updown_rank(u);
	*ctx = u;
	return 0;

err_alloc:
	updown_destroy(u);
	return ret;
}

/*
 * Routes the LIDs of 'run' at every switch of the island of 'dst' but
 * 'dst' (which delivers them); the run is empty after.
 */
static void updown_route_run(struct updown *u, uint32_t dst,
			     struct ibemu__sw_run *run)
{
	uint32_t i, f, end;

	if (!run->n)
		return;
	f = u->isl_first[u->isl_of[dst]];
	end = u->isl_first[u->isl_of[dst] + 1];
	for (i = f; i < end; i++)
		if (u->ord[i] != dst)
			ibemu__sw_graph_route_run(&u->g, u->ord[i], run,
						  u->cand + u->cand_first[i],
						  u->cand_first[i + 1] -
							  u->cand_first[i]);
	run->n = 0;
}

static int updown_build(void *ctx, struct ibemu_routes *r)
{
	struct updown *u = ctx;
	struct ibemu__sw_run run = {.n = 0};
	uint32_t dst, prev = IBEMU_NONE;
	unsigned lid;
	uint8_t port;
	int ret;

	ret = ibemu__sw_graph_start(&u->g, r);
	if (ret)
		return ret;
	/* In LID order, reusing the search while the switch stays, a run of
	 * LIDs routed at once: as min-hop. */
	for (lid = 1; lid <= r->max_lid; lid++) {
		if (r->lid_node[lid] == IBEMU_NONE)
			continue; /* a LID nobody has */
		dst = ibemu__sw_graph_dest(&u->g, (uint16_t)lid, &port);
		if (dst == IBEMU_NONE)
			continue;
		if (dst != prev || run.n == IBEMU__SW_RUN_MAX)
			updown_route_run(u, prev, &run);
		if (dst != prev)
			updown_search(u, dst);
		prev = dst;
		r->lft[u->g.sw_node[dst]][lid] = port;
		run.lid[run.n] = (uint16_t)lid;
		run.to_switch[run.n++] = (uint8_t)ibemu__graph_is_switch(
			u->g.g, r->lid_node[lid]);
	}
	updown_route_run(u, prev, &run);
	return 0;
}

const struct ibemu_routing_engine_ops ibemu__routing_updown = {
	.name = "updown",
	.help = "up/down (Autonet): deadlock-free on any topology, even on "
		"one VL",
	.create = updown_create,
	.build = updown_build,
	.destroy = updown_destroy,
};

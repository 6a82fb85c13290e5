// SPDX-License-Identifier: MIT
/*
 * Fat-tree routes (in the manner of OpenSM's ftree, by destination
 * modulo, "D-mod-K"): the switches with HCAs are the leaves, rank 0, and
 * every other switch is ranked by its distance to them. A fat tree has
 * cables between adjacent ranks only. For the i-th HCA port in LID order
 * (a leaf's HCAs are consecutive), a switch below it or beside it sends up
 * through up-port (i / K) mod k, k its up-ports and K the product of the
 * up-port counts of the ranks below; the switches above its leaf send
 * down towards it, spreading parallel cables by i. Consecutive
 * destinations thus leave a leaf on different up-ports at every rank, so
 * a shift permutation of a full fat tree takes each cable once. A graph
 * that is not a fat tree (a cable within a rank: a torus, two joined
 * leaves) is routed min-hop instead, as OpenSM's ftree falls back; switch
 * LIDs always are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing_int.h"

struct ftree {
	const struct ibemu_graph *graph;
	struct ibemu__sw_graph g;
	uint32_t *rank; /* per switch; IBEMU_NONE: no leaf below */
	uint32_t *nup;	/* per switch: cables to the rank above */
	uint64_t *div;	/* per rank: K, product of up counts below */
	uint32_t nranks;
	uint32_t *mark; /* per switch: the destination it is above */
	uint32_t *queue;
	int is_tree;
	void *fallback; /* min-hop's context, for the rest */
};

static void ftree_destroy(void *ctx)
{
	struct ftree *f = ctx;

	if (f->fallback)
		ibemu__routing_minhop.destroy(f->fallback);
	free(f->rank);
	free(f->nup);
	free(f->div);
	free(f->mark);
	free(f->queue);
	ibemu__sw_graph_fini(&f->g);
	free(f);
}

/* Ranks the switches from the leaves up; 1 if the graph is a fat tree. */
static int rank_switches(struct ftree *f)
{
	uint32_t head = 0, tail = 0, s, l, up, nsw = f->g.nsw;
	const struct ibemu__sw_link *k;

	for (s = 0; s < nsw; s++) {
		f->rank[s] = IBEMU_NONE;
		if (ibemu__graph_has_hca(f->graph, f->g.sw_node[s])) {
			f->rank[s] = 0;
			f->queue[tail++] = s;
		}
	}
	while (head < tail) {
		s = f->queue[head++];
		for (l = f->g.first[s]; l < f->g.first[s + 1]; l++) {
			k = &f->g.link[l];
			if (f->rank[k->peer] == IBEMU_NONE) {
				f->rank[k->peer] = f->rank[s] + 1;
				f->queue[tail++] = k->peer;
			}
		}
	}
	f->nranks = 0;
	for (s = 0; s < nsw; s++) {
		if (f->rank[s] == IBEMU_NONE)
			continue;
		if (f->rank[s] + 1 > f->nranks)
			f->nranks = f->rank[s] + 1;
		for (up = 0, l = f->g.first[s]; l < f->g.first[s + 1]; l++) {
			k = &f->g.link[l];
			if (f->rank[k->peer] == f->rank[s])
				return 0; /* a cable within a rank */
			up += f->rank[k->peer] == f->rank[s] + 1;
		}
		f->nup[s] = up;
	}
	return f->nranks > 1;
}

static int ftree_create(const struct ibemu_graph *graph, void **ctx)
{
	struct ftree *f = calloc(1, sizeof(*f));
	uint32_t nsw, s, r;
	int ret;

	if (!f)
		return -ENOMEM;
	f->graph = graph;
	ret = ibemu__sw_graph_init(&f->g, graph);
	if (ret)
		goto err;
	nsw = f->g.nsw ? f->g.nsw : 1;
	f->rank = calloc(nsw, sizeof(*f->rank));
	f->nup = calloc(nsw, sizeof(*f->nup));
	f->mark = calloc(nsw, sizeof(*f->mark));
	f->queue = calloc(nsw, sizeof(*f->queue));
	f->div = calloc(nsw + 1, sizeof(*f->div));
	ret = -ENOMEM;
	if (!f->rank || !f->nup || !f->mark || !f->queue || !f->div)
		goto err;
	f->is_tree = rank_switches(f);
	/* K of a rank: the up-port counts of the ranks below multiplied,
	 * taken from the first switch of each rank. */
	for (r = 0; r < f->nranks; r++) {
		f->div[r] = r ? f->div[r - 1] : 1;
		for (s = 0; r && s < f->g.nsw; s++)
			if (f->rank[s] == r - 1 && f->nup[s]) {
				f->div[r] = f->div[r - 1] * f->nup[s];
				break;
			}
	}
	ret = ibemu__routing_minhop.create(graph, &f->fallback);
	if (ret)
		goto err;
	*ctx = f;
	return 0;

err:
	ftree_destroy(f);
	return ret;
}

/* The k-th cable of switch 's' going to rank 'r' (k < their count). */
static const struct ibemu__sw_link *
nth_to_rank(const struct ftree *f, uint32_t s, uint32_t r, uint64_t k)
{
	uint32_t l;

	for (l = f->g.first[s]; l < f->g.first[s + 1]; l++)
		if (f->rank[f->g.link[l].peer] == r && k-- == 0)
			return &f->g.link[l];
	return NULL;
}

/*
 * Of switch 't''s cables down to switches marked 'stamp' (above the
 * destination's leaf), the (i mod count)-th: parallel cables and several
 * children share the destinations.
 */
static const struct ibemu__sw_link *
down_cable(const struct ftree *f, uint32_t t, uint32_t stamp, uint64_t i)
{
	uint32_t l, cnt = 0;
	uint64_t k;

	for (l = f->g.first[t]; l < f->g.first[t + 1]; l++)
		cnt += f->mark[f->g.link[l].peer] == stamp &&
		       f->rank[f->g.link[l].peer] + 1 == f->rank[t];
	if (!cnt)
		return NULL;
	k = i % cnt;
	for (l = f->g.first[t]; l < f->g.first[t + 1]; l++)
		if (f->mark[f->g.link[l].peer] == stamp &&
		    f->rank[f->g.link[l].peer] + 1 == f->rank[t] && k-- == 0)
			return &f->g.link[l];
	return NULL;
}

/*
 * Routes HCA LID 'lid', the i-th, delivered by leaf 'leaf' through 'port':
 * the switches above the leaf (found rank by rank, so all of one rank are
 * marked before the next is reached) send down towards it; the others up.
 */
static void route_hca(struct ftree *f, struct ibemu_routes *r, uint16_t lid,
		      uint64_t i, uint32_t leaf, uint8_t port)
{
	uint32_t head = 0, tail = 0, s, l, t, stamp = lid;
	const struct ibemu__sw_link *k;

	r->lft[f->g.sw_node[leaf]][lid] = port;
	f->mark[leaf] = stamp;
	f->queue[tail++] = leaf;
	while (head < tail) {
		s = f->queue[head++];
		for (l = f->g.first[s]; l < f->g.first[s + 1]; l++) {
			t = f->g.link[l].peer;
			if (f->rank[t] != f->rank[s] + 1 || f->mark[t] == stamp)
				continue;
			f->mark[t] = stamp;
			f->queue[tail++] = t;
		}
	}
	for (s = 0; s < f->g.nsw; s++) {
		if (s == leaf || f->rank[s] == IBEMU_NONE)
			continue;
		if (f->mark[s] == stamp)
			k = down_cable(f, s, stamp, i);
		else if (f->nup[s])
			k = nth_to_rank(f, s, f->rank[s] + 1,
					(i / f->div[f->rank[s]]) % f->nup[s]);
		else
			k = NULL;
		if (k)
			r->lft[f->g.sw_node[s]][lid] = k->port;
	}
}

static int ftree_build(void *ctx, struct ibemu_routes *r)
{
	struct ftree *f = ctx;
	uint64_t i = 0;
	uint32_t lid, s;
	uint8_t port;
	int ret;

	/* Min-hop first: switch LIDs, and everything if not a tree. */
	ret = ibemu__routing_minhop.build(f->fallback, r);
	if (ret || !f->is_tree)
		return ret;
	ret = ibemu__sw_graph_start(&f->g, r);
	if (ret)
		return ret;
	for (s = 0; s < f->g.nsw; s++)
		f->mark[s] = 0;
	for (lid = 1; lid <= r->max_lid; lid++) {
		if (r->lid_node[lid] == IBEMU_NONE ||
		    ibemu__graph_is_switch(f->graph, r->lid_node[lid]))
			continue;
		s = ibemu__sw_graph_dest(&f->g, (uint16_t)lid, &port);
		if (s == IBEMU_NONE || f->rank[s] != 0)
			continue;
		route_hca(f, r, (uint16_t)lid, i++, s, port);
	}
	return 0;
}

const struct ibemu_routing_engine_ops ibemu__routing_ftree = {
	.name = "ftree",
	.help = "fat-tree routes by destination modulo (min-hop elsewhere)",
	.create = ftree_create,
	.build = ftree_build,
	.destroy = ftree_destroy,
};

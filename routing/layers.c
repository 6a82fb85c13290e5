// SPDX-License-Identifier: MIT
/*
 * Virtual layers, the deadlock removal of DFSSSP (Domke, Hoefler and
 * Nagel): the paths of a set of routes are placed one at a time on the
 * lowest layer whose channel dependency graph stays acyclic with them. A
 * layer is an SL, and each SL gets its own VL (ibemu-sm programs SL i to
 * VL i), so no layer can close a credit loop. Shared by the engines that
 * break credit loops with VLs (dfsssp, dor); the rules are in
 * routing/README.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing_int.h"

/* Hops a path may take before it counts as a loop (IBA: 63 at most). */
#define MAX_HOPS 64

/* The dependencies out of one channel in one layer. */
struct deps {
	uint32_t *to;
	uint32_t n, cap;
};

struct layers {
	const struct ibemu_graph *g;
	struct ibemu_routes *r;
	uint32_t *chan_base; /* per node: the channel of its port 0 */
	uint32_t nchan;
	unsigned max, used;
	struct deps *deps; /* [max * nchan] */
	uint32_t *stamp;   /* per channel: the search that last saw it */
	uint32_t search;
	uint32_t *stack;
};

int ibemu__routes_sl_alloc(const struct ibemu_graph *g, struct ibemu_routes *r)
{
	uint32_t *row_of, n, lid, rows = 0;
	const struct ibemu_graph_port *gp;

	free(r->sl);
	free(r->lid_row);
	r->sl = NULL;
	r->nlayers = 1;
	r->nrows = 0;
	r->lid_row = malloc(((size_t)r->max_lid + 1) * sizeof(*r->lid_row));
	row_of = malloc((g->nnodes ? g->nnodes : 1) * sizeof(*row_of));
	if (!r->lid_row || !row_of)
		goto err_alloc;
	for (n = 0; n < g->nnodes; n++)
		row_of[n] = ibemu__graph_is_switch(g, n) ? rows++ : IBEMU_NONE;
	for (lid = 0; lid <= r->max_lid; lid++) {
		n = r->lid_node[lid];
		r->lid_row[lid] = IBEMU_NONE;
		if (n == IBEMU_NONE)
			continue;
		if (row_of[n] != IBEMU_NONE) {
			r->lid_row[lid] = row_of[n];
			continue;
		}
		gp = &g->nodes[n].ports[r->lid_port[lid]];
		if (ibemu__graph_is_switch(g, gp->peer_node))
			r->lid_row[lid] = row_of[gp->peer_node];
	}
	r->sl = calloc((size_t)(rows ? rows : 1) * (r->max_lid + 1u), 1);
	if (!r->sl)
		goto err_alloc;
	r->nrows = rows;
	free(row_of);
	return 0;

err_alloc:
	free(row_of);
	free(r->lid_row);
	r->lid_row = NULL;
	return -ENOMEM;
}

/*
 * The channels of the path from switch 's' to 'lid' through the LFTs, in
 * order, into chans[]; their number, or -ELOOP.
 */
static int path_of(const struct layers *ly, uint32_t s, uint16_t lid,
		   uint32_t *chans)
{
	const struct ibemu_graph *g = ly->g;
	uint8_t port;
	uint32_t t;
	int n = 0;

	for (;;) {
		port = ly->r->lft[s][lid];
		if (port == 0 || port == IBEMU_LFT_NO_ROUTE ||
		    port > g->nodes[s].nports)
			return n;
		t = g->nodes[s].ports[port].peer_node;
		if (!ibemu__graph_is_switch(g, t))
			return n;
		if (n == MAX_HOPS)
			return -ELOOP;
		chans[n++] = ly->chan_base[s] + port;
		s = t;
	}
}

static int has_dep(const struct deps *d, uint32_t to)
{
	uint32_t i;

	for (i = 0; i < d->n; i++)
		if (d->to[i] == to)
			return 1;
	return 0;
}

static int dep_push(struct deps *d, uint32_t to)
{
	uint32_t *grown;

	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 4;
		grown = realloc(d->to, d->cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		d->to = grown;
	}
	d->to[d->n++] = to;
	return 0;
}

/* Whether channel 'to' can be reached from 'from' in layer 'l'. */
static int reaches(struct layers *ly, unsigned l, uint32_t from, uint32_t to)
{
	const struct deps *d = ly->deps + (size_t)l * ly->nchan;
	uint32_t top = 0, v, i;

	ly->search++;
	ly->stamp[from] = ly->search;
	ly->stack[top++] = from;
	while (top) {
		v = ly->stack[--top];
		if (v == to)
			return 1;
		for (i = 0; i < d[v].n; i++) {
			uint32_t w = d[v].to[i];

			if (ly->stamp[w] != ly->search) {
				ly->stamp[w] = ly->search;
				ly->stack[top++] = w;
			}
		}
	}
	return 0;
}

/*
 * Adds the dependencies of path chans[0..n) to layer 'l' if that leaves
 * its graph acyclic: 1 if it did, 0 if the path would close a cycle (the
 * layer is left as it was), -ENOMEM.
 */
static int try_layer(struct layers *ly, unsigned l, const uint32_t *chans,
		     int n)
{
	struct deps *d = ly->deps + (size_t)l * ly->nchan;
	uint32_t added[MAX_HOPS];
	int i, k, nadded = 0, cycle = 0;

	for (i = 0; i + 1 < n; i++) {
		if (has_dep(&d[chans[i]], chans[i + 1]))
			continue;
		if (dep_push(&d[chans[i]], chans[i + 1]))
			return -ENOMEM;
		added[nadded++] = (uint32_t)i;
	}
	/* The graph was acyclic: a cycle now runs through a new edge. */
	for (k = 0; k < nadded && !cycle; k++)
		cycle = reaches(ly, l, chans[added[k] + 1], chans[added[k]]);
	if (!cycle)
		return 1;
	for (k = nadded; k-- > 0;)
		d[chans[added[k]]].n--;
	return 0;
}

static void layers_fini(struct layers *ly)
{
	size_t i;

	if (ly->deps)
		for (i = 0; i < (size_t)ly->max * ly->nchan; i++)
			free(ly->deps[i].to);
	free(ly->deps);
	free(ly->stamp);
	free(ly->stack);
	free(ly->chan_base);
}

int ibemu__routes_layer(const struct ibemu_graph *g, struct ibemu_routes *r,
			unsigned max_layers)
{
	struct layers ly = {.g = g, .r = r, .max = max_layers, .used = 1};
	uint32_t chans[MAX_HOPS], n, row;
	unsigned lid, l;
	int len, ret;

	if (r->nnodes != g->nnodes)
		return -EINVAL;
	if (!ly.max)
		ly.max = 1;
	ret = ibemu__routes_sl_alloc(g, r);
	if (ret)
		return ret;
	ly.chan_base = malloc((g->nnodes ? g->nnodes : 1) * sizeof(uint32_t));
	if (!ly.chan_base)
		goto err_nomem;
	for (n = 0; n < g->nnodes; n++) {
		ly.chan_base[n] = ly.nchan;
		ly.nchan += g->nodes[n].nports + 1u;
	}
	ly.deps = calloc((size_t)ly.max * ly.nchan, sizeof(*ly.deps));
	ly.stamp = calloc(ly.nchan, sizeof(*ly.stamp));
	ly.stack = malloc(((size_t)ly.nchan + 1) * sizeof(*ly.stack));
	if (!ly.deps || !ly.stamp || !ly.stack)
		goto err_nomem;
	/*
	 * Destinations in LID order, sources (switches with HCAs) in node
	 * order: the layers depend on nothing but the graph and the LFTs.
	 */
	for (lid = 1; lid <= r->max_lid; lid++) {
		if (r->lid_node[lid] == IBEMU_NONE)
			continue;
		for (n = 0; n < g->nnodes; n++) {
			if (!ibemu__graph_is_switch(g, n) ||
			    !ibemu__graph_has_hca(g, n))
				continue;
			len = path_of(&ly, n, (uint16_t)lid, chans);
			if (len < 0) {
				ret = len;
				goto err;
			}
			for (l = 0; l < ly.max; l++) {
				ret = try_layer(&ly, l, chans, len);
				if (ret)
					break;
			}
			if (ret < 0)
				goto err;
			if (l == ly.max) {
				ret = -ENOSPC;
				goto err;
			}
			if (l + 1 > ly.used)
				ly.used = l + 1;
			row = r->lid_row[r->port_lid[r->port_base[n]]];
			r->sl[(size_t)row * (r->max_lid + 1u) + lid] =
				(uint8_t)l;
		}
	}
	r->nlayers = (uint8_t)ly.used;
	layers_fini(&ly);
	return 0;

err_nomem:
	ret = -ENOMEM;
err:
	layers_fini(&ly);
	free(r->sl);
	free(r->lid_row);
	r->sl = NULL;
	r->lid_row = NULL;
	r->nrows = 0;
	r->nlayers = 1;
	return ret;
}

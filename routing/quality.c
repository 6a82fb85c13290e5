// SPDX-License-Identifier: MIT
/*
 * How well a set of routes spreads traffic: the routes every directed
 * switch-to-switch cable carries under two patterns of HCA ports (in LID
 * order), followed through the LFTs. Shift: for each k, port i sends to
 * port i + k; a fat tree's ideal is one route per cable for every k.
 * All-to-all: every port to every other; its ideal is the total of
 * switch-to-switch hops spread evenly over the cables. Next to each
 * maximum the mean of the cables that carry routes. Also the path
 * lengths, in switch-to-switch hops.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing.h"
#include "util.h"

struct walk {
	const struct ibemu_graph *g;
	const struct ibemu_routes *r;
	uint32_t *chan_base; /* per node: its port 0's channel */
	uint32_t nchan;
	uint16_t *src_lid; /* HCA port LIDs, in LID order */
	uint32_t *src_sw;  /* the switch each is cabled to */
	uint32_t nsrc;
};

static int is_switch(const struct ibemu_graph *g, uint32_t n)
{
	return g->nodes[n].type == IBEMU_GRAPH_SWITCH;
}

/*
 * Adds one route from switch 's' to 'lid' to 'count' (per channel);
 * returns its switch-to-switch hops, or -1 if it never arrives.
 */
static int walk(const struct walk *w, uint32_t s, uint16_t lid, uint32_t *count)
{
	int hops = 0;
	uint8_t port;
	uint32_t t;

	while (hops <= 64) {
		port = w->r->lft[s][lid];
		if (port == 0 || port == IBEMU_LFT_NO_ROUTE ||
		    port > w->g->nodes[s].nports)
			return port == 0 ? hops : -1;
		t = w->g->nodes[s].ports[port].peer_node;
		if (t == IBEMU_NONE)
			return -1;
		if (!is_switch(w->g, t))
			return hops;
		count[w->chan_base[s] + port]++;
		hops++;
		s = t;
	}
	return -1; /* a loop */
}

static int walk_init(struct walk *w, const struct ibemu_graph *g,
		     const struct ibemu_routes *r)
{
	uint32_t n, lid;
	unsigned p;

	memset(w, 0, sizeof(*w));
	w->g = g;
	w->r = r;
	w->chan_base = calloc(g->nnodes ? g->nnodes : 1, sizeof(*w->chan_base));
	w->src_lid = calloc((size_t)r->max_lid + 1, sizeof(*w->src_lid));
	w->src_sw = calloc((size_t)r->max_lid + 1, sizeof(*w->src_sw));
	if (!w->chan_base || !w->src_lid || !w->src_sw)
		return -ENOMEM;
	for (n = 0; n < g->nnodes; n++) {
		w->chan_base[n] = w->nchan;
		w->nchan += g->nodes[n].nports + 1u;
	}
	for (lid = 1; lid <= r->max_lid; lid++) {
		n = r->lid_node[lid];
		if (n == IBEMU_NONE || is_switch(g, n))
			continue;
		p = r->lid_port[lid];
		/* One source per port: its base LID (LMC's others aside). */
		if (ibemu_routes_lid(r, n, p) != lid ||
		    g->nodes[n].ports[p].peer_node == IBEMU_NONE ||
		    !is_switch(g, g->nodes[n].ports[p].peer_node))
			continue;
		w->src_lid[w->nsrc] = (uint16_t)lid;
		w->src_sw[w->nsrc++] = g->nodes[n].ports[p].peer_node;
	}
	return 0;
}

static void walk_fini(struct walk *w)
{
	free(w->chan_base);
	free(w->src_lid);
	free(w->src_sw);
}

/* The most routes on one channel; adds the routes and the channels used. */
static uint32_t max_of(const uint32_t *count, uint32_t n, uint64_t *routes,
		       uint64_t *used)
{
	uint32_t i, m = 0;

	for (i = 0; i < n; i++) {
		if (count[i] > m)
			m = count[i];
		*routes += count[i];
		*used += count[i] != 0;
	}
	return m;
}

int ibemu_routes_quality(const struct ibemu_graph *g,
			 const struct ibemu_routes *r,
			 struct ibemu_route_quality *q)
{
	uint64_t total = 0, routes = 0, used = 0;
	uint32_t *count, i, j, k, n, links = 0, m;
	struct walk w;
	unsigned p;
	int hops, ret;

	memset(q, 0, sizeof(*q));
	if (r->nnodes != g->nnodes)
		return -EINVAL;
	ret = walk_init(&w, g, r);
	count = ret ? NULL : calloc(w.nchan ? w.nchan : 1, sizeof(*count));
	if (!count) {
		walk_fini(&w);
		return -ENOMEM;
	}
	for (n = 0; n < g->nnodes; n++)
		for (p = 1; is_switch(g, n) && p <= g->nodes[n].nports; p++)
			links += g->nodes[n].ports[p].peer_node != IBEMU_NONE &&
				 is_switch(g, g->nodes[n].ports[p].peer_node);
	q->hosts = w.nsrc;
	q->links = links;
	/* Shift: each k on its own. */
	for (k = 1; k < w.nsrc; k++) {
		memset(count, 0, w.nchan * sizeof(*count));
		for (i = 0; i < w.nsrc; i++)
			walk(&w, w.src_sw[i], w.src_lid[(i + k) % w.nsrc],
			     count);
		m = max_of(count, w.nchan, &routes, &used);
		if (m > q->shift_max)
			q->shift_max = m;
	}
	q->shift_mean = used ? (double)routes / (double)used : 0;
	/* All-to-all, with the path lengths. */
	memset(count, 0, w.nchan * sizeof(*count));
	for (i = 0; i < w.nsrc; i++) {
		for (j = 0; j < w.nsrc; j++) {
			if (i == j)
				continue;
			hops = walk(&w, w.src_sw[i], w.src_lid[j], count);
			if (hops < 0) {
				q->unrouted++;
				continue;
			}
			total += (uint64_t)hops;
			q->hops_hist[hops < IBEMU_QUALITY_HOPS
					     ? hops
					     : IBEMU_QUALITY_HOPS - 1]++;
		}
	}
	routes = used = 0;
	q->a2a_max = max_of(count, w.nchan, &routes, &used);
	q->a2a_used = (uint32_t)used;
	q->a2a_mean = used ? (double)routes / (double)used : 0;
	q->a2a_ideal = links ? (double)total / links : 0;
	free(count);
	walk_fini(&w);
	return 0;
}

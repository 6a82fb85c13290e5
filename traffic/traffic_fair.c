// SPDX-License-Identifier: MIT
/*
 * What each flow should get: its max-min fair share of the links on its
 * path, by progressive filling, with the links' payload rates as the study
 * can reach them. Comparing a flow's throughput with its share tells
 * congestion spreading (victims far below theirs) from mere contention,
 * and Jain's index over the contributors tells how evenly the hotspot's
 * port is shared.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rate.h"
#include "traffic_int.h"

static const char *const role_names[] = {
	[IBEMU_TRAFFIC_OTHER] = "other",
	[IBEMU_TRAFFIC_CONTRIBUTOR] = "contributor",
	[IBEMU_TRAFFIC_VICTIM] = "victim",
};

const char *ibemu_traffic_role_name(enum ibemu_traffic_role r)
{
	if ((unsigned)r >= IBEMU_ARRAY_SIZE(role_names))
		return "?";
	return role_names[r];
}

enum ibemu_traffic_role ibemu__traffic_role(const struct ibemu_traffic *tr,
					    uint32_t fi)
{
	if (tr->flows[fi].victim)
		return IBEMU_TRAFFIC_VICTIM;
	return ibemu__traffic_has_roles(tr) ? IBEMU_TRAFFIC_CONTRIBUTOR
					    : IBEMU_TRAFFIC_OTHER;
}

double ibemu_traffic_jain(const double *x, size_t n)
{
	double sum = 0, sq = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq > 0 ? sum * sum / ((double)n * sq) : 1.0;
}

struct wf {
	const double *demand;
	double *share;
	const uint32_t *path_off, *path;
	uint32_t *nflows; /* per link: unfrozen flows on it */
	uint8_t *frozen;
	size_t active;
};

static void freeze(struct wf *w, uint32_t f, double level)
{
	uint32_t k;

	if (w->frozen[f])
		return;
	w->frozen[f] = 1;
	w->share[f] = level;
	w->active--;
	for (k = w->path_off[f]; k < w->path_off[f + 1]; k++)
		w->nflows[w->path[k]]--;
}

static const double *sort_demand;

static int cmp_demand(const void *a, const void *b)
{
	double x = sort_demand[*(const uint32_t *)a];
	double y = sort_demand[*(const uint32_t *)b];

	if (x != y)
		return x < y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Sorts flow indices by demand; qsort() has no context argument, and a
 * study runs on the engine's one thread. */
static void by_demand(uint32_t *order, size_t n, const double *demand)
{
	sort_demand = demand;
	qsort(order, n, sizeof(*order), cmp_demand);
	sort_demand = NULL;
}

/*
 * Every unfrozen flow has the same rate, 'level'. Each round raises it to
 * the next point where a flow meets its demand or a link fills, then
 * freezes those flows: at most one round per link and per distinct
 * demand, each O(links), plus each flow's path once when it freezes.
 */
int ibemu_traffic_waterfill(size_t nflows, const double *demand,
			    const uint32_t *path_off, const uint32_t *path,
			    size_t nlinks, const double *cap, double *share)
{
	uint32_t *link_off = calloc(nlinks + 1, sizeof(*link_off));
	uint32_t *link_flows =
		malloc((path_off[nflows] + 1) * sizeof(uint32_t));
	uint32_t *order = malloc((nflows + 1) * sizeof(*order));
	double *rem = malloc((nlinks + 1) * sizeof(*rem));
	struct wf w = {.demand = demand,
		       .share = share,
		       .path_off = path_off,
		       .path = path,
		       .active = nflows};
	double level = 0, delta, room;
	size_t f, l, k, next = 0;
	int ret = -ENOMEM;

	w.nflows = calloc(nlinks + 1, sizeof(*w.nflows));
	w.frozen = calloc(nflows + 1, 1);
	if (!link_off || !link_flows || !order || !rem || !w.nflows ||
	    !w.frozen)
		goto out;
	/* Links to their flows, so a full link freezes them at once. */
	for (k = 0; k < path_off[nflows]; k++)
		link_off[path[k] + 1]++;
	for (l = 0; l < nlinks; l++)
		link_off[l + 1] += link_off[l];
	for (l = 0; l < nlinks; l++) {
		w.nflows[l] = link_off[l + 1] - link_off[l];
		rem[l] = cap[l];
	}
	for (f = 0; f < nflows; f++)
		for (k = path_off[f]; k < path_off[f + 1]; k++)
			link_flows[link_off[path[k]] + --w.nflows[path[k]]] =
				(uint32_t)f;
	for (l = 0; l < nlinks; l++)
		w.nflows[l] = link_off[l + 1] - link_off[l];
	for (f = 0; f < nflows; f++)
		order[f] = (uint32_t)f;
	by_demand(order, nflows, demand);

	while (w.active) {
		while (w.frozen[order[next]])
			next++;
		delta = demand[order[next]] - level;
		for (l = 0; l < nlinks; l++) {
			if (!w.nflows[l])
				continue;
			room = rem[l] / w.nflows[l];
			if (room < delta)
				delta = room;
		}
		if (delta < 0)
			delta = 0;
		level += delta;
		for (l = 0; l < nlinks; l++)
			rem[l] -= delta * w.nflows[l];
		/* Relative tolerance: rates are sums of many doubles. */
		for (; next < nflows; next++) {
			f = order[next];
			if (!w.frozen[f] && demand[f] > level * (1 + 1e-12))
				break;
			freeze(&w, (uint32_t)f,
			       demand[f] < level ? demand[f] : level);
		}
		for (l = 0; l < nlinks; l++) {
			if (!w.nflows[l] || rem[l] > cap[l] * 1e-12)
				continue;
			for (k = link_off[l]; k < link_off[l + 1]; k++)
				freeze(&w, link_flows[k], level);
		}
	}
	ret = 0;
out:
	free(w.frozen);
	free(w.nflows);
	free(rem);
	free(order);
	free(link_flows);
	free(link_off);
	return ret;
}

uint32_t ibemu__traffic_path(const struct ibemu_traffic *tr, uint32_t src,
			     uint32_t dst, uint32_t *ports, uint32_t max)
{
	const struct ibemu_topo *t = tr->topo;
	uint32_t node = tr->hosts[src].node, n = 0;
	unsigned out = tr->hosts[src].port, in = 0;
	uint16_t dlid = tr->hosts[dst].lid;
	uint8_t lft;

	for (;;) {
		const struct ibemu_topo_port *tp = &t->nodes[node].ports[out];

		if (n < max)
			ports[n] = ibemu_engine_port_index(tr->e, node, out);
		n++;
		node = tp->peer_node;
		in = tp->peer_port;
		if (t->nodes[node].type != IBEMU_NODE_SWITCH)
			break;
		if (n > t->nnodes ||
		    ibemu_engine_get_lft(tr->e, node, dlid, &lft) || !lft ||
		    lft > t->nodes[node].nports ||
		    t->nodes[node].ports[lft].link == IBEMU_NONE)
			return 0;
		out = lft;
	}
	return node == tr->hosts[dst].node && in == tr->hosts[dst].port ? n : 0;
}

/* One message's wire time on a link, as stream_slots() counts it. */
static uint64_t msg_wire_ps(const struct ibemu_traffic *tr, unsigned lanes,
			    unsigned speed)
{
	enum ibemu_speed sp = (enum ibemu_speed)speed;
	uint64_t full = ibemu_link_serialize_ps(
		lanes, sp,
		IBEMU_TRAFFIC_HDR_BYTES + tr->mtu + IBEMU_ICRC_BYTES +
			IBEMU_VCRC_BYTES);
	uint64_t last = ibemu_link_serialize_ps(
		lanes, sp,
		IBEMU_TRAFFIC_HDR_BYTES + ((tr->last_payload + 3u) & ~3u) +
			IBEMU_ICRC_BYTES + IBEMU_VCRC_BYTES);

	return (tr->msg_pkts - 1) * full + last;
}

double ibemu__traffic_link_gbps(const struct ibemu_traffic *tr, unsigned lanes,
				unsigned speed)
{
	/* bits per ps are Tb/s. */
	return (double)tr->o.msg_bytes * 8.0 * 1000.0 /
	       (double)msg_wire_ps(tr, lanes, speed);
}

/* What a flow's source offers: load times its message rate, itself
 * bounded by the slot floor (min_slot_ps). */
static double demand_gbps(const struct ibemu_traffic *tr, uint32_t src)
{
	const struct ibemu_traffic_host *h = &tr->hosts[src];
	uint64_t slot = msg_wire_ps(tr, h->lanes, h->speed);

	if (slot < tr->o.min_slot_ps)
		slot = tr->o.min_slot_ps;
	return tr->o.load * (double)tr->o.msg_bytes * 8.0 * 1000.0 /
	       (double)slot;
}

struct fair_in {
	double *demand, *cap;
	uint32_t *path_off, *path, *link_of_port, *hops;
	size_t nlinks, npath;
};

static void fair_in_fini(struct fair_in *in)
{
	free(in->demand);
	free(in->cap);
	free(in->path_off);
	free(in->path);
	free(in->link_of_port);
	free(in->hops);
}

/* Traces every flow's path and numbers the links they use. */
static int fair_in_build(struct ibemu_traffic *tr, struct fair_in *in)
{
	uint32_t nports = ibemu_engine_nports(tr->e),
		 max = tr->topo->nnodes + 1;
	uint32_t fi, k, n, *grown;
	size_t cap_path = (size_t)tr->nflows * 4 + 16;
	struct ibemu_port_link pl;

	memset(in, 0, sizeof(*in));
	in->demand = calloc(tr->nflows + 1, sizeof(*in->demand));
	in->cap = calloc(nports + 1, sizeof(*in->cap));
	in->path_off = calloc(tr->nflows + 1, sizeof(*in->path_off));
	in->path = malloc(cap_path * sizeof(*in->path));
	in->link_of_port = malloc(nports * sizeof(*in->link_of_port));
	in->hops = malloc(max * sizeof(*in->hops));
	if (!in->demand || !in->cap || !in->path_off || !in->path ||
	    !in->link_of_port || !in->hops)
		return -ENOMEM;
	memset(in->link_of_port, 0xff, nports * sizeof(*in->link_of_port));
	for (fi = 0; fi < tr->nflows; fi++) {
		const struct ibemu_traffic_flow *f = &tr->flows[fi];

		in->demand[fi] = demand_gbps(tr, f->src);
		n = ibemu__traffic_path(tr, f->src, f->dst, in->hops, max);
		if (n > max)
			n = 0;
		if (in->npath + n > cap_path) {
			cap_path = (in->npath + n) * 2;
			grown = realloc(in->path, cap_path * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			in->path = grown;
		}
		for (k = 0; k < n; k++) {
			uint32_t pi = in->hops[k];

			if (in->link_of_port[pi] == IBEMU_NONE) {
				ibemu_engine_port_link(tr->e, pi, &pl);
				in->cap[in->nlinks] = ibemu__traffic_link_gbps(
					tr, pl.lanes, pl.speed);
				in->link_of_port[pi] = (uint32_t)in->nlinks++;
			}
			in->path[in->npath++] = in->link_of_port[pi];
		}
		in->path_off[fi + 1] = (uint32_t)in->npath;
	}
	return 0;
}

/* The hotspot figures of the summary (INCAST and CTREE). */
static int hotspot_summary(struct ibemu_traffic *tr)
{
	struct ibemu_traffic_summary *s = &tr->sum;
	const struct ibemu_traffic_host *h = &tr->hosts[tr->o.incast_dst];
	const struct ibemu_topo_port *tp =
		&tr->topo->nodes[h->node].ports[h->port];
	uint64_t elapsed =
		s->end_ps > s->duration_ps ? s->end_ps : s->duration_ps;
	struct ibemu_traffic_flow_result r;
	struct ibemu_port_counters c;
	double *x, ratio;
	uint32_t pi, fi;
	size_t n = 0;

	s->hotspot = tr->o.incast_dst;
	/* The switch port that transmits into the hotspot. */
	pi = ibemu_engine_port_index(tr->e, tp->peer_node, tp->peer_port);
	ibemu_engine_counters(tr->e, pi, &c);
	s->hotspot_util =
		(double)(c.busy_ps - tr->cnt0[pi].busy_ps) / (double)elapsed;
	x = malloc((tr->nflows + 1) * sizeof(*x));
	if (!x)
		return -ENOMEM;
	s->victim_min = 0;
	s->victim_mean = 0;
	for (fi = 0; fi < tr->nflows; fi++) {
		ibemu__traffic_flow_result(tr, fi, &r);
		if (r.role == IBEMU_TRAFFIC_CONTRIBUTOR) {
			x[n++] = r.gbps;
			continue;
		}
		if (r.role != IBEMU_TRAFFIC_VICTIM)
			continue;
		ratio = r.fair_gbps > 0 ? r.gbps / r.fair_gbps : 0;
		if (!s->victims || ratio < s->victim_min)
			s->victim_min = ratio;
		s->victim_mean += ratio;
		s->victims++;
	}
	if (s->victims)
		s->victim_mean /= s->victims;
	s->jain_contributors = ibemu_traffic_jain(x, n);
	free(x);
	return 0;
}

int ibemu__traffic_fair(struct ibemu_traffic *tr)
{
	struct fair_in in;
	int ret;

	memset(&in, 0, sizeof(in));
	tr->sum.hotspot = IBEMU_NONE;
	tr->fair_gbps = calloc(tr->nflows + 1, sizeof(*tr->fair_gbps));
	ret = tr->fair_gbps ? fair_in_build(tr, &in) : -ENOMEM;
	if (!ret)
		ret = ibemu_traffic_waterfill(tr->nflows, in.demand,
					      in.path_off, in.path, in.nlinks,
					      in.cap, tr->fair_gbps);
	fair_in_fini(&in);
	if (!ret && ibemu__traffic_has_roles(tr))
		ret = hotspot_summary(tr);
	return ret;
}

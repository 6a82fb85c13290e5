// SPDX-License-Identifier: MIT
/*
 * The congestion-tree pattern: contributors on several leaves send to one
 * hotspot, so the hotspot's port backs up into the switches above it and
 * the links towards it; one victim per contributing leaf sends to another
 * host of the hotspot's leaf, through the same links but not the hotspot's
 * port. Without congestion control the victims slow down with the tree;
 * with it they should not (IBA Annex A10). The choices are documented at
 * IBEMU_TRAFFIC_CTREE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_int.h"

struct leaves {
	uint32_t n;	 /* leaves other than the hotspot's */
	uint32_t *off;	 /* [n + 1]: their hosts in hosts[] */
	uint32_t *hosts; /* host indices, leaf by leaf, in host order */
	uint32_t *home;	 /* hosts of the hotspot's leaf but the hotspot */
	uint32_t nhome;
	uint8_t *contrib;   /* per host */
	uint8_t *into_home; /* per engine port: a contributor enters there */
};

static void leaves_fini(struct leaves *lv)
{
	free(lv->off);
	free(lv->hosts);
	free(lv->home);
	free(lv->contrib);
	free(lv->into_home);
}

/* Groups the hosts by leaf switch, in switch node order. */
static int leaves_build(struct ibemu_traffic *tr, uint32_t hot,
			struct leaves *lv)
{
	uint32_t nn = tr->topo->nnodes, n = tr->nhosts, i, h, k = 0;
	uint32_t home = tr->hosts[hot].sw, *count;

	count = calloc(nn + 1, sizeof(*count));
	lv->off = calloc(nn + 1, sizeof(*lv->off));
	lv->hosts = malloc(n * sizeof(*lv->hosts));
	lv->home = malloc(n * sizeof(*lv->home));
	lv->contrib = calloc(n, 1);
	lv->into_home = calloc(ibemu_engine_nports(tr->e), 1);
	if (!count || !lv->off || !lv->hosts || !lv->home || !lv->contrib ||
	    !lv->into_home) {
		free(count);
		return -ENOMEM;
	}
	for (h = 0; h < n; h++) {
		if (tr->hosts[h].sw == home) {
			if (h != hot)
				lv->home[lv->nhome++] = h;
		} else if (tr->hosts[h].sw != IBEMU_NONE) {
			count[tr->hosts[h].sw]++;
		}
	}
	for (i = 0; i < nn; i++) {
		if (!count[i])
			continue;
		lv->off[lv->n + 1] = lv->off[lv->n] + count[i];
		for (h = 0; h < n; h++)
			if (tr->hosts[h].sw == i)
				lv->hosts[k++] = h;
		lv->n++;
	}
	free(count);
	return 0;
}

/* Deals the contributors over the leaves, one host per leaf per round. */
static void deal(struct leaves *lv, uint32_t want)
{
	uint32_t round, l, got = 0, more = 1;

	for (round = 0; got < want && more; round++) {
		more = 0;
		for (l = 0; l < lv->n && got < want; l++) {
			if (lv->off[l] + round >= lv->off[l + 1])
				continue;
			lv->contrib[lv->hosts[lv->off[l] + round]] = 1;
			got++;
			more = 1;
		}
	}
}

/* The port, on 'path', of the switch link into leaf 'home'. */
static uint32_t entry_port(const struct ibemu_traffic *tr, const uint32_t *path,
			   uint32_t n, uint32_t home)
{
	uint32_t i, node;
	unsigned port;

	for (i = 1; i < n; i++) {
		ibemu_engine_port_where(tr->e, path[i], &node, &port);
		if (node != home &&
		    tr->topo->nodes[node].ports[port].peer_node == home)
			return path[i];
	}
	return IBEMU_NONE;
}

static int add_streams(struct ibemu_traffic *tr, uint32_t hot,
		       struct leaves *lv)
{
	uint32_t max = tr->topo->nnodes + 1, *path, n, h, l, j, k;
	uint32_t home = tr->hosts[hot].sw, next = 0, pi;
	struct ibemu_traffic_stream *s;

	path = malloc(max * sizeof(*path));
	if (!path)
		return -ENOMEM;
	for (h = 0; h < tr->nhosts; h++) {
		if (!lv->contrib[h])
			continue;
		ibemu__traffic_add_stream(tr, h, hot, IBEMU_TRAFFIC_DST_FIXED);
		n = ibemu__traffic_path(tr, h, hot, path, max);
		pi = n && n <= max ? entry_port(tr, path, n, home) : IBEMU_NONE;
		if (pi != IBEMU_NONE)
			lv->into_home[pi] = 1;
	}
	for (l = 0; l < lv->n; l++) {
		uint32_t v = IBEMU_NONE, any = 0, dst;

		for (k = lv->off[l]; k < lv->off[l + 1]; k++) {
			any |= lv->contrib[lv->hosts[k]];
			if (v == IBEMU_NONE && !lv->contrib[lv->hosts[k]])
				v = lv->hosts[k];
		}
		if (!any || v == IBEMU_NONE)
			continue;
		/* A destination reached through a contributors' link. */
		dst = lv->home[next % lv->nhome];
		for (j = 0; j < lv->nhome; j++) {
			k = (next + j) % lv->nhome;
			n = ibemu__traffic_path(tr, v, lv->home[k], path, max);
			pi = n && n <= max ? entry_port(tr, path, n, home)
					   : IBEMU_NONE;
			if (pi != IBEMU_NONE && lv->into_home[pi]) {
				dst = lv->home[k];
				next = k;
				break;
			}
		}
		next++;
		s = ibemu__traffic_add_stream(tr, v, dst,
					      IBEMU_TRAFFIC_DST_FIXED);
		s->victim = 1;
	}
	free(path);
	return 0;
}

int ibemu__traffic_ctree_streams(struct ibemu_traffic *tr, struct ibemu_diag *d)
{
	const struct ibemu_traffic_opts *o = &tr->o;
	const struct ibemu_topo *t = tr->topo;
	uint32_t hot = o->incast_dst, want = o->incast_sources, l, avail;
	struct leaves lv;
	int ret;

	if (hot >= tr->nhosts)
		return ibemu_diag_error(d, NULL,
					"congestion-tree hotspot %u: the "
					"fabric has hosts 0..%u",
					hot, tr->nhosts - 1);
	if (tr->hosts[hot].sw == IBEMU_NONE)
		return ibemu_diag_error(d, NULL,
					"congestion-tree: the hotspot %s:%u is "
					"not cabled to a switch",
					t->nodes[tr->hosts[hot].node].name,
					tr->hosts[hot].port);
	memset(&lv, 0, sizeof(lv));
	ret = leaves_build(tr, hot, &lv);
	if (ret)
		goto out;
	if (!lv.nhome || !lv.n) {
		ret = ibemu_diag_error(
			d, NULL,
			"congestion-tree needs hosts on switches other than "
			"the hotspot's %s, and another host beside the "
			"hotspot on it (for the victims); this fabric has %u "
			"other switch(es) with hosts and %u other host(s) on "
			"%s",
			t->nodes[tr->hosts[hot].sw].name, lv.n, lv.nhome,
			t->nodes[tr->hosts[hot].sw].name);
		goto out;
	}
	avail = lv.off[lv.n];
	if (!want) {
		/* Every host but the last of each leaf: the victims' room. */
		for (l = 0; l < lv.n; l++)
			want += lv.off[l + 1] - lv.off[l] - 1;
		if (!want)
			want = avail;
	}
	if (want > avail) {
		ret = ibemu_diag_error(d, NULL,
				       "%u congestion-tree sources: the "
				       "switches other than the hotspot's "
				       "have %u hosts",
				       want, avail);
		goto out;
	}
	deal(&lv, want);
	ret = add_streams(tr, hot, &lv);
out:
	leaves_fini(&lv);
	return ret;
}

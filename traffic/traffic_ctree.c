// SPDX-License-Identifier: MIT
/*
 * The congestion-tree pattern: contributors on several leaves send to one
 * hotspot, so the hotspot's port backs up into the switches above it and
 * the links towards it; on each contributing leaf the last contributor
 * also sends a victim flow elsewhere, which shares its source's link and
 * buffers with the tree but not the hotspot. Without congestion control
 * the victims slow down with the tree; with it they should not (IBA Annex
 * A10). The choices are documented at IBEMU_TRAFFIC_CTREE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_int.h"

struct leaves {
	uint32_t n;	  /* leaves other than the hotspot's */
	uint32_t *off;	  /* [n + 1]: their hosts in hosts[] */
	uint32_t *hosts;  /* host indices, leaf by leaf, in host order */
	uint8_t *contrib; /* per host */
};

static void leaves_fini(struct leaves *lv)
{
	free(lv->off);
	free(lv->hosts);
	free(lv->contrib);
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
	lv->contrib = calloc(n, 1);
	if (!count || !lv->off || !lv->hosts || !lv->contrib) {
		free(count);
		return -ENOMEM;
	}
	for (h = 0; h < n; h++) {
		if (tr->hosts[h].sw != home && tr->hosts[h].sw != IBEMU_NONE)
			count[tr->hosts[h].sw]++;
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

/*
 * The contributors' streams, then one victim per leaf with contributors,
 * sent by its last contributor: it shares that source's link and input
 * buffer with a branch of the tree, and goes where an incast victim goes.
 */
static int add_streams(struct ibemu_traffic *tr, uint32_t hot,
		       struct leaves *lv)
{
	uint32_t h, l, k, v, dst;
	struct ibemu_traffic_stream *s;
	uint8_t *taken = calloc(tr->nhosts, 1);

	if (!taken)
		return -ENOMEM;
	for (h = 0; h < tr->nhosts; h++)
		if (lv->contrib[h])
			ibemu__traffic_add_stream(tr, h, hot,
						  IBEMU_TRAFFIC_DST_FIXED);
	for (l = 0; l < lv->n; l++) {
		v = IBEMU_NONE;
		for (k = lv->off[l]; k < lv->off[l + 1]; k++)
			if (lv->contrib[lv->hosts[k]])
				v = lv->hosts[k];
		if (v == IBEMU_NONE)
			continue;
		dst = ibemu__traffic_victim_dst(tr, v, hot, taken);
		if (dst == IBEMU_NONE)
			continue;
		taken[dst] = 1;
		s = ibemu__traffic_add_stream(tr, v, dst,
					      IBEMU_TRAFFIC_DST_FIXED);
		s->victim = 1;
	}
	free(taken);
	return 0;
}

int ibemu__traffic_ctree_streams(struct ibemu_traffic *tr, struct ibemu_diag *d)
{
	const struct ibemu_traffic_opts *o = &tr->o;
	const struct ibemu_topo *t = tr->topo;
	uint32_t hot = o->incast_dst, want = o->incast_sources, avail;
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
	if (!lv.n) {
		ret = ibemu_diag_error(
			d, NULL,
			"congestion-tree needs hosts on switches "
			"other than the hotspot's %s; this fabric "
			"has none",
			t->nodes[tr->hosts[hot].sw].name);
		goto out;
	}
	avail = lv.off[lv.n];
	if (!want)
		want = avail;
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

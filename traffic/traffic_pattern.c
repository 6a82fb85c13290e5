// SPDX-License-Identifier: MIT
/*
 * Traffic patterns: who sends to whom. Each pattern becomes a list of
 * streams (a source host, a rule for the destination of each message, its
 * own random generator); the random choices a pattern makes once
 * (permutation, bisection matching) come from a generator seeded by the
 * study's seed alone, so the same options give the same flows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_int.h"

struct ibemu_traffic_stream *ibemu__traffic_add_stream(struct ibemu_traffic *tr,
						       uint32_t src,
						       uint32_t dst, int how)
{
	struct ibemu_traffic_stream *s = &tr->streams[tr->nstreams++];

	memset(s, 0, sizeof(*s));
	s->src = src;
	s->dst = dst;
	s->how = (uint8_t)how;
	return s;
}

/* Sattolo's shuffle: a uniformly random permutation with a single cycle. */
static void cyclic_permutation(struct ibemu_traffic_rng *r, uint32_t *p,
			       uint32_t n)
{
	uint32_t i, j, t;

	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = (uint32_t)ibemu__rng_below(r, i);
		t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
}

/* Fisher-Yates: a uniformly random permutation of p[0..n). */
static void shuffle(struct ibemu_traffic_rng *r, uint32_t *p, uint32_t n)
{
	uint32_t i, j, t;

	for (i = n; i > 1; i--) {
		j = (uint32_t)ibemu__rng_below(r, i);
		t = p[i - 1];
		p[i - 1] = p[j];
		p[j] = t;
	}
}

/* The port switch 'sw' sends LID 'lid' out of; 0 if it has no route. */
static uint8_t out_port(const struct ibemu_traffic *tr, uint32_t sw,
			uint16_t lid)
{
	uint8_t port = 0;

	if (ibemu_engine_get_lft(tr->e, sw, lid, &port) || port == 255)
		return 0;
	return port;
}

/*
 * The victim's destination: not the hotspot, on neither the victim's
 * switch nor the hotspot's and, if possible, reached through another port
 * of the victim's switch than the hotspot is: then the only links the
 * victim shares with the congestion tree are its source's, where its
 * packets queue behind those for the hotspot. No two victims share a
 * destination if the fabric has enough hosts ('taken').
 */
uint32_t ibemu__traffic_victim_dst(const struct ibemu_traffic *tr, uint32_t v,
				   uint32_t hot, const uint8_t *taken)
{
	uint32_t n = tr->nhosts, i, h, sw = tr->hosts[v].sw;
	uint8_t up =
		sw == IBEMU_NONE ? 0 : out_port(tr, sw, tr->hosts[hot].lid);
	int pass;

	for (pass = 0; pass < 3; pass++) {
		for (i = 1; i < n; i++) {
			h = (v + i) % n;
			if (h == hot || (pass < 2 && tr->hosts[h].sw == sw) ||
			    (pass < 2 && taken[h]))
				continue;
			if (pass == 0 &&
			    (tr->hosts[h].sw == tr->hosts[hot].sw ||
			     out_port(tr, sw, tr->hosts[h].lid) == up))
				continue;
			return h;
		}
	}
	return IBEMU_NONE;
}

static int incast_streams(struct ibemu_traffic *tr, struct ibemu_diag *d)
{
	const struct ibemu_traffic_opts *o = &tr->o;
	uint32_t n = tr->nhosts, hot = o->incast_dst, nsrc, i, h, k;
	uint32_t *victims, nvictims = 0;
	uint8_t *is_src, *seen, *taken;
	int ret = -ENOMEM;

	if (hot >= n)
		return ibemu_diag_error(d, NULL,
					"incast destination %u: the fabric "
					"has hosts 0..%u",
					hot, n - 1);
	nsrc = o->incast_sources ? o->incast_sources : n - 1;
	if (nsrc > n - 1)
		return ibemu_diag_error(d, NULL,
					"%u incast sources: at most %u (every "
					"host but the destination)",
					nsrc, n - 1);
	is_src = calloc(n, 1);
	seen = calloc(tr->topo->nnodes, 1);
	victims = calloc(n, sizeof(*victims));
	taken = calloc(n, 1);
	if (!is_src || !seen || !victims || !taken)
		goto out;
	for (i = 1; i <= nsrc; i++)
		is_src[(hot + i) % n] = 1;
	/* Each switch's last source sends a victim flow too. */
	for (h = 0; o->victims && h < n; h++) {
		uint32_t sw = tr->hosts[h].sw, last = IBEMU_NONE;

		if (!is_src[h] || sw == IBEMU_NONE || seen[sw])
			continue;
		seen[sw] = 1;
		for (k = 0; k < n; k++)
			if (tr->hosts[k].sw == sw && is_src[k])
				last = k;
		victims[nvictims++] = last;
	}
	for (h = 0; h < n; h++)
		if (is_src[h])
			ibemu__traffic_add_stream(tr, h, hot,
						  IBEMU_TRAFFIC_DST_FIXED);
	for (i = 0; i < nvictims; i++) {
		uint32_t dst =
			ibemu__traffic_victim_dst(tr, victims[i], hot, taken);
		struct ibemu_traffic_stream *s;

		if (dst == IBEMU_NONE)
			continue;
		taken[dst] = 1;
		s = ibemu__traffic_add_stream(tr, victims[i], dst,
					      IBEMU_TRAFFIC_DST_FIXED);
		s->victim = 1;
	}
	ret = 0;
out:
	free(taken);
	free(victims);
	free(seen);
	free(is_src);
	return ret;
}

int ibemu__traffic_streams(struct ibemu_traffic *tr, struct ibemu_diag *d)
{
	const struct ibemu_traffic_opts *o = &tr->o;
	uint32_t n = tr->nhosts, i, half;
	struct ibemu_traffic_rng rng;
	size_t max;
	uint32_t *p;

	if (n < 2)
		return ibemu_diag_error(
			d, NULL,
			"traffic needs at least 2 hosts (cabled "
			"HCA ports); the fabric has %u",
			n);
	max = o->pattern == IBEMU_TRAFFIC_PAIRS ? o->npairs : 2 * (size_t)n;
	if (max > UINT32_MAX / 2)
		return ibemu_diag_error(d, NULL, "too many pairs (%zu)", max);
	tr->streams = calloc(max ? max : 1, sizeof(*tr->streams));
	if (!tr->streams)
		return -ENOMEM;
	/* The pattern's own choices use stream number UINT64_MAX. */
	ibemu__rng_seed(&rng, o->seed, UINT64_MAX);

	switch (o->pattern) {
	case IBEMU_TRAFFIC_UNIFORM:
		for (i = 0; i < n; i++)
			ibemu__traffic_add_stream(tr, i, 0,
						  IBEMU_TRAFFIC_DST_UNIFORM);
		break;
	case IBEMU_TRAFFIC_ALLTOALL:
		for (i = 0; i < n; i++)
			ibemu__traffic_add_stream(tr, i, 0,
						  IBEMU_TRAFFIC_DST_ROTATE);
		break;
	case IBEMU_TRAFFIC_SHIFT:
		if (o->shift % n == 0)
			return ibemu_diag_error(d, NULL,
						"shift %u maps every host to "
						"itself on %u hosts",
						o->shift, n);
		for (i = 0; i < n; i++)
			ibemu__traffic_add_stream(
				tr, i, (uint32_t)((i + (uint64_t)o->shift) % n),
				IBEMU_TRAFFIC_DST_FIXED);
		break;
	case IBEMU_TRAFFIC_PERMUTATION:
		p = malloc(n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		cyclic_permutation(&rng, p, n);
		for (i = 0; i < n; i++)
			ibemu__traffic_add_stream(tr, i, p[i],
						  IBEMU_TRAFFIC_DST_FIXED);
		free(p);
		break;
	case IBEMU_TRAFFIC_BISECTION:
		half = n / 2;
		p = malloc(half * sizeof(*p));
		if (!p)
			return -ENOMEM;
		for (i = 0; i < half; i++)
			p[i] = half + i;
		shuffle(&rng, p, half);
		for (i = 0; i < half; i++) {
			ibemu__traffic_add_stream(tr, i, p[i],
						  IBEMU_TRAFFIC_DST_FIXED);
			ibemu__traffic_add_stream(tr, p[i], i,
						  IBEMU_TRAFFIC_DST_FIXED);
		}
		free(p);
		break;
	case IBEMU_TRAFFIC_INCAST:
		return incast_streams(tr, d);
	case IBEMU_TRAFFIC_CTREE:
		return ibemu__traffic_ctree_streams(tr, d);
	case IBEMU_TRAFFIC_PAIRS:
		if (!o->npairs)
			return ibemu_diag_error(d, NULL, "no pairs given");
		for (i = 0; i < o->npairs; i++) {
			const struct ibemu_traffic_pair *pr = &o->pairs[i];

			if (pr->src >= n || pr->dst >= n || pr->src == pr->dst)
				return ibemu_diag_error(
					d, NULL,
					"pair %u: %u -> %u: hosts are "
					"0..%u and a host cannot send to "
					"itself",
					i, pr->src, pr->dst, n - 1);
			ibemu__traffic_add_stream(tr, pr->src, pr->dst,
						  IBEMU_TRAFFIC_DST_FIXED);
		}
		break;
	default:
		return ibemu_diag_error(d, NULL, "unknown traffic pattern %d",
					(int)o->pattern);
	}
	return 0;
}

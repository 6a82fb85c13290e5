// SPDX-License-Identifier: MIT
/*
 * Time series of a study, for plots: the payload each plotted flow
 * receives per time bin and the CCTI of its source per bin. Recording
 * costs one test per delivered packet when off; when on, the columns are
 * chosen as flows appear (patterns with a hotspot: contributors and
 * victims, each role with its quota; others: the first flows), and the
 * plot picks among them once the study is done (traffic_plot.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_int.h"

/* About this many bins span the duration: enough to see CC react. */
#define SERIES_BINS 200
/* Bins at most: past this (a long drain) pairs of bins merge into one,
 * so memory and the image stay bounded whatever the drain takes. */
#define SERIES_MAX_BINS 512
/* Columns at most: a plot of more lines could not be read anyway. */
#define SERIES_ROLE_COLS  64
#define SERIES_OTHER_COLS 1024

/* Splits the columns of a pattern with roles: contributors keep at least
 * half (or all they need), victims come next, the rest is theirs again. */
static void role_quotas(struct ibemu_traffic_series *s,
			const struct ibemu_traffic *tr)
{
	uint32_t nc = 0, nv = 0, i, keep;

	for (i = 0; i < tr->nstreams; i++) {
		if (tr->streams[i].victim)
			nv++;
		else
			nc++;
	}
	keep = nc < SERIES_ROLE_COLS / 2 ? nc : SERIES_ROLE_COLS / 2;
	s->quota[IBEMU_TRAFFIC_VICTIM] =
		nv < SERIES_ROLE_COLS - keep ? nv : SERIES_ROLE_COLS - keep;
	s->quota[IBEMU_TRAFFIC_CONTRIBUTOR] =
		SERIES_ROLE_COLS - s->quota[IBEMU_TRAFFIC_VICTIM];
	s->cap_cols = SERIES_ROLE_COLS;
}

int ibemu__traffic_series_create(struct ibemu_traffic *tr)
{
	struct ibemu_traffic_series *s = calloc(1, sizeof(*s));
	uint64_t d = tr->o.duration_ps;

	if (!s)
		return -ENOMEM;
	tr->series = s;
	s->bin_ps = (d + SERIES_BINS - 1) / SERIES_BINS;
	s->nbins = (uint32_t)((d + s->bin_ps - 1) / s->bin_ps);
	s->cap_bins = SERIES_MAX_BINS;
	if (ibemu__traffic_has_roles(tr)) {
		role_quotas(s, tr);
	} else {
		s->quota[IBEMU_TRAFFIC_OTHER] = SERIES_OTHER_COLS;
		s->cap_cols = SERIES_OTHER_COLS;
	}
	s->col_flow = calloc(s->cap_cols, sizeof(*s->col_flow));
	s->bytes = calloc((size_t)s->cap_bins * s->cap_cols, sizeof(*s->bytes));
	s->ccti = calloc((size_t)s->cap_bins * s->cap_cols, sizeof(*s->ccti));
	if (!s->col_flow || !s->bytes || !s->ccti)
		return -ENOMEM; /* the caller destroys the study */
	return 0;
}

void ibemu__traffic_series_destroy(struct ibemu_traffic *tr)
{
	struct ibemu_traffic_series *s = tr->series;

	if (!s)
		return;
	free(s->col_flow);
	free(s->bytes);
	free(s->ccti);
	free(s);
	tr->series = NULL;
}

static uint16_t read_ccti(struct ibemu_traffic *tr, uint32_t fi)
{
	struct ibemu_traffic_flow *f = &tr->flows[fi];

	return (uint16_t)ibemu_hca_cc_ccti(tr->e, tr->hosts[f->src].pi, f->sl,
					   &f->cc);
}

/*
 * Gives new flow 'fi' a column if its role has places left. A flow starts
 * with its first message, after other flows' deliveries may have sampled
 * some bins: those take its source's CCTI as it is now (the port's, when
 * it controls per SL; a new QP's is at its minimum).
 */
uint32_t ibemu__traffic_series_flow(struct ibemu_traffic *tr, uint32_t fi)
{
	struct ibemu_traffic_series *s = tr->series;
	enum ibemu_traffic_role r = ibemu__traffic_role(tr, fi);
	uint32_t b, c;
	uint16_t v;

	if (s->used[r] >= s->quota[r] || s->ncols == s->cap_cols)
		return IBEMU_NONE;
	s->used[r]++;
	c = s->ncols++;
	s->col_flow[c] = fi;
	v = s->sampled ? read_ccti(tr, fi) : 0;
	for (b = 0; b < s->sampled; b++)
		s->ccti[(size_t)b * s->cap_cols + c] = v;
	return c;
}

/* Halves the resolution: bin 2k and 2k+1 become bin k, which keeps the
 * later CCTI sample (the state at the end of the merged bin). */
static void merge_bins(struct ibemu_traffic_series *s)
{
	uint32_t b, c, n = s->cap_cols;

	for (b = 0; b < s->nbins; b++) {
		uint64_t *to = s->bytes + (size_t)(b / 2) * n;
		const uint64_t *from = s->bytes + (size_t)b * n;
		uint16_t *cto = s->ccti + (size_t)(b / 2) * n;
		const uint16_t *cfrom = s->ccti + (size_t)b * n;

		for (c = 0; c < n; c++) {
			to[c] = b % 2 ? to[c] + from[c] : from[c];
			if (b < s->sampled)
				cto[c] = cfrom[c];
		}
	}
	s->nbins = (s->nbins + 1) / 2;
	s->sampled = (s->sampled + 1) / 2;
	memset(s->bytes + (size_t)s->nbins * n, 0,
	       (size_t)(s->cap_bins - s->nbins) * n * sizeof(*s->bytes));
	memset(s->ccti + (size_t)s->nbins * n, 0,
	       (size_t)(s->cap_bins - s->nbins) * n * sizeof(*s->ccti));
	s->bin_ps *= 2;
}

/*
 * Samples every column's CCTI into bins [sampled, upto]. Bins without a
 * delivery in between take the value seen at the next one: the CCTI only
 * moves on BECNs and timer expiries, and a bin without deliveries is one
 * where the plotted sources hardly sent.
 */
static void sample_ccti(struct ibemu_traffic *tr, uint32_t upto)
{
	struct ibemu_traffic_series *s = tr->series;
	uint32_t c, b;

	for (c = 0; c < s->ncols; c++) {
		uint16_t v = read_ccti(tr, s->col_flow[c]);

		for (b = s->sampled; b <= upto; b++)
			s->ccti[(size_t)b * s->cap_cols + c] = v;
	}
	s->sampled = upto + 1;
}

void ibemu__traffic_series_add(struct ibemu_traffic *tr, uint32_t fi,
			       uint64_t now, uint32_t bytes)
{
	struct ibemu_traffic_series *s = tr->series;
	uint64_t b = (now - tr->t0) / s->bin_ps;

	while (b >= s->cap_bins) {
		merge_bins(s);
		b = (now - tr->t0) / s->bin_ps;
	}
	if (b >= s->nbins)
		s->nbins = (uint32_t)b + 1;
	if (b >= s->sampled)
		sample_ccti(tr, (uint32_t)b);
	s->bytes[b * s->cap_cols + tr->flows[fi].series] += bytes;
}

void ibemu__traffic_series_finish(struct ibemu_traffic *tr)
{
	struct ibemu_traffic_series *s = tr->series;

	if (s && s->sampled < s->nbins)
		sample_ccti(tr, s->nbins - 1);
}

// SPDX-License-Identifier: MIT
/*
 * Results of a traffic study: exact latency percentiles (nearest rank over
 * every delivered message), throughput per flow and overall, and port
 * utilization from the engine's counters, rendered through common/table so
 * that the text and the JSON views come from the same cells.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "traffic_int.h"

/* Statistics. */

static int cmp_lat(const void *a, const void *b)
{
	const struct ibemu_traffic_lat *x = a, *y = b;

	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	return x->ps < y->ps ? -1 : x->ps > y->ps;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least q/1000 of all at or
 * below it. 'v' sorted, n > 0. */
static uint64_t pct(const uint64_t *v, size_t n, unsigned q)
{
	size_t rank = (size_t)(((unsigned __int128)n * q + 999) / 1000);

	return v[rank ? rank - 1 : 0];
}

/* As pct() over the 'ps' of sorted latency records. */
static uint64_t pct_lat(const struct ibemu_traffic_lat *v, size_t n, unsigned q)
{
	size_t rank = (size_t)(((unsigned __int128)n * q + 999) / 1000);

	return v[rank ? rank - 1 : 0].ps;
}

struct flow_key {
	uint64_t key; /* src << 32 | dst */
	uint32_t fi;
};

static int cmp_key(const void *a, const void *b)
{
	const struct flow_key *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Sets tr->order: flow indices sorted by (src, dst). */
static int sort_flows(struct ibemu_traffic *tr)
{
	size_t n = tr->nflows ? tr->nflows : 1;
	struct flow_key *keys = malloc(n * sizeof(*keys));
	uint32_t i;

	tr->order = malloc(n * sizeof(*tr->order));
	if (!keys || !tr->order) {
		free(keys);
		return -ENOMEM;
	}
	for (i = 0; i < tr->nflows; i++) {
		keys[i].key =
			(uint64_t)tr->flows[i].src << 32 | tr->flows[i].dst;
		keys[i].fi = i;
	}
	qsort(keys, tr->nflows, sizeof(*keys), cmp_key);
	for (i = 0; i < tr->nflows; i++)
		tr->order[i] = keys[i].fi;
	free(keys);
	return 0;
}

int ibemu__traffic_finish(struct ibemu_traffic *tr)
{
	struct ibemu_traffic_summary *s = &tr->sum;
	uint64_t *all;
	size_t i, j;
	uint32_t fi;

	if (sort_flows(tr))
		return -ENOMEM;
	tr->fstats = calloc(tr->nflows ? tr->nflows : 1, sizeof(*tr->fstats));
	all = malloc((tr->nlat ? tr->nlat : 1) * sizeof(*all));
	if (!tr->fstats || !all) {
		free(all);
		return -ENOMEM;
	}
	/* A study that delivered nothing has no latencies (and may have no
	 * array: qsort(NULL, 0) is undefined). */
	if (tr->nlat)
		qsort(tr->lat, tr->nlat, sizeof(*tr->lat), cmp_lat);
	for (i = 0; i < tr->nlat; i = j) {
		fi = tr->lat[i].flow;
		for (j = i; j < tr->nlat && tr->lat[j].flow == fi; j++)
			;
		tr->fstats[fi].p50 = pct_lat(tr->lat + i, j - i, 500);
		tr->fstats[fi].p99 = pct_lat(tr->lat + i, j - i, 990);
		tr->fstats[fi].max = tr->lat[j - 1].ps;
	}
	for (i = 0; i < tr->nlat; i++)
		all[i] = tr->lat[i].ps;
	qsort(all, tr->nlat, sizeof(*all), cmp_u64);

	memset(s, 0, sizeof(*s));
	s->hosts = tr->nhosts;
	s->streams = tr->nstreams;
	s->flows = tr->nflows;
	s->msgs = tr->msgs_delivered;
	s->pkts = tr->pkts_delivered;
	for (fi = 0; fi < tr->nflows; fi++) {
		s->bytes += tr->flows[fi].bytes;
		s->misordered += tr->flows[fi].misordered;
	}
	s->misordered += tr->misdelivered;
	s->duration_ps = tr->o.duration_ps;
	s->end_ps = tr->last_ps ? tr->last_ps - tr->t0 : 0;
	s->gbps = (double)s->bytes * 8.0 * 1000.0 /
		  (double)(s->end_ps > s->duration_ps ? s->end_ps
						      : s->duration_ps);
	if (tr->nlat) {
		s->lat_p50_ps = pct(all, tr->nlat, 500);
		s->lat_p99_ps = pct(all, tr->nlat, 990);
		s->lat_p999_ps = pct(all, tr->nlat, 999);
		s->lat_max_ps = all[tr->nlat - 1];
	}
	s->events = ibemu_engine_events(tr->e) - tr->events0;
	free(all);
	ibemu__traffic_series_finish(tr);
	return ibemu__traffic_fair(tr);
}

void ibemu__traffic_flow_result(const struct ibemu_traffic *tr, uint32_t fi,
				struct ibemu_traffic_flow_result *out)
{
	const struct ibemu_traffic_flow *f = &tr->flows[fi];
	uint64_t end = f->last_ps ? f->last_ps - tr->t0 : 0;

	memset(out, 0, sizeof(*out));
	out->src = f->src;
	out->dst = f->dst;
	out->victim = f->victim;
	out->role = ibemu__traffic_role(tr, fi);
	out->fair_gbps = tr->fair_gbps ? tr->fair_gbps[fi] : 0;
	out->msgs = f->msgs_delivered;
	out->pkts_sent = f->pkts_sent;
	out->pkts_delivered = f->pkts_delivered;
	out->misordered = f->misordered;
	out->bytes = f->bytes;
	out->window_ps = end > tr->o.duration_ps ? end : tr->o.duration_ps;
	out->gbps = (double)f->bytes * 8.0 * 1000.0 / (double)out->window_ps;
	if (tr->fstats) {
		out->lat_p50_ps = tr->fstats[fi].p50;
		out->lat_p99_ps = tr->fstats[fi].p99;
		out->lat_max_ps = tr->fstats[fi].max;
	}
	out->fecns = f->fecns;
	out->becns = f->cc.becns;
	out->ccti_max = f->ccti_max;
}

size_t ibemu_traffic_nflows(const struct ibemu_traffic *tr)
{
	return tr->done ? tr->nflows : 0;
}

void ibemu_traffic_flow(const struct ibemu_traffic *tr, size_t i,
			struct ibemu_traffic_flow_result *out)
{
	IBEMU_BUG_ON(!tr->done || i >= tr->nflows);
	ibemu__traffic_flow_result(tr, tr->order[i], out);
}

void ibemu_traffic_summary(const struct ibemu_traffic *tr,
			   struct ibemu_traffic_summary *out)
{
	IBEMU_BUG_ON(!tr->done);
	*out = tr->sum;
}

/* Rendering. */

static const struct ibemu_table_col summary_cols[] = {
	{"pattern", "PATTERN", 0},
	{"hosts", "HOSTS", 1},
	{"streams", "STREAMS", 1},
	{"flows", "FLOWS", 1},
	{"msg_bytes", "MESSAGE BYTES", 1},
	{"mtu", "MTU", 1},
	{"load", "LOAD", 1},
	{"seed", "SEED", 1},
	{"duration_ns", "DURATION NS", 1},
	{"end_ns", "END NS", 1},
	{"msgs", "MESSAGES", 1},
	{"pkts", "PACKETS", 1},
	{"bytes", "BYTES", 1},
	{"gbps", "AGGREGATE GBPS", 1},
	{"lat_p50_ns", "LATENCY P50 NS", 1},
	{"lat_p99_ns", "LATENCY P99 NS", 1},
	{"lat_p999_ns", "LATENCY P99.9 NS", 1},
	{"lat_max_ns", "LATENCY MAX NS", 1},
	{"events", "EVENTS", 1},
	{"congestion_control", "CONGESTION CTRL", 0},
	/* Patterns with a hotspot only: the last columns, dropped else. */
	{"hotspot", "HOTSPOT", 0},
	{"hotspot_utilization", "HOTSPOT UTILIZATION", 1},
	{"jain_contributors", "JAIN CONTRIBUTORS", 1},
	{"victims", "VICTIMS", 1},
	{"victims_min_fair_ratio", "VICTIMS MIN GBPS/FAIR", 1},
	{"victims_mean_fair_ratio", "VICTIMS MEAN GBPS/FAIR", 1},
};

/* The summary columns of a pattern with a hotspot. */
#define HOTSPOT_COLS 6

static const struct ibemu_table_col flow_cols[] = {
	{"src", "SRC", 0},
	{"dst", "DST", 0},
	{"role", "ROLE", 0},
	{"msgs", "MSGS", 1},
	{"bytes", "BYTES", 1},
	{"gbps", "GBPS", 1},
	{"fair_gbps", "FAIR_GBPS", 1},
	{"lat_p50_ns", "P50_NS", 1},
	{"lat_p99_ns", "P99_NS", 1},
	{"lat_max_ns", "MAX_NS", 1},
	{"fecns", "FECNS", 1},
	{"becns", "BECNS", 1},
	{"ccti_max", "CCTI_MAX", 1},
};

static const struct ibemu_table_col link_cols[] = {
	{"port", "PORT", 0},	       {"peer", "PEER", 0},
	{"util_pct", "UTIL_PCT", 1},   {"gbps", "GBPS", 1},
	{"xmit_pkts", "XMIT_PKTS", 1}, {"xmit_wait", "XMIT_WAIT", 1},
};

static double ns(uint64_t ps)
{
	return (double)ps / 1000.0;
}

static void host_label(const struct ibemu_traffic *tr, struct ibemu_table *t,
		       uint32_t h)
{
	ibemu_table_strf(t, "%s:%u", tr->topo->nodes[tr->hosts[h].node].name,
			 tr->hosts[h].port);
}

/*
 * Congestion control in the study: "off" (--cc off), "on", or
 * "unconfigured" when the hosts would act on it but no CC manager set
 * any of their ports, so nothing can throttle.
 */
static const char *cc_state(const struct ibemu_traffic *tr)
{
	uint32_t h;

	if (!tr->cc)
		return "off";
	for (h = 0; h < tr->nhosts; h++)
		if (ibemu_hca_cc(tr->e, tr->hosts[h].pi, 0))
			return "on";
	return "unconfigured";
}

static void fill_summary(const struct ibemu_traffic *tr, struct ibemu_table *t)
{
	const struct ibemu_traffic_summary *s = &tr->sum;
	int hot = s->hotspot != IBEMU_NONE;

	ibemu_table_init(t, "summary", summary_cols,
			 IBEMU_ARRAY_SIZE(summary_cols) -
				 (hot ? 0 : HOTSPOT_COLS));
	ibemu_table_row(t);
	ibemu_table_str(t, ibemu_traffic_pattern_name(tr->o.pattern));
	ibemu_table_uint(t, s->hosts);
	ibemu_table_uint(t, s->streams);
	ibemu_table_uint(t, s->flows);
	ibemu_table_uint(t, tr->o.msg_bytes);
	ibemu_table_uint(t, tr->mtu);
	ibemu_table_real(t, tr->o.load);
	ibemu_table_uint(t, tr->o.seed);
	ibemu_table_real(t, ns(s->duration_ps));
	ibemu_table_real(t, ns(s->end_ps));
	ibemu_table_uint(t, s->msgs);
	ibemu_table_uint(t, s->pkts);
	ibemu_table_uint(t, s->bytes);
	ibemu_table_real(t, s->gbps);
	ibemu_table_real(t, ns(s->lat_p50_ps));
	ibemu_table_real(t, ns(s->lat_p99_ps));
	ibemu_table_real(t, ns(s->lat_p999_ps));
	ibemu_table_real(t, ns(s->lat_max_ps));
	ibemu_table_uint(t, s->events);
	ibemu_table_str(t, cc_state(tr));
	if (!hot)
		return;
	host_label(tr, t, s->hotspot);
	ibemu_table_real(t, s->hotspot_util);
	ibemu_table_real(t, s->jain_contributors);
	ibemu_table_uint(t, s->victims);
	if (s->victims) {
		ibemu_table_real(t, s->victim_min);
		ibemu_table_real(t, s->victim_mean);
	} else {
		ibemu_table_null(t);
		ibemu_table_null(t);
	}
}

/* A flow's throughput as a fraction bytes / window, for exact ordering. */
struct flow_rank {
	uint64_t bytes, window;
	uint32_t pos; /* in (src, dst) order */
};

static int cmp_rank(const void *a, const void *b)
{
	const struct flow_rank *x = a, *y = b;
	unsigned __int128 l = (unsigned __int128)x->bytes * y->window;
	unsigned __int128 r = (unsigned __int128)y->bytes * x->window;

	if (l != r)
		return l < r ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static size_t fill_flows(const struct ibemu_traffic *tr, size_t top_n,
			 struct ibemu_table *t)
{
	struct ibemu_traffic_flow_result r;
	struct flow_rank *rank;
	size_t i, n = tr->nflows;

	ibemu_table_init(t, "flows", flow_cols, IBEMU_ARRAY_SIZE(flow_cols));
	rank = malloc((n ? n : 1) * sizeof(*rank));
	if (!rank) {
		t->err = -ENOMEM;
		return 0;
	}
	for (i = 0; i < n; i++) {
		ibemu__traffic_flow_result(tr, tr->order[i], &r);
		rank[i].bytes = r.bytes;
		rank[i].window = r.window_ps;
		rank[i].pos = (uint32_t)i;
	}
	qsort(rank, n, sizeof(*rank), cmp_rank);
	if (top_n && top_n < n)
		n = top_n;
	for (i = 0; i < n; i++) {
		ibemu__traffic_flow_result(tr, tr->order[rank[i].pos], &r);
		ibemu_table_row(t);
		host_label(tr, t, r.src);
		host_label(tr, t, r.dst);
		ibemu_table_str(t, ibemu_traffic_role_name(r.role));
		ibemu_table_uint(t, r.msgs);
		ibemu_table_uint(t, r.bytes);
		ibemu_table_real(t, r.gbps);
		ibemu_table_real(t, r.fair_gbps);
		ibemu_table_real(t, ns(r.lat_p50_ps));
		ibemu_table_real(t, ns(r.lat_p99_ps));
		ibemu_table_real(t, ns(r.lat_max_ps));
		ibemu_table_uint(t, r.fecns);
		ibemu_table_uint(t, r.becns);
		ibemu_table_uint(t, r.ccti_max);
	}
	free(rank);
	return n;
}

struct port_rank {
	uint64_t busy;
	uint32_t pi;
};

static int cmp_port(const void *a, const void *b)
{
	const struct port_rank *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy > y->busy ? -1 : 1;
	return x->pi < y->pi ? -1 : x->pi > y->pi;
}

/* Counters since the study began. */
static void delta(const struct ibemu_traffic *tr, uint32_t pi,
		  struct ibemu_port_counters *c)
{
	const struct ibemu_port_counters *c0 = &tr->cnt0[pi];

	ibemu_engine_counters(tr->e, pi, c);
	c->xmit_data -= c0->xmit_data;
	c->xmit_pkts -= c0->xmit_pkts;
	c->xmit_wait -= c0->xmit_wait;
	c->busy_ps -= c0->busy_ps;
}

static size_t fill_links(const struct ibemu_traffic *tr, size_t top_n,
			 size_t *total, struct ibemu_table *t)
{
	const struct ibemu_topo *topo = tr->topo;
	uint32_t nports = ibemu_engine_nports(tr->e), pi, node;
	uint64_t elapsed = tr->sum.end_ps > tr->sum.duration_ps
				   ? tr->sum.end_ps
				   : tr->sum.duration_ps;
	struct ibemu_port_counters c;
	struct port_rank *rank;
	size_t i, n = 0;
	unsigned port;

	ibemu_table_init(t, "links", link_cols, IBEMU_ARRAY_SIZE(link_cols));
	*total = 0;
	rank = malloc(nports * sizeof(*rank));
	if (!rank) {
		t->err = -ENOMEM;
		return 0;
	}
	for (pi = 0; pi < nports; pi++) {
		ibemu_engine_port_where(tr->e, pi, &node, &port);
		if (!port || topo->nodes[node].ports[port].link == IBEMU_NONE)
			continue;
		delta(tr, pi, &c);
		rank[n].busy = c.busy_ps;
		rank[n].pi = pi;
		n++;
	}
	*total = n;
	qsort(rank, n, sizeof(*rank), cmp_port);
	if (top_n && top_n < n)
		n = top_n;
	for (i = 0; i < n; i++) {
		const struct ibemu_topo_port *tp;

		pi = rank[i].pi;
		ibemu_engine_port_where(tr->e, pi, &node, &port);
		tp = &topo->nodes[node].ports[port];
		delta(tr, pi, &c);
		ibemu_table_row(t);
		ibemu_table_strf(t, "%s:%u", topo->nodes[node].name, port);
		ibemu_table_strf(t, "%s:%u", topo->nodes[tp->peer_node].name,
				 tp->peer_port);
		ibemu_table_real(t,
				 (double)c.busy_ps * 100.0 / (double)elapsed);
		/* PortXmitData counts 4-byte words. */
		ibemu_table_real(t, (double)c.xmit_data * 32.0 * 1000.0 /
					    (double)elapsed);
		ibemu_table_uint(t, c.xmit_pkts);
		ibemu_table_uint(t, c.xmit_wait);
	}
	free(rank);
	return n;
}

/*
 * Appends the JSON members of a rendered table, without its own braces
 * and "fabric" key, so that several tables make one object.
 */
static void splice_json(struct ibemu_buf *out, const char *fabric,
			const struct ibemu_buf *part)
{
	struct ibemu_buf prefix;
	size_t skip;

	if (part->err || !part->data) {
		out->err = part->err ? part->err : -ENOMEM;
		return;
	}
	ibemu_buf_init(&prefix);
	ibemu_buf_puts(&prefix, "{\"fabric\": ");
	ibemu_buf_json_string(&prefix, fabric);
	ibemu_buf_puts(&prefix, ", ");
	if (prefix.err) {
		out->err = prefix.err;
		ibemu_buf_fini(&prefix);
		return;
	}
	skip = prefix.len;
	/* The table renderer's JSON layout is ours to rely on: a bug if not. */
	IBEMU_BUG_ON(part->len < skip + 2 ||
		     memcmp(part->data, prefix.data, skip) ||
		     memcmp(part->data + part->len - 2, "}\n", 2));
	ibemu_buf_append(out, part->data + skip, part->len - skip - 2);
	ibemu_buf_fini(&prefix);
}

void ibemu_traffic_render(const struct ibemu_traffic *tr, int json,
			  size_t top_n, struct ibemu_buf *out)
{
	const char *fabric = tr->topo->name ? tr->topo->name : "";
	struct ibemu_table sum, flows, links;
	size_t nflows, nlinks, total_links;
	struct ibemu_buf part;

	IBEMU_BUG_ON(!tr->done);
	fill_summary(tr, &sum);
	nflows = fill_flows(tr, top_n, &flows);
	nlinks = fill_links(tr, top_n, &total_links, &links);
	ibemu_buf_init(&part);
	if (json) {
		ibemu_buf_puts(out, "{\"fabric\": ");
		ibemu_buf_json_string(out, fabric);
		ibemu_buf_puts(out, ",\n\"summary\": {");
		ibemu_table_render_record(&sum, fabric, 1, &part);
		splice_json(out, fabric, &part);
		ibemu_buf_puts(out, "},\n");
		ibemu_buf_reset(&part);
		ibemu_table_render(&flows, fabric, 1, &part);
		splice_json(out, fabric, &part);
		ibemu_buf_puts(out, ",\n");
		ibemu_buf_reset(&part);
		ibemu_table_render(&links, fabric, 1, &part);
		splice_json(out, fabric, &part);
		ibemu_buf_puts(out, "}\n");
	} else {
		ibemu_table_render_record(&sum, fabric, 0, out);
		ibemu_buf_printf(out, "\nFlows: %zu of %u, slowest first\n",
				 nflows, tr->nflows);
		ibemu_table_render(&flows, fabric, 0, out);
		ibemu_buf_printf(out,
				 "\nPort transmitters: %zu of %zu, busiest "
				 "first\n",
				 nlinks, total_links);
		ibemu_table_render(&links, fabric, 0, out);
	}
	ibemu_buf_fini(&part);
	ibemu_table_fini(&links);
	ibemu_table_fini(&flows);
	ibemu_table_fini(&sum);
}
